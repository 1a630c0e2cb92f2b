// SPDX-License-Identifier: MIT
/*
 * RC queue pairs: creation (queue memory for PG332 "RC QP Creation"),
 * PG332 "QP Deletion", and query. The QPN is the ERNIC QP index (>= 2;
 * QP1 belongs to connection management).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ernic.h"
#include "ernic_cq.h"
#include "ernic_recover.h"
#include "ernic_time.h"

#define ERNIC_DRAIN_TIMEOUT_MS 200
#define ERNIC_ENABLE_TIMEOUT_MS 100
/* Each of fatal recovery's waits, and how often it looks. */
#define ERNIC_RECOVER_TIMEOUT_MS 500
#define ERNIC_RECOVER_STEP_US 50

static int check_cap(struct ibv_qp_cap *cap)
{
	if (cap->max_send_wr > ERNIC_MAX_QP_WR ||
	    cap->max_recv_wr > ERNIC_MAX_QP_WR)
		return ernic_refuse(EINVAL, "create_qp: max_send_wr %u, "
				    "max_recv_wr %u: at most %u", cap->max_send_wr,
				    cap->max_recv_wr, ERNIC_MAX_QP_WR);
	if (cap->max_send_sge > ERNIC_MAX_SGE ||
	    cap->max_recv_sge > ERNIC_MAX_SGE)
		return ernic_refuse(EINVAL, "create_qp: max_send_sge %u, "
				    "max_recv_sge %u: at most %u",
				    cap->max_send_sge, cap->max_recv_sge,
				    ERNIC_MAX_SGE);
	if (cap->max_inline_data > ERNIC_MAX_INLINE)
		return ernic_refuse(EINVAL, "create_qp: max_inline_data %u: "
				    "at most %u", cap->max_inline_data,
				    ERNIC_MAX_INLINE);
	return 0;
}

static int check_init_attr(struct ibv_context *context,
			   struct ibv_qp_init_attr_ex *attr)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD |
			       IBV_QP_INIT_ATTR_CREATE_FLAGS |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;

	if (attr->comp_mask & ~known)
		return ernic_refuse(EOPNOTSUPP, "create_qp: comp_mask 0x%x",
				    attr->comp_mask & ~known);
	/* No creation flag means anything to the IP; none at all is what
	 * the kernel accepts from any device. */
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags)
		return ernic_refuse(EOPNOTSUPP, "create_qp: create_flags 0x%x",
				    attr->create_flags);
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~(uint64_t)ERNIC_QP_EX_SEND_OPS))
		return ernic_refuse(EOPNOTSUPP, "create_qp: send_ops_flags "
				    "0x%llx", (unsigned long long)
				    (attr->send_ops_flags &
				     ~(uint64_t)ERNIC_QP_EX_SEND_OPS));
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != context)
		return ernic_refuse(EINVAL, "create_qp: no PD of this context");
	if (attr->qp_type != IBV_QPT_RC)
		return ernic_refuse(EOPNOTSUPP, "create_qp: QP type %d (RC "
				    "only)", (int)attr->qp_type);
	if (attr->srq)
		return ernic_refuse(EOPNOTSUPP, "create_qp: no SRQs");
	if (!attr->send_cq || !attr->recv_cq ||
	    attr->send_cq->context != context ||
	    attr->recv_cq->context != context)
		return ernic_refuse(EINVAL, "create_qp: send_cq/recv_cq "
				    "missing or of another context");
	return check_cap(&attr->cap);
}

/* A QP number no process of the device has (ernic_share.c). */
static int idx_get(struct ernic_dev *dev, uint32_t *idx)
{
	int ret = ernic_share_qp_get(dev, idx);

	if (!ret)
		dev->qp_used[*idx] = 1;
	return ret;
}

static void idx_put(struct ernic_dev *dev, uint32_t idx)
{
	dev->qp_used[idx] = 0;
	ernic_share_qp_put(dev, idx);
}

