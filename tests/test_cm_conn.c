// SPDX-License-Identifier: MIT
/*
 * The IB CM connection state machine (cm/cm_conn.c): two CMs back to
 * back through a network, a clock and a consumer the test drives
 * (cm_conn_harness.h). Each scenario checks the states, the events, the
 * MADs on the wire in order, and the counters.
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

/* The CM's timers with its defaults, from IBTA's 4.096 us * 2^n. */
#define T_PL2 (2 * cm_timeout_ms(CM_PACKET_LIFETIME))
#define T_RSP cm_timeout_ms(CM_RESPONSE_TIMEOUT)
#define T_REQ (T_RSP + T_PL2)	/* REQ, REP, DREQ retransmission */
#define T_TW (T_PL2 + T_RSP)	/* timewait */
#define T_MRA (cm_timeout_ms(CM_RESPONSE_TIMEOUT + 2) + T_PL2)

static uint64_t tid_of(const uint8_t *mad)
{
	uint64_t t = 0;

	for (int k = 8; k < 16; k++)
		t = t << 8 | mad[k];
	return t;
}

static void assert_pdata(const uint8_t *p, size_t room, const char *s)
{
	size_t n = strlen(s);

	assert_memory_equal(p, s, n);
	for (size_t k = n; k < room; k++)
		assert_int_equal(p[k], 0);
}

static void test_timeouts(void **st)
{
	(void)st;
	assert_int_equal(cm_timeout_ms(0), 1);		/* 4.096 us */
	assert_int_equal(cm_timeout_ms(14), 68);	/* 67.1 ms */
	assert_int_equal(cm_timeout_ms(18), 1074);	/* 1073.7 ms */
	assert_int_equal(cm_timeout_ms(31), 8796094);
	assert_int_equal(T_REQ, 1210);
	assert_int_equal(T_MRA, 4431);
	errno = 0;
	assert_null(cm_dev_create(&(struct cm_ops){ 0 }, NULL, 0, 0));
	assert_int_equal(errno, EINVAL);
}

