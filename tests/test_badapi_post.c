// SPDX-License-Identifier: MIT
/*
 * Bad-API cases of the data path: ibv_post_send (and the ibv_wr_* calls),
 * ibv_post_recv, ibv_poll_cq and ibv_req_notify_cq. A refused post
 * returns the errno with *bad_wr on the first bad request and queues
 * nothing of it or after it: SQPIi does not move, and the pair's next
 * SEND and receive complete as if the bad one had never been posted
 * (every request under test is signaled, so a queued one would show).
 *
 * Requests that exceed the QP's max_send_sge / max_recv_sge carry an
 * sg_list of max_sge valid entries that ends where a PROT_NONE page
 * begins: a provider that reads entry max_sge faults.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "test_badapi.h"
#include "verbs_util.h"

#define LW IBV_ACCESS_LOCAL_WRITE

enum {
	P_OPCODE_7F, P_OPCODE_CAS, P_OPCODE_FAA, P_OPCODE_LOCAL_INV,
	P_OPCODE_BIND_MW, P_OPCODE_TSO, P_OPCODE_DRIVER1, P_FLAG_BIT10,
	P_FLAG_IP_CSUM, P_NSGE_NEG, P_NSGE_SEND, P_NSGE_WRITE, P_NSGE_READ,
	P_NSGE_INLINE, P_LKEY_DEREG, P_LKEY_GARBAGE, P_LKEY_OTHER_PD,
	P_ADDR_BEFORE, P_END_AFTER, P_END_AFTER_SDATA, P_WRITE_OUTSIDE,
	P_INLINE_SEND, P_INLINE_WRITE, P_READ_INLINE, P_READ_NO_LW,
	P_ZERO_SEND, P_ZERO_SGE_SEND, P_SEND_ABOVE_MSG_SZ, P_STATE_RESET,
	P_STATE_INIT, P_STATE_RTR,
};

/* n valid entries (len bytes each, in buf) ending at a guard page. */
static struct ibv_sge *guarded_sges(uint32_t n, uint8_t *buf, uint32_t len,
				    uint32_t lkey)
{
	struct ibv_sge *sg = ba_guarded(n, sizeof(*sg));

	for (uint32_t k = 0; k < n; k++)
		sg[k] = ba_sge(buf + k * 64, len, lkey);
	return sg;
}

/* An MR over the second page of the buffer: mapped memory either side. */
static struct ibv_mr *sub_mr(struct ba_side *s, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(s->pd, s->buf + 4096, 4096, access);

	REQUIRE(mr);
	return mr;
}

