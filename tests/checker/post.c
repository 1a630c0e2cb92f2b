// SPDX-License-Identifier: MIT
/*
 * The requester: posts this side's script on each QP (bounded by the
 * send queue depth, the local buffer ring and the peer's WRITE area
 * credits) and checks its send completions: status, wr_id, opcode, in
 * post order, none missing or extra; READ data when a READ retires.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "check.h"

bool ring_alloc(struct ring *r, uint64_t len, uint64_t *off, uint64_t *end)
{
	uint64_t start = r->head, o = start % r->size;

	if (o + len > r->size)
		start += r->size - o;
	if (start + len - r->tail > r->size)
		return false;
	r->head = start + len;
	*off = start % r->size;
	*end = r->head;
	return true;
}

static bool ring_fits(const struct ring *r, uint64_t len)
{
	struct ring t = *r;
	uint64_t off, end;

	return ring_alloc(&t, len, &off, &end);
}

uint64_t layout_span(const struct layout *l)
{
	uint64_t s = 0;

	for (uint32_t k = 0; k < l->n; k++)
		s += l->len[k] + l->gap[k];
	return s;
}

/* total bytes over 1..max_sge pieces, with gaps between them. */
void layout_make(struct layout *l, uint64_t r, uint32_t total,
		 uint32_t max_sge)
{
	uint32_t n = 1, left = total;

	memset(l, 0, sizeof(*l));
	if (!total)
		return;
	if (max_sge > 1)
		n = 1 + (uint32_t)(r % max_sge);
	if (n > total)
		n = total;
	l->n = n;
	for (uint32_t k = 0; k < n; k++) {
		r = chk_mix(r);
		if (k == n - 1) {
			l->len[k] = left;
		} else {
			l->len[k] = 1 + (uint32_t)(r % (left - (n - 1 - k)));
			l->gap[k] = (uint32_t)((r >> 32) % CHK_GAP);
		}
		left -= l->len[k];
	}
}

uint8_t *layout_piece(const struct ring *r, const struct layout *l,
		      uint32_t k)
{
	uint64_t o = l->off;

	for (uint32_t j = 0; j < k; j++)
		o += l->len[j] + l->gap[j];
	return r->base + o;
}

/* Next op of this side's script, with our own choices for it. */
static void gen_next(struct chk *c, struct cqp *q)
{
	struct op *op = &q->nop;

	script_next(&q->req, op);
	q->nlr = chk_rand(c->p.seed, q->idx, c->my_dir, op->idx, LANE_LOCAL);
	layout_make(&q->nlay, q->nlr >> 8, op->size, q->max_sge);
	q->have_nop = true;
	if (op->last)
		q->nops = op->idx + 1;	/* for STOP */
}

static bool want_inline(const struct chk *c, const struct cqp *q,
			const struct op *op, uint64_t lr)
{
	return (c->p.ops & OPS_INLINE) && op->kind != OP_READ &&
	       op->size <= q->max_inline && (lr & 1);
}

static const enum ibv_wr_opcode wr_opcode[OP_NKINDS] = {
	[OP_SEND] = IBV_WR_SEND, [OP_SEND_IMM] = IBV_WR_SEND_WITH_IMM,
	[OP_WRITE] = IBV_WR_RDMA_WRITE,
	[OP_WRITE_IMM] = IBV_WR_RDMA_WRITE_WITH_IMM,
	[OP_READ] = IBV_WR_RDMA_READ,
};

/* Self-test: one wrong byte in the first data-carrying op (of the kind
 * asked for) from --corrupt's index on, before it is posted. */
static void maybe_corrupt(struct chk *c, struct cqp *q, struct sq_rec *s)
{
	static bool done;
	uint8_t *p;

	if (done || c->o.corrupt < 0 || q->idx || s->op.kind == OP_READ ||
	    s->op.idx < (uint64_t)c->o.corrupt ||
	    (c->o.corrupt_kind != OP_NKINDS &&
	     c->o.corrupt_kind != s->op.kind))
		return;
	done = true;
	p = layout_piece(&q->lr, &s->lay, s->lay.n - 1) +
	    s->lay.len[s->lay.n - 1] - 1;
	*p ^= 0x5a;
	printf("ernic_check: self-test: corrupted the last byte (offset %u) of qp 0 %s op %llu %s size %u\n",
	       s->op.size - 1, dir_name(c->my_dir),
	       (unsigned long long)s->op.idx, kind_name(s->op.kind),
	       s->op.size);
}

