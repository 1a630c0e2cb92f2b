// SPDX-License-Identifier: MIT
/*
 * Requester side of the ERNIC model: the WQE processor (SQ fetch and
 * packetisation by path MTU) and the response handler (ACK/NAK/read
 * responses, retransmission). PG332 ch.2 "Response Handler": on a NAK
 * or a timeout the SQ pointer rolls back and the complete WQE is sent
 * again — partial WQE retransmission is not supported.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "engine_priv.h"

/* IBTA Table 45: RNR NAK timer field -> microseconds. */
static const uint32_t rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* Opcodes by (WQE opcode, position): ONLY, FIRST, MIDDLE, LAST. */
struct tx_ops {
	bool valid;
	bool write;		/* carries RETH on FIRST/ONLY */
	bool recv;		/* completes a receive at the responder */
	uint8_t only, first, middle, last;
};

static const struct tx_ops tx_ops[ERNIC_OP_SEND_INV + 1] = {
	[ERNIC_OP_RDMA_WRITE] = { true, true, false, ROCE_RC_WRITE_ONLY,
		ROCE_RC_WRITE_FIRST, ROCE_RC_WRITE_MIDDLE, ROCE_RC_WRITE_LAST },
	[ERNIC_OP_RDMA_WRITE_IMM] = { true, true, true,
		ROCE_RC_WRITE_ONLY_IMM, ROCE_RC_WRITE_FIRST,
		ROCE_RC_WRITE_MIDDLE, ROCE_RC_WRITE_LAST_IMM },
	[ERNIC_OP_SEND] = { true, false, true, ROCE_RC_SEND_ONLY,
		ROCE_RC_SEND_FIRST, ROCE_RC_SEND_MIDDLE, ROCE_RC_SEND_LAST },
	[ERNIC_OP_SEND_IMM] = { true, false, true, ROCE_RC_SEND_ONLY_IMM,
		ROCE_RC_SEND_FIRST, ROCE_RC_SEND_MIDDLE,
		ROCE_RC_SEND_LAST_IMM },
	[ERNIC_OP_RDMA_READ] = { true, false, false, ROCE_RC_READ_REQ,
		0, 0, 0 },
	[ERNIC_OP_SEND_INV] = { true, false, true, ROCE_RC_SEND_ONLY_INV,
		ROCE_RC_SEND_FIRST, ROCE_RC_SEND_MIDDLE,
		ROCE_RC_SEND_LAST_INV },
};

/* Where the k-th outstanding WQE sits in q->osq. */
static uint32_t osq_idx(const struct eng_qp *q, uint32_t k)
{
	return (q->osq_head + k) % ENG_OSQ_MAX;
}

static struct eng_wqe *osq_at(struct eng_qp *q, uint32_t k)
{
	return &q->osq[osq_idx(q, k)];
}

static uint32_t wqe_last_psn(const struct eng_wqe *w)
{
	return psn_add(w->first_psn, w->npkts - 1);
}

/* 4.096 us * 2^timeout (IBTA 9.7.6.1.3); 0 means "no timeout". */
static uint64_t rto_ns(const struct ernic_model *m, uint32_t i)
{
	uint32_t t = ERNIC_FIELD_GET(ERNIC_TIMEOUTCONF_TIMEOUT,
				     eng_qreg(m, i, ERNIC_TIMEOUTCONF));

	if (!t)
		return 0;
	if (t > 31)
		t = 31;
	return (UINT64_C(4096) << t);
}

/* The PSN after the last packet the current attempt has sent (a READ
 * request counts for its responses): a rewind starts it again at the
 * WQE it rewinds to. */
static uint32_t send_pos(const struct eng_qp *q)
{
	const struct eng_wqe *w;

	if (q->tx_cur >= q->osq_n)
		return q->nxt;
	w = &q->osq[osq_idx(q, q->tx_cur)];
	return psn_add(w->first_psn, w->w.opcode == ERNIC_OP_RDMA_READ ?
					     (w->sent ? w->npkts : 0) :
					     w->sent);
}

/* Packets of the current attempt sent and not known taken by the peer:
 * past base, duplicates of a retry included. */
