// SPDX-License-Identifier: MIT
/*
 * Bad-API cases of CQs, QP creation, queries, verbs ERNIC lacks, and
 * destroying things in the wrong order. Expected errnos are what the
 * kernel's uverbs layer and rdma-core's providers return for the same
 * input; where that is arguable the case says why.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_badapi.h"
#include "verbs_util.h"

#define LW IBV_ACCESS_LOCAL_WRITE
#define RR IBV_ACCESS_REMOTE_READ

static size_t page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* ---- Completion queues ---- */

enum {
	CQ_CQE0, CQ_CQE_NEG, CQ_CQE_MAX, CQ_VEC, CQ_VEC_NEG, CQ_CHAN_CTX,
	CQ_CHAN_DEV,
};

static void create_cq_bad(struct ba_ctx *c)
{
	struct ibv_context *ctx2 = NULL;
	struct ibv_comp_channel *ch = NULL;
	int cqe = 16, vec = 0;
	struct ibv_cq *cq;

	ba_open(c, false);
	switch (c->arg) {
	case CQ_CQE0:
		cqe = 0;
		break;
	case CQ_CQE_NEG:
		cqe = -1;
		break;
	case CQ_CQE_MAX:
		if (c->dev.max_cqe == INT_MAX)
			ba_skip("max_cqe is INT_MAX");
		cqe = c->dev.max_cqe + 1;
		break;
	case CQ_VEC:
		vec = c->a.ctx->num_comp_vectors;
		break;
	case CQ_VEC_NEG:
		vec = -1;
		break;
	case CQ_CHAN_CTX:	/* a second context of the same device */
	case CQ_CHAN_DEV:	/* the peer device's */
		ctx2 = ba_open_ctx(c->arg == CQ_CHAN_DEV);
		ch = ernicdv_create_comp_channel(ctx2);
		REQUIRE(ch);
		break;
	}
	cq = CALL_PTR(ibv_create_cq(c->a.ctx, cqe, NULL, ch, vec));
	if (cq)
		CHECK(ibv_destroy_cq(cq) == 0,
		      "destroy_cq of the wrong CQ fails");
	cq = ibv_create_cq(c->a.ctx, 16, NULL, NULL, 0);
	if (CHECK(cq, "afterwards: a valid CQ is refused (errno %s)",
		  ba_errname(errno)))
		CHECK(ibv_destroy_cq(cq) == 0, "afterwards: destroy_cq fails");
	if (!ch)
		return;
	/* The channel is untouched: it serves its own context, and goes. */
	cq = ibv_create_cq(ctx2, 16, NULL, ch, 0);
	if (CHECK(cq, "afterwards: the channel no longer works (errno %s)",
		  ba_errname(errno)))
		CHECK(ibv_destroy_cq(cq) == 0, "afterwards: destroy_cq fails");
	CHECK(ibv_destroy_comp_channel(ch) == 0,
	      "afterwards: the channel is left busy");
}

/* One CQ more than max_cq, as alloc_pd_beyond_max_pd. */
static void create_cq_beyond_max_cq(struct ba_ctx *c)
{
	struct ibv_cq **cqs, *cq;
	int n;

	ba_open(c, false);
	if (c->dev.max_cq > (1 << 16))
		ba_skip("max_cq too large to exhaust");
	n = c->dev.max_cq - 1;
	cqs = calloc((size_t)n, sizeof(*cqs));
	REQUIRE(cqs);
	for (int k = 0; k < n; k++) {
		cqs[k] = ibv_create_cq(c->a.ctx, 1, NULL, NULL, 0);
		REQUIRE(cqs[k]);
	}
	cq = CALL_PTR(ibv_create_cq(c->a.ctx, 1, NULL, NULL, 0));
	if (cq)
		return;
	REQUIRE(ibv_destroy_cq(cqs[n / 2]) == 0);
	CHECK(ibv_create_cq(c->a.ctx, 1, NULL, NULL, 0),
	      "afterwards: no CQ after one was freed");
}