static int alloc_rings(struct ernic_dev *dev, struct ernic_qp *qp)
{
	struct ernic_access *acc = dev->acc;
	int ret;

	ret = acc->ops->dma_alloc(acc, (size_t)qp->sq_depth * ERNIC_WQE_SIZE,
				  ERNIC_SQ_ALIGN, &qp->sq);
	if (!ret)
		ret = acc->ops->dma_alloc(acc,
					  (size_t)qp->sq_depth * ERNIC_CQE_SIZE,
					  ERNIC_CQ_ALIGN, &qp->cq);
	/* Elements, then the RX side band (RXLEN, IMMQ): ernic_hw.h. */
	if (!ret)
		ret = acc->ops->dma_alloc(acc,
					  ernic_rq_block_size(qp->rq_depth,
							      ERNIC_RQ_ELEM_SIZE),
					  ERNIC_RQ_ALIGN, &qp->rq);
	/* Staging: inline payloads and gathered SGEs the IP reads from
	 * LADDR, READ data to scatter (ernic_sge.c). */
	if (!ret)
		ret = acc->ops->dma_alloc(acc,
					  (size_t)qp->sq_depth * qp->stage_size,
					  ERNIC_SQ_ALIGN, &qp->inl);
	return ret;
}

static void put_rings(struct ernic_dev *dev, struct ernic_qp *qp)
{
	ernic_dma_put(dev, &qp->inl);
	ernic_dma_put(dev, &qp->rq);
	ernic_dma_put(dev, &qp->cq);
	ernic_dma_put(dev, &qp->sq);
}

static void free_qp(struct ernic_qp *qp)
{
	free(qp->swqe);
	free(qp->rwqe);
	free(qp->rd_sg);
	free(qp->bounce);
	free(qp->rsg);
	free(qp);
}

static struct ernic_qp *alloc_qp(const struct ibv_qp_cap *cap)
{
	struct ernic_qp *qp = calloc(1, sizeof(*qp));
	uint32_t rq_ring;

	if (!qp)
		return NULL;
	/* Rings hold depth - 1 entries: producer == consumer means empty. */
	qp->sq_depth = cap->max_send_wr + 1;
	qp->rwqe_depth = cap->max_recv_wr + 1;
	/* A multi-packet SEND takes one element per packet, consumed as the
	 * packets arrive: the RQ ring need not follow max_recv_wr. */
	rq_ring = cap->max_recv_wr + 1;
	if (rq_ring < ERNIC_RQ_RING_MIN)
		rq_ring = ERNIC_RQ_RING_MIN;
	if (rq_ring > ERNIC_RQ_RING_MAX)
		rq_ring = ERNIC_RQ_RING_MAX;
	qp->rq_depth = rq_ring;
	ernic_spin_init(&qp->sq_lock);
	ernic_spin_init(&qp->rq_lock);
	atomic_init(&qp->pmtu_log2, ERNIC_PMTU_LOG2_MIN);
	qp->swqe = calloc(qp->sq_depth, sizeof(*qp->swqe));
	qp->rwqe = calloc(qp->rwqe_depth, sizeof(*qp->rwqe));
	/*
	 * A QP that asked for one SGE and at most 16 B inline keeps today's
	 * 16 B bounce per slot; asking for more gets the staging area and
	 * the largest caps (DMA memory is scarce on boards: only then).
	 */
	if (cap->max_send_sge > 1 || cap->max_inline_data > ERNIC_MIN_INLINE) {
		qp->cap.max_send_sge = ERNIC_MAX_SGE;
		qp->cap.max_inline_data = ERNIC_MAX_INLINE;
		qp->stage_size = ERNIC_STAGE_SIZE;
		qp->rd_sg = calloc((size_t)qp->sq_depth * ERNIC_MAX_SGE,
				   sizeof(*qp->rd_sg));
		qp->bounce = calloc(qp->sq_depth, sizeof(*qp->bounce));
	} else {
		qp->cap.max_send_sge = 1;
		qp->cap.max_inline_data = ERNIC_MIN_INLINE;
		qp->stage_size = ERNIC_MIN_INLINE;
	}
	qp->cap.max_recv_sge = cap->max_recv_sge > 1 ? ERNIC_MAX_SGE : 1;
	if (qp->cap.max_recv_sge > 1)
		qp->rsg = calloc((size_t)qp->rwqe_depth * ERNIC_MAX_SGE,
				 sizeof(*qp->rsg));
	if (!qp->swqe || !qp->rwqe ||
	    (qp->stage_size > ERNIC_MIN_INLINE &&
	     (!qp->rd_sg || !qp->bounce)) ||
	    (qp->cap.max_recv_sge > 1 && !qp->rsg)) {
		free_qp(qp);
		return NULL;
	}
	atomic_init(&qp->dp_state, IBV_QPS_RESET);
	atomic_init(&qp->rq_open, false);
	atomic_init(&qp->err, false);
	atomic_init(&qp->fatal_ns, 0);
	atomic_init(&qp->dest_qpn, 0);
	return qp;
}

