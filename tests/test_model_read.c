// SPDX-License-Identifier: MIT
/*
 * READs (part of the model_rx program): at the requester, what a lost
 * response costs and which response opcodes a READ accepts, the first
 * time and when it was asked for again; at the responder, the places
 * new requests and repeats take.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_model_rx.h"

/* A READ response from the peer for QP 2: len bytes of fill. */
static void read_resp_len(struct mh *h, uint8_t opcode, uint32_t psn,
			  uint8_t fill, uint32_t len)
{
	uint8_t pay[1024];
	struct roce_pkt p = { .opcode = opcode, .psn = psn,
			      .aeth_syndrome = ROCE_AETH_ACK | 0x1F,
			      .payload = pay, .payload_len = len };

	memset(pay, fill, sizeof(pay));
	mh_rx(h, &p);
}

static void read_resp(struct mh *h, uint8_t opcode, uint32_t psn, uint8_t fill)
{
	read_resp_len(h, opcode, psn, fill, 1024);
}

/* A READ asked for again after a lost response keeps what arrived: the
 * second try needs only the responses the first one missed (PG332 asks
 * for the whole READ again; keeping progress is what lets large READs
 * through a lossy link). */
void test_read_keeps_progress(void **state)
{
	struct mh *h = *state;
	struct mh_mr *dst = mh_mr(h, 4096, ERNIC_ACCESS_READ_WRITE, false, 0);
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);
	uint32_t cqe[4];
	struct roce_pkt p;

	mh_post(h, q, ERNIC_OP_RDMA_READ, dst->buf.bus, 4096, 0x5000, 0x1234,
		0);
	mh_run(h);
	assert_true(mh_tx_next(h, &p));
	assert_int_equal(p.opcode, ROCE_RC_READ_REQ);
	read_resp(h, ROCE_RC_READ_RESP_FIRST, SQ_PSN, 0xA0);
	read_resp(h, ROCE_RC_READ_RESP_MIDDLE, SQ_PSN + 1, 0xA1);
	read_resp(h, ROCE_RC_READ_RESP_LAST, SQ_PSN + 3, 0xA3);	/* 2 lost */
	assert_true(mh_tx_next(h, &p));		/* asked again, whole */
	assert_int_equal(p.opcode, ROCE_RC_READ_REQ);
	assert_int_equal(p.psn, SQ_PSN);
	assert_int_equal(p.reth_len, 4096);
	no_tx(h);
	/* this time the first two are lost: the READ still completes */
	read_resp(h, ROCE_RC_READ_RESP_MIDDLE, SQ_PSN + 2, 0xA2);
	read_resp(h, ROCE_RC_READ_RESP_LAST, SQ_PSN + 3, 0xA3);
	assert_int_equal(mh_cqes(h, q, cqe, 4), 1);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe[0]), 0);
	for (uint32_t k = 0; k < 4; k++)
		assert_int_equal(dst->buf.va[k * 1024 + 7], 0xA0 + k);
	no_tx(h);
}

/* A one-packet READ answered by READ RESPONSE LAST or ONLY of the wrong
 * length: the QP goes fatal as the IP does, with Table 2-4's "last
 * instead of only" code, 0x1C, or 0x1A for the ONLY. */
static void one_packet_read(struct mh *h, uint32_t idx, uint8_t opcode,
			    uint32_t code)
{
	struct mh_mr *dst = mh_mr(h, 4096, ERNIC_ACCESS_READ_WRITE, false, 0);
	struct mh_qp *q = mh_qp_up(h, idx, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);
	uint32_t cqe[4], n = mh_errsts_count(h), qp = 0;
	uint8_t pay[1024];
	struct roce_pkt p, r = { .opcode = opcode, .psn = SQ_PSN, .dqpn = idx,
				 .aeth_syndrome = ROCE_AETH_ACK | 0x1F,
				 .payload = pay, .payload_len = sizeof(pay) };

	/* one packet; the response's 1024 bytes are one too many */
	mh_post(h, q, ERNIC_OP_RDMA_READ, dst->buf.bus, 1023, 0x5000, 0x1234,
		0);
	mh_run(h);
	assert_true(mh_tx_next(h, &p));
	assert_int_equal(p.opcode, ROCE_RC_READ_REQ);
	memset(pay, 0xB0, sizeof(pay));
	mh_rx(h, &r);
	assert_true(mh_fatal(h, q));
	assert_int_equal(mh_errsts_count(h), n + 1);
	assert_int_equal(mh_errsts(h, n, &qp), code);
	assert_int_equal(qp, idx);
	assert_int_equal(mh_cqes(h, q, cqe, 4), 1);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe[0]), 1);
	assert_int_equal(dst->buf.va[7], 0);	/* nothing written */
}

