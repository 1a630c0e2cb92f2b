// SPDX-License-Identifier: MIT
/*
 * test_cm_conn.c, continued: letting go of ids in every state, hostile
 * and out-of-place MADs, cm_dev_tick's answer, failing sends, and
 * timewait's answer to a late REP.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cm_conn_harness.h"

#define A (&W.s[SA])
#define B (&W.s[SB])
#define ID(id) cm_id_local_comm_id(id)
#define ATTR(a) ((a) & 31)
#define T_PL2 (2 * cm_timeout_ms(CM_PACKET_LIFETIME))
#define T_REQ (cm_timeout_ms(CM_RESPONSE_TIMEOUT) + T_PL2)
#define T_TW T_REQ
#define T_MRA (cm_timeout_ms(CM_RESPONSE_TIMEOUT + 2) + T_PL2)

static const struct cm_mad_hdr hdr = { .method = IB_MGMT_METHOD_SEND,
				       .tid = 0x4242 };

static uint16_t rej_reason(int k)
{
	struct cm_rej r;

	assert_int_equal(cm_unpack_rej(h_mad(k), &r), 0);
	return r.reason;
}

static struct cm_rej rej_at(int k)
{
	struct cm_rej r;

	assert_int_equal(cm_unpack_rej(h_mad(k), &r), 0);
	return r;
}

/* A's REQ from qpn reaches B, whose consumer waits; all else reset. */
static struct cm_id *passive(uint32_t qpn, struct cm_id **a)
{
	struct cm_req req = h_req(0);
	struct cm_id *b;

	req.local_qpn = qpn;
	B->on_req = ON_REQ_WAIT;
	*a = h_send_req(&req);
	h_run();
	b = h_ev(SB, B->nev - 1, CM_EV_REQ)->id;
	assert_int_equal(cm_id_state(b), CM_REQ_RCVD);
	h_sent();
	h_reset();
	return b;
}

/* 10. cm_id_destroy: REQ_SENT withdraws the REQ with a REJ; the id
 * lingers through timewait, then is freed. */
static void test_destroy_req_sent(void **st)
{
	struct cm_id *a, *b;
	uint32_t aid, bid;
	struct cm_rej rej;

	(void)st;
	h_listen();
	b = passive(H_QPN_A, &a);
	aid = ID(a);
	bid = ID(b);
	cm_id_destroy(a);
	assert_string_equal(h_sent(), "A:REJ/4");
	rej = rej_at(0);
	assert_int_equal(rej.local_comm_id, aid);
	assert_int_equal(rej.remote_comm_id, 0);	/* B's ID: unknown */
	h_run();
	/* B finds its connection by A's ID, as for a duplicate REQ. */
	assert_int_equal(B->nev, 1);
	assert_ptr_equal(h_ev(SB, 0, CM_EV_REJ)->id, b);
	assert_int_equal(cm_id_state(b), CM_TIMEWAIT);
	assert_false(h_freed(SA, aid));
	h_advance(T_TW);
	assert_true(h_freed(SA, aid));
	assert_int_equal(cm_id_state(b), CM_CLOSED);
	cm_id_destroy(b);				/* closed: at once */
	assert_true(h_freed(SB, bid));
	assert_int_equal(A->nev, 0);
	STATS_EQ(SA, .tx = 1);
	STATS_EQ(SB, .rx = 1);
}

/* ESTABLISHED: a DREQ; the consumer hears nothing more. */
static void test_destroy_established(void **st)
{
	struct cm_req req = h_req(1);
	struct cm_id *a, *b;
	uint32_t aid;

	(void)st;
	h_listen();
	h_connect(&req, &a, &b);
	aid = ID(a);
	cm_id_destroy(a);
	h_run();
	assert_string_equal(h_sent(), "A:DREQ B:DREP");
	h_ev(SB, 0, CM_EV_DREQ);
	h_advance(T_TW);
	assert_true(h_freed(SA, aid));
	assert_int_equal(A->nev, 0);

	/* Again, the DREQ never answered: freed all the same. */
	req.local_qpn = H_QPN_A + 1;
	h_connect(&req, &a, &b);
	aid = ID(a);
	A->drop[ATTR(IB_CM_ATTR_DREQ)] = 100;
	cm_id_destroy(a);
	h_advance(T_REQ);
	h_advance(T_REQ);
	assert_string_equal(h_sent(), "A:DREQ(lost) A:DREQ(lost)");
	assert_false(h_freed(SA, aid));
	h_advance(T_TW);
	assert_true(h_freed(SA, aid));
	assert_int_equal(A->nev, 0);
	assert_int_equal(cm_id_state(b), CM_ESTABLISHED);
	STATS_EQ(SA, .tx = 2, .retransmits = 1, .timeouts = 1);
}

