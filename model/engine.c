// SPDX-License-Identifier: MIT
/*
 * The ERNIC model's engine: the QP manager's arbitration over doorbells
 * (PG332 ch.2 "QP Manager"), the timers of the response handler, and the
 * RX port, one pass at a time (eng_run_once); its thread and the
 * doorbells that reach it are in engine_thread.c.
 */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "axi_trace.h"
#include "engine_priv.h"

uint64_t eng_now(const struct eng *e)
{
	struct timespec ts;

	if (e->m->clock)
		return e->m->clock(e->m->clock_arg);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void eng_set(struct eng *e, uint32_t off, uint32_t val)
{
	ernic_model_hw_write(e->m, off, val);
}

void eng_count(struct eng *e, uint32_t off, unsigned int shift)
{
	uint32_t v = eng_reg(e->m, off);
	uint32_t f = ((v >> shift) + 1) & 0xFFFFu;

	eng_set(e, off, (v & ~(0xFFFFu << shift)) | f << shift);
}

void eng_raise(struct eng *e, uint32_t off, uint32_t bits)
{
	ernic_model_hw_set(e->m, off, bits);
}

void eng_irq(struct eng *e, uint32_t bits)
{
	eng_raise(e, ERNIC_INTSTS, bits);
}

int eng_dma_read(struct eng *e, uint64_t bus, void *dst, size_t len)
{
	return ernic_model_dma(e->m, bus, dst, len, false);
}

int eng_dma_write(struct eng *e, uint64_t bus, const void *src, size_t len)
{
	axi_trace_dma(e->m, bus, src, len);
	return ernic_model_dma(e->m, bus, (void *)src, len, true);
}

/* Device-written words (doorbells) are read by software with acquire
 * loads: store them with release semantics, after the data they cover. */
int eng_dma_store32(struct eng *e, uint64_t bus, uint32_t v)
{
	uint32_t *p;

	axi_trace_dma(e->m, bus, &v, sizeof(v));
	atomic_thread_fence(memory_order_release);
	p = ernic_model_bus_to_va(e->m, bus, sizeof(v));
	if (!p || (bus & 3))
		return EFAULT;
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
	return 0;
}

int eng_dma_load32(struct eng *e, uint64_t bus, uint32_t *v)
{
	uint32_t *p = ernic_model_bus_to_va(e->m, bus, sizeof(*v));

	if (!p || (bus & 3))
		return EFAULT;
	*v = __atomic_load_n(p, __ATOMIC_ACQUIRE);
	return 0;
}

uint32_t eng_pmtu(const struct ernic_model *m, uint32_t i)
{
	uint32_t f = ERNIC_FIELD_GET(ERNIC_QPCONF_PMTU,
				     eng_qreg(m, i, ERNIC_QPCONF));

	return 256u << (f > ERNIC_PMTU_4096 ? ERNIC_PMTU_256 : f);
}

/* The IP/UDP envelope toward QP i's peer, from the per-QP registers. */
static void peer_l3(struct eng *e, uint32_t i, struct roce_l3 *l3)
{
	const struct ernic_model *m = e->m;
	uint32_t adv = eng_qreg(m, i, ERNIC_QPADVCONF);
	const bool v6 = e->local.family == AF_INET6;
	uint32_t word[4] = { 0 };

	*l3 = e->local;
	memcpy(l3->src, e->local.dst, sizeof(l3->src));
	memcpy(l3->src_mac, e->local.dst_mac, 6);
	memset(l3->dst, 0, sizeof(l3->dst));
	for (int w = 0; w < (v6 ? 4 : 1); w++)
		word[w] = eng_qreg(m, i, ERNIC_IPDESADDR1 + 4 * w);
	ernic_ip_from_regs(v6, word, l3->dst);
	ernic_mac_from_regs(eng_qreg(m, i, ERNIC_MACDESADDLSB),
			    eng_qreg(m, i, ERNIC_MACDESADDMSB), l3->dst_mac);
	l3->sport = (uint16_t)ERNIC_FIELD_GET(ERNIC_XRNICCONF_UDP_SPORT,
					      eng_reg(m, ERNIC_XRNICCONF));
	l3->dport = ROCE_UDP_PORT;
	l3->ip_id = 0;
	/* ECN-capable (ECT(0)), as RoCEv2 senders are: a congested
	 * switch may mark it CE instead of dropping it. */
	l3->tos = (uint8_t)(ERNIC_FIELD_GET(ERNIC_QPADVCONF_TRAFFIC_CLASS,
					    adv) << 2 | ROCE_ECN_ECT0);
	l3->ttl = (uint8_t)ERNIC_FIELD_GET(ERNIC_QPADVCONF_TTL, adv);
	if (!l3->ttl)
		l3->ttl = 64;
	l3->flow_label = 0;
}

/* Where the next packet is built: in place in the wire's send batch,
 * or the scratch buffer. The same until it is sent. Lock held. */
static uint8_t *tx_buf(struct eng *e)
{
	uint8_t *b = model_wire_tx_slot(e->wire);

	return b ? b : e->pkt;
}

const uint8_t *eng_tx_payload(struct eng *e, uint8_t opcode, uint64_t bus,
			      uint32_t len, bool borrow)
{
	uint8_t *b = tx_buf(e);
	size_t hl = roce_hdrs_len(opcode);

	e->tx_pay = NULL;
	if (!hl || hl + len > ROCE_MAX_TRANSPORT)
		return NULL;
	if (borrow && b != e->pkt) {
		/* the batch sends it from here: no copy at all */
		e->tx_pay = ernic_model_bus_to_va(e->m, bus, len);
		return e->tx_pay;
	}
	if (eng_dma_read(e, bus, b + hl, len))
		return NULL;
	return b + hl;
}

int eng_send_pkt(struct eng *e, uint32_t i, struct roce_pkt *p)
{
	const struct ernic_model *m = e->m;
	uint8_t *b = tx_buf(e);
	bool split = p->payload_len && p->payload == e->tx_pay;
	struct roce_l3 l3;
	size_t n, hl = 0;

	e->tx_pay = NULL;
	peer_l3(e, i, &l3);
	p->dqpn = ERNIC_FIELD_GET(ERNIC_DESTQPCONF_QPN,
				  eng_qreg(m, i, ERNIC_DESTQPCONF));
	p->pkey = (uint16_t)ERNIC_FIELD_GET(ERNIC_QPADVCONF_PKEY,
					    eng_qreg(m, i, ERNIC_QPADVCONF));
	n = split ? roce_build_split(b, ROCE_MAX_TRANSPORT, p, &l3, &hl) :
		    roce_build(b, ROCE_MAX_TRANSPORT, p, &l3);
	if (!n)
		return EINVAL;
	eng_set(e, ERNIC_LSTOUTPKT,
		p->opcode | (i & 0xFF) << 8 | (p->psn & 0xFFFF) << 16);
	/* queued, in order: the lock's holder flushes (engine_priv.h) */
	if (split)
		return model_wire_queue_split(e->wire, &l3, b, n, hl,
					      p->payload, p->payload_len);
	return model_wire_queue(e->wire, &l3, b, n);
}

/* PG332 Figure 2-3 entry into the incoming packet error status queue. */
static void errsts_push(struct eng *e, uint32_t i, uint32_t code)
{
	const struct ernic_model *m = e->m;
	uint64_t base = eng_reg64(m, ERNIC_IPKTERRQBA, ERNIC_IPKTERRQBAMSB);
	uint32_t num = ERNIC_FIELD_GET(ERNIC_IPKTERRQSZ_NUM,
				       eng_reg(m, ERNIC_IPKTERRQSZ));
	uint32_t wp = ERNIC_FIELD_GET(ERNIC_IPKTERRQWPTR_WPTR,
				      eng_reg(m, ERNIC_IPKTERRQWPTR));
	uint64_t ent = ERNIC_FIELD_PREP(ERNIC_ERRSTS_FATAL_CODE, code) |
		       ERNIC_FIELD_PREP(ERNIC_ERRSTS_QPID, i);

	if (!base || !num)
		return;
	if (!eng_dma_write(e, base + (uint64_t)(wp % num) * 8, &ent, 8))
		eng_set(e, ERNIC_IPKTERRQWPTR, (wp + 1) % num);
}

/* Write one CQE (Table 2-2) and publish it: CQHEADi, then the doorbell
 * word at CQDBADDi (PG332 "Processing WQE Completions"). */
void eng_cqe_write(struct eng *e, uint32_t i, const struct eng_wqe *w,
		   bool err)
{
	const struct ernic_model *m = e->m;
	struct eng_qp *q = &e->qp[i];
	uint32_t qpconf = eng_qreg(m, i, ERNIC_QPCONF);
	uint32_t depth = ERNIC_FIELD_GET(ERNIC_QDEPTH_SQ,
					 eng_qreg(m, i, ERNIC_QDEPTH));
	uint64_t cqba = eng_reg64(m, ERNIC_QP(i, ERNIC_CQBA),
				  ERNIC_QP(i, ERNIC_CQBAMSB));
	uint64_t db = eng_reg64(m, ERNIC_QP(i, ERNIC_CQDBADD),
				  ERNIC_QP(i, ERNIC_CQDBADDMSB));
	uint32_t cqe = htole32(ERNIC_FIELD_PREP(ERNIC_CQE_WRID, w->w.wrid) |
			       ERNIC_FIELD_PREP(ERNIC_CQE_OPCODE, w->w.opcode) |
			       ERNIC_FIELD_PREP(ERNIC_CQE_ERRFLAG, err ? 1 : 0));

	if (!depth)
		return;
	/* The WQE's buffer is software's again once this is seen: a packet
	 * queued with its payload left there leaves first (a NAK's resend
	 * may be waiting while an ACK for the same WQE completes it). */
	if (w->lent_gen == model_wire_tx_gen(e->wire) + 1)
		model_wire_flush(e->wire);
	if (qpconf & ERNIC_QPCONF_CQE_WRITE_EN)
		eng_dma_write(e, cqba + (uint64_t)q->cq_pi * ERNIC_CQE_SIZE,
			      &cqe, sizeof(cqe));
	q->cq_pi = (q->cq_pi + 1) % depth;
	eng_set(e, ERNIC_QP(i, ERNIC_CQHEAD), q->cq_pi);
	if (!eng_hndshk_cq_db(e, i, q->cq_pi) && db)
		eng_dma_store32(e, db, q->cq_pi);
	if (qpconf & ERNIC_QPCONF_CQ_INT_EN) {
		eng_raise(e, ERNIC_CQINTSTS(ERNIC_QPINT_WORD(i)),
			  ERNIC_QPINT_BIT(i));
		eng_irq(e, ERNIC_INT_WQE_COMPLETION);
	}
	eng_count(e, ERNIC_QPMSTS, 16);
}

void eng_complete_head(struct eng *e, uint32_t i)
{
	struct eng_qp *q = &e->qp[i];

	eng_cqe_write(e, i, &q->osq[q->osq_head], false);
	q->osq_head = (q->osq_head + 1) % ENG_OSQ_MAX;
	eng_osq_count(e, i, -1);
	if (q->tx_cur)
		q->tx_cur--;
	eng_statqp(e, i);
}

void eng_statqp(struct eng *e, uint32_t i)
{
	struct eng_qp *q = &e->qp[i];
	uint32_t st = eng_qreg(e->m, i, ERNIC_STATQP);
	uint32_t pi = eng_qreg(e->m, i, ERNIC_SQPI) & 0xFFFF;
	uint32_t want = st & ~(ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY);

	if (q->sq_fetch == pi)
		want |= ERNIC_STATQP_SQ_EMPTY;
	if (!q->osq_n)
		want |= ERNIC_STATQP_OSQ_EMPTY;
	if (want != st)
		eng_set(e, ERNIC_QP(i, ERNIC_STATQP), want);
	if ((eng_qreg(e->m, i, ERNIC_STATCURSQPTR) & 0xFFFF) != q->sq_fetch)
		eng_set(e, ERNIC_QP(i, ERNIC_STATCURSQPTR), q->sq_fetch);
}

void eng_qp_fatal(struct eng *e, uint32_t i, uint32_t code, uint8_t syndrome)
{
	struct eng_qp *q = &e->qp[i];
	uint32_t st = eng_qreg(e->m, i, ERNIC_STATQP);
	const bool cqe = q->osq_n != 0;

	if (q->fatal)
		return;
	q->fatal = true;
	/* The reason first: software reads STATQPi when it sees the error
	 * CQE. Then the CQE, then FATAL: software that sees FATAL finds
	 * the CQE already there, however late this thread runs again
	 * (ernic_hw.h "Error completions"). */
	st &= ~ERNIC_STATQP_NAK_SYNDROME;
	st |= ERNIC_STATQP_OSQ_EMPTY |
	      ERNIC_FIELD_PREP(ERNIC_STATQP_NAK_SYNDROME, syndrome & 0x7F);
	eng_set(e, ERNIC_QP(i, ERNIC_STATQP), st);
	if (cqe)
		eng_cqe_write(e, i, &q->osq[q->osq_head], true);
	eng_set(e, ERNIC_QP(i, ERNIC_STATQP), st | ERNIC_STATQP_FATAL);
	eng_osq_count(e, i, -(int)q->osq_n);
	q->tx_cur = 0;
	q->rto_at = q->rnr_at = 0;
	q->rdq_n = 0;
	errsts_push(e, i, code);
	eng_irq(e, ERNIC_INT_FATAL);
}

void eng_qp_reset(struct eng *e, uint32_t i)
{
	struct eng_qp *q = &e->qp[i];
	uint32_t lst = eng_qreg(e->m, i, ERNIC_LSTRQREQ);

	if (q->hold) {		/* its packets go with it */
		e->hold[q->hold - 1].qp = 0;
		e->hold[q->hold - 1].n = 0;
	}
	memset(q, 0, sizeof(*q));
	eng_osq_count(e, i, 0);
	/* LSTRQREQ holds the last request "received": expect the next. */
	q->epsn = psn_add(ERNIC_FIELD_GET(ERNIC_LSTRQREQ_PSN, lst), 1);
	q->last_psn = psn_add(q->epsn, ERNIC_PSN_MASK);
	q->last_op = ROCE_RC_SEND_ONLY;
	q->msn = ERNIC_FIELD_GET(ERNIC_STATMSN_MSN,
				 eng_qreg(e->m, i, ERNIC_STATMSN));
	q->sq_fetch = eng_qreg(e->m, i, ERNIC_STATCURSQPTR) & 0xFFFF;
	q->cq_pi = eng_qreg(e->m, i, ERNIC_CQHEAD) & 0xFFFF;
}

/* An enable edge starts the QP afresh from its registers, a disable
 * forgets it. */
bool eng_qp_sync(struct eng *e, uint32_t i)
{
	struct eng_qp *q = &e->qp[i];
	uint32_t qpconf = eng_qreg(e->m, i, ERNIC_QPCONF);
	bool en = qpconf & ERNIC_QPCONF_QP_EN;
	bool rec = en && (qpconf & ERNIC_QPCONF_QP_UNDER_RECOVERY);

	if (q->recover && (en != q->en || !rec))
		eng_recover_end(e, i);
	if (en != q->en) {
		eng_qp_reset(e, i);
		q->en = en;
		eng_map_put(e->en_map, i, en);
		model_wire_qp_enabled(e->wire, i, en);
		/* A QP (re-)enabled after deletion or fatal recovery starts
		 * with clean status (PG332 "QP Fatal Recovery"). */
		if (en)
			eng_set(e, ERNIC_QP(i, ERNIC_STATQP),
				ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY);
	}
	if (rec && !q->recover)
		eng_recover_start(e, i);
	eng_hndshk_sync(e, i, qpconf);
	return en && !q->fatal && !q->recover;
}

/* The first enabled QP (en_map) in [i, hi), or hi. Lock held. */
static uint32_t next_enabled(const struct eng *e, uint32_t i, uint32_t hi)
{
	while (i < hi) {
		uint64_t b = e->en_map[i / 64] >> (i % 64);

		if (b) {
			i += (uint32_t)__builtin_ctzll(b);
			return i < hi ? i : hi;
		}
		i = (i / 64 + 1) * 64;
	}
	return hi;
}

/* QP i's part of a pass (an IP enabled): send, answer READs, timers
 * (the earliest into *next). True when it left work for another pass.
 * Lock held. */
static bool qp_turn(struct eng *e, uint32_t i, bool enabled, uint64_t now,
		    uint64_t *next)
{
	bool busy = false;
	uint64_t t;

	if (!eng_qp_sync(e, i) || !enabled)
		return enabled && eng_recover_turn(e, i);
	if (eng_tx_pump(e, i))
		busy = true;
	if (eng_rx_pump(e, i))
		busy = true;
	t = eng_tx_timers(e, i, now);
	if (t && (!*next || t < *next))
		*next = t;
	t = eng_rx_timers(e, i, now);
	if (t && (!*next || t < *next))
		*next = t;
	return busy;
}

uint64_t eng_run_once(struct eng *e, bool *busy)
{
	return eng_run(e, busy, false);
}

/* The pass's time, read once and only when needed: a poll's pass that
 * finds the port empty reads no clock. */
static uint64_t pass_now(const struct eng *e, uint64_t *now, bool *have)
{
	if (!*have) {
		*now = eng_now(e);
		*have = true;
	}
	return *now;
}

/* A deadline a poll's full pass left to the polls is due. */
static bool poll_due(const struct eng *e, uint64_t *now, bool *have)
{
	uint64_t due = atomic_load_explicit(&e->poll_next,
					    memory_order_relaxed);

	return due && pass_now(e, now, have) >= due;
}

uint64_t eng_run(struct eng *e, bool *busy, bool rx_or_none)
{
	struct ernic_model *m = e->m;
	uint64_t next = 0, now = 0, taken = e->rx_taken;
	bool have_now = false;
	bool enabled = eng_reg(m, ERNIC_XRNICCONF) & ERNIC_XRNICCONF_EN, held;
	int rx;

	*busy = false;
	/* (holds start only in passes, one at a time: no race here) */
	if (atomic_load(&e->holding)) {
		pthread_mutex_lock(&e->lock);
		next = eng_rx_held(e, pass_now(e, &now, &have_now), enabled);
		pthread_mutex_unlock(&e->lock);
	}
	/* RX first: responses free the window. Bounded per pass. */
	for (int n = 0; n < 256; n++) {
		struct roce_l3 l3;
		const uint8_t *tp;
		size_t tlen;
		uint32_t syn;
		int chk;

		rx = model_wire_recv(e->wire, e->rxbuf, sizeof(e->rxbuf), &l3,
				     &tp, &tlen, &syn, &chk);
		if (rx <= 0)
			break;
		e->rx_taken++;
		if (m->rx_hook) {
			/* Writes the sender may have heard of before sending
			 * (a QP made ready) reach the registers first; the
			 * IP's own enable may be one of them. */
			m->rx_hook(m->rx_hook_arg, tp, tlen);
			enabled = eng_reg(m, ERNIC_XRNICCONF) &
				  ERNIC_XRNICCONF_EN;
		}
		/* (more may be waiting in the port: a GRO train) */
		if (n == 255)
			*busy = true;
		if (!enabled)
			continue;	/* a disabled IP drops everything */
		pthread_mutex_lock(&e->lock);
		eng_rx_one(e, &l3, tp, tlen, syn, chk,
			   pass_now(e, &now, &have_now));
		for (uint32_t k = 0; k < ENG_HOLD_MAX; k++)
			if (e->hold[k].qp && (!next || e->hold[k].until < next))
				next = e->hold[k].until;
		pthread_mutex_unlock(&e->lock);
	}

	/* Nothing came in, nothing is held and no deadline the polls watch
	 * is due (eng_timer_retune): the rest is the thread's, but for an
	 * ACK left for a reply that is overdue (eng_acks_late). */
	if (rx_or_none && e->rx_taken == taken && !atomic_load(&e->holding) &&
	    !poll_due(e, &now, &have_now)) {
		if (atomic_load_explicit(&e->acks_late, memory_order_relaxed)) {
			pthread_mutex_lock(&e->lock);
			if (!eng_acks_late(e, pass_now(e, &now, &have_now)))
				eng_rx_acks_send(e);
			pthread_mutex_unlock(&e->lock);
		}
		return next;
	}
	for (uint32_t w = 0; w < ENG_QP_WORDS; w++)
		atomic_exchange(&e->dirty[w], 0);
	pthread_mutex_lock(&e->lock);
	/* The responses to what came in (ACKs, read responses' first
	 * turn) leave now, not after every QP's turn below; a ping-pong
	 * QP's ACK may wait for its reply. */
	if (!eng_acks_late(e, pass_now(e, &now, &have_now)))
		eng_rx_acks_flush(e);
	model_wire_flush(e->wire);
	if (eng_qp_sync(e, ERNIC_QP1) && enabled && eng_qp1_pump(e))
		*busy = true;
	/* Each pass starts one QP later, so that no QP always finds the
	 * device's window taken. */
	eng_tx_room(e);
	if (e->tx_rr < ERNIC_FIRST_RC_QP || e->tx_rr > m->c_num_qp)
		e->tx_rr = ERNIC_FIRST_RC_QP;
	/* Enabled QPs only (en_map; an enable edge is synced when QPCONFi
	 * is written), from tx_rr on, then those before it. */
	pass_now(e, &now, &have_now);
	for (int half = 0; half < 2; half++) {
		const uint32_t lo = half ? ERNIC_FIRST_RC_QP : e->tx_rr;
		const uint32_t hi = half ? e->tx_rr : m->c_num_qp + 1;

		for (uint32_t i = next_enabled(e, lo, hi); i < hi;
		     i = next_enabled(e, i + 1, hi))
			if (qp_turn(e, i, enabled, now, &next))
				*busy = true;
	}
	e->tx_rr++;
	/* the reply a late ACK waited for went out in a turn above; if
	 * not, its deadline is the pass's too */
	if (atomic_load_explicit(&e->acks_late, memory_order_relaxed)) {
		if (!e->owed_n || e->qp[e->owed[0]].replied)
			eng_rx_acks_flush(e);
		else if (!next || e->late_at < next)
			next = e->late_at;
	}
	/* A QP that found the device's window used up has no timer when
	 * nothing of it is in flight: what this pass freed (others' rewinds
	 * after their timeouts) is for the next pass, now, or nothing may
	 * ever run it again. */
	if (e->tx_starved) {
		e->tx_starved = false;
		eng_tx_room(e);
		if (e->tx_room > 0)
			*busy = true;
	}
	/* What the pass queued goes out before it ends (and the engine
	 * may sleep): a send error is a loss, as eng_send_pkt's are. */
	model_wire_flush(e->wire);
	held = false;
	for (uint32_t k = 0; k < ENG_HOLD_MAX; k++)
		held |= e->hold[k].qp != 0;
	atomic_store(&e->holding, held);
	if (held)
		e->watch_idle_since = 0;
	else if (atomic_load_explicit(&e->rqci_watch, memory_order_relaxed))
		eng_watch_idle(e, pass_now(e, &now, &have_now));
	if (e->parked) {
		/* one more pass sees the RQCI a doorbell may have
		 * written before it saw the hold */
		e->parked = false;
		*busy = true;
	}
	if (rx_or_none) {
		/* the timer is done with: the caller arms nothing */
		eng_timer_retune(e, next, pass_now(e, &now, &have_now));
		next = 0;
	}
	pthread_mutex_unlock(&e->lock);
	return next;
}

/* The engine on port w (which it owns from here on), with or without
 * its thread. */
static int eng_start(struct ernic_model *m, const struct ernic_conf *conf,
		     struct model_wire *w, bool thread, char *err,
		     size_t errlen)
{
	struct eng *e;
	int rc;

	e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(err, errlen, "model: out of memory");
		model_wire_close(w);
		return ENOMEM;
	}
	e->m = m;
	e->wire = w;
	e->local.family = conf->family;
	memcpy(e->local.dst, conf->addr, sizeof(e->local.dst));
	memcpy(e->local.dst_mac, conf->mac, 6);
	e->local.dport = ROCE_UDP_PORT;
	e->frame = conf->wire == ERNIC_WIRE_FRAME;
	e->st.on = getenv("ERNIC_ENGINE_STATS") != NULL;
	atomic_init(&e->reqs_at_stop, UINT_MAX);
	snprintf(e->st.name, sizeof(e->st.name), "%s", conf->name);
	e->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	e->timer_fd = timerfd_create(CLOCK_MONOTONIC,
				     TFD_CLOEXEC | TFD_NONBLOCK);
	if (e->wake_fd < 0 || e->timer_fd < 0) {
		rc = errno;
		snprintf(err, errlen, "model: %s: %s",
			 e->wake_fd < 0 ? "eventfd" : "timerfd", strerror(rc));
		goto err_fds;
	}
	rc = model_mutex_init(&e->lock);
	if (rc) {
		snprintf(err, errlen, "model: mutex: %s", strerror(rc));
		goto err_fds;
	}
	rc = model_mutex_init(&e->pass_lock);
	if (rc) {
		snprintf(err, errlen, "model: mutex: %s", strerror(rc));
		pthread_mutex_destroy(&e->lock);
		goto err_fds;
	}
	if (thread) {
		rc = pthread_create(&e->thread, NULL, eng_thread_main, e);
		if (rc) {
			snprintf(err, errlen, "model: engine thread: %s",
				 strerror(rc));
			goto err_fd;
		}
		e->running = true;
	}
	m->eng = e;
	/* QPCONFi written before the engine existed; from here on writes
	 * are synced as they come (eng_reg_written). */
	pthread_mutex_lock(&e->lock);
	for (uint32_t i = ERNIC_FIRST_RC_QP; i <= m->c_num_qp; i++)
		eng_qp_sync(e, i);
	pthread_mutex_unlock(&e->lock);
	if (thread)
		eng_wake(e);
	return 0;

err_fd:
	pthread_mutex_destroy(&e->pass_lock);
	pthread_mutex_destroy(&e->lock);
err_fds:
	if (e->wake_fd >= 0)
		close(e->wake_fd);
	if (e->timer_fd >= 0)
		close(e->timer_fd);
	model_wire_close(e->wire);
	free(e);
	return rc;
}

