// SPDX-License-Identifier: MIT
/* Fixture and helpers of the data-path tests (datapath_util.h). */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath_util.h"
#include "ernic_time.h"
#include "ernicdv.h"

struct side A = { .ip = "127.0.0.2" }, B = { .ip = "127.0.0.3" };

const struct conn conn_std = { 14, 7, 7, 1, 0 };

static void side_open(struct side *s, const char *dev)
{
	s->ctx = tu_open(dev);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 4096, NULL, NULL, 0);
	s->buf = aligned_alloc(4096, BUF_SIZE);
	assert_non_null(s->pd);
	assert_non_null(s->cq);
	assert_non_null(s->buf);
	memset(s->buf, 0, BUF_SIZE);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ);
	assert_non_null(s->mr);
}

/* Best effort: a failed test may have left objects behind, and a
 * failed side_open may have made only some of them. */
static void side_close(struct side *s)
{
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->ctx)
		ibv_close_device(s->ctx);
	free(s->buf);
	s->mr = NULL;
	s->cq = NULL;
	s->pd = NULL;
	s->ctx = NULL;
	s->buf = NULL;
}

/* QPs a test created and has not destroyed (a failed assertion leaves
 * the test early): the per-test teardown destroys them. */
static struct ibv_qp *live[8];

void qp_destroy(struct ibv_qp *qp)
{
	for (size_t k = 0; k < sizeof(live) / sizeof(live[0]); k++)
		if (live[k] == qp)
			live[k] = NULL;
	assert_int_equal(ibv_destroy_qp(qp), 0);
}

int dp_qp_cleanup(void **state)
{
	for (size_t k = 0; k < sizeof(live) / sizeof(live[0]); k++) {
		if (live[k])
			ibv_destroy_qp(live[k]);
		live[k] = NULL;
	}
	return 0;
}

/* DP_A / DP_B = "DEVICE ADDR" run the tests on other devices, such as
 * the virtual FPGA's (UIO path). */
static const char *side_dev(struct side *s, const char *var, const char *dev)
{
	static char buf[2][128];
	const char *v = getenv(var);
	char *sp, *b = buf[s == &B];

	if (!v)
		return dev;
	snprintf(b, sizeof(buf[0]), "%s", v);
	sp = strchr(b, ' ');
	if (!sp)
		fail_msg("%s='%s': expected \"DEVICE ADDR\"", var, v);
	*sp = '\0';
	s->ip = sp + 1;
	return b;
}

int dp_group_setup(void **state)
{
	side_open(&A, side_dev(&A, "DP_A", DEV4));
	side_open(&B, side_dev(&B, "DP_B", DEV4B));
	return 0;
}

int dp_group_teardown(void **state)
{
	side_close(&A);
	side_close(&B);
	return 0;
}

struct ibv_qp *qp_new(struct side *s, uint32_t sq, uint32_t rq,
		      uint64_t send_ops)
{
	const struct ibv_qp_cap cap = { .max_send_wr = sq, .max_recv_wr = rq,
					.max_send_sge = 1, .max_recv_sge = 1,
					.max_inline_data = 16 };

	return qp_new_cap(s, &cap, send_ops);
}

struct ibv_qp *qp_new_cap(struct side *s, const struct ibv_qp_cap *cap,
			  uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = *cap,
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = s->pd,
	};
	struct ibv_qp *qp;

	if (send_ops) {
		ia.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ia.send_ops_flags = send_ops;
	}
	qp = ibv_create_qp_ex(s->ctx, &ia);
	assert_non_null(qp);
	for (size_t k = 0; k < sizeof(live) / sizeof(live[0]); k++) {
		if (!live[k]) {
			live[k] = qp;
			break;
		}
	}
	return qp;
}

void qp_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	int m;

	tu_init_attr(&a, &m);
	assert_int_equal(ibv_modify_qp(qp, &a, m), 0);
}

/*
 * The first PSN of the pair being connected. Each pair starts elsewhere
 * (applications pick theirs at random), so a packet still in flight for
 * an earlier pair does not fit the new one's PSNs; the steps also make
 * some pairs cross the 24-bit wrap.
 */
static uint32_t pair_psn = 0x100;

void qp_rtr(struct ibv_qp *qp, const char *peer, uint32_t dqpn,
	    const struct conn *c)
{
	struct ibv_qp_attr a;
	int m;

	tu_rtr_attr(&a, &m, peer, dqpn, pair_psn);
	a.min_rnr_timer = c->min_rnr_timer;
	assert_int_equal(ibv_modify_qp(qp, &a, m), 0);
}

static void qp_rts(struct ibv_qp *qp, const struct conn *c)
{
	struct ibv_qp_attr a;
	int m;

	tu_rts_attr(&a, &m, pair_psn);
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	if (c->max_rd_atomic)
		a.max_rd_atomic = c->max_rd_atomic;
	assert_int_equal(ibv_modify_qp(qp, &a, m), 0);
}