/* LISTEN: freed at once; its connections forget it. */
static void test_destroy_listen(void **st)
{
	struct cm_id *lis = h_listen(), *a, *b, *lis2;
	struct cm_req req = h_req(0);

	(void)st;
	b = passive(H_QPN_A, &a);
	assert_ptr_equal(cm_id_listener(b), lis);
	cm_id_destroy(lis);
	assert_null(cm_id_listener(b));
	assert_int_equal(cm_id_state(b), CM_REQ_RCVD);
	/* A REQ for its service now waits for the next listener
	 * (test_relisten_hold). */
	req.local_qpn = H_QPN_A + 1;
	h_send_req(&req);
	h_run();
	assert_string_equal(h_sent(), "A:REQ");
	lis2 = cm_id_create(B->dev, NULL);
	assert_int_equal(cm_listen(lis2, H_SID), 0);
	h_advance(0);
	assert_ptr_equal(h_ev(SB, B->nev - 1, CM_EV_REQ)->listener, lis2);
	/* The connection carries on without its listener. */
	A->auto_rtu = true;
	assert_int_equal(cm_send_rep(b, &(struct cm_rep){ .local_qpn = 9 }), 0);
	h_run();
	assert_string_equal(h_sent(), "B:REP A:RTU");
	assert_int_equal(cm_id_state(a), CM_ESTABLISHED);
	assert_int_equal(cm_id_state(b), CM_ESTABLISHED);
}

/* A listener that comes a moment after the REQ (perftest -R's server
 * listens again after its handshake): the REJ "invalid service ID" is
 * not told, the REQ goes again and connects; the consumer that gives up
 * meanwhile withdraws it and sends nothing more. */
static void test_listener_late(void **st)
{
	struct cm_req req = h_req(0);
	struct cm_id *a, *lis;

	(void)st;
	B->on_req = ON_REQ_ACCEPT;
	A->auto_rtu = true;
	a = h_send_req(&req);
	h_run();
	assert_string_equal(h_sent(), "A:REQ B:REJ/8");
	h_advance(1);
	h_run();
	assert_string_equal(h_sent(), "A:REQ B:REJ/8");
	assert_int_equal(A->nev, 0);
	lis = h_listen();
	h_advance(1);
	assert_string_equal(h_sent(), "");	/* the next one after 2 ms */
	h_advance(1);
	h_run();
	assert_string_equal(h_sent(), "A:REQ B:REP A:RTU");
	assert_ptr_equal(h_ev(SB, 0, CM_EV_REQ)->listener, lis);
	h_ev(SA, 0, CM_EV_REP);
	assert_int_equal(cm_id_state(a), CM_ESTABLISHED);
	STATS_EQ(SA, .rx = 3, .tx = 4, .no_listener_resends = 2);
	STATS_EQ(SB, .rx = 4, .tx = 3, .rx_unknown = 2);

	/* Withdrawn while waiting: its REJ, and no REQ at the deadline.
	 * (B answers a service it listened on lately only after
	 * CM_RELISTEN_HOLD_MS.) */
	cm_id_destroy(lis);
	h_advance(CM_RELISTEN_WINDOW_MS + 1);
	req.local_qpn = H_QPN_A + 1;
	a = h_send_req(&req);
	h_run();
	assert_string_equal(h_sent(), "A:REQ B:REJ/8");
	cm_id_destroy(a);
	assert_string_equal(h_sent(), "A:REJ/4");
	h_advance(T_REQ);
	assert_string_equal(h_sent(), "");
}

/* A REQ for a service whose listener went a moment ago (perftest -R's
 * server between its two listens, and a client that, as the kernel's,
 * takes REJ 8 as final): held unanswered for the next listener; a
 * duplicate is not answered either; withdrawn by its sender, it is
 * forgotten; not taken within CM_RELISTEN_HOLD_MS, it gets its REJ; and
 * past CM_RELISTEN_WINDOW_MS, or beyond CM_HELD_MAX held, at once. */
