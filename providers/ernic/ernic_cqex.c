// SPDX-License-Identifier: MIT
/*
 * ibv_cq_ex: the polling interface of ibv_create_cq_ex (start_poll,
 * next_poll, end_poll and the read_* accessors) over the same poll as
 * ibv_poll_cq. Each step makes one work completion into cq->cur and the
 * accessors read it.
 *
 * Lock contract: start_poll takes cq->lock and keeps it when it returns
 * 0; end_poll drops it. When start_poll finds nothing (ENOENT) it drops
 * the lock itself, and the caller must not call end_poll (ibv_cq_ex
 * rules). next_poll runs with the lock held.
 */
#include <errno.h>

#include "ernic.h"
#include "ernic_cq.h"

static struct ernic_cq *ex_to_ecq(struct ibv_cq_ex *cqx)
{
	return to_ecq(ibv_cq_ex_to_cq(cqx));
}

/* One completion into cq->cur and the public wr_id / status. */
static int step(struct ibv_cq_ex *cqx)
{
	struct ernic_cq *cq = ex_to_ecq(cqx);

	if (ernic_cq_poll(cq, 1, &cq->cur) != 1)
		return ENOENT;
	cqx->wr_id = cq->cur.wr_id;
	cqx->status = cq->cur.status;
	return 0;
}

static int start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	struct ernic_cq *cq = ex_to_ecq(cqx);
	int ret;

	if (attr->comp_mask)
		return ernic_refuse(EINVAL, "start_poll: comp_mask 0x%x",
				    attr->comp_mask);
	/* as ernic_poll_cq */
	if (ernic_cq_idle(cq))
		return ENOENT;
	if (ernic_cq_quiet(cq)) {
		/* the next poll finds what the IP takes (poll_lent) */
		if (cq->lends)
			ernic_cq_lend(cq);
		return ENOENT;
	}
	ernic_spin_lock(&cq->lock);
	ret = step(cqx);
	if (ret && cq->lends) {
		ernic_spin_unlock(&cq->lock);
		/* as ernic_poll_cq: the IP may use our thread, look again */
		if (!ernic_cq_lend(cq))
			return ret;
		ernic_spin_lock(&cq->lock);
		ret = step(cqx);
	}
	if (ret)
		ernic_spin_unlock(&cq->lock);
	return ret;
}

static int next_poll(struct ibv_cq_ex *cqx)
{
	return step(cqx);
}

static void end_poll(struct ibv_cq_ex *cqx)
{
	struct ernic_cq *cq = ex_to_ecq(cqx);

	ernic_spin_unlock(&cq->lock);
	ernic_cq_polled(cq);	/* as poll_cq */
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *cqx)
{
	return ex_to_ecq(cqx)->cur.opcode;
}

static uint32_t read_vendor_err(struct ibv_cq_ex *cqx)
{
	return ex_to_ecq(cqx)->cur.vendor_err;
}

static uint32_t read_byte_len(struct ibv_cq_ex *cqx)
{
	return ex_to_ecq(cqx)->cur.byte_len;
}

/* ImmDt (network order), or the R_Key a SEND with invalidate named
 * (IBV_WC_WITH_INV, host order): ibv_wc keeps both in one union, and
 * ibv_cq_ex reads them the same way. */
static __be32 read_imm_data(struct ibv_cq_ex *cqx)
{
	return ex_to_ecq(cqx)->cur.imm_data;
}

static uint32_t read_qp_num(struct ibv_cq_ex *cqx)
{
	return ex_to_ecq(cqx)->cur.qp_num;
}

static uint32_t read_src_qp(struct ibv_cq_ex *cqx)
{
	return ex_to_ecq(cqx)->cur.src_qp;
}

static unsigned int read_wc_flags(struct ibv_cq_ex *cqx)
{
	return ex_to_ecq(cqx)->cur.wc_flags;
}

/* RoCE: no LIDs, SL 0 (ibv_wc reports the same). */
static uint32_t read_slid(struct ibv_cq_ex *cqx)
{
	return ex_to_ecq(cqx)->cur.slid;
}

static uint8_t read_sl(struct ibv_cq_ex *cqx)
{
	return ex_to_ecq(cqx)->cur.sl;
}

static uint8_t read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return ex_to_ecq(cqx)->cur.dlid_path_bits;
}

void ernic_cq_ex_init(struct ernic_cq *cq, uint64_t wc_flags)
{
	struct ibv_cq_ex *cqx = &cq->vcq.cq_ex;

	cqx->start_poll = start_poll;
	cqx->next_poll = next_poll;
	cqx->end_poll = end_poll;
	cqx->read_opcode = read_opcode;
	cqx->read_vendor_err = read_vendor_err;
	cqx->read_wc_flags = read_wc_flags;
	/* The accessors asked for in wc_flags, as other providers set
	 * them; the rest stay NULL. */
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cqx->read_byte_len = read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		cqx->read_imm_data = read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cqx->read_qp_num = read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cqx->read_src_qp = read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		cqx->read_slid = read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		cqx->read_sl = read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cqx->read_dlid_path_bits = read_dlid_path_bits;
}
