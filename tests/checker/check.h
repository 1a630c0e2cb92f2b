// SPDX-License-Identifier: MIT
/*
 * ernic_check: a byte-exact RC traffic checker for any verbs device.
 *
 * Two processes (server and client) connect N RC QPs. On every QP each
 * side runs a script of operations against the other (direction c2s:
 * the client is the requester; s2c: the server). Op i of a script
 * follows from the shared options and (seed, QP, direction, i), so the
 * responder knows every op (kind, size, offsets, immediate, payload)
 * without being told, and checks every byte. The TCP connection carries
 * the setup, credits for WRITE target regions, the end barrier and
 * aborts (proto.c). See README.md.
 */
#ifndef ERNIC_CHECK_H
#define ERNIC_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <infiniband/verbs.h>

#define CHK_MAX_SGE 4		/* SGEs we ever use per WR */
#define CHK_FLUSH_EVERY 8	/* a plain WRITE is flushed within 8 ops */
#define CHK_GAP 64		/* max gap between regions and SGE pieces */
#define CHK_SLACK 64		/* max spare bytes of a receive buffer */
#define CHK_READ_SPARE 65536	/* read source: max_size + this */
#define CHK_BATCH 8		/* max WRs per ibv_post_send call */
#define CHK_MAX_QP 1024
#define CHK_MAX_LIST 16		/* --psn values, --expect-error-runs ranges */
#define CHK_DETACH 2		/* chk_run: peer gone, the run goes on alone */

enum op_kind { OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ,
	       OP_NKINDS };

#define OPB(k) (1u << (k))
#define OPS_INLINE OPB(OP_NKINDS)	/* a modifier, not a kind */
#define OPS_KINDS (OPB(OP_NKINDS) - 1)
#define OPS_ALL (OPS_KINDS | OPS_INLINE)
/* Kinds that consume a receive, and so flush earlier WRITEs. */
#define OPS_RECV (OPB(OP_SEND) | OPB(OP_SEND_IMM) | OPB(OP_WRITE_IMM))

enum { DIR_C2S, DIR_S2C };

/* Independent random streams (chk_rand lanes). */
enum { LANE_KIND = 1, LANE_SIZE, LANE_MISC, LANE_DATA, LANE_RSRC,
       LANE_GUARD, LANE_LOCAL, LANE_RECV, LANE_PSN };

/* The options both sides share: the client's, adopted by the server. */
struct params {
	uint64_t seed;
	uint64_t iters;		/* ops per QP and direction; 0: -T */
	uint32_t duration;	/* seconds of traffic (-T) */
	uint32_t nqp;
	uint32_t max_size;
	uint32_t mtu;		/* path MTU in bytes; 0: the ports' */
	uint32_t ops;		/* OPB() mask | OPS_INLINE */
	uint32_t idle;		/* idle timeout, seconds */
	uint32_t qp_timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint32_t window;	/* outstanding WRs per QP (SQ depth) */
	uint32_t rx_depth;	/* receives posted ahead per QP */
	uint32_t signal_every;	/* WRs per signaled one, at most */
	uint32_t rx_stall;	/* receiver pauses about 1 in this many */
};

/* What a side's device allows (exchanged; the server takes minima). */
struct caps {
	uint64_t max_msg;
	uint32_t mtu;		/* port's active MTU, bytes */
	uint32_t max_qp_wr;
	uint32_t rd_atom;	/* max_qp_rd_atom (as responder) */
	uint32_t init_rd_atom;	/* max_qp_init_rd_atom */
};