static void test_relisten_hold(void **st)
{
	struct cm_req req = h_req(0);
	struct cm_id *lis = h_listen(), *a, *held[CM_HELD_MAX + 1];
	struct cm_rej rej;

	(void)st;
	B->on_req = ON_REQ_ACCEPT;
	A->auto_rtu = true;
	cm_id_destroy(lis);
	h_advance(CM_RELISTEN_WINDOW_MS - CM_RELISTEN_HOLD_MS - 1);
	a = h_send_req(&req);
	h_dup(0);
	h_run();
	assert_string_equal(h_sent(), "A:REQ");
	STATS_EQ(SB, .rx = 2, .held = 1, .rx_dup = 1);
	h_advance(CM_RELISTEN_HOLD_MS - 1);
	assert_string_equal(h_sent(), "");
	lis = h_listen();
	h_advance(0);
	h_run();
	assert_string_equal(h_sent(), "B:REP A:RTU");
	assert_ptr_equal(h_ev(SB, 0, CM_EV_REQ)->listener, lis);
	assert_int_equal(cm_id_state(a), CM_ESTABLISHED);
	STATS_EQ(SA, .rx = 1, .tx = 2);
	STATS_EQ(SB, .rx = 3, .tx = 1, .held = 1, .rx_dup = 1);

	/* Withdrawn while held: forgotten, nothing sent at its deadline. */
	cm_id_destroy(lis);
	req.local_qpn = H_QPN_A + 1;
	a = h_send_req(&req);
	h_run();
	cm_id_destroy(a);
	h_run();
	assert_string_equal(h_sent(), "A:REQ A:REJ/4");
	h_advance(CM_RELISTEN_HOLD_MS);
	assert_string_equal(h_sent(), "");

	/* Not taken in time: REJ 8 at CM_RELISTEN_HOLD_MS. */
	req.local_qpn = H_QPN_A + 2;
	a = h_send_req(&req);
	h_run();
	h_advance(CM_RELISTEN_HOLD_MS - 1);
	assert_string_equal(h_sent(), "A:REQ");
	h_advance(1);
	h_run();
	assert_string_equal(h_sent(), "B:REJ/8");
	assert_int_equal(cm_unpack_rej(h_mad(0), &rej), 0);
	assert_int_equal(rej.remote_comm_id, cm_id_local_comm_id(a));
	assert_int_equal(rej.reason, IB_CM_REJ_INVALID_SERVICE_ID);
	/* ... and the service is no longer taken as between two listens:
	 * A's REQ again (CM_NO_LISTENER_RETRIES) gets its REJ at once. */
	h_advance(1);
	h_run();
	assert_string_equal(h_sent(), "A:REQ B:REJ/8");
	cm_id_destroy(a);
	h_run();
	h_sent();

	/* CM_HELD_MAX held at most; the next is rejected at once. */
	cm_id_destroy(h_listen());
	for (unsigned int k = 0; k <= CM_HELD_MAX; k++) {
		req.local_qpn = H_QPN_A + 3 + k;
		held[k] = h_send_req(&req);
		h_run();
		assert_string_equal(h_sent(), k < CM_HELD_MAX ? "A:REQ" :
							 "A:REQ B:REJ/8");
	}
	for (unsigned int k = 0; k <= CM_HELD_MAX; k++)
		cm_id_destroy(held[k]);
	h_run();
	h_sent();

	/* A listener gone for longer than CM_RELISTEN_WINDOW_MS. */
	h_advance(CM_RELISTEN_WINDOW_MS + 1);
	h_sent();
	req.local_qpn = H_QPN_A + 20;
	a = h_send_req(&req);
	h_run();
	assert_string_equal(h_sent(), "A:REQ B:REJ/8");
	cm_id_destroy(a);
}

