// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the IB connection manager (cm/) of two devices, A
 * and B, over a network and a clock the input drives. Each input is a
 * little program (fuzz_cm.h): MADs from outside, good or spoilt, to
 * either side; the real MADs between the two delivered, lost,
 * duplicated, reordered or damaged; time passing; the consumer's calls
 * on ids in any state; event handlers that answer from inside the event
 * (cm_conn.h's lock contract). At the end the network delivers all and
 * time runs every timer out. Oracles (abort), besides ASan/UBSan/LSan:
 * - every MAD a CM sends reads back (cm_unpack_hdr, cm_unpack_*);
 * - a call refused with EINVAL sends nothing, changes nothing; one taken
 *   is one its state allows, sends its MAD and moves to its state;
 * - events: none for an id let go or not held, none from inside another,
 *   the id in the event's state, its user pointer kept, none after a
 *   final one (REJ, TIMEOUT, DREQ, DISCONNECTED); REP to the active
 *   side, ESTABLISHED to the passive one, DISCONNECTED after our DREQ;
 * - counters never go back; rx, tx + tx_errors count what we gave and
 *   what was sent; retransmits and timeouts move only in cm_dev_tick; a
 *   MAD received makes at most two sent;
 * - cm_dev_tick returns -1 or 1..60000, and a tick before that time does
 *   nothing when nothing else happened in between;
 * - ids: unique non-zero local IDs, one listener per service ID, those
 *   let go on their way out (timewait or DREQ sent, with a timer), the
 *   rest held by the consumer; each waiting for an answer has a timer
 *   and cm_dev_pending counts them; cm_dev_shutdown lets go of all;
 * - in the end, every id let go is freed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm_priv.h"
#include "fuzz_cm.h"

#define NQ 64
/* Past any CM timer: 4.096 us * 2^31 is ~8.8e6 ms. */
#define FOREVER_MS 20000000u
#define BIT(st) (1u << (st))
/* States that wait for the peer's answer (cm_dev_pending). */
#define WAITING                                                               \
	(BIT(CM_REQ_SENT) | BIT(CM_MRA_REQ_RCVD) | BIT(CM_REP_SENT) |         \
	 BIT(CM_DREQ_SENT))
/* States cm_id_destroy leaves in without a word. */
#define QUIET_EXIT                                                            \
	(BIT(CM_IDLE) | BIT(CM_LISTEN) | BIT(CM_CLOSED) | BIT(CM_DREQ_SENT) | \
	 BIT(CM_TIMEWAIT))

#define CHECK(c)                                                              \
	do {                                                                  \
		if (!(c))                                                     \
			violated(#c, __LINE__);                               \
	} while (0)

static void violated(const char *what, int line)
{
	fprintf(stderr, "fuzz_cm.c:%d: invariant violated: %s\n", line, what);
	abort();
}

/* An id the consumer holds, and what it has been told. */
struct slot {
	struct cm_id *id;
	bool active, passive;	/* it sent the REQ / it came by one */
	bool rep, est, dreq;	/* told REP, told ESTABLISHED, sent DREQ */
	bool final;		/* told REJ, TIMEOUT, DREQ or DISCONNECTED */
};

struct side {
	struct cm_dev *dev;
	struct cm_addr addr;
	struct slot slot[FC_SLOTS];
	uint8_t policy;
	int fail;		/* the next send returns this */
	uint64_t nsent, nfailed, nrecv, nev;
	uint16_t last_attr;	/* of the last MAD sent */
	struct cm_stats stats;	/* as last seen */
	uint64_t quiet_until;	/* a tick before this does nothing */
	uint64_t next;		/* the last tick's deadline, 0 none */
};

struct pkt {
	int dst, src;
	uint8_t mad[IB_MAD_SIZE];
};

static struct {
	struct side s[2];
	struct cm_addr stranger;
	struct pkt q[NQ];
	int nq;
	uint64_t now;
	int depth;		/* inside an event handler */
} F;

static const uint64_t sids[4] = { FC_SID0, FC_SID1, 0, UINT64_MAX };

static uint32_t be(const uint8_t *p, size_t n)
{
	uint32_t v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

static void put_be(uint8_t *p, size_t n, uint64_t v)
{
	while (n--) {
		p[n] = (uint8_t)v;
		v >>= 8;
	}
}

static uint16_t attr_of(const uint8_t *mad)
{
	return (uint16_t)be(mad + 16, 2);
}

/* ---- ids and the consumer's slots ---- */

static bool listed(const struct cm_dev *dev, const struct cm_id *id)
{
	for (const struct cm_id *i = dev->ids; i; i = i->next)
		if (i == id)
			return true;
	return false;
}

static struct slot *slot_of(struct side *s, const struct cm_id *id)
{
	for (int k = 0; k < FC_SLOTS; k++)
		if (s->slot[k].id && s->slot[k].id == id)
			return &s->slot[k];
	return NULL;
}

/* Slot a[1] of side a[0]; with create, an id made there if none. */
static struct slot *slot_arg(const uint8_t *a, bool create)
{
	struct side *s = &F.s[a[0] & 1];
	struct slot *sl = &s->slot[a[1] % FC_SLOTS];

	if (!sl->id && create) {
		*sl = (struct slot){ .id = cm_id_create(s->dev, NULL) };
		CHECK(sl->id && cm_id_state(sl->id) == CM_IDLE);
		cm_id_set_user(sl->id, sl);
	}
	return sl->id ? sl : NULL;
}

/* ---- the network ---- */

/* We never send what we would not read. */
static void check_mad(const uint8_t *mad)
{
	struct cm_mad_hdr h;
	union cm_msg m;

	CHECK(cm_unpack_msg(mad, IB_MAD_SIZE, &h, &m) == 0);
	/* cm_pack_req refuses alternate paths: none may go out. */
	CHECK(h.attr_id != IB_CM_ATTR_REQ || !m.req.has_alternate);
}

static int on_send(void *ctx, const struct cm_addr *to, const uint8_t *mad)
{
	struct side *s = ctx;
	int dst = -1, ret = s->fail;

	check_mad(mad);
	s->nsent++;
	s->last_attr = attr_of(mad);
	if (ret) {
		s->fail = 0;
		s->nfailed++;
		return ret;
	}
	for (int k = 0; k < 2; k++)
		if (!memcmp(to->gid, F.s[k].addr.gid, 16))
			dst = k;
	if (dst >= 0 && F.nq < NQ) {	/* else lost */
		F.q[F.nq] = (struct pkt){ .dst = dst, .src = (int)(s - F.s) };
		memcpy(F.q[F.nq++].mad, mad, IB_MAD_SIZE);
	}
	return 0;
}

static uint64_t on_now(void *ctx) { return F.now; }

/* A MAD to dst, in a buffer of exactly len bytes. */
static void give(int dst, const struct cm_addr *from, const uint8_t *mad,
		 size_t len)
{
	struct side *s = &F.s[dst];
	uint8_t *copy = malloc(len ? len : 1);
	uint64_t sent = s->nsent;

	CHECK(copy);
	memcpy(copy, mad, len);
	s->nrecv++;
	s->quiet_until = 0;
	cm_dev_recv(s->dev, from, copy, len);
	free(copy);
	CHECK(s->nsent - sent <= 2);
}

/* Queued MAD k delivered, a byte damaged with x; or lost. */
static void deliver(int k, unsigned int off, uint8_t x, bool lose)
{
	struct pkt p = F.q[k];

	memmove(&F.q[k], &F.q[k + 1], (size_t)(F.nq - k - 1) * sizeof(F.q[0]));
	F.nq--;
	p.mad[off % IB_MAD_SIZE] ^= x;
	if (!lose)
		give(p.dst, &F.s[p.src].addr, p.mad, IB_MAD_SIZE);
}

/* ---- the consumer's calls, checked ---- */

enum call { C_REQ, C_REP, C_RTU, C_REJ, C_DREQ };

struct args {
	struct cm_addr to;
	struct cm_req req;
	struct cm_rep rep;
	uint16_t reason;
	size_t ari_len, len;
	bool null;		/* pdata NULL (with len: refused) */
	uint8_t pdata[256];
};

/* Each call: the states it is for, the MAD it sends, the state after. */
static const struct {
	unsigned int from;
	uint16_t attr;
	enum cm_state after;
} calls[] = {
	[C_REQ] = { BIT(CM_IDLE), IB_CM_ATTR_REQ, CM_REQ_SENT },
	[C_REP] = { BIT(CM_REQ_RCVD) | BIT(CM_MRA_REQ_SENT), IB_CM_ATTR_REP,
		    CM_REP_SENT },
	[C_RTU] = { BIT(CM_REP_RCVD), IB_CM_ATTR_RTU, CM_ESTABLISHED },
	[C_REJ] = { BIT(CM_REQ_RCVD) | BIT(CM_MRA_REQ_SENT) | BIT(CM_REP_RCVD),
		    IB_CM_ATTR_REJ, CM_TIMEWAIT },
	[C_DREQ] = { BIT(CM_ESTABLISHED), IB_CM_ATTR_DREQ, CM_DREQ_SENT },
};

static void call(struct side *s, struct slot *sl, enum call c,
		 struct args *a)
{
	struct cm_id *id = sl->id;
	enum cm_state st = cm_id_state(id);
	uint64_t sent = s->nsent, failed = s->nfailed;
	int fail = s->fail == EAGAIN ? 0 : s->fail, ret = EINVAL;
	const void *pd = a->null ? NULL : a->pdata;

	s->quiet_until = 0;
	switch (c) {
	case C_REQ: ret = cm_send_req(id, &a->to, &a->req); break;
	case C_REP: ret = cm_send_rep(id, &a->rep); break;
	case C_RTU: ret = cm_send_rtu(id, pd, a->len); break;
	case C_REJ:
		ret = cm_send_rej(id, a->reason, pd, a->ari_len, pd, a->len);
		break;
	case C_DREQ: ret = cm_send_dreq(id, pd, a->len); break;
	}
	if (ret == EINVAL) {
		CHECK(cm_id_state(id) == st && s->nsent == sent);
		return;
	}
	CHECK(calls[c].from & BIT(st));
	CHECK(s->nsent == sent + 1 && s->last_attr == calls[c].attr);
	CHECK(cm_id_state(id) == calls[c].after);
	CHECK(ret == (s->nfailed > failed ? fail : 0));
	sl->active |= c == C_REQ;
	sl->dreq |= c == C_DREQ;
}

/* cm_id_destroy: freed now, or on its way out with what it must send. */
static void destroy(struct side *s, struct cm_id *id)
{
	enum cm_state st = cm_id_state(id);
	uint64_t sent = s->nsent;
	struct slot *sl = slot_of(s, id);
	bool gone;

	s->quiet_until = 0;
	cm_id_destroy(id);
	if (sl)
		*sl = (struct slot){ 0 };
	gone = !listed(s->dev, id);
	if (BIT(st) & (BIT(CM_IDLE) | BIT(CM_LISTEN) | BIT(CM_CLOSED))) {
		CHECK(gone && s->nsent == sent);
		return;
	}
	CHECK(!gone && id->detached && !cm_id_user(id));
	if (BIT(st) & QUIET_EXIT)
		CHECK(s->nsent == sent && id->state == st);
	else if (st == CM_ESTABLISHED)
		CHECK(s->nsent == sent + 1 && s->last_attr == IB_CM_ATTR_DREQ &&
		      id->state == CM_DREQ_SENT);
	else
		CHECK(s->nsent == sent + 1 && s->last_attr == IB_CM_ATTR_REJ &&
		      id->state == CM_TIMEWAIT);
}

static void rep_args(struct args *a, const uint8_t *f)
{
	bool raw = f[0] & 1;
	struct cm_rep *r = &a->rep;

	r->srq = f[0] & 2;
	r->e2e_flow_control = f[0] & 4;
	r->failover_accepted = (uint8_t)(f[0] >> 3 & (raw ? 7 : 3));
	r->rnr_retry_count = (uint8_t)(f[0] >> 6 | (raw ? f[5] & 4 : 0));
	r->local_qpn = 0x200u + (f[1] & 7);
	if (raw)
		r->local_qpn |= (uint32_t)(f[1] & 0xF8) << 21;
	r->starting_psn = be(f + 2, 3);
	r->target_ack_delay = raw ? f[5] : f[5] & 31;
	r->responder_resources = r->initiator_depth = 4;
	memset(r->pdata, f[1], sizeof(r->pdata));
}

/* ---- events ---- */

static const enum cm_state ev_state[] = {
	[CM_EV_REQ] = CM_REQ_RCVD,	 [CM_EV_REP] = CM_REP_RCVD,
	[CM_EV_ESTABLISHED] = CM_ESTABLISHED, [CM_EV_REJ] = CM_TIMEWAIT,
	[CM_EV_TIMEOUT] = CM_TIMEWAIT,	 [CM_EV_DREQ] = CM_TIMEWAIT,
	[CM_EV_DISCONNECTED] = CM_TIMEWAIT,
};

/* What a handler answers with, as its policy says. */
static void answer_args(const struct side *s, struct args *a)
{
	memset(a, 0, sizeof(*a));
	if (s->policy & FCP_PDATA) {
		a->len = s->policy & FCP_LONG ? 250 : 20;
		a->ari_len = s->policy & FCP_LONG ? 80 : 8;
		memset(a->pdata, 0x5A, sizeof(a->pdata));
	}
	a->reason = IB_CM_REJ_CONSUMER_DEFINED;
	if (s->policy & FCP_LONG)	/* and a REP the CM refuses */
		rep_args(a, (const uint8_t[]){ 0xFF, 0xFF, 0, 0, 1, 0xFF });
	else
		rep_args(a, (const uint8_t[]){ 0, 0, 0, 0, 1, 0 });
}

static void on_req(struct side *s, struct cm_id *id, const struct cm_event *ev)
{
	struct cm_id *lis = cm_id_listener(id);
	struct slot *sl = NULL;
	struct args a;

	CHECK(ev->from && ev->u.req &&
	      !memcmp(cm_id_peer(id)->gid, ev->from->gid, 16));
	CHECK(lis && slot_of(s, lis) && cm_id_state(lis) == CM_LISTEN);
	CHECK(!cm_id_user(id) && !slot_of(s, id));
	CHECK(cm_id_remote_comm_id(id) == ev->u.req->local_comm_id);
	for (int k = 0; k < FC_SLOTS && !sl; k++)
		if (!s->slot[k].id)
			sl = &s->slot[k];
	if (!sl || (s->policy & FCP_REQ) == 3) {
		destroy(s, id);		/* allowed: a new REQ's id */
		return;
	}
	*sl = (struct slot){ .id = id, .passive = true };
	cm_id_set_user(id, sl);
	answer_args(s, &a);
	if ((s->policy & FCP_REQ) == 1)
		call(s, sl, C_REP, &a);
	else if ((s->policy & FCP_REQ) == 2)
		call(s, sl, C_REJ, &a);
}

/* Any other event: for an id the consumer holds. */
static void on_told(struct side *s, struct cm_id *id,
		    const struct cm_event *ev)
{
	static const enum call on_rep[4] = { [1] = C_RTU, [2] = C_REJ,
					     [3] = C_DREQ };
	struct slot *sl = slot_of(s, id);
	struct args a;

	CHECK(sl && cm_id_user(id) == sl && !sl->final);
	answer_args(s, &a);
	switch (ev->type) {
	case CM_EV_REP:
		CHECK(ev->u.rep && sl->active && !sl->rep);
		sl->rep = true;
		if (s->policy & FCP_REP)
			call(s, sl, on_rep[(s->policy & FCP_REP) >> 2], &a);
		break;
	case CM_EV_ESTABLISHED:
		CHECK(ev->u.rtu && sl->passive && !sl->est);
		sl->est = true;
		if (s->policy & FCP_EST_DREQ)
			call(s, sl, C_DREQ, &a);
		break;
	default:
		/* REJ and DREQ carry their message; DISCONNECTED answers
		 * our DREQ (its DREP, or NULL: timed out) */
		CHECK(ev->u.rej || ev->type == CM_EV_DISCONNECTED ||
		      ev->type == CM_EV_TIMEOUT);
		CHECK(ev->type != CM_EV_DISCONNECTED || sl->dreq);
		CHECK(sl->active || sl->passive);
		sl->final = true;
		if (s->policy & FCP_POKE)
			call(s, sl, C_RTU, &a);
		break;
	}
}

static void on_event(void *ctx, struct cm_id *id, const struct cm_event *ev)
{
	struct side *s = ctx;

	CHECK(F.depth == 0);
	CHECK((unsigned int)ev->type <= CM_EV_DISCONNECTED);
	CHECK(id->dev == s->dev && listed(s->dev, id) && !id->detached);
	CHECK(cm_id_state(id) == ev_state[ev->type]);
	F.depth++;
	s->nev++;
	if (ev->type == CM_EV_REQ)
		on_req(s, id, ev);
	else
		on_told(s, id, ev);
	F.depth--;
}

/* ---- time ---- */

static void tick(struct side *s)
{
	uint64_t sent = s->nsent, nev = s->nev;
	int r = cm_dev_tick(s->dev);

	CHECK(r == -1 || (r > 0 && r <= 60000));
	if (F.now < s->quiet_until)
		CHECK(s->nsent == sent && s->nev == nev);
	s->quiet_until = r < 0 ? UINT64_MAX : F.now + (uint64_t)r;
	s->next = r < 0 ? 0 : F.now + (uint64_t)r;
}

static void advance(uint64_t ms)
{
	F.now += ms;
	tick(&F.s[0]);
	tick(&F.s[1]);
}

/* ---- the checks after every step ---- */

/* may_tick: the step may have retransmitted and timed out. */
static void check_side(struct side *s, bool may_tick)
{
	const struct cm_stats *st = cm_dev_stats(s->dev);
	const struct cm_stats *was = &s->stats;
	unsigned int n = 0, waiting = 0;

	CHECK(st->rx >= was->rx && st->tx >= was->tx &&
	      st->tx_errors >= was->tx_errors && st->rx_bad >= was->rx_bad &&
	      st->rx_unknown >= was->rx_unknown && st->rx_dup >= was->rx_dup &&
	      st->rx_stale >= was->rx_stale &&
	      st->retransmits >= was->retransmits &&
	      st->timeouts >= was->timeouts);
	CHECK(may_tick || (st->retransmits == was->retransmits &&
			   st->timeouts == was->timeouts));
	CHECK(st->rx == s->nrecv);
	CHECK(st->tx + st->tx_errors == s->nsent &&
	      st->tx_errors == s->nfailed);
	s->stats = *st;
	for (struct cm_id *i = s->dev->ids; i; i = i->next) {
		struct slot *sl = slot_of(s, i);

		CHECK(++n < 100000 && i->dev == s->dev &&
		      cm_id_local_comm_id(i));
		for (struct cm_id *j = i->next; j; j = j->next) {
			CHECK(j->local_id != i->local_id);
			CHECK(i->state != CM_LISTEN || j->state != CM_LISTEN ||
			      i->service_id != j->service_id);
		}
		if (i->listener)
			CHECK(listed(s->dev, i->listener) &&
			      i->listener->state == CM_LISTEN);
		if (BIT(i->state) & WAITING) {
			waiting++;
			CHECK(i->deadline);	/* else it waits forever */
		}
		if (i->detached)
			CHECK((i->state == CM_TIMEWAIT ||
			       i->state == CM_DREQ_SENT) && i->deadline);
		else
			CHECK(sl && cm_id_user(i) == sl);
	}
	CHECK(cm_dev_pending(s->dev) == waiting);
	for (int k = 0; k < FC_SLOTS; k++)
		if (s->slot[k].id)
			CHECK(listed(s->dev, s->slot[k].id) &&
			      !s->slot[k].id->detached);
}

/* ---- steps: a[] holds fc_args[op] bytes ---- */

/* FCM_FIX: the IDs (and more) of the target-th id of the receiver. */
static void fix_ids(uint8_t *mad, const struct side *s, uint8_t flags,
		    uint8_t target)
{
	uint8_t *m = mad + IB_MAD_HDR_LEN;
	uint16_t attr = attr_of(mad);
	const struct cm_id *id;
	unsigned int n = 0;

	for (id = s->dev->ids; id; id = id->next)
		n++;
	if (!n)
		return;
	n = target % n;
	for (id = s->dev->ids; n--;)
		id = id->next;
	if (!(flags & FCM_KEEP_LOCAL))
		put_be(m, 4, id->remote_id);
	if (attr == IB_CM_ATTR_REQ) {
		if (flags & FCM_FIX_MORE) {
			put_be(m + 8, 8, id->service_id);
			put_be(m + 32, 3, id->remote_qpn);
			memcpy(m + 56, id->remote_gid, 16);
		}
		return;
	}
	put_be(m + 4, 4, id->local_id);
	if ((flags & FCM_FIX_MORE) && attr == IB_CM_ATTR_DREQ)
		put_be(m + 8, 3, id->local_qpn);
	if ((flags & FCM_FIX_MORE) && attr == IB_CM_ATTR_REJ)
		put_be(m + 4, 4, 0);
}

static void step_mad(enum fc_op op, const uint8_t *a)
{
	static const size_t lens[8] = { 0, 1, 23, 24, 255, 257, 300, 512 };
	int dst = a[0] & 1;
	uint8_t flags = a[1], target = a[2], x = target | 1;
	uint8_t mad[512] = { 0 };
	size_t len = IB_MAD_SIZE;
	const struct cm_addr *from[4] = { &F.s[!dst].addr, &F.s[!dst].addr,
					  &F.stranger, &F.s[dst].addr };

	memcpy(mad, a + 3, IB_MAD_SIZE);
	if ((flags & FCM_SPOIL) != 1) {
		uint16_t attr = attr_of(mad);

		if (attr < IB_CM_ATTR_REQ || attr > IB_CM_ATTR_APR)
			attr = (uint16_t)(IB_CM_ATTR_REQ + mad[17] % 11);
		mad[0] = IB_MGMT_BASE_VERSION;
		mad[1] = IB_MGMT_CLASS_CM;
		mad[2] = IB_CM_CLASS_VERSION;
		mad[3] = IB_MGMT_METHOD_SEND;
		put_be(mad + 4, 2, 0);
		put_be(mad + 16, 2, attr);
	}
	if (flags & FCM_FIX)
		fix_ids(mad, &F.s[dst], flags, target);
	switch (flags & FCM_SPOIL) {
	case 2: mad[0] ^= x; break;
	case 3: mad[1] ^= x; break;
	case 4: mad[2] ^= x; break;
	case 5: mad[3] ^= x; break;
	case 6: mad[4 + (target >> 7)] ^= x; break;
	case 7: len = lens[target >> 5]; break;
	}
	give(dst, from[(flags & FCM_FROM) >> 5], mad, len);
}

/* a[0] % 4: 0 deliver, 1 lose, 2 duplicate, 3 damage and deliver. */
static void step_net(enum fc_op op, const uint8_t *a)
{
	int how = a[0] % 4, k = F.nq ? a[1] % F.nq : 0;
	uint8_t x = how == 3 ? a[3] | 1 : 0;

	if (how == 2 && F.nq && F.nq < NQ)
		F.q[F.nq++] = F.q[k];
	else if (how != 2 && F.nq)
		deliver(k, a[2], x, how == 1);
}

static void step_clock(enum fc_op op, const uint8_t *a)
{
	uint32_t v = a[0] | (uint32_t)a[1] << 8;
	uint64_t next = UINT64_MAX;

	if (v != FC_CLOCK_NEXT) {
		advance(v % 30001);
		return;
	}
	for (int k = 0; k < 2; k++)
		for (struct cm_id *i = F.s[k].dev->ids; i; i = i->next)
			if (i->deadline && i->deadline < next)
				next = i->deadline;
	advance(next != UINT64_MAX && next > F.now ? next - F.now : 1);
}

static void step_listen(enum fc_op op, const uint8_t *a)
{
	struct side *s = &F.s[a[0] & 1];
	struct slot *sl = slot_arg(a, true);
	uint64_t sid = sids[a[2] & 3];
	enum cm_state st = cm_id_state(sl->id);
	bool taken = false;
	int ret;

	for (struct cm_id *i = s->dev->ids; i; i = i->next)
		taken |= i->state == CM_LISTEN && i->service_id == sid;
	s->quiet_until = 0;
	ret = cm_listen(sl->id, sid);
	if (st != CM_IDLE)
		CHECK(ret == EINVAL);
	else if (taken)
		CHECK(ret == EADDRINUSE);
	else
		CHECK(ret == 0 && cm_id_state(sl->id) == CM_LISTEN);
	if (ret)
		CHECK(cm_id_state(sl->id) == st);
}

static void step_req(enum fc_op op, const uint8_t *a)
{
	struct side *s = &F.s[a[0] & 1];
	struct slot *sl = slot_arg(a, true);
	const uint8_t *f = a + 2;
	bool raw = f[0] & FCQ_RAW;
	struct args g = { 0 };
	struct cm_req *r = &g.req;

	g.to = (f[0] & FCQ_TO) == 2 ? s->addr :
	       (f[0] & FCQ_TO) == 3 ? F.stranger :
				      F.s[s == &F.s[0]].addr;
	r->service_id = sids[f[1] & 3];
	r->local_qpn = 0x100u + (f[1] >> 2 & 7);
	r->starting_psn = be(f + 2, 3);
	if (raw)
		r->starting_psn |= (uint32_t)(f[1] >> 5) << 24;
	r->remote_cm_response_timeout = raw ? f[5] : f[5] & 31;
	r->local_cm_response_timeout = raw ? f[6] : f[6] & 31;
	r->max_cm_retries = raw ? f[7] : f[7] & 15;
	r->retry_count = f[8] & 7;
	r->rnr_retry_count = f[8] >> 3 & 7;
	r->path_mtu = raw ? f[9] : f[9] & 15;
	r->transport = (uint8_t)(f[0] >> 3 & 3);
	r->srq = f[0] & FCQ_SRQ;
	r->has_alternate = f[0] & FCQ_ALT;
	r->pkey = 0xFFFF;
	r->responder_resources = r->initiator_depth = f[11];
	r->primary.local_lid = r->primary.remote_lid = 0xFFFF;
	memcpy(r->primary.local_gid, s->addr.gid, 16);
	if (f[0] & FCQ_ODD_GID)
		r->primary.local_gid[15] ^= f[10] | 1;
	memcpy(r->primary.remote_gid, g.to.gid, 16);
	r->primary.hop_limit = 64;
	r->primary.local_ack_timeout = raw ? f[10] : f[10] & 31;
	r->primary.sl = raw ? f[10] >> 4 : 0;
	memset(r->pdata, f[11], sizeof(r->pdata));
	call(s, sl, C_REQ, &g);
}

/* REP: its fields; RTU, REJ, DREQ: private data (REJ: reason, ARI). */
static void step_send(enum fc_op op, const uint8_t *a)
{
	struct side *s = &F.s[a[0] & 1];
	struct slot *sl = slot_arg(a, false);
	struct args g = { 0 };
	enum call c = op == FC_REP ? C_REP : op == FC_RTU ? C_RTU :
		      op == FC_REJ ? C_REJ : C_DREQ;

	if (c == C_REP)
		rep_args(&g, a + 2);
	if (c == C_REJ) {
		g.reason = (uint16_t)be(a + 2, 2);
		g.ari_len = a[4];
		g.len = a[5];
	} else {
		g.len = a[2];
		g.null = a[3] & 1;
	}
	memset(g.pdata, (int)g.len, sizeof(g.pdata));
	if (sl)
		call(s, sl, c, &g);
}

/* RUN, TICK, DESTROY, POLICY, FAIL, SHUTDOWN: small things. */
static void step_side(enum fc_op op, const uint8_t *a)
{
	static const int errs[4] = { ENOBUFS, EAGAIN, EIO, 0 };
	struct side *s = &F.s[a[0] & 1];
	struct slot *sl = slot_arg(a, false);
	uint64_t sent = s->nsent, want = 0;

	switch (op) {
	case FC_RUN:
		for (int n = 0; n < 16 && F.nq; n++)
			deliver(0, 0, 0, false);
		break;
	case FC_TICK: tick(s); break;
	case FC_POLICY: s->policy = a[1]; break;
	case FC_FAIL: s->fail = errs[a[1] & 3]; break;
	case FC_DESTROY:
		if (sl)
			destroy(s, sl->id);
		break;
	default:
		/* cm_dev_shutdown: cm_id_destroy on every id held, a MAD
		 * for each the peer must hear of; none held after */
		for (struct cm_id *i = s->dev->ids; i; i = i->next)
			want += !i->detached && !(BIT(i->state) & QUIET_EXIT);
		for (unsigned int k = 0; k < CM_HELD_MAX; k++)
			want += s->dev->held[k].until != 0;	/* REJ 8 */
		s->quiet_until = 0;
		cm_dev_shutdown(s->dev);
		memset(s->slot, 0, sizeof(s->slot));
		CHECK(s->nsent == sent + want);
		for (struct cm_id *i = s->dev->ids; i; i = i->next)
			CHECK(i->detached);
		break;
	}
}

static void (*const steps[FC_NOPS])(enum fc_op, const uint8_t *) = {
	[FC_MAD] = step_mad,	  [FC_NET] = step_net,
	[FC_RUN] = step_side,	  [FC_CLOCK] = step_clock,
	[FC_TICK] = step_side,	  [FC_LISTEN] = step_listen,
	[FC_REQ] = step_req,	  [FC_REP] = step_send,
	[FC_RTU] = step_send,	  [FC_REJ] = step_send,
	[FC_DREQ] = step_send,	  [FC_DESTROY] = step_side,
	[FC_POLICY] = step_side,  [FC_FAIL] = step_side,
	[FC_SHUTDOWN] = step_side,
};

/* ---- the program ---- */

static void setup(void)
{
	static const struct cm_ops ops = { .send = on_send, .event = on_event,
					   .now_ms = on_now };

	memset(&F, 0, sizeof(F));
	F.now = 5000000;	/* 0 is "no timer" inside */
	for (int k = 0; k < 2; k++) {
		struct side *s = &F.s[k];

		fc_gid(s->addr.gid, (uint8_t)(1 + k));
		s->addr.qpn = IB_QP1;
		s->addr.pkey = 0xFFFF;
		s->policy = FCP_DEFAULT;
		s->dev = cm_dev_create(&ops, s, 0x02000000000000A1u + k,
				       0x1000u * (1 + k));
		CHECK(s->dev);
	}
	F.stranger = F.s[0].addr;
	fc_gid(F.stranger.gid, 66);
}

/* The network delivers all, time runs every timer out: the ids let go
 * must all be freed by then. */
static void settle(void)
{
	F.s[0].fail = F.s[1].fail = 0;
	for (int round = 0; round < 100; round++) {
		for (int n = 0; F.nq; n++) {
			CHECK(n < 1000);	/* no endless ping-pong */
			deliver(0, 0, 0, false);
		}
		advance(FOREVER_MS);
		check_side(&F.s[0], true);
		check_side(&F.s[1], true);
		if (F.nq || F.s[0].next || F.s[1].next)
			continue;
		for (int k = 0; k < 2; k++)
			for (struct cm_id *i = F.s[k].dev->ids; i; i = i->next)
				CHECK(!i->detached && !i->deadline);
		return;
	}
	CHECK(!"the timers never run out");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t at = 0;

	setup();
	while (at < size) {
		enum fc_op op = (enum fc_op)(data[at++] % FC_NOPS);
		size_t n = size - at < fc_args[op] ? size - at : fc_args[op];
		uint8_t a[512] = { 0 };	/* zeros past the end */

		memcpy(a, data + at, n);
		at += n;
		steps[op](op, a);
		for (int k = 0; k < 2; k++)
			check_side(&F.s[k], op == FC_CLOCK || op == FC_TICK);
	}
	settle();
	cm_dev_destroy(F.s[0].dev);
	cm_dev_destroy(F.s[1].dev);
	return 0;
}