static void post_send_bad(struct ba_ctx *c)
{
	static const enum ibv_qp_state states[] = {
		[P_STATE_RESET] = IBV_QPS_RESET, [P_STATE_INIT] = IBV_QPS_INIT,
		[P_STATE_RTR] = IBV_QPS_RTR,
	};
	uint8_t inl[256] = { 0 };
	enum ibv_qp_state st = IBV_QPS_RTS;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_qp_cap cap;
	struct ibv_sge s;
	struct ibv_mr *mr;
	struct ibv_pd *pd2;
	uint8_t *big;
	uint32_t pi, lkey;
	size_t len;

	ba_open(c, true);
	if (c->arg >= P_STATE_RESET)
		st = states[c->arg];
	c->qa = ba_qp(c, &c->a, 8, 8);
	ba_peer_for(c);
	ba_goto(c, st);
	cap = ba_cap(c->qa);
	lkey = c->a.mr->lkey;
	s = ba_sge(c->a.buf, 32, lkey);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = BA_BAD_ID;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)c->b.buf;
	wr.wr.rdma.rkey = c->b.mr->rkey;
	switch (c->arg) {
	case P_OPCODE_7F:
		wr.opcode = (enum ibv_wr_opcode)0x7f;
		break;
	case P_OPCODE_CAS:	/* atomic_cap NONE */
	case P_OPCODE_FAA:
		wr.opcode = c->arg == P_OPCODE_CAS ?
				    IBV_WR_ATOMIC_CMP_AND_SWP :
				    IBV_WR_ATOMIC_FETCH_AND_ADD;
		s.length = 8;
		wr.wr.atomic.remote_addr = (uintptr_t)c->b.buf;
		wr.wr.atomic.rkey = c->b.mr->rkey;
		wr.wr.atomic.compare_add = 1;
		break;
	case P_OPCODE_LOCAL_INV:	/* no memory windows, no FRMR */
		wr.opcode = IBV_WR_LOCAL_INV;
		wr.invalidate_rkey = c->a.mr->rkey;
		wr.num_sge = 0;
		break;
	case P_OPCODE_BIND_MW:
		wr.opcode = IBV_WR_BIND_MW;
		wr.num_sge = 0;
		break;
	case P_OPCODE_TSO:	/* UD / raw packet only */
		wr.opcode = IBV_WR_TSO;
		break;
	case P_OPCODE_DRIVER1:
		wr.opcode = IBV_WR_DRIVER1;
		break;
	case P_FLAG_BIT10:
		wr.send_flags |= 1 << 10;
		break;
	case P_FLAG_IP_CSUM:	/* raw packet QPs only */
		wr.send_flags |= IBV_SEND_IP_CSUM;
		break;
	case P_NSGE_NEG:
		wr.num_sge = -1;
		break;
	case P_NSGE_SEND:
	case P_NSGE_WRITE:
	case P_NSGE_READ:
		wr.opcode = c->arg == P_NSGE_SEND ? IBV_WR_SEND :
			    c->arg == P_NSGE_WRITE ? IBV_WR_RDMA_WRITE :
						     IBV_WR_RDMA_READ;
		wr.sg_list = guarded_sges(cap.max_send_sge, c->a.buf, 32, lkey);
		wr.num_sge = (int)cap.max_send_sge + 1;
		break;
	case P_NSGE_INLINE:	/* inline data: the entries hold pointers */
		wr.send_flags |= IBV_SEND_INLINE;
		wr.sg_list = guarded_sges(cap.max_send_sge, c->a.buf, 1, 0);
		wr.num_sge = (int)cap.max_send_sge + 1;
		break;
	case P_LKEY_DEREG:
		mr = sub_mr(&c->a, LW);
		s.lkey = mr->lkey;
		s.addr = (uintptr_t)mr->addr;
		REQUIRE(ibv_dereg_mr(mr) == 0);
		break;
	case P_LKEY_GARBAGE:
		s.lkey = ~lkey;
		break;
	case P_LKEY_OTHER_PD:
		pd2 = ibv_alloc_pd(c->a.ctx);
		REQUIRE(pd2);
		mr = ibv_reg_mr(pd2, c->a.buf, 4096, LW);
		REQUIRE(mr);
		s.lkey = mr->lkey;
		break;
	case P_ADDR_BEFORE:
		mr = sub_mr(&c->a, LW);
		s = ba_sge((uint8_t *)mr->addr - 16, 32, mr->lkey);
		break;
	case P_END_AFTER:	/* a SEND from the buffer itself (LADDR) */
		mr = sub_mr(&c->a, LW);
		s = ba_sge((uint8_t *)mr->addr + 4096 - 32, 64, mr->lkey);
		break;
	case P_END_AFTER_SDATA:	/* a SEND copied into the WQE */
		mr = sub_mr(&c->a, LW);
		s = ba_sge((uint8_t *)mr->addr + 4096 - 8, 16, mr->lkey);
		break;
	case P_WRITE_OUTSIDE:
		mr = sub_mr(&c->a, LW);
		s = ba_sge((uint8_t *)mr->addr + 4096 - 32, 64, mr->lkey);
		wr.opcode = IBV_WR_RDMA_WRITE;
		break;
	case P_INLINE_SEND:
	case P_INLINE_WRITE:
		if (cap.max_inline_data >= sizeof(inl))
			ba_skip("max_inline_data beyond the test's buffer");
		s = ba_sge(inl, cap.max_inline_data + 1, 0);
		wr.send_flags |= IBV_SEND_INLINE;
		if (c->arg == P_INLINE_WRITE)
			wr.opcode = IBV_WR_RDMA_WRITE;
		break;
	case P_READ_INLINE:
		wr.opcode = IBV_WR_RDMA_READ;
		wr.send_flags |= IBV_SEND_INLINE;
		break;
	case P_READ_NO_LW:	/* the IP would write what it reads there */
		mr = sub_mr(&c->a, IBV_ACCESS_REMOTE_READ);
		s = ba_sge(mr->addr, 32, mr->lkey);
		wr.opcode = IBV_WR_RDMA_READ;
		break;
	case P_ZERO_SEND:	/* PG332: no zero-length SEND */
		wr.num_sge = 0;
		break;
	case P_ZERO_SGE_SEND:
		s.length = 0;
		break;
	case P_SEND_ABOVE_MSG_SZ:
		if (c->port.max_msg_sz > (64u << 20))
			ba_skip("max_msg_sz too large to allocate");
		len = (size_t)c->port.max_msg_sz + 4096;
		big = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		REQUIRE(big != MAP_FAILED);
		mr = ibv_reg_mr(c->a.pd, big, len, LW);
		REQUIRE(mr);
		s = ba_sge(big, c->port.max_msg_sz + 1, mr->lkey);
		break;
	}
	pi = ba_sqpi(c, c->qa);
	CALL_INT(ibv_post_send(c->qa, &wr, &bad));
	if (ba_refused())
		CHECK(bad == &wr, "bad_wr is %p, not the request (%p)",
		      (void *)bad, (void *)&wr);
	CHECK(ba_sqpi(c, c->qa) == pi, "SQPI moved from %u to %u", pi,
	      ba_sqpi(c, c->qa));
	ba_up(c);
	ba_check_exchange(c);
}

