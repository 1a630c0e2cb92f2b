// SPDX-License-Identifier: MIT
/*
 * Data-path tests that need the model's queue engine: every opcode end
 * to end with the data checked at both ends, and the error completions
 * (remote access, RNR and transport retries exceeded, flush). Every wait
 * is bounded (WAIT_MS) and says what it waited for.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "datapath_util.h"

/* Completions expected on one CQ. */
struct want {
	struct ibv_cq *cq;
	int n, got;
	struct ibv_wc wc[512];
};

/* Expect na completions on A's CQ and nb on B's, from now on. */
static void want_ab(struct want w[2], int na, int nb)
{
	w[0] = (struct want){ .cq = A.cq, .n = na };
	w[1] = (struct want){ .cq = B.cq, .n = nb };
}

/* Poll all CQs together (a receiver must drain while the sender sends)
 * until each has its completions; fail with a clear message otherwise. */
static void drive(struct want *w, int nw, const char *what)
{
	struct timespec t0, t;
	bool done;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		done = true;
		for (int k = 0; k < nw; k++) {
			int r = w[k].got < w[k].n ?
					ibv_poll_cq(w[k].cq, w[k].n - w[k].got,
						    &w[k].wc[w[k].got]) :
					0;

			assert_true(r >= 0);
			w[k].got += r;
			done = done && w[k].got == w[k].n;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (!done && (t.tv_sec - t0.tv_sec) * 1000 +
				     (t.tv_nsec - t0.tv_nsec) / 1000000 >
			     WAIT_MS) {
			for (int k = 0; k < nw; k++)
				print_error("  cq %d: %d of %d completions\n",
					    k, w[k].got, w[k].n);
			fail_msg("%s: no completion within %d ms (is the "
				 "model's queue engine running?)",
				 what, WAIT_MS);
		}
	} while (!done);
}

static void check_wc_n(const struct ibv_wc *wc, uint64_t id,
		       enum ibv_wc_status st, enum ibv_wc_opcode op,
		       struct ibv_qp *qp, uint32_t peer_qpn)
{
	if (wc->status != st)
		fail_msg("wr_id %llu: status %s (vendor_err 0x%x), want %s",
			 (unsigned long long)wc->wr_id,
			 ibv_wc_status_str(wc->status), wc->vendor_err,
			 ibv_wc_status_str(st));
	assert_int_equal(wc->wr_id, id);
	assert_int_equal(wc->opcode, op);
	assert_int_equal(wc->qp_num, qp->qp_num);
	assert_int_equal(wc->src_qp, peer_qpn);
}

static void check_wc(const struct ibv_wc *wc, uint64_t id,
		     enum ibv_wc_status st, enum ibv_wc_opcode op,
		     struct ibv_qp *qp, struct ibv_qp *peer)
{
	check_wc_n(wc, id, st, op, qp, peer->qp_num);
}

/* A SEND of len bytes A -> B, checked at both ends. */
static void send_check(struct pair *p, enum ibv_wr_opcode op, size_t len,
		       uint32_t imm)
{
	struct want w[2] = { { .cq = A.cq, .n = 1 }, { .cq = B.cq, .n = 1 } };
	char what[64];

	fill(A.buf, len, (unsigned int)len);
	memset(B.buf, 0, len + 64);
	post_recv1(p->b, 7, B.buf, (uint32_t)len + 64, B.mr->lkey);
	post1(p->a, 8, op, A.buf, (uint32_t)len, 0, 0, imm, IBV_SEND_SIGNALED);
	snprintf(what, sizeof(what), "SEND of %zu bytes", len);
	drive(w, 2, what);
	check_wc(&w[0].wc[0], 8, IBV_WC_SUCCESS, IBV_WC_SEND, p->a, p->b);
	check_wc(&w[1].wc[0], 7, IBV_WC_SUCCESS, IBV_WC_RECV, p->b, p->a);
	/* The real length, never the buffer's. */
	assert_int_equal(w[1].wc[0].byte_len, len);
	assert_memory_equal(B.buf, A.buf, len);
	assert_int_equal(B.buf[len], 0);
	if (op == IBV_WR_SEND_WITH_IMM) {
		assert_int_equal(w[1].wc[0].wc_flags, IBV_WC_WITH_IMM);
		assert_int_equal(w[1].wc[0].imm_data, htobe32(imm));
	} else if (op == IBV_WR_SEND_WITH_INV) {
		assert_int_equal(w[1].wc[0].wc_flags, IBV_WC_WITH_INV);
		assert_int_equal(w[1].wc[0].invalidated_rkey, imm);
	} else {
		assert_int_equal(w[1].wc[0].wc_flags, 0);
	}
}

