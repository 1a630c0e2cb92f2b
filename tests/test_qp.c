// SPDX-License-Identifier: MIT
/*
 * PG332 ch.6 "RC QP Creation" and "QP Deletion" through ibv_create_qp /
 * ibv_modify_qp / ibv_destroy_qp, and every refused call leaving the QP's
 * registers untouched.
 */
#include <errno.h>
#include <string.h>

#include "verbs_util.h"

struct fix {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

static int setup4(void **state)
{
	static struct fix f;

	f.ctx = tu_open(DEV4);
	f.pd = ibv_alloc_pd(f.ctx);
	f.cq = ibv_create_cq(f.ctx, 256, NULL, NULL, 0);
	assert_non_null(f.pd);
	assert_non_null(f.cq);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	assert_int_equal(ibv_destroy_cq(f->cq), 0);
	assert_int_equal(ibv_dealloc_pd(f->pd), 0);
	assert_int_equal(ibv_close_device(f->ctx), 0);
	return 0;
}

static void to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	int m;

	tu_init_attr(&a, &m);
	assert_int_equal(ibv_modify_qp(qp, &a, m), 0);
}

static void to_rts(struct ibv_qp *qp, const char *peer)
{
	struct ibv_qp_attr a;
	int m;

	to_init(qp);
	tu_rtr_attr(&a, &m, peer, 0x123456, 0x00abcd);
	assert_int_equal(ibv_modify_qp(qp, &a, m), 0);
	tu_rts_attr(&a, &m, 0x654321);
	assert_int_equal(ibv_modify_qp(qp, &a, m), 0);
}

static void test_create_limits(void **state)
{
	struct fix *f = *state;
	struct ibv_qp_init_attr ia = { .send_cq = f->cq, .recv_cq = f->cq,
				       .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4,
						.max_recv_wr = 4 } };
	struct ibv_qp *qp;

	/* Capacities beyond what staging gives (man/ernic.7) are refused. */
	ia.cap.max_inline_data = 257;
	errno = 0;
	assert_null(ibv_create_qp(f->pd, &ia));
	assert_int_equal(errno, EINVAL);
	ia.cap.max_inline_data = 0;
	ia.cap.max_send_sge = 17;
	assert_null(ibv_create_qp(f->pd, &ia));
	ia.cap.max_send_sge = 2;
	qp = ibv_create_qp(f->pd, &ia);
	assert_non_null(qp);
	assert_int_equal(ia.cap.max_send_sge, 16);
	assert_int_equal(ia.cap.max_inline_data, 256);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	ia.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4 };
	ia.cap.max_send_sge = 1;
	ia.cap.max_send_wr = 4096;
	assert_null(ibv_create_qp(f->pd, &ia));
	ia.cap.max_send_wr = 4;
	ia.qp_type = IBV_QPT_UD;
	errno = 0;
	assert_null(ibv_create_qp(f->pd, &ia));
	assert_int_equal(errno, EOPNOTSUPP);
	ia.qp_type = IBV_QPT_RC;

	/* ibv_create_qp_ex with IBV_QP_INIT_ATTR_CREATE_FLAGS: no flag is
	 * taken as the kernel takes it (rdma-core's tests set the bit with
	 * none at random); a flag the IP has no use for is refused. */
	{
		struct ibv_qp_init_attr_ex ix = {
			.send_cq = f->cq, .recv_cq = f->cq,
			.qp_type = IBV_QPT_RC, .cap = ia.cap, .pd = f->pd,
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				     IBV_QP_INIT_ATTR_CREATE_FLAGS,
		};

		qp = ibv_create_qp_ex(f->ctx, &ix);
		assert_non_null(qp);
		assert_int_equal(ibv_destroy_qp(qp), 0);
		ix.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
		errno = 0;
		assert_null(ibv_create_qp_ex(f->ctx, &ix));
		assert_int_equal(errno, EOPNOTSUPP);
	}

	qp = ibv_create_qp(f->pd, &ia);
	assert_non_null(qp);
	/* QPN = ERNIC index, never QP1; reported caps are the real ones. */
	assert_true(qp->qp_num >= 2 && qp->qp_num <= TEST_C_NUM_QP);
	assert_int_equal(ia.cap.max_inline_data, 16);
	assert_int_equal(ia.cap.max_send_wr, 4);
	/* Busy resources refuse to go away. */
	assert_int_equal(ibv_destroy_cq(f->cq), EBUSY);
	assert_int_equal(ibv_dealloc_pd(f->pd), EBUSY);
	assert_int_equal(ibv_destroy_qp(qp), 0);
}