static int32_t in_flight(const struct eng_qp *q)
{
	int32_t d = psn_diff(send_pos(q), q->base);

	return d > 0 ? d : 0;
}

/* The retransmission timer runs while the current attempt waits for
 * the peer: packets in flight, or a WQE it sent whole and still
 * outstanding (a READ whose responses an ACK for later PSNs passed). A
 * retry that could not leave yet (the device's window full) costs
 * none. */
static void arm_rto(struct eng *e, uint32_t i, uint64_t now)
{
	struct eng_qp *q = &e->qp[i];
	uint64_t t = rto_ns(e->m, i);

	q->rto_at = (q->osq_n && t && (q->tx_cur || in_flight(q))) ?
			    now + t : 0;
}

/* The image of the retry counters in STATQPi[26:24] / [30:28]. */
static void stat_retries(struct eng *e, uint32_t i)
{
	struct eng_qp *q = &e->qp[i];
	uint32_t st = eng_qreg(e->m, i, ERNIC_STATQP);

	st &= ~(ERNIC_STATQP_RETRY_COUNT | ERNIC_STATQP_RNR_NAK_COUNT);
	st |= ERNIC_FIELD_PREP(ERNIC_STATQP_RETRY_COUNT, q->retries & 7) |
	      ERNIC_FIELD_PREP(ERNIC_STATQP_RNR_NAK_COUNT, q->rnr_retries & 7);
	if (q->retries || q->rnr_retries)
		st |= ERNIC_STATQP_RETRIED;
	eng_set(e, ERNIC_QP(i, ERNIC_STATQP), st);
}

int eng_wqe_read(struct eng *e, uint32_t i, uint32_t slot,
		 struct ernic_wqe *w)
{
	uint64_t sqba = eng_reg64(e->m, ERNIC_QP(i, ERNIC_SQBA),
				  ERNIC_QP(i, ERNIC_SQBAMSB));

	if (eng_dma_read(e, sqba + (uint64_t)slot * ERNIC_WQE_SIZE, w,
			 sizeof(*w)))
		return EFAULT;
	/* Table 2-1 fields are little-endian in memory: host order here. */
	w->wrid = le16toh(w->wrid);
	w->laddr = le64toh(w->laddr);
	w->roffset = le64toh(w->roffset);
	w->rtag = le32toh(w->rtag);
	w->length = le32toh(w->length);
	w->immdt = le32toh(w->immdt);
	return 0;
}

/* Fetch the WQE at the SQ fetch pointer into the outstanding queue. */
static bool wqe_fetch(struct eng *e, uint32_t i)
{
	struct ernic_model *m = e->m;
	struct eng_qp *q = &e->qp[i];
	uint32_t depth = ERNIC_FIELD_GET(ERNIC_QDEPTH_SQ,
					 eng_qreg(m, i, ERNIC_QDEPTH));
	uint32_t pi = eng_qreg(m, i, ERNIC_SQPI) & 0xFFFF;
	uint32_t pmtu = eng_pmtu(m, i);
	struct eng_wqe *w;

	if (q->sq_fetch == pi || !depth ||
	    q->osq_n >= (q->cnp_cut ? ENG_OSQ_CNP : ENG_OSQ_MAX))
		return false;
	if (pi >= depth || q->sq_fetch >= depth) {
		eng_qp_fatal(e, i, ERNIC_FATAL_WQE_PROCESSOR, 0);
		return false;
	}
	if (!q->psn_loaded) {
		q->npsn = ERNIC_FIELD_GET(ERNIC_SQPSN_PSN,
					  eng_qreg(m, i, ERNIC_SQPSN));
		q->una = q->nxt = q->base = q->npsn;
		q->psn_loaded = true;
	}
	w = osq_at(q, q->osq_n);
	memset(w, 0, sizeof(*w));
	if (eng_wqe_read(e, i, q->sq_fetch, &w->w) ||
	    w->w.opcode > ERNIC_OP_SEND_INV || !tx_ops[w->w.opcode].valid ||
	    w->w.length > ERNIC_MAX_MSG_SIZE) {
		/* An unreadable or malformed WQE: the WQE processor gives
		 * up on the QP (Table 2-4 code 5) with an error CQE. */
		w->slot = q->sq_fetch;
		w->w.wrid = (uint16_t)w->slot;	/* WRID is the SQ slot */
		eng_osq_count(e, i, 1);
		q->sq_fetch = (q->sq_fetch + 1) % depth;
		eng_qp_fatal(e, i, ERNIC_FATAL_WQE_PROCESSOR, 0);
		return false;
	}
	w->slot = q->sq_fetch;
	w->first_psn = q->npsn;
	w->npkts = w->w.length ? (w->w.length + pmtu - 1) / pmtu : 1;
	q->npsn = psn_add(q->npsn, w->npkts);
	eng_osq_count(e, i, 1);
	q->sq_fetch = (q->sq_fetch + 1) % depth;
	eng_statqp(e, i);
	return true;
}

