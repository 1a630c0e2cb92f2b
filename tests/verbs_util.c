// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_util.h"

void tu_require_env(void)
{
	if (geteuid() != 0) {
		printf("SKIP: needs root (devices are made with mknod)\n");
		exit(77);
	}
	if (!getenv("SYSFS_PATH") || !getenv("RDMAV_DRIVERS")) {
		printf("SKIP: run through ctest (SYSFS_PATH/RDMAV_DRIVERS unset)\n");
		exit(77);
	}
}

/* ERNIC_TEST_SKIP_DEV="NAME: why" skips the tests that open NAME, with
 * the reason (tests/cross/aarch64.sh: qemu-user lacks an IPv6 socket
 * option the software device sets). */
static void skip_if_told(const char *name)
{
	const char *e = getenv("ERNIC_TEST_SKIP_DEV");
	size_t n = strlen(name);

	if (e && !strncmp(e, name, n) && e[n] == ':') {
		printf("SKIP: %s:%s\n", name, e + n + 1);
		skip();
	}
}

struct ibv_context *tu_open(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;

	skip_if_told(name);
	list = ibv_get_device_list(NULL);
	assert_non_null(list);
	for (int i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		fail_msg("cannot open %s", name);
	return ctx;
}

uint32_t tu_rd(struct ibv_context *ctx, uint32_t off)
{
	uint32_t v = 0xdeadbeef;

	assert_int_equal(ernicdv_reg_read(ctx, off, &v), 0);
	return v;
}

uint64_t tu_rd64(struct ibv_context *ctx, uint32_t lsb, uint32_t msb)
{
	return (uint64_t)tu_rd(ctx, msb) << 32 | tu_rd(ctx, lsb);
}

void tu_qp_snapshot(struct ibv_context *ctx, uint32_t i, uint32_t out[64])
{
	for (uint32_t r = 0; r < 64; r++)
		out[r] = tu_rd(ctx, ERNIC_QP(i, r * 4));
}

struct ibv_qp *tu_rc_qp(struct ibv_pd *pd, struct ibv_cq *cq, uint32_t sq,
			uint32_t rq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = sq, .max_recv_wr = rq,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	assert_non_null(qp);
	return qp;
}

void tu_init_attr(struct ibv_qp_attr *a, int *mask)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_INIT;
	a->pkey_index = 0;
	a->port_num = 1;
	a->qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ;
	*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		IBV_QP_ACCESS_FLAGS;
}

void tu_rtr_attr(struct ibv_qp_attr *a, int *mask, const char *peer_ip,
		 uint32_t dest_qpn, uint32_t rq_psn)
{
	struct in6_addr a6;
	struct in_addr a4;

	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = dest_qpn;
	a->rq_psn = rq_psn;
	a->max_dest_rd_atomic = 1;
	a->min_rnr_timer = 12;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = 1;
	a->ah_attr.grh.hop_limit = 1;
	a->ah_attr.grh.traffic_class = 0x68; /* DSCP 26 */
	if (inet_pton(AF_INET, peer_ip, &a4) == 1) {
		a->ah_attr.grh.dgid.raw[10] = 0xff;
		a->ah_attr.grh.dgid.raw[11] = 0xff;
		memcpy(&a->ah_attr.grh.dgid.raw[12], &a4, 4);
	} else {
		assert_int_equal(inet_pton(AF_INET6, peer_ip, &a6), 1);
		memcpy(a->ah_attr.grh.dgid.raw, &a6, 16);
	}
	*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
}

void tu_rts_attr(struct ibv_qp_attr *a, int *mask, uint32_t sq_psn)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTS;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 6;
	a->sq_psn = sq_psn;
	a->max_rd_atomic = 1;
	*mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
}
