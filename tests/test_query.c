// SPDX-License-Identifier: MIT
/* query_device(_ex), query_port and the GID table as verbs users see them. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "verbs_util.h"

static void test_query_device(void **state)
{
	struct ibv_context *ctx = tu_open(DEV4);
	struct ibv_device_attr a;
	struct ibv_device_attr_ex ax;

	assert_int_equal(ibv_query_device(ctx, &a), 0);
	assert_string_equal(a.fw_ver, "3.1");
	assert_int_equal(a.vendor_id, 0x10ee);
	assert_int_equal(a.max_qp, TEST_C_NUM_QP - 1);
	assert_int_equal(a.max_mr, 256);
	assert_int_equal(a.max_sge, 16);	/* staged (man/ernic.7) */
	assert_int_equal(a.max_sge_rd, 16);
	assert_int_equal(a.max_qp_wr, 4095);
	assert_int_equal(a.atomic_cap, IBV_ATOMIC_NONE);
	assert_int_equal(a.phys_port_cnt, 1);
	assert_true(a.node_guid != 0);

	memset(&ax, 0xa5, sizeof(ax));
	assert_int_equal(ibv_query_device_ex(ctx, NULL, &ax), 0);
	assert_memory_equal(&ax.orig_attr, &a, sizeof(a));
	assert_int_equal(ax.phys_port_cnt_ex, 1);
	/* No TSO, RSS, ODP...: extended capabilities read as zero. */
	assert_int_equal(ax.odp_caps.general_caps, 0);
	assert_int_equal(ax.tso_caps.max_tso, 0);
	ibv_close_device(ctx);
}

static void test_query_port(void **state)
{
	struct ibv_context *ctx = tu_open(DEV4);
	struct ibv_port_attr p;

	assert_int_equal(ibv_query_port(ctx, 1, &p), 0);
	assert_int_equal(p.state, IBV_PORT_ACTIVE);
	assert_int_equal(p.link_layer, IBV_LINK_LAYER_ETHERNET);
	assert_int_equal(p.max_mtu, IBV_MTU_4096);
	assert_int_equal(p.active_mtu, IBV_MTU_4096); /* lo: MTU 65536 */
	assert_int_equal(p.gid_tbl_len, 16);
	assert_int_equal(p.max_msg_sz, 8u << 20);
	assert_int_equal(p.pkey_tbl_len, 1);
	assert_int_equal(ibv_query_port(ctx, 2, &p), EINVAL);
	ibv_close_device(ctx);
}

static void test_gid(void **state)
{
	struct ibv_context *ctx = tu_open(DEV4);
	union ibv_gid gid;
	struct ibv_gid_entry e;
	uint8_t want[16] = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 2 };
	__be16 pkey;

	assert_int_equal(ibv_query_gid(ctx, 1, 0, &gid), 0);
	assert_memory_equal(gid.raw, want, 16);
	assert_int_equal(ibv_query_gid_ex(ctx, 1, 0, &e, 0), 0);
	assert_int_equal(e.gid_type, IBV_GID_TYPE_ROCE_V2);
	assert_memory_equal(e.gid.raw, want, 16);
	assert_int_equal(e.ndev_ifindex, 1); /* lo */
	/* Unused indices hold no GID (ENODATA), not an error of the table:
	 * the table walk libibverbs does must succeed. */
	assert_int_equal(ibv_query_gid_ex(ctx, 1, 15, &e, 0), ENODATA);
	{
		struct ibv_gid_entry tab[16];

		assert_int_equal(ibv_query_gid_table(ctx, tab, 16, 0), 1);
		assert_int_equal(tab[0].gid_type, IBV_GID_TYPE_ROCE_V2);
	}
	assert_int_equal(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
	assert_int_equal(ntohs(pkey), 0xffff);
	ibv_close_device(ctx);
}

static void test_cq_limits(void **state)
{
	struct ibv_context *ctx = tu_open(DEV4);

	errno = 0;
	assert_null(ibv_create_cq(ctx, 0, NULL, NULL, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(ibv_create_cq(ctx, 65536, NULL, NULL, 0));
	assert_null(ibv_create_cq(ctx, 16, NULL, NULL, 1));
	ibv_close_device(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_device),
		cmocka_unit_test(test_query_port),
		cmocka_unit_test(test_gid),
		cmocka_unit_test(test_cq_limits),
	};

	tu_require_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
