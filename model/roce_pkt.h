/* SPDX-License-Identifier: MIT */
/*
 * RoCEv2 packet codec for the ERNIC model: IBTA base and extended
 * transport headers (BTH, RETH, AETH, ImmDt, IETH), the invariant CRC,
 * and — for frame mode — the Ethernet/IPv4/IPv6/UDP headers the ERNIC
 * builds itself and checks on receive (PG332 Table 2-3).
 *
 * Pure functions over byte buffers: nothing here touches a socket, a
 * register or the clock. Every length and field of received bytes is
 * checked before it is used.
 */
#ifndef ROCE_PKT_H
#define ROCE_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibta.h"

/* Which headers follow the BTH, and where the opcode sits in a message. */
enum {
	ROCE_HDR_RETH = 1u << 0,
	ROCE_HDR_AETH = 1u << 1,
	ROCE_HDR_IMM = 1u << 2,
	ROCE_HDR_IETH = 1u << 3,
	ROCE_HDR_PAYLOAD = 1u << 4,	/* may carry payload */
	ROCE_POS_FIRST = 1u << 5,
	ROCE_POS_MIDDLE = 1u << 6,
	ROCE_POS_LAST = 1u << 7,
	ROCE_POS_ONLY = ROCE_POS_FIRST | ROCE_POS_LAST,
	ROCE_HDR_DETH = 1u << 8,
	ROCE_TRANSPORT_UD = 1u << 9,	/* QP1's MADs; never an RC QP's */
	ROCE_HDR_CNP = 1u << 10,	/* a CNP: 16 reserved bytes, no more */
};

/* Table-driven: flags of an opcode ERNIC handles (RC, and UD SEND_ONLY
 * for QP1), 0 for the others (UC/RD, atomics, reserved). */
uint32_t roce_opcode_flags(uint8_t opcode);
/* A short name ("SEND_FIRST") for logs and tests; "?" if unknown. */
const char *roce_opcode_name(uint8_t opcode);

#define ROCE_ETH_LEN 14u
#define ROCE_IPV4_LEN 20u
#define ROCE_IPV6_LEN 40u
#define ROCE_UDP_LEN 8u
/* Largest transport packet: BTH+RETH+IMM, 4096 B payload, pad, ICRC. */
#define ROCE_MAX_TRANSPORT (ROCE_BTH_LEN + ROCE_RETH_LEN + ROCE_IMM_LEN + \
			    4096u + 3u + ROCE_ICRC_LEN)
#define ROCE_MAX_FRAME (ROCE_ETH_LEN + ROCE_IPV6_LEN + ROCE_UDP_LEN + \
			ROCE_MAX_TRANSPORT)

/* A transport packet, parsed or to be built (fields host order). */
struct roce_pkt {
	/* BTH */
	uint8_t opcode;
	bool se;		/* solicited event */
	bool migreq;		/* written 1 (APM not supported: IBTA) */
	uint8_t pad;		/* pad count 0..3; set by roce_build */
	uint8_t tver;		/* 0 */
	uint16_t pkey;
	bool fecn, becn;
	uint32_t dqpn;		/* 24 bits */
	bool ackreq;
	uint32_t psn;		/* 24 bits */
	/* extended headers, valid as roce_opcode_flags() says */
	uint64_t reth_va;
	uint32_t reth_rkey;
	uint32_t reth_len;
	uint8_t aeth_syndrome;
	uint32_t aeth_msn;	/* 24 bits */
	uint32_t imm;		/* ImmDt, as a host-order number of the wire's
				 * big-endian bytes */
	uint32_t ieth_rkey;
	uint32_t deth_qkey;
	uint32_t deth_sqpn;	/* 24 bits */
	/* payload (without pad and ICRC) */
	const uint8_t *payload;
	uint32_t payload_len;
};

/*
 * The IP/UDP envelope of a packet: what the ICRC covers besides the
 * transport bytes, and what frame mode writes and checks. Addresses are
 * network order, IPv4 in addr[0..3].
 */