static void test_send(void **state)
{
	static const size_t sizes[] = { 1, 16, 17, PMTU, PMTU + 1, 1u << 20 };
	struct pair p;

	pair_up(&p, 16, 16);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		send_check(&p, IBV_WR_SEND, sizes[k], 0);
	send_check(&p, IBV_WR_SEND_WITH_IMM, 8, 0xdeadbeef);
	send_check(&p, IBV_WR_SEND_WITH_IMM, 3 * PMTU + 5, 0x01020304);
	send_check(&p, IBV_WR_SEND_WITH_INV, 100, B.mr->rkey);
	send_check(&p, IBV_WR_SEND_WITH_INV, 2 * PMTU, 0x4242);
	pair_down(&p);
}

/* Receive ordering and the receive-side corner cases. */
static void test_recv_side(void **state)
{
	struct want w[2] = { { .cq = A.cq, .n = 1 }, { .cq = B.cq, .n = 1 } };
	struct ibv_recv_wr rwr = { .wr_id = 20 }, *rbad;
	struct pair p;

	pair_up(&p, 16, 16);
	/* No receive posted: not ACKed (RNR NAKs, retried for ever with
	 * conn_std), so the sender sees nothing; it completes once the
	 * receive is posted. Destroying B meanwhile would lose nothing the
	 * sender thinks delivered. */
	fill(A.buf, 3000, 7);
	memset(B.buf, 0, 4096);
	post1(p.a, 1, IBV_WR_SEND, A.buf, 3000, 0, 0, 0, IBV_SEND_SIGNALED);
	assert_int_equal(poll_n(A.cq, w[0].wc, 1, 100), 0);
	assert_int_equal(poll_n(B.cq, w[1].wc, 1, 50), 0);
	post_recv1(p.b, 2, B.buf, 4096, B.mr->lkey);
	want_ab(w, 1, 1);
	drive(w, 2, "receive posted late");
	check_wc(&w[0].wc[0], 1, IBV_WC_SUCCESS, IBV_WC_SEND, p.a, p.b);
	check_wc(&w[1].wc[0], 2, IBV_WC_SUCCESS, IBV_WC_RECV, p.b, p.a);
	assert_int_equal(w[1].wc[0].byte_len, 3000);
	assert_memory_equal(B.buf, A.buf, 3000);

	/* Too long for the buffer: local length error with the real length;
	 * the message is consumed and the next one arrives whole. */
	post_recv1(p.b, 3, B.buf, 1000, B.mr->lkey);
	post_recv1(p.b, 4, B.buf + 8192, 4096, B.mr->lkey);
	post1(p.a, 5, IBV_WR_SEND, A.buf, 2500, 0, 0, 0, 0);
	post1(p.a, 6, IBV_WR_SEND, A.buf + 100, 2000, 0, 0, 0, 0);
	want_ab(w, 0, 2);
	drive(w, 2, "SEND longer than the receive buffer");
	check_wc(&w[1].wc[0], 3, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, p.b, p.a);
	assert_int_equal(w[1].wc[0].byte_len, 2500);
	check_wc(&w[1].wc[1], 4, IBV_WC_SUCCESS, IBV_WC_RECV, p.b, p.a);
	assert_int_equal(w[1].wc[1].byte_len, 2000);
	assert_memory_equal(B.buf + 8192, A.buf + 100, 2000);

	/* SEND, WRITE with immediate (into a receive without a buffer),
	 * SEND: completed in arrival order. */
	post_recv1(p.b, 10, B.buf, 64, B.mr->lkey);
	assert_int_equal(ibv_post_recv(p.b, &rwr, &rbad), 0);
	post_recv1(p.b, 30, B.buf + 64, 64, B.mr->lkey);
	post1(p.a, 11, IBV_WR_SEND, A.buf, 40, 0, 0, 0, 0);
	post1(p.a, 21, IBV_WR_RDMA_WRITE_WITH_IMM, A.buf, 2 * PMTU,
	      (uintptr_t)B.buf + 4096, B.mr->rkey, 99, 0);
	post1(p.a, 31, IBV_WR_SEND, A.buf, 50, 0, 0, 0, 0);
	want_ab(w, 0, 3);
	drive(w, 2, "SEND, WRITE_IMM, SEND");
	check_wc(&w[1].wc[0], 10, IBV_WC_SUCCESS, IBV_WC_RECV, p.b, p.a);
	check_wc(&w[1].wc[1], 20, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
		 p.b, p.a);
	assert_int_equal(w[1].wc[1].byte_len, 2 * PMTU);
	assert_int_equal(w[1].wc[1].imm_data, htobe32(99));
	check_wc(&w[1].wc[2], 30, IBV_WC_SUCCESS, IBV_WC_RECV, p.b, p.a);
	assert_int_equal(w[1].wc[2].byte_len, 50);
	pair_down(&p);
}