/* A CQ that a QP sends (arg 0) or receives (arg 1) through. */
static void destroy_cq_busy(struct ba_ctx *c)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_cq *cq, *cq0;

	ba_open(c, true);
	cq = ibv_create_cq(c->a.ctx, 64, NULL, NULL, 0);
	REQUIRE(cq);
	ia.send_cq = c->arg ? c->a.cq : cq;
	ia.recv_cq = c->arg ? cq : c->a.cq;
	c->qa = ibv_create_qp(c->a.pd, &ia);
	REQUIRE(c->qa);
	ba_peer_for(c);
	ba_up(c);
	CALL_INT(ibv_destroy_cq(cq));
	if (!ba_refused())
		return;
	cq0 = c->a.cq;
	c->a.cq = ia.send_cq;	/* where the exchange's SEND completes */
	ba_check_exchange(c);
	c->a.cq = cq0;
	CHECK(ibv_destroy_qp(c->qa) == 0, "afterwards: destroy_qp fails");
	CHECK(ibv_destroy_cq(cq) == 0, "afterwards: destroy_cq still fails");
}

/* libibverbs keeps a channel while a CQ uses it. */
static void destroy_channel_busy(struct ba_ctx *c)
{
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_wc wc;

	ba_open(c, false);
	ch = ernicdv_create_comp_channel(c->a.ctx);
	REQUIRE(ch);
	cq = ibv_create_cq(c->a.ctx, 16, NULL, ch, 0);
	REQUIRE(cq);
	CALL_INT(ibv_destroy_comp_channel(ch));
	if (!ba_refused())
		return;
	CHECK(ibv_req_notify_cq(cq, 0) == 0, "afterwards: the CQ cannot arm");
	CHECK(ibv_poll_cq(cq, 1, &wc) == 0, "afterwards: the CQ cannot poll");
	CHECK(ibv_destroy_cq(cq) == 0, "afterwards: destroy_cq fails");
	CHECK(ibv_destroy_comp_channel(ch) == 0,
	      "afterwards: the channel is still busy");
}

/* ---- QP creation ---- */

enum {
	QP_UD, QP_UC, QP_RAW, QP_XRC_SEND, QP_XRC_RECV, QP_DRIVER, QP_TYPE_42,
	QP_SEND_WR, QP_SEND_WR_MAX, QP_RECV_WR, QP_SEND_SGE, QP_RECV_SGE,
	QP_INLINE, QP_INLINE_MAX, QP_NO_SCQ, QP_NO_RCQ, QP_SCQ_CTX, QP_RCQ_CTX,
	QP_SCQ_DEV, QP_PD_CTX, QP_COMP_MASK, QP_SEND_OPS,
};

static const enum ibv_qp_type qp_types[] = {
	[QP_UD] = IBV_QPT_UD, [QP_UC] = IBV_QPT_UC,
	[QP_RAW] = IBV_QPT_RAW_PACKET, [QP_XRC_SEND] = IBV_QPT_XRC_SEND,
	[QP_XRC_RECV] = IBV_QPT_XRC_RECV, [QP_DRIVER] = IBV_QPT_DRIVER,
	[QP_TYPE_42] = (enum ibv_qp_type)42,
};

