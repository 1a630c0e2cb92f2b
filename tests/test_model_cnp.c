// SPDX-License-Identifier: MIT
/*
 * ECN and CNPs in the model (model/engine_cnp.c), on the hand-stepped
 * bench: what it sends is ECN-capable; a CE-marked packet for an RC QP
 * sets the QP's CNPSCHDSTSn bit and INTSTS[8], cleared together; a CNP
 * that QP1 sends leaves as a CNP and is counted; an incoming CNP is
 * counted and cuts the QP's outstanding WQEs from 16 to 8, once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "ernic_mad_frame.h"
#include "ernic_model.h"
#include "ibta.h"
#include "model_harness.h"

#define SQ_PSN 100u
#define RQ_PSN 500u

static int setup(void **state)
{
	static struct mh h;

	mh_init(&h);
	*state = &h;
	return 0;
}

static int teardown(void **state)
{
	mh_fini(*state);
	return 0;
}

/* A SEND_ONLY for QP q from the peer, its IP ECN field ecn. */
static void rx_send(struct mh *h, struct mh_qp *q, uint32_t psn, uint8_t ecn)
{
	uint8_t pay[8] = { 0 };
	struct roce_pkt p = { .opcode = ROCE_RC_SEND_ONLY, .dqpn = q->idx,
			      .psn = psn, .ackreq = 1, .payload = pay,
			      .payload_len = sizeof(pay) };

	h->from_peer.tos = (uint8_t)(0x88 | ecn);
	mh_rx(h, &p);
	h->from_peer.tos = 0;
}

static void rx_cnp(struct mh *h, struct mh_qp *q)
{
	struct roce_pkt p = { .opcode = ROCE_CNP, .dqpn = q->idx, .becn = 1 };

	mh_rx(h, &p);
}

static void test_ecn_marked(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = mh_qp_up(h, 3, 1024, SQ_PSN, RQ_PSN, 10, 7, 7);
	const uint32_t word = ERNIC_CNPSCHDSTSREG(ERNIC_CNPSCHD_WORD(3));
	struct roce_pkt p;

	mh_credit(h, q, 4);
	/* ECT(0), not marked: taken, nothing scheduled. */
	rx_send(h, q, RQ_PSN, ROCE_ECN_ECT0);
	assert_int_equal(mh_rq_pending(h, q), 1);
	assert_int_equal(mh_reg(h, word), 0);
	assert_int_equal(mh_reg(h, ERNIC_INTSTS) & ERNIC_INT_CNP, 0);
	/* The ACK the model sent is ECN-capable: ECT(0). */
	mh_advance(h, 1000000);
	assert_true(mh_tx_next(h, &p));
	assert_int_equal(p.opcode, ROCE_RC_ACK);
	assert_int_equal(h->tx[h->tx_seen - 1].l3.tos & ROCE_ECN_MASK,
			 ROCE_ECN_ECT0);
	/* CE: still taken, and QP 3's bit with the interrupt cause. */
	rx_send(h, q, RQ_PSN + 1, ROCE_ECN_CE);
	assert_int_equal(mh_rq_pending(h, q), 2);
	assert_int_equal(mh_reg(h, word), ERNIC_CNPSCHD_BIT(3));
	assert_int_equal(mh_reg(h, word), 1u << 3);
	assert_true(mh_reg(h, ERNIC_INTSTS) & ERNIC_INT_CNP);
	/* Clearing the cause clears the words (other causes stay). */
	ernic_model_reg_write(h->m, ERNIC_INTSTS, ERNIC_INT_CNP);
	assert_int_equal(mh_reg(h, word), 0);
	assert_int_equal(mh_reg(h, ERNIC_INTSTS) & ERNIC_INT_CNP, 0);
	/* A marked packet that fails a check schedules nothing. */
	h->from_peer.tos = ROCE_ECN_CE;
	mh_rx(h, &(struct roce_pkt){ .opcode = ROCE_RC_SEND_ONLY,
				     .dqpn = 7, .psn = 1 });
	h->from_peer.tos = 0;
	assert_int_equal(mh_reg(h, ERNIC_CNPSCHDSTSREG(1)), 0);
	assert_int_equal(mh_reg(h, ERNIC_INTSTS) & ERNIC_INT_CNP, 0);
}

