// SPDX-License-Identifier: MIT
/*
 * PG332 ch.6 "QP Fatal Recovery" end to end on a model stepped by hand:
 * the provider's procedure (providers/ernic/ernic_recover.c) runs on a
 * register interface that records every access, and each of its waits
 * lets exactly one engine pass happen. The record is checked against
 * PG332's steps in order, waits included; an IP that never gets there
 * (no passes at all) must end the procedure at the step it stalls in,
 * with nothing done after it; and a recovered QP must carry traffic
 * again.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ernic_access.h"
#include "ernic_model.h"
#include "ernic_recover.h"
#include "ernic_regtab.h"
#include "ibta.h"
#include "model_harness.h"

#define SQ_PSN 100u
#define RQ_PSN 500u
#define NPOST 20u		/* more than the IP keeps outstanding (16) */

/* The register interface the procedure runs on, and what it did. */
struct rec {
	struct ernic_access acc;
	struct mh *h;
	bool run;		/* waits run the engine (else: a stuck IP) */
	uint32_t waits, idle_waits;
	char log[16384];
	size_t len;
};

static const char *reg_name(uint32_t off)
{
	enum ernic_reg_scope want = ERNIC_SCOPE_GLOBAL;

	if (off >= ERNIC_QP_BASE) {
		off = (off - ERNIC_QP_BASE) % ERNIC_QP_STRIDE;
		want = ERNIC_SCOPE_QP;
	}
	for (const struct ernic_reg_desc *d = ernic_reg_table; d->name; d++)
		if (d->scope == want && d->off == off)
			return d->name;
	return "?";
}

static void note(struct rec *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(r->log + r->len, sizeof(r->log) - r->len, fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(r->log) - r->len);
	r->len += (size_t)n;
}

static uint32_t rec_rd(struct ernic_access *acc, uint32_t off)
{
	struct rec *r = (struct rec *)acc;

	note(r, "R %s\n", reg_name(off));
	return mh_reg(r->h, off);
}

static void rec_wr(struct ernic_access *acc, uint32_t off, uint32_t val)
{
	struct rec *r = (struct rec *)acc;

	note(r, "W %s %#x\n", reg_name(off), val);
	ernic_model_reg_write(r->h->m, off, val);
}

static const struct ernic_access_ops rec_ops = {
	.reg_read = rec_rd,
	.reg_write = rec_wr,
};

/* One wait: the time passes, and (unless the IP is stuck) one engine
 * pass, so every "not yet" the procedure sees is the IP's real state. */
static void rec_wait(void *arg, uint32_t us)
{
	struct rec *r = arg;
	bool busy;

	r->waits++;
	if (mh_reg(r->h, ERNIC_RESPHNDSTS) &
	    ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN)
		r->idle_waits++;
	note(r, "~\n");
	r->h->now += (uint64_t)us * 1000;
	if (r->run)
		ernic_model_step(r->h->m, &busy);
}

static void rec_init(struct rec *r, struct mh *h, bool run,
		     struct ernic_hw_wait *w)
{
	memset(r, 0, sizeof(*r));
	r->acc.ops = &rec_ops;
	r->h = h;
	r->run = run;
	*w = (struct ernic_hw_wait){ .wait = rec_wait, .arg = r,
				     .step_us = 100, .limit_us = 5000 };
}

/* The log with each run of identical "poll, wait" rounds folded into
 * one round and a count, e.g. "R SQPI\nR CQHEAD\n~\n" x19. */
static void fold(const char *log, char *out, size_t cap)
{
	size_t o = 0;

	while (*log) {
		const char *w = strstr(log, "~\n");
		const char *start = log;
		size_t unit, n = 0;

		if (!w) {
			o += (size_t)snprintf(out + o, cap - o, "%s", log);
			break;
		}
		/* the round: from after the last write before the wait */
		for (const char *p = log; p < w; p = strchr(p, '\n') + 1)
			if (*p == 'W')
				start = strchr(p, '\n') + 1;
		o += (size_t)snprintf(out + o, cap - o, "%.*s",
				      (int)(start - log), log);
		unit = (size_t)(w + 2 - start);
		for (log = start; !strncmp(log, start, unit) &&
				  !strncmp(log + unit - 2, "~\n", 2);
		     log += unit)
			n++;
		o += (size_t)snprintf(out + o, cap - o, "[%.*s] x%zu\n",
				      (int)unit - 1, start, n);
	}
	assert_true(o < cap);
}

static void rx_nak(struct mh *h, uint8_t code, uint32_t psn)
{
	struct roce_pkt p = { .opcode = ROCE_RC_ACK, .psn = psn,
			      .aeth_syndrome = ROCE_AETH_NAK | code,
			      .aeth_msn = 1 };

	mh_rx(h, &p);
}

/* QP 2 with NPOST SENDs posted, made FATAL by a NAK-invalid for the
 * first: the IP wrote that WQE's error CQE and stopped. */
