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

/* IBTA 9.2: RC opcodes (transport 000) that ERNIC sends or receives. */
enum roce_opcode {
	ROCE_RC_SEND_FIRST = 0x00,
	ROCE_RC_SEND_MIDDLE = 0x01,
	ROCE_RC_SEND_LAST = 0x02,
	ROCE_RC_SEND_LAST_IMM = 0x03,
	ROCE_RC_SEND_ONLY = 0x04,
	ROCE_RC_SEND_ONLY_IMM = 0x05,
	ROCE_RC_WRITE_FIRST = 0x06,
	ROCE_RC_WRITE_MIDDLE = 0x07,
	ROCE_RC_WRITE_LAST = 0x08,
	ROCE_RC_WRITE_LAST_IMM = 0x09,
	ROCE_RC_WRITE_ONLY = 0x0A,
	ROCE_RC_WRITE_ONLY_IMM = 0x0B,
	ROCE_RC_READ_REQ = 0x0C,
	ROCE_RC_READ_RESP_FIRST = 0x0D,
	ROCE_RC_READ_RESP_MIDDLE = 0x0E,
	ROCE_RC_READ_RESP_LAST = 0x0F,
	ROCE_RC_READ_RESP_ONLY = 0x10,
	ROCE_RC_ACK = 0x11,
	ROCE_RC_SEND_LAST_INV = 0x16,
	ROCE_RC_SEND_ONLY_INV = 0x17,
};

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
};

/* Table-driven: flags of an RC opcode, 0 for opcodes ERNIC does not
 * support (UC/UD/RD, atomics, reserved). */
uint32_t roce_opcode_flags(uint8_t opcode);
/* A short name ("SEND_FIRST") for logs and tests; "?" if unknown. */
const char *roce_opcode_name(uint8_t opcode);

#define ROCE_BTH_LEN 12u
#define ROCE_RETH_LEN 16u
#define ROCE_AETH_LEN 4u
#define ROCE_IMM_LEN 4u
#define ROCE_IETH_LEN 4u
#define ROCE_ICRC_LEN 4u
#define ROCE_ETH_LEN 14u
#define ROCE_IPV4_LEN 20u
#define ROCE_IPV6_LEN 40u
#define ROCE_UDP_LEN 8u
#define ROCE_UDP_PORT 4791u
#define ROCE_DEFAULT_PKEY 0xFFFFu
/* Largest transport packet: BTH+RETH+IMM, 4096 B payload, pad, ICRC. */
#define ROCE_MAX_TRANSPORT (ROCE_BTH_LEN + ROCE_RETH_LEN + ROCE_IMM_LEN + \
			    4096u + 3u + ROCE_ICRC_LEN)
#define ROCE_MAX_FRAME (ROCE_ETH_LEN + ROCE_IPV6_LEN + ROCE_UDP_LEN + \
			ROCE_MAX_TRANSPORT)

/* AETH syndrome (IBTA 9.7.5.1): [7] 0, [6:5] type, [4:0] value. */
#define ROCE_AETH_ACK 0x00u		/* | credit count, 0x1F = invalid */
#define ROCE_AETH_RNR 0x20u		/* | RNR timer */
#define ROCE_AETH_NAK 0x60u		/* | NAK code below */
enum roce_nak_code {
	ROCE_NAK_PSN_SEQ = 0,
	ROCE_NAK_INVALID_REQ = 1,
	ROCE_NAK_REMOTE_ACCESS = 2,
	ROCE_NAK_REMOTE_OP = 3,
	ROCE_NAK_INVALID_RD_REQ = 4,
};
#define ROCE_AETH_CREDIT_INVALID 0x1Fu

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
	uint8_t ttl;		/* IPv6 hop limit */
	uint32_t flow_label;	/* IPv6, 20 bits */
	uint8_t src_mac[6], dst_mac[6];	/* frame mode only */
};

/*
 * Build BTH .. payload, pad and ICRC into buf (transport bytes, what a
 * UDP socket sends). The ICRC is computed over the IPv4/IPv6 and UDP
 * headers l3 describes with IBTA Annex A17's masked fields set to ones:
 * exactly the headers the kernel (UDP mode) or roce_frame_build (frame
 * mode) produces. Sets p->pad. Returns the length, or 0 if it does not
 * fit in cap or p is invalid (opcode unknown, field out of range,
 * payload on a header-only opcode).
 */
size_t roce_build(uint8_t *buf, size_t cap, struct roce_pkt *p,
		  const struct roce_l3 *l3);

/* Prepend the Ethernet, IPv4 (DF, checksum) or IPv6, and UDP headers of
 * l3 to a transport packet of tlen bytes already at buf + hdr_len, where
 * hdr_len = roce_frame_hdr_len(l3->family). Returns the frame length. */
size_t roce_frame_hdr_len(int family);
size_t roce_frame_build(uint8_t *buf, size_t cap, const struct roce_l3 *l3,
			size_t tlen);

/* ICRC of a whole transport packet (last 4 bytes excluded) under l3, as
 * stored on the wire (little-endian CRC32 of Annex A17). */
uint32_t roce_icrc(const struct roce_l3 *l3, const uint8_t *tp, size_t tlen);

/* PG332 Table 2-3 syndrome bits that the codec itself checks. */
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

/*
 * Parse a received frame addressed to the local MAC/IP in `local`
 * (family, dst address, dst MAC; other fields ignored). Fills l3 with
 * what the headers say and *tp/*tlen with the transport bytes. Returns
 * 0 for a good RoCEv2 frame, ROCE_NOT_ROCE for a well-formed frame that
 * is simply not UDP 4791 (not ours: ignore silently), or the Table 2-3
 * syndrome bits found (MAC, IP, UDP; not BTH or ICRC).
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
 */
uint32_t roce_parse(const uint8_t *tp, size_t tlen, const struct roce_l3 *l3,
		    bool check_icrc, struct roce_pkt *p);

#endif
