/* SPDX-License-Identifier: MIT */
/*
 * The ERNIC's AXI4-Lite window, mapped from a device (UIO map0, a VFIO
 * BAR): single 32-bit loads and stores, ordered against the DDR writes
 * before them (WQEs before SQPI) and the reads after. Offsets outside
 * the window or unaligned read 0 and write nothing.
 */
#ifndef ERNIC_MMIO_H
#define ERNIC_MMIO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ernic_hw.h"
#include "udma_barrier.h"

/* As the kernel's readl(): one 32-bit load, then the loads after it see
 * what the IP wrote to DMA memory before the register said so. */
static inline uint32_t ernic_mmio_rd(volatile uint32_t *win, uint32_t off)
{
	uint32_t v;

	if (off >= ERNIC_REG_SPACE_SIZE || (off & 3))
		return 0;
	v = atomic_load_explicit((_Atomic uint32_t *)(uintptr_t)&win[off / 4],
				 memory_order_relaxed);
	udma_from_device_barrier();
	return v;
}

/* Nothing answers at the window: INTSTS reads all-ones (ERNIC_REG_GONE),
 * as every register of a PCIe function that is gone does. */
static inline bool ernic_mmio_gone(volatile uint32_t *win)
{
	return ernic_mmio_rd(win, ERNIC_INTSTS) == ERNIC_REG_GONE;
}

/* As the kernel's writel(): the CPU's stores to DMA memory before it
 * reach the IP first (udma_to_device_barrier: "dmb oshst" on aarch64,
 * the IP being outside the inner shareable domain), then one 32-bit
 * store ("str", not a store-release). So a doorbell (SQPI, RQCI) needs
 * no barrier of its own (struct ernic_access_ops). */
static inline void ernic_mmio_wr_reg(volatile uint32_t *reg, uint32_t val)
{
	udma_to_device_barrier();
	atomic_store_explicit((_Atomic uint32_t *)(uintptr_t)reg, val,
			      memory_order_relaxed);
}

/* ernic_mmio_wr_reg at offset off of the window; nothing outside it. */
static inline void ernic_mmio_wr(volatile uint32_t *win, uint32_t off,
				 uint32_t val)
{
	if (off >= ERNIC_REG_SPACE_SIZE || (off & 3))
		return;
	ernic_mmio_wr_reg(&win[off / 4], val);
}

/* Posted writes reach the IP before a read of the same window returns
 * (PCIe: a read does not pass posted writes; Zynq: UIO maps the window
 * Device-nGnRnE, whose accesses reach the slave in program order).
 * XRNICCONF: reading it has no side effect. */
static inline void ernic_mmio_flush(volatile uint32_t *win)
{
	(void)ernic_mmio_rd(win, ERNIC_XRNICCONF);
}

#endif
