// SPDX-License-Identifier: MIT
/*
 * The VFIO backend without a kernel: its pure parts directly, and the
 * whole open / DMA / interrupt / close flow against a fake of the VFIO
 * ioctls that checks every argument, records the order of the steps,
 * can fail any of them, and counts what is left open or mapped.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "access_vfio.h"
#include "ernic_access.h"
#include "ernic_conf.h"
#include "ernic_hw.h"
#include "vfio_util.h"

/* ---- pure parts ---- */

static void test_bdf(void **state)
{
	char b[ERNIC_BDF_LEN + 1];

	assert_int_equal(ernic_bdf_parse("0000:01:00.0", b), 0);
	assert_string_equal(b, "0000:01:00.0");
	assert_int_equal(ernic_bdf_parse("00AB:C1:1f.7", b), 0);
	assert_string_equal(b, "00ab:c1:1f.7");
	assert_int_equal(ernic_bdf_parse("3b:00.1", b), 0);
	assert_string_equal(b, "0000:3b:00.1");
	assert_int_equal(ernic_bdf_parse("0000:01:20.0", b), EINVAL);	/* dev */
	assert_int_equal(ernic_bdf_parse("0000:01:00.8", b), EINVAL);	/* fn */
	assert_int_equal(ernic_bdf_parse("0000:01:00:0", b), EINVAL);
	assert_int_equal(ernic_bdf_parse("000g:01:00.0", b), EINVAL);
	assert_int_equal(ernic_bdf_parse("0000:01:00.0 ", b), EINVAL);
	assert_int_equal(ernic_bdf_parse("", b), EINVAL);
	assert_int_equal(ernic_bdf_parse(NULL, b), EINVAL);
}

static char root[64];

