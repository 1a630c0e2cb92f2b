// SPDX-License-Identifier: MIT
/*
 * The HW handshake ports (PG332 Table 2-5) and CON_IO_CONF: doorbells
 * of QPs with QPCONFi[4] = 0 exchanged with user logic, here a test
 * (ernic_hndshk.h says what the model does and why).
 */
#include <errno.h>
#include <pthread.h>

#include "engine_priv.h"
#include "ernic_hndshk.h"

#define HS_SLOTS (ERNIC_C_NUM_QP_MAX + 1)

/* QP i's doorbells go through the ports: an enabled RC QP with
 * QPCONFi[4] reset. */
static bool hs_on(const struct eng *e, uint32_t i)
{
	uint32_t qpconf;

	if (i < ERNIC_FIRST_RC_QP || i > e->m->c_num_qp)
		return false;
	qpconf = eng_qreg(e->m, i, ERNIC_QPCONF);
	return (qpconf & (ERNIC_QPCONF_QP_EN | ERNIC_QPCONF_HW_HANDSHAKE_DIS)) ==
	       ERNIC_QPCONF_QP_EN;
}

/* ---- one output port ---- */

static void port_push(struct eng_hs_port *p, uint32_t i, uint32_t v)
{
	if (!p->valid) {
		p->valid = true;
		p->qp = i;
		p->data = v;
		return;
	}
	if (!p->wait[i]) {
		p->wait[i] = true;
		p->fifo[(p->head + p->n) % HS_SLOTS] = (uint16_t)i;
		p->n++;
	}
	p->val[i] = v;	/* the newest index carries the older ones */
}

/* rdy sampled high: the next waiting doorbell shows. */
static void port_take(struct eng_hs_port *p)
{
	uint32_t i;

	p->valid = false;
	if (!p->n)
		return;
	i = p->fifo[p->head];
	p->head = (p->head + 1) % HS_SLOTS;
	p->n--;
	p->wait[i] = false;
	p->valid = true;
	p->qp = i;
	p->data = p->val[i];
}

static bool port_has(const struct eng_hs_port *p, uint32_t i)
{
	return (p->valid && p->qp == i) || p->wait[i];
}

/* QP i left handshake mode: its waiting value goes (one shown stays
 * shown until taken, as PG332's valid does). */
static void port_drop(struct eng_hs_port *p, uint32_t i)
{
	uint32_t keep = 0;

	if (!p->wait[i])
		return;
	for (uint32_t k = 0; k < p->n; k++) {
		uint16_t q = p->fifo[(p->head + k) % HS_SLOTS];

		if (q != i)
			p->fifo[(p->head + keep++) % HS_SLOTS] = q;
	}
	p->n = keep;
	p->wait[i] = false;
}

/* CON_IO_CONF[31] again once its QP's doorbells were both taken. */
static void con_io_check(struct eng *e)
{
	struct eng_hndshk *hs = &e->hs;
	uint32_t q = hs->con_io_qp;

	if (!q || port_has(&hs->rq, q) || port_has(&hs->cq, q))
		return;
	hs->con_io_qp = 0;
	eng_set(e, ERNIC_CON_IO_CONF,
		eng_reg(e->m, ERNIC_CON_IO_CONF) | ERNIC_CON_IO_CONF_READY);
}

/* ---- the engine's hooks ---- */

void eng_hndshk_sync(struct eng *e, uint32_t i, uint32_t qpconf)
{
	struct eng_hndshk *hs = &e->hs;
	struct eng_qp *q = &e->qp[i];
	bool on = i >= ERNIC_FIRST_RC_QP && (qpconf & ERNIC_QPCONF_QP_EN) &&
		  !(qpconf & ERNIC_QPCONF_HW_HANDSHAKE_DIS);

	if (on == hs->on[i])
		return;
	hs->on[i] = on;
	if (!on) {
		port_drop(&hs->rq, i);
		port_drop(&hs->cq, i);
		if (hs->con_io_qp == i && !port_has(&hs->rq, i) &&
		    !port_has(&hs->cq, i))
			con_io_check(e);
		return;
	}
	/* "Enabling QP HW Offload" step 4: the pointers step 2 reset are
	 * where the user logic's SQ starts (SQPIi: an idle SQ is fetched
	 * up to it). Only an idle QP: the steps are for a QP without
	 * traffic (PG332 ch.1 note). */
	if (q->osq_n)
		return;
	q->sq_fetch = eng_qreg(e->m, i, ERNIC_SQPI) & 0xFFFF;
	q->cq_pi = eng_qreg(e->m, i, ERNIC_CQHEAD) & 0xFFFF;
	eng_statqp(e, i);
}

