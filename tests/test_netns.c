// SPDX-License-Identifier: MIT
/*
 * Inside a network namespace with a veth link (see netns_mac.sh): the
 * device MAC comes from its netdev, and modify_qp to RTR resolves the
 * peer's MAC through the kernel's neighbour table (ARP over the veth).
 */
#include <errno.h>
#include <string.h>

#include "verbs_util.h"

#define NS_DEV "ernictm"	/* 198.51.100.7 on ernva, 02:00:5e:10:20:30 */

static void test_local_mac(void **state)
{
	struct ibv_context *ctx = tu_open(NS_DEV);

	assert_int_equal(tu_rd(ctx, ERNIC_MACXADDMSB), 0x0200);
	assert_int_equal(tu_rd(ctx, ERNIC_MACXADDLSB), 0x5e102030);
	assert_int_equal(tu_rd(ctx, ERNIC_IPV4XADD), 0xc6336407);
	ibv_close_device(ctx);
}

static void test_peer_mac(void **state)
{
	struct ibv_context *ctx = tu_open(NS_DEV);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp = tu_rc_qp(pd, cq, 4, 4);
	uint32_t before[64], after[64];
	struct ibv_qp_attr a;
	int m;

	tu_init_attr(&a, &m);
	assert_int_equal(ibv_modify_qp(qp, &a, m), 0);

	/* Nobody owns .9: resolution times out, nothing is written. */
	tu_qp_snapshot(ctx, qp->qp_num, before);
	tu_rtr_attr(&a, &m, "198.51.100.9", 7, 1);
	assert_int_equal(ibv_modify_qp(qp, &a, m), EHOSTUNREACH);
	tu_qp_snapshot(ctx, qp->qp_num, after);
	assert_memory_equal(before, after, sizeof(before));

	/* The peer namespace answers ARP for .8 with ernvb's MAC. */
	tu_rtr_attr(&a, &m, "198.51.100.8", 7, 1);
	assert_int_equal(ibv_modify_qp(qp, &a, m), 0);
	assert_int_equal(tu_rd(ctx, ERNIC_QP(qp->qp_num, ERNIC_MACDESADDMSB)),
			 0x0200);
	assert_int_equal(tu_rd(ctx, ERNIC_QP(qp->qp_num, ERNIC_MACDESADDLSB)),
			 0x5e102031);
	assert_int_equal(tu_rd(ctx, ERNIC_QP(qp->qp_num, ERNIC_IPDESADDR1)),
			 0xc6336408);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_local_mac),
		cmocka_unit_test(test_peer_mac),
	};

	tu_require_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