static void test_write_read(void **state)
{
	struct want w[2] = { { .cq = A.cq, .n = 1 }, { .cq = B.cq, .n = 1 } };
	const size_t len = 256u << 10;
	struct ibv_wc wc;
	struct pair p;

	pair_up(&p, 16, 16);
	fill(A.buf, len, 3);
	memset(B.buf, 0, len + 128);
	peer_sync(&B, B.buf, len + 128, false);
	post1(p.a, 1, IBV_WR_RDMA_WRITE, A.buf, len, (uintptr_t)B.buf + 64,
	      B.mr->rkey, 0, IBV_SEND_SIGNALED);
	want_ab(w, 1, 0);
	drive(w, 2, "RDMA WRITE");
	check_wc(&w[0].wc[0], 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, p.a, p.b);
	peer_sync(&B, B.buf, len + 128, true);
	assert_memory_equal(B.buf + 64, A.buf, len);
	assert_int_equal(B.buf[63], 0);
	assert_int_equal(B.buf[len + 64], 0);
	/* A plain WRITE consumes no receive request. */
	assert_int_equal(poll_n(B.cq, &wc, 1, 50), 0);

	/* WRITE with immediate: data, then a completion with the length. */
	fill(A.buf, len, 4);
	post_recv1(p.b, 2, B.buf + (4u << 20), 64, B.mr->lkey);
	post1(p.a, 3, IBV_WR_RDMA_WRITE_WITH_IMM, A.buf, len,
	      (uintptr_t)B.buf, B.mr->rkey, 0xcafe, IBV_SEND_SIGNALED);
	want_ab(w, 1, 1);
	drive(w, 2, "RDMA WRITE with immediate");
	check_wc(&w[0].wc[0], 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, p.a, p.b);
	check_wc(&w[1].wc[0], 2, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
		 p.b, p.a);
	assert_int_equal(w[1].wc[0].byte_len, len);
	assert_int_equal(w[1].wc[0].wc_flags, IBV_WC_WITH_IMM);
	assert_int_equal(w[1].wc[0].imm_data, htobe32(0xcafe));
	peer_sync(&B, B.buf, len, true);
	assert_memory_equal(B.buf, A.buf, len);

	/* READ back what B holds into A. */
	fill(B.buf, len, 5);
	peer_sync(&B, B.buf, len, false);
	memset(A.buf, 0, len);
	post1(p.a, 4, IBV_WR_RDMA_READ, A.buf, len, (uintptr_t)B.buf,
	      B.mr->rkey, 0, IBV_SEND_SIGNALED);
	want_ab(w, 1, 0);
	drive(w, 2, "RDMA READ");
	check_wc(&w[0].wc[0], 4, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, p.a, p.b);
	assert_int_equal(w[0].wc[0].byte_len, len);
	assert_memory_equal(A.buf, B.buf, len);
	pair_down(&p);
}

/* Inline data, the qp_ex path, and unsignaled requests retired. */
/*
 * max_rd_atomic: no more READs in flight than the peer's responder
 * resources (it NAKs more). With 1, of six READs posted at once only the
 * first is rung (SQPIi), and the rest go one by one as each completes;
 * the WRITE behind them waits its turn. With 16 everything is rung at
 * once (the IP keeps at most 16 WQEs outstanding anyway).
 */
static void test_rd_atomic_limit(void **state)
{
	static const struct conn c16 = { 14, 7, 7, 1, 16 };
	struct want w = { .cq = A.cq, .n = 7 };
	struct ibv_send_wr wr[7], *bad;
	struct ibv_sge s[7];
	struct pair p;

	for (int lim = 1; lim <= 16; lim += 15) {
		pair_up2(&p, qp_new(&A, 16, 4, 0), qp_new(&B, 16, 4, 0),
			 lim == 1 ? &conn_std : &c16, &conn_std);
		fill(B.buf, 6 * 4096, (unsigned int)lim);
		memset(A.buf, 0, 8 * 4096);
		peer_sync(&B, B.buf, 6 * 4096, false);
		for (int k = 0; k < 7; k++) {
			s[k] = sge(A.buf + 4096 * k, 4096, A.mr->lkey);
			wr_set(&wr[k], k, k < 6 ? IBV_WR_RDMA_READ :
					   IBV_WR_RDMA_WRITE,
			       &s[k], 1, IBV_SEND_SIGNALED);
			wr[k].wr.rdma.remote_addr = (uintptr_t)B.buf + 4096 * k;
			wr[k].wr.rdma.rkey = B.mr->rkey;
		}
		chain(wr, 7);
		assert_int_equal(ibv_post_send(p.a, wr, &bad), 0);
		assert_int_equal(sqpi(&A, p.a), lim == 1 ? 1 : 7);
		w.got = 0;
		drive(&w, 1, "READs under max_rd_atomic");
		for (int k = 0; k < 7; k++)
			check_wc(&w.wc[k], k, IBV_WC_SUCCESS,
				 k < 6 ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE,
				 p.a, p.b);
		assert_int_equal(sqpi(&A, p.a), 7);
		assert_memory_equal(A.buf, B.buf, 6 * 4096);
		pair_down(&p);
	}
}