static struct mh_qp *fatal_qp(struct mh *h)
{
	struct mh_qp *q = mh_qp_up(h, 2, 1024, SQ_PSN, RQ_PSN, 10, 7, 7);
	uint32_t cqe[NPOST];

	for (uint32_t k = 0; k < NPOST; k++)
		mh_post(h, q, ERNIC_OP_SEND, 0, 8, 0, 0, 0);
	mh_run(h);
	rx_nak(h, ROCE_NAK_INVALID_REQ, SQ_PSN);
	assert_true(mh_fatal(h, q));
	assert_int_equal(mh_cqes(h, q, cqe, NPOST), 1);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe[0]), 1);
	/* 16 were fetched, four were not: the SQ is not empty yet */
	assert_false(mh_qreg(h, q, ERNIC_STATQP) & ERNIC_STATQP_SQ_EMPTY);
	return q;
}

static int setup(void **state)
{
	static struct mh h;

	mh_init(&h);
	*state = &h;
	return 0;
}

static int teardown(void **state)
{
	mh_fini(*state);
	return 0;
}

static void test_recover_in_order(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = fatal_qp(h);
	const uint32_t qpconf = mh_qreg(h, q, ERNIC_QPCONF);
	static struct rec r;
	struct ernic_hw_wait w;
	char err[256], got[4096], want[4096];
	uint32_t cqe[NPOST];
	struct roce_pkt p;

	/* Steps to clear traffic: 4 (recovery bit, still enabled), 5 (the
	 * SQ and outstanding queue empty: the IP retires one WQE a pass,
	 * 19 to go, and shows the queues empty a pass later), 6 and 7 at
	 * once after that, 8 (disabled). */
	rec_init(&r, h, true, &w);
	assert_int_equal(ernic_qp_recover_clear(&r.acc, 2, &w, err,
						sizeof(err)), 0);
	fold(r.log, got, sizeof(got));
	snprintf(want, sizeof(want),
		 "R QPCONF\n"
		 "W QPCONF %#x\n"
		 "[R STATQP\n~] x20\n"
		 "R STATQP\n"
		 "R SQPI\nR CQHEAD\n"
		 "R RESPHNDSTS\n"
		 "W QPCONF %#x\n",
		 qpconf | ERNIC_QPCONF_QP_UNDER_RECOVERY,
		 (qpconf | ERNIC_QPCONF_QP_UNDER_RECOVERY) &
			 ~ERNIC_QPCONF_QP_EN);
	assert_string_equal(got, want);
	/* While it retired, the response handler was busy. */
	assert_int_equal(r.idle_waits, 0);
	/* Each retired WQE has its CQE, with ERRFLAG, in SQ order. */
	assert_int_equal(mh_cqes(h, q, cqe, NPOST), NPOST - 1);
	for (uint32_t k = 0; k < NPOST - 1; k++) {
		assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe[k]), 1);
		assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_WRID, cqe[k]), k + 1);
	}
	assert_int_equal(mh_qreg(h, q, ERNIC_CQHEAD), NPOST);

	/* Steps to reinitialize 1-5, and what we add: nothing to wait for
	 * any more, the override for QP 2, the pointers zeroed in PG332's
	 * order, the override released. */
	rec_init(&r, h, true, &w);
	assert_int_equal(ernic_qp_recover_reinit(&r.acc, 2, &w, err,
						 sizeof(err)), 0);
	assert_string_equal(r.log,
		"R SQPI\nR CQHEAD\n"
		"R RESPHNDSTS\n"
		"R XRNICADCONF\n"
		"W XRNICADCONF 0x2000001\n"
		"W STATRQPIDB 0\nW STATRQBUFCA 0\nW STATRQBUFCAMSB 0\n"
		"W RQCI 0\nW STATCURSQPTR 0\nW SQPI 0\nW SQPSN 0\n"
		"W LSTRQREQ 0\nW STATMSN 0\nW CQHEAD 0\n"
		"R CQHEAD\n"
		"W RQWPTRDBADD 0\nW RQWPTRDBADDMSB 0\n"
		"W STATQP 0\n"
		"W QPCONF 0x40\n"
		"W XRNICADCONF 0\n");
	/* The override took: the read-only pointers are zero. */
	assert_int_equal(mh_qreg(h, q, ERNIC_CQHEAD), 0);
	assert_int_equal(mh_qreg(h, q, ERNIC_STATCURSQPTR), 0);
	assert_int_equal(mh_qreg(h, q, ERNIC_STATRQPIDB), 0);
	/* Step 9's read/write fields start afresh; FATAL itself clears
	 * when QP EN is set again (step 13). */
	assert_int_equal(mh_qreg(h, q, ERNIC_STATQP) &
				 (ERNIC_STATQP_NAK_SYNDROME |
				  ERNIC_STATQP_RETRY_COUNT |
				  ERNIC_STATQP_RNR_NAK_COUNT), 0);
	assert_true(mh_qreg(h, q, ERNIC_STATQP) & ERNIC_STATQP_FATAL);

	/* Steps 6-13 are the QP's next bring-up: it carries traffic. */
	mh_qp_forget(h, q);
	q = mh_qp_up(h, 2, 1024, SQ_PSN + 50, RQ_PSN + 50, 10, 7, 7);
	assert_int_equal(mh_qreg(h, q, ERNIC_QPCONF) &
				 ERNIC_QPCONF_QP_UNDER_RECOVERY, 0);
	mh_tx_clear(h);
	mh_post(h, q, ERNIC_OP_SEND, 0, 8, 0, 0, 0);
	mh_run(h);
	assert_true(mh_tx_next(h, &p));
	assert_int_equal(p.opcode, ROCE_RC_SEND_ONLY);
	assert_int_equal(p.psn, SQ_PSN + 50);
	p = (struct roce_pkt){ .opcode = ROCE_RC_ACK, .psn = SQ_PSN + 50,
			       .aeth_syndrome = ROCE_AETH_ACK | 0x1F,
			       .aeth_msn = 1 };
	mh_rx(h, &p);
	assert_int_equal(mh_cqes(h, q, cqe, NPOST), 1);
	assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe[0]), 0);
	assert_false(mh_fatal(h, q));
	assert_true(mh_reg(h, ERNIC_RESPHNDSTS) &
		    ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN);
}

