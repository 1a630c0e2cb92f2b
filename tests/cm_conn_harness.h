/* SPDX-License-Identifier: MIT */
/*
 * The world test_cm_conn.c runs the CM in: two cm_devs, A (active) and B
 * (passive), wired back to back through a network queue the test
 * controls (deliver, lose the next N MADs of an attribute, duplicate,
 * reorder), a clock that only moves when told, and a recorder of every
 * event and every MAD sent. Include after <cmocka.h>.
 */
#ifndef CM_CONN_HARNESS_H
#define CM_CONN_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "cm_conn.h"

enum { SA, SB };			/* the active and the passive side */

#define H_SID UINT64_C(0x0106000000004E20)	/* RDMA IP CM, port 20000 */
#define H_GUID_A UINT64_C(0x02000000000000A1)
#define H_GUID_B UINT64_C(0x02000000000000B2)
#define H_QPN_A 0x000111u
#define H_QPN_B 0x000222u
#define H_PSN_A 0xABCDE1u
#define H_PSN_B 0x123456u
#define H_RTU_PDATA "rtu!"
#define H_MAX_EV 32
#define H_MAX_Q 64
#define H_MAX_LOG 64

/* An event as the consumer was told it; the message copied. */
struct h_ev {
	enum cm_event_type type;
	struct cm_id *id, *listener;
	enum cm_state state;		/* the id's, when told */
	bool no_msg;			/* CM_EV_DISCONNECTED without a DREP */
	struct cm_addr from;
	union {
		struct cm_req req;
		struct cm_rep rep;
		struct cm_rej rej;
		struct cm_rtu rtu;
		struct cm_dreq dreq;
		struct cm_drep drep;
	} u;
};

/* What the consumer does on CM_EV_REQ. */
enum h_on_req { ON_REQ_WAIT, ON_REQ_ACCEPT };

struct h_side {
	struct cm_dev *dev;
	struct cm_addr addr;
	struct h_ev ev[H_MAX_EV];
	int nev;
	int drop[32];		/* lose the next n sends of attribute & 31 */
	int fail;		/* the next send returns this errno */
	enum h_on_req on_req;
	bool auto_rtu;		/* CM_EV_REP: cm_send_rtu(H_RTU_PDATA) */
	struct cm_stats base;	/* STATS_EQ counts from here */
};

struct h_pkt {
	int dst, src;
	uint8_t mad[IB_MAD_SIZE];
};

struct h_sent {
	int src;
	bool lost, err;
	uint8_t mad[IB_MAD_SIZE];
};

struct h_world {
	struct h_side s[2];
	struct cm_addr stranger;	/* a third node: what it is sent is lost */
	struct h_pkt q[H_MAX_Q];
	int nq;
	struct h_sent log[H_MAX_LOG], seen[H_MAX_LOG];
	int nlog, nseen;
	uint64_t now;
	struct cm_id *lis;		/* B's listener for H_SID (h_listen) */
	uint8_t req_mad[IB_MAD_SIZE];	/* the REQ of the last h_connect */
};

extern struct h_world W;

int h_setup(void **state);
int h_teardown(void **state);

/* A's REQ to B for H_SID from QPN H_QPN_A; timeouts left to the CM. */
struct cm_req h_req(uint8_t max_cm_retries);
struct cm_rep h_rep(void);
struct cm_id *h_listen(void);
/* A new id on A sends req; the CM's return checked to be 0. */
struct cm_id *h_send_req(struct cm_req *req);
/* A connects to B (h_listen'ed) with req: both established; then the
 * events, the MAD log and the counters start again from zero. */
void h_connect(struct cm_req *req, struct cm_id **a, struct cm_id **b);
void h_reset(void);

/* The network: deliver everything queued (fails past 100 MADs: a
 * ping-pong), deliver only q[i], queue a copy of q[i], forget all. */
int h_run(void);
void h_step(int i);
void h_dup(int i);
void h_drop_all(void);
/* Give mad to dst as if from its peer (or from W.stranger). */
void h_inject(int dst, const uint8_t *mad);
void h_inject_from(int dst, const struct cm_addr *from, const uint8_t *mad,
		   size_t len);
/* Move the clock, then tick A and B (in that order). */
void h_advance(uint64_t ms);

/* The MADs sent since the last call, "A:REQ B:REJ/8 A:RTU(lost)"; they
 * stay readable through h_mad(k) until the next call. */
const char *h_sent(void);
const uint8_t *h_mad(int k);
const struct h_ev *h_ev(int side, int k, enum cm_event_type type);
/* Has side forgotten local_id (the id freed)? Answers through a REP
 * naming it; leaves no trace in the log, queue or counters. */
bool h_freed(int side, uint32_t local_id);

/* test_cm_conn_more.c's group. */
int cm_conn_more_tests(void);

void h_stats_eq(int side, struct cm_stats want, const char *file, int line);
#define STATS_EQ(side, ...) \
	h_stats_eq(side, (struct cm_stats){ __VA_ARGS__ }, __FILE__, __LINE__)

#endif
