// SPDX-License-Identifier: MIT
/*
 * Bad-API cases of ibv_modify_qp: every transition IBTA 10.3.1 (and the
 * kernel's qp_state_table for RC) does not allow, and bad, missing or
 * foreign attributes in the ones it does. A refusal must leave the QP as
 * it was (ibv_query_qp: state and attributes) and usable: it still goes
 * to RTS and carries a SEND to its peer.
 */
#include <errno.h>
#include <string.h>

#include "test_badapi.h"
#include "verbs_util.h"

#define ALL_ATTRS \
	(IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | \
	 IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_AV | IBV_QP_PATH_MTU | \
	 IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | \
	 IBV_QP_RQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER | \
	 IBV_QP_SQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_DEST_QPN | \
	 IBV_QP_CAP)

static void snap(struct ibv_qp *qp, struct ibv_qp_attr *a)
{
	struct ibv_qp_init_attr ia;

	memset(a, 0, sizeof(*a));
	REQUIRE(ibv_query_qp(qp, a, ALL_ATTRS, &ia) == 0);
}

static void compare(const struct ibv_qp_attr *x, const struct ibv_qp_attr *y)
{
#define SAME(f) \
	CHECK(x->f == y->f, "refused, yet " #f " changed: %ld -> %ld", \
	      (long)x->f, (long)y->f)
	SAME(qp_state);
	SAME(path_mtu);
	SAME(qp_access_flags);
	SAME(pkey_index);
	SAME(port_num);
	SAME(dest_qp_num);
	SAME(rq_psn);
	SAME(sq_psn);
	SAME(timeout);
	SAME(retry_cnt);
	SAME(rnr_retry);
	SAME(min_rnr_timer);
	SAME(max_rd_atomic);
	SAME(max_dest_rd_atomic);
	SAME(ah_attr.is_global);
	SAME(ah_attr.port_num);
	SAME(ah_attr.grh.sgid_index);
#undef SAME
	CHECK(!memcmp(&x->ah_attr.grh.dgid, &y->ah_attr.grh.dgid,
		      sizeof(x->ah_attr.grh.dgid)),
	      "refused, yet the DGID changed");
}

/* The QP's 64 ERNIC registers (PG332 Table 2-7, QPi block). */
static void regs(struct ibv_qp *qp, uint32_t out[64])
{
	for (uint32_t r = 0; r < 64; r++)
		REQUIRE(ernicdv_reg_read(qp->context,
					 ERNIC_QP(qp->qp_num, r * 4),
					 &out[r]) == 0);
}

/* The call under test on c->qa, then what a refusal must leave. */
static void refused_modify(struct ba_ctx *c, struct ibv_qp_attr *a, int m)
{
	enum ibv_qp_state st = c->qa->state;
	struct ibv_qp_attr before, after;
	uint32_t r0[64], r1[64];

	snap(c->qa, &before);
	regs(c->qa, r0);
	CALL_INT(ibv_modify_qp(c->qa, a, m));
	regs(c->qa, r1);
	snap(c->qa, &after);
	compare(&before, &after);
	for (uint32_t r = 0; r < 64; r++)
		CHECK(r0[r] == r1[r],
		      "refused, yet QP register 0x%02x changed: %#x -> %#x",
		      r * 4, r0[r], r1[r]);
	CHECK(c->qa->state == st, "refused, yet ibv_qp.state changed: %d -> %d",
	      st, c->qa->state);
	ba_up(c);
	ba_check_exchange(c);
}

static void setup(struct ba_ctx *c, enum ibv_qp_state from);

/* RESET -> INIT with IBV_ACCESS_REMOTE_ATOMIC: accepted and kept. */
static void init_remote_atomic(struct ba_ctx *c)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	int m;

	setup(c, IBV_QPS_RESET);
	ba_init_attr(&a, &m);
	a.qp_access_flags |= IBV_ACCESS_REMOTE_ATOMIC;
	CALL_INT(ibv_modify_qp(c->qa, &a, m));
	CHECK(ibv_query_qp(c->qa, &a, IBV_QP_ACCESS_FLAGS, &ia) == 0,
	      "query_qp fails");
	CHECK(a.qp_access_flags & IBV_ACCESS_REMOTE_ATOMIC,
	      "access flags 0x%x lost REMOTE_ATOMIC", a.qp_access_flags);
}

