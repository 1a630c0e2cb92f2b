// SPDX-License-Identifier: MIT
/*
 * Receive side. ERNIC has no receive WQEs: the IP stores each incoming
 * SEND packet in the next RQ element and moves the RQ write pointer
 * (PG332 "Receiving Incoming RDMA SEND Messages"). Posted receive work
 * requests form a software ring; poll_cq copies each message into the
 * head request, with packet lengths, opcodes and immediate data from the
 * RX side band (ernic_hw.h), and hands the elements back through RQCIi.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "ernic.h"
#include "ernic_cq.h"

/* IBTA RC SEND opcodes (BTH) as RXLEN reports them. */
static const struct {
	bool ok;
	bool first;		/* starts a message */
	bool last;		/* ends it */
	uint8_t ext;		/* Table 1-1 type of its IMMQ entry, or 0 */
} rx_op[] = {
	[0x00] = { true, true, false, 0 },			/* FIRST */
	[0x01] = { true, false, false, 0 },			/* MIDDLE */
	[0x02] = { true, false, true, 0 },			/* LAST */
	[0x03] = { true, false, true, ERNIC_IMMINV_SEND_IMM },	/* LAST_IMM */
	[0x04] = { true, true, true, 0 },			/* ONLY */
	[0x05] = { true, true, true, ERNIC_IMMINV_SEND_IMM },	/* ONLY_IMM */
	[0x16] = { true, false, true, ERNIC_IMMINV_SEND_INV },	/* LAST_INV */
	[0x17] = { true, true, true, ERNIC_IMMINV_SEND_INV },	/* ONLY_INV */
};

/*
 * Receive credits. A SEND or WRITE with immediate must find a posted
 * receive, or get the RNR NAK (IBTA 9.7.5.2.8): never an ACK for data
 * nobody asked for, which a QP destroyed before the next post_recv would
 * lose. PG332 accepts a SEND packet whenever its RQ has a free element;
 * RQCIi is ours, so the IP is shown free elements only for receives
 * posted: as many as a message filling each buffer takes at the path
 * MTU (a message longer than its buffer is taken whole once it began,
 * and ends in a local length error). The grant only grows: RQCIi never
 * moves back. The RX side band's receive credit word (ernic_hw.h) makes
 * it exact per message, SENDs and WRITEs with immediate alike.
 */
static uint32_t rwqe_budget(const struct ernic_qp *qp, uint32_t len)
{
	const uint32_t sh = atomic_load_explicit(&qp->pmtu_log2,
						 memory_order_relaxed);

	/* path MTUs are powers of 2 */
	return len ? (uint32_t)(((uint64_t)len + (UINT64_C(1) << sh) - 1) >>
				sh) : 1;
}

/* The elements the grant may reach past rq_done: what the posted
 * receives may still need, never past the ring. Caller holds rq_lock. */
static inline uint32_t rq_ahead(const struct ernic_qp *qp)
{
	const uint32_t room = qp->rq_depth - 1;
	uint64_t want = qp->rq_budget;

	if (qp->msg_active) {
		/* the head receive's own elements read so far are done */
		uint32_t head = qp->rwqe[qp->rwqe_ci].budget;

		want -= qp->msg_pkts < head ? qp->msg_pkts : head;
		if (qp->msg_ovfl || qp->msg_pkts >= head)
			want = room;	/* let the message drain */
	}
	return (uint32_t)(want < room ? want : room);
}

/* Grant the elements up to rq_done + ahead. The grant only grows: false
 * if it would not, else true and RQCIi's new value in *v: one past the
 * grant's last element, as a slot counted from rq_ci (element rq_done's
 * slot). Not (grant + 1) % depth: the 32-bit counters wrap, and a depth
 * that does not divide 2^32 put RQCIi elsewhere after 2^32 elements (an
 * hour of 2-byte SENDs). Caller holds rq_lock. */
