// SPDX-License-Identifier: MIT
/*
 * QP1 of the ERNIC model: MADs in and out as ernic_hw.h ("QP1 carries
 * MADs") defines them. Software builds whole frames and reads whole
 * frames; the IP checks what Table 2-3 says of any packet, adds and
 * checks the ICRC, and keeps QP1 a UD queue: no PSN, no ACK, no RNR. The
 * IBTA checks of a GSI receiver (UD SEND_ONLY, the GSI Q_Key, a P_Key of
 * the default partition, a 256-byte MAD) are ours where PG332 is silent
 * (docs/datapath.md, "QP1: MADs").
 */
#include <endian.h>
#include <string.h>

#include "engine_priv.h"

static uint32_t frame_hdr_len(const struct eng *e)
{
	return (uint32_t)roce_frame_hdr_len(e->local.family);
}

/* ---- receive ---- */

/* Why a packet addressed to QP1 is not a MAD QP1 takes: a Table 2-3
 * syndrome to record, or 0 when it is one. */
static uint32_t mad_check(const struct roce_pkt *p)
{
	if (!(roce_opcode_flags(p->opcode) & ROCE_TRANSPORT_UD))
		return ROCE_SYN_OPCODE;	/* RC to a UD QP: dropped, no NAK */
	/* IBTA 10.2.4.1 / 13.5.4.3: the GSI Q_Key, and the default
	 * partition (full or limited member); otherwise not for QP1. */
	if (p->deth_qkey != IB_QP1_QKEY || (p->pkey & 0x7FFF) != 0x7FFF)
		return ROCE_SYN_BTH_QP;
	if (p->payload_len != IB_MAD_SIZE)
		return ROCE_SYN_PMTU;
	return 0;
}

void eng_qp1_rx(struct eng *e, const struct roce_l3 *l3, const uint8_t *tp,
		size_t tlen, const struct roce_pkt *p)
{
	const uint32_t i = IB_QP1, hl = frame_hdr_len(e);
	uint32_t syn = mad_check(p), len, flen, rxlen;
	struct eng_rq_view v;
	uint64_t el;

	if (syn) {
		eng_errbuf(e, syn, tp, tlen);
		return;
	}
	/* The frame as stored: headers rebuilt from what was received (on
	 * the UDP wire the kernel took the Ethernet header: zero MACs). */
	len = (uint32_t)(tlen - ROCE_ICRC_LEN);
	flen = hl + len;
	eng_rq_view(e, i, &v);
	if (!v.depth || !v.rqba || v.wp >= v.depth || v.ci >= v.depth ||
	    flen > v.bufsz || flen + ROCE_ICRC_LEN > sizeof(e->pay)) {
		eng_errbuf(e, ROCE_SYN_QP_NOT_READY, tp, tlen);
		return;
	}
	if (eng_ring_full(v.wp, v.ci, v.depth)) {
		eng_errbuf(e, ROCE_SYN_RQ_FULL, tp, tlen);
		return;
	}
	memcpy(e->pay + hl, tp, tlen);
	if (roce_frame_build(e->pay, sizeof(e->pay), l3, tlen) !=
	    flen + ROCE_ICRC_LEN) {
		eng_errbuf(e, ROCE_SYN_MALFORMED, tp, tlen);
		return;
	}
	el = v.rqba + (uint64_t)v.wp * v.bufsz;
	rxlen = htole32(ERNIC_FIELD_PREP(ERNIC_RXLEN_LEN, flen) |
			ERNIC_FIELD_PREP(ERNIC_RXLEN_OPCODE, p->opcode));
	if (eng_dma_write(e, el, e->pay, flen) ||
	    eng_dma_write(e, v.rqba + ernic_rxlen_off(v.depth, v.bufsz) +
				     (uint64_t)v.wp * ERNIC_RXLEN_ENTRY_SIZE,
			  &rxlen, sizeof(rxlen))) {
		eng_errbuf(e, ROCE_SYN_QP_NOT_READY, tp, tlen);
		return;
	}
	e->qp[i].rq_wp = (v.wp + 1) % v.depth;
	if (v.db)
		eng_dma_store32(e, v.db + ERNIC_RQDB_WPTR, e->qp[i].rq_wp);
	eng_count(e, ERNIC_INAMPKTCNT, 16);
	eng_irq(e, ERNIC_INT_MAD_RX);
}

/* ---- send ---- */

/*
 * Is buf[0, len) a frame QP1 may send: Ethernet, IP and UDP headers that
 * pass every Table 2-3 check a receiver makes, from the device's own
 * address (and MAC on the frame wire), to UDP 4791, carrying a UD
 * SEND_ONLY with a DETH, or a CNP (engine_cnp.c)? buf has room for the ICRC behind len. On
 * success *l3 describes the headers and *tlen the transport bytes
 * without the ICRC.
 */
