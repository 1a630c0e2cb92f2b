// SPDX-License-Identifier: MIT
/*
 * poll_cq: one ibv_cq over the per-QP ERNIC completion rings of the QPs
 * that send through it and the receive sides (ernic_recv.c) of the QPs
 * that receive through it. Completions are made when polled, so a CQ
 * never overruns.
 *
 * Send side: the IP writes 4-byte CQEs (PG332 Table 2-2) in SQ order and
 * then the CQ write index to the doorbell word at CQDBADDi (PG332
 * "Processing WQE Completions"). An ERRFLAG CQE ends the QP; its reason
 * is the NAK syndrome in STATQPi (ernic_hw.h "Error completions"), and
 * everything posted after it is flushed in software.
 */
#include <endian.h>

#include "ernic.h"
#include "ernic_cq.h"
#include "ernic_time.h"

/* Table 2-1 OPCODE of a posted WQE (swqe) -> work completion opcode */
static const enum ibv_wc_opcode wqe_wc_op[] = {
	[ERNIC_OP_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
	[ERNIC_OP_RDMA_WRITE_IMM] = IBV_WC_RDMA_WRITE,
	[ERNIC_OP_SEND] = IBV_WC_SEND,
	[ERNIC_OP_SEND_IMM] = IBV_WC_SEND,
	[ERNIC_OP_RDMA_READ] = IBV_WC_RDMA_READ,
	[ERNIC_OP_SEND_INV] = IBV_WC_SEND,
};

/* STATQPi NAK syndrome (AETH syndrome, 7 bits) -> status; first match. */
static const struct {
	uint8_t mask, value;
	enum ibv_wc_status status;
} syn_map[] = {
	{ 0x7F, 0x61, IBV_WC_REM_INV_REQ_ERR },	/* NAK invalid request */
	{ 0x7F, 0x62, IBV_WC_REM_ACCESS_ERR },	/* NAK remote access */
	{ 0x7F, 0x63, IBV_WC_REM_OP_ERR },	/* NAK remote operational */
	{ 0x7F, 0x64, IBV_WC_REM_INV_RD_REQ_ERR }, /* NAK invalid RD request */
	{ 0x7F, 0x60, IBV_WC_RETRY_EXC_ERR },	/* PSN sequence NAKs */
	{ 0x60, 0x20, IBV_WC_RNR_RETRY_EXC_ERR }, /* RNR NAK */
	{ 0x7F, 0x00, IBV_WC_RETRY_EXC_ERR },	/* transport timeout */
};

static enum ibv_wc_status syndrome_status(uint32_t syn)
{
	for (size_t k = 0; k < sizeof(syn_map) / sizeof(syn_map[0]); k++)
		if ((syn & syn_map[k].mask) == syn_map[k].value)
			return syn_map[k].status;
	return IBV_WC_GENERAL_ERR;
}

bool ernic_qp_check_fatal(struct ernic_dev *dev, struct ernic_qp *qp,
			  struct ernic_fatal_watch *w)
{
	int st = atomic_load(&qp->dp_state);
	uint64_t now;

	/* Only an enabled QP can go FATAL; a register read costs, and so
	 * does the clock, for a poll that finds nothing. */
	if (st != IBV_QPS_RTR && st != IBV_QPS_RTS)
		return false;
	if (++w->polls & (ERNIC_FATAL_POLLS - 1))
		return false;
	now = ernic_mono_ns();
	if (now < w->next_ns)
		return false;
	w->next_ns = now + 1000000u;
	if (!(ernic_rd(dev->acc, ERNIC_QP(qp->idx, ERNIC_STATQP)) &
	      ERNIC_STATQP_FATAL))
		return false;
	if (!atomic_load(&qp->fatal_ns))
		atomic_store(&qp->fatal_ns, now);
	ernic_qp_set_err(qp);
	return true;
}

/*
 * The error CQE of the WQE that failed is written before STATQPi.FATAL
 * (ernic_hw.h "Error completions"), but on a board the CQE's DDR write
 * may land after the register read that saw FATAL: only a millisecond
 * later is "no new CQE" final, and the rest flushed.
 */
static bool fatal_settled(struct ernic_qp *qp)
{
	uint64_t t = atomic_load(&qp->fatal_ns);

	return !t || ernic_mono_ns() - t >= 1000000u;
}

/* sq_cqe for all but a plain success: a CQE out of place or in error, a
 * READ (its data invalidated, or scattered from staging), a bounce
 * buffer to free. sq_ci has moved past slot. */
static int __attribute__((noinline))
sq_cqe_slow(struct ernic_dev *dev, struct ernic_qp *qp, struct ibv_wc *wc,
	    uint32_t slot, uint32_t cqe)
{
	const struct ernic_swqe *sw = &qp->swqe[slot];
	const uint32_t wrid = ERNIC_FIELD_GET(ERNIC_CQE_WRID, cqe);
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	uint32_t syn;

	/* A READ's data is in DDR once its CQE is (non-coherent DMA). */
	if (sw->read_len)
		ernic_dma_sync(dev->acc, (const void *)(uintptr_t)sw->read_va,
			       sw->read_len, ERNIC_DMA_FROM_DEVICE);
	if (wrid != slot)
		ernic_log("QP %u: CQE %u has WRID %u", qp->idx, slot, wrid);
	if (ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe)) {
		/* Error completions are reported signaled or not. */
		syn = ERNIC_FIELD_GET(ERNIC_STATQP_NAK_SYNDROME,
				      ernic_rd(dev->acc,
					       ERNIC_QP(qp->idx, ERNIC_STATQP)));
		ernic_qp_set_err(qp);
		qp->sq_flushing = true;
		/* The rest of this request is not reported again. */
		qp->sq_skip = !(sw->flags & ERNIC_SWQE_LAST);
		ernic_wc_fill(wc, qp, sw->wr_id, syndrome_status(syn),
			      wqe_wc_op[sw->opcode], 0);
		wc->vendor_err = syn;
		if (qp->bounce && qp->bounce[slot])
			ernic_bounce_put(dev, qp, slot, qp->sq_ci);
		return 1;
	}
	/* A staged READ's data goes to its SGEs, signaled or not; then the
	 * IP is done with a gathered message's bounce buffer. */
	if (sw->nsg)
		st = ernic_read_scatter(dev, qp, slot);
	if (qp->bounce && qp->bounce[slot])
		ernic_bounce_put(dev, qp, slot, qp->sq_ci);
	if ((sw->flags & (ERNIC_SWQE_LAST | ERNIC_SWQE_SIGNALED)) !=
		    (ERNIC_SWQE_LAST | ERNIC_SWQE_SIGNALED) &&
	    st == IBV_WC_SUCCESS)
		return 0;
	ernic_wc_fill(wc, qp, sw->wr_id, st, wqe_wc_op[sw->opcode],
		      st == IBV_WC_SUCCESS ? sw->length : 0);
	return 1;
}