static inline __attribute__((always_inline)) bool
rq_grant_to(struct ernic_qp *qp, uint32_t ahead, uint32_t *v)
{
	const uint32_t g = qp->rq_done + ahead;
	const uint32_t k = qp->rq_ci + ahead + 1;

	/* ERNIC_FIELD_PREP(ERNIC_RQCI_IDX, slot) without the mask */
	static_assert(ERNIC_RQ_RING_MAX - 1 <= ERNIC_RQCI_IDX,
		      "every RQ slot fits RQCIi's index field");
	if ((int32_t)(g - qp->rq_grant) <= 0)
		return false;
	qp->rq_grant = g;
	*v = k >= qp->rq_depth ? k - qp->rq_depth : k;
	return true;
}

/* rqci_wake of a QP whose RQCIi store is the write (a mapped window),
 * and of one whose store only stands in (no word: reg_write each time). */
static const atomic_bool rqci_quiet = false, rqci_loud = true;

void ernic_rqci_bind(struct ernic_access *acc, struct ernic_qp *qp)
{
	qp->rqci_reg = ernic_db_reg(acc, ERNIC_QP(qp->idx, ERNIC_RQCI),
				    &qp->rqci_wake);
	if (!qp->rqci_reg) {
		qp->rqci_reg = &qp->rqci_sink;
		qp->rqci_wake = &rqci_loud;
	} else if (!qp->rqci_wake) {
		qp->rqci_wake = &rqci_quiet;
	}
}

/* RQCIi = v as a store (a board's window, the model's register word);
 * true when the backend asks for its reg_write as well (rqci_call): the
 * model waiting for RQ space, or a backend with no word (ernic_db_reg).
 * The load after the store needs no fence: the model's side makes it. */
static inline bool rqci_store(struct ernic_qp *qp, uint32_t v)
{
	ernic_mmio_wr_reg(qp->rqci_reg, v);
	atomic_signal_fence(memory_order_seq_cst);
	return atomic_load_explicit(qp->rqci_wake, memory_order_relaxed);
}

/* RQCIi = v through the backend's reg_write (rqci_store said so). */
static inline void rqci_call(struct ernic_qp *qp, uint32_t v)
{
	ernic_wr(qp->dev->acc, ERNIC_QP(qp->idx, ERNIC_RQCI), v);
}

/* Publish the grant rq_ahead allows. The elements read so far are copied
 * out: the IP may reuse them (the loads done; the doorbell orders the
 * stores). Caller holds rq_lock. */
static inline __attribute__((always_inline)) void rq_grant(struct ernic_qp *qp)
{
	uint32_t v;

	if (!rq_grant_to(qp, rq_ahead(qp), &v))
		return;
	udma_reads_done_barrier();
	if (rqci_store(qp, v))
		rqci_call(qp, v);
}

void ernic_rq_reset_hw(struct ernic_dev *dev, struct ernic_qp *qp)
{
	/* grant 0: RQCI one past the write pointer, the ring full */
	ernic_wr(dev->acc, ERNIC_QP(qp->idx, ERNIC_RQCI),
		 ERNIC_FIELD_PREP(ERNIC_RQCI_IDX, 1 % qp->rq_depth));
}

/* Check one receive request and queue it; on error nothing is queued.
 * Its non-empty SGEs are translated now: one is the buffer, several a
 * scatter list (ernic_recv_scatter). Caller holds rq_lock. */