enum { QX_SGE_LIST, QX_INLINE, QX_NO_OPCODE };

/* The ibv_wr_* calls of one bad SEND, up to ibv_wr_complete's result:
 * max_send_sge + 1 SGEs at sg, too much inline data, or an SGE with no
 * work request (opcode) to take it. */
static int qx_send(struct ibv_qp_ex *qx, int mode,
		   const struct ibv_qp_cap *cap, const struct ibv_sge *sg)
{
	static uint8_t inl[256];

	ibv_wr_start(qx);
	qx->wr_id = BA_BAD_ID;
	qx->wr_flags = IBV_SEND_SIGNALED;
	if (mode == QX_NO_OPCODE) {
		ibv_wr_set_sge(qx, sg->lkey, sg->addr, sg->length);
	} else {
		ibv_wr_send(qx);
		if (mode == QX_SGE_LIST)
			ibv_wr_set_sge_list(qx, cap->max_send_sge + 1, sg);
		else
			ibv_wr_set_inline_data(qx, inl,
					       cap->max_inline_data + 1);
	}
	return ibv_wr_complete(qx);
}

static void post_qx_bad(struct ba_ctx *c)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_sge *sg;
	struct ibv_qp_cap cap;
	struct ibv_qp_ex *qx;
	uint32_t pi;

	ba_open(c, true);
	ia.pd = c->a.pd;
	ia.send_cq = ia.recv_cq = c->a.cq;
	c->qa = ibv_create_qp_ex(c->a.ctx, &ia);
	REQUIRE(c->qa);
	ba_peer_for(c);
	ba_up(c);
	cap = ba_cap(c->qa);
	qx = ibv_qp_to_qp_ex(c->qa);
	REQUIRE(qx);
	if (c->arg == QX_INLINE && cap.max_inline_data >= 256)
		ba_skip("max_inline_data beyond the test's buffer");
	sg = guarded_sges(cap.max_send_sge, c->a.buf, 32, c->a.mr->lkey);
	pi = ba_sqpi(c, c->qa);
	CALL_INT(qx_send(qx, c->arg, &cap, sg));
	CHECK(ba_sqpi(c, c->qa) == pi, "SQPI moved from %u to %u", pi,
	      ba_sqpi(c, c->qa));
	ba_check_exchange(c);
}

