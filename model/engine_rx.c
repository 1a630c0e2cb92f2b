// SPDX-License-Identifier: MIT
/*
 * RX packet handler of the ERNIC model (PG332 ch.2 "ERNIC RX Path"):
 * validation with the Table 2-3 syndromes in precedence order, then the
 * responder: SEND into RQ buffers with the RQ doorbell (plus the RX side
 * band of ernic_hw.h), RDMA WRITE checked against the PD table. READ
 * requests go to the READ responder (engine_read.c), the answers to the
 * requester out through engine_ack.c; responses to our own requests go
 * to the response handler (engine_tx.c).
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "axi_trace.h"
#include "engine_priv.h"
#include "ernic_wire.h"

/* ---- error buffer and drops ---- */

void eng_errbuf(struct eng *e, uint32_t syndrome, const uint8_t *tp,
		size_t tlen)
{
	const struct ernic_model *m = e->m;
	uint64_t base = eng_reg64(m, ERNIC_ERRBUFBA, ERNIC_ERRBUFBAMSB);
	uint32_t sz = eng_reg(m, ERNIC_ERRBUFSZ);
	uint32_t num = ERNIC_FIELD_GET(ERNIC_ERRBUFSZ_NUM, sz);
	uint32_t size = ERNIC_FIELD_GET(ERNIC_ERRBUFSZ_SIZE, sz);
	uint32_t wp = ERNIC_FIELD_GET(ERNIC_ERRBUFWPTR_WPTR,
				      eng_reg(m, ERNIC_ERRBUFWPTR));
	uint8_t ent[256];
	size_t n;

	eng_count(e, ERNIC_INALLDRPPKTCNT, 16);
	if (!(eng_reg(m, ERNIC_XRNICCONF) & ERNIC_XRNICCONF_ERRBUF_EN) ||
	    !base || !num || size < 8)
		return;
	/* The packet headers, prefixed with the error syndrome. */
	if (size > sizeof(ent))
		size = sizeof(ent);
	memset(ent, 0, size);
	memcpy(ent, &syndrome, 4);
	n = tlen < size - 4 ? tlen : size - 4;
	if (tp && n)
		memcpy(ent + 4, tp, n);
	if (!eng_dma_write(e, base + (uint64_t)(wp % num) * size, ent, size)) {
		eng_set(e, ERNIC_ERRBUFWPTR, (wp + 1) % num);
		/* INTSTS[0]: an entry for software to read */
		eng_irq(e, ERNIC_INT_PKT_VALID_ERR);
	}
}

/*
 * How long a request of QP i may wait for RQ space: briefly when no
 * receive was posted for it (software may be about to post one), longer
 * when it has one and the RQ elements are merely not copied out yet;
 * each RNR NAK costs PG332's whole-WQE retransmission, up to 8 MiB.
 */
static uint64_t hold_ns(struct eng *e, uint32_t i, bool has_recv)
{
	uint32_t t = ERNIC_FIELD_GET(ERNIC_TIMEOUTCONF_TIMEOUT,
				     eng_qreg(e->m, i, ERNIC_TIMEOUTCONF));
	uint64_t ns = ENG_RX_DRAIN_NS, quarter;

	if (!has_recv)
		return ENG_RX_HOLD_NS;
	if (t) {
		quarter = (UINT64_C(4096) << (t > 31 ? 31 : t)) / 4;
		if (quarter < ns)
			ns = quarter;
	}
	return ns > ENG_RX_HOLD_NS ? ns : ENG_RX_HOLD_NS;
}

/* The RQ is full: hold the packet if the port may pause, else RNR.
 * has_recv: a receive was posted for the message (credit taken or
 * available). */
static void rq_busy(struct eng *e, uint32_t i, uint32_t psn, bool has_recv)
{
	if (e->may_hold) {
		e->hold_wanted = true;
		e->hold_ns = hold_ns(e, i, has_recv);
	} else {
		eng_send_rnr(e, i, psn);
	}
}

/* ---- protection: PG332 ch.6 "Memory Registration" ---- */

/* Check an R_Key access of len bytes at va against the PD table; on
 * success *bus is where the data lives. */
