// SPDX-License-Identifier: MIT
/*
 * Completion queues. ERNIC has no CQ object of its own: every QP owns a
 * completion ring (CQBAi, as deep as its SQ) and an RQ doorbell. An
 * ibv_cq is the provider's view over the rings of the QPs attached to
 * it, so creating one programs no register. It keeps the list of QPs
 * whose send and/or receive completions it reports (ernic_poll.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "ernic.h"
#include "ernic_cq.h"

/* Count a CQ in or out against max_cq; false when none is left. */
static bool count_cq(struct ibv_context *context, int n)
{
	struct ernic_dev *dev = ctx_dev(context);
	bool ok = true;

	pthread_mutex_lock(&dev->lock);
	if (n > 0 && dev->ncq >= ERNIC_MAX_CQ) {
		ok = false;
	} else {
		dev->ncq += (uint32_t)n;
		to_ectx(context)->ncq += (uint32_t)n;
	}
	pthread_mutex_unlock(&dev->lock);
	return ok;
}

/* A CQ of cqe entries reporting to channel: what create_cq and
 * create_cq_ex share once their arguments are checked. */
static struct ernic_cq *cq_new(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel,
			       const char *verb)
{
	struct ernic_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ernic_refuse(ENOMEM, "%s: no memory", verb);
		return NULL;
	}
	if (!count_cq(context, 1)) {
		free(cq);
		errno = ernic_refuse(ENOMEM, "%s: max_cq (%u) reached", verb,
				     ERNIC_MAX_CQ);
		return NULL;
	}
	atomic_init(&cq->arm, 0);
	atomic_init(&cq->lent, false);
	ret = ernic_comp_channel_attach(cq, context, channel);
	if (ret) {
		count_cq(context, -1);
		free(cq);
		errno = ernic_refuse(ret, "%s: the completion channel is not "
				     "one of this context's", verb);
		return NULL;
	}
	ernic_spin_init(&cq->lock);
	cq->dev = ctx_dev(context);
	cq->noncoherent = cq->dev->acc->ops->dma_sync != NULL;
	cq->lends = cq->dev->acc->ops->progress != NULL;
	/* Completions are made when polled, from the QPs' rings: the CQ
	 * cannot overrun, whatever its size. */
	cq->vcq.cq.cqe = cqe;
	return cq;
}

static int check_size(struct ibv_context *context, const char *verb, int cqe,
		      int comp_vector)
{
	if (cqe < 1 || cqe > ERNIC_MAX_CQE || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors)
		return ernic_refuse(EINVAL, "%s: cqe %d (1..%d), comp_vector "
				    "%d (of %d)", verb, cqe, ERNIC_MAX_CQE,
				    comp_vector, context->num_comp_vectors);
	return 0;
}

struct ibv_cq *ernic_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct ernic_cq *cq;

	errno = check_size(context, "create_cq", cqe, comp_vector);
	if (errno)
		return NULL;
	/* libibverbs runs verbs_init_cq() (context, channel and its refcnt,
	 * mutex, cond) on what this returns. */
	cq = cq_new(context, cqe, channel, "create_cq");
	return cq ? &cq->vcq.cq : NULL;
}

struct ibv_cq_ex *ernic_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr)
{
	const uint32_t known = IBV_CQ_INIT_ATTR_MASK_FLAGS |
			       IBV_CQ_INIT_ATTR_MASK_PD;
	struct ernic_cq *cq;

	errno = check_size(context, "create_cq_ex", (int)attr->cqe,
			   (int)attr->comp_vector);
	if (attr->cqe > INT_MAX)
		errno = ernic_refuse(EINVAL, "create_cq_ex: cqe %u", attr->cqe);
	if (errno)
		return NULL;
	if (attr->comp_mask & ~known) {
		errno = ernic_refuse(EINVAL, "create_cq_ex: comp_mask 0x%x has "
				     "unknown bits", attr->comp_mask);
		return NULL;
	}
	/* Both flags only allow what this CQ does anyway: it takes its own
	 * lock, and it cannot overrun. */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)(IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
				       IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN))) {
		errno = ernic_refuse(EOPNOTSUPP, "create_cq_ex: flags 0x%x",
				     attr->flags);
		return NULL;
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		errno = ernic_refuse(EOPNOTSUPP, "create_cq_ex: no parent "
				     "domains");
		return NULL;
	}
	if (attr->wc_flags & ~(uint64_t)ERNIC_CQ_EX_WC_FLAGS) {
		errno = ernic_refuse(EOPNOTSUPP, "create_cq_ex: wc_flags "
				     "0x%llx beyond the standard ones (no "
				     "timestamps, VLANs, flow tags)",
				     (unsigned long long)attr->wc_flags);
		return NULL;
	}
	cq = cq_new(context, (int)attr->cqe, attr->channel, "create_cq_ex");
	if (!cq)
		return NULL;
	/* ibv_create_cq_ex calls the provider directly: the common part of
	 * the CQ is ours to set up. */
	verbs_init_cq(&cq->vcq.cq, context, attr->channel, attr->cq_context);
	ernic_cq_ex_init(cq, attr->wc_flags);
	return &cq->vcq.cq_ex;
}

int ernic_destroy_cq(struct ibv_cq *ibcq)
{
	struct ernic_cq *cq = to_ecq(ibcq);
	struct ernic_dev *dev = ctx_dev(ibcq->context);
	int busy;

	pthread_mutex_lock(&dev->lock);
	busy = cq->nqp;
	pthread_mutex_unlock(&dev->lock);
	if (busy)
		return EBUSY;
	ernic_events_cq_gone(dev, cq);
	ernic_cq_unlend(cq);
	if (cq->ev_fd >= 0)
		close(cq->ev_fd);
	count_cq(ibcq->context, -1);
	free(cq);
	return 0;
}

void ernic_cq_attach(struct ernic_cq *cq, struct ernic_qp *qp, uint32_t roles)
{
	const uint32_t words = (qp->idx - ERNIC_FIRST_RC_QP) / 64 + 1;

	ernic_spin_lock(&cq->lock);
	/* poll_cq reads the words up to the highest QP ever attached */
	if (words > cq->nwords)
		atomic_store_explicit(&cq->nwords, words,
				      memory_order_relaxed);
	cq->qps[qp->idx] = qp;
	qp->busy_bit = UINT64_C(1) << ((qp->idx - ERNIC_FIRST_RC_QP) % 64);
	for (uint32_t r = 0; r < 2; r++)
		if (roles & (1u << r)) {
			atomic_store(&cq->quiet[r][qp->idx - ERNIC_FIRST_RC_QP],
				     ERNIC_QUIET_NONE);
			qp->busy_word[r] = &cq->active[r][words - 1];
			qp->quiet_word[r] =
				&cq->quiet[r][qp->idx - ERNIC_FIRST_RC_QP];
		}
	ernic_spin_unlock(&cq->lock);
}

void ernic_cq_detach(struct ernic_cq *cq, struct ernic_qp *qp)
{
	const uint32_t b = qp->idx - ERNIC_FIRST_RC_QP;

	ernic_spin_lock(&cq->lock);
	cq->qps[qp->idx] = NULL;
	for (int r = 0; r < 2; r++) {
		atomic_fetch_and(&cq->active[r][b / 64],
				 ~(UINT64_C(1) << (b % 64)));
		atomic_store(&cq->quiet[r][b], ERNIC_QUIET_NONE);
	}
	ernic_spin_unlock(&cq->lock);
}
