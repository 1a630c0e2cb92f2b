// SPDX-License-Identifier: MIT
/*
 * test_cm_conn.c's world (cm_conn_harness.h): the fake network, clock
 * and consumer around two cm_devs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cm_conn_harness.h"

struct h_world W;

/* Every MAD the CM sends must read back as what it claims to be. */
/* Every MAD a CM sends is one a CM would accept. */
static void check_mad(const uint8_t *mad)
{
	struct cm_mad_hdr h;
	union cm_msg m;

	assert_int_equal(cm_unpack_msg(mad, IB_MAD_SIZE, &h, &m), 0);
}

static uint16_t attr_of(const uint8_t *mad)
{
	return (uint16_t)(mad[16] << 8 | mad[17]);
}

static int side_of(const struct cm_addr *a)
{
	for (int k = SA; k <= SB; k++)
		if (!memcmp(a->gid, W.s[k].addr.gid, 16))
			return k;
	return -1;
}

static int h_send(void *ctx, const struct cm_addr *to, const uint8_t *mad)
{
	struct h_side *s = ctx;
	int src = s == &W.s[SA] ? SA : SB, dst = side_of(to);
	struct h_sent *l;
	int *drop = &s->drop[attr_of(mad) & 31];

	check_mad(mad);
	if (W.nlog == H_MAX_LOG)
		fail_msg("%d MADs sent without a look: a ping-pong?", W.nlog);
	l = &W.log[W.nlog++];
	memset(l, 0, sizeof(*l));
	l->src = src;
	memcpy(l->mad, mad, IB_MAD_SIZE);
	if (s->fail) {
		int ret = s->fail;

		s->fail = 0;
		l->err = true;
		return ret;
	}
	if (*drop) {
		--*drop;
		l->lost = true;
	} else if (dst >= 0) {
		assert_true(W.nq < H_MAX_Q);
		W.q[W.nq].src = src;
		W.q[W.nq].dst = dst;
		memcpy(W.q[W.nq++].mad, mad, IB_MAD_SIZE);
	}
	return 0;
}

static void h_event(void *ctx, struct cm_id *id, const struct cm_event *ev)
{
	struct h_side *s = ctx;
	struct h_ev *e;

	assert_true(s->nev < H_MAX_EV);
	e = &s->ev[s->nev++];
	memset(e, 0, sizeof(*e));
	e->type = ev->type;
	e->id = id;
	e->listener = cm_id_listener(id);
	e->state = cm_id_state(id);
	if (ev->from)
		e->from = *ev->from;
	switch (ev->type) {
	case CM_EV_REQ: e->u.req = *ev->u.req; break;
	case CM_EV_REP: e->u.rep = *ev->u.rep; break;
	case CM_EV_ESTABLISHED: e->u.rtu = *ev->u.rtu; break;
	case CM_EV_REJ: e->u.rej = *ev->u.rej; break;
	case CM_EV_TIMEOUT: break;
	case CM_EV_TIMEWAIT_EXIT: break;
	case CM_EV_DREQ: e->u.dreq = *ev->u.dreq; break;
	case CM_EV_DISCONNECTED:
		if (ev->u.drep)
			e->u.drep = *ev->u.drep;
		else
			e->no_msg = true;
		break;
	}
	if (ev->type == CM_EV_REQ && s->on_req == ON_REQ_ACCEPT) {
		struct cm_rep rep = h_rep();

		assert_int_equal(cm_send_rep(id, &rep), 0);
	}
	if (ev->type == CM_EV_REP && s->auto_rtu)
		assert_int_equal(cm_send_rtu(id, H_RTU_PDATA, 4), 0);
}

static uint64_t h_now(void *ctx)
{
	(void)ctx;
	return W.now;
}

static void v4_gid(uint8_t *gid, uint8_t last)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xFF;
	gid[12] = 192;
	gid[14] = 2;
	gid[15] = last;
}

int h_setup(void **state)
{
	static const struct cm_ops ops = { .send = h_send, .event = h_event,
					   .now_ms = h_now };

	(void)state;
	memset(&W, 0, sizeof(W));
	W.now = 5000000;	/* anything but 0: 0 is "no timer" inside */
	for (int k = SA; k <= SB; k++) {
		struct cm_addr *a = &W.s[k].addr;

		v4_gid(a->gid, (uint8_t)(1 + k));
		a->mac[0] = 2;
		a->mac[5] = (uint8_t)(1 + k);
		a->qpn = IB_QP1;
		a->pkey = 0xFFFF;
		a->hop_limit = 64;
		W.s[k].dev = cm_dev_create(&ops, &W.s[k],
					   k == SA ? H_GUID_A : H_GUID_B,
					   k == SA ? 0x1000u : 0x2000u);
		if (!W.s[k].dev)
			return -1;
	}
	W.stranger = W.s[SA].addr;
	v4_gid(W.stranger.gid, 66);
	return 0;
}

