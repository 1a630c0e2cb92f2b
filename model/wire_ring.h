/* SPDX-License-Identifier: MIT */
/*
 * The frame wire's PACKET_MMAP rings (model_wire.h), internal to model/:
 * one receive and one transmit ring of TPACKET_V2 frames shared with the
 * kernel on the port's AF_PACKET socket (Linux
 * Documentation/networking/packet_mmap.rst).
 *
 * Receive: the kernel writes each frame into the next free slot and
 * hands it over in its status word; reading one costs no system call,
 * so a poll that finds nothing costs a load, not a recvmsg. A frame
 * longer than a slot (a UDP GSO train from this host, wire_frame.h) is
 * also queued whole on the socket (PACKET_COPY_THRESH) and its slot
 * says so (TP_STATUS_COPY): it is read with recvmsg, in order.
 *
 * Transmit: frames are written into free slots and marked for sending;
 * one send() hands the kernel all of them (wire_ring_tx_flush). A slot
 * is free again once the kernel is done with its frame. Frames the
 * kernel refuses are dropped, not left to stall the ring
 * (PACKET_LOSS): the port checks lengths before it queues.
 *
 * Lock contract: one thread at a time per direction (the engine's lock
 * for transmit, its receive pass for receive).
 */
#ifndef MODEL_WIRE_RING_H
#define MODEL_WIRE_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model_wire.h"

/* A slot: the largest RoCEv2 frame (ROCE_MAX_FRAME) and the kernel's
 * header before it fit. */
#define WIRE_RING_FRAME 8192u
#define WIRE_RING_RX_FRAMES 256u
#define WIRE_RING_TX_FRAMES 256u
/* Frames queued for sending before a send() is due anyway. */
#define WIRE_RING_TX_BATCH 32u

struct wire_ring {
	uint8_t *map;		/* receive ring, then transmit ring */
	size_t map_len;
	uint32_t rx_head;	/* next receive slot to look at */
	bool rx_lent;		/* the slot before it: still the caller's */
	uint32_t tx_head;	/* next transmit slot to fill */
	uint32_t tx_queued;	/* marked for sending since the last send() */
	struct model_wire_stats *stats;	/* tx_calls: send() calls */
};

/* One received frame, as wire_ring_rx_next hands it out. */
struct wire_ring_frame {
	const uint8_t *data;	/* from the Ethernet header on */
	size_t snaplen;		/* bytes at data */
	size_t len;		/* bytes the frame had */
	uint32_t status;	/* TP_STATUS_* (CSUMNOTREADY, COPY, ...) */
	uint8_t pkttype;	/* PACKET_HOST, PACKET_OUTGOING, ... */
};

/* Set up both rings on fd (an AF_PACKET socket, before it sees traffic
 * that matters), counting in stats. 0, or an errno with a one-line
 * reason in err. */
int wire_ring_init(struct wire_ring *g, int fd, struct model_wire_stats *stats,
		   char *err, size_t errlen);
void wire_ring_fini(struct wire_ring *g);

/* The next frame the kernel handed over, lent to the caller until the
 * next call (which gives the slot back first) or wire_ring_rx_release;
 * false when there is none. */
bool wire_ring_rx_next(struct wire_ring *g, struct wire_ring_frame *f);
/* Give the lent frame's slot back to the kernel now (if one is lent). */
void wire_ring_rx_release(struct wire_ring *g);

/* A free transmit slot for a frame of up to WIRE_RING_FRAME bytes
 * (minus the kernel's header: *cap), or NULL when every slot is still
 * the kernel's after a send() on fd. */
uint8_t *wire_ring_tx_slot(struct wire_ring *g, int fd, size_t *cap);
/* Mark the slot wire_ring_tx_slot gave for sending, len bytes; sends
 * on fd once WIRE_RING_TX_BATCH are queued. 0 or an errno (not a loss). */
int wire_ring_tx_commit(struct wire_ring *g, int fd, size_t len);
/* Hand the kernel every frame marked for sending. 0, or an errno that
 * is not a loss. */
int wire_ring_tx_flush(struct wire_ring *g, int fd);

#endif