static void test_inline_qpex_unsignaled(void **state)
{
	struct want w[2] = { { .cq = A.cq, .n = 2 }, { .cq = B.cq, .n = 1 } };
	uint8_t src[16] = "fifteen bytes..";
	struct ibv_sge s = sge(src, 10, 0);
	struct ibv_send_wr wr[2], *bad;
	struct ibv_qp_ex *qx;
	struct pair p;

	pair_up2(&p, qp_new(&A, 12, 4, QX_OPS), qp_new(&B, 12, 4, 0),
		 &conn_std, &conn_std);
	memset(B.buf, 0, 8192);
	peer_sync(&B, B.buf, 8192, false);
	post_recv1(p.b, 1, B.buf, 64, B.mr->lkey);
	wr_set(&wr[0], 2, IBV_WR_SEND, &s, 1,
	       IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	wr_set(&wr[1], 3, IBV_WR_RDMA_WRITE, &s, 1,
	       IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	wr[1].wr.rdma.remote_addr = (uintptr_t)B.buf + 4096;
	wr[1].wr.rdma.rkey = B.mr->rkey;
	chain(wr, 2);
	s.length = 16;
	assert_int_equal(ibv_post_send(p.a, wr, &bad), 0);
	memset(src, 0, sizeof(src));	/* reused at once */
	drive(w, 2, "inline SEND and WRITE");
	check_wc(&w[0].wc[0], 2, IBV_WC_SUCCESS, IBV_WC_SEND, p.a, p.b);
	check_wc(&w[0].wc[1], 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, p.a, p.b);
	assert_int_equal(w[1].wc[0].byte_len, 16);
	assert_memory_equal(B.buf, "fifteen bytes..", 16);
	peer_sync(&B, B.buf + 4096, 16, true);
	assert_memory_equal(B.buf + 4096, "fifteen bytes..", 16);

	/* qp_ex: SEND and WRITE end to end. */
	qx = ibv_qp_to_qp_ex(p.a);
	fill(A.buf, 8192, 6);
	post_recv1(p.b, 4, B.buf, 4096, B.mr->lkey);
	ibv_wr_start(qx);
	qx->wr_id = 5;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, A.mr->lkey, (uintptr_t)A.buf, 3000);
	qx->wr_id = 6;
	ibv_wr_rdma_write(qx, B.mr->rkey, (uintptr_t)B.buf + 4096);
	ibv_wr_set_sge(qx, A.mr->lkey, (uintptr_t)A.buf + 4096, 4096);
	assert_int_equal(ibv_wr_complete(qx), 0);
	want_ab(w, 2, 1);
	drive(w, 2, "qp_ex SEND and WRITE");
	check_wc(&w[0].wc[0], 5, IBV_WC_SUCCESS, IBV_WC_SEND, p.a, p.b);
	check_wc(&w[0].wc[1], 6, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, p.a, p.b);
	check_wc(&w[1].wc[0], 4, IBV_WC_SUCCESS, IBV_WC_RECV, p.b, p.a);
	assert_int_equal(w[1].wc[0].byte_len, 3000);
	assert_memory_equal(B.buf, A.buf, 3000);
	peer_sync(&B, B.buf + 4096, 4096, true);
	assert_memory_equal(B.buf + 4096, A.buf + 4096, 4096);

	/* Ten unsignaled WRITEs and a signaled one, three times over, on
	 * a ring that holds twelve: only if the one completion retires all
	 * eleven is there room for the next round. */
	for (int round = 0; round < 3; round++) {
		for (int k = 0; k < 11; k++)
			post1(p.a, 100 + k, IBV_WR_RDMA_WRITE, A.buf + 64 * k,
			      64, (uintptr_t)B.buf + 64 * k, B.mr->rkey, 0,
			      k == 10 ? IBV_SEND_SIGNALED : 0);
		want_ab(w, 1, 0);
		drive(w, 1, "unsignaled WRITEs");
		check_wc(&w[0].wc[0], 110, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
			 p.a, p.b);
		assert_int_equal(poll_n(A.cq, w[0].wc, 1, 20), 0);
	}
	pair_down(&p);
}

/*
 * Request 1 (posted by the caller) fails with st; requests 2 and 3 posted
 * right behind it and receive 4 are flushed (IBTA: error completions are
 * reported, signaled or not), and so is what is posted afterwards.
 */
static void expect_error(struct ibv_qp *qp, uint32_t peer_qpn,
			 enum ibv_wc_status st, enum ibv_wc_opcode op,
			 uint32_t syndrome, const char *what)
{
	struct want w = { .cq = A.cq, .n = 4 };
	struct ibv_sge s = sge(A.buf + (1u << 20), 8, A.mr->lkey);
	struct ibv_send_wr wr[2], *bad;
	uint64_t next = 1;

	wr_set(&wr[0], 2, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED);
	wr_set(&wr[1], 3, IBV_WR_SEND, &s, 1, 0);
	chain(wr, 2);
	assert_int_equal(ibv_post_send(qp, wr, &bad), 0);
	post_recv1(qp, 4, A.buf + (1u << 20), 64, A.mr->lkey);
	drive(&w, 1, what);
	for (int k = 0; k < 4; k++) {
		const struct ibv_wc *wc = &w.wc[k];

		/* Send and receive sides may interleave. */
		if (wc->opcode == IBV_WC_RECV) {
			check_wc_n(wc, 4, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, qp,
				   peer_qpn);
			continue;
		}
		check_wc_n(wc, next, next == 1 ? st : IBV_WC_WR_FLUSH_ERR,
			   next == 1 ? op : IBV_WC_SEND, qp, peer_qpn);
		if (next == 1)
			assert_int_equal(wc->vendor_err, syndrome);
		next++;
	}
	wr[0].next = NULL;
	assert_int_equal(ibv_post_send(qp, wr, &bad), 0);
	assert_int_equal(poll_n(A.cq, w.wc, 1, WAIT_MS), 1);
	check_wc_n(&w.wc[0], 2, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, qp, peer_qpn);
}

static void test_remote_access_errors(void **state)
{
	const uint64_t rb = (uintptr_t)B.buf;
	uint8_t *tail = B.buf + BUF_SIZE - 4096;
	struct {
		enum ibv_wr_opcode op;
		uint64_t raddr;
		uint32_t rkey_xor;
		enum ibv_wc_opcode wop;
		const char *what;
	} cases[] = {
		{ IBV_WR_RDMA_WRITE, rb, 0x100, IBV_WC_RDMA_WRITE,
		  "WRITE, bad rkey" },
		{ IBV_WR_RDMA_WRITE, rb + BUF_SIZE - 4096, 0, IBV_WC_RDMA_WRITE,
		  "WRITE past the MR" },
		{ IBV_WR_RDMA_READ, rb, 0x100, IBV_WC_RDMA_READ,
		  "READ, bad rkey" },
		{ IBV_WR_RDMA_READ, rb + BUF_SIZE - 4096, 0, IBV_WC_RDMA_READ,
		  "READ past the MR" },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct pair p;

		pair_up(&p, 16, 16);
		memset(B.buf, 0x5a, 8192);
		memset(tail, 0x5a, 4096);
		peer_sync(&B, B.buf, 8192, false);
		peer_sync(&B, tail, 4096, false);
		memset(A.buf, 0xa5, 8192);
		/* Unsignaled: error completions are reported anyway. */
		post1(p.a, 1, cases[c].op, A.buf, 8192, cases[c].raddr,
		      B.mr->rkey ^ cases[c].rkey_xor, 0, 0);
		/* NAK remote access error (AETH syndrome 0x62). */
		expect_error(p.a, p.b->qp_num, IBV_WC_REM_ACCESS_ERR,
			     cases[c].wop, 0x62, cases[c].what);
		/* Nothing moved at either end. */
		peer_sync(&B, B.buf, 8192, true);
		peer_sync(&B, tail, 4096, true);
		for (size_t k = 0; k < 4096; k++) {
			assert_int_equal(B.buf[k], 0x5a);
			assert_int_equal(tail[k], 0x5a);
		}
		for (size_t k = 0; k < 8192; k++)
			assert_int_equal(A.buf[k], 0xa5);
		pair_down(&p);
	}
}

/*
 * PG332 "QP Fatal Recovery" through verbs: a QP the IP made FATAL (NAK
 * remote access) goes to ERR, which runs the clearing steps (the IP
 * retires its SQ, then the QP is disabled under recovery), then to
 * RESET, which runs the reinitializing steps; brought up again it
 * carries data. model_recover checks the steps one by one.
 */
static void test_fatal_recovery_reuse(void **state)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct want w = { .cq = A.cq, .n = 1 };
	struct pair p, q;
	uint32_t i;

	pair_up(&p, 16, 16);
	i = p.a->qp_num;
	post1(p.a, 1, IBV_WR_RDMA_WRITE, A.buf, 64, (uintptr_t)B.buf,
	      B.mr->rkey ^ 0x100, 0, IBV_SEND_SIGNALED);
	expect_error(p.a, p.b->qp_num, IBV_WC_REM_ACCESS_ERR,
		     IBV_WC_RDMA_WRITE, 0x62, "WRITE, bad rkey");
	assert_true(tu_rd(A.ctx, ERNIC_QP(i, ERNIC_STATQP)) &
		    ERNIC_STATQP_FATAL);
	assert_int_equal(ibv_modify_qp(p.a, &a, IBV_QP_STATE), 0);
	assert_int_equal(tu_rd(A.ctx, ERNIC_QP(i, ERNIC_QPCONF)) &
				 (ERNIC_QPCONF_QP_EN |
				  ERNIC_QPCONF_QP_UNDER_RECOVERY),
			 ERNIC_QPCONF_QP_UNDER_RECOVERY);
	assert_int_equal(tu_rd(A.ctx, ERNIC_QP(i, ERNIC_CQHEAD)),
			 tu_rd(A.ctx, ERNIC_QP(i, ERNIC_SQPI)));
	assert_true(tu_rd(A.ctx, ERNIC_RESPHNDSTS) &
		    ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN);
	a.qp_state = IBV_QPS_RESET;
	assert_int_equal(ibv_modify_qp(p.a, &a, IBV_QP_STATE), 0);
	for (size_t k = 0; k < 5; k++)
		assert_int_equal(tu_rd(A.ctx, ERNIC_QP(i, ((const uint32_t[]){
			ERNIC_STATRQPIDB, ERNIC_STATRQBUFCA, ERNIC_RQCI,
			ERNIC_CQHEAD, ERNIC_SQPI })[k])), 0);
	assert_int_equal(tu_rd(A.ctx, ERNIC_QP(i, ERNIC_QPCONF)),
			 ERNIC_QPCONF_QP_UNDER_RECOVERY);
	assert_int_equal(tu_rd(A.ctx, ERNIC_XRNICADCONF) &
				 ERNIC_XRNICADCONF_SW_OVERRIDE, 0);

	/* The same QP, a new peer: a WRITE lands whole. */
	pair_up2(&q, p.a, qp_new(&B, 16, 16, 0), &conn_std, &conn_std);
	assert_int_equal(tu_rd(A.ctx, ERNIC_QP(i, ERNIC_STATQP)) &
				 ERNIC_STATQP_FATAL, 0);
	fill(A.buf, 8192, 9);
	post1(q.a, 7, IBV_WR_RDMA_WRITE, A.buf, 8192, (uintptr_t)B.buf,
	      B.mr->rkey, 0, IBV_SEND_SIGNALED);
	drive(&w, 1, "WRITE on the recovered QP");
	check_wc(&w.wc[0], 7, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, q.a, q.b);
	peer_sync(&B, B.buf, 8192, true);
	assert_memory_equal(B.buf, A.buf, 8192);
	qp_destroy(p.b);
	pair_down(&q);
}