struct roce_l3 {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t src[16], dst[16];
	uint16_t sport, dport;	/* host order */
	uint16_t ip_id;		/* IPv4 identification (0 with DF, Linux) */
	uint8_t tos;		/* DSCP<<2 | ECN; IPv6 traffic class */
	uint8_t ttl;		/* IPv4 TTL, IPv6 hop limit */
	uint32_t flow_label;	/* IPv6, 20 bits */
	uint8_t src_mac[6], dst_mac[6];	/* frame mode only */
};

/* Bytes of BTH and extended headers before the payload of opcode's
 * packets, 0 for an opcode roce_build does not know. */
size_t roce_hdrs_len(uint8_t opcode);

/*
 * Build BTH .. payload, pad and ICRC into buf (transport bytes, what a
 * UDP socket sends). The ICRC is computed over the IPv4/IPv6 and UDP
 * headers l3 describes with IBTA Annex A17's masked fields set to ones:
 * exactly the headers the kernel (UDP mode) or roce_frame_build (frame
 * mode) produces. Sets p->pad. Returns the length, or 0 if it does not
 * fit in cap or p is invalid (opcode unknown, field out of range,
 * payload on a header-only opcode).
 *
 * Also invalid: payload over 4096 B, a payload that is not a multiple of
 * 4 on a FIRST/MIDDLE opcode (it would need pad), tver > 15, aeth_syndrome
 * bit 7 set. tver, migreq and the other BTH bits are written as given (a
 * test may build tver != 0). The payload may overlap buf (memmove).
 */
size_t roce_build(uint8_t *buf, size_t cap, struct roce_pkt *p,
		  const struct roce_l3 *l3);

/*
 * As roce_build, but the payload stays where p->payload is: buf gets the
 * headers (*hdr_len bytes) and right behind them the pad and the ICRC,
 * so that the packet is buf[0, *hdr_len), the payload, then
 * buf[*hdr_len, returned length). The ICRC covers the payload as it is
 * now: it must not change until the packet is sent. The payload must
 * not overlap buf's bytes. 0 as roce_build.
 */
size_t roce_build_split(uint8_t *buf, size_t cap, struct roce_pkt *p,
			const struct roce_l3 *l3, size_t *hdr_len);

/* Prepend the Ethernet, IPv4 (DF, checksum) or IPv6, and UDP headers of
 * l3 to a transport packet of tlen bytes already at buf + hdr_len, where
 * hdr_len = roce_frame_hdr_len(l3->family). Returns the frame length.
 *
 * IPv4: IHL 5, TOS, ID = l3->ip_id, DF, UDP checksum 0. IPv6: traffic
 * class = l3->tos, l3->flow_label, and the mandatory UDP checksum. TTL /
 * hop limit l3->ttl, 0 meaning 64 (a TTL of 0 must not be sent). Returns
 * 0 if it does not fit in cap, l3's family is invalid or the datagram
 * would exceed 64 KiB. roce_frame_hdr_len returns 0 for a bad family. */
size_t roce_frame_hdr_len(int family);
size_t roce_frame_build(uint8_t *buf, size_t cap, const struct roce_l3 *l3,
			size_t tlen);

/* ICRC of a whole transport packet (last 4 bytes excluded) under l3, as
 * stored on the wire (little-endian CRC32 of Annex A17).
 *
 * The value is zlib's crc32() of: 8 bytes 0xFF (the masked LRH), the IP
 * header with IPv4 TOS/TTL/checksum or IPv6 traffic class/flow label/hop
 * limit set to ones, the UDP header with its checksum set to ones, the
 * BTH with byte 4 (FECN/BECN/resv6) set to ones, and the rest up to the
 * ICRC. The wire holds it least significant byte first, so a received
 * packet is good when roce_icrc() equals the last 4 bytes read as a
 * little-endian number. The IPv4 header is reconstructed from l3 as 20
 * bytes with flags = DF and fragment offset 0 (every IPv4 RoCEv2 sender
 * does this; roce_frame_parse flags anything else); its identification
 * is l3->ip_id and is covered, not masked. Returns 0 when tlen is below
 * BTH + ICRC or l3 has no valid family. Checked in tests against a
 * ConnectX-4 Lx capture. */