/* The CQE at sq_ci. Returns 1 when it makes a work completion. The
 * work completion's opcode is the one posted (swqe): a CQE of another
 * WQE is caught by its WRID. */
static inline __attribute__((always_inline)) int
sq_cqe(struct ernic_dev *dev, struct ernic_qp *qp, struct ibv_wc *wc)
{
	const uint32_t slot = qp->sq_ci;
	const struct ernic_swqe *sw = &qp->swqe[slot];
	const uint32_t report = ERNIC_SWQE_LAST | ERNIC_SWQE_SIGNALED;
	uint32_t cqe, flags;

	if (qp->noncoherent)
		ernic_dma_sync(dev->acc, (const uint32_t *)qp->cq.va + slot,
			       ERNIC_CQE_SIZE, ERNIC_DMA_FROM_DEVICE);
	cqe = le32toh(((const uint32_t *)qp->cq.va)[slot]);
	flags = sw->flags & (report | ERNIC_SWQE_SLOW);
	qp->sq_ci = ernic_ring_next(slot, qp->sq_depth);
	if (ERNIC_FIELD_GET(ERNIC_CQE_WRID, cqe) != slot ||
	    ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe) ||
	    (flags & ERNIC_SWQE_SLOW))
		return sq_cqe_slow(dev, qp, wc, slot, cqe);
	if (flags != report)
		return 0;
	ernic_wc_fill(wc, qp, sw->wr_id, IBV_WC_SUCCESS,
		      wqe_wc_op[sw->opcode], sw->length);
	return 1;
}

