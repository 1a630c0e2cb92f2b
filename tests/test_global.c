// SPDX-License-Identifier: MIT
/*
 * PG332 ch.6 "ERNIC Global Configuration" and "QP1 Creation", checked
 * register by register after ibv_open_device() on software devices.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_util.h"

static void check_dma_base(uint64_t bus, uint64_t align)
{
	assert_true(bus != 0);
	assert_int_equal(bus % align, 0);
}

static void test_global_config_ipv4(void **state)
{
	struct ibv_context *ctx = tu_open(DEV4);
	uint32_t v;

	/* Error buffers: 256 x 256 B (Table 3-2). */
	check_dma_base(tu_rd64(ctx, ERNIC_ERRBUFBA, ERNIC_ERRBUFBAMSB), 256);
	v = tu_rd(ctx, ERNIC_ERRBUFSZ);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_ERRBUFSZ_NUM, v), 256);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_ERRBUFSZ_SIZE, v), 256);
	assert_int_equal(tu_rd(ctx, ERNIC_ERRBUFWPTR), 0);
	/* Incoming packet error status queue: 8-byte entries. */
	check_dma_base(tu_rd64(ctx, ERNIC_IPKTERRQBA, ERNIC_IPKTERRQBAMSB), 8);
	assert_int_equal(tu_rd(ctx, ERNIC_IPKTERRQSZ), 512);
	assert_int_equal(tu_rd(ctx, ERNIC_IPKTERRQWPTR), 0);
	/* Response error buffer: depth [31:16], entry size [15:0]. */
	check_dma_base(tu_rd64(ctx, ERNIC_RESPERRPKTBA, ERNIC_RESPERRPKTBAMSB),
		       64);
	assert_int_equal(tu_rd(ctx, ERNIC_RESPERRSZ), 256u << 16 | 64);
	/* Write retry buffers: C_MAX_WR_RETRY_DATA_BUF_DEPTH x 4 KB. */
	check_dma_base(tu_rd64(ctx, ERNIC_DATBUFBA, ERNIC_DATBUFBAMSB), 4096);
	assert_int_equal(tu_rd(ctx, ERNIC_DATBUFSZ), 4096u << 16 | 512);
	/* Interrupts the provider services. */
	assert_int_equal(tu_rd(ctx, ERNIC_INTEN),
			 ERNIC_INT_WQE_COMPLETION | ERNIC_INT_RQ_PKT_RX |
				 ERNIC_INT_ILLEGAL_OPCODE | ERNIC_INT_FATAL |
				 ERNIC_INT_MAD_RX | ERNIC_INT_PKT_VALID_ERR |
				 ERNIC_INT_CNP);
	/* lo has the all-zero MAC. */
	assert_int_equal(tu_rd(ctx, ERNIC_MACXADDLSB), 0);
	assert_int_equal(tu_rd(ctx, ERNIC_MACXADDMSB), 0);
	assert_int_equal(tu_rd(ctx, ERNIC_IPV4XADD), 0x7f000002);
	for (int w = 0; w < 4; w++)
		assert_int_equal(tu_rd(ctx, ERNIC_IPV6XADD1 + 4 * w), 0);
	/* Enabled, error buffer on, QP count and UDP source port. */
	v = tu_rd(ctx, ERNIC_XRNICCONF);
	assert_int_equal(v & ERNIC_XRNICCONF_EN, ERNIC_XRNICCONF_EN);
	assert_int_equal(v & ERNIC_XRNICCONF_ERRBUF_EN,
			 ERNIC_XRNICCONF_ERRBUF_EN);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_XRNICCONF_TX_ACK_GEN, v), 0);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_XRNICCONF_NUM_QP, v),
			 TEST_C_NUM_QP);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_XRNICCONF_UDP_SPORT, v), 49152);
	v = tu_rd(ctx, ERNIC_XRNICADCONF);
	assert_int_equal(v, ERNIC_FIELD_PREP(ERNIC_XRNICADCONF_BASE_COUNT_WIDTH,
					     10));
	ibv_close_device(ctx);
}

