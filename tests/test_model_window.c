// SPDX-License-Identifier: MIT
/*
 * The device's send window (part of the model_rx program): what all QPs
 * of a device have in flight together, shared among them, and what does
 * not count (docs/datapath.md, "Windows").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_model_rx.h"

/* QPs 2..9 (transport timeout code `timeout`, 0 = none) each post a
 * 256-packet WRITE (MTU 256) and the engine runs. QP k's PSNs start at
 * SQ_PSN + 1000 k. */
static void eight_writes(struct mh *h, struct mh_qp **q, uint32_t timeout)
{
	struct mh_mr *src = mh_mr(h, 65536, ERNIC_ACCESS_READ_WRITE, false, 7);

	for (uint32_t k = 0; k < MH_MAX_QP; k++)
		q[k] = mh_qp_up(h, 2 + k, 256, SQ_PSN + k * 1000, RQ_PSN,
				timeout, 7, 7);
	for (uint32_t k = 0; k < MH_MAX_QP; k++)
		mh_post(h, q[k], ERNIC_OP_RDMA_WRITE, src->buf.bus, 65536,
			0x1000, 0x1234, 0);
	mh_run(h);
}

/* Eight QPs with a 256-packet WRITE each would have 2048 packets in
 * flight: the device sends ENG_DEV_WINDOW (1024) of them, shared among
 * the QPs, and more only as ACKs come back. */
void test_device_window(void **state)
{
	struct mh *h = *state;
	uint32_t sent[MH_MAX_QP] = { 0 }, total = 0, more = 0, last2 = 0;
	struct mh_qp *q[MH_MAX_QP];
	struct roce_pkt p;

	eight_writes(h, q, 0);
	while (mh_tx_next(h, &p)) {
		uint32_t k = (p.psn - SQ_PSN) / 1000;

		assert_true(k < MH_MAX_QP);
		sent[k]++;
		total++;
		if (k == 0)
			last2 = p.psn;
	}
	assert_int_equal(total, 1024);
	for (uint32_t k = 0; k < MH_MAX_QP; k++)
		assert_true(sent[k] >= 64);	/* each had its turns */
	/* QP 2's packets acknowledged: as many others may go */
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, last2);
	while (mh_tx_next(h, &p))
		more++;
	assert_int_equal(more, sent[0]);
}

/* What an RNR NAK took back is not in flight: the device's window
 * lets the other QPs send as much more. */
void test_device_window_rnr(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q[MH_MAX_QP];
	uint32_t total = 0, more = 0;
	struct roce_pkt p;

	eight_writes(h, q, 0);
	while (mh_tx_next(h, &p))
		total++;
	assert_int_equal(total, 1024);
	/* QP 2's first packet RNR-NAKed: it waits, the others go on */
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_RNR | 20, SQ_PSN);
	while (mh_tx_next(h, &p)) {
		assert_true(p.psn >= SQ_PSN + 1000);	/* not QP 2's */
		more++;
	}
	assert_int_equal(more, 1024 / MH_MAX_QP);
}

/* Defect (app_loss, ernic_check -q 8 -m 64K --mtu 1024 under 1% loss:
 * a QP without a completion for 60 s): every QP's packets timed out
 * in the same pass; each went back to its oldest WQE with nothing in
 * flight and found the device's window still counted full, so none
 * sent, none had a timer, and the engine slept for good. What a pass
 * frees is used by a further pass. */
void test_device_window_all_lost(void **state)
{
	struct mh *h = *state;
	uint32_t first[MH_MAX_QP] = { 0 }, total = 0, again = 0;
	struct mh_qp *q[MH_MAX_QP];
	struct roce_pkt p;

	eight_writes(h, q, 10);
	while (mh_tx_next(h, &p)) {
		uint32_t k = (p.psn - SQ_PSN) / 1000;

		if (p.psn == SQ_PSN + k * 1000)
			first[k]++;
		total++;
	}
	assert_int_equal(total, 1024);
	mh_advance(h, 20 * MS);		/* timeout 10: 4.2 ms; all lost */
	while (mh_tx_next(h, &p)) {
		uint32_t k = (p.psn - SQ_PSN) / 1000;

		if (p.psn == SQ_PSN + k * 1000)
			first[k]++;
		again++;
	}
	assert_int_equal(again, 1024);	/* the window, sent again */
	for (uint32_t k = 0; k < MH_MAX_QP; k++) {
		assert_int_equal(first[k], 2);	/* each from its start */
		assert_false(mh_fatal(h, q[k]));
	}
}
