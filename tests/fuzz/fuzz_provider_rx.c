// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the provider reading what the device wrote. poll_cq
 * runs (ernic_poll.c, ernic_recv.c, ernic_post.c, compiled in) over a QP
 * whose CQ ring and doorbell, RQ write pointers, RX side band (RXLEN and
 * IMMQ entries), RQ elements and STATQPi all come from the input, as a
 * broken or hostile FPGA design could leave them. Its posted receives
 * are buffers of chosen lengths, each ending at a PROT_NONE page.
 *
 * Oracles (any failure aborts): no access outside any buffer (guard
 * pages, ASan, UBSan), poll_cq never returns more than asked or less
 * than 0, every completion names a work request that was posted and not
 * yet completed, in order per queue, with a known status, a successful
 * receive is no longer than its buffer, and every RQCIi written is one
 * past the grant's last element, counted from the next element to read
 * (flags & 4: an RQ of DEPTH + 1 elements, which does not divide 2^32,
 * with its 32-bit element counts about to wrap).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ernic.h"
#include "ernic_cq.h"

#define DEPTH 16u		/* SQ, CQ, RQ ring and receive slots */
#define QPN 2u
#define RECV_ID 1000u
#define SEND_ID 2000u

/* ---- what the provider needs from files not compiled in ---- */

int ernic_log_level;

void ernic_log(const char *fmt, ...)
{
	(void)fmt;		/* the provider's complaints are expected */
}

void ernic_dma_put(struct ernic_dev *dev, struct ernic_dma *dma)
{
	(void)dev;		/* no posts here: no bounce buffers */
	(void)dma;
}

/* ---- a device whose registers say what the input says ---- */

struct fake_acc {
	struct ernic_access base;
	uint32_t statqp;
	const struct ernic_qp *qp;
};

static uint32_t fake_rd(struct ernic_access *acc, uint32_t off)
{
	struct fake_acc *f = (struct fake_acc *)acc;

	return off == ERNIC_QP(QPN, ERNIC_STATQP) ? f->statqp : 0;
}

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						      noreturn));

static void fake_wr(struct ernic_access *acc, uint32_t off, uint32_t val)
{
	const struct ernic_qp *qp = ((struct fake_acc *)acc)->qp;
	uint32_t want;

	if (off != ERNIC_QP(QPN, ERNIC_RQCI))
		return;
	/* the grant was just recorded (rq_grant) */
	want = (uint32_t)(((uint64_t)qp->rq_ci + (qp->rq_grant - qp->rq_done) +
			   1) % qp->rq_depth);
	if (val != ERNIC_FIELD_PREP(ERNIC_RQCI_IDX, want))
		bad("RQCI 0x%x: element %u read next, %u granted ahead of it, "
		    "depth %u: want slot %u", val, qp->rq_ci,
		    qp->rq_grant - qp->rq_done, qp->rq_depth, want);
}

static const struct ernic_access_ops fake_ops = {
	.name = "fuzz",
	.reg_read = fake_rd,
	.reg_write = fake_wr,
};

/* ---- memory ---- */