uint32_t roce_icrc(const struct roce_l3 *l3, const uint8_t *tp, size_t tlen);

/*
 * IPv4 only. A UDP socket cannot see the identification the sender put
 * in the IP header, yet the ICRC covers it: Linux writes 0 for a DF
 * datagram from an unconnected socket, but rxe and RoCE NICs pick other
 * values. The CRC is linear in the ID bits, so the unique ID (if any)
 * under which the packet's ICRC is good can be solved for: returns true
 * and sets *id (0 when the ICRC is already good with ID 0), false when no
 * ID makes it good (a corrupt packet). Cost of relying on it: a corrupt
 * packet passes with probability 2^-16 instead of 2^-32 (the Ethernet FCS
 * has already checked the link).
 */
bool roce_icrc_solve_ip_id(const struct roce_l3 *l3, const uint8_t *tp,
			   size_t tlen, uint16_t *id);

/*
 * IPv4 only: what changes in the ICRC of a tlen-byte transport packet
 * when its IP identification is id instead of 0 (XOR it into the ICRC
 * as roce_icrc() returns it). The kernel gives the segments of a UDP
 * GSO send the IDs 0, 1, 2, ... when it splits them on the way out
 * (software GSO, a NIC's USO), so segment k is built for ID 0 and
 * patched with this for k. 0 for id 0 or a length roce_icrc refuses.
 */
uint32_t roce_icrc_ip_id_delta(size_t tlen, uint16_t id);

/* PG332 Table 2-3 syndrome bits. roce_frame_parse sets MAC_DST .. UDP_LEN
 * (and IP_VERSION), roce_parse BTH_VERSION, OPCODE, PAD and ICRC; the rest
 * need QP state and are the model's: BTH_QP .. BAD_RESP, and IP_SRC /
 * MAC_SRC (source not the QP's configured destination). */
#define ROCE_SYN_MAC_DST (1u << 0)
#define ROCE_SYN_IP_VERSION (1u << 2)
#define ROCE_SYN_IPV4_HDR_LEN (1u << 3)
#define ROCE_SYN_IPV4_FLAGS (1u << 5)
#define ROCE_SYN_IPV4_FRAG (1u << 6)
#define ROCE_SYN_IP_DST (1u << 8)
#define ROCE_SYN_IPV4_CSUM (1u << 9)
#define ROCE_SYN_IP_LEN (1u << 10)
#define ROCE_SYN_UDP_LEN (1u << 12)
#define ROCE_SYN_BTH_VERSION (1u << 13)
#define ROCE_SYN_BTH_QP (1u << 14)	/* unsupported destination QP */
#define ROCE_SYN_QP_NOT_READY (1u << 15)
#define ROCE_SYN_OPCODE_SEQ (1u << 16)
#define ROCE_SYN_OPCODE (1u << 17)
#define ROCE_SYN_PAD (1u << 18)
#define ROCE_SYN_PMTU (1u << 19)
#define ROCE_SYN_RQ_FULL (1u << 20)
#define ROCE_SYN_PSN (1u << 21)
#define ROCE_SYN_AETH (1u << 22)
#define ROCE_SYN_BAD_RESP (1u << 23)
#define ROCE_SYN_IP_SRC (1u << 27)
#define ROCE_SYN_MAC_SRC (1u << 28)
#define ROCE_SYN_ICRC (1u << 30)
/* Not in Table 2-3 (the IP cannot tell): too short / truncated headers. */
#define ROCE_SYN_MALFORMED (1u << 31)

/* Whether a local MAC makes frames to it ours (roce_frame_parse's rule
 * below): any but all zeros (loopback's). */
bool roce_mac_claims(const uint8_t *mac);

