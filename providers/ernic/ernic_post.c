// SPDX-License-Identifier: MIT
/*
 * Send queue: work requests become 64-byte WQEs (PG332 Table 2-1) in the
 * SQ ring at SQPIi, then one SQPIi doorbell per call (PG332 ch.6 "WQE SQ
 * Posting"). The 16-bit WQE WRID is the SQ slot; a shadow per slot keeps
 * the 64-bit wr_id and what the completion must report.
 *
 * A work request the WQE format cannot carry whole is staged (several
 * SGEs: a staging slot or a bounce buffer, ernic_sge.c) or split over
 * consecutive WQEs: one per SGE and per ERNIC_MAX_MSG_SIZE of RDMA
 * WRITE/READ (PG332 "Unsupported Features": DMA length > 8 MB). Only the
 * last WQE of a request carries its signaled flag and immediate data.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "ernic.h"
#include "ernic_cq.h"

enum op_kind { OPK_SEND, OPK_WRITE, OPK_READ };

/* ibv_wr_opcode -> Table 2-1 OPCODE */
static const struct {
	bool ok;
	uint8_t hw;
	uint8_t kind;
	bool imm;		/* IMMDT carries ImmDt or the IETH R_Key */
} op_map[] = {
	[IBV_WR_RDMA_WRITE] = { true, ERNIC_OP_RDMA_WRITE, OPK_WRITE, false },
	[IBV_WR_RDMA_WRITE_WITH_IMM] = { true, ERNIC_OP_RDMA_WRITE_IMM,
					 OPK_WRITE, true },
	[IBV_WR_SEND] = { true, ERNIC_OP_SEND, OPK_SEND, false },
	[IBV_WR_SEND_WITH_IMM] = { true, ERNIC_OP_SEND_IMM, OPK_SEND, true },
	[IBV_WR_RDMA_READ] = { true, ERNIC_OP_RDMA_READ, OPK_READ, false },
	[IBV_WR_SEND_WITH_INV] = { true, ERNIC_OP_SEND_INV, OPK_SEND, true },
};

#define ERNIC_SEND_FLAGS \
	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
	 IBV_SEND_INLINE)

static size_t seg_count(const struct ernic_wr *w)
{
	return w->buf ? w->num_buf : w->num_sge;
}

/* Inline segment k: the address is the data itself (verbs). */
static const void *inl_seg(const struct ernic_wr *w, size_t k, size_t *len)
{
	if (w->buf) {
		*len = w->buf[k].length;
		return w->buf[k].addr;
	}
	*len = w->sge[k].length;
	return (const void *)(uintptr_t)w->sge[k].addr;
}

static uint32_t sq_room(const struct ernic_qp *qp)
{
	return (qp->sq_ci + qp->sq_depth - qp->sq_pi - 1) % qp->sq_depth;
}

static void put_wqe(struct ernic_qp *qp, struct ernic_wqe *wqe,
		    const struct ernic_wr *w, uint32_t len, uint8_t flags)
{
	const uint32_t slot = qp->sq_pi;
	struct ernic_swqe *sw = &qp->swqe[slot];

	wqe->wrid = htole16((uint16_t)slot);
	memcpy((uint8_t *)qp->sq.va + (size_t)slot * ERNIC_WQE_SIZE, wqe,
	       sizeof(*wqe));
	sw->wr_id = w->wr_id;
	sw->read_va = 0;
	sw->read_len = 0;
	sw->length = len;
	sw->opcode = op_map[w->opcode].hw;
	sw->flags = flags;
	sw->nsg = 0;
	if (sw->opcode == ERNIC_OP_RDMA_READ)
		qp->rd_unrung++;
	qp->sq_pi = ernic_ring_next(slot, qp->sq_depth);
}

/*
 * Inline data, copied into the staging slot of sq_pi before anything is
 * queued so that the caller may reuse its buffers at once. That slot is
 * free even when the ring is full (rings hold depth - 1 WQEs), so a
 * request refused later leaves nothing behind that matters.
 */