static void mk(const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static int fake_tree(void **state)
{
	char p[256];

	snprintf(root, sizeof(root), "/tmp/ernic-vfio-test.XXXXXX");
	assert_non_null(mkdtemp(root));
	mk("sys");
	mk("sys/bus");
	mk("sys/bus/pci");
	mk("sys/bus/pci/devices");
	mk("sys/bus/pci/devices/0000:01:00.0");
	mk("sys/bus/pci/devices/0000:02:00.0");
	snprintf(p, sizeof(p), "%s/sys/bus/pci/devices/0000:01:00.0/iommu_group",
		 root);
	assert_int_equal(symlink("../../../../kernel/iommu_groups/7", p), 0);
	snprintf(p, sizeof(p), "%s/sys/bus/pci/devices/0000:02:00.0/iommu_group",
		 root);
	assert_int_equal(symlink("../../../../kernel/iommu_groups/x7", p), 0);
	return 0;
}

static int rm_tree(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static void test_group(void **state)
{
	unsigned int g = 0;
	char err[256];

	assert_int_equal(vfio_group_of(root, "0000:01:00.0", &g, err,
				       sizeof(err)), 0);
	assert_int_equal(g, 7);
	assert_int_equal(vfio_group_of(root, "0000:02:00.0", &g, err,
				       sizeof(err)), EINVAL);
	assert_non_null(strstr(err, "does not name a group"));
	assert_int_equal(vfio_group_of(root, "0000:03:00.0", &g, err,
				       sizeof(err)), ENOENT);
	assert_non_null(strstr(err, "IOMMU"));
}

static void test_window(void **state)
{
	char err[160];

	assert_int_equal(vfio_window_check(1 << 20, 1, 0, 0x40000, err, 160), 0);
	assert_int_equal(vfio_window_check(1 << 20, 1, 0xC0000, 0x40000, err,
					   160), 0);
	assert_int_equal(vfio_window_check(1 << 20, 1, 0xC1000, 0x40000, err,
					   160), EINVAL);
	assert_non_null(strstr(err, "does not fit"));
	assert_int_equal(vfio_window_check(1 << 20, 1, 0x800, 0x40000, err,
					   160), EINVAL);
	assert_non_null(strstr(err, "aligned"));
	assert_int_equal(vfio_window_check(1 << 20, 0, 0, 0x40000, err, 160),
			 EINVAL);
	assert_int_equal(vfio_window_check(0, 1, 0, 0x40000, err, 160), EINVAL);
	assert_int_equal(vfio_window_check(0x20000, 1, 0, 0x40000, err, 160),
			 EINVAL);
}

static void test_span(void **state)
{
	uintptr_t s;
	size_t n;

	vfio_page_span(0x10000, 4096, 4096, &s, &n);
	assert_int_equal(s, 0x10000);
	assert_int_equal(n, 4096);
	vfio_page_span(0x10010, 4096, 4096, &s, &n);
	assert_int_equal(s, 0x10000);
	assert_int_equal(n, 8192);
	vfio_page_span(0x10fff, 1, 4096, &s, &n);
	assert_int_equal(n, 4096);
	vfio_page_span(0x10fff, 2, 4096, &s, &n);
	assert_int_equal(n, 8192);
}

static void test_iova(void **state)
{
	const struct iova_span r[] = { { 0, 0x100000 }, { 0x200000, 0x400000 },
				       { 0x500000, UINT64_MAX } };
	struct vfio_iova a;
	uint64_t x, y, z;

	/* Capped at the IP's reach; page 0 never handed out. */
	assert_int_equal(vfio_iova_init(&a, r, 3, 0x480000), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.free[0].start, 4096);
	assert_int_equal(a.free[1].end, 0x400000);
	assert_int_equal(vfio_iova_alloc(&a, 4096, 4096, &x), 0);
	assert_int_equal(x, 4096);
	/* Alignment skips to the next range that holds it. */
	assert_int_equal(vfio_iova_alloc(&a, 0x10000, 0x100000, &y), 0);
	assert_int_equal(y, 0x200000);
	assert_int_equal(vfio_iova_alloc(&a, 0x1000, 0x10000, &z), 0);
	assert_int_equal(z, 0x10000);
	/* Too big for any free range. */
	assert_int_equal(vfio_iova_alloc(&a, 0x300000, 4096, &z), ENOMEM);
	assert_int_equal(vfio_iova_alloc(&a, 4096, 3000, &z), EINVAL);
	/* Freed ranges merge back: the first range is whole again. */
	vfio_iova_free(&a, 0x10000, 0x1000);
	vfio_iova_free(&a, 4096, 4096);
	vfio_iova_free(&a, 0x200000, 0x10000);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.free[0].start, 4096);
	assert_int_equal(a.free[0].end, 0x100000);
	assert_int_equal(a.free[1].start, 0x200000);
	assert_int_equal(vfio_iova_alloc(&a, 0x200000, 4096, &z), 0);
	assert_int_equal(z, 0x200000);
	vfio_iova_fini(&a);
	/* Nothing under the limit. */
	assert_int_equal(vfio_iova_init(&a, &r[2], 1, 0x480000), ENOSPC);
	vfio_iova_fini(&a);
}

/* ---- the fake kernel ---- */

enum { FD_CONTAINER = 100, FD_GROUP, FD_DEVICE };
#define BAR_OFFSET(i) ((uint64_t)(i) << 40)	/* as vfio-pci lays them out */

static struct fake {
	unsigned long fail_req;		/* this ioctl fails */
	int fail_errno;
	bool not_viable, no_msix, no_caps;
	uint64_t bar_size;
	/* what happened */
	char log[64][32];
	int nlog;
	int open_fds;
	uint32_t iommu_type;
	uint64_t win_off;
	void *win;
	int irq_fd, irq_index;
	bool irq_off;
	struct { uint64_t iova, size, vaddr; } maps[64];
	int nmaps, nmapped_total;
} F;

static void logs(const char *s)
{
	if (F.nlog < 64)
		snprintf(F.log[F.nlog++], sizeof(F.log[0]), "%s", s);
}

static int f_open(const char *path, int flags)
{
	char want[128];

	(void)flags;
	snprintf(want, sizeof(want), "%s/dev/vfio/vfio", root);
	if (!strcmp(path, want)) {
		F.open_fds++;
		return FD_CONTAINER;
	}
	snprintf(want, sizeof(want), "%s/dev/vfio/7", root);
	if (!strcmp(path, want)) {
		F.open_fds++;
		return FD_GROUP;
	}
	errno = ENOENT;
	return -1;
}

static int f_close(int fd)
{
	if (fd == F.irq_fd)
		close(fd);
	F.open_fds--;
	return 0;
}

static int fail_step(unsigned long req)
{
	if (F.fail_req != req)
		return 0;
	errno = F.fail_errno;
	return 1;
}

static int info_ioctl(void *arg)
{
	struct vfio_iommu_type1_info *i = arg;
	const uint32_t need = sizeof(*i) + sizeof(struct vfio_iommu_type1_info_cap_iova_range) +
			      2 * sizeof(struct vfio_iova_range);

	assert_true(i->argsz >= sizeof(*i));
	i->iova_pgsizes = 4096 | (1u << 21);
	i->flags = VFIO_IOMMU_INFO_PGSIZES;
	if (F.no_caps)
		return 0;
	i->flags |= VFIO_IOMMU_INFO_CAPS;
	if (i->argsz < need) {
		i->argsz = need;
		return 0;
	}
	i->cap_offset = sizeof(*i);
	{
		struct vfio_iommu_type1_info_cap_iova_range *c =
			(void *)((char *)i + i->cap_offset);

		c->header.id = VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE;
		c->header.next = 0;
		c->nr_iovas = 2;
		/* The MSI window of x86 is reserved. */
		c->iova_ranges[0].start = 0;
		c->iova_ranges[0].end = 0xfedfffff;
		c->iova_ranges[1].start = 0xfef00000;
		c->iova_ranges[1].end = (UINT64_C(1) << 48) - 1;
	}
	return 0;
}

static int f_ioctl(int fd, unsigned long req, void *arg)
{
	if (fail_step(req))
		return -1;
	switch (req) {
	case VFIO_GET_API_VERSION:
		assert_int_equal(fd, FD_CONTAINER);
		logs("api");
		return VFIO_API_VERSION;
	case VFIO_CHECK_EXTENSION:
		assert_int_equal(fd, FD_CONTAINER);
		return (uintptr_t)arg == VFIO_TYPE1v2_IOMMU;
	case VFIO_GROUP_GET_STATUS:
		assert_int_equal(fd, FD_GROUP);
		logs("status");
		((struct vfio_group_status *)arg)->flags =
			F.not_viable ? 0 : VFIO_GROUP_FLAGS_VIABLE;
		return 0;
	case VFIO_GROUP_SET_CONTAINER:
		assert_int_equal(fd, FD_GROUP);
		assert_int_equal(*(int *)arg, FD_CONTAINER);
		logs("set_container");
		return 0;
	case VFIO_SET_IOMMU:
		assert_int_equal(fd, FD_CONTAINER);
		F.iommu_type = (uint32_t)(uintptr_t)arg;
		logs("set_iommu");
		return 0;
	case VFIO_IOMMU_GET_INFO:
		logs("iommu_info");
		return info_ioctl(arg);
	case VFIO_GROUP_GET_DEVICE_FD:
		assert_int_equal(fd, FD_GROUP);
		assert_string_equal((const char *)arg, "0000:01:00.0");
		logs("device_fd");
		F.open_fds++;
		return FD_DEVICE;
	case VFIO_DEVICE_GET_REGION_INFO: {
		struct vfio_region_info *r = arg;

		assert_int_equal(fd, FD_DEVICE);
		logs("region_info");
		r->size = r->index == 2 ? F.bar_size : 0;
		r->flags = VFIO_REGION_INFO_FLAG_READ |
			   VFIO_REGION_INFO_FLAG_WRITE |
			   VFIO_REGION_INFO_FLAG_MMAP;
		r->offset = BAR_OFFSET(r->index);
		return 0;
	}
	case VFIO_DEVICE_GET_IRQ_INFO: {
		struct vfio_irq_info *ii = arg;

		ii->count = ii->index == VFIO_PCI_MSIX_IRQ_INDEX ?
				    (F.no_msix ? 0 : 8) :
			    ii->index == VFIO_PCI_MSI_IRQ_INDEX ? 1 : 0;
		return 0;
	}
	case VFIO_DEVICE_SET_IRQS: {
		struct vfio_irq_set *s = arg;

		if (s->flags & VFIO_IRQ_SET_DATA_EVENTFD) {
			assert_int_equal(s->argsz, sizeof(*s) + 4);
			assert_int_equal(s->start, 0);
			assert_int_equal(s->count, 1);
			assert_int_equal(s->flags & VFIO_IRQ_SET_ACTION_TRIGGER,
					 VFIO_IRQ_SET_ACTION_TRIGGER);
			F.irq_index = (int)s->index;
			assert_int_equal(*(int32_t *)s->data, F.irq_fd);
			logs("irq_on");
		} else {
			assert_int_equal(s->count, 0);
			assert_int_equal((int)s->index, F.irq_index);
			F.irq_off = true;
			logs("irq_off");
		}
		return 0;
	}
	case VFIO_IOMMU_MAP_DMA: {
		struct vfio_iommu_type1_dma_map *m = arg;

		assert_int_equal(fd, FD_CONTAINER);
		assert_int_equal(m->size % 4096, 0);
		assert_int_equal(m->iova % 4096, 0);
		assert_int_equal(m->vaddr % 4096, 0);
		assert_true(m->iova >= 4096);
		/* Never in the reserved window, never overlapping. */
		assert_false(m->iova < 0xfef00000 && m->iova + m->size > 0xfee00000);
		for (int k = 0; k < F.nmaps; k++)
			assert_true(m->iova + m->size <= F.maps[k].iova ||
				    m->iova >= F.maps[k].iova + F.maps[k].size);
		F.maps[F.nmaps].iova = m->iova;
		F.maps[F.nmaps].size = m->size;
		F.maps[F.nmaps++].vaddr = m->vaddr;
		F.nmapped_total++;
		return 0;
	}
	case VFIO_IOMMU_UNMAP_DMA: {
		struct vfio_iommu_type1_dma_unmap *u = arg;

		for (int k = 0; k < F.nmaps; k++)
			if (F.maps[k].iova == u->iova && F.maps[k].size == u->size) {
				F.maps[k] = F.maps[--F.nmaps];
				return 0;
			}
		fail_msg("unmap of %#llx+%#llx, which is not mapped",
			 (unsigned long long)u->iova, (unsigned long long)u->size);
		return -1;
	}
	}
	fail_msg("unexpected ioctl %#lx", req);
	return -1;
}

static void *f_mmap(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off)
{
	if (fd == FD_DEVICE) {
		assert_int_equal(len, ERNIC_REG_SPACE_SIZE);
		F.win_off = (uint64_t)off;
		F.win = calloc(1, len);
		logs("mmap_bar");
		return F.win;
	}
	return mmap(addr, len, prot, flags, fd, off);
}

static int f_munmap(void *addr, size_t len)
{
	if (addr == F.win) {
		free(F.win);
		F.win = NULL;
		return 0;
	}
	return munmap(addr, len);
}

static int f_eventfd(unsigned int v, int flags)
{
	F.irq_fd = eventfd(v, flags);
	F.open_fds++;
	return F.irq_fd;
}

static const struct vfio_sys fake_sys = {
	.open = f_open, .close = f_close, .ioctl = f_ioctl, .mmap = f_mmap,
	.munmap = f_munmap, .eventfd = f_eventfd,
};

static void conf_vfio(struct ernic_conf *c)
{
	ernic_conf_defaults(c);
	c->backend = ERNIC_BACKEND_VFIO;
	strcpy(c->vfio, "0000:01:00.0");
	strcpy(c->vfio_root, root);
	c->vfio_bar = 2;
	c->vfio_offset = 0x80000;
	c->c_m_axi_addr_width = 64;
}

static int reset_fake(void **state)
{
	memset(&F, 0, sizeof(F));
	F.bar_size = 1 << 20;
	F.irq_fd = -1;
	return 0;
}

static bool logged_in_order(const char *const *want, int n)
{
	int at = 0;

	for (int k = 0; k < F.nlog && at < n; k++)
		if (!strcmp(F.log[k], want[at]))
			at++;
	return at == n;
}

static void test_open_flow(void **state)
{
	static const char *const order[] = {
		"api", "status", "set_container", "set_iommu", "iommu_info",
		"device_fd", "region_info", "mmap_bar", "irq_on",
	};
	struct ernic_access *acc = NULL;
	struct ernic_conf c;
	struct ernic_dma d;
	char err[256], *buf;
	uint64_t bus;
	uint64_t one = 1;
	int fd;

	conf_vfio(&c);
	assert_int_equal(ernic_access_vfio_open_sys(&c, &fake_sys, &acc, err,
						    sizeof(err)), 0);
	assert_true(logged_in_order(order, 9));
	assert_int_equal(F.iommu_type, VFIO_TYPE1v2_IOMMU);
	assert_int_equal(F.irq_index, VFIO_PCI_MSIX_IRQ_INDEX);
	/* The window: BAR 2's region at the configured offset. */
	assert_int_equal(F.win_off, BAR_OFFSET(2) + 0x80000);
	ernic_wr(acc, ERNIC_XRNICCONF, 0x12345678);
	assert_int_equal(((uint32_t *)F.win)[ERNIC_XRNICCONF / 4], 0x12345678);
	((uint32_t *)F.win)[ERNIC_INTSTS / 4] = 0x80;
	assert_int_equal(ernic_rd(acc, ERNIC_INTSTS), 0x80);
	assert_null(acc->ops->dma_sync);	/* coherent by default */

	/* DMA memory: zeroed, aligned, mapped at an aligned IOVA. */
	assert_int_equal(acc->ops->dma_alloc(acc, 100, 1 << 16, &d), 0);
	assert_int_equal(d.bus % (1 << 16), 0);
	assert_int_equal(F.nmaps, 1);
	assert_int_equal(F.maps[0].vaddr, (uintptr_t)d.va);
	assert_int_equal(((uint8_t *)d.va)[99], 0);

	/* A user buffer that starts mid-page: its pages, one IOVA range. */
	buf = aligned_alloc(4096, 3 * 4096);
	assert_int_equal(acc->ops->map_user(acc, buf + 100, 5000, &bus), 0);
	assert_int_equal(F.nmaps, 2);
	assert_int_equal(F.maps[1].vaddr, (uintptr_t)buf);
	assert_int_equal(F.maps[1].size, 8192);
	assert_int_equal(bus, F.maps[1].iova + 100);
	acc->ops->unmap_user(acc, bus, 5000);
	assert_int_equal(F.nmaps, 1);

	/* The interrupt: MSI-X fires the eventfd; enable consumes it. */
	fd = acc->ops->irq_fd(acc);
	assert_int_equal(acc->ops->wait_irq(acc, 0), 0);
	assert_int_equal(write(F.irq_fd, &one, sizeof(one)), 8);
	assert_int_equal(acc->ops->wait_irq(acc, 100), 1);
	assert_int_equal(poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1,
			      0), 0);

	acc->ops->dma_free(acc, &d);
	assert_int_equal(F.nmaps, 0);
	assert_int_equal(acc->ops->map_user(acc, buf, 4096, &bus), 0);
	acc->ops->close(acc);
	/* Everything undone, mappings left by the user included. */
	assert_true(F.irq_off);
	assert_int_equal(F.nmaps, 0);
	assert_int_equal(F.open_fds, 0);
	assert_null(F.win);
	free(buf);
}