/*
 * Parse a received frame addressed to the local MAC/IP in `local`
 * (family, dst address, dst MAC; other fields ignored). Fills l3 with
 * what the headers say and *tp, *tlen with the transport bytes. Returns
 * 0 for a good RoCEv2 frame, ROCE_NOT_ROCE for a well-formed frame that
 * is simply not UDP 4791 (not ours: ignore silently), or the Table 2-3
 * syndrome bits found (MAC, IP, UDP; not BTH or ICRC).
 *
 * "Not ours" (ROCE_NOT_ROCE), decided before any check is reported:
 *  - ethertype other than 0x0800 / 0x86DD (ARP, VLAN-tagged, LLDP, ...);
 *  - too short to show the IP protocol / next header and the UDP
 *    destination port, protocol not UDP (IPv6 extension headers are not
 *    followed), or UDP destination port not 4791;
 *  - a RoCE frame whose destination IP is not local->dst (or is of the
 *    other family) AND whose destination MAC is not local->dst_mac:
 *    traffic of other hosts on a shared segment. When local->dst_mac is
 *    all zeros (loopback: every frame carries zero MACs) the MAC never
 *    makes a frame ours, so devices sharing "lo" ignore each other.
 * So a RoCE frame is ours when its destination IP is ours (a MAC mismatch
 * is then reported as ROCE_SYN_MAC_DST: a stale neighbour entry at the
 * peer), or when its destination MAC is our non-zero MAC (a wrong address
 * is then ROCE_SYN_IP_DST, the other family ROCE_SYN_IP_VERSION). Two
 * frame-mode devices sharing one non-loopback netdev (one MAC) therefore
 * report each other's traffic as IP_DST / IP_VERSION.
 *
 * For a frame that is ours every check runs and all bits found are
 * returned: IP_VERSION (version field or family), IPV4_HDR_LEN (IHL != 5;
 * options are skipped to find UDP, a IHL < 5 header is taken as 20 B),
 * IPV4_FLAGS (flags other than DF alone), IPV4_FRAG (offset != 0),
 * IPV4_CSUM, IP_LEN (IP length shorter than IP+UDP headers or longer
 * than the frame), UDP_LEN (UDP length != IP payload length). Trailing
 * Ethernet padding is ignored. The UDP checksum is not checked (RoCEv2
 * relies on the ICRC; IPv4 senders write 0). On a syndrome *tp, *tlen
 * still give the transport bytes present (within the frame).
 */
#define ROCE_NOT_ROCE 0xFFFFFFFFu
uint32_t roce_frame_parse(const uint8_t *frame, size_t len,
			  const struct roce_l3 *local, struct roce_l3 *l3,
			  const uint8_t **tp, size_t *tlen);

/*
 * Parse transport bytes (BTH .. ICRC) into p (payload points into tp).
 * Checks, in PG332 precedence order: length for the opcode's headers,
 * BTH version (ROCE_SYN_BTH_VERSION), opcode supported (ROCE_SYN_OPCODE),
 * pad count (ROCE_SYN_PAD: nonzero pad on FIRST/MIDDLE), and, when
 * check_icrc, the ICRC against l3 (ROCE_SYN_ICRC). Returns 0 or the
 * syndrome bits (ROCE_SYN_MALFORMED when too short).
 *
 * Details: below BTH + ICRC (16 B) only ROCE_SYN_MALFORMED is returned.
 * Otherwise the BTH fields are always filled and every check that can
 * run does, all bits found being returned (pick by precedence). The
 * opcode's headers are only read for a supported opcode;
 * ROCE_SYN_MALFORMED also marks a length that is not a multiple of 4,
 * too short for the opcode's headers, or payload on a header-only opcode
 * (READ_REQ, ACK). ROCE_SYN_PAD also covers a pad count larger than the
 * bytes after the headers. payload/payload_len are set only when the
 * length and pad are good. The payload length is not checked against
 * any PMTU (ROCE_SYN_PMTU is the model's).
 */
uint32_t roce_parse(const uint8_t *tp, size_t tlen, const struct roce_l3 *l3,
		    bool check_icrc, struct roce_pkt *p);

#endif
