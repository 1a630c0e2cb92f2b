/* SPDX-License-Identifier: MIT */
/*
 * The software ERNIC's Ethernet port: where the model's RoCEv2 packets
 * leave and enter the host. Two modes (ernic.conf "wire="):
 *
 *  udp    a UDP socket bound to ADDR:4791 receives; one bound to
 *         ADDR:udp_sport sends, with DF set so that Linux writes IP ID 0
 *         (the ICRC covers the IPv4 identification). The kernel builds
 *         and checks Ethernet/IP/UDP; the model sees src/dst address and
 *         ports (IP_PKTINFO / IPV6_RECVPKTINFO) and checks the ICRC
 *         fully for IPv6 and, for IPv4, on the assumption IP ID = 0.
 *         Since rxe and RoCE NICs send other IDs, a received IPv4 packet
 *         whose ICRC is bad under ID 0 gets the one ID that makes it
 *         good, if any, in l3->ip_id (roce_icrc_solve_ip_id: the check
 *         keeps 16 of its 32 bits for such packets). No frame checks
 *         run (syndrome 0): the socket only gets UDP datagrams the
 *         kernel accepted for ADDR:4791, so MAC/IP/UDP are good.
 *  frame  an AF_PACKET socket on the netdev: the model writes whole
 *         frames (Ethernet/IP/UDP built by roce_frame_build) and checks
 *         every received header itself (roce_frame_parse: PG332 Table
 *         2-3 MAC/IP/UDP checks), so the ICRC is checked in full.
 *         Needs CAP_NET_RAW. A UDP socket on ADDR:4791 that drops
 *         everything (socket filter) keeps the kernel from answering
 *         our packets with ICMP port unreachable.
 *         Frames go out and come in through PACKET_MMAP rings
 *         (wire_ring.h). A classic BPF filter (on a shared device, the
 *         eBPF steering program) passes only IPv4/IPv6 UDP to port 4791
 *         addressed to this port (its IP, or its MAC if not zero).
 *         On "lo" (zero MACs) frame-mode ports see each other, and a
 *         UDP-mode sender's packets reach a frame-mode port; but the
 *         kernel drops frames injected on lo from a 127.x source
 *         (martian: no route attached) unless
 *         net.ipv4.conf.lo.route_localnet=1, so frame-mode packets to a
 *         UDP-mode port or to rxe on 127.x need that sysctl. Nothing
 *         here changes it. A UDP-mode sender's GSO trains (see
 *         model_wire_queue) cross lo whole, one frame: a frame-mode
 *         port there needs the sender to run with ERNIC_WIRE_OFFLOAD=0.
 */
#ifndef MODEL_WIRE_H
#define MODEL_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ernic_conf.h"
#include "roce_pkt.h"

struct model_wire;

/* Open the port for conf (wire, family, addr, netdev, mac, udp_sport).
 * Returns NULL with errno set and a one-line reason in err. */
struct model_wire *model_wire_open(const struct ernic_conf *conf, char *err,
				   size_t errlen);
void model_wire_close(struct model_wire *w);

/*
 * A port with no socket, for tests and fuzzing (ernic_model_start_manual):
 * every packet sent goes to tx(arg, l3, tp, tlen) at once, packets come
 * by ernic_model_rx or model_wire_tap_push, and the fd is -1. NULL with errno on a bad family or tx.
 */
typedef void (*model_wire_tx_fn)(void *arg, const struct roce_l3 *l3,
				 const uint8_t *tp, size_t tlen);
struct model_wire *model_wire_open_tap(int family, model_wire_tx_fn tx,
				       void *arg);
/* Queue one packet (transport bytes under l3, ICRC to be checked) for
 * the engine's next pass over a tap port: what a socket holds after a
 * burst, so that a pass receives several at once. 0, EINVAL (not a tap,
 * too long) or ENOSPC (MODEL_TAP_INBOX are waiting). */
#define MODEL_TAP_INBOX 32u
int model_wire_tap_push(struct model_wire *w, const struct roce_l3 *l3,
			const uint8_t *tp, size_t tlen);

/*
 * Send one transport packet (BTH .. ICRC, built by roce_build with the
 * same l3). In frame mode l3 also gives the MACs, TTL and TOS and the
 * frame headers are prepended here; in UDP mode the kernel writes them
 * (TTL/TOS travel with each datagram, see below). Never blocks for
 * long: a full socket buffer drops the packet like a congested link
 * (retransmission recovers). Returns 0 or errno.
 *
 * UDP mode: TOS and TTL travel as per-datagram ancillary data (TTL 0 =
 * the kernel default); l3->src must be ADDR, l3->sport udp_sport and
 * l3->ip_id 0 (the headers the kernel writes, which the ICRC covers),
 * else EINVAL. Frame mode: ttl 0 is sent as 64. EAGAIN/ENOBUFS count as
 * sent (dropped); EMSGSIZE means over the path MTU (DF).
 */
int model_wire_send(struct model_wire *w, const struct roce_l3 *l3,
		    const uint8_t *tp, size_t tlen);

/*
 * Queue one packet to be sent at the next model_wire_flush (or sooner,
 * when the queue is full); the same checks as model_wire_send (EINVAL),
 * but what the kernel says comes from the flush, where every failure is
 * a loss: no packet is told of another's error. On the UDP wire
 * the queue goes out with few system calls, trains of equal-size packets
 * to one destination QP as UDP GSO datagrams (wire_batch.h); ordering
 * is kept. The frame wire queues in its transmit ring (wire_ring.h); a
 * tap port sends at once (model_wire_send). Set the
 * environment variable ERNIC_WIRE_OFFLOAD=0 for no GSO and no GRO
 * (sendmmsg batches only): a capture on lo then shows each packet (lo
 * carries a GSO datagram whole: AF_PACKET sees one large frame, which
 * the frame wire and tests/icrc_check cut up, but tshark does not).
 * Not for concurrent use with model_wire_send on the same port.
 */
