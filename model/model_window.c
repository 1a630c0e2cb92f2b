// SPDX-License-Identifier: MIT
/*
 * Shared-memory register window of the virtual FPGA (ernic_window.h).
 *
 * Between two passes software may have written many registers; the pass
 * sees only their final values, not the order. It applies them in the
 * order of PG332 ch.6 "RC QP Creation", "QP Deletion" and "QP Fatal
 * Recovery", where it matters:
 *   0. QPCONFi writes that clear QP enable, and a disable the pass makes
 *      up for an enabled QP whose overridable pointers (STATQPi, CQHEADi,
 *      ...) software wrote: those flows write them only under override
 *      to a disabled QP, so the QP was reset between two passes, and its
 *      disable, like the override, may have come and gone unseen;
 *   1. XRNICADCONF (software override);
 *   2. every other register, the overridable ones accepted for a
 *      disabled QP as well;
 *   3. the SQPIi / RQCIi doorbells: before the enables, because the
 *      deletion flow zeroes them under override and a QP enabled with
 *      its old SQPIi would fetch from a stale index (a QP already
 *      enabled does not care which comes first);
 *   4. QPCONFi writes that enable, XRNICCONF;
 *   5. W1C status.
 * RO words software wrote are restored by the publish step.
 *
 * Software writes while a pass reads, so a pass that read a word early
 * and another late could see a later write without an earlier one: a
 * doorbell rung after a QP was recreated, say, with the old QP's CQHEADi
 * (read before the recreation). So a pass reads the doorbells (SQPIi,
 * RQCIi) between two reads of every other word and goes on only when
 * the two agree: those words then held their values all through the
 * doorbell reads, and each doorbell goes with the words as they were
 * when it was read. They seldom disagree (software writes them in short
 * flows), and a pass that finds them moving WINDOW_SCAN_TRIES times goes
 * on with the last reads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ernic_window.h"
#include "ernic_wire.h"
#include "model_priv.h"
#include "roce_pkt.h"

enum { CLS_DISABLE, CLS_OVERRIDE, CLS_CONFIG, CLS_DOORBELL, CLS_ENABLE,
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

#define WINDOW_SCAN_TRIES 64

struct ernic_window {
	struct ernic_model *m;
	_Atomic uint32_t *win;
	/* Held across a publish (CAS of the word, then pub), so a
	 * pass never sees a word half published by the engine's hook as a
	 * software write, and two publishers never leave a stale value.
	 * Taken under the model's lock by the hook: never take that lock
	 * while holding this one. */
	pthread_mutex_t lock;
	pthread_mutex_t sync_lock;	/* one pass at a time */
	/* Value last published or seen, per word; written by the pass and
	 * by the engine's hook (hw_publish), hence atomic. */
	_Atomic uint32_t *pub;
	int32_t *widx;		/* word -> regs[] index, -1 for none */
	struct wreg *regs;	/* every register this instance has */
	size_t nregs;
	struct pend *pend;	/* nregs */
	size_t npend;
	struct pend *sorted;
	struct pend *scan[2];	/* nregs each: two reads of the words */
};

static uint32_t mreg(const struct ernic_model *m, uint32_t off)
{
	return __atomic_load_n(&m->regs[off / 4], __ATOMIC_ACQUIRE);
}

static bool qp_enabled(const struct ernic_model *m, uint32_t i)
{
	return mreg(m, ERNIC_QP(i, ERNIC_QPCONF)) & ERNIC_QPCONF_QP_EN;
}

static uint8_t classify(const struct wreg *r, uint32_t val)
{
	if (r->access == ERNIC_REG_W1C)
		return CLS_W1C;
	if (r->qp) {
		if (r->qpoff == ERNIC_QPCONF)
			return (val & ERNIC_QPCONF_QP_EN) ? CLS_ENABLE :
							    CLS_DISABLE;
		if (model_qp_doorbell(r->qpoff))
			return CLS_DOORBELL;
		return CLS_CONFIG;
	}
	if (r->off == ERNIC_XRNICADCONF)
		return CLS_OVERRIDE;
	if (r->off == ERNIC_XRNICCONF)
		return CLS_ENABLE;
	return CLS_CONFIG;
}

