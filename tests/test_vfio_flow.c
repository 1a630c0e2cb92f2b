// SPDX-License-Identifier: MIT
/*
 * test_vfio, part 2: the VFIO backend's open / DMA / interrupt / close
 * flow against a fake of the VFIO ioctls that checks every argument,
 * records the order of the steps, can fail any of them, and counts what
 * is left open, mapped or pinned.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "access_vfio.h"
#include "ernic_access.h"
#include "ernic_conf.h"
#include "ernic_hw.h"
#include "test_vfio.h"
#include "vfio_util.h"

#define MIB (UINT64_C(1) << 20)

/* ---- the fake kernel ---- */

/* FD_DEVICE2: the device's file as a broker's client has it (a copy
 * of FD_DEVICE passed over a socket) */
enum { FD_CONTAINER = 100, FD_GROUP, FD_DEVICE,
       FD_DEVICE2 = FAKE_FD_DEVICE2 };
#define REGION_OFFSET(i) ((uint64_t)(i) << 40)	/* as vfio-pci lays them out */
#define CMD_OFF (REGION_OFFSET(VFIO_PCI_CONFIG_REGION_INDEX) + PCI_COMMAND)

static struct fake {
	unsigned long fail_req;		/* this ioctl fails with fail_errno */
	const char *fail_call;		/* or this other call, with EACCES */
	int fail_errno, api;
	bool no_type1v2, no_type1, not_viable, no_msix, no_msi, no_caps,
	     sparse, high_ranges, no_huge;
	/* VFIO_PCI_REQ_IRQ_INDEX: offered (req), its eventfd and whether
	 * it is set, or whether setting it fails (req_fail) */
	bool req, req_set, req_fail;
	int req_fd;
	uint64_t bar_size;
	char log[96][16];		/* the steps, in order */
	int nlog;
	unsigned int open;		/* a bit per open fd; eventfd: 8 */
	uint32_t iommu_type;
	uint64_t win_off;
	size_t win_len;
	void *win;
	int win_refs;			/* mappings of it */
	int irq_fd, irq_index;
	uint16_t cmd;			/* PCI_COMMAND */
	struct { uint64_t iova, size, vaddr; } maps[64];
	int nmaps, anon_live, huge_tries, huge_maps;
} F;

static void logs(const char *s)
{
	if (F.nlog < 96)
		snprintf(F.log[F.nlog++], sizeof(F.log[0]), "%s", s);
}

static bool failing(const char *what)
{
	if (!F.fail_call || strcmp(F.fail_call, what))
		return false;
	errno = EACCES;
	return true;
}

static unsigned int bit_of(int fd)
{
	return fd == F.irq_fd ? 8 : fd == FD_DEVICE2 ? 16 :
	       fd == F.req_fd ? 32 :
					 1u << (fd - FD_CONTAINER);
}

static int f_open(const char *path, int flags)
{
	char c[128], g[128];
	int fd;

	assert_true(flags & O_RDWR);
	snprintf(c, sizeof(c), "%s/dev/vfio/vfio", fake_root);
	snprintf(g, sizeof(g), "%s/dev/vfio/7", fake_root);
	fd = !strcmp(path, c) ? FD_CONTAINER : !strcmp(path, g) ? FD_GROUP : -1;
	if (fd < 0)
		errno = ENOENT;
	if (fd < 0 || failing(fd == FD_GROUP ? "group" : "container"))
		return -1;
	F.open |= bit_of(fd);
	return fd;
}

static int f_close(int fd)
{
	if (!(F.open & bit_of(fd)))
		fail_msg("close of fd %d, which is not open", fd);
	F.open &= ~bit_of(fd);
	if (fd == F.irq_fd)
		close(fd);
	if (fd == F.req_fd) {
		close(fd);
		F.req_fd = -1;
	}
	return 0;
}

