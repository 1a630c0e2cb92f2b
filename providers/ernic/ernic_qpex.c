// SPDX-License-Identifier: MIT
/*
 * The ibv_qp_ex work request API on top of the send queue (ernic_post.c):
 * the same checks and WQEs as ibv_post_send, one batch per wr_start.
 */
#include <endian.h>
#include <errno.h>

#include "ernic.h"
#include "ernic_cq.h"

/*
 * ibv_qp_ex: wr_start locks the SQ; each wr_<opcode> opens a work request
 * that the following wr_set_sge(_list) or wr_set_inline_data(_list)
 * completes; the batch is rung by wr_complete, or dropped by wr_abort
 * and on any error.
 */
static void qx_post(struct ernic_qp *qp, struct ernic_wr *w)
{
	struct ernic_dev *dev = ctx_dev(qp->vqp.qp.context);
	int ret;

	qp->qx.pending = false;
	if (qp->qx_err)
		return;
	ret = ernic_post_one(dev, qp, w, qp->qx_flush);
	if (ret)
		qp->qx_err = ret;
}

static void qx_wr(struct ernic_qp *qp, struct ernic_wr *w)
{
	*w = (struct ernic_wr){
		.wr_id = qp->qx.wr_id,
		.opcode = qp->qx.opcode,
		.flags = qp->qx.flags,
		.imm = qp->qx.imm,
		.raddr = qp->qx.raddr,
		.rkey = qp->qx.rkey,
	};
}

/* A work request left without data has none (zero length). */
static void qx_close(struct ernic_qp *qp)
{
	struct ernic_wr w;

	if (!qp->qx.pending)
		return;
	qx_wr(qp, &w);
	qx_post(qp, &w);
}

static void qx_open(struct ibv_qp_ex *qx, enum ibv_wr_opcode op, uint32_t rkey,
		    uint64_t raddr, uint32_t imm)
{
	struct ernic_qp *qp = qx_to_eqp(qx);

	qx_close(qp);
	qp->qx = (struct ernic_qx_op){
		.pending = true,
		.opcode = op,
		.wr_id = qx->wr_id,
		.flags = qx->wr_flags,
		.imm = imm,
		.raddr = raddr,
		.rkey = rkey,
	};
}

static void qx_rdma_read(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
	qx_open(qx, IBV_WR_RDMA_READ, rkey, raddr, 0);
}

static void qx_rdma_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
	qx_open(qx, IBV_WR_RDMA_WRITE, rkey, raddr, 0);
}

static void qx_rdma_write_imm(struct ibv_qp_ex *qx, uint32_t rkey,
			      uint64_t raddr, __be32 imm)
{
	qx_open(qx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, raddr, be32toh(imm));
}

static void qx_send(struct ibv_qp_ex *qx)
{
	qx_open(qx, IBV_WR_SEND, 0, 0, 0);
}

static void qx_send_imm(struct ibv_qp_ex *qx, __be32 imm)
{
	qx_open(qx, IBV_WR_SEND_WITH_IMM, 0, 0, be32toh(imm));
}

static void qx_send_inv(struct ibv_qp_ex *qx, uint32_t rkey)
{
	qx_open(qx, IBV_WR_SEND_WITH_INV, 0, 0, rkey);
}

static void qx_set_sge_list(struct ibv_qp_ex *qx, size_t num_sge,
			    const struct ibv_sge *sg_list)
{
	struct ernic_qp *qp = qx_to_eqp(qx);
	struct ernic_wr w;

	if (!qp->qx.pending || num_sge > qp->cap.max_send_sge) {
		qp->qx.pending = false;
		qp->qx_err = qp->qx_err ? qp->qx_err :
			     ernic_refuse(EINVAL, "wr_set_sge_list: QP %u: "
					  "no open work request, or %zu SGEs "
					  "over max_send_sge %u", qp->idx,
					  num_sge, qp->cap.max_send_sge);
		return;
	}
	qx_wr(qp, &w);
	w.flags &= ~(unsigned int)IBV_SEND_INLINE;
	w.sge = sg_list;
	w.num_sge = num_sge;
	qx_post(qp, &w);
}

