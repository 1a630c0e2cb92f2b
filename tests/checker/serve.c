// SPDX-License-Identifier: MIT
/*
 * Serve mode (--serve N): the server takes clients one after another on
 * one TCP port and one device, as a long-lived daemon would. A run is
 * not torn down because its peer vanished: under --expect-error it goes
 * on unattended (its QPs retry what they have outstanding; chk_step's
 * checks still apply) while the next client is served, and its verdict
 * comes when every QP has failed. A failed run's QPs are kept until
 * those with work outstanding have failed too (or -t passes). So a dead
 * client's partner QPs go on retransmitting to its address and QPNs,
 * which is what a restarted client must withstand.
 *
 * One thread does it all: chk_tick() steps these runs between rounds of
 * the current one, while it sets up, and while waiting for a client.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

volatile int chk_dump_req, chk_stop_req;

static struct chk *bg;		/* runs left to finish, newest first */
static uint32_t n_runs, n_pass, n_fail;

static void on_usr1(int sig)
{
	(void)sig;
	chk_dump_req = 1;
}

static void on_stop(int sig)
{
	(void)sig;
	chk_stop_req = 1;
}

void serve_signals(bool serve)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	if (!serve)
		return;
	/* A daemon's end (--serve 0): the verdicts so far decide. */
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* What run r must end in: the --expect-error list, or 0 (PASS). */
static uint32_t run_expect(const struct chk *b, uint32_t r)
{
	if (!b->o.n_err_runs)
		return b->o.expect_given ? b->o.expect_kinds : 0;
	for (uint32_t k = 0; k < b->o.n_err_runs; k++)
		if (r >= b->o.err_runs[k][0] && r <= b->o.err_runs[k][1])
			return b->o.expect_kinds;
	return 0;
}

/* Where a run in the bg list stands. */
enum bg_state {
	BG_VERDICT,	/* peer gone, stepped until its verdict comes */
	BG_REAP,	/* verdict given, some QPs still have work out */
	BG_DEAD,	/* QPs done with: destroyed when no run is active */
};

static void bg_add(struct chk *c, enum bg_state st)
{
	c->detached = true;
	c->bg = (uint8_t)st;
	c->next = bg;
	bg = c;
}

static void verdict(struct chk *c, bool pass)
{
	chk_summary(c, pass);
	if (pass)
		n_pass++;
	else
		n_fail++;
}

/* QPs with requests outstanding that have not failed yet. */
static uint32_t outstanding(const struct chk *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; c->q && i < c->p.nqp; i++)
		n += c->q[i].qp && c->q[i].sq_n && !c->q[i].errored;
	return n;
}

/* Destroying a QP that did not drain takes a while (the provider waits,
 * bounded, for it), so it is left for when no run is active. */
static void drop(struct chk *c)
{
	const double t = now_s();

	verbs_close_run(c);
	if (c->detached)
		printf("ernic_check: %sits QPs are destroyed (%.2fs)\n", c->tag,
		       now_s() - t);
	free(c);
}

/* The verdict is given: on to the QPs' end. */
static void retire_run(struct chk *c, bool busy)
{
	uint32_t n = outstanding(c);

	if (n) {
		printf("ernic_check: %skeeping its QPs: %u have requests outstanding (until they fail, or %us without a completion)\n",
		       c->tag, n, c->p.idle);
		c->last_progress = now_s();
		bg_add(c, BG_REAP);
	} else if (busy) {
		bg_add(c, BG_DEAD);
	} else {
		drop(c);
	}
}

/* A send completion of a failed run: WRs up to it are done with. */
static void reap_retire(struct chk *c, struct cqp *q, uint64_t wr_id)
{
	for (uint32_t k = 0, j = q->sq_tail; k < q->sq_n;
	     k++, j = (j + 1) % c->p.window)
		if (q->sq[j].wr_id == wr_id) {
			q->sq_tail = (j + 1) % c->p.window;
			q->sq_n -= k + 1;
			return;
		}
}

/* A failed run's QPs: note their errors (and, for WRs that were acked
 * after all, successes); true when nothing is left. */
static bool reap_step(struct chk *c, double now)
{
	struct ibv_cq *cq[2] = { c->scq, c->rcq };
	struct ibv_wc wc[32];
	int n = 0;

	for (int k = 0; k < 2; k++) {
		while ((n = ibv_poll_cq(cq[k], 32, wc)) > 0) {
			c->last_progress = now;
			for (int j = 0; j < n; j++) {
				uint32_t i = CHK_WR_QP(wc[j].wr_id);

				if (i >= c->p.nqp || c->q[i].errored)
					continue;
				if (wc[j].status == IBV_WC_SUCCESS) {
					if (!k)
						reap_retire(c, &c->q[i],
							    wc[j].wr_id);
					continue;
				}
				c->q[i].errored = true;
				printf("ernic_check: %sqp %u: %s completion %s (at=%.6f)\n",
				       c->tag, i, k ? "receive" : "send",
				       ibv_wc_status_str(wc[j].status),
				       wall_s());
			}
		}
		if (n < 0)
			return true;
	}
	return !outstanding(c) || now - c->last_progress > c->p.idle;
}

