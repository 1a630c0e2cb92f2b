// SPDX-License-Identifier: MIT
/*
 * The ERNIC model's READ responder (PG332 ch.2): READ requests checked
 * against the PD table and queued, repeats told from strangers by the
 * READs the QP took, and the responses sent from the queue. Every
 * function: engine lock held.
 */
#include "engine_priv.h"

/* Does a duplicate read request repeat one this QP accepted, from its
 * first PSN or (a requester resuming after lost responses) from a later
 * one with the address and length moved on to match? */
static bool read_repeats(const struct eng_qp *q, const struct roce_pkt *p,
			 uint32_t pmtu)
{
	for (uint32_t k = 0; k < ENG_RDQ_MAX; k++) {
		const struct eng_rdhist *h = &q->rdh[k];
		int32_t d = psn_diff(p->psn, h->first_psn);
		uint64_t off = (uint64_t)(uint32_t)d * pmtu;

		if (!h->npkts || d < 0 || (uint32_t)d >= h->npkts)
			continue;
		if (p->reth_rkey == h->rkey && p->reth_va == h->va + off &&
		    (uint64_t)p->reth_len + off == h->len)
			return true;
	}
	return false;
}

/* The queued answer k places after the oldest. */
static struct eng_rdjob *rdjob(struct eng_qp *q, uint32_t k)
{
	return &q->rdq[(q->rdq_head + k) % ENG_RDQ_CAP];
}

/* Queued answers to repeated requests (again) or to new ones. */
static uint32_t rdjobs(struct eng_qp *q, bool again)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < q->rdq_n; k++)
		n += rdjob(q, k)->again == again;
	return n;
}

void eng_rx_read_req(struct eng *e, uint32_t i, const struct roce_pkt *p,
		     bool dup)
{
	struct eng_qp *q = &e->qp[i];
	uint32_t pmtu = eng_pmtu(e->m, i);
	struct eng_rdjob *j;
	uint64_t bus;

	if (dup && !read_repeats(q, p, pmtu)) {
		/* not a request this QP ever took: an earlier connection's,
		 * or forged; answering would read memory for a stranger */
		eng_errbuf(e, ROCE_SYN_PSN, NULL, 0);
		return;
	}
	if (!eng_mr_check(e, i, p->reth_rkey, p->reth_va, p->reth_len, false,
			  &bus)) {
		eng_nak_fatal(e, i, p->psn, ROCE_NAK_REMOTE_ACCESS,
			      ERNIC_FATAL_RKEY_ACCESS);
		return;
	}
	if (dup) {
		/* The requester went back to this READ (IBTA 9.9.2.1): what
		 * was queued from it on is stale, answer it afresh. */
		while (q->rdq_n) {
			j = rdjob(q, q->rdq_n - 1);
			if (psn_diff(psn_add(j->first_psn, j->npkts - 1),
				     p->psn) < 0)
				break;
			q->rdq_n--;
		}
		if (rdjobs(q, true) == ENG_RDQ_MAX)
			return;		/* answered when asked once more */
	} else if (rdjobs(q, false) == ENG_RDQ_MAX) {
		/* More new READs than the requester may have outstanding.
		 * Answers to repeats do not count: the requester may have
		 * had the first answers since and asked for new ones. */
		eng_nak_fatal(e, i, p->psn, ROCE_NAK_INVALID_REQ,
			      ERNIC_FATAL_READ_RESOURCES_FULL);
		return;
	}
	e->read_served = true;
	j = rdjob(q, q->rdq_n++);
	j->bus = bus;
	j->len = p->reth_len;
	j->first_psn = p->psn;
	j->npkts = eng_read_npkts(p->reth_len, pmtu);
	j->sent = 0;
	j->again = dup;
	if (!dup) {
		q->rdh[q->rdh_next] = (struct eng_rdhist){
			.va = p->reth_va,
			.rkey = p->reth_rkey,
			.len = p->reth_len,
			.first_psn = p->psn,
			.npkts = j->npkts,
		};
		q->rdh_next = (q->rdh_next + 1) % ENG_RDQ_MAX;
	}
}

bool eng_rx_pump(struct eng *e, uint32_t i)
{
	struct eng_qp *q = &e->qp[i];
	uint32_t pmtu = eng_pmtu(e->m, i), budget = ENG_TX_BUDGET;

	while (q->rdq_n && budget) {
		struct eng_rdjob *j = rdjob(q, 0);
		struct roce_pkt p = { 0 };
		uint32_t k = j->sent, off = k * pmtu;
		uint32_t plen = j->len - off < pmtu ? j->len - off : pmtu;

		if (!j->len)
			plen = 0;
		p.opcode = eng_read_resp_op(j->npkts, k);
		p.psn = psn_add(j->first_psn, k);
		p.aeth_syndrome = ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID;
		p.aeth_msn = q->msn;
		/* (copied: the responder's software may write it now) */
		p.payload = plen ? eng_tx_payload(e, p.opcode, j->bus + off,
						  plen, false) : NULL;
		if (plen && !p.payload) {
			/* the MR went away under the request */
			eng_nak_fatal(e, i, p.psn, ROCE_NAK_REMOTE_ACCESS,
				      ERNIC_FATAL_RKEY_ACCESS);
			return false;
		}
		p.payload_len = plen;
		eng_send_pkt(e, i, &p);
		eng_set(e, ERNIC_OUTRDRSPPKTCNT,
			eng_reg(e->m, ERNIC_OUTRDRSPPKTCNT) + 1);
		budget--;
		if (++j->sent == j->npkts) {
			q->rdq_head = (q->rdq_head + 1) % ENG_RDQ_CAP;
			q->rdq_n--;
		}
	}
	return q->rdq_n != 0;
}