static int gather_inline(struct ernic_qp *qp, const struct ernic_wr *w,
			 uint64_t *total)
{
	uint8_t *dst = ernic_stage_va(qp, qp->sq_pi);
	size_t sum = 0;

	for (size_t k = 0; k < seg_count(w); k++) {
		size_t len;
		const void *src = inl_seg(w, k, &len);

		if (len > qp->cap.max_inline_data - sum)
			return ernic_refuse(EINVAL,
					    "post_send: QP %u wr_id %llu: "
					    "inline data over max_inline_data "
					    "(%u B)", qp->idx,
					    (unsigned long long)w->wr_id,
					    qp->cap.max_inline_data);
		if (len)
			memcpy(dst + sum, src, len);
		sum += len;
	}
	*total = sum;
	return 0;
}

/* The one non-empty SGE of a list that has exactly one. */
static const struct ibv_sge *only_sge(const struct ernic_wr *w)
{
	for (size_t k = 0; k < w->num_sge; k++)
		if (w->sge[k].length)
			return &w->sge[k];
	return NULL;
}

static int refuse_send_len(const struct ernic_qp *qp,
			   const struct ernic_wr *w, uint64_t sum)
{
	/* PG332 "Unsupported Features": zero-length SENDs, and DMA lengths
	 * over 8 MB. */
	return ernic_refuse(EINVAL, "post_send: QP %u wr_id %llu: SEND of "
			    "%llu B (the IP sends 1 B to 8 MiB)", qp->idx,
			    (unsigned long long)w->wr_id,
			    (unsigned long long)sum);
}

/* A SEND from one SGE: SDATA up to 16 B, else zero-copy from LADDR. */
static int send_one(struct ernic_dev *dev, struct ernic_qp *qp,
		    const struct ernic_wr *w, struct ernic_wqe *wqe,
		    uint64_t *total)
{
	const struct ibv_sge *s = &w->sge[0];
	uint64_t bus;
	uint8_t *va;

	if (!s->length || s->length > ERNIC_MAX_MSG_SIZE)
		return refuse_send_len(qp, w, s->length);
	if (ernic_mr_translate(dev, qp->vqp.qp.pd, s->lkey, s->addr,
			       s->length, false, &bus, &va))
		return ernic_sge_refuse(qp, "post_send", w->wr_id, 0, s,
					false);
	if (s->length <= ERNIC_WQE_SDATA_SIZE) {
		memcpy(wqe->sdata, va, s->length);
	} else {
		wqe->laddr = htole64(bus);
		/* Nothing is queued yet, but the data is final: a failed
		 * post has only cleaned some lines. */
		ernic_dma_sync(dev->acc, (const void *)(uintptr_t)s->addr,
			       s->length, ERNIC_DMA_TO_DEVICE);
	}
	wqe->length = htole32(s->length);
	*total = s->length;
	return 0;
}

/* SEND: payloads up to 16 B always travel in SDATA (Table 2-1), gathered
 * here. A longer one is read from LADDR: its one non-empty SGE itself,
 * or the slot's staging area (inline data, several SGEs). */
static int build_send(struct ernic_dev *dev, struct ernic_qp *qp,
		      const struct ernic_wr *w, struct ernic_wqe *wqe,
		      uint64_t *total)
{
	const uint32_t slot = qp->sq_pi;
	uint8_t *stage = ernic_stage_va(qp, slot);
	const struct ibv_sge *one;
	uint64_t sum = 0, bus = 0;
	size_t n = 0;
	int ret;

	/* One SGE, the common case: one translation. */
	if (!(w->flags & IBV_SEND_INLINE) && w->num_sge == 1)
		return send_one(dev, qp, w, wqe, total);
	if (w->flags & IBV_SEND_INLINE)
		ret = gather_inline(qp, w, &sum);
	else
		ret = ernic_sge_check(dev, qp, "post_send", w->wr_id, w->sge,
				      w->num_sge, false, &sum, &n);
	if (ret)
		return ret;
	if (!sum || sum > ERNIC_MAX_MSG_SIZE)
		return refuse_send_len(qp, w, sum);
	wqe->length = htole32((uint32_t)sum);
	*total = sum;
	if (w->flags & IBV_SEND_INLINE) {
		if (sum <= ERNIC_WQE_SDATA_SIZE) {
			memcpy(wqe->sdata, stage, sum);
			return 0;
		}
	} else if (sum <= ERNIC_WQE_SDATA_SIZE) {
		ernic_sge_gather(dev, qp->vqp.qp.pd, w->sge, w->num_sge,
				 wqe->sdata);
		return 0;
	} else if (n == 1) {
		one = only_sge(w);
		ernic_mr_translate(dev, qp->vqp.qp.pd, one->lkey, one->addr,
				   sum, false, &bus, NULL);
		wqe->laddr = htole64(bus);
		/* Nothing is queued yet, but the data is final: a failed
		 * post has only cleaned some lines. */
		ernic_dma_sync(dev->acc, (const void *)(uintptr_t)one->addr,
			       sum, ERNIC_DMA_TO_DEVICE);
		return 0;
	} else if (sum > qp->stage_size) {
		/* Every WQE is a message of its own: no split. post_one
		 * gathers it into a bounce buffer once it has room. */
		return 0;
	} else {
		ernic_sge_gather(dev, qp->vqp.qp.pd, w->sge, w->num_sge,
				 stage);
	}
	/* The IP reads the staged bytes from DDR (non-coherent DMA). */
	ernic_dma_sync(dev->acc, stage, sum, ERNIC_DMA_TO_DEVICE);
	wqe->laddr = htole64(ernic_stage_bus(qp, slot));
	return 0;
}