void test_read_last_for_only(void **state)
{
	one_packet_read(*state, 2, ROCE_RC_READ_RESP_LAST,
			ERNIC_FATAL_READ_RESP_LAST_NOT_ONLY);
	one_packet_read(*state, 3, ROCE_RC_READ_RESP_ONLY,
			ERNIC_FATAL_READ_RESP_ONLY_LEN);
}

/* The READ on QP 2 was sent and timed out: the model asks again for it
 * whole, at its first PSN. */
static struct mh_qp *read_asked_twice(struct mh *h, struct mh_mr *dst,
				      uint32_t len)
{
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 10, 7, 7);
	struct roce_pkt p;

	mh_post(h, q, ERNIC_OP_RDMA_READ, dst->buf.bus, len, 0x5000, 0x1234,
		0);
	mh_run(h);
	assert_true(mh_tx_next(h, &p));
	assert_int_equal(p.opcode, ROCE_RC_READ_REQ);
	no_tx(h);
	mh_advance(h, 20 * MS);		/* timeout 10: 4.2 ms */
	assert_true(mh_tx_next(h, &p));
	assert_int_equal(p.opcode, ROCE_RC_READ_REQ);
	assert_int_equal(p.psn, SQ_PSN);
	assert_int_equal(p.reth_len, len);
	no_tx(h);
	return q;
}

/* A READ asked for again may be answered as a resumed one (the kernel's
 * rxe in Linux 6.1 replays a READ it takes for a repeat so): LAST for a
 * one-packet READ's ONLY, MIDDLE for the FIRST. At the READ's first PSN,
 * with the full payload, that is the same data: the READ completes. */
void test_read_replay_opcodes(void **state)
{
	struct mh *h = *state;
	struct mh_mr *dst = mh_mr(h, 4096, ERNIC_ACCESS_READ_WRITE, false, 0);
	struct mh_qp *q = read_asked_twice(h, dst, 1024);
	uint32_t cqe[4], n = mh_errsts_count(h);

	read_resp(h, ROCE_RC_READ_RESP_LAST, SQ_PSN, 0xC1);
	assert_false(mh_fatal(h, q));
	assert_int_equal(mh_cqes(h, q, cqe, 4), 1);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe[0]), 0);
	assert_int_equal(dst->buf.va[0], 0xC1);
	assert_int_equal(dst->buf.va[1023], 0xC1);
	/* the four-packet READ that follows: MIDDLE where FIRST belongs */
	mh_post(h, q, ERNIC_OP_RDMA_READ, dst->buf.bus, 4096, 0x5000, 0x1234,
		0);
	mh_run(h);
	mh_tx_clear(h);
	mh_advance(h, 20 * MS);
	mh_tx_clear(h);
	for (uint32_t k = 0; k < 4; k++)
		read_resp(h, k == 3 ? ROCE_RC_READ_RESP_LAST :
				      ROCE_RC_READ_RESP_MIDDLE,
			  SQ_PSN + 1 + k, 0xD0 + k);
	assert_false(mh_fatal(h, q));
	assert_int_equal(mh_cqes(h, q, cqe, 4), 1);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe[0]), 0);
	for (uint32_t k = 0; k < 4; k++)
		assert_int_equal(dst->buf.va[k * 1024 + 9], 0xD0 + k);
	assert_int_equal(mh_errsts_count(h), n);
}

/* Only the same data is taken: a short LAST for a one-packet READ asked
 * again is still Table 2-4's 0x1C, and nothing is written. */