/* Retire sq_ci in software: one flush completion per work request. */
static int sq_flush_one(struct ernic_dev *dev, struct ernic_qp *qp,
			struct ibv_wc *wc)
{
	const struct ernic_swqe *sw = &qp->swqe[qp->sq_ci];
	const uint32_t next = ernic_ring_next(qp->sq_ci, qp->sq_depth);

	if (qp->bounce && qp->bounce[qp->sq_ci])
		ernic_bounce_put(dev, qp, qp->sq_ci, next);
	qp->sq_ci = next;
	if (!(sw->flags & ERNIC_SWQE_LAST))
		return 0;
	if (qp->sq_skip) {
		qp->sq_skip = false;
		return 0;
	}
	ernic_wc_fill(wc, qp, sw->wr_id, IBV_WC_WR_FLUSH_ERR,
		      wqe_wc_op[sw->opcode], 0);
	return 1;
}

/* CQ write index wi is one the IP may write: within the ring, and not
 * past the WQEs it was rung for (sq_ci..sq_db, cyclically). For ring
 * indices below the depth, the differences modulo 2^32 order them as
 * their distances from sq_ci do. */
static inline bool sq_wi_ok(const struct ernic_qp *qp, uint32_t wi)
{
	return wi < qp->sq_depth && wi - qp->sq_ci <= qp->sq_db - qp->sq_ci;
}

/* Queued WQEs held back for max_rd_atomic: completed READs free room.
 * Caller holds sq_lock. */
static inline __attribute__((always_inline)) void
sq_ring_held(struct ernic_dev *dev, struct ernic_qp *qp)
{
	if (qp->sq_db != qp->sq_pi && !qp->sq_flushing &&
	    !atomic_load(&qp->err))
		ernic_sq_doorbell(dev, qp);
}

/* sq_poll past its common case, with n completions in wc already: an
 * index out of place, nothing new (the fatal watch), a QP in error
 * (what the IP completed before it stopped is reported, the rest
 * flushed). */
static int __attribute__((noinline))
sq_poll_rest(struct ernic_dev *dev, struct ernic_qp *qp, struct ibv_wc *wc,
	     int max, int n)
{
	volatile uint32_t *db = ernic_cq_db_va(dev, qp->idx);
	uint64_t quiet = ERNIC_QUIET_NONE;

	while (!qp->sq_flushing && n < max) {
		/* Acquire: the CQEs before the index are in memory. */
		uint32_t wi = ernic_qp_db_load(dev, qp, db);

		/* The IP completes only WQEs it was rung for: an index past
		 * them (or the ring) is a broken device, not completions. */
		if (!sq_wi_ok(qp, wi)) {
			ernic_log("QP %u: CQ write index %u outside %u..%u",
				  qp->idx, wi, qp->sq_ci, qp->sq_db);
			break;
		}
		if (qp->sq_ci != wi) {
			do
				n += sq_cqe(dev, qp, &wc[n]);
			while (qp->sq_ci != wi && n < max && !qp->sq_flushing);
			/* Progress: done for this poll, unless the QP is in
			 * error and the rest is to be flushed. */
			if (qp->sq_flushing || n == max ||
			    !atomic_load(&qp->err))
				break;
		} else if (!atomic_load(&qp->err)) {
			/* Idle with work posted: did the QP die silently? */
			if (qp->sq_ci == qp->sq_pi ||
			    !ernic_qp_check_fatal(dev, qp, &qp->sq_watch)) {
				quiet = wi;
				break;
			}
			continue;
		}
		/* In error: what the IP completed before it stopped is
		 * reported; the rest is flushed. */
		if (ernic_qp_db_load(dev, qp, db) != qp->sq_ci)
			continue;
		if (!fatal_settled(qp))
			break;
		qp->sq_flushing = true;
	}
	ernic_quiet_set(qp, ERNIC_CQ_SEND, quiet);
	while (qp->sq_flushing && n < max && qp->sq_ci != qp->sq_pi)
		n += sq_flush_one(dev, qp, &wc[n]);
	sq_ring_held(dev, qp);
	return n;
}