/* 1. REQ, REP, RTU: everything each side said arrives, IDs cross. */
static void test_handshake(void **st)
{
	struct cm_id *lis = h_listen(), *other, *a, *b;
	struct cm_req req = h_req(0), q;
	const struct h_ev *e;
	int tag;

	(void)st;
	other = cm_id_create(B->dev, NULL);
	assert_int_equal(cm_listen(other, H_SID), EADDRINUSE);
	assert_int_equal(cm_listen(lis, H_SID + 1), EINVAL);
	cm_id_destroy(other);			/* idle: freed at once */
	B->on_req = ON_REQ_ACCEPT;
	A->auto_rtu = true;

	a = cm_id_create(A->dev, &tag);
	assert_ptr_equal(cm_id_user(a), &tag);
	assert_int_equal(cm_id_state(a), CM_IDLE);
	assert_int_equal(cm_send_req(a, &B->addr, &req), 0);
	assert_int_equal(cm_id_state(a), CM_REQ_SENT);
	/* The CM's own fields and defaults. */
	assert_int_equal(req.local_comm_id, ID(a));
	assert_true(req.local_ca_guid == H_GUID_A);
	assert_int_equal(req.remote_cm_response_timeout, CM_RESPONSE_TIMEOUT);
	assert_int_equal(req.local_cm_response_timeout, CM_RESPONSE_TIMEOUT);
	assert_int_equal(req.max_cm_retries, CM_MAX_RETRIES);
	assert_int_equal(cm_send_req(a, &B->addr, &req), EINVAL);
	assert_int_equal(cm_send_rtu(a, NULL, 0), EINVAL);
	assert_int_equal(cm_send_dreq(a, NULL, 0), EINVAL);

	assert_int_equal(h_run(), 3);
	assert_string_equal(h_sent(), "A:REQ B:REP A:RTU");
	assert_int_equal(cm_unpack_req(h_mad(0), &q), 0);
	assert_int_equal(q.local_comm_id, ID(a));
	assert_int_equal(q.max_cm_retries, CM_MAX_RETRIES);
	assert_true(tid_of(h_mad(1)) == tid_of(h_mad(0)));
	assert_true(tid_of(h_mad(2)) == tid_of(h_mad(0)));

	/* B: a new id through the listener, with A's REQ. */
	assert_int_equal(B->nev, 2);
	e = h_ev(SB, 0, CM_EV_REQ);
	b = e->id;
	assert_ptr_equal(e->listener, lis);
	assert_ptr_equal(cm_id_listener(b), lis);
	assert_null(cm_id_user(b));
	assert_int_equal(e->state, CM_REQ_RCVD);
	assert_memory_equal(e->from.gid, A->addr.gid, 16);
	assert_int_equal(e->u.req.local_comm_id, ID(a));
	assert_true(e->u.req.service_id == H_SID);
	assert_true(e->u.req.local_ca_guid == H_GUID_A);
	assert_int_equal(e->u.req.local_qpn, H_QPN_A);
	assert_int_equal(e->u.req.starting_psn, H_PSN_A);
	assert_memory_equal(e->u.req.primary.local_gid, A->addr.gid, 16);
	assert_memory_equal(e->u.req.pdata, req.pdata, CM_REQ_PDATA);
	e = h_ev(SB, 1, CM_EV_ESTABLISHED);
	assert_ptr_equal(e->id, b);
	assert_int_equal(e->u.rtu.local_comm_id, ID(a));
	assert_int_equal(e->u.rtu.remote_comm_id, ID(b));
	assert_pdata(e->u.rtu.pdata, CM_RTU_PDATA, H_RTU_PDATA);

	/* A: B's REP. */
	assert_int_equal(A->nev, 1);
	e = h_ev(SA, 0, CM_EV_REP);
	assert_ptr_equal(e->id, a);
	assert_int_equal(e->state, CM_REP_RCVD);
	assert_int_equal(e->u.rep.local_comm_id, ID(b));
	assert_int_equal(e->u.rep.remote_comm_id, ID(a));
	assert_int_equal(e->u.rep.local_qpn, H_QPN_B);
	assert_int_equal(e->u.rep.starting_psn, H_PSN_B);
	assert_true(e->u.rep.local_ca_guid == H_GUID_B);
	assert_int_equal(e->u.rep.target_ack_delay, CM_PACKET_LIFETIME);
	assert_memory_equal(e->u.rep.pdata, h_rep().pdata, CM_REP_PDATA);

	assert_int_equal(cm_id_state(a), CM_ESTABLISHED);
	assert_int_equal(cm_id_state(b), CM_ESTABLISHED);
	assert_int_not_equal(ID(a), ID(b));
	assert_int_equal(cm_id_remote_comm_id(a), ID(b));
	assert_int_equal(cm_id_remote_comm_id(b), ID(a));
	assert_memory_equal(cm_id_peer(a)->gid, B->addr.gid, 16);
	assert_memory_equal(cm_id_peer(b)->gid, A->addr.gid, 16);
	assert_int_equal(cm_send_rep(b, &(struct cm_rep){ 0 }), EINVAL);
	assert_int_equal(cm_send_rtu(a, NULL, 0), EINVAL);
	assert_int_equal(cm_send_rej(a, 28, NULL, 0, NULL, 0), EINVAL);
	assert_int_equal(cm_dev_tick(A->dev), -1);
	assert_int_equal(cm_dev_tick(B->dev), -1);
	STATS_EQ(SA, .rx = 1, .tx = 2);
	STATS_EQ(SB, .rx = 2, .tx = 1);
}

