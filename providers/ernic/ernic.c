// SPDX-License-Identifier: MIT
/*
 * Device and context: how libibverbs finds an ERNIC, and what opening
 * one does. The first context of a process brings the IP up (global
 * configuration and QP1); the last one takes it down again.
 */
#include <errno.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ernic.h"
#include "ernic_cq.h"

int ernic_log_level;

/* rdma-core's convention (libibverbs.md): VERBS_LOG_LEVEL, 0 (none) to
 * 4 (debug). Read once, when libibverbs loads the provider: the checks
 * on the data path are then one load and compare, on refusals only. */
static void log_level_init(void)
{
	const char *env = getenv("VERBS_LOG_LEVEL");

	if (env)
		ernic_log_level = atoi(env);
}

void ernic_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("libernic: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static const struct verbs_match_ent ernic_match_table[] = {
	{ .u.modalias = ERNIC_MODALIAS_PREFIX "*", .kind = VERBS_MATCH_MODALIAS },
	{ .kind = VERBS_MATCH_SENTINEL },
};

static void ernic_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops ernic_ctx_ops = {
	.free_context = ernic_free_context,
	.alloc_pd = ernic_alloc_pd,
	.create_cq = ernic_create_cq,
	.create_cq_ex = ernic_create_cq_ex,
	.create_qp = ernic_create_qp,
	.create_qp_ex = ernic_create_qp_ex,
	.dealloc_pd = ernic_dealloc_pd,
	.dereg_mr = ernic_dereg_mr,
	.destroy_cq = ernic_destroy_cq,
	.destroy_qp = ernic_destroy_qp,
	.modify_qp = ernic_modify_qp,
	.poll_cq = ernic_poll_cq,
	.post_recv = ernic_post_recv,
	.post_send = ernic_post_send,
	.query_device_ex = ernic_query_device_ex,
	.query_port = ernic_query_port,
	.query_qp = ernic_query_qp,
	.reg_mr = ernic_reg_mr,
	.req_notify_cq = ernic_req_notify_cq,
};

static void ernic_free_context(struct ibv_context *ibctx)
{
	struct ernic_context *ctx = to_ectx(ibctx);
	struct ernic_dev *dev = ctx->dev;

	ernic_events_ctx(dev, ctx, false);
	pthread_mutex_lock(&dev->lock);
	if (--dev->open_count == 0 && dev->hw_role != ERNIC_HW_CLIENT) {
		ernic_dev_stop(dev);
	} else {
		/* Objects the context still holds: the device lives on for
		 * other contexts and must get their resources back. */
		ernic_qp_reclaim(dev, ibctx);
		ernic_mr_reclaim(dev, ibctx);
		/* A broker's client gives its pages back when it stops: no
		 * registered buffer may still live in them then. */
		if (dev->open_count == 0)
			ernic_dev_stop(dev);
	}
	dev->npd -= ctx->npd;
	dev->ncq -= ctx->ncq;
	pthread_mutex_unlock(&dev->lock);

	/* verbs_uninit_context closes async_fd, i.e. async_sv[0]. */
	close(ctx->async_sv[1]);
	ernic_comp_channels_free(ctx);
	pthread_mutex_destroy(&ctx->chan_lock);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static struct verbs_context *ernic_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd, void *private_data)
{
	struct ernic_dev *dev = to_edev(ibdev);
	struct ernic_context *ctx;
	char err[256];
	int ret;

	ctx = _verbs_init_and_alloc_context(
		ibdev, cmd_fd, sizeof(*ctx),
		&((struct ernic_context *)NULL)->ibv_ctx,
		ERNIC_PABI_DRIVER_ID_UNKNOWN);
	if (!ctx)
		return NULL;
	ctx->dev = dev;
	ctx->async_sv[0] = ctx->async_sv[1] = -1;
	pthread_mutex_init(&ctx->chan_lock, NULL);

	/*
	 * There is no kernel to deliver async events: libibverbs reads
	 * struct ib_uverbs_async_event_desc records from async_fd, so give
	 * it one end of a socket pair whose other end the provider keeps.
	 * Records stay whole, readers may block in ibv_get_async_event(),
	 * and the provider sends without blocking (MSG_DONTWAIT) and can
	 * take back a destroyed QP's unread events (ernic_event.c).
	 */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
		       ctx->async_sv)) {
		ret = errno;
		goto err_ctx;
	}
	ctx->ibv_ctx.context.async_fd = ctx->async_sv[0];
	ctx->ibv_ctx.context.num_comp_vectors = 1;

	pthread_mutex_lock(&dev->lock);
	ret = 0;
	if (dev->open_count == 0)
		ret = ernic_dev_start(dev, err, sizeof(err));
	if (!ret)
		dev->open_count++;
	pthread_mutex_unlock(&dev->lock);
	if (ret) {
		ernic_log("%s: %s", ibdev->name, err);
		goto err_ctx;
	}

	verbs_set_ops(&ctx->ibv_ctx, &ernic_ctx_ops);
	ernic_events_ctx(dev, ctx, true);
	return &ctx->ibv_ctx;

err_ctx:
	if (ctx->async_sv[1] >= 0)
		close(ctx->async_sv[1]);
	pthread_mutex_destroy(&ctx->chan_lock);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = ret;
	return NULL;
}

static struct verbs_device *ernic_alloc_device(struct verbs_sysfs_dev *sysfs)
{
	struct ernic_dev *dev;

	/* libibverbs requires a zeroed verbs_device. */
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	snprintf(dev->conf_path, sizeof(dev->conf_path), "%s/device/%s",
		 sysfs->ibdev_path, ERNIC_CONF_FILE);
	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->ev_lock, NULL);
	for (size_t s = 0; s < ERNIC_ARRAY_SIZE(dev->pdt_mr); s++)
		atomic_init(&dev->pdt_mr[s], &ernic_mr_none);
	return &dev->vdev;
}

static void ernic_uninit_device(struct verbs_device *vdev)
{
	struct ernic_dev *dev = (struct ernic_dev *)vdev;

	pthread_mutex_destroy(&dev->ev_lock);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

const struct verbs_device_ops ernic_dev_ops = {
	.name = "ernic",
	.match_min_abi_version = 1,
	.match_max_abi_version = 1,
	.match_table = ernic_match_table,
	.alloc_device = ernic_alloc_device,
	.uninit_device = ernic_uninit_device,
	.alloc_context = ernic_alloc_context,
};

static void __attribute__((constructor)) ernic_register_driver(void)
{
	log_level_init();
	verbs_register_driver_34(&ernic_dev_ops);
}