/* The passive side lets go before or after its REP. */
static void test_destroy_passive(void **st)
{
	struct cm_rep rep = h_rep();
	struct cm_id *a, *b;
	struct cm_rej rej;
	uint32_t bid;

	(void)st;
	h_listen();
	b = passive(H_QPN_A, &a);
	cm_id_destroy(b);				/* REQ_RCVD */
	h_run();
	assert_string_equal(h_sent(), "B:REJ/28");
	assert_int_equal(rej_at(0).msg_rejected, CM_MSG_REQ);
	assert_ptr_equal(h_ev(SA, 0, CM_EV_REJ)->id, a);

	b = passive(H_QPN_A + 1, &a);
	bid = ID(b);
	B->drop[ATTR(IB_CM_ATTR_REP)] = 1;
	assert_int_equal(cm_send_rep(b, &rep), 0);
	cm_id_destroy(b);				/* REP_SENT */
	h_run();
	assert_string_equal(h_sent(), "B:REP(lost) B:REJ/28");
	rej = rej_at(1);
	assert_int_equal(rej.msg_rejected, CM_MSG_REP);
	assert_int_equal(rej.local_comm_id, bid);
	assert_int_equal(rej.remote_comm_id, ID(a));
	assert_ptr_equal(h_ev(SA, 0, CM_EV_REJ)->id, a);
	h_advance(T_TW);
	assert_string_equal(h_sent(), "");		/* no REP again */
	assert_true(h_freed(SB, bid));
	assert_int_equal(B->nev, 0);
}

/* The active side lets go in REP_RCVD, MRA_REQ_RCVD, DREQ_SENT, IDLE. */
static void test_destroy_active(void **st)
{
	struct cm_req req = h_req(0);
	struct cm_id *a, *b;
	uint32_t aid;

	(void)st;
	h_listen();
	B->on_req = ON_REQ_ACCEPT;			/* A: no RTU */
	a = h_send_req(&req);
	h_run();
	assert_string_equal(h_sent(), "A:REQ B:REP");
	b = h_ev(SB, 0, CM_EV_REQ)->id;
	assert_int_equal(cm_id_state(a), CM_REP_RCVD);
	h_reset();
	cm_id_destroy(a);
	h_run();
	assert_string_equal(h_sent(), "A:REJ/28");
	assert_int_equal(rej_at(0).msg_rejected, CM_MSG_REP);
	assert_ptr_equal(h_ev(SB, 0, CM_EV_REJ)->id, b);

	b = passive(H_QPN_A + 1, &a);
	h_advance(T_REQ);
	h_run();
	assert_string_equal(h_sent(), "A:REQ B:MRA");
	assert_int_equal(cm_id_state(a), CM_MRA_REQ_RCVD);
	cm_id_destroy(a);
	h_run();
	assert_string_equal(h_sent(), "A:REJ/4");
	assert_int_equal(rej_at(0).remote_comm_id, ID(b));
	assert_int_equal(h_ev(SB, 0, CM_EV_REJ)->state, CM_TIMEWAIT);

	req.local_qpn = H_QPN_A + 2;
	h_connect(&req, &a, &b);
	aid = ID(a);
	assert_int_equal(cm_send_dreq(a, NULL, 0), 0);
	cm_id_destroy(a);				/* DREQ_SENT */
	h_run();
	assert_string_equal(h_sent(), "A:DREQ B:DREP");
	assert_false(h_freed(SA, aid));
	h_advance(T_TW);
	assert_true(h_freed(SA, aid));
	assert_int_equal(A->nev, 0);

	a = cm_id_create(A->dev, NULL);
	aid = ID(a);
	cm_id_destroy(a);				/* IDLE */
	assert_true(h_freed(SA, aid));
	assert_string_equal(h_sent(), "");
}

/* cm_dev_destroy with ids in many states, some let go: all freed
 * (valgrind --leak-check=full says so). */
static void test_dev_destroy_live(void **st)
{
	struct cm_req req = h_req(0);
	struct cm_id *a, *b;

	(void)st;
	h_listen();
	h_connect(&req, &a, &b);
	req.local_qpn++;
	h_connect(&req, &a, &b);
	assert_int_equal(cm_send_dreq(a, NULL, 0), 0);
	cm_id_destroy(a);
	b = passive(H_QPN_A + 2, &a);
	A->drop[ATTR(IB_CM_ATTR_REQ)] = 1;
	req.local_qpn = H_QPN_A + 3;
	h_send_req(&req);
	cm_id_create(A->dev, NULL);
	cm_id_destroy(b);
	cm_dev_destroy(A->dev);
	cm_dev_destroy(B->dev);
	A->dev = B->dev = NULL;
}

/* ---- 11. hostile and out-of-place MADs ---- */

struct world_snap {
	struct cm_id *ids[6];
	enum cm_state state[6];
	int tick[2];
};