struct ibv_qp *ernic_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr)
{
	struct ernic_dev *dev = ctx_dev(context);
	struct ernic_qp *qp;
	int ret;

	ret = ernic_lost_refuse(dev, "create_qp");
	if (!ret)
		ret = check_init_attr(context, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	qp = alloc_qp(&attr->cap);
	if (!qp) {
		errno = ernic_refuse(ENOMEM, "create_qp: no memory");
		return NULL;
	}
	qp->cap.max_send_wr = attr->cap.max_send_wr;
	qp->cap.max_recv_wr = attr->cap.max_recv_wr;
	qp->sq_sig_all = attr->sq_sig_all;
	qp->noncoherent = dev->acc->ops->dma_sync != NULL;
	qp->dev = dev;

	pthread_mutex_lock(&dev->lock);
	ret = idx_get(dev, &qp->idx);
	if (!ret) {
		ret = alloc_rings(dev, qp);
		if (ret) {
			idx_put(dev, qp->idx);
		} else {
			qp->rq_credit_db = &ernic_rq_db_va(dev, qp->idx)
				[ERNIC_RQDB_RECV_CREDIT / 4];
			ernic_rqci_bind(dev->acc, qp);
			to_epd(attr->pd)->refcnt++;
			to_ecq(attr->send_cq)->nqp++;
			to_ecq(attr->recv_cq)->nqp++;
			ernic_cq_attach(to_ecq(attr->send_cq), qp,
					ERNIC_CQ_SEND);
			ernic_cq_attach(to_ecq(attr->recv_cq), qp,
					ERNIC_CQ_RECV);
		}
	}
	if (ret)
		put_rings(dev, qp);
	pthread_mutex_unlock(&dev->lock);
	if (ret) {
		if (qp->idx)
			ernic_refuse(ret, "create_qp: no DMA memory for its "
				     "rings (SQ depth %u, staging %u B per "
				     "slot)", qp->sq_depth, qp->stage_size);
		else
			ernic_refuse(ret, "create_qp: no QP left");
		free_qp(qp);
		errno = ret;
		return NULL;
	}

	/* Reported capacities are what the rings really hold. */
	attr->cap = qp->cap;

	struct ibv_qp *ibqp = &qp->vqp.qp;

	ibqp->context = context;
	ibqp->qp_context = attr->qp_context;
	ibqp->pd = attr->pd;
	ibqp->send_cq = attr->send_cq;
	ibqp->recv_cq = attr->recv_cq;
	ibqp->srq = NULL;
	ibqp->handle = qp->idx;
	ibqp->qp_num = qp->idx;
	ibqp->state = IBV_QPS_RESET;
	ibqp->qp_type = IBV_QPT_RC;
	ibqp->events_completed = 0;
	pthread_mutex_init(&ibqp->mutex, NULL);
	pthread_cond_init(&ibqp->cond, NULL);
	qp->attr.qp_state = IBV_QPS_RESET;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		ernic_qp_ex_init(qp, attr->send_ops_flags);
	ernic_events_qp(dev, qp->idx, qp);
	return ibqp;
}

struct ibv_qp *ernic_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex;
	struct ibv_qp *qp;

	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = ernic_create_qp_ex(pd->context, &ex);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

/* Let us microseconds pass (also struct ernic_hw_wait's wait). */
static void hw_sleep(void *arg, uint32_t us)
{
	const struct timespec ts = { .tv_sec = us / 1000000,
				     .tv_nsec = (long)(us % 1000000) * 1000 };

	(void)arg;
	nanosleep(&ts, NULL);
}

/*
 * QP Deletion steps 1-2: wait, bounded, for the SQ and the outstanding
 * queue to drain and every WQE to complete. A QP that cannot drain (peer
 * gone) is reset anyway; a FATAL or disabled one (error state) will
 * not drain at all: no wait.
 */
static void wait_drained(struct ernic_access *acc, uint32_t i)
{
	const uint32_t empty = ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY;

	for (int t = 0; t < ERNIC_DRAIN_TIMEOUT_MS; t++) {
		uint32_t st = ernic_rd(acc, ERNIC_QP(i, ERNIC_STATQP));
		uint32_t pi = ernic_rd(acc, ERNIC_QP(i, ERNIC_SQPI));
		uint32_t ch = ernic_rd(acc, ERNIC_QP(i, ERNIC_CQHEAD));

		if (((st & empty) == empty && pi == ch) ||
		    (st & ERNIC_STATQP_FATAL) ||
		    !(ernic_rd(acc, ERNIC_QP(i, ERNIC_QPCONF)) &
		      ERNIC_QPCONF_QP_EN))
			return;
		hw_sleep(NULL, 1000);
	}
}

/* Zero QP i's doorbell slot (the IP's CQ and RQ doorbells and the RQ
 * block's software word), in DDR too: the IP reads IMMQ_CI from there. */
void ernic_qp_db_clear(struct ernic_dev *dev, uint32_t i)
{
	volatile uint32_t *slot = ernic_cq_db_va(dev, i);

	for (size_t k = 0; k < ERNIC_DB_STRIDE / 4; k++)
		slot[k] = 0;
	ernic_dma_sync(dev->acc, (const void *)slot, ERNIC_DB_STRIDE,
		       ERNIC_DMA_TO_DEVICE);
}

/* QP Deletion steps 3-5. XRNICADCONF's override is the IP's, not the
 * QP's: processes sharing the IP take turns (the state file's lock). */
void ernic_qp_hw_clear(struct ernic_dev *dev, uint32_t i)
{
	struct ernic_access *acc = dev->acc;
	uint32_t adconf, qpconf;

	/* Step 3: software override for this QP, then disable it. */
	adconf = ernic_sw_override_on(acc, i);
	qpconf = ernic_rd(acc, ERNIC_QP(i, ERNIC_QPCONF));
	ernic_wr(acc, ERNIC_QP(i, ERNIC_QPCONF), qpconf & ~ERNIC_QPCONF_QP_EN);

	/* Step 4: zero the QP pointers (the last six do not exist for QP1),
	 * then leave the QP disabled and in recovery mode. */
	ernic_wr64(acc, ERNIC_QP(i, ERNIC_RQWPTRDBADD),
		   ERNIC_QP(i, ERNIC_RQWPTRDBADDMSB), 0);
	ernic_wr(acc, ERNIC_QP(i, ERNIC_SQPI), 0);
	ernic_wr(acc, ERNIC_QP(i, ERNIC_CQHEAD), 0);
	ernic_wr(acc, ERNIC_QP(i, ERNIC_RQCI), 0);
	if (i >= ERNIC_FIRST_RC_QP) {
		ernic_wr(acc, ERNIC_QP(i, ERNIC_STATRQPIDB), 0);
		ernic_wr(acc, ERNIC_QP(i, ERNIC_STATCURSQPTR), 0);
		ernic_wr(acc, ERNIC_QP(i, ERNIC_SQPSN), 0);
		ernic_wr(acc, ERNIC_QP(i, ERNIC_LSTRQREQ), 0);
		ernic_wr(acc, ERNIC_QP(i, ERNIC_STATMSN), 0);
	}
	/* QP Fatal Recovery step 9: the NAK syndrome and the retry and RNR
	 * counts start afresh (what poll_cq reads after an error CQE). */
	ernic_wr(acc, ERNIC_QP(i, ERNIC_STATQP), 0);
	ernic_wr(acc, ERNIC_QP(i, ERNIC_QPCONF), ERNIC_QPCONF_QP_UNDER_RECOVERY);
	/* The doorbell values the IP wrote live in our pool: clear them too,
	 * with the RX side-band words next to the RQ write pointer. */
	ernic_qp_db_clear(dev, i);

	/* Step 5: override off, and in effect before the next process
	 * takes its turn. */
	ernic_wr(acc, ERNIC_XRNICADCONF, adconf);
	if (dev->hw_role != ERNIC_HW_ALONE)
		ernic_access_flush(acc);
}

/* ernic_qp_hw_clear, in this process's turn when the IP is shared. */
static void clear_turn(struct ernic_dev *dev, uint32_t i)
{
	bool shared = dev->hw_role != ERNIC_HW_ALONE;

	if (shared && ernic_share_lock(dev)) {
		ernic_log("QP %u: the state file's lock failed: the QP stays "
			  "enabled", i);
		return;
	}
	ernic_qp_hw_clear(dev, i);
	if (shared)
		ernic_share_unlock(dev);
}

static const struct ernic_hw_wait hw_wait = {
	.wait = hw_sleep,
	.step_us = ERNIC_RECOVER_STEP_US,
	.limit_us = ERNIC_RECOVER_TIMEOUT_MS * 1000,
};

int ernic_qp_fatal_clear(struct ernic_dev *dev, uint32_t i)
{
	struct ernic_access *acc = dev->acc;
	char err[256];
	int r;

	if (!(ernic_rd(acc, ERNIC_QP(i, ERNIC_STATQP)) & ERNIC_STATQP_FATAL) ||
	    !(ernic_rd(acc, ERNIC_QP(i, ERNIC_QPCONF)) & ERNIC_QPCONF_QP_EN))
		return 0;
	r = ernic_qp_recover_clear(acc, i, &hw_wait, err, sizeof(err));
	if (r)
		ernic_log("%s", err);
	return r;
}

/* PG332 "QP Fatal Recovery", steps to reinitialize 1-5, in this
 * process's turn when the IP is shared. */
static int reinit_turn(struct ernic_dev *dev, uint32_t i)
{
	bool shared = dev->hw_role != ERNIC_HW_ALONE;
	char err[256];
	int r;

	if (shared && ernic_share_lock(dev)) {
		ernic_log("QP %u: the state file's lock failed: the QP is not "
			  "reinitialized", i);
		return EIO;
	}
	r = ernic_qp_recover_reinit(dev->acc, i, &hw_wait, err, sizeof(err));
	if (r)
		ernic_log("%s", err);
	else
		ernic_qp_db_clear(dev, i);
	if (shared) {
		ernic_access_flush(dev->acc);
		ernic_share_unlock(dev);
	}
	return r;
}

int ernic_qp_hw_reset(struct ernic_dev *dev, uint32_t i)
{
	struct ernic_access *acc = dev->acc;
	uint32_t qpconf;
	int r;

	/* A QP the IP made FATAL: PG332's recovery, in its order. */
	if (ernic_rd(acc, ERNIC_QP(i, ERNIC_STATQP)) & ERNIC_STATQP_FATAL) {
		r = ernic_qp_fatal_clear(dev, i);
		if (r)
			return r;
		qpconf = ernic_rd(acc, ERNIC_QP(i, ERNIC_QPCONF));
		if ((qpconf & ERNIC_QPCONF_QP_UNDER_RECOVERY) &&
		    !(qpconf & ERNIC_QPCONF_QP_EN))
			return reinit_turn(dev, i);
	}
	/* Otherwise PG332 "QP Deletion". */
	wait_drained(acc, i);
	clear_turn(dev, i);
	return 0;
}

/*
 * QP Fatal Recovery step 13: setting QP EN clears STATQPi.FATAL. Read
 * it back once before the QP counts as ready, so that poll_cq never
 * takes the FATAL of the QP's last life for a new one. On the IP the
 * first read already sees it clear (reads are ordered after writes to
 * the same slave); a virtual FPGA applies posted writes at its next
 * pass. A QP that stays FATAL is left to the data path to report.
 */
void ernic_qp_hw_enabled(struct ernic_dev *dev, uint32_t i)
{
	const struct timespec step = { 0, 20000 };
	const uint64_t end = ernic_mono_ns() +
			     (uint64_t)ERNIC_ENABLE_TIMEOUT_MS * 1000000u;

	while (ernic_rd(dev->acc, ERNIC_QP(i, ERNIC_STATQP)) &
	       ERNIC_STATQP_FATAL) {
		if (ernic_mono_ns() >= end) {
			ernic_log("QP %u: still FATAL %d ms after QP EN was set",
				  i, ERNIC_ENABLE_TIMEOUT_MS);
			return;
		}
		nanosleep(&step, NULL);
	}
}

void ernic_qp_hw_reclaim(struct ernic_dev *dev)
{
	for (uint32_t i = ERNIC_FIRST_RC_QP; i <= dev->conf.c_num_qp; i++)
		if (ernic_rd(dev->acc, ERNIC_QP(i, ERNIC_QPCONF)) ||
		    ernic_rd(dev->acc, ERNIC_QP(i, ERNIC_STATQP)))
			ernic_qp_hw_clear(dev, i);
}

int ernic_destroy_qp(struct ibv_qp *ibqp)
{
	struct ernic_qp *qp = to_eqp(ibqp);
	struct ernic_dev *dev = ctx_dev(ibqp->context);

	ernic_events_qp_gone(dev, qp);
	pthread_mutex_lock(&dev->lock);
	/* No poll_cq looks at the QP once it is off its CQs' lists. */
	ernic_cq_detach(to_ecq(ibqp->send_cq), qp);
	ernic_cq_detach(to_ecq(ibqp->recv_cq), qp);
	/* An IP that never finishes the recovery still loses the QP: it
	 * is disabled and its pointers zeroed without the waits. */
	if (qp->attr.qp_state != IBV_QPS_RESET &&
	    ernic_qp_hw_reset(dev, qp->idx)) {
		ernic_log("QP %u: destroyed without PG332's recovery: "
			  "disabled and cleared as it was", qp->idx);
		clear_turn(dev, qp->idx);
	}
	/* Step 6: free the queues, and what the SQ still held. */
	ernic_bounce_put(dev, qp, qp->sq_ci, qp->sq_pi);
	put_rings(dev, qp);
	idx_put(dev, qp->idx);
	to_epd(ibqp->pd)->refcnt--;
	to_ecq(ibqp->send_cq)->nqp--;
	to_ecq(ibqp->recv_cq)->nqp--;
	pthread_mutex_unlock(&dev->lock);

	pthread_cond_destroy(&ibqp->cond);
	pthread_mutex_destroy(&ibqp->mutex);
	free_qp(qp);
	return 0;
}

void ernic_qp_reclaim(struct ernic_dev *dev, struct ibv_context *ctx)
{
	for (uint32_t i = ERNIC_FIRST_RC_QP; i <= dev->conf.c_num_qp; i++) {
		struct ernic_qp *qp;

		pthread_mutex_lock(&dev->ev_lock);
		qp = dev->ev_qp[i];
		if (qp && qp->vqp.qp.context == ctx)
			dev->ev_qp[i] = NULL;
		else
			qp = NULL;
		pthread_mutex_unlock(&dev->ev_lock);
		if (!qp)
			continue;
		/* its CQs are the context's too: nobody polls them now */
		if (qp->attr.qp_state != IBV_QPS_RESET)
			clear_turn(dev, i);
		ernic_bounce_put(dev, qp, qp->sq_ci, qp->sq_pi);
		put_rings(dev, qp);
		idx_put(dev, i);
	}
}

void ernic_qp_dp_state(struct ernic_qp *qp, enum ibv_qp_state next,
		       const struct ibv_qp_attr *attr)
{
	if (next == IBV_QPS_RESET) {
		/* IBTA: RESET empties both queues without completions. */
		ernic_spin_lock(&qp->sq_lock);
		ernic_bounce_put(ctx_dev(qp->vqp.qp.context), qp, qp->sq_ci,
				 qp->sq_pi);
		qp->sq_pi = qp->sq_ci = qp->sq_db = qp->sq_hw_ci = 0;
		qp->rd_inflight = qp->rd_limit = qp->rd_unrung = 0;
		qp->sq_flushing = qp->sq_skip = false;
		ernic_quiet_set(qp, ERNIC_CQ_SEND, ERNIC_QUIET_NONE);
		ernic_spin_unlock(&qp->sq_lock);
		ernic_spin_lock(&qp->rq_lock);
		atomic_store(&qp->rq_open, false);
		qp->rwqe_pi = qp->rwqe_ci = 0;
		qp->rq_ci = qp->immq_ci = qp->msg_len = qp->msg_pkts = 0;
		qp->rq_done = qp->rq_grant = qp->rq_budget = 0;
		qp->rq_ev_seen = qp->immq_ev_wp = 0;
		qp->rq_credit = 0;
		qp->msg_active = qp->msg_ovfl = false;
		ernic_quiet_set(qp, ERNIC_CQ_RECV, ERNIC_QUIET_NONE);
		ernic_spin_unlock(&qp->rq_lock);
		atomic_store(&qp->pmtu_log2, ERNIC_PMTU_LOG2_MIN);
		atomic_store(&qp->err, false);
		atomic_store(&qp->fatal_ns, 0);
	} else if (next == IBV_QPS_ERR) {
		ernic_qp_set_err(qp);
	} else if (next == IBV_QPS_RTS) {
		/* IBTA: max_rd_atomic 0 would let no READ ever go; one. */
		ernic_spin_lock(&qp->sq_lock);
		qp->rd_limit = attr->max_rd_atomic >= ERNIC_MAX_RD_ATOM ? 0 :
			       attr->max_rd_atomic ? attr->max_rd_atomic : 1;
		ernic_spin_unlock(&qp->sq_lock);
	}
	if (next == IBV_QPS_RTR)
		atomic_store(&qp->pmtu_log2, 7u + attr->path_mtu);
	atomic_store(&qp->dest_qpn, attr->dest_qp_num);
	atomic_store(&qp->dp_state, next);
	ernic_qp_gate(qp);
}

void ernic_qp_gate(struct ernic_qp *qp)
{
	atomic_store(&qp->rq_open, !qp->noncoherent &&
				   atomic_load(&qp->dp_state) != IBV_QPS_RESET &&
				   !atomic_load(&qp->hw_offload));
}

int ernic_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
		   struct ibv_qp_init_attr *init_attr)
{
	struct ernic_qp *qp = to_eqp(ibqp);
	struct ernic_dev *dev = ctx_dev(ibqp->context);
	uint32_t statqp = 0;

	pthread_mutex_lock(&dev->lock);
	*attr = qp->attr;
	if (qp->attr.qp_state != IBV_QPS_RESET)
		statqp = ernic_rd(dev->acc, ERNIC_QP(qp->idx, ERNIC_STATQP));
	pthread_mutex_unlock(&dev->lock);

	/* The IP may have moved the QP to FATAL on its own (Table 2-3), or
	 * a request completed in error (IBTA: the QP is in the error state
	 * from then on). */
	if ((statqp & ERNIC_STATQP_FATAL) ||
	    (atomic_load(&qp->err) && attr->qp_state != IBV_QPS_RESET))
		attr->qp_state = IBV_QPS_ERR;
	attr->cur_qp_state = attr->qp_state;
	attr->cap = qp->cap;
	attr->sq_draining = 0;

	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->cap = qp->cap;
	init_attr->qp_type = IBV_QPT_RC;
	init_attr->sq_sig_all = qp->sq_sig_all;
	return 0;
}
