// SPDX-License-Identifier: MIT
/*
 * "mad" group of test_datapath: MADs between the two sides' QP1s through
 * ernicdv_mad_* and the IP (the model, or the virtual FPGA on the UIO
 * path): what arrives is what was sent, from whom it was sent, routed by
 * management class; wrong calls are refused.
 */
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <arpa/inet.h>

#include <cmocka.h>

#include "datapath_util.h"
#include "ernicdv.h"
#include "ibta.h"

static void gid_of(const char *ip, uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xFF;
	assert_int_equal(inet_pton(AF_INET, ip, gid + 12), 1);
}

static void mad_fill(uint8_t *m, uint8_t mgmt_class, uint32_t seed)
{
	for (unsigned int k = 0; k < IB_MAD_SIZE; k++)
		m[k] = (uint8_t)(seed * 131 + k * 7);
	m[0] = IB_MGMT_BASE_VERSION;
	m[1] = mgmt_class;
	m[2] = IB_CM_CLASS_VERSION;
	m[3] = IB_MGMT_METHOD_SEND;
}

static void send_retry(struct ernicdv_mad_agent *a,
		       const struct ernicdv_mad_addr *to, const uint8_t *m)
{
	int ret;

	for (int k = 0; k < 1000; k++) {
		ret = ernicdv_mad_send(a, to, m, IB_MAD_SIZE);
		if (ret != EAGAIN)
			break;
		poll(NULL, 0, 1);
	}
	assert_int_equal(ret, 0);
}

/* The next MAD for a within WAIT_MS, or fail. */
static void recv_wait(struct ernicdv_mad_agent *a,
		      struct ernicdv_mad_addr *from, uint8_t *m)
{
	struct pollfd p = { .fd = ernicdv_mad_agent_fd(a), .events = POLLIN };

	assert_int_equal(poll(&p, 1, WAIT_MS), 1);
	assert_int_equal(ernicdv_mad_recv(a, from, m, IB_MAD_SIZE), 0);
}

static void test_mad_exchange(void **state)
{
	struct ernicdv_mad_agent *a, *b;
	struct ernicdv_mad_addr to = { .qpn = IB_QP1 }, from;
	uint8_t out[IB_MAD_SIZE], in[IB_MAD_SIZE];
	uint8_t gid_a[16];

	(void)state;
	a = ernicdv_mad_agent_create(A.ctx, IB_MGMT_CLASS_CM);
	b = ernicdv_mad_agent_create(B.ctx, IB_MGMT_CLASS_CM);
	assert_non_null(a);
	assert_non_null(b);
	gid_of(A.ip, gid_a);

	/* 20 MADs A -> B, each answered B -> A, all in order, whole. */
	for (uint32_t n = 0; n < 20; n++) {
		gid_of(B.ip, to.gid);
		mad_fill(out, IB_MGMT_CLASS_CM, n);
		send_retry(a, &to, out);
		recv_wait(b, &from, in);
		assert_memory_equal(in, out, IB_MAD_SIZE);
		assert_memory_equal(from.gid, gid_a, 16);
		assert_int_equal(from.qpn, IB_QP1);
		assert_int_equal(from.pkey, ROCE_DEFAULT_PKEY);
		assert_int_equal(from.comp_mask, 0);

		to = from;		/* answer whoever asked */
		to.qpn = IB_QP1;
		mad_fill(out, IB_MGMT_CLASS_CM, n + 1000);
		send_retry(b, &to, out);
		recv_wait(a, &from, in);
		assert_memory_equal(in, out, IB_MAD_SIZE);
		to = (struct ernicdv_mad_addr){ .qpn = IB_QP1 };
	}
	assert_int_equal(ernicdv_mad_agent_destroy(a), 0);
	assert_int_equal(ernicdv_mad_agent_destroy(b), 0);
}