/* The word as the model has it now. */
static uint32_t model_word(const struct ernic_window *w, const struct wreg *r)
{
	return mreg(w->m, r->off) & r->mask;
}

/* Publish one register: a word software changed since (CAS fails) is
 * left for the next pass to find. The unlocked look is only a filter:
 * the model value is read again under the lock, so the last publisher
 * writes the newest value. */
static void publish_reg(struct ernic_window *w, const struct wreg *r)
{
	const uint32_t n = r->off / 4;
	uint32_t v = model_word(w, r);
	uint32_t expect = atomic_load(&w->pub[n]);

	if (v == expect)
		return;
	pthread_mutex_lock(&w->lock);
	v = model_word(w, r);
	expect = atomic_load(&w->pub[n]);
	if (v != expect &&
	    atomic_compare_exchange_strong(&w->win[n], &expect, v))
		atomic_store(&w->pub[n], v);
	pthread_mutex_unlock(&w->lock);
}

/* Whether software wrote word r since it was last published or seen;
 * *v is what the window holds. A difference seen without the lock may be
 * a publish in flight; the lock settles it. */
static bool sw_wrote(struct ernic_window *w, const struct wreg *r,
		     uint32_t *v)
{
	const uint32_t n = r->off / 4;
	bool wrote;

	*v = atomic_load_explicit(&w->win[n], memory_order_acquire);
	if (*v == atomic_load(&w->pub[n]))
		return false;
	pthread_mutex_lock(&w->lock);
	*v = atomic_load_explicit(&w->win[n], memory_order_acquire);
	wrote = *v != atomic_load(&w->pub[n]) &&
		*v != model_word(w, r);
	pthread_mutex_unlock(&w->lock);
	return wrote;
}

static void publish(struct ernic_window *w)
{
	for (size_t k = 0; k < w->nregs; k++)
		publish_reg(w, &w->regs[k]);
}

/* The engine changed a register: software sees it before any DMA write
 * that follows (a CQE after STATQPi, as on the IP's own buses). */
static void hw_publish(void *arg, uint32_t off)
{
	struct ernic_window *w = arg;
	int32_t k = off < ERNIC_REG_SPACE_SIZE ? w->widx[off / 4] : -1;

	if (k >= 0)
		publish_reg(w, &w->regs[k]);
}

static void apply(struct ernic_window *w, const struct pend *p)
{
	const struct wreg *r = p->r;
	uint32_t val = p->val;
	bool ovr = false;

	/* A W1C word is cleared in the window (ernic_window.h): the bits
	 * gone since it was published are the ones written. */
	if (r->access == ERNIC_REG_W1C)
		val = atomic_load(&w->pub[r->off / 4]) & ~val;
	if (r->access == ERNIC_REG_RO_SWOVR)
		ovr = !qp_enabled(w->m, r->qp);
	model_reg_write(w->m, r->off, val, ovr);
	/* The value software wrote is now seen: the publish step replaces
	 * it unless software writes the word again meanwhile. */
	atomic_store(&w->pub[r->off / 4], p->val);
}

/* Undo step 0's disables where software did not write QPCONF. */
static void reenable(struct ernic_model *m, const uint8_t *swovr)
{
	for (uint32_t i = 1; i <= m->c_num_qp; i++)
		if (swovr[i] == 1)
			model_reg_write(m, ERNIC_QP(i, ERNIC_QPCONF),
					mreg(m, ERNIC_QP(i, ERNIC_QPCONF)) |
						ERNIC_QPCONF_QP_EN,
					false);
}

static bool is_doorbell(const struct wreg *r)
{
	return r->qp && model_qp_doorbell(r->qpoff);
}

/* Software's writes to the doorbells (doorbells) or to every other word,
 * into out; how many. */