static void test_cnp_cuts_outstanding(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 10, 7, 7);
	struct roce_pkt p;
	uint32_t n = 0;

	for (int k = 0; k < 30; k++)
		mh_post(h, q, ERNIC_OP_SEND, 0, 8, 0, 0, 0);
	mh_run(h);
	while (mh_tx_next(h, &p))
		n++;
	assert_int_equal(n, 16);	/* the IP's 16 outstanding */
	/* A CNP, then an ACK of the first 12: without the CNP 12 more
	 * would go (16 outstanding again). */
	rx_cnp(h, q);
	assert_int_equal(mh_reg(h, ERNIC_INCNPPTKTCNT), 1);
	mh_tx_clear(h);
	mh_rx(h, &(struct roce_pkt){ .opcode = ROCE_RC_ACK, .psn = SQ_PSN + 11,
				     .aeth_syndrome = ROCE_AETH_ACK | 0x1F,
				     .aeth_msn = 12 });
	/* 4 outstanding; with the cut at 8, only 4 more leave. */
	for (n = 0; mh_tx_next(h, &p); n++)
		assert_int_equal(p.psn, SQ_PSN + 16 + n);
	assert_int_equal(n, 4);
	/* A second CNP is counted and changes nothing more: all 20 ACKed,
	 * 8 leave, not 4 and not 10. */
	rx_cnp(h, q);
	assert_int_equal(mh_reg(h, ERNIC_INCNPPTKTCNT), 2);
	mh_rx(h, &(struct roce_pkt){ .opcode = ROCE_RC_ACK, .psn = SQ_PSN + 19,
				     .aeth_syndrome = ROCE_AETH_ACK | 0x1F,
				     .aeth_msn = 20 });
	for (n = 0; mh_tx_next(h, &p); n++)
		assert_int_equal(p.psn, SQ_PSN + 20 + n);
	assert_int_equal(n, 8);
	assert_false(mh_fatal(h, q));
}

/* What the provider builds for a CNP (ernic_cnp_frame_build), posted on
 * QP1: it leaves as a CNP to the peer's QP and counts in OUTCNPPKTCNT,
 * not as a MAD. */
static void test_qp1_sends_cnp(void **state)
{
	struct mh *h = *state;
	struct ernic_mad_frame_src src = { .family = AF_INET,
					   .udp_sport = 0xC123 };
	struct ernic_mad_peer to = { .qpn = 0x123456 };
	uint8_t frame[ERNIC_QP1_BUF_SIZE];
	struct roce_pkt p;
	uint32_t slot, len;

	mh_qp1_up(h);
	memcpy(src.addr, h->from_peer.dst, 4);
	to.gid[10] = to.gid[11] = 0xFF;
	memcpy(to.gid + 12, h->from_peer.src, 4);
	len = ernic_cnp_frame_build(frame, sizeof(frame), &src, &to);
	assert_int_equal(len, 14 + 20 + 8 + ROCE_BTH_LEN + ROCE_CNP_RSVD_LEN);
	slot = mh_qp1_send(h, frame, len, ERNIC_OP_SEND);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG,
					 mh_qp1_cqe(h, slot)), 0);
	assert_true(mh_tx_next(h, &p));
	assert_int_equal(p.opcode, ROCE_CNP);
	assert_int_equal(p.dqpn, 0x123456);
	assert_true(p.becn);
	assert_int_equal(p.psn, 0);
	assert_int_equal(h->tx[h->tx_seen - 1].l3.tos & ROCE_ECN_MASK, 0);
	assert_int_equal(mh_reg(h, ERNIC_OUTCNPPKTCNT), 1);
	assert_int_equal(mh_reg(h, ERNIC_OUTAMPKTCNT) >> 16, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ecn_marked, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cnp_cuts_outstanding,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_qp1_sends_cnp, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