static void check_qp1(struct ibv_context *ctx, bool v6)
{
	const uint32_t i = ERNIC_QP1;
	uint64_t rq = tu_rd64(ctx, ERNIC_QP(i, ERNIC_RQBA),
			      ERNIC_QP(i, ERNIC_RQBAMSB));
	uint64_t sq = tu_rd64(ctx, ERNIC_QP(i, ERNIC_SQBA),
			      ERNIC_QP(i, ERNIC_SQBAMSB));
	uint64_t cq = tu_rd64(ctx, ERNIC_QP(i, ERNIC_CQBA),
			      ERNIC_QP(i, ERNIC_CQBAMSB));
	uint64_t cqdb = tu_rd64(ctx, ERNIC_QP(i, ERNIC_CQDBADD),
				ERNIC_QP(i, ERNIC_CQDBADDMSB));
	uint64_t rqdb = tu_rd64(ctx, ERNIC_QP(i, ERNIC_RQWPTRDBADD),
				ERNIC_QP(i, ERNIC_RQWPTRDBADDMSB));

	check_dma_base(rq, 256);
	check_dma_base(sq, 32);
	check_dma_base(cq, 32);
	check_dma_base(cqdb, 4);
	check_dma_base(rqdb, 4);
	/* The DMA allocator hands out bus addresses above 4 GiB: the MSB
	 * registers must carry them. */
	assert_true(rq >> 32 && sq >> 32 && cq >> 32 && cqdb >> 32);
	assert_true(cqdb != rqdb);
	/* ERNIC_QP1_DEPTH (128) for both queues. */
	assert_int_equal(tu_rd(ctx, ERNIC_QP(i, ERNIC_QDEPTH)),
			 128u << 16 | 128);
	assert_int_equal(tu_rd(ctx, ERNIC_QP(i, ERNIC_QPCONF)),
			 ERNIC_QPCONF_QP_EN | ERNIC_QPCONF_HW_HANDSHAKE_DIS |
				 ERNIC_QPCONF_CQE_WRITE_EN |
				 (v6 ? ERNIC_QPCONF_IPV6 : 0) |
				 ERNIC_FIELD_PREP(ERNIC_QPCONF_RQ_BUF_SIZE,
						  ERNIC_QP1_BUF_SIZE /
							  ERNIC_RQ_BUF_UNIT));
	/* QP1 has neither PSN nor PD registers (Table 2-7): they read 0. */
	assert_int_equal(tu_rd(ctx, ERNIC_QP(i, ERNIC_SQPSN)), 0);
	assert_int_equal(tu_rd(ctx, ERNIC_QP(i, ERNIC_PD)), 0);
}

static void test_qp1_ipv4(void **state)
{
	struct ibv_context *ctx = tu_open(DEV4);

	check_qp1(ctx, false);
	ibv_close_device(ctx);
}

static void test_global_config_ipv6(void **state)
{
	struct ibv_context *ctx = tu_open(DEV6);

	/* ::1: IPv6XADD1 holds address bits [31:0]. */
	assert_int_equal(tu_rd(ctx, ERNIC_IPV6XADD1), 1);
	assert_int_equal(tu_rd(ctx, ERNIC_IPV6XADD2), 0);
	assert_int_equal(tu_rd(ctx, ERNIC_IPV6XADD3), 0);
	assert_int_equal(tu_rd(ctx, ERNIC_IPV6XADD4), 0);
	assert_int_equal(tu_rd(ctx, ERNIC_IPV4XADD), 0);
	check_qp1(ctx, true);
	ibv_close_device(ctx);
}

/* Two contexts share one IP: the second open must not reconfigure it,
 * and closing the first must leave it running for the second. */
static void test_two_contexts(void **state)
{
	struct ibv_context *a = tu_open(DEV4);
	uint64_t errbuf = tu_rd64(a, ERNIC_ERRBUFBA, ERNIC_ERRBUFBAMSB);
	struct ibv_context *b = tu_open(DEV4);

	assert_int_equal(tu_rd64(b, ERNIC_ERRBUFBA, ERNIC_ERRBUFBAMSB), errbuf);
	ibv_close_device(a);
	assert_int_equal(tu_rd(b, ERNIC_XRNICCONF) & ERNIC_XRNICCONF_EN, 1);
	ibv_close_device(b);
}

