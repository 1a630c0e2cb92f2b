// SPDX-License-Identifier: MIT
/*
 * "sge" group: scatter/gather lists on an IP with one buffer per WQE
 * (providers/ernic/ernic_sge.c). SEND, WRITE and READ with 2, 3 and 16
 * SGEs of odd lengths at odd offsets, zero-length ones among them and
 * SGEs of two MRs, byte-exact with the bytes between SGEs untouched,
 * staged, gathered into a bounce buffer, and split per SGE over 8 MiB;
 * receives scattered over several SGEs; inline sizes 0..max; caps,
 * REMOTE_ATOMIC and refusals, with their logged reasons when
 * VERBS_LOG_LEVEL asks for debug output.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datapath_util.h"

#define GUARD 0xEE
#define SGL_OFF (1u << 20)	/* SGE lists: [1 MiB, 1 MiB + 64 KiB) */
#define DST_OFF (2u << 20)	/* WRITE / READ peer bytes */
#define REGION (64u << 10)

static const struct ibv_qp_cap big_cap = {
	.max_send_wr = 300, .max_recv_wr = 300, .max_send_sge = 16,
	.max_recv_sge = 16, .max_inline_data = ERNIC_MAX_INLINE,
};

struct sgl {
	struct ibv_sge s[ERNIC_MAX_SGE];
	int n;
	uint32_t total;
};

/* Second MRs, each over a buffer of its own: a list may mix keys. (A
 * software ERNIC with --noncoherent keeps one IP-side copy per MR and
 * syncs every copy of an address, so the MRs must not overlap the
 * side's main one.) */
static struct ibv_mr *mr2_a, *mr2_b;
static uint8_t *buf2_a, *buf2_b;

static struct ibv_mr *mr2_of(struct side *s)
{
	return s == &A ? mr2_a : mr2_b;
}

/* Region r (0: the side's buffer, 1: its second MR's) of a list. */
static uint8_t *region(struct side *s, int r)
{
	return r ? (s == &A ? buf2_a : buf2_b) : s->buf + SGL_OFF;
}

/*
 * n SGEs in side s's list region: odd lengths (lens, or made up from
 * seed), 1-3 byte gaps, SGE 1 empty when n > 2, odd ones through the
 * second MR. The region is filled with GUARD first.
 */
static void make_sgl(struct sgl *g, struct side *s, int n, unsigned int seed,
		     const uint32_t *lens)
{
	size_t offs[2] = { 3, 5 };

	memset(region(s, 0), GUARD, REGION);
	memset(region(s, 1), GUARD, REGION);
	g->n = n;
	g->total = 0;
	for (int k = 0; k < n; k++) {
		uint32_t len = lens ? lens[k] :
				      (n > 2 && k == 1) ? 0 :
				      (uint32_t)((k * 37 + seed * 11) % 200) | 1;
		const int r = k & 1;
		struct ibv_mr *mr = r ? mr2_of(s) : s->mr;

		g->s[k] = sge(region(s, r) + offs[r], len, mr->lkey);
		g->total += len;
		offs[r] += len + (size_t)(k % 3) + 1;
		assert_true(offs[r] < REGION);
	}
}

/* The list's bytes, in order. */
static void sgl_bytes(const struct sgl *g, uint8_t *out)
{
	for (int k = 0; k < g->n; k++) {
		memcpy(out, (void *)(uintptr_t)g->s[k].addr, g->s[k].length);
		out += g->s[k].length;
	}
}

/* The list region holds data (len bytes) scattered over the SGEs and
 * GUARD everywhere else. */
static void check_scattered(const struct sgl *g, struct side *s,
			    const uint8_t *data, uint32_t len)
{
	uint8_t *img[2] = { malloc(REGION), malloc(REGION) };
	uint32_t pos = 0;

	assert_true(img[0] && img[1]);
	memset(img[0], GUARD, REGION);
	memset(img[1], GUARD, REGION);
	for (int k = 0; k < g->n && pos < len; k++) {
		uint32_t c = g->s[k].length;
		const int r = k & 1;

		if (c > len - pos)
			c = len - pos;
		memcpy(img[r] + ((uint8_t *)(uintptr_t)g->s[k].addr -
				 region(s, r)),
		       data + pos, c);
		pos += c;
	}
	assert_memory_equal(region(s, 0), img[0], REGION);
	assert_memory_equal(region(s, 1), img[1], REGION);
	free(img[0]);
	free(img[1]);
}

