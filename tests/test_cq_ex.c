// SPDX-License-Identifier: MIT
/*
 * "cqex" group: ibv_create_cq_ex and its polling interface
 * (providers/ernic/ernic_cqex.c). Completions of every kind read through
 * start_poll / next_poll / end_poll and the read_* accessors match what
 * the request said; an empty CQ answers ENOENT with its lock released;
 * what the CQ cannot report is refused with the reason's errno.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "datapath_util.h"

static const uint64_t std_flags = IBV_WC_STANDARD_FLAGS;

static struct ibv_cq_ex *cq_ex_new(struct ibv_context *ctx, uint32_t cqe,
				   uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = cqe,
		.wc_flags = wc_flags,
	};

	return ibv_create_cq_ex(ctx, &a);
}

static int refused(struct ibv_context *ctx, struct ibv_cq_init_attr_ex a)
{
	struct ibv_cq_ex *cq;

	errno = 0;
	cq = ibv_create_cq_ex(ctx, &a);
	if (cq) {
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
		return 0;
	}
	return errno;
}

/* What the CQ cannot do is refused, and why shows in errno. */
static void test_cq_ex_refused(void **state)
{
	struct ibv_context *c = A.ctx;
	struct ibv_poll_cq_attr pa = { .comp_mask = 1 };
	struct ibv_cq_ex *cq;

	assert_int_equal(refused(c, (struct ibv_cq_init_attr_ex){ .cqe = 0 }),
			 EINVAL);
	assert_int_equal(refused(c, (struct ibv_cq_init_attr_ex){
					    .cqe = ERNIC_MAX_CQE + 1 }),
			 EINVAL);
	assert_int_equal(refused(c, (struct ibv_cq_init_attr_ex){
					    .cqe = 8,
					    .comp_vector = (uint32_t)c->num_comp_vectors }),
			 EINVAL);
	assert_int_equal(refused(c, (struct ibv_cq_init_attr_ex){
					    .cqe = 8, .comp_mask = 1u << 7 }),
			 EINVAL);
	assert_int_equal(refused(c, (struct ibv_cq_init_attr_ex){
					    .cqe = 8,
					    .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP }),
			 EOPNOTSUPP);
	assert_int_equal(refused(c, (struct ibv_cq_init_attr_ex){
					    .cqe = 8,
					    .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
					    .parent_domain = A.pd }),
			 EOPNOTSUPP);
	assert_int_equal(refused(c, (struct ibv_cq_init_attr_ex){
					    .cqe = 8,
					    .comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
					    .flags = 1u << 5 }),
			 EOPNOTSUPP);
	/* Allowed flags, and no wc_flags at all. */
	assert_int_equal(refused(c, (struct ibv_cq_init_attr_ex){
					    .cqe = 8,
					    .comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
					    .flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
						     IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN }),
			 0);
	cq = cq_ex_new(c, 8, 0);
	assert_non_null(cq);
	/* Only what wc_flags asked for can be read. */
	assert_null(cq->read_byte_len);
	assert_null(cq->read_imm_data);
	assert_non_null(cq->read_opcode);
	assert_int_equal(ibv_start_poll(cq, &pa), EINVAL);
	assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
}

struct got {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len, qp_num, src_qp, vendor_err;
	unsigned int flags;
	__be32 imm;
};

static void take(struct ibv_cq_ex *cq, struct got *g)
{
	*g = (struct got){
		.wr_id = cq->wr_id,
		.status = cq->status,
		.opcode = ibv_wc_read_opcode(cq),
		.byte_len = ibv_wc_read_byte_len(cq),
		.qp_num = ibv_wc_read_qp_num(cq),
		.src_qp = ibv_wc_read_src_qp(cq),
		.vendor_err = ibv_wc_read_vendor_err(cq),
		.flags = ibv_wc_read_wc_flags(cq),
	};
	if (g->flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV))
		g->imm = ibv_wc_read_imm_data(cq);
	assert_int_equal(ibv_wc_read_slid(cq), 0);
	assert_int_equal(ibv_wc_read_sl(cq), 0);
	assert_int_equal(ibv_wc_read_dlid_path_bits(cq), 0);
}

/* Up to n completions in start/next/end batches, within ms. */
static int drain(struct ibv_cq_ex *cq, struct got *g, int n, int ms)
{
	struct ibv_poll_cq_attr pa = { 0 };
	int got = 0;

	for (int tries = 0; got < n && tries < ms * 10; tries++) {
		int ret = ibv_start_poll(cq, &pa);

		if (ret == ENOENT) {
			/* Nothing: start_poll let go of the CQ's lock. */
			ernic_spinlock_t *l = &to_ecq(ibv_cq_ex_to_cq(cq))->lock;

			assert_true(ernic_spin_trylock(l));
			ernic_spin_unlock(l);
			usleep(100);
			continue;
		}
		assert_int_equal(ret, 0);
		do
			take(cq, &g[got++]);
		while (got < n && (ret = ibv_next_poll(cq)) == 0);
		assert_true(ret == 0 || ret == ENOENT);
		ibv_end_poll(cq);
	}
	return got;
}

static void check(const struct got *g, uint64_t id, enum ibv_wc_status st,
		  enum ibv_wc_opcode op, uint32_t len, uint32_t qpn,
		  uint32_t src, unsigned int flags, uint32_t imm)
{
	if (g->status != st)
		fail_msg("wr_id %llu: %s, want %s",
			 (unsigned long long)g->wr_id,
			 ibv_wc_status_str(g->status), ibv_wc_status_str(st));
	assert_int_equal(g->wr_id, id);
	if (st != IBV_WC_SUCCESS)
		return;
	assert_int_equal(g->opcode, op);
	assert_int_equal(g->byte_len, len);
	assert_int_equal(g->qp_num, qpn);
	assert_int_equal(g->src_qp, src);
	assert_int_equal(g->flags, flags);
	/* ImmDt is in network order; an invalidated R_Key, as in
	 * ibv_wc.invalidated_rkey, in host order. */
	if (flags == IBV_WC_WITH_IMM)
		assert_int_equal(be32toh(g->imm), imm);
	else if (flags == IBV_WC_WITH_INV)
		assert_int_equal((uint32_t)g->imm, imm);
}