static int iommu_info(struct vfio_iommu_type1_info *i)
{
	const uint32_t need = sizeof(*i) +
		sizeof(struct vfio_iommu_type1_info_cap_iova_range) +
		2 * sizeof(struct vfio_iova_range);
	struct vfio_iommu_type1_info_cap_iova_range *c = (void *)(i + 1);
	const uint64_t lo = F.high_ranges ? UINT64_C(1) << 40 : 0;

	assert_true(i->argsz >= sizeof(*i));
	i->iova_pgsizes = 4096 | (1u << 21) | (1u << 30);
	i->flags = VFIO_IOMMU_INFO_PGSIZES;
	if (F.no_caps)
		return 0;
	i->flags |= VFIO_IOMMU_INFO_CAPS;
	if (i->argsz < need) {
		i->argsz = need;	/* ask again with room */
		return 0;
	}
	i->cap_offset = sizeof(*i);
	c->header = (struct vfio_info_cap_header){
		.id = VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE, .version = 1 };
	c->nr_iovas = 2;
	/* x86 reserves the MSI window at 0xfee00000. */
	c->iova_ranges[0] = (struct vfio_iova_range){
		lo, F.high_ranges ? lo * 2 - 1 : 0xfedfffff };
	c->iova_ranges[1] = (struct vfio_iova_range){
		UINT64_C(1) << 42, (UINT64_C(1) << 48) - 1 };
	return 0;
}

static int region_info(struct vfio_region_info *r)
{
	static const struct vfio_region_sparse_mmap_area a[] = {
		{ 0, 0x60000 }, { 0x70000, 0x90000 },	/* MSI-X at 0x60000 */
	};
	struct vfio_region_info_cap_sparse_mmap *sp = (void *)(r + 1);
	const uint32_t need = sizeof(*r) + sizeof(*sp) + sizeof(a);

	assert_true(r->argsz >= sizeof(*r));
	r->offset = REGION_OFFSET(r->index);
	r->flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;
	r->size = r->index == VFIO_PCI_CONFIG_REGION_INDEX ? 256 :
		  r->index == 2 ? F.bar_size : 0;
	if (r->index != 2)
		return 0;
	r->flags |= VFIO_REGION_INFO_FLAG_MMAP;
	if (!F.sparse)
		return 0;
	r->flags |= VFIO_REGION_INFO_FLAG_CAPS;
	if (r->argsz < need) {
		r->argsz = need;
		return 0;
	}
	r->cap_offset = sizeof(*r);
	sp->header = (struct vfio_info_cap_header){
		.id = VFIO_REGION_INFO_CAP_SPARSE_MMAP, .version = 1 };
	sp->nr_areas = 2;
	memcpy(sp->areas, a, sizeof(a));
	return 0;
}

static int set_irqs(const struct vfio_irq_set *s)
{
	int32_t efd;

	assert_true(s->flags & VFIO_IRQ_SET_ACTION_TRIGGER);
	if (s->index == VFIO_PCI_REQ_IRQ_INDEX) {
		assert_true(F.req);
		if (s->flags & VFIO_IRQ_SET_DATA_EVENTFD) {
			assert_true(s->start == 0 && s->count == 1);
			memcpy(&efd, s + 1, sizeof(efd));
			assert_int_equal(efd, F.req_fd);
			if (F.req_fail) {
				errno = EINVAL;
				return -1;
			}
			F.req_set = true;
			logs("req_on");
		} else {
			assert_true(F.req_set && s->count == 0);
			F.req_set = false;
			logs("req_off");
		}
		return 0;
	}
	if (s->flags & VFIO_IRQ_SET_DATA_EVENTFD) {
		assert_int_equal(s->argsz, sizeof(*s) + 4);
		assert_true(s->start == 0 && s->count == 1);
		memcpy(&efd, s + 1, sizeof(efd));
		assert_int_equal(efd, F.irq_fd);
		F.irq_index = (int)s->index;
		logs("irq_on");
	} else {
		assert_true(s->flags & VFIO_IRQ_SET_DATA_NONE);
		assert_true(s->count == 0 && (int)s->index == F.irq_index);
		F.irq_index = -1;
		logs("irq_off");
	}
	return 0;
}

static int map_dma(const struct vfio_iommu_type1_dma_map *m)
{
	assert_int_equal(m->argsz, sizeof(*m));
	assert_int_equal(m->flags, VFIO_DMA_MAP_FLAG_READ |
				   VFIO_DMA_MAP_FLAG_WRITE);
	assert_true(m->size && m->size % 4096 == 0 && m->iova % 4096 == 0 &&
		    m->vaddr % 4096 == 0 && m->iova >= 4096);
	/* Never in the reserved window, never overlapping. */
	assert_false(m->iova < (UINT64_C(1) << 42) &&
		     m->iova + m->size > 0xfee00000);
	for (int k = 0; k < F.nmaps; k++)
		assert_true(m->iova + m->size <= F.maps[k].iova ||
			    m->iova >= F.maps[k].iova + F.maps[k].size);
	assert_true(F.nmaps < 64);
	F.maps[F.nmaps].iova = m->iova;
	F.maps[F.nmaps].size = m->size;
	F.maps[F.nmaps++].vaddr = m->vaddr;
	return 0;
}