static void create_qp_bad(struct ba_ctx *c)
{
	struct ibv_qp_init_attr_ex ia = { .qp_type = IBV_QPT_RC };
	struct ibv_context *ctx2 = NULL;
	struct ibv_cq *cq, *cq2 = NULL;
	struct ibv_pd *pd, *pd2 = NULL;
	struct ibv_qp *qp;
	uint32_t inl;

	ba_open(c, false);
	/* Its own PD and CQ: a refused QP must hold neither. */
	pd = ibv_alloc_pd(c->a.ctx);
	cq = ibv_create_cq(c->a.ctx, 16, NULL, NULL, 0);
	REQUIRE(pd && cq);
	ia.send_cq = ia.recv_cq = cq;
	ia.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4,
				      .max_send_sge = 1, .max_recv_sge = 1 };
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	ia.pd = pd;
	/* The inline limit is not in ibv_device_attr: a QP that asks for
	 * every SGE reports it (a smaller request may get less). */
	ia.cap.max_send_sge = (uint32_t)c->dev.max_sge;
	qp = ibv_create_qp_ex(c->a.ctx, &ia);
	REQUIRE(qp);
	inl = ba_cap(qp).max_inline_data;
	REQUIRE(ibv_destroy_qp(qp) == 0);
	ia.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4,
				      .max_send_sge = 1, .max_recv_sge = 1 };
	if (c->arg < (int)(sizeof(qp_types) / sizeof(qp_types[0])))
		ia.qp_type = qp_types[c->arg];
	switch (c->arg) {
	case QP_SEND_WR:
		ia.cap.max_send_wr = (uint32_t)c->dev.max_qp_wr + 1;
		break;
	case QP_SEND_WR_MAX:	/* a ring of UINT32_MAX + 1 slots is 0 */
		ia.cap.max_send_wr = UINT32_MAX;
		break;
	case QP_RECV_WR:
		ia.cap.max_recv_wr = (uint32_t)c->dev.max_qp_wr + 1;
		break;
	case QP_SEND_SGE:
		ia.cap.max_send_sge = (uint32_t)c->dev.max_sge + 1;
		break;
	case QP_RECV_SGE:
		ia.cap.max_recv_sge = (uint32_t)c->dev.max_sge + 1;
		break;
	case QP_INLINE:
		ia.cap.max_inline_data = inl + 1;
		break;
	case QP_INLINE_MAX:
		ia.cap.max_inline_data = UINT32_MAX;
		break;
	case QP_NO_SCQ:
		ia.send_cq = NULL;
		break;
	case QP_NO_RCQ:
		ia.recv_cq = NULL;
		break;
	case QP_SCQ_CTX:
	case QP_RCQ_CTX:
	case QP_SCQ_DEV:
		ctx2 = ba_open_ctx(c->arg == QP_SCQ_DEV);
		cq2 = ibv_create_cq(ctx2, 16, NULL, NULL, 0);
		REQUIRE(cq2);
		if (c->arg == QP_RCQ_CTX)
			ia.recv_cq = cq2;
		else
			ia.send_cq = cq2;
		break;
	case QP_PD_CTX:	/* ibv_create_qp_ex names the context apart */
		ctx2 = ba_open_ctx(false);
		pd2 = ibv_alloc_pd(ctx2);
		REQUIRE(pd2);
		ia.pd = pd2;
		ia.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ia.send_ops_flags = IBV_QP_EX_WITH_SEND;
		break;
	case QP_COMP_MASK:
		ia.comp_mask |= 1u << 20;
		break;
	case QP_SEND_OPS:	/* the device has no atomics */
		ia.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ia.send_ops_flags = IBV_QP_EX_WITH_SEND |
				    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
		break;
	}
	qp = CALL_PTR(ibv_create_qp_ex(c->a.ctx, &ia));
	if (qp)
		CHECK(ibv_destroy_qp(qp) == 0,
		      "destroy_qp of the wrong QP fails");
	/* Nothing of it stays: a valid QP, then the PD and CQ can go. */
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4,
				      .max_send_sge = 1, .max_recv_sge = 1 };
	ia.qp_type = IBV_QPT_RC;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	ia.pd = pd;
	qp = ibv_create_qp_ex(c->a.ctx, &ia);
	if (CHECK(qp, "afterwards: a valid QP is refused (errno %s)",
		  ba_errname(errno)))
		CHECK(ibv_destroy_qp(qp) == 0, "afterwards: destroy_qp fails");
	CHECK(ibv_destroy_cq(cq) == 0,
	      "afterwards: the CQ is still busy (the refused QP holds it)");
	CHECK(ibv_dealloc_pd(pd) == 0,
	      "afterwards: the PD is still busy (the refused QP holds it)");
	if (cq2)
		CHECK(ibv_destroy_cq(cq2) == 0,
		      "afterwards: the other context's CQ is still busy");
	if (pd2)
		CHECK(ibv_dealloc_pd(pd2) == 0,
		      "afterwards: the other context's PD is still busy");
}

