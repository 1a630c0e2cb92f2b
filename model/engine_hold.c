// SPDX-License-Identifier: MIT
/*
 * The RX pause of the ERNIC model (PG332 ch.2 RX path, XRNIC_PAUSE_CONF):
 * each received packet goes through here, and a request that finds its
 * QP's RQ full is held, with the QP's newer requests queued behind it,
 * until software frees space or its time is up (struct eng_hold). Every
 * function but ernic_model_db_word: engine lock held.
 *
 * Software hears of a hold through `holding` (RQCIi's write is looked at
 * only then: eng_reg_written), a Dekker pair: the hold is announced, then
 * RQCI read again; RQCIi is written, then `holding` read. Software that
 * stores RQCIi to the register word itself (ernic_model_db_word) reads
 * `rqci_watch` with no fence, a flag that is set while anything is held
 * and a while after: the hold that sets it makes the barrier for both,
 * a membarrier(2) that runs one on every CPU running a thread of the
 * process (the model runs in the process that posts). It costs a few
 * microseconds in a VM (an IPI), hence the linger.
 */
#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine_priv.h"
#include "ernic_model.h"
#include "ernic_wire.h"

/* A free hold slot, its queue allocated, or NULL. */
static struct eng_hold *hold_slot(struct eng *e)
{
	for (uint32_t k = 0; k < ENG_HOLD_MAX; k++) {
		struct eng_hold *h = &e->hold[k];

		if (h->qp)
			continue;
		if (!h->q)
			h->q = calloc(ENG_HOLD_DEPTH, sizeof(*h->q));
		return h->q ? h : NULL;
	}
	return NULL;
}

bool eng_hold_park(struct eng *e, uint32_t i, const struct roce_l3 *l3,
		   const uint8_t *tp, size_t tlen, int chk)
{
	struct eng_hold *h = &e->hold[e->qp[i].hold - 1];
	struct eng_parked *pk;

	if (h->n == ENG_HOLD_DEPTH || tlen > sizeof(pk->pkt))
		return false;
	pk = &h->q[(h->head + h->n++) % ENG_HOLD_DEPTH];
	memcpy(pk->pkt, tp, tlen);
	pk->len = tlen;
	pk->l3 = *l3;
	pk->chk = chk;
	return true;
}

void eng_rx_one(struct eng *e, const struct roce_l3 *l3, const uint8_t *tp,
		size_t tlen, uint32_t syn, int chk, uint64_t now)
{
	struct eng_hold *h = hold_slot(e);
	uint32_t i;

	e->may_hold = h && tlen <= sizeof(h->q[0].pkt);
	e->hold_wanted = false;
	eng_rx_packet(e, l3, tp, tlen, syn, chk);
	e->may_hold = false;
	if (!e->hold_wanted)
		return;
	/* eng_rx_packet asks only for a request to an existing QP */
	i = ernic_get24(tp + 5);	/* BTH DestQP */
	h->qp = i;
	h->head = h->n = 0;
	h->until = now + e->hold_ns;
	h->dropped = false;
	e->qp[i].hold = (uint32_t)(h - e->hold) + 1;
	/* Dekker with eng_reg_written's RQCI: announce the hold, then (a
	 * pass more, e->parked) look at RQCI again. Direct RQCIi stores
	 * read rqci_watch with no fence: only a hold that sets it needs
	 * the membarrier, as a store whose read of it came before an
	 * earlier one's was made visible by that one's. */
	e->st.holds++;
	atomic_store(&e->holding, true);
	if (atomic_load_explicit(&e->db_direct, memory_order_relaxed) &&
	    !atomic_load_explicit(&e->rqci_watch, memory_order_relaxed)) {
		atomic_store(&e->rqci_watch, true);
		e->st.hold_barriers++;
		/* registered (ernic_model_db_word): it cannot fail */
		(void)syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED,
			      0, 0);
	}
	atomic_thread_fence(memory_order_seq_cst);
	e->parked = true;
	eng_hold_park(e, i, l3, tp, tlen, chk);
}

/* The held requests again, oldest first: RQ space may have come back,
 * or the head's time is up (then the responder RNR-NAKs it, and the newer
 * ones behind it meet a requester that resends them anyway). A head that
 * is taken gives the next one a fresh wait. */
uint64_t eng_rx_held(struct eng *e, uint64_t now, bool enabled)
{
	uint64_t next = 0;

	for (uint32_t k = 0; k < ENG_HOLD_MAX; k++) {
		struct eng_hold *h = &e->hold[k];
		struct eng_qp *q;
		bool dropped, fresh = false;

		if (!h->qp)
			continue;
		q = &e->qp[h->qp];
		q->hold = 0;
		if (!enabled) {
			h->qp = 0;	/* a disabled IP drops everything */
			h->n = 0;
			continue;
		}
		while (h->n) {
			struct eng_parked *pk = &h->q[h->head];
			uint32_t epsn = q->epsn;

			e->may_hold = fresh || now < h->until;
			e->hold_wanted = false;
			e->rerun = true;
			eng_rx_packet(e, &pk->l3, pk->pkt, pk->len, 0, pk->chk);
			e->rerun = false;
			e->may_hold = false;
			if (e->hold_wanted && h->qp) {
				if (fresh)
					h->until = now + e->hold_ns;
				break;
			}
			h->head = (h->head + 1) % ENG_HOLD_DEPTH;
			h->n--;
			if (q->epsn != epsn)
				fresh = true;
		}
		if (h->n && h->qp) {
			q->hold = k + 1;
			if (!next || h->until < next)
				next = h->until;
			continue;
		}
		dropped = h->dropped;
		h->qp = 0;
		h->n = 0;
		eng_rx_released(e, (uint32_t)(q - e->qp), dropped);
	}
	return next;
}

void eng_watch_idle(struct eng *e, uint64_t now)
{
	if (!e->watch_idle_since) {
		e->watch_idle_since = now;
	} else if (now - e->watch_idle_since >= ENG_WATCH_LINGER_NS) {
		atomic_store(&e->rqci_watch, false);
		e->watch_idle_since = 0;
	}
}

/* True when this process may use MEMBARRIER_CMD_PRIVATE_EXPEDITED
 * (registered; Linux 4.14). */
static bool membarrier_ready(void)
{
	long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	       !syscall(SYS_membarrier,
			MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
}

volatile uint32_t *ernic_model_db_word(struct ernic_model *m, uint32_t off,
				       const atomic_bool **wake)
{
	struct eng *e = m->eng;
	const struct ernic_reg_desc *d;
	uint32_t qp;
	bool ok;

	/* as in_port (engine_hndshk.c): RQCIi of an RC QP the IP has */
	d = ernic_reg_lookup(off, m->c_num_qp, &qp);
	if (!e || m->axi_trace || !d || d->scope != ERNIC_SCOPE_QP ||
	    d->off != ERNIC_RQCI || qp < ERNIC_FIRST_RC_QP)
		return NULL;
	pthread_mutex_lock(&e->lock);
	ok = atomic_load(&e->db_direct) || membarrier_ready();
	if (ok)
		atomic_store(&e->db_direct, true);
	pthread_mutex_unlock(&e->lock);
	if (!ok)
		return NULL;
	*wake = &e->rqci_watch;
	return (volatile uint32_t *)&m->regs[off / 4];
}