/* c->qa in state from, its peer c->qb already RTS towards it. */
static void setup(struct ba_ctx *c, enum ibv_qp_state from)
{
	ba_open(c, true);
	c->qa = ba_qp(c, &c->a, 8, 8);
	ba_peer_for(c);
	ba_goto(c, from);
}

/* ---- Transitions: arg = from << 8 | to, with the attributes the
 * target usually takes, so that only the transition is wrong ---- */

static void bad_transition(struct ba_ctx *c)
{
	const enum ibv_qp_state from = c->arg >> 8, to = c->arg & 0xff;
	struct ibv_qp_attr a;
	int m;

	setup(c, from);
	if (to == IBV_QPS_INIT) {
		ba_init_attr(&a, &m);
	} else if (to == IBV_QPS_RTR) {
		ba_rtr_attr(&a, &m, c->b.ip, c->qb->qp_num);
	} else if (to == IBV_QPS_RTS) {
		ba_rts_attr(&a, &m);
	} else {
		memset(&a, 0, sizeof(a));
		a.qp_state = to;
		m = IBV_QP_STATE;
	}
	refused_modify(c, &a, m);
}

/* ---- Bad attributes in a valid transition ---- */

enum {
	/* RESET -> INIT */
	I_PORT0, I_PORT2, I_PKEY, I_ACC_BIT12, I_ACC_ATOMIC, I_NO_PKEY,
	I_NO_PORT, I_NO_ACCESS, I_QKEY, I_AV, I_CUR_STATE, I_MASK_BIT30,
	I_RATE_LIMIT, I_NO_STATE,
	/* INIT -> RTR */
	R_MTU0, R_MTU6, R_AH_PORT0, R_AH_PORT2, R_SGID_TBL, R_SGID_EMPTY,
	R_DQPN, R_RNR_TIMER, R_DEST_RD, R_NOT_GLOBAL, R_DGID_ZERO, R_NO_AV,
	R_NO_MTU, R_NO_DQPN, R_NO_RQ_PSN, R_NO_DEST_RD, R_NO_RNR_TIMER,
	R_SQ_PSN,
	/* RTR -> RTS */
	S_TIMEOUT, S_RETRY, S_RNR_RETRY, S_RD_ATOMIC, S_RNR_TIMER, S_NO_TIMEOUT,
	S_NO_RETRY, S_NO_RNR_RETRY, S_NO_SQ_PSN, S_NO_RD_ATOMIC, S_PATH_MTU,
	S_DEST_QPN,
	/* RTS -> RTS */
	T_RNR_TIMER, T_TIMEOUT,
};

static uint8_t plus_one(int limit)
{
	if (limit >= 255)
		ba_skip("the device limit leaves no 8-bit value above it");
	return (uint8_t)(limit + 1);
}

static void bad_attr_init(struct ba_ctx *c, struct ibv_qp_attr *a, int *m)
{
	ba_init_attr(a, m);
	switch (c->arg) {
	case I_PORT0:
		a->port_num = 0;
		break;
	case I_PORT2:
		a->port_num = (uint8_t)(c->dev.phys_port_cnt + 1);
		break;
	case I_PKEY:
		a->pkey_index = c->port.pkey_tbl_len;
		break;
	case I_ACC_BIT12:
		a->qp_access_flags |= 1 << 12;
		break;
	case I_ACC_ATOMIC:
		a->qp_access_flags |= IBV_ACCESS_REMOTE_ATOMIC;
		break;
	case I_NO_PKEY:
		*m &= ~IBV_QP_PKEY_INDEX;
		break;
	case I_NO_PORT:
		*m &= ~IBV_QP_PORT;
		break;
	case I_NO_ACCESS:
		*m &= ~IBV_QP_ACCESS_FLAGS;
		break;
	case I_QKEY:	/* a UD attribute */
		a->qkey = 0x11111111;
		*m |= IBV_QP_QKEY;
		break;
	case I_AV: {	/* belongs to INIT -> RTR */
		struct ibv_qp_attr r;
		int rm;

		ba_rtr_attr(&r, &rm, c->b.ip, c->qb->qp_num);
		a->ah_attr = r.ah_attr;
		*m |= IBV_QP_AV;
		break;
	}
	case I_CUR_STATE:
		a->cur_qp_state = IBV_QPS_RTS;
		*m |= IBV_QP_CUR_STATE;
		break;
	case I_MASK_BIT30:
		*m |= 1 << 30;
		break;
	case I_RATE_LIMIT:
		a->rate_limit = 1000;
		*m |= IBV_QP_RATE_LIMIT;
		break;
	case I_NO_STATE:	/* RESET -> RESET takes no attribute */
		*m &= ~IBV_QP_STATE;
		break;
	}
}