static void qx_set_sge(struct ibv_qp_ex *qx, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	const struct ibv_sge sge = { .addr = addr, .length = length,
				     .lkey = lkey };

	qx_set_sge_list(qx, 1, &sge);
}

static void qx_set_inline_data_list(struct ibv_qp_ex *qx, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	struct ernic_qp *qp = qx_to_eqp(qx);
	struct ernic_wr w;

	if (!qp->qx.pending) {
		qp->qx_err = qp->qx_err ? qp->qx_err : EINVAL;
		return;
	}
	qx_wr(qp, &w);
	w.flags |= IBV_SEND_INLINE;
	w.buf = buf_list;
	w.num_buf = num_buf;
	qx_post(qp, &w);
}

static void qx_set_inline_data(struct ibv_qp_ex *qx, void *addr, size_t length)
{
	const struct ibv_data_buf buf = { .addr = addr, .length = length };

	qx_set_inline_data_list(qx, 1, &buf);
}

static void qx_start(struct ibv_qp_ex *qx)
{
	struct ernic_qp *qp = qx_to_eqp(qx);

	ernic_spin_lock(&qp->sq_lock);
	qp->qx_start = qp->sq_pi;
	qp->qx.pending = false;
	qp->qx_err = ernic_sq_state(qp, &qp->qx_flush);
	if (atomic_load_explicit(&qp->hw_offload, memory_order_relaxed))
		qp->qx_err = ernic_offload_refuse(qp, "wr_start");
}

static int qx_complete(struct ibv_qp_ex *qx)
{
	struct ernic_qp *qp = qx_to_eqp(qx);
	int ret;

	qx_close(qp);
	ret = qp->qx_err;
	if (ret) {
		/* nothing of the batch */
		ernic_bounce_put(ctx_dev(qp->vqp.qp.context), qp,
				 qp->qx_start, qp->sq_pi);
		qp->sq_pi = qp->qx_start;
	} else if (qp->sq_pi != qp->qx_start) {
		ernic_cq_busy(qp, ERNIC_CQ_SEND);
		if (!qp->qx_flush)
			ernic_sq_doorbell(ctx_dev(qp->vqp.qp.context), qp);
	}
	ernic_spin_unlock(&qp->sq_lock);
	return ret;
}

static void qx_abort(struct ibv_qp_ex *qx)
{
	struct ernic_qp *qp = qx_to_eqp(qx);

	qp->qx.pending = false;
	ernic_bounce_put(ctx_dev(qp->vqp.qp.context), qp, qp->qx_start,
			 qp->sq_pi);
	qp->sq_pi = qp->qx_start;
	ernic_spin_unlock(&qp->sq_lock);
}

void ernic_qp_ex_init(struct ernic_qp *qp, uint64_t flags)
{
	struct ibv_qp_ex *qx = &qp->vqp.qp_ex;

	if (flags & IBV_QP_EX_WITH_RDMA_WRITE)
		qx->wr_rdma_write = qx_rdma_write;
	if (flags & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qx->wr_rdma_write_imm = qx_rdma_write_imm;
	if (flags & IBV_QP_EX_WITH_SEND)
		qx->wr_send = qx_send;
	if (flags & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qx->wr_send_imm = qx_send_imm;
	if (flags & IBV_QP_EX_WITH_RDMA_READ)
		qx->wr_rdma_read = qx_rdma_read;
	if (flags & IBV_QP_EX_WITH_SEND_WITH_INV)
		qx->wr_send_inv = qx_send_inv;
	qx->wr_set_sge = qx_set_sge;
	qx->wr_set_sge_list = qx_set_sge_list;
	qx->wr_set_inline_data = qx_set_inline_data;
	qx->wr_set_inline_data_list = qx_set_inline_data_list;
	qx->wr_start = qx_start;
	qx->wr_complete = qx_complete;
	qx->wr_abort = qx_abort;
	qp->vqp.comp_mask |= ERNIC_VERBS_QP_EX;
}