/* WQEs an RDMA WRITE/READ takes, after checking every SGE: one when it
 * is staged (several SGEs), else one per ERNIC_MAX_MSG_SIZE of its
 * SGE(s), zero-copy. */
static int plan_rdma(struct ernic_dev *dev, struct ernic_qp *qp,
		     const struct ernic_wr *w, uint32_t *nwqe, uint64_t *total,
		     bool *staged)
{
	/* READ data lands in the buffers: they need local write. */
	const bool read = op_map[w->opcode].kind == OPK_READ;
	uint64_t sum = 0, n = 0;
	size_t ne = 0;
	int ret;

	ret = ernic_sge_check(dev, qp, "post_send", w->wr_id, w->sge,
			      w->num_sge, read, &sum, &ne);
	if (ret)
		return ret;
	if (sum > ERNIC_MAX_WR_LEN || w->raddr + sum < w->raddr)
		return ernic_refuse(EINVAL,
				    "post_send: QP %u wr_id %llu: %llu B at "
				    "remote 0x%llx: over 2 GiB or wraps",
				    qp->idx, (unsigned long long)w->wr_id,
				    (unsigned long long)sum,
				    (unsigned long long)w->raddr);
	*total = sum;
	/* Several SGEs make one WQE, so that a request takes one SQ slot
	 * (max_send_wr counts requests): staged, or beyond the slot through
	 * a bounce buffer. Only over 8 MiB (one WQE's limit) are they split
	 * per SGE; a WRITE with immediate cannot be (its peer would see
	 * the last piece's length). */
	*staged = ne > 1 && sum <= ERNIC_MAX_MSG_SIZE;
	if (ne > 1 && !*staged && w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		return ernic_refuse(EINVAL,
				    "post_send: QP %u wr_id %llu: WRITE with "
				    "immediate of %llu B in %zu SGEs: over "
				    "8 MiB", qp->idx,
				    (unsigned long long)w->wr_id,
				    (unsigned long long)sum, ne);
	if (*staged) {
		*nwqe = 1;
		return 0;
	}
	for (size_t k = 0; k < w->num_sge; k++)
		n += ((uint64_t)w->sge[k].length + ERNIC_MAX_MSG_SIZE - 1) /
		     ERNIC_MAX_MSG_SIZE;
	*nwqe = n ? (uint32_t)n : 1;	/* zero length: one empty WQE */
	return 0;
}

/* One WQE over the slot's staging area: a WRITE's SGEs gathered into
 * it, or a READ's data landing in it, scattered by poll_cq. */
static void emit_staged(struct ernic_dev *dev, struct ernic_qp *qp,
			const struct ernic_wr *w, uint64_t total, uint8_t sig,
			struct ernic_dma *bounce)
{
	const uint32_t slot = qp->sq_pi;
	const bool read = op_map[w->opcode].kind == OPK_READ;
	uint8_t *stage = bounce ? bounce->va : ernic_stage_va(qp, slot);
	struct ernic_swqe *sw = &qp->swqe[slot];
	struct ernic_wqe wqe = { 0 };

	if (!read)
		ernic_sge_gather(dev, qp->vqp.qp.pd, w->sge, w->num_sge,
				 stage);
	/* A WRITE's bytes must be in DDR; a READ's destination is cleaned
	 * so that no dirty line is written back over the IP's data, and
	 * invalidated when its CQE is polled. */
	ernic_dma_sync(dev->acc, stage, total, ERNIC_DMA_TO_DEVICE);
	wqe.opcode = op_map[w->opcode].hw;
	if (wqe.opcode == ERNIC_OP_RDMA_WRITE_IMM)
		wqe.immdt = htole32(w->imm);
	wqe.laddr = htole64(bounce ? bounce->bus : ernic_stage_bus(qp, slot));
	wqe.length = htole32((uint32_t)total);
	wqe.roffset = htole64(w->raddr);
	wqe.rtag = htole32(w->rkey);
	put_wqe(qp, &wqe, w, (uint32_t)total, ERNIC_SWQE_LAST | sig |
		(bounce || read ? ERNIC_SWQE_SLOW : 0));
	if (bounce)
		qp->bounce[slot] = bounce;
	if (!read)
		return;
	sw->read_va = (uintptr_t)stage;
	sw->read_len = (uint32_t)total;
	for (size_t k = 0; k < w->num_sge; k++)
		if (w->sge[k].length)
			qp->rd_sg[(size_t)slot * ERNIC_MAX_SGE + sw->nsg++] =
				w->sge[k];
}

/* Consecutive WQEs at consecutive remote offsets; plan_rdma checked it
 * all under the same sq_lock, so translation cannot fail here. */
static void emit_rdma(struct ernic_dev *dev, struct ernic_qp *qp,
		      const struct ernic_wr *w, uint32_t nwqe, uint64_t total,
		      uint8_t sig)
{
	uint64_t roff = 0;
	uint32_t done = 0;
	size_t k = 0;

	do {
		const struct ibv_sge *s = NULL;
		uint64_t sge_off = 0;

		while (k < w->num_sge && !w->sge[k].length)
			k++;
		if (k < w->num_sge)
			s = &w->sge[k];
		do {
			struct ernic_wqe wqe = { 0 };
			bool last = done + 1 == nwqe;
			uint64_t len = 0, bus = 0;

			if (s) {
				len = s->length - sge_off;
				if (len > ERNIC_MAX_MSG_SIZE)
					len = ERNIC_MAX_MSG_SIZE;
				ernic_mr_translate(dev, qp->vqp.qp.pd, s->lkey,
						   s->addr + sge_off, len,
						   false, &bus, NULL);
			}
			/* Only the last piece is WRITE_IMM (IBTA: the
			 * immediate ends the message). */
			wqe.opcode = op_map[w->opcode].hw;
			if (wqe.opcode == ERNIC_OP_RDMA_WRITE_IMM && !last)
				wqe.opcode = ERNIC_OP_RDMA_WRITE;
			if (wqe.opcode == ERNIC_OP_RDMA_WRITE_IMM)
				wqe.immdt = htole32(w->imm);
			wqe.laddr = htole64(bus);
			wqe.length = htole32((uint32_t)len);
			wqe.roffset = htole64(w->raddr + roff);
			wqe.rtag = htole32(w->rkey);
			put_wqe(qp, &wqe, w, (uint32_t)total,
				last ? ERNIC_SWQE_LAST | sig : 0);
			/* Non-coherent DMA: the IP reads a WRITE's source
			 * from DDR. A READ's destination is cleaned too (a
			 * dirty line that the invalidate at its completion
			 * wrote back would overwrite the IP's data), and
			 * invalidated when its CQE is polled. */
			if (s) {
				ernic_dma_sync(dev->acc,
					       (const void *)(uintptr_t)(s->addr +
									 sge_off),
					       len, ERNIC_DMA_TO_DEVICE);
			}
			if (s && op_map[w->opcode].kind == OPK_READ) {
				struct ernic_swqe *sw = &qp->swqe[
					(qp->sq_pi + qp->sq_depth - 1) %
					qp->sq_depth];

				sw->read_va = s->addr + sge_off;
				sw->read_len = (uint32_t)len;
				sw->flags |= ERNIC_SWQE_SLOW;
			}
			roff += len;
			sge_off += len;
			done++;
		} while (s && sge_off < s->length);
		k++;
	} while (done < nwqe);
}

/* The IP reads an inline WRITE's payload from the slot's staging area,
 * where gather_inline put it. */
static void emit_inline_write(struct ernic_dev *dev, struct ernic_qp *qp,
			      const struct ernic_wr *w, uint64_t total,
			      uint8_t sig)
{
	const uint32_t slot = qp->sq_pi;
	struct ernic_wqe wqe = { 0 };

	ernic_dma_sync(dev->acc, ernic_stage_va(qp, slot), total,
		       ERNIC_DMA_TO_DEVICE);
	wqe.opcode = op_map[w->opcode].hw;
	if (op_map[w->opcode].imm)
		wqe.immdt = htole32(w->imm);
	wqe.laddr = htole64(total ? ernic_stage_bus(qp, slot) : 0);
	wqe.length = htole32((uint32_t)total);
	wqe.roffset = htole64(w->raddr);
	wqe.rtag = htole32(w->rkey);
	put_wqe(qp, &wqe, w, (uint32_t)total, ERNIC_SWQE_LAST | sig);
}

/* Check one work request and queue its WQEs at sq_pi; on error nothing
 * is queued. A QP in error gets only the shadow, flushed by poll_cq. */
int ernic_post_one(struct ernic_dev *dev, struct ernic_qp *qp,
		   const struct ernic_wr *w, bool flush)
{
	const bool inl = w->flags & IBV_SEND_INLINE;
	struct ernic_wqe wqe = { 0 };
	struct ernic_dma *bounce = NULL;
	uint64_t total = 0;
	uint32_t nwqe = 1;
	bool staged = false;
	uint8_t sig, kind;
	int ret;

	if ((unsigned int)w->opcode >= ERNIC_ARRAY_SIZE(op_map) ||
	    !op_map[w->opcode].ok)
		return ernic_refuse(EINVAL, "post_send: QP %u wr_id %llu: "
				    "opcode %d not supported (no atomics, "
				    "memory windows or local invalidate)",
				    qp->idx, (unsigned long long)w->wr_id,
				    (int)w->opcode);
	if (w->flags & ~ERNIC_SEND_FLAGS)
		return ernic_refuse(EINVAL, "post_send: QP %u wr_id %llu: "
				    "send_flags 0x%x not supported", qp->idx,
				    (unsigned long long)w->wr_id,
				    w->flags & ~ERNIC_SEND_FLAGS);
	kind = op_map[w->opcode].kind;
	if (kind == OPK_READ && inl)
		return ernic_refuse(EINVAL, "post_send: QP %u wr_id %llu: "
				    "inline RDMA READ", qp->idx,
				    (unsigned long long)w->wr_id);
	sig = ((w->flags & IBV_SEND_SIGNALED) || qp->sq_sig_all) ?
		      ERNIC_SWQE_SIGNALED : 0;

	if (kind == OPK_SEND) {
		wqe.opcode = op_map[w->opcode].hw;
		if (op_map[w->opcode].imm)
			wqe.immdt = htole32(w->imm);
		ret = build_send(dev, qp, w, &wqe, &total);
	} else if (inl) {
		ret = gather_inline(qp, w, &total);
		if (!ret && w->raddr + total < w->raddr)
			ret = ernic_refuse(EINVAL, "post_send: QP %u: remote "
					   "range wraps", qp->idx);
	} else {
		ret = plan_rdma(dev, qp, w, &nwqe, &total, &staged);
	}
	if (ret)
		return ret;
	if (flush)
		nwqe = 1;
	/* All pieces of a request or none. */
	if (sq_room(qp) < nwqe)
		return ernic_refuse(ENOMEM, "post_send: QP %u wr_id %llu: "
				    "%u WQEs, %u free in the SQ", qp->idx,
				    (unsigned long long)w->wr_id, nwqe,
				    sq_room(qp));

	/* A gathered message bigger than the staging slot. */
	if (!flush && total > qp->stage_size &&
	    ((kind == OPK_SEND && !inl && !wqe.laddr) || staged)) {
		bounce = ernic_bounce_get(dev, qp, total);
		if (!bounce)
			return ENOMEM;
	}
	if (flush) {
		qp->swqe[qp->sq_pi] = (struct ernic_swqe){
			.wr_id = w->wr_id,
			.length = (uint32_t)total,
			.opcode = op_map[w->opcode].hw,
			.flags = ERNIC_SWQE_LAST | sig,
		};
		qp->sq_pi = (qp->sq_pi + 1) % qp->sq_depth;
	} else if (kind == OPK_SEND) {
		if (bounce) {
			ernic_sge_gather(dev, qp->vqp.qp.pd, w->sge,
					 w->num_sge, bounce->va);
			ernic_dma_sync(dev->acc, bounce->va, total,
				       ERNIC_DMA_TO_DEVICE);
			wqe.laddr = htole64(bounce->bus);
		}
		if (bounce)
			qp->bounce[qp->sq_pi] = bounce;
		put_wqe(qp, &wqe, w, (uint32_t)total, ERNIC_SWQE_LAST | sig |
			(bounce ? ERNIC_SWQE_SLOW : 0));
	} else if (inl) {
		emit_inline_write(dev, qp, w, total, sig);
	} else if (staged) {
		emit_staged(dev, qp, w, total, sig, bounce);
	} else {
		emit_rdma(dev, qp, w, nwqe, total, sig);
	}
	return 0;
}

/* Clean ring slots [start, end) of elem bytes each: one range, or two
 * when they wrap. */
static void clean_slots(struct ernic_qp *qp, struct ernic_access *acc,
			void *base, size_t elem, uint32_t start, uint32_t end)
{
	uint8_t *b = base;

	if (start <= end) {
		ernic_dma_sync(acc, b + start * elem, (end - start) * elem,
			       ERNIC_DMA_TO_DEVICE);
		return;
	}
	ernic_dma_sync(acc, b + start * elem, (qp->sq_depth - start) * elem,
		       ERNIC_DMA_TO_DEVICE);
	ernic_dma_sync(acc, b, end * elem, ERNIC_DMA_TO_DEVICE);
}

/*
 * The doorbell slot for max_rd_atomic: the IP keeps up to 16 WQEs
 * outstanding and has no per-QP limit for reads, but the peer answers
 * only as many at once as its responder resources (our max_rd_atomic),
 * and NAKs more as an invalid request. So SQPIi stops before a READ
 * that would be one too many, and moves on as READs complete: here on
 * every post and poll, and from the interrupt thread. Returns the SQ
 * slot SQPIi may reach. Caller holds sq_lock.
 */
static uint32_t rd_gate(struct ernic_dev *dev, struct ernic_qp *qp)
{
	uint32_t db = qp->sq_db, wi;

	/* READs the IP completed (CQ write index) are no longer out. */
	wi = ernic_db_load(dev->acc, ernic_cq_db_va(dev, qp->idx));
	if (wi < qp->sq_depth) {
		while (qp->sq_hw_ci != wi && qp->sq_hw_ci != db) {
			if (qp->swqe[qp->sq_hw_ci].opcode == ERNIC_OP_RDMA_READ)
				qp->rd_inflight--;
			qp->sq_hw_ci = ernic_ring_next(qp->sq_hw_ci,
						       qp->sq_depth);
		}
	}
	for (; db != qp->sq_pi; db = ernic_ring_next(db, qp->sq_depth)) {
		if (qp->swqe[db].opcode != ERNIC_OP_RDMA_READ)
			continue;
		if (qp->rd_inflight == qp->rd_limit)
			break;
		qp->rd_inflight++;
		qp->rd_unrung--;
	}
	return db;
}

/* PG332 "WQE SQ Posting": the WQEs must be in memory before the IP sees
 * the new producer index; on a non-coherent bus that means DDR (the
 * slots; staged data was cleaned when it was written). */
static inline void sq_doorbell(struct ernic_dev *dev, struct ernic_qp *qp)
{
	/* With no READ out and none waiting, the gate has nothing to do:
	 * the slots it has not walked yet hold no READ (put_wqe counts them
	 * in rd_unrung), and it stops at sq_db. */
	uint32_t db = qp->rd_limit && (qp->rd_unrung || qp->rd_inflight) ?
			      rd_gate(dev, qp) : qp->sq_pi;

	if (db == qp->sq_db)
		return;
	if (qp->noncoherent)
		clean_slots(qp, dev->acc, qp->sq.va, ERNIC_WQE_SIZE,
			    qp->sq_db, db);
	/* ernic_wr_db orders the slots before it (udma_to_device_barrier) */
	ernic_wr_db(dev->acc, ERNIC_QP(qp->idx, ERNIC_SQPI),
		    ERNIC_FIELD_PREP(ERNIC_SQPI_IDX, db));
	qp->sq_db = db;
}

void ernic_sq_doorbell(struct ernic_dev *dev, struct ernic_qp *qp)
{
	sq_doorbell(dev, qp);
}

static void wr_from_send_wr(struct ernic_wr *w, const struct ibv_send_wr *wr)
{
	*w = (struct ernic_wr){
		.wr_id = wr->wr_id,
		.opcode = wr->opcode,
		.flags = (unsigned int)wr->send_flags,
		.raddr = wr->wr.rdma.remote_addr,
		.rkey = wr->wr.rdma.rkey,
		.sge = wr->sg_list,
		.num_sge = wr->num_sge > 0 ? (size_t)wr->num_sge : 0,
	};
	/* IMMDT holds the header value; the wire carries it big-endian. */
	if (wr->opcode == IBV_WR_SEND_WITH_INV)
		w->imm = wr->invalidate_rkey;
	else
		w->imm = be32toh(wr->imm_data);
}

/*
 * The common request without the general planning: one non-empty SGE,
 * no inline data, an RDMA WRITE, READ or SEND of up to
 * ERNIC_MAX_MSG_SIZE, the lkey translated once and the WQE written in
 * place in its ring slot. Returns 0, or -1 for anything else (the
 * general path takes it, and gives the reason when it refuses).
 * Caller holds sq_lock; the QP is in RTS.
 */
static inline __attribute__((always_inline)) int
post_fast(struct ernic_dev *dev, struct ernic_qp *qp,
	  const struct ibv_send_wr *wr)
{
	const struct ibv_sge *s = wr->sg_list;
	const uint32_t slot = qp->sq_pi;
	const uint32_t next = ernic_ring_next(slot, qp->sq_depth);
	struct ernic_wqe *wqe;
	struct ernic_swqe *sw;
	uint64_t bus;
	uint32_t imm;
	uint8_t *va, kind;

	if (wr->num_sge != 1 || !qp->cap.max_send_sge ||
	    (unsigned int)wr->opcode >= ERNIC_ARRAY_SIZE(op_map) ||
	    !op_map[wr->opcode].ok ||
	    (wr->send_flags & ~(ERNIC_SEND_FLAGS & ~IBV_SEND_INLINE)) ||
	    !s->length || s->length > ERNIC_MAX_MSG_SIZE || next == qp->sq_ci)
		return -1;
	kind = op_map[wr->opcode].kind;
	if (kind != OPK_SEND &&
	    wr->wr.rdma.remote_addr + s->length < wr->wr.rdma.remote_addr)
		return -1;
	if (ernic_mr_translate(dev, qp->vqp.qp.pd, s->lkey, s->addr,
			       s->length, kind == OPK_READ, &bus, &va))
		return -1;
	wqe = (struct ernic_wqe *)((uint8_t *)qp->sq.va +
				   (size_t)slot * ERNIC_WQE_SIZE);
	*wqe = (struct ernic_wqe){
		.wrid = htole16((uint16_t)slot),
		.length = htole32(s->length),
		.opcode = op_map[wr->opcode].hw,
	};
	if (op_map[wr->opcode].imm) {
		imm = wr->opcode == IBV_WR_SEND_WITH_INV ?
			      wr->invalidate_rkey : be32toh(wr->imm_data);
		wqe->immdt = htole32(imm);
	}
	if (kind == OPK_SEND && s->length <= ERNIC_WQE_SDATA_SIZE) {
		memcpy(wqe->sdata, va, s->length);
	} else {
		wqe->laddr = htole64(bus);
		/* A WRITE's or SEND's source is read from DDR; a READ's
		 * destination is cleaned too (emit_rdma says why). */
		if (qp->noncoherent)
			ernic_dma_sync(dev->acc, va, s->length,
				       ERNIC_DMA_TO_DEVICE);
	}
	if (kind != OPK_SEND) {
		wqe->roffset = htole64(wr->wr.rdma.remote_addr);
		wqe->rtag = htole32(wr->wr.rdma.rkey);
	}
	sw = &qp->swqe[slot];
	*sw = (struct ernic_swqe){
		.wr_id = wr->wr_id,
		.length = s->length,
		.opcode = op_map[wr->opcode].hw,
		.flags = ERNIC_SWQE_LAST |
			 (((wr->send_flags & IBV_SEND_SIGNALED) ||
			   qp->sq_sig_all) ? ERNIC_SWQE_SIGNALED : 0),
	};
	if (kind == OPK_READ) {
		sw->read_va = s->addr;
		sw->read_len = s->length;
		sw->flags |= ERNIC_SWQE_SLOW;
		qp->rd_unrung++;
	}
	qp->sq_pi = next;
	return 0;
}

static int post_wr(struct ernic_dev *dev, struct ernic_qp *qp,
		   const struct ibv_send_wr *wr, bool flush)
{
	struct ernic_wr w;

	/* Never read sg_list past the QP's max_send_sge: the caller's
	 * array need not be any longer. */
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_send_sge)
		return ernic_refuse(EINVAL, "post_send: QP %u wr_id %llu: "
				    "num_sge %d, max_send_sge %u", qp->idx,
				    (unsigned long long)wr->wr_id,
				    wr->num_sge, qp->cap.max_send_sge);
	wr_from_send_wr(&w, wr);
	return ernic_post_one(dev, qp, &w, flush);
}