/* 2. A REQ for a service nobody listens to. */
static void test_no_listener(void **st)
{
	struct cm_req req = h_req(0);
	struct cm_id *lis = h_listen(), *a;
	uint8_t first[IB_MAD_SIZE];
	const struct h_ev *e;
	struct cm_rej rej;
	uint32_t aid;

	(void)st;
	req.service_id = H_SID + 1;
	a = h_send_req(&req);
	aid = ID(a);
	h_run();
	assert_string_equal(h_sent(), "A:REQ B:REJ/8");
	assert_int_equal(cm_unpack_rej(h_mad(1), &rej), 0);
	assert_int_equal(rej.local_comm_id, 0);
	assert_int_equal(rej.remote_comm_id, aid);
	assert_int_equal(rej.msg_rejected, CM_MSG_REQ);
	memcpy(first, h_mad(0), IB_MAD_SIZE);
	/* Taken as "not listening yet": the same REQ again after 1, 2, 4,
	 * ... ms, and only the last REJ reaches the consumer. */
	for (unsigned int k = 0; k < CM_NO_LISTENER_RETRIES; k++) {
		assert_int_equal(A->nev, 0);
		assert_int_equal(cm_id_state(a), CM_REQ_SENT);
		h_advance((1u << k) - 1);
		assert_string_equal(h_sent(), "");
		h_advance(1);
		h_run();
		assert_string_equal(h_sent(), "A:REQ B:REJ/8");
		assert_memory_equal(h_mad(0), first, IB_MAD_SIZE);
		assert_int_equal(cm_unpack_rej(h_mad(1), &rej), 0);
		assert_int_equal(rej.remote_comm_id, aid);
	}
	assert_int_equal(A->nev, 1);
	e = h_ev(SA, 0, CM_EV_REJ);
	assert_ptr_equal(e->id, a);
	assert_int_equal(e->u.rej.reason, IB_CM_REJ_INVALID_SERVICE_ID);
	assert_int_equal(cm_id_state(a), CM_TIMEWAIT);
	assert_int_equal(B->nev, 0);
	assert_int_equal(cm_id_state(lis), CM_LISTEN);
	STATS_EQ(SA, .rx = 1 + CM_NO_LISTENER_RETRIES,
		 .tx = 1 + CM_NO_LISTENER_RETRIES,
		 .no_listener_resends = CM_NO_LISTENER_RETRIES);
	STATS_EQ(SB, .rx = 1 + CM_NO_LISTENER_RETRIES,
		 .tx = 1 + CM_NO_LISTENER_RETRIES,
		 .rx_unknown = 1 + CM_NO_LISTENER_RETRIES);

	h_advance(T_TW - 1);
	assert_int_equal(cm_id_state(a), CM_TIMEWAIT);
	h_advance(1);
	assert_int_equal(cm_id_state(a), CM_CLOSED);
	assert_false(h_freed(SA, aid));		/* the consumer holds it */
	cm_id_destroy(a);
	assert_true(h_freed(SA, aid));
	assert_int_equal(A->nev, 1);
	assert_string_equal(h_sent(), "");
	/* timewait is no timeout */
	STATS_EQ(SA, .rx = 1 + CM_NO_LISTENER_RETRIES,
		 .tx = 1 + CM_NO_LISTENER_RETRIES,
		 .no_listener_resends = CM_NO_LISTENER_RETRIES);
}

/* 3. The consumer rejects with private data. */
static void test_consumer_reject(void **st)
{
	struct cm_req req = h_req(0);
	uint8_t big[CM_REJ_PDATA + 1] = { 0 };
	struct cm_rep rep = h_rep();
	struct cm_id *a, *b;
	const struct h_ev *e;
	uint32_t bid;

	(void)st;
	h_listen();
	a = h_send_req(&req);
	h_run();
	assert_string_equal(h_sent(), "A:REQ");
	b = h_ev(SB, 0, CM_EV_REQ)->id;
	bid = ID(b);
	assert_int_equal(cm_id_state(b), CM_REQ_RCVD);
	assert_int_equal(cm_send_rej(b, 28, NULL, 0, big, sizeof(big)), EINVAL);
	assert_int_equal(cm_send_rej(b, 28, NULL, 0, NULL, 1), EINVAL);
	assert_int_equal(cm_send_rej(b, 28, big, CM_REJ_ARI + 1, NULL, 0),
			 EINVAL);
	assert_int_equal(cm_id_state(b), CM_REQ_RCVD);
	assert_string_equal(h_sent(), "");

	assert_int_equal(cm_send_rej(b, IB_CM_REJ_CONSUMER_DEFINED, "ARI", 3,
				     "no thanks", 9), 0);
	assert_int_equal(cm_id_state(b), CM_TIMEWAIT);
	assert_int_equal(cm_send_rej(b, 28, NULL, 0, NULL, 0), EINVAL);
	assert_int_equal(cm_send_rep(b, &rep), EINVAL);
	h_run();
	assert_string_equal(h_sent(), "B:REJ/28");
	e = h_ev(SA, 0, CM_EV_REJ);
	assert_ptr_equal(e->id, a);
	assert_int_equal(e->u.rej.local_comm_id, bid);
	assert_int_equal(e->u.rej.remote_comm_id, ID(a));
	assert_int_equal(e->u.rej.msg_rejected, CM_MSG_REQ);
	assert_int_equal(e->u.rej.ari_len, 3);
	assert_memory_equal(e->u.rej.ari, "ARI", 3);
	assert_pdata(e->u.rej.pdata, CM_REJ_PDATA, "no thanks");
	assert_int_equal(cm_id_state(a), CM_TIMEWAIT);

	/* Let go in timewait: kept until it ends, then freed. */
	cm_id_destroy(b);
	assert_false(h_freed(SB, bid));
	h_advance(T_TW - 1);
	assert_false(h_freed(SB, bid));
	h_advance(1);
	assert_true(h_freed(SB, bid));
	assert_int_equal(cm_id_state(a), CM_CLOSED);
	assert_int_equal(A->nev, 1);
	assert_int_equal(B->nev, 1);
	STATS_EQ(SA, .rx = 1, .tx = 1);
	STATS_EQ(SB, .rx = 1, .tx = 1);
}