static int post_one(struct ernic_dev *dev, struct ernic_qp *qp,
		    const struct ibv_recv_wr *wr)
{
	const uint32_t next = ernic_ring_next(qp->rwqe_pi, qp->rwqe_depth);
	struct ernic_rwqe r = { .wr_id = wr->wr_id };
	struct ernic_rsg *sg;
	uint64_t sum = 0;

	/* Never read sg_list past what the QP was created for. */
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_recv_sge)
		return ernic_refuse(EINVAL, "post_recv: QP %u wr_id %llu: "
				    "num_sge %d, max_recv_sge %u", qp->idx,
				    (unsigned long long)wr->wr_id,
				    wr->num_sge, qp->cap.max_recv_sge);
	if (next == qp->rwqe_ci)
		return ernic_refuse(ENOMEM, "post_recv: QP %u wr_id %llu: "
				    "receive queue full (%u)", qp->idx,
				    (unsigned long long)wr->wr_id,
				    qp->cap.max_recv_wr);
	/* The IP's data lands in the buffers: they need local write. One
	 * non-empty SGE is the buffer; more are a scatter list. */
	sg = qp->rsg ? &qp->rsg[(size_t)qp->rwqe_pi * qp->cap.max_recv_sge] :
		       NULL;
	for (int k = 0; k < wr->num_sge; k++) {
		const struct ibv_sge *s = &wr->sg_list[k];
		uint8_t *va;

		if (!s->length)
			continue;
		if (ernic_mr_translate(dev, qp->vqp.qp.pd, s->lkey, s->addr,
				       s->length, true, NULL, &va))
			return ernic_sge_refuse(qp, "post_recv", wr->wr_id,
						(size_t)k, s, true);
		if (!r.va)
			r.va = va;
		if (sg)
			sg[r.nsg] = (struct ernic_rsg){ va, s->length };
		r.nsg++;
		sum += s->length;
	}
	/* No message is longer than 2 GiB: more room changes nothing. */
	r.length = sum > ERNIC_MAX_WR_LEN ? ERNIC_MAX_WR_LEN : (uint32_t)sum;
	r.budget = rwqe_budget(qp, r.length);
	qp->rwqe[qp->rwqe_pi] = r;
	qp->rwqe_pi = next;
	qp->rq_budget += r.budget;
	qp->rq_credit++;
	return 0;
}

/* The common receive: one non-empty SGE, translated into the slot in
 * place. Returns 0, or -1 for anything else (post_one takes it, and
 * gives the reason when it refuses). The caller counts the credit
 * (rq_credit) and holds rq_lock. */
static inline __attribute__((always_inline)) int
post_fast(struct ernic_qp *qp, const struct ibv_recv_wr *wr)
{
	const struct ibv_sge *s = wr->sg_list;
	struct ernic_rwqe *r;
	uint32_t len, slot, next, sh, budget;
	uint8_t *va;

	/* max_recv_sge is at least 1 (alloc_qp) */
	if (wr->num_sge != 1)
		return -1;
	len = s->length;
	if (!len || len > ERNIC_MAX_WR_LEN ||
	    ernic_mr_translate(qp->dev, qp->vqp.qp.pd, s->lkey, s->addr, len,
			       true, NULL, &va))
		return -1;
	slot = qp->rwqe_pi;
	next = ernic_ring_next(slot, qp->rwqe_depth);
	if (next == qp->rwqe_ci)
		return -1;
	/* A receive queue that is not empty is busy in its CQ: poll_cq
	 * takes the bit away only from an empty one, under rq_lock. */
	if (slot == qp->rwqe_ci)
		ernic_cq_busy(qp, ERNIC_CQ_RECV);
	r = &qp->rwqe[slot];
	r->wr_id = wr->wr_id;
	r->va = va;
	r->length = len;
	r->nsg = 1;
	/* rwqe_budget of a length that is not 0 */
	sh = atomic_load_explicit(&qp->pmtu_log2, memory_order_relaxed);
	budget = ((len - 1) >> sh) + 1;
	r->budget = budget;
	qp->rwqe_pi = next;
	qp->rq_budget += budget;
	return 0;
}

/* The receives are posted: the IP may take messages for them (the
 * credit word) into the elements they need (the grant). Caller holds
 * rq_lock. */
static void rq_publish(struct ernic_qp *qp)
{
	ernic_cq_busy(qp, ERNIC_CQ_RECV);
	ernic_qp_db_store(qp->dev, qp, qp->rq_credit_db, qp->rq_credit);
	rq_grant(qp);
}

/* ernic_post_recv for any list, with the reason for each refusal. */
static int __attribute__((noinline))
post_recv_list(struct ernic_qp *qp, struct ibv_recv_wr *wr,
	       struct ibv_recv_wr **bad_wr)
{
	uint32_t credit0;
	int ret = 0;