/* Options that stay on one side. */
struct local_opts {
	const char *dev;
	const char *server;	/* client: the server's address */
	const char *port;
	int ib_port;
	int gid_idx;
	uint32_t expect_err;	/* this run's: mask of accepted ibv_wc_status;
				 * 0: it must PASS */
	uint32_t expect_kinds;	/* --expect-error's list */
	bool expect_given;	/* --expect-error (every run, unless ...) */
	uint32_t n_err_runs;	/* ... --expect-error-runs: these runs */
	uint32_t err_runs[CHK_MAX_LIST][2];	/* [first, last] */
	bool serve;		/* server: --serve */
	uint32_t serve_runs;	/* clients to serve; 0: for ever */
	uint32_t npsn;		/* --psn: SQ PSNs of run 1, 2, ... */
	uint32_t psn[CHK_MAX_LIST];
	int64_t corrupt;	/* self-test: op index on QP 0, or -1 */
	uint32_t corrupt_kind;	/* that kind only; OP_NKINDS: any */
	int verbose;
	bool explicit_shared;	/* server: shared options given too */
};

/* One operation of a script (script.c). */
struct op {
	uint64_t idx;
	uint8_t kind;
	bool last;		/* the script's last op */
	uint32_t size;
	uint32_t imm;
	uint64_t roff;		/* WRITE*: offset in the peer's area of
				 * this QP; READ: in its read source */
	uint64_t rend;		/* WRITE*: ring position after it */
	uint64_t key;		/* payload */
};

struct script {
	uint64_t seed, n;	/* n: op count, 0 while open-ended (-T) */
	uint64_t wt_size, unit, rs_size;
	uint32_t qp, dir, ops, max_size, mtu;
	uint64_t next;		/* index of the next op */
	uint64_t cursor;	/* WRITE area ring position */
	uint64_t pend_start;	/* where the oldest unflushed WRITE is */
	uint32_t npend;		/* unflushed plain WRITEs */
	bool stopping;		/* -T over: end when no WRITE is pending */
	bool ended;
};

/* A buffer in a ring: pieces (one per SGE) with gaps between them. */
struct layout {
	uint32_t n;
	uint64_t off;		/* ring offset of piece 0 */
	uint32_t len[CHK_MAX_SGE];
	uint32_t gap[CHK_MAX_SGE];	/* after piece k */
	uint64_t end;		/* ring position after the span */
};

/* FIFO byte ring: positions only grow; offset = position % size. */
struct ring {
	uint8_t *base;
	uint64_t size, head, tail;
};

struct sq_rec {
	struct op op;
	uint64_t wr_id;
	struct layout lay;
	bool signaled, inl;
};

struct rq_rec {
	struct op op;
	uint64_t wr_id;
	struct layout lay;
	uint32_t slack;
	uint32_t nw;			/* plain WRITEs it flushes */
	struct op w[CHK_FLUSH_EVERY];
};

enum wait_why { W_NONE, W_WINDOW, W_CREDIT, W_RING, W_DONE, W_ERROR };

/* Per-kind counts (requester: completed; responder: verified). */
struct kcount {
	uint64_t n[OP_NKINDS];
	uint64_t inl;
};

struct cqp {
	uint32_t idx;
	struct ibv_qp *qp;
	uint32_t psn;
	uint32_t max_inline, max_sge;
	/* requester */
	struct script req;
	struct op nop;			/* next op, generated */
	bool have_nop;
	struct layout nlay;		/* its local buffer */
	uint64_t nlr;			/* its local random bits */
	struct sq_rec *sq;		/* window entries, FIFO */
	uint32_t sq_head, sq_tail, sq_n;
	uint32_t since_sig;
	uint64_t posted, retired;
	struct ring lr;			/* sources, READ destinations */
	uint64_t credit;		/* peer's WRITE area free up to */
	uint64_t nops;			/* script length once known */
	enum wait_why wait;
	/* responder */
	struct script rx;		/* the peer's script */
	struct op rop;
	bool have_rop;
	struct rq_rec *rq;		/* rx_depth entries, FIFO */
	uint32_t rq_head, rq_tail, rq_n;
	uint32_t rnw;
	struct op rw[CHK_FLUSH_EVERY];	/* WRITEs awaiting their flush */
	uint64_t recv_seq;
	struct ring rr;			/* receive buffers */
	uint64_t wfree;			/* our WRITE area free up to */
	uint64_t verified;		/* peer ops verified up to (index) */
	uint64_t peer_n;		/* peer's op count or UINT64_MAX */
	double stall_until;
	double last_progress;		/* last completion of this QP */
	double last_ok;			/* last successful send completion */
	uint8_t *wt;			/* our WRITE area for this QP */
	/* errors (--expect-error) */
	int err_status;			/* first error, -1: none */
	bool errored;
	struct kcount sent, recvd;
};

