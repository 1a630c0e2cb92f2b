// SPDX-License-Identifier: MIT
/*
 * The run loop: one thread drives every QP in both roles, polls one send
 * and one receive CQ and the TCP channel, and decides when the run ends:
 * both sides' scripts done and checked (DONE both ways), a failure here
 * or at the peer, every QP in an expected error (--expect-error), or no
 * progress for the idle timeout. A serving server steps the runs whose
 * peer is gone (serve.c) from here too, without their TCP channel.
 */
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "check.h"

#define WC_BATCH 32

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* For lines a test compares with its own clock (a kill's time). */
double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *dir_name(uint32_t dir)
{
	return dir == DIR_C2S ? "c2s" : "s2c";
}

/*
 * A process that was stopped (SIGSTOP) and resumed finds its clock
 * jumped: the time it did not run is no QP's idleness, and the idle
 * timeout must not hide what happened meanwhile (the peer left, say).
 */
static void resumed(struct chk *c, double now, double gap)
{
	printf("ernic_check: %snote: %s: did not run for %.1fs (stopped?); idle timers restart\n",
	       c->tag, c->role, gap);
	/* (completions polled since the resume are recent already) */
	c->last_progress = c->last_progress + gap < now ?
			   c->last_progress + gap : now;
	for (uint32_t i = 0; i < c->p.nqp; i++) {
		struct cqp *q = &c->q[i];

		q->last_progress = q->last_progress + gap < now ?
				   q->last_progress + gap : now;
	}
}

/* Called with the time at each round and before a failure is told;
 * before the run (prev_now 0) there is nothing to compare. */
static void clock_check(struct chk *c, double now)
{
	if (!c->prev_now)
		return;
	if (!c->detached && now - c->prev_now > 2.0)
		resumed(c, now, now - c->prev_now);
	c->prev_now = now;
}

void chk_fail(struct chk *c, const char *fmt, ...)
{
	char msg[sizeof(c->why) - sizeof(c->tag) - 16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!c->failed) {
		/* Stopped, and the first thing seen on resuming is what
		 * fails (the peer left meanwhile): say so first. */
		clock_check(c, now_s());
		printf("ernic_check: FAIL: %s%s: %s\n", c->tag, c->role, msg);
		snprintf(c->why, sizeof(c->why), "%s%s: %s", c->tag, c->role,
			 msg);
		c->failed = true;
	} else {
		printf("ernic_check:   also: %s\n", msg);
	}
	fflush(stdout);
}

void chk_mismatch(struct chk *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->nmis++ < 8)
		printf("ernic_check:   mismatch: %s\n", msg);
}

static void dump_qp(struct chk *c, struct cqp *q, double now)
{
	const struct rq_rec *r = q->rq_n ? &q->rq[q->rq_tail] : NULL;
	char req[400];

	qp_wait_desc(c, q, req, sizeof(req));
	printf("ernic_check:   %sqp %u (qpn %u, sq psn %#x)%s: requester (%s): %s; last completion %.1fs ago\n",
	       c->tag, q->idx, q->qp->qp_num, q->psn,
	       q->errored ? " [error]" : "", dir_name(c->my_dir), req,
	       now - q->last_progress);
	printf("ernic_check:   %sqp %u: responder (%s): verified up to op %llu, %u receives posted",
	       c->tag, q->idx, dir_name(c->peer_dir),
	       (unsigned long long)q->verified, q->rq_n);
	if (r)
		printf(", waiting for op %llu %s size %u", (unsigned long long)r->op.idx,
		       kind_name(r->op.kind), r->op.size);
	if (q->peer_n == UINT64_MAX)
		printf(", peer's op count not known yet\n");
	else
		printf(", peer posts %llu ops\n", (unsigned long long)q->peer_n);
}