/* A (connection ca) and B (cb), connected, both RTS. */
void pair_up2(struct pair *p, struct ibv_qp *a, struct ibv_qp *b,
	      const struct conn *ca, const struct conn *cb)
{
	p->a = a;
	p->b = b;
	pair_psn = (pair_psn + 0x3a5e1u) & 0xffffffu;
	qp_init(a);
	qp_init(b);
	qp_rtr(a, B.ip, b->qp_num, ca);
	qp_rtr(b, A.ip, a->qp_num, cb);
	qp_rts(a, ca);
	qp_rts(b, cb);
}

void pair_up(struct pair *p, uint32_t sq, uint32_t rq)
{
	pair_up2(p, qp_new(&A, sq, rq, 0), qp_new(&B, sq, rq, 0), &conn_std,
		 &conn_std);
}

void pair_down(struct pair *p)
{
	if (p->a)
		qp_destroy(p->a);
	if (p->b)
		qp_destroy(p->b);
}

uint32_t sqpi(struct side *s, struct ibv_qp *qp)
{
	return tu_rd(s->ctx, ERNIC_QP(qp->qp_num, ERNIC_SQPI));
}

/* Bus address the IP was given for MR byte 0 (BUFBASEADDR). */
uint64_t mr_bus(struct side *s, struct ibv_mr *mr)
{
	uint32_t slot = mr->lkey & 0xff;

	return tu_rd64(s->ctx, ERNIC_PDT(slot, ERNIC_BUFBASEADDRLSB),
		       ERNIC_PDT(slot, ERNIC_BUFBASEADDRMSB));
}

struct ernic_wqe wqe_at(struct ibv_qp *qp, uint32_t slot)
{
	struct ernic_wqe w;

	memcpy(&w, (uint8_t *)to_eqp(qp)->sq.va + slot * ERNIC_WQE_SIZE,
	       sizeof(w));
	return w;
}

void check_wqe(struct ibv_qp *qp, uint32_t slot, uint8_t opcode,
	       uint64_t laddr, uint32_t len, uint64_t roff,
	       uint32_t rtag, uint32_t immdt)
{
	struct ernic_wqe w = wqe_at(qp, slot);

	assert_int_equal(le16toh(w.wrid), slot);
	assert_int_equal(w.opcode, opcode);
	assert_int_equal(le64toh(w.laddr), laddr);
	assert_int_equal(le32toh(w.length), len);
	assert_int_equal(le64toh(w.roffset), roff);
	assert_int_equal(le32toh(w.rtag), rtag);
	assert_int_equal(le32toh(w.immdt), immdt);
}

struct ibv_sge sge(void *addr, uint32_t len, uint32_t lkey)
{
	return (struct ibv_sge){ .addr = (uintptr_t)addr, .length = len,
				 .lkey = lkey };
}

void wr_set(struct ibv_send_wr *wr, uint64_t id, enum ibv_wr_opcode op,
	    struct ibv_sge *sg, int nsge, int flags)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = id;
	wr->opcode = op;
	wr->sg_list = sg;
	wr->num_sge = nsge;
	wr->send_flags = flags;
}

void chain(struct ibv_send_wr *wr, int n)
{
	for (int k = 0; k + 1 < n; k++)
		wr[k].next = &wr[k + 1];
}

void fill(uint8_t *p, size_t len, unsigned int seed)
{
	for (size_t k = 0; k < len; k++)
		p[k] = (uint8_t)(seed * 131 + k * 7 + (k >> 8));
}

/* Memory the peer reads or writes with RDMA and no local work request
 * names: on a non-coherent device (coherent=0) the application keeps the
 * caches right itself (ernicdv_sync_mr); elsewhere a no-op. */
void peer_sync(struct side *s, void *p, size_t len, bool for_cpu)
{
	assert_int_equal(ernicdv_sync_mr(s->mr, p, len,
					 for_cpu ? ERNICDV_SYNC_FOR_CPU :
						   ERNICDV_SYNC_FOR_DEVICE),
			 0);
}

uint64_t deadline_in(int ms)
{
	return ernic_mono_ns() + (uint64_t)ms * 1000000u;
}

bool deadline_passed(uint64_t deadline)
{
	return ernic_mono_ns() >= deadline;
}

/* Poll cq until n completions or the deadline. */
int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	uint64_t end = deadline_in(ms);
	int got = 0;

	while (got < n) {
		int k = ibv_poll_cq(cq, n - got, &wc[got]);

		assert_true(k >= 0);
		got += k;
		if (deadline_passed(end))
			break;
	}
	return got;
}

void post_recv1(struct ibv_qp *qp, uint64_t id, void *buf, uint32_t len,
		uint32_t lkey)
{
	struct ibv_sge s = sge(buf, len, lkey);
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	assert_int_equal(ibv_post_recv(qp, &wr, &bad), 0);
}

void post1(struct ibv_qp *qp, uint64_t id, enum ibv_wr_opcode op, void *buf,
	   uint32_t len, uint64_t raddr, uint32_t rkey, uint32_t imm, int flags)
{
	struct ibv_sge s = sge(buf, len, A.mr->lkey);
	struct ibv_send_wr wr, *bad;

	wr_set(&wr, id, op, &s, 1, flags);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (op == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = imm;
	else
		wr.imm_data = htobe32(imm);
	assert_int_equal(ibv_post_send(qp, &wr, &bad), 0);
}