bool eng_mr_check(struct eng *e, uint32_t i, uint32_t rkey, uint64_t va,
		  uint32_t len, bool write, uint64_t *bus)
{
	const struct ernic_model *m = e->m;
	uint32_t slot = ERNIC_FIELD_GET(ERNIC_KEY_SLOT, rkey);
	uint32_t gen = ERNIC_FIELD_GET(ERNIC_KEY_GEN, rkey);
	uint32_t acc, pd;
	uint64_t mva, mlen, base;

	*bus = 0;
	if (!len)
		return true;	/* IBTA 9.4.4/9.4.5: no key check */
	if ((rkey & ERNIC_KEY_RSVD) || !gen ||
	    (eng_reg(m, ERNIC_PDT(slot, ERNIC_BUFRKEY)) & ERNIC_BUFRKEY_KEY) !=
		    gen)
		return false;
	pd = eng_reg(m, ERNIC_PDT(slot, ERNIC_PDPDNUM)) & ERNIC_PDPDNUM_PD;
	if (pd != (eng_qreg(m, i, ERNIC_PD) & ERNIC_PD_PDNUM))
		return false;
	acc = eng_reg(m, ERNIC_PDT(slot, ERNIC_ACCESSDESC));
	switch (ERNIC_FIELD_GET(ERNIC_ACCESSDESC_ACCESS, acc)) {
	case ERNIC_ACCESS_READ_ONLY:
		if (write)
			return false;
		break;
	case ERNIC_ACCESS_WRITE_ONLY:
		if (!write)
			return false;
		break;
	case ERNIC_ACCESS_READ_WRITE:
		break;
	default:
		return false;
	}
	mva = (uint64_t)eng_reg(m, ERNIC_PDT(slot, ERNIC_VIRTADDRMSB)) << 32 |
	      eng_reg(m, ERNIC_PDT(slot, ERNIC_VIRTADDRLSB));
	mlen = (uint64_t)ERNIC_FIELD_GET(ERNIC_ACCESSDESC_LEN_MSB, acc) << 32 |
	       eng_reg(m, ERNIC_PDT(slot, ERNIC_WRRDBUFLEN));
	base = (uint64_t)eng_reg(m, ERNIC_PDT(slot, ERNIC_BUFBASEADDRMSB))
		       << 32 |
	       eng_reg(m, ERNIC_PDT(slot, ERNIC_BUFBASEADDRLSB));
	if (va < mva || va - mva > mlen || len > mlen - (va - mva))
		return false;
	*bus = base + (va - mva);
	return true;
}

/* ---- RQ and the RX side band ---- */

void eng_rq_view(struct eng *e, uint32_t i, struct eng_rq_view *v)
{
	const struct ernic_model *m = e->m;

	v->rqba = eng_reg64(m, ERNIC_QP(i, ERNIC_RQBA),
			    ERNIC_QP(i, ERNIC_RQBAMSB));
	v->db = eng_reg64(m, ERNIC_QP(i, ERNIC_RQWPTRDBADD),
			  ERNIC_QP(i, ERNIC_RQWPTRDBADDMSB));
	v->depth = ERNIC_FIELD_GET(ERNIC_QDEPTH_RQ, eng_qreg(m, i, ERNIC_QDEPTH));
	v->bufsz = ERNIC_FIELD_GET(ERNIC_QPCONF_RQ_BUF_SIZE,
				   eng_qreg(m, i, ERNIC_QPCONF)) *
		   ERNIC_RQ_BUF_UNIT;
	v->wp = i == ERNIC_QP1 ? e->qp[i].rq_wp :
				 eng_qreg(m, i, ERNIC_STATRQPIDB) & 0xFFFF;
	v->ci = eng_qreg(m, i, ERNIC_RQCI) & 0xFFFF;
}

/* Room for one IMMQ entry? *wp receives the IMMQ write pointer. */
static bool immq_room(struct eng *e, const struct eng_rq_view *v, uint32_t *wp)
{
	uint32_t ci;

	if (eng_dma_load32(e, v->db + ERNIC_RQDB_IMMQ_WPTR, wp) ||
	    eng_dma_load32(e, v->db + ERNIC_RQDB_IMMQ_CI, &ci) ||
	    *wp >= v->depth || ci >= v->depth)
		return false;
	return !eng_ring_full(*wp, ci, v->depth);
}