/* ernic_post_send for any list, with the reason for each refusal. */
static int __attribute__((noinline))
post_send_list(struct ernic_dev *dev, struct ernic_qp *qp,
	       struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	uint32_t start;
	bool flush;
	int ret;

	ernic_spin_lock(&qp->sq_lock);
	start = qp->sq_pi;
	ret = ernic_sq_state(qp, &flush);
	if (ret) {
		ernic_refuse(ret, "post_send: QP %u: not in RTS, SQE or ERR",
			     qp->idx);
	} else {
		for (; wr; wr = wr->next) {
			ret = flush ? -1 : post_fast(dev, qp, wr);
			if (ret < 0)
				ret = post_wr(dev, qp, wr, flush);
			if (ret)
				break;
		}
	}
	/* One doorbell for everything this call queued. */
	if (qp->sq_pi != start) {
		ernic_cq_busy(qp, ERNIC_CQ_SEND);
		if (!flush)
			sq_doorbell(dev, qp);
	}
	ernic_spin_unlock(&qp->sq_lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/*
 * One work request that post_fast takes, on an unlocked QP in RTS, costs
 * no more than its own work; anything else (a list, the general plan, a
 * flush, a refusal, a lock taken) goes to post_send_list, which finds
 * the QP as it was.
 */
int ernic_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	struct ernic_qp *qp = to_eqp(ibqp);
	struct ernic_dev *dev = ctx_dev(ibqp->context);

	if (atomic_load_explicit(&qp->hw_offload, memory_order_relaxed)) {
		*bad_wr = wr;
		return ernic_offload_refuse(qp, "post_send");
	}
	if (wr && !wr->next && ernic_spin_trylock(&qp->sq_lock)) {
		if (atomic_load(&qp->dp_state) == IBV_QPS_RTS &&
		    !atomic_load(&qp->err) && !post_fast(dev, qp, wr)) {
			/* One doorbell for what this call queued. */
			ernic_cq_busy(qp, ERNIC_CQ_SEND);
			sq_doorbell(dev, qp);
			ernic_spin_unlock(&qp->sq_lock);
			return 0;
		}
		ernic_spin_unlock(&qp->sq_lock);
	}
	return post_send_list(dev, qp, wr, bad_wr);
}
