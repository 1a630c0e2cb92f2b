// SPDX-License-Identifier: MIT
/*
 * The model's receive path against crafted packets, on the bench of
 * model_harness.h: a hostile or confused peer must never make the model
 * complete work that was not done, read or write memory it was not
 * given, stream without end, or stall other QPs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "model_harness.h"
#include "test_model_rx.h"


int bench_up(void **state)
{
	static struct mh h;

	mh_init(&h);
	*state = &h;
	return 0;
}

int bench_down(void **state)
{
	mh_fini(*state);
	return 0;
}

/* Nothing more was sent. */
void no_tx(struct mh *h)
{
	struct roce_pkt p;

	if (mh_tx_next(h, &p))
		fail_msg("unexpected packet: opcode 0x%02x PSN %u", p.opcode,
			 p.psn);
}

/* The next packet sent is an ACK-opcode packet with this AETH syndrome
 * (ACKs: any credit count) and PSN. */
void want_aeth(struct mh *h, uint8_t syn, uint32_t psn)
{
	struct roce_pkt p;

	assert_true(mh_tx_next(h, &p));
	assert_int_equal(p.opcode, ROCE_RC_ACK);
	if ((syn & 0x60) == ROCE_AETH_ACK)
		assert_int_equal(p.aeth_syndrome & 0x60, ROCE_AETH_ACK);
	else
		assert_int_equal(p.aeth_syndrome, syn);
	assert_int_equal(p.psn, psn);
}

static uint32_t ncqes(struct mh *h, struct mh_qp *q, uint32_t *cqe)
{
	return mh_cqes(h, q, cqe, 64);
}

void rx_ack(struct mh *h, uint8_t opcode, uint8_t syn, uint32_t psn)
{
	struct roce_pkt p = { .opcode = opcode, .psn = psn,
			      .aeth_syndrome = syn, .aeth_msn = 1 };
	uint8_t pay[256] = { 0 };

	if (opcode != ROCE_RC_ACK) {
		p.payload = pay;
		p.payload_len = 16;
	}
	mh_rx(h, &p);
}

/* A 256-packet WRITE fills the TX window: the SEND behind it is fetched
 * but cannot be sent. Returns the SEND's slot. */
static uint32_t window_full(struct mh *h, struct mh_qp **qp)
{
	struct mh_mr *src = mh_mr(h, 65536, ERNIC_ACCESS_READ_WRITE, false, 7);
	struct mh_qp *q = mh_qp_up(h, 2, 256, SQ_PSN, RQ_PSN, 0, 7, 7);
	struct roce_pkt p;
	uint32_t n = 0, slot;

	mh_post(h, q, ERNIC_OP_RDMA_WRITE, src->buf.bus, 65536, 0x1000, 0x1234,
		0);
	slot = mh_post(h, q, ERNIC_OP_SEND, 0, 16, 0, 0, 0);
	mh_run(h);
	while (mh_tx_next(h, &p)) {
		assert_int_equal(p.psn, SQ_PSN + n);
		n++;
	}
	assert_int_equal(n, 256);	/* the WRITE, not the SEND */
	*qp = q;
	return slot;
}

/* Defect: a response for a PSN never sent completed unsent WQEs with
 * success. ACK, NAK and READ response beyond what was sent are dropped
 * (IBTA); the SEND completes only once it was sent and ACKed. */
