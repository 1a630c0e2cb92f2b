// SPDX-License-Identifier: MIT
/*
 * PG332 ch.6 "Memory Registration": ibv_reg_mr fills one PD-table slot
 * (PDPDNUM, VIRTADDR, BUFBASEADDR, BUFRKEY, WRRDBUFLEN, ACCESSDESC);
 * ibv_dereg_mr clears it; refused access flags change nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "verbs_util.h"

#define KEY_SLOT(k) ((k) & 0xff)
#define KEY_GEN(k) (((k) >> 8) & 0xff)

static void check_slot(struct ibv_context *ctx, struct ibv_mr *mr,
		       uint32_t pdn, uint32_t type, bool remote)
{
	uint32_t s = KEY_SLOT(mr->rkey);
	uint64_t len = mr->length;

	assert_int_equal(tu_rd(ctx, ERNIC_PDT(s, ERNIC_PDPDNUM)), pdn);
	assert_int_equal(tu_rd64(ctx, ERNIC_PDT(s, ERNIC_VIRTADDRLSB),
				 ERNIC_PDT(s, ERNIC_VIRTADDRMSB)),
			 (uintptr_t)mr->addr);
	/* The IP sees the buffer at a bus address of its own. */
	assert_true(tu_rd64(ctx, ERNIC_PDT(s, ERNIC_BUFBASEADDRLSB),
			    ERNIC_PDT(s, ERNIC_BUFBASEADDRMSB)) >> 32);
	assert_int_equal(tu_rd(ctx, ERNIC_PDT(s, ERNIC_BUFRKEY)),
			 remote ? KEY_GEN(mr->rkey) : 0);
	assert_int_equal(tu_rd(ctx, ERNIC_PDT(s, ERNIC_WRRDBUFLEN)),
			 (uint32_t)len);
	assert_int_equal(tu_rd(ctx, ERNIC_PDT(s, ERNIC_ACCESSDESC)),
			 type | (uint32_t)(len >> 32) << 16);
	assert_int_equal(mr->lkey, mr->rkey);
	assert_true(KEY_GEN(mr->rkey) != 0);
}

static void check_clear(struct ibv_context *ctx, uint32_t s)
{
	for (uint32_t r = 0; r < 0x20; r += 4)
		assert_int_equal(tu_rd(ctx, ERNIC_PDT(s, r)), 0);
}

static void test_reg_access_types(void **state)
{
	struct ibv_context *ctx = tu_open(DEV4);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	char *buf = aligned_alloc(4096, 65536);
	const struct {
		int access;
		uint32_t type;
		bool remote;
	} cases[] = {
		{ IBV_ACCESS_LOCAL_WRITE, ERNIC_ACCESS_READ_ONLY, false },
		{ IBV_ACCESS_REMOTE_READ, ERNIC_ACCESS_READ_ONLY, true },
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		  ERNIC_ACCESS_WRITE_ONLY, true },
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ,
		  ERNIC_ACCESS_READ_WRITE, true },
	};

	assert_non_null(pd);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct ibv_mr *mr = ibv_reg_mr(pd, buf + 64 * c, 4096 + c,
					       cases[c].access);
		uint32_t s;

		assert_non_null(mr);
		check_slot(ctx, mr, pd->handle, cases[c].type, cases[c].remote);
		s = KEY_SLOT(mr->rkey);
		assert_int_equal(ibv_dereg_mr(mr), 0);
		check_clear(ctx, s);
	}
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	free(buf);
	ibv_close_device(ctx);
}