/* Run-wide counters. */
struct stats {
	uint64_t bytes_verified;
	uint64_t rnr_waits;
	uint64_t completions;
};

struct ctl;

struct chk {
	struct params p;
	struct caps mine, peer;
	struct local_opts o;
	bool server;
	uint32_t my_dir, peer_dir;
	const char *role;
	/* verbs */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	union ibv_gid gid, peer_gid;
	uint32_t rd_atomic, dest_rd_atomic;
	enum ibv_mtu path_mtu;
	uint32_t mtu;
	uint32_t max_inline, max_sge, max_qp;
	/* memory (verbs.c) */
	uint64_t unit, wt_size, rs_size, lr_size, rr_size;
	uint8_t *lmem, *wmem, *rmem;
	struct ibv_mr *lmr, *wmr, *rmr;
	uint64_t peer_wt_addr, peer_rs_addr;
	uint32_t peer_wt_rkey, peer_rs_rkey;
	int (*sync)(struct ibv_mr *mr, void *addr, size_t len, int dir);
	/* ERNIC only: its invalid-packet counter (ICRC and header faults),
	 * ININVDUPCNT[15:0], 16 bits: sampled often, summed here */
	int (*reg_read)(struct ibv_context *ctx, uint32_t off, uint32_t *v);
	/* and why a QP failed: ernicdv_query_qp_fatal */
	int (*qp_fatal)(struct ibv_qp *qp, uint32_t *code);
	uint32_t inv_last;
	uint64_t invalid_rx;
	double inv_at;
	struct cqp *q;
	/* run */
	struct ctl *ctl;
	struct stats st;
	double t0, last_progress, last_sent_progress;
	bool stop_sent, done_sent, peer_done, peer_gone;
	struct kcount peer_sent;	/* from the peer's DONE */
	uint64_t peer_bytes;
	bool failed, progress_dirty;
	int nmis;
	char why[512];			/* the first failure, for ABORT */
	/* the loop (run.c) */
	double deadline, report, prev_now;
	uint64_t sent_completions;
	unsigned int idle, iter;
	bool stopping;
	/* serve mode (serve.c) */
	uint32_t run;			/* 1, 2, ... with --serve; else 0 */
	char tag[24];			/* "run N: " with --serve; else "" */
	bool detached;			/* peer gone, finishing unattended */
	uint8_t bg;			/* enum bg_state (serve.c) */
	struct chk *next;		/* unattended runs */
};

/* script.c */
uint64_t chk_mix(uint64_t z);
uint64_t chk_rand(uint64_t seed, uint32_t qp, uint32_t dir, uint64_t idx,
		  uint32_t lane);
void pattern_fill(uint8_t *dst, uint64_t key, uint64_t start, uint64_t len);
/* Returns the first differing byte's index in [0, len), or -1. */
int64_t pattern_check(const uint8_t *buf, uint64_t key, uint64_t start,
		      uint64_t len);
uint8_t pattern_byte(uint64_t key, uint64_t pos);
void script_init(struct script *s, const struct chk *c, uint32_t qp,
		 uint32_t dir);
void script_next(struct script *s, struct op *op);
const char *kind_name(unsigned int k);
uint32_t ops_parse(const char *s);	/* 0 on error */
void ops_format(uint32_t ops, char *buf, size_t len);
void chk_area_sizes(struct chk *c);