/* 4. The first REQ is lost: A sends it again after its timeout. */
static void test_lost_req(void **st)
{
	struct cm_req req = h_req(0);
	uint8_t first[IB_MAD_SIZE];
	struct cm_id *a;

	(void)st;
	h_listen();
	B->on_req = ON_REQ_ACCEPT;
	A->auto_rtu = true;
	A->drop[ATTR(IB_CM_ATTR_REQ)] = 1;
	a = h_send_req(&req);
	assert_int_equal(h_run(), 0);
	assert_string_equal(h_sent(), "A:REQ(lost)");
	memcpy(first, h_mad(0), sizeof(first));
	assert_int_equal(cm_dev_tick(A->dev), T_REQ);
	h_advance(T_REQ - 1);
	assert_string_equal(h_sent(), "");
	assert_int_equal(cm_dev_tick(A->dev), 1);
	h_advance(1);
	assert_string_equal(h_sent(), "A:REQ");
	assert_memory_equal(h_mad(0), first, IB_MAD_SIZE);
	assert_int_equal(cm_id_state(a), CM_REQ_SENT);
	h_run();
	assert_string_equal(h_sent(), "B:REP A:RTU");
	assert_int_equal(cm_id_state(a), CM_ESTABLISHED);
	assert_int_equal(cm_id_state(h_ev(SB, 0, CM_EV_REQ)->id),
			 CM_ESTABLISHED);
	assert_int_equal(B->nev, 2);
	STATS_EQ(SA, .rx = 1, .tx = 3, .retransmits = 1);
	STATS_EQ(SB, .rx = 2, .tx = 1);
}

/* 5. B's consumer takes its time: the repeated REQ gets an MRA and A
 * waits; the REP is lost, a late copy of the REQ brings it again. */
static void test_mra_and_dup_req(void **st)
{
	struct cm_req req = h_req(0);
	uint8_t req_mad[IB_MAD_SIZE];
	struct cm_rep rep = h_rep();
	struct cm_id *a, *b;
	struct cm_mra mra;

	(void)st;
	h_listen();
	A->auto_rtu = true;
	a = h_send_req(&req);
	h_run();
	assert_string_equal(h_sent(), "A:REQ");
	memcpy(req_mad, h_mad(0), sizeof(req_mad));
	b = h_ev(SB, 0, CM_EV_REQ)->id;

	h_advance(T_REQ);
	h_run();
	assert_string_equal(h_sent(), "A:REQ B:MRA");
	assert_int_equal(cm_unpack_mra(h_mad(1), &mra), 0);
	assert_int_equal(mra.local_comm_id, ID(b));
	assert_int_equal(mra.remote_comm_id, ID(a));
	assert_int_equal(mra.msg_mraed, CM_MSG_REQ);
	assert_int_equal(mra.service_timeout, CM_RESPONSE_TIMEOUT + 2);
	assert_int_equal(cm_id_state(b), CM_MRA_REQ_SENT);
	assert_int_equal(cm_id_state(a), CM_MRA_REQ_RCVD);
	assert_int_equal(cm_id_remote_comm_id(a), ID(b));
	assert_int_equal(B->nev, 1);		/* no second CM_EV_REQ */
	/* A stops sending REQs and waits the MRA's time. */
	assert_int_equal(cm_dev_tick(A->dev), T_MRA);
	h_advance(T_MRA - 1);
	assert_string_equal(h_sent(), "");
	assert_int_equal(cm_id_state(a), CM_MRA_REQ_RCVD);

	/* B accepts; the REP is lost. */
	B->drop[ATTR(IB_CM_ATTR_REP)] = 1;
	assert_int_equal(cm_send_rep(b, &rep), 0);
	assert_string_equal(h_sent(), "B:REP(lost)");
	assert_int_equal(cm_id_state(b), CM_REP_SENT);
	/* The REQ again, late: B in REP_SENT sends its REP again. */
	h_inject(SB, req_mad);
	h_run();
	assert_string_equal(h_sent(), "B:REP A:RTU");
	assert_int_equal(cm_id_state(a), CM_ESTABLISHED);
	assert_int_equal(cm_id_state(b), CM_ESTABLISHED);
	assert_int_equal(A->nev, 1);
	h_ev(SA, 0, CM_EV_REP);
	assert_int_equal(B->nev, 2);
	h_ev(SB, 1, CM_EV_ESTABLISHED);
	h_advance(10 * T_MRA);
	assert_string_equal(h_sent(), "");
	STATS_EQ(SA, .rx = 2, .tx = 3, .retransmits = 1);
	STATS_EQ(SB, .rx = 4, .tx = 3, .rx_dup = 2);
}

