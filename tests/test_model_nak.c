// SPDX-License-Identifier: MIT
/*
 * NAKs at the requester (part of the model_rx program): what a NAK
 * acknowledges, and peers that do not keep to it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_model_rx.h"

/* Defect (peer_check's loss case against Linux 6.1's rxe, 2 runs in 5:
 * retries exhausted): rxe RNR-NAKed the packet after a SEND it had not
 * taken, then NAKed the SEND as a sequence error. The RNR NAK had
 * completed the SEND (a NAK acknowledges what is before it), so the
 * sequence NAK was taken for an old one and the SEND never went again:
 * every retry started after it and rxe dropped them all. An RNR NAK
 * completes nothing; a later ACK does. */
void test_rnr_nak_completes_nothing(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 10, 7, 7);
	uint32_t cqe[4];
	struct roce_pkt p;

	mh_post(h, q, ERNIC_OP_SEND, 0, 8, 0, 0, 0);
	mh_post(h, q, ERNIC_OP_SEND, 0, 8, 0, 0, 0);
	mh_run(h);
	mh_tx_clear(h);
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_RNR | 1, SQ_PSN + 1);
	assert_int_equal(mh_cqes(h, q, cqe, 4), 0);
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ, SQ_PSN);
	mh_advance(h, 20000);			/* RNR timer 1: 10 us */
	assert_true(mh_tx_next(h, &p));		/* the first SEND again */
	assert_int_equal(p.psn, SQ_PSN);
	assert_true(mh_tx_next(h, &p));
	assert_int_equal(p.psn, SQ_PSN + 1);
	no_tx(h);
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, SQ_PSN + 1);
	assert_int_equal(mh_cqes(h, q, cqe, 4), 2);
	assert_false(mh_fatal(h, q));
}
