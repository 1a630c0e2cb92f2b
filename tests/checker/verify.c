// SPDX-License-Identifier: MIT
/*
 * The responder: follows the peer's script on each QP, posts a receive
 * for each SEND, SEND_IMM and WRITE_IMM (sized for it, plus slack), and
 * checks each receive completion: status, opcode, length, immediate, QP,
 * order, every byte of the buffer and that the slack and gaps were not
 * touched. Plain WRITEs are checked when the next receive-consuming op
 * of the QP completes: RC places their data before that completion.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static uint64_t guard_key(const struct chk *c)
{
	return chk_rand(c->p.seed, 0, c->my_dir, 0, LANE_GUARD);
}

/* Guard bytes depend on where they are in our local memory. */
static uint64_t gpos(const struct chk *c, const uint8_t *p)
{
	return (uint64_t)(p - c->lmem);
}

void guard_fill(struct chk *c, const struct ring *r, const struct layout *l,
		uint64_t dlen)
{
	const uint64_t gk = guard_key(c);
	uint64_t m = 0;

	for (uint32_t k = 0; k < l->n; k++) {
		uint8_t *p = layout_piece(r, l, k);
		uint64_t d = dlen - m < l->len[k] ? dlen - m : l->len[k];
		uint64_t rest = l->len[k] - d + l->gap[k];

		if (rest)
			pattern_fill(p + d, gk, gpos(c, p + d), rest);
		m += d;
	}
}

/* Report every differing byte count and the first few of them. */
static int report(struct chk *c, const struct cqp *q, const struct op *op,
		  uint32_t dir, const char *what, const uint8_t *buf,
		  uint64_t key, uint64_t start, uint64_t len, uint64_t moff,
		  bool guard)
{
	uint64_t bad = 0;
	int shown = 0;

	for (uint64_t i = 0; i < len; i++)
		bad += buf[i] != pattern_byte(key, start + i);
	chk_fail(c, "qp %u %s op %llu %s size %u: %s: %llu of %llu bytes %s",
		 q->idx, dir_name(dir), (unsigned long long)op->idx,
		 kind_name(op->kind), op->size, what,
		 (unsigned long long)bad, (unsigned long long)len,
		 guard ? "past the data were overwritten" : "differ");
	for (uint64_t i = 0; i < len && shown < 4; i++) {
		uint8_t e = pattern_byte(key, start + i);

		if (buf[i] == e)
			continue;
		shown++;
		if (guard)
			chk_mismatch(c, "qp %u %s op %llu %s: %s byte %llu past the data (slack/gap): expected untouched 0x%02x, got 0x%02x",
				     q->idx, dir_name(dir),
				     (unsigned long long)op->idx,
				     kind_name(op->kind), what,
				     (unsigned long long)(moff + i), e, buf[i]);
		else
			chk_mismatch(c, "qp %u %s op %llu %s: %s offset %llu: expected 0x%02x, got 0x%02x",
				     q->idx, dir_name(dir),
				     (unsigned long long)op->idx,
				     kind_name(op->kind), what,
				     (unsigned long long)(moff + i), e, buf[i]);
	}
	return -1;
}

/* The first dlen bytes of the pieces hold the pattern from start; the
 * rest of the pieces and the gaps are untouched guard bytes. */
int check_layout(struct chk *c, struct cqp *q, const struct op *op,
		 const struct ring *r, const struct layout *lay,
		 uint64_t key, uint64_t start, uint64_t dlen, uint32_t dir,
		 const char *what)
{
	const uint64_t gk = guard_key(c);
	uint64_t m = 0, g = 0;

	for (uint32_t k = 0; k < lay->n; k++) {
		const uint8_t *p = layout_piece(r, lay, k);
		uint64_t d = dlen - m < lay->len[k] ? dlen - m : lay->len[k];
		uint64_t rest = lay->len[k] - d + lay->gap[k];

		if (d && pattern_check(p, key, start + m, d) >= 0)
			return report(c, q, op, dir, what, p, key, start + m,
				      d, m, false);
		if (rest && pattern_check(p + d, gk, gpos(c, p + d), rest) >= 0)
			return report(c, q, op, dir, what, p + d, gk,
				      gpos(c, p + d), rest, g, true);
		m += d;
		g += rest;
	}
	if (m != dlen) {
		chk_fail(c, "internal: qp %u op %llu: buffer of %llu bytes for %llu",
			 q->idx, (unsigned long long)op->idx,
			 (unsigned long long)m, (unsigned long long)dlen);
		return -1;
	}
	return 0;
}