static int immq_push(struct eng *e, uint32_t i, const struct eng_rq_view *v,
		     uint32_t wp, uint8_t type, uint32_t data, uint32_t len)
{
	struct ernic_immq_entry ent = {
		.entry = htole64((uint64_t)data |
				 (uint64_t)type << ERNIC_IMMINV_TYPE_SHIFT |
				 (uint64_t)(i & 0xFF) << ERNIC_IMMINV_QPID_SHIFT |
				 (uint64_t)(v->wp & 0xFF)
					 << ERNIC_IMMINV_RQPI_SHIFT),
		.rqpi = htole32(v->wp),
		.len = htole32(len),
	};
	uint64_t at = v->rqba + ernic_immq_off(v->depth, v->bufsz) +
		      (uint64_t)wp * ERNIC_IMMQ_ENTRY_SIZE;

	if (eng_dma_write(e, at, &ent, sizeof(ent)))
		return EFAULT;
	return eng_dma_store32(e, v->db + ERNIC_RQDB_IMMQ_WPTR,
			       (wp + 1) % v->depth);
}

/*
 * Receive credits (ernic_hw.h): a new message may start only while
 * fewer have started since the QP was enabled than software has posted
 * receives. A SEND or WRITE with immediate for which no receive was
 * posted gets the RNR NAK, as with a full RQ, instead of an ACK.
 */
static bool credit_ok(struct eng *e, uint32_t i, const struct eng_rq_view *v)
{
	uint32_t credit;

	if (eng_dma_load32(e, v->db + ERNIC_RQDB_RECV_CREDIT, &credit))
		return false;
	return (int32_t)(credit - e->qp[i].msgs) > 0;
}

static void rq_irq(struct eng *e, uint32_t i)
{
	if (!(eng_qreg(e->m, i, ERNIC_QPCONF) & ERNIC_QPCONF_RQ_INT_EN))
		return;
	eng_raise(e, ERNIC_RQINTSTS(ERNIC_QPINT_WORD(i)), ERNIC_QPINT_BIT(i));
	eng_irq(e, ERNIC_INT_RQ_PKT_RX);
}

/* A SEND packet into the next RQ element: 0; EAGAIN when the RQ (or
 * the IMMQ it needs) is full, ENOENT when no receive was posted for a
 * new message; EIO when it cannot be stored. */
static int rx_send(struct eng *e, uint32_t i, const struct roce_pkt *p,
		   uint32_t flags)
{
	struct eng_rq_view v;
	uint32_t iwp = 0;
	bool side = flags & (ROCE_HDR_IMM | ROCE_HDR_IETH);
	uint64_t el;
	uint32_t len;

	eng_rq_view(e, i, &v);
	if (!v.depth || v.wp >= v.depth || v.ci >= v.depth)
		return EIO;
	if ((flags & ROCE_POS_FIRST) && eng_hndshk_credits(e, i) &&
	    !credit_ok(e, i, &v))
		return ENOENT;
	if (eng_ring_full(v.wp, v.ci, v.depth) || (side && !immq_room(e, &v, &iwp)))
		return EAGAIN;
	if (p->payload_len > v.bufsz)
		return EIO;	/* cannot hold it: never accept */
	el = v.rqba + (uint64_t)v.wp * v.bufsz;
	len = htole32(ERNIC_FIELD_PREP(ERNIC_RXLEN_LEN, p->payload_len) |
		      ERNIC_FIELD_PREP(ERNIC_RXLEN_SE, p->se ? 1 : 0) |
		      ERNIC_FIELD_PREP(ERNIC_RXLEN_OPCODE, p->opcode));
	if (eng_dma_write(e, el, p->payload, p->payload_len) ||
	    eng_dma_write(e, v.rqba + ernic_rxlen_off(v.depth, v.bufsz) +
				     (uint64_t)v.wp * ERNIC_RXLEN_ENTRY_SIZE,
			  &len, sizeof(len)))
		return EIO;
	if (side &&
	    immq_push(e, i, &v, iwp,
		      (flags & ROCE_HDR_IMM) ? ERNIC_IMMINV_SEND_IMM :
					       ERNIC_IMMINV_SEND_INV,
		      (flags & ROCE_HDR_IMM) ? p->imm : p->ieth_rkey, 0))
		return EIO;
	if (flags & ROCE_POS_FIRST)
		e->qp[i].msgs++;
	v.wp = (v.wp + 1) % v.depth;
	eng_set(e, ERNIC_QP(i, ERNIC_STATRQPIDB), v.wp);
	eng_set(e, ERNIC_QP(i, ERNIC_STATRQBUFCA),
		(uint32_t)(el & ERNIC_STATRQBUFCA_ADDR));
	eng_set(e, ERNIC_QP(i, ERNIC_STATRQBUFCAMSB), (uint32_t)(el >> 32));
	if (!eng_hndshk_rq_db(e, i, v.wp))
		eng_dma_store32(e, v.db + ERNIC_RQDB_WPTR, v.wp);
	eng_count(e, ERNIC_INSRRPKTCNT, 0);
	rq_irq(e, i);
	return 0;
}