static int unmap_dma(const struct vfio_iommu_type1_dma_unmap *u)
{
	assert_int_equal(u->argsz, sizeof(*u));
	for (int k = 0; k < F.nmaps; k++)
		if (F.maps[k].iova == u->iova && F.maps[k].size == u->size) {
			F.maps[k] = F.maps[--F.nmaps];
			return 0;
		}
	fail_msg("unmap of %#llx+%#llx, which is not mapped",
		 (unsigned long long)u->iova, (unsigned long long)u->size);
	return -1;
}

/* Each ioctl: the fd it belongs to, and its name in the log. */
static const struct {
	unsigned long req;
	int fd;
	const char *step;
} ioctls[] = {
	{ VFIO_GET_API_VERSION, FD_CONTAINER, "api" },
	{ VFIO_CHECK_EXTENSION, FD_CONTAINER, "extension" },
	{ VFIO_GROUP_GET_STATUS, FD_GROUP, "status" },
	{ VFIO_GROUP_SET_CONTAINER, FD_GROUP, "set_container" },
	{ VFIO_SET_IOMMU, FD_CONTAINER, "set_iommu" },
	{ VFIO_IOMMU_GET_INFO, FD_CONTAINER, "iommu_info" },
	{ VFIO_GROUP_GET_DEVICE_FD, FD_GROUP, "device_fd" },
	{ VFIO_DEVICE_GET_REGION_INFO, FD_DEVICE, "region_info" },
	{ VFIO_DEVICE_GET_IRQ_INFO, FD_DEVICE, "irq_info" },
	{ VFIO_DEVICE_SET_IRQS, FD_DEVICE, "set_irqs" },
	{ VFIO_IOMMU_MAP_DMA, FD_CONTAINER, "map" },
	{ VFIO_IOMMU_UNMAP_DMA, FD_CONTAINER, "unmap" },
};

static int f_ioctl(int fd, unsigned long req, void *arg)
{
	size_t k = 0;

	while (k < sizeof(ioctls) / sizeof(ioctls[0]) && ioctls[k].req != req)
		k++;
	if (k == sizeof(ioctls) / sizeof(ioctls[0]))
		fail_msg("unexpected ioctl %#lx", req);
	assert_true(fd == ioctls[k].fd ||
		    (fd == FD_DEVICE2 && req == VFIO_DEVICE_GET_REGION_INFO));
	assert_true(F.open & bit_of(fd));
	logs(ioctls[k].step);
	if (F.fail_req == req) {
		errno = F.fail_errno;
		return -1;
	}
	switch (req) {
	case VFIO_GET_API_VERSION:
		return F.api ? F.api : VFIO_API_VERSION;
	case VFIO_CHECK_EXTENSION:
		return ((uintptr_t)arg == VFIO_TYPE1v2_IOMMU && !F.no_type1v2) ||
		       ((uintptr_t)arg == VFIO_TYPE1_IOMMU && !F.no_type1);
	case VFIO_GROUP_GET_STATUS:
		((struct vfio_group_status *)arg)->flags =
			F.not_viable ? 0 : VFIO_GROUP_FLAGS_VIABLE;
		return 0;
	case VFIO_GROUP_SET_CONTAINER:
		assert_int_equal(*(int *)arg, FD_CONTAINER);
		return 0;
	case VFIO_SET_IOMMU:
		F.iommu_type = (uint32_t)(uintptr_t)arg;
		return 0;
	case VFIO_IOMMU_GET_INFO:
		return iommu_info(arg);
	case VFIO_GROUP_GET_DEVICE_FD:
		assert_string_equal((const char *)arg, "0000:01:00.0");
		F.open |= bit_of(FD_DEVICE);
		return FD_DEVICE;
	case VFIO_DEVICE_GET_REGION_INFO:
		return region_info(arg);
	case VFIO_DEVICE_GET_IRQ_INFO: {
		struct vfio_irq_info *ii = arg;

		ii->flags = VFIO_IRQ_INFO_EVENTFD;
		if (ii->index == VFIO_PCI_REQ_IRQ_INDEX) {
			ii->count = F.req;
			return 0;
		}
		ii->count = ii->index == VFIO_PCI_MSIX_IRQ_INDEX ?
				    (F.no_msix ? 0 : 8) :
			    ii->index == VFIO_PCI_MSI_IRQ_INDEX && !F.no_msi;
		return 0;
	}
	case VFIO_DEVICE_SET_IRQS:
		return set_irqs(arg);
	case VFIO_IOMMU_MAP_DMA:
		return map_dma(arg);
	default:
		return unmap_dma(arg);
	}
}