int ernic_model_start(struct ernic_model *m, const struct ernic_conf *conf,
		      char *err, size_t errlen)
{
	struct model_wire *w;

	if (m->eng)
		return 0;
	w = model_wire_open(conf, err, errlen);
	if (!w)
		return errno ? errno : EIO;
	return eng_start(m, conf, w, true, err, errlen);
}

int ernic_model_start_manual(struct ernic_model *m,
			     const struct ernic_conf *conf,
			     struct model_wire *w, char *err, size_t errlen)
{
	if (m->eng) {
		model_wire_close(w);
		snprintf(err, errlen, "model: engine already running");
		return EBUSY;
	}
	return eng_start(m, conf, w, false, err, errlen);
}

int ernic_model_mad_steer(struct ernic_model *m, uint64_t service_id,
			  bool claim)
{
	return m->eng ? model_wire_mad_steer(m->eng->wire, service_id, claim) :
			ENODEV;
}

void ernic_model_set_clock(struct ernic_model *m, uint64_t (*now)(void *arg),
			   void *arg)
{
	m->clock = now;
	m->clock_arg = arg;
}

void ernic_model_rx(struct ernic_model *m, const struct roce_l3 *l3,
		    const uint8_t *tp, size_t tlen, int check_icrc)
{
	struct eng *e = m->eng;

	if (!e || !(eng_reg(m, ERNIC_XRNICCONF) & ERNIC_XRNICCONF_EN))
		return;
	pthread_mutex_lock(&e->lock);
	eng_rx_one(e, l3, tp, tlen, 0, check_icrc, eng_now(e));
	eng_rx_acks_send(e);
	pthread_mutex_unlock(&e->lock);
}

