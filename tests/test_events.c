// SPDX-License-Identifier: MIT
/*
 * Events between two software ERNICs: completion channels made by
 * ernicdv_create_comp_channel() and used through libibverbs' own
 * ibv_get_cq_event() / ibv_ack_cq_events() / ibv_destroy_comp_channel(),
 * ibv_req_notify_cq() (all and solicited-only), the QP fatal async event
 * with its Table 2-4 code, recovery from it, and destroying objects
 * whose events were never read.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "datapath_util.h"

#define QUIET_MS 300	/* no event expected: how long to make sure */

/* One side's event-driven CQ, swapped in as the side's CQ while a test
 * creates its QPs (qp_new uses s->cq). */
struct evside {
	struct side *s;
	struct ibv_cq *saved;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
};

static struct evside EA = { .s = &A }, EB = { .s = &B };

static void ev_open(struct evside *e)
{
	e->ch = ernicdv_create_comp_channel(e->s->ctx);
	assert_non_null(e->ch);
	e->cq = ibv_create_cq(e->s->ctx, 256, e, e->ch, 0);
	assert_non_null(e->cq);
	assert_ptr_equal(e->cq->channel, e->ch);
	e->saved = e->s->cq;
	e->s->cq = e->cq;
}

static void ev_close(struct evside *e)
{
	if (!e->cq)
		return;
	e->s->cq = e->saved;
	assert_int_equal(ibv_destroy_cq(e->cq), 0);
	assert_int_equal(ibv_destroy_comp_channel(e->ch), 0);
	e->cq = NULL;
	e->ch = NULL;
}

static int ev_teardown(void **state)
{
	dp_qp_cleanup(state);
	ev_close(&EA);
	ev_close(&EB);
	return 0;
}

/* The next event of e's channel, within ms: must be e's CQ. */
static void expect_event(struct evside *e, int ms, const char *what)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	if (ernicdv_get_cq_event(e->ch, &cq, &cq_ctx, ms))
		fail_msg("%s: no CQ event within %d ms (%s)", what, ms,
			 strerror(errno));
	assert_ptr_equal(cq, e->cq);
	assert_ptr_equal(cq_ctx, e);
	ibv_ack_cq_events(cq, 1);
}

/* What an unexpected event came with: the completions waiting on e's CQ
 * and whether e's context has an async event queued (a QP gone fatal
 * fires its CQs too). Printed before the test fails. */
static void event_diag(struct evside *e)
{
	struct pollfd pf = { .fd = e->s->ctx->async_fd, .events = POLLIN };
	struct ibv_wc wc[4];
	int n = ibv_poll_cq(e->cq, 4, wc);

	print_error("  %d completion(s) waiting%s\n", n,
		    poll(&pf, 1, 0) == 1 ? ", an async event queued" : "");
	for (int k = 0; k < n; k++)
		print_error("  wr_id %" PRIu64 " %s opcode %d byte_len %u\n",
			    wc[k].wr_id, ibv_wc_status_str(wc[k].status),
			    wc[k].opcode, wc[k].byte_len);
}

static void expect_no_event(struct evside *e, const char *what)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	if (!ernicdv_get_cq_event(e->ch, &cq, &cq_ctx, QUIET_MS)) {
		/* Acked, or destroying the CQ in teardown would wait for it. */
		ibv_ack_cq_events(cq, 1);
		event_diag(e);
		fail_msg("%s: unexpected CQ event", what);
	}
	assert_int_equal(errno, ETIMEDOUT);
}

/* One SEND A -> B of len bytes, unsignaled on neither side. */
static void send_one(struct pair *p, uint64_t id, uint32_t len)
{
	post_recv1(p->b, id, B.buf, len, B.mr->lkey);
	post1(p->a, id, IBV_WR_SEND, A.buf, len, 0, 0, 0, IBV_SEND_SIGNALED);
}

static void poll_one(struct ibv_cq *cq, enum ibv_wc_status st,
		     enum ibv_wc_opcode op, uint64_t id)
{
	struct ibv_wc wc;

	assert_int_equal(poll_n(cq, &wc, 1, WAIT_MS), 1);
	if (wc.status != st)
		fail_msg("wr_id %llu: %s, want %s",
			 (unsigned long long)wc.wr_id,
			 ibv_wc_status_str(wc.status), ibv_wc_status_str(st));
	assert_int_equal(wc.opcode, op);
	assert_int_equal(wc.wr_id, id);
}

