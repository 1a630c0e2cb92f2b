// SPDX-License-Identifier: MIT
/*
 * Registered buffers moved into a DMA region without an IOMMU
 * (access/uio_dma.c), on a memory file standing in for the region. Two
 * buffers that malloc put side by side share a page: the second grows
 * the first one's move, so both keep one bus range each, also when
 * every other page of the region was taken in between (another process
 * sharing the device through its broker). The bytes stay where the
 * application and the IP see them, and everything goes back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "access_uio.h"
#include "ernic_access.h"
#include "uio_dma.h"

#define REGION (256u * 1024)
#define BUS 0x40000000u

static void test_side_by_side(void **state)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct ernic_dma fill[64], view;
	struct uio_dma *d = NULL;
	char err[160] = "";
	uint64_t bus_a, bus_b;
	uint8_t *buf;
	int fd, nfill = 0;

	(void)state;
	fd = memfd_create("test-region", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, REGION), 0);
	assert_int_equal(uio_dma_create(fd, 0, true, "test",
					&(struct uio_map){ .addr = BUS,
							   .size = REGION },
					&d, err, sizeof(err)),
			 0);
	buf = mmap(NULL, 8 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(buf != MAP_FAILED);
	memset(buf, 0xa1, 8 * page);

	/* A: a page and a bit, from 100 bytes in. */
	assert_int_equal(uio_dma_map_user(d, buf + 100, page, &bus_a), 0);
	/* Everything else in the region goes to somebody else. */
	while (nfill < 64 && !uio_dma_alloc(d, page, 0, &fill[nfill]))
		nfill++;
	assert_true(nfill > 0 && nfill < 64);
	/* B right behind A, into the next page: A's move grows. */
	buf[100 + page] = 0x5b;
	assert_int_equal(uio_dma_map_user(d, buf + 100 + page, page, &bus_b),
			 0);
	assert_true(bus_b == bus_a + page);
	/* One buffer, two views: the application's pointer and the bus. */
	assert_int_equal(uio_dma_view(d, bus_b, 1, &view), 0);
	assert_int_equal(*(uint8_t *)view.va, 0x5b);
	*(uint8_t *)view.va = 0x77;	/* the IP writes */
	assert_int_equal(buf[100 + page], 0x77);
	assert_int_equal(buf[99], 0xa1);	/* the bytes before moved too */

	/* A third one, far from both, no room left in the region. */
	assert_int_not_equal(uio_dma_map_user(d, buf + 6 * page, 10, &bus_b),
			     0);

	/* Back out: the bytes stay, the region's pages are free again. */
	uio_dma_unmap_user(d, bus_a);
	uio_dma_unmap_user(d, bus_a + page + 8);
	assert_int_equal(buf[100 + page], 0x77);
	for (int k = 0; k < nfill; k++)
		uio_dma_free(d, &fill[k]);
	assert_int_equal(uio_dma_alloc(d, REGION, 0, &view), 0);
	uio_dma_free(d, &view);
	munmap(buf, 8 * page);
	uio_dma_destroy(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_side_by_side),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