static void test_mad_routing(void **state)
{
	struct ernicdv_mad_agent *cm, *other, *a;
	struct ernicdv_mad_addr to = { .qpn = IB_QP1 }, from;
	uint8_t out[IB_MAD_SIZE], in[IB_MAD_SIZE];
	struct pollfd p;

	(void)state;
	a = ernicdv_mad_agent_create(A.ctx, 0x01);
	cm = ernicdv_mad_agent_create(B.ctx, IB_MGMT_CLASS_CM);
	assert_non_null(a);
	assert_non_null(cm);
	/* One agent per class and device. */
	assert_null(ernicdv_mad_agent_create(B.ctx, IB_MGMT_CLASS_CM));
	assert_int_equal(errno, EBUSY);
	gid_of(B.ip, to.gid);

	/* A class nobody on B registered is dropped there; the CM agent
	 * sees only its own class. */
	mad_fill(out, 0x03, 1);
	send_retry(a, &to, out);
	mad_fill(out, IB_MGMT_CLASS_CM, 2);
	send_retry(a, &to, out);
	recv_wait(cm, &from, in);
	assert_memory_equal(in, out, IB_MAD_SIZE);
	p = (struct pollfd){ .fd = ernicdv_mad_agent_fd(cm), .events = POLLIN };
	assert_int_equal(poll(&p, 1, 200), 0);
	assert_int_equal(ernicdv_mad_recv(cm, &from, in, IB_MAD_SIZE), EAGAIN);

	/* A second class on the same device gets its own MADs. */
	other = ernicdv_mad_agent_create(B.ctx, 0x03);
	assert_non_null(other);
	mad_fill(out, 0x03, 3);
	send_retry(a, &to, out);
	recv_wait(other, &from, in);
	assert_memory_equal(in, out, IB_MAD_SIZE);

	/* Bad calls. */
	assert_int_equal(ernicdv_mad_send(a, &to, out, 255), EINVAL);
	assert_int_equal(ernicdv_mad_send(a, NULL, out, IB_MAD_SIZE), EINVAL);
	to.comp_mask = 1;
	assert_int_equal(ernicdv_mad_send(a, &to, out, IB_MAD_SIZE), EINVAL);
	to.comp_mask = 0;
	to.gid[10] = 0;		/* not ::ffff:a.b.c.d: an IPv6 GID */
	assert_int_equal(ernicdv_mad_send(a, &to, out, IB_MAD_SIZE), EINVAL);
	assert_int_equal(ernicdv_mad_recv(a, &from, in, 100), EINVAL);
	assert_null(ernicdv_mad_agent_create(NULL, 1));
	assert_int_equal(errno, EINVAL);

	assert_int_equal(ernicdv_mad_agent_destroy(other), 0);
	assert_int_equal(ernicdv_mad_agent_destroy(cm), 0);
	assert_int_equal(ernicdv_mad_agent_destroy(a), 0);
	/* The class is free again. */
	cm = ernicdv_mad_agent_create(B.ctx, IB_MGMT_CLASS_CM);
	assert_non_null(cm);
	assert_int_equal(ernicdv_mad_agent_destroy(cm), 0);
}

/* More MADs than QP1's queues hold (ERNIC_QP1_DEPTH, 128), in bursts of
 * 100 (below the 127 its RQ holds): the sender's ring wraps and may be
 * full (EAGAIN), and none is lost while the receiver keeps up. */
static void test_mad_burst(void **state)
{
	struct ernicdv_mad_agent *a, *b;
	struct ernicdv_mad_addr to = { .qpn = IB_QP1 }, from;
	uint8_t out[IB_MAD_SIZE], in[IB_MAD_SIZE];
	uint32_t got = 0;

	(void)state;
	a = ernicdv_mad_agent_create(A.ctx, IB_MGMT_CLASS_CM);
	b = ernicdv_mad_agent_create(B.ctx, IB_MGMT_CLASS_CM);
	assert_non_null(a);
	assert_non_null(b);
	gid_of(B.ip, to.gid);
	for (uint32_t n = 0; n < 400; n++) {
		mad_fill(out, IB_MGMT_CLASS_CM, n);
		send_retry(a, &to, out);
		if ((n + 1) % 100)
			continue;
		while (got <= n) {
			recv_wait(b, &from, in);
			mad_fill(out, IB_MGMT_CLASS_CM, got++);
			assert_memory_equal(in, out, IB_MAD_SIZE);
		}
	}
	assert_int_equal(got, 400);
	assert_int_equal(ernicdv_mad_agent_destroy(a), 0);
	assert_int_equal(ernicdv_mad_agent_destroy(b), 0);
}

int dp_run_mad(void)
{
	const struct CMUnitTest mad[] = {
		cmocka_unit_test(test_mad_exchange),
		cmocka_unit_test(test_mad_routing),
		cmocka_unit_test(test_mad_burst),
	};

	return cmocka_run_group_tests_name("mad", mad, dp_group_setup,
					   dp_group_teardown);
}