static void test_response_beyond_sent(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q;
	uint32_t cqe[64], send = window_full(h, &q), before;
	const uint32_t send_psn = SQ_PSN + 256;
	struct roce_pkt p;

	before = mh_errbuf_count(h);
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID,
	       send_psn);
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ, send_psn + 40);
	rx_ack(h, ROCE_RC_READ_RESP_ONLY, ROCE_AETH_ACK, send_psn + 40);
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, (SQ_PSN + 0x800000) & 0xFFFFFF);
	assert_int_equal(ncqes(h, q, cqe), 0);
	assert_false(mh_fatal(h, q));
	assert_int_equal(mh_errbuf_count(h) - before, 4);
	for (uint32_t k = before; k < before + 4; k++)
		assert_int_equal(mh_errbuf_syndrome(h, k), ROCE_SYN_BAD_RESP);
	no_tx(h);

	/* The WRITE's last packet ACKed: it completes, the SEND goes out. */
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, send_psn - 1);
	assert_int_equal(ncqes(h, q, cqe), 1);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe[0]), 0);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_WRID, cqe[0]), 0);
	assert_true(mh_tx_next(h, &p));
	assert_int_equal(p.opcode, ROCE_RC_SEND_ONLY);
	assert_int_equal(p.psn, send_psn);
	assert_int_equal(ncqes(h, q, cqe), 0);
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, send_psn);
	assert_int_equal(ncqes(h, q, cqe), 1);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_WRID, cqe[0]), send);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe[0]), 0);
	mh_check_canaries(h);
}

/* An MR of at least 4 GiB, never touched (pages are faulted in only by
 * what the model reads). */
static struct mh_mr *big_mr(struct mh *h, uint64_t len)
{
	return mh_mr_lazy(h, len, ERNIC_ACCESS_READ_WRITE);
}

static void read_req_to(struct mh *h, uint32_t qpn, uint32_t psn, uint64_t va,
			uint32_t rkey, uint32_t len)
{
	struct roce_pkt p = { .opcode = ROCE_RC_READ_REQ, .psn = psn,
			      .dqpn = qpn,
			      .ackreq = true, .reth_va = va,
			      .reth_rkey = rkey, .reth_len = len };

	mh_rx(h, &p);
}

static void read_req(struct mh *h, uint32_t psn, uint64_t va, uint32_t rkey,
		     uint32_t len)
{
	read_req_to(h, ERNIC_FIRST_RC_QP, psn, va, rkey, len);
}

/* Defect: READ lengths were unbounded. 0xFFFFFFFF wrapped the response
 * count to 0 (responses without end), 2^31 ate the PSN space. Above the
 * IP's 8 MiB limit: NAK invalid request, QP fatal, RETH length code. */
static void test_read_length_bound(void **state)
{
	static const uint32_t lens[] = { 0xFFFFFFFFu, 0x80000000u,
					 ERNIC_MAX_MSG_SIZE + 1 };
	struct mh *h = *state;
	struct mh_mr *mr = big_mr(h, (1ull << 32) + 8192);
	uint32_t fq;

	for (uint32_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		struct mh_qp *q = mh_qp_up(h, 2 + k, 4096, SQ_PSN, RQ_PSN, 0, 7,
					   7);

		read_req_to(h, q->idx, RQ_PSN, mr->iova, mr->key, lens[k]);
		want_aeth(h, ROCE_AETH_NAK | ROCE_NAK_INVALID_REQ, RQ_PSN);
		no_tx(h);
		assert_true(mh_fatal(h, q));
		assert_int_equal(mh_errsts_count(h), k + 1);
		assert_int_equal(mh_errsts(h, k, &fq), ERNIC_FATAL_RETH_DMA_LEN);
		assert_int_equal(fq, q->idx);
	}
}

/* The largest READ the IP moves, 8 MiB: exactly its 2048 responses. */
static void test_read_max_length(void **state)
{
	struct mh *h = *state;
	struct mh_mr *mr = big_mr(h, ERNIC_MAX_MSG_SIZE);
	struct mh_qp *q = mh_qp_up(h, 2, 4096, SQ_PSN, RQ_PSN, 0, 7, 7);
	struct roce_pkt p;
	uint32_t n = 0;

	read_req(h, RQ_PSN, mr->iova, mr->key, ERNIC_MAX_MSG_SIZE);
	while (mh_tx_next(h, &p)) {
		assert_int_equal(p.psn, (RQ_PSN + n) & ERNIC_PSN_MASK);
		assert_int_equal(p.opcode, n == 0 ? ROCE_RC_READ_RESP_FIRST :
					   n == 2047 ? ROCE_RC_READ_RESP_LAST :
						       ROCE_RC_READ_RESP_MIDDLE);
		assert_int_equal(p.payload_len, 4096);
		n++;
	}
	assert_int_equal(n, 2048);
	assert_false(mh_fatal(h, q));
}

