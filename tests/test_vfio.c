// SPDX-License-Identifier: MIT
/*
 * The VFIO backend without a kernel: its pure parts here, and the whole
 * open / DMA / interrupt / close flow against a fake of the VFIO ioctls
 * in test_vfio_flow.c, which checks every argument, records the order of
 * the steps, can fail any of them, and counts what is left open, mapped
 * or pinned.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
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

/* ---- pure parts ---- */

char fake_root[64];

/* A sysfs with three functions: group 7, and two broken links. */
static int fake_tree(void **state)
{
	char cmd[512];

	snprintf(fake_root, sizeof(fake_root), "/tmp/ernic-vfio-test.XXXXXX");
	assert_non_null(mkdtemp(fake_root));
	snprintf(cmd, sizeof(cmd), "set -e; cd '%s'; d=sys/bus/pci/devices; "
		 "g=../../../../kernel/iommu_groups; "
		 "mkdir -p $d/0000:01:00.0 $d/0000:02:00.0 $d/0000:04:00.0; "
		 "ln -s $g/7 $d/0000:01:00.0/iommu_group; "
		 "ln -s $g/x7 $d/0000:02:00.0/iommu_group; "
		 "ln -s $g/ $d/0000:04:00.0/iommu_group", fake_root);
	return system(cmd);
}

static int rm_tree(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fake_root);
	return system(cmd);
}

static void test_group(void **state)
{
	unsigned int g = 0;
	char err[512];

	assert_int_equal(vfio_group_of(fake_root, "0000:01:00.0", &g, err,
				       sizeof(err)), 0);
	assert_int_equal(g, 7);
	assert_int_equal(vfio_group_of(fake_root, "0000:02:00.0", &g, err,
				       sizeof(err)), EINVAL);
	assert_non_null(strstr(err, "vfio 0000:02:00.0: iommu_group link"));
	assert_non_null(strstr(err, "does not name a group"));
	assert_int_equal(vfio_group_of(fake_root, "0000:04:00.0", &g, err,
				       sizeof(err)), EINVAL);
	assert_int_equal(vfio_group_of(fake_root, "0000:03:00.0", &g, err,
				       sizeof(err)), ENOENT);
	assert_non_null(strstr(err, "vfio 0000:03:00.0: "));
	assert_non_null(strstr(err, "/sys/bus/pci/devices/0000:03:00.0/"
				    "iommu_group"));
	assert_non_null(strstr(err, "no IOMMU"));
	assert_int_equal(g, 7);		/* untouched by failures */
}

/* An info struct with a capability chain, built as the kernel does. */
static union {
	struct vfio_iommu_type1_info info;
	struct vfio_region_info region;
	uint8_t b[512];
} ib;

static void *cap_at(uint32_t off, uint16_t id, uint32_t next)
{
	struct vfio_info_cap_header *h = (void *)&ib.b[off];

	h->id = id;
	h->version = 1;
	h->next = next;
	return h;
}

static void test_caps(void **state)
{
	const struct vfio_iova_range r[] = {
		{ 0, 0xfedfffff }, { 0xfef00000, UINT64_MAX }, { 9, 8 },
	};
	const size_t isz = sizeof(ib.info), csz =
		sizeof(struct vfio_iommu_type1_info_cap_iova_range);
	struct vfio_iommu_type1_info_cap_iova_range *c;
	struct iova_span *s;
	size_t n;

	/* Another capability first, then the ranges. */
	memset(&ib, 0, sizeof(ib));
	ib.info.flags = VFIO_IOMMU_INFO_CAPS;
	ib.info.cap_offset = isz;
	cap_at(isz, VFIO_IOMMU_TYPE1_INFO_CAP_MIGRATION, isz + 32);
	c = cap_at(isz + 32, VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE, 0);
	c->nr_iovas = 3;
	memcpy(c->iova_ranges, r, sizeof(r));
	assert_ptr_equal(vfio_cap_find(&ib, sizeof(ib), isz,
				       VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE,
				       csz), &ib.b[isz + 32]);
	assert_int_equal(vfio_iova_ranges(&ib.info, sizeof(ib), &s, &n), 0);
	assert_non_null(s);
	/* Inclusive ends made exclusive; an end of 2^64-1 stays usable; an
	 * inverted range is dropped. */
	assert_int_equal(n, 2);
	assert_true(s[0].start == 0 && s[0].end == 0xfee00000);
	assert_true(s[1].start == 0xfef00000 && s[1].end == UINT64_MAX);
	free(s);

	/* The array runs past the buffer: not trusted. */
	assert_int_equal(vfio_iova_ranges(&ib.info, isz + 32 + csz + 16, &s,
					  &n), 0);
	assert_null(s);
	/* No CAPS flag: nothing said. */
	ib.info.flags = 0;
	assert_int_equal(vfio_iova_ranges(&ib.info, sizeof(ib), &s, &n), 0);
	assert_null(s);

	/* A chain that points back, or out of the buffer, ends the walk. */
	memset(&ib, 0, sizeof(ib));
	cap_at(64, 99, 32);
	cap_at(32, 98, 64);
	assert_null(vfio_cap_find(&ib, sizeof(ib), 32, 1, 8));
	cap_at(32, 98, 4096);
	assert_null(vfio_cap_find(&ib, sizeof(ib), 32, 1, 8));
	/* Found, but shorter than the caller needs. */
	cap_at(sizeof(ib) - 8, 5, 0);
	assert_null(vfio_cap_find(&ib, sizeof(ib), sizeof(ib) - 8, 5, 16));
	assert_non_null(vfio_cap_find(&ib, sizeof(ib), sizeof(ib) - 8, 5, 8));
	assert_null(vfio_cap_find(&ib, sizeof(ib), 0, 5, 8));
}