/* rings and layouts (post.c) */
bool ring_alloc(struct ring *r, uint64_t len, uint64_t *off, uint64_t *end);
uint64_t layout_span(const struct layout *l);
void layout_make(struct layout *l, uint64_t r, uint32_t total,
		 uint32_t max_sge);
uint8_t *layout_piece(const struct ring *r, const struct layout *l,
		      uint32_t k);

/* verbs.c */
int verbs_open(struct chk *c);
int verbs_setup(struct chk *c);
int verbs_connect(struct chk *c, const uint32_t *peer_qpn,
		  const uint32_t *peer_psn);
void verbs_close_run(struct chk *c);	/* QPs, CQs, memory */
void verbs_close(struct chk *c);	/* and the device */
void chk_sync(struct chk *c, struct ibv_mr *mr, void *addr, size_t len,
	      bool for_cpu);
/* ERNIC: add what its invalid-packet counter moved since the last look. */
void chk_counters(struct chk *c);
/* ERNIC only: what the IP says of a failed QP (STATQPi, fatal code) as
 * ", ERNIC ...", or "" on other devices. */
void chk_ernic_why(struct chk *c, struct ibv_qp *qp, char *buf, size_t len);

/* post.c: the requester and receive posting */
int post_sends(struct chk *c, struct cqp *q);
int post_recvs(struct chk *c, struct cqp *q);
int on_send_wc(struct chk *c, const struct ibv_wc *wc);
struct cqp *wc_qp(struct chk *c, const struct ibv_wc *wc, const char *what);
void qp_wait_desc(const struct chk *c, const struct cqp *q, char *buf,
		  size_t len);

/* verify.c: the responder */
int on_recv_wc(struct chk *c, const struct ibv_wc *wc);
bool rx_finished(struct chk *c, struct cqp *q);
int check_layout(struct chk *c, struct cqp *q, const struct op *op,
		 const struct ring *r, const struct layout *lay,
		 uint64_t key, uint64_t start, uint64_t dlen, uint32_t dir,
		 const char *what);
void guard_fill(struct chk *c, const struct ring *r,
		const struct layout *lay, uint64_t dlen);
int on_wc_error(struct chk *c, struct cqp *q, const struct ibv_wc *wc,
		bool send);

/* run.c */
double now_s(void);
double wall_s(void);
int chk_run(struct chk *c);
int chk_step(struct chk *c);
void chk_tick(struct chk *c);
void chk_fail(struct chk *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void chk_mismatch(struct chk *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *dir_name(uint32_t dir);
void chk_dump(struct chk *c);

/* proto.c */
int ctl_listen(struct chk *c);
int ctl_accept(struct chk *c, int lfd, int timeout_ms);
int ctl_server(struct chk *c);
int ctl_client(struct chk *c);
int proto_hello(struct chk *c);
int proto_qpinfo(struct chk *c, uint32_t *qpn, uint32_t *psn);
int proto_ready(struct chk *c);
int proto_poll(struct chk *c, int timeout_ms);
int proto_progress(struct chk *c, bool force);
int proto_stop(struct chk *c);
int proto_done(struct chk *c);
void proto_abort(struct chk *c, const char *why);
void proto_close(struct chk *c);
int ctl_fd(const struct chk *c);

/* main.c */
int negotiate(struct chk *c);
int chk_setup(struct chk *c);
void chk_summary(struct chk *c, bool pass);

/* serve.c */
extern volatile int chk_dump_req;	/* SIGUSR1 */
extern volatile int chk_stop_req;	/* SIGINT/SIGTERM with --serve */
void serve_signals(bool serve);
int serve_main(struct chk *base);
void serve_poll(const struct chk *fg, double now);
void serve_dump(void);

#define CHK_WR_QP(id) ((uint32_t)((id) >> 48))
#define CHK_WR_IDX(id) ((id) & ((1ull << 48) - 1))
#define CHK_WR_ID(qp, idx) ((uint64_t)(qp) << 48 | (idx))

#endif
