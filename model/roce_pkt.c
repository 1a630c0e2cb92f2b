// SPDX-License-Identifier: MIT
/*
 * RoCEv2 codec: IBTA transport headers, the Annex A17 invariant CRC and
 * the Ethernet/IP/UDP envelope of frame mode (see roce_pkt.h).
 *
 * Received bytes are only read after the length that covers them has
 * been checked; every parser here is meant to survive a fuzzer.
 */
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#if ERNIC_HAVE_ISAL
#include <isa-l/crc.h>
#endif
#include <zlib.h>

#include "ernic_wire.h"
#include "roce_pkt.h"

#define ETH_TYPE_IPV4 0x0800u
#define ETH_TYPE_IPV6 0x86DDu
#define IPPROTO_UDP_NUM 17u
#define IPV4_DF 0x4000u
#define IPV4_FLAGS_MASK 0xE000u
#define IPV4_FRAG_MASK 0x1FFFu
#define ROCE_MAX_PAYLOAD 4096u
#define DEFAULT_TTL 64u

/* ---- opcode table ---- */

#define PL ROCE_HDR_PAYLOAD
static const struct {
	const char *name;
	uint32_t flags;
} opcodes[] = {
	[ROCE_RC_SEND_FIRST] = { "SEND_FIRST", PL | ROCE_POS_FIRST },
	[ROCE_RC_SEND_MIDDLE] = { "SEND_MIDDLE", PL | ROCE_POS_MIDDLE },
	[ROCE_RC_SEND_LAST] = { "SEND_LAST", PL | ROCE_POS_LAST },
	[ROCE_RC_SEND_LAST_IMM] = { "SEND_LAST_IMM",
				    PL | ROCE_HDR_IMM | ROCE_POS_LAST },
	[ROCE_RC_SEND_ONLY] = { "SEND_ONLY", PL | ROCE_POS_ONLY },
	[ROCE_RC_SEND_ONLY_IMM] = { "SEND_ONLY_IMM",
				    PL | ROCE_HDR_IMM | ROCE_POS_ONLY },
	[ROCE_RC_WRITE_FIRST] = { "WRITE_FIRST",
				  PL | ROCE_HDR_RETH | ROCE_POS_FIRST },
	[ROCE_RC_WRITE_MIDDLE] = { "WRITE_MIDDLE", PL | ROCE_POS_MIDDLE },
	[ROCE_RC_WRITE_LAST] = { "WRITE_LAST", PL | ROCE_POS_LAST },
	[ROCE_RC_WRITE_LAST_IMM] = { "WRITE_LAST_IMM",
				     PL | ROCE_HDR_IMM | ROCE_POS_LAST },
	[ROCE_RC_WRITE_ONLY] = { "WRITE_ONLY",
				 PL | ROCE_HDR_RETH | ROCE_POS_ONLY },
	[ROCE_RC_WRITE_ONLY_IMM] = { "WRITE_ONLY_IMM", PL | ROCE_HDR_RETH |
				     ROCE_HDR_IMM | ROCE_POS_ONLY },
	/* A read request is a whole message in one header-only packet. */
	[ROCE_RC_READ_REQ] = { "READ_REQ", ROCE_HDR_RETH | ROCE_POS_ONLY },
	[ROCE_RC_READ_RESP_FIRST] = { "READ_RESP_FIRST",
				      PL | ROCE_HDR_AETH | ROCE_POS_FIRST },
	[ROCE_RC_READ_RESP_MIDDLE] = { "READ_RESP_MIDDLE",
				       PL | ROCE_POS_MIDDLE },
	[ROCE_RC_READ_RESP_LAST] = { "READ_RESP_LAST",
				     PL | ROCE_HDR_AETH | ROCE_POS_LAST },
	[ROCE_RC_READ_RESP_ONLY] = { "READ_RESP_ONLY",
				     PL | ROCE_HDR_AETH | ROCE_POS_ONLY },
	[ROCE_RC_ACK] = { "ACK", ROCE_HDR_AETH | ROCE_POS_ONLY },
	[ROCE_RC_SEND_LAST_INV] = { "SEND_LAST_INV",
				    PL | ROCE_HDR_IETH | ROCE_POS_LAST },
	[ROCE_RC_SEND_ONLY_INV] = { "SEND_ONLY_INV",
				    PL | ROCE_HDR_IETH | ROCE_POS_ONLY },
	[ROCE_UD_SEND_ONLY] = { "UD_SEND_ONLY", PL | ROCE_HDR_DETH |
				ROCE_POS_ONLY | ROCE_TRANSPORT_UD },
	/* A whole message in one packet, without payload. */
	[ROCE_CNP] = { "CNP", ROCE_HDR_CNP | ROCE_POS_ONLY },
};
#undef PL