static struct world_snap hostile_world(void)
{
	struct cm_req req = h_req(0);
	struct world_snap s;

	s.ids[0] = h_listen();
	h_connect(&req, &s.ids[1], &s.ids[2]);		/* established */
	A->drop[ATTR(IB_CM_ATTR_REQ)] = 1;
	req.local_qpn = H_QPN_A + 1;
	s.ids[3] = h_send_req(&req);			/* REQ_SENT, lost */
	s.ids[4] = passive(H_QPN_A + 2, &s.ids[5]);	/* REQ_RCVD */
	for (int k = 0; k < 6; k++)
		s.state[k] = cm_id_state(s.ids[k]);
	s.tick[SA] = cm_dev_tick(A->dev);
	s.tick[SB] = cm_dev_tick(B->dev);
	return s;
}

static void nothing_changed(const struct world_snap *s)
{
	for (int k = 0; k < 6; k++)
		assert_int_equal(cm_id_state(s->ids[k]), s->state[k]);
	assert_int_equal(cm_dev_tick(A->dev), s->tick[SA]);
	assert_int_equal(cm_dev_tick(B->dev), s->tick[SB]);
	assert_int_equal(A->nev + B->nev, 0);
}

static uint32_t rnd(void)
{
	static uint32_t x = 0x2545F491;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x;
}

static void test_hostile_random(void **st)
{
	static const uint16_t attrs[] = {
		IB_CM_ATTR_REQ, IB_CM_ATTR_MRA, IB_CM_ATTR_REJ, IB_CM_ATTR_REP,
		IB_CM_ATTR_RTU, IB_CM_ATTR_DREQ, IB_CM_ATTR_DREP,
		IB_CM_ATTR_CLASS_PORT_INFO, IB_CM_ATTR_SIDR_REQ,
		IB_CM_ATTR_SIDR_REP, IB_CM_ATTR_LAP, IB_CM_ATTR_APR, 0, 0xFFFF,
	};
	struct world_snap s = hostile_world();
	uint64_t n = 0, bad[2] = { 0 }, answered = 0;
	uint8_t mad[IB_MAD_SIZE];
	const uint8_t *m = mad + IB_MAD_HDR_LEN;

	(void)st;
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		uint16_t attr = attrs[i];

		for (int round = 0; round < 64; round++) {
			for (int dst = SA; dst <= SB; dst++) {
				for (size_t k = 0; k < sizeof(mad); k++)
					mad[k] = (uint8_t)rnd();
				mad[0] = IB_MGMT_BASE_VERSION;
				mad[1] = IB_MGMT_CLASS_CM;
				mad[2] = IB_CM_CLASS_VERSION;
				mad[3] = IB_MGMT_METHOD_SEND;
				mad[4] = mad[5] = 0;
				mad[16] = (uint8_t)(attr >> 8);
				mad[17] = (uint8_t)attr;
				if (attr < IB_CM_ATTR_REQ ||
				    attr > IB_CM_ATTR_DREP ||
				    (attr == IB_CM_ATTR_MRA && m[8] >> 6 == 3) ||
				    (attr == IB_CM_ATTR_REJ &&
				     (m[8] >> 6 == 3 || m[9] >> 1 > CM_REJ_ARI)))
					bad[dst]++;
				if (attr == IB_CM_ATTR_REQ ||
				    attr == IB_CM_ATTR_REP ||
				    attr == IB_CM_ATTR_DREQ)
					answered++;	/* REJ, REJ, DREP */
				h_inject_from(dst, &W.stranger, mad,
					      sizeof(mad));
				h_sent();
				n++;
			}
		}
	}
	assert_int_equal(W.nq, 0);		/* all to the stranger */
	h_sent();
	nothing_changed(&s);
	assert_true(bad[SA] > 7 * 64 && bad[SB] > 7 * 64);
	STATS_EQ(SA, .rx = n / 2, .tx = answered / 2, .rx_bad = bad[SA],
		 .rx_unknown = n / 2 - bad[SA]);
	STATS_EQ(SB, .rx = n / 2, .tx = answered / 2, .rx_bad = bad[SB],
		 .rx_unknown = n / 2 - bad[SB]);
}