/* len bytes that end where a PROT_NONE page begins. */
static void *guarded(size_t len, void **map, size_t *map_len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t body = (len + pg - 1) & ~(pg - 1);
	uint8_t *m;

	*map_len = body + pg;
	m = mmap(NULL, *map_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		abort();
	if (mprotect(m + body, pg, PROT_NONE))
		abort();
	*map = m;
	return m + body - len;
}

/* Input bytes, then zeros. */
struct in {
	const uint8_t *p;
	size_t n;
};

static uint32_t take(struct in *in, size_t n)
{
	uint32_t v = 0;

	for (size_t k = 0; k < n; k++) {
		uint8_t b = 0;

		if (in->n) {
			b = *in->p++;
			in->n--;
		}
		v |= (uint32_t)b << (8 * k);
	}
	return v;
}

struct world {
	struct fake_acc acc;
	struct ernic_dev *dev;
	struct ernic_context *ctx;
	struct ernic_cq *cq;
	struct ernic_cq *cq2;		/* flags & 2: the QP's recv_cq */
	struct ernic_qp *qp;
	void *maps[DEPTH + 4];
	size_t map_lens[DEPTH + 4];
	unsigned int nmaps;
	uint32_t rlen[DEPTH];
	uint32_t next_recv, next_send, nrecv, nsend;
};

static void *wmem(struct world *w, size_t len)
{
	void *p = guarded(len, &w->maps[w->nmaps], &w->map_lens[w->nmaps]);

	w->nmaps++;
	return p;
}

static void build(struct world *w, struct in *in)
{
	struct ernic_qp *qp;
	uint8_t flags = (uint8_t)take(in, 1);
	uint32_t depth_rq = (flags & 4) ? DEPTH + 1 : DEPTH, n, base = 0;

	memset(w, 0, sizeof(*w));
	w->acc.base.ops = &fake_ops;
	w->acc.statqp = take(in, 4);
	w->dev = calloc(1, sizeof(*w->dev));
	w->ctx = calloc(1, sizeof(*w->ctx));
	w->cq = calloc(1, sizeof(*w->cq));
	w->cq2 = calloc(1, sizeof(*w->cq2));
	w->qp = qp = calloc(1, sizeof(*qp));
	if (!w->dev || !w->ctx || !w->cq || !w->cq2 || !qp)
		abort();
	/* as ernic_cq_attach: no queue is quiet yet */
	for (n = 0; n < 2 * ERNIC_ARRAY_SIZE(w->cq->quiet[0]); n++) {
		atomic_init(&w->cq->quiet[n % 2][n / 2], ERNIC_QUIET_NONE);
		atomic_init(&w->cq2->quiet[n % 2][n / 2], ERNIC_QUIET_NONE);
	}
	w->dev->acc = &w->acc.base;
	w->dev->conf.c_num_qp = 4;
	w->dev->dbpool.va = wmem(w, 4 * ERNIC_DB_STRIDE);
	w->ctx->dev = w->dev;
	w->cq->vcq.cq.context = &w->ctx->ibv_ctx.context;
	w->cq->dev = w->dev;	/* as cq_new; fake_ops: a coherent bus */
	ernic_spin_init(&w->cq->lock);

	w->acc.qp = qp;
	qp->idx = QPN;
	/* as create_qp; fake_ops has no db_word: RQCIi through its
	 * reg_write */
	qp->dev = w->dev;
	ernic_rqci_bind(&w->acc.base, qp);
	qp->sq_depth = DEPTH;
	qp->rq_depth = depth_rq;
	if (flags & 4) {
		/* elements read since RESET: a few short of 2^32, the next
		 * one in any slot */
		base = 0u - take(in, 1) % 8;
		qp->rq_ci = take(in, 1) % depth_rq;
		qp->rq_done = qp->rq_ev_seen = base;
	}
	qp->rwqe_depth = DEPTH;
	qp->cq.va = wmem(w, DEPTH * ERNIC_CQE_SIZE);
	qp->rq.va = wmem(w, ernic_rq_block_size(depth_rq, ERNIC_RQ_ELEM_SIZE));
	qp->swqe = calloc(DEPTH, sizeof(*qp->swqe));
	qp->rwqe = calloc(DEPTH, sizeof(*qp->rwqe));
	if (!qp->swqe || !qp->rwqe)
		abort();
	qp->cap.max_recv_sge = qp->cap.max_send_sge = 1;
	ernic_spin_init(&qp->sq_lock);
	ernic_spin_init(&qp->rq_lock);
	atomic_init(&qp->dp_state, (flags & 1) ? IBV_QPS_ERR : IBV_QPS_RTS);
	atomic_init(&qp->err, (flags & 1) != 0);
	atomic_init(&qp->pmtu_log2, ERNIC_PMTU_LOG2_MIN + take(in, 1) % 5);
	qp->vqp.qp.send_cq = &w->cq->vcq.cq;
	/* flags & 2: another recv_cq (ernic_rq_poll's sq_settled); the
	 * receive side is still polled through w->cq */
	qp->vqp.qp.recv_cq = (flags & 2) ? &w->cq2->vcq.cq : &w->cq->vcq.cq;
	w->cq->qps[QPN] = qp;
	w->cq->nwords = 1;
	/* both roles' active bits and quiet words in w->cq (ernic_cq_attach's
	 * words) */
	qp->busy_bit = UINT64_C(1) << ((QPN - ERNIC_FIRST_RC_QP) % 64);
	for (n = 0; n < 2; n++) {
		qp->busy_word[n] = &w->cq->active[n][0];
		qp->quiet_word[n] = &w->cq->quiet[n][QPN - ERNIC_FIRST_RC_QP];
	}
	ernic_cq_busy(qp, ERNIC_CQ_SEND);
	ernic_cq_busy(qp, ERNIC_CQ_RECV);

	/* posted receives, each buffer against a guard page */
	w->nrecv = take(in, 1) % DEPTH;
	for (n = 0; n < w->nrecv; n++) {
		struct ernic_rwqe *r = &qp->rwqe[n];

		w->rlen[n] = take(in, 2) % 20000;
		r->wr_id = RECV_ID + n;
		r->length = w->rlen[n];
		r->va = w->rlen[n] ? wmem(w, w->rlen[n]) : NULL;
		r->budget = 1 + take(in, 1) % 8;
		qp->rq_budget += r->budget;
		qp->rq_credit++;
	}
	qp->rwqe_pi = w->nrecv;
	/* what post_recv would have granted the IP (ernic_recv.c) */
	qp->rq_grant = base + (qp->rq_budget < depth_rq - 1 ?
			       (uint32_t)qp->rq_budget : depth_rq - 1);
	/* posted sends: the shadows of the SQ slots */
	w->nsend = take(in, 1) % DEPTH;
	for (n = 0; n < w->nsend; n++) {
		static const uint8_t op[] = {
			ERNIC_OP_RDMA_WRITE, ERNIC_OP_SEND, ERNIC_OP_RDMA_READ,
			ERNIC_OP_SEND_IMM, ERNIC_OP_RDMA_WRITE_IMM,
			ERNIC_OP_SEND_INV,
		};
		uint8_t b = (uint8_t)take(in, 1);

		qp->swqe[n] = (struct ernic_swqe){
			.wr_id = SEND_ID + n,
			.opcode = op[b % sizeof(op)],
			.flags = (uint8_t)((b >> 4) & 3),
			.length = take(in, 2),
		};
	}
	qp->sq_pi = qp->sq_db = w->nsend;
}

/* What the device wrote: doorbells, CQEs, RXLEN, IMMQ, elements. */
static void device_writes(struct world *w, struct in *in)
{
	struct ernic_qp *qp = w->qp;
	volatile uint32_t *cdb = ernic_cq_db_va(w->dev, QPN);
	volatile uint32_t *rdb = ernic_rq_db_va(w->dev, QPN);
	uint8_t *rq = qp->rq.va;
	uint32_t *rxlen = (uint32_t *)(rq + ernic_rxlen_off(qp->rq_depth,
							    ERNIC_RQ_ELEM_SIZE));
	uint8_t *immq = rq + ernic_immq_off(qp->rq_depth, ERNIC_RQ_ELEM_SIZE);

	*cdb = take(in, 1) % (DEPTH + 4);
	rdb[ERNIC_RQDB_WPTR / 4] = take(in, 1) % (DEPTH + 4);
	rdb[ERNIC_RQDB_IMMQ_WPTR / 4] = take(in, 1) % (DEPTH + 4);
	for (uint32_t k = 0; k < DEPTH; k++)
		((uint32_t *)qp->cq.va)[k] = take(in, 4);
	for (uint32_t k = 0; k < qp->rq_depth; k++)
		rxlen[k] = take(in, 4);
	for (uint32_t k = 0; k < qp->rq_depth * ERNIC_IMMQ_ENTRY_SIZE; k++)
		immq[k] = (uint8_t)take(in, 1);
	/* element bytes: whatever is left, spread over the elements */
	for (uint32_t k = 0; in->n && k < qp->rq_depth; k++) {
		size_t n = in->n < 64 ? in->n : 64;

		memcpy(rq + (size_t)k * ERNIC_RQ_ELEM_SIZE, in->p, n);
		in->p += n;
		in->n -= n;
	}
}

static void bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fuzz_provider_rx: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

static bool status_known(enum ibv_wc_status s)
{
	return s == IBV_WC_SUCCESS || s == IBV_WC_LOC_LEN_ERR ||
	       s == IBV_WC_GENERAL_ERR || s == IBV_WC_WR_FLUSH_ERR ||
	       s == IBV_WC_REM_INV_REQ_ERR || s == IBV_WC_REM_ACCESS_ERR ||
	       s == IBV_WC_REM_OP_ERR || s == IBV_WC_REM_INV_RD_REQ_ERR ||
	       s == IBV_WC_RETRY_EXC_ERR || s == IBV_WC_RNR_RETRY_EXC_ERR;
}

static void check_wc(struct world *w, const struct ibv_wc *wc)
{
	if (!status_known(wc->status))
		bad("wr_id %llu: status %d", (unsigned long long)wc->wr_id,
		    wc->status);
	if (wc->opcode == IBV_WC_RECV ||
	    wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		/* receives complete in posting order, each once */
		if (wc->wr_id != RECV_ID + w->next_recv ||
		    w->next_recv >= w->nrecv)
			bad("receive completion wr_id %llu, want %u of %u",
			    (unsigned long long)wc->wr_id,
			    RECV_ID + w->next_recv, w->nrecv);
		if (wc->status == IBV_WC_SUCCESS &&
		    wc->opcode == IBV_WC_RECV &&
		    wc->byte_len > w->rlen[w->next_recv])
			bad("receive %u: %u bytes into a %u-byte buffer",
			    w->next_recv, wc->byte_len,
			    w->rlen[w->next_recv]);
		w->next_recv++;
		return;
	}
	/* sends: later than any earlier one, and posted */
	if (wc->wr_id < SEND_ID + w->next_send ||
	    wc->wr_id >= SEND_ID + w->nsend)
		bad("send completion wr_id %llu (opcode %d, status %d): "
		    "next %u of %u", (unsigned long long)wc->wr_id,
		    wc->opcode, wc->status, SEND_ID + w->next_send, w->nsend);
	w->next_send = (uint32_t)(wc->wr_id - SEND_ID) + 1;
}

static void teardown(struct world *w)
{
	for (unsigned int k = 0; k < w->nmaps; k++)
		munmap(w->maps[k], w->map_lens[k]);
	free(w->qp->swqe);
	free(w->qp->rwqe);
	free(w->qp);
	free(w->cq);
	free(w->cq2);
	free(w->ctx);
	free(w->dev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct ibv_wc wc[DEPTH * 2];
	static struct world w;
	uint8_t polls;

	build(&w, &in);
	polls = (uint8_t)(1 + take(&in, 1) % 4);
	device_writes(&w, &in);
	for (uint8_t k = 0; k < polls; k++) {
		int ne = 1 + (int)(k * 7) % (int)(DEPTH * 2);
		int n = ernic_poll_cq(&w.cq->vcq.cq, ne, wc);

		if (n < 0 || n > ne)
			bad("poll_cq(%d) returned %d", ne, n);
		for (int j = 0; j < n; j++)
			check_wc(&w, &wc[j]);
	}
	teardown(&w);
	return 0;
}