/* ernict8: C_NUM_QP=8, C_EN_INITIATOR_LITE=0, C_EN_WR_RETRY_DATA_BUF=0,
 * C_M_AXI_ADDR_WIDTH=32 (tests/devices.sh). */
static void test_table_2_6_params(void **state)
{
	struct ibv_context *ctx = tu_open(DEV8);
	struct ibv_device_attr a;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	char *buf = aligned_alloc(4096, 4096);
	struct ibv_mr *mr;

	assert_int_equal(ERNIC_FIELD_GET(ERNIC_XRNICCONF_NUM_QP,
					 tu_rd(ctx, ERNIC_XRNICCONF)), 8);
	assert_int_equal(ibv_query_device(ctx, &a), 0);
	assert_int_equal(a.max_qp, 7);
	/* No incoming READ without C_EN_INITIATOR_LITE. */
	assert_int_equal(a.max_qp_rd_atom, 0);
	/* No write retry buffers configured. */
	assert_int_equal(tu_rd(ctx, ERNIC_DATBUFSZ), 0);
	assert_int_equal(tu_rd64(ctx, ERNIC_DATBUFBA, ERNIC_DATBUFBAMSB), 0);
	/* A 32-bit master: every DMA address below 4 GiB. */
	assert_int_equal(tu_rd(ctx, ERNIC_ERRBUFBAMSB), 0);
	assert_true(tu_rd(ctx, ERNIC_ERRBUFBA) != 0);
	assert_int_equal(tu_rd(ctx, ERNIC_QP(1, ERNIC_RQBAMSB)), 0);
	assert_int_equal(tu_rd(ctx, ERNIC_QP(1, ERNIC_CQDBADDMSB)), 0);
	/* QP 9 does not exist: its registers read 0 even when written. */
	assert_int_equal(ernicdv_reg_write(ctx, ERNIC_QP(9, ERNIC_QPCONF), 1),
			 0);
	assert_int_equal(tu_rd(ctx, ERNIC_QP(9, ERNIC_QPCONF)), 0);
	/* Remote access cannot be granted: incoming READ/WRITE are off. */
	errno = 0;
	assert_null(ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
						     IBV_ACCESS_REMOTE_WRITE));
	assert_int_equal(errno, EINVAL);
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(mr);
	assert_int_equal(tu_rd(ctx, ERNIC_PDT(mr->lkey & 0xff,
					      ERNIC_BUFBASEADDRMSB)), 0);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	free(buf);
	ibv_close_device(ctx);
}

static void test_query_device_ex_input(void **state)
{
	struct ibv_context *ctx = tu_open(DEV4);
	struct ibv_query_device_ex_input in = { .comp_mask = 1 };
	struct ibv_device_attr_ex ax;

	assert_int_equal(ibv_query_device_ex(ctx, &in, &ax), EINVAL);
	in.comp_mask = 0;
	assert_int_equal(ibv_query_device_ex(ctx, &in, &ax), 0);
	ibv_close_device(ctx);
}

static void test_dv_bad_offsets(void **state)
{
	struct ibv_context *ctx = tu_open(DEV4);
	uint32_t v;

	assert_int_equal(ernicdv_reg_read(ctx, 0x20002, &v), EINVAL);
	assert_int_equal(ernicdv_reg_read(ctx, ERNIC_REG_SPACE_SIZE, &v),
			 EINVAL);
	assert_int_equal(ernicdv_reg_read(NULL, 0, &v), EINVAL);
	ibv_close_device(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_global_config_ipv4),
		cmocka_unit_test(test_qp1_ipv4),
		cmocka_unit_test(test_global_config_ipv6),
		cmocka_unit_test(test_two_contexts),
		cmocka_unit_test(test_dv_bad_offsets),
		cmocka_unit_test(test_table_2_6_params),
		cmocka_unit_test(test_query_device_ex_input),
	};

	tu_require_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