/* Every kind of completion, read through ibv_cq_ex on both sides. */
static void test_cq_ex_traffic(void **state)
{
	struct ibv_cq_ex *ca = cq_ex_new(A.ctx, 64, std_flags);
	struct ibv_cq_ex *cb = cq_ex_new(B.ctx, 64, std_flags);
	struct ibv_cq *sa = A.cq, *sb = B.cq;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge s;
	struct got g[8];
	struct pair p;
	uint32_t qa, qb;

	assert_non_null(ca);
	assert_non_null(cb);
	/* The side's QPs report through the extended CQs. */
	A.cq = ibv_cq_ex_to_cq(ca);
	B.cq = ibv_cq_ex_to_cq(cb);
	pair_up(&p, 16, 16);
	A.cq = sa;
	B.cq = sb;
	qa = p.a->qp_num;
	qb = p.b->qp_num;

	assert_int_equal(drain(ca, g, 1, 50), 0);
	for (int k = 0; k < 4; k++)
		post_recv1(p.b, 100 + (uint64_t)k, B.buf, 4096, B.mr->lkey);
	post1(p.a, 1, IBV_WR_SEND, A.buf, 1000, 0, 0, 0, IBV_SEND_SIGNALED);
	post1(p.a, 2, IBV_WR_SEND_WITH_IMM, A.buf, 3 * PMTU, 0, 0,
	      0x11223344, IBV_SEND_SIGNALED);
	post1(p.a, 3, IBV_WR_SEND_WITH_INV, A.buf, 7, 0, 0, 0x4242,
	      IBV_SEND_SIGNALED);
	post1(p.a, 4, IBV_WR_RDMA_WRITE_WITH_IMM, A.buf, 5000,
	      (uintptr_t)B.buf + 8192, B.mr->rkey, 0xCAFE, IBV_SEND_SIGNALED);
	post1(p.a, 5, IBV_WR_RDMA_READ, A.buf + 65536, 300,
	      (uintptr_t)B.buf, B.mr->rkey, 0, IBV_SEND_SIGNALED);
	assert_int_equal(drain(ca, g, 5, WAIT_MS), 5);
	check(&g[0], 1, IBV_WC_SUCCESS, IBV_WC_SEND, 1000, qa, qb, 0, 0);
	check(&g[1], 2, IBV_WC_SUCCESS, IBV_WC_SEND, 3 * PMTU, qa, qb, 0, 0);
	check(&g[2], 3, IBV_WC_SUCCESS, IBV_WC_SEND, 7, qa, qb, 0, 0);
	check(&g[3], 4, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 5000, qa, qb, 0, 0);
	check(&g[4], 5, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 300, qa, qb, 0, 0);
	assert_int_equal(drain(cb, g, 4, WAIT_MS), 4);
	check(&g[0], 100, IBV_WC_SUCCESS, IBV_WC_RECV, 1000, qb, qa, 0, 0);
	check(&g[1], 101, IBV_WC_SUCCESS, IBV_WC_RECV, 3 * PMTU, qb, qa,
	      IBV_WC_WITH_IMM, 0x11223344);
	check(&g[2], 102, IBV_WC_SUCCESS, IBV_WC_RECV, 7, qb, qa,
	      IBV_WC_WITH_INV, 0x4242);
	check(&g[3], 103, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, 5000, qb,
	      qa, IBV_WC_WITH_IMM, 0xCAFE);
	/* Nothing more on either side. */
	assert_int_equal(drain(ca, g, 1, 50), 0);
	assert_int_equal(drain(cb, g, 1, 50), 0);

	/* An error completion and the flush behind it. */
	s = sge(A.buf, 8, A.mr->lkey);
	wr_set(&wr, 6, IBV_WR_RDMA_WRITE, &s, 1, IBV_SEND_SIGNALED);
	wr.wr.rdma.remote_addr = (uintptr_t)B.buf;
	wr.wr.rdma.rkey = B.mr->rkey ^ 0x100;
	assert_int_equal(ibv_post_send(p.a, &wr, &bad), 0);
	post1(p.a, 7, IBV_WR_SEND, A.buf, 8, 0, 0, 0, IBV_SEND_SIGNALED);
	assert_int_equal(drain(ca, g, 2, WAIT_MS), 2);
	check(&g[0], 6, IBV_WC_REM_ACCESS_ERR, 0, 0, 0, 0, 0, 0);
	assert_int_equal(g[0].vendor_err, 0x62);	/* NAK remote access */
	check(&g[1], 7, IBV_WC_WR_FLUSH_ERR, 0, 0, 0, 0, 0, 0);
	pair_down(&p);
	/* ibv_poll_cq reads the same CQ (nothing left), then it goes. */
	assert_int_equal(ibv_poll_cq(ibv_cq_ex_to_cq(cb), 8,
				     (struct ibv_wc[8]){ 0 }), 0);
	assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(ca)), 0);
	assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(cb)), 0);
}

int dp_run_cqex(void)
{
	const struct CMUnitTest cqex[] = {
		cmocka_unit_test_teardown(test_cq_ex_refused, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_cq_ex_traffic, dp_qp_cleanup),
	};

	return cmocka_run_group_tests_name("cqex", cqex, dp_group_setup,
					   dp_group_teardown);
}