/* A WRITE region of ours, after the op that flushes it completed. */
static int verify_region(struct chk *c, struct cqp *q, const struct op *w)
{
	uint8_t *p = q->wt + w->roff;

	chk_sync(c, c->wmr, p, w->size, true);
	if (pattern_check(p, w->key, 0, w->size) >= 0)
		return report(c, q, w, c->peer_dir, "WRITE target", p, w->key,
			      0, w->size, 0, false);
	c->st.bytes_verified += w->size;
	q->recvd.n[w->kind]++;
	q->wfree = w->rend;
	return 0;
}

/*
 * Walk the peer's script to its next receive-consuming op (rop),
 * keeping plain WRITEs for it to flush. False when that op is not known
 * yet: past the peer's last op, or (-T) with no receive-consuming kind
 * before the peer said where it stopped.
 */
static bool rx_advance(struct chk *c, struct cqp *q)
{
	while (!q->have_rop) {
		if (q->rx.next >= q->peer_n ||
		    (!(c->p.ops & OPS_RECV) && q->peer_n == UINT64_MAX))
			return false;
		script_next(&q->rx, &q->rop);
		if (q->rop.kind == OP_READ)
			continue;
		if (q->rop.kind == OP_WRITE) {
			if (q->rnw == CHK_FLUSH_EVERY) {
				fprintf(stderr, "ernic_check: internal: qp %u: more than %d unflushed WRITEs\n",
					q->idx, CHK_FLUSH_EVERY);
				abort();
			}
			q->rw[q->rnw++] = q->rop;
			continue;
		}
		q->have_rop = true;
	}
	return true;
}

int post_recvs(struct chk *c, struct cqp *q)
{
	while (q->rq_n < c->p.rx_depth && !q->errored) {
		struct ibv_recv_wr wr, *bad;
		struct ibv_sge sg[CHK_MAX_SGE];
		struct rq_rec *r = &q->rq[q->rq_head];
		const struct op *op = &q->rop;
		uint64_t lr, dlen;
		int rc;

		if (q->stall_until) {
			if (now_s() < q->stall_until)
				break;
			q->stall_until = 0;
		}
		if (!rx_advance(c, q))
			break;
		lr = chk_rand(c->p.seed, q->idx, c->peer_dir, op->idx,
			      LANE_RECV);
		r->slack = (lr & 3) ? (uint32_t)(lr >> 2) % (CHK_SLACK + 1) : 0;
		dlen = op->kind == OP_WRITE_IMM ? 0 : op->size;
		layout_make(&r->lay, lr >> 16, (uint32_t)dlen + r->slack,
			    q->max_sge);
		if (!ring_alloc(&q->rr, layout_span(&r->lay), &r->lay.off,
				&r->lay.end))
			break;
		guard_fill(c, &q->rr, &r->lay, dlen);
		r->op = *op;
		r->nw = q->rnw;
		memcpy(r->w, q->rw, q->rnw * sizeof(q->rw[0]));
		q->rnw = 0;
		q->have_rop = false;
		r->wr_id = CHK_WR_ID(q->idx, q->recv_seq++);
		for (uint32_t k = 0; k < r->lay.n; k++)
			sg[k] = (struct ibv_sge){
				.addr = (uintptr_t)layout_piece(&q->rr, &r->lay,
								k),
				.length = r->lay.len[k], .lkey = c->lmr->lkey,
			};
		wr = (struct ibv_recv_wr){ .wr_id = r->wr_id, .sg_list = sg,
					   .num_sge = (int)r->lay.n };
		rc = ibv_post_recv(q->qp, &wr, &bad);
		if (rc && c->o.expect_err) {
			printf("ernic_check: %snote: qp %u: ibv_post_recv: %s\n",
			       c->tag, q->idx, strerror(rc));
			q->errored = true;
			return 0;
		}
		if (rc) {
			chk_fail(c, "qp %u: ibv_post_recv (for %s op %llu): %s",
				 q->idx, dir_name(c->peer_dir),
				 (unsigned long long)op->idx, strerror(rc));
			return -1;
		}
		q->rq_head = (q->rq_head + 1) % c->p.rx_depth;
		q->rq_n++;
		/* Now and then hold back: the peer runs into RNR. */
		if (c->p.rx_stall && (lr >> 40) % c->p.rx_stall == 0)
			q->stall_until = now_s() + 0.002;
	}
	return 0;
}