/* 6. The RTU is lost: B's REP again, A's RTU again. */
static void test_lost_rtu(void **st)
{
	struct cm_req req = h_req(0);
	uint8_t rtu[IB_MAD_SIZE];
	struct cm_id *a, *b;

	(void)st;
	h_listen();
	B->on_req = ON_REQ_ACCEPT;
	A->auto_rtu = true;
	A->drop[ATTR(IB_CM_ATTR_RTU)] = 1;
	a = h_send_req(&req);
	h_run();
	assert_string_equal(h_sent(), "A:REQ B:REP A:RTU(lost)");
	memcpy(rtu, h_mad(2), sizeof(rtu));
	b = h_ev(SB, 0, CM_EV_REQ)->id;
	assert_int_equal(cm_id_state(a), CM_ESTABLISHED);
	assert_int_equal(cm_id_state(b), CM_REP_SENT);
	assert_int_equal(cm_dev_tick(B->dev), T_REQ);
	h_advance(T_REQ);
	h_run();
	assert_string_equal(h_sent(), "B:REP A:RTU");
	assert_memory_equal(h_mad(1), rtu, IB_MAD_SIZE);
	assert_int_equal(cm_id_state(b), CM_ESTABLISHED);
	assert_int_equal(A->nev, 1);
	assert_int_equal(B->nev, 2);
	h_ev(SB, 1, CM_EV_ESTABLISHED);
	STATS_EQ(SA, .rx = 2, .tx = 3, .rx_dup = 1);
	STATS_EQ(SB, .rx = 2, .tx = 2, .retransmits = 1);
}

/* 7. Nobody answers: 1 + max_cm_retries REQs, one CM_EV_TIMEOUT. */
static void req_timeout(uint8_t retries, unsigned int reqs)
{
	struct cm_req req = h_req(retries);
	char want[H_MAX_LOG * 16] = "";
	struct cm_rej rej;
	struct cm_id *a;

	h_reset();
	A->drop[ATTR(IB_CM_ATTR_REQ)] = 100;
	a = h_send_req(&req);
	for (unsigned int k = 0; k < reqs; k++) {
		assert_int_equal(cm_id_state(a), CM_REQ_SENT);
		assert_int_equal(A->nev, 0);
		h_advance(T_REQ);
		strcat(want, "A:REQ(lost) ");
	}
	strcat(want, "A:REJ/4");
	assert_string_equal(h_sent(), want);
	assert_int_equal(cm_unpack_rej(h_mad((int)reqs), &rej), 0);
	assert_int_equal(rej.local_comm_id, ID(a));
	assert_int_equal(rej.remote_comm_id, 0);
	assert_int_equal(A->nev, 1);
	assert_int_equal(h_ev(SA, 0, CM_EV_TIMEOUT)->state, CM_TIMEWAIT);
	h_run();				/* B knows nothing of it */
	h_advance(T_TW);
	assert_int_equal(cm_id_state(a), CM_CLOSED);
	h_advance(10 * T_REQ);
	assert_string_equal(h_sent(), "");
	assert_int_equal(A->nev, 1);
	assert_int_equal(cm_dev_tick(A->dev), -1);
	STATS_EQ(SA, .tx = reqs + 1, .retransmits = reqs - 1, .timeouts = 1);
	STATS_EQ(SB, .rx = 1, .rx_unknown = 1);
	A->drop[ATTR(IB_CM_ATTR_REQ)] = 0;
}