/* An IP that never retires anything: step 5 times out after its bound,
 * says so, and the procedure does nothing after it (the QP is still
 * enabled, under recovery; the response handler still busy). */
static void test_recover_stuck(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = fatal_qp(h);
	static struct rec r;
	struct ernic_hw_wait w;
	char err[256];

	rec_init(&r, h, false, &w);
	assert_int_equal(ernic_qp_recover_clear(&r.acc, 2, &w, err,
						sizeof(err)), ETIMEDOUT);
	assert_int_equal(r.waits, w.limit_us / w.step_us);
	assert_non_null(strstr(err, "QP 2: fatal recovery, clear step 5"));
	assert_non_null(strstr(err, "in 5 ms"));
	assert_non_null(strstr(err, "send Q empty"));
	/* the last write was step 4's */
	assert_non_null(strstr(r.log, "W QPCONF"));
	assert_null(strstr(strstr(r.log, "W QPCONF") + 1, "W "));
	assert_int_equal(mh_qreg(h, q, ERNIC_QPCONF) &
				 (ERNIC_QPCONF_QP_EN |
				  ERNIC_QPCONF_QP_UNDER_RECOVERY),
			 ERNIC_QPCONF_QP_EN | ERNIC_QPCONF_QP_UNDER_RECOVERY);
	assert_false(mh_reg(h, ERNIC_RESPHNDSTS) &
		     ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN);

	/* The IP comes back to life: the next attempt completes, the same
	 * step 4 written again harmlessly. */
	rec_init(&r, h, true, &w);
	assert_int_equal(ernic_qp_recover_clear(&r.acc, 2, &w, err,
						sizeof(err)), 0);
	assert_int_equal(mh_qreg(h, q, ERNIC_CQHEAD), NPOST);
	assert_int_equal(mh_qreg(h, q, ERNIC_QPCONF) & ERNIC_QPCONF_QP_EN, 0);
}

/* A stuck IP at reinitialization (software disabled the QP while it was
 * still retiring: CQHEADi never reaches SQPIi): step 1 times out, and
 * the software override is never taken. */
static void test_reinit_stuck(void **state)
{
	struct mh *h = *state;
	struct mh_qp *q = fatal_qp(h);
	static struct rec r;
	struct ernic_hw_wait w;
	char err[256];

	ernic_model_reg_write(h->m, ERNIC_QP(2, ERNIC_QPCONF),
			      mh_qreg(h, q, ERNIC_QPCONF) |
				      ERNIC_QPCONF_QP_UNDER_RECOVERY);
	ernic_model_reg_write(h->m, ERNIC_QP(2, ERNIC_QPCONF),
			      ERNIC_QPCONF_QP_UNDER_RECOVERY);
	rec_init(&r, h, true, &w);
	assert_int_equal(ernic_qp_recover_reinit(&r.acc, 2, &w, err,
						 sizeof(err)), ETIMEDOUT);
	assert_non_null(strstr(err, "reinit step 1"));
	assert_non_null(strstr(err, "CQHEADi 1, SQPIi 20"));
	assert_null(strstr(r.log, "W "));
	assert_int_equal(mh_reg(h, ERNIC_XRNICADCONF) &
				 ERNIC_XRNICADCONF_SW_OVERRIDE, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_recover_in_order, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_recover_stuck, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reinit_stuck, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