static void send_n(struct ba_ctx *c, struct ibv_send_wr *wr,
		   struct ibv_sge *s, int n)
{
	memset(wr, 0, (size_t)n * sizeof(*wr));
	for (int k = 0; k < n; k++) {
		for (int b = 0; b < 32; b++)
			c->a.buf[k * 64 + b] = (uint8_t)(k * 7 + b);
		s[k] = ba_sge(c->a.buf + k * 64, 32, c->a.mr->lkey);
		wr[k].wr_id = (uint64_t)k + 1;
		wr[k].sg_list = &s[k];
		wr[k].num_sge = 1;
		wr[k].opcode = IBV_WR_SEND;
		wr[k].send_flags = IBV_SEND_SIGNALED;
		wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
	}
}

static void recv_n(struct ba_ctx *c, struct ibv_recv_wr *wr,
		   struct ibv_sge *s, int n)
{
	memset(wr, 0, (size_t)n * sizeof(*wr));
	for (int k = 0; k < n; k++) {
		s[k] = ba_sge(c->b.buf + k * 256, 256, c->b.mr->lkey);
		wr[k].wr_id = 0x100 + (uint64_t)k;
		wr[k].sg_list = &s[k];
		wr[k].num_sge = 1;
		wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
	}
}

/* The first n SENDs of send_n arrived in the first n receives of recv_n,
 * each completing once, in order, and nothing else. */
static void check_n(struct ba_ctx *c, int n)
{
	struct ibv_wc wc[16];
	char who[64];
	int got;

	got = ba_poll(c->a.cq, wc, n, BA_WAIT_MS);
	CHECK(got == n, "%d of the %d SENDs before it completed", got, n);
	for (int k = 0; k < got; k++) {
		snprintf(who, sizeof(who), "SEND %d's completion", k + 1);
		ba_wc_is(&wc[k], (uint64_t)k + 1, IBV_WC_SEND, 32, who);
	}
	got = ba_poll(c->b.cq, wc, n, BA_WAIT_MS);
	CHECK(got == n, "the peer received %d of %d messages", got, n);
	for (int k = 0; k < got; k++) {
		snprintf(who, sizeof(who), "receive %d's completion", k);
		if (ba_wc_is(&wc[k], 0x100 + (uint64_t)k, IBV_WC_RECV, 32, who))
			CHECK(!memcmp(c->b.buf + k * 256, c->a.buf + k * 64,
				      32), "message %d has the wrong data", k);
	}
	ba_quiet(c->a.cq, "the sender's CQ");
	ba_quiet(c->b.cq, "the receiver's CQ");
}

/* A chain whose third request is bad: the two before it go. */
static void post_send_chain(struct ba_ctx *c)
{
	struct ibv_send_wr wr[4], *bad = NULL;
	struct ibv_recv_wr rwr[2], *rbad;
	struct ibv_sge s[4], rs[2];
	uint32_t pi;

	ba_open(c, true);
	ba_pair(c, 8, 8);
	recv_n(c, rwr, rs, 2);
	REQUIRE(ibv_post_recv(c->qb, rwr, &rbad) == 0);
	send_n(c, wr, s, 4);
	s[2].lkey = ~s[2].lkey;
	pi = ba_sqpi(c, c->qa);
	CALL_INT(ibv_post_send(c->qa, wr, &bad));
	CHECK(bad == &wr[2], "bad_wr is %p, not the third request (%p)",
	      (void *)bad, (void *)&wr[2]);
	CHECK(ba_sqpi(c, c->qa) == pi + 2, "SQPI moved from %u to %u, not by 2",
	      pi, ba_sqpi(c, c->qa));
	check_n(c, 2);
	ba_check_exchange(c);
}

