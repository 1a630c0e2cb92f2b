/* SPDX-License-Identifier: MIT */
/*
 * The provider's CQs: which QPs may have completions for a CQ (its
 * active bits), the doorbell words at which their queues were last
 * found quiet, polling, and the CQ's share in running a software IP in
 * the poller's thread. ernic_cq.c makes CQs and attaches QPs,
 * ernic_poll.c and ernic_cqex.c poll them.
 */
#ifndef ERNIC_CQ_H
#define ERNIC_CQ_H

#include "ernic.h"

/* ernic_cq.c: report completions of qp (roles) through cq / stop. */
void ernic_cq_attach(struct ernic_cq *cq, struct ernic_qp *qp, uint32_t roles);
void ernic_cq_detach(struct ernic_cq *cq, struct ernic_qp *qp);

/* ernic_poll.c: completions */
int ernic_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
/* The same with cq->lock held by the caller. */
int ernic_cq_poll(struct ernic_cq *cq, int ne, struct ibv_wc *wc);
/* A spin on queues that have not moved since a look under cq->lock
 * found nothing: nothing to report. Caller does not hold the lock. */
bool ernic_cq_quiet(struct ernic_cq *cq);
/* While QP work is outstanding and nothing moves: has the IP put the QP
 * into FATAL (STATQPi)? Looks at the clock once in ERNIC_FATAL_POLLS
 * calls, and at the register at most once a millisecond per watch. */
bool ernic_qp_check_fatal(struct ernic_dev *dev, struct ernic_qp *qp,
			  struct ernic_fatal_watch *w);
/* One work completion with every field set. */
static inline void ernic_wc_fill(struct ibv_wc *wc, const struct ernic_qp *qp,
				 uint64_t wr_id, enum ibv_wc_status status,
				 enum ibv_wc_opcode opcode, uint32_t byte_len)
{
	*wc = (struct ibv_wc){
		.wr_id = wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = byte_len,
		.qp_num = qp->idx,
		.src_qp = atomic_load_explicit(&qp->dest_qpn,
					       memory_order_relaxed),
	};
}

/* qp may have completions for its CQ of role ERNIC_CQ_SEND or _RECV.
 * Caller holds the QP's sq_lock or rq_lock: only a poll holding it
 * clears the bit, so a bit seen set stays set (no locked write for a
 * stream of posts). */
static inline void ernic_cq_busy(struct ernic_qp *qp, uint32_t role)
{
	_Atomic uint64_t *w = qp->busy_word[role - 1];

	if (!(atomic_load_explicit(w, memory_order_relaxed) & qp->busy_bit))
		atomic_fetch_or_explicit(w, qp->busy_bit,
					 memory_order_relaxed);
}

/* The quiet word of qp's queue in role ERNIC_CQ_SEND or _RECV, in the CQ
 * it reports to: the CQ write index, or the RQ write pointer | IMMQ
 * write pointer << 32. */
static inline _Atomic uint64_t *ernic_quiet(const struct ernic_qp *qp,
					    uint32_t role)
{
	return qp->quiet_word[role - 1];
}

/* A look at qp's queue in role found nothing to report at doorbell
 * words v (or found something: ERNIC_QUIET_NONE). A QP in error is
 * never quiet: against ernic_qp_set_err, either this sees err or its
 * NONE comes after v (both sequentially consistent). Caller holds the
 * queue's lock. */
static inline void ernic_quiet_set(const struct ernic_qp *qp, uint32_t role,
				   uint64_t v)
{
	_Atomic uint64_t *q = ernic_quiet(qp, role);

	if (v == ERNIC_QUIET_NONE) {
		atomic_store_explicit(q, v, memory_order_relaxed);
		return;
	}
	atomic_store(q, v);
	if (atomic_load(&qp->err))
		atomic_store_explicit(q, ERNIC_QUIET_NONE,
				      memory_order_relaxed);
}

/* qp is in error: everything outstanding is to be reported or flushed,
 * so no poll may pass its queues by (ernic_quiet_set). */
static inline void ernic_qp_set_err(struct ernic_qp *qp)
{
	atomic_store(&qp->err, true);
	atomic_store(ernic_quiet(qp, ERNIC_CQ_SEND), ERNIC_QUIET_NONE);
	atomic_store(ernic_quiet(qp, ERNIC_CQ_RECV), ERNIC_QUIET_NONE);
}

/* No QP has anything outstanding on cq, so no completion can be there
 * and a poll may say so without the CQ's lock: a post racing with it
 * sets its bit before its doorbell, and the poll is ordered before it. */
static inline bool ernic_cq_idle(struct ernic_cq *cq)
{
	const uint32_t nw = atomic_load_explicit(&cq->nwords,
						 memory_order_relaxed);
	/* word 0 is there (and 0) even before a QP is attached */
	uint64_t any = atomic_load_explicit(&cq->active[0][0],
					    memory_order_relaxed) |
		       atomic_load_explicit(&cq->active[1][0],
					    memory_order_relaxed);

	for (uint32_t w = 1; w < nw; w++)
		any |= atomic_load_explicit(&cq->active[0][w],
					    memory_order_relaxed) |
		       atomic_load_explicit(&cq->active[1][w],
					    memory_order_relaxed);
	return !any;
}

/* An empty poll of cq, one that lends (cq->lends), lends its thread to
 * the IP: ernic_progress. The first lend since the CQ last ran out of
 * work counts it in lent_cqs. */
static inline bool ernic_cq_lend(struct ernic_cq *cq)
{
	struct ernic_dev *dev = cq->dev;

	if (!atomic_load_explicit(&cq->lent, memory_order_relaxed) &&
	    !atomic_exchange_explicit(&cq->lent, true, memory_order_relaxed))
		atomic_fetch_add_explicit(&dev->lent_cqs, 1,
					  memory_order_relaxed);
	return ernic_progress(dev->acc);
}

/* cq stops counting in lent_cqs; the last one out tells the IP that
 * polling is over for now (ernic_progress_stop): it watches for packets
 * itself again at once rather than after a while. Polls of other CQs
 * that still wait for work (a receive CQ beside a send CQ) keep the
 * port: waking the IP's thread for each packet would only preempt them. */
static inline void ernic_cq_unlend(struct ernic_cq *cq)
{
	struct ernic_dev *dev = cq->dev;

	if (atomic_exchange_explicit(&cq->lent, false, memory_order_relaxed) &&
	    atomic_fetch_sub_explicit(&dev->lent_cqs, 1,
				      memory_order_relaxed) == 1)
		ernic_progress_stop(dev->acc, false);
}

/* A poll of cq took completions: if its empty polls lent their thread
 * and nothing is outstanding any more, it stops counting as lent. */
static inline void ernic_cq_polled(struct ernic_cq *cq)
{
	if (atomic_load_explicit(&cq->lent, memory_order_relaxed) &&
	    ernic_cq_idle(cq))
		ernic_cq_unlend(cq);
}

#endif