/* The peer posted 10 receives and no more: 10 SENDs succeed, the 11th
 * is RNR-NAKed until rnr_retry runs out (a SEND is only ACKed into a
 * posted receive). */
static void test_rnr_retry_exceeded(void **state)
{
	static struct want w = { .n = 11 };
	const struct conn ca = { 14, 7, 1, 1, 0 };
	struct ibv_sge s = sge(A.buf, 8, A.mr->lkey);
	static struct ibv_send_wr wr[11];
	struct ibv_send_wr *bad;
	struct ibv_wc rwc[10];
	struct pair p;

	pair_up2(&p, qp_new(&A, 16, 4, 0), qp_new(&B, 16, 16, 0), &ca,
		 &conn_std);
	for (int k = 0; k < 10; k++)
		post_recv1(p.b, 100 + k, B.buf + 64 * k, 64, B.mr->lkey);
	for (int k = 0; k < 11; k++)
		wr_set(&wr[k], k, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED);
	chain(wr, 11);
	assert_int_equal(ibv_post_send(p.a, wr, &bad), 0);
	w.cq = A.cq;
	w.got = 0;
	drive(&w, 1, "SENDs beyond the posted receives");
	for (int k = 0; k < 10; k++)
		check_wc(&w.wc[k], k, IBV_WC_SUCCESS, IBV_WC_SEND, p.a, p.b);
	check_wc(&w.wc[10], 10, IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_SEND, p.a,
		 p.b);
	assert_int_equal(w.wc[10].vendor_err & 0x60, 0x20);
	assert_int_equal(poll_n(B.cq, rwc, 10, WAIT_MS), 10);
	for (int k = 0; k < 10; k++)
		check_wc(&rwc[k], 100 + k, IBV_WC_SUCCESS, IBV_WC_RECV, p.b,
			 p.a);
	pair_down(&p);
}

