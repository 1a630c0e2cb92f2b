// SPDX-License-Identifier: MIT
/*
 * Access backend for an ERNIC on a PCIe card under VFIO (vfio-pci; see
 * the kernel's Documentation/driver-api/vfio.rst for the container,
 * group and device steps). The PCI function is named by its address;
 * the register window is ERNIC_REG_SPACE_SIZE bytes at vfio_offset in
 * BAR vfio_bar. With an IOMMU every buffer the IP masters gets one
 * contiguous IOVA, user buffers included, so an MR needs no copy (PG332
 * "Memory Registration": one base per MR). The interrupt is MSI-X (else
 * MSI) vector 0 on an eventfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/vfio.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "access_vfio.h"
#include "dma_cache.h"
#include "ernic_access.h"
#include "ernic_conf.h"
#include "ernic_hw.h"
#include "mmio.h"
#include "vfio_util.h"

struct vfio_map {
	uint64_t iova;
	uint64_t size;
	void *va;
	bool owned;		/* dma_alloc's memory, unmapped on free */
};

struct vfio_access {
	struct ernic_access base;	/* first: ops dispatch casts back */
	struct ernic_access_ops ops;
	const struct vfio_sys *sys;
	char bdf[ERNIC_BDF_LEN + 1];
	int container, group, device, irq;
	bool irq_on;
	uint32_t irq_index;		/* VFIO_PCI_MSIX/MSI_IRQ_INDEX */
	void *win_map;
	volatile uint32_t *regs;
	size_t page;
	pthread_mutex_t lock;		/* iova, maps */
	struct vfio_iova iova;
	struct vfio_map *maps;
	size_t nmaps, cap;
};

static int k_open(const char *path, int flags)
{
	return open(path, flags);
}

static int k_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg);
}

const struct vfio_sys vfio_sys_kernel = {
	.open = k_open,
	.close = close,
	.ioctl = k_ioctl,
	.mmap = mmap,
	.munmap = munmap,
	.eventfd = eventfd,
};

static struct vfio_access *to_vfio(struct ernic_access *acc)
{
	return (struct vfio_access *)acc;
}

static uint32_t va_reg_read(struct ernic_access *acc, uint32_t off)
{
	return ernic_mmio_rd(to_vfio(acc)->regs, off);
}

static void va_reg_write(struct ernic_access *acc, uint32_t off, uint32_t val)
{
	ernic_mmio_wr(to_vfio(acc)->regs, off, val);
}

static int dma_map(struct vfio_access *v, void *va, uint64_t size,
		   uint64_t iova)
{
	struct vfio_iommu_type1_dma_map m = {
		.argsz = sizeof(m),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uintptr_t)va,
		.iova = iova,
		.size = size,
	};

	return v->sys->ioctl(v->container, VFIO_IOMMU_MAP_DMA, &m) ? errno : 0;
}

static void dma_unmap(struct vfio_access *v, uint64_t iova, uint64_t size)
{
	struct vfio_iommu_type1_dma_unmap u = {
		.argsz = sizeof(u), .iova = iova, .size = size,
	};

	if (v->sys->ioctl(v->container, VFIO_IOMMU_UNMAP_DMA, &u))
		fprintf(stderr, "libernic: vfio %s: unmap IOVA %#llx: %s\n",
			v->bdf, (unsigned long long)iova, strerror(errno));
}

/* Map [va, va+size) at a fresh IOVA and remember it. Lock held. */
static int map_new(struct vfio_access *v, void *va, uint64_t size,
		   uint64_t align, bool owned, uint64_t *iova)
{
	int rc;

	if (v->nmaps == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		struct vfio_map *n = realloc(v->maps, cap * sizeof(*n));

		if (!n)
			return ENOMEM;
		v->maps = n;
		v->cap = cap;
	}
	rc = vfio_iova_alloc(&v->iova, size, align, iova);
	if (rc)
		return rc;
	rc = dma_map(v, va, size, *iova);
	if (rc) {
		vfio_iova_free(&v->iova, *iova, size);
		return rc;
	}
	v->maps[v->nmaps++] = (struct vfio_map){ *iova, size, va, owned };
	return 0;
}