/* One QP more than max_qp: ENOMEM; freeing one makes room. */
static void create_qp_beyond_max_qp(struct ba_ctx *c)
{
	struct ibv_qp **qps;
	struct ibv_qp *qp;

	ba_open(c, false);
	qps = calloc((size_t)c->dev.max_qp, sizeof(*qps));
	REQUIRE(qps);
	for (int k = 0; k < c->dev.max_qp; k++)
		qps[k] = ba_qp(c, &c->a, 1, 1);
	qp = CALL_PTR(ibv_create_qp(c->a.pd, &(struct ibv_qp_init_attr){
		.send_cq = c->a.cq, .recv_cq = c->a.cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC }));
	if (qp)
		return;
	REQUIRE(ibv_destroy_qp(qps[0]) == 0);
	ba_qp(c, &c->a, 1, 1);
}

/*
 * A context closed before its objects. ibv_close_device(3) leaves the
 * user-space memory leaked, but what the device holds goes with the
 * context, as the kernel destroys a closed file's objects: with another
 * context of the device still open, every QP number and PD-table slot
 * must be free again.
 */
static void close_device_with_objects(struct ba_ctx *c)
{
	struct ibv_context *ctx2;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int m, k;

	ba_open(c, false);
	ctx2 = ba_open_ctx(false);
	pd = ibv_alloc_pd(ctx2);
	cq = ibv_create_cq(ctx2, 16, NULL, NULL, 0);
	REQUIRE(pd && cq);
	REQUIRE(ibv_reg_mr(pd, c->a.buf, page(), LW | RR));
	qp = ibv_create_qp(pd, &(struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 } });
	REQUIRE(qp);
	ba_init_attr(&a, &m);
	REQUIRE(ibv_modify_qp(qp, &a, m) == 0);
	CALL_INT(ibv_close_device(ctx2));
	for (k = 0; k < c->dev.max_qp; k++) {
		qp = ibv_create_qp(c->a.pd, &(struct ibv_qp_init_attr){
			.send_cq = c->a.cq, .recv_cq = c->a.cq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1,
				 .max_send_sge = 1, .max_recv_sge = 1 } });
		if (!qp)
			break;
	}
	CHECK(k == c->dev.max_qp, "afterwards: only %d of max_qp %d QPs can be "
	      "created (errno %s): the closed context's QP keeps its number",
	      k, c->dev.max_qp, ba_errname(errno));
	/* The fixture's MR has one slot. */
	for (k = 1; k < c->dev.max_mr; k++)
		if (!ibv_reg_mr(c->a.pd, c->a.buf, page(), LW))
			break;
	CHECK(k == c->dev.max_mr, "afterwards: only %d of max_mr %d MRs can be "
	      "registered (errno %s): the closed context's MR keeps its slot",
	      k, c->dev.max_mr, ba_errname(errno));
}

/* ---- Queries ---- */

enum { QU_PORT0, QU_PORT2, QU_PORT255 };

static void query_port_bad(struct ba_ctx *c)
{
	uint8_t port[] = { 0, 0, 255 };
	struct ibv_port_attr pa;

	ba_open(c, false);
	port[QU_PORT2] = (uint8_t)(c->dev.phys_port_cnt + 1);
	CALL_INT(ibv_query_port(c->a.ctx, port[c->arg], &pa));
	CHECK(ibv_query_port(c->a.ctx, 1, &pa) == 0,
	      "afterwards: port 1 cannot be queried");
}

enum { QG_INDEX, QG_NEG, QG_PORT, QG_EX_INDEX, QG_EX_PORT, QK_INDEX,
       QK_NEG };