static void *f_mmap(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off)
{
	void *p;

	assert_int_equal(prot, PROT_READ | PROT_WRITE);
	if (fd == FD_DEVICE || fd == FD_DEVICE2) {
		assert_int_equal(flags, MAP_SHARED);
		assert_true(F.open & bit_of(fd));
		if (failing("mmap_bar"))
			return MAP_FAILED;
		logs("mmap_bar");
		if (F.win) {	/* the same BAR pages again */
			assert_true(F.win_off == (uint64_t)off &&
				    F.win_len == len);
			F.win_refs++;
			return F.win;
		}
		F.win_off = (uint64_t)off;
		F.win_len = len;
		F.win = calloc(1, len);
		F.win_refs = 1;
		return F.win;
	}
	assert_int_equal(fd, -1);
	assert_int_equal(flags & ~(MAP_HUGETLB | (0x3f << MAP_HUGE_SHIFT)),
			 MAP_PRIVATE | MAP_ANONYMOUS);
	if (flags & MAP_HUGETLB) {
		F.huge_tries++;
		assert_int_equal((flags >> MAP_HUGE_SHIFT) & 0x3f, 21);
		assert_int_equal(len % (2 * MIB), 0);
		if (F.no_huge) {
			errno = ENOMEM;
			return MAP_FAILED;
		}
		F.huge_maps++;
	}
	p = mmap(addr, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	F.anon_live += p != MAP_FAILED;
	return p;
}

static int f_munmap(void *addr, size_t len)
{
	if (addr != F.win) {
		F.anon_live--;
		return munmap(addr, len);
	}
	assert_int_equal(len, F.win_len);
	if (--F.win_refs == 0) {
		free(F.win);
		F.win = NULL;
	}
	return 0;
}

static int f_eventfd(unsigned int v, int flags)
{
	assert_int_equal(flags & EFD_NONBLOCK, EFD_NONBLOCK);
	if (failing("eventfd"))
		return -1;
	if (F.open & 8) {	/* the second: the driver's request */
		F.req_fd = eventfd(v, flags);
		F.open |= 32;
		return F.req_fd;
	}
	F.irq_fd = eventfd(v, flags);
	F.open |= 8;
	return F.irq_fd;
}

static ssize_t f_pread(int fd, void *b, size_t len, off_t off)
{
	assert_true(fd == FD_DEVICE && len == 2 && (uint64_t)off == CMD_OFF);
	if (failing("pread"))
		return -1;
	memcpy(b, &F.cmd, 2);
	return 2;
}

static ssize_t f_pwrite(int fd, const void *b, size_t len, off_t off)
{
	uint16_t was = F.cmd;

	assert_true(fd == FD_DEVICE && len == 2 && (uint64_t)off == CMD_OFF);
	if (failing("pwrite"))
		return -1;
	memcpy(&F.cmd, b, 2);
	/* Only the bus-master bit changes. */
	assert_int_equal(F.cmd & ~PCI_COMMAND_MASTER, was & ~PCI_COMMAND_MASTER);
	logs(F.cmd & PCI_COMMAND_MASTER ? "master_on" : "master_off");
	return 2;
}

const struct vfio_sys fake_sys = {
	.open = f_open, .close = f_close, .ioctl = f_ioctl, .mmap = f_mmap,
	.munmap = f_munmap, .eventfd = f_eventfd, .pread = f_pread,
	.pwrite = f_pwrite,
};

void conf_vfio(struct ernic_conf *c)
{
	ernic_conf_defaults(c);
	c->backend = ERNIC_BACKEND_VFIO;
	strcpy(c->vfio, "0000:01:00.0");
	strcpy(c->vfio_root, fake_root);
	c->vfio_bar = 2;
	c->vfio_offset = 0x80000;
}

int reset_fake(void **state)
{
	memset(&F, 0, sizeof(F));
	F.bar_size = MIB;
	F.fail_errno = EPERM;
	F.irq_fd = -1;
	F.req_fd = -1;
	F.irq_index = -1;
	F.cmd = PCI_COMMAND_MEMORY | PCI_COMMAND_SERR;
	return 0;
}

/* Nothing open, mapped, pinned or left enabled. */
void assert_clean(void)
{
	assert_int_equal(F.open, 0);
	assert_int_equal(F.nmaps, 0);
	assert_int_equal(F.anon_live, 0);
	assert_null(F.win);
	assert_int_equal(F.irq_index, -1);
	assert_false(F.req_set);
	assert_int_equal(F.cmd & PCI_COMMAND_MASTER, 0);
}

/* Whether want[] occurs in the log in this order (others between). */
static bool logged_in_order(const char *const *want, int n)
{
	int at = 0;

	for (int k = 0; k < F.nlog && at < n; k++)
		at += !strcmp(F.log[k], want[at]);
	return at == n;
}

static struct ernic_access *open_ok(struct ernic_conf *c)
{
	struct ernic_access *acc = NULL;
	char err[256] = "";

	if (ernic_access_vfio_open_sys(c, &fake_sys, &acc, err, sizeof(err)))
		fail_msg("open: %s", err);
	return acc;
}

bool fd_readable(int fd)
{
	return poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 0) == 1;
}

