// SPDX-License-Identifier: MIT
/*
 * Scatter/gather lists on an IP that takes one buffer per WQE (PG332
 * Table 2-1: one LADDR) and writes each incoming SEND packet into one
 * RQ element.
 *
 * Send side: a request with more than one non-empty SGE and at most
 * ERNIC_STAGE_SIZE bytes is gathered into its SQ slot's staging area
 * (DMA memory the IP reads like any buffer), and a READ of that kind
 * lands there and is scattered into its SGEs when poll_cq sees its
 * completion. One SGE stays zero-copy. A larger request with several
 * SGEs goes the same way through DMA memory allocated for it (a bounce
 * buffer, freed when its slot retires: rarer, and slower), so that
 * every request takes one SQ slot; only beyond 8 MiB (one WQE's limit)
 * are WRITEs and READs split into one WQE per SGE (ernic_post.c).
 *
 * Receive side: the provider copies every packet out of its RQ element
 * anyway; with several SGEs the copy follows the list.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ernic.h"

int ernic_refuse(int err, const char *fmt, ...)
{
	va_list ap;
	char msg[256];

	if (ernic_log_level < ERNIC_LOG_DEBUG)
		return err;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ernic_log("%s: %s", msg, strerror(err));
	return err;
}

int ernic_sge_refuse(const struct ernic_qp *qp, const char *verb,
		     uint64_t wr_id, size_t k, const struct ibv_sge *s,
		     bool need_write)
{
	return ernic_refuse(EINVAL, "%s: QP %u wr_id %llu: SGE %zu (lkey "
			    "0x%x, addr 0x%llx, %u B) is not in %s MR of the "
			    "QP's PD", verb, qp->idx,
			    (unsigned long long)wr_id, k, s->lkey,
			    (unsigned long long)s->addr, s->length,
			    need_write ? "a locally writable" : "an");
}

int ernic_sge_check(struct ernic_dev *dev, struct ernic_qp *qp,
		    const char *verb, uint64_t wr_id,
		    const struct ibv_sge *sge, size_t n, bool need_write,
		    uint64_t *sum, size_t *nonempty)
{
	uint64_t total = 0;
	size_t ne = 0;

	for (size_t k = 0; k < n; k++) {
		const struct ibv_sge *s = &sge[k];

		if (!s->length)
			continue;
		if (ernic_mr_translate(dev, qp->vqp.qp.pd, s->lkey, s->addr,
				       s->length, need_write, NULL, NULL))
			return ernic_sge_refuse(qp, verb, wr_id, k, s,
						need_write);
		total += s->length;
		ne++;
	}
	*sum = total;
	*nonempty = ne;
	return 0;
}

void ernic_sge_gather(struct ernic_dev *dev, struct ibv_pd *pd,
		      const struct ibv_sge *sge, size_t n, uint8_t *dst)
{
	for (size_t k = 0; k < n; k++) {
		uint8_t *va;

		if (!sge[k].length)
			continue;
		/* ernic_sge_check passed under the same QP lock */
		if (ernic_mr_translate(dev, pd, sge[k].lkey, sge[k].addr,
				       sge[k].length, false, NULL, &va))
			continue;
		memcpy(dst, va, sge[k].length);
		dst += sge[k].length;
	}
}

enum ibv_wc_status ernic_read_scatter(struct ernic_dev *dev,
				      struct ernic_qp *qp, uint32_t slot)
{
	const struct ibv_sge *sg = &qp->rd_sg[(size_t)slot * ERNIC_MAX_SGE];
	const uint8_t *src = qp->bounce[slot] ? qp->bounce[slot]->va :
						ernic_stage_va(qp, slot);
	enum ibv_wc_status st = IBV_WC_SUCCESS;

	/* The SGEs were checked at post time; an MR deregistered since
	 * then gets nothing (the kernel would have kept it pinned, but
	 * writing through a stale lkey here could fault). */
	for (uint32_t k = 0; k < qp->swqe[slot].nsg; k++) {
		uint8_t *va;

		if (ernic_mr_translate(dev, qp->vqp.qp.pd, sg[k].lkey,
				       sg[k].addr, sg[k].length, true, NULL,
				       &va)) {
			ernic_log("QP %u: READ completed into SGE %u whose MR "
				  "is gone", qp->idx, k);
			st = IBV_WC_LOC_PROT_ERR;
		} else {
			memcpy(va, src, sg[k].length);
		}
		src += sg[k].length;
	}
	return st;
}

void ernic_recv_scatter(const struct ernic_qp *qp, uint32_t ri, uint32_t off,
			const uint8_t *src, uint32_t len)
{
	const struct ernic_rsg *sg = &qp->rsg[(size_t)ri * qp->cap.max_recv_sge];
	const uint32_t n = qp->rwqe[ri].nsg;

	for (uint32_t k = 0; k < n && len; k++) {
		uint32_t chunk;

		if (off >= sg[k].len) {
			off -= sg[k].len;
			continue;
		}
		chunk = sg[k].len - off;
		if (chunk > len)
			chunk = len;
		memcpy(sg[k].va + off, src, chunk);
		src += chunk;
		len -= chunk;
		off = 0;
	}
}

struct ernic_dma *ernic_bounce_get(struct ernic_dev *dev, struct ernic_qp *qp,
				   uint64_t len)
{
	struct ernic_dma *d = calloc(1, sizeof(*d));

	if (d && !dev->acc->ops->dma_alloc(dev->acc, len, 64, d))
		return d;
	free(d);
	ernic_refuse(ENOMEM, "post_send: QP %u: no DMA memory to gather a "
		     "%llu B message", qp->idx, (unsigned long long)len);
	return NULL;
}

void ernic_bounce_put(struct ernic_dev *dev, struct ernic_qp *qp,
		      uint32_t from, uint32_t to)
{
	if (!qp->bounce)
		return;
	for (uint32_t k = from; k != to; k = (k + 1) % qp->sq_depth) {
		if (!qp->bounce[k])
			continue;
		ernic_dma_put(dev, qp->bounce[k]);
		free(qp->bounce[k]);
		qp->bounce[k] = NULL;
	}
}