static void test_req_timeout(void **st)
{
	(void)st;
	h_listen();
	req_timeout(3, 4);
	req_timeout(0, 1 + CM_MAX_RETRIES);	/* the CM's default */
}

/* 8. Disconnect, a lost DREP, a DREQ for nobody, a DREQ never answered,
 * both sides at once. */
static void test_disconnect(void **st)
{
	struct cm_req req = h_req(0);
	struct cm_dreq dreq;
	struct cm_drep drep;
	const struct h_ev *e;
	struct cm_id *a, *b;

	(void)st;
	h_listen();
	h_connect(&req, &a, &b);
	assert_int_equal(cm_send_dreq(a, NULL, CM_DREQ_PDATA + 1), EINVAL);
	assert_int_equal(cm_id_state(a), CM_ESTABLISHED);
	assert_int_equal(cm_send_dreq(a, "bye", 3), 0);
	assert_int_equal(cm_id_state(a), CM_DREQ_SENT);
	assert_int_equal(cm_send_dreq(a, NULL, 0), EINVAL);
	assert_int_equal(cm_dev_tick(A->dev), T_REQ);
	h_run();
	assert_string_equal(h_sent(), "A:DREQ B:DREP");
	assert_int_equal(cm_unpack_dreq(h_mad(0), &dreq), 0);
	assert_int_equal(dreq.local_comm_id, ID(a));
	assert_int_equal(dreq.remote_comm_id, ID(b));
	assert_int_equal(dreq.remote_qpn, H_QPN_B);
	assert_int_equal(cm_unpack_drep(h_mad(1), &drep), 0);
	assert_int_equal(drep.local_comm_id, ID(b));
	assert_int_equal(drep.remote_comm_id, ID(a));
	assert_true(tid_of(h_mad(1)) == tid_of(h_mad(0)));
	assert_true(tid_of(h_mad(0)) != tid_of(W.req_mad));

	assert_int_equal(B->nev, 1);
	e = h_ev(SB, 0, CM_EV_DREQ);
	assert_ptr_equal(e->id, b);
	assert_int_equal(e->state, CM_TIMEWAIT);	/* DREP already sent */
	assert_pdata(e->u.dreq.pdata, CM_DREQ_PDATA, "bye");
	assert_int_equal(A->nev, 1);
	e = h_ev(SA, 0, CM_EV_DISCONNECTED);
	assert_false(e->no_msg);
	assert_int_equal(e->u.drep.local_comm_id, ID(b));
	assert_int_equal(cm_id_state(a), CM_TIMEWAIT);
	assert_int_equal(cm_id_state(b), CM_TIMEWAIT);
	h_advance(T_TW);
	assert_int_equal(cm_id_state(a), CM_CLOSED);
	assert_int_equal(cm_id_state(b), CM_CLOSED);
	assert_int_equal(cm_send_dreq(a, NULL, 0), EINVAL);
	assert_int_equal(A->nev + B->nev, 2);
	assert_string_equal(h_sent(), "");
	STATS_EQ(SA, .rx = 1, .tx = 1);
	STATS_EQ(SB, .rx = 1, .tx = 1);
}

static void test_disconnect_lost_drep(void **st)
{
	struct cm_req req = h_req(0);
	struct cm_id *a, *b;
	struct cm_drep drep;

	(void)st;
	/* B's timewait outlasts A's DREQ timeout: the DREQ finds it there. */
	req.local_cm_response_timeout = CM_RESPONSE_TIMEOUT + 1;
	h_listen();
	h_connect(&req, &a, &b);
	B->drop[ATTR(IB_CM_ATTR_DREP)] = 1;
	assert_int_equal(cm_send_dreq(a, NULL, 0), 0);
	h_run();
	assert_string_equal(h_sent(), "A:DREQ B:DREP(lost)");
	assert_int_equal(cm_id_state(b), CM_TIMEWAIT);
	h_advance(T_REQ);
	h_run();
	assert_string_equal(h_sent(), "A:DREQ B:DREP");
	assert_int_equal(cm_unpack_drep(h_mad(1), &drep), 0);
	assert_int_equal(drep.local_comm_id, ID(b));
	assert_int_equal(drep.remote_comm_id, ID(a));
	assert_true(tid_of(h_mad(1)) == tid_of(h_mad(0)));
	assert_int_equal(cm_id_state(a), CM_TIMEWAIT);
	h_ev(SA, 0, CM_EV_DISCONNECTED);
	assert_int_equal(B->nev, 1);
	STATS_EQ(SA, .rx = 1, .tx = 2, .retransmits = 1);
	STATS_EQ(SB, .rx = 2, .tx = 2, .rx_dup = 1);
}

