// SPDX-License-Identifier: MIT
/*
 * The provider data path between two software ERNICs in one process
 * (datapath_util.h), one RC QP each, connected to each other.
 *
 * "post" group (default): what the provider writes, read back from the
 * SQ ring (PG332 Table 2-1) and the SQPIi register, and every refused
 * post. Needs no queue engine.
 * "wire" group (argv[1] = wire, test_datapath_wire.c): every opcode end
 * to end, and the error completions, through the model's queue engine.
 */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "datapath_util.h"

static void test_wqe_layout(void **state)
{
	const uint64_t abus = mr_bus(&A, A.mr), rb = (uintptr_t)B.buf;
	const uint32_t rkey = B.mr->rkey, lkey = A.mr->lkey;
	uint8_t *a = A.buf;
	uint8_t inl[16] = "inline-payload!";
	struct ibv_sge s8 = sge(a, 8, lkey), s100 = sge(a + 4096, 100, lkey);
	struct ibv_sge sw = sge(a + 8192, 256, lkey);
	struct ibv_sge sr = sge(a + 12288, 512, lkey);
	struct ibv_sge si = sge(inl, 12, 0), siw = sge(inl, 16, 0);
	struct ibv_send_wr wr[9], *bad = NULL;
	struct ernic_qp *eq;
	struct pair p;

	pair_up(&p, 32, 32);
	eq = to_eqp(p.a);
	fill(a, 16384, 1);
	wr_set(&wr[0], 10, IBV_WR_SEND, &s8, 1, IBV_SEND_SIGNALED);
	wr_set(&wr[1], 11, IBV_WR_SEND, &s100, 1, IBV_SEND_SIGNALED);
	wr_set(&wr[2], 12, IBV_WR_SEND_WITH_IMM, &s8, 1, IBV_SEND_SIGNALED);
	wr[2].imm_data = htobe32(0x11223344);
	wr_set(&wr[3], 13, IBV_WR_SEND_WITH_INV, &s8, 1, IBV_SEND_SIGNALED);
	wr[3].invalidate_rkey = rkey;
	wr_set(&wr[4], 14, IBV_WR_RDMA_WRITE, &sw, 1, IBV_SEND_SIGNALED);
	wr[4].wr.rdma.remote_addr = rb + 64;
	wr[4].wr.rdma.rkey = rkey;
	wr_set(&wr[5], 15, IBV_WR_RDMA_WRITE_WITH_IMM, &sw, 1, 0);
	wr[5].wr.rdma.remote_addr = rb + 1024;
	wr[5].wr.rdma.rkey = rkey;
	wr[5].imm_data = htobe32(0xa1b2c3d4);
	wr_set(&wr[6], 16, IBV_WR_RDMA_READ, &sr, 1, IBV_SEND_SIGNALED);
	wr[6].wr.rdma.remote_addr = rb + 4096;
	wr[6].wr.rdma.rkey = rkey;
	wr_set(&wr[7], 17, IBV_WR_SEND, &si, 1,
	       IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	wr_set(&wr[8], 18, IBV_WR_RDMA_WRITE, &siw, 1,
	       IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	wr[8].wr.rdma.remote_addr = rb + 2048;
	wr[8].wr.rdma.rkey = rkey;
	chain(wr, 9);

	assert_int_equal(sqpi(&A, p.a), 0);
	assert_int_equal(ibv_post_send(p.a, wr, &bad), 0);
	/* Inline data is the provider's as soon as post returns. */
	memset(inl, 'X', sizeof(inl));
	/* One call, one doorbell: the producer index of all nine. */
	assert_int_equal(sqpi(&A, p.a), 9);

	/* SENDs of up to 16 B carry the data in SDATA, LADDR unused. */
	check_wqe(p.a, 0, ERNIC_OP_SEND, 0, 8, 0, 0, 0);
	assert_memory_equal(wqe_at(p.a, 0).sdata, a, 8);
	check_wqe(p.a, 1, ERNIC_OP_SEND, abus + 4096, 100, 0, 0, 0);
	check_wqe(p.a, 2, ERNIC_OP_SEND_IMM, 0, 8, 0, 0, 0x11223344);
	check_wqe(p.a, 3, ERNIC_OP_SEND_INV, 0, 8, 0, 0, rkey);
	check_wqe(p.a, 4, ERNIC_OP_RDMA_WRITE, abus + 8192, 256, rb + 64, rkey,
		  0);
	check_wqe(p.a, 5, ERNIC_OP_RDMA_WRITE_IMM, abus + 8192, 256, rb + 1024,
		  rkey, 0xa1b2c3d4);
	check_wqe(p.a, 6, ERNIC_OP_RDMA_READ, abus + 12288, 512, rb + 4096,
		  rkey, 0);
	check_wqe(p.a, 7, ERNIC_OP_SEND, 0, 12, 0, 0, 0);
	assert_memory_equal(wqe_at(p.a, 7).sdata, "inline-paylo", 12);
	/* Inline WRITE: the IP reads the slot's bounce area. */
	check_wqe(p.a, 8, ERNIC_OP_RDMA_WRITE, eq->inl.bus + 8 * 16, 16,
		  rb + 2048, rkey, 0);
	assert_memory_equal((uint8_t *)eq->inl.va + 8 * 16, "inline-payload!",
			    16);
	/* The shadow keeps the 64-bit wr_id and the signaled flag; a
	 * READ's completion has its data to invalidate (SLOW). */
	for (uint32_t k = 0; k < 9; k++) {
		assert_int_equal(eq->swqe[k].wr_id, 10 + k);
		assert_int_equal(eq->swqe[k].flags,
				 ERNIC_SWQE_LAST |
					 (k == 5 ? 0 : ERNIC_SWQE_SIGNALED) |
					 (k == 6 ? ERNIC_SWQE_SLOW : 0));
	}

	wr[1].next = NULL;
	assert_int_equal(ibv_post_send(p.a, wr, &bad), 0);
	assert_int_equal(sqpi(&A, p.a), 11);
	pair_down(&p);
}

static void test_split(void **state)
{
	const uint64_t abus = mr_bus(&A, A.mr), rb = (uintptr_t)B.buf;
	const uint32_t rkey = B.mr->rkey, lkey = A.mr->lkey;
	uint8_t *a = A.buf;
	struct ibv_sge one = sge(a, 128, lkey), other = sge(a + 4096, 192, lkey);
	struct ibv_sge two[2] = { one, other };
	struct ibv_sge g = sge(a + 100, 12, lkey);
	struct ibv_sge big = sge(a, (8u << 20) + (1u << 20), lkey);
	struct ibv_send_wr wr[6], *bad = NULL;
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_INV,
	};
	struct ernic_qp *eq;
	struct pair p;

	pair_up(&p, 32, 4);
	eq = to_eqp(p.a);
	fill(a, 8192, 2);
	wr_set(&wr[0], 1, IBV_WR_RDMA_WRITE, &one, 1, IBV_SEND_SIGNALED);
	wr_set(&wr[1], 2, IBV_WR_RDMA_WRITE_WITH_IMM, &other, 1,
	       IBV_SEND_SIGNALED);
	wr[1].imm_data = htobe32(77);
	wr_set(&wr[2], 3, IBV_WR_RDMA_READ, &one, 1, IBV_SEND_SIGNALED);
	wr_set(&wr[3], 4, IBV_WR_RDMA_WRITE, &big, 1, IBV_SEND_SIGNALED);
	wr_set(&wr[4], 5, IBV_WR_SEND, &g, 1, IBV_SEND_SIGNALED);
	wr_set(&wr[5], 6, IBV_WR_RDMA_WRITE, &one, 1, 0);
	for (int k = 0; k < 6; k++) {
		wr[k].wr.rdma.remote_addr = rb;
		wr[k].wr.rdma.rkey = rkey;
	}
	chain(wr, 6);
	assert_int_equal(ibv_post_send(p.a, wr, &bad), 0);
	assert_int_equal(sqpi(&A, p.a), 7);

	check_wqe(p.a, 0, ERNIC_OP_RDMA_WRITE, abus, 128, rb, rkey, 0);
	check_wqe(p.a, 1, ERNIC_OP_RDMA_WRITE_IMM, abus + 4096, 192, rb, rkey,
		  77);
	check_wqe(p.a, 2, ERNIC_OP_RDMA_READ, abus, 128, rb, rkey, 0);
	/* Over 8 MiB (PG332 "Unsupported Features"): 8 MiB pieces at
	 * consecutive remote offsets; only the last one completes. */
	check_wqe(p.a, 3, ERNIC_OP_RDMA_WRITE, abus, 8u << 20, rb, rkey, 0);
	check_wqe(p.a, 4, ERNIC_OP_RDMA_WRITE, abus + (8u << 20), 1u << 20,
		  rb + (8u << 20), rkey, 0);
	/* A SEND of up to 16 B travels in SDATA. */
	check_wqe(p.a, 5, ERNIC_OP_SEND, 0, 12, 0, 0, 0);
	assert_memory_equal(wqe_at(p.a, 5).sdata, a + 100, 12);
	check_wqe(p.a, 6, ERNIC_OP_RDMA_WRITE, abus, 128, rb, rkey, 0);

	/* The request's flags go with its last piece only; the READ's
	 * completion is SLOW (4). */
	static const uint8_t flags[7] = { 3, 3, 7, 0, 3, 3, 2 };
	for (uint32_t k = 0; k < 7; k++)
		assert_int_equal(eq->swqe[k].flags, flags[k]);
	assert_int_equal(eq->swqe[4].length, (8u << 20) + (1u << 20));

	/* More SGEs than max_send_sge (1) for any opcode, and SENDs over
	 * 8 MiB, are refused: nothing is written. */
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		wr_set(&wr[0], 9, ops[k], two, 2, IBV_SEND_SIGNALED);
		wr[0].wr.rdma.remote_addr = rb;
		wr[0].wr.rdma.rkey = rkey;
		assert_int_equal(ibv_post_send(p.a, &wr[0], &bad), EINVAL);
		assert_ptr_equal(bad, &wr[0]);
	}
	wr_set(&wr[4], 5, IBV_WR_SEND, &big, 1, 0);
	assert_int_equal(ibv_post_send(p.a, &wr[4], &bad), EINVAL);
	assert_int_equal(sqpi(&A, p.a), 7);
	pair_down(&p);
}

