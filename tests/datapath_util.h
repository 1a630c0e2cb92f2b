/* SPDX-License-Identifier: MIT */
/*
 * Fixture of the data-path tests: two software ERNICs in one process,
 * ernict0 (127.0.0.2, side A) and ernict1 (127.0.0.3, side B), each with
 * a PD, a CQ and a 10 MiB buffer registered for every access, and RC QPs
 * connected between them.
 */
#ifndef DATAPATH_UTIL_H
#define DATAPATH_UTIL_H

#include "verbs_util.h"
#include "ernic.h"

#define BUF_SIZE (10u << 20)	/* covers a WRITE split at 8 MiB */
#define PMTU 1024u		/* tu_rtr_attr: IBV_MTU_1024 */
#define WAIT_MS 10000

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t *buf;
	struct ibv_mr *mr;	/* local write, remote read and write */
	const char *ip;
};

extern struct side A, B;

struct conn {
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t max_rd_atomic;	/* 0: tu_rts_attr's (1) */
};

/* Fast RNR retries, never exhausted: the receiver drains as it polls. */
extern const struct conn conn_std;

struct pair {
	struct ibv_qp *a, *b;
};

#define QX_OPS                                                            \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |              \
	 IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_WRITE |        \
	 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ)

/* cmocka group setup / teardown (A and B), and per-test teardown that
 * destroys the QPs a failed test left behind. */
int dp_group_setup(void **state);
int dp_group_teardown(void **state);
int dp_qp_cleanup(void **state);

/* An RC QP on the side's PD and CQ; qp_ex when send_ops is not 0. */
struct ibv_qp *qp_new(struct side *s, uint32_t sq, uint32_t rq,
		      uint64_t send_ops);
/* The same with the caps given (they come back in *cap unchanged). */
struct ibv_qp *qp_new_cap(struct side *s, const struct ibv_qp_cap *cap,
			  uint64_t send_ops);
void qp_destroy(struct ibv_qp *qp);
void qp_init(struct ibv_qp *qp);
void qp_rtr(struct ibv_qp *qp, const char *peer, uint32_t dqpn,
	    const struct conn *c);
/* A (connection ca) and B (cb), connected, both RTS. */
void pair_up2(struct pair *p, struct ibv_qp *a, struct ibv_qp *b,
	      const struct conn *ca, const struct conn *cb);
void pair_up(struct pair *p, uint32_t sq, uint32_t rq);
void pair_down(struct pair *p);

uint32_t sqpi(struct side *s, struct ibv_qp *qp);
/* Bus address the IP was given for MR byte 0 (BUFBASEADDR). */
uint64_t mr_bus(struct side *s, struct ibv_mr *mr);
/* WQE in SQ slot `slot`, read from the ring the IP reads. */
struct ernic_wqe wqe_at(struct ibv_qp *qp, uint32_t slot);
void check_wqe(struct ibv_qp *qp, uint32_t slot, uint8_t opcode,
	       uint64_t laddr, uint32_t len, uint64_t roff, uint32_t rtag,
	       uint32_t immdt);

struct ibv_sge sge(void *addr, uint32_t len, uint32_t lkey);
void wr_set(struct ibv_send_wr *wr, uint64_t id, enum ibv_wr_opcode op,
	    struct ibv_sge *sg, int nsge, int flags);
void chain(struct ibv_send_wr *wr, int n);
void fill(uint8_t *p, size_t len, unsigned int seed);
void peer_sync(struct side *s, void *p, size_t len, bool for_cpu);
void post_recv1(struct ibv_qp *qp, uint64_t id, void *buf, uint32_t len,
		uint32_t lkey);
/* A one-SGE request from A's buffer (imm: ImmDt or the R_Key to
 * invalidate, by opcode). */
void post1(struct ibv_qp *qp, uint64_t id, enum ibv_wr_opcode op, void *buf,
	   uint32_t len, uint64_t raddr, uint32_t rkey, uint32_t imm, int flags);
/* Poll cq until n completions or ms pass; returns how many. */
int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms);
/* A deadline ms from now on the monotonic clock, and whether it passed. */
uint64_t deadline_in(int ms);
bool deadline_passed(uint64_t deadline);

/* test_datapath_wire.c: the "wire" group; test_events.c: "events". */
int dp_run_wire(void);
int dp_run_words(void);
int dp_run_events(void);
/* test_mad.c: MADs on QP1 (ernicdv_mad_*) */
int dp_run_mad(void);
/* test_datapath_sge.c: several SGEs, staging, inline sizes, caps */
int dp_run_sge(void);
/* test_cq_ex.c: ibv_create_cq_ex and its polling interface */
int dp_run_cqex(void);

#endif