static void test_all_qps(void **state)
{
	struct fix *f = *state;
	struct ibv_qp *qp[TEST_C_NUM_QP];
	int n = 0;

	/* C_NUM_QP minus QP1 (reserved for CM). */
	while (n < TEST_C_NUM_QP && (qp[n] = tu_rc_qp(f->pd, f->cq, 1, 1)))
		if (++n == TEST_C_NUM_QP - 1)
			break;
	assert_int_equal(n, TEST_C_NUM_QP - 1);
	errno = 0;
	struct ibv_qp_init_attr ia = { .send_cq = f->cq, .recv_cq = f->cq,
				       .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1,
						.max_recv_wr = 1 } };
	assert_null(ibv_create_qp(f->pd, &ia));
	assert_int_equal(errno, ENOMEM);
	while (n--)
		assert_int_equal(ibv_destroy_qp(qp[n]), 0);
}

static void test_init_programs_queues(void **state)
{
	struct fix *f = *state;
	struct ibv_qp *qp = tu_rc_qp(f->pd, f->cq, 100, 300);
	const uint32_t i = qp->qp_num;
	uint64_t cqdb1, cqdb, rqdb;

	to_init(qp);
	assert_true(tu_rd64(f->ctx, ERNIC_QP(i, ERNIC_RQBA),
			    ERNIC_QP(i, ERNIC_RQBAMSB)) % 256 == 0);
	assert_true(tu_rd64(f->ctx, ERNIC_QP(i, ERNIC_SQBA),
			    ERNIC_QP(i, ERNIC_SQBAMSB)) >> 32);
	assert_true(tu_rd64(f->ctx, ERNIC_QP(i, ERNIC_CQBA),
			    ERNIC_QP(i, ERNIC_CQBAMSB)) >> 32);
	/* Rings are one deeper than the WRs they hold. */
	assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_QDEPTH)),
			 301u << 16 | 101);
	/* Not enabled before RTR; 4 KB RQ elements (16 x 256 B). */
	assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_QPCONF)),
			 ERNIC_QPCONF_HW_HANDSHAKE_DIS |
				 ERNIC_QPCONF_CQE_WRITE_EN | 16u << 16);
	/* Doorbells from the pool: 128 bytes per QP index (the RQ block's
	 * software word a cache line away from the IP's). */
	cqdb1 = tu_rd64(f->ctx, ERNIC_QP(1, ERNIC_CQDBADD),
			ERNIC_QP(1, ERNIC_CQDBADDMSB));
	cqdb = tu_rd64(f->ctx, ERNIC_QP(i, ERNIC_CQDBADD),
		       ERNIC_QP(i, ERNIC_CQDBADDMSB));
	rqdb = tu_rd64(f->ctx, ERNIC_QP(i, ERNIC_RQWPTRDBADD),
		       ERNIC_QP(i, ERNIC_RQWPTRDBADDMSB));
	assert_int_equal(cqdb - cqdb1, (uint64_t)(i - 1) * 128);
	assert_int_equal(rqdb, cqdb + 32);
	assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_PD)), f->pd->handle);
	assert_int_equal(ibv_destroy_qp(qp), 0);
}

static void test_rtr_rts(void **state)
{
	struct fix *f = *state;
	struct ibv_qp *qp = tu_rc_qp(f->pd, f->cq, 8, 8);
	const uint32_t i = qp->qp_num;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;

	to_rts(qp, "127.0.0.3");
	/* Local peer on lo: all-zero MAC. */
	assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_MACDESADDLSB)), 0);
	assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_MACDESADDMSB)), 0);
	assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_DESTQPCONF)), 0x123456);
	assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_IPDESADDR1)),
			 0x7f000003);
	for (int w = 1; w < 4; w++)
		assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_IPDESADDR1) +
						       4 * w), 0);
	assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_QPCONF)),
			 ERNIC_QPCONF_QP_EN | ERNIC_QPCONF_HW_HANDSHAKE_DIS |
				 ERNIC_QPCONF_CQE_WRITE_EN |
				 ERNIC_FIELD_PREP(ERNIC_QPCONF_PMTU,
						  ERNIC_PMTU_1024) |
				 16u << 16);
	/* Last request = the PSN before the first expected one. */
	assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_LSTRQREQ)),
			 0x04u << 24 | 0x00abcc);
	assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_QPADVCONF)),
			 0xffffu << 16 | 1u << 8 | 26);
	assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_SQPSN)), 0x654321);
	assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_TIMEOUTCONF)),
			 14u | 7u << 8 | 6u << 11 | 12u << 16);

	assert_int_equal(ibv_query_qp(qp, &qa, IBV_QP_STATE, &qia), 0);
	assert_int_equal(qa.qp_state, IBV_QPS_RTS);
	assert_int_equal(qa.dest_qp_num, 0x123456);
	assert_int_equal(qa.sq_psn, 0x654321);
	assert_int_equal(qia.cap.max_send_wr, 8);

	/* RTS->RTS may change the RNR timer only. */
	qa.min_rnr_timer = 3;
	assert_int_equal(ibv_modify_qp(qp, &qa, IBV_QP_MIN_RNR_TIMER), 0);
	assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_TIMEOUTCONF)) >> 16,
			 3);
	assert_int_equal(ibv_destroy_qp(qp), 0);
}