/* Nobody answers: the transport timer expires retry_cnt times. */
static void test_retry_exceeded(void **state)
{
	const struct conn ca = { 8, 1, 7, 1, 0 };	/* ~1 ms, one retry */
	uint32_t gone;
	struct pair p;

	pair_up2(&p, qp_new(&A, 16, 4, 0), qp_new(&B, 16, 4, 0), &ca,
		 &conn_std);
	gone = p.b->qp_num;
	qp_destroy(p.b);
	p.b = NULL;
	post1(p.a, 1, IBV_WR_SEND, A.buf, 64, 0, 0, 0, 0);
	/* A timeout leaves no NAK syndrome (ernic_hw.h). */
	expect_error(p.a, gone, IBV_WC_RETRY_EXC_ERR, IBV_WC_SEND, 0,
		     "SEND to a QP that is gone");
	pair_down(&p);
}

/*
 * A doorbell rung while the engine thread sleeps sends from the ringing
 * thread (model/engine_thread.c, tx_inline), and its packets must leave
 * before that thread lets go of the engine: queued and left for the
 * sleeping thread, each would wait for the retransmission timer. With a
 * 4 s transport timeout, every one of 20 SENDs, one at a time, must
 * complete in far less.
 */
static void test_doorbell_sends_now(void **state)
{
	const struct conn slow = { 20, 7, 7, 1, 0 };	/* 4.3 s */
	struct pair p;

	pair_up2(&p, qp_new(&A, 16, 16, 0), qp_new(&B, 16, 16, 0), &slow,
		 &slow);
	for (int k = 0; k < 20; k++) {
		struct want w[2] = { { .cq = A.cq, .n = 1 },
				     { .cq = B.cq, .n = 1 } };
		struct timespec t0, t;
		long ms;

		/* the engine threads go back to sleep between sends */
		usleep(2000);
		post_recv1(p.b, 100 + k, B.buf, 4096, B.mr->lkey);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		post1(p.a, 200 + k, IBV_WR_SEND, A.buf, 64, 0, 0, 0,
		      IBV_SEND_SIGNALED);
		drive(w, 2, "SEND from a sleeping engine");
		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 +
		     (t.tv_nsec - t0.tv_nsec) / 1000000;
		check_wc(&w[0].wc[0], 200 + k, IBV_WC_SUCCESS, IBV_WC_SEND,
			 p.a, p.b);
		if (ms >= 1000)
			fail_msg("SEND %d took %ld ms: its packet waited for "
				 "a timer", k, ms);
	}
	pair_down(&p);
}

