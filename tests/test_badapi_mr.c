// SPDX-License-Identifier: MIT
/*
 * Bad-API cases of protection domains and memory registration. Expected
 * errnos are what the kernel returns for the same input: ib_umem_get
 * pins the pages (EFAULT for memory it cannot pin with the access asked
 * for), ib_check_mr_access checks the flags; where that is arguable the
 * case says why.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test_badapi.h"

#define LW IBV_ACCESS_LOCAL_WRITE
#define RW IBV_ACCESS_REMOTE_WRITE
#define RR IBV_ACCESS_REMOTE_READ
#define RA IBV_ACCESS_REMOTE_ATOMIC

static size_t page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* ---- Protection domains: busy while something uses them ---- */

static void dealloc_pd_busy_mr(struct ba_ctx *c)
{
	struct ibv_pd *pd;
	struct ibv_mr *mr, *mr2;

	ba_open(c, false);
	pd = ibv_alloc_pd(c->a.ctx);
	REQUIRE(pd);
	mr = ibv_reg_mr(pd, c->a.buf, page(), LW);
	REQUIRE(mr);
	CALL_INT(ibv_dealloc_pd(pd));
	if (!ba_refused())
		return;	/* freed: using it now would be our bug */
	/* Still a PD: it takes another MR, and goes once both are gone. */
	mr2 = ibv_reg_mr(pd, c->a.buf, page(), LW);
	if (CHECK(mr2, "afterwards: the PD takes no MR (errno %s)",
		  ba_errname(errno)))
		CHECK(ibv_dereg_mr(mr2) == 0, "afterwards: dereg_mr fails");
	CHECK(ibv_dereg_mr(mr) == 0, "afterwards: dereg_mr fails");
	CHECK(ibv_dealloc_pd(pd) == 0, "afterwards: dealloc_pd still fails");
}

static void dealloc_pd_busy_qp(struct ba_ctx *c)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a;
	struct ibv_qp *qp;
	struct ibv_pd *pd;
	int m;

	ba_open(c, false);
	pd = ibv_alloc_pd(c->a.ctx);
	REQUIRE(pd);
	ia.send_cq = ia.recv_cq = c->a.cq;
	qp = ibv_create_qp(pd, &ia);
	REQUIRE(qp);
	CALL_INT(ibv_dealloc_pd(pd));
	if (!ba_refused())
		return;
	ba_init_attr(&a, &m);
	CHECK(ibv_modify_qp(qp, &a, m) == 0,
	      "afterwards: the QP cannot go to INIT");
	CHECK(ibv_destroy_qp(qp) == 0, "afterwards: destroy_qp fails");
	CHECK(ibv_dealloc_pd(pd) == 0, "afterwards: dealloc_pd still fails");
}

/* The PD of a connected QP and its MR: refused, and both keep working. */
static void dealloc_pd_busy_pair(struct ba_ctx *c)
{
	ba_open(c, true);
	ba_pair(c, 8, 8);
	CALL_INT(ibv_dealloc_pd(c->a.pd));
	if (ba_refused())
		ba_check_exchange(c);
}

/* One PD more than max_pd (the fixture's counts): refused with ENOMEM,
 * as a kernel provider's object pool answers. (A provider with no real
 * limit would rather report a larger max_pd.) Freeing one makes room. */
static void alloc_pd_beyond_max_pd(struct ba_ctx *c)
{
	struct ibv_pd **pds, *pd;
	int n;

	ba_open(c, false);
	if (c->dev.max_pd > (1 << 20))
		ba_skip("max_pd too large to exhaust");
	n = c->dev.max_pd - 1;
	pds = calloc((size_t)n, sizeof(*pds));
	REQUIRE(pds);
	for (int k = 0; k < n; k++) {
		pds[k] = ibv_alloc_pd(c->a.ctx);
		REQUIRE(pds[k]);
	}
	pd = CALL_PTR(ibv_alloc_pd(c->a.ctx));
	if (pd)
		return;
	REQUIRE(ibv_dealloc_pd(pds[n / 2]) == 0);
	CHECK(ibv_alloc_pd(c->a.ctx), "afterwards: no PD after one was freed");
}