/* A packet with an opcode roce_build does not know: BTH, ext bytes of
 * zeros, good ICRC. */
static void rx_opcode(struct mh *h, uint8_t opcode, uint32_t psn, size_t ext)
{
	uint8_t b[64] = { 0 };
	size_t len = ROCE_BTH_LEN + ext + ROCE_ICRC_LEN;
	uint32_t crc;

	b[0] = opcode;
	b[1] = 0x40;		/* MigReq */
	b[2] = b[3] = 0xFF;	/* P_Key */
	b[7] = ERNIC_FIRST_RC_QP;
	b[8] = 0x80;		/* AckReq */
	b[9] = (uint8_t)(psn >> 16);
	b[10] = (uint8_t)(psn >> 8);
	b[11] = (uint8_t)psn;
	crc = roce_icrc(&h->from_peer, b, len);
	for (int k = 0; k < 4; k++)
		b[len - 4 + k] = (uint8_t)(crc >> (8 * k));
	mh_rx_raw(h, b, len, true);
}

/* Defect: an unsupported request opcode with the expected PSN was
 * dropped silently. PG332 Table 2-3 row 17 / Table 2-4 code 0x04:
 * NAK-Invalid and the QP fatal. With another PSN, or a response or
 * other-transport opcode: dropped. */
static void test_unsupported_opcode(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);
	uint32_t drops = mh_errbuf_count(h), fq;

	rx_opcode(h, 0x13, RQ_PSN + 1, 28);	/* FETCH_ADD, PSN ahead */
	rx_opcode(h, 0x13, RQ_PSN - 1, 28);	/* ... and behind */
	rx_opcode(h, 0x14, RQ_PSN, 12);		/* ATOMIC_ACK: a response */
	rx_opcode(h, 0x64, RQ_PSN, 8);		/* UD SEND_ONLY */
	no_tx(h);
	assert_false(mh_fatal(h, q));
	assert_int_equal(mh_errbuf_count(h) - drops, 4);

	rx_opcode(h, 0x12, RQ_PSN, 28);		/* CMP_SWAP, expected PSN */
	want_aeth(h, ROCE_AETH_NAK | ROCE_NAK_INVALID_REQ, RQ_PSN);
	no_tx(h);
	assert_true(mh_fatal(h, q));
	assert_int_equal(mh_errsts_count(h), 1);
	assert_int_equal(mh_errsts(h, 0, &fq), ERNIC_FATAL_UNSUPPORTED_OPCODE);
	assert_int_equal(fq, q->idx);
}

/* A 32-byte request asking for an ACK, run at once or (queue) left for
 * the engine's next batch. */
static void send_pkt(struct mh *h, uint32_t dqpn, uint32_t psn,
		     uint8_t opcode, uint32_t imm, bool queue)
{
	uint8_t pay[32];
	struct roce_pkt p = { .opcode = opcode, .psn = psn, .ackreq = true,
			      .dqpn = dqpn, .payload = pay,
			      .payload_len = sizeof(pay), .imm = imm };

	memset(pay, 0x5C, sizeof(pay));
	if (queue)
		mh_rx_queue(h, &p);
	else
		mh_rx(h, &p);
}

void send_only(struct mh *h, uint32_t dqpn, uint32_t psn, uint8_t opcode,
	       uint32_t imm)
{
	send_pkt(h, dqpn, psn, opcode, imm, false);
}

static void send_queue(struct mh *h, uint32_t psn)
{
	send_pkt(h, 2, psn, ROCE_RC_SEND_ONLY, 0, true);
}

/* The requests of one receive batch that ask for an ACK get one, for
 * the last of them, with its MSN; a NAK in a batch comes after the ACK
 * owed for what came before it. */