static void bad_attr_rtr(struct ba_ctx *c, struct ibv_qp_attr *a, int *m)
{
	struct ibv_gid_entry e;

	ba_rtr_attr(a, m, c->b.ip, c->qb->qp_num);
	switch (c->arg) {
	case R_MTU0:
		a->path_mtu = 0;
		break;
	case R_MTU6:
		a->path_mtu = (enum ibv_mtu)6;
		break;
	case R_AH_PORT0:
		a->ah_attr.port_num = 0;
		break;
	case R_AH_PORT2:
		a->ah_attr.port_num = (uint8_t)(c->dev.phys_port_cnt + 1);
		break;
	case R_SGID_TBL:
		a->ah_attr.grh.sgid_index = plus_one(c->port.gid_tbl_len - 1);
		break;
	case R_SGID_EMPTY:	/* within the table, but no GID there */
		if (c->port.gid_tbl_len < 2 ||
		    ibv_query_gid_ex(c->a.ctx, 1, 1, &e, 0) != ENODATA)
			ba_skip("GID index 1 is not empty");
		a->ah_attr.grh.sgid_index = 1;
		break;
	case R_DQPN:
		a->dest_qp_num = 1u << 24;
		break;
	case R_RNR_TIMER:
		a->min_rnr_timer = 32;
		break;
	case R_DEST_RD:
		a->max_dest_rd_atomic = plus_one(c->dev.max_qp_rd_atom);
		break;
	case R_NOT_GLOBAL:	/* RoCE needs the GRH: the peer's address */
		a->ah_attr.is_global = 0;
		break;
	case R_DGID_ZERO:
		memset(&a->ah_attr.grh.dgid, 0, sizeof(a->ah_attr.grh.dgid));
		break;
	case R_NO_AV:
		*m &= ~IBV_QP_AV;
		break;
	case R_NO_MTU:
		*m &= ~IBV_QP_PATH_MTU;
		break;
	case R_NO_DQPN:
		*m &= ~IBV_QP_DEST_QPN;
		break;
	case R_NO_RQ_PSN:
		*m &= ~IBV_QP_RQ_PSN;
		break;
	case R_NO_DEST_RD:
		*m &= ~IBV_QP_MAX_DEST_RD_ATOMIC;
		break;
	case R_NO_RNR_TIMER:
		*m &= ~IBV_QP_MIN_RNR_TIMER;
		break;
	case R_SQ_PSN:	/* belongs to RTR -> RTS */
		a->sq_psn = BA_PSN;
		*m |= IBV_QP_SQ_PSN;
		break;
	}
}