static void check_deleted(struct ibv_context *ctx, uint32_t i)
{
	static const uint32_t zeroed[] = {
		ERNIC_RQWPTRDBADD, ERNIC_RQWPTRDBADDMSB, ERNIC_SQPI,
		ERNIC_CQHEAD, ERNIC_RQCI, ERNIC_STATRQPIDB,
		ERNIC_STATCURSQPTR, ERNIC_SQPSN, ERNIC_LSTRQREQ, ERNIC_STATMSN,
	};

	for (size_t r = 0; r < sizeof(zeroed) / sizeof(zeroed[0]); r++)
		assert_int_equal(tu_rd(ctx, ERNIC_QP(i, zeroed[r])), 0);
	/* Disabled and kept in recovery mode; override released. */
	assert_int_equal(tu_rd(ctx, ERNIC_QP(i, ERNIC_QPCONF)),
			 ERNIC_QPCONF_QP_UNDER_RECOVERY);
	assert_int_equal(tu_rd(ctx, ERNIC_XRNICADCONF) &
				 (ERNIC_XRNICADCONF_SW_OVERRIDE |
				  ERNIC_XRNICADCONF_SW_OVERRIDE_QP), 0);
}

/* Stand in for traffic: move the pointers the deletion must clear,
 * using the software override as PG332 allows for these registers. */
static void dirty_pointers(struct ibv_context *ctx, uint32_t i)
{
	uint32_t ad = tu_rd(ctx, ERNIC_XRNICADCONF);

	assert_int_equal(ernicdv_reg_write(ctx, ERNIC_QP(i, ERNIC_SQPI), 5), 0);
	assert_int_equal(ernicdv_reg_write(ctx, ERNIC_QP(i, ERNIC_RQCI), 3), 0);
	ernicdv_reg_write(ctx, ERNIC_XRNICADCONF,
			  ad | ERNIC_XRNICADCONF_SW_OVERRIDE);
	ernicdv_reg_write(ctx, ERNIC_QP(i, ERNIC_CQHEAD), 5);
	ernicdv_reg_write(ctx, ERNIC_QP(i, ERNIC_STATRQPIDB), 3);
	ernicdv_reg_write(ctx, ERNIC_QP(i, ERNIC_STATCURSQPTR), 5);
	ernicdv_reg_write(ctx, ERNIC_QP(i, ERNIC_STATMSN), 9);
	ernicdv_reg_write(ctx, ERNIC_XRNICADCONF, ad);
	assert_int_equal(tu_rd(ctx, ERNIC_QP(i, ERNIC_CQHEAD)), 5);
	assert_int_equal(tu_rd(ctx, ERNIC_QP(i, ERNIC_STATMSN)), 9);
}