static void drive(struct ibv_cq *cq, struct ibv_wc *wc, int n,
		  const char *what)
{
	int got = poll_n(cq, wc, n, WAIT_MS);

	if (got != n)
		fail_msg("%s: %d of %d completions", what, got, n);
}

static void check_ok(const struct ibv_wc *wc, uint64_t id,
		     enum ibv_wc_opcode op, uint32_t len)
{
	if (wc->status != IBV_WC_SUCCESS)
		fail_msg("wr_id %llu: %s", (unsigned long long)wc->wr_id,
			 ibv_wc_status_str(wc->status));
	assert_int_equal(wc->wr_id, id);
	assert_int_equal(wc->opcode, op);
	if (wc->byte_len != len)
		fail_msg("wr_id %llu opcode %d: byte_len %u, want %u",
			 (unsigned long long)wc->wr_id, wc->opcode,
			 wc->byte_len, len);
}

static void big_pair(struct pair *p)
{
	pair_up2(p, qp_new_cap(&A, &big_cap, QX_OPS),
		 qp_new_cap(&B, &big_cap, 0), &conn_std, &conn_std);
}

static int sge_setup(void **state)
{
	int ret = dp_group_setup(state);
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_WRITE;

	if (ret)
		return ret;
	buf2_a = aligned_alloc(4096, REGION);
	buf2_b = aligned_alloc(4096, REGION);
	if (!buf2_a || !buf2_b)
		return -1;
	mr2_a = ibv_reg_mr(A.pd, buf2_a, REGION, acc);
	mr2_b = ibv_reg_mr(B.pd, buf2_b, REGION, acc);
	return mr2_a && mr2_b ? 0 : -1;
}

static int sge_teardown(void **state)
{
	if (mr2_a)
		ibv_dereg_mr(mr2_a);
	if (mr2_b)
		ibv_dereg_mr(mr2_b);
	free(buf2_a);
	free(buf2_b);
	return dp_group_teardown(state);
}

/* Device, port and QP caps say what the provider does. */
static void test_caps(void **state)
{
	struct ibv_device_attr_ex dx;
	struct ibv_qp_cap cap = big_cap;
	struct ibv_port_attr pa;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	static const int sizes[] = { 1, 2, 100, 4097, ERNIC_MAX_CQE };

	assert_int_equal(ibv_query_device_ex(A.ctx, NULL, &dx), 0);
	assert_int_equal(dx.orig_attr.max_sge, ERNIC_MAX_SGE);
	assert_int_equal(dx.orig_attr.max_sge_rd, ERNIC_MAX_SGE);
	assert_int_equal(dx.orig_attr.phys_port_cnt, 1);
	assert_int_equal(dx.phys_port_cnt_ex, 1);
	assert_int_equal(dx.orig_attr.atomic_cap, IBV_ATOMIC_NONE);
	assert_int_equal(dx.orig_attr.max_srq, 0);
	assert_int_equal(dx.orig_attr.max_mw, 0);
	assert_int_equal(dx.orig_attr.max_cqe, ERNIC_MAX_CQE);
	assert_int_equal(ibv_query_port(A.ctx, 1, &pa), 0);
	assert_int_equal(pa.max_msg_sz, ERNIC_MAX_MSG_SIZE);

	qp = qp_new_cap(&A, &cap, 0);
	assert_int_equal(to_eqp(qp)->cap.max_send_sge, ERNIC_MAX_SGE);
	assert_int_equal(to_eqp(qp)->cap.max_recv_sge, ERNIC_MAX_SGE);
	assert_int_equal(to_eqp(qp)->cap.max_inline_data, ERNIC_MAX_INLINE);
	qp_destroy(qp);

	/* Past the limits: refused. */
	cap.max_send_sge = ERNIC_MAX_SGE + 1;
	assert_null(ibv_create_qp(A.pd, &(struct ibv_qp_init_attr){
		.send_cq = A.cq, .recv_cq = A.cq, .cap = cap,
		.qp_type = IBV_QPT_RC }));
	assert_int_equal(errno, EINVAL);
	cap = big_cap;
	cap.max_inline_data = ERNIC_MAX_INLINE + 1;
	assert_null(ibv_create_qp(A.pd, &(struct ibv_qp_init_attr){
		.send_cq = A.cq, .recv_cq = A.cq, .cap = cap,
		.qp_type = IBV_QPT_RC }));
	assert_int_equal(errno, EINVAL);

	/* The CQ size asked for, up to max_cqe. */
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		cq = ibv_create_cq(A.ctx, sizes[k], NULL, NULL, 0);
		assert_non_null(cq);
		assert_true(cq->cqe >= sizes[k]);
		assert_int_equal(ibv_destroy_cq(cq), 0);
	}
	assert_null(ibv_create_cq(A.ctx, ERNIC_MAX_CQE + 1, NULL, NULL, 0));

	/* REMOTE_ATOMIC: taken, as the kernel takes it; no atomics run. */
	mr = ibv_reg_mr(A.pd, A.buf, 4096,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	assert_non_null(mr);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_null(ibv_reg_mr(A.pd, A.buf, 4096, IBV_ACCESS_REMOTE_ATOMIC));
	qp = qp_new(&A, 4, 4, 0);
	{
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT, .port_num = 1,
			.qp_access_flags = IBV_ACCESS_REMOTE_ATOMIC |
					   IBV_ACCESS_REMOTE_READ,
		};
		struct ibv_qp_init_attr ia;

		assert_int_equal(ibv_modify_qp(qp, &a,
					       IBV_QP_STATE | IBV_QP_PORT |
					       IBV_QP_PKEY_INDEX |
					       IBV_QP_ACCESS_FLAGS), 0);
		assert_int_equal(ibv_query_qp(qp, &a, IBV_QP_ACCESS_FLAGS, &ia),
				 0);
		assert_true(a.qp_access_flags & IBV_ACCESS_REMOTE_ATOMIC);
	}
	qp_destroy(qp);
}