static void bad_attr_rts(struct ba_ctx *c, struct ibv_qp_attr *a, int *m)
{
	ba_rts_attr(a, m);
	switch (c->arg) {
	case S_TIMEOUT:
		a->timeout = 32;
		break;
	case S_RETRY:
		a->retry_cnt = 8;
		break;
	case S_RNR_RETRY:
		a->rnr_retry = 8;
		break;
	case S_RD_ATOMIC:
		a->max_rd_atomic = plus_one(c->dev.max_qp_init_rd_atom);
		break;
	case S_RNR_TIMER:	/* optional here, but 5 bits */
		a->min_rnr_timer = 32;
		*m |= IBV_QP_MIN_RNR_TIMER;
		break;
	case S_NO_TIMEOUT:
		*m &= ~IBV_QP_TIMEOUT;
		break;
	case S_NO_RETRY:
		*m &= ~IBV_QP_RETRY_CNT;
		break;
	case S_NO_RNR_RETRY:
		*m &= ~IBV_QP_RNR_RETRY;
		break;
	case S_NO_SQ_PSN:
		*m &= ~IBV_QP_SQ_PSN;
		break;
	case S_NO_RD_ATOMIC:
		*m &= ~IBV_QP_MAX_QP_RD_ATOMIC;
		break;
	case S_PATH_MTU:	/* INIT -> RTR only */
		a->path_mtu = IBV_MTU_1024;
		*m |= IBV_QP_PATH_MTU;
		break;
	case S_DEST_QPN:
		a->dest_qp_num = c->qb->qp_num;
		*m |= IBV_QP_DEST_QPN;
		break;
	}
}

static void bad_attr(struct ba_ctx *c)
{
	struct ibv_qp_attr a;
	int m;

	if (c->arg < R_MTU0) {
		setup(c, IBV_QPS_RESET);
		bad_attr_init(c, &a, &m);
	} else if (c->arg < S_TIMEOUT) {
		setup(c, IBV_QPS_INIT);
		bad_attr_rtr(c, &a, &m);
	} else if (c->arg < T_RNR_TIMER) {
		setup(c, IBV_QPS_RTR);
		bad_attr_rts(c, &a, &m);
	} else {
		/* RTS -> RTS takes access flags and the RNR timer only. */
		setup(c, IBV_QPS_RTS);
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		m = IBV_QP_STATE;
		if (c->arg == T_RNR_TIMER) {
			a.min_rnr_timer = 32;
			m |= IBV_QP_MIN_RNR_TIMER;
		} else {
			a.timeout = 14;
			m |= IBV_QP_TIMEOUT;
		}
	}
	refused_modify(c, &a, m);
}

