// SPDX-License-Identifier: MIT
/*
 * ECN and CNPs (PG332 RX path): the RX path detects ECN-marked packets
 * and logs each in its QP's bit of CNPSCHDSTSnREG with the CNP
 * scheduling interrupt (INTSTS[8]); the driver then sends a CNP for that
 * QP through QP1 (engine_qp1.c counts it in OUTCNPPKTCNT). An incoming
 * CNP is counted in INCNPPTKTCNT and cuts the QP's outstanding requests
 * from 16 to 8; later CNPs change nothing more.
 *
 * Our reading where PG332 is silent: the CNPSCHDSTSn words, read-only,
 * are cleared when software clears INTSTS[8] (model_regs.c), so the
 * driver reads them before that; the cut lasts until the QP is enabled
 * again; a packet is "marked" when its IP ECN field is CE (RFC 3168),
 * and only a packet that passed the checks for an enabled RC QP counts.
 */
#include "engine_priv.h"
#include "ibta.h"

void eng_ecn_seen(struct eng *e, uint32_t i)
{
	eng_raise(e, ERNIC_CNPSCHDSTSREG(ERNIC_CNPSCHD_WORD(i)),
		  ERNIC_CNPSCHD_BIT(i));
	eng_irq(e, ERNIC_INT_CNP);
}

void eng_count32(struct eng *e, uint32_t off)
{
	eng_set(e, off, eng_reg(e->m, off) + 1);
}

void eng_rx_cnp(struct eng *e, uint32_t i)
{
	eng_count32(e, ERNIC_INCNPPTKTCNT);
	e->qp[i].cnp_cut = true;
}
