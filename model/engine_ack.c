// SPDX-License-Identifier: MIT
/*
 * What the ERNIC model's responder sends back to a requester (PG332 ch.2
 * "ERNIC RX Path"): ACKs, NAKs and RNR NAKs with their counters, ACK
 * coalescing per receive batch, and XRNICCONF[4:3]'s ACK policy with its
 * timer. Every function: engine lock held.
 */
#include "engine_priv.h"

static void aeth_out(struct eng *e, uint32_t i, uint32_t psn, uint8_t syn,
		     uint32_t msn)
{
	struct roce_pkt p = { 0 };

	p.opcode = ROCE_RC_ACK;
	p.psn = psn;
	p.aeth_syndrome = syn;
	p.aeth_msn = msn;
	eng_send_pkt(e, i, &p);
	if ((syn & 0x60) == ROCE_AETH_ACK) {
		eng_count(e, ERNIC_OUTAMPKTCNT, 0);
	} else if ((syn & 0x60) == ROCE_AETH_RNR) {
		eng_set(e, ERNIC_OUTRNRPKTSTS,
			((eng_reg(e->m, ERNIC_OUTRNRPKTSTS) >> 16) + 1) << 16 |
				(i & 0xFF));
	} else {
		eng_count(e, ERNIC_OUTNAKPKTCNT, 0);
	}
}

/* The ACK a batch of requests owed QP i (eng_ack_policy), if any. */
static void pay_ack(struct eng *e, uint32_t i)
{
	struct eng_qp *q = &e->qp[i];

	if (!q->ack_owed)
		return;
	q->ack_owed = false;
	q->owed_reqs = 0;
	aeth_out(e, i, q->owed_psn, ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID,
		 q->owed_msn);
}

/* An ACK, NAK or RNR NAK now: after the ACK owed for earlier requests,
 * so that the requester sees them in PSN order. */
void eng_send_aeth(struct eng *e, uint32_t i, uint32_t psn, uint8_t syn)
{
	pay_ack(e, i);
	aeth_out(e, i, psn, syn, e->qp[i].msn);
}

/*
 * The requests of one receive batch that ask for an ACK are answered by
 * one ACK, for the last of them, when the batch is done (IBTA lets an
 * ACK stand for every PSN before it): a stream of small messages costs
 * its requester one ACK per batch instead of one per message, and a
 * request alone in its batch is answered as soon as before. A QP's
 * ENG_ACK_BATCH-th request of a batch is answered at once: a requester
 * at its window would otherwise wait, idle, for the whole batch to be
 * taken. Lock held.
 */
static void owe_ack(struct eng *e, uint32_t i, uint32_t psn)
{
	struct eng_qp *q = &e->qp[i];

	if (!q->ack_owed) {
		if (!q->ack_listed) {
			if (e->owed_n == ENG_OWED_MAX) {
				aeth_out(e, i, psn,
					 ROCE_AETH_ACK |
						 ROCE_AETH_CREDIT_INVALID,
					 q->msn);
				return;
			}
			e->owed[e->owed_n++] = i;
			q->ack_listed = true;
		}
		q->ack_owed = true;
	}
	q->owed_psn = psn;
	q->owed_msn = q->msn;
	if (++q->owed_reqs == ENG_ACK_BATCH) {
		pay_ack(e, i);
		model_wire_flush(e->wire);
	}
}

void eng_rx_acks_flush(struct eng *e)
{
	for (uint32_t k = 0; k < e->owed_n; k++) {
		pay_ack(e, e->owed[k]);
		e->qp[e->owed[k]].ack_listed = false;
	}
	e->owed_n = 0;
	atomic_store_explicit(&e->acks_late, false, memory_order_relaxed);
}

void eng_rx_acks_send(struct eng *e)
{
	eng_rx_acks_flush(e);
	model_wire_flush(e->wire);
}