uint32_t roce_opcode_flags(uint8_t opcode)
{
	return opcode < sizeof(opcodes) / sizeof(opcodes[0]) ?
	       opcodes[opcode].flags : 0;
}

const char *roce_opcode_name(uint8_t opcode)
{
	return roce_opcode_flags(opcode) ? opcodes[opcode].name : "?";
}

/* Bytes of BTH and extended headers (IBTA order: DETH, RETH, AETH, ImmDt,
 * IETH). */
static size_t hdrs_len(uint32_t f)
{
	return ROCE_BTH_LEN + (f & ROCE_HDR_DETH ? ROCE_DETH_LEN : 0) +
	       (f & ROCE_HDR_RETH ? ROCE_RETH_LEN : 0) +
	       (f & ROCE_HDR_AETH ? ROCE_AETH_LEN : 0) +
	       (f & ROCE_HDR_IMM ? ROCE_IMM_LEN : 0) +
	       (f & ROCE_HDR_IETH ? ROCE_IETH_LEN : 0) +
	       (f & ROCE_HDR_CNP ? ROCE_CNP_RSVD_LEN : 0);
}

/* FIRST and MIDDLE packets carry a whole PMTU: no pad (IBTA 9.2.4). */
static bool pad_forbidden(uint32_t f)
{
	uint32_t pos = f & (ROCE_POS_FIRST | ROCE_POS_MIDDLE | ROCE_POS_LAST);

	return pos == ROCE_POS_FIRST || pos == ROCE_POS_MIDDLE;
}

/* ---- ICRC (IBTA Annex A17.3.3) ---- */

static size_t addr_len(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

/*
 * The IP and UDP headers as the ICRC sees them: the masked fields (IPv4
 * TOS, TTL, header checksum; IPv6 traffic class, flow label, hop limit;
 * UDP checksum) set to ones. IPv4 is assumed to carry no options and
 * flags = DF, fragment offset 0: what roce_frame_build, Linux and RoCE
 * NICs send, and what roce_frame_parse accepts. Returns the length or 0.
 */
static size_t icrc_prefix(const struct roce_l3 *l3, size_t tlen, uint8_t *h)
{
	uint8_t *udp;

	if (l3->family == AF_INET) {
		if (tlen > 0xFFFFu - ROCE_IPV4_LEN - ROCE_UDP_LEN)
			return 0;
		h[0] = 0x45;
		h[1] = 0xFF;
		ernic_put16(h + 2, (uint32_t)(ROCE_IPV4_LEN + ROCE_UDP_LEN + tlen));
		ernic_put16(h + 4, l3->ip_id);
		ernic_put16(h + 6, IPV4_DF);
		h[8] = 0xFF;
		h[9] = IPPROTO_UDP_NUM;
		ernic_put16(h + 10, 0xFFFF);
		memcpy(h + 12, l3->src, 4);
		memcpy(h + 16, l3->dst, 4);
		udp = h + ROCE_IPV4_LEN;
	} else if (l3->family == AF_INET6) {
		if (tlen > 0xFFFFu - ROCE_UDP_LEN)
			return 0;
		ernic_put32(h, 0x6FFFFFFFu);
		ernic_put16(h + 4, (uint32_t)(ROCE_UDP_LEN + tlen));
		h[6] = IPPROTO_UDP_NUM;
		h[7] = 0xFF;
		memcpy(h + 8, l3->src, 16);
		memcpy(h + 24, l3->dst, 16);
		udp = h + ROCE_IPV6_LEN;
	} else {
		return 0;
	}
	ernic_put16(udp, l3->sport);
	ernic_put16(udp + 2, l3->dport);
	ernic_put16(udp + 4, (uint32_t)(ROCE_UDP_LEN + tlen));
	ernic_put16(udp + 6, 0xFFFF);
	return (size_t)(udp + ROCE_UDP_LEN - h);
}

/* The reflected IEEE CRC32 of Ethernet and gzip, zlib's crc32(),
 * chained the same way. ISA-L picks PCLMUL or AVX-512 code for it at run
 * time, some ten times zlib's table speed per byte; a build without it
 * (ERNIC_WITH_ISAL=OFF: the aarch64 cross build, whose Debian 12 arm64
 * libisal-dev cannot sit beside the host's) uses zlib's. */
static inline uint32_t icrc_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
#if ERNIC_HAVE_ISAL
	return crc32_gzip_refl(crc, p, n);
#else
	return (uint32_t)crc32_z(crc, p, n);
#endif
}