/* ---- the responder ---- */

/* Opcode sequence (Table 2-3 bit 16): inside a SEND or WRITE message
 * only its MIDDLE/LAST may follow; outside, no MIDDLE/LAST. */
static bool seq_ok(uint8_t last, uint8_t op)
{
	uint32_t lf = roce_opcode_flags(last), of = roce_opcode_flags(op);
	bool in_msg = (lf & (ROCE_POS_FIRST | ROCE_POS_MIDDLE)) &&
		      !(lf & ROCE_POS_LAST);
	bool cont = (of & (ROCE_POS_MIDDLE | ROCE_POS_LAST)) &&
		    !(of & ROCE_POS_FIRST);

	if (!in_msg)
		return !cont;
	if (!cont)
		return false;
	/* same message kind: SEND 0x00-0x05/0x16-0x17, WRITE 0x06-0x0B */
	return (last >= ROCE_RC_WRITE_FIRST && last <= ROCE_RC_WRITE_ONLY_IMM) ==
	       (op >= ROCE_RC_WRITE_FIRST && op <= ROCE_RC_WRITE_ONLY_IMM);
}

/* Payload size against the path MTU (Table 2-3 bit 19). */
static bool len_ok(uint32_t flags, uint32_t plen, uint32_t pmtu)
{
	if ((flags & ROCE_POS_ONLY) == ROCE_POS_ONLY)
		return plen <= pmtu;
	if (flags & ROCE_POS_LAST)
		return plen >= 1 && plen <= pmtu;
	return plen == pmtu;	/* FIRST, MIDDLE */
}