/* A good DREQ for b, spoilt in its header or length: ignored. */
static void test_hostile_headers(void **st)
{
	struct world_snap s = hostile_world();
	struct cm_dreq d = { .local_comm_id = ID(s.ids[1]),
			     .remote_comm_id = ID(s.ids[2]),
			     .remote_qpn = H_QPN_B };
	static const struct { int off; uint8_t v; } spoil[] = {
		{ 0, 2 }, { 1, 0x04 }, { 2, 1 }, { 2, 3 },
		{ 3, IB_MGMT_METHOD_GET }, { 3, IB_MGMT_METHOD_GET_RESP },
		{ 5, 0x04 }, { 4, 0x80 },
	};
	static const size_t lens[] = { 0, 23, 24, 100, 255, 257, 512 };
	uint8_t mad[2 * IB_MAD_SIZE] = { 0 }, bad[2 * IB_MAD_SIZE];
	int nbad = 0;

	(void)st;
	assert_int_equal(cm_pack_dreq(mad, &hdr, &d), 0);
	h_inject_from(SB, &A->addr, NULL, 0);
	nbad++;
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++, nbad++)
		h_inject_from(SB, &A->addr, mad, lens[k]);
	for (size_t k = 0; k < sizeof(spoil) / sizeof(spoil[0]); k++, nbad++) {
		memcpy(bad, mad, sizeof(bad));
		bad[spoil[k].off] = spoil[k].v;
		h_inject(SB, bad);
	}
	assert_string_equal(h_sent(), "");
	nothing_changed(&s);
	STATS_EQ(SB, .rx = (uint64_t)nbad, .rx_bad = (uint64_t)nbad);
	h_inject(SB, mad);			/* unspoilt: it was good */
	assert_int_equal(cm_id_state(s.ids[2]), CM_TIMEWAIT);
}

/* The right IDs in a state that does not take the message: dropped. */
static void test_wrong_state(void **st)
{
	struct world_snap s = hostile_world();
	struct cm_id *a = s.ids[1], *b = s.ids[2], *a2 = s.ids[3];
	struct cm_id *b3 = s.ids[4];
	struct cm_rtu rtu = { .local_comm_id = 0x99, .remote_comm_id = ID(a2) };
	struct cm_drep drep = { .local_comm_id = ID(b), .remote_comm_id = ID(a) };
	struct cm_rep rep = { .local_comm_id = ID(a), .remote_comm_id = ID(b) };
	struct cm_mra mra = { .local_comm_id = ID(b), .remote_comm_id = ID(a) };
	struct cm_rej rej = { .local_comm_id = ID(b), .remote_comm_id = ID(a),
			      .reason = IB_CM_REJ_CONSUMER_DEFINED };
	struct cm_req req = h_req(0);
	uint8_t mad[IB_MAD_SIZE];

	(void)st;
	assert_int_equal(cm_pack_rtu(mad, &hdr, &rtu), 0);
	h_inject(SA, mad);			/* RTU to REQ_SENT */
	assert_int_equal(cm_pack_drep(mad, &hdr, &drep), 0);
	h_inject(SA, mad);			/* DREP to ESTABLISHED */
	assert_int_equal(cm_pack_mra(mad, &hdr, &mra), 0);
	h_inject(SA, mad);			/* MRA to ESTABLISHED */
	assert_int_equal(cm_pack_rep(mad, &hdr, &rep), 0);
	h_inject(SB, mad);			/* REP to the passive side */
	rtu.local_comm_id = ID(a);
	rtu.remote_comm_id = ID(b);
	assert_int_equal(cm_pack_rtu(mad, &hdr, &rtu), 0);
	h_inject(SB, mad);			/* RTU to ESTABLISHED */
	mra.remote_comm_id = ID(b3);
	assert_int_equal(cm_pack_mra(mad, &hdr, &mra), 0);
	h_inject(SB, mad);			/* MRA to REQ_RCVD */
	assert_string_equal(h_sent(), "");
	nothing_changed(&s);
	STATS_EQ(SA, .rx = 3, .rx_unknown = 3);
	STATS_EQ(SB, .rx = 3, .rx_unknown = 3);

	/* A REJ to ESTABLISHED with the right IDs is not dropped: the peer
	 * has closed (its REP timed out while our RTU was late), and so
	 * do we, telling the consumer. */
	assert_int_equal(cm_pack_rej(mad, &hdr, &rej), 0);
	h_inject(SA, mad);
	assert_int_equal(cm_id_state(a), CM_TIMEWAIT);
	assert_non_null(h_ev(SA, 0, CM_EV_REJ));
	assert_string_equal(h_sent(), "");

	/* Not RC, or with an SRQ: refused, no connection made. */
	req.local_qpn = 0x777;
	req.transport = 1;
	h_send_req(&req);
	req.transport = 0;
	req.srq = true;
	h_send_req(&req);
	h_run();
	assert_string_equal(h_sent(), "A:REQ A:REQ B:REJ/9 B:REJ/9");
	assert_int_equal(B->nev, 0);
	assert_int_equal(A->nev, 3);	/* the REJ above, and these two */
}