void test_read_replay_short(void **state)
{
	struct mh *h = *state;
	struct mh_mr *dst = mh_mr(h, 4096, ERNIC_ACCESS_READ_WRITE, false, 0);
	struct mh_qp *q = read_asked_twice(h, dst, 1024);
	uint32_t cqe[4], n = mh_errsts_count(h), qp = 0;

	read_resp_len(h, ROCE_RC_READ_RESP_LAST, SQ_PSN, 0xC1, 1000);
	assert_true(mh_fatal(h, q));
	assert_int_equal(mh_errsts_count(h), n + 1);
	assert_int_equal(mh_errsts(h, n, &qp),
			 ERNIC_FATAL_READ_RESP_LAST_NOT_ONLY);
	assert_int_equal(mh_cqes(h, q, cqe, 4), 1);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe[0]), 1);
	assert_int_equal(dst->buf.va[0], 0);
}

/* QP 2 (timeout 10: 4.2 ms) sends a 16-byte READ into dst and a
 * 16-byte WRITE behind it, at SQ_PSN and SQ_PSN + 1. */
static struct mh_qp *read_then_write(struct mh *h, const struct mh_mr *dst)
{
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 10, 7, 7);

	mh_post(h, q, ERNIC_OP_RDMA_READ, dst->buf.bus, 16, 0x5000, 0x1234,
		0);
	mh_post(h, q, ERNIC_OP_RDMA_WRITE, dst->buf.bus + 1024, 16, 0x6000,
		0x1234, 0);
	mh_run(h);
	mh_tx_clear(h);
	return q;
}

/* A NAK (invalid request) for the request after a READ whose response
 * never came: the READ fails with the QP; it does not complete with
 * success and its buffer never written (found with ernic_check -r 2). */
void test_nak_after_unfinished_read(void **state)
{
	struct mh *h = *state;
	struct mh_mr *dst = mh_mr(h, 4096, ERNIC_ACCESS_READ_WRITE, false, 0);
	struct mh_qp *q = read_then_write(h, dst);
	struct roce_pkt p = { .opcode = ROCE_RC_ACK, .psn = SQ_PSN + 1,
			      .aeth_syndrome = ROCE_AETH_NAK |
					       ROCE_NAK_INVALID_REQ };
	uint32_t cqe[4];

	mh_rx(h, &p);
	assert_true(mh_fatal(h, q));
	assert_int_equal(mh_cqes(h, q, cqe, 4), 1);	/* the READ's: error */
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe[0]), 1);
}

/* A READ request as the peer sends it; queued = left in the tap inbox,
 * taken in the next receive batch. */
static void read_req_in(struct mh *h, uint32_t psn, const struct mh_mr *mr,
			uint32_t len, bool queued)
{
	struct roce_pkt p = { .opcode = ROCE_RC_READ_REQ, .psn = psn,
			      .dqpn = 2, .ackreq = true,
			      .reth_va = mr->iova, .reth_rkey = mr->key,
			      .reth_len = len };

	if (queued)
		mh_rx_queue(h, &p);
	else
		mh_rx(h, &p);
}

/* Defect (ernic_check -r 2 between two software devices, 1 run in 6):
 * the requester asks again for 16 READs it then gets the first answers
 * of, completes them and asks for 16 new ones. The answers to the
 * repeats were still queued, the new READs found the responder's 16
 * places taken and the QP went fatal (0x10, READ resources full).
 * Re-answers do not use up the places of new requests. */
void test_read_repeats_keep_room(void **state)
{
	struct mh *h = *state;
	struct mh_mr *mr = mh_mr(h, 4096, ERNIC_ACCESS_READ_ONLY, true, 0x42);
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);
	struct roce_pkt p;
	uint32_t n = 0;

	for (uint32_t k = 0; k < 16; k++)
		read_req_in(h, RQ_PSN + k, mr, 64, false);
	mh_tx_clear(h);
	for (uint32_t k = 0; k < 16; k++)
		read_req_in(h, RQ_PSN + k, mr, 64, true);	/* again */
	for (uint32_t k = 16; k < 32; k++)
		read_req_in(h, RQ_PSN + k, mr, 64, true);	/* new */
	mh_run(h);
	assert_false(mh_fatal(h, q));
	while (mh_tx_next(h, &p)) {
		assert_int_equal(p.opcode, ROCE_RC_READ_RESP_ONLY);
		assert_int_equal(p.psn, RQ_PSN + n);
		n++;
	}
	assert_int_equal(n, 32);
	/* a seventeenth new READ while sixteen wait is still too many */
	for (uint32_t k = 32; k < 49; k++)
		read_req_in(h, RQ_PSN + k, mr, 64, true);
	mh_run(h);
	assert_true(mh_fatal(h, q));
	assert_int_equal(mh_errsts(h, mh_errsts_count(h) - 1, NULL),
			 ERNIC_FATAL_READ_RESOURCES_FULL);
}

