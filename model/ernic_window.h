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
 * (see model_window.c), then publishes the register file back.
 *
 * W1C words (ERNIC_REG_IS_W1C) are the exception: a store of the bits
 * to clear would hide the status from every other reader until the next
 * pass, and a second writer's store would undo the first's. Software
 * clears bits with an atomic AND of their complement instead, and the
 * pass applies as W1C the bits gone since the word was published. So
 * clears by several processes add up, and a read shows the status less
 * the clears still in flight, as a posted write on a bus would.
 *
 * The model's engine must not run yet when the window is created, and
 * must be stopped (ernic_model_stop) before it is destroyed.
 */
#ifndef ERNIC_WINDOW_H
#define ERNIC_WINDOW_H

#include <stddef.h>
#include <stdint.h>

struct ernic_model;
struct ernic_window;

/* win: ERNIC_REG_SPACE_SIZE bytes, 4-byte aligned, shared with
 * software; it is overwritten with the register file. NULL + errno. */
struct ernic_window *ernic_window_create(struct ernic_model *m, uint32_t *win);
void ernic_window_destroy(struct ernic_window *w);

/* One pass; returns how many software writes it applied. The engine
 * makes one of its own before it handles a received packet that depends
 * on a register software changed (the QP's block, the global block, the
 * R_Key's PDT entry), so a peer that heard of a write (a QP made ready)
 * never gets ahead of the poller. Passes are serialised. */
unsigned int ernic_window_sync(struct ernic_window *w);

/* That check, which the engine makes through a model hook before each
 * received packet (bth: its transport headers on, len bytes). Returns
 * how many writes it applied, 0 when the packet depends on none. */
unsigned int ernic_window_before_rx(struct ernic_window *w,
				    const uint8_t *bth, size_t len);

#endif