/* ---- 12. cm_dev_tick: ms to the next deadline, -1 for none ---- */

static void test_tick(void **st)
{
	struct cm_req slow = h_req(0);
	struct cm_id *a, *b;

	(void)st;
	assert_int_equal(cm_dev_tick(A->dev), -1);
	h_listen();
	assert_int_equal(cm_dev_tick(B->dev), -1);
	A->auto_rtu = true;
	b = passive(H_QPN_A, &a);
	assert_int_equal(cm_dev_tick(A->dev), T_REQ);
	assert_int_equal(cm_dev_tick(B->dev), -1);	/* REQ_RCVD: none */
	h_advance(10);
	assert_int_equal(cm_dev_tick(A->dev), T_REQ - 10);
	h_advance(T_REQ - 10);
	assert_int_equal(cm_dev_tick(A->dev), T_REQ);	/* sent again */
	h_run();					/* MRA */
	assert_int_equal(cm_dev_tick(A->dev), T_MRA);
	assert_int_equal(cm_send_rep(b, &(struct cm_rep){ .local_qpn = 5 }),
			 0);
	assert_int_equal(cm_dev_tick(B->dev), T_REQ);
	h_run();
	assert_int_equal(cm_dev_tick(A->dev), -1);
	assert_int_equal(cm_dev_tick(B->dev), -1);

	/* A REQ whose peer takes 2^31 * 4 us: capped at a minute. */
	slow.local_qpn = H_QPN_A + 1;
	slow.remote_cm_response_timeout = 31;
	A->drop[ATTR(IB_CM_ATTR_REQ)] = 1;
	h_send_req(&slow);
	assert_int_equal(cm_dev_tick(A->dev), 60000);
	/* The earliest deadline wins. */
	assert_int_equal(cm_send_dreq(a, NULL, 0), 0);
	assert_int_equal(cm_dev_tick(A->dev), T_REQ);
	h_run();
	assert_int_equal(cm_dev_tick(A->dev), T_TW);
	assert_int_equal(cm_dev_tick(B->dev), T_TW);
	h_advance(T_TW - 5);
	assert_int_equal(cm_dev_tick(A->dev), 5);
	h_advance(5);
	assert_int_equal(cm_dev_tick(A->dev), 60000);
	assert_int_equal(cm_dev_tick(B->dev), -1);
}

/* A send that finds QP1's queue full (EAGAIN) is tried again a moment
 * later, using up no retry; any other failure is retried as a lost
 * message is. */
static void test_send_failure(void **st)
{
	struct cm_req req = h_req(0);
	struct cm_id *a;

	(void)st;
	h_listen();
	B->on_req = ON_REQ_ACCEPT;
	A->auto_rtu = true;
	A->fail = EAGAIN;
	a = h_send_req(&req);			/* EAGAIN: 0 */
	assert_string_equal(h_sent(), "A:REQ(err)");
	STATS_EQ(SA, .tx_errors = 1);
	assert_int_equal(cm_dev_tick(A->dev), CM_BUSY_RETRY_MS);
	h_advance(CM_BUSY_RETRY_MS);
	h_run();
	assert_string_equal(h_sent(), "A:REQ B:REP A:RTU");
	assert_int_equal(cm_id_state(a), CM_ESTABLISHED);
	STATS_EQ(SA, .rx = 1, .tx = 2, .tx_errors = 1);
	/* The REQ's timer started when it went out, and has stopped. */
	assert_int_equal(cm_dev_tick(A->dev), -1);

	/* Another error is returned, and the REQ retried all the same. */
	A->fail = ENOBUFS;
	req.local_qpn = H_QPN_A + 1;
	a = cm_id_create(A->dev, NULL);
	assert_int_equal(cm_send_req(a, &B->addr, &req), ENOBUFS);
	assert_int_equal(cm_id_state(a), CM_REQ_SENT);
	h_advance(T_REQ);
	h_run();
	assert_string_equal(h_sent(), "A:REQ(err) A:REQ B:REP A:RTU");
	assert_int_equal(cm_id_state(a), CM_ESTABLISHED);
}

