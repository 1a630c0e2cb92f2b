/* SPDX-License-Identifier: MIT */
/*
 * Batching on the model's UDP wire (model_wire.h), internal to model/.
 *
 * TX: the engine queues the packets of a pass (wire_tx_add) and sends
 * them at its end (wire_tx_flush) with one sendmmsg(). Consecutive
 * packets to the same address, UDP port and destination QP, with the
 * same TOS and TTL, all of one size but the last (which may be
 * shorter) go as one UDP GSO datagram (UDP_SEGMENT, udp(7)): the kernel
 * splits it into those datagrams where it must (a device without UDP
 * segmentation offload, a receiver without UDP_GRO), or carries it whole
 * to a local receiver. Each segment stays a complete RoCEv2 packet with
 * its own ICRC. A packet may leave its payload in the sender's memory
 * (wire_tx_add_split): the batch holds its headers and tail, and the
 * datagram's iovecs take the payload from where it is, so the kernel's
 * copy is the only one. Why the destination QP is part of the key: on
 * loopback the kernel picks the receiving socket of an SO_REUSEPORT
 * group once for the whole GSO datagram, by its first segment
 * (wire_steer.h), so a train must be for one QP to be steered right.
 * QP1 never trains: its MADs are steered by the CM fields they carry (a
 * REQ's service ID, a communication ID's tag), which differ from MAD to
 * MAD. Order is kept: the batch is one FIFO, sent in order.
 *
 * IPv4: a GSO datagram split on the way out gets the IDs 0, 1, 2, ...
 * (the first one is Linux's 0 for a DF datagram), and the ICRC covers
 * the ID, so segment k's ICRC is patched for ID k when it is sent
 * (roce_icrc_ip_id_delta); a receiver that sees no ID (a UDP socket)
 * solves for it as it does for rxe's packets (roce_icrc_solve_ip_id).
 *
 * A full socket buffer (EAGAIN, ENOBUFS) drops the datagram as a
 * congested link would, for the whole train: RC retransmission repairs
 * it, as for a single packet. A GSO send the kernel refuses (EINVAL,
 * EIO: no checksum offload on the route, a path MTU below the segment)
 * is sent again packet by packet.
 *
 * RX: a socket with UDP_GRO delivers a train as one buffer and the
 * segment size in a cmsg; wire_gro_* cut it back into the datagrams,
 * each of which then goes through every check a single one gets.
 *
 * On a port shared between processes, the SO_REUSEPORT program picks a
 * train's socket by its first segment's destination QP, so only the
 * segments for that QP are surely this process's. Our senders train one
 * QP at a time, but a NIC's GRO merges any datagrams of one UDP flow,
 * and a peer that sends all its QPs from one UDP source port (as the
 * ERNIC does) may then mix QPs that belong to different processes. Such
 * a segment (another QP, or any MAD after the first: MADs are steered
 * by what they carry) is dropped, a loss its sender repairs, and GRO is
 * turned off on the socket for good: from then on every datagram is
 * steered alone (docs/datapath.md).
 */
#ifndef MODEL_WIRE_BATCH_H
#define MODEL_WIRE_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "model_wire.h"
#include "roce_pkt.h"

/* Packets a batch holds; it is flushed when full. */
#define WIRE_TX_PKTS 128u
/* Segments of one GSO datagram (the kernel's limit is 64 or more) and
 * its UDP payload (65535 - IPv4 and UDP headers). */
#define WIRE_GSO_SEGS 64u
#define WIRE_GSO_BYTES 65507u
/* The UDP_GRO receive buffer: the largest UDP payload and some. */
#define WIRE_GRO_BUF 65536u

/* One queued packet: where it is, and its envelope. Its bytes are
 * buf[off, off + hdr), then pay_len bytes at pay (a payload left where
 * the sender's memory holds it: wire_tx_add_split), then buf[off + hdr,
 * off + len - pay_len); without pay, buf[off, off + len). */
struct wire_tx_ent {
	uint32_t off, len;	/* len: the whole packet's */
	uint32_t hdr, pay_len;
	const uint8_t *pay;
	uint32_t dqp;		/* BTH destination QP */
	uint16_t dport;
	uint8_t tos, ttl;
	uint8_t dst[16];
};

/* iovecs of a whole batch: header, payload and tail of each packet
 * (two when contiguous pieces merge). */
#define WIRE_TX_IOV (3 * WIRE_TX_PKTS)

/* Cmsg space of one datagram: TOS, TTL, UDP_SEGMENT. */
#define WIRE_TX_CMSG (3 * CMSG_SPACE(sizeof(int)))

