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

/* The packets of an attempt that the peer has not taken: sends them out
 * of the harness and returns how many, checking they are PSNs from..on. */
static uint32_t sent_from(struct mh *h, uint32_t from)
{
	struct roce_pkt p;
	uint32_t n = 0;

	while (mh_tx_next(h, &p)) {
		assert_int_equal(p.psn, from + n);
		n++;
	}
	return n;
}

/* QP 2 (MTU 256, transport timeout 10) sends a 512-packet WRITE: the
 * window, then the rest once the peer ACKs the window. */
static struct mh_qp *long_write(struct mh *h)
{
	struct mh_mr *src = mh_mr(h, 131072, ERNIC_ACCESS_READ_WRITE, false, 7);
	struct mh_qp *q = mh_qp_up(h, 2, 256, SQ_PSN, RQ_PSN, 10, 7, 7);

	mh_post(h, q, ERNIC_OP_RDMA_WRITE, src->buf.bus, 131072, 0x1000,
		0x1234, 0);
	mh_run(h);
	assert_int_equal(sent_from(h, SQ_PSN), 256);
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, SQ_PSN + 255);
	assert_int_equal(sent_from(h, SQ_PSN + 256), 256);
	return q;
}

/* Defect (app_netns, ib_send_lat -s 2 MiB on the frame wire: retry
 * count exceeded): a retry sends its whole WQE again (PG332), and the
 * packets the peer had acknowledged went all at once, outside the
 * window, which starts at the oldest unacknowledged PSN. The peer's
 * 256-frame ring dropped the tail, where the packets it lacked were,
 * on every retry. The retry's duplicates are windowed too, clocked by
 * the ACKs the peer sends for them (every 32nd packet asks for one). */
void test_retry_window(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = long_write(h);
	uint32_t cqe[4], n;

	/* packets 480.. lost: the whole WQE again, one window of it */
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, SQ_PSN + 479);
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ, SQ_PSN + 480);
	assert_int_equal(sent_from(h, SQ_PSN), 256);
	/* the peer's ACK for duplicate 31 (its last PSN taken): 32 more */
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, SQ_PSN + 479);
	assert_int_equal(sent_from(h, SQ_PSN + 256), 32);
	/* duplicate 63's: 32 more again, and so on */
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, SQ_PSN + 479);
	assert_int_equal(sent_from(h, SQ_PSN + 288), 32);
	for (n = 0; n < 6; n++)
		rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, SQ_PSN + 479);
	assert_int_equal(sent_from(h, SQ_PSN + 320), 192);
	/* the rest, past the duplicates, is taken: the WRITE completes
	 * after one retry */
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, SQ_PSN + 511);
	no_tx(h);
	assert_int_equal(mh_cqes(h, q, cqe, 4), 1);
	assert_false(mh_fatal(h, q));
	assert_int_equal(mh_reg(h, ERNIC_RETRYCNTSTS), 1);
}

/* Defect (app_netns_loss, ernic_check under 1% loss, with the windows
 * clocked as above: retry count exceeded in a second): ACKs for the last
 * attempt's packets completed the WQE while its retry still sent
 * duplicates, and the windows went on starting inside the WQE gone: the
 * next WQE was never sent. A completed WQE is nothing the peer holds. */
void test_retry_window_done(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = long_write(h);
	uint32_t cqe[4];

	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, SQ_PSN + 299);
	mh_advance(h, 5 * MS);		/* timeout 10: 4.2 ms */
	mh_run(h);
	assert_int_equal(sent_from(h, SQ_PSN), 256);	/* duplicates */
	/* the first attempt's last packets arrive after all */
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, SQ_PSN + 511);
	assert_int_equal(mh_cqes(h, q, cqe, 4), 1);
	mh_post(h, q, ERNIC_OP_SEND, 0, 8, 0, 0, 0);
	mh_run(h);
	assert_int_equal(sent_from(h, SQ_PSN + 512), 1);
	rx_ack(h, ROCE_RC_ACK, ROCE_AETH_ACK, SQ_PSN + 512);
	assert_int_equal(mh_cqes(h, q, cqe, 4), 1);
	assert_false(mh_fatal(h, q));
}