/* A BAR of size bytes; areas != NULL adds a sparse-mmap capability. */
static size_t bar_info(uint64_t size, uint32_t flags, uint32_t nareas,
		       const struct vfio_region_sparse_mmap_area *areas)
{
	struct vfio_region_info_cap_sparse_mmap *sp;
	size_t at = sizeof(ib.region);

	memset(&ib, 0, sizeof(ib));
	ib.region.size = size;
	ib.region.flags = flags;
	if (!areas)
		return at;
	ib.region.flags |= VFIO_REGION_INFO_FLAG_CAPS;
	ib.region.cap_offset = (uint32_t)at;
	sp = cap_at((uint32_t)at, VFIO_REGION_INFO_CAP_SPARSE_MMAP, 0);
	sp->nr_areas = nareas;
	memcpy(sp->areas, areas, nareas * sizeof(*areas));
	return at + sizeof(*sp) + nareas * sizeof(*areas);
}

static void test_window(void **state)
{
	const uint32_t mm = VFIO_REGION_INFO_FLAG_READ |
			    VFIO_REGION_INFO_FLAG_WRITE |
			    VFIO_REGION_INFO_FLAG_MMAP;
	/* MSI-X table at 0x60000..0x70000, left out of the mmap. */
	const struct vfio_region_sparse_mmap_area areas[] = {
		{ 0, 0x60000 }, { 0x70000, 0x90000 },
	};
	const struct {
		uint64_t size, offset;
		uint32_t flags;
		int sparse;	/* 1: areas[]; 2: the last area cut off */
		const char *why;	/* NULL: fits */
	} t[] = {
		{ MIB, 0, mm, 0, NULL },
		{ MIB, 0xC0000, mm, 0, NULL },
		{ MIB, 0xC1000, mm, 0, "the 0x40000-byte ERNIC window at offset "
		  "0xc1000 does not fit the 0x100000-byte BAR" },
		{ MIB, UINT64_MAX & ~4095, mm, 0, "does not fit" },
		{ MIB, 0x800, mm, 0, "offset 0x800 is not 4 KiB aligned" },
		{ 0x20000, 0, mm, 0, "does not fit" },
		{ MIB, 0, mm & ~VFIO_REGION_INFO_FLAG_MMAP, 0, "cannot be mapped" },
		{ 0, 0, mm, 0, "the BAR does not exist" },
		{ MIB, 0x80000, mm, 1, NULL },
		{ MIB, 0x20000, mm, 1, NULL },
		{ MIB, 0xC0000, mm, 1, NULL },
		{ MIB, 0x40000, mm, 1, "the ERNIC window at offset 0x40000 is "
		  "not inside one mmap-able area" },
		{ MIB, 0x80000, mm, 2, "not inside one mmap-able area" },
	};
	char err[160];
	size_t len;

	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		len = bar_info(t[k].size, t[k].flags, t[k].sparse ? 2 : 0,
			       t[k].sparse ? areas : NULL);
		if (t[k].sparse == 2)	/* not believed past the end */
			len -= sizeof(areas[0]);
		err[0] = '\0';
		assert_int_equal(vfio_window_check(&ib.region, len, t[k].offset,
						   ERNIC_REG_SPACE_SIZE, err,
						   sizeof(err)),
				 t[k].why ? EINVAL : 0);
		if (t[k].why && !strstr(err, t[k].why))
			fail_msg("case %zu: '%s', want '%s'", k, err, t[k].why);
	}
}