/* The send side of qp_poll, its only caller, for a QP with WQEs
 * outstanding: inlined for its common case, new completions of a QP
 * not in error; sq_poll_rest for the others. Caller holds sq_lock. */
static inline __attribute__((always_inline)) int
sq_poll(struct ernic_dev *dev, struct ernic_qp *qp, struct ibv_wc *wc,
	int max)
{
	uint32_t wi;
	int n = 0;

	if (qp->sq_flushing)
		return sq_poll_rest(dev, qp, wc, max, 0);
	/* Acquire: the CQEs before the index are in memory. */
	wi = ernic_qp_db_load(dev, qp, ernic_cq_db_va(dev, qp->idx));
	if (wi == qp->sq_ci || !sq_wi_ok(qp, wi))
		return sq_poll_rest(dev, qp, wc, max, 0);
	do
		n += sq_cqe(dev, qp, &wc[n]);
	while (qp->sq_ci != wi && n < max && !qp->sq_flushing);
	/* (sq_flushing is set only with err) */
	if (atomic_load(&qp->err))
		return sq_poll_rest(dev, qp, wc, max, n);
	ernic_quiet_set(qp, ERNIC_CQ_SEND, ERNIC_QUIET_NONE);
	sq_ring_held(dev, qp);
	return n;
}

/*
 * A spinning poll's shortcut: the queue's doorbell words are where the
 * last look under its lock found nothing to report (cq->quiet: a
 * completion moves the words; whatever else moves the consumer indices,
 * or puts the QP in error, resets the snapshot). One poll in
 * ERNIC_QUIET_POLLS looks anyway, for the fatal watch.
 */
static inline bool quiet_still(const struct ernic_cq *cq, uint32_t role,
			       uint32_t b, uint64_t word)
{
	return word == atomic_load_explicit(&cq->quiet[role - 1][b],
					    memory_order_relaxed);
}

/* QP 2 + b's part of a poll, in the roles whose active bits are set:
 * send, recv (an active bit is set only in the CQ of its role:
 * ernic_cq_busy); a queue found idle leaves the CQ's active set. look:
 * no shortcut (quiet_still). Caller holds cq->lock. */
static inline __attribute__((always_inline)) int
qp_poll(struct ernic_dev *dev, struct ernic_cq *cq, uint32_t b, bool send,
	bool recv, bool look, struct ibv_wc *wc, int max)
{
	const uint32_t qpn = b + ERNIC_FIRST_RC_QP;
	struct ernic_qp *qp = cq->qps[qpn];
	int n = 0;

	if (!qp)
		return 0;
	if (send &&
	    (look ||
	     !quiet_still(cq, ERNIC_CQ_SEND, b,
			  ernic_qp_db_load(dev, qp, ernic_cq_db_va(dev, qpn))))) {
		ernic_spin_lock(&qp->sq_lock);
		if (qp->sq_ci != qp->sq_pi)
			n += sq_poll(dev, qp, wc, max);
		/* Nothing posted and unretired: nothing to report until the
		 * next post (which sets the bit again, under this lock). */
		if (qp->sq_ci == qp->sq_pi)
			atomic_fetch_and_explicit(qp->busy_word[0],
						  ~qp->busy_bit,
						  memory_order_relaxed);
		ernic_spin_unlock(&qp->sq_lock);
	}
	if (recv && n < max &&
	    (look ||
	     !quiet_still(cq, ERNIC_CQ_RECV, b,
			  ernic_rq_wptrs_sync(dev, qpn, qp->noncoherent)))) {
		ernic_spin_lock(&qp->rq_lock);
		n += ernic_rq_poll(dev, qp, &wc[n], max - n);
		if (qp->rwqe_ci == qp->rwqe_pi)
			atomic_fetch_and_explicit(qp->busy_word[1],
						  ~qp->busy_bit,
						  memory_order_relaxed);
		ernic_spin_unlock(&qp->rq_lock);
	}
	return n;
}

/* qp_poll for a CQ with several busy QPs, one copy out of line: bit
 * b % 64 of s (send) and r (receive) says which roles are busy. */
