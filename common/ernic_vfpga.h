/* SPDX-License-Identifier: MIT */
/*
 * The virtual FPGA's interrupt socket (DEV.irq, tools/ernic-vfpga.c),
 * as the UIO backend (access/access_uio.c) speaks it. SOCK_SEQPACKET,
 * so a message's length says what it is:
 *
 *   4 bytes, to software      the event count (UIO's read())
 *   4 bytes, from software    1 unmasks the interrupt, 0 is ignored
 *                             (UIO's write(), irqcontrol)
 *   struct ernic_vfpga_msg    FLUSH: apply every register write made
 *                             before it now (a window pass), then echo
 *                             the message back
 *
 * The window's writes are posted: the model applies them at its next
 * pass (docs/hardware.md). FLUSH is the read-back that hardware would
 * take instead. A connection that sends FLUSH carries control messages
 * only: it gets no event counts from then on.
 */
#ifndef ERNIC_VFPGA_H
#define ERNIC_VFPGA_H

#include <stdint.h>

#define ERNIC_VFPGA_FLUSH 0x48534C46u	/* "FLSH" */

struct ernic_vfpga_msg {
	uint32_t op;
	uint32_t seq;		/* echoed: which request an answer is for */
};

#endif