/* The staged WQE: one, over the slot's staging area. */
static void test_staged_wqe(void **state)
{
	struct ibv_send_wr wr, *bad;
	struct ernic_qp *eq;
	struct sgl g;
	struct pair p;
	uint8_t want[4096];

	big_pair(&p);
	eq = to_eqp(p.a);
	make_sgl(&g, &A, 3, 1, NULL);
	fill(region(&A, 0), REGION, 9);
	fill(region(&A, 1), REGION, 10);
	wr_set(&wr, 5, IBV_WR_RDMA_WRITE, g.s, g.n, IBV_SEND_SIGNALED);
	wr.wr.rdma.remote_addr = (uintptr_t)B.buf + DST_OFF;
	wr.wr.rdma.rkey = B.mr->rkey;
	assert_int_equal(ibv_post_send(p.a, &wr, &bad), 0);
	assert_int_equal(sqpi(&A, p.a), 1);
	check_wqe(p.a, 0, ERNIC_OP_RDMA_WRITE, eq->inl.bus, g.total,
		  (uintptr_t)B.buf + DST_OFF, B.mr->rkey, 0);
	sgl_bytes(&g, want);
	assert_memory_equal(eq->inl.va, want, g.total);
	drive(A.cq, (struct ibv_wc[1]){ 0 }, 1, "staged WRITE");
	pair_down(&p);
}

static void send_case(struct pair *p, int ns, int nr, unsigned int seed,
		      const uint32_t *slens, const uint32_t *rlens)
{
	struct ibv_recv_wr rwr = { .wr_id = 100 + ns }, *rbad;
	struct ibv_send_wr wr, *bad;
	struct sgl gs, gr;
	struct ibv_wc wc;
	static uint8_t want[REGION];

	make_sgl(&gr, &B, nr, seed + 1, rlens);
	make_sgl(&gs, &A, ns, seed, slens);
	fill(region(&A, 0), REGION, seed);
	fill(region(&A, 1), REGION, seed + 1);
	sgl_bytes(&gs, want);
	rwr.sg_list = gr.s;
	rwr.num_sge = gr.n;
	assert_int_equal(ibv_post_recv(p->b, &rwr, &rbad), 0);
	wr_set(&wr, ns, IBV_WR_SEND, gs.s, gs.n, IBV_SEND_SIGNALED);
	assert_int_equal(ibv_post_send(p->a, &wr, &bad), 0);
	drive(A.cq, &wc, 1, "SEND");
	check_ok(&wc, (uint64_t)ns, IBV_WC_SEND, gs.total);
	drive(B.cq, &wc, 1, "receive");
	check_ok(&wc, 100u + (uint64_t)ns, IBV_WC_RECV, gs.total);
	check_scattered(&gr, &B, want, gs.total);
}