static void test_err_reset_destroy(void **state)
{
	struct fix *f = *state;
	struct ibv_qp *qp = tu_rc_qp(f->pd, f->cq, 8, 8);
	const uint32_t i = qp->qp_num;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	static uint8_t buf[64];
	struct ibv_mr *mr = ibv_reg_mr(f->pd, buf, sizeof(buf),
				       IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad = NULL;

	assert_non_null(mr);
	sge = (struct ibv_sge){ (uintptr_t)buf, sizeof(buf), mr->lkey };
	to_rts(qp, "127.0.0.3");
	dirty_pointers(f->ctx, i);
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_QPCONF)) &
				 ERNIC_QPCONF_QP_EN, 0);
	assert_int_equal(ibv_post_recv(qp, &wr, &bad), 0);
	a.qp_state = IBV_QPS_RESET;
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	check_deleted(f->ctx, i);
	/* RESET takes no receive (post_recv's gate closes with it)... */
	bad = NULL;
	assert_int_equal(ibv_post_recv(qp, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	/* A reset QP can be brought up again. */
	to_rts(qp, "127.0.0.3");
	assert_int_equal(tu_rd(f->ctx, ERNIC_QP(i, ERNIC_QPCONF)) &
				 ERNIC_QPCONF_QP_EN, 1);
	/* ... and opens again after it */
	assert_int_equal(ibv_post_recv(qp, &wr, &bad), 0);
	dirty_pointers(f->ctx, i);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	check_deleted(f->ctx, i);
	assert_int_equal(ibv_dereg_mr(mr), 0);
}

/* Each refused modify: EINVAL and the QP's 64 registers unchanged. */
static void test_refused_modifies(void **state)
{
	struct fix *f = *state;
	struct ibv_qp *qp = tu_rc_qp(f->pd, f->cq, 8, 8);
	uint32_t before[64], after[64];
	struct ibv_qp_attr a;
	int m;

#define REFUSE(setup)                                                     \
	do {                                                              \
		tu_qp_snapshot(f->ctx, qp->qp_num, before);               \
		setup;                                                    \
		assert_int_equal(ibv_modify_qp(qp, &a, m), EINVAL);       \
		tu_qp_snapshot(f->ctx, qp->qp_num, after);                \
		assert_memory_equal(before, after, sizeof(before));       \
	} while (0)

	/* Transitions that skip a state. */
	REFUSE((tu_rtr_attr(&a, &m, "127.0.0.3", 1, 1)));
	REFUSE((tu_rts_attr(&a, &m, 1)));
	/* RESET->INIT with bad or missing attributes. */
	REFUSE((tu_init_attr(&a, &m), a.port_num = 2));
	REFUSE((tu_init_attr(&a, &m), a.pkey_index = 1));
	REFUSE((tu_init_attr(&a, &m), m &= ~IBV_QP_ACCESS_FLAGS));
	/* an unknown bit (REMOTE_ATOMIC is taken, as by the kernel) */
	REFUSE((tu_init_attr(&a, &m), a.qp_access_flags |= 1 << 12));
	REFUSE((tu_init_attr(&a, &m), m |= IBV_QP_QKEY));
	REFUSE((tu_init_attr(&a, &m), a.cur_qp_state = IBV_QPS_RTS,
		m |= IBV_QP_CUR_STATE));
	to_init(qp);
	REFUSE((tu_rtr_attr(&a, &m, "127.0.0.3", 1, 1), a.path_mtu = 6));
	REFUSE((tu_rtr_attr(&a, &m, "127.0.0.3", 1, 1),
		a.dest_qp_num = 1u << 24));
	REFUSE((tu_rtr_attr(&a, &m, "127.0.0.3", 1, 1), a.rq_psn = 1u << 24));
	REFUSE((tu_rtr_attr(&a, &m, "127.0.0.3", 1, 1),
		a.ah_attr.is_global = 0));
	REFUSE((tu_rtr_attr(&a, &m, "127.0.0.3", 1, 1),
		a.ah_attr.grh.sgid_index = 1));
	REFUSE((tu_rtr_attr(&a, &m, "::1", 1, 1))); /* family mismatch */
	REFUSE((tu_rtr_attr(&a, &m, "127.0.0.3", 1, 1), a.min_rnr_timer = 32));
	REFUSE((tu_rtr_attr(&a, &m, "127.0.0.3", 1, 1),
		a.max_dest_rd_atomic = 17));
	REFUSE((tu_rtr_attr(&a, &m, "127.0.0.3", 1, 1), m |= IBV_QP_ALT_PATH));
	REFUSE((tu_rtr_attr(&a, &m, "127.0.0.3", 1, 1), m &= ~IBV_QP_AV));
	tu_rtr_attr(&a, &m, "127.0.0.3", 1, 1);
	assert_int_equal(ibv_modify_qp(qp, &a, m), 0);
	REFUSE((tu_rts_attr(&a, &m, 1), a.timeout = 32));
	REFUSE((tu_rts_attr(&a, &m, 1), a.retry_cnt = 8));
	REFUSE((tu_rts_attr(&a, &m, 1), a.rnr_retry = 8));
	REFUSE((tu_rts_attr(&a, &m, 1), a.sq_psn = 1u << 24));
	REFUSE((tu_rts_attr(&a, &m, 1), a.max_rd_atomic = 17));
	REFUSE((tu_rts_attr(&a, &m, 1), a.qp_state = IBV_QPS_SQD));
	REFUSE((tu_rts_attr(&a, &m, 1), a.qp_state = 42));
#undef REFUSE
	assert_int_equal(ibv_destroy_qp(qp), 0);
}

static void test_ipv6_qp(void **state)
{
	struct ibv_context *ctx = tu_open(DEV6);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp = tu_rc_qp(pd, cq, 4, 4);
	const uint32_t i = qp->qp_num;

	to_rts(qp, "::1");
	assert_int_equal(tu_rd(ctx, ERNIC_QP(i, ERNIC_IPDESADDR1)), 1);
	for (int w = 1; w < 4; w++)
		assert_int_equal(tu_rd(ctx, ERNIC_QP(i, ERNIC_IPDESADDR1) +
						    4 * w), 0);
	assert_int_equal(tu_rd(ctx, ERNIC_QP(i, ERNIC_QPCONF)) &
				 ERNIC_QPCONF_IPV6, ERNIC_QPCONF_IPV6);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_limits, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_all_qps, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_init_programs_queues, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_rtr_rts, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_err_reset_destroy, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_refused_modifies, setup4, teardown),
		cmocka_unit_test(test_ipv6_qp),
	};

	tu_require_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