/* One request more than max_send_wr: ENOMEM on it, the others go. */
static void post_send_overflow(struct ba_ctx *c)
{
	struct ibv_send_wr wr[16], *bad = NULL;
	struct ibv_recv_wr rwr[16], *rbad;
	struct ibv_sge s[16], rs[16];
	uint32_t n;

	ba_open(c, true);
	ba_pair(c, 4, 4);
	n = ba_cap(c->qa).max_send_wr;
	if (n + 1 > 15)
		ba_skip("max_send_wr beyond the peer's receive queue");
	recv_n(c, rwr, rs, (int)n);
	REQUIRE(ibv_post_recv(c->qb, rwr, &rbad) == 0);
	send_n(c, wr, s, (int)n + 1);
	CALL_INT(ibv_post_send(c->qa, wr, &bad));
	CHECK(bad == &wr[n], "bad_wr is %p, not request %u (%p)", (void *)bad,
	      n + 1, (void *)&wr[n]);
	check_n(c, (int)n);
	ba_check_exchange(c);
}

enum { R_NSGE_OVER, R_NSGE_NEG, R_LKEY_GARBAGE, R_NO_LW, R_OUTSIDE,
       R_RESET };

static void post_recv_bad(struct ba_ctx *c)
{
	struct ibv_recv_wr wr = { .wr_id = BA_BAD_ID, .num_sge = 1 }, *bad;
	struct ibv_qp_cap cap;
	struct ibv_sge s;
	struct ibv_mr *mr;

	ba_open(c, true);
	c->qa = ba_qp(c, &c->a, 8, 8);
	c->qb = ba_qp(c, &c->b, 8, 8);
	if (c->arg != R_RESET)
		ba_peer_up(c);
	cap = ba_cap(c->qb);
	s = ba_sge(c->b.buf + 1024, 64, c->b.mr->lkey);
	wr.sg_list = &s;
	switch (c->arg) {
	case R_NSGE_OVER:
		wr.sg_list = guarded_sges(cap.max_recv_sge, c->b.buf, 64,
					  c->b.mr->lkey);
		wr.num_sge = (int)cap.max_recv_sge + 1;
		break;
	case R_NSGE_NEG:
		wr.num_sge = -1;
		break;
	case R_LKEY_GARBAGE:
		s.lkey = ~s.lkey;
		break;
	case R_NO_LW:	/* the IP writes receive buffers */
		mr = sub_mr(&c->b, IBV_ACCESS_REMOTE_READ);
		s = ba_sge(mr->addr, 64, mr->lkey);
		break;
	case R_OUTSIDE:
		mr = sub_mr(&c->b, LW);
		s = ba_sge((uint8_t *)mr->addr + 4096 - 32, 64, mr->lkey);
		break;
	}
	bad = NULL;
	CALL_INT(ibv_post_recv(c->qb, &wr, &bad));
	if (ba_refused())
		CHECK(bad == &wr, "bad_wr is %p, not the request (%p)",
		      (void *)bad, (void *)&wr);
	if (c->arg == R_RESET)
		ba_peer_up(c);
	ba_up(c);
	ba_check_exchange(c);
}

/* A chain whose third receive is bad: the two before it are posted. */
static void post_recv_chain(struct ba_ctx *c)
{
	struct ibv_send_wr wr[2], *bad;
	struct ibv_recv_wr rwr[4], *rbad = NULL;
	struct ibv_sge s[2], rs[4];

	ba_open(c, true);
	ba_pair(c, 8, 8);
	recv_n(c, rwr, rs, 4);
	rs[2].lkey = ~rs[2].lkey;
	CALL_INT(ibv_post_recv(c->qb, rwr, &rbad));
	CHECK(rbad == &rwr[2], "bad_wr is %p, not the third request (%p)",
	      (void *)rbad, (void *)&rwr[2]);
	send_n(c, wr, s, 2);
	REQUIRE(ibv_post_send(c->qa, wr, &bad) == 0);
	check_n(c, 2);
	ba_check_exchange(c);
}