void test_open_flow(void **state)
{
	static const char *const order[] = {
		"api", "extension", "status", "set_container", "set_iommu",
		"iommu_info", "iommu_info", "device_fd", "region_info",
		"mmap_bar", "region_info", "master_on", "irq_info", "set_irqs",
		"irq_on",
	};
	static const char *const close_order[] = {
		"irq_off", "master_off", "unmap", "unmap",
	};
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct ernic_access *acc;
	volatile uint32_t *regs;
	struct ernic_conf c;
	struct ernic_dma d;
	uint64_t bus, one = 1;
	char *buf;
	int fd;

	conf_vfio(&c);
	acc = open_ok(&c);
	assert_true(logged_in_order(order, sizeof(order) / sizeof(order[0])));
	assert_string_equal(acc->ops->name, "vfio");
	assert_int_equal(F.iommu_type, VFIO_TYPE1v2_IOMMU);
	assert_int_equal(F.irq_index, VFIO_PCI_MSIX_IRQ_INDEX);
	assert_int_equal(F.cmd, PCI_COMMAND_MEMORY | PCI_COMMAND_SERR |
				PCI_COMMAND_MASTER);
	/* The window: BAR 2's region at the configured offset. */
	assert_true(F.win_off + F.win_len - ERNIC_REG_SPACE_SIZE ==
		    REGION_OFFSET(2) + 0x80000);
	assert_int_equal(F.win_off % page, 0);
	regs = (void *)((char *)F.win + F.win_len - ERNIC_REG_SPACE_SIZE);
	ernic_wr(acc, ERNIC_XRNICCONF, 0x12345678);
	assert_int_equal(regs[ERNIC_XRNICCONF / 4], 0x12345678);
	regs[ERNIC_INTSTS / 4] = 0x80;
	assert_int_equal(ernic_rd(acc, ERNIC_INTSTS), 0x80);
	assert_int_equal(ernic_rd(acc, ERNIC_REG_SPACE_SIZE), 0);
	assert_null(acc->ops->dma_sync);	/* coherent by default */

	/* DMA memory: zeroed, aligned, mapped at an aligned IOVA; small
	 * blocks in pages. */
	assert_int_equal(acc->ops->dma_alloc(acc, 100, 1 << 16, &d), 0);
	assert_true(d.bus % (1 << 16) == 0 && d.len == 100);
	assert_int_equal(F.nmaps, 1);
	assert_true(F.maps[0].vaddr == (uintptr_t)d.va && F.maps[0].iova == d.bus);
	assert_int_equal(((uint8_t *)d.va)[99], 0);
	assert_int_equal(F.huge_tries, 0);

	/* A user buffer that starts mid-page: its pages, one IOVA range;
	 * any address inside finds it again. */
	buf = aligned_alloc(page, 3 * page);
	assert_int_equal(acc->ops->map_user(acc, buf + 100, page + 1000, &bus),
			 0);
	assert_int_equal(F.nmaps, 2);
	assert_true(F.maps[1].vaddr == (uintptr_t)buf &&
		    F.maps[1].size == 2 * page && bus == F.maps[1].iova + 100);
	acc->ops->unmap_user(acc, bus + 50, page + 1000);
	assert_int_equal(F.nmaps, 1);

	/* The interrupt: MSI-X fires the eventfd; enable consumes it. */
	fd = acc->ops->irq_fd(acc);
	assert_int_equal(fd, F.irq_fd);
	assert_int_equal(acc->ops->wait_irq(acc, 0), 0);
	assert_int_equal(write(fd, &one, sizeof(one)), 8);
	assert_int_equal(acc->ops->wait_irq(acc, 100), 1);
	assert_false(fd_readable(fd));
	/* A cause still pending and enabled when re-enabled (its MSI eaten,
	 * or never sent): signalled again, as a level would be. */
	regs[ERNIC_INTEN / 4] = ERNIC_INT_WQE_COMPLETION;
	regs[ERNIC_INTSTS / 4] = ERNIC_INT_WQE_COMPLETION;
	assert_int_equal(write(fd, &one, sizeof(one)), 8);
	assert_int_equal(acc->ops->irq_enable(acc), 0);
	assert_true(fd_readable(fd));
	regs[ERNIC_INTSTS / 4] = 0;
	assert_int_equal(acc->ops->irq_enable(acc), 0);
	assert_false(fd_readable(fd));
	regs[ERNIC_INTSTS / 4] = ERNIC_INT_FATAL;	/* not enabled */
	assert_int_equal(acc->ops->irq_enable(acc), 0);
	assert_false(fd_readable(fd));
	/* A card pulled: every register reads all-ones. Not a level to
	 * signal again (each wait would return at once, for ever): ENODEV,
	 * and the next wait waits. */
	regs[ERNIC_INTEN / 4] = ERNIC_REG_GONE;
	regs[ERNIC_INTSTS / 4] = ERNIC_REG_GONE;
	assert_int_equal(write(fd, &one, sizeof(one)), 8);
	assert_int_equal(acc->ops->irq_enable(acc), ENODEV);
	assert_false(fd_readable(fd));
	assert_int_equal(write(fd, &one, sizeof(one)), 8);
	assert_int_equal(acc->ops->wait_irq(acc, 100), -ENODEV);
	assert_int_equal(acc->ops->wait_irq(acc, 0), 0);
	regs[ERNIC_INTEN / 4] = 0;
	regs[ERNIC_INTSTS / 4] = 0;

	acc->ops->dma_free(acc, &d);
	assert_null(d.va);
	assert_int_equal(F.nmaps, 0);
	assert_int_equal(F.anon_live, 0);
	/* Left mapped: close unmaps it all, after stopping the IP. */
	assert_int_equal(acc->ops->map_user(acc, buf, page, &bus), 0);
	assert_int_equal(acc->ops->dma_alloc(acc, page, 0, &d), 0);
	F.nlog = 0;
	acc->ops->close(acc);
	assert_true(logged_in_order(close_order, 4));
	assert_clean();
	free(buf);
}