static int __attribute__((noinline))
qp_poll_many(struct ernic_dev *dev, struct ernic_cq *cq, uint32_t b,
	     uint64_t s, uint64_t r, bool look, struct ibv_wc *wc, int max)
{
	return qp_poll(dev, cq, b, (s >> (b % 64)) & 1, (r >> (b % 64)) & 1,
		       look, wc, max);
}

/* QPs 2..65 (one word): the busy ones in turn from the cursor's bit,
 * by rotating the word so that the cursor's bit comes first. */
static inline __attribute__((always_inline)) int
cq_poll_word(struct ernic_dev *dev, struct ernic_cq *cq, int ne, bool look,
	     struct ibv_wc *wc)
{
	const uint64_t s = atomic_load_explicit(&cq->active[0][0],
						memory_order_relaxed);
	const uint64_t r = atomic_load_explicit(&cq->active[1][0],
						memory_order_relaxed);
	const uint32_t b0 = cq->cursor % 64;
	uint64_t any = s | r;
	int n = 0;

	if (!any)
		return 0;
	if (!(any & (any - 1))) {
		/* one busy QP (the common case): no rotation */
		const uint32_t b = (uint32_t)__builtin_ctzll(any);

		cq->cursor = b + 1;
		return qp_poll(dev, cq, b, s, r, look, wc, ne);
	}
	any = b0 ? any >> b0 | any << (64 - b0) : any;
	cq->cursor = ((uint32_t)__builtin_ctzll(any) + b0 + 1) % 64;
	do {
		const uint32_t b = ((uint32_t)__builtin_ctzll(any) + b0) % 64;

		any &= any - 1;
		n += qp_poll_many(dev, cq, b, s, r, look, &wc[n], ne - n);
	} while (any && n < ne);
	return n;
}

/* QPs beyond 65: the busy ones in turn from the cursor's bit, the
 * cursor's word last for its bits below the cursor. */
static int __attribute__((noinline))
cq_poll_words(struct ernic_dev *dev, struct ernic_cq *cq, int ne,
	      bool look, struct ibv_wc *wc)
{
	const uint32_t nw = cq->nwords;
	const uint32_t w0 = cq->cursor / 64, b0 = cq->cursor % 64;
	uint64_t s[ERNIC_CQ_WORDS], r[ERNIC_CQ_WORDS], all = 0;
	uint32_t first = UINT32_MAX;
	int n = 0;

	for (uint32_t w = 0; w < nw; w++) {
		s[w] = atomic_load_explicit(&cq->active[0][w],
					    memory_order_relaxed);
		r[w] = atomic_load_explicit(&cq->active[1][w],
					    memory_order_relaxed);
		all |= s[w] | r[w];
	}
	if (!all)
		return 0;
	for (uint32_t k = 0, w = w0; k <= nw && n < ne;
	     k++, w = w + 1 == nw ? 0 : w + 1) {
		uint64_t any = s[w] | r[w];

		if (k == 0)
			any &= ~UINT64_C(0) << b0;
		else if (k == nw)
			any &= (UINT64_C(1) << b0) - 1;
		while (any && n < ne) {
			const uint32_t b = (uint32_t)__builtin_ctzll(any);

			any &= any - 1;
			if (first == UINT32_MAX)
				first = w * 64 + b;
			n += qp_poll_many(dev, cq, w * 64 + b, s[w], r[w],
					  look, &wc[n], ne - n);
		}
	}
	if (first != UINT32_MAX)
		cq->cursor = first + 1 < nw * 64 ? first + 1 : 0;
	return n;
}

/* A look under the lock is due: the first empty poll after one that
 * found something, and one in ERNIC_QUIET_POLLS (the fatal watch). */
static inline bool look_due(uint32_t quiet_polls)
{
	return quiet_polls % ERNIC_QUIET_POLLS == 0;
}