/* One receive more than max_recv_wr: ENOMEM on it, the others stay. */
static void post_recv_overflow(struct ba_ctx *c)
{
	struct ibv_send_wr wr[16], *bad;
	struct ibv_recv_wr rwr[16], *rbad = NULL;
	struct ibv_sge s[16], rs[16];
	uint32_t n;

	ba_open(c, true);
	c->qa = ba_qp(c, &c->a, 16, 4);
	c->qb = ba_qp(c, &c->b, 16, 4);
	ba_peer_up(c);
	ba_up(c);
	n = ba_cap(c->qb).max_recv_wr;
	if (n + 1 > 15)
		ba_skip("max_recv_wr beyond the sender's queue");
	recv_n(c, rwr, rs, (int)n + 1);
	CALL_INT(ibv_post_recv(c->qb, rwr, &rbad));
	CHECK(rbad == &rwr[n], "bad_wr is %p, not request %u (%p)",
	      (void *)rbad, n + 1, (void *)&rwr[n]);
	send_n(c, wr, s, (int)n);
	REQUIRE(ibv_post_send(c->qa, wr, &bad) == 0);
	check_n(c, (int)n);
	ba_check_exchange(c);
}

/* ibv_poll_cq(ne = arg): no completion taken, none lost, wc untouched.
 * ne 0 asks for nothing: 0. A negative ne is no request either; the man
 * page allows "a negative value" on failure, and mlx5 / rxe return 0. */