/* The IP's address width caps the IOVAs; coherent=0 brings dma_sync. */
static void test_narrow_noncoherent(void **state)
{
	struct ernic_access *acc = NULL;
	struct ernic_conf c;
	struct ernic_dma d[3];
	char err[256];

	conf_vfio(&c);
	c.c_m_axi_addr_width = 32;
	c.coherent = 0;
	F.no_msix = true;
	assert_int_equal(ernic_access_vfio_open_sys(&c, &fake_sys, &acc, err,
						    sizeof(err)), 0);
	assert_non_null(acc->ops->dma_sync);
	assert_int_equal(F.irq_index, VFIO_PCI_MSI_IRQ_INDEX);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(acc->ops->dma_alloc(acc, 1 << 20, 4096, &d[k]), 0);
		assert_true(d[k].bus + (1 << 20) <= UINT64_C(1) << 32);
	}
	acc->ops->close(acc);
	assert_int_equal(F.open_fds, 0);
	assert_int_equal(F.nmaps, 0);
}

/* Each step that fails: a reason naming it, nothing left behind. */
static void test_open_errors(void **state)
{
	static const struct {
		unsigned long req;
		const char *what;
	} steps[] = {
		{ VFIO_GROUP_GET_STATUS, "VFIO_GROUP_GET_STATUS" },
		{ VFIO_GROUP_SET_CONTAINER, "VFIO_GROUP_SET_CONTAINER" },
		{ VFIO_SET_IOMMU, "VFIO_SET_IOMMU" },
		{ VFIO_IOMMU_GET_INFO, "VFIO_IOMMU_GET_INFO" },
		{ VFIO_GROUP_GET_DEVICE_FD, "VFIO_GROUP_GET_DEVICE_FD" },
		{ VFIO_DEVICE_GET_REGION_INFO, "VFIO_DEVICE_GET_REGION_INFO" },
		{ VFIO_DEVICE_SET_IRQS, "VFIO_DEVICE_SET_IRQS" },
	};
	struct ernic_access *acc;
	struct ernic_conf c;
	char err[256];

	for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
		reset_fake(state);
		F.fail_req = steps[k].req;
		F.fail_errno = EPERM;
		conf_vfio(&c);
		acc = NULL;
		err[0] = '\0';
		assert_int_equal(ernic_access_vfio_open_sys(&c, &fake_sys, &acc,
							    err, sizeof(err)),
				 EPERM);
		assert_null(acc);
		if (!strstr(err, steps[k].what) || !strstr(err, "0000:01:00.0"))
			fail_msg("step %s: reason '%s'", steps[k].what, err);
		assert_int_equal(F.open_fds, 0);
		assert_null(F.win);
	}

	reset_fake(state);
	F.not_viable = true;
	conf_vfio(&c);
	assert_int_equal(ernic_access_vfio_open_sys(&c, &fake_sys, &acc, err,
						    sizeof(err)), EBUSY);
	assert_non_null(strstr(err, "group 7 is not viable"));
	assert_int_equal(F.open_fds, 0);

	reset_fake(state);
	F.bar_size = 0x40000;		/* the window at 0x80000 is past it */
	conf_vfio(&c);
	assert_int_equal(ernic_access_vfio_open_sys(&c, &fake_sys, &acc, err,
						    sizeof(err)), EINVAL);
	assert_non_null(strstr(err, "BAR 2"));
	assert_non_null(strstr(err, "does not fit"));
	assert_int_equal(F.open_fds, 0);

	reset_fake(state);
	conf_vfio(&c);
	strcpy(c.vfio, "0000:03:00.0");		/* no sysfs entry */
	assert_int_equal(ernic_access_vfio_open_sys(&c, &fake_sys, &acc, err,
						    sizeof(err)), ENOENT);
	assert_non_null(strstr(err, "iommu_group"));

	/* No capability chain: a 48-bit space is assumed. */
	reset_fake(state);
	F.no_caps = true;
	conf_vfio(&c);
	assert_int_equal(ernic_access_vfio_open_sys(&c, &fake_sys, &acc, err,
						    sizeof(err)), 0);
	acc->ops->close(acc);
	assert_int_equal(F.open_fds, 0);
}