/* Armed CQs get exactly one event per arm, through the standard calls
 * too; unarmed CQs get none; the channel fd polls readable. */
static void test_cq_events(void **state)
{
	struct pair p;

	ev_open(&EA);
	ev_open(&EB);
	pair_up(&p, 16, 16);

	assert_int_equal(ibv_req_notify_cq(EA.cq, 0), 0);
	assert_int_equal(ibv_req_notify_cq(EB.cq, 0), 0);
	send_one(&p, 1, 100);
	expect_event(&EB, WAIT_MS, "RECV on armed CQ");
	poll_one(EB.cq, IBV_WC_SUCCESS, IBV_WC_RECV, 1);
	expect_event(&EA, WAIT_MS, "SEND on armed CQ");
	poll_one(EA.cq, IBV_WC_SUCCESS, IBV_WC_SEND, 1);

	/* Disarmed by the event: the next completion is silent. */
	send_one(&p, 2, 100);
	poll_one(EB.cq, IBV_WC_SUCCESS, IBV_WC_RECV, 2);
	poll_one(EA.cq, IBV_WC_SUCCESS, IBV_WC_SEND, 2);
	expect_no_event(&EB, "RECV on a CQ not re-armed");
	expect_no_event(&EA, "SEND on a CQ not re-armed");

	/* poll(2) on the channel fd, then libibverbs' ibv_get_cq_event. */
	assert_int_equal(ibv_req_notify_cq(EB.cq, 0), 0);
	send_one(&p, 3, 5000);	/* several packets, one event */
	{
		struct pollfd pf = { .fd = EB.ch->fd, .events = POLLIN };
		struct ibv_cq *cq;
		void *ctx;

		assert_int_equal(poll(&pf, 1, WAIT_MS), 1);
		assert_int_equal(ibv_get_cq_event(EB.ch, &cq, &ctx), 0);
		assert_ptr_equal(cq, EB.cq);
		ibv_ack_cq_events(cq, 1);
	}
	poll_one(EB.cq, IBV_WC_SUCCESS, IBV_WC_RECV, 3);
	poll_one(EA.cq, IBV_WC_SUCCESS, IBV_WC_SEND, 3);
	expect_no_event(&EB, "second event for one arm");

	/* A channel in use cannot go; a CQ of another context's channel
	 * cannot be made. */
	assert_int_equal(ibv_destroy_comp_channel(EB.ch), EBUSY);
	assert_null(ibv_create_cq(A.ctx, 16, NULL, EB.ch, 0));
	pair_down(&p);
}

/* Solicited-only: ERNIC WQEs cannot ask for SE, so ERNIC SENDs never
 * wake such an arm; an error completion does (IBTA 11.4.2.2). */
static void test_solicited(void **state)
{
	struct pair p;
	uint32_t code;

	ev_open(&EA);
	ev_open(&EB);
	pair_up(&p, 16, 16);
	assert_int_equal(ibv_req_notify_cq(EB.cq, 1), 0);
	post_recv1(p.b, 1, B.buf, 64, B.mr->lkey);
	post1(p.a, 1, IBV_WR_SEND, A.buf, 64, 0, 0, 0,
	      IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	poll_one(EB.cq, IBV_WC_SUCCESS, IBV_WC_RECV, 1);
	poll_one(EA.cq, IBV_WC_SUCCESS, IBV_WC_SEND, 1);
	expect_no_event(&EB, "unsolicited SEND, solicited-only arm");

	/* Still armed: B's QP goes fatal (a WRITE with a bad R_Key is
	 * NAKed by B), and the error wakes the solicited-only arm. */
	assert_int_equal(ibv_req_notify_cq(EA.cq, 1), 0);
	post1(p.a, 2, IBV_WR_RDMA_WRITE, A.buf, 64, (uintptr_t)B.buf,
	      B.mr->rkey ^ 0x100, 0, IBV_SEND_SIGNALED);
	expect_event(&EA, WAIT_MS, "error completion, solicited-only arm");
	poll_one(EA.cq, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE, 2);
	expect_event(&EB, WAIT_MS, "responder fatal, solicited-only arm");
	assert_int_equal(ernicdv_query_qp_fatal(p.b, &code), 0);
	assert_int_equal(code, ERNIC_FATAL_RKEY_ACCESS);
	pair_down(&p);
}

static void expect_async(struct ibv_context *ctx, struct ibv_qp *qp)
{
	struct pollfd pf = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	if (poll(&pf, 1, WAIT_MS) != 1)
		fail_msg("no async event within %d ms", WAIT_MS);
	assert_int_equal(ibv_get_async_event(ctx, &ev), 0);
	assert_int_equal(ev.event_type, IBV_EVENT_QP_FATAL);
	assert_ptr_equal(ev.element.qp, qp);
	ibv_ack_async_event(&ev);
}

static void reconnect(struct pair *p)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	assert_int_equal(ibv_modify_qp(p->a, &a, IBV_QP_STATE), 0);
	assert_int_equal(ibv_modify_qp(p->b, &a, IBV_QP_STATE), 0);
	pair_up2(p, p->a, p->b, &conn_std, &conn_std);
}