static int post_batch(struct chk *c, struct cqp *q, struct ibv_send_wr *wr,
		      uint32_t n)
{
	struct ibv_send_wr *bad = NULL;
	uint32_t undone = 0;
	int rc;

	if (!n)
		return 0;
	for (uint32_t k = 0; k + 1 < n; k++)
		wr[k].next = &wr[k + 1];
	wr[n - 1].next = NULL;
	rc = ibv_post_send(q->qp, wr, &bad);
	if (!rc)
		return 0;
	for (struct ibv_send_wr *w = bad; w; w = w->next)
		undone++;
	if (c->o.expect_err) {
		/* The QP may have failed under us: its error completion
		 * will tell. Forget what was not posted. */
		printf("ernic_check: %snote: qp %u: ibv_post_send: %s\n",
		       c->tag, q->idx, strerror(rc));
		q->sq_head = (q->sq_head + c->p.window - undone) % c->p.window;
		q->sq_n -= undone;
		q->posted -= undone;
		q->errored = true;
		return 0;
	}
	chk_fail(c, "qp %u: ibv_post_send (%s op %llu): %s", q->idx,
		 dir_name(c->my_dir),
		 bad ? (unsigned long long)CHK_WR_IDX(bad->wr_id) : 0ull,
		 strerror(rc));
	return -1;
}

int post_sends(struct chk *c, struct cqp *q)
{
	struct ibv_send_wr wr[CHK_BATCH];
	struct ibv_sge sg[CHK_BATCH][CHK_MAX_SGE];
	const uint64_t wstride = (c->wt_size + 4095) & ~4095ull;
	uint32_t nb = 0, batch = 0;

	while (!q->errored) {
		struct sq_rec *s;
		struct op *op;
		uint64_t lr;
		bool sig;

		if (!q->have_nop) {
			if (q->req.ended) {
				q->wait = W_DONE;
				break;
			}
			gen_next(c, q);
		}
		op = &q->nop;
		if (q->sq_n == c->p.window) {
			q->wait = W_WINDOW;
			break;
		}
		if ((op->kind == OP_WRITE || op->kind == OP_WRITE_IMM) &&
		    op->rend > q->credit + c->wt_size &&
		    !(c->o.expect_err && c->peer_gone)) {
			q->wait = W_CREDIT;
			break;
		}
		s = &q->sq[q->sq_head];
		s->lay = q->nlay;
		if (!ring_alloc(&q->lr, layout_span(&s->lay), &s->lay.off,
				&s->lay.end)) {
			q->wait = W_RING;
			break;
		}
		q->wait = W_NONE;
		s->op = *op;
		lr = q->nlr;
		q->have_nop = false;
		op = &s->op;
		if (op->kind == OP_READ) {
			guard_fill(c, &q->lr, &s->lay, op->size);
		} else {
			uint64_t m = 0;

			for (uint32_t k = 0; k < s->lay.n; k++) {
				pattern_fill(layout_piece(&q->lr, &s->lay, k),
					     op->key, m, s->lay.len[k]);
				m += s->lay.len[k];
			}
			maybe_corrupt(c, q, s);
		}
		s->inl = want_inline(c, q, op, lr);
		if (!q->req.ended)
			gen_next(c, q);
		/* Signal the last op, often enough, whenever the queue or
		 * the ring would be full after it: nothing else would ever
		 * complete what is outstanding. */
		sig = op->last || q->sq_n + 1 == c->p.window ||
		      q->since_sig + 1 >= c->p.signal_every ||
		      !((lr >> 1) & 3) ||
		      (q->have_nop &&
		       !ring_fits(&q->lr, layout_span(&q->nlay)));
		s->signaled = sig;
		s->wr_id = CHK_WR_ID(q->idx, op->idx);
		q->since_sig = sig ? 0 : q->since_sig + 1;

		if (!batch)
			batch = 1 + (uint32_t)((lr >> 4) % CHK_BATCH);
		wr[nb] = (struct ibv_send_wr){
			.wr_id = s->wr_id, .sg_list = sg[nb],
			.num_sge = (int)s->lay.n, .opcode = wr_opcode[op->kind],
			.send_flags = (sig ? IBV_SEND_SIGNALED : 0) |
				      (s->inl ? IBV_SEND_INLINE : 0),
		};
		for (uint32_t k = 0; k < s->lay.n; k++)
			sg[nb][k] = (struct ibv_sge){
				.addr = (uintptr_t)layout_piece(&q->lr, &s->lay,
								k),
				.length = s->lay.len[k], .lkey = c->lmr->lkey,
			};
		if (op->kind == OP_SEND_IMM || op->kind == OP_WRITE_IMM)
			wr[nb].imm_data = htobe32(op->imm);
		if (op->kind == OP_WRITE || op->kind == OP_WRITE_IMM) {
			wr[nb].wr.rdma.remote_addr =
				c->peer_wt_addr + q->idx * wstride + op->roff;
			wr[nb].wr.rdma.rkey = c->peer_wt_rkey;
		} else if (op->kind == OP_READ) {
			wr[nb].wr.rdma.remote_addr = c->peer_rs_addr + op->roff;
			wr[nb].wr.rdma.rkey = c->peer_rs_rkey;
		}
		q->sq_head = (q->sq_head + 1) % c->p.window;
		q->sq_n++;
		q->posted++;
		if (++nb == batch) {
			if (post_batch(c, q, wr, nb))
				return -1;
			nb = batch = 0;
		}
	}
	return post_batch(c, q, wr, nb);
}