/* The conf keys round-trip and are checked. */
static void test_conf(void **state)
{
	char path[128], err[256];
	struct ernic_conf c, back;
	FILE *f;

	conf_vfio(&c);
	strcpy(c.name, "v0");
	c.family = AF_INET;
	memcpy(c.addr, (uint8_t[]){ 10, 0, 0, 9 }, 4);
	strcpy(c.netdev, "lo");
	c.coherent = 0;
	snprintf(path, sizeof(path), "%s/ernic.conf", root);
	assert_int_equal(ernic_conf_save(path, &c, err, sizeof(err)), 0);
	assert_int_equal(ernic_conf_load(path, &back, err, sizeof(err)), 0);
	assert_int_equal(back.backend, ERNIC_BACKEND_VFIO);
	assert_string_equal(back.vfio, "0000:01:00.0");
	assert_int_equal(back.vfio_bar, 2);
	assert_int_equal(back.vfio_offset, 0x80000);
	assert_string_equal(back.vfio_root, root);
	assert_int_equal(back.coherent, 0);

	/* Each key checked: a BAR past 5, a BDF that is not one, vfio=
	 * without backend=vfio. */
	static const char *const bad[][2] = {
		{ "vfio_bar=2", "vfio_bar=6" },
		{ "vfio=0000:01:00.0", "vfio=01:00" },
		{ "vfio_offset=0x80000", "vfio_offset=0x80001" },
		{ "backend=vfio", "backend=sw" },
	};
	static const char *const why[] = {
		"vfio_bar must be a BAR 0..5", "vfio must be a PCI address",
		"vfio_offset must be a 4 KiB aligned", "vfio= needs backend=vfio",
	};
	char text[2048], *at;
	size_t n;

	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	for (size_t k = 0; k < 4; k++) {
		char edited[2100];

		at = strstr(text, bad[k][0]);
		assert_non_null(at);
		snprintf(edited, sizeof(edited), "%.*s%s%s", (int)(at - text),
			 text, bad[k][1], at + strlen(bad[k][0]));
		f = fopen(path, "w");
		fputs(edited, f);
		fclose(f);
		assert_int_equal(ernic_conf_load(path, &back, err, sizeof(err)),
				 EINVAL);
		if (!strstr(err, why[k]))
			fail_msg("%s: reason '%s'", bad[k][1], err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bdf),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_span),
		cmocka_unit_test(test_iova),
		cmocka_unit_test_setup(test_open_flow, reset_fake),
		cmocka_unit_test_setup(test_narrow_noncoherent, reset_fake),
		cmocka_unit_test_setup(test_open_errors, reset_fake),
		cmocka_unit_test(test_conf),
	};

	return cmocka_run_group_tests_name("vfio", tests, fake_tree, rm_tree);
}