/* Big DMA blocks: 2 MiB pages at 2 MiB-aligned IOVAs when the system has
 * some, pages otherwise. */
void test_hugepages(void **state)
{
	struct ernic_access *acc;
	struct ernic_conf c;
	struct ernic_dma d, e;

	conf_vfio(&c);
	acc = open_ok(&c);
	assert_int_equal(acc->ops->dma_alloc(acc, 3 * MIB, 4096, &d), 0);
	assert_int_equal(F.huge_maps, 1);
	assert_true(F.maps[0].size == 4 * MIB && d.bus % (2 * MIB) == 0);
	assert_true(d.len == 3 * MIB);
	F.no_huge = true;
	assert_int_equal(acc->ops->dma_alloc(acc, 3 * MIB, 4096, &e), 0);
	assert_true(F.huge_tries == 2 && F.huge_maps == 1);
	assert_true(F.maps[1].size == 3 * MIB);
	acc->ops->dma_free(acc, &d);
	acc->ops->dma_free(acc, &e);
	assert_int_equal(F.anon_live, 0);
	acc->ops->close(acc);
	assert_clean();
}

/* A 32-bit IP with non-coherent DMA on MSI and type1: IOVAs below 4 GiB,
 * dma_sync; a refused MAP_DMA or no IOVA left: the error, nothing kept. */