/* Packet k of WQE w. Returns 0, or a Table 2-4 code on a local fault. */
static uint32_t send_one(struct eng *e, uint32_t i, struct eng_wqe *w,
			 uint32_t k, uint32_t pmtu)
{
	const struct tx_ops *o = &tx_ops[w->w.opcode];
	struct roce_pkt p = { 0 };
	uint32_t len = w->w.length, off = k * pmtu;
	uint32_t plen = len > off ? (len - off < pmtu ? len - off : pmtu) : 0;
	bool last = k + 1 == w->npkts;

	p.psn = psn_add(w->first_psn, k);
	p.migreq = true;
	if (w->w.opcode == ERNIC_OP_RDMA_READ) {
		p.opcode = ROCE_RC_READ_REQ;
		p.reth_va = w->w.roffset;
		p.reth_rkey = w->w.rtag;
		p.reth_len = len;
		p.ackreq = true;
		eng_count(e, ERNIC_OUTIOPKTCNT, 16);
		return eng_send_pkt(e, i, &p) == EINVAL ?
			       ERNIC_FATAL_WQE_PROCESSOR : 0;
	}
	p.opcode = w->npkts == 1 ? o->only :
		   k == 0	 ? o->first :
		   last		 ? o->last :
				   o->middle;
	if (o->write && k == 0) {
		p.reth_va = w->w.roffset;
		p.reth_rkey = w->w.rtag;
		p.reth_len = len;
	}
	if (last) {
		/* IMMDT [415:384] is a 32-bit field sent MSB first; SEND with
		 * invalidate carries the R_Key to invalidate there. */
		p.imm = w->w.immdt;
		p.ieth_rkey = p.imm;
	}
	p.ackreq = last || (k + 1) % ENG_ACKREQ_EVERY == 0;
	p.payload_len = plen;
	if (!o->write && len <= ERNIC_WQE_SDATA_SIZE) {
		/* PG332 Table 2-1: a SEND of <= 16 B comes from SDATA. */
		p.payload = w->w.sdata;
	} else if (plen) {
		p.payload = eng_tx_payload(e, p.opcode, w->w.laddr + off, plen,
					   true);
		if (!p.payload)
			return ERNIC_FATAL_WQE_PROCESSOR;
	}
	eng_count(e, ERNIC_OUTIOPKTCNT, o->write ? 16 : 0);
	if (eng_send_pkt(e, i, &p) == EINVAL)
		return ERNIC_FATAL_WQE_PROCESSOR;
	if (p.payload && p.payload != w->w.sdata)
		w->lent_gen = model_wire_tx_gen(e->wire) + 1;
	return 0;
}

/* Packets of w up to w->sent have left: responses to them are valid.
 * A READ request claims the PSNs of all its responses. */
static void sent_upto(struct eng_qp *q, const struct eng_wqe *w)
{
	uint32_t end = psn_add(w->first_psn,
			       w->w.opcode == ERNIC_OP_RDMA_READ ? w->npkts :
								    w->sent);

	if (psn_diff(end, q->nxt) > 0)
		q->nxt = end;
}