/* CM_EV_TIMEWAIT_EXIT only for an id that asked for it; a listener's
 * REQs waiting for an answer are counted (rdma_cm's backlog). */
static void test_timewait_event_backlog(void **st)
{
	struct cm_id *lis, *a, *b, *a2, *b2;

	(void)st;
	lis = h_listen();
	b = passive(H_QPN_A, &a);
	b2 = passive(H_QPN_A + 1, &a2);
	assert_int_equal(cm_listener_pending(lis), 2);
	assert_int_equal(cm_send_rej(b2, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
				     NULL, 0), 0);
	assert_int_equal(cm_listener_pending(lis), 1);
	cm_id_report_timewait(a);
	A->auto_rtu = true;
	assert_int_equal(cm_send_rep(b, &(struct cm_rep){ 0 }), 0);
	h_run();
	assert_int_equal(cm_listener_pending(lis), 0);
	assert_int_equal(cm_id_state(a), CM_ESTABLISHED);
	h_reset();
	assert_int_equal(cm_send_dreq(a, NULL, 0), 0);
	h_run();
	assert_int_equal(cm_id_state(a), CM_TIMEWAIT);
	assert_int_equal(cm_id_state(b), CM_TIMEWAIT);
	h_reset();
	h_advance(T_TW);
	assert_int_equal(cm_id_state(a), CM_CLOSED);
	assert_int_equal(A->nev, 1);
	h_ev(SA, 0, CM_EV_TIMEWAIT_EXIT);
	assert_int_equal(B->nev, 0);		/* b did not ask */
}

/* A gave up after an MRA; B's REP comes late: A's timewait answers
 * with its REJ again, never with its old REQ. */
static void test_timewait_answers_rej(void **st)
{
	struct cm_rep rep = h_rep();
	struct cm_id *a, *b;

	(void)st;
	h_listen();
	b = passive(H_QPN_A, &a);
	h_advance(T_REQ);
	h_run();
	assert_string_equal(h_sent(), "A:REQ B:MRA");
	B->drop[ATTR(IB_CM_ATTR_REP)] = 4;
	assert_int_equal(cm_send_rep(b, &rep), 0);
	for (int k = 0; k < 3; k++)
		h_advance(T_REQ);
	assert_string_equal(h_sent(), "B:REP(lost) B:REP(lost) B:REP(lost) "
				      "B:REP(lost)");
	assert_int_equal(cm_id_state(a), CM_MRA_REQ_RCVD);
	A->drop[ATTR(IB_CM_ATTR_REJ)] = 1;
	h_advance(T_REQ);		/* past the MRA's time: A gives up */
	assert_string_equal(h_sent(), "A:REJ/4(lost) B:REP");
	assert_int_equal(h_ev(SA, 0, CM_EV_TIMEOUT)->state, CM_TIMEWAIT);
	h_run();
	assert_string_equal(h_sent(), "A:REJ/4");
	assert_int_equal(rej_reason(0), IB_CM_REJ_TIMEOUT);
	assert_int_equal(h_ev(SB, 0, CM_EV_REJ)->state, CM_TIMEWAIT);
	assert_int_equal(A->nev, 1);
	STATS_EQ(SA, .rx = 2, .tx = 3, .rx_dup = 1, .retransmits = 1,
		 .timeouts = 1);
	STATS_EQ(SB, .rx = 2, .tx = 6, .rx_dup = 1, .retransmits = 4);
}

int cm_conn_more_tests(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, h_setup, h_teardown)
		T(test_destroy_req_sent),
		T(test_destroy_established),
		T(test_destroy_listen),
		T(test_listener_late),
		T(test_relisten_hold),
		T(test_destroy_passive),
		T(test_destroy_active),
		T(test_dev_destroy_live),
		T(test_hostile_random),
		T(test_hostile_headers),
		T(test_wrong_state),
		T(test_tick),
		T(test_send_failure),
		T(test_timewait_answers_rej),
		T(test_timewait_event_backlog),
#undef T
	};

	return cmocka_run_group_tests_name("cm_conn_more", tests, NULL, NULL);
}