int model_wire_queue(struct model_wire *w, const struct roce_l3 *l3,
		     const uint8_t *tp, size_t tlen);
/* As model_wire_queue, for a packet in roce_build_split's layout:
 * tp[0, hdr), pay_len bytes at pay, then tp[hdr, tlen). On the UDP wire
 * the payload is not copied but sent from where it is: it must stay as
 * it is until the batch goes out (model_wire_flush, model_wire_tx_gen).
 * Elsewhere it is copied now. */
int model_wire_queue_split(struct model_wire *w, const struct roce_l3 *l3,
			   const uint8_t *tp, size_t tlen, size_t hdr,
			   const uint8_t *pay, size_t pay_len);
/* Where the next packet may be built (ROCE_MAX_TRANSPORT bytes) so that
 * model_wire_queue takes it without a copy: in the send batch of the
 * UDP wire, valid until the next call on w. NULL: build elsewhere. */
uint8_t *model_wire_tx_slot(struct model_wire *w);

/* Send what model_wire_queue queued. 0, or the first error that is not
 * a loss (EMSGSIZE: over the path MTU). */
int model_wire_flush(struct model_wire *w);
/* How many times the send batch has gone out (0 on a port without
 * one): a packet queued when it was g has left once it is above g. */
uint64_t model_wire_tx_gen(const struct model_wire *w);

/* What the wire did (a tap port: zeros): for tests and benchmarks. The
 * rx_ counters count frames on the frame wire. */
struct model_wire_stats {
	uint64_t tx_pkts;	/* packets handed to the kernel */
	uint64_t tx_calls;	/* sendmsg/sendmmsg calls */
	uint64_t tx_datagrams;	/* datagrams sent, a GSO train as one */
	uint64_t tx_gso;	/* of those, GSO trains */
	uint64_t tx_gso_refused; /* trains the kernel refused: sent singly */
	uint64_t tx_dropped;	/* packets lost to full buffers, errors */
	uint64_t rx_calls;	/* reads that brought data */
	uint64_t rx_pkts;	/* datagrams handed out (GRO: split) */
	uint64_t rx_trains;	/* frame wire: UDP GSO trains cut up */
	uint64_t rx_foreign;	/* shared port: segments of a merged train
				 * that may be another process's, dropped */
};
const struct model_wire_stats *model_wire_stats(const struct model_wire *w);

/* QP qpn was enabled or disabled (QPCONF.QP_EN): on a port shared
 * between processes its packets are steered to this one, or no longer. */
void model_wire_qp_enabled(struct model_wire *w, uint32_t qpn, bool en);

/* On a port shared between processes, CM REQs for service_id reach
 * this process (claim) or QP1's owner again; 0 on a port of its own.
 * The caller holds the device's state-file lock. 0 or an errno. */
int model_wire_mad_steer(struct model_wire *w, uint64_t service_id,
			 bool claim);

/* The fd to poll for POLLIN. */
int model_wire_fd(const struct model_wire *w);

/*
 * Receive one packet without blocking. On success *tp, *tlen give the
 * transport bytes (inside buf, or inside the port's own buffer: valid
 * until the next call), l3 the envelope, and *syndrome the
 * Table 2-3 bits found so far (frame checks); *check_icrc says
 * whether the ICRC is still to be checked against l3 (1), or not (0:
 * the port checked it already, or l3 cannot reproduce the covered
 * header and the syndrome says so). Returns 1 (got
 * one), 0 (nothing pending) or -errno. Frames that are not RoCEv2 for
 * this address are skipped silently.
 *
 * Frame mode: which frames count as ours is roce_frame_parse's rule
 * (roce_pkt.h); our own transmissions are skipped; after 64 foreign
 * frames in a row 0 is returned with the fd still readable.
 * *check_icrc is 0 when the frame syndrome means l3 cannot
 * reproduce the covered header (IP version/family, options, flags or
 * fragment offset, bad lengths). A datagram or frame longer than cap is
 * returned truncated with ROCE_SYN_MALFORMED. cap = ROCE_MAX_FRAME
 * fits every valid packet in both modes. Safe to call from one thread
 * while others send.
 *
 * UDP mode: UDP_GRO is on, so one read may bring a train of datagrams;
 * they are returned one per call (the fd is not readable meanwhile:
 * call until 0), each checked as a datagram read alone would be (a last
 * one cut short is just shorter). On a port shared between processes,
 * segments that may be another process's are dropped (wire_batch.h).
 * An IPv4 packet whose sender's IP ID was solved for has its ICRC
 * checked by that solving (*check_icrc 0: a second pass over the
 * packet would only repeat it); one with no such ID, and every IPv6
 * packet, is left to the engine's check (1).
 * See model_wire_queue for ERNIC_WIRE_OFFLOAD=0.
 *
 * Frame mode: a UDP GSO train that a sender on this host sent to us
 * through lo or a veth arrives as one frame; its packets are returned
 * one per call as the frames the kernel would have split it into
 * (wire_frame.h), each then checked as any frame.
 */
int model_wire_recv(struct model_wire *w, uint8_t *buf, size_t cap,
		    struct roce_l3 *l3, const uint8_t **tp, size_t *tlen,
		    uint32_t *syndrome, int *check_icrc);

#endif
