// SPDX-License-Identifier: MIT
/*
 * Access backend for an ERNIC on a PCIe card under VFIO (vfio-pci; the
 * kernel's Documentation/driver-api/vfio.rst has the container, group and
 * device steps). The PCI function is named by its address; the register
 * window is ERNIC_REG_SPACE_SIZE bytes at vfio_offset in BAR vfio_bar.
 * DMA goes through the IOMMU (vfio_dma.c). The interrupt is MSI-X (else
 * MSI) vector 0 on an eventfd.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
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
#include "uio_dma.h"
#include "vfio_dma.h"
#include "vfio_util.h"

struct vfio_access {
	struct ernic_access base;	/* first: ops dispatch casts back */
	struct ernic_access_ops ops;	/* vfio_ops, + dma_sync if coherent=0 */
	const struct vfio_sys *sys;
	char bdf[ERNIC_BDF_LEN + 1];
	int container, group, device, irq;
	bool irq_on;
	/* The driver's request for the device back (unbind, hot unplug):
	 * VFIO_PCI_REQ_IRQ_INDEX on req; with it, irq_fd is ep, an epoll
	 * of irq and req. -1 where the kernel has no such request. */
	int req, ep;
	bool req_on, req_seen;
	uint32_t irq_index;		/* VFIO_PCI_MSIX/MSI_IRQ_INDEX */
	bool master_set;		/* we set PCI_COMMAND_MASTER */
	uint64_t cmd_off;		/* PCI_COMMAND in the device fd */
	struct vfio_window win;
	volatile uint32_t *regs;	/* win.regs */
	struct vfio_dma *dma;
	/* A broker's: the DMA memory its clients share (vfio_share.c);
	 * dma_alloc takes from it too, so a client's pages and the
	 * broker's are one pool. */
	struct vfio_region *region;
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
	.pread = pread,
	.pwrite = pwrite,
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

static int va_dma_alloc(struct ernic_access *acc, size_t len, size_t align,
			struct ernic_dma *out)
{
	struct vfio_access *v = to_vfio(acc);

	if (v->region)
		return uio_dma_alloc(vfio_region_dma(v->region), len, align,
				     out);
	return vfio_dma_alloc(v->dma, len, align, out);
}

static void va_dma_free(struct ernic_access *acc, struct ernic_dma *dma)
{
	struct vfio_access *v = to_vfio(acc);

	if (v->region)
		uio_dma_free(vfio_region_dma(v->region), dma);
	else
		vfio_dma_free(v->dma, dma);
}

static int va_dma_claim(struct ernic_access *acc, uint64_t bus, size_t len,
			struct ernic_dma *out)
{
	return uio_dma_claim(vfio_region_dma(to_vfio(acc)->region), bus, len,
			     out);
}

static int va_dma_view(struct ernic_access *acc, uint64_t bus, size_t len,
		       struct ernic_dma *out)
{
	return uio_dma_view(vfio_region_dma(to_vfio(acc)->region), bus, len,
			    out);
}

static int va_share_export(struct ernic_access *acc,
			   struct ernic_access_share *out)
{
	struct vfio_access *v = to_vfio(acc);

	vfio_region_export(v->region, out);
	out->device_fd = v->device;
	return 0;
}

static int va_map_user(struct ernic_access *acc, void *va, size_t len,
		       uint64_t *bus)
{
	return vfio_dma_map_user(to_vfio(acc)->dma, va, len, bus);
}

static void va_unmap_user(struct ernic_access *acc, uint64_t bus, size_t len)
{
	(void)len;
	vfio_dma_unmap_user(to_vfio(acc)->dma, bus);
}

static int va_irq_fd(struct ernic_access *acc)
{
	struct vfio_access *v = to_vfio(acc);

	return v->ep >= 0 ? v->ep : v->irq;
}

/*
 * MSI is an edge; rnic_intr is a level, INTSTS & INTEN (PG332
 * "Interrupts"). The provider services the causes, then calls this. A
 * cause raised meanwhile may have sent its MSI before the count is
 * consumed here, or none at all if the line never dropped, so a cause
 * still pending after consuming signals the eventfd again: what UIO's
 * level interrupt does when it is unmasked. A device that reads
 * all-ones is gone (ERNIC_REG_GONE): ENODEV, and no signal, or every
 * wait would return at once.
 */