void test_narrow(void **state)
{
	char *buf = aligned_alloc(4096, 4096);
	struct ernic_access *acc;
	struct ernic_conf c;
	struct ernic_dma d[3];
	uint64_t bus;

	conf_vfio(&c);
	c.c_m_axi_addr_width = 32;
	c.coherent = 0;
	F.no_msix = true;
	F.no_type1v2 = true;
	acc = open_ok(&c);
	assert_non_null(acc->ops->dma_sync);
	assert_int_equal(F.irq_index, VFIO_PCI_MSI_IRQ_INDEX);
	assert_int_equal(F.iommu_type, VFIO_TYPE1_IOMMU);

	F.fail_req = VFIO_IOMMU_MAP_DMA;
	F.fail_errno = ENOMEM;
	assert_int_equal(acc->ops->dma_alloc(acc, 4096, 0, &d[0]), ENOMEM);
	assert_int_equal(acc->ops->map_user(acc, buf, 4096, &bus), ENOMEM);
	assert_int_equal(F.anon_live, 0);
	F.fail_req = 0;
	/* The failed attempts gave their IOVAs back: the first is free. */
	assert_int_equal(acc->ops->dma_alloc(acc, 4096, 0, &d[0]), 0);
	assert_true(d[0].bus == 4096);
	/* 5 GiB cannot fit below 4 GiB (the fake pins nothing). */
	assert_int_equal(acc->ops->map_user(acc, buf, 5 * 1024 * MIB, &bus),
			 ENOMEM);
	assert_int_equal(F.nmaps, 1);
	acc->ops->unmap_user(acc, 0x7000000, 4096);	/* not mapped */
	assert_int_equal(F.nmaps, 1);
	for (int k = 1; k < 3; k++) {
		assert_int_equal(acc->ops->dma_alloc(acc, MIB, 4096, &d[k]), 0);
		assert_true(d[k].bus + MIB <= UINT64_C(1) << 32);
	}
	acc->ops->close(acc);
	assert_clean();
	free(buf);
}

/* Each step that fails: a reason naming the function and the step,
 * nothing left behind. */