/*
 * One request in, one request out: a ping-pong (ib_write_lat's two
 * sides, a request-response application). The ACK of a request of a
 * QP that sent one of its own since the last time (`replied`) waits for
 * the reply its application is about to post, up to ENG_ACK_REPLY_NS,
 * and then leaves with it: *after* a WRITE (tx_inline, eng_run), so the
 * peer, polling for that ACK, takes the reply from the port in the same
 * poll, and nobody's engine thread is woken for either packet; before
 * a reply that completes a receive there (eng_tx_pump), so its send's
 * completion comes before the answer's. ACKed first, the WRITE
 * reply came after the peer's poll had ended and woke its thread, and
 * the poll's end woke it once more to watch the port (1.5 engine
 * wakeups per message, each preempting an application on a 2-CPU host:
 * ib_write_lat 15 us where ib_send_lat, whose receive polls keep the
 * port, took 4). A stream's receiver, which sends nothing back, ACKs at
 * once: its requester waits for the window; so does a QP that takes a
 * second request before it replies (owed_reqs).
 * Whoever passes after late_at pays: the pass that kept it returns
 * late_at as a deadline (eng_run), so the thread sleeps no later than
 * that, or a poll's pass sets the thread's timer to it when the thread
 * is on the port (eng_timer_retune; Dekker with the thread's return
 * from away: it sees acks_late before it sleeps, late_next). Lock held;
 * `now` is the pass's clock.
 */
bool eng_acks_late(struct eng *e, uint64_t now)
{
	struct eng_qp *q;

	if (e->owed_n != 1)
		return false;
	q = &e->qp[e->owed[0]];
	if (q->owed_reqs != 1)
		return false;
	if (atomic_load_explicit(&e->acks_late, memory_order_relaxed)) {
		if (now < e->late_at)
			return true;
		e->st.acks_overdue++;
		return false;
	}
	/* (only with the thread on the real clock: an engine a test steps
	 * answers at once) */
	if (!q->replied || !e->running || e->m->clock)
		return false;
	e->st.acks_held++;
	e->late_at = now + ENG_ACK_REPLY_NS;
	q->replied = false;
	atomic_store(&e->acks_late, true);
	return true;
}

void eng_send_ack(struct eng *e, uint32_t i, uint32_t psn)
{
	eng_send_aeth(e, i, psn, ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID);
}

/* NAK-Invalid request and the QP to FATAL (Table 2-3 bits 16/17). */
void eng_nak_fatal(struct eng *e, uint32_t i, uint32_t psn, uint8_t nak,
		   uint32_t code)
{
	eng_send_aeth(e, i, psn, ROCE_AETH_NAK | nak);
	eng_qp_fatal(e, i, code, 0);
}

/* RNR NAK with the QP's own RNR timer (TIMEOUTCONF[20:16]). */
void eng_send_rnr(struct eng *e, uint32_t i, uint32_t psn)
{
	struct eng_qp *q = &e->qp[i];
	uint32_t t = ERNIC_FIELD_GET(ERNIC_TIMEOUTCONF_RNR_NAK_TIMEOUT,
				     eng_qreg(e->m, i, ERNIC_TIMEOUTCONF));

	eng_errbuf(e, ROCE_SYN_RQ_FULL, NULL, 0);	/* Table 2-3 bit 20 */
	eng_send_aeth(e, i, psn, (uint8_t)(ROCE_AETH_RNR | (t & 0x1F)));
	q->nak_sent = true;
	eng_set(e, ERNIC_QP(i, ERNIC_STATQP),
		eng_qreg(e->m, i, ERNIC_STATQP) | ERNIC_STATQP_RQ_OVFL);
}

/*
 * XRNICCONF[4:3]: ACK on AckReq or on the coalescing timeout (0), only
 * on the timeout (1), or only on AckReq (2).
 */
void eng_ack_policy(struct eng *e, uint32_t i, const struct roce_pkt *p)
{
	struct eng_qp *q = &e->qp[i];
	uint32_t mode = ERNIC_FIELD_GET(ERNIC_XRNICCONF_TX_ACK_GEN,
					eng_reg(e->m, ERNIC_XRNICCONF));

	if (p->ackreq && mode != ERNIC_ACK_ON_TIMEOUT) {
		owe_ack(e, i, p->psn);
		q->ack_pending = false;
		q->ack_at = 0;
	} else if (mode != ERNIC_ACK_ON_REQ) {
		q->ack_pending = true;
		q->ack_psn = p->psn;
		if (!q->ack_at)
			q->ack_at = eng_now(e) + ENG_ACK_DELAY_NS;
	}
}

uint64_t eng_rx_timers(struct eng *e, uint32_t i, uint64_t now)
{
	struct eng_qp *q = &e->qp[i];

	if (q->ack_pending && now >= q->ack_at) {
		eng_send_ack(e, i, q->ack_psn);
		q->ack_pending = false;
		q->ack_at = 0;
	}
	return q->ack_pending ? q->ack_at : 0;
}