	if (atomic_load_explicit(&qp->hw_offload, memory_order_relaxed)) {
		*bad_wr = wr;
		return ernic_offload_refuse(qp, "post_recv");
	}
	ernic_spin_lock(&qp->rq_lock);
	credit0 = qp->rq_credit;
	/* IBTA: receive requests may be posted from INIT on; in error they
	 * are flushed by poll_cq. */
	if (atomic_load(&qp->dp_state) == IBV_QPS_RESET) {
		ret = ernic_refuse(EINVAL, "post_recv: QP %u in RESET",
				   qp->idx);
		goto out;
	}
	for (; wr; wr = wr->next) {
		if (!post_fast(qp, wr)) {
			qp->rq_credit++;
			continue;
		}
		ret = post_one(qp->dev, qp, wr);
		if (ret)
			break;
	}
	if (qp->rq_credit != credit0)
		rq_publish(qp);
out:
	ernic_spin_unlock(&qp->rq_lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/* ernic_post_recv's end with a message half received, which moves the
 * grant (rq_ahead): rq_publish, then the lock let go. */
static int __attribute__((noinline)) post_recv_publish(struct ernic_qp *qp)
{
	rq_publish(qp);
	ernic_spin_unlock(&qp->rq_lock);
	return 0;
}

/* ernic_post_recv's end where the backend asks for RQCIi's reg_write
 * too (rqci_store), then the lock let go. */
static int __attribute__((noinline)) post_recv_ring(struct ernic_qp *qp,
						     uint32_t v)
{
	rqci_call(qp, v);
	ernic_spin_unlock(&qp->rq_lock);
	return 0;
}

/*
 * One receive request that post_fast takes, on an unlocked QP out of
 * RESET on a coherent bus (rq_open; a non-coherent one cleans the credit
 * word: post_recv_list), costs no more than its own work: the slot, the
 * credit word and RQCIi. Nothing is left for after a call (whose
 * registers would need saving): the rarer ends are tail calls. Anything
 * else (a list, a scatter list, a refusal, a lock taken) goes to
 * post_recv_list, which finds the QP as it was.
 */
int ernic_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	struct ernic_qp *qp = to_eqp(ibqp);
	uint32_t room, ahead, v;

	if (!wr || wr->next || !ernic_spin_trylock(&qp->rq_lock))
		return post_recv_list(qp, wr, bad_wr);
	if (!atomic_load_explicit(&qp->rq_open, memory_order_relaxed) ||
	    post_fast(qp, wr)) {
		ernic_spin_unlock(&qp->rq_lock);
		return post_recv_list(qp, wr, bad_wr);
	}
	if (qp->msg_active) {
		qp->rq_credit++;
		return post_recv_publish(qp);
	}
	/* rq_publish (on a coherent bus: rq_open; the CQ busy: post_fast),
	 * no message half received: rq_ahead's first term (calling it
	 * tests msg_active again, after the credit word's store) */
	ernic_db_set(qp->rq_credit_db, ++qp->rq_credit);
	room = qp->rq_depth - 1;
	ahead = qp->rq_budget < room ? qp->rq_budget : room;
	if (rq_grant_to(qp, ahead, &v)) {
		udma_reads_done_barrier();
		if (rqci_store(qp, v))
			return post_recv_ring(qp, v);
	}
	ernic_spin_unlock(&qp->rq_lock);
	return 0;
}

/* The RQ block and its doorbell words (ernic_hw.h "RX side band"). */
struct rx_view {
	struct ernic_access *acc;	/* dma_sync: non-coherent DMA */
	volatile uint32_t *db;
	const uint8_t *elem;
	const uint32_t *rxlen;
	const struct ernic_immq_entry *immq;
	uint32_t depth;
};

struct immq_ev {
	uint32_t data;		/* ImmDt or R_Key, header value */
	uint8_t type, qpid;
	uint32_t rqpi, len;
};

static void rx_view_init(struct ernic_dev *dev, const struct ernic_qp *qp,
			 struct rx_view *v)
{
	const uint8_t *base = qp->rq.va;

