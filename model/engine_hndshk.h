/* SPDX-License-Identifier: MIT */
/*
 * The queue engine's side of the HW handshake ports (ernic_hndshk.h):
 * the state struct eng holds and the hooks the engine calls. Internal
 * to model/; everything here runs under eng->lock.
 */
#ifndef ENGINE_HNDSHK_H
#define ENGINE_HNDSHK_H

#include <stdbool.h>
#include <stdint.h>

#include "ernic_hw.h"

/* One output port: what it shows, and the QPs with a newer value
 * waiting, in the order they came (at most one entry per QP). */
struct eng_hs_port {
	bool valid;
	uint32_t qp, data;			/* shown, held until rdy */
	uint32_t val[ERNIC_C_NUM_QP_MAX + 1];	/* waiting value per QP */
	bool wait[ERNIC_C_NUM_QP_MAX + 1];
	uint16_t fifo[ERNIC_C_NUM_QP_MAX + 1];
	uint32_t head, n;
};

struct eng_hndshk {
	struct eng_hs_port rq, cq;
	/* QPCONFi[4] = 0 on an enabled QP, as last synced */
	bool on[ERNIC_C_NUM_QP_MAX + 1];
	uint32_t con_io_qp;	/* CON_IO_CONF's QP until both are taken */
};

struct eng;

/* QPCONFi as eng_qp_sync read it: follow QPCONFi[4] (edges). */
void eng_hndshk_sync(struct eng *e, uint32_t i, uint32_t qpconf);
/* QP i's doorbells go through the ports: true when they took value v
 * (the caller writes no doorbell word then). */
bool eng_hndshk_rq_db(struct eng *e, uint32_t i, uint32_t v);
bool eng_hndshk_cq_db(struct eng *e, uint32_t i, uint32_t v);
/* QP i's receive credits (ernic_hw.h) apply: not for a handshake QP. */
bool eng_hndshk_credits(struct eng *e, uint32_t i);
/* XRNICADCONF's software override covers QP i: fetch no WQE. */
bool eng_hndshk_frozen(struct eng *e, uint32_t i);
/* Software wrote a global register off (XRNICADCONF, CON_IO_CONF). No
 * lock held. */
void eng_hndshk_global(struct eng *e, uint32_t off);

#endif
