// SPDX-License-Identifier: MIT
/*
 * Completion queues. ERNIC has no CQ object of its own: every QP owns a
 * completion ring (CQBAi, as deep as its SQ) and an RQ doorbell. An
 * ibv_cq is the provider's view over the rings of the QPs attached to
 * it, so creating one programs no register.
 */
#include <errno.h>
#include <stdlib.h>

#include "ernic.h"

struct ibv_cq *ernic_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct ernic_cq *cq;

	if (cqe < 1 || cqe > ERNIC_MAX_CQE || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	verbs_init_cq(&cq->vcq.cq, context, channel, NULL);
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
	free(cq);
	return 0;
}