/* Step the unattended runs (fg: the active run, if any); those done with
 * leave the list. */
void serve_poll(const struct chk *fg, double now)
{
	static bool busy;
	struct chk **pp = &bg, *c;

	if (busy)
		return;
	busy = true;
	while ((c = *pp)) {
		int rc = 0;
		bool done;

		switch (c->bg) {
		case BG_VERDICT:
			done = (rc = chk_step(c)) != 0;
			break;
		case BG_REAP:
			done = reap_step(c, now);
			break;
		default:
			done = !fg;
			break;
		}
		if (!done) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		if (c->bg == BG_VERDICT) {
			verdict(c, rc > 0 && !c->failed);
			retire_run(c, fg != NULL);
		} else if (c->bg == BG_REAP && fg != NULL) {
			bg_add(c, BG_DEAD);
		} else {
			drop(c);
		}
	}
	busy = false;
}

void serve_dump(void)
{
	static const char *const what[] = {
		[BG_VERDICT] = "peer gone, verdict to come",
		[BG_REAP] = "verdict given, QPs with work outstanding",
		[BG_DEAD] = "QPs to destroy",
	};

	for (struct chk *c = bg; c; c = c->next) {
		printf("ernic_check:   %s(%s)\n", c->tag, what[c->bg]);
		if (c->bg != BG_DEAD)
			chk_dump(c);
	}
}

static void serve_one(struct chk *c)
{
	int rc = chk_setup(c);

	if (!rc) {
		c->t0 = now_s();
		printf("ernic_check: %s%s: running\n", c->tag, c->role);
		rc = chk_run(c);
	}
	if (rc == CHK_DETACH) {
		proto_close(c);
		printf("ernic_check: %sthe peer is gone: the run goes on unattended until its QPs fail (%us without a completion fails it)\n",
		       c->tag, c->p.idle);
		bg_add(c, BG_VERDICT);
		return;
	}
	if (rc && !c->failed)
		chk_fail(c, "setup failed");
	if (c->failed && !c->peer_gone && c->ctl)
		proto_abort(c, c->why);
	proto_close(c);
	verdict(c, !rc && !c->failed);
	retire_run(c, false);
}

/* At the end: wait for the verdicts to come (each run ends by itself,
 * within its idle timeout), unless told to stop; then destroy the rest. */
static void finish_bg(void)
{
	bool pending = true;

	while (pending && !chk_stop_req) {
		pending = false;
		chk_tick(NULL);
		for (struct chk *c = bg; c; c = c->next)
			pending = pending || c->bg == BG_VERDICT;
		if (pending)
			usleep(1000);
	}
	while (bg) {
		struct chk *c = bg;

		bg = c->next;
		if (c->bg == BG_VERDICT) {
			chk_fail(c, "stopped (signal) before every QP failed");
			verdict(c, false);
		}
		drop(c);
	}
}

int serve_main(struct chk *base)
{
	const uint32_t want = base->o.serve_runs;
	int lfd, rc = 0;
	bool ok;

	if (verbs_open(base))
		return 1;
	lfd = ctl_listen(base);
	if (lfd < 0) {
		verbs_close(base);
		return 1;
	}
	for (uint32_t r = 1; (!want || r <= want) && !chk_stop_req; r++) {
		struct chk *c = malloc(sizeof(*c));

		if (!c)
			break;
		*c = *base;
		c->run = r;
		snprintf(c->tag, sizeof(c->tag), "run %u: ", r);
		c->o.expect_err = run_expect(base, r);
		printf("ernic_check: server: run %u: waiting for a client on TCP port %s (the run must %s)\n",
		       r, base->o.port,
		       c->o.expect_err ? "end in the expected errors" : "PASS");
		fflush(stdout);
		while (!(rc = ctl_accept(c, lfd, bg ? 1 : 100)) &&
		       !chk_stop_req)
			chk_tick(NULL);
		if (rc <= 0) {
			if (rc < 0)
				perror("ernic_check: accept");
			free(c);
			break;
		}
		n_runs++;
		serve_one(c);
	}
	close(lfd);
	finish_bg();
	ok = !n_fail && rc >= 0 && (!want || n_runs == want);
	printf("ernic_check: server: %s runs=%u passed=%u failed=%u%s\n",
	       ok ? "PASS" : "FAIL", n_runs, n_pass, n_fail,
	       want && n_runs < want ? " (stopped early)" : "");
	verbs_close(base);
	return ok ? 0 : 1;
}