int h_teardown(void **state)
{
	(void)state;
	cm_dev_destroy(W.s[SA].dev);
	cm_dev_destroy(W.s[SB].dev);
	return 0;
}

struct cm_req h_req(uint8_t max_cm_retries)
{
	struct cm_req r = {
		.service_id = H_SID, .local_qpn = H_QPN_A,
		.starting_psn = H_PSN_A, .responder_resources = 4,
		.initiator_depth = 4, .retry_count = 7, .rnr_retry_count = 7,
		.pkey = 0xFFFF, .path_mtu = 3, .max_cm_retries = max_cm_retries,
		.primary = { .local_lid = 0xFFFF, .remote_lid = 0xFFFF,
			     .hop_limit = 64, .local_ack_timeout = 14 },
	};

	memcpy(r.primary.local_gid, W.s[SA].addr.gid, 16);
	memcpy(r.primary.remote_gid, W.s[SB].addr.gid, 16);
	for (unsigned int k = 0; k < CM_REQ_PDATA; k++)
		r.pdata[k] = (uint8_t)(0xA0 + k);
	return r;
}

struct cm_rep h_rep(void)
{
	struct cm_rep r = { .local_qpn = H_QPN_B, .starting_psn = H_PSN_B,
			    .responder_resources = 4, .initiator_depth = 4,
			    .rnr_retry_count = 7 };

	for (unsigned int k = 0; k < CM_REP_PDATA; k++)
		r.pdata[k] = (uint8_t)(0xB0 + k);
	return r;
}

struct cm_id *h_listen(void)
{
	W.lis = cm_id_create(W.s[SB].dev, NULL);
	assert_non_null(W.lis);
	assert_int_equal(cm_listen(W.lis, H_SID), 0);
	return W.lis;
}

struct cm_id *h_send_req(struct cm_req *req)
{
	struct cm_id *a = cm_id_create(W.s[SA].dev, NULL);

	assert_non_null(a);
	assert_int_equal(cm_send_req(a, &W.s[SB].addr, req), 0);
	return a;
}

void h_reset(void)
{
	for (int k = SA; k <= SB; k++) {
		W.s[k].nev = 0;
		W.s[k].base = *cm_dev_stats(W.s[k].dev);
	}
	W.nq = W.nlog = W.nseen = 0;
}

void h_connect(struct cm_req *req, struct cm_id **a, struct cm_id **b)
{
	int nev = W.s[SB].nev;

	W.s[SB].on_req = ON_REQ_ACCEPT;
	W.s[SA].auto_rtu = true;
	*a = h_send_req(req);
	assert_int_equal(h_run(), 3);
	assert_string_equal(h_sent(), "A:REQ B:REP A:RTU");
	memcpy(W.req_mad, h_mad(0), IB_MAD_SIZE);
	*b = h_ev(SB, nev, CM_EV_REQ)->id;
	assert_int_equal(cm_id_state(*a), CM_ESTABLISHED);
	assert_int_equal(cm_id_state(*b), CM_ESTABLISHED);
	W.s[SB].on_req = ON_REQ_WAIT;
	W.s[SA].auto_rtu = false;
	h_reset();
}

void h_step(int i)
{
	struct h_pkt p;

	assert_true(i < W.nq);
	p = W.q[i];
	memmove(&W.q[i], &W.q[i + 1], (size_t)(W.nq - i - 1) * sizeof(W.q[0]));
	W.nq--;
	cm_dev_recv(W.s[p.dst].dev, &W.s[p.src].addr, p.mad, IB_MAD_SIZE);
}

int h_run(void)
{
	int n = 0;

	while (W.nq) {
		if (++n > 100)
			fail_msg("the CMs answer each other forever");
		h_step(0);
	}
	return n;
}

void h_dup(int i)
{
	assert_true(i < W.nq && W.nq < H_MAX_Q);
	W.q[W.nq++] = W.q[i];
}

void h_drop_all(void)
{
	W.nq = 0;
}