void test_open_errors(void **state)
{
	static const struct {
		unsigned long req;	/* ioctl that fails, with EPERM */
		const char *call;	/* or call that fails, with EACCES */
		int knob, rc;		/* or a device that says no */
		const char *why;
	} t[] = {
		{ VFIO_GET_API_VERSION, 0, 0, EPERM, "VFIO_GET_API_VERSION: " },
		{ VFIO_GROUP_GET_STATUS, 0, 0, EPERM, "VFIO_GROUP_GET_STATUS: "
		  "Operation not permitted" },
		{ VFIO_GROUP_SET_CONTAINER, 0, 0, EPERM, "VFIO_GROUP_SET_CONTAINER" },
		{ VFIO_SET_IOMMU, 0, 0, EPERM, "VFIO_SET_IOMMU" },
		{ VFIO_IOMMU_GET_INFO, 0, 0, EPERM, "VFIO_IOMMU_GET_INFO" },
		{ VFIO_GROUP_GET_DEVICE_FD, 0, 0, EPERM, "VFIO_GROUP_GET_DEVICE_FD" },
		{ VFIO_DEVICE_GET_REGION_INFO, 0, 0, EPERM, "BAR 2: "
		  "VFIO_DEVICE_GET_REGION_INFO" },
		{ VFIO_DEVICE_GET_IRQ_INFO, 0, 0, ENODEV, "VFIO_DEVICE_GET_IRQ_INFO:"
		  " the function has neither MSI-X nor MSI" },
		{ VFIO_DEVICE_SET_IRQS, 0, 0, EPERM, "VFIO_DEVICE_SET_IRQS (MSI-X)" },
		{ 0, "container", 0, EACCES, "/dev/vfio/vfio: Permission denied "
		  "(root, or access to /dev/vfio, is needed)" },
		{ 0, "group", 0, EACCES, "/dev/vfio/7: Permission denied" },
		{ 0, "mmap_bar", 0, EACCES, "mmap of BAR 2" },
		{ 0, "pread", 0, EACCES, "enabling bus mastering (PCI_COMMAND)" },
		{ 0, "pwrite", 0, EACCES, "enabling bus mastering" },
		{ 0, "eventfd", 0, EACCES, "eventfd: " },
		{ 0, 0, 1, EPROTO, "speaks VFIO API 1, not 0" },
		{ 0, 0, 2, EOPNOTSUPP, "VFIO_CHECK_EXTENSION: the kernel offers "
		  "no type1 IOMMU" },
		{ 0, 0, 3, EBUSY, "group 7 is not viable: bind every device of "
		  "the group to vfio-pci" },
		{ 0, 0, 4, ENODEV, "neither MSI-X nor MSI" },
		{ 0, 0, 5, EINVAL, "BAR 2: the 0x40000-byte ERNIC window at "
		  "offset 0x80000 does not fit the 0x40000-byte BAR" },
		{ 0, 0, 6, EINVAL, "BAR 2: the ERNIC window at offset 0x40000 is "
		  "not inside one mmap-able area" },
		{ 0, 0, 7, ENOENT, "iommu_group: No such file" },
		{ 0, 0, 8, ENOSPC, "no IOVA range below 0x100000000" },
		{ 0, 0, 9, EINVAL, "BAR 3: the BAR does not exist" },
	};
	struct ernic_access *acc;
	struct ernic_conf c;
	char err[512];

	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		reset_fake(state);
		conf_vfio(&c);
		F.fail_req = t[k].req;
		F.fail_call = t[k].call;
		F.api = t[k].knob == 1;
		F.no_type1 = F.no_type1v2 = t[k].knob == 2;
		F.not_viable = t[k].knob == 3;
		F.no_msix = F.no_msi = t[k].knob == 4;
		F.bar_size = t[k].knob == 5 ? 0x40000 : MIB;
		F.sparse = t[k].knob == 6;
		F.high_ranges = t[k].knob == 8;
		if (t[k].knob == 6)
			c.vfio_offset = 0x40000;
		if (t[k].knob == 7)
			strcpy(c.vfio, "0000:03:00.0");	/* not in sysfs */
		if (t[k].knob == 8)
			c.c_m_axi_addr_width = 32;
		if (t[k].knob == 9)
			c.vfio_bar = 3;
		acc = NULL;
		err[0] = '\0';
		assert_int_equal(ernic_access_vfio_open_sys(&c, &fake_sys, &acc,
							    err, sizeof(err)),
				 t[k].rc);
		assert_null(acc);
		if (!strstr(err, t[k].why) || strncmp(err, "vfio 0000:0", 11) ||
		    strchr(err, '\n'))
			fail_msg("case %zu: reason '%s', want '%s'", k, err,
				 t[k].why);
		assert_clean();
	}

	/* What still opens: a sparse BAR with the window in an area, no
	 * capability chain (a 48-bit space is assumed). */
	reset_fake(state);
	F.sparse = F.no_caps = true;
	conf_vfio(&c);
	acc = open_ok(&c);
	acc->ops->close(acc);
	assert_clean();

	/* A conf that never went through the checks. */
	reset_fake(state);
	conf_vfio(&c);
	strcpy(c.vfio, "01:00");
	assert_int_equal(ernic_access_vfio_open_sys(&c, &fake_sys, &acc, err,
						    sizeof(err)), EINVAL);
	assert_string_equal(err, "vfio: '01:00' is not a PCI address "
			    "DDDD:BB:DD.F");
	assert_int_equal(F.nlog, 0);
}


void fake_open_device2(void)
{
	assert_true(F.open & bit_of(FD_DEVICE));
	F.open |= bit_of(FD_DEVICE2);
}

bool fake_device2_open(void)
{
	return F.open & bit_of(FD_DEVICE2);
}

int fake_nmaps(void)
{
	return F.nmaps;
}

volatile uint32_t *fake_regs(void)
{
	return F.win ? (volatile uint32_t *)((char *)F.win + F.win_len -
					     ERNIC_REG_SPACE_SIZE) :
		       NULL;
}

/* The driver's request (VFIO_PCI_REQ_IRQ_INDEX), for test_vfio.c: offer
 * it, make setting it fail; the eventfds the backend made. */
void fake_req(bool offer, bool fail)
{
	F.req = offer;
	F.req_fail = fail;
}

bool fake_req_set(void)
{
	return F.req_set;
}

int fake_irq_fd(void)
{
	return F.irq_fd;
}

int fake_req_fd(void)
{
	return F.req_fd;
}
