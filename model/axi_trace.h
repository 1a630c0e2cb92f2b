/* SPDX-License-Identifier: MIT */
/*
 * AXI trace of the receive path (hw/README.md, "The trace"): with
 * ERNIC_AXI_TRACE=DIR in the environment, every model writes
 * DIR/NAME-PID.trace, what a real ERNIC would put on its ports for the
 * RX side band block of hw/ (QP register writes on s_axi_lite, element
 * and RQ doorbell writes on rx_pkt_hndler_ddr_m_axi, Table 1-1 beats on
 * ieth_immdt_m_axis, every received frame on roce_cmac_s_axis), and
 * DIR/NAME-PID.expect,
 * what the model itself writes to memory for those packets (the result
 * the RTL must reproduce byte for byte). Unset, each hook is one load
 * and one predictable branch.
 */
#ifndef ERNIC_AXI_TRACE_H
#define ERNIC_AXI_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "model_priv.h"

struct ernic_conf;

/* At model creation / destruction (model_regs.c). */
void axi_trace_open(struct ernic_model *m, const struct ernic_conf *conf);
void axi_trace_close(struct ernic_model *m);

struct roce_l3;

void axi_trace_reg_slow(struct ernic_model *m, uint32_t off, uint32_t val);
void axi_trace_rx_slow(struct ernic_model *m, const struct roce_l3 *l3,
		       const uint8_t *tp, size_t tlen);
void axi_trace_dma_slow(struct ernic_model *m, uint64_t bus, const void *src,
			size_t len);

/* A software register write as the AXI4-Lite port sees it. */
static inline void axi_trace_reg(struct ernic_model *m, uint32_t off,
				 uint32_t val)
{
	if (__builtin_expect(m->axi_trace != NULL, 0))
		axi_trace_reg_slow(m, off, val);
}

/* A DMA write of the engine (eng_dma_write, eng_dma_store32). */
/* A packet as it reaches the RX path (once: not a held packet's rerun). */
static inline void axi_trace_rx(struct ernic_model *m,
				const struct roce_l3 *l3, const uint8_t *tp,
				size_t tlen)
{
	if (__builtin_expect(m->axi_trace != NULL, 0))
		axi_trace_rx_slow(m, l3, tp, tlen);
}

static inline void axi_trace_dma(struct ernic_model *m, uint64_t bus,
				 const void *src, size_t len)
{
	if (__builtin_expect(m->axi_trace != NULL, 0))
		axi_trace_dma_slow(m, bus, src, len);
}

#endif