/* A request packet with the expected PSN. */
static void rx_request(struct eng *e, uint32_t i, const struct roce_pkt *p,
		       uint32_t flags)
{
	struct eng_qp *q = &e->qp[i];
	uint32_t pmtu = eng_pmtu(e->m, i);
	bool write = p->opcode >= ROCE_RC_WRITE_FIRST &&
		     p->opcode <= ROCE_RC_WRITE_ONLY_IMM;
	bool last = flags & ROCE_POS_LAST;
	uint32_t next = psn_add(p->psn, 1);

	if (!seq_ok(q->last_op, p->opcode)) {
		eng_errbuf(e, ROCE_SYN_OPCODE_SEQ, NULL, 0);
		eng_nak_fatal(e, i, p->psn, ROCE_NAK_INVALID_REQ,
			      write ? ERNIC_FATAL_WRITE_OPCODE_SEQ :
				  ERNIC_FATAL_OPCODE_SEQ);
		return;
	}
	if ((flags & ROCE_HDR_RETH) && p->reth_len > ERNIC_MAX_MSG_SIZE) {
		/* Longer than the IP moves (PG332 "Unsupported Features");
		 * a READ's response count would also wrap the PSN space. */
		eng_nak_fatal(e, i, p->psn, ROCE_NAK_INVALID_REQ,
			      ERNIC_FATAL_RETH_DMA_LEN);
		return;
	}
	if (p->opcode == ROCE_RC_READ_REQ) {
		uint32_t n = eng_read_npkts(p->reth_len, pmtu);

		eng_rx_read_req(e, i, p, false);
		if (q->fatal)
			return;
		next = psn_add(p->psn, n);
	} else if (!len_ok(flags, p->payload_len, pmtu)) {
		eng_errbuf(e, ROCE_SYN_PMTU, NULL, 0);
		return;
	} else if (write) {
		if (flags & ROCE_HDR_RETH) {
			if (!eng_mr_check(e, i, p->reth_rkey, p->reth_va,
					  p->reth_len, true, &q->wr_bus)) {
				eng_nak_fatal(e, i, p->psn,
					      ROCE_NAK_REMOTE_ACCESS,
					      ERNIC_FATAL_RKEY_ACCESS);
				return;
			}
			q->wr_va = p->reth_va;
			q->wr_len = q->wr_left = p->reth_len;
		}
		if (p->payload_len > q->wr_left ||
		    (last && p->payload_len != q->wr_left)) {
			eng_nak_fatal(e, i, p->psn, ROCE_NAK_INVALID_REQ,
				      ERNIC_FATAL_WRITE_LEN);
			return;
		}
		if (flags & ROCE_HDR_IMM) {
			struct eng_rq_view v;
			uint32_t iwp;

			/* WRITE with immediate consumes a receive: no IMMQ
			 * room is "RQ full" (RNR) before any byte lands. */
			eng_rq_view(e, i, &v);
			if (!v.depth || !credit_ok(e, i, &v)) {
				rq_busy(e, i, p->psn, false);
				return;
			}
			if (!immq_room(e, &v, &iwp)) {
				rq_busy(e, i, p->psn, true);
				return;
			}
			if (eng_dma_write(e, q->wr_bus + (q->wr_len - q->wr_left),
					  p->payload, p->payload_len) ||
			    immq_push(e, i, &v, iwp, ERNIC_IMMINV_WRITE_IMM,
				      p->imm, q->wr_len)) {
				eng_nak_fatal(e, i, p->psn,
					      ROCE_NAK_REMOTE_ACCESS,
					      ERNIC_FATAL_RKEY_ACCESS);
				return;
			}
			q->msgs++;
			rq_irq(e, i);
		} else if (p->payload_len &&
			   eng_dma_write(e, q->wr_bus + (q->wr_len - q->wr_left),
					 p->payload, p->payload_len)) {
			eng_nak_fatal(e, i, p->psn, ROCE_NAK_REMOTE_ACCESS,
				      ERNIC_FATAL_RKEY_ACCESS);
			return;
		}
		q->wr_left -= p->payload_len;
	} else {
		int rc = rx_send(e, i, p, flags);

		if (rc == EAGAIN || rc == ENOENT) {
			rq_busy(e, i, p->psn, rc == EAGAIN);
			return;
		}
		if (rc) {
			eng_send_rnr(e, i, p->psn);
			return;
		}
	}

	q->epsn = next;
	q->nak_sent = false;
	q->last_op = p->opcode;
	if (last || p->opcode == ROCE_RC_READ_REQ) {
		q->msn = (q->msn + 1) & ERNIC_PSN_MASK;
		eng_set(e, ERNIC_QP(i, ERNIC_STATMSN), q->msn);
	}
	eng_set(e, ERNIC_QP(i, ERNIC_LSTRQREQ),
		ERNIC_FIELD_PREP(ERNIC_LSTRQREQ_PSN, p->psn) |
			ERNIC_FIELD_PREP(ERNIC_LSTRQREQ_OPCODE, p->opcode));
	eng_set(e, ERNIC_QP(i, ERNIC_STATRESPSN), p->psn);
	if (p->opcode != ROCE_RC_READ_REQ) {
		q->last_psn = p->psn;
		eng_ack_policy(e, i, p);
	}
}

static void rx_responder(struct eng *e, uint32_t i, const struct roce_pkt *p,
			 uint32_t flags)
{
	struct eng_qp *q = &e->qp[i];
	int32_t d = psn_diff(p->psn, q->epsn);

	if (d < 0) {
		/* Duplicate (IBTA 9.9.2.1): reads run again, the rest is
		 * acknowledged again without touching memory, with the PSN of
		 * the last request taken that was not a READ (C9-105; rxe
		 * too): epsn - 1 may be a READ's, and a requester may take an
		 * ACK for it as the READ done without its data (rxe did). */
		eng_count(e, ERNIC_ININVDUPCNT, 16);
		if (p->opcode == ROCE_RC_READ_REQ)
			eng_rx_read_req(e, i, p, true);
		else if (p->ackreq)
			eng_send_ack(e, i, q->last_psn);
		return;
	}
	if (d > 0) {
		/* Sequence error: one NAK, then silence until the expected
		 * PSN shows up (Table 2-3 bit 21). */
		eng_errbuf(e, ROCE_SYN_PSN, NULL, 0);
		if (!q->nak_sent) {
			eng_send_aeth(e, i, q->epsn,
				      ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ);
			q->nak_sent = true;
		}
		return;
	}
	rx_request(e, i, p, flags);
}