static inline __attribute__((always_inline)) int
cq_poll(struct ernic_cq *cq, int ne, struct ibv_wc *wc)
{
	struct ernic_dev *dev = cq->dev;
	const uint32_t nw = atomic_load_explicit(&cq->nwords,
						 memory_order_relaxed);
	/* Only QPs with something outstanding are looked at: nothing at all
	 * is an empty poll whatever the number of QPs. The next poll starts
	 * after the first QP this one looked at, so that none starves the
	 * others. The shortcut is for a spin: not on the first empty poll,
	 * nor on every one. */
	const uint32_t quiet = atomic_load_explicit(&cq->quiet_polls,
						    memory_order_relaxed);
	const bool look = look_due(quiet);
	int n;

	if (nw == 1)
		n = cq_poll_word(dev, cq, ne, look, wc);
	else
		n = nw ? cq_poll_words(dev, cq, ne, look, wc) : 0;
	atomic_store_explicit(&cq->quiet_polls, n ? 0 : quiet + 1,
			      memory_order_relaxed);
	return n;
}

int ernic_cq_poll(struct ernic_cq *cq, int ne, struct ibv_wc *wc)
{
	return cq_poll(cq, ne, wc);
}

/* words_quiet for word w of the active sets, read as s (send) and r
 * (receive). */
static inline __attribute__((always_inline)) bool
word_quiet_sr(struct ernic_dev *dev, const struct ernic_cq *cq, uint32_t w,
	      uint64_t s, uint64_t r, bool sync)
{
	for (; s; s &= s - 1) {
		const uint32_t b = w * 64 + (uint32_t)__builtin_ctzll(s);
		volatile uint32_t *db = ernic_cq_db_va(dev,
						       b + ERNIC_FIRST_RC_QP);

		if (!quiet_still(cq, ERNIC_CQ_SEND, b,
				 sync ? ernic_db_load(dev->acc, db) :
					ernic_db_word(db)))
			return false;
	}
	for (; r; r &= r - 1) {
		const uint32_t b = w * 64 + (uint32_t)__builtin_ctzll(r);

		if (!quiet_still(cq, ERNIC_CQ_RECV, b,
				 ernic_rq_wptrs_sync(dev, b + ERNIC_FIRST_RC_QP,
						     sync)))
			return false;
	}
	return true;
}

static inline __attribute__((always_inline)) bool
word_quiet(struct ernic_dev *dev, const struct ernic_cq *cq, uint32_t w,
	   bool sync)
{
	return word_quiet_sr(dev, cq, w,
			     atomic_load_explicit(&cq->active[0][w],
						  memory_order_relaxed),
			     atomic_load_explicit(&cq->active[1][w],
						  memory_order_relaxed),
			     sync);
}

/*
 * A spin's look before the CQ's lock: every busy queue's doorbell words
 * are where the last look under its lock found nothing to report, so
 * nothing is there (true). It reads only the CQ and the doorbell pool,
 * which outlive every QP: a QP destroyed meanwhile has at worst its old
 * words compared, and its bits are gone at the next look. sync:
 * invalidate the words first (a non-coherent bus); else it calls
 * nothing.
 */
static inline __attribute__((always_inline)) bool
words_quiet(struct ernic_dev *dev, const struct ernic_cq *cq, bool sync)
{
	const uint32_t nw = atomic_load_explicit(&cq->nwords,
						 memory_order_relaxed);

	for (uint32_t w = 0; w < nw; w++)
		if (!word_quiet(dev, cq, w, sync))
			return false;
	return true;
}

bool ernic_cq_quiet(struct ernic_cq *cq)
{
	const uint32_t quiet = atomic_load_explicit(&cq->quiet_polls,
						    memory_order_relaxed);
	struct ernic_dev *dev = cq->dev;

	if (look_due(quiet) ||
	    !words_quiet(dev, cq, cq->noncoherent))
		return false;
	atomic_store_explicit(&cq->quiet_polls, quiet + 1,
			      memory_order_relaxed);
	return true;
}

/* poll_cq's look under the CQ's lock; if it found nothing, the thread
 * is lent to an IP that runs on the CPU (ernic_cq_lend) and the poll
 * looks once more if the IP took something (a spin, which finds the
 * queues where this look left them, only lends: poll_lent). A poll that
 * found something tells that IP when polling is over for now
 * (ernic_cq_polled). */
static int __attribute__((noinline))
poll_look(struct ernic_cq *cq, int ne, struct ibv_wc *wc)
{
	int n;

	ernic_spin_lock(&cq->lock);
	n = cq_poll(cq, ne, wc);
	ernic_spin_unlock(&cq->lock);
	if (!n && cq->lends && ernic_cq_lend(cq)) {
		ernic_spin_lock(&cq->lock);
		n = ernic_cq_poll(cq, ne, wc);
		ernic_spin_unlock(&cq->lock);
	}
	if (n)
		ernic_cq_polled(cq);
	return n;
}

