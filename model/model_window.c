// SPDX-License-Identifier: MIT
/*
 * Shared-memory register window of the virtual FPGA (ernic_window.h).
 *
 * Between two passes software may have written many registers; the pass
 * sees only their final values, not the order. It applies them in the
 * order of PG332 ch.6 "RC QP Creation", "QP Deletion" and "QP Fatal
 * Recovery", where it matters:
 *   0. QPCONFi writes that clear QP enable, and a disable the pass makes
 *      up for a QP whose overridable pointers and QPCONF are both being
 *      written: those flows write the pointers only to a disabled QP,
 *      so a QP reset and re-enabled between two passes was disabled;
 *   1. XRNICADCONF (software override);
 *   2. every other register, the overridable ones accepted for a
 *      disabled QP as well;
 *   3. QPCONFi writes that enable, XRNICCONF;
 *   4. the SQPIi / RQCIi doorbells;
 *   5. W1C status.
 * RO words software wrote are restored by the publish step.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ernic_window.h"
#include "model_priv.h"

enum { CLS_DISABLE, CLS_OVERRIDE, CLS_CONFIG, CLS_ENABLE, CLS_DOORBELL,
       CLS_W1C, CLS_N };

struct wreg {
	uint32_t off;
	uint32_t mask;
	uint8_t access;		/* enum ernic_reg_access */
	uint8_t qp;		/* QP index for per-QP registers, else 0 */
	uint16_t qpoff;		/* offset inside the QP block */
};

struct pend {
	const struct wreg *r;
	uint32_t val;
	uint8_t cls;
};

struct ernic_window {
	struct ernic_model *m;
	_Atomic uint32_t *win;
	uint32_t *pub;		/* value last published, per word */
	uint32_t *mark;		/* marker bit in that value (W1C only) */
	struct wreg *regs;	/* every register this instance has */
	size_t nregs;
	struct pend *pend;	/* nregs */
	size_t npend;
	struct pend *sorted;
};

static uint32_t mreg(const struct ernic_model *m, uint32_t off)
{
	return __atomic_load_n(&m->regs[off / 4], __ATOMIC_ACQUIRE);
}

static bool qp_enabled(const struct ernic_model *m, uint32_t i)
{
	return mreg(m, ERNIC_QP(i, ERNIC_QPCONF)) & ERNIC_QPCONF_QP_EN;
}

/* The marker of a W1C word: INTSTS has reserved bits; a per-QP word uses
 * the bit of a QP that does not exist or has that interrupt off, and is
 * clear now (software clears only the QPs it services). 0: no marker. */
static uint32_t w1c_mark(const struct ernic_model *m, uint32_t off,
			 uint32_t val)
{
	uint32_t word, en;

	if (off == ERNIC_INTSTS)
		return ERNIC_BIT(31);
	if (off >= ERNIC_CQINTSTS(1)) {
		word = (off - ERNIC_CQINTSTS(1)) / 4 + 1;
		en = ERNIC_QPCONF_CQ_INT_EN;
	} else {
		word = (off - ERNIC_RQINTSTS(1)) / 4 + 1;
		en = ERNIC_QPCONF_RQ_INT_EN;
	}
	for (int b = 31; b >= 0; b--) {
		uint32_t i = (word - 1) * 32 + (uint32_t)b + 1;

		if (val & 1u << b)
			continue;
		if (i > m->c_num_qp || !(mreg(m, ERNIC_QP(i, ERNIC_QPCONF)) & en))
			return 1u << b;
	}
	return 0;
}

static uint8_t classify(const struct wreg *r, uint32_t val)
{
	if (r->access == ERNIC_REG_W1C)
		return CLS_W1C;
	if (r->qp) {
		if (r->qpoff == ERNIC_QPCONF)
			return (val & ERNIC_QPCONF_QP_EN) ? CLS_ENABLE :
							    CLS_DISABLE;
		if (r->qpoff == ERNIC_SQPI || r->qpoff == ERNIC_RQCI)
			return CLS_DOORBELL;
		return CLS_CONFIG;
	}
	if (r->off == ERNIC_XRNICADCONF)
		return CLS_OVERRIDE;
	if (r->off == ERNIC_XRNICCONF)
		return CLS_ENABLE;
	return CLS_CONFIG;
}

/* Publish the register file: a word software changed since (CAS fails)
 * is left for the next pass to find. */
static void publish(struct ernic_window *w)
{
	for (size_t k = 0; k < w->nregs; k++) {
		const struct wreg *r = &w->regs[k];
		const uint32_t n = r->off / 4;
		uint32_t v = mreg(w->m, r->off) & r->mask, mark = 0;
		uint32_t expect = w->pub[n];

		if (r->access == ERNIC_REG_W1C)
			mark = w1c_mark(w->m, r->off, v);
		v |= mark;
		if (v == expect)
			continue;
		if (atomic_compare_exchange_strong(&w->win[n], &expect, v)) {
			w->pub[n] = v;
			w->mark[n] = mark;
		}
	}
}