/* Unmap the mapping holding bus; returns it (by copy) or false. */
static bool map_del(struct vfio_access *v, uint64_t bus, struct vfio_map *out)
{
	for (size_t k = 0; k < v->nmaps; k++) {
		struct vfio_map *m = &v->maps[k];

		if (bus < m->iova || bus - m->iova >= m->size)
			continue;
		*out = *m;
		dma_unmap(v, m->iova, m->size);
		vfio_iova_free(&v->iova, m->iova, m->size);
		*m = v->maps[--v->nmaps];
		return true;
	}
	return false;
}

static int va_dma_alloc(struct ernic_access *acc, size_t len, size_t align,
			struct ernic_dma *out)
{
	struct vfio_access *v = to_vfio(acc);
	uint64_t size, iova;
	void *va;
	int rc;

	if (!len || (align & (align - 1)))
		return EINVAL;
	size = (len + v->page - 1) & ~(uint64_t)(v->page - 1);
	/* Anonymous memory is zeroed; the IOMMU mapping pins it. */
	va = v->sys->mmap(NULL, size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (va == MAP_FAILED)
		return errno;
	pthread_mutex_lock(&v->lock);
	rc = map_new(v, va, size, align > v->page ? align : v->page, true,
		     &iova);
	pthread_mutex_unlock(&v->lock);
	if (rc) {
		v->sys->munmap(va, size);
		return rc;
	}
	*out = (struct ernic_dma){ .va = va, .bus = iova, .len = len };
	return 0;
}

static void va_dma_free(struct ernic_access *acc, struct ernic_dma *dma)
{
	struct vfio_access *v = to_vfio(acc);
	struct vfio_map m;
	bool found;

	if (!dma || !dma->va)
		return;
	pthread_mutex_lock(&v->lock);
	found = map_del(v, dma->bus, &m);
	pthread_mutex_unlock(&v->lock);
	if (found && m.owned)
		v->sys->munmap(m.va, m.size);
	memset(dma, 0, sizeof(*dma));
}

/* Any buffer: its pages, whole, at one IOVA range. */
static int va_map_user(struct ernic_access *acc, void *va, size_t len,
		       uint64_t *bus)
{
	struct vfio_access *v = to_vfio(acc);
	uintptr_t start;
	size_t span;
	uint64_t iova;
	int rc;

	vfio_page_span((uintptr_t)va, len, v->page, &start, &span);
	pthread_mutex_lock(&v->lock);
	rc = map_new(v, (void *)start, span, v->page, false, &iova);
	pthread_mutex_unlock(&v->lock);
	if (!rc)
		*bus = iova + ((uintptr_t)va - start);
	return rc;
}

static void va_unmap_user(struct ernic_access *acc, uint64_t bus, size_t len)
{
	struct vfio_access *v = to_vfio(acc);
	struct vfio_map m;

	(void)len;
	pthread_mutex_lock(&v->lock);
	map_del(v, bus, &m);
	pthread_mutex_unlock(&v->lock);
}

static int va_irq_fd(struct ernic_access *acc)
{
	return to_vfio(acc)->irq;
}

/* MSI is an edge: nothing to unmask, only the count to consume. */
static int va_irq_enable(struct ernic_access *acc)
{
	uint64_t n;

	if (read(to_vfio(acc)->irq, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return errno;
	return 0;
}

static int va_wait_irq(struct ernic_access *acc, int timeout_ms)
{
	struct pollfd p = { .fd = to_vfio(acc)->irq, .events = POLLIN };
	int r = poll(&p, 1, timeout_ms);

	if (r <= 0)
		return r < 0 ? -errno : 0;
	r = va_irq_enable(acc);
	return r ? -r : 1;
}

static void va_dma_sync(struct ernic_access *acc, const void *va, size_t len,
			enum ernic_dma_dir dir)
{
	(void)acc;
	ernic_cache_maint(va, len, dir == ERNIC_DMA_TO_DEVICE);
}

static void va_close(struct ernic_access *acc)
{
	struct vfio_access *v = to_vfio(acc);
	const struct vfio_sys *sys;

	if (!acc)
		return;
	sys = v->sys;
	if (v->irq_on) {
		struct vfio_irq_set off = {
			.argsz = sizeof(off),
			.flags = VFIO_IRQ_SET_DATA_NONE |
				 VFIO_IRQ_SET_ACTION_TRIGGER,
			.index = v->irq_index,
		};

		sys->ioctl(v->device, VFIO_DEVICE_SET_IRQS, &off);
	}
	while (v->nmaps) {
		struct vfio_map m;

		map_del(v, v->maps[0].iova, &m);
		if (m.owned)
			sys->munmap(m.va, m.size);
	}
	if (v->win_map)
		sys->munmap(v->win_map, ERNIC_REG_SPACE_SIZE);
	if (v->irq >= 0)
		sys->close(v->irq);
	if (v->device >= 0)
		sys->close(v->device);
	if (v->group >= 0)
		sys->close(v->group);
	if (v->container >= 0)
		sys->close(v->container);
	vfio_iova_fini(&v->iova);
	free(v->maps);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

static const struct ernic_access_ops vfio_ops = {
	.name = "vfio",
	.reg_read = va_reg_read,
	.reg_write = va_reg_write,
	.dma_alloc = va_dma_alloc,
	.dma_free = va_dma_free,
	.map_user = va_map_user,
	.unmap_user = va_unmap_user,
	.wait_irq = va_wait_irq,
	.irq_fd = va_irq_fd,
	.irq_enable = va_irq_enable,
	.close = va_close,
};


/* ---- open: container, group, IOMMU, device, window, interrupt ---- */

#define FAIL(rc_, ...)                                                     \
	do {                                                               \
		int n_ = snprintf(err, errlen, "vfio %s: ", v->bdf);       \
		snprintf(err + (n_ > 0 && (size_t)n_ < errlen ? n_ : 0),   \
			 n_ > 0 && (size_t)n_ < errlen ? errlen - (size_t)n_ \
						       : errlen,          \
			 __VA_ARGS__);                                     \
		return (rc_);                                              \
	} while (0)

/* The IOMMU's usable IOVA ranges (the IOVA-range capability), or all of
 * a 48-bit space when the kernel does not say. */
static int iommu_ranges(struct vfio_access *v, uint64_t limit, char *err,
			size_t errlen)
{
	struct vfio_iommu_type1_info *info = calloc(1, sizeof(*info));
	struct iova_span *r = NULL;
	size_t n = 0;
	int rc;

	if (!info)
		FAIL(ENOMEM, "out of memory");
	info->argsz = sizeof(*info);
	if (v->sys->ioctl(v->container, VFIO_IOMMU_GET_INFO, info)) {
		rc = errno;
		free(info);
		FAIL(rc, "VFIO_IOMMU_GET_INFO: %s", strerror(rc));
	}
	if ((info->flags & VFIO_IOMMU_INFO_CAPS) && info->argsz > sizeof(*info)) {
		uint32_t sz = info->argsz;
		struct vfio_iommu_type1_info *big = realloc(info, sz);

		if (!big) {
			free(info);
			FAIL(ENOMEM, "out of memory");
		}
		info = big;
		memset(info, 0, sz);
		info->argsz = sz;
		if (v->sys->ioctl(v->container, VFIO_IOMMU_GET_INFO, info)) {
			rc = errno;
			free(info);
			FAIL(rc, "VFIO_IOMMU_GET_INFO: %s", strerror(rc));
		}
		for (uint32_t off = info->cap_offset; off && off + sizeof(
			     struct vfio_info_cap_header) <= sz;) {
			const struct vfio_info_cap_header *h =
				(const void *)((const char *)info + off);
			const struct vfio_iommu_type1_info_cap_iova_range *c =
				(const void *)h;

			if (h->id == VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE &&
			    off + sizeof(*c) + (uint64_t)c->nr_iovas *
				    sizeof(c->iova_ranges[0]) <= sz && !r) {
				r = calloc(c->nr_iovas ? c->nr_iovas : 1,
					   sizeof(*r));
				for (uint32_t k = 0; r && k < c->nr_iovas; k++)
					if (c->iova_ranges[k].end != UINT64_MAX)
						r[n++] = (struct iova_span){
							c->iova_ranges[k].start,
							c->iova_ranges[k].end + 1 };
			}
			if (h->next <= off)
				break;	/* a chain must move forward */
			off = h->next;
		}
	}
	if (info->iova_pgsizes) {
		uint64_t smallest = info->iova_pgsizes & -info->iova_pgsizes;

		if (smallest > v->page)
			v->page = (size_t)smallest;
	}
	free(info);
	if (!r) {
		static const struct iova_span all = { 0, UINT64_C(1) << 48 };

		rc = vfio_iova_init(&v->iova, &all, 1, limit);
	} else {
		rc = vfio_iova_init(&v->iova, r, n, limit);
		free(r);
	}
	if (rc)
		FAIL(rc, "the IOMMU offers no IOVA range below %#llx, which "
		     "the IP (C_M_AXI_ADDR_WIDTH) can reach",
		     (unsigned long long)limit);
	return 0;
}

static int open_iommu(struct vfio_access *v, const struct ernic_conf *c,
		      char *err, size_t errlen)
{
	struct vfio_group_status st = { .argsz = sizeof(st) };
	char path[ERNIC_UIO_ROOT_MAX + 32];
	unsigned int group;
	uintptr_t type;
	int rc;

	rc = vfio_group_of(c->vfio_root, v->bdf, &group, err, errlen);
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/dev/vfio/vfio", c->vfio_root);
	v->container = v->sys->open(path, O_RDWR | O_CLOEXEC);
	if (v->container < 0)
		FAIL(errno, "%s: %s", path, strerror(errno));
	if (v->sys->ioctl(v->container, VFIO_GET_API_VERSION, NULL) !=
	    VFIO_API_VERSION)
		FAIL(EPROTO, "%s speaks another VFIO API version", path);
	if (v->sys->ioctl(v->container, VFIO_CHECK_EXTENSION,
			  (void *)(uintptr_t)VFIO_TYPE1v2_IOMMU) > 0)
		type = VFIO_TYPE1v2_IOMMU;
	else if (v->sys->ioctl(v->container, VFIO_CHECK_EXTENSION,
			       (void *)(uintptr_t)VFIO_TYPE1_IOMMU) > 0)
		type = VFIO_TYPE1_IOMMU;
	else
		FAIL(ENOTSUP, "the kernel offers no type1 IOMMU");

	snprintf(path, sizeof(path), "%s/dev/vfio/%u", c->vfio_root, group);
	v->group = v->sys->open(path, O_RDWR | O_CLOEXEC);
	if (v->group < 0)
		FAIL(errno, "%s: %s%s", path, strerror(errno),
		     errno == ENOENT ? " (bind the function to vfio-pci)" :
		     errno == EBUSY ? " (another process has the group)" : "");
	if (v->sys->ioctl(v->group, VFIO_GROUP_GET_STATUS, &st))
		FAIL(errno, "VFIO_GROUP_GET_STATUS: %s", strerror(errno));
	if (!(st.flags & VFIO_GROUP_FLAGS_VIABLE))
		FAIL(EBUSY, "group %u is not viable: bind every device of the "
		     "group to vfio-pci", group);
	if (v->sys->ioctl(v->group, VFIO_GROUP_SET_CONTAINER, &v->container))
		FAIL(errno, "VFIO_GROUP_SET_CONTAINER: %s", strerror(errno));
	if (v->sys->ioctl(v->container, VFIO_SET_IOMMU, (void *)type))
		FAIL(errno, "VFIO_SET_IOMMU: %s", strerror(errno));
	return iommu_ranges(v, c->c_m_axi_addr_width >= 64 ?
				       UINT64_MAX :
				       UINT64_C(1) << c->c_m_axi_addr_width,
			    err, errlen);
}

static int open_device(struct vfio_access *v, const struct ernic_conf *c,
		       char *err, size_t errlen)
{
	struct vfio_region_info ri = { .argsz = sizeof(ri),
				       .index = c->vfio_bar };
	char why[160];
	void *map;

	v->device = v->sys->ioctl(v->group, VFIO_GROUP_GET_DEVICE_FD, v->bdf);
	if (v->device < 0)
		FAIL(errno, "VFIO_GROUP_GET_DEVICE_FD: %s", strerror(errno));
	if (v->sys->ioctl(v->device, VFIO_DEVICE_GET_REGION_INFO, &ri))
		FAIL(errno, "BAR %u: VFIO_DEVICE_GET_REGION_INFO: %s",
		     c->vfio_bar, strerror(errno));
	if (vfio_window_check(ri.size, !!(ri.flags & VFIO_REGION_INFO_FLAG_MMAP),
			      c->vfio_offset, ERNIC_REG_SPACE_SIZE, why,
			      sizeof(why)))
		FAIL(EINVAL, "BAR %u: %s", c->vfio_bar, why);
	map = v->sys->mmap(NULL, ERNIC_REG_SPACE_SIZE, PROT_READ | PROT_WRITE,
			   MAP_SHARED, v->device,
			   (off_t)(ri.offset + c->vfio_offset));
	if (map == MAP_FAILED)
		FAIL(errno, "mmap BAR %u: %s", c->vfio_bar, strerror(errno));
	v->win_map = map;
	v->regs = map;
	return 0;
}

/* Vector 0 of MSI-X, else of MSI, triggers an eventfd. */
static int open_irq(struct vfio_access *v, char *err, size_t errlen)
{
	static const uint32_t idx[] = { VFIO_PCI_MSIX_IRQ_INDEX,
					VFIO_PCI_MSI_IRQ_INDEX };
	/* struct vfio_irq_set ends in data[]: the eventfd follows it. */
	_Alignas(struct vfio_irq_set) uint8_t buf[sizeof(struct vfio_irq_set) +
						  sizeof(int32_t)];
	struct vfio_irq_set *set = (struct vfio_irq_set *)buf;
	int32_t efd;

	for (size_t k = 0; k < 2; k++) {
		struct vfio_irq_info ii = { .argsz = sizeof(ii), .index = idx[k] };

		if (!v->sys->ioctl(v->device, VFIO_DEVICE_GET_IRQ_INFO, &ii) &&
		    ii.count) {
			v->irq_index = idx[k];
			break;
		}
		if (k == 1)
			FAIL(ENODEV, "the function has neither MSI-X nor MSI");
	}
	v->irq = v->sys->eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (v->irq < 0)
		FAIL(errno, "eventfd: %s", strerror(errno));
	memset(buf, 0, sizeof(buf));
	set->argsz = sizeof(buf);
	set->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	set->index = v->irq_index;
	set->start = 0;
	set->count = 1;
	efd = v->irq;
	memcpy(set->data, &efd, sizeof(efd));
	if (v->sys->ioctl(v->device, VFIO_DEVICE_SET_IRQS, set))
		FAIL(errno, "VFIO_DEVICE_SET_IRQS (%s): %s",
		     v->irq_index == VFIO_PCI_MSIX_IRQ_INDEX ? "MSI-X" : "MSI",
		     strerror(errno));
	v->irq_on = true;
	return 0;
}

int ernic_access_vfio_open_sys(const struct ernic_conf *conf,
			       const struct vfio_sys *sys,
			       struct ernic_access **out, char *err,
			       size_t errlen)
{
	struct vfio_access *v;
	int rc;

	if (!conf->coherent && !ERNIC_HAVE_CACHE_OPS) {
		snprintf(err, errlen, "vfio: coherent=0 needs cache maintenance "
			 "from user space, which this CPU architecture lacks");
		return EOPNOTSUPP;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		snprintf(err, errlen, "vfio: out of memory");
		return ENOMEM;
	}
	v->sys = sys;
	v->container = v->group = v->device = v->irq = -1;
	v->page = (size_t)sysconf(_SC_PAGESIZE);
	pthread_mutex_init(&v->lock, NULL);
	v->ops = vfio_ops;
	if (!conf->coherent)
		v->ops.dma_sync = va_dma_sync;
	v->base.ops = &v->ops;
	if (ernic_bdf_parse(conf->vfio, v->bdf)) {
		snprintf(err, errlen, "vfio: '%s' is not a PCI address",
			 conf->vfio);
		rc = EINVAL;
		goto err;
	}
	rc = open_iommu(v, conf, err, errlen);
	if (!rc)
		rc = open_device(v, conf, err, errlen);
	if (!rc)
		rc = open_irq(v, err, errlen);
	if (rc)
		goto err;
	*out = &v->base;
	return 0;
err:
	va_close(&v->base);
	return rc;
}

int ernic_access_vfio_open(const struct ernic_conf *conf,
			   struct ernic_access **out, char *err, size_t errlen)
{
	return ernic_access_vfio_open_sys(conf, &vfio_sys_kernel, out, err,
					  errlen);
}
