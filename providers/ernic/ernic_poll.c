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
#include "ernic_time.h"

/* Table 2-2 / Table 2-1 OPCODE -> work completion opcode */
static const struct {
	bool ok;
	enum ibv_wc_opcode wc;
} cqe_op[] = {
	[ERNIC_OP_RDMA_WRITE] = { true, IBV_WC_RDMA_WRITE },
	[ERNIC_OP_RDMA_WRITE_IMM] = { true, IBV_WC_RDMA_WRITE },
	[ERNIC_OP_SEND] = { true, IBV_WC_SEND },
	[ERNIC_OP_SEND_IMM] = { true, IBV_WC_SEND },
	[ERNIC_OP_RDMA_READ] = { true, IBV_WC_RDMA_READ },
	[ERNIC_OP_SEND_INV] = { true, IBV_WC_SEND },
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

static enum ibv_wc_opcode wc_opcode(uint32_t op, const struct ernic_swqe *sw)
{
	if (op >= sizeof(cqe_op) / sizeof(cqe_op[0]) || !cqe_op[op].ok)
		op = sw->opcode;
	return cqe_op[op].wc;
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
	atomic_store(&qp->err, true);
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

/* The CQE at sq_ci. Returns 1 when it makes a work completion. */
static int sq_cqe(struct ernic_dev *dev, struct ernic_qp *qp,
		  struct ibv_wc *wc)
{
	const uint32_t slot = qp->sq_ci;
	const struct ernic_swqe *sw = &qp->swqe[slot];
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	uint32_t cqe;
	uint32_t wrid, op, syn;

	ernic_dma_sync(dev->acc, (const uint32_t *)qp->cq.va + slot,
		       ERNIC_CQE_SIZE, ERNIC_DMA_FROM_DEVICE);
	cqe = le32toh(((const uint32_t *)qp->cq.va)[slot]);
	wrid = ERNIC_FIELD_GET(ERNIC_CQE_WRID, cqe);
	op = ERNIC_FIELD_GET(ERNIC_CQE_OPCODE, cqe);
	/* A READ's data is in DDR once its CQE is (non-coherent DMA). */
	if (sw->read_len)
		ernic_dma_sync(dev->acc, (const void *)(uintptr_t)sw->read_va,
			       sw->read_len, ERNIC_DMA_FROM_DEVICE);

	if (wrid != slot)
		ernic_log("QP %u: CQE %u has WRID %u", qp->idx, slot, wrid);
	qp->sq_ci = ernic_ring_next(slot, qp->sq_depth);
	if (ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe)) {
		/* Error completions are reported signaled or not. */
		syn = ERNIC_FIELD_GET(ERNIC_STATQP_NAK_SYNDROME,
				      ernic_rd(dev->acc,
					       ERNIC_QP(qp->idx, ERNIC_STATQP)));
		atomic_store(&qp->err, true);
		qp->sq_flushing = true;
		/* The rest of this request is not reported again. */
		qp->sq_skip = !(sw->flags & ERNIC_SWQE_LAST);
		ernic_wc_fill(wc, qp, sw->wr_id, syndrome_status(syn),
			      wc_opcode(op, sw), 0);
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
	ernic_wc_fill(wc, qp, sw->wr_id, st, wc_opcode(op, sw),
		      st == IBV_WC_SUCCESS ? sw->length : 0);
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
		      cqe_op[sw->opcode].wc, 0);
	return 1;
}

/* The send side of qp_poll, its only caller: inlined, which saves a
 * successful poll a call frame (12 of its instructions). */
static inline __attribute__((always_inline)) int
sq_poll(struct ernic_dev *dev, struct ernic_qp *qp, struct ibv_wc *wc,
	int max)
{
	volatile uint32_t *db = ernic_cq_db_va(dev, qp->idx);
	uint64_t quiet = ERNIC_QUIET_NONE;
	int n = 0;

	while (!qp->sq_flushing && n < max) {
		/* Acquire: the CQEs before the index are in memory. */
		uint32_t wi = ernic_db_load(dev->acc, db);

		/* The IP completes only WQEs it was rung for: an index past
		 * them (or the ring) is a broken device, not completions. */
		if (wi >= qp->sq_depth ||
		    ernic_ring_dist(qp->sq_ci, wi, qp->sq_depth) >
			    ernic_ring_dist(qp->sq_ci, qp->sq_db,
					    qp->sq_depth)) {
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
		if (ernic_db_load(dev->acc, db) != qp->sq_ci)
			continue;
		if (!fatal_settled(qp))
			break;
		qp->sq_flushing = true;
	}
	atomic_store_explicit(&qp->sq_quiet, quiet, memory_order_relaxed);
	while (qp->sq_flushing && n < max && qp->sq_ci != qp->sq_pi)
		n += sq_flush_one(dev, qp, &wc[n]);
	/* WQEs held back for max_rd_atomic: completed READs free room. */
	if (qp->sq_db != qp->sq_pi && !qp->sq_flushing &&
	    !atomic_load(&qp->err))
		ernic_sq_doorbell(dev, qp);
	return n;
}

/*
 * A spinning poll's shortcut: the queue's doorbell words are where the
 * last look under its lock found nothing to report (sq_quiet, rq_quiet:
 * a completion moves them; whatever else moves the consumer indices
 * resets them) and the QP is not in error. One poll in ERNIC_QUIET_POLLS
 * looks anyway, for the fatal watch. Caller holds cq->lock (qp lives).
 */
static bool quiet_still(uint64_t word, const _Atomic uint64_t *quiet,
			const struct ernic_qp *qp)
{
	return word == atomic_load_explicit(quiet, memory_order_relaxed) &&
	       !atomic_load_explicit(&qp->err, memory_order_relaxed);
}

/* QP 2 + b's part of a poll, in the roles whose bits are set in busy;
 * a queue found idle leaves the CQ's active set. look: no shortcut
 * (quiet_still). Caller holds cq->lock. */
static inline __attribute__((always_inline)) int
qp_poll(struct ernic_dev *dev, struct ernic_cq *cq, uint32_t b,
	unsigned int busy, bool look, struct ibv_wc *wc, int max)
{
	const uint32_t qpn = b + ERNIC_FIRST_RC_QP;
	struct ernic_qp *qp = cq->qps[qpn];
	const uint64_t bit = UINT64_C(1) << (b % 64);
	int n = 0;

	if (!qp)
		return 0;
	if ((busy & ERNIC_CQ_SEND) && (cq->roles[qpn] & ERNIC_CQ_SEND) &&
	    (look ||
	     !quiet_still(ernic_db_load(dev->acc,
					ernic_cq_db_va(dev, qp->idx)),
			  &qp->sq_quiet, qp))) {
		pthread_spin_lock(&qp->sq_lock);
		if (qp->sq_ci != qp->sq_pi)
			n += sq_poll(dev, qp, wc, max);
		/* Nothing posted and unretired: nothing to report until the
		 * next post (which sets the bit again, under this lock). */
		if (qp->sq_ci == qp->sq_pi)
			atomic_fetch_and_explicit(&cq->active[0][b / 64],
						  ~bit, memory_order_relaxed);
		pthread_spin_unlock(&qp->sq_lock);
	}
	if ((busy & ERNIC_CQ_RECV) && (cq->roles[qpn] & ERNIC_CQ_RECV) &&
	    n < max &&
	    (look || !quiet_still(ernic_rq_wptrs(dev, qp), &qp->rq_quiet, qp))) {
		pthread_spin_lock(&qp->rq_lock);
		n += ernic_rq_poll(dev, qp, &wc[n], max - n);
		if (qp->rwqe_ci == qp->rwqe_pi)
			atomic_fetch_and_explicit(&cq->active[1][b / 64],
						  ~bit, memory_order_relaxed);
		pthread_spin_unlock(&qp->rq_lock);
	}
	return n;
}

static unsigned int busy_roles(uint64_t s, uint64_t r, uint64_t bit)
{
	return ((s & bit) ? ERNIC_CQ_SEND : 0) | ((r & bit) ? ERNIC_CQ_RECV : 0);
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
	any = b0 ? any >> b0 | any << (64 - b0) : any;
	cq->cursor = ((uint32_t)__builtin_ctzll(any) + b0 + 1) % 64;
	do {
		const uint32_t b = ((uint32_t)__builtin_ctzll(any) + b0) % 64;

		any &= any - 1;
		n += qp_poll(dev, cq, b, busy_roles(s, r, UINT64_C(1) << b),
			     look, &wc[n], ne - n);
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
			n += qp_poll(dev, cq, w * 64 + b,
				     busy_roles(s[w], r[w], UINT64_C(1) << b),
				     look, &wc[n], ne - n);
		}
	}
	if (first != UINT32_MAX)
		cq->cursor = first + 1 < nw * 64 ? first + 1 : 0;
	return n;
}

static inline __attribute__((always_inline)) int
cq_poll(struct ernic_cq *cq, int ne, struct ibv_wc *wc)
{
	struct ernic_dev *dev = ctx_dev(cq->vcq.cq.context);
	/* Only QPs with something outstanding are looked at: nothing at all
	 * is an empty poll whatever the number of QPs. The next poll starts
	 * after the first QP this one looked at, so that none starves the
	 * others. The shortcut is for a spin: not on the first empty poll,
	 * nor on every one. */
	const bool look = cq->quiet_polls == 0 ||
			  cq->quiet_polls % ERNIC_QUIET_POLLS == 0;
	int n;

	if (cq->nwords == 1)
		n = cq_poll_word(dev, cq, ne, look, wc);
	else
		n = cq->nwords ? cq_poll_words(dev, cq, ne, look, wc) : 0;
	cq->quiet_polls = n ? 0 : cq->quiet_polls + 1;
	return n;
}

int ernic_cq_poll(struct ernic_cq *cq, int ne, struct ibv_wc *wc)
{
	return cq_poll(cq, ne, wc);
}

/* poll_cq when something is outstanding: under the CQ's lock, then, if
 * nothing was there, after lending the thread to an IP that runs on the
 * CPU (ernic_cq_lend), telling that IP when polling is over for now
 * (ernic_cq_polled). */
static int __attribute__((noinline))
poll_busy(struct ernic_cq *cq, int ne, struct ibv_wc *wc)
{
	int n;

	pthread_spin_lock(&cq->lock);
	n = cq_poll(cq, ne, wc);
	pthread_spin_unlock(&cq->lock);
	if (!n && ernic_cq_lend(cq)) {
		pthread_spin_lock(&cq->lock);
		n = cq_poll(cq, ne, wc);
		pthread_spin_unlock(&cq->lock);
	}
	if (n)
		ernic_cq_polled(cq);
	return n;
}

int ernic_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct ernic_cq *cq = to_ecq(ibcq);

	/* Nothing outstanding: nothing to take, for the IP either. */
	if (ne <= 0 || ernic_cq_idle(cq))
		return 0;
	return poll_busy(cq, ne, wc);
}
