// SPDX-License-Identifier: MIT
/*
 * QP1 of the ERNIC model on the test bench (model_harness): MADs stored
 * whole as ernic_hw.h says, the GSI receiver's checks, the RQ full, and
 * frames software builds sent with a good ICRC or refused with an
 * ERRFLAG CQE. Frames are built and read with the provider's codec
 * (common/ernic_mad_frame.c), so the two sides are checked against each
 * other.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "ernic_mad_frame.h"
#include "model_harness.h"

static struct mh H;
static uint8_t mad_in[IB_MAD_SIZE];

static int setup(void **state)
{
	(void)state;
	mh_init(&H);
	mh_qp1_up(&H);
	for (unsigned int k = 0; k < IB_MAD_SIZE; k++)
		mad_in[k] = (uint8_t)(k * 13 + 1);
	mad_in[1] = IB_MGMT_CLASS_CM;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	mh_fini(&H);
	return 0;
}

/* A GSI MAD from the peer's QP1; tweak may change it before it goes. */
static void rx_mad(void (*tweak)(struct roce_pkt *p))
{
	struct roce_pkt p = {
		.opcode = ROCE_UD_SEND_ONLY, .dqpn = IB_QP1, .psn = 7,
		.deth_qkey = IB_QP1_QKEY, .deth_sqpn = IB_QP1,
		.payload = mad_in, .payload_len = IB_MAD_SIZE,
	};

	if (tweak)
		tweak(&p);
	mh_rx(&H, &p);
}

static void test_rx_stored_whole(void **state)
{
	uint8_t frame[ERNIC_QP1_BUF_SIZE], mad[IB_MAD_SIZE];
	struct ernic_mad_peer from;
	uint32_t len, drops = mh_errbuf_count(&H);

	(void)state;
	rx_mad(NULL);
	len = mh_qp1_recv(&H, frame, sizeof(frame));
	assert_int_equal(len, 14 + 20 + 8 + 12 + 8 + IB_MAD_SIZE);
	assert_int_equal(ernic_mad_frame_parse(frame, len, AF_INET, &from, mad),
			 0);
	assert_memory_equal(mad, mad_in, IB_MAD_SIZE);
	assert_memory_equal(from.gid + 12, H.from_peer.src, 4);
	assert_int_equal(from.qpn, IB_QP1);
	assert_int_equal(from.udp_sport, H.from_peer.sport);
	assert_int_equal(from.pkey, ROCE_DEFAULT_PKEY);
	assert_int_equal(mh_errbuf_count(&H), drops);
	assert_int_equal(mh_reg(&H, ERNIC_INAMPKTCNT) >> 16, 1);
	assert_true(mh_reg(&H, ERNIC_INTSTS) & ERNIC_INT_MAD_RX);
	/* UD: nothing is ever sent back. */
	assert_false(mh_tx_next(&H, &(struct roce_pkt){ 0 }));
}

static void bad_qkey(struct roce_pkt *p) { p->deth_qkey = 0x12345678; }
static void bad_pkey(struct roce_pkt *p) { p->pkey = 0x1234; }
static void short_mad(struct roce_pkt *p) { p->payload_len = 252; }
static void rc_opcode(struct roce_pkt *p) { p->opcode = ROCE_RC_SEND_ONLY; }
static void other_qp(struct roce_pkt *p) { p->dqpn = 2; }

static void test_rx_checks(void **state)
{
	static const struct {
		void (*tweak)(struct roce_pkt *p);
		uint32_t syndrome;
	} cases[] = {
		{ bad_qkey, ROCE_SYN_BTH_QP },
		{ bad_pkey, ROCE_SYN_BTH_QP },
		{ short_mad, ROCE_SYN_PMTU },
		{ rc_opcode, ROCE_SYN_OPCODE },
		{ other_qp, ROCE_SYN_BTH_QP },
	};
	uint8_t frame[ERNIC_QP1_BUF_SIZE];

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		uint32_t n = mh_errbuf_count(&H);

		rx_mad(cases[k].tweak);
		assert_int_equal(mh_errbuf_count(&H), n + 1);
		assert_int_equal(mh_errbuf_syndrome(&H, n), cases[k].syndrome);
		assert_int_equal(mh_qp1_recv(&H, frame, sizeof(frame)), 0);
	}
	/* A good one still gets through. */
	rx_mad(NULL);
	assert_int_not_equal(mh_qp1_recv(&H, frame, sizeof(frame)), 0);
}