void eng_tx_room(struct eng *e)
{
	int32_t out = 0;

	for (uint32_t w = 0; w < ERNIC_ARRAY_SIZE(e->osq_map); w++) {
		for (uint64_t b = e->osq_map[w]; b; b &= b - 1) {
			uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(b);
			const struct eng_qp *q = &e->qp[i];

			/* what a rewind or an RNR NAK took back is not in
			 * flight; QP1's MADs have their own pump */
			if (i >= ERNIC_FIRST_RC_QP && q->en && !q->fatal &&
			    q->psn_loaded && !q->rnr_at)
				out += in_flight(q);
		}
	}
	e->tx_room = (int32_t)ENG_DEV_WINDOW - out;
}

bool eng_tx_pump(struct eng *e, uint32_t i)
{
	struct eng_qp *q = &e->qp[i];
	uint32_t pmtu = eng_pmtu(e->m, i), budget = ENG_TX_BUDGET;
	bool sent = false;

	if (q->rnr_at || q->fatal || q->recover || eng_hndshk_frozen(e, i))
		return false;
	while (budget) {
		struct eng_wqe *w;
		uint32_t want;

		if (q->tx_cur == q->osq_n && !wqe_fetch(e, i))
			break;
		if (q->fatal)
			return false;
		w = osq_at(q, q->tx_cur);
		want = w->w.opcode == ERNIC_OP_RDMA_READ ? 1 : w->npkts;
		while (w->sent < want && budget) {
			uint32_t code;

			/* Window: stay inside the peer's receive buffering,
			 * the QP's and the device's. */
			if (psn_diff(psn_add(w->first_psn, w->sent), q->base) >=
			    (int32_t)ENG_TX_WINDOW)
				goto out;
			if (e->tx_room <= 0) {
				e->tx_starved = true;
				goto out;
			}
			/* An ACK held for this reply (eng_acks_late) goes
			 * first if the reply completes a receive: the peer
			 * learns that its request completed before it sees
			 * the answer, as from a NIC that ACKs at once, and a
			 * program that waits for both on one completion
			 * channel (perftest's latency tests with -e) gets the
			 * send's event first. After a WRITE, it goes after
			 * (tx_inline, eng_run): the WRITE completes nothing
			 * at the peer, whose poll for the ACK then finds the
			 * data in place. */
			if (!w->sent && tx_ops[w->w.opcode].recv &&
			    atomic_load_explicit(&e->acks_late,
						 memory_order_relaxed))
				eng_rx_acks_flush(e);
			code = send_one(e, i, w, w->sent, pmtu);
			if (code) {
				eng_qp_fatal(e, i, code, 0);
				return false;
			}
			w->sent++;
			sent_upto(q, w);
			e->tx_room -= w->w.opcode == ERNIC_OP_RDMA_READ ?
					      (int32_t)w->npkts : 1;
			budget--;
			sent = true;
		}
		if (w->sent < want)
			break;
		q->tx_cur++;
	}
out:
	if (sent) {
		q->replied = true;
		if (!q->rto_at)
			arm_rto(e, i, eng_now(e));
	}
	return !budget;
}

/*
 * Roll back to outstanding WQE k: it and all after it go again whole.
 * A READ is asked for whole again too, but keeps the responses it has:
 * the repeated ones before rd_got are duplicates, so each try moves it
 * on, instead of needing every response of one try to arrive.
 */
static void rewind_to(struct eng *e, uint32_t i, uint32_t k)
{
	struct eng_qp *q = &e->qp[i];

	for (uint32_t j = k; j < q->osq_n; j++) {
		struct eng_wqe *w = osq_at(q, j);

		w->sent = 0;
	}
	q->retry_psn = osq_at(q, k)->first_psn;
	/* Nothing of the new attempt is known taken yet (base_dup). */
	q->base = psn_diff(q->retry_psn, q->una) < 0 ? q->retry_psn : q->una;
	if (k < q->tx_cur)
		q->tx_cur = k;
	eng_set(e, ERNIC_RETRYCNTSTS, eng_reg(e->m, ERNIC_RETRYCNTSTS) + 1);
}

/* The windows' start moves to `to`: what was in flight before it is
 * room again, the device's too. */