	v->acc = dev->acc;
	v->db = ernic_rq_db_va(dev, qp->idx);
	v->depth = qp->rq_depth;
	v->elem = base;
	v->rxlen = (const uint32_t *)(base + ernic_rxlen_off(v->depth,
							     ERNIC_RQ_ELEM_SIZE));
	v->immq = (const struct ernic_immq_entry *)(base +
		  ernic_immq_off(v->depth, ERNIC_RQ_ELEM_SIZE));
}

/* RXLEN entry k: the length and opcode of the packet in element k. */
static uint32_t rxlen_at(const struct rx_view *v, uint32_t k)
{
	ernic_dma_sync(v->acc, &v->rxlen[k], ERNIC_RXLEN_ENTRY_SIZE,
		       ERNIC_DMA_FROM_DEVICE);
	return le32toh(v->rxlen[k]);
}

/* Write pointers a working IP can have published: inside the ring, and
 * no element past the grant (RQCIi). */
static bool rq_valid(const struct rx_view *v, const struct ernic_qp *qp,
		     uint32_t wp, uint32_t iwp)
{
	return wp < v->depth && iwp < v->depth &&
	       ernic_ring_dist(qp->rq_ci, wp, v->depth) <=
		       qp->rq_grant - qp->rq_done;
}

/*
 * The RQ and IMMQ write pointers, read before what they publish
 * (elements, RXLEN, IMMQ entries), acquire. False for a broken device:
 * a pointer outside the ring, or elements written past the grant
 * (RQCIi). Caller holds rq_lock.
 */
static bool rq_pointers(const struct rx_view *v, const struct ernic_qp *qp,
			uint32_t *wp, uint32_t *iwp)
{
	*wp = ernic_db_load(v->acc, &v->db[ERNIC_RQDB_WPTR / 4]);
	*iwp = ernic_db_load(v->acc, &v->db[ERNIC_RQDB_IMMQ_WPTR / 4]);
	return rq_valid(v, qp, *wp, *iwp);
}

/* The IMMQ entry at immq_ci, if the IP has published it (iwp). */
static bool immq_peek(const struct rx_view *v, const struct ernic_qp *qp,
		      uint32_t iwp, struct immq_ev *ev)
{
	const struct ernic_immq_entry *e = &v->immq[qp->immq_ci];
	uint64_t ent;

	if (qp->immq_ci == iwp)
		return false;
	ernic_dma_sync(v->acc, e, sizeof(*e), ERNIC_DMA_FROM_DEVICE);
	ent = le64toh(e->entry);
	ev->data = (uint32_t)(ent & ERNIC_IMMINV_DATA);
	ev->type = (uint8_t)(ent >> ERNIC_IMMINV_TYPE_SHIFT);
	ev->qpid = (uint8_t)(ent >> ERNIC_IMMINV_QPID_SHIFT);
	ev->rqpi = le32toh(e->rqpi);
	ev->len = le32toh(e->len);
	return true;
}

/* The IP may reuse the entry: it treats a full IMMQ like a full RQ. */
static void immq_pop(const struct rx_view *v, struct ernic_qp *qp)
{
	qp->immq_ci = (qp->immq_ci + 1) % v->depth;
	ernic_db_store(v->acc, &v->db[ERNIC_RQDB_IMMQ_CI / 4], qp->immq_ci);
}

static void rwqe_complete(struct ernic_qp *qp, struct ibv_wc *wc,
			  enum ibv_wc_status status, enum ibv_wc_opcode opcode,
			  uint32_t byte_len)
{
	ernic_wc_fill(wc, qp, qp->rwqe[qp->rwqe_ci].wr_id, status, opcode,
		      byte_len);
	qp->rq_budget -= qp->rwqe[qp->rwqe_ci].budget;
	qp->rwqe_ci = (qp->rwqe_ci + 1) % qp->rwqe_depth;
}

static void msg_reset(struct ernic_qp *qp)
{
	qp->msg_len = qp->msg_pkts = 0;
	qp->msg_active = qp->msg_ovfl = false;
}

/*
 * Consume RQ element rq_ci into the head receive request. Returns 1 when
 * that completes the request (wc filled), else 0.
 */
static int rx_element(const struct rx_view *v, struct ernic_qp *qp,
		      uint32_t iwp, struct ibv_wc *wc)
{
	const uint32_t k = qp->rq_ci;
	const struct ernic_rwqe *r = &qp->rwqe[qp->rwqe_ci];
	enum ibv_wc_status status = IBV_WC_SUCCESS;
	const uint8_t *elem = v->elem + (size_t)k * ERNIC_RQ_ELEM_SIZE;
	uint32_t rx, len, opc;
	struct immq_ev ev;

	rx = rxlen_at(v, k);
	len = ERNIC_FIELD_GET(ERNIC_RXLEN_LEN, rx);
	opc = ERNIC_FIELD_GET(ERNIC_RXLEN_OPCODE, rx);

	qp->rq_ci = (k + 1) % v->depth;
	qp->rq_done++;
	qp->msg_pkts++;
	if (opc >= sizeof(rx_op) / sizeof(rx_op[0]) || !rx_op[opc].ok ||
	    rx_op[opc].first == qp->msg_active || len > ERNIC_RQ_ELEM_SIZE) {
		ernic_log("QP %u: RQ element %u: bad RXLEN 0x%08x%s", qp->idx,
			  k, rx, qp->msg_active ? " inside a message" : "");
		msg_reset(qp);
		rwqe_complete(qp, wc, IBV_WC_GENERAL_ERR, IBV_WC_RECV, 0);
		return 1;
	}
	/* Too long for the buffer: the rest of the message is still taken
	 * off the RQ, and the request fails (IBTA local length error). */
	if (!qp->msg_ovfl && len <= r->length - qp->msg_len) {
		if (len) {
			ernic_dma_sync(v->acc, elem, len,
				       ERNIC_DMA_FROM_DEVICE);
			if (r->nsg > 1)
				ernic_recv_scatter(qp, qp->rwqe_ci,
						   qp->msg_len, elem, len);
			else
				memcpy(r->va + qp->msg_len, elem, len);
		}
	} else {
		qp->msg_ovfl = true;
	}
	qp->msg_len += len;
	if (!rx_op[opc].last) {
		qp->msg_active = true;
		return 0;
	}
	if (qp->msg_ovfl)
		status = IBV_WC_LOC_LEN_ERR;
	if (rx_op[opc].ext) {
		/* Its Table 1-1 entry must be next and name this element. */
		if (!immq_peek(v, qp, iwp, &ev) || ev.type != rx_op[opc].ext ||
		    ev.rqpi != k || ev.qpid != (uint8_t)qp->idx) {
			ernic_log("QP %u: RQ element %u (opcode 0x%02x) has no "
				  "IMMQ entry", qp->idx, k, opc);
			status = IBV_WC_GENERAL_ERR;
		} else {
			immq_pop(v, qp);
		}
	}
	rwqe_complete(qp, wc, status, IBV_WC_RECV, qp->msg_len);
	if (status != IBV_WC_GENERAL_ERR && rx_op[opc].ext) {
		if (ev.type == ERNIC_IMMINV_SEND_IMM) {
			wc->wc_flags = IBV_WC_WITH_IMM;
			wc->imm_data = htobe32(ev.data);
		} else {
			wc->wc_flags = IBV_WC_WITH_INV;
			wc->invalidated_rkey = ev.data;
		}
	}
	msg_reset(qp);
	return 1;
}

/* A WRITE_IMM whose turn it is: every SEND packet that arrived before
 * it (rqpi) has been consumed and no SEND is half taken. */
static bool rx_write_imm(const struct rx_view *v, struct ernic_qp *qp,
			 uint32_t iwp, struct ibv_wc *wc)
{
	struct immq_ev ev;

	if (qp->msg_active || !immq_peek(v, qp, iwp, &ev) ||
	    ev.type != ERNIC_IMMINV_WRITE_IMM || ev.rqpi != qp->rq_ci)
		return false;
	immq_pop(v, qp);
	rwqe_complete(qp, wc, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
		      ev.len);
	wc->wc_flags = IBV_WC_WITH_IMM;
	wc->imm_data = htobe32(ev.data);
	return true;
}

/* An RQ element poll_cq completes a request at (a message's last packet)
 * or reports as an error (an opcode or length it does not take). */
static bool rx_ends(uint32_t rx)
{
	uint32_t opc = ERNIC_FIELD_GET(ERNIC_RXLEN_OPCODE, rx);

	return opc >= sizeof(rx_op) / sizeof(rx_op[0]) || !rx_op[opc].ok ||
	       rx_op[opc].last ||
	       ERNIC_FIELD_GET(ERNIC_RXLEN_LEN, rx) > ERNIC_RQ_ELEM_SIZE;
}

/*
 * The interrupt thread's share of the receive side, after an RQ
 * interrupt. First it copies the packets of a message that has not
 * ended yet into its receive request and gives their elements back, so
 * that a long message drains while the application sleeps in
 * ibv_get_cq_event() until it completes. A message's last packet,
 * anything irregular, and a WRITE with immediate that is due first are
 * left to poll_cq, which completes requests. Then it says whether a
 * completion is waiting for poll_cq (the head element ends a message or
 * is something poll_cq reports as an error, or a WRITE with immediate is
 * queued) that it has not announced before, and in *solicited whether
 * such a message asked for a solicited event (IBTA: SE on its last
 * packet). Waking the application for a packet that only starts or
 * continues a message would have it poll an empty CQ, and programs that
 * poll once per event (perftest's latency tests) lose step.
 *
 * It counts only what it has not seen before (rq_ev_seen, immq_ev_wp),
 * as an armed CQ fires only for completions that come after the arm
 * (IBTA 11.4.2.2): the IP raises RQINTSTS for every packet, and a
 * message's last packet may raise it again after an earlier pass, armed
 * or not, saw the message. Announcing it twice would wake the
 * application for a completion its poll after the re-arm has already
 * taken, and send it out of step. Elements seen while the CQ was not
 * armed are not announced later either: the application's poll after
 * its arm finds them. The rest is counted from the queue as it is, not
 * from interrupts: one interrupt may stand for many packets, and a queue
 * the IP refilled after the drain gave elements back must not look
 * empty. It waits for a poll_cq in progress, which may have read the
 * write pointer before these packets came. Caller holds ev_lock (so qp
 * lives); nobody takes ev_lock under rq_lock.
 */
bool ernic_rq_service(struct ernic_dev *dev, struct ernic_qp *qp,
		      bool *solicited)
{
	struct rx_view v;
	uint32_t start, wp, iwp, n, k;
	bool fresh = false;
	struct ibv_wc wc;
	int32_t seen;

	*solicited = false;
	ernic_spin_lock(&qp->rq_lock);
	/* what it consumes, poll_cq's shortcut has not seen (quiet_still) */
	ernic_quiet_set(qp, ERNIC_CQ_RECV, ERNIC_QUIET_NONE);
	start = qp->rq_ci;
	rx_view_init(dev, qp, &v);
	if (!rq_pointers(&v, qp, &wp, &iwp) || atomic_load(&qp->err)) {
		/* poll_cq reports what is wrong */
		ernic_spin_unlock(&qp->rq_lock);
		return true;
	}
	while (qp->rq_ci != wp && qp->rwqe_ci != qp->rwqe_pi) {
		uint32_t rx, opc;
		struct immq_ev ev;

		rx = rxlen_at(&v, qp->rq_ci);
		opc = ERNIC_FIELD_GET(ERNIC_RXLEN_OPCODE, rx);
		if (rx_ends(rx) || rx_op[opc].first == qp->msg_active)
			break;
		if (!qp->msg_active && immq_peek(&v, qp, iwp, &ev) &&
		    ev.type == ERNIC_IMMINV_WRITE_IMM && ev.rqpi == qp->rq_ci)
			break;
		if (rx_element(&v, qp, iwp, &wc))
			break;	/* not reached: only a last packet completes */
	}
	if (qp->rq_ci != start)
		rq_grant(qp);
	if (qp->rwqe_ci == qp->rwqe_pi) {
		/* Nothing to complete into: a later pass announces these. */
		ernic_spin_unlock(&qp->rq_lock);
		return false;
	}
	/* Elements [rq_ci, wp) wait for poll_cq; the head is what stopped
	 * the drain. Those from rq_ev_seen on are new to this path. */
	n = (wp + v.depth - qp->rq_ci) % v.depth;
	seen = (int32_t)(qp->rq_ev_seen - qp->rq_done);
	for (k = seen > 0 ? (uint32_t)seen : 0; k < n; k++) {
		uint32_t rx = rxlen_at(&v, (qp->rq_ci + k) % v.depth);
		bool ends = rx_ends(rx);

		if (k == 0 || ends) {
			fresh = true;
			if (ends && (rx & ERNIC_RXLEN_SE))
				*solicited = true;
		}
	}
	qp->rq_ev_seen = qp->rq_done + n;
	if (iwp != qp->immq_ev_wp && iwp != qp->immq_ci)
		fresh = true;
	qp->immq_ev_wp = iwp;
	ernic_spin_unlock(&qp->rq_lock);
	return fresh;
}

/*
 * On one CQ, the completion that put the QP in error (a SEND's retries
 * exhausted, say) comes before the flushes it causes: the receive queue
 * flushes once the send queue has reported what the IP completed. With
 * two CQs there is no order to keep. Caller holds rq_lock (then sq_lock,
 * never the other way round).
 */
static bool sq_settled(struct ernic_qp *qp)
{
	bool settled;

	if (qp->vqp.qp.send_cq != qp->vqp.qp.recv_cq)
		return true;
	ernic_spin_lock(&qp->sq_lock);
	settled = qp->sq_flushing || qp->sq_ci == qp->sq_pi;
	ernic_spin_unlock(&qp->sq_lock);
	return settled;
}

int ernic_rq_poll(struct ernic_dev *dev, struct ernic_qp *qp,
		  struct ibv_wc *wc, int max)
{
	const uint32_t start = qp->rq_ci;
	uint32_t wp, iwp;
	struct rx_view v;
	uint64_t wptrs;
	int n = 0;