/* Two threads post on one QP while a third polls; B posts receives
 * from a thread while A sends. The per-QP locks keep every request. */
#define THR_N 200

struct poster {
	struct ibv_qp *qp;
	uint64_t base;
	bool recv;
};

static void *poster_run(void *arg)
{
	struct poster *t = arg;

	for (int k = 0; k < THR_N; k++) {
		struct ibv_sge s = sge(A.buf + 64 * (t->base / 1000), 64,
				       A.mr->lkey);
		struct ibv_send_wr wr, *bad;
		int ret;

		if (t->recv) {
			post_recv1(t->qp, t->base + k, B.buf + 64, 64,
				   B.mr->lkey);
			continue;
		}
		wr_set(&wr, t->base + k, k & 1 ? IBV_WR_SEND :
					       IBV_WR_RDMA_WRITE,
		       &s, 1, IBV_SEND_SIGNALED);
		wr.wr.rdma.remote_addr = (uintptr_t)B.buf + 4096;
		wr.wr.rdma.rkey = B.mr->rkey;
		/* The ring is small: wait for the poller to retire. */
		while ((ret = ibv_post_send(t->qp, &wr, &bad)) == ENOMEM)
			sched_yield();
		if (ret)
			return (void *)1;
	}
	return NULL;
}

static void test_threads(void **state)
{
	static struct want w[2];
	struct poster t[3];
	pthread_t th[3];
	uint8_t seen[2][THR_N] = { { 0 } };
	struct pair p;
	void *r;

	pair_up(&p, 16, THR_N);
	t[0] = (struct poster){ p.a, 1000, false };
	t[1] = (struct poster){ p.a, 2000, false };
	t[2] = (struct poster){ p.b, 3000, true };
	want_ab(w, 2 * THR_N, THR_N);
	for (int k = 0; k < 3; k++)
		assert_int_equal(pthread_create(&th[k], NULL, poster_run,
						&t[k]), 0);
	drive(w, 2, "two posting threads");
	for (int k = 0; k < 3; k++) {
		assert_int_equal(pthread_join(th[k], &r), 0);
		assert_null(r);
	}
	/* Each request once, each thread's in its order. */
	for (int k = 0; k < 2 * THR_N; k++) {
		uint64_t id = w[0].wc[k].wr_id;

		assert_int_equal(w[0].wc[k].status, IBV_WC_SUCCESS);
		assert_true(id / 1000 == 1 || id / 1000 == 2);
		assert_false(seen[id / 1000 - 1][id % 1000]);
		seen[id / 1000 - 1][id % 1000] = 1;
		assert_true(id % 1000 == 0 || seen[id / 1000 - 1][id % 1000 - 1]);
	}
	for (int k = 0; k < THR_N; k++) {
		check_wc(&w[1].wc[k], 3000 + k, IBV_WC_SUCCESS, IBV_WC_RECV,
			 p.b, p.a);
		assert_int_equal(w[1].wc[k].byte_len, 64);
	}
	pair_down(&p);
}