static bool frame_ok(struct eng *e, uint8_t *buf, uint32_t len,
		     struct roce_l3 *l3, size_t *tlen)
{
	const uint32_t hl = frame_hdr_len(e);
	struct roce_l3 dst = { .family = e->local.family };
	const uint8_t *tp;
	struct roce_pkt p;
	size_t n;

	if (len < hl + ROCE_BTH_LEN + ROCE_DETH_LEN)
		return false;
	/* Parse it as its receiver would: "local" is its destination. */
	memcpy(dst.dst_mac, buf, 6);
	if (e->local.family == AF_INET)
		memcpy(dst.dst, buf + ROCE_ETH_LEN + 16, 4);
	else
		memcpy(dst.dst, buf + ROCE_ETH_LEN + 24, 16);
	memset(buf + len, 0, ROCE_ICRC_LEN);
	if (roce_frame_parse(buf, len + ROCE_ICRC_LEN, &dst, l3, &tp, &n) ||
	    n != len + ROCE_ICRC_LEN - hl || l3->dport != ROCE_UDP_PORT ||
	    memcmp(l3->src, e->local.dst, sizeof(l3->src)) ||
	    (e->frame && memcmp(l3->src_mac, e->local.dst_mac, 6)))
		return false;
	if (roce_parse(tp, n, l3, false, &p) ||
	    !(roce_opcode_flags(p.opcode) & (ROCE_TRANSPORT_UD | ROCE_HDR_CNP)))
		return false;
	*tlen = n - ROCE_ICRC_LEN;
	return true;
}

/* Send one QP1 WQE's frame; false if it is not one QP1 may send. */
static bool send_frame(struct eng *e, const struct ernic_wqe *w)
{
	struct roce_l3 l3;
	size_t tlen;
	uint32_t icrc;

	if (w->opcode != ERNIC_OP_SEND || w->length > ERNIC_QP1_BUF_SIZE ||
	    w->length + ROCE_ICRC_LEN > sizeof(e->pay) ||
	    eng_dma_read(e, w->laddr, e->pay, w->length) ||
	    !frame_ok(e, e->pay, w->length, &l3, &tlen))
		return false;
	if (!e->frame) {
		/* The kernel writes these headers on the UDP wire: the ICRC
		 * is computed for what it will send (model_wire.h). */
		l3.sport = (uint16_t)ERNIC_FIELD_GET(ERNIC_XRNICCONF_UDP_SPORT,
						     eng_reg(e->m,
							     ERNIC_XRNICCONF));
		l3.ip_id = 0;
	}
	memcpy(e->pkt, e->pay + frame_hdr_len(e), tlen);
	icrc = htole32(roce_icrc(&l3, e->pkt, tlen + ROCE_ICRC_LEN));
	memcpy(e->pkt + tlen, &icrc, ROCE_ICRC_LEN);
	eng_set(e, ERNIC_LSTOUTPKT, e->pkt[0] | IB_QP1 << 8);
	/* A send error is a loss on the wire: the CM retransmits. */
	model_wire_queue(e->wire, &l3, e->pkt, tlen + ROCE_ICRC_LEN);
	if (e->pkt[0] == ROCE_CNP)
		eng_count32(e, ERNIC_OUTCNPPKTCNT);
	else
		eng_count(e, ERNIC_OUTAMPKTCNT, 16);
	return true;
}

bool eng_qp1_pump(struct eng *e)
{
	const struct ernic_model *m = e->m;
	const uint32_t i = IB_QP1;
	struct eng_qp *q = &e->qp[i];
	uint32_t depth = ERNIC_FIELD_GET(ERNIC_QDEPTH_SQ,
					 eng_qreg(m, i, ERNIC_QDEPTH));
	uint32_t pi = eng_qreg(m, i, ERNIC_SQPI) & 0xFFFF;

	for (int n = 0; n < 16; n++) {
		struct eng_wqe w = { 0 };
		bool ok;

		if (!depth || q->sq_fetch == pi || pi >= depth ||
		    q->sq_fetch >= depth)
			return false;
		ok = !eng_wqe_read(e, i, q->sq_fetch, &w.w);
		if (!ok)
			w.w.wrid = (uint16_t)q->sq_fetch;
		if (ok && w.w.opcode != ERNIC_OP_SEND)
			eng_irq(e, ERNIC_INT_ILLEGAL_OPCODE);
		ok = ok && send_frame(e, &w.w);
		eng_cqe_write(e, i, &w, !ok);
		q->sq_fetch = (q->sq_fetch + 1) % depth;
		eng_statqp(e, i);
	}
	return true;
}