static void base_advance(struct eng *e, struct eng_qp *q, uint32_t to)
{
	int32_t d = psn_diff(to, q->base), f = in_flight(q);

	if (d <= 0)
		return;
	e->tx_room += d < f ? d : f;
	q->base = to;
}

/* Acknowledged progress: the retry budget starts over (IBTA 9.7.6.1.3
 * counts retries of the same PSN). Packets arrive in order, so progress
 * the current attempt made means the peer took its duplicates before it
 * too. While that attempt still sends duplicates (base_dup), progress is
 * the last attempt's packets: as many packets left the peer's buffers,
 * which counts for as many of the retry's. */
static void una_advance(struct eng *e, struct eng_qp *q, uint32_t next)
{
	int32_t d = psn_diff(next, q->una);

	if (d > 0) {
		uint32_t to = next;

		/* (base behind una: base + d is still before next) */
		if (psn_diff(q->base, q->una) < 0 &&
		    psn_diff(send_pos(q), q->una) <= 0)
			to = psn_add(q->base, (uint32_t)d);
		q->una = next;
		base_advance(e, q, to);
		q->retries = 0;
	}
}

/* Index of the outstanding WQE whose PSN range holds psn, or osq_n. */
static uint32_t wqe_of(struct eng_qp *q, uint32_t psn)
{
	for (uint32_t k = 0; k < q->osq_n; k++) {
		struct eng_wqe *w = osq_at(q, k);

		if (psn_diff(psn, w->first_psn) >= 0 &&
		    psn_diff(psn, wqe_last_psn(w)) <= 0)
			return k;
	}
	return q->osq_n;
}

/*
 * PG332 retransmits whole WQEs: a retry sends again every packet of the
 * WQE it rewinds to, those the peer acknowledged too. Those duplicates
 * fill the peer's buffers as new packets do, but their ACKs do not move
 * una, so the window must not start at una while they go, or a retry of
 * a WQE longer than the window bursts it all at once: the peer drops
 * the tail, where the packets it lacks are, every time, until the retry
 * count runs out (a 2 MiB SEND between namespaces on the frame wire
 * did). The peer ACKs each duplicate that asks for one (every
 * ENG_ACKREQ_EVERY packets, and a message's last) with its last PSN: so
 * an ACK that does not move una while base is behind it says the peer
 * took the retry's packets up to the next one that asked.
 */
static void base_dup(struct eng *e, struct eng_qp *q)
{
	uint32_t k = wqe_of(q, q->base), to, idx;
	const struct eng_wqe *w;

	if (k == q->osq_n)
		return;
	w = osq_at(q, k);
	idx = (uint32_t)psn_diff(q->base, w->first_psn);
	if (w->w.opcode == ERNIC_OP_RDMA_READ)
		idx = w->npkts;
	else
		idx = (idx / ENG_ACKREQ_EVERY + 1) * ENG_ACKREQ_EVERY;
	to = psn_add(w->first_psn, idx < w->npkts ? idx : w->npkts);
	if (psn_diff(to, q->una) > 0)
		to = q->una;
	if (psn_diff(to, send_pos(q)) > 0)
		return;	/* not sent in this attempt: an older ACK */
	base_advance(e, q, to);
}

/* Completed WQEs are nothing the peer still holds: the windows start
 * no earlier than the oldest outstanding one (nor after una). */
static void base_clamp(struct eng *e, struct eng_qp *q)
{
	uint32_t to = q->una;

	if (psn_diff(q->base, q->una) >= 0)
		return;
	if (q->osq_n && psn_diff(osq_at(q, 0)->first_psn, q->una) < 0)
		to = osq_at(q, 0)->first_psn;
	base_advance(e, q, to);
}

/* Complete every non-READ WQE whose last PSN is before `psn` (ACKed, or
 * implied by a later response). Stops at an unfinished READ. */
static void ack_upto(struct eng *e, uint32_t i, uint32_t psn, bool inclusive)
{
	struct eng_qp *q = &e->qp[i];

	while (q->osq_n) {
		struct eng_wqe *w = osq_at(q, 0);
		int32_t d = psn_diff(psn, wqe_last_psn(w));

		if (w->w.opcode == ERNIC_OP_RDMA_READ || d < 0 ||
		    (d == 0 && !inclusive))
			break;
		eng_complete_head(e, i);
		q->retries = 0;
		q->rnr_retries = 0;
	}
}

