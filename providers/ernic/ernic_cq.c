// SPDX-License-Identifier: MIT
/*
 * Completion queues. ERNIC has no CQ object of its own: every QP owns a
 * completion ring (CQBAi, as deep as its SQ) and an RQ doorbell. An
 * ibv_cq is the provider's view over the rings of the QPs attached to
 * it, so creating one programs no register. It keeps the list of QPs
 * whose send and/or receive completions it reports (ernic_poll.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "ernic.h"

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

struct ibv_cq *ernic_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct ernic_cq *cq;
	int ret;

	if (cqe < 1 || cqe > ERNIC_MAX_CQE || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors) {
		errno = ernic_refuse(EINVAL, "create_cq: cqe %d (1..%d), "
				     "comp_vector %d (of %d)", cqe,
				     ERNIC_MAX_CQE, comp_vector,
				     context->num_comp_vectors);
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ernic_refuse(ENOMEM, "create_cq: no memory");
		return NULL;
	}
	if (!count_cq(context, 1)) {
		free(cq);
		errno = ernic_refuse(ENOMEM, "create_cq: max_cq (%u) reached",
				     ERNIC_MAX_CQ);
		return NULL;
	}
	/* libibverbs runs verbs_init_cq() (context, channel and its refcnt,
	 * mutex, cond) on what this returns. */
	atomic_init(&cq->arm, 0);
	ret = ernic_comp_channel_attach(cq, context, channel);
	if (ret) {
		count_cq(context, -1);
		free(cq);
		errno = ret;
		return NULL;
	}
	pthread_mutex_init(&cq->lock, NULL);
	/* Completions are made when polled, from the QPs' rings: the CQ
	 * cannot overrun, whatever its size. */
	cq->vcq.cq.cqe = cqe;
	return &cq->vcq.cq;
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
	if (cq->ev_fd >= 0)
		close(cq->ev_fd);
	pthread_mutex_destroy(&cq->lock);
	count_cq(ibcq->context, -1);
	free(cq);
	return 0;
}

void ernic_cq_attach(struct ernic_cq *cq, struct ernic_qp *qp, uint32_t roles)
{
	uint32_t k;

	pthread_mutex_lock(&cq->lock);
	for (k = 0; k < cq->nents && cq->ents[k].qp != qp; k++)
		;
	/* At most one entry per QP, and a device has fewer QPs than ents. */
	if (k == cq->nents) {
		cq->ents[k].qp = qp;
		cq->ents[k].roles = 0;
		cq->nents++;
	}
	cq->ents[k].roles |= roles;
	pthread_mutex_unlock(&cq->lock);
}

void ernic_cq_detach(struct ernic_cq *cq, struct ernic_qp *qp)
{
	pthread_mutex_lock(&cq->lock);
	for (uint32_t k = 0; k < cq->nents; k++) {
		if (cq->ents[k].qp != qp)
			continue;
		cq->ents[k] = cq->ents[--cq->nents];
		break;
	}
	if (cq->cursor >= cq->nents)
		cq->cursor = 0;
	pthread_mutex_unlock(&cq->lock);
}
