// SPDX-License-Identifier: MIT
/*
 * The RX pause (part of the model_rx program; docs/datapath.md "Receive
 * credits"): a request that finds no receive credit or no RQ space waits
 * for software, then gets the RNR NAK; and how software's RQCIi reaches
 * a waiting engine when it stores the register word itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ernic_model.h"
#include "test_model_rx.h"

/* Defect: a SEND was ACKed when it landed in an RQ element, receive
 * posted or not. Now it waits (RX pause) for a receive credit and gets
 * the RNR NAK when none comes; once a receive is posted, it is taken. */
void test_send_needs_receive(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);

	send_only(h, 2, RQ_PSN, ROCE_RC_SEND_ONLY, 0);
	no_tx(h);
	assert_int_equal(mh_rq_pending(h, q), 0);
	mh_advance(h, 1 * MS);
	no_tx(h);
	mh_credit(h, q, 1);
	mh_run(h);
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN);
	assert_int_equal(mh_rq_pending(h, q), 1);

	/* the credit is used up: the next SEND waits, then RNR */
	send_only(h, 2, RQ_PSN + 1, ROCE_RC_SEND_ONLY, 0);
	no_tx(h);
	mh_advance(h, 3 * MS);
	want_aeth(h, ROCE_AETH_RNR | 1, RQ_PSN + 1);
	assert_int_equal(mh_rq_pending(h, q), 1);
	assert_true(mh_qreg(h, q, ERNIC_STATQP) & ERNIC_STATQP_RQ_OVFL);
	assert_false(mh_fatal(h, q));
}

/* The same for RDMA WRITE with immediate (it consumes a receive but no
 * RQ element): the data lands only once a receive is posted. */
void test_write_imm_needs_receive(void **state)
{
	struct mh *h = *state;
	struct mh_mr *dst = mh_mr(h, 4096, ERNIC_ACCESS_READ_WRITE, true, 0);
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);
	uint8_t pay[64];
	struct roce_pkt p = { .opcode = ROCE_RC_WRITE_ONLY_IMM, .psn = RQ_PSN,
			      .ackreq = true, .reth_va = dst->iova,
			      .reth_rkey = dst->key, .reth_len = sizeof(pay),
			      .payload = pay, .payload_len = sizeof(pay),
			      .imm = 0xABCD };

	memset(pay, 0x77, sizeof(pay));
	mh_rx(h, &p);
	mh_advance(h, 3 * MS);
	want_aeth(h, ROCE_AETH_RNR | 1, RQ_PSN);
	assert_int_equal(dst->buf.va[0], 0);
	mh_credit(h, q, 1);
	p.payload = pay;
	mh_rx(h, &p);
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN);
	assert_int_equal(dst->buf.va[63], 0x77);
	assert_int_equal(dst->buf.va[64], 0);
}

/* Defect: one full RQ paused receive processing for every QP for up to
 * 2 ms. Now only the QP whose RQ is full waits. */
void test_pause_is_per_qp(void **state)
{
	struct mh *h = *state;
	struct mh_qp *a = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);
	struct mh_qp *b = mh_qp_up(h, 3, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);
	uint32_t k;

	mh_credit(h, a, 100);
	mh_credit(h, b, 100);
	for (k = 0; k < a->rq_depth - 1; k++) {	/* a's RQ: full */
		send_only(h, 2, RQ_PSN + k, ROCE_RC_SEND_ONLY, 0);
		want_aeth(h, ROCE_AETH_ACK, RQ_PSN + k);
	}
	send_only(h, 2, RQ_PSN + k, ROCE_RC_SEND_ONLY, 0);	/* a: held */
	send_only(h, 3, RQ_PSN, ROCE_RC_SEND_ONLY, 0);		/* b: at once */
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN);
	no_tx(h);
	assert_int_equal(mh_rq_pending(h, b), 1);
	assert_int_equal(mh_rq_pending(h, a), a->rq_depth - 1);
	/* a has receives posted, its RQ merely not copied out: the long
	 * wait (no transport timeout set: ENG_RX_DRAIN_NS) */
	mh_advance(h, 3 * MS);
	no_tx(h);
	mh_advance(h, 14 * MS);
	want_aeth(h, ROCE_AETH_RNR | 1, RQ_PSN + k);		/* a's, in time */
	no_tx(h);
}

/*
 * How long a request waits for RQ space: a message with a receive
 * posted for it waits up to a quarter of the QP's transport timeout
 * (16 ms at most; each RNR NAK costs a whole-WQE retransmission), one
 * with none gets the RNR NAK after 2 ms. Progress restarts the wait.
 */
void test_hold_lengths(void **state)
{
	struct mh *h = *state;
	/* timeout 12: 4.096 us << 12 = 16.8 ms, a quarter 4.2 ms */
	struct mh_qp *a = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 12, 7, 7);
	uint32_t k;

	mh_credit(h, a, a->rq_depth + 1);
	for (k = 0; k < a->rq_depth - 1; k++) {
		send_only(h, 2, RQ_PSN + k, ROCE_RC_SEND_ONLY, 0);
		want_aeth(h, ROCE_AETH_ACK, RQ_PSN + k);
	}
	send_only(h, 2, RQ_PSN + k, ROCE_RC_SEND_ONLY, 0);	/* held */
	mh_advance(h, 4 * MS);
	no_tx(h);
	/* software copies one out: taken, and the next waits afresh */
	mh_rq_drain_one(h, a);
	send_only(h, 2, RQ_PSN + k + 1, ROCE_RC_SEND_ONLY, 0);
	mh_run(h);
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN + k);
	no_tx(h);
	mh_advance(h, 4 * MS);
	no_tx(h);
	mh_advance(h, 1 * MS);
	want_aeth(h, ROCE_AETH_RNR | 1, RQ_PSN + k + 1);
	no_tx(h);

	/* no receive posted at all: the short wait */
	mh_rq_drain(h, a);
	mh_run(h);
	send_only(h, 2, RQ_PSN + k + 1, ROCE_RC_SEND_ONLY, 0);	/* resent */
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN + k + 1);		/* last credit */
	send_only(h, 2, RQ_PSN + k + 2, ROCE_RC_SEND_ONLY, 0);
	mh_advance(h, 1 * MS);
	no_tx(h);
	mh_advance(h, 1500 * 1000);
	want_aeth(h, ROCE_AETH_RNR | 1, RQ_PSN + k + 2);
	no_tx(h);
}