static bool src_ok(struct eng *e, uint32_t i, const struct roce_l3 *l3,
		   uint32_t *syn)
{
	const struct ernic_model *m = e->m;
	uint8_t want[16] = { 0 };
	size_t alen = l3->family == AF_INET6 ? 16 : 4;

	for (int w = 0; w < (alen == 16 ? 4 : 1); w++) {
		uint32_t v = eng_qreg(m, i, ERNIC_IPDESADDR1 + 4 * w);
		uint8_t *b = alen == 16 ? &want[12 - 4 * w] : want;

		for (int k = 0; k < 4; k++)
			b[k] = (uint8_t)(v >> (24 - 8 * k));
	}
	if (memcmp(want, l3->src, alen)) {
		*syn = ROCE_SYN_IP_SRC;
		return false;
	}
	if (e->frame) {
		uint32_t lsb = eng_qreg(m, i, ERNIC_MACDESADDLSB);
		uint32_t msb = eng_qreg(m, i, ERNIC_MACDESADDMSB);
		uint8_t mac[6] = { (uint8_t)(msb >> 8), (uint8_t)msb,
				   (uint8_t)(lsb >> 24), (uint8_t)(lsb >> 16),
				   (uint8_t)(lsb >> 8), (uint8_t)lsb };

		if (memcmp(mac, l3->src_mac, 6)) {
			*syn = ROCE_SYN_MAC_SRC;
			return false;
		}
	}
	return true;
}

/*
 * RC opcodes (IBTA 9.2, 0x00-0x1F) that are requests ERNIC does not
 * support: the atomics, RDMA FLUSH and ATOMIC WRITE, and the reserved
 * ones. With the expected PSN they are NAK-Invalid and make the QP fatal
 * (Table 2-3 row 17, Table 2-4 code 0x04); ATOMIC ACKNOWLEDGE (0x14) is
 * a response to a request we never send: dropped, as are other
 * transports' opcodes.
 */
static bool unsupported_request(uint8_t opcode)
{
	return opcode < 0x20 && opcode != 0x14 && !roce_opcode_flags(opcode);
}

static void rx_unsupported(struct eng *e, uint32_t i, const struct roce_pkt *p,
			   const uint8_t *tp, size_t tlen)
{
	struct eng_qp *q = &e->qp[i];

	eng_errbuf(e, ROCE_SYN_OPCODE, tp, tlen);
	if (psn_diff(p->psn, q->epsn) == 0 && !q->hold)
		eng_nak_fatal(e, i, p->psn, ROCE_NAK_INVALID_REQ,
			      ERNIC_FATAL_UNSUPPORTED_OPCODE);
}

void eng_rx_released(struct eng *e, uint32_t i, bool dropped)
{
	struct eng_qp *q = &e->qp[i];

	/* Taken: the requests dropped behind it are wanted now. RNR-NAKed:
	 * the requester goes back to it and resends them anyway. */
	if (!dropped || q->nak_sent || q->fatal || !q->en)
		return;
	eng_send_aeth(e, i, q->epsn, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ);
	q->nak_sent = true;
}

/* While QP i holds a request, newer ones queue up behind it (or, the
 * queue full, are dropped and asked for again at release); duplicates
 * are answered as usual. */
static bool held_park(struct eng *e, uint32_t i, const struct roce_pkt *p,
		      const struct roce_l3 *l3, const uint8_t *tp, size_t tlen,
		      int chk)
{
	struct eng_qp *q = &e->qp[i];

	if (!q->hold || psn_diff(p->psn, q->epsn) < 0)
		return false;
	if (!eng_hold_park(e, i, l3, tp, tlen, chk)) {
		e->hold[q->hold - 1].dropped = true;
		eng_errbuf(e, ROCE_SYN_RQ_FULL, tp, tlen);
	}
	return true;
}