/* Defect (app_checker's sw case stalled once the retransmission timer
 * ran only with packets in flight): the duplicate ACKs for WQEs behind a
 * READ came before the READ's responses (ACKs leave as requests come
 * in, READ responses from the responder's queue after), stopped at the
 * unfinished READ and completed nothing; the READ then completed alone
 * and the WQEs behind it, acknowledged, waited for a retry that never
 * came. A READ that completes takes what was acknowledged behind it. */
void test_read_then_acked(void **state)
{
	struct mh *h = *state;
	struct mh_mr *dst = mh_mr(h, 4096, ERNIC_ACCESS_READ_WRITE, false, 0);
	struct mh_qp *q = read_then_write(h, dst);
	uint32_t cqe[4];

	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, SQ_PSN + 1);	/* the WRITE's */
	assert_int_equal(mh_cqes(h, q, cqe, 4), 0);	/* behind the READ */
	mh_tx_clear(h);				/* the READ asked for again */
	read_resp_len(h, ROCE_RC_READ_RESP_ONLY, SQ_PSN, 0xB1, 16);
	assert_int_equal(mh_cqes(h, q, cqe, 4), 2);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe[0]), 0);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe[1]), 0);
	assert_int_equal(dst->buf.va[15], 0xB1);
	assert_false(mh_fatal(h, q));
}

/* Defect (app_soak under faults: every QP of both devices stopped with
 * 16 WQEs outstanding, all acknowledged): an ACK for PSNs after a READ
 * whose responses were lost again, once the READ was already asked for
 * again, left nothing in flight and so no retransmission timer; the
 * READ waited for good. The timer runs while a WQE sent whole waits. */
void test_read_passed_twice(void **state)
{
	struct mh *h = *state;
	struct mh_mr *dst = mh_mr(h, 4096, ERNIC_ACCESS_READ_WRITE, false, 0);
	struct mh_qp *q = read_then_write(h, dst);
	uint32_t cqe[4];
	struct roce_pkt p;

	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, SQ_PSN + 1);	/* READ passed */
	assert_true(mh_tx_next(h, &p));		/* asked for again */
	assert_int_equal(p.opcode, ROCE_RC_READ_REQ);
	mh_tx_clear(h);
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, SQ_PSN + 1);	/* and again */
	no_tx(h);
	mh_advance(h, 20 * MS);		/* timeout 10: 4.2 ms */
	assert_true(mh_tx_next(h, &p));
	assert_int_equal(p.opcode, ROCE_RC_READ_REQ);
	assert_int_equal(p.psn, SQ_PSN);
	mh_tx_clear(h);
	read_resp_len(h, ROCE_RC_READ_RESP_ONLY, SQ_PSN, 0xB2, 16);
	assert_int_equal(mh_cqes(h, q, cqe, 4), 2);
	assert_false(mh_fatal(h, q));
}

/* rxe restarts a READ's reply by itself when an RNR NAK for the SEND
 * behind it comes between, and answers with MIDDLE at the READ's first
 * PSN (peer_check's loss case, fatal 0x1E): the same data, taken. */
void test_read_resumed_fresh(void **state)
{
	struct mh *h = *state;
	struct mh_mr *dst = mh_mr(h, 4096, ERNIC_ACCESS_READ_WRITE, false, 0);
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);
	uint32_t cqe[4];

	mh_post(h, q, ERNIC_OP_RDMA_READ, dst->buf.bus, 4096, 0x5000, 0x1234,
		0);
	mh_run(h);
	mh_tx_clear(h);
	for (uint32_t k = 0; k < 4; k++)
		read_resp(h, k == 3 ? ROCE_RC_READ_RESP_LAST :
				      ROCE_RC_READ_RESP_MIDDLE,
			  SQ_PSN + k, 0xE0 + k);
	assert_false(mh_fatal(h, q));
	assert_int_equal(mh_cqes(h, q, cqe, 4), 1);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe[0]), 0);
	for (uint32_t k = 0; k < 4; k++)
		assert_int_equal(dst->buf.va[k * 1024 + 3], 0xE0 + k);
}