/* SENDs gathered from 2, 3 and 16 SGEs into receives of 1, 3 and 16. */
static void test_send_sge(void **state)
{
	static const uint32_t one[] = { 4096 };
	static const uint32_t big[] = { 2000, 0, 1500, 596 };	/* 4096 */
	static const uint32_t rbig[] = { 1, 1023, 1024, 2048 };
	struct pair p;

	big_pair(&p);
	send_case(&p, 2, 3, 1, NULL, NULL);
	send_case(&p, 3, 16, 2, NULL, NULL);
	send_case(&p, 16, 16, 3, NULL, NULL);
	send_case(&p, 16, 1, 4, NULL, one);
	/* the whole staging slot, over several packets and SGEs */
	send_case(&p, 4, 4, 5, big, rbig);
	/* over the staging slot: a bounce buffer of its own */
	send_case(&p, 4, 3, 7, (const uint32_t[]){ 5001, 0, 3, 9000 },
		  (const uint32_t[]){ 7000, 0, 8000 });
	/* 16 B or less: SDATA, gathered too */
	send_case(&p, 2, 2, 6, (const uint32_t[]){ 7, 9 }, NULL);
	pair_down(&p);
}

static void rdma_case(struct pair *p, enum ibv_wr_opcode op, int n,
		      unsigned int seed, const uint32_t *lens, bool signaled)
{
	uint8_t *dst = B.buf + DST_OFF;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc[2];
	struct sgl g;
	uint8_t *want = malloc(REGION);

	assert_non_null(want);
	make_sgl(&g, &A, n, seed, lens);
	if (op == IBV_WR_RDMA_READ) {
		fill(dst, g.total, seed);
		peer_sync(&B, dst, g.total, false);
	} else {
		fill(region(&A, 0), REGION, seed);
		fill(region(&A, 1), REGION, seed + 1);
		memset(dst - 64, GUARD, g.total + 128);
		peer_sync(&B, dst - 64, g.total + 128, false);
	}
	wr_set(&wr, (uint64_t)n, op, g.s, g.n,
	       signaled ? IBV_SEND_SIGNALED : 0);
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = B.mr->rkey;
	wr.imm_data = htobe32(0x5eed0000u + (uint32_t)n);
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
		post_recv1(p->b, 77, B.buf, 0, B.mr->lkey);
	assert_int_equal(ibv_post_send(p->a, &wr, &bad), 0);
	if (!signaled) {
		/* a signaled WRITE behind it says it is done */
		post1(p->a, 999, IBV_WR_RDMA_WRITE, A.buf, 8,
		      (uintptr_t)B.buf + (4u << 20), B.mr->rkey, 0,
		      IBV_SEND_SIGNALED);
	}
	drive(A.cq, wc, 1, "RDMA");
	check_ok(&wc[0], signaled ? (uint64_t)n : 999,
		 signaled ? (op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
						      IBV_WC_RDMA_WRITE) :
			    IBV_WC_RDMA_WRITE,
		 signaled ? g.total : 8);
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		drive(B.cq, wc, 1, "WRITE with immediate");
		check_ok(&wc[0], 77, IBV_WC_RECV_RDMA_WITH_IMM, g.total);
		assert_int_equal(wc[0].imm_data, wr.imm_data);
	}
	if (op == IBV_WR_RDMA_READ) {
		check_scattered(&g, &A, dst, g.total);
	} else {
		sgl_bytes(&g, want);
		peer_sync(&B, dst - 64, g.total + 128, true);
		assert_memory_equal(dst, want, g.total);
		for (int k = 1; k <= 64; k++) {
			assert_int_equal(dst[-k], GUARD);
			assert_int_equal(dst[g.total + (uint32_t)k - 1], GUARD);
		}
	}
	free(want);
}

/* WRITE, WRITE with immediate and READ over 2, 3 and 16 SGEs: staged
 * (up to 4 KiB), and through a bounce buffer beyond. */
static void test_rdma_sge(void **state)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ,
	};
	static const uint32_t over[] = { 3001, 0, 2999, 5 };
	static const int ns[] = { 2, 3, 16 };
	struct pair p;

	big_pair(&p);
	for (size_t o = 0; o < 3; o++) {
		for (size_t k = 0; k < 3; k++)
			rdma_case(&p, ops[o], ns[k], (unsigned int)(o * 3 + k),
				  NULL, true);
		/* over the staging slot: a bounce buffer (a WRITE with
		 * immediate too: its peer sees one message) */
		rdma_case(&p, ops[o], 4, 20 + (unsigned int)o, over, true);
	}
	/* Unsignaled: a staged READ's data is scattered all the same. */
	rdma_case(&p, IBV_WR_RDMA_READ, 16, 30, NULL, false);
	rdma_case(&p, IBV_WR_RDMA_READ, 3, 31, over, false);
	pair_down(&p);
}

