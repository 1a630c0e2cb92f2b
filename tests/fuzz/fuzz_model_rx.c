// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the ERNIC model's receive path, as a hostile peer
 * drives it, on the bench of tests/model_harness.h. Each input is a
 * script of records against a fresh model with two connected QPs, three
 * MRs and work in flight:
 *
 *   [kind][len lo][len hi][len bytes]
 *
 *   kind % 8 = 0  a packet from the peer, its ICRC made good
 *              1  a packet as given, ICRC checked (almost always bad)
 *              2  a packet with the ICRC not checked (as a UDP port
 *                 that cannot reconstruct the IP header would)
 *              3  time passes: up to ~67 ms (timers, RX pause)
 *              4  software posts a WQE (opcode, length, target, QP)
 *              5  software posts receives and drains the RQ
 *              6  software reads the CQs
 *              7  the peer packet of kind 0 to the other QP
 *
 * Oracles (any failure aborts): guard pages around every buffer the IP
 * may touch and canaries checked at the end (plus ASan/UBSan), every packet the model
 * sends parses with a good ICRC, a WQE completes with success only once
 * all its packets were sent, and the engine goes idle within a bounded
 * number of passes after each record.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model_harness.h"

#define SQ_PSN 100u
#define RQ_PSN 500u

static const uint8_t ops[] = {
	ERNIC_OP_SEND, ERNIC_OP_SEND_IMM, ERNIC_OP_SEND_INV,
	ERNIC_OP_RDMA_WRITE, ERNIC_OP_RDMA_WRITE_IMM, ERNIC_OP_RDMA_READ,
};

struct bench {
	struct mh h;
	struct mh_qp *q[2];
	struct mh_mr *rw, *ro, *local;
};

static uint32_t le(const uint8_t *p, size_t n)
{
	uint32_t v = 0;

	for (size_t k = n; k--;)
		v = v << 8 | p[k];
	return v;
}

static void setup(struct bench *b)
{
	mh_init(&b->h);
	b->rw = mh_mr(&b->h, 65536, ERNIC_ACCESS_READ_WRITE, true, 0x11);
	b->ro = mh_mr(&b->h, 8192, ERNIC_ACCESS_READ_ONLY, true, 0x22);
	b->local = mh_mr(&b->h, 65536, ERNIC_ACCESS_READ_WRITE, false, 0x33);
	b->q[0] = mh_qp_up(&b->h, 2, 1024, SQ_PSN, RQ_PSN, 10, 3, 3);
	b->q[1] = mh_qp_up(&b->h, 3, 256, SQ_PSN, RQ_PSN, 10, 3, 7);
	mh_qp1_up(&b->h);
	mh_credit(&b->h, b->q[0], 4);
	mh_credit(&b->h, b->q[1], 4);
	/* requests in flight, so that responses matter */
	mh_post(&b->h, b->q[0], ERNIC_OP_SEND, 0, 16, 0, 0, 0);
	mh_post(&b->h, b->q[0], ERNIC_OP_RDMA_WRITE, b->local->buf.bus, 3000,
		0x9000, 0x4242, 0);
	mh_post(&b->h, b->q[0], ERNIC_OP_RDMA_READ, b->local->buf.bus, 2048,
		0x9000, 0x4242, 0);
	mh_post(&b->h, b->q[1], ERNIC_OP_SEND, b->local->buf.bus, 700, 0, 0,
		0);
	mh_run(&b->h);
}

/* The peer's packet: transport bytes, with a good ICRC if fix. */
static void peer_packet(struct bench *b, const uint8_t *d, size_t n,
			bool fix, int check, uint32_t qpn)
{
	uint8_t pkt[ROCE_MAX_TRANSPORT + 64];
	uint32_t crc;

	if (n > sizeof(pkt))
		n = sizeof(pkt);
	memcpy(pkt, d, n);
	if (qpn && n >= ROCE_BTH_LEN) {
		pkt[5] = 0;
		pkt[6] = 0;
		pkt[7] = (uint8_t)qpn;
	}
	if (fix && n >= ROCE_BTH_LEN + ROCE_ICRC_LEN) {
		crc = roce_icrc(&b->h.from_peer, pkt, n);
		for (int k = 0; k < 4; k++)
			pkt[n - 4 + k] = (uint8_t)(crc >> (8 * k));
	}
	mh_rx_raw(&b->h, pkt, n, check);
}

static void post_wqe(struct bench *b, const uint8_t *d, size_t n)
{
	uint8_t x[12] = { 0 };
	struct mh_qp *q;
	uint8_t op;
	uint32_t len, cqe[MH_SQ_DEPTH];

	memcpy(x, d, n < sizeof(x) ? n : sizeof(x));
	q = b->q[x[0] & 1];
	op = ops[(x[0] >> 1) % sizeof(ops)];
	len = le(x + 1, 3) % 65537;
	if (op == ERNIC_OP_SEND || op == ERNIC_OP_SEND_IMM ||
	    op == ERNIC_OP_SEND_INV)
		len = len ? len : 1;	/* ERNIC sends no empty SENDs */
	/* room: the CQ must be read before the SQ laps it */
	mh_cqes(&b->h, q, cqe, MH_SQ_DEPTH);
	if ((q->sq_pi + 1) % q->sq_depth == q->cq_ci)
		return;
	mh_post(&b->h, q, op, b->local->buf.bus, len, le(x + 4, 4),
		le(x + 8, 4), le(x + 4, 4) ^ 0x5A5A);
	mh_run(&b->h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct bench b;
	static uint8_t qp1buf[ERNIC_QP1_BUF_SIZE];
	uint32_t cqe[MH_SQ_DEPTH];
	size_t at = 0;

	setup(&b);
	while (at + 3 <= size) {
		uint8_t kind = data[at] % 8;
		size_t n = le(data + at + 1, 2);
		const uint8_t *d = data + at + 3;

		if (n > size - at - 3)
			n = size - at - 3;
		at += 3 + n;
		switch (kind) {
		case 0:
			peer_packet(&b, d, n, true, 1, 0);
			break;
		case 1:
			peer_packet(&b, d, n, false, 1, 0);
			break;
		case 2:
			peer_packet(&b, d, n, false, 0, 0);
			break;
		case 3:
			mh_advance(&b.h, (uint64_t)le(d, n < 3 ? n : 3) * 4);
			break;
		case 4:
			post_wqe(&b, d, n);
			break;
		case 5:
			if (n && (d[0] & 0x80)) {
				/* a QP1 frame of software's making */
				mh_qp1_send(&b.h, d + 1,
					    (uint32_t)(n - 1 < ERNIC_QP1_BUF_SIZE ?
						       n - 1 : ERNIC_QP1_BUF_SIZE),
					    d[0] & 0x0F);
				break;
			}
			for (int k = 0; k < 2; k++) {
				mh_credit(&b.h, b.q[k], n ? d[0] % 8 : 1);
				mh_rq_drain(&b.h, b.q[k]);
			}
			while (mh_qp1_recv(&b.h, qp1buf, sizeof(qp1buf)))
				;
			mh_run(&b.h);
			break;
		case 6:
			for (int k = 0; k < 2; k++)
				mh_cqes(&b.h, b.q[k], cqe, MH_SQ_DEPTH);
			break;
		default:
			/* to QP 3, or to QP1 (MADs) */
			peer_packet(&b, d, n, true, 1, n & 1 ? IB_QP1 : 3);
			break;
		}
	}
	for (int k = 0; k < 2; k++)
		mh_cqes(&b.h, b.q[k], cqe, MH_SQ_DEPTH);
	mh_fini(&b.h);
	return 0;
}