	/* Nothing posted, nothing to report (data waits in the RQ). */
	if (qp->rwqe_ci == qp->rwqe_pi)
		return 0;
	/* A receiver's spin: the IP's write pointers where the last poll
	 * left them (valid by construction) and the QP well have nothing to
	 * report; what follows would find the same at greater cost. */
	wptrs = ernic_rq_wptrs(dev, qp->idx);
	if (wptrs == (qp->rq_ci | (uint64_t)qp->immq_ci << 32) &&
	    !atomic_load(&qp->err) &&
	    !ernic_qp_check_fatal(dev, qp, &qp->rq_watch)) {
		ernic_quiet_set(qp, ERNIC_CQ_RECV, wptrs);
		return 0;
	}
	ernic_quiet_set(qp, ERNIC_CQ_RECV, ERNIC_QUIET_NONE);
	rx_view_init(dev, qp, &v);
	/* What the IP had published at that load (RQ pointer first, so
	 * every element below wp has its IMMQ entry below iwp); what comes
	 * later is the next poll's. */
	wp = (uint32_t)wptrs;
	iwp = (uint32_t)(wptrs >> 32);
	if (!rq_valid(&v, qp, wp, iwp)) {
		ernic_log("QP %u: RQ write pointers %u/%u outside the grant "
			  "(%u elements from %u, depth %u)",
			  qp->idx, wp, iwp, qp->rq_grant - qp->rq_done,
			  qp->rq_ci, v.depth);
	} else {
		/* Data waits in the RQ until a request is posted for it
		 * (the IP RNR-NAKs once the RQ is full). */
		while (n < max && qp->rwqe_ci != qp->rwqe_pi) {
			if (rx_write_imm(&v, qp, iwp, &wc[n])) {
				n++;
				continue;
			}
			if (qp->rq_ci == wp)
				break;
			n += rx_element(&v, qp, iwp, &wc[n]);
		}
	}
	/* The copies are done: the IP may reuse the elements. */
	if (qp->rq_ci != start)
		rq_grant(qp);
	if (n == max || qp->rwqe_ci == qp->rwqe_pi)
		return n;
	/* Waiting for data: flush if the QP is in error. */
	if (!atomic_load(&qp->err) &&
	    !ernic_qp_check_fatal(dev, qp, &qp->rq_watch))
		return n;
	if (!sq_settled(qp))
		return n;
	msg_reset(qp);
	while (n < max && qp->rwqe_ci != qp->rwqe_pi)
		rwqe_complete(qp, &wc[n++], IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0);
	return n;
}