#define TR(f, t, ...) \
	{ "modify_qp_" #f "_to_" #t, bad_transition, \
	  IBV_QPS_##f << 8 | IBV_QPS_##t, EXP_ERR(__VA_ARGS__) }
#define AT(n, t, ...) { "modify_qp_" n, bad_attr, t, EXP_ERR(__VA_ARGS__) }

const struct ba_case ba_modify_cases[] = {
	TR(RESET, RTR, EINVAL),
	TR(RESET, RTS, EINVAL),
	TR(RESET, SQD, EINVAL),
	TR(RESET, SQE, EINVAL),
	TR(RESET, UNKNOWN, EINVAL),
	TR(INIT, RTS, EINVAL),
	TR(INIT, SQD, EINVAL),
	TR(INIT, SQE, EINVAL),
	TR(RTR, INIT, EINVAL),
	TR(RTR, RTR, EINVAL),
	TR(RTR, SQD, EINVAL),
	TR(RTR, SQE, EINVAL),
	TR(RTS, INIT, EINVAL),
	TR(RTS, RTR, EINVAL),
	/* IBTA allows RTS -> SQD; ERNIC has no SQ drain state, so it is
	 * refused, as not supported or as invalid. */
	TR(RTS, SQD, EINVAL, EOPNOTSUPP),
	/* SQE is entered by the QP on a send error, never by modify. */
	TR(RTS, SQE, EINVAL),
	TR(ERR, INIT, EINVAL),
	TR(ERR, RTR, EINVAL),
	TR(ERR, RTS, EINVAL),
	TR(ERR, SQD, EINVAL),
	TR(ERR, SQE, EINVAL),
	{ "modify_qp_RESET_to_state_42", bad_transition,
	  IBV_QPS_RESET << 8 | 42, EXP_ERR(EINVAL) },

	AT("init_port_num_0", I_PORT0, EINVAL),
	AT("init_port_num_2", I_PORT2, EINVAL),
	AT("init_pkey_index_out_of_range", I_PKEY, EINVAL),
	AT("init_access_unknown_bit", I_ACC_BIT12, EINVAL),
	/* atomic_cap NONE, yet the flag is taken as the kernel takes it:
	 * no atomic ever arrives. */
	{ "modify_qp_init_access_remote_atomic_ok", init_remote_atomic, 0,
	  EXP_OK },
	AT("init_missing_pkey_index", I_NO_PKEY, EINVAL),
	AT("init_missing_port", I_NO_PORT, EINVAL),
	AT("init_missing_access_flags", I_NO_ACCESS, EINVAL),
	AT("init_foreign_qkey", I_QKEY, EINVAL),
	AT("init_foreign_av", I_AV, EINVAL),
	AT("init_wrong_cur_state", I_CUR_STATE, EINVAL),
	/* Mask bits past the last attribute: uverbs says EOPNOTSUPP. */
	AT("init_mask_unknown_bit", I_MASK_BIT30, EINVAL, EOPNOTSUPP),
	AT("init_rate_limit", I_RATE_LIMIT, EINVAL, EOPNOTSUPP),
	AT("reset_port_without_state", I_NO_STATE, EINVAL),

	AT("rtr_path_mtu_0", R_MTU0, EINVAL),
	AT("rtr_path_mtu_6", R_MTU6, EINVAL),
	AT("rtr_ah_port_num_0", R_AH_PORT0, EINVAL),
	AT("rtr_ah_port_num_2", R_AH_PORT2, EINVAL),
	AT("rtr_sgid_index_gid_tbl_len", R_SGID_TBL, EINVAL),
	AT("rtr_sgid_index_empty", R_SGID_EMPTY, EINVAL),
	AT("rtr_dest_qp_num_25_bits", R_DQPN, EINVAL),
	AT("rtr_min_rnr_timer_32", R_RNR_TIMER, EINVAL),
	AT("rtr_max_dest_rd_atomic_above_max", R_DEST_RD, EINVAL),
	AT("rtr_ah_not_global", R_NOT_GLOBAL, EINVAL),
	AT("rtr_dgid_zero", R_DGID_ZERO, EINVAL),
	AT("rtr_missing_av", R_NO_AV, EINVAL),
	AT("rtr_missing_path_mtu", R_NO_MTU, EINVAL),
	AT("rtr_missing_dest_qpn", R_NO_DQPN, EINVAL),
	AT("rtr_missing_rq_psn", R_NO_RQ_PSN, EINVAL),
	AT("rtr_missing_max_dest_rd_atomic", R_NO_DEST_RD, EINVAL),
	AT("rtr_missing_min_rnr_timer", R_NO_RNR_TIMER, EINVAL),
	AT("rtr_foreign_sq_psn", R_SQ_PSN, EINVAL),

	AT("rts_timeout_32", S_TIMEOUT, EINVAL),
	AT("rts_retry_cnt_8", S_RETRY, EINVAL),
	AT("rts_rnr_retry_8", S_RNR_RETRY, EINVAL),
	AT("rts_max_rd_atomic_above_max", S_RD_ATOMIC, EINVAL),
	AT("rts_min_rnr_timer_32", S_RNR_TIMER, EINVAL),
	AT("rts_missing_timeout", S_NO_TIMEOUT, EINVAL),
	AT("rts_missing_retry_cnt", S_NO_RETRY, EINVAL),
	AT("rts_missing_rnr_retry", S_NO_RNR_RETRY, EINVAL),
	AT("rts_missing_sq_psn", S_NO_SQ_PSN, EINVAL),
	AT("rts_missing_max_rd_atomic", S_NO_RD_ATOMIC, EINVAL),
	AT("rts_foreign_path_mtu", S_PATH_MTU, EINVAL),
	AT("rts_foreign_dest_qpn", S_DEST_QPN, EINVAL),

	AT("rts_to_rts_min_rnr_timer_32", T_RNR_TIMER, EINVAL),
	AT("rts_to_rts_foreign_timeout", T_TIMEOUT, EINVAL),
};

const size_t ba_modify_ncases =
	sizeof(ba_modify_cases) / sizeof(ba_modify_cases[0]);