static void test_dreq_unknown(void **st)
{
	struct cm_mad_hdr hdr = { .method = IB_MGMT_METHOD_SEND, .tid = 0x77 };
	struct cm_req req = h_req(0);
	struct cm_dreq d = { .local_comm_id = 0x1111, .remote_comm_id = 0x2222,
			     .remote_qpn = H_QPN_B };
	uint8_t mad[IB_MAD_SIZE], bdreq[IB_MAD_SIZE];
	struct cm_id *a, *b;
	struct cm_drep drep;

	(void)st;
	h_listen();
	h_connect(&req, &a, &b);
	/* IDs nobody has: a DREP anyway, so the sender stops asking. */
	assert_int_equal(cm_pack_dreq(mad, &hdr, &d), 0);
	h_inject(SB, mad);
	assert_string_equal(h_sent(), "B:DREP");
	assert_int_equal(cm_unpack_drep(h_mad(0), &drep), 0);
	assert_int_equal(drep.local_comm_id, 0x2222);
	assert_int_equal(drep.remote_comm_id, 0x1111);
	assert_true(tid_of(h_mad(0)) == 0x77);
	/* The right IDs but not b's QP: answered, b left alone. */
	d.local_comm_id = ID(a);
	d.remote_comm_id = ID(b);
	d.remote_qpn = H_QPN_B + 1;
	assert_int_equal(cm_pack_dreq(mad, &hdr, &d), 0);
	h_inject(SB, mad);
	assert_string_equal(h_sent(), "B:DREP");
	assert_int_equal(cm_id_state(b), CM_ESTABLISHED);
	assert_int_equal(B->nev, 0);
	h_drop_all();
	STATS_EQ(SB, .rx = 2, .tx = 2, .rx_unknown = 2);

	/* B disconnects; after timewait, its DREQ again still gets a DREP
	 * from A's closed id. */
	assert_int_equal(cm_send_dreq(b, NULL, 0), 0);
	h_run();
	assert_string_equal(h_sent(), "B:DREQ A:DREP");
	memcpy(bdreq, h_mad(0), sizeof(bdreq));
	h_ev(SA, 0, CM_EV_DREQ);
	h_ev(SB, 0, CM_EV_DISCONNECTED);
	h_advance(T_TW);
	assert_int_equal(cm_id_state(a), CM_CLOSED);
	h_inject(SA, bdreq);
	assert_string_equal(h_sent(), "A:DREP");
	h_run();		/* to b, closed too: nothing */
	assert_string_equal(h_sent(), "");
	STATS_EQ(SA, .rx = 2, .tx = 2, .rx_dup = 1);
	STATS_EQ(SB, .rx = 4, .tx = 3, .rx_unknown = 3);
}

static void test_dreq_timeout(void **st)
{
	struct cm_req req = h_req(2);
	struct cm_id *a, *b;
	const struct h_ev *e;

	(void)st;
	h_listen();
	h_connect(&req, &a, &b);
	A->drop[ATTR(IB_CM_ATTR_DREQ)] = 100;
	assert_int_equal(cm_send_dreq(a, NULL, 0), 0);
	h_advance(T_REQ);
	h_advance(T_REQ);
	assert_int_equal(A->nev, 0);
	h_advance(T_REQ);
	assert_string_equal(h_sent(),
			    "A:DREQ(lost) A:DREQ(lost) A:DREQ(lost)");
	assert_int_equal(A->nev, 1);
	e = h_ev(SA, 0, CM_EV_DISCONNECTED);
	assert_true(e->no_msg);
	assert_int_equal(e->state, CM_TIMEWAIT);
	assert_int_equal(cm_id_state(b), CM_ESTABLISHED);
	STATS_EQ(SA, .tx = 3, .retransmits = 2, .timeouts = 1);
}