/*
 * While a request waits, newer ones of its QP queue up behind it and are
 * taken in order once there is room: nothing is dropped, so nothing must
 * be sent again (a drop costs PG332 a whole-WQE retransmission). Beyond
 * the queue (a window of packets) they are dropped, and a sequence NAK
 * at release asks for them at once.
 */
void test_held_queue(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);
	const uint32_t base = RQ_PSN + 2, more = 256;
	uint32_t acked = base - 1, last = 0;
	struct roce_pkt p;
	bool nak = false;

	send_only(h, 2, RQ_PSN, ROCE_RC_SEND_ONLY, 0);
	send_only(h, 2, RQ_PSN + 1, ROCE_RC_SEND_ONLY, 0);
	send_only(h, 2, RQ_PSN, ROCE_RC_SEND_ONLY, 0);	/* its retransmit */
	no_tx(h);
	mh_credit(h, q, 2);
	mh_run(h);
	/* released in one pass: one ACK for both, the duplicate's after */
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN + 1);
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN + 1);
	no_tx(h);
	assert_int_equal(mh_rq_pending(h, q), 2);

	/* one held, then a full queue behind it and one more */
	for (uint32_t k = 0; k <= more; k++)
		send_only(h, 2, base + k, ROCE_RC_SEND_ONLY, 0);
	no_tx(h);
	mh_credit(h, q, more + 1);
	for (int round = 0; round < 100 && !nak; round++) {
		mh_rq_drain(h, q);
		mh_run(h);
		while (mh_tx_next(h, &p)) {
			if ((p.aeth_syndrome & 0x60) == ROCE_AETH_ACK) {
				/* each ACK stands for those before it */
				assert_true(p.psn > acked);	/* no wrap here */
				acked = p.psn;
				continue;
			}
			assert_int_equal(p.aeth_syndrome,
					 ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ);
			last = p.psn;
			nak = true;
		}
	}
	assert_int_equal(acked, base + more - 1);	/* head + queue */
	assert_true(nak);
	assert_int_equal(last, base + more);		/* the dropped one */
}

/*
 * RQCIi as a word software stores to (ernic_model_db_word: the provider's
 * post_recv on a software device, as into a board's window): the engine
 * reads what is stored there, and the wake flag is set while a request
 * waits for RQ space (the store must then be followed by the register
 * write that wakes the engine thread) and for ENG_WATCH_LINGER_NS after.
 * Only RC QPs' RQCIi.
 */
void test_rqci_word(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 0, 7, 7);
	const uint32_t off = ERNIC_QP(q->idx, ERNIC_RQCI);
	const atomic_bool *wake = NULL, *other = NULL;
	volatile uint32_t *word;
	uint32_t k;

	assert_null(ernic_model_db_word(h->m, ERNIC_QP(q->idx, ERNIC_SQPI),
					&other));
	assert_null(ernic_model_db_word(h->m, ERNIC_QP(ERNIC_QP1, ERNIC_RQCI),
					&other));
	assert_null(ernic_model_db_word(h->m,
					ERNIC_QP(MH_MAX_QP + 2, ERNIC_RQCI),
					&other));
	assert_null(other);
	word = ernic_model_db_word(h->m, off, &wake);
	assert_non_null(word);
	assert_non_null(wake);
	assert_false(atomic_load(wake));

	mh_credit(h, q, q->rq_depth + 1);
	for (k = 0; k < q->rq_depth - 1; k++) {
		send_only(h, 2, RQ_PSN + k, ROCE_RC_SEND_ONLY, 0);
		want_aeth(h, ROCE_AETH_ACK, RQ_PSN + k);
	}
	assert_false(atomic_load(wake));
	send_only(h, 2, RQ_PSN + k, ROCE_RC_SEND_ONLY, 0);	/* RQ full */
	no_tx(h);
	assert_true(atomic_load(wake));

	/* one element copied out, RQCIi stored: the flag asks for the
	 * write, which takes the held request at once */
	q->rq_ci = (q->rq_ci + 1) % q->rq_depth;
	*word = ERNIC_FIELD_PREP(ERNIC_RQCI_IDX, q->rq_ci);
	assert_int_equal(ernic_model_reg_read(h->m, off), q->rq_ci);
	assert_true(atomic_load(wake));
	ernic_model_reg_write(h->m, off, *word);
	mh_run(h);
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN + k);
	no_tx(h);
	assert_true(atomic_load(wake));		/* it lingers */
	mh_advance(h, 9 * MS);
	assert_true(atomic_load(wake));
	mh_advance(h, 2 * MS);
	assert_false(atomic_load(wake));

	/* nothing waits: the store alone gives the engine the room */
	q->rq_ci = (q->rq_ci + 1) % q->rq_depth;
	*word = ERNIC_FIELD_PREP(ERNIC_RQCI_IDX, q->rq_ci);
	send_only(h, 2, RQ_PSN + k + 1, ROCE_RC_SEND_ONLY, 0);
	want_aeth(h, ROCE_AETH_ACK, RQ_PSN + k + 1);
	no_tx(h);
	assert_false(atomic_load(wake));
}
