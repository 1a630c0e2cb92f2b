// SPDX-License-Identifier: MIT
/* ernicdv: register access, completion channels, fatal codes, cache
 * maintenance of MRs. */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include "ernic.h"
#include "ernic_time.h"
#include "ernicdv.h"

bool ernicdv_is_ernic_device(struct ibv_device *device)
{
	return device &&
	       ((struct verbs_device *)device)->ops == &ernic_dev_ops;
}

static int check(struct ibv_context *context, uint32_t offset)
{
	if (!context || !ernicdv_is_ernic_device(context->device))
		return EINVAL;
	if (offset % 4 || offset >= ERNIC_REG_SPACE_SIZE)
		return EINVAL;
	if (!ctx_dev(context)->acc)
		return ENODEV;
	return 0;
}

int ernicdv_reg_read(struct ibv_context *context, uint32_t offset,
		     uint32_t *value)
{
	int ret = check(context, offset);

	if (ret)
		return ret;
	*value = ernic_rd(ctx_dev(context)->acc, offset);
	return 0;
}

int ernicdv_reg_write(struct ibv_context *context, uint32_t offset,
		      uint32_t value)
{
	int ret = check(context, offset);

	if (ret)
		return ret;
	ernic_wr(ctx_dev(context)->acc, offset, value);
	return 0;
}

static bool is_ernic_ctx(struct ibv_context *context)
{
	return context && ernicdv_is_ernic_device(context->device);
}

struct ibv_comp_channel *ernicdv_create_comp_channel(struct ibv_context *context)
{
	if (!is_ernic_ctx(context)) {
		errno = EINVAL;
		return NULL;
	}
	return ernic_comp_channel_create(context);
}

int ernicdv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
			 void **cq_context, int timeout_ms)
{
	const int64_t end = (int64_t)(ernic_mono_ns() / 1000000) +
			    (timeout_ms > 0 ? timeout_ms : 0);
	uint64_t handle;

	if (!channel || !cq || !cq_context || !is_ernic_ctx(channel->context)) {
		errno = EINVAL;
		return -1;
	}
	/* recv, not read: another reader may take the event after poll. */
	for (;;) {
		ssize_t n = recv(channel->fd, &handle, sizeof(handle),
				 MSG_DONTWAIT);
		struct pollfd p = { .fd = channel->fd, .events = POLLIN };
		int left = timeout_ms < 0 ? -1 :
			   (int)(end - (int64_t)(ernic_mono_ns() / 1000000));
		int r;

		if (n == sizeof(handle))
			break;
		if (n >= 0) {
			errno = EIO;	/* not a record the provider sent */
			return -1;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if (timeout_ms >= 0 && left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		r = poll(&p, 1, left);
		if (r < 0 && errno != EINTR)
			return -1;
	}
	*cq = (struct ibv_cq *)(uintptr_t)handle;
	*cq_context = (*cq)->cq_context;
	return 0;
}

int ernicdv_query_qp_fatal(struct ibv_qp *qp, uint32_t *code)
{
	struct ernic_dev *dev;

	if (!qp || !code || !is_ernic_ctx(qp->context))
		return EINVAL;
	dev = ctx_dev(qp->context);
	pthread_mutex_lock(&dev->ev_lock);
	*code = to_eqp(qp)->fatal_code;
	pthread_mutex_unlock(&dev->ev_lock);
	return 0;
}

int ernicdv_query_qp_state(struct ibv_context *context, uint32_t qp_num,
			   enum ibv_qp_state *state)
{
	struct ernic_dev *dev;
	struct ernic_qp *qp;
	int ret = 0;

	if (!context || !state || !is_ernic_ctx(context))
		return EINVAL;
	dev = ctx_dev(context);
	if (qp_num > dev->conf.c_num_qp)
		return ENOENT;
	/* ev_lock keeps the QP from being freed while it is looked at. */
	pthread_mutex_lock(&dev->ev_lock);
	qp = dev->ev_qp[qp_num];
	if (!qp) {
		ret = ENOENT;
	} else {
		*state = qp->attr.qp_state;
		if (*state != IBV_QPS_RESET &&
		    (atomic_load(&qp->err) ||
		     (ernic_rd(dev->acc, ERNIC_QP(qp->idx, ERNIC_STATQP)) &
		      ERNIC_STATQP_FATAL)))
			*state = IBV_QPS_ERR;
	}
	pthread_mutex_unlock(&dev->ev_lock);
	return ret;
}

int ernicdv_sync_mr(struct ibv_mr *mr, void *addr, size_t len,
		    enum ernicdv_sync_dir dir)
{
	const uintptr_t a = (uintptr_t)addr, base = (uintptr_t)(mr ? mr->addr : 0);

	if (!mr || !is_ernic_ctx(mr->context) ||
	    (dir != ERNICDV_SYNC_FOR_CPU && dir != ERNICDV_SYNC_FOR_DEVICE) ||
	    a < base || len > mr->length || a - base > mr->length - len)
		return EINVAL;
	ernic_dma_sync(ctx_dev(mr->context)->acc, addr, len,
		       dir == ERNICDV_SYNC_FOR_CPU ? ERNIC_DMA_FROM_DEVICE :
						     ERNIC_DMA_TO_DEVICE);
	return 0;
}