/*
 * Several SGEs over 8 MiB (one WQE's limit): a WRITE and a READ are
 * split into one WQE per SGE and per 8 MiB of an SGE, zero-copy, and
 * still make one completion of the whole length; the peer's bytes and
 * the local ones are exact, and the bytes around them untouched.
 */
#define BIG (1u << 20)

struct big_case {
	enum ibv_wr_opcode op;
	uint32_t off[3], len[3];	/* in A's buffer; len 0: mr2 SGE */
	uint32_t wqes;			/* WQEs the request takes */
};

static void big_sgl(const struct big_case *c, struct ibv_sge *s,
		    uint32_t *total)
{
	*total = 0;
	for (int k = 0; k < 3; k++) {
		if (c->len[k])
			s[k] = sge(A.buf + c->off[k], c->len[k], A.mr->lkey);
		else	/* a short one through the second MR */
			s[k] = sge(buf2_a + 5, 77, mr2_a->lkey);
		*total += s[k].length;
	}
}

static void big_case(struct pair *p, const struct big_case *c, uint64_t id)
{
	const uint32_t roff = 64;
	uint8_t *dst = B.buf + roff;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge s[3];
	struct ibv_wc wc;
	uint32_t total, pi0;
	uint8_t *want, *img;

	big_sgl(c, s, &total);
	assert_true(roff + total + 64 <= BUF_SIZE);
	want = malloc(total);
	img = malloc(BUF_SIZE);
	assert_true(want && img);
	fill(A.buf, BUF_SIZE, (unsigned int)id);
	fill(buf2_a, REGION, (unsigned int)id + 1);
	/* in DDR too: A's whole buffer is read back below */
	peer_sync(&A, A.buf, BUF_SIZE, false);
	assert_int_equal(ernicdv_sync_mr(mr2_a, buf2_a, REGION,
					 ERNICDV_SYNC_FOR_DEVICE), 0);
	if (c->op == IBV_WR_RDMA_READ) {
		fill(B.buf, BUF_SIZE, (unsigned int)id + 2);
		memcpy(want, dst, total);
		peer_sync(&B, B.buf, BUF_SIZE, false);
	} else {
		memset(B.buf, GUARD, BUF_SIZE);
		peer_sync(&B, B.buf, BUF_SIZE, false);
		for (uint32_t k = 0, at = 0; k < 3; at += s[k++].length)
			memcpy(want + at, (void *)(uintptr_t)s[k].addr,
			       s[k].length);
	}
	/* What A's memory must hold after a READ: its bytes with the
	 * peer's scattered over the SGEs. */
	memcpy(img, A.buf, BUF_SIZE);
	wr_set(&wr, id, c->op, s, 3, IBV_SEND_SIGNALED);
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = B.mr->rkey;
	/* WQEs written, rung or held back for max_rd_atomic */
	pi0 = to_eqp(p->a)->sq_pi;
	assert_int_equal(ibv_post_send(p->a, &wr, &bad), 0);
	assert_int_equal(to_eqp(p->a)->sq_pi,
			 (pi0 + c->wqes) % to_eqp(p->a)->sq_depth);
	drive(A.cq, &wc, 1, "RDMA over 8 MiB");
	check_ok(&wc, id, c->op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
						      IBV_WC_RDMA_WRITE,
		 total);
	assert_int_equal(poll_n(A.cq, &wc, 1, 50), 0);	/* only one */
	if (c->op == IBV_WR_RDMA_READ) {
		for (uint32_t k = 0, at = 0; k < 3; at += s[k++].length)
			if (c->len[k])
				memcpy(img + c->off[k], want + at,
				       s[k].length);
			else
				assert_memory_equal(buf2_a + 5, want + at, 77);
		peer_sync(&A, A.buf, BUF_SIZE, true);
		assert_memory_equal(A.buf, img, BUF_SIZE);
	} else {
		peer_sync(&B, B.buf, BUF_SIZE, true);
		assert_memory_equal(dst, want, total);
		for (uint32_t k = 0; k < roff; k++)
			assert_int_equal(B.buf[k], GUARD);
		for (uint32_t k = roff + total; k < BUF_SIZE; k++)
			if (B.buf[k] != GUARD)
				fail_msg("byte %u after the WRITE changed", k);
	}
	free(want);
	free(img);
}

