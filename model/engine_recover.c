// SPDX-License-Identifier: MIT
/*
 * A QP under recovery: what the IP does between software setting
 * QPCONFi[6] ("QP under recovery") on an enabled QP and clearing its
 * QP EN (PG332 ch.6 "QP Fatal Recovery", steps 4-8).
 *
 * PG332 lists what software waits for, not what the IP does meanwhile;
 * this is our reading of it. The QP sends no more requests and takes no
 * more packets (its timers stop), and the response handler retires what
 * its SQ still holds, one WQE per pass: each gets a CQE with ERRFLAG
 * (Table 2-2: set "in case QP enters a fatal state") and CQHEADi moves
 * on, until CQHEADi equals SQPIi (step 6). Then STATQPi shows the SQ and
 * the outstanding queue empty (step 5), and RESPHNDSTS[16], "sq pici db
 * check en", clear from the moment the bit was set, is set again
 * (step 7). One WQE per pass makes the waits real: software that does
 * not poll finds the QP still busy.
 */
#include "engine_priv.h"

/* RESPHNDSTS: QP i last looked at; bit 16 set when no QP under
 * recovery has WQEs left to retire. */
static void resphnd(struct eng *e, uint32_t i)
{
	uint32_t v = eng_reg(e->m, ERNIC_RESPHNDSTS);
	bool idle = true;

	for (uint32_t k = ERNIC_FIRST_RC_QP; k <= e->m->c_num_qp; k++)
		if (e->qp[k].recover == ENG_RECOVER_RETIRING)
			idle = false;
	v &= ~(ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN |
	       ERNIC_RESPHNDSTS_QP_INDEX);
	v |= ERNIC_FIELD_PREP(ERNIC_RESPHNDSTS_QP_INDEX, i & 0xFF);
	if (idle)
		v |= ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN;
	eng_set(e, ERNIC_RESPHNDSTS, v);
}

void eng_recover_start(struct eng *e, uint32_t i)
{
	struct eng_qp *q = &e->qp[i];

	q->recover = ENG_RECOVER_RETIRING;
	q->rto_at = q->rnr_at = 0;
	q->tx_cur = 0;
	q->rdq_n = 0;
	resphnd(e, i);
}

bool eng_recover_turn(struct eng *e, uint32_t i)
{
	struct eng_qp *q = &e->qp[i];
	uint32_t depth = ERNIC_FIELD_GET(ERNIC_QDEPTH_SQ,
					 eng_qreg(e->m, i, ERNIC_QDEPTH));
	uint32_t pi = eng_qreg(e->m, i, ERNIC_SQPI) & 0xFFFF;
	struct eng_wqe w = { 0 };

	if (q->recover != ENG_RECOVER_RETIRING)
		return false;
	if (depth && pi < depth && q->cq_pi < depth && q->cq_pi != pi) {
		w.slot = q->cq_pi;
		/* The WQE as posted; one the IP cannot read is retired
		 * under its slot number. */
		if (eng_wqe_read(e, i, w.slot, &w.w))
			w.w = (struct ernic_wqe){ .wrid = (uint16_t)w.slot };
		eng_cqe_write(e, i, &w, true);
		return true;
	}
	/* Retired: nothing outstanding, nothing left to fetch. */
	eng_osq_count(e, i, -(int)q->osq_n);
	q->osq_head = 0;
	q->sq_fetch = pi < depth ? pi : 0;
	eng_statqp(e, i);
	q->recover = ENG_RECOVER_RETIRED;
	resphnd(e, i);
	return false;
}

void eng_recover_end(struct eng *e, uint32_t i)
{
	e->qp[i].recover = ENG_RECOVER_NONE;
	resphnd(e, i);
}