/*
 * num_sge above the QP's max_send_sge / max_recv_sge, with a one-entry
 * sg_list that ends at a page followed by PROT_NONE: EINVAL, and the
 * provider never reads the second entry (it crashed doing so).
 */
static void test_sge_count(void **state)
{
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_INV,
	};
	static const int counts[] = { 2, 3, 1000, INT_MAX };
	uint8_t *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_sge *one = (struct ibv_sge *)(m + pg) - 1;
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = one }, *rbad;
	struct pair p;

	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + pg, pg, PROT_NONE), 0);
	*one = sge(A.buf, 64, A.mr->lkey);
	pair_up(&p, 8, 8);
	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
			wr_set(&wr, 1, ops[o], one, counts[c],
			       IBV_SEND_SIGNALED);
			wr.wr.rdma.remote_addr = (uintptr_t)B.buf;
			wr.wr.rdma.rkey = B.mr->rkey;
			bad = NULL;
			assert_int_equal(ibv_post_send(p.a, &wr, &bad), EINVAL);
			assert_ptr_equal(bad, &wr);
		}
		/* inline data descriptors are SGEs too */
		wr_set(&wr, 1, ops[o], one, 2, IBV_SEND_INLINE);
		assert_int_equal(ibv_post_send(p.a, &wr, &bad), EINVAL);
	}
	assert_int_equal(sqpi(&A, p.a), 0);
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		rwr.num_sge = counts[c];
		rbad = NULL;
		assert_int_equal(ibv_post_recv(p.b, &rwr, &rbad), EINVAL);
		assert_ptr_equal(rbad, &rwr);
	}
	/* the one entry alone is fine */
	wr_set(&wr, 1, IBV_WR_RDMA_WRITE, one, 1, IBV_SEND_SIGNALED);
	wr.wr.rdma.remote_addr = (uintptr_t)B.buf;
	wr.wr.rdma.rkey = B.mr->rkey;
	assert_int_equal(ibv_post_send(p.a, &wr, &bad), 0);
	assert_int_equal(sqpi(&A, p.a), 1);
	pair_down(&p);
	munmap(m, 2 * pg);
}