bool eng_hndshk_rq_db(struct eng *e, uint32_t i, uint32_t v)
{
	if (!hs_on(e, i))
		return false;
	port_push(&e->hs.rq, i, v);
	return true;
}

bool eng_hndshk_cq_db(struct eng *e, uint32_t i, uint32_t v)
{
	if (!hs_on(e, i))
		return false;
	port_push(&e->hs.cq, i, v);
	return true;
}

bool eng_hndshk_credits(struct eng *e, uint32_t i)
{
	return !hs_on(e, i);
}

bool eng_hndshk_frozen(struct eng *e, uint32_t i)
{
	uint32_t ad = eng_reg(e->m, ERNIC_XRNICADCONF);
	uint32_t sel = ERNIC_FIELD_GET(ERNIC_XRNICADCONF_SW_OVERRIDE_QP, ad);

	return (ad & ERNIC_XRNICADCONF_SW_OVERRIDE) && (sel == 0 || sel == i);
}

void eng_hndshk_global(struct eng *e, uint32_t off)
{
	struct eng_hndshk *hs = &e->hs;
	uint32_t v, q;

	if (off == ERNIC_XRNICADCONF) {
		/* the override may have ended: a doorbell rung while it
		 * held a QP's fetch is looked at in the next pass */
		eng_wake(e);
		return;
	}
	if (off != ERNIC_CON_IO_CONF)
		return;
	pthread_mutex_lock(&e->lock);
	v = eng_reg(e->m, ERNIC_CON_IO_CONF);
	q = ERNIC_FIELD_GET(ERNIC_CON_IO_CONF_QPID, v);
	if (!hs->con_io_qp && hs_on(e, q)) {
		hs->con_io_qp = q;
		eng_set(e, ERNIC_CON_IO_CONF, v & ~ERNIC_CON_IO_CONF_READY);
		port_push(&hs->rq, q,
			  eng_qreg(e->m, q, ERNIC_STATRQPIDB) & 0xFFFF);
		port_push(&hs->cq, q, e->qp[q].cq_pi);
	}
	pthread_mutex_unlock(&e->lock);
}

/* ---- the ports, as the user logic drives them ---- */

static bool out_port(struct ernic_model *m, bool rq,
		     struct ernic_hndshk_db *db, bool rdy)
{
	struct eng *e = m->eng;
	struct eng_hs_port *p;
	bool valid;

	if (!e)
		return false;
	pthread_mutex_lock(&e->lock);
	p = rq ? &e->hs.rq : &e->hs.cq;
	valid = p->valid;
	if (valid) {
		db->addr = p->qp * 4;
		db->data = p->data;
		if (rdy) {
			port_take(p);
			con_io_check(e);
		}
	}
	pthread_mutex_unlock(&e->lock);
	return valid;
}

bool ernic_model_hndshk_rq_db(struct ernic_model *m,
			      struct ernic_hndshk_db *db, bool rdy)
{
	return out_port(m, true, db, rdy);
}

bool ernic_model_hndshk_cq_db(struct ernic_model *m,
			      struct ernic_hndshk_db *db, bool rdy)
{
	return out_port(m, false, db, rdy);
}

/* An input port: the same effect as software's write of the register
 * at addr (qpoff: SQPI or RQCI), for a QP whose ports are on. */
static int in_port(struct ernic_model *m, uint32_t addr, uint32_t qpoff,
		   uint16_t v)
{
	const struct ernic_reg_desc *d;
	uint32_t i;

	if (!m->eng)
		return ENODEV;
	d = ernic_reg_lookup(addr, m->c_num_qp, &i);
	if (!d || d->scope != ERNIC_SCOPE_QP || d->off != qpoff ||
	    i < ERNIC_FIRST_RC_QP)
		return EINVAL;
	if (!hs_on(m->eng, i))
		return EAGAIN;
	ernic_model_hw_write(m, addr, v);
	eng_reg_written(m->eng, addr, i);
	return 0;
}

int ernic_model_hndshk_sq_pidb(struct ernic_model *m, uint32_t addr,
			       uint16_t pi)
{
	return in_port(m, addr, ERNIC_SQPI, pi);
}

int ernic_model_hndshk_rq_cidb(struct ernic_model *m, uint32_t addr,
			       uint16_t ci)
{
	return in_port(m, addr, ERNIC_RQCI, ci);
}
