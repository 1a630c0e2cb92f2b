// SPDX-License-Identifier: MIT
/*
 * The RX pause of the ERNIC model (PG332 ch.2 RX path, XRNIC_PAUSE_CONF):
 * each received packet goes through here, and a request that finds its
 * QP's RQ full is held, with the QP's newer requests queued behind it,
 * until software frees space or its time is up (struct eng_hold). Every
 * function: engine lock held.
 */
#include <stdlib.h>
#include <string.h>

#include "engine_priv.h"
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
	 * pass more, e->parked) look at RQCI again. */
	atomic_store(&e->holding, true);
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