void h_inject_from(int dst, const struct cm_addr *from, const uint8_t *mad,
		   size_t len)
{
	cm_dev_recv(W.s[dst].dev, from, mad, len);
}

void h_inject(int dst, const uint8_t *mad)
{
	h_inject_from(dst, &W.s[!dst].addr, mad, IB_MAD_SIZE);
}

void h_advance(uint64_t ms)
{
	W.now += ms;
	cm_dev_tick(W.s[SA].dev);
	cm_dev_tick(W.s[SB].dev);
}

const char *h_sent(void)
{
	static char buf[H_MAX_LOG * 24];
	size_t n = 0;

	buf[0] = 0;
	for (int k = 0; k < W.nlog; k++) {
		const struct h_sent *l = &W.log[k];
		uint16_t attr = attr_of(l->mad);
		char reason[8] = "";

		if (attr == IB_CM_ATTR_REJ)
			snprintf(reason, sizeof(reason), "/%u",
				 l->mad[IB_MAD_HDR_LEN + 10] << 8 |
				 l->mad[IB_MAD_HDR_LEN + 11]);
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%c:%s%s%s",
				      k ? " " : "", l->src == SA ? 'A' : 'B',
				      cm_attr_name(attr), reason,
				      l->lost ? "(lost)" : l->err ? "(err)" : "");
	}
	memcpy(W.seen, W.log, (size_t)W.nlog * sizeof(W.log[0]));
	W.nseen = W.nlog;
	W.nlog = 0;
	return buf;
}

const uint8_t *h_mad(int k)
{
	assert_true(k < W.nseen);
	return W.seen[k].mad;
}

const struct h_ev *h_ev(int side, int k, enum cm_event_type type)
{
	assert_true(k < W.s[side].nev);
	assert_int_equal(W.s[side].ev[k].type, type);
	return &W.s[side].ev[k];
}

bool h_freed(int side, uint32_t local_id)
{
	/* A REP from an ID nobody knows naming local_id: a freed id's
	 * device rejects it as an invalid comm ID; while the id is kept
	 * (timewait, closed) nothing is sent. */
	struct cm_mad_hdr hdr = { .method = IB_MGMT_METHOD_SEND, .tid = 0xF0 };
	struct cm_rep rep = { .local_comm_id = 0x7E7E7E7E,
			      .remote_comm_id = local_id };
	struct cm_stats before = *cm_dev_stats(W.s[side].dev), *base;
	const struct cm_stats *now;
	uint8_t mad[IB_MAD_SIZE];
	int nlog = W.nlog, nq = W.nq;
	bool freed;

	assert_int_equal(cm_pack_rep(mad, &hdr, &rep), 0);
	h_inject(side, mad);
	freed = W.nlog == nlog + 1 &&
		attr_of(W.log[nlog].mad) == IB_CM_ATTR_REJ &&
		W.log[nlog].mad[IB_MAD_HDR_LEN + 11] ==
			IB_CM_REJ_INVALID_COMM_ID;
	assert_true(freed || W.nlog == nlog);
	W.nlog = nlog;
	W.nq = nq;
	now = cm_dev_stats(W.s[side].dev);
	base = &W.s[side].base;
	base->rx += now->rx - before.rx;
	base->tx += now->tx - before.tx;
	base->rx_unknown += now->rx_unknown - before.rx_unknown;
	base->rx_dup += now->rx_dup - before.rx_dup;
	return freed;
}

void h_stats_eq(int side, struct cm_stats want, const char *file, int line)
{
	const struct cm_stats *g = cm_dev_stats(W.s[side].dev);
	const struct cm_stats *b = &W.s[side].base;
	bool bad = false;

#define F(f)                                                                  \
	do {                                                                  \
		if (g->f - b->f != want.f) {                                  \
			print_error("%s:%d: %c stats." #f " %llu, want %llu\n", \
				    file, line, side == SA ? 'A' : 'B',        \
				    (unsigned long long)(g->f - b->f),        \
				    (unsigned long long)want.f);              \
			bad = true;                                           \
		}                                                             \
	} while (0)
	F(rx);
	F(tx);
	F(tx_errors);
	F(rx_bad);
	F(rx_unknown);
	F(rx_dup);
	F(rx_stale);
	F(retransmits);
	F(timeouts);
	F(no_listener_resends);
	F(held);
#undef F
	if (bad)
		_fail(file, line);
}