static void test_span(void **state)
{
	const struct {
		uintptr_t va;
		size_t len, page;
		uintptr_t start;
		size_t span;	/* 0: EINVAL */
	} t[] = {
		{ 0x10000, 4096, 4096, 0x10000, 4096 },
		{ 0x10010, 4096, 4096, 0x10000, 8192 },
		{ 0x10fff, 1, 4096, 0x10000, 4096 },
		{ 0x10fff, 2, 4096, 0x10000, 8192 },
		{ 0x10800, 0, 4096, 0x10000, 4096 },
		{ 0x12345, 0x20000, 0x10000, 0x10000, 0x30000 },
		{ UINTPTR_MAX - 10, 100, 4096, 0, 0 },
	};
	uintptr_t s;
	size_t n;

	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		assert_int_equal(vfio_page_span(t[k].va, t[k].len, t[k].page,
						&s, &n), t[k].span ? 0 : EINVAL);
		if (t[k].span && (s != t[k].start || n != t[k].span))
			fail_msg("case %zu: %#zx+%#zx", k, (size_t)s, n);
	}
}

static void test_iova(void **state)
{
	const struct iova_span r[] = { { 0, 0x100000 }, { 0x200000, 0x400000 },
				       { 0x500000, UINT64_MAX } };
	struct vfio_iova a;
	uint64_t x, y, z, w;

	/* Capped at the IP's reach; page 0 never handed out. */
	assert_int_equal(vfio_iova_init(&a, r, 3, 0x480000), 0);
	assert_int_equal(a.n, 2);
	assert_true(a.free[0].start == 4096 && a.free[1].end == 0x400000);
	assert_int_equal(vfio_iova_alloc(&a, 4096, 4096, &x), 0);
	assert_true(x == 4096);
	/* Alignment skips to the next span that holds it. */
	assert_int_equal(vfio_iova_alloc(&a, 0x10000, 0x100000, &y), 0);
	assert_true(y == 0x200000);
	/* Aligned inside a span: what is before and after stays free. */
	assert_int_equal(vfio_iova_alloc(&a, 0x1000, 0x10000, &z), 0);
	assert_true(z == 0x10000);
	assert_int_equal(a.n, 3);
	assert_true(a.free[0].start == 0x2000 && a.free[0].end == 0x10000);
	assert_true(a.free[1].start == 0x11000 && a.free[1].end == 0x100000);
	/* Too big for any span; bad alignment. */
	assert_int_equal(vfio_iova_alloc(&a, 0x300000, 4096, &w), ENOMEM);
	assert_int_equal(vfio_iova_alloc(&a, 4096, 3000, &w), EINVAL);
	assert_int_equal(vfio_iova_alloc(&a, 0, 4096, &w), EINVAL);
	/* Freed spans merge with both neighbours again. */
	vfio_iova_free(&a, 0x10000, 0x1000);
	assert_int_equal(a.n, 2);
	assert_true(a.free[0].start == 0x2000 && a.free[0].end == 0x100000);
	vfio_iova_free(&a, 4096, 4096);
	vfio_iova_free(&a, 0x200000, 0x10000);
	assert_int_equal(a.n, 2);
	assert_true(a.free[0].start == 4096 && a.free[0].end == 0x100000);
	assert_true(a.free[1].start == 0x200000 && a.free[1].end == 0x400000);
	/* Exhaustion: exact fits take whole spans, then nothing is left. */
	assert_int_equal(vfio_iova_alloc(&a, 0x200000, 4096, &z), 0);
	assert_true(z == 0x200000);
	assert_int_equal(vfio_iova_alloc(&a, 0x100000 - 4096, 4096, &w), 0);
	assert_true(w == 4096);
	assert_int_equal(a.n, 0);
	assert_int_equal(vfio_iova_alloc(&a, 4096, 4096, &x), ENOMEM);
	vfio_iova_free(&a, z, 0x200000);
	vfio_iova_free(&a, w, 0x100000 - 4096);
	assert_int_equal(a.n, 2);
	vfio_iova_fini(&a);
	/* Page 0 is never handed out, even when the IOMMU offers it. */
	assert_int_equal(vfio_iova_init(&a, &(struct iova_span){ 0x800, 0x3000 },
					1, UINT64_MAX), 0);
	assert_true(a.n == 1 && a.free[0].start == 4096);
	vfio_iova_fini(&a);
	/* Nothing under the limit. */
	assert_int_equal(vfio_iova_init(&a, &r[2], 1, 0x480000), ENOSPC);
	vfio_iova_fini(&a);
}