static void test_rdma_over_8m(void **state)
{
	static const struct big_case cases[] = {
		/* 5 MiB + 1, 77 B (second MR), 4 MiB + 999: three WQEs */
		{ IBV_WR_RDMA_WRITE, { 3, 0, 5 * BIG + 16 },
		  { 5 * BIG + 1, 0, 4 * BIG + 999 }, 3 },
		/* 8 MiB + 5 (two WQEs), 1000 B, 77 B */
		{ IBV_WR_RDMA_READ, { 7, 9 * BIG, 0 },
		  { 8 * BIG + 5, 1000, 0 }, 4 },
		{ IBV_WR_RDMA_WRITE, { 7, 9 * BIG, 0 },
		  { 8 * BIG + 5, 1000, 0 }, 4 },
		{ IBV_WR_RDMA_READ, { 3, 0, 5 * BIG + 16 },
		  { 5 * BIG + 1, 0, 4 * BIG + 999 }, 3 },
	};
	struct ibv_send_wr wr, *bad;
	struct ibv_sge s[3];
	struct pair p;
	uint32_t total, pi0;

	big_pair(&p);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		big_case(&p, &cases[k], 80 + k);
	/* A WRITE with immediate cannot be split (its peer would see the
	 * last piece's length): refused, nothing posted. */
	big_sgl(&cases[0], s, &total);
	wr_set(&wr, 90, IBV_WR_RDMA_WRITE_WITH_IMM, s, 3, IBV_SEND_SIGNALED);
	wr.wr.rdma.remote_addr = (uintptr_t)B.buf;
	wr.wr.rdma.rkey = B.mr->rkey;
	pi0 = to_eqp(p.a)->sq_pi;
	assert_int_equal(ibv_post_send(p.a, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	assert_int_equal(to_eqp(p.a)->sq_pi, pi0);
	/* and the QP goes on */
	big_case(&p, &cases[0], 91);
	pair_down(&p);
}

/* qp_ex: wr_set_sge_list with several SGEs. */
static void test_qpex_sge(void **state)
{
	struct ibv_qp_ex *qx;
	struct ibv_wc wc;
	struct sgl g;
	struct pair p;
	uint8_t want[4096];
	uint8_t *dst = B.buf + DST_OFF;

	big_pair(&p);
	qx = ibv_qp_to_qp_ex(p.a);
	make_sgl(&g, &A, 5, 40, NULL);
	fill(region(&A, 0), REGION, 40);
	fill(region(&A, 1), REGION, 41);
	memset(dst, 0, g.total);
	peer_sync(&B, dst, g.total, false);
	ibv_wr_start(qx);
	qx->wr_id = 41;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, B.mr->rkey, (uintptr_t)dst);
	ibv_wr_set_sge_list(qx, (size_t)g.n, g.s);
	assert_int_equal(ibv_wr_complete(qx), 0);
	drive(A.cq, &wc, 1, "qp_ex WRITE");
	check_ok(&wc, 41, IBV_WC_RDMA_WRITE, g.total);
	sgl_bytes(&g, want);
	peer_sync(&B, dst, g.total, true);
	assert_memory_equal(dst, want, g.total);
	pair_down(&p);
}

/* Inline WRITEs of 0..max_inline_data bytes and SENDs of 1..max. */
static void test_inline_sizes(void **state)
{
	const uint32_t max = ERNIC_MAX_INLINE, stride = 512;
	uint8_t *src = A.buf + SGL_OFF, *dst = B.buf + DST_OFF;
	struct ibv_wc *wc = calloc(2 * (max + 1), sizeof(*wc));
	struct ibv_send_wr wr, *bad;
	struct ibv_sge s;
	struct pair p;

	assert_non_null(wc);
	big_pair(&p);
	memset(dst, GUARD, (size_t)(max + 1) * stride);
	peer_sync(&B, dst, (size_t)(max + 1) * stride, false);
	for (uint32_t len = 0; len <= max; len++) {
		fill(src, len, len);
		/* two segments: inline data may be a list too */
		struct ibv_sge seg[2] = { sge(src, len / 3, 0),
					  sge(src + len / 3, len - len / 3,
					      0) };

		wr_set(&wr, len, IBV_WR_RDMA_WRITE, seg, 2,
		       IBV_SEND_INLINE | IBV_SEND_SIGNALED);
		wr.wr.rdma.remote_addr = (uintptr_t)dst + len * stride;
		wr.wr.rdma.rkey = B.mr->rkey;
		assert_int_equal(ibv_post_send(p.a, &wr, &bad), 0);
		/* the data is the provider's once post returns */
		memset(src, 0, len);
	}
	drive(A.cq, wc, (int)max + 1, "inline WRITEs");
	peer_sync(&B, dst, (size_t)(max + 1) * stride, true);
	for (uint32_t len = 0; len <= max; len++) {
		uint8_t want[ERNIC_MAX_INLINE];

		check_ok(&wc[len], len, IBV_WC_RDMA_WRITE, len);
		fill(want, len, len);
		assert_memory_equal(dst + len * stride, want, len);
		assert_int_equal(dst[len * stride + len], GUARD);
	}

	for (uint32_t len = 1; len <= max; len++)
		post_recv1(p.b, len, B.buf + len * stride, stride, B.mr->lkey);
	for (uint32_t len = 1; len <= max; len++) {
		fill(src, len, len + 1000);
		s = sge(src, len, 0);
		wr_set(&wr, len, IBV_WR_SEND, &s, 1,
		       IBV_SEND_INLINE | IBV_SEND_SIGNALED);
		assert_int_equal(ibv_post_send(p.a, &wr, &bad), 0);
		memset(src, 0, len);
	}
	drive(A.cq, wc, (int)max, "inline SENDs");
	drive(B.cq, wc + max, (int)max, "inline receives");
	for (uint32_t len = 1; len <= max; len++) {
		uint8_t want[ERNIC_MAX_INLINE];

		check_ok(&wc[len - 1], len, IBV_WC_SEND, len);
		check_ok(&wc[max + len - 1], len, IBV_WC_RECV, len);
		fill(want, len, len + 1000);
		assert_memory_equal(B.buf + len * stride, want, len);
	}

	/* One byte over: refused, nothing queued. */
	s = sge(src, max + 1, 0);
	wr_set(&wr, 1, IBV_WR_RDMA_WRITE, &s, 1, IBV_SEND_INLINE);
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = B.mr->rkey;
	{
		uint32_t pi = sqpi(&A, p.a);

		assert_int_equal(ibv_post_send(p.a, &wr, &bad), EINVAL);
		assert_int_equal(sqpi(&A, p.a), pi);
	}
	pair_down(&p);
	free(wc);
}

/* A message longer than all of its receive's SGEs: local length error. */
static void test_recv_len_err(void **state)
{
	struct ibv_recv_wr rwr = { .wr_id = 7 }, *rbad;
	struct sgl gr;
	struct ibv_wc wc;
	struct pair p;

	big_pair(&p);
	make_sgl(&gr, &B, 3, 50, (const uint32_t[]){ 100, 0, 99 });
	rwr.sg_list = gr.s;
	rwr.num_sge = gr.n;
	assert_int_equal(ibv_post_recv(p.b, &rwr, &rbad), 0);
	post1(p.a, 8, IBV_WR_SEND, A.buf, 200, 0, 0, 0, IBV_SEND_SIGNALED);
	drive(B.cq, &wc, 1, "too long receive");
	assert_int_equal(wc.wr_id, 7);
	assert_int_equal(wc.status, IBV_WC_LOC_LEN_ERR);
	pair_down(&p);
}

/* Run fn with stderr captured; what it printed in out. */
static void capture(void (*fn)(struct pair *), struct pair *p, char *out,
		    size_t len)
{
	char path[] = "/tmp/ernic-sge-XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0);
	unlink(path);
	fflush(stderr);
	dup2(fd, 2);
	fn(p);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, out, len - 1, 0);
	out[n > 0 ? n : 0] = 0;
	close(fd);
}