/*
 * A NAK or an implied NAK (responses of a READ found missing) asks for
 * outstanding WQE k and all after it again. If a retry since the last
 * acknowledged progress already went back to k or further, they are on
 * their way again: this is the same loss reported once more, by a
 * duplicated or reordered response, not another retry. IBTA counts
 * retransmissions without forward progress; counting every report would
 * use up the retry budget in a fraction of one timeout (rxe ignores them
 * too once a retry has started). A retry that is lost again is caught by
 * the timeout, which always counts.
 */
static bool retry_started(struct eng_qp *q, uint32_t k)
{
	return q->retries &&
	       psn_diff(osq_at(q, k)->first_psn, q->retry_psn) >= 0;
}

/* A retry: count it against TIMEOUTCONF's limit; false if exhausted. */
static bool retry_ok(struct eng *e, uint32_t i)
{
	struct eng_qp *q = &e->qp[i];
	uint32_t lim = ERNIC_FIELD_GET(ERNIC_TIMEOUTCONF_RETRY_CNT,
				       eng_qreg(e->m, i, ERNIC_TIMEOUTCONF));

	if (q->retries >= lim && !(eng_reg(e->m, ERNIC_XRNICADCONF) &
				   ERNIC_XRNICADCONF_RETRY_CNT_FATAL_DIS)) {
		eng_qp_fatal(e, i, ERNIC_FATAL_RESP_HANDLER, 0);
		return false;
	}
	q->retries++;
	stat_retries(e, i);
	return true;
}

static void on_nak(struct eng *e, uint32_t i, const struct roce_pkt *p,
		   uint64_t now)
{
	struct eng_qp *q = &e->qp[i];
	uint8_t syn = p->aeth_syndrome;
	uint32_t k;

	eng_count(e, ERNIC_INNAKPKTCNT, 0);
	eng_set(e, ERNIC_INNCKPKTSTS,
		((eng_reg(e->m, ERNIC_INNCKPKTSTS) >> 16) + 1) << 16 |
			(i & 0xFF));
	/* Older than an acknowledgment already taken (reordered on the
	 * wire): the peer has had that PSN since, it asks for nothing. */
	if (psn_diff(p->psn, q->una) < 0)
		return;
	/* A NAK acknowledges everything before its PSN (IBTA 9.7.5.1.3).
	 * Not an RNR NAK here: the kernel's rxe (Linux 6.1) RNR-NAKs the
	 * packet after one it has not taken, and then NAKs that one as a
	 * sequence error; completed on the RNR NAK, it could never be sent
	 * again. What is before an RNR NAK completes with the next ACK. */
	if ((syn & 0x60) != ROCE_AETH_RNR) {
		una_advance(e, q, p->psn);
		ack_upto(e, i, p->psn, false);
	}
	k = wqe_of(q, p->psn);
	if (k == q->osq_n)
		return;		/* stale: nothing outstanding there */
	/* A NAK for a packet not sent again since the last rewind asks for
	 * what goes again anyway: a peer that RNR-NAKs a packet NAKs the
	 * next pipelined one as a sequence error too (rxe does), and those
	 * must not count as a second retry each round. */
	if (k > q->tx_cur ||
	    (k == q->tx_cur &&
	     (uint32_t)psn_diff(p->psn, osq_at(q, k)->first_psn) >=
		     osq_at(q, k)->sent)) {
		if ((syn & 0x60) == ROCE_AETH_RNR ||
		    syn == (ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ))
			return;
	}
	if ((syn & 0x60) == ROCE_AETH_RNR) {
		uint32_t lim = ERNIC_FIELD_GET(
			ERNIC_TIMEOUTCONF_RNR_RETRY_CNT,
			eng_qreg(e->m, i, ERNIC_TIMEOUTCONF));

		/* 7 means "retry forever" (IBTA 9.7.5.2.8). */
		if (lim != 7 && q->rnr_retries >= lim) {
			eng_qp_fatal(e, i, ERNIC_FATAL_RNR_COUNTER, syn);
			return;
		}
		q->rnr_retries++;
		stat_retries(e, i);
		rewind_to(e, i, k);
		q->rnr_at = now + (uint64_t)rnr_us[syn & 0x1F] * 1000;
		q->rto_at = 0;
		return;
	}
	if (syn == (ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ)) {
		if (retry_started(q, k))
			return;
		if (!retry_ok(e, i))
			return;
		rewind_to(e, i, k);
		arm_rto(e, i, now);
		return;
	}
	/* Invalid request, remote access or operational error: the WQE
	 * fails; the QP goes fatal (Table 2-4 code 0x0A, remote error).
	 * What is before it completes only if it is done: a READ still
	 * missing responses (ack_upto stopped there) gets the error CQE,
	 * not a success with its buffer never written. */
	while (q->osq_n && k--) {
		const struct eng_wqe *w = osq_at(q, 0);

		if (w->w.opcode == ERNIC_OP_RDMA_READ && w->rd_got < w->npkts)
			break;
		eng_complete_head(e, i);
	}
	if (syn == (ROCE_AETH_NAK | ROCE_NAK_INVALID_REQ))
		eng_errbuf(e, ROCE_SYN_BAD_RESP, NULL, 0);	/* row 23 */
	eng_qp_fatal(e, i, ERNIC_FATAL_REMOTE_NAK, syn);
}

