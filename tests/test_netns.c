// SPDX-License-Identifier: MIT
/*
 * Inside a network namespace with a veth link (see netns_mac.sh): the
 * device MAC comes from its netdev, and modify_qp to RTR resolves the
 * peer's MAC through the kernel's neighbour table (ARP over the veth).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
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

/* The next async event on ctx within 5 s: a port event for port 1. */
static void expect_port_event(struct ibv_context *ctx, enum ibv_event_type t)
{
	struct pollfd pf = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	if (poll(&pf, 1, 5000) != 1)
		fail_msg("no %s within 5 s", ibv_event_type_str(t));
	assert_int_equal(ibv_get_async_event(ctx, &ev), 0);
	assert_string_equal(ibv_event_type_str(ev.event_type),
			    ibv_event_type_str(t));
	assert_int_equal(ev.element.port_num, 1);
	ibv_ack_async_event(&ev);
}

static void link_set(const char *state)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "ip link set dev ernva %s", state);
	assert_int_equal(system(cmd), 0);
}

static enum ibv_port_state port_state(struct ibv_context *ctx)
{
	struct ibv_port_attr pa;

	assert_int_equal(ibv_query_port(ctx, 1, &pa), 0);
	return pa.state;
}

/* The netdev's link is the port: down and up are PORT_ERR and
 * PORT_ACTIVE on every open context, and query_port agrees. */
static void test_port_events(void **state)
{
	struct ibv_context *c1 = tu_open(NS_DEV), *c2 = tu_open(NS_DEV);
	struct pollfd pf = { .fd = c1->async_fd, .events = POLLIN };

	assert_int_equal(port_state(c1), IBV_PORT_ACTIVE);
	link_set("down");
	expect_port_event(c1, IBV_EVENT_PORT_ERR);
	expect_port_event(c2, IBV_EVENT_PORT_ERR);
	assert_int_equal(port_state(c2), IBV_PORT_DOWN);
	link_set("up");
	expect_port_event(c1, IBV_EVENT_PORT_ACTIVE);
	expect_port_event(c2, IBV_EVENT_PORT_ACTIVE);
	assert_int_equal(port_state(c1), IBV_PORT_ACTIVE);
	/* One event per change: an address change is not one. */
	assert_int_equal(system("ip addr add 198.51.100.77/24 dev ernva"), 0);
	assert_int_equal(poll(&pf, 1, 300), 0);
	assert_int_equal(system("ip addr del 198.51.100.77/24 dev ernva"), 0);
	ibv_close_device(c2);
	/* A closed context is gone from the list: no use after free. */
	link_set("down");
	expect_port_event(c1, IBV_EVENT_PORT_ERR);
	link_set("up");
	expect_port_event(c1, IBV_EVENT_PORT_ACTIVE);
	ibv_close_device(c1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_local_mac),
		cmocka_unit_test(test_peer_mac),
		cmocka_unit_test(test_port_events),
	};

	tu_require_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