/* What every QP is doing: for an idle timeout, and when the peer failed. */
void chk_dump(struct chk *c)
{
	const double now = now_s();

	for (uint32_t i = 0; c->q && i < c->p.nqp; i++)
		if (c->q[i].qp)
			dump_qp(c, &c->q[i], now);
	printf("ernic_check:   %sTCP: STOP %s, DONE %s, peer's DONE %s%s\n",
	       c->tag, c->stop_sent ? "sent" : "not sent",
	       c->done_sent ? "sent" : "not sent",
	       c->peer_done ? "received" : "not received",
	       c->peer_gone ? ", peer gone" : "");
}

static void fail_idle(struct chk *c, struct cqp *stuck)
{
	if (stuck)
		chk_fail(c, "qp %u: no completion for %us with %u WRs outstanding",
			 stuck->idx, c->p.idle, stuck->sq_n);
	else
		chk_fail(c, "no progress for %us (idle timeout -t)", c->p.idle);
	chk_dump(c);
}

static bool req_finished(const struct cqp *q)
{
	return q->req.ended && !q->have_nop && !q->sq_n;
}

/* The peer's completed ops must be exactly those we verified. */
static int cross_check(struct chk *c)
{
	static const unsigned int kinds[] = { OP_SEND, OP_SEND_IMM, OP_WRITE,
					      OP_WRITE_IMM };

	for (size_t j = 0; j < sizeof(kinds) / sizeof(kinds[0]); j++) {
		unsigned int k = kinds[j];
		uint64_t n = 0;

		for (uint32_t i = 0; i < c->p.nqp; i++)
			n += c->q[i].recvd.n[k];
		if (n != c->peer_sent.n[k]) {
			chk_fail(c, "the peer completed %llu %s ops, we verified %llu",
				 (unsigned long long)c->peer_sent.n[k],
				 kind_name(k), (unsigned long long)n);
			return -1;
		}
	}
	return 0;
}

/* 1: every QP ended in an expected error; 0: not yet. */
static int all_errored(struct chk *c)
{
	for (uint32_t i = 0; i < c->p.nqp; i++)
		if (c->q[i].err_status < 0)
			return 0;
	return 1;
}

static int poll_cq(struct chk *c, struct ibv_cq *cq, bool send)
{
	struct ibv_wc wc[WC_BATCH];
	int n = ibv_poll_cq(cq, WC_BATCH, wc);

	if (n < 0) {
		chk_fail(c, "ibv_poll_cq (%s CQ) returned %d", send ? "send" :
			 "receive", n);
		return -1;
	}
	for (int k = 0; k < n; k++)
		if (send ? on_send_wc(c, &wc[k]) : on_recv_wc(c, &wc[k]))
			return -1;
	c->st.completions += (uint64_t)n;
	return n;
}

/* The end: 0 to go on, 1 finished, -1 failed. */
static int check_end(struct chk *c, double now)
{
	bool req = true, rx = true;

	for (uint32_t i = 0; i < c->p.nqp; i++) {
		req = req && req_finished(&c->q[i]);
		rx = rx && rx_finished(c, &c->q[i]);
	}
	if (c->failed)
		return -1;
	if (!c->done_sent && c->stop_sent && req && rx && !c->o.expect_err &&
	    c->ctl && proto_done(c))
		return -1;
	if (c->o.expect_err) {
		if (all_errored(c))
			return 1;
		if (req && rx && c->peer_done) {
			chk_fail(c, "--expect-error: every op completed, no QP failed");
			return -1;
		}
		if (req && rx && !c->done_sent && c->stop_sent && c->ctl &&
		    proto_done(c))
			return -1;
	} else if (c->done_sent && c->peer_done) {
		return cross_check(c) ? -1 : 1;
	}
	if (now - c->last_progress > c->p.idle) {
		fail_idle(c, NULL);
		return -1;
	}
	for (uint32_t i = 0; i < c->p.nqp; i++) {
		struct cqp *q = &c->q[i];

		if (q->sq_n && !q->errored &&
		    now - q->last_progress > c->p.idle) {
			fail_idle(c, q);
			return -1;
		}
	}
	return 0;
}