/* QP fatal -> IBV_EVENT_QP_FATAL on both contexts with the Table 2-4
 * codes -> PG332 "QP Fatal Recovery" through RESET -> traffic again. */
static void test_fatal_recovery(void **state)
{
	struct pair p;
	uint32_t code;

	pair_up(&p, 16, 16);
	post1(p.a, 1, IBV_WR_RDMA_READ, A.buf, 4096, (uintptr_t)B.buf,
	      B.mr->rkey ^ 0x100, 0, IBV_SEND_SIGNALED);
	expect_async(A.ctx, p.a);
	expect_async(B.ctx, p.b);
	assert_int_equal(ernicdv_query_qp_fatal(p.a, &code), 0);
	assert_int_equal(code, ERNIC_FATAL_REMOTE_NAK);
	assert_int_equal(ernicdv_query_qp_fatal(p.b, &code), 0);
	assert_int_equal(code, ERNIC_FATAL_RKEY_ACCESS);
	poll_one(A.cq, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_READ, 1);

	reconnect(&p);
	assert_int_equal(ernicdv_query_qp_fatal(p.a, &code), 0);
	assert_int_equal(code, 0);
	for (uint64_t id = 10; id < 20; id++) {
		fill(A.buf, 3000, (unsigned int)id);
		send_one(&p, id, 3000);
		poll_one(B.cq, IBV_WC_SUCCESS, IBV_WC_RECV, id);
		poll_one(A.cq, IBV_WC_SUCCESS, IBV_WC_SEND, id);
		assert_memory_equal(B.buf, A.buf, 3000);
	}
	pair_down(&p);
}

/* Events nobody read are dropped with their object, as the kernel
 * does: destroying it does not wait for them, and they never reach a
 * reader afterwards. */
static void test_unread_events(void **state)
{
	struct pair p;
	uint8_t rec[16];

	ev_open(&EA);
	pair_up(&p, 16, 16);
	assert_int_equal(ibv_req_notify_cq(EA.cq, 0), 0);
	post1(p.a, 1, IBV_WR_RDMA_WRITE, A.buf, 64, (uintptr_t)B.buf,
	      B.mr->rkey ^ 0x100, 0, IBV_SEND_SIGNALED);
	poll_one(EA.cq, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE, 1);
	/* Both the CQ event and A's async event are queued by now. */
	{
		struct pollfd pf[2] = {
			{ .fd = EA.ch->fd, .events = POLLIN },
			{ .fd = A.ctx->async_fd, .events = POLLIN },
		};

		for (int k = 0; k < 2; k++)
			assert_int_equal(poll(&pf[k], 1, WAIT_MS), 1);
	}
	expect_async(B.ctx, p.b);
	pair_down(&p);		/* would hang waiting for acks otherwise */
	assert_int_equal(recv(A.ctx->async_fd, rec, sizeof(rec), MSG_DONTWAIT),
			 -1);
	assert_int_equal(errno, EAGAIN);
	ev_close(&EA);		/* destroy_cq drops the CQ event */
}

/* A message longer than the whole RQ (2 MiB: 2048 packets, the ring
 * holds 255) to a receiver that only sleeps: it arrives without poll_cq
 * draining the RQ, and the one event comes when it is complete, so a
 * single poll after it finds the completion (what perftest's latency
 * tests do with -e). */
#define BIG_LEN (2u << 20)

/* B event-driven, a QP pair, BIG_LEN bytes of pattern seed to send. */
static void big_setup(struct pair *p, uint8_t seed)
{
	ev_open(&EB);
	pair_up(p, 16, 16);
	fill(A.buf, BIG_LEN, seed);
	memset(B.buf, 0, BIG_LEN);
}

