/* SPDX-License-Identifier: MIT */
/*
 * Receive side of the model's frame wire (model_wire.h), internal to
 * model/: whole Ethernet frames from an AF_PACKET socket, and UDP GSO
 * trains cut back into their packets.
 *
 * Why trains reach a frame wire: a UDP sender on this host (the udp
 * wire's batching, wire_batch.h, or any program using UDP_SEGMENT)
 * hands the kernel one datagram holding several RoCEv2 packets back to
 * back, all of one size but a shorter last one. Loopback and veth
 * carry it whole, and an AF_PACKET socket there sees one frame whose
 * UDP payload is the whole train; only a device without segmentation
 * offload, or a receiving UDP socket, splits it. Taken as one packet
 * its ICRC is wrong (it covers the last packet only) and it is longer
 * than any RoCEv2 packet, so a frame-wire port on this host dropped
 * every train, and RC retransmission sent the same trains again until
 * its retries ran out.
 *
 * The frame carries no segment size (AF_PACKET's virtio header gives
 * it only from Linux 6.2 on, and not to captures), so it is found
 * from the packets themselves, and only in frames the kernel marks as
 * built by this host's stack with the checksum still to do
 * (TP_STATUS_CSUMNOTREADY): a GSO datagram always is, a frame from a
 * NIC or from another frame wire never. See wire_train_seg for the
 * rule. Each segment is then handed out as a frame of its own: the
 * train's headers with the lengths of the segment and, for IPv4, the
 * identification the kernel gives segment k when it splits a train
 * (the train's, plus k), under which the engine checks its ICRC as it
 * does any packet's.
 */
#ifndef MODEL_WIRE_FRAME_H
#define MODEL_WIRE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model_wire.h"
#include "roce_pkt.h"
#include "wire_ring.h"

/* A frame as large as a UDP GSO train can make it, and some. */
#define WIRE_FRAME_BUF (ROCE_ETH_LEN + ROCE_IPV6_LEN + 65536u)
/* The shortest RoCEv2 packet: a BTH and the ICRC. */
#define WIRE_SEG_MIN (ROCE_BTH_LEN + ROCE_ICRC_LEN)
/* Segment sizes whose ICRC wire_train_seg computes at most per frame:
 * a frame whose payload imitates BTHs costs no more than this. */
#define WIRE_SEG_TRIES 8u

/*
 * The segment size of a UDP GSO train of RoCEv2 packets held whole in
 * tp (tlen transport bytes) under l3 (the train's envelope, IPv4 ID of
 * its first packet), or 0 when it is not one. A size s is the answer
 * when:
 *  - s and tlen are multiples of 4 (every RoCEv2 packet's length is)
 *    and s <= ROCE_MAX_TRANSPORT; the train has two packets or more,
 *    each at least a BTH and an ICRC long (the last: tlen's rest);
 *  - every packet, at k * s, begins with the first one's P_Key, BTH
 *    reserved byte and destination QP (a train is for one QP,
 *    wire_batch.h);
 *  - the first s bytes end with their own ICRC under l3.
 * Sizes are tried from the smallest up, the ICRC of at most
 * WIRE_SEG_TRIES of them. The other packets are not checked here: the
 * caller hands each to the engine, which checks it as any packet.
 */
size_t wire_train_seg(const struct roce_l3 *l3, const uint8_t *tp,
		      size_t tlen);

/* The receive side of a frame port: frames from its receive ring, and
 * those longer than a slot from the socket (wire_ring.h). */
struct wire_frame_rx {
	int fd;			/* AF_PACKET, PACKET_AUXDATA on */
	struct wire_ring *ring;
	struct roce_l3 local;	/* family, dst = ADDR, dst_mac = MAC */
	uint8_t *buf;		/* WIRE_FRAME_BUF bytes: a frame read whole */
	struct model_wire_stats *stats;
	/* a train being handed out */
	bool pending;
	struct roce_l3 l3;	/* its envelope; ip_id: the first's */
	const uint8_t *tp;	/* the next packet */
	size_t left, seg;	/* bytes from tp on; segment size */
	uint16_t k;		/* the next packet's index */
};

struct sock_filter;
/* Attach the classic BPF program code[0, n) to socket fd: setsockopt's
 * result. */
int wire_attach_filter(int fd, struct sock_filter *code, unsigned short n);
/* The filter of a frame port's socket: only frames that can be RoCEv2
 * for local (see wire_frame.c). setsockopt's result. */
int wire_frame_filter(int fd, const struct roce_l3 *local);

/* 0, or an errno with err set (PACKET_AUXDATA, memory). ring: fd's
 * rings, set up (wire_ring_init). */
int wire_frame_init(struct wire_frame_rx *r, int fd, struct wire_ring *ring,
		    const struct roce_l3 *local,
		    struct model_wire_stats *stats, char *err, size_t errlen);
void wire_frame_fini(struct wire_frame_rx *r);

/* model_wire_recv of a frame port (model_wire.h); *tp points into the
 * port's buffer or its ring, valid until the next call. */
int wire_frame_recv(struct wire_frame_rx *r, size_t cap, struct roce_l3 *l3,
		    const uint8_t **tp, size_t *tlen, uint32_t *syndrome,
		    int *check_icrc);

#endif