/* One round of the loop: 0 to go on, 1 finished, -1 failed. Without a
 * TCP channel (a run whose peer is gone) only the QPs are driven. */
int chk_step(struct chk *c)
{
	bool ended = true;
	double now, since;
	int ns, nr, rc;

	for (uint32_t i = 0; i < c->p.nqp; i++)
		if (post_recvs(c, &c->q[i]) || post_sends(c, &c->q[i]))
			return -1;
	ns = poll_cq(c, c->scq, true);
	nr = ns < 0 ? -1 : poll_cq(c, c->rcq, false);
	if (ns < 0 || nr < 0)
		return -1;
	now = now_s();
	clock_check(c, now);
	if (now - c->inv_at > 0.1) {
		chk_counters(c);
		c->inv_at = now;
	}
	if (ns + nr) {
		c->last_progress = now;
		c->idle = 0;
	} else {
		c->idle++;
	}
	if (c->deadline && !c->stopping && now >= c->deadline) {
		c->stopping = true;
		for (uint32_t i = 0; i < c->p.nqp; i++)
			c->q[i].req.stopping = true;
	}
	for (uint32_t i = 0; i < c->p.nqp; i++)
		ended = ended && c->q[i].req.ended;
	if (c->ctl && !c->stop_sent && ended && proto_stop(c))
		return -1;
	/* Credits soon; a sign of life now and then. */
	since = now - c->last_sent_progress;
	if (c->ctl && ((c->progress_dirty && since >= 0.0005) ||
		       (c->st.completions != c->sent_completions &&
			since >= 1))) {
		rc = proto_progress(c, false);
		if (rc < 0)
			return -1;
		if (!rc) {
			c->progress_dirty = false;
			c->last_sent_progress = now;
			c->sent_completions = c->st.completions;
		}
	}
	/* TCP every few rounds while busy; when idle, wait on it a little
	 * (the CPUs may be needed by the devices). */
	if (c->ctl && (c->idle || !(++c->iter & 31)))
		if (proto_poll(c, c->idle > 64 ? 1 : 0))
			return -1;
	if (c->o.verbose && now >= c->report) {
		c->report = now + 10;
		printf("ernic_check: %s%s: %.0fs: %llu completions, %llu bytes verified\n",
		       c->tag, c->role, now - c->t0,
		       (unsigned long long)c->st.completions,
		       (unsigned long long)c->st.bytes_verified);
	}
	return check_end(c, now);
}

/* Between rounds: a state dump when asked (SIGUSR1), and the runs a
 * serving server left to finish unattended. */
void chk_tick(struct chk *c)
{
	static double next;
	const double now = now_s();

	if (chk_dump_req) {
		chk_dump_req = 0;
		printf("ernic_check: state (SIGUSR1):\n");
		if (c && c->q)
			chk_dump(c);
		serve_dump();
	}
	if (now >= next) {
		next = now + 0.001;
		serve_poll(c, now);
	}
}

/* 0: the run is over (passed), -1 failed, CHK_DETACH: a serving server's
 * peer is gone under --expect-error; the run goes on unattended. */
int chk_run(struct chk *c)
{
	int rc;

	c->deadline = c->p.duration ? c->t0 + c->p.duration : 0;
	c->report = c->t0 + 10;
	c->prev_now = c->last_progress = c->last_sent_progress = c->t0;
	for (uint32_t i = 0; i < c->p.nqp; i++)
		c->q[i].last_progress = c->q[i].last_ok = c->t0;
	for (;;) {
		rc = chk_step(c);
		if (rc)
			return rc < 0 ? -1 : 0;
		if (c->run && c->peer_gone && c->o.expect_err)
			return CHK_DETACH;
		if (chk_stop_req) {
			chk_fail(c, "stopped (SIGINT/SIGTERM)");
			return -1;
		}
		chk_tick(c);
	}
}