/* One poll (what follows one event) finds the BIG_LEN RECV id, whole. */
static void poll_big_recv(uint64_t id)
{
	struct ibv_wc wc;

	assert_int_equal(ibv_poll_cq(EB.cq, 1, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.wr_id, id);
	assert_int_equal(wc.byte_len, BIG_LEN);
	assert_memory_equal(B.buf, A.buf, BIG_LEN);
}

static void test_event_after_whole_message(void **state)
{
	struct pair p;

	(void)state;
	big_setup(&p, 77);
	assert_int_equal(ibv_req_notify_cq(EB.cq, 0), 0);
	send_one(&p, 5, BIG_LEN);
	expect_event(&EB, WAIT_MS, "RECV of 2 MiB");
	poll_big_recv(5);
	/* No second event for it. */
	assert_int_equal(ibv_req_notify_cq(EB.cq, 0), 0);
	expect_no_event(&EB, "after the 2 MiB RECV was polled");
	poll_one(A.cq, IBV_WC_SUCCESS, IBV_WC_SEND, 5);
	pair_down(&p);
}

/* One event per completion: an application that re-arms before it polls
 * (perftest's latency tests, one poll per event) is not woken again for
 * the message it was woken for, however many packets of the next one
 * arrive behind it and raise the RQ interrupt meanwhile. A 2 MiB SEND
 * behind an unpolled one fills the RQ and waits there; only its last
 * packet, once the first message is polled, is worth an event. */
static void test_one_event_per_completion(void **state)
{
	struct pair p;

	(void)state;
	big_setup(&p, 78);
	assert_int_equal(ibv_req_notify_cq(EB.cq, 0), 0);
	send_one(&p, 6, 100);
	expect_event(&EB, WAIT_MS, "RECV of 100 B");
	assert_int_equal(ibv_req_notify_cq(EB.cq, 0), 0);
	post_recv1(p.b, 7, B.buf, BIG_LEN, B.mr->lkey);
	post1(p.a, 7, IBV_WR_SEND, A.buf, BIG_LEN, 0, 0, 0,
	      IBV_SEND_SIGNALED);
	expect_no_event(&EB, "packets queued behind an announced message");
	poll_one(EB.cq, IBV_WC_SUCCESS, IBV_WC_RECV, 6);
	expect_event(&EB, WAIT_MS, "RECV of 2 MiB");
	poll_big_recv(7);
	assert_int_equal(ibv_req_notify_cq(EB.cq, 0), 0);
	expect_no_event(&EB, "after both were polled");
	poll_one(A.cq, IBV_WC_SUCCESS, IBV_WC_SEND, 6);
	poll_one(A.cq, IBV_WC_SUCCESS, IBV_WC_SEND, 7);
	pair_down(&p);
}

/* B posts receive 1 (100 bytes), then polls cq, empty, polls times. */
static void recv_then_spin(struct pair *p, struct ibv_cq *cq, int polls)
{
	struct ibv_wc wc;

	post_recv1(p->b, 1, B.buf, 100, B.mr->lkey);
	for (int k = 0; k < polls; k++)
		assert_int_equal(ibv_poll_cq(cq, 1, &wc), 0);
}

/* An application that spun on poll_cq (lending its thread to a
 * software device's engine) and then waits on its channel still hears
 * of the next message: the engine does not count on polls that stopped. */
static void test_event_after_spin(void **state)
{
	struct pair p;

	(void)state;
	ev_open(&EA);
	ev_open(&EB);
	pair_up(&p, 16, 16);
	recv_then_spin(&p, EB.cq, 1000);
	assert_int_equal(ibv_req_notify_cq(EB.cq, 0), 0);
	post1(p.a, 1, IBV_WR_SEND, A.buf, 100, 0, 0, 0, IBV_SEND_SIGNALED);
	expect_event(&EB, WAIT_MS, "RECV after a spin");
	poll_one(EB.cq, IBV_WC_SUCCESS, IBV_WC_RECV, 1);
	poll_one(EA.cq, IBV_WC_SUCCESS, IBV_WC_SEND, 1);
	pair_down(&p);
}

/* A receiver spinning on poll_cq for a receive (poll_cq's shortcut:
 * nothing moved since the last look) still learns that its QP went
 * fatal: the receive comes back flushed. */
static void test_spin_sees_fatal(void **state)
{
	struct pair p;

	(void)state;
	pair_up(&p, 16, 16);
	recv_then_spin(&p, B.cq, 2000);
	post1(p.a, 2, IBV_WR_RDMA_WRITE, A.buf, 64, (uintptr_t)B.buf,
	      B.mr->rkey ^ 0x100, 0, IBV_SEND_SIGNALED);
	poll_one(A.cq, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE, 2);
	poll_one(B.cq, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 1);
	pair_down(&p);
}

/* A receiver spinning on poll_cq (the shortcut that compares doorbell
 * words without the CQ's lock) gets its receive flushed by the very
 * next poll once its QP is moved to ERR: going to ERR ends the shortcut
 * at once, not at the next full look. */
static void test_spin_sees_modify_err(void **state)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;
	struct pair p;

	(void)state;
	pair_up(&p, 16, 16);
	recv_then_spin(&p, B.cq, 70);
	assert_int_equal(ibv_modify_qp(p.b, &attr, IBV_QP_STATE), 0);
	assert_int_equal(ibv_poll_cq(B.cq, 1, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(wc.wr_id, 1);
	pair_down(&p);
}

/* Wait up to WAIT_MS for B's byte at p to read v, polling B's CQ (for
 * nothing: a WRITE completes no receive) between looks when spin; true
 * when it did. */
static bool b_byte_becomes(uint8_t *p, uint8_t v, bool spin)
{
	uint64_t end = deadline_in(WAIT_MS);
	struct ibv_wc wc;

	for (;;) {
		peer_sync(&B, p, 1, true);
		if (*(volatile uint8_t *)p == v)
			return true;
		if (spin)
			assert_int_equal(ibv_poll_cq(B.cq, 1, &wc), 0);
		if (deadline_passed(end))
			return false;
	}
}

/* A receiver that spun on poll_cq while packets came in (its engine
 * thread then leaves the port to the polls) and then stops polling, its
 * receive still outstanding and its CQ not armed, to wait on memory: a
 * WRITE that comes after its last poll still lands (the thread takes
 * the port back). */
static void test_write_after_spin(void **state)
{
	enum { LEN = 256, AT = 4096 };
	struct ibv_wc wc;
	struct pair p;

	(void)state;
	pair_up(&p, 16, 16);
	memset(A.buf, 0x5a, LEN);
	memset(A.buf + LEN, 0xa5, LEN);
	memset(B.buf + AT, 0, 2 * LEN);
	peer_sync(&B, B.buf + AT, 2 * LEN, false);
	post_recv1(p.b, 1, B.buf, 100, B.mr->lkey);
	post1(p.a, 1, IBV_WR_RDMA_WRITE, A.buf, LEN, (uintptr_t)(B.buf + AT),
	      B.mr->rkey, 0, IBV_SEND_SIGNALED);
	assert_true(b_byte_becomes(B.buf + AT + LEN - 1, 0x5a, true));
	for (int k = 0; k < 1000; k++)	/* the polls go on a while */
		assert_int_equal(ibv_poll_cq(B.cq, 1, &wc), 0);
	poll_one(A.cq, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 1);
	post1(p.a, 2, IBV_WR_RDMA_WRITE, A.buf + LEN, LEN,
	      (uintptr_t)(B.buf + AT + LEN), B.mr->rkey, 0, IBV_SEND_SIGNALED);
	if (!b_byte_becomes(B.buf + AT + 2 * LEN - 1, 0xa5, false))
		fail_msg("a WRITE after the receiver's last poll never landed");
	poll_one(A.cq, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 2);
	pair_down(&p);
}

/* A's retransmissions so far (RETRYCNTSTS) */
static uint32_t a_retries(void)
{
	uint32_t v = 0;

	assert_int_equal(ernicdv_reg_read(A.ctx, ERNIC_RETRYCNTSTS, &v), 0);
	return v;
}

/* A side that answers (B sent A a message since it last took one) and
 * whose poll takes a SEND in its own thread may leave the ACK to what it
 * sends next; when it sends nothing and stops polling, with another
 * receive still outstanding (its polls are not over), the ACK still
 * comes, from its engine thread, and the sender completes without
 * sending anything again (conn_std's timeout: 67 ms). */
static void test_ack_after_last_poll(void **state)
{
	struct ibv_sge s = sge(B.buf + 8192, 50, B.mr->lkey);
	struct ibv_send_wr wr, *bad;
	struct pair p;
	uint32_t r0;

	(void)state;
	pair_up(&p, 16, 16);
	post_recv1(p.b, 2, B.buf + 4096, 100, B.mr->lkey);
	for (int round = 0; round < 8; round++) {
		/* B answers first: a ping-pong's side */
		post_recv1(p.a, 10, A.buf + 4096, 100, A.mr->lkey);
		wr_set(&wr, 20, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED);
		assert_int_equal(ibv_post_send(p.b, &wr, &bad), 0);
		poll_one(A.cq, IBV_WC_SUCCESS, IBV_WC_RECV, 10);
		poll_one(B.cq, IBV_WC_SUCCESS, IBV_WC_SEND, 20);
		recv_then_spin(&p, B.cq, 1000);
		r0 = a_retries();
		post1(p.a, (uint64_t)round, IBV_WR_SEND, A.buf, 100, 0, 0, 0,
		      IBV_SEND_SIGNALED);
		poll_one(B.cq, IBV_WC_SUCCESS, IBV_WC_RECV, 2 - !!round);
		/* B polls no more; A's poll takes the ACK when it comes */
		poll_one(A.cq, IBV_WC_SUCCESS, IBV_WC_SEND, (uint64_t)round);
		if (a_retries() != r0)
			fail_msg("round %d: the SEND was sent again: its ACK "
				 "was lost", round);
	}
	pair_down(&p);
}

/* A burst of WRITEs, then only the channel: no poll lends its thread
 * to the engine between events. Every WQE rung while the first was in
 * flight still leaves, without a poll to carry it, and its data lands. */
static void test_burst_without_polls(void **state)
{
	enum { N = 16, LEN = 512 };
	struct ibv_wc wc[N];
	struct pair p;
	int got = 0;

	(void)state;
	ev_open(&EA);
	pair_up(&p, 2 * N, 16);
	for (int k = 0; k < N; k++)
		memset(A.buf + k * LEN, 0x40 + k, LEN);
	memset(B.buf, 0, N * LEN);
	peer_sync(&B, B.buf, N * LEN, false);
	assert_int_equal(ibv_req_notify_cq(EA.cq, 0), 0);
	for (int k = 0; k < N; k++)
		post1(p.a, (uint64_t)k, IBV_WR_RDMA_WRITE, A.buf + k * LEN, LEN,
		      (uintptr_t)(B.buf + k * LEN), B.mr->rkey, 0,
		      IBV_SEND_SIGNALED);
	while (got < N) {
		int n;

		expect_event(&EA, WAIT_MS, "WRITE burst");
		assert_int_equal(ibv_req_notify_cq(EA.cq, 0), 0);
		/* what came before the re-arm, and nothing more: no spin */
		n = ibv_poll_cq(EA.cq, N - got, &wc[got]);
		assert_true(n >= 0);
		for (int k = got; k < got + n; k++) {
			assert_int_equal(wc[k].status, IBV_WC_SUCCESS);
			assert_int_equal(wc[k].wr_id, k);
		}
		got += n;
	}
	peer_sync(&B, B.buf, N * LEN, true);
	for (int k = 0; k < N; k++)
		for (int j = 0; j < LEN; j++)
			if (B.buf[k * LEN + j] != 0x40 + k)
				fail_msg("WRITE %d: byte %d is 0x%02x", k, j,
					 B.buf[k * LEN + j]);
	pair_down(&p);
}

int dp_run_events(void)
{
	const struct CMUnitTest events[] = {
		cmocka_unit_test_teardown(test_cq_events, ev_teardown),
		cmocka_unit_test_teardown(test_solicited, ev_teardown),
		cmocka_unit_test_teardown(test_fatal_recovery, ev_teardown),
		cmocka_unit_test_teardown(test_unread_events, ev_teardown),
		cmocka_unit_test_teardown(test_event_after_whole_message,
					  ev_teardown),
		cmocka_unit_test_teardown(test_one_event_per_completion,
					  ev_teardown),
		cmocka_unit_test_teardown(test_spin_sees_fatal, ev_teardown),
		cmocka_unit_test_teardown(test_spin_sees_modify_err,
					  ev_teardown),
		cmocka_unit_test_teardown(test_event_after_spin, ev_teardown),
		cmocka_unit_test(test_write_after_spin),
		cmocka_unit_test(test_ack_after_last_poll),
		cmocka_unit_test_teardown(test_burst_without_polls,
					  ev_teardown),
	};

	return cmocka_run_group_tests_name("events", events, dp_group_setup,
					   dp_group_teardown);
}
