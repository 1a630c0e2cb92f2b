// SPDX-License-Identifier: MIT
/*
 * PG332 ch.6 "QP Fatal Recovery" (ernic_recover.h). Each wait reads the
 * registers PG332 names, lets step_us pass while they say "not yet", and
 * gives up after limit_us with the step and what the registers last said.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "ernic_access.h"
#include "ernic_hw.h"
#include "ernic_recover.h"

#define EMPTIES (ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY)

/* One of PG332's waits: a register condition and how it reads. */
struct cond {
	const char *step;	/* "clear step 5" */
	bool (*done)(struct ernic_access *acc, uint32_t i, char *why,
		     size_t len);
};

static bool queues_empty(struct ernic_access *acc, uint32_t i, char *why,
			 size_t len)
{
	uint32_t st = ernic_rd(acc, ERNIC_QP(i, ERNIC_STATQP));

	snprintf(why, len, "STATQPi 0x%08x: send Q empty and outstanding "
		 "Q empty not both set", st);
	return (st & EMPTIES) == EMPTIES;
}

static bool cq_caught_up(struct ernic_access *acc, uint32_t i, char *why,
			 size_t len)
{
	uint32_t pi = ernic_rd(acc, ERNIC_QP(i, ERNIC_SQPI)) & 0xFFFF;
	uint32_t head = ernic_rd(acc, ERNIC_QP(i, ERNIC_CQHEAD)) & 0xFFFF;

	snprintf(why, len, "CQHEADi %u, SQPIi %u", head, pi);
	return head == pi;
}

static bool resp_handler_idle(struct ernic_access *acc, uint32_t i,
			      char *why, size_t len)
{
	uint32_t v = ernic_rd(acc, ERNIC_RESPHNDSTS);

	(void)i;
	snprintf(why, len, "RESPHNDSTS 0x%08x: [16] sq pici db check en "
		 "not set", v);
	return v & ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN;
}

static bool cq_zero(struct ernic_access *acc, uint32_t i, char *why,
		    size_t len)
{
	uint32_t head = ernic_rd(acc, ERNIC_QP(i, ERNIC_CQHEAD));

	snprintf(why, len, "CQHEADi %u", head);
	return head == 0;
}

static int wait_for(struct ernic_access *acc, uint32_t i,
		    const struct ernic_hw_wait *w, const struct cond *c,
		    char *err, size_t errlen)
{
	char why[96];

	for (uint32_t t = 0;; t += w->step_us) {
		if (c->done(acc, i, why, sizeof(why)))
			return 0;
		if (t >= w->limit_us)
			break;
		w->wait(w->arg, w->step_us);
	}
	snprintf(err, errlen, "QP %u: fatal recovery, %s: the IP did not "
		 "get there in %u ms (%s)", i, c->step, w->limit_us / 1000,
		 why);
	return ETIMEDOUT;
}

uint32_t ernic_sw_override_on(struct ernic_access *acc, uint32_t i)
{
	uint32_t off = ernic_rd(acc, ERNIC_XRNICADCONF) &
		       ~(ERNIC_XRNICADCONF_SW_OVERRIDE |
			 ERNIC_XRNICADCONF_SW_OVERRIDE_QP);

	ernic_wr(acc, ERNIC_XRNICADCONF,
		 off | ERNIC_XRNICADCONF_SW_OVERRIDE |
			 ERNIC_FIELD_PREP(ERNIC_XRNICADCONF_SW_OVERRIDE_QP, i));
	return off;
}

int ernic_qp_recover_clear(struct ernic_access *acc, uint32_t i,
			   const struct ernic_hw_wait *w, char *err,
			   size_t errlen)
{
	static const struct cond step5 = { "clear step 5", queues_empty },
				 step6 = { "clear step 6", cq_caught_up },
				 step7 = { "clear step 7", resp_handler_idle };
	uint32_t qpconf = ernic_rd(acc, ERNIC_QP(i, ERNIC_QPCONF));
	int r;

	/* Step 4: under recovery, still enabled: the IP retires the SQ. */
	qpconf |= ERNIC_QPCONF_QP_UNDER_RECOVERY;
	ernic_wr(acc, ERNIC_QP(i, ERNIC_QPCONF), qpconf);
	if ((r = wait_for(acc, i, w, &step5, err, errlen)) ||
	    (r = wait_for(acc, i, w, &step6, err, errlen)) ||
	    (r = wait_for(acc, i, w, &step7, err, errlen)))
		return r;
	/* Step 8: disabled, still under recovery. */
	ernic_wr(acc, ERNIC_QP(i, ERNIC_QPCONF),
		 qpconf & ~ERNIC_QPCONF_QP_EN);
	return 0;
}

int ernic_qp_recover_reinit(struct ernic_access *acc, uint32_t i,
			    const struct ernic_hw_wait *w, char *err,
			    size_t errlen)
{
	static const struct cond step1 = { "reinit step 1", cq_caught_up },
				 step2 = { "reinit step 2", resp_handler_idle },
				 step5 = { "reinit step 5", cq_zero };
	/* Step 4's registers, in PG332's order. */
	static const uint32_t zeroed[] = {
		ERNIC_STATRQPIDB, ERNIC_STATRQBUFCA, ERNIC_STATRQBUFCAMSB,
		ERNIC_RQCI, ERNIC_STATCURSQPTR, ERNIC_SQPI, ERNIC_SQPSN,
		ERNIC_LSTRQREQ, ERNIC_STATMSN, ERNIC_CQHEAD,
	};
	uint32_t adconf;
	int r;

	if ((r = wait_for(acc, i, w, &step1, err, errlen)) ||
	    (r = wait_for(acc, i, w, &step2, err, errlen)))
		return r;
	/* Step 3: the software override, for this QP. */
	adconf = ernic_sw_override_on(acc, i);
	/* Step 4. */
	for (size_t k = 0; k < sizeof(zeroed) / sizeof(zeroed[0]); k++)
		ernic_wr(acc, ERNIC_QP(i, zeroed[k]), 0);
	/* Step 5. */
	r = wait_for(acc, i, w, &step5, err, errlen);
	if (!r) {
		/* What QP Deletion zeroes besides; step 9's counts; the QP
		 * left disabled and under recovery until its next RTR. */
		ernic_wr64(acc, ERNIC_QP(i, ERNIC_RQWPTRDBADD),
			   ERNIC_QP(i, ERNIC_RQWPTRDBADDMSB), 0);
		ernic_wr(acc, ERNIC_QP(i, ERNIC_STATQP), 0);
		ernic_wr(acc, ERNIC_QP(i, ERNIC_QPCONF),
			 ERNIC_QPCONF_QP_UNDER_RECOVERY);
	}
	/* Step 14, brought forward: the override is the device's. */
	ernic_wr(acc, ERNIC_XRNICADCONF, adconf);
	return r;
}