/*
 * Whether response k of READ w may be p: the opcode for its place and
 * the payload it must carry (Table 2-4 makes anything else fatal). One
 * exception: a responder may answer a READ as a resumed one, LAST for
 * the ONLY, MIDDLE for the FIRST (the kernel's rxe in Linux 6.1 does,
 * for a READ asked for again and for one it restarted itself). Such a
 * packet at the READ's first PSN with the full payload carries the same
 * data, and is taken.
 */
static bool read_resp_fits(const struct eng_wqe *w, const struct roce_pkt *p,
			   uint32_t k, uint32_t want)
{
	uint8_t op = eng_read_resp_op(w->npkts, k);

	if (p->payload_len != want)
		return false;
	if (p->opcode == op)
		return true;
	if (k != 0)
		return false;
	return p->opcode == (w->npkts == 1 ? ROCE_RC_READ_RESP_LAST :
					     ROCE_RC_READ_RESP_MIDDLE);
}

/* A READ response packet for the oldest outstanding READ. */
static void on_read_resp(struct eng *e, uint32_t i, const struct roce_pkt *p,
			 uint64_t now)
{
	struct eng_qp *q = &e->qp[i];
	uint32_t pmtu = eng_pmtu(e->m, i), k, off, want;
	struct eng_wqe *w;
	int32_t d;

	ack_upto(e, i, p->psn, false);
	if (!q->osq_n)
		return;
	w = osq_at(q, 0);
	if (w->w.opcode != ERNIC_OP_RDMA_READ || !w->sent ||
	    psn_diff(p->psn, w->first_psn) < 0 ||
	    psn_diff(p->psn, wqe_last_psn(w)) > 0)
		return;		/* not for the READ we wait on: stale */
	d = psn_diff(p->psn, psn_add(w->first_psn, w->rd_got));
	if (d < 0)
		return;		/* duplicate */
	if (d > 0) {
		/* A response went missing: ask again for the whole READ. */
		if (!q->rd_resync && !retry_started(q, 0) && retry_ok(e, i)) {
			rewind_to(e, i, 0);
			q->rd_resync = true;
			arm_rto(e, i, now);
		}
		return;
	}
	q->rd_resync = false;
	k = w->rd_got;
	off = k * pmtu;
	want = w->w.length - off < pmtu ? w->w.length - off : pmtu;
	if (!read_resp_fits(w, p, k, want)) {
		eng_qp_fatal(e, i, w->npkts == 1 ?
			     (p->opcode == ROCE_RC_READ_RESP_LAST ?
				      ERNIC_FATAL_READ_RESP_LAST_NOT_ONLY :
				      ERNIC_FATAL_READ_RESP_ONLY_LEN) :
			     k + 1 == w->npkts ? ERNIC_FATAL_READ_RESP_LAST :
						 ERNIC_FATAL_READ_RESP_MIDDLE_LEN,
			     0);
		return;
	}
	if (p->payload_len &&
	    eng_dma_write(e, w->w.laddr + off, p->payload,
			  p->payload_len)) {
		eng_qp_fatal(e, i, ERNIC_FATAL_WQE_PROCESSOR, 0);
		return;
	}
	w->rd_got++;
	una_advance(e, q, psn_add(p->psn, 1));
	q->retries = 0;
	if (w->rd_got == w->npkts) {
		eng_complete_head(e, i);
		q->rnr_retries = 0;
		/* What an ACK took behind the READ while it waited (ack_upto
		 * stopped at it) completes now, not after a retry. */
		ack_upto(e, i, psn_add(q->una, ERNIC_PSN_MASK), true);
	}
	arm_rto(e, i, now);
}