static void test_rx_full(void **state)
{
	uint8_t frame[ERNIC_QP1_BUF_SIZE];
	uint32_t n = mh_errbuf_count(&H);

	(void)state;
	/* 8 elements hold 7 (a ring); the 8th is dropped: no RNR on UD. */
	for (int k = 0; k < 8; k++)
		rx_mad(NULL);
	assert_int_equal(mh_errbuf_count(&H), n + 1);
	assert_int_equal(mh_errbuf_syndrome(&H, n), ROCE_SYN_RQ_FULL);
	for (int k = 0; k < 7; k++)
		assert_int_not_equal(mh_qp1_recv(&H, frame, sizeof(frame)), 0);
	assert_int_equal(mh_qp1_recv(&H, frame, sizeof(frame)), 0);
	rx_mad(NULL);
	assert_int_not_equal(mh_qp1_recv(&H, frame, sizeof(frame)), 0);
	assert_false(mh_tx_next(&H, &(struct roce_pkt){ 0 }));
}

static uint32_t build(uint8_t *frame, const uint8_t *src_ip)
{
	struct ernic_mad_frame_src src = { .family = AF_INET,
					   .udp_sport = 0xC123 };
	struct ernic_mad_peer to = { .qpn = IB_QP1 };

	memcpy(src.addr, src_ip, 4);
	to.gid[10] = to.gid[11] = 0xFF;
	memcpy(to.gid + 12, H.from_peer.src, 4);
	return ernic_mad_frame_build(frame, ERNIC_QP1_BUF_SIZE, &src, &to, 5,
				     mad_in);
}

static void test_tx_sent(void **state)
{
	uint8_t frame[ERNIC_QP1_BUF_SIZE];
	struct roce_pkt p;
	uint32_t slot, cqe;

	(void)state;
	slot = mh_qp1_send(&H, frame, build(frame, H.from_peer.dst),
			   ERNIC_OP_SEND);
	/* mh_tx_next checks the ICRC under what the port sent. */
	assert_true(mh_tx_next(&H, &p));
	/* The bench's port is the UDP wire's kind: the kernel would write
	 * the device's own UDP source port, whatever the frame said. */
	assert_int_equal(H.tx[H.ntx - 1].l3.sport,
			 ERNIC_FIELD_GET(ERNIC_XRNICCONF_UDP_SPORT,
					 mh_reg(&H, ERNIC_XRNICCONF)));
	assert_int_equal(p.opcode, ROCE_UD_SEND_ONLY);
	assert_int_equal(p.dqpn, IB_QP1);
	assert_int_equal(p.deth_qkey, IB_QP1_QKEY);
	assert_int_equal(p.deth_sqpn, IB_QP1);
	assert_int_equal(p.payload_len, IB_MAD_SIZE);
	assert_memory_equal(p.payload, mad_in, IB_MAD_SIZE);
	assert_false(mh_tx_next(&H, &p));
	cqe = mh_qp1_cqe(&H, slot);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_WRID, cqe), slot);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe), 0);
	assert_int_equal(mh_reg(&H, ERNIC_OUTAMPKTCNT) >> 16, 1);
}

static void test_tx_refused(void **state)
{
	static const uint8_t not_ours[4] = { 192, 0, 2, 99 };
	uint8_t frame[ERNIC_QP1_BUF_SIZE], bad[ERNIC_QP1_BUF_SIZE];
	uint32_t len = build(frame, H.from_peer.dst), slot;
	struct roce_pkt p;

	(void)state;
	/* Each refused with ERRFLAG, nothing on the wire, QP1 goes on. */
	slot = mh_qp1_send(&H, bad, build(bad, not_ours), ERNIC_OP_SEND);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG,
					 mh_qp1_cqe(&H, slot)), 1);
	slot = mh_qp1_send(&H, frame, len, ERNIC_OP_RDMA_WRITE);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG,
					 mh_qp1_cqe(&H, slot)), 1);
	assert_true(mh_reg(&H, ERNIC_INTSTS) & ERNIC_INT_ILLEGAL_OPCODE);
	memcpy(bad, frame, len);
	bad[14 + 10] ^= 1;		/* IPv4 header checksum */
	slot = mh_qp1_send(&H, bad, len, ERNIC_OP_SEND);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG,
					 mh_qp1_cqe(&H, slot)), 1);
	memcpy(bad, frame, len);
	bad[14 + 20 + 8] = ROCE_RC_SEND_ONLY;	/* BTH opcode */
	slot = mh_qp1_send(&H, bad, len, ERNIC_OP_SEND);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG,
					 mh_qp1_cqe(&H, slot)), 1);
	slot = mh_qp1_send(&H, frame, len - 4, ERNIC_OP_SEND);	/* short */
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG,
					 mh_qp1_cqe(&H, slot)), 1);
	assert_false(mh_tx_next(&H, &p));
	slot = mh_qp1_send(&H, frame, len, ERNIC_OP_SEND);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG,
					 mh_qp1_cqe(&H, slot)), 0);
	assert_true(mh_tx_next(&H, &p));
	assert_memory_equal(p.payload, mad_in, IB_MAD_SIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rx_stored_whole, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rx_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rx_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tx_sent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tx_refused, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("model_qp1", tests, NULL, NULL);
}