/* The AXI trace (hw/) shows frames as the IP's port would carry them.
 * The IP has no per-QP hold (a model-only wait, docs/datapath.md "RX
 * pause"): a request queued behind a held one is shown when the model
 * takes it up again, as if the link had paused it, and the held one
 * again then, as its retransmission would be. */
static bool trace_frame_now(const struct eng *e, const uint8_t *tp,
			    size_t tlen)
{
	uint32_t i;

	if (e->rerun || tlen < ROCE_BTH_LEN)
		return true;
	i = ernic_get24(tp + 5);	/* BTH DestQP */
	return i > e->m->c_num_qp || !e->qp[i].hold;
}

void eng_rx_packet(struct eng *e, const struct roce_l3 *l3,
		   const uint8_t *tp, size_t tlen, uint32_t syndrome,
		   int check_icrc)
{
	struct ernic_model *m = e->m;
	struct roce_pkt p = { 0 };
	uint32_t flags, i;

	if (!e->rerun)
		eng_count(e, ERNIC_INALLDRPPKTCNT, 0);
	if (__builtin_expect(m->axi_trace != NULL, 0) && !syndrome &&
	    trace_frame_now(e, tp, tlen))
		axi_trace_rx(m, l3, tp, tlen);
	if (!syndrome)
		syndrome = roce_parse(tp, tlen, l3, check_icrc, &p);
	/* An unsupported opcode is all that may be wrong with a packet that
	 * goes on: it still needs a QP to NAK. Any other fault of the
	 * headers or the ICRC makes the packet invalid (ININVDUPCNT[15:0]):
	 * a corrupted packet counts there, and only there. */
	if (syndrome &&
	    (syndrome != ROCE_SYN_OPCODE || !unsupported_request(p.opcode))) {
		eng_count(e, ERNIC_ININVDUPCNT, 0);
		eng_errbuf(e, syndrome, tp, tlen);
		return;
	}
	flags = roce_opcode_flags(p.opcode);
	i = p.dqpn;
	if (i == ERNIC_QP1 || (flags & ROCE_TRANSPORT_UD)) {
		/* MADs: UD, and only to QP1 (engine_qp1.c). */
		if (i != ERNIC_QP1)
			eng_errbuf(e, ROCE_SYN_BTH_QP, tp, tlen);
		else if (!e->qp[i].en ||
			 !(eng_qreg(m, i, ERNIC_QPCONF) & ERNIC_QPCONF_QP_EN))
			eng_errbuf(e, ROCE_SYN_QP_NOT_READY, tp, tlen);
		else
			eng_qp1_rx(e, l3, tp, tlen, &p);
		return;
	}
	if (i < ERNIC_FIRST_RC_QP || i > m->c_num_qp) {
		eng_errbuf(e, ROCE_SYN_BTH_QP, tp, tlen);
		return;
	}
	if (!e->qp[i].en || e->qp[i].fatal || e->qp[i].recover ||
	    !(eng_qreg(m, i, ERNIC_QPCONF) & ERNIC_QPCONF_QP_EN)) {
		eng_errbuf(e, ROCE_SYN_QP_NOT_READY, tp, tlen);
		return;
	}
	if (!src_ok(e, i, l3, &syndrome)) {
		eng_errbuf(e, syndrome, tp, tlen);
		return;
	}
	eng_set(e, ERNIC_LSTINPKT,
		p.opcode | (i & 0xFF) << 8 | (p.psn & 0xFFFF) << 16);
	if (flags & ROCE_HDR_CNP) {
		eng_rx_cnp(e, i);
		return;
	}
	if ((l3->tos & ROCE_ECN_MASK) == ROCE_ECN_CE)
		eng_ecn_seen(e, i);
	if (!flags)
		rx_unsupported(e, i, &p, tp, tlen);
	else if (p.opcode >= ROCE_RC_READ_RESP_FIRST && p.opcode <= ROCE_RC_ACK)
		eng_tx_response(e, i, &p);
	else if (!held_park(e, i, &p, l3, tp, tlen, check_icrc)) {
		/* written under the engine lock only; read without */
		atomic_store_explicit(&e->rx_reqs,
				      atomic_load_explicit(&e->rx_reqs,
							   memory_order_relaxed) + 1,
				      memory_order_relaxed);
		rx_responder(e, i, &p, flags);
	}
}