static void apply(struct ernic_window *w, const struct pend *p)
{
	const struct wreg *r = p->r;
	uint32_t val = p->val;
	bool ovr = false;

	if (r->access == ERNIC_REG_W1C)
		val &= ~w->mark[r->off / 4];
	if (r->access == ERNIC_REG_RO_SWOVR)
		ovr = !qp_enabled(w->m, r->qp);
	model_reg_write(w->m, r->off, val, ovr);
	/* The value software wrote is now seen: the publish step replaces
	 * it unless software writes the word again meanwhile. */
	w->pub[r->off / 4] = p->val;
}

unsigned int ernic_window_sync(struct ernic_window *w)
{
	struct ernic_model *m = w->m;
	/* Per QP: 1 = an RO_SWOVR write pending, 2 = a QPCONF write. */
	uint8_t swovr[ERNIC_C_NUM_QP_MAX + 1] = { 0 };
	size_t cnt[CLS_N] = { 0 }, at[CLS_N], k;

	w->npend = 0;
	for (k = 0; k < w->nregs; k++) {
		const struct wreg *r = &w->regs[k];
		uint32_t v = atomic_load_explicit(&w->win[r->off / 4],
						  memory_order_acquire);
		struct pend *p;

		if (v == w->pub[r->off / 4])
			continue;
		p = &w->pend[w->npend++];
		p->r = r;
		p->val = v;
		p->cls = classify(r, v);
		cnt[p->cls]++;
		if (r->access == ERNIC_REG_RO_SWOVR)
			swovr[r->qp] |= 1;
		if (r->qp && r->qpoff == ERNIC_QPCONF)
			swovr[r->qp] |= 2;
	}
	if (!w->npend) {
		publish(w);
		return 0;
	}
	/* Stable counting sort by class. */
	for (size_t c = 0, sum = 0; c < CLS_N; c++) {
		at[c] = sum;
		sum += cnt[c];
	}
	for (k = 0; k < w->npend; k++)
		w->sorted[at[w->pend[k].cls]++] = w->pend[k];

	/* Step 0's made-up disable: QP i's pointers are overridden and its
	 * QPCONF rewritten in one pass, so a disable may have been missed. */
	for (uint32_t i = 1; i <= m->c_num_qp; i++)
		if (swovr[i] == 3 && qp_enabled(m, i))
			model_reg_write(m, ERNIC_QP(i, ERNIC_QPCONF),
					mreg(m, ERNIC_QP(i, ERNIC_QPCONF)) &
						~ERNIC_QPCONF_QP_EN,
					false);
	for (k = 0; k < w->npend; k++)
		apply(w, &w->sorted[k]);
	publish(w);
	return (unsigned int)w->npend;
}

struct ernic_window *ernic_window_create(struct ernic_model *m, uint32_t *win)
{
	struct ernic_window *w = calloc(1, sizeof(*w));
	size_t nw = ERNIC_REG_SPACE_SIZE / 4, k = 0;

	if (!w)
		return NULL;
	w->m = m;
	w->win = (_Atomic uint32_t *)win;
	w->pub = calloc(nw, sizeof(*w->pub));
	w->mark = calloc(nw, sizeof(*w->mark));
	w->regs = calloc(nw, sizeof(*w->regs));
	if (!w->pub || !w->mark || !w->regs)
		goto err;
	for (uint32_t off = 0; off < ERNIC_REG_SPACE_SIZE; off += 4) {
		uint32_t idx;
		const struct ernic_reg_desc *d =
			ernic_reg_lookup(off, m->c_num_qp, &idx);

		if (!d)
			continue;
		w->regs[k] = (struct wreg){
			.off = off,
			.mask = d->mask,
			.access = (uint8_t)d->access,
			.qp = d->scope == ERNIC_SCOPE_QP ? (uint8_t)idx : 0,
			.qpoff = d->scope == ERNIC_SCOPE_QP ? (uint16_t)d->off : 0,
		};
		k++;
	}
	w->nregs = k;
	w->pend = calloc(k, sizeof(*w->pend));
	w->sorted = calloc(k, sizeof(*w->sorted));
	if (!w->pend || !w->sorted)
		goto err;
	/* Reserved words read 0; registers start from the model's state. */
	memset(win, 0, ERNIC_REG_SPACE_SIZE);
	publish(w);
	return w;
err:
	ernic_window_destroy(w);
	errno = ENOMEM;
	return NULL;
}

void ernic_window_destroy(struct ernic_window *w)
{
	if (!w)
		return;
	free(w->pub);
	free(w->mark);
	free(w->regs);
	free(w->pend);
	free(w->sorted);
	free(w);
}