struct wire_tx_batch {
	int fd;			/* the UDP socket that sends */
	int family;
	unsigned int ifindex;	/* scope of link-local IPv6 */
	bool gso;		/* UDP_SEGMENT may be used */
	uint8_t *buf;		/* packets back to back, in order */
	size_t cap, used;
	uint32_t n;
	uint64_t flushes;	/* times it was sent (or dropped) */
	struct wire_tx_ent ent[WIRE_TX_PKTS];
	struct model_wire_stats *stats;
	/* flush scratch: one datagram (single or GSO) per run, the pieces
	 * of all in iov (at most three per packet) */
	uint32_t run_first[WIRE_TX_PKTS], run_n[WIRE_TX_PKTS];
	struct mmsghdr msg[WIRE_TX_PKTS];
	struct iovec iov[WIRE_TX_IOV];
	struct iovec one_iov[3];	/* a packet sent alone */
	struct sockaddr_storage sa[WIRE_TX_PKTS];
	union {
		char buf[WIRE_TX_CMSG];
		struct cmsghdr align;
	} cm[WIRE_TX_PKTS];
};

/* 0 or ENOMEM. stats (may be NULL) is counted into. */
int wire_tx_init(struct wire_tx_batch *b, int fd, int family,
		 unsigned int ifindex, bool gso,
		 struct model_wire_stats *stats);
void wire_tx_fini(struct wire_tx_batch *b);

/* Queue one transport packet for l3 (the caller checked l3's source,
 * port and ID); flushes first when it would not fit (what that flush
 * meets are the other packets' losses). tp may be wire_tx_slot's
 * address: taken without a copy. 0, EMSGSIZE past ROCE_MAX_TRANSPORT,
 * or EINVAL for a slot without the room wire_tx_slot makes. */
int wire_tx_add(struct wire_tx_batch *b, const struct roce_l3 *l3,
		const uint8_t *tp, size_t tlen);

/* As wire_tx_add, for a packet in roce_build_split's layout: tp[0, hdr),
 * then pay_len bytes at pay, then tp[hdr, tlen). The payload is not
 * copied: it must stay as it is until the batch is flushed. */
int wire_tx_add_split(struct wire_tx_batch *b, const struct roce_l3 *l3,
		      const uint8_t *tp, size_t tlen, size_t hdr,
		      const uint8_t *pay, size_t pay_len);

/* Where the next packet may be built in place: ROCE_MAX_TRANSPORT bytes
 * (the batch is flushed first when they are not free), queued without
 * a copy when wire_tx_add is given this address. Valid until the next
 * call on the batch; NULL when the buffer is smaller. */
uint8_t *wire_tx_slot(struct wire_tx_batch *b);

/* How many packets from ent[first] on go in one datagram (1 when they
 * cannot be one GSO train). */
uint32_t wire_tx_run(const struct wire_tx_batch *b, uint32_t first);

/* Send everything queued, in order; the batch is empty after. 0, or the
 * first error that is not a loss (EAGAIN/ENOBUFS count as sent and
 * dropped), e.g. EMSGSIZE for a packet over the path MTU. */
int wire_tx_flush(struct wire_tx_batch *b);

/* Send what is queued, then tp at once, not copied (any length). 0, or
 * the first error as wire_tx_flush says. */
int wire_tx_send_now(struct wire_tx_batch *b, const struct roce_l3 *l3,
		     const uint8_t *tp, size_t tlen);

/* A received UDP_GRO buffer being cut into its datagrams. */
struct wire_gro {
	const uint8_t *buf;	/* what was read */
	size_t len;		/* bytes received */
	size_t seg;		/* segment size (len: one datagram) */
	size_t off;		/* next segment */
	bool trunc;		/* the datagram was longer than buf */
	bool pending;		/* segments left to take */
	uint32_t dqp;		/* the first segment's BTH destination QP */
	struct roce_l3 l3;	/* envelope of all its segments */
};

/*
 * Take len bytes read into buf (of which the kernel said trunc: it was
 * cut) and the UDP_GRO segment size gso from its cmsg, <= 0 when it
 * sent none. A size of 0, negative, or not below len means one datagram
 * (also an empty one). buf must stay until the last is taken.
 */
void wire_gro_load(struct wire_gro *g, const uint8_t *buf, size_t len,
		   int gso, bool trunc);

/* The next datagram of the buffer: false when none is left. *cut is
 * set when its end is missing (the buffer was truncated there). */
bool wire_gro_next(struct wire_gro *g, const uint8_t **p, size_t *len,
		   bool *cut);

/* The receive side of a UDP port. */
struct wire_rx {
	int fd;			/* ADDR:4791 */
	int family;
	uint8_t local[16];	/* ADDR */
	uint8_t *gro_buf;	/* WIRE_GRO_BUF bytes when UDP_GRO is on */
	bool shared;		/* steered among processes (see above) */
	bool gro_off;		/* GRO was turned off for a mixed train */
	struct wire_gro gro;	/* what was read, being cut up */
	struct model_wire_stats *stats;
};

/* model_wire_recv of a UDP port (model_wire.h). */
int wire_udp_recv(struct wire_rx *w, uint8_t *buf, size_t cap,
		  struct roce_l3 *l3, const uint8_t **tp, size_t *tlen,
		  uint32_t *syndrome, int *check_icrc);

#endif