/* A length above 4 GiB uses ACCESSDESC[31:16] (WRRDBUFLEN MSBs). */
static void test_reg_over_4g(void **state)
{
	struct ibv_context *ctx = tu_open(DEV4);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	size_t len = (5ull << 30) + 4096;
	void *va = mmap(NULL, len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct ibv_mr *mr;

	assert_true(va != MAP_FAILED);
	mr = ibv_reg_mr(pd, va, len,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	assert_non_null(mr);
	check_slot(ctx, mr, pd->handle, ERNIC_ACCESS_WRITE_ONLY, true);
	assert_int_equal(tu_rd(ctx, ERNIC_PDT(KEY_SLOT(mr->rkey),
					      ERNIC_ACCESSDESC)) >> 16, 1);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	munmap(va, len);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
}

/* Unsupported or inconsistent flags: EINVAL and no slot touched. */
static void test_reg_refused(void **state)
{
	struct ibv_context *ctx = tu_open(DEV4);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	char *buf = aligned_alloc(4096, 8192);
	const int bad[] = {
		IBV_ACCESS_REMOTE_ATOMIC, /* without LOCAL_WRITE */
		IBV_ACCESS_REMOTE_WRITE, /* without LOCAL_WRITE */
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED,
	};
	/* The kernel takes these on a device without atomics or memory
	 * windows; nothing can use them there. */
	const int taken[] = {
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND,
	};
	uint32_t before[ERNIC_PDT_ENTRIES];

	for (uint32_t s = 0; s < ERNIC_PDT_ENTRIES; s++)
		before[s] = tu_rd(ctx, ERNIC_PDT(s, ERNIC_PDPDNUM));
	for (size_t c = 0; c < sizeof(bad) / sizeof(bad[0]); c++) {
		errno = 0;
		assert_null(ibv_reg_mr(pd, buf, 8192, bad[c]));
		assert_int_equal(errno, EINVAL);
	}
	for (size_t c = 0; c < sizeof(taken) / sizeof(taken[0]); c++) {
		struct ibv_mr *mr = ibv_reg_mr(pd, buf, 8192, taken[c]);

		assert_non_null(mr);
		assert_int_equal(ibv_dereg_mr(mr), 0);
	}
	errno = 0;
	assert_null(ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE));
	assert_int_equal(errno, EINVAL);
	/* the kernel's answer for on-demand paging without the feature */
	errno = 0;
	assert_null(ibv_reg_mr(pd, buf, 8192,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND));
	assert_int_equal(errno, EOPNOTSUPP);
	for (uint32_t s = 0; s < ERNIC_PDT_ENTRIES; s++)
		assert_int_equal(tu_rd(ctx, ERNIC_PDT(s, ERNIC_PDPDNUM)),
				 before[s]);
	ibv_dealloc_pd(pd);
	free(buf);
	ibv_close_device(ctx);
}

/*
 * Memory that is not there, or that the IP may write but the process
 * may not: EFAULT, as the kernel's pinning answers, and no slot touched.
 * (Accepted, a peer's RDMA WRITE into it killed the process in the
 * software ERNIC's engine thread.) Read-only memory the IP only reads is
 * fine.
 */
static void test_reg_memory(void **state)
{
	struct ibv_context *ctx = tu_open(DEV4);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	const size_t pg = 4096;
	uint8_t *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	const struct {
		size_t off, len;
		int access;
	} bad[] = {
		{ 0, 4 * pg, 0 },			/* a hole (page 1) */
		{ pg, pg, IBV_ACCESS_REMOTE_READ },	/* the hole itself */
		{ 2 * pg, pg, IBV_ACCESS_LOCAL_WRITE },	/* read-only */
		{ 2 * pg, pg, rw },
		{ 2 * pg, 2 * pg, rw },			/* read-only, then RW */
		{ 3 * pg, pg, 0 },			/* PROT_NONE */
	};
	uint32_t before[ERNIC_PDT_ENTRIES];
	struct ibv_mr *mr;

	assert_true(m != MAP_FAILED);
	assert_int_equal(munmap(m + pg, pg), 0);
	assert_int_equal(mprotect(m + 2 * pg, pg, PROT_READ), 0);
	assert_int_equal(mprotect(m + 3 * pg, pg, PROT_NONE), 0);
	for (uint32_t s = 0; s < ERNIC_PDT_ENTRIES; s++)
		before[s] = tu_rd(ctx, ERNIC_PDT(s, ERNIC_PDPDNUM));
	for (size_t c = 0; c < sizeof(bad) / sizeof(bad[0]); c++) {
		errno = 0;
		mr = ibv_reg_mr(pd, m + bad[c].off, bad[c].len, bad[c].access);
		if (mr)
			fail_msg("case %zu: registered", c);
		assert_int_equal(errno, EFAULT);
	}
	for (uint32_t s = 0; s < ERNIC_PDT_ENTRIES; s++)
		assert_int_equal(tu_rd(ctx, ERNIC_PDT(s, ERNIC_PDPDNUM)),
				 before[s]);
	/* read-only memory for the IP to read */
	mr = ibv_reg_mr(pd, m + 2 * pg, pg, IBV_ACCESS_REMOTE_READ);
	assert_non_null(mr);
	check_slot(ctx, mr, pd->handle, ERNIC_ACCESS_READ_ONLY, true);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	mr = ibv_reg_mr(pd, m, pg, rw);
	assert_non_null(mr);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	munmap(m, pg);
	munmap(m + 2 * pg, 2 * pg);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
}

/* 256 slots; the 257th MR fails; a freed slot comes back with a new key. */
static void test_table_full_and_key_reuse(void **state)
{
	struct ibv_context *ctx = tu_open(DEV4);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	char *buf = aligned_alloc(4096, 4096);
	struct ibv_mr *mr[ERNIC_PDT_ENTRIES];
	uint32_t old;

	for (int i = 0; i < (int)ERNIC_PDT_ENTRIES; i++) {
		mr[i] = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
						   IBV_ACCESS_REMOTE_WRITE);
		assert_non_null(mr[i]);
	}
	errno = 0;
	assert_null(ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE));
	assert_int_equal(errno, ENOMEM);
	/* PD in use: dealloc refused. */
	assert_int_equal(ibv_dealloc_pd(pd), EBUSY);

	old = mr[7]->rkey;
	assert_int_equal(ibv_dereg_mr(mr[7]), 0);
	mr[7] = ibv_reg_mr(pd, buf, 4096,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	assert_non_null(mr[7]);
	assert_int_equal(KEY_SLOT(mr[7]->rkey), KEY_SLOT(old));
	assert_true(mr[7]->rkey != old);
	assert_int_equal(tu_rd(ctx, ERNIC_PDT(KEY_SLOT(old), ERNIC_BUFRKEY)),
			 KEY_GEN(mr[7]->rkey));
	for (int i = 0; i < (int)ERNIC_PDT_ENTRIES; i++)
		assert_int_equal(ibv_dereg_mr(mr[i]), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	free(buf);
	ibv_close_device(ctx);
}

/* Distinct PDs get distinct numbers, and the slot records the MR's. */
static void test_pd_numbers(void **state)
{
	struct ibv_context *ctx = tu_open(DEV4);
	struct ibv_pd *a = ibv_alloc_pd(ctx), *b = ibv_alloc_pd(ctx);
	char *buf = aligned_alloc(4096, 4096);
	struct ibv_mr *mr;

	assert_true(a->handle != b->handle);
	assert_true(a->handle != 0 && b->handle != 0);
	mr = ibv_reg_mr(b, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(tu_rd(ctx, ERNIC_PDT(KEY_SLOT(mr->lkey),
					      ERNIC_PDPDNUM)),
			 b->handle);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(a);
	ibv_dealloc_pd(b);
	free(buf);
	ibv_close_device(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reg_access_types),
		cmocka_unit_test(test_reg_over_4g),
		cmocka_unit_test(test_reg_refused),
		cmocka_unit_test(test_reg_memory),
		cmocka_unit_test(test_table_full_and_key_reuse),
		cmocka_unit_test(test_pd_numbers),
	};

	tu_require_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