/*
 * The CRC's input gathered in one buffer: a call on a short piece costs
 * as much as a whole 62-byte packet in one call (ISA-L's PCLMUL code
 * sets up its folding for each: a 2-byte SEND's six pieces took 68 ns,
 * the same bytes in one call 5 ns). The masked headers and short
 * pieces are copied here; a long one goes to the CRC from where it is,
 * after what is gathered so far.
 */
#define ICRC_GATHER 256u
struct icrc_gather {
	uint32_t crc;
	size_t n;
	uint8_t buf[ICRC_GATHER];
};

static void icrc_add(struct icrc_gather *g, const uint8_t *p, size_t len)
{
	if (!len)
		return;
	if (len <= sizeof(g->buf) - g->n) {
		memcpy(g->buf + g->n, p, len);
		g->n += len;
		return;
	}
	if (g->n)
		g->crc = icrc_crc32(g->crc, g->buf, g->n);
	g->n = 0;
	g->crc = icrc_crc32(g->crc, p, len);
}

/* The ICRC of a packet of tlen bytes (ICRC included) held in pieces:
 * head[0, hlen) (BTH first), pay[0, plen), then the tail's
 * tlen - hlen - plen - 4 bytes up to the ICRC. 0 as roce_icrc. */
static uint32_t icrc_pieces(const struct roce_l3 *l3, size_t tlen,
			    const uint8_t *head, size_t hlen,
			    const uint8_t *pay, size_t plen,
			    const uint8_t *tail)
{
	/* the masked LRH (8 ones), the IP and UDP headers, the BTH */
	_Static_assert(8 + ROCE_IPV6_LEN + ROCE_UDP_LEN + ROCE_BTH_LEN <=
		       ICRC_GATHER, "ICRC gather buffer");
	struct icrc_gather g;
	size_t hl;

	if (!l3 || !head || tlen < ROCE_BTH_LEN + ROCE_ICRC_LEN ||
	    hlen < ROCE_BTH_LEN || hlen + plen + ROCE_ICRC_LEN > tlen)
		return 0;
	memset(g.buf, 0xFF, 8);
	hl = icrc_prefix(l3, tlen, g.buf + 8);
	if (!hl)
		return 0;
	g.n = 8 + hl;
	memcpy(g.buf + g.n, head, ROCE_BTH_LEN);
	g.buf[g.n + 4] = 0xFF;	/* resv8a: FECN, BECN and reserved bits */
	g.n += ROCE_BTH_LEN;
	g.crc = 0;
	icrc_add(&g, head + ROCE_BTH_LEN, hlen - ROCE_BTH_LEN);
	icrc_add(&g, pay, plen);
	icrc_add(&g, tail, tlen - hlen - plen - ROCE_ICRC_LEN);
	return g.n ? icrc_crc32(g.crc, g.buf, g.n) : g.crc;
}