static const enum ibv_wc_opcode wc_opcode[OP_NKINDS] = {
	[OP_SEND] = IBV_WC_SEND, [OP_SEND_IMM] = IBV_WC_SEND,
	[OP_WRITE] = IBV_WC_RDMA_WRITE, [OP_WRITE_IMM] = IBV_WC_RDMA_WRITE,
	[OP_READ] = IBV_WC_RDMA_READ,
};

/* A WR is done: READ data checked, its buffer back to the ring. */
static int retire(struct chk *c, struct cqp *q)
{
	struct sq_rec *s = &q->sq[q->sq_tail];
	int rc = 0;

	if (s->op.kind == OP_READ) {
		rc = check_layout(c, q, &s->op, &q->lr, &s->lay,
				  chk_rand(c->p.seed, 0, c->peer_dir, 0,
					   LANE_RSRC),
				  s->op.roff, s->op.size, c->my_dir,
				  "READ destination");
		c->st.bytes_verified += s->op.size;
	}
	q->sent.n[s->op.kind]++;
	q->sent.inl += s->inl;
	q->lr.tail = s->lay.end;
	q->sq_tail = (q->sq_tail + 1) % c->p.window;
	q->sq_n--;
	q->retired++;
	return rc;
}

struct cqp *wc_qp(struct chk *c, const struct ibv_wc *wc, const char *what)
{
	uint32_t i = CHK_WR_QP(wc->wr_id);

	if (i >= c->p.nqp || c->q[i].qp->qp_num != wc->qp_num) {
		chk_fail(c, "%s completion with unknown wr_id %#llx / qp_num %u (status %s)",
			 what, (unsigned long long)wc->wr_id, wc->qp_num,
			 ibv_wc_status_str(wc->status));
		return NULL;
	}
	return &c->q[i];
}

int on_send_wc(struct chk *c, const struct ibv_wc *wc)
{
	struct cqp *q = wc_qp(c, wc, "send");
	uint32_t k, j;

	if (!q)
		return -1;
	if (wc->status != IBV_WC_SUCCESS)
		return on_wc_error(c, q, wc, true);
	q->last_progress = q->last_ok = now_s();
	if (q->errored)
		return 0;
	/* The first signaled WR outstanding must be this one. */
	for (k = 0, j = q->sq_tail; k < q->sq_n && !q->sq[j].signaled; k++)
		j = (j + 1) % c->p.window;
	if (k == q->sq_n) {
		chk_fail(c, "qp %u: extra send completion wr_id %#llx (%s op %llu): no signaled WR outstanding",
			 q->idx, (unsigned long long)wc->wr_id,
			 dir_name(c->my_dir),
			 (unsigned long long)CHK_WR_IDX(wc->wr_id));
		return -1;
	}
	if (q->sq[j].wr_id != wc->wr_id) {
		chk_fail(c, "qp %u: send completion out of order: wr_id %#llx (op %llu), expected %#llx (op %llu %s)",
			 q->idx, (unsigned long long)wc->wr_id,
			 (unsigned long long)CHK_WR_IDX(wc->wr_id),
			 (unsigned long long)q->sq[j].wr_id,
			 (unsigned long long)q->sq[j].op.idx,
			 kind_name(q->sq[j].op.kind));
		return -1;
	}
	if (wc->opcode != wc_opcode[q->sq[j].op.kind]) {
		chk_fail(c, "qp %u: %s op %llu %s: completion opcode %d, expected %d",
			 q->idx, dir_name(c->my_dir),
			 (unsigned long long)q->sq[j].op.idx,
			 kind_name(q->sq[j].op.kind), wc->opcode,
			 wc_opcode[q->sq[j].op.kind]);
		return -1;
	}
	for (uint32_t n = 0; n <= k; n++)
		if (retire(c, q))
			return -1;
	return 0;
}