/* Both disconnect at once; B's DREQ comes late, after B's DREP, when A
 * is in timewait already: it still gets a DREP. */
static void test_dreq_crossing(void **st)
{
	struct cm_req req = h_req(0);
	struct cm_id *a, *b;

	(void)st;
	h_listen();
	h_connect(&req, &a, &b);
	assert_int_equal(cm_send_dreq(a, NULL, 0), 0);
	assert_int_equal(cm_send_dreq(b, NULL, 0), 0);
	h_step(0);			/* A's DREQ: B answers, timewait */
	assert_int_equal(cm_id_state(b), CM_TIMEWAIT);
	h_ev(SB, 0, CM_EV_DREQ);
	h_step(1);			/* B's DREP before B's DREQ */
	assert_int_equal(cm_id_state(a), CM_TIMEWAIT);
	h_ev(SA, 0, CM_EV_DISCONNECTED);
	h_run();			/* B's DREQ: answered with a DREP */
	assert_string_equal(h_sent(), "A:DREQ B:DREQ B:DREP A:DREP");
	assert_int_equal(A->nev + B->nev, 2);
	h_advance(T_REQ);
	assert_string_equal(h_sent(), "");
	STATS_EQ(SA, .rx = 2, .tx = 2, .rx_dup = 1);
	STATS_EQ(SB, .rx = 2, .tx = 2, .rx_unknown = 1);
}

/* 9. Stale REQs: a new ID for a connected QP, an old REQ after close. */
static void test_stale(void **st)
{
	struct cm_req req = h_req(0), req2 = h_req(0);
	struct cm_id *a, *b, *a2;
	struct cm_rej rej;

	(void)st;
	h_listen();
	h_connect(&req, &a, &b);
	h_inject(SB, W.req_mad);	/* old news while established */
	assert_string_equal(h_sent(), "");
	a2 = h_send_req(&req2);		/* same GID and QPN, new ID */
	h_run();
	assert_string_equal(h_sent(), "A:REQ B:REJ/10");
	assert_int_equal(cm_unpack_rej(h_mad(1), &rej), 0);
	assert_int_equal(rej.remote_comm_id, ID(a2));
	assert_int_equal(rej.msg_rejected, CM_MSG_REQ);
	assert_ptr_equal(h_ev(SA, 0, CM_EV_REJ)->id, a2);
	assert_int_equal(cm_id_state(a), CM_ESTABLISHED);
	assert_int_equal(cm_id_state(b), CM_ESTABLISHED);
	assert_int_equal(B->nev, 0);
	STATS_EQ(SB, .rx = 2, .tx = 1, .rx_dup = 1, .rx_stale = 1);

	assert_int_equal(cm_send_dreq(a, NULL, 0), 0);
	h_run();
	assert_string_equal(h_sent(), "A:DREQ B:DREP");
	h_inject(SB, W.req_mad);	/* the first REQ, in timewait */
	assert_string_equal(h_sent(), "B:REJ/10");
	assert_int_equal(cm_unpack_rej(h_mad(0), &rej), 0);
	assert_int_equal(rej.local_comm_id, ID(b));
	assert_int_equal(rej.remote_comm_id, ID(a));
	h_run();			/* a in timewait: not for it */
	assert_int_equal(cm_id_state(a), CM_TIMEWAIT);
	assert_int_equal(A->nev, 2);
	assert_int_equal(B->nev, 1);
	STATS_EQ(SA, .rx = 3, .tx = 2, .rx_unknown = 1);
	STATS_EQ(SB, .rx = 4, .tx = 3, .rx_dup = 2, .rx_stale = 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, h_setup, h_teardown)
		T(test_timeouts),
		T(test_handshake),
		T(test_no_listener),
		T(test_consumer_reject),
		T(test_lost_req),
		T(test_mra_and_dup_req),
		T(test_lost_rtu),
		T(test_req_timeout),
		T(test_disconnect),
		T(test_disconnect_lost_drep),
		T(test_dreq_unknown),
		T(test_dreq_timeout),
		T(test_dreq_crossing),
		T(test_stale),
#undef T
	};
	int ret = cmocka_run_group_tests_name("cm_conn", tests, NULL, NULL);

	return ret | cm_conn_more_tests();
}