/* ---- Memory registration ---- */

enum {
	MR_NULL, MR_LEN0, MR_ACC_BIT12, MR_ACC_BIT30, MR_RW_NO_LW, MR_RA_NO_LW,
	MR_RA, MR_ODP, MR_WRAP, MR_IOVA_WRAP, MR_OVER_MAX, MR_UNMAPPED,
	MR_UNMAPPED_RD, MR_PART_UNMAPPED, MR_PROT_NONE, MR_RO_LW, MR_RO_RW,
	MR_ADDR_WRAP,
};

/* Three pages with the middle one unmapped: a hole nothing refills. */
static uint8_t *hole(void)
{
	uint8_t *m = mmap(NULL, 3 * page(), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	REQUIRE(m != MAP_FAILED);
	memset(m, 1, 3 * page());
	REQUIRE(munmap(m + page(), page()) == 0);
	return m + page();
}

static uint8_t *mapped(int prot)
{
	uint8_t *m = mmap(NULL, page(), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	REQUIRE(m != MAP_FAILED);
	memset(m, 0x5a, page());	/* populated, as a real buffer is */
	REQUIRE(mprotect(m, page(), prot) == 0);
	return m;
}

static void reg_mr_bad(struct ba_ctx *c)
{
	const size_t pg = page();
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	uint8_t *addr;
	size_t len = pg;
	uint64_t iova;
	int access = LW;

	ba_open(c, false);
	/* Its own PD: a refused MR must leave no reference behind. */
	pd = ibv_alloc_pd(c->a.ctx);
	REQUIRE(pd);
	addr = c->a.buf;
	switch (c->arg) {
	case MR_NULL:
		addr = NULL;
		break;
	case MR_LEN0:
		len = 0;
		break;
	case MR_ACC_BIT12:
		access |= 1 << 12;
		break;
	case MR_ACC_BIT30:
		access |= 1 << 30;
		break;
	case MR_RW_NO_LW:
		access = RW;
		break;
	case MR_RA_NO_LW:
		access = RA;
		break;
	case MR_RA:
		access |= RA;
		break;
	case MR_ODP:
		access |= IBV_ACCESS_ON_DEMAND;
		break;
	case MR_WRAP:	/* ends a page past the top of the address space */
		len = (size_t)(UINTPTR_MAX - (uintptr_t)addr) + 1 + pg;
		break;
	case MR_OVER_MAX:
		if (c->dev.max_mr_size >= SIZE_MAX - (uintptr_t)addr)
			ba_skip("max_mr_size covers the address space");
		len = (size_t)c->dev.max_mr_size + 1;
		break;
	case MR_UNMAPPED:
		addr = hole();
		break;
	case MR_UNMAPPED_RD:
		addr = hole();
		access = 0;
		break;
	case MR_PART_UNMAPPED:	/* a mapped page, then the hole */
		addr = hole() - pg;
		len = 2 * pg;
		break;
	case MR_PROT_NONE:
		addr = mapped(PROT_NONE);
		access = 0;
		break;
	case MR_RO_LW:
		addr = mapped(PROT_READ);
		break;
	case MR_RO_RW:
		addr = mapped(PROT_READ);
		access = LW | RW;
		break;
	}
	iova = (uintptr_t)addr;
	if (c->arg == MR_IOVA_WRAP)
		iova = UINT64_MAX - pg / 2;
	if (c->arg == MR_ADDR_WRAP) {	/* the buffer wraps, iova not */
		addr = (uint8_t *)(UINTPTR_MAX - pg + 1);
		len = 2 * pg;
		iova = 0x10000;
	}
	mr = CALL_PTR(ibv_reg_mr_iova(pd, addr, len, iova, access));
	if (mr)
		CHECK(ibv_dereg_mr(mr) == 0, "dereg_mr of the wrong MR fails");
	mr = ibv_reg_mr(pd, c->a.buf, pg, LW);
	if (CHECK(mr, "afterwards: a valid registration fails (errno %s)",
		  ba_errname(errno)))
		CHECK(ibv_dereg_mr(mr) == 0, "afterwards: dereg_mr fails");
	CHECK(ibv_dealloc_pd(pd) == 0,
	      "afterwards: the PD is still busy (the refused MR holds it)");
}

/* Read-only memory the IP only reads: a SEND from it, and the peer's
 * RDMA READ of it (arg: the access), deliver its bytes. */
static void reg_mr_readonly_ok(struct ba_ctx *c)
{
	uint8_t *ro, *dst;
	struct ibv_mr *mr;
	struct ibv_wc wc;

	ba_open(c, true);
	ba_pair(c, 8, 8);
	ro = mapped(PROT_READ);
	mr = CALL_PTR(ibv_reg_mr(c->a.pd, ro, page(), c->arg));
	if (!mr)
		return;
	dst = c->b.buf;
	memset(dst, 0, 64);
	if (c->arg & RR) {
		struct ibv_sge s = ba_sge(dst, 64, c->b.mr->lkey);
		struct ibv_send_wr wr = {
			.wr_id = 7, .sg_list = &s, .num_sge = 1,
			.opcode = IBV_WR_RDMA_READ,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = (uintptr_t)ro,
				     .rkey = mr->rkey },
		}, *bad;

		REQUIRE(ibv_post_send(c->qb, &wr, &bad) == 0);
		if (CHECK(ba_poll(c->b.cq, &wc, 1, BA_WAIT_MS) == 1,
			  "no completion for the peer's READ"))
			ba_wc_is(&wc, 7, IBV_WC_RDMA_READ, 64, "the peer's CQ");
	} else {
		struct ibv_sge s = ba_sge(ro, 64, mr->lkey);
		struct ibv_sge r = ba_sge(dst, 64, c->b.mr->lkey);
		struct ibv_send_wr wr = {
			.wr_id = 7, .sg_list = &s, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bad;
		struct ibv_recv_wr rwr = { .wr_id = 8, .sg_list = &r,
					   .num_sge = 1 }, *rbad;

		REQUIRE(ibv_post_recv(c->qb, &rwr, &rbad) == 0);
		CHECK(ibv_post_send(c->qa, &wr, &bad) == 0,
		      "a SEND from the read-only MR is refused");
		if (CHECK(ba_poll(c->a.cq, &wc, 1, BA_WAIT_MS) == 1,
			  "no completion for the SEND"))
			ba_wc_is(&wc, 7, IBV_WC_SEND, 64, "the sender's CQ");
		if (CHECK(ba_poll(c->b.cq, &wc, 1, BA_WAIT_MS) == 1,
			  "the peer received nothing"))
			ba_wc_is(&wc, 8, IBV_WC_RECV, 64, "the peer's CQ");
	}
	CHECK(!memcmp(dst, ro, 64), "the read-only bytes did not arrive");
	CHECK(ibv_dereg_mr(mr) == 0, "dereg_mr fails");
}

/* An optional access flag (IBV_ACCESS_OPTIONAL_RANGE) may be ignored,
 * not refused: verbs.h, "the optional access flags will be masked". */
static void reg_mr_relaxed_ordering(struct ba_ctx *c)
{
	struct ibv_mr *mr;

	ba_open(c, false);
	mr = CALL_PTR(ibv_reg_mr(c->a.pd, c->a.buf, page(),
				 LW | IBV_ACCESS_RELAXED_ORDERING));
	if (mr)
		CHECK(ibv_dereg_mr(mr) == 0, "dereg_mr fails");
}

static void reg_mr_remote_atomic(struct ba_ctx *c)
{
	struct ibv_mr *mr;

	ba_open(c, false);
	mr = CALL_PTR(ibv_reg_mr(c->a.pd, c->a.buf, page(), LW | RA));
	if (mr)
		CHECK(ibv_dereg_mr(mr) == 0, "dereg_mr fails");
}

/* One MR more than max_mr (the fixture's counts): ENOMEM, as a kernel
 * provider's object pool answers; freeing one makes room. */
static void reg_mr_beyond_max_mr(struct ba_ctx *c)
{
	struct ibv_mr **mrs, *mr;
	int n;

	ba_open(c, false);
	n = c->dev.max_mr - 1;
	mrs = calloc((size_t)n, sizeof(*mrs));
	REQUIRE(mrs);
	for (int k = 0; k < n; k++) {
		mrs[k] = ibv_reg_mr(c->a.pd, c->a.buf, page(), LW);
		REQUIRE(mrs[k]);
	}
	mr = CALL_PTR(ibv_reg_mr(c->a.pd, c->a.buf, page(), LW));
	if (mr)
		return;
	REQUIRE(ibv_dereg_mr(mrs[n / 2]) == 0);
	mr = ibv_reg_mr(c->a.pd, c->a.buf, page(), LW);
	CHECK(mr, "afterwards: no MR after one was freed (errno %s)",
	      ba_errname(errno));
}

#define MR(n, t, ...) \
	{ "reg_mr_" n, reg_mr_bad, t, EXP_NULL(__VA_ARGS__) }

const struct ba_case ba_mr_cases[] = {
	{ "dealloc_pd_busy_mr", dealloc_pd_busy_mr, 0, EXP_ERR(EBUSY) },
	{ "dealloc_pd_busy_qp", dealloc_pd_busy_qp, 0, EXP_ERR(EBUSY) },
	{ "dealloc_pd_busy_connected", dealloc_pd_busy_pair, 0,
	  EXP_ERR(EBUSY) },
	{ "alloc_pd_beyond_max_pd", alloc_pd_beyond_max_pd, 0,
	  EXP_NULL(ENOMEM) },

	/* The kernel pins (ib_umem_get) and finds no page at 0: EFAULT;
	 * a provider that checks first says EINVAL. */
	MR("null_addr", MR_NULL, EINVAL, EFAULT),
	MR("length_0", MR_LEN0, EINVAL),
	MR("access_unknown_bit12", MR_ACC_BIT12, EINVAL),
	MR("access_unknown_bit30", MR_ACC_BIT30, EINVAL),
	MR("remote_write_no_local_write", MR_RW_NO_LW, EINVAL),
	MR("remote_atomic_no_local_write", MR_RA_NO_LW, EINVAL),
	/* ibv_reg_mr(3): remote atomic "if supported"; atomic_cap is NONE,
	 * and the kernel's ib_check_mr_access lets it by all the same. */
	{ "reg_mr_remote_atomic_ok", reg_mr_remote_atomic, 0, EXP_OK },
	/* ib_check_mr_access: ON_DEMAND without ODP is EOPNOTSUPP. */
	MR("on_demand", MR_ODP, EOPNOTSUPP),
	MR("wraps_address_space", MR_WRAP, EINVAL),
	MR("iova_wraps", MR_IOVA_WRAP, EINVAL),
	/* ib_umem_get: EINVAL for a wrapping range; as unmapped, EFAULT. */
	MR("addr_wraps_iova_not", MR_ADDR_WRAP, EINVAL, EFAULT),
	/* Longer than max_mr_size, and than the address space: refused as
	 * too long, or as unmapped when pinned. */
	MR("beyond_max_mr_size", MR_OVER_MAX, EINVAL, EFAULT),
	/* What pinning user memory refuses (get_user_pages): EFAULT. */
	MR("unmapped", MR_UNMAPPED, EFAULT),
	MR("unmapped_no_write", MR_UNMAPPED_RD, EFAULT),
	MR("partly_unmapped", MR_PART_UNMAPPED, EFAULT),
	MR("prot_none", MR_PROT_NONE, EFAULT),
	MR("readonly_local_write", MR_RO_LW, EFAULT),
	MR("readonly_remote_write", MR_RO_RW, EFAULT),
	{ "reg_mr_readonly_access_0_ok", reg_mr_readonly_ok, 0, EXP_OK },
	{ "reg_mr_readonly_remote_read_ok", reg_mr_readonly_ok, RR, EXP_OK },
	{ "reg_mr_relaxed_ordering_ok", reg_mr_relaxed_ordering, 0, EXP_OK },
	{ "reg_mr_beyond_max_mr", reg_mr_beyond_max_mr, 0, EXP_NULL(ENOMEM) },
};

const size_t ba_mr_ncases = sizeof(ba_mr_cases) / sizeof(ba_mr_cases[0]);