/* A spin on queues that have not moved: the thread goes to the IP.
 * What the IP takes, the next poll finds (the queues will have moved),
 * so this one keeps nothing across the call. */
static int __attribute__((noinline)) poll_lent(struct ernic_cq *cq)
{
	ernic_cq_lend(cq);
	return 0;
}

/* A spin's tail calls, once words_quiet (or word_quiet_sr) said whether
 * the busy queues are still where the last look found nothing (still):
 * a look under the lock if not, else the spin is counted and lent to a
 * software IP (hardware has none to lend to). */
static inline __attribute__((always_inline)) int
poll_spin_tail(struct ernic_cq *cq, int ne, struct ibv_wc *wc,
	       uint32_t quiet, bool still)
{
	if (!still)
		return poll_look(cq, ne, wc);
	atomic_store_explicit(&cq->quiet_polls, quiet + 1,
			      memory_order_relaxed);
	if (!cq->lends)
		return 0;
	return poll_lent(cq);
}

/* A spin over every word of the active sets (sync: a non-coherent bus). */
static inline __attribute__((always_inline)) int
poll_spin(struct ernic_dev *dev, struct ernic_cq *cq, int ne,
	  struct ibv_wc *wc, uint32_t quiet, bool sync)
{
	return poll_spin_tail(cq, ne, wc, quiet, words_quiet(dev, cq, sync));
}

/* poll_spin out of line: a non-coherent bus (sync), or QPs beyond 65. */
static int __attribute__((noinline))
poll_spin_out(struct ernic_dev *dev, struct ernic_cq *cq, int ne,
	      struct ibv_wc *wc, uint32_t quiet, bool sync)
{
	return poll_spin(dev, cq, ne, wc, quiet, sync);
}

/* poll_cq on a CQ whose QPs need more than one word (beyond QP 65), or
 * on a non-coherent bus. */
static int __attribute__((noinline))
poll_words(struct ernic_cq *cq, int ne, struct ibv_wc *wc)
{
	uint32_t quiet;

	/* Nothing outstanding: nothing to take, for the IP either. */
	if (ernic_cq_idle(cq))
		return 0;
	quiet = atomic_load_explicit(&cq->quiet_polls, memory_order_relaxed);
	if (look_due(quiet))
		return poll_look(cq, ne, wc);
	return poll_spin_out(cq->dev, cq, ne, wc, quiet, cq->noncoherent);
}

/*
 * A look's common case, a hit: the CQ's only busy queue is the send
 * queue of the QP of s's one bit, on a coherent bus, with plain
 * successes at sq_ci, the first one signaled. Those are reported (up to
 * ne), as sq_poll would. It calls nothing, so that it needs no frame:
 * anything else (a lock taken, a QP in error or flushing, READs held
 * back, an error or out-of-place CQE, an unsignaled or slow WQE first)
 * returns -1 having changed nothing, and poll_look takes it. Caller
 * holds neither lock.
 */
static inline __attribute__((always_inline)) int
poll_hit(struct ernic_dev *dev, struct ernic_cq *cq, uint64_t s, int ne,
	 struct ibv_wc *wc)
{
	const uint32_t report = ERNIC_SWQE_LAST | ERNIC_SWQE_SIGNALED;
	struct ernic_qp *qp;
	const uint32_t *ring;
	uint32_t wi, ci;
	int n = 0;