/* ibv_query_gid/pkey: "0 on success, and -1 on error" (their man pages
 * name no errno); ibv_query_gid_ex returns the errno value, and ENODATA
 * only for an empty index within the table. */
static void query_gid_pkey_bad(struct ba_ctx *c)
{
	struct ibv_gid_entry e;
	union ibv_gid gid;
	__be16 pkey;
	uint8_t bad_port;

	ba_open(c, false);
	bad_port = (uint8_t)(c->dev.phys_port_cnt + 1);
	switch (c->arg) {
	case QG_INDEX:
		CALL_INT(ibv_query_gid(c->a.ctx, 1, c->port.gid_tbl_len, &gid));
		break;
	case QG_NEG:
		CALL_INT(ibv_query_gid(c->a.ctx, 1, -1, &gid));
		break;
	case QG_PORT:
		CALL_INT(ibv_query_gid(c->a.ctx, bad_port, 0, &gid));
		break;
	case QG_EX_INDEX:
		CALL_INT(ibv_query_gid_ex(c->a.ctx, 1,
					  (uint32_t)c->port.gid_tbl_len, &e,
					  0));
		break;
	case QG_EX_PORT:
		CALL_INT(ibv_query_gid_ex(c->a.ctx, bad_port, 0, &e, 0));
		break;
	case QK_INDEX:
		CALL_INT(ibv_query_pkey(c->a.ctx, 1, c->port.pkey_tbl_len,
					&pkey));
		break;
	case QK_NEG:
		CALL_INT(ibv_query_pkey(c->a.ctx, 1, -1, &pkey));
		break;
	}
	CHECK(ibv_query_gid(c->a.ctx, 1, 0, &gid) == 0,
	      "afterwards: GID 0 cannot be queried");
	CHECK(ibv_query_pkey(c->a.ctx, 1, 0, &pkey) == 0,
	      "afterwards: P_Key 0 cannot be queried");
}

/* ---- Verbs ERNIC does not have: libibverbs' EOPNOTSUPP ---- */

enum { UN_SRQ, UN_MW, UN_RESIZE };

static void unsupported(struct ba_ctx *c)
{
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
	};

	ba_open(c, false);
	if (c->arg == UN_SRQ)
		CALL_PTR(ibv_create_srq(c->a.pd, &sa));
	else if (c->arg == UN_MW)
		CALL_PTR(ibv_alloc_mw(c->a.pd, IBV_MW_TYPE_1));
	else
		CALL_INT(ibv_resize_cq(c->a.cq, 512));
}

#define CQ(n, t) { "create_cq_" n, create_cq_bad, t, EXP_NULL(EINVAL) }
#define QP(n, t, ...) \
	{ "create_qp_" n, create_qp_bad, t, EXP_NULL(__VA_ARGS__) }