int on_recv_wc(struct chk *c, const struct ibv_wc *wc)
{
	struct cqp *q = wc_qp(c, wc, "receive");
	const struct rq_rec *r;
	const struct op *op;
	bool imm;

	if (!q)
		return -1;
	if (wc->status != IBV_WC_SUCCESS)
		return on_wc_error(c, q, wc, false);
	q->last_progress = now_s();
	if (q->errored)
		return 0;
	if (!q->rq_n) {
		chk_fail(c, "qp %u: receive completion wr_id %#llx with no receive outstanding",
			 q->idx, (unsigned long long)wc->wr_id);
		return -1;
	}
	r = &q->rq[q->rq_tail];
	op = &r->op;
	if (wc->wr_id != r->wr_id) {
		chk_fail(c, "qp %u: receive completion out of order: wr_id %#llx, expected %#llx (for %s op %llu %s)",
			 q->idx, (unsigned long long)wc->wr_id,
			 (unsigned long long)r->wr_id, dir_name(c->peer_dir),
			 (unsigned long long)op->idx, kind_name(op->kind));
		return -1;
	}
	if (op->idx >= q->peer_n) {
		chk_fail(c, "qp %u: a message completed the receive for %s op %llu, but the peer's last op was %llu",
			 q->idx, dir_name(c->peer_dir),
			 (unsigned long long)op->idx,
			 (unsigned long long)q->peer_n - 1);
		return -1;
	}
	imm = op->kind != OP_SEND;
	if (wc->opcode != (op->kind == OP_WRITE_IMM ?
			   IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV) ||
	    !!(wc->wc_flags & IBV_WC_WITH_IMM) != imm ||
	    (imm && be32toh(wc->imm_data) != op->imm) ||
	    (wc->byte_len != op->size &&
	     !(op->kind == OP_WRITE_IMM && wc->byte_len == 0))) {
		chk_fail(c, "qp %u %s op %llu %s size %u imm %#x: receive completion has opcode %d, byte_len %u, wc_flags %#x, imm_data %#x",
			 q->idx, dir_name(c->peer_dir),
			 (unsigned long long)op->idx, kind_name(op->kind),
			 op->size, imm ? op->imm : 0, wc->opcode, wc->byte_len,
			 wc->wc_flags,
			 (wc->wc_flags & IBV_WC_WITH_IMM) ?
				 be32toh(wc->imm_data) : 0);
		return -1;
	}
	if (check_layout(c, q, op, &q->rr, &r->lay, op->key, 0,
			 op->kind == OP_WRITE_IMM ? 0 : op->size,
			 c->peer_dir, "receive buffer"))
		return -1;
	for (uint32_t k = 0; k < r->nw; k++)
		if (verify_region(c, q, &r->w[k]))
			return -1;
	if (op->kind == OP_WRITE_IMM) {
		if (verify_region(c, q, op))
			return -1;
	} else {
		c->st.bytes_verified += op->size;
		q->recvd.n[op->kind]++;
	}
	q->verified = op->idx + 1;
	c->progress_dirty = true;
	q->rr.tail = r->lay.end;
	q->rq_tail = (q->rq_tail + 1) % c->p.rx_depth;
	q->rq_n--;
	if (!q->rq_n && q->rx.next < q->peer_n)
		c->st.rnr_waits++;
	return 0;
}

bool rx_finished(struct chk *c, struct cqp *q)
{
	if (q->peer_n == UINT64_MAX)
		return false;
	rx_advance(c, q);
	if (q->have_rop && q->rop.idx < q->peer_n)
		return false;
	if (q->rq_n && q->rq[q->rq_tail].op.idx < q->peer_n)
		return false;
	for (uint32_t k = 0; k < q->rnw; k++)
		if (q->rw[k].idx < q->peer_n) {
			chk_fail(c, "internal: qp %u: the peer's script ends with an unflushed WRITE (op %llu)",
				 q->idx, (unsigned long long)q->rw[k].idx);
			return false;
		}
	return true;
}