uint64_t ernic_model_step(struct ernic_model *m, bool *busy)
{
	*busy = false;
	return m->eng ? eng_run_once(m->eng, busy) : 0;
}

bool ernic_model_progress(struct ernic_model *m)
{
	return m->eng && eng_progress(m->eng);
}

void ernic_model_progress_stop(struct ernic_model *m, bool armed)
{
	if (m->eng)
		eng_progress_stop(m->eng, armed);
}

void eng_destroy(struct eng *e)
{
	uint64_t one = 1;

	if (!e)
		return;
	atomic_store(&e->stop, true);
	if (write(e->wake_fd, &one, sizeof(one)) < 0) {
		/* saturated counter: the thread wakes anyway */
	}
	if (e->running)
		pthread_join(e->thread, NULL);
	if (e->st.on)
		eng_print_stats(e);
	/* an ACK a pass left for a reply (eng_acks_late) */
	pthread_mutex_lock(&e->lock);
	eng_rx_acks_send(e);
	pthread_mutex_unlock(&e->lock);
	e->m->eng = NULL;
	for (uint32_t k = 0; k < ENG_HOLD_MAX; k++)
		free(e->hold[k].q);
	pthread_mutex_destroy(&e->pass_lock);
	pthread_mutex_destroy(&e->lock);
	close(e->wake_fd);
	close(e->timer_fd);
	model_wire_close(e->wire);
	free(e);
}