/* Four signaled WRITEs on each of p and q, all acknowledged before the
 * first poll: one completion per poll, and no QP twice in a row; then
 * q's newest, alone, is seen at once. */
static void busy_take_turns(struct pair *p, struct pair *q)
{
	struct ibv_wc wc[1];
	uint32_t seq[8];

	assert_int_equal(ibv_poll_cq(A.cq, 1, wc), 0);
	for (uint64_t k = 0; k < 4; k++) {
		post1(p->a, 100 + k, IBV_WR_RDMA_WRITE, A.buf, 64,
		      (uintptr_t)B.buf, B.mr->rkey, 0, IBV_SEND_SIGNALED);
		post1(q->a, 200 + k, IBV_WR_RDMA_WRITE, A.buf, 64,
		      (uintptr_t)B.buf + 64, B.mr->rkey, 0, IBV_SEND_SIGNALED);
	}
	usleep(300000);		/* all eight are acknowledged meanwhile */
	for (int k = 0; k < 8; k++) {
		assert_int_equal(poll_n(A.cq, wc, 1, WAIT_MS), 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		seq[k] = wc[0].qp_num;
		if (k)
			assert_int_not_equal(seq[k], seq[k - 1]);
	}
	assert_int_equal(ibv_poll_cq(A.cq, 1, wc), 0);
	assert_int_equal(ibv_poll_cq(B.cq, 1, wc), 0);
	post1(q->a, 300, IBV_WR_RDMA_WRITE, A.buf, 64, (uintptr_t)B.buf,
	      B.mr->rkey, 0, IBV_SEND_SIGNALED);
	assert_int_equal(poll_n(A.cq, wc, 1, WAIT_MS), 1);
	assert_int_equal(wc[0].wr_id, 300);
	assert_int_equal(wc[0].qp_num, q->a->qp_num);
}

/* A CQ looks only at QPs with something outstanding (ernic_poll.c):
 * idle QPs on it hide nothing, an empty poll finds nothing, and two
 * busy QPs take turns (each poll starts after the QP polled first last
 * time). */
static void test_cq_busy_qps(void **state)
{
	struct pair idle[6], p, q;

	(void)state;
	for (int k = 0; k < 6; k++)
		pair_up(&idle[k], 4, 4);
	pair_up(&p, 16, 16);
	pair_up(&q, 16, 16);
	busy_take_turns(&p, &q);
	pair_down(&q);
	pair_down(&p);
	for (int k = 0; k < 6; k++)
		pair_down(&idle[k]);
}

/* More than 64 QPs on the CQ: its busy bits take a second word, and
 * two busy QPs, one in each word, still take turns. QP numbers go
 * round: q is made again (the last one kept as idle) until it is in
 * the other word than p. */
static void test_cq_busy_words(void **state)
{
	struct pair idle[128], p, q;
	int n;

	(void)state;
	pair_up(&p, 16, 16);
	for (n = 0; n < 64; n++)
		pair_up(&idle[n], 1, 1);
	pair_up(&q, 16, 16);
	while ((p.a->qp_num - 2) / 64 == (q.a->qp_num - 2) / 64) {
		assert_true(n < 128);
		idle[n++] = q;
		pair_up(&q, 16, 16);
	}
	busy_take_turns(&p, &q);
	busy_take_turns(&q, &p);
	pair_down(&q);
	pair_down(&p);
	for (int k = 0; k < n; k++)
		pair_down(&idle[k]);
}

int dp_run_wire(void)
{
	const struct CMUnitTest wire[] = {
		cmocka_unit_test_teardown(test_send, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_recv_side, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_write_read, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_rd_atomic_limit, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_inline_qpex_unsignaled,
					  dp_qp_cleanup),
		cmocka_unit_test_teardown(test_remote_access_errors,
					  dp_qp_cleanup),
		cmocka_unit_test_teardown(test_fatal_recovery_reuse,
					  dp_qp_cleanup),
		cmocka_unit_test_teardown(test_rnr_retry_exceeded,
					  dp_qp_cleanup),
		cmocka_unit_test_teardown(test_retry_exceeded, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_threads, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_cq_busy_qps, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_doorbell_sends_now,
					  dp_qp_cleanup),
	};

	return cmocka_run_group_tests_name("datapath_wire", wire,
					   dp_group_setup, dp_group_teardown);
}

/* On devices with more than 65 QPs (datapath_words). */
int dp_run_words(void)
{
	const struct CMUnitTest words[] = {
		cmocka_unit_test_teardown(test_cq_busy_words, dp_qp_cleanup),
	};

	return cmocka_run_group_tests_name("datapath_words", words,
					   dp_group_setup, dp_group_teardown);
}