/*
 * An error completion. Without --expect-error that is a failure. With
 * it, the QP's first error that is not a flush must be one of those
 * expected; what was outstanding is dropped (after checking the READs
 * that completed before the failed WR) and the QP is done. The line
 * says how long the QP's requester had gone without a successful
 * completion (idle=: its retries' time) and when it failed by the wall
 * clock (at=), for fault tests' timing.
 */
int on_wc_error(struct chk *c, struct cqp *q, const struct ibv_wc *wc,
		bool send)
{
	const char *side = send ? "send" : "receive";
	const bool flush = wc->status == IBV_WC_WR_FLUSH_ERR;
	const double now = now_s();

	q->last_progress = now;
	if (!c->o.expect_err) {
		char why[160];

		chk_ernic_why(c, q->qp, why, sizeof(why));
		chk_fail(c, "qp %u: %s completion error: %s (%d), wr_id %#llx (%s op %llu), vendor_err %#x%s",
			 q->idx, side, ibv_wc_status_str(wc->status),
			 wc->status, (unsigned long long)wc->wr_id,
			 send ? dir_name(c->my_dir) : "receive",
			 (unsigned long long)CHK_WR_IDX(wc->wr_id),
			 wc->vendor_err, why);
		return -1;
	}
	if (send && !q->errored) {
		while (q->sq_n && q->sq[q->sq_tail].wr_id != wc->wr_id)
			if (retire(c, q))
				return -1;
	}
	/* The first error, and the first that says why (not a flush). */
	if (!q->errored || (q->err_status < 0 && !flush))
		printf("ernic_check: %sqp %u: %s completion %s (wr_id %#llx) after %llu ops completed (idle=%.3fs at=%.6f)\n",
		       c->tag, q->idx, side, ibv_wc_status_str(wc->status),
		       (unsigned long long)wc->wr_id,
		       (unsigned long long)q->retired, now - q->last_ok,
		       wall_s());
	q->errored = true;
	q->sq_n = 0;
	q->rq_n = 0;
	if (flush || q->err_status >= 0)
		return 0;
	q->err_status = wc->status;
	if (!(c->o.expect_err & (1u << wc->status))) {
		chk_fail(c, "qp %u: %s completion %s, not one of the expected errors",
			 q->idx, side, ibv_wc_status_str(wc->status));
		return -1;
	}
	return 0;
}

void qp_wait_desc(const struct chk *c, const struct cqp *q, char *buf,
		  size_t len)
{
	static const char *const why[] = {
		[W_NONE] = "-", [W_WINDOW] = "send queue full",
		[W_CREDIT] = "peer to free its WRITE area (PROGRESS)",
		[W_RING] = "local buffer ring",
		[W_DONE] = "nothing (script done)", [W_ERROR] = "nothing (error)",
	};
	const struct sq_rec *s = q->sq_n ? &q->sq[q->sq_tail] : NULL;

	int n;

	n = snprintf(buf, len, "posted %llu%s, completed %llu, outstanding %u",
		     (unsigned long long)q->posted,
		     q->req.ended && !q->have_nop ? " (all)" : "",
		     (unsigned long long)q->retired, q->sq_n);
	if (s && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n,
			      " (oldest: op %llu %s size %u%s), waiting for its completions; next post waits for",
			      (unsigned long long)s->op.idx,
			      kind_name(s->op.kind), s->op.size,
			      s->signaled ? ", signaled" : "");
	else if (n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ", waiting for");
	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " %s",
			 why[q->errored ? W_ERROR : q->wait]);
}