static size_t collect(struct ernic_window *w, struct pend *out,
		      bool doorbells)
{
	size_t n = 0;

	for (size_t k = 0; k < w->nregs; k++) {
		const struct wreg *r = &w->regs[k];
		uint32_t v;

		/* Unchanged, or written with the value the model has. */
		if (is_doorbell(r) != doorbells || !sw_wrote(w, r, &v))
			continue;
		out[n].r = r;
		out[n].val = v;
		n++;
	}
	return n;
}

static bool same(const struct pend *a, size_t na, const struct pend *b,
		 size_t nb)
{
	if (na != nb)
		return false;
	for (size_t k = 0; k < na; k++)
		if (a[k].r != b[k].r || a[k].val != b[k].val)
			return false;
	return true;
}

/* Software's writes into w->pend as one consistent view (see the top of
 * the file): the doorbells between two agreeing reads of the rest. */
static void snapshot(struct ernic_window *w)
{
	struct pend *a = w->scan[0], *b = w->scan[1], *t;
	size_t na = collect(w, a, false), nb = 0, nd;

	for (unsigned int tries = 0;; tries++) {
		nd = collect(w, w->pend, true);
		if (!na && !nd)
			break;	/* nothing: the usual idle pass */
		nb = collect(w, b, false);
		if (same(a, na, b, nb) || tries == WINDOW_SCAN_TRIES)
			break;
		t = a;
		a = b;
		b = t;
		na = nb;
	}
	if (!na && !nd) {
		w->npend = 0;
		return;
	}
	memcpy(w->pend + nd, b, nb * sizeof(*b));
	w->npend = nd + nb;
}