static int va_irq_enable(struct ernic_access *acc)
{
	struct vfio_access *v = to_vfio(acc);
	uint64_t n;

	if (read(v->irq, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return errno;
	/* Unbound or being unplugged: vfio-pci waits for us to let go. */
	if (v->req >= 0 && read(v->req, &n, sizeof(n)) == sizeof(n))
		v->req_seen = true;
	if (v->req_seen || ernic_mmio_gone(v->regs))
		return ENODEV;
	if (ernic_mmio_rd(v->regs, ERNIC_INTSTS) &
	    ernic_mmio_rd(v->regs, ERNIC_INTEN) & ERNIC_INT_ALL) {
		n = 1;
		if (write(v->irq, &n, sizeof(n)) < 0)
			return errno;
	}
	return 0;
}

static int va_flush(struct ernic_access *acc)
{
	ernic_mmio_flush(to_vfio(acc)->regs);
	return 0;
}

static int va_wait_irq(struct ernic_access *acc, int timeout_ms)
{
	struct pollfd p = { .fd = va_irq_fd(acc), .events = POLLIN };
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

/* PCI_COMMAND's bus-master bit: vfio-pci leaves it to the user (and
 * clears it when the device is released). */
static int set_master(struct vfio_access *v, bool on)
{
	uint16_t cmd;

	errno = 0;
	if (v->sys->pread(v->device, &cmd, sizeof(cmd), (off_t)v->cmd_off) !=
	    sizeof(cmd))
		return errno ? errno : EIO;
	cmd = le16toh(cmd);
	cmd = on ? cmd | PCI_COMMAND_MASTER : cmd & ~PCI_COMMAND_MASTER;
	cmd = htole16(cmd);
	errno = 0;
	if (v->sys->pwrite(v->device, &cmd, sizeof(cmd), (off_t)v->cmd_off) !=
	    sizeof(cmd))
		return errno ? errno : EIO;
	return 0;
}

static void va_close(struct ernic_access *acc)
{
	struct vfio_access *v = to_vfio(acc);
	const struct vfio_sys *sys;

	if (!acc)
		return;
	sys = v->sys;
	if (v->irq_on) {
		_Alignas(struct vfio_irq_set) uint8_t off[VFIO_IRQ_ARG_LEN];

		vfio_irq_arg(off, v->irq_index, -1);
		sys->ioctl(v->device, VFIO_DEVICE_SET_IRQS, off);
	}
	if (v->req_on) {
		_Alignas(struct vfio_irq_set) uint8_t off[VFIO_IRQ_ARG_LEN];

		vfio_irq_arg(off, VFIO_PCI_REQ_IRQ_INDEX, -1);
		sys->ioctl(v->device, VFIO_DEVICE_SET_IRQS, off);
	}
	if (v->ep >= 0)
		close(v->ep);
	if (v->req >= 0)
		sys->close(v->req);
	/* The IP's DMA stops before its memory leaves the IOMMU. */
	if (v->master_set)
		set_master(v, false);
	vfio_region_destroy(v->region, v->dma);
	vfio_dma_destroy(v->dma);
	vfio_window_unmap(sys, &v->win);
	if (v->irq >= 0)
		sys->close(v->irq);
	if (v->device >= 0)
		sys->close(v->device);
	if (v->group >= 0)
		sys->close(v->group);
	if (v->container >= 0)
		sys->close(v->container);
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
	.flush = va_flush,
	.close = va_close,
};

/* ---- open: container, group, IOMMU, device, window, interrupt ---- */

#define FAIL(rc_, ...) return vfio_err(err, errlen, v->bdf, (rc_), __VA_ARGS__)

static const char *open_hint(int rc)
{
	return rc == ENOENT ? " (bind the function to vfio-pci)" :
	       rc == EBUSY ? " (another process has the group)" :
	       rc == EACCES || rc == EPERM ? " (root, or access to /dev/vfio, "
					     "is needed)" : "";
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
	if (v->container < 0) {
		rc = errno;
		FAIL(rc, "%s: %s%s", path, strerror(rc),
		     rc == ENOENT ? " (load vfio-pci)" : open_hint(rc));
	}
	rc = v->sys->ioctl(v->container, VFIO_GET_API_VERSION, NULL);
	if (rc < 0) {
		rc = errno;
		FAIL(rc, "VFIO_GET_API_VERSION: %s", strerror(rc));
	}
	if (rc != VFIO_API_VERSION)
		FAIL(EPROTO, "%s speaks VFIO API %d, not %d", path, rc,
		     VFIO_API_VERSION);
	if (v->sys->ioctl(v->container, VFIO_CHECK_EXTENSION,
			  (void *)(uintptr_t)VFIO_TYPE1v2_IOMMU) > 0)
		type = VFIO_TYPE1v2_IOMMU;
	else if (v->sys->ioctl(v->container, VFIO_CHECK_EXTENSION,
			       (void *)(uintptr_t)VFIO_TYPE1_IOMMU) > 0)
		type = VFIO_TYPE1_IOMMU;
	else
		FAIL(EOPNOTSUPP, "VFIO_CHECK_EXTENSION: the kernel offers no "
		     "type1 IOMMU");

	snprintf(path, sizeof(path), "%s/dev/vfio/%u", c->vfio_root, group);
	v->group = v->sys->open(path, O_RDWR | O_CLOEXEC);
	if (v->group < 0) {
		rc = errno;
		FAIL(rc, "%s: %s%s", path, strerror(rc), open_hint(rc));
	}
	if (v->sys->ioctl(v->group, VFIO_GROUP_GET_STATUS, &st)) {
		rc = errno;
		FAIL(rc, "VFIO_GROUP_GET_STATUS: %s", strerror(rc));
	}
	if (!(st.flags & VFIO_GROUP_FLAGS_VIABLE))
		FAIL(EBUSY, "group %u is not viable: bind every device of the "
		     "group to vfio-pci", group);
	if (v->sys->ioctl(v->group, VFIO_GROUP_SET_CONTAINER, &v->container)) {
		rc = errno;
		FAIL(rc, "VFIO_GROUP_SET_CONTAINER: %s", strerror(rc));
	}
	if (v->sys->ioctl(v->container, VFIO_SET_IOMMU, (void *)type)) {
		rc = errno;
		FAIL(rc, "VFIO_SET_IOMMU: %s", strerror(rc));
	}
	return vfio_dma_create(v->sys, v->container, v->bdf,
			       c->c_m_axi_addr_width >= 64 ? UINT64_MAX :
			       UINT64_C(1) << c->c_m_axi_addr_width,
			       &v->dma, err, errlen);
}

/* VFIO_DEVICE_GET_REGION_INFO of region index, capabilities included:
 * malloc'd in *out, its length in *len. 0 or errno. */
static int region_info(const struct vfio_sys *sys, int device, uint32_t index,
		       struct vfio_region_info **out, size_t *len)
{
	struct vfio_region_info *ri = calloc(1, sizeof(*ri)), *big;
	uint32_t sz;
	int rc;

	if (!ri)
		return ENOMEM;
	ri->argsz = sizeof(*ri);
	ri->index = index;
	if (sys->ioctl(device, VFIO_DEVICE_GET_REGION_INFO, ri))
		goto fail;
	sz = ri->argsz;
	if ((ri->flags & VFIO_REGION_INFO_FLAG_CAPS) && sz > sizeof(*ri)) {
		big = realloc(ri, sz);
		if (!big) {
			free(ri);
			return ENOMEM;
		}
		ri = big;
		memset(ri, 0, sz);
		ri->argsz = sz;
		ri->index = index;
		if (sys->ioctl(device, VFIO_DEVICE_GET_REGION_INFO, ri))
			goto fail;
	} else {
		sz = sizeof(*ri);
	}
	*out = ri;
	*len = sz;
	return 0;
fail:
	rc = errno;
	free(ri);
	return rc;
}

int vfio_window_map(const struct vfio_sys *sys, int device, const char *bdf,
		    const struct ernic_conf *c, struct vfio_window *w,
		    char *err, size_t errlen)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len, delta;
	struct vfio_region_info *ri;
	uint64_t off;
	char why[160];
	void *map;
	int rc;

	rc = region_info(sys, device, c->vfio_bar, &ri, &len);
	if (rc)
		return vfio_err(err, errlen, bdf, rc, "BAR %u: "
				"VFIO_DEVICE_GET_REGION_INFO: %s", c->vfio_bar,
				strerror(rc));
	rc = vfio_window_check(ri, len, c->vfio_offset, ERNIC_REG_SPACE_SIZE,
			       why, sizeof(why));
	off = ri->offset + c->vfio_offset;
	free(ri);
	if (rc)
		return vfio_err(err, errlen, bdf, rc, "BAR %u: %s", c->vfio_bar,
				why);
	/* vfio_offset is 4 KiB aligned; pages may be bigger. */
	delta = (size_t)(off & (page - 1));
	len = (delta + ERNIC_REG_SPACE_SIZE + page - 1) & ~(page - 1);
	map = sys->mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, device,
			(off_t)(off - delta));
	if (map == MAP_FAILED) {
		rc = errno;
		return vfio_err(err, errlen, bdf, rc, "mmap of BAR %u: %s",
				c->vfio_bar, strerror(rc));
	}
	w->map = map;
	w->maplen = len;
	w->regs = (volatile uint32_t *)((char *)map + delta);
	return 0;
}

void vfio_window_unmap(const struct vfio_sys *sys, struct vfio_window *w)
{
	if (w->map)
		sys->munmap(w->map, w->maplen);
	memset(w, 0, sizeof(*w));
}

static int open_device(struct vfio_access *v, const struct ernic_conf *c,
		       char *err, size_t errlen)
{
	struct vfio_region_info *ri;
	size_t len;
	int rc;

	v->device = v->sys->ioctl(v->group, VFIO_GROUP_GET_DEVICE_FD, v->bdf);
	if (v->device < 0) {
		rc = errno;
		FAIL(rc, "VFIO_GROUP_GET_DEVICE_FD: %s", strerror(rc));
	}
	rc = vfio_window_map(v->sys, v->device, v->bdf, c, &v->win, err,
			     errlen);
	if (rc)
		return rc;
	v->regs = v->win.regs;
	v->base.doorbells = v->regs;

	rc = region_info(v->sys, v->device, VFIO_PCI_CONFIG_REGION_INDEX, &ri,
			 &len);
	if (rc)
		FAIL(rc, "config space: VFIO_DEVICE_GET_REGION_INFO: %s",
		     strerror(rc));
	v->cmd_off = ri->offset + PCI_COMMAND;
	free(ri);
	rc = set_master(v, true);
	if (rc)
		FAIL(rc, "enabling bus mastering (PCI_COMMAND): %s",
		     strerror(rc));
	v->master_set = true;
	return 0;
}

/*
 * vfio-pci asks its user to release the device before an unbind or a
 * hot unplug completes (VFIO_PCI_REQ_IRQ_INDEX), and waits. Its eventfd
 * and the interrupt's go into one epoll, which irq_fd hands out: the
 * handler wakes for either, and irq_enable then says ENODEV, so that the
 * provider reports the device gone and the application closes it. A
 * kernel without the request: nothing to add.
 */
static int open_req(struct vfio_access *v, char *err, size_t errlen)
{
	_Alignas(struct vfio_irq_set) uint8_t set[VFIO_IRQ_ARG_LEN];
	struct vfio_irq_info ii = { .argsz = sizeof(ii),
				    .index = VFIO_PCI_REQ_IRQ_INDEX };
	struct epoll_event e = { .events = EPOLLIN };
	int rc;

	if (v->sys->ioctl(v->device, VFIO_DEVICE_GET_IRQ_INFO, &ii) ||
	    !ii.count || !(ii.flags & VFIO_IRQ_INFO_EVENTFD))
		return 0;
	v->req = v->sys->eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (v->req < 0) {
		rc = errno;
		FAIL(rc, "eventfd: %s", strerror(rc));
	}
	vfio_irq_arg(set, VFIO_PCI_REQ_IRQ_INDEX, v->req);
	if (v->sys->ioctl(v->device, VFIO_DEVICE_SET_IRQS, set)) {
		rc = errno;
		FAIL(rc, "VFIO_DEVICE_SET_IRQS (the driver's request): %s",
		     strerror(rc));
	}
	v->req_on = true;
	v->ep = epoll_create1(EPOLL_CLOEXEC);
	if (v->ep < 0) {
		rc = errno;
		FAIL(rc, "epoll_create1: %s", strerror(rc));
	}
	for (int k = 0; k < 2; k++) {
		e.data.fd = k ? v->req : v->irq;
		if (epoll_ctl(v->ep, EPOLL_CTL_ADD, e.data.fd, &e)) {
			rc = errno;
			FAIL(rc, "epoll_ctl: %s", strerror(rc));
		}
	}
	return 0;
}

/* Vector 0 of MSI-X, else of MSI, triggers an eventfd. */
static int open_irq(struct vfio_access *v, char *err, size_t errlen)
{
	static const uint32_t idx[] = { VFIO_PCI_MSIX_IRQ_INDEX,
					VFIO_PCI_MSI_IRQ_INDEX };
	_Alignas(struct vfio_irq_set) uint8_t set[VFIO_IRQ_ARG_LEN];
	size_t k;
	int rc;

	for (k = 0; k < 2; k++) {
		struct vfio_irq_info ii = { .argsz = sizeof(ii), .index = idx[k] };

		if (!v->sys->ioctl(v->device, VFIO_DEVICE_GET_IRQ_INFO, &ii) &&
		    ii.count && (ii.flags & VFIO_IRQ_INFO_EVENTFD))
			break;
	}
	if (k == 2)
		FAIL(ENODEV, "VFIO_DEVICE_GET_IRQ_INFO: the function has "
		     "neither MSI-X nor MSI");
	v->irq_index = idx[k];
	v->irq = v->sys->eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (v->irq < 0) {
		rc = errno;
		FAIL(rc, "eventfd: %s", strerror(rc));
	}
	vfio_irq_arg(set, v->irq_index, v->irq);
	if (v->sys->ioctl(v->device, VFIO_DEVICE_SET_IRQS, set)) {
		rc = errno;
		FAIL(rc, "VFIO_DEVICE_SET_IRQS (%s): %s",
		     v->irq_index == VFIO_PCI_MSIX_IRQ_INDEX ? "MSI-X" : "MSI",
		     strerror(rc));
	}
	v->irq_on = true;
	return open_req(v, err, errlen);
}

int ernic_access_vfio_open_sys(const struct ernic_conf *conf,
			       const struct vfio_sys *sys,
			       struct ernic_access **out, char *err,
			       size_t errlen)
{
	struct vfio_access *v;
	int rc;

	if (!err)
		errlen = 0;
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
	v->req = v->ep = -1;
	v->ops = vfio_ops;
	if (!conf->coherent)
		v->ops.dma_sync = va_dma_sync;
	v->base.ops = &v->ops;
	if (ernic_bdf_parse(conf->vfio, v->bdf)) {
		snprintf(err, errlen, "vfio: '%s' is not a PCI address "
			 "DDDD:BB:DD.F", conf->vfio);
		rc = EINVAL;
		goto fail;
	}
	rc = open_iommu(v, conf, err, errlen);
	if (!rc)
		rc = open_device(v, conf, err, errlen);
	if (!rc)
		rc = open_irq(v, err, errlen);
	/* A broker shares DMA memory out to its clients (vfio_share.c). */
	if (!rc && conf->hw_role == ERNIC_HW_BROKER) {
		rc = vfio_region_create(v->dma, v->bdf,
					(size_t)conf->vfio_share_mib << 20,
					&v->region, err, errlen);
		if (!rc) {
			v->ops.dma_claim = va_dma_claim;
			v->ops.dma_view = va_dma_view;
			v->ops.share_export = va_share_export;
		}
	}
	if (rc)
		goto fail;
	*out = &v->base;
	return 0;
fail:
	va_close(&v->base);
	return rc;
}

int ernic_access_vfio_open(const struct ernic_conf *conf,
			   struct ernic_access **out, char *err, size_t errlen)
{
	return ernic_access_vfio_open_sys(conf, &vfio_sys_kernel, out, err,
					  errlen);
}