static void test_ack_per_batch(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);
	struct roce_pkt p;

	mh_credit(h, q, 8);
	for (uint32_t k = 0; k < 3; k++)
		send_queue(h, RQ_PSN + k);
	mh_run(h);
	assert_true(mh_tx_next(h, &p));
	assert_int_equal(p.opcode, ROCE_RC_ACK);
	assert_int_equal(p.aeth_syndrome & 0x60, ROCE_AETH_ACK);
	assert_int_equal(p.psn, RQ_PSN + 2);
	assert_int_equal(p.aeth_msn, 3);
	no_tx(h);
	assert_int_equal(mh_rq_pending(h, q), 3);
	/* two more and one out of sequence: their ACK, then the NAK */
	send_queue(h, RQ_PSN + 3);
	send_queue(h, RQ_PSN + 4);
	send_queue(h, RQ_PSN + 6);
	mh_run(h);
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN + 4);
	want_aeth(h, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ, RQ_PSN + 5);
	no_tx(h);
	assert_int_equal(mh_rq_pending(h, q), 5);
	/* one alone is answered in its own pass, as before */
	send_queue(h, RQ_PSN + 5);
	mh_run(h);
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN + 5);
	no_tx(h);
}

/* A long batch answers its requester before it ends: the 8th request
 * (ENG_ACK_BATCH, half the IP's 16 outstanding) is ACKed at once, so
 * that a requester at its window sends again while the rest is taken;
 * the batch's last ones get theirs at its end. */
static void test_ack_mid_batch(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);

	mh_credit(h, q, 11);
	for (uint32_t k = 0; k < 11; k++)
		send_queue(h, RQ_PSN + k);
	mh_run(h);
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN + 7);
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN + 10);
	no_tx(h);
	assert_int_equal(mh_rq_pending(h, q), 11);
}

/* A duplicate READ is answered only if it repeats one this QP took: a
 * stale request of an earlier connection (same QPN, old PSN) reads
 * nothing, whatever its key. */
static void test_stale_read(void **state)
{
	struct mh *h = *state;
	struct mh_mr *mr = mh_mr(h, 8192, ERNIC_ACCESS_READ_ONLY, true, 0x42);
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);
	struct roce_pkt p;
	uint32_t n = 0;

	read_req(h, RQ_PSN - 7, mr->iova, mr->key, 4096);	/* stale */
	no_tx(h);
	read_req(h, RQ_PSN, mr->iova, mr->key, 4096);		/* real */
	while (mh_tx_next(h, &p))
		n++;
	assert_int_equal(n, 4);
	/* repeated whole, and resumed from its third response */
	read_req(h, RQ_PSN, mr->iova, mr->key, 4096);
	for (n = 0; mh_tx_next(h, &p); n++)
		;
	assert_int_equal(n, 4);
	read_req(h, RQ_PSN + 2, mr->iova + 2048, mr->key, 2048);
	assert_true(mh_tx_next(h, &p));
	assert_int_equal(p.opcode, ROCE_RC_READ_RESP_FIRST);
	assert_int_equal(p.psn, RQ_PSN + 2);
	assert_true(mh_tx_next(h, &p));
	assert_int_equal(p.opcode, ROCE_RC_READ_RESP_LAST);
	no_tx(h);
	/* not matching what was taken: other address, length or key */
	read_req(h, RQ_PSN + 2, mr->iova + 1024, mr->key, 2048);
	read_req(h, RQ_PSN, mr->iova, mr->key, 8192);
	read_req(h, RQ_PSN, mr->iova, mr->key ^ 0x100, 4096);
	no_tx(h);
	assert_false(mh_fatal(h, q));
}

/* One flipped bit anywhere in a packet: the ICRC catches it, the
 * packet counts as invalid (ININVDUPCNT[15:0]) and nothing of it is
 * taken; the intact packet then is. */