/* Every refused work request: EINVAL, bad_wr, nothing written. */
static void test_refused(void **state)
{
	uint8_t *a = A.buf, zero[ERNIC_WQE_SIZE] = { 0 }, inl[17] = { 0 };
	const uint32_t lkey = A.mr->lkey;
	struct ibv_pd *pd2 = ibv_alloc_pd(A.ctx);
	struct ibv_mr *other = ibv_reg_mr(pd2, a, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *ro = ibv_reg_mr(A.pd, a, 4096, IBV_ACCESS_REMOTE_READ);
	struct ibv_mr *gone = ibv_reg_mr(A.pd, a, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge s, s2[2];
	struct ibv_send_wr wr[2], *bad;
	uint32_t gone_key;
	struct pair p;

	assert_non_null(other);
	assert_non_null(ro);
	assert_non_null(gone);
	gone_key = gone->lkey;
	assert_int_equal(ibv_dereg_mr(gone), 0);
	pair_up(&p, 8, 8);

#define REFUSED(op, setup)                                                 \
	do {                                                               \
		s = sge(a, 64, lkey);                                      \
		wr_set(&wr[0], 1, op, &s, 1, IBV_SEND_SIGNALED);           \
		wr[0].wr.rdma.remote_addr = (uintptr_t)B.buf;              \
		wr[0].wr.rdma.rkey = B.mr->rkey;                           \
		setup;                                                     \
		bad = NULL;                                                \
		assert_int_equal(ibv_post_send(p.a, wr, &bad), EINVAL);    \
		assert_ptr_equal(bad, &wr[0]);                             \
		assert_int_equal(sqpi(&A, p.a), 0);                        \
		assert_memory_equal(to_eqp(p.a)->sq.va, zero, sizeof(zero)); \
	} while (0)

	REFUSED(IBV_WR_SEND, s.lkey ^= 0x100);		/* other generation */
	REFUSED(IBV_WR_SEND, s.lkey = gone_key);	/* deregistered */
	REFUSED(IBV_WR_SEND, s.lkey |= 1u << 16);	/* reserved bits */
	REFUSED(IBV_WR_SEND, s.addr = (uintptr_t)a + BUF_SIZE - 32);
	REFUSED(IBV_WR_SEND, (s.addr = (uintptr_t)a + BUF_SIZE - 4,
			      s.length = 8));		/* SDATA path too */
	REFUSED(IBV_WR_RDMA_WRITE, s.addr = (uintptr_t)a - 64);
	REFUSED(IBV_WR_SEND, s.lkey = other->lkey);	/* other PD */
	REFUSED(IBV_WR_RDMA_READ, s.lkey = ro->lkey);	/* no local write */
	REFUSED(IBV_WR_SEND, s.length = 0);		/* zero-length SEND */
	REFUSED(IBV_WR_SEND, wr[0].num_sge = 0);
	REFUSED(IBV_WR_SEND, (s2[0] = sge(a, 10, lkey),
			      s2[1] = sge(a + 64, 10, lkey),
			      wr[0].sg_list = s2, wr[0].num_sge = 2));
	REFUSED(IBV_WR_SEND, (s = sge(inl, 17, 0),
			      wr[0].send_flags |= IBV_SEND_INLINE));
	REFUSED(IBV_WR_RDMA_WRITE, (s = sge(inl, 17, 0),
				    wr[0].send_flags |= IBV_SEND_INLINE));
	REFUSED(IBV_WR_RDMA_READ, wr[0].send_flags |= IBV_SEND_INLINE);
	REFUSED(IBV_WR_SEND, wr[0].send_flags |= IBV_SEND_IP_CSUM);
	REFUSED(IBV_WR_ATOMIC_FETCH_AND_ADD, (void)0);
	REFUSED(IBV_WR_LOCAL_INV, (void)0);
	REFUSED(IBV_WR_BIND_MW, (void)0);
	REFUSED(IBV_WR_SEND, wr[0].num_sge = -1);
#undef REFUSED

	/* The WRs before the bad one are posted and rung. */
	s = sge(a, 8, lkey);
	wr_set(&wr[0], 1, IBV_WR_SEND, &s, 1, 0);
	wr_set(&wr[1], 2, IBV_WR_SEND, &s, 0, 0);
	chain(wr, 2);
	assert_int_equal(ibv_post_send(p.a, wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr[1]);
	assert_int_equal(sqpi(&A, p.a), 1);

	pair_down(&p);
	assert_int_equal(ibv_dereg_mr(ro), 0);
	assert_int_equal(ibv_dereg_mr(other), 0);
	assert_int_equal(ibv_dealloc_pd(pd2), 0);
}

static void test_sq_full(void **state)
{
	struct ibv_sge s = sge(A.buf, 8, A.mr->lkey);
	struct ibv_sge big = sge(A.buf, (8u << 20) + 64, A.mr->lkey);
	struct ibv_send_wr wr[5], *bad;
	struct pair p;

	/* max_send_wr 4: the ring (depth 5) holds 4. */
	pair_up(&p, 4, 4);
	for (int k = 0; k < 5; k++)
		wr_set(&wr[k], k, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED);
	chain(wr, 5);
	assert_int_equal(ibv_post_send(p.a, wr, &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[4]);
	assert_int_equal(sqpi(&A, p.a), 4);
	assert_int_equal(ibv_post_send(p.a, &wr[4], &bad), ENOMEM);
	assert_int_equal(sqpi(&A, p.a), 4);
	pair_down(&p);

	/* A split request (over 8 MiB) needs room for all of its pieces. */
	pair_up(&p, 4, 4);
	wr[2].next = NULL;
	assert_int_equal(ibv_post_send(p.a, wr, &bad), 0);
	wr_set(&wr[3], 3, IBV_WR_RDMA_WRITE, &big, 1, IBV_SEND_SIGNALED);
	wr[3].wr.rdma.remote_addr = (uintptr_t)B.buf;
	wr[3].wr.rdma.rkey = B.mr->rkey;
	assert_int_equal(ibv_post_send(p.a, &wr[3], &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[3]);
	assert_int_equal(sqpi(&A, p.a), 3);
	assert_int_equal(ibv_post_send(p.a, &wr[4], &bad), 0);
	assert_int_equal(sqpi(&A, p.a), 4);
	pair_down(&p);
}

static void test_post_states(void **state)
{
	struct ibv_qp *qp = qp_new(&A, 4, 4, 0);
	struct ibv_sge s = sge(A.buf, 8, A.mr->lkey);
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &s, .num_sge = 1 };
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr *rbad;

	wr_set(&wr, 1, IBV_WR_SEND, &s, 1, 0);
	/* IBTA: no sends before RTS, no receives in RESET. */
	assert_int_equal(ibv_post_send(qp, &wr, &bad), EINVAL);
	assert_int_equal(ibv_post_recv(qp, &rwr, &rbad), EINVAL);
	qp_init(qp);
	assert_int_equal(ibv_post_send(qp, &wr, &bad), EINVAL);
	assert_int_equal(ibv_post_recv(qp, &rwr, &rbad), 0);
	qp_rtr(qp, B.ip, 2, &conn_std);
	assert_int_equal(ibv_post_send(qp, &wr, &bad), EINVAL);
	assert_int_equal(sqpi(&A, qp), 0);
	/* The RQ ring is sized for packets, not for max_recv_wr. */
	assert_int_equal(tu_rd(A.ctx, ERNIC_QP(qp->qp_num, ERNIC_QDEPTH)),
			 256u << 16 | 5);
	qp_destroy(qp);
}

static void check_flush(const struct ibv_wc *wc, uint64_t id,
			enum ibv_wc_opcode op, struct ibv_qp *qp)
{
	assert_int_equal(wc->wr_id, id);
	assert_int_equal(wc->status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(wc->opcode, op);
	assert_int_equal(wc->qp_num, qp->qp_num);
}

static void test_post_recv(void **state)
{
	struct ibv_qp *qp = qp_new(&A, 4, 4, 0);
	struct ibv_mr *ro = ibv_reg_mr(A.pd, A.buf, 4096, IBV_ACCESS_REMOTE_READ);
	struct ibv_sge s[2] = { sge(A.buf, 64, A.mr->lkey),
				sge(A.buf + 64, 64, A.mr->lkey) };
	struct ibv_recv_wr wr[5], *bad;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[8];

	assert_non_null(ro);
	qp_init(qp);
	memset(wr, 0, sizeof(wr));
	for (int k = 0; k < 5; k++) {
		wr[k].wr_id = 100 + k;
		wr[k].sg_list = s;
		wr[k].num_sge = 1;
	}
	wr[0].num_sge = 2;
	assert_int_equal(ibv_post_recv(qp, wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr[0]);
	wr[0].num_sge = 1;
	s[0].lkey ^= 0x100;
	assert_int_equal(ibv_post_recv(qp, wr, &bad), EINVAL);
	s[0].lkey = ro->lkey;	/* the IP writes receive buffers */
	assert_int_equal(ibv_post_recv(qp, wr, &bad), EINVAL);
	s[0] = sge(A.buf + BUF_SIZE - 32, 64, A.mr->lkey);
	assert_int_equal(ibv_post_recv(qp, wr, &bad), EINVAL);
	s[0] = sge(A.buf, 64, A.mr->lkey);

	/* Four fit (one without a buffer); the fifth does not. */
	wr[3].num_sge = 0;
	for (int k = 0; k < 4; k++)
		wr[k].next = &wr[k + 1];
	assert_int_equal(ibv_post_recv(qp, wr, &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[4]);
	assert_int_equal(poll_n(A.cq, wc, 1, 20), 0);

	/* In error, every posted receive is flushed, in order. */
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	assert_int_equal(poll_n(A.cq, wc, 4, WAIT_MS), 4);
	for (int k = 0; k < 4; k++)
		check_flush(&wc[k], 100 + k, IBV_WC_RECV, qp);
	wr[4].next = NULL;
	assert_int_equal(ibv_post_recv(qp, &wr[4], &bad), 0);
	assert_int_equal(poll_n(A.cq, wc, 1, WAIT_MS), 1);
	check_flush(&wc[0], 104, IBV_WC_RECV, qp);
	assert_int_equal(poll_n(A.cq, wc, 1, 20), 0);
	qp_destroy(qp);
	assert_int_equal(ibv_dereg_mr(ro), 0);
}

/* modify_qp(ERR) by the user flushes what is posted, and what comes. */
static void test_user_err_flush(void **state)
{
	struct ibv_sge s = sge(A.buf, 8, A.mr->lkey);
	struct ibv_recv_wr rwr = { .wr_id = 50, .sg_list = &s, .num_sge = 1 };
	struct ibv_send_wr wr[3], *bad;
	struct ibv_recv_wr *rbad;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp_init_attr qia;
	struct ibv_wc wc[8];
	bool flushed = false;
	int n, sends = 0;
	struct pair p;

	pair_up(&p, 8, 8);
	assert_int_equal(ibv_post_recv(p.a, &rwr, &rbad), 0);
	for (int k = 0; k < 3; k++)
		wr_set(&wr[k], k, IBV_WR_SEND, &s, 1,
		       k == 1 ? 0 : IBV_SEND_SIGNALED);
	chain(wr, 3);
	assert_int_equal(ibv_post_send(p.a, wr, &bad), 0);
	assert_int_equal(ibv_modify_qp(p.a, &qa, IBV_QP_STATE), 0);

	/* With an engine some may have completed before: successes first,
	 * in order, then flushes; the unsignaled one only if flushed. */
	n = poll_n(A.cq, wc, 8, 200);
	for (int k = 0; k < n; k++) {
		if (wc[k].opcode == IBV_WC_RECV) {
			check_flush(&wc[k], 50, IBV_WC_RECV, p.a);
			continue;
		}
		assert_int_equal(wc[k].opcode, IBV_WC_SEND);
		assert_true(wc[k].wr_id >= (uint64_t)sends);
		if (wc[k].status == IBV_WC_WR_FLUSH_ERR)
			flushed = true;
		else
			assert_true(!flushed && wc[k].status == IBV_WC_SUCCESS &&
				    wc[k].wr_id != 1);
		sends = (int)wc[k].wr_id + 1;
	}
	assert_int_equal(sends, 3);

	/* Posted in error: flushed, signaled or not. */
	wr[0].send_flags = 0;
	wr[0].next = NULL;
	assert_int_equal(ibv_post_send(p.a, wr, &bad), 0);
	assert_int_equal(ibv_post_recv(p.a, &rwr, &rbad), 0);
	assert_int_equal(poll_n(A.cq, wc, 2, WAIT_MS), 2);
	check_flush(&wc[0], 0, IBV_WC_SEND, p.a);
	check_flush(&wc[1], 50, IBV_WC_RECV, p.a);
	assert_int_equal(wc[0].src_qp, p.b->qp_num);
	assert_int_equal(ibv_query_qp(p.a, &qa, IBV_QP_STATE, &qia), 0);
	assert_int_equal(qa.qp_state, IBV_QPS_ERR);
	pair_down(&p);
}

static void test_qp_ex_post(void **state)
{
	const uint64_t abus = mr_bus(&A, A.mr), rb = (uintptr_t)B.buf;
	const uint32_t rkey = B.mr->rkey, lkey = A.mr->lkey;
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = A.cq, .recv_cq = A.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 4 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = A.pd,
		.send_ops_flags = QX_OPS | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	};
	struct ibv_sge two[2] = { sge(A.buf, 64, lkey),
				  sge(A.buf + 128, 64, lkey) };
	struct ibv_data_buf bufs[2] = { { (void *)"abc", 3 },
					{ (void *)"defg", 4 } };
	char inl[16] = "0123456789abcdef";
	struct ibv_qp_ex *qx;
	struct ernic_qp *eq;
	struct pair p;

	errno = 0;
	assert_null(ibv_create_qp_ex(A.ctx, &ia));
	assert_int_equal(errno, EOPNOTSUPP);
	pair_up2(&p, qp_new(&A, 16, 4, QX_OPS), qp_new(&B, 16, 4, 0),
		 &conn_std, &conn_std);
	assert_null(ibv_qp_to_qp_ex(p.b));
	qx = ibv_qp_to_qp_ex(p.a);
	assert_non_null(qx);
	eq = to_eqp(p.a);

	ibv_wr_start(qx);
	qx->wr_id = 1;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, lkey, (uintptr_t)A.buf, 8);
	qx->wr_id = 2;
	ibv_wr_rdma_write(qx, rkey, rb);
	ibv_wr_set_inline_data(qx, inl, 16);
	qx->wr_id = 3;
	ibv_wr_rdma_write_imm(qx, rkey, rb + 256, htobe32(5));
	ibv_wr_set_sge_list(qx, 1, &two[1]);
	qx->wr_id = 4;
	ibv_wr_send_inv(qx, rkey);
	ibv_wr_set_sge(qx, lkey, (uintptr_t)A.buf + 4096, 100);
	qx->wr_id = 5;
	ibv_wr_rdma_read(qx, rkey, rb + 4096);
	ibv_wr_set_sge(qx, lkey, (uintptr_t)A.buf + 8192, 256);
	qx->wr_id = 6;
	qx->wr_flags = 0;
	ibv_wr_send_imm(qx, htobe32(9));
	ibv_wr_set_inline_data_list(qx, 2, bufs);
	assert_int_equal(sqpi(&A, p.a), 0);	/* rung by complete only */
	assert_int_equal(ibv_wr_complete(qx), 0);
	memset(inl, 0, sizeof(inl));
	assert_int_equal(sqpi(&A, p.a), 6);

	check_wqe(p.a, 0, ERNIC_OP_SEND, 0, 8, 0, 0, 0);
	check_wqe(p.a, 1, ERNIC_OP_RDMA_WRITE, eq->inl.bus + 16, 16, rb, rkey,
		  0);
	assert_memory_equal((uint8_t *)eq->inl.va + 16, "0123456789abcdef", 16);
	check_wqe(p.a, 2, ERNIC_OP_RDMA_WRITE_IMM, abus + 128, 64, rb + 256,
		  rkey, 5);
	check_wqe(p.a, 3, ERNIC_OP_SEND_INV, abus + 4096, 100, 0, 0, rkey);
	check_wqe(p.a, 4, ERNIC_OP_RDMA_READ, abus + 8192, 256, rb + 4096,
		  rkey, 0);
	check_wqe(p.a, 5, ERNIC_OP_SEND_IMM, 0, 7, 0, 0, 9);
	assert_memory_equal(wqe_at(p.a, 5).sdata, "abcdefg", 7);
	static const uint64_t ids[6] = { 1, 2, 3, 4, 5, 6 };
	for (int k = 0; k < 6; k++)
		assert_int_equal(eq->swqe[k].wr_id, ids[k]);
	assert_int_equal(eq->swqe[5].flags, ERNIC_SWQE_LAST);

	/* One bad request: wr_complete fails and nothing is posted. */
	ibv_wr_start(qx);
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, lkey, (uintptr_t)A.buf, 8);
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, lkey ^ 0x100, (uintptr_t)A.buf, 8);
	assert_int_equal(ibv_wr_complete(qx), EINVAL);
	assert_int_equal(sqpi(&A, p.a), 6);
	/* More SGEs than max_send_sge: the same. */
	ibv_wr_start(qx);
	ibv_wr_rdma_write(qx, rkey, rb);
	ibv_wr_set_sge_list(qx, 2, two);
	assert_int_equal(ibv_wr_complete(qx), EINVAL);
	/* A request without data is a zero-length one: no SEND. */
	ibv_wr_start(qx);
	ibv_wr_send(qx);
	assert_int_equal(ibv_wr_complete(qx), EINVAL);
	ibv_wr_start(qx);
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, lkey, (uintptr_t)A.buf, 8);
	ibv_wr_abort(qx);
	assert_int_equal(sqpi(&A, p.a), 6);
	ibv_wr_start(qx);
	ibv_wr_rdma_write(qx, rkey, rb);
	ibv_wr_set_sge(qx, lkey, (uintptr_t)A.buf, 64);
	assert_int_equal(ibv_wr_complete(qx), 0);
	assert_int_equal(sqpi(&A, p.a), 7);
	pair_down(&p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest post[] = {
		cmocka_unit_test_teardown(test_wqe_layout, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_split, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_sge_count, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_refused, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_sq_full, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_post_states, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_post_recv, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_user_err_flush, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_qp_ex_post, dp_qp_cleanup),
	};

	tu_require_env();
	/* DATAPATH_TEST=<glob> runs only the matching tests. */
	if (getenv("DATAPATH_TEST"))
		cmocka_set_test_filter(getenv("DATAPATH_TEST"));
	if (argc > 1 && !strcmp(argv[1], "wire"))
		return dp_run_wire();
	if (argc > 1 && !strcmp(argv[1], "words"))
		return dp_run_words();
	if (argc > 1 && !strcmp(argv[1], "events"))
		return dp_run_events();
	if (argc > 1 && !strcmp(argv[1], "mad"))
		return dp_run_mad();
	if (argc > 1 && !strcmp(argv[1], "sge"))
		return dp_run_sge();
	if (argc > 1 && !strcmp(argv[1], "cqex"))
		return dp_run_cqex();
	return cmocka_run_group_tests_name("datapath", post, dp_group_setup,
					   dp_group_teardown);
}