#define REFUSED_POST(qp, wrp, err)                                       \
	do {                                                             \
		uint32_t pi_ = sqpi(&A, (qp));                           \
		bad = NULL;                                              \
		assert_int_equal(ibv_post_send((qp), (wrp), &bad), err); \
		assert_ptr_equal(bad, (wrp));                            \
		assert_int_equal(sqpi(&A, (qp)), pi_);                   \
	} while (0)

static void refusals(struct pair *p)
{
	struct ibv_mr *ro = ibv_reg_mr(A.pd, A.buf + SGL_OFF, 4096,
				       IBV_ACCESS_REMOTE_READ);
	struct ibv_recv_wr rwr = { .wr_id = 3 }, *rbad;
	struct ibv_send_wr wr, *bad;
	struct sgl g;

	assert_non_null(ro);
	/* SGE 2 of 3 with a wrong key: the whole request goes. */
	make_sgl(&g, &A, 3, 60, (const uint32_t[]){ 10, 20, 30 });
	g.s[2].lkey ^= 0x100;
	wr_set(&wr, 1, IBV_WR_RDMA_WRITE, g.s, g.n, IBV_SEND_SIGNALED);
	wr.wr.rdma.remote_addr = (uintptr_t)B.buf;
	wr.wr.rdma.rkey = B.mr->rkey;
	REFUSED_POST(p->a, &wr, EINVAL);
	wr.opcode = IBV_WR_SEND;
	REFUSED_POST(p->a, &wr, EINVAL);
	/* past the end of its MR (the second MR is 64 KiB) */
	make_sgl(&g, &A, 2, 61, (const uint32_t[]){ 10, 20 });
	g.s[1].addr = (uintptr_t)region(&A, 1) + REGION - 8;
	wr_set(&wr, 1, IBV_WR_RDMA_WRITE, g.s, g.n, IBV_SEND_SIGNALED);
	wr.wr.rdma.remote_addr = (uintptr_t)B.buf;
	wr.wr.rdma.rkey = B.mr->rkey;
	REFUSED_POST(p->a, &wr, EINVAL);
	/* a READ into an MR without local write */
	make_sgl(&g, &A, 2, 62, (const uint32_t[]){ 10, 20 });
	g.s[1].lkey = ro->lkey;
	g.s[1].addr = (uintptr_t)A.buf + SGL_OFF + 100;
	wr_set(&wr, 1, IBV_WR_RDMA_READ, g.s, g.n, IBV_SEND_SIGNALED);
	wr.wr.rdma.remote_addr = (uintptr_t)B.buf;
	wr.wr.rdma.rkey = B.mr->rkey;
	REFUSED_POST(p->a, &wr, EINVAL);
	/* a gathered SEND over 8 MiB */
	make_sgl(&g, &A, 2, 63, (const uint32_t[]){ 4000, 97 });
	g.s[0].addr = (uintptr_t)A.buf;
	g.s[0].length = 8u << 20;
	wr_set(&wr, 1, IBV_WR_SEND, g.s, g.n, IBV_SEND_SIGNALED);
	REFUSED_POST(p->a, &wr, EINVAL);
	/* more SGEs than max_send_sge */
	wr.num_sge = ERNIC_MAX_SGE + 1;
	REFUSED_POST(p->a, &wr, EINVAL);
	/* a receive with a bad SGE in its list */
	make_sgl(&g, &B, 3, 64, (const uint32_t[]){ 10, 20, 30 });
	g.s[1].lkey ^= 0x100;
	rwr.sg_list = g.s;
	rwr.num_sge = g.n;
	assert_int_equal(ibv_post_recv(p->b, &rwr, &rbad), EINVAL);
	assert_ptr_equal(rbad, &rwr);
	assert_int_equal(ibv_dereg_mr(ro), 0);
}