	if (!ernic_spin_trylock(&cq->lock))
		return -1;
	qp = cq->qps[__builtin_ctzll(s) + ERNIC_FIRST_RC_QP];
	if (!qp || !ernic_spin_trylock(&qp->sq_lock))
		goto out_cq;
	/* Acquire: the CQEs before the index are in memory. */
	wi = ernic_db_word(ernic_cq_db_va(dev, qp->idx));
	ci = qp->sq_ci;
	if (qp->sq_flushing || qp->sq_db != qp->sq_pi || wi == ci ||
	    !sq_wi_ok(qp, wi) || atomic_load(&qp->err))
		goto out_qp;
	ring = qp->cq.va;
	do {
		const struct ernic_swqe *sw = &qp->swqe[ci];
		const uint32_t cqe = le32toh(ring[ci]);

		/* its own WRID, no ERRFLAG, a plain WQE; the first signaled */
		if ((cqe & (ERNIC_CQE_WRID | ERNIC_CQE_ERRFLAG)) != ci ||
		    (sw->flags & ERNIC_SWQE_SLOW) ||
		    (!n && (sw->flags & report) != report))
			break;
		ci = ernic_ring_next(ci, qp->sq_depth);
		if ((sw->flags & report) == report)
			ernic_wc_fill(&wc[n++], qp, sw->wr_id, IBV_WC_SUCCESS,
				      wqe_wc_op[sw->opcode], sw->length);
	} while (ci != wi && n < ne);
	if (!n)
		goto out_qp;
	qp->sq_ci = ci;
	ernic_quiet_set(qp, ERNIC_CQ_SEND, ERNIC_QUIET_NONE);
	/* Nothing posted and unretired: nothing to report until the next
	 * post (which sets the bit again, under sq_lock). */
	if (ci == qp->sq_pi)
		atomic_fetch_and_explicit(qp->busy_word[0], ~qp->busy_bit,
					  memory_order_relaxed);
	cq->cursor = qp->idx - ERNIC_FIRST_RC_QP + 1;
	atomic_store_explicit(&cq->quiet_polls, 0, memory_order_relaxed);
out_qp:
	ernic_spin_unlock(&qp->sq_lock);
out_cq:
	ernic_spin_unlock(&cq->lock);
	return n ? n : -1;
}

/* poll_hit's n completions from a CQ whose empty polls lent their
 * thread: it may stop counting as lent (ernic_cq_polled). */
static int __attribute__((noinline))
poll_hit_lent(struct ernic_cq *cq, int n)
{
	ernic_cq_polled(cq);
	return n;
}

/* A look at a CQ whose only busy queue is one QP's send queue (s): the
 * hit inline, else poll_look. Out of line, so that a spin, which never
 * comes here, saves no registers for it. */
static int __attribute__((noinline))
poll_send_look(struct ernic_cq *cq, uint64_t s, int ne, struct ibv_wc *wc)
{
	const int n = poll_hit(cq->dev, cq, s, ne, wc);

	if (n < 0)
		return poll_look(cq, ne, wc);
	if (atomic_load_explicit(&cq->lent, memory_order_relaxed))
		return poll_hit_lent(cq, n);
	return n;
}

/*
 * Nothing outstanding is an empty poll at once (ernic_cq_idle). Then a
 * spin's shortcut (words_quiet) inlined for QPs 2..65 on a coherent bus
 * unless a look is due; a look tries the common hit first
 * (poll_send_look), else takes the locks as for any case (poll_look).
 * Only tail calls, so that neither a hit nor a spin pays a frame here.
 */
int ernic_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct ernic_cq *cq = to_ecq(ibcq);
	const uint32_t nw = atomic_load_explicit(&cq->nwords,
						 memory_order_relaxed);
	uint64_t s, r;
	uint32_t quiet;

	if (ne <= 0)
		return 0;
	if (nw > 1)
		return poll_words(cq, ne, wc);
	/* word 0 is there (and 0) even before a QP is attached */
	s = atomic_load_explicit(&cq->active[0][0], memory_order_relaxed);
	r = atomic_load_explicit(&cq->active[1][0], memory_order_relaxed);
	if (!(s | r))
		return 0;
	if (cq->noncoherent)
		return poll_words(cq, ne, wc);
	quiet = atomic_load_explicit(&cq->quiet_polls, memory_order_relaxed);
	/* (quiet read again, not kept in a register across the look) */
	if (!look_due(quiet) && word_quiet_sr(cq->dev, cq, 0, s, r, false))
		return poll_spin_tail(cq, ne, wc,
				      atomic_load_explicit(&cq->quiet_polls,
							   memory_order_relaxed),
				      true);
	if (r || (s & (s - 1)))
		return poll_look(cq, ne, wc);
	return poll_send_look(cq, s, ne, wc);
}