static void test_corrupt_counted(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);
	uint8_t pay[100], b[ROCE_MAX_TRANSPORT];
	struct roce_pkt p = { .opcode = ROCE_RC_SEND_ONLY, .psn = RQ_PSN,
			      .ackreq = true, .dqpn = 2, .pkey = 0xFFFF,
			      .payload = pay, .payload_len = sizeof(pay) };
	size_t n;
	uint32_t flips = 0;

	memset(pay, 0x3C, sizeof(pay));
	mh_credit(h, q, 1);
	n = roce_build(b, sizeof(b), &p, &h->from_peer);
	assert_int_not_equal(n, 0);
	for (size_t bit = 0; bit < n * 8; bit += 7) {
		if (bit / 8 == 4)
			continue;	/* BTH resv8a: masked by the ICRC */
		b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		mh_rx_raw(h, b, n, true);
		b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		flips++;
		assert_int_equal(mh_errbuf_syndrome(h, mh_errbuf_count(h) - 1) &
					 ROCE_SYN_ICRC, ROCE_SYN_ICRC);
	}
	no_tx(h);
	assert_int_equal(mh_rq_pending(h, q), 0);
	assert_int_equal(mh_reg(h, ERNIC_ININVDUPCNT) & 0xFFFF, flips);
	mh_rx_raw(h, b, n, true);
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN);
	assert_int_equal(mh_rq_pending(h, q), 1);
	assert_int_equal(mh_reg(h, ERNIC_ININVDUPCNT) & 0xFFFF, flips);
}

/* A duplicate SEND is ACKed with the PSN of the last request taken that
 * was not a READ (C9-105), never with the expected PSN - 1 when that is
 * a READ's: a requester may take such an ACK as the READ done without
 * its data (rxe did, against this model). */
static void test_dup_ack_psn(void **state)
{
	struct mh *h = *state;
	struct mh_mr *mr = mh_mr(h, 4096, ERNIC_ACCESS_READ_ONLY, true, 0x42);
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);
	struct roce_pkt p;

	mh_credit(h, q, 2);
	send_only(h, 2, RQ_PSN, ROCE_RC_SEND_ONLY, 0);
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN);
	send_only(h, 2, RQ_PSN + 1, ROCE_RC_SEND_ONLY, 0);
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN + 1);
	read_req(h, RQ_PSN + 2, mr->iova, mr->key, 64);
	assert_true(mh_tx_next(h, &p));
	assert_int_equal(p.opcode, ROCE_RC_READ_RESP_ONLY);
	send_only(h, 2, RQ_PSN, ROCE_RC_SEND_ONLY, 0);	/* duplicate */
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN + 1);
	no_tx(h);
}

/* A peer that RNR-NAKs a packet also NAKs the next one as a sequence
 * error (rxe). Neither NAK of a packet not sent again since the rewind
 * counts: eight rounds of it must not exhaust retry_cnt 7. */
static void test_rnr_then_seq_nak(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 0, 1, 7);
	struct roce_pkt p;
	uint32_t cqe[4];

	mh_post(h, q, ERNIC_OP_SEND, 0, 8, 0, 0, 0);
	mh_post(h, q, ERNIC_OP_SEND, 0, 8, 0, 0, 0);
	mh_run(h);
	mh_tx_clear(h);
	for (int round = 0; round < 8; round++) {
		rx_ack(h, ROCE_RC_ACK, ROCE_AETH_RNR | 1, SQ_PSN);
		rx_ack(h, ROCE_RC_ACK, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ,
		       SQ_PSN);
		assert_false(mh_fatal(h, q));
		mh_advance(h, 20000);		/* RNR timer 1: 10 us */
		assert_true(mh_tx_next(h, &p));	/* both sent again */
		assert_int_equal(p.psn, SQ_PSN);
		assert_true(mh_tx_next(h, &p));
		assert_int_equal(p.psn, SQ_PSN + 1);
		no_tx(h);
	}
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_STATQP_RETRY_COUNT,
					 mh_qreg(h, q, ERNIC_STATQP)), 0);
	/* a sequence NAK for a packet sent again does count */
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ, SQ_PSN + 1);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_STATQP_RETRY_COUNT,
					 mh_qreg(h, q, ERNIC_STATQP)), 1);
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, SQ_PSN + 1);
	assert_int_equal(mh_cqes(h, q, cqe, 4), 2);
}