const struct ba_case ba_res_cases[] = {
	CQ("cqe_0", CQ_CQE0),
	CQ("cqe_negative", CQ_CQE_NEG),
	CQ("cqe_above_max_cqe", CQ_CQE_MAX),
	CQ("comp_vector_out_of_range", CQ_VEC),
	CQ("comp_vector_negative", CQ_VEC_NEG),
	CQ("channel_of_other_context", CQ_CHAN_CTX),
	CQ("channel_of_other_device", CQ_CHAN_DEV),
	{ "create_cq_beyond_max_cq", create_cq_beyond_max_cq, 0,
	  EXP_NULL(ENOMEM) },
	{ "destroy_cq_busy_send_cq", destroy_cq_busy, 0, EXP_ERR(EBUSY) },
	{ "destroy_cq_busy_recv_cq", destroy_cq_busy, 1, EXP_ERR(EBUSY) },
	{ "destroy_comp_channel_busy", destroy_channel_busy, 0,
	  EXP_ERR(EBUSY) },
	{ "close_device_with_objects", close_device_with_objects, 0, EXP_OK },

	/* A QP type the device lacks: EOPNOTSUPP (rxe, and the provider's
	 * own convention); a value no verbs type has may be EINVAL. */
	QP("type_ud", QP_UD, EOPNOTSUPP),
	QP("type_uc", QP_UC, EOPNOTSUPP),
	QP("type_raw_packet", QP_RAW, EOPNOTSUPP),
	QP("type_xrc_send", QP_XRC_SEND, EOPNOTSUPP),
	QP("type_xrc_recv", QP_XRC_RECV, EOPNOTSUPP),
	QP("type_driver", QP_DRIVER, EOPNOTSUPP),
	QP("type_42", QP_TYPE_42, EOPNOTSUPP, EINVAL),
	QP("max_send_wr_above_max_qp_wr", QP_SEND_WR, EINVAL),
	QP("max_send_wr_uint32_max", QP_SEND_WR_MAX, EINVAL),
	QP("max_recv_wr_above_max_qp_wr", QP_RECV_WR, EINVAL),
	QP("max_send_sge_above_max_sge", QP_SEND_SGE, EINVAL),
	QP("max_recv_sge_above_max_sge", QP_RECV_SGE, EINVAL),
	QP("max_inline_data_above_limit", QP_INLINE, EINVAL),
	QP("max_inline_data_uint32_max", QP_INLINE_MAX, EINVAL),
	QP("send_cq_null", QP_NO_SCQ, EINVAL),
	QP("recv_cq_null", QP_NO_RCQ, EINVAL),
	QP("send_cq_of_other_context", QP_SCQ_CTX, EINVAL),
	QP("recv_cq_of_other_context", QP_RCQ_CTX, EINVAL),
	QP("send_cq_of_other_device", QP_SCQ_DEV, EINVAL),
	QP("pd_of_other_context", QP_PD_CTX, EINVAL),
	/* Unknown comp_mask / send_ops bits: the kernel's extended verbs
	 * say EOPNOTSUPP, mlx5 says EINVAL for some: either. */
	QP("comp_mask_unknown_bit", QP_COMP_MASK, EOPNOTSUPP, EINVAL),
	QP("send_ops_atomic", QP_SEND_OPS, EOPNOTSUPP, EINVAL),
	{ "create_qp_beyond_max_qp", create_qp_beyond_max_qp, 0,
	  EXP_NULL(ENOMEM) },

	{ "query_port_0", query_port_bad, QU_PORT0, EXP_ERR(EINVAL) },
	{ "query_port_2", query_port_bad, QU_PORT2, EXP_ERR(EINVAL) },
	{ "query_port_255", query_port_bad, QU_PORT255, EXP_ERR(EINVAL) },
	{ "query_gid_index_gid_tbl_len", query_gid_pkey_bad, QG_INDEX,
	  EXP_NEG },
	{ "query_gid_index_negative", query_gid_pkey_bad, QG_NEG, EXP_NEG },
	{ "query_gid_port_2", query_gid_pkey_bad, QG_PORT, EXP_NEG },
	{ "query_gid_ex_index_gid_tbl_len", query_gid_pkey_bad, QG_EX_INDEX,
	  EXP_ERR(EINVAL) },
	{ "query_gid_ex_port_2", query_gid_pkey_bad, QG_EX_PORT,
	  EXP_ERR(EINVAL) },
	{ "query_pkey_index_pkey_tbl_len", query_gid_pkey_bad, QK_INDEX,
	  EXP_NEG },
	{ "query_pkey_index_negative", query_gid_pkey_bad, QK_NEG, EXP_NEG },

	{ "create_srq_unsupported", unsupported, UN_SRQ, EXP_NULL(EOPNOTSUPP) },
	{ "alloc_mw_unsupported", unsupported, UN_MW, EXP_NULL(EOPNOTSUPP) },
	{ "resize_cq_unsupported", unsupported, UN_RESIZE,
	  EXP_ERR(EOPNOTSUPP) },
};

const size_t ba_res_ncases = sizeof(ba_res_cases) / sizeof(ba_res_cases[0]);