/* Refused requests change nothing; their reasons are logged at
 * VERBS_LOG_LEVEL 4 (debug), and nothing is printed below it. */
static void test_refused_sge(void **state)
{
	const char *lv = getenv("VERBS_LOG_LEVEL");
	char out[8192];
	struct pair p;

	big_pair(&p);
	capture(refusals, &p, out, sizeof(out));
	if (lv && atoi(lv) >= 4) {
		assert_non_null(strstr(out, "SGE 2 (lkey"));
		assert_non_null(strstr(out, "not in a locally writable MR"));
		assert_non_null(strstr(out, "SEND of 8388705 B"));
		assert_non_null(strstr(out, "num_sge 17, max_send_sge 16"));
		assert_non_null(strstr(out, "post_recv: QP"));
	} else {
		assert_string_equal(out, "");
	}
	/* The QP still works after all that. */
	send_case(&p, 3, 3, 70, NULL, NULL);
	pair_down(&p);
}

int dp_run_sge(void)
{
	const struct CMUnitTest sge_tests[] = {
		cmocka_unit_test_teardown(test_caps, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_staged_wqe, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_send_sge, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_rdma_sge, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_rdma_over_8m, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_qpex_sge, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_inline_sizes, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_recv_len_err, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_refused_sge, dp_qp_cleanup),
	};

	return cmocka_run_group_tests_name("datapath_sge", sge_tests,
					   sge_setup, sge_teardown);
}