static void poll_bad(struct ba_ctx *c)
{
	const struct timespec settle = { 0, 200000000 };
	struct ibv_wc wc[2], poison;
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *bad;
	struct ibv_sge s, rs;
	struct ibv_send_wr wr = { .wr_id = 0x77, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr rwr = { .wr_id = 0x78, .sg_list = &rs,
				   .num_sge = 1 };

	ba_open(c, true);
	ba_pair(c, 8, 8);
	s = ba_sge(c->a.buf, 32, c->a.mr->lkey);
	rs = ba_sge(c->b.buf, 64, c->b.mr->lkey);
	REQUIRE(ibv_post_recv(c->qb, &rwr, &rbad) == 0);
	REQUIRE(ibv_post_send(c->qa, &wr, &bad) == 0);
	REQUIRE(ba_poll(c->b.cq, wc, 1, BA_WAIT_MS) == 1);
	/* The sender's completion is due by now (an ACK over lo). */
	nanosleep(&settle, NULL);
	memset(wc, 0xa5, sizeof(wc));
	memset(&poison, 0xa5, sizeof(poison));
	CALL_INT(ibv_poll_cq(c->a.cq, c->arg, wc));
	CHECK(!memcmp(&wc[0], &poison, sizeof(poison)),
	      "the work completion array was written");
	if (CHECK(ba_poll(c->a.cq, wc, 1, BA_WAIT_MS) == 1,
		  "afterwards: the pending completion is lost"))
		ba_wc_is(&wc[0], 0x77, IBV_WC_SEND, 32, "the sender's CQ");
	ba_check_exchange(c);
}

/* A CQ without a channel: the kernel arms it anyway (its event handler
 * finds no channel), mlx5 rings the doorbell: success, and no effect. */
static void notify_no_channel(struct ba_ctx *c)
{
	ba_open(c, true);
	ba_pair(c, 8, 8);
	CALL_INT(ibv_req_notify_cq(c->a.cq, c->arg));
	ba_check_exchange(c);
}

#define PS(n, t, ...) { "post_send_" n, post_send_bad, t, EXP_ERR(__VA_ARGS__) }
#define PR(n, t, ...) { "post_recv_" n, post_recv_bad, t, EXP_ERR(__VA_ARGS__) }

const struct ba_case ba_post_cases[] = {
	PS("opcode_0x7f", P_OPCODE_7F, EINVAL),
	PS("opcode_atomic_cmp_and_swp", P_OPCODE_CAS, EINVAL),
	PS("opcode_atomic_fetch_and_add", P_OPCODE_FAA, EINVAL),
	PS("opcode_local_inv", P_OPCODE_LOCAL_INV, EINVAL),
	PS("opcode_bind_mw", P_OPCODE_BIND_MW, EINVAL),
	PS("opcode_tso", P_OPCODE_TSO, EINVAL),
	PS("opcode_driver1", P_OPCODE_DRIVER1, EINVAL),
	PS("send_flags_unknown_bit", P_FLAG_BIT10, EINVAL),
	PS("send_flags_ip_csum", P_FLAG_IP_CSUM, EINVAL),
	PS("num_sge_negative", P_NSGE_NEG, EINVAL),
	PS("num_sge_above_max_send", P_NSGE_SEND, EINVAL),
	PS("num_sge_above_max_write", P_NSGE_WRITE, EINVAL),
	PS("num_sge_above_max_read", P_NSGE_READ, EINVAL),
	PS("num_sge_above_max_inline", P_NSGE_INLINE, EINVAL),
	{ "wr_set_sge_list_above_max_sge", post_qx_bad, QX_SGE_LIST,
	  EXP_ERR(EINVAL) },
	{ "wr_set_inline_data_above_max", post_qx_bad, QX_INLINE,
	  EXP_ERR(EINVAL) },
	{ "wr_set_sge_without_opcode", post_qx_bad, QX_NO_OPCODE,
	  EXP_ERR(EINVAL) },
	PS("lkey_deregistered", P_LKEY_DEREG, EINVAL),
	PS("lkey_garbage", P_LKEY_GARBAGE, EINVAL),
	PS("lkey_of_other_pd", P_LKEY_OTHER_PD, EINVAL),
	PS("addr_before_mr", P_ADDR_BEFORE, EINVAL),
	PS("end_after_mr", P_END_AFTER, EINVAL),
	PS("end_after_mr_16_bytes", P_END_AFTER_SDATA, EINVAL),
	PS("rdma_write_outside_mr", P_WRITE_OUTSIDE, EINVAL),
	PS("inline_send_above_max_inline_data", P_INLINE_SEND, EINVAL),
	PS("inline_write_above_max_inline_data", P_INLINE_WRITE, EINVAL),
	PS("rdma_read_inline", P_READ_INLINE, EINVAL),
	PS("rdma_read_into_mr_without_local_write", P_READ_NO_LW, EINVAL),
	PS("zero_length_send_no_sge", P_ZERO_SEND, EINVAL),
	PS("zero_length_send_empty_sge", P_ZERO_SGE_SEND, EINVAL),
	PS("send_above_max_msg_sz", P_SEND_ABOVE_MSG_SZ, EINVAL),
	PS("in_reset", P_STATE_RESET, EINVAL),
	PS("in_init", P_STATE_INIT, EINVAL),
	PS("in_rtr", P_STATE_RTR, EINVAL),
	{ "post_send_sq_overflow", post_send_overflow, 0, EXP_ERR(ENOMEM) },
	{ "post_send_chain_third_bad", post_send_chain, 0, EXP_ERR(EINVAL) },

	PR("num_sge_above_max_recv_sge", R_NSGE_OVER, EINVAL),
	PR("num_sge_negative", R_NSGE_NEG, EINVAL),
	PR("lkey_garbage", R_LKEY_GARBAGE, EINVAL),
	PR("mr_without_local_write", R_NO_LW, EINVAL),
	PR("outside_mr", R_OUTSIDE, EINVAL),
	PR("in_reset", R_RESET, EINVAL),
	{ "post_recv_rq_overflow", post_recv_overflow, 0, EXP_ERR(ENOMEM) },
	{ "post_recv_chain_third_bad", post_recv_chain, 0, EXP_ERR(EINVAL) },

	{ "poll_cq_ne_0", poll_bad, 0, EXP_OK },
	{ "poll_cq_ne_negative", poll_bad, -1, EXP_LE0 },
	{ "req_notify_cq_without_channel", notify_no_channel, 0, EXP_OK },
	{ "req_notify_cq_solicited_without_channel", notify_no_channel, 1,
	  EXP_OK },
};

const size_t ba_post_ncases = sizeof(ba_post_cases) / sizeof(ba_post_cases[0]);