uint32_t roce_icrc(const struct roce_l3 *l3, const uint8_t *tp, size_t tlen)
{
	if (!tp || tlen < ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return 0;
	return icrc_pieces(l3, tlen, tp, tlen - ROCE_ICRC_LEN, NULL, 0,
			   tp + tlen - ROCE_ICRC_LEN);
}

/*
 * For equal-length messages the CRC is affine, so the ICRC of ID = id is
 * ICRC(ID = 0) ^ D(id) with D linear in the 16 ID bits. D of one bit is
 * that bit's CRC contribution shifted over the bytes behind it, which
 * crc32_combine() computes without touching them. The 16 values depend
 * on the length only: each thread keeps those of the last few lengths
 * (a stream of MTU-size packets asks for one or two).
 */
#define ID_BASIS_CACHE 4
struct id_basis {
	size_t tlen;		/* 0: empty */
	uint32_t d[16];		/* D(1 << bit) */
	/* the same reduced for solving: pivot = highest bit */
	uint32_t vec[32], mask[32];
};

static const struct id_basis *id_basis(size_t tlen)
{
	static _Thread_local struct id_basis cache[ID_BASIS_CACHE];
	static _Thread_local unsigned int next;
	/* bytes after the ID field: rest of IPv4 + UDP + transport - ICRC */
	z_off_t behind = (z_off_t)(ROCE_IPV4_LEN - 6 + ROCE_UDP_LEN + tlen -
				   ROCE_ICRC_LEN);
	struct id_basis *b;
	uint8_t two[2] = { 0, 0 };
	uLong zero_id;

	for (unsigned int k = 0; k < ID_BASIS_CACHE; k++)
		if (cache[k].tlen == tlen)
			return &cache[k];
	b = &cache[next++ % ID_BASIS_CACHE];
	memset(b, 0, sizeof(*b));
	zero_id = crc32_combine(crc32(0L, two, 2), 0, behind);
	for (unsigned int bit = 0; bit < 16; bit++) {
		uint32_t v, m = 1u << bit;

		ernic_put16(two, m);
		v = (uint32_t)(crc32_combine(crc32(0L, two, 2), 0, behind) ^
			       zero_id);
		b->d[bit] = v;
		/* Gaussian elimination over GF(2), pivot = highest bit */
		for (int i = 31; i >= 0 && v; i--) {
			if (!(v >> i & 1))
				continue;
			if (!b->vec[i]) {
				b->vec[i] = v;
				b->mask[i] = m;
				break;
			}
			v ^= b->vec[i];
			m ^= b->mask[i];
		}
	}
	b->tlen = tlen;
	return b;
}

static bool id_len_ok(size_t tlen)
{
	return tlen >= ROCE_BTH_LEN + ROCE_ICRC_LEN &&
	       tlen <= 0xFFFFu - ROCE_IPV4_LEN - ROCE_UDP_LEN;
}

uint32_t roce_icrc_ip_id_delta(size_t tlen, uint16_t id)
{
	const struct id_basis *b;
	uint32_t d = 0;

	if (!id || !id_len_ok(tlen))
		return 0;
	b = id_basis(tlen);
	for (unsigned int bit = 0; bit < 16; bit++)
		if (id >> bit & 1)
			d ^= b->d[bit];
	return d;
}

bool roce_icrc_solve_ip_id(const struct roce_l3 *l3, const uint8_t *tp,
			   size_t tlen, uint16_t *id)
{
	const struct id_basis *b;
	struct roce_l3 z;
	uint32_t target, sol = 0;

	if (!l3 || !id || !tp || l3->family != AF_INET || !id_len_ok(tlen))
		return false;
	z = *l3;
	z.ip_id = 0;
	target = ernic_get_le32(tp + tlen - ROCE_ICRC_LEN) ^ roce_icrc(&z, tp, tlen);
	if (!target) {		/* the common case: Linux sent ID 0 */
		*id = 0;
		return true;
	}
	b = id_basis(tlen);
	for (int i = 31; i >= 0; i--) {
		if (!(target >> i & 1))
			continue;
		if (!b->vec[i])
			return false;
		target ^= b->vec[i];
		sol ^= b->mask[i];
	}
	*id = (uint16_t)sol;
	return true;
}

/* ---- transport packets ---- */

size_t roce_hdrs_len(uint8_t opcode)
{
	uint32_t f = roce_opcode_flags(opcode);

	return f ? hdrs_len(f) : 0;
}

/* Check p for roce_build: false when it cannot be built, else its
 * opcode's flags in *fl, its headers' length in *hl and its pad count
 * in *pad (p->pad is set only once the packet is built). */
static bool check_pkt(const uint8_t *buf, const struct roce_pkt *p,
		      const struct roce_l3 *l3, uint32_t *fl, size_t *hl,
		      uint8_t *padp)
{
	uint32_t f;
	uint8_t pad;

	if (!buf || !p || !l3 || !addr_len(l3->family))
		return false;
	f = roce_opcode_flags(p->opcode);
	if (!f || p->tver > 0xF || p->dqpn > 0xFFFFFF || p->psn > 0xFFFFFF ||
	    p->aeth_msn > 0xFFFFFF || (p->aeth_syndrome & 0x80) ||
	    p->deth_sqpn > 0xFFFFFF)
		return false;
	if (p->payload_len && (!(f & ROCE_HDR_PAYLOAD) || !p->payload))
		return false;
	if (p->payload_len > ROCE_MAX_PAYLOAD)
		return false;
	pad = (uint8_t)(-p->payload_len & 3u);
	if (pad && pad_forbidden(f))
		return false;
	*padp = pad;
	*fl = f;
	*hl = hdrs_len(f);
	return true;
}

/* Write the headers check_pkt passed (flags f) into buf. */
static void put_hdrs(uint8_t *buf, const struct roce_pkt *p, uint32_t f)
{
	uint8_t *q;

	buf[0] = p->opcode;
	buf[1] = (uint8_t)(p->se << 7 | p->migreq << 6 | p->pad << 4 |
			   p->tver);
	ernic_put16(buf + 2, p->pkey);
	buf[4] = (uint8_t)(p->fecn << 7 | p->becn << 6);
	ernic_put24(buf + 5, p->dqpn);
	buf[8] = (uint8_t)(p->ackreq << 7);
	ernic_put24(buf + 9, p->psn);
	q = buf + ROCE_BTH_LEN;
	if (f & ROCE_HDR_DETH) {
		ernic_put32(q, p->deth_qkey);
		ernic_put32(q + 4, p->deth_sqpn);	/* byte 4 reserved: 0 */
		q += ROCE_DETH_LEN;
	}
	if (f & ROCE_HDR_RETH) {
		ernic_put64(q, p->reth_va);
		ernic_put32(q + 8, p->reth_rkey);
		ernic_put32(q + 12, p->reth_len);
		q += ROCE_RETH_LEN;
	}
	if (f & ROCE_HDR_AETH) {
		q[0] = p->aeth_syndrome;
		ernic_put24(q + 1, p->aeth_msn);
		q += ROCE_AETH_LEN;
	}
	if (f & ROCE_HDR_IMM) {
		ernic_put32(q, p->imm);
		q += ROCE_IMM_LEN;
	}
	if (f & ROCE_HDR_IETH)
		ernic_put32(q, p->ieth_rkey);
	if (f & ROCE_HDR_CNP)
		memset(q, 0, ROCE_CNP_RSVD_LEN);
}

size_t roce_build(uint8_t *buf, size_t cap, struct roce_pkt *p,
		  const struct roce_l3 *l3)
{
	uint32_t f;
	size_t hl, len;
	uint8_t pad, *q;

	if (!check_pkt(buf, p, l3, &f, &hl, &pad))
		return 0;
	len = hl + p->payload_len + pad + ROCE_ICRC_LEN;
	if (len > cap)
		return 0;
	p->pad = pad;
	q = buf + hl;
	/* the payload may be in place already, or overlap the headers */
	if (p->payload_len && q != p->payload)
		memmove(q, p->payload, p->payload_len);
	put_hdrs(buf, p, f);
	memset(q + p->payload_len, 0, p->pad);
	ernic_put_le32(buf + len - ROCE_ICRC_LEN, roce_icrc(l3, buf, len));
	return len;
}

size_t roce_build_split(uint8_t *buf, size_t cap, struct roce_pkt *p,
			const struct roce_l3 *l3, size_t *hdr_len)
{
	uint32_t f;
	size_t hl, len;
	uint8_t pad, *tail;

	if (!hdr_len || !check_pkt(buf, p, l3, &f, &hl, &pad))
		return 0;
	len = hl + pad + ROCE_ICRC_LEN;
	if (len > cap)
		return 0;
	p->pad = pad;
	put_hdrs(buf, p, f);
	tail = buf + hl;
	memset(tail, 0, p->pad);
	ernic_put_le32(tail + p->pad,
		       icrc_pieces(l3, len + p->payload_len, buf, hl,
				   p->payload, p->payload_len, tail));
	*hdr_len = hl;
	return len;
}

uint32_t roce_parse(const uint8_t *tp, size_t tlen, const struct roce_l3 *l3,
		    bool check_icrc, struct roce_pkt *p)
{
	uint32_t syn = 0, f;
	const uint8_t *q;
	size_t hl, plen;

	memset(p, 0, sizeof(*p));
	if (!tp || tlen < ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return ROCE_SYN_MALFORMED;
	p->opcode = tp[0];
	p->se = tp[1] >> 7;
	p->migreq = tp[1] >> 6 & 1;
	p->pad = tp[1] >> 4 & 3;
	p->tver = tp[1] & 0xF;
	p->pkey = ernic_get16(tp + 2);
	p->fecn = tp[4] >> 7;
	p->becn = tp[4] >> 6 & 1;
	p->dqpn = ernic_get24(tp + 5);
	p->ackreq = tp[8] >> 7;
	p->psn = ernic_get24(tp + 9);

	if (p->tver != 0)
		syn |= ROCE_SYN_BTH_VERSION;
	f = roce_opcode_flags(p->opcode);
	hl = hdrs_len(f);
	if (!f) {
		syn |= ROCE_SYN_OPCODE;
	} else if (tlen < hl + ROCE_ICRC_LEN || (tlen & 3)) {
		/* IBTA packets are whole 4-byte words */
		syn |= ROCE_SYN_MALFORMED;
	} else {
		q = tp + ROCE_BTH_LEN;
		if (f & ROCE_HDR_DETH) {
			p->deth_qkey = ernic_get32(q);
			p->deth_sqpn = ernic_get24(q + 5);
			q += ROCE_DETH_LEN;
		}
		if (f & ROCE_HDR_RETH) {
			p->reth_va = ernic_get64(q);
			p->reth_rkey = ernic_get32(q + 8);
			p->reth_len = ernic_get32(q + 12);
			q += ROCE_RETH_LEN;
		}
		if (f & ROCE_HDR_AETH) {
			p->aeth_syndrome = q[0];
			p->aeth_msn = ernic_get24(q + 1);
			q += ROCE_AETH_LEN;
		}
		if (f & ROCE_HDR_IMM) {
			p->imm = ernic_get32(q);
			q += ROCE_IMM_LEN;
		}
		if (f & ROCE_HDR_IETH) {
			p->ieth_rkey = ernic_get32(q);
			q += ROCE_IETH_LEN;
		}
		plen = tlen - hl - ROCE_ICRC_LEN;
		if (plen && !(f & ROCE_HDR_PAYLOAD))
			syn |= ROCE_SYN_MALFORMED;
		else if (p->pad > plen || (p->pad && pad_forbidden(f)))
			syn |= ROCE_SYN_PAD;
		else {
			p->payload = q;
			p->payload_len = (uint32_t)(plen - p->pad);
		}
	}
	if (check_icrc &&
	    (!l3 || roce_icrc(l3, tp, tlen) !=
		    ernic_get_le32(tp + tlen - ROCE_ICRC_LEN)))
		syn |= ROCE_SYN_ICRC;
	return syn;
}

/* ---- Ethernet / IP / UDP ---- */

size_t roce_frame_hdr_len(int family)
{
	if (family == AF_INET)
		return ROCE_ETH_LEN + ROCE_IPV4_LEN + ROCE_UDP_LEN;
	if (family == AF_INET6)
		return ROCE_ETH_LEN + ROCE_IPV6_LEN + ROCE_UDP_LEN;
	return 0;
}

size_t roce_frame_build(uint8_t *buf, size_t cap, const struct roce_l3 *l3,
			size_t tlen)
{
	size_t hl = l3 ? roce_frame_hdr_len(l3->family) : 0;
	size_t ulen = ROCE_UDP_LEN + tlen;
	uint8_t *ip, *udp;
	uint8_t ttl;

	if (!hl || !buf || cap < hl || tlen > cap - hl ||
	    ulen > 0xFFFFu - (l3->family == AF_INET ? ROCE_IPV4_LEN : 0))
		return 0;
	ip = buf + ROCE_ETH_LEN;
	/* RFC 1122 3.2.1.7: never send TTL 0; 0 here means "default". */
	ttl = l3->ttl ? l3->ttl : DEFAULT_TTL;
	memcpy(buf, l3->dst_mac, 6);
	memcpy(buf + 6, l3->src_mac, 6);
	if (l3->family == AF_INET) {
		ernic_put16(buf + 12, ETH_TYPE_IPV4);
		ip[0] = 0x45;
		ip[1] = l3->tos;
		ernic_put16(ip + 2, (uint32_t)(ROCE_IPV4_LEN + ulen));
		ernic_put16(ip + 4, l3->ip_id);
		ernic_put16(ip + 6, IPV4_DF);
		ip[8] = ttl;
		ip[9] = IPPROTO_UDP_NUM;
		ernic_put16(ip + 10, 0);
		memcpy(ip + 12, l3->src, 4);
		memcpy(ip + 16, l3->dst, 4);
		ernic_put16(ip + 10, ernic_csum_fold(ernic_csum_add(0, ip,
								   ROCE_IPV4_LEN)));
		udp = ip + ROCE_IPV4_LEN;
	} else {
		ernic_put16(buf + 12, ETH_TYPE_IPV6);
		ernic_put32(ip, 6u << 28 | (uint32_t)l3->tos << 20 |
			  (l3->flow_label & 0xFFFFF));
		ernic_put16(ip + 4, (uint32_t)ulen);
		ip[6] = IPPROTO_UDP_NUM;
		ip[7] = ttl;
		memcpy(ip + 8, l3->src, 16);
		memcpy(ip + 24, l3->dst, 16);
		udp = ip + ROCE_IPV6_LEN;
	}
	ernic_put16(udp, l3->sport);
	ernic_put16(udp + 2, l3->dport);
	ernic_put16(udp + 4, (uint32_t)ulen);
	ernic_put16(udp + 6, 0);	/* IPv4: no checksum, as RoCEv2 NICs send */
	if (l3->family == AF_INET6) {
		/* RFC 8200 8.1: mandatory over IPv6 (the ICRC masks it) */
		uint32_t sum = ernic_csum_add(0, ip + 8, 32);
		uint16_t c;

		sum += (uint32_t)ulen + IPPROTO_UDP_NUM;
		c = ernic_csum_fold(ernic_csum_add(sum, udp, ulen));
		ernic_put16(udp + 6, c ? c : 0xFFFF);
	}
	return hl + tlen;
}

bool roce_mac_claims(const uint8_t *mac)
{
	for (size_t k = 0; k < 6; k++)
		if (mac[k])
			return true;
	return false;
}

uint32_t roce_frame_parse(const uint8_t *frame, size_t len,
			  const struct roce_l3 *local, struct roce_l3 *l3,
			  const uint8_t **tp, size_t *tlen)
{
	const uint8_t *ip, *udp;
	size_t avail, iphl, ip_payload = 0, ulen, alen;
	bool len_ok = true, mac_ok, ip_ok;
	uint32_t syn = 0;
	uint16_t etype;

	memset(l3, 0, sizeof(*l3));
	*tp = NULL;
	*tlen = 0;
	if (!frame || !local || len < ROCE_ETH_LEN)
		return ROCE_NOT_ROCE;
	memcpy(l3->dst_mac, frame, 6);
	memcpy(l3->src_mac, frame + 6, 6);
	etype = ernic_get16(frame + 12);
	ip = frame + ROCE_ETH_LEN;
	avail = len - ROCE_ETH_LEN;

	/* First: is it UDP to port 4791 at all? Unidentifiable = not ours. */
	if (etype == ETH_TYPE_IPV4) {
		unsigned int ihl;
		uint16_t fo;

		if (avail < ROCE_IPV4_LEN || ip[9] != IPPROTO_UDP_NUM)
			return ROCE_NOT_ROCE;
		/* A header the IP cannot size is read as its fixed 20 B. */
		ihl = ip[0] & 0xF;
		iphl = ihl >= 5 ? ihl * 4u : ROCE_IPV4_LEN;
		if (avail < iphl + ROCE_UDP_LEN)
			return ROCE_NOT_ROCE;
		udp = ip + iphl;
		if (ernic_get16(udp + 2) != ROCE_UDP_PORT)
			return ROCE_NOT_ROCE;
		l3->family = AF_INET;
		l3->tos = ip[1];
		l3->ip_id = ernic_get16(ip + 4);
		l3->ttl = ip[8];
		memcpy(l3->src, ip + 12, 4);
		memcpy(l3->dst, ip + 16, 4);
		if (ip[0] >> 4 != 4)
			syn |= ROCE_SYN_IP_VERSION;
		if (ihl != 5)
			syn |= ROCE_SYN_IPV4_HDR_LEN;
		fo = ernic_get16(ip + 6);
		if ((fo & IPV4_FLAGS_MASK) != IPV4_DF)
			syn |= ROCE_SYN_IPV4_FLAGS;
		if (fo & IPV4_FRAG_MASK)
			syn |= ROCE_SYN_IPV4_FRAG;
		if (ihl >= 5 &&
		    ernic_csum_fold(ernic_csum_add(0, ip, iphl)) != 0)
			syn |= ROCE_SYN_IPV4_CSUM;
		if (ernic_get16(ip + 2) < iphl + ROCE_UDP_LEN || ernic_get16(ip + 2) > avail)
			len_ok = false;
		else
			ip_payload = ernic_get16(ip + 2) - iphl;
	} else if (etype == ETH_TYPE_IPV6) {
		uint32_t w;

		iphl = ROCE_IPV6_LEN;
		/* Extension headers are not followed (nor are they by ERNIC). */
		if (avail < iphl + ROCE_UDP_LEN || ip[6] != IPPROTO_UDP_NUM)
			return ROCE_NOT_ROCE;
		udp = ip + iphl;
		if (ernic_get16(udp + 2) != ROCE_UDP_PORT)
			return ROCE_NOT_ROCE;
		w = ernic_get32(ip);
		l3->family = AF_INET6;
		l3->tos = (uint8_t)(w >> 20);
		l3->flow_label = w & 0xFFFFF;
		l3->ttl = ip[7];
		memcpy(l3->src, ip + 8, 16);
		memcpy(l3->dst, ip + 24, 16);
		if (w >> 28 != 6)
			syn |= ROCE_SYN_IP_VERSION;
		if (ernic_get16(ip + 4) < ROCE_UDP_LEN || ernic_get16(ip + 4) > avail - iphl)
			len_ok = false;
		else
			ip_payload = ernic_get16(ip + 4);
	} else {
		return ROCE_NOT_ROCE;	/* ARP, VLAN tags, LLDP, ... */
	}
	l3->sport = ernic_get16(udp);
	l3->dport = ROCE_UDP_PORT;

	/* Second: is it addressed to us? (the rule in roce_pkt.h) */
	alen = addr_len(local->family);
	mac_ok = memcmp(l3->dst_mac, local->dst_mac, 6) == 0;
	ip_ok = alen && l3->family == local->family &&
		memcmp(l3->dst, local->dst, alen) == 0;
	if (!ip_ok && (!mac_ok || !roce_mac_claims(local->dst_mac)))
		return ROCE_NOT_ROCE;
	if (!mac_ok)
		syn |= ROCE_SYN_MAC_DST;
	if (l3->family != local->family)
		syn |= ROCE_SYN_IP_VERSION;
	else if (!ip_ok)
		syn |= ROCE_SYN_IP_DST;

	ulen = ernic_get16(udp + 4);
	if (!len_ok)
		syn |= ROCE_SYN_IP_LEN;
	else if (ulen != ip_payload)
		syn |= ROCE_SYN_UDP_LEN;
	/* The transport bytes: what UDP says, never past the frame. */
	*tp = udp + ROCE_UDP_LEN;
	*tlen = avail - iphl - ROCE_UDP_LEN;
	if (ulen >= ROCE_UDP_LEN && ulen - ROCE_UDP_LEN < *tlen)
		*tlen = ulen - ROCE_UDP_LEN;
	return syn;
}