/* The wire duplicates and reorders responses. A sequence NAK older than
 * an ACK already taken, or the same NAK again once the packets it asked
 * for went out again, reports no new loss: not a retry (IBTA counts
 * retransmissions without forward progress), nothing sent again. The
 * timeout still counts: with retry_cnt 1 the next one is fatal. */
static void test_dup_nak_once(void **state)
{
	struct mh *h = *state;
	struct mh_mr *src = mh_mr(h, 4096, ERNIC_ACCESS_READ_WRITE, false, 1);
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 10, 1, 7);
	struct roce_pkt p;

	mh_post(h, q, ERNIC_OP_SEND, src->buf.bus, 3000, 0, 0, 0); /* 3 pkts */
	mh_post(h, q, ERNIC_OP_SEND, 0, 8, 0, 0, 0);
	mh_run(h);
	mh_tx_clear(h);
	/* a coalesced ACK inside the first message, then an older NAK */
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, SQ_PSN + 1);
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ, SQ_PSN + 1);
	no_tx(h);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_STATQP_RETRY_COUNT,
					 mh_qreg(h, q, ERNIC_STATQP)), 0);
	/* a NAK: one retry, the whole first WQE again (PG332) */
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ, SQ_PSN + 2);
	for (uint32_t k = 0; k < 4; k++) {
		assert_true(mh_tx_next(h, &p));
		assert_int_equal(p.psn, SQ_PSN + k);
	}
	no_tx(h);
	for (int dup = 0; dup < 8; dup++)
		rx_ack(h, ROCE_RC_ACK, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ,
		       SQ_PSN + 2);
	assert_false(mh_fatal(h, q));
	no_tx(h);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_STATQP_RETRY_COUNT,
					 mh_qreg(h, q, ERNIC_STATQP)), 1);
	mh_advance(h, 5000000);		/* timeout 10: 4.2 ms */
	assert_true(mh_fatal(h, q));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_response_beyond_sent,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_read_length_bound,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_read_max_length,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_unsupported_opcode,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_send_needs_receive,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_write_imm_needs_receive,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_pause_is_per_qp,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_hold_lengths, bench_up,
						bench_down),
		cmocka_unit_test_setup_teardown(test_held_queue, bench_up,
						bench_down),
		cmocka_unit_test_setup_teardown(test_rqci_word, bench_up,
						bench_down),
		cmocka_unit_test_setup_teardown(test_stale_read, bench_up,
						bench_down),
		cmocka_unit_test_setup_teardown(test_read_keeps_progress,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_read_last_for_only,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_read_replay_opcodes,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_read_replay_short,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_nak_after_unfinished_read,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_read_repeats_keep_room,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_read_then_acked,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_read_passed_twice,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_read_resumed_fresh,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_corrupt_counted, bench_up,
						bench_down),
		cmocka_unit_test_setup_teardown(test_dup_ack_psn, bench_up,
						bench_down),
		cmocka_unit_test_setup_teardown(test_rnr_then_seq_nak,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_rnr_nak_completes_nothing,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_dup_nak_once, bench_up,
						bench_down),
		cmocka_unit_test_setup_teardown(test_ack_per_batch, bench_up,
						bench_down),
		cmocka_unit_test_setup_teardown(test_ack_mid_batch, bench_up,
						bench_down),
		cmocka_unit_test_setup_teardown(test_device_window, bench_up,
						bench_down),
		cmocka_unit_test_setup_teardown(test_device_window_rnr,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_device_window_all_lost,
						bench_up, bench_down),
		cmocka_unit_test_setup_teardown(test_retry_window, bench_up,
						bench_down),
		cmocka_unit_test_setup_teardown(test_retry_window_done,
						bench_up, bench_down),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);	/* one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
