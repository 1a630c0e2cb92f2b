/* SPDX-License-Identifier: MIT */
/*
 * The model's register file behind a shared-memory AXI4-Lite window, as
 * the "virtual FPGA" process (tools/ernic-vfpga.c) exposes it to the
 * provider's UIO backend: software reads and writes the 256 KB window
 * with plain loads and stores, and the model polls it, as hardware polls
 * doorbells (docs/hardware.md "The virtual FPGA").
 *
 * Shared memory carries values, not write events. A pass finds the
 * words software changed since the last pass, applies them through the
 * Table 2-7 access rules in the order the PG332 ch.6 sequences write them
 * (see model_window.c), then publishes the register file back. W1C
 * registers are published with a marker bit software never writes (a
 * reserved bit, or the bit of a QP whose interrupt is off), so that
 * writing back the value read is still seen as a write.
 */
#ifndef ERNIC_WINDOW_H
#define ERNIC_WINDOW_H

#include <stdint.h>

struct ernic_model;
struct ernic_window;

/* win: ERNIC_REG_SPACE_SIZE bytes, 4-byte aligned, shared with
 * software; it is overwritten with the register file. NULL + errno. */
struct ernic_window *ernic_window_create(struct ernic_model *m, uint32_t *win);
void ernic_window_destroy(struct ernic_window *w);

/* One pass; returns how many software writes it applied. Call it from
 * one thread at a time. */
unsigned int ernic_window_sync(struct ernic_window *w);

#endif