static unsigned int sync_pass(struct ernic_window *w)
{
	struct ernic_model *m = w->m;
	/* Per QP: 1 = an RO_SWOVR write pending, 2 = a QPCONF write. */
	uint8_t swovr[ERNIC_C_NUM_QP_MAX + 1] = { 0 };
	size_t cnt[CLS_N] = { 0 }, at[CLS_N], k;
	bool reenabled = false;

	snapshot(w);
	for (k = 0; k < w->npend; k++) {
		struct pend *p = &w->pend[k];
		const struct wreg *r = p->r;

		p->cls = classify(r, p->val);
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

	/* Step 0's made-up disable: QP i's overridable pointers changed, so
	 * it went through a reset the pass may not have seen (the disable
	 * and the override may have come and gone). Software's own QPCONF
	 * write, if any, decides whether it comes back; else it does so
	 * before step 4. */
	for (uint32_t i = 1; i <= m->c_num_qp; i++) {
		if (!(swovr[i] & 1) || !qp_enabled(m, i)) {
			swovr[i] = 0;
			continue;
		}
		model_reg_write(m, ERNIC_QP(i, ERNIC_QPCONF),
				mreg(m, ERNIC_QP(i, ERNIC_QPCONF)) &
					~ERNIC_QPCONF_QP_EN,
				false);
	}
	for (k = 0; k < w->npend; k++) {
		if (!reenabled && w->sorted[k].cls >= CLS_ENABLE) {
			reenable(m, swovr);
			reenabled = true;
		}
		apply(w, &w->sorted[k]);
	}
	if (!reenabled)
		reenable(m, swovr);
	publish(w);
	return (unsigned int)w->npend;
}

unsigned int ernic_window_sync(struct ernic_window *w)
{
	unsigned int n;

	pthread_mutex_lock(&w->sync_lock);
	n = sync_pass(w);
	pthread_mutex_unlock(&w->sync_lock);
	return n;
}

/* Whether software wrote any register in [lo, hi). */
static bool sw_wrote_range(struct ernic_window *w, uint32_t lo, uint32_t hi)
{
	for (uint32_t off = lo; off < hi; off += 4) {
		int32_t k = w->widx[off / 4];
		uint32_t v;

		if (k >= 0 && sw_wrote(w, &w->regs[k], &v))
			return true;
	}
	return false;
}

/*
 * The engine's hook before a received packet: what the packet reads is
 * the destination QP's block, the global block and, for a RETH or IETH,
 * the PDT entry of its R_Key. A write there that no pass has applied
 * yet may be what the sender heard of (software made the QP ready, then
 * told the peer): apply everything now, as hardware would have long
 * ago. Headers too short or a QP out of range are the engine's to judge.
 */
unsigned int ernic_window_before_rx(struct ernic_window *w,
				    const uint8_t *bth, size_t len)
{
	uint32_t qpn, flags, key_at = 0;
	bool stale;

	if (len < ROCE_BTH_LEN)
		return 0;
	qpn = ernic_get24(bth + 5);	/* BTH DestQP */
	flags = roce_opcode_flags(bth[0]);
	if (flags & ROCE_HDR_RETH)
		key_at = ROCE_BTH_LEN + 8;
	else if (flags & ROCE_HDR_IETH)
		key_at = ROCE_BTH_LEN;
	stale = sw_wrote_range(w, ERNIC_XRNICCONF, ERNIC_QP_BASE);
	if (!stale && qpn >= 1 && qpn <= w->m->c_num_qp)
		stale = sw_wrote_range(w, ERNIC_QP(qpn, 0),
				       ERNIC_QP(qpn, 0) + ERNIC_QP_STRIDE);
	if (!stale && key_at && len >= key_at + 4) {
		uint32_t slot = bth[key_at + 3];	/* R_Key[7:0] */

		stale = slot < ERNIC_PDT_ENTRIES &&
			sw_wrote_range(w, ERNIC_PDT(slot, 0),
				       ERNIC_PDT(slot, 0) + ERNIC_PDT_STRIDE);
	}
	return stale ? ernic_window_sync(w) : 0;
}

static void rx_hook(void *arg, const uint8_t *bth, size_t len)
{
	ernic_window_before_rx(arg, bth, len);
}

struct ernic_window *ernic_window_create(struct ernic_model *m, uint32_t *win)
{
	struct ernic_window *w = calloc(1, sizeof(*w));
	size_t nw = ERNIC_REG_SPACE_SIZE / 4, k = 0;

	if (!w)
		return NULL;
	w->m = m;
	w->win = (_Atomic uint32_t *)win;
	model_mutex_init(&w->lock);
	model_mutex_init(&w->sync_lock);
	w->pub = calloc(nw, sizeof(*w->pub));
	w->regs = calloc(nw, sizeof(*w->regs));
	w->widx = malloc(nw * sizeof(*w->widx));
	if (!w->pub || !w->regs || !w->widx)
		goto err;
	memset(w->widx, 0xff, nw * sizeof(*w->widx));
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
		w->widx[off / 4] = (int32_t)k;
		k++;
	}
	w->nregs = k;
	w->pend = calloc(k, sizeof(*w->pend));
	w->sorted = calloc(k, sizeof(*w->sorted));
	w->scan[0] = calloc(k, sizeof(*w->scan[0]));
	w->scan[1] = calloc(k, sizeof(*w->scan[1]));
	if (!w->pend || !w->sorted || !w->scan[0] || !w->scan[1])
		goto err;
	/* Reserved words read 0; registers start from the model's state. */
	memset(win, 0, ERNIC_REG_SPACE_SIZE);
	publish(w);
	pthread_mutex_lock(&m->lock);
	m->hw_hook_arg = w;
	__atomic_store_n(&m->hw_hook, hw_publish, __ATOMIC_RELEASE);
	m->rx_hook = rx_hook;
	m->rx_hook_arg = w;
	pthread_mutex_unlock(&m->lock);
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
	pthread_mutex_lock(&w->m->lock);
	if (w->m->hw_hook_arg == w) {
		__atomic_store_n(&w->m->hw_hook, NULL, __ATOMIC_RELEASE);
		w->m->rx_hook = NULL;
	}
	pthread_mutex_unlock(&w->m->lock);
	free(w->widx);
	free(w->pub);
	free(w->regs);
	free(w->pend);
	free(w->sorted);
	free(w->scan[0]);
	free(w->scan[1]);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->sync_lock);
	free(w);
}