void eng_tx_response(struct eng *e, uint32_t i, const struct roce_pkt *p)
{
	struct eng_qp *q = &e->qp[i];
	uint64_t now = eng_now(e);
	uint32_t flags = roce_opcode_flags(p->opcode);

	if (!q->psn_loaded || !q->osq_n) {
		eng_count(e, ERNIC_ININVDUPCNT, 16);
		return;
	}
	if (psn_diff(p->psn, q->nxt) >= 0) {
		/* For a PSN not yet sent (IBTA: invalid, dropped). Taken, it
		 * would complete WQEs whose packets never left. */
		eng_errbuf(e, ROCE_SYN_BAD_RESP, NULL, 0);
		return;
	}
	if ((flags & ROCE_HDR_AETH) &&
	    (p->aeth_syndrome & 0x60) != ROCE_AETH_ACK) {
		if ((p->aeth_syndrome & 0x60) == 0x40 ||
		    (p->aeth_syndrome & 0x80)) {
			/* reserved type: malformed AETH (Table 2-3 bit 22) */
			eng_errbuf(e, ROCE_SYN_AETH, NULL, 0);
			return;
		}
		on_nak(e, i, p, now);
	} else if (p->opcode == ROCE_RC_ACK) {
		uint32_t k;

		eng_count(e, ERNIC_INAMPKTCNT, 0);
		if (psn_diff(psn_add(p->psn, 1), q->una) <= 0 &&
		    psn_diff(q->base, q->una) < 0)
			base_dup(e, q);
		una_advance(e, q, psn_add(p->psn, 1));
		ack_upto(e, i, p->psn, true);
		/* ACKed past a READ still missing responses: they were
		 * lost, ask again now rather than at the timeout. */
		k = wqe_of(q, p->psn);
		if (q->osq_n && k > 0 && k < q->osq_n &&
		    osq_at(q, 0)->w.opcode == ERNIC_OP_RDMA_READ &&
		    !q->rd_resync && !retry_started(q, 0) && retry_ok(e, i)) {
			rewind_to(e, i, 0);
			q->rd_resync = true;
		}
		arm_rto(e, i, now);
	} else {
		eng_count(e, ERNIC_INSRRPKTCNT, 16);
		on_read_resp(e, i, p, now);
	}
	base_clamp(e, q);
	if (!q->fatal)
		eng_tx_pump(e, i);
}

uint64_t eng_tx_timers(struct eng *e, uint32_t i, uint64_t now)
{
	struct eng_qp *q = &e->qp[i];
	uint64_t next = 0;

	if (q->rnr_at && now >= q->rnr_at) {
		q->rnr_at = 0;
		arm_rto(e, i, now);
		eng_tx_pump(e, i);
	}
	if (q->rto_at && now >= q->rto_at) {
		if (!q->osq_n) {
			q->rto_at = 0;
		} else if (retry_ok(e, i)) {
			/* Timeout: the oldest WQE and all after it again. */
			rewind_to(e, i, 0);
			q->rd_resync = false;
			arm_rto(e, i, now);
			eng_tx_pump(e, i);
		}
	}
	if (q->rnr_at)
		next = q->rnr_at;
	if (q->rto_at && (!next || q->rto_at < next))
		next = q->rto_at;
	return next;
}