/* The ioctl arguments (the fake below checks them in use, too). */
static void test_args(void **state)
{
	_Alignas(struct vfio_irq_set) uint8_t b[VFIO_IRQ_ARG_LEN];
	const struct vfio_irq_set *s = (const void *)b;
	struct vfio_iommu_type1_dma_unmap u;
	struct vfio_iommu_type1_dma_map m;
	int32_t fd = 0;

	vfio_map_arg(&m, 0x7f0000001000, 0x200000, 0x3000);
	assert_true(m.argsz == sizeof(m) && m.flags == (VFIO_DMA_MAP_FLAG_READ |
		    VFIO_DMA_MAP_FLAG_WRITE) && m.vaddr == 0x7f0000001000 &&
		    m.iova == 0x200000 && m.size == 0x3000);
	vfio_unmap_arg(&u, 0x200000, 0x3000);
	assert_true(u.argsz == sizeof(u) && u.flags == 0 &&
		    u.iova == 0x200000 && u.size == 0x3000);
	memset(b, 0xee, sizeof(b));
	vfio_irq_arg(b, VFIO_PCI_MSIX_IRQ_INDEX, 42);
	memcpy(&fd, b + sizeof(*s), sizeof(fd));
	assert_true(s->argsz == sizeof(*s) + 4 && fd == 42 &&
		    s->flags == (VFIO_IRQ_SET_DATA_EVENTFD |
				 VFIO_IRQ_SET_ACTION_TRIGGER) &&
		    s->index == VFIO_PCI_MSIX_IRQ_INDEX && s->start == 0 &&
		    s->count == 1);
	vfio_irq_arg(b, VFIO_PCI_MSI_IRQ_INDEX, -1);
	assert_true(s->argsz == sizeof(*s) && s->count == 0 &&
		    s->flags == (VFIO_IRQ_SET_DATA_NONE |
				 VFIO_IRQ_SET_ACTION_TRIGGER) &&
		    s->index == VFIO_PCI_MSI_IRQ_INDEX);
}

/* The driver's request for the device back (an unbind, a hot unplug):
 * registered where offered, behind one irq_fd with the MSI eventfd; an
 * MSI still re-arms as before, the request makes the re-arm say ENODEV
 * from then on; the close takes it off. Registering it failing fails
 * the open, saying which. Not offered: test_open_flow. */
static void test_driver_request(void **state)
{
	const uint64_t one = 1;
	struct ernic_access *acc;
	struct ernic_conf c;
	char err[512] = "";
	int fd;

	fake_req(true, false);
	conf_vfio(&c);
	if (ernic_access_vfio_open_sys(&c, &fake_sys, &acc, err, sizeof(err)))
		fail_msg("open: %s", err);
	assert_true(fake_req_set());
	fd = acc->ops->irq_fd(acc);
	assert_true(fd >= 0 && fd != fake_irq_fd() && fd != fake_req_fd());
	assert_int_equal(acc->ops->wait_irq(acc, 0), 0);
	assert_int_equal(write(fake_irq_fd(), &one, sizeof(one)), 8);
	assert_int_equal(acc->ops->wait_irq(acc, 100), 1);
	assert_false(fd_readable(fd));
	assert_int_equal(write(fake_req_fd(), &one, sizeof(one)), 8);
	assert_true(fd_readable(fd));
	assert_int_equal(acc->ops->wait_irq(acc, 100), -ENODEV);
	assert_false(fd_readable(fd));
	assert_int_equal(acc->ops->irq_enable(acc), ENODEV);
	acc->ops->close(acc);
	assert_clean();

	reset_fake(state);
	fake_req(true, true);
	conf_vfio(&c);
	acc = NULL;
	assert_int_equal(ernic_access_vfio_open_sys(&c, &fake_sys, &acc, err,
						    sizeof(err)), EINVAL);
	assert_null(acc);
	assert_string_equal(err, "vfio 0000:01:00.0: VFIO_DEVICE_SET_IRQS (the "
			    "driver's request): Invalid argument");
	assert_clean();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_span),
		cmocka_unit_test(test_iova),
		cmocka_unit_test(test_args),
		cmocka_unit_test_setup(test_open_flow, reset_fake),
		cmocka_unit_test_setup(test_hugepages, reset_fake),
		cmocka_unit_test_setup(test_narrow, reset_fake),
		cmocka_unit_test_setup(test_open_errors, reset_fake),
		cmocka_unit_test_setup(test_driver_request, reset_fake),
		cmocka_unit_test_setup(test_share_region, reset_fake),
		cmocka_unit_test_setup(test_attach_errors, reset_fake),
	};

	return cmocka_run_group_tests_name("vfio", tests, fake_tree, rm_tree);
}
