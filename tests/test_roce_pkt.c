// SPDX-License-Identifier: MIT
/*
 * RoCEv2 codec: build/parse round trips of every supported opcode,
 * rejection of every malformed length, the PG332 Table 2-3 frame checks,
 * and the ICRC against packets whose ICRC was computed elsewhere.
 *
 * Truncated inputs are copied into buffers of exactly their length, so
 * an out-of-bounds read shows under valgrind / ASan.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "roce_pkt.h"

static const uint8_t supported[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
	0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x16, 0x17,
	0x64,	/* UD SEND_ONLY: QP1's MADs */
};
#define NSUP (sizeof(supported) / sizeof(supported[0]))

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0A };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0x0B };

static void l3_init(struct roce_l3 *l3, int family)
{
	*l3 = (struct roce_l3){ .family = family, .sport = 49152,
				.dport = ROCE_UDP_PORT, .ttl = 64, .tos = 0x02 };
	if (family == AF_INET) {
		inet_pton(AF_INET, "192.0.2.1", l3->src);
		inet_pton(AF_INET, "192.0.2.2", l3->dst);
	} else {
		inet_pton(AF_INET6, "fd00::1", l3->src);
		inet_pton(AF_INET6, "fd00::2", l3->dst);
		l3->flow_label = 0xABCDE;
	}
	memcpy(l3->src_mac, mac_a, 6);
	memcpy(l3->dst_mac, mac_b, 6);
}

/* The receiving side's view of l3 (frame parse's `local`). */
static void local_of(const struct roce_l3 *l3, struct roce_l3 *local)
{
	*local = (struct roce_l3){ .family = l3->family };
	memcpy(local->dst, l3->dst, 16);
	memcpy(local->dst_mac, l3->dst_mac, 6);
}

static uint8_t *dup_exact(const uint8_t *p, size_t n)
{
	uint8_t *q = malloc(n ? n : 1);

	assert_non_null(q);
	if (n)
		memcpy(q, p, n);
	return q;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void fill_pkt(struct roce_pkt *p, uint8_t op, const uint8_t *pl,
		     uint32_t len)
{
	*p = (struct roce_pkt){
		.opcode = op, .se = true, .migreq = true,
		.pkey = ROCE_DEFAULT_PKEY, .becn = true, .dqpn = 0xABCDEF,
		.ackreq = true, .psn = 0xFEDCBA,
		.reth_va = UINT64_C(0x0123456789ABCDEF),
		.reth_rkey = 0x11223344, .reth_len = 0x55667788,
		.aeth_syndrome = ROCE_AETH_NAK | ROCE_NAK_REMOTE_ACCESS,
		.aeth_msn = 0x123456, .imm = 0xCAFEBABE,
		.ieth_rkey = 0x99AABBCC, .deth_qkey = 0x80010000,
		.deth_sqpn = 0x654321,
		.payload = len ? pl : NULL, .payload_len = len,
	};
}

static void test_opcode_table(void **state)
{
	unsigned int n = 0;

	for (unsigned int op = 0; op < 256; op++) {
		uint32_t f = roce_opcode_flags((uint8_t)op);
		bool sup = memchr(supported, (int)op, NSUP) != NULL;

		assert_int_equal(f != 0, sup);
		assert_int_equal(strcmp(roce_opcode_name((uint8_t)op), "?") != 0,
				 sup);
		n += sup;
		if (!sup)
			continue;
		/* exactly one position; at most one of AETH / RETH+IETH */
		assert_true(f & (ROCE_POS_FIRST | ROCE_POS_MIDDLE |
				 ROCE_POS_LAST));
		assert_false((f & ROCE_POS_MIDDLE) &&
			     (f & (ROCE_POS_FIRST | ROCE_POS_LAST)));
	}
	assert_int_equal(n, 21);
	assert_int_equal(roce_opcode_flags(ROCE_UD_SEND_ONLY),
			 ROCE_HDR_DETH | ROCE_HDR_PAYLOAD | ROCE_POS_ONLY |
			 ROCE_TRANSPORT_UD);
	assert_string_equal(roce_opcode_name(ROCE_RC_WRITE_ONLY_IMM),
			    "WRITE_ONLY_IMM");
	assert_int_equal(roce_opcode_flags(ROCE_RC_WRITE_ONLY_IMM),
			 ROCE_HDR_RETH | ROCE_HDR_IMM | ROCE_HDR_PAYLOAD |
			 ROCE_POS_ONLY);
	assert_int_equal(roce_opcode_flags(ROCE_RC_ACK),
			 ROCE_HDR_AETH | ROCE_POS_ONLY);
	assert_int_equal(roce_opcode_flags(ROCE_RC_SEND_LAST_INV),
			 ROCE_HDR_IETH | ROCE_HDR_PAYLOAD | ROCE_POS_LAST);
	assert_int_equal(roce_opcode_flags(ROCE_RC_READ_RESP_MIDDLE),
			 ROCE_HDR_PAYLOAD | ROCE_POS_MIDDLE);
}

static size_t hdr_len_of(uint32_t f)
{
	return ROCE_BTH_LEN + (f & ROCE_HDR_DETH ? 8 : 0) +
	       (f & ROCE_HDR_RETH ? 16 : 0) +
	       (f & ROCE_HDR_AETH ? 4 : 0) + (f & ROCE_HDR_IMM ? 4 : 0) +
	       (f & ROCE_HDR_IETH ? 4 : 0);
}

static bool pad_allowed(uint32_t f)
{
	return (f & ROCE_POS_LAST) != 0;
}

static void check_roundtrip(int family, uint8_t op, uint32_t len,
			    const uint8_t *pl)
{
	static uint8_t buf[ROCE_MAX_TRANSPORT];
	struct roce_l3 l3, other;
	struct roce_pkt p, q;
	uint32_t f = roce_opcode_flags(op);
	size_t n;

	l3_init(&l3, family);
	fill_pkt(&p, op, pl, len);
	n = roce_build(buf, sizeof(buf), &p, &l3);
	assert_int_equal(n, hdr_len_of(f) + len + p.pad + ROCE_ICRC_LEN);
	assert_int_equal(p.pad, (4 - len % 4) % 4);
	assert_int_equal(n % 4, 0);
	assert_int_equal(roce_parse(buf, n, &l3, true, &q), 0);
	assert_int_equal(q.opcode, op);
	assert_true(q.se && q.migreq && q.becn && q.ackreq && !q.fecn);
	assert_true(q.pad == p.pad && q.tver == 0 && q.pkey == 0xFFFF);
	assert_int_equal(q.dqpn, 0xABCDEF);
	assert_int_equal(q.psn, 0xFEDCBA);
	if (f & ROCE_HDR_RETH)
		assert_true(q.reth_va == UINT64_C(0x0123456789ABCDEF) &&
			    q.reth_rkey == 0x11223344 &&
			    q.reth_len == 0x55667788);
	if (f & ROCE_HDR_AETH)
		assert_true(q.aeth_syndrome == 0x62 &&
			    q.aeth_msn == 0x123456);
	if (f & ROCE_HDR_IMM)
		assert_int_equal(q.imm, 0xCAFEBABE);
	if (f & ROCE_HDR_IETH)
		assert_int_equal(q.ieth_rkey, 0x99AABBCC);
	if (f & ROCE_HDR_DETH)
		assert_true(q.deth_qkey == 0x80010000 &&
			    q.deth_sqpn == 0x654321);
	assert_int_equal(q.payload_len, len);
	if (len)
		assert_memory_equal(q.payload, pl, len);
	/* The ICRC sits little-endian at the end. */
	assert_int_equal(le32(buf + n - 4), roce_icrc(&l3, buf, n));
	/* ... and covers the envelope */
	other = l3;
	other.sport++;
	assert_int_equal(roce_parse(buf, n, &other, true, &q), ROCE_SYN_ICRC);
}

static void test_roundtrip(void **state)
{
	static const uint32_t lens[] = { 0, 1, 2, 3, 4, 5, 7, 8, 256, 1021,
					 4096 };
	uint8_t *pl = malloc(4096);

	assert_non_null(pl);
	for (unsigned int i = 0; i < 4096; i++)
		pl[i] = (uint8_t)(i * 7 + 3);
	for (int fam = 0; fam < 2; fam++)
		for (size_t i = 0; i < NSUP; i++) {
			uint32_t f = roce_opcode_flags(supported[i]);

			for (size_t j = 0; j < sizeof(lens) / 4; j++) {
				uint32_t len = lens[j];

				if (len && !(f & ROCE_HDR_PAYLOAD))
					continue;
				if (len % 4 && !pad_allowed(f))
					continue;
				check_roundtrip(fam ? AF_INET6 : AF_INET,
						supported[i], len, pl);
			}
		}
	free(pl);
}

static void test_build_rejects(void **state)
{
	uint8_t buf[ROCE_MAX_TRANSPORT], pl[8] = { 0 }, *big;
	struct roce_l3 l3;
	struct roce_pkt p;
	size_t n;

	l3_init(&l3, AF_INET);
	fill_pkt(&p, ROCE_RC_SEND_ONLY, pl, 5);
	n = roce_build(buf, sizeof(buf), &p, &l3);
	assert_int_equal(n, 12 + 8 + 4);
	for (size_t cap = 0; cap < n; cap++)
		assert_int_equal(roce_build(buf, cap, &p, &l3), 0);

#define REJECT(stmt) do { fill_pkt(&p, ROCE_RC_SEND_ONLY, pl, 4); stmt; \
	assert_int_equal(roce_build(buf, sizeof(buf), &p, &l3), 0); } while (0)
	REJECT(p.opcode = 0x12);		/* atomic ACK */
	REJECT(p.deth_sqpn = 0x1000000);
	REJECT(p.opcode = 0x81);		/* CNP */
	REJECT(p.dqpn = 0x1000000);
	REJECT(p.psn = 0x1000000);
	REJECT(p.tver = 16);
	REJECT(p.opcode = ROCE_RC_ACK; p.payload_len = 0;
	       p.aeth_msn = 0x1000000);
	REJECT(p.opcode = ROCE_RC_ACK; p.payload_len = 0;
	       p.aeth_syndrome = 0x80);
	REJECT(p.opcode = ROCE_RC_ACK);		/* payload on header-only */
	REJECT(p.opcode = ROCE_RC_READ_REQ);
	REJECT(p.opcode = ROCE_RC_SEND_FIRST; p.payload_len = 5);
	REJECT(p.opcode = ROCE_RC_WRITE_MIDDLE; p.payload_len = 6);
	REJECT(p.payload = NULL);
	REJECT(p.payload_len = 4097);
	REJECT(l3.family = AF_UNIX);
	l3.family = AF_INET;
#undef REJECT
	/* the largest packet fits in ROCE_MAX_TRANSPORT */
	big = calloc(1, 4096);
	assert_non_null(big);
	fill_pkt(&p, ROCE_RC_WRITE_ONLY_IMM, big, 4096);
	assert_int_equal(roce_build(buf, sizeof(buf), &p, &l3),
			 12 + 16 + 4 + 4096 + 4);
	free(big);
}

/* Parse a copy of exactly len bytes. */
static uint32_t parse_exact(const uint8_t *b, size_t len,
			    const struct roce_l3 *l3, bool icrc,
			    struct roce_pkt *p)
{
	uint8_t *c = dup_exact(b, len);
	uint32_t syn = roce_parse(c, len, l3, icrc, p);

	free(c);
	return syn;
}

static void test_parse_lengths(void **state)
{
	uint8_t buf[ROCE_MAX_TRANSPORT + 8], pl[64];
	struct roce_l3 l3;
	struct roce_pkt p, q;

	memset(pl, 0x5A, sizeof(pl));
	l3_init(&l3, AF_INET6);
	assert_int_equal(roce_parse(NULL, 0, &l3, false, &q),
			 ROCE_SYN_MALFORMED);
	for (size_t i = 0; i < NSUP; i++) {
		uint32_t f = roce_opcode_flags(supported[i]);
		uint32_t len = f & ROCE_HDR_PAYLOAD ? 8 : 0;
		size_t hl = hdr_len_of(f), n;

		fill_pkt(&p, supported[i], pl, len);
		n = roce_build(buf, sizeof(buf), &p, &l3);
		assert_int_not_equal(n, 0);
		for (size_t t = 0; t < n; t++) {
			uint32_t syn = parse_exact(buf, t, &l3, false, &q);
			uint32_t syn_icrc = parse_exact(buf, t, &l3, true, &q);

			/* With the ICRC every truncation is caught. */
			assert_int_not_equal(syn_icrc, 0);
			if (t < ROCE_BTH_LEN + ROCE_ICRC_LEN) {
				assert_int_equal(syn, ROCE_SYN_MALFORMED);
				assert_int_equal(syn_icrc, ROCE_SYN_MALFORMED);
			} else if (t < hl + ROCE_ICRC_LEN || t % 4) {
				assert_int_equal(syn, ROCE_SYN_MALFORMED);
			} else {
				/* a shorter payload: structurally valid */
				assert_int_equal(syn, 0);
				assert_int_equal(q.payload_len,
						 t - hl - ROCE_ICRC_LEN);
			}
		}
		/* Extra words after a header-only packet, odd extra bytes */
		memset(buf + n, 0, 8);
		if (!(f & ROCE_HDR_PAYLOAD))
			assert_int_equal(parse_exact(buf, n + 4, &l3, false, &q),
					 ROCE_SYN_MALFORMED);
		for (size_t extra = 1; extra < 4; extra++)
			assert_int_equal(parse_exact(buf, n + extra, &l3, false,
						     &q), ROCE_SYN_MALFORMED);
	}
}

/* Rewrite the ICRC after editing a built packet, then parse it. */
static uint32_t reseal_parse(uint8_t *b, size_t n, const struct roce_l3 *l3,
			     struct roce_pkt *q)
{
	uint32_t c = roce_icrc(l3, b, n);

	for (int i = 0; i < 4; i++)
		b[n - 4 + i] = (uint8_t)(c >> 8 * i);
	return roce_parse(b, n, l3, true, q);
}

static void test_parse_bth_checks(void **state)
{
	uint8_t buf[256], pl[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct roce_l3 l3;
	struct roce_pkt p, q;
	size_t n;

	l3_init(&l3, AF_INET);

	/* BTH version */
	fill_pkt(&p, ROCE_RC_SEND_ONLY, pl, 8);
	p.tver = 1;
	n = roce_build(buf, sizeof(buf), &p, &l3);
	assert_int_equal(roce_parse(buf, n, &l3, true, &q),
			 ROCE_SYN_BTH_VERSION);
	assert_int_equal(q.tver, 1);

	/* unsupported opcodes: the BTH is still returned */
	fill_pkt(&p, ROCE_RC_SEND_ONLY, pl, 8);
	n = roce_build(buf, sizeof(buf), &p, &l3);
	for (unsigned int op = 0; op < 256; op++) {
		if (roce_opcode_flags((uint8_t)op))
			continue;
		buf[0] = (uint8_t)op;
		assert_int_equal(reseal_parse(buf, n, &l3, &q),
				 ROCE_SYN_OPCODE);
		assert_int_equal(q.opcode, op);
		assert_int_equal(q.dqpn, 0xABCDEF);
	}

	/* pad on FIRST / MIDDLE */
	fill_pkt(&p, ROCE_RC_SEND_FIRST, pl, 8);
	n = roce_build(buf, sizeof(buf), &p, &l3);
	assert_int_equal(roce_parse(buf, n, &l3, true, &q), 0);
	buf[1] |= 1 << 4;
	assert_int_equal(reseal_parse(buf, n, &l3, &q), ROCE_SYN_PAD);
	buf[0] = ROCE_RC_READ_RESP_MIDDLE;
	assert_int_equal(reseal_parse(buf, n, &l3, &q), ROCE_SYN_PAD);
	buf[0] = ROCE_RC_SEND_LAST;	/* allowed on LAST */
	assert_int_equal(reseal_parse(buf, n, &l3, &q), 0);
	assert_int_equal(q.payload_len, 7);

	/* pad larger than what follows the headers */
	fill_pkt(&p, ROCE_RC_ACK, NULL, 0);
	n = roce_build(buf, sizeof(buf), &p, &l3);
	buf[1] |= 3 << 4;
	assert_int_equal(reseal_parse(buf, n, &l3, &q), ROCE_SYN_PAD);

	/* all bits found are returned: version + opcode + ICRC */
	fill_pkt(&p, ROCE_RC_SEND_ONLY, pl, 8);
	n = roce_build(buf, sizeof(buf), &p, &l3);
	buf[0] = 0x81;
	buf[1] |= 2;
	assert_int_equal(roce_parse(buf, n, &l3, true, &q),
			 ROCE_SYN_BTH_VERSION | ROCE_SYN_OPCODE |
			 ROCE_SYN_ICRC);
	assert_int_equal(roce_parse(buf, n, &l3, false, &q),
			 ROCE_SYN_BTH_VERSION | ROCE_SYN_OPCODE);
	/* check_icrc without an envelope cannot pass */
	fill_pkt(&p, ROCE_RC_SEND_ONLY, pl, 8);
	n = roce_build(buf, sizeof(buf), &p, &l3);
	assert_int_equal(roce_parse(buf, n, NULL, true, &q), ROCE_SYN_ICRC);
}

/* The ICRC ignores exactly the variant fields of Annex A17. */
static void test_icrc_masking(void **state)
{
	uint8_t buf[64], pl[4] = { 9, 9, 9, 9 };
	struct roce_l3 l3, v;
	struct roce_pkt p, q;
	size_t n;
	uint32_t c;

	for (int fam = 0; fam < 2; fam++) {
		l3_init(&l3, fam ? AF_INET6 : AF_INET);
		fill_pkt(&p, ROCE_RC_SEND_ONLY, pl, 4);
		n = roce_build(buf, sizeof(buf), &p, &l3);
		c = roce_icrc(&l3, buf, n);
		v = l3;
		v.tos = 0xB9;
		v.ttl = 3;
		v.flow_label = 0x12345;
		memset(v.src_mac, 0xEE, 6);
		assert_int_equal(roce_icrc(&v, buf, n), c);
		buf[4] ^= 0xC0;		/* FECN/BECN may be set in flight */
		assert_int_equal(roce_icrc(&l3, buf, n), c);
		assert_int_equal(roce_parse(buf, n, &l3, true, &q), 0);
		assert_true(q.fecn && !q.becn);
		v = l3;
		v.ip_id = 1;		/* covered in IPv4, absent in IPv6 */
		assert_int_equal(roce_icrc(&v, buf, n) != c, !fam);
		v = l3;
		v.dst[3] ^= 1;
		assert_int_not_equal(roce_icrc(&v, buf, n), c);
		v = l3;
		v.dport = 4792;
		assert_int_not_equal(roce_icrc(&v, buf, n), c);
		buf[5] ^= 1;		/* the QPN is covered */
		assert_int_not_equal(roce_icrc(&l3, buf, n), c);
	}
	assert_int_equal(roce_icrc(&l3, buf, 15), 0);
}

/*
 * RoCEv2 CNP captured on a Mellanox ConnectX-4 Lx: from Scapy's
 * test/contrib/roce.uts ("RoCE CNP captured on ConnectX-4 Lx"). A real
 * NIC computed this ICRC; note the IP ID 0x718c and TOS 0xc2.
 */
static const uint8_t cx4_cnp[74] =
	"\xe4\x1d\x2d\xab\x2b\xc2\x7c\xfe\x90\x64\x3b\x32\x08\x00\x45\xc2"
	"\x00\x3c\x71\x8c\x40\x00\x40\x11\x91\x61\x0a\x00\x11\x01\x0a\x00"
	"\x12\x01\x00\x00\x12\xb7\x00\x28\x00\x00\x81\x00\xff\xff\x40\x00"
	"\x01\x18\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x82\xfd\x00\x2a";

static void test_icrc_connectx4_capture(void **state)
{
	struct roce_l3 local, l3, z;
	struct roce_pkt q;
	const uint8_t *tp;
	size_t tlen;
	uint16_t id;
	uint8_t *f = dup_exact(cx4_cnp, sizeof(cx4_cnp));

	memset(&local, 0, sizeof(local));
	local.family = AF_INET;
	inet_pton(AF_INET, "10.0.18.1", local.dst);
	memcpy(local.dst_mac, cx4_cnp, 6);
	assert_int_equal(roce_frame_parse(f, sizeof(cx4_cnp), &local, &l3, &tp,
					  &tlen), 0);
	assert_int_equal(tlen, 32);
	assert_int_equal(l3.ip_id, 0x718c);
	assert_int_equal(l3.tos, 0xc2);
	assert_int_equal(l3.sport, 0);
	assert_int_equal(roce_icrc(&l3, tp, tlen), 0x2a00fd82);
	/* CNP (0x81) is not an RC opcode ERNIC parses, but the ICRC is good */
	assert_int_equal(roce_parse(tp, tlen, &l3, true, &q), ROCE_SYN_OPCODE);
	assert_true(q.becn);
	assert_int_equal(q.dqpn, 0x118);

	/* UDP mode cannot see the ID: it is recovered from the ICRC. */
	z = l3;
	z.ip_id = 0;
	assert_int_not_equal(roce_icrc(&z, tp, tlen), 0x2a00fd82);
	assert_true(roce_icrc_solve_ip_id(&z, tp, tlen, &id));
	assert_int_equal(id, 0x718c);
	/* a corrupt packet has no solution (here: a payload bit) */
	f[60] ^= 0x10;
	assert_false(roce_icrc_solve_ip_id(&z, tp, tlen, &id));
	assert_int_equal(roce_parse(tp, tlen, &l3, true, &q),
			 ROCE_SYN_OPCODE | ROCE_SYN_ICRC);
	free(f);
}

/*
 * Two more vectors from independent implementations:
 *  - Scapy's roce.uts "example UC packet" (UC SEND_ONLY, IPv4
 *    192.168.0.7 -> 192.168.0.7, ID 1144, TOS 1, 49152 -> 4791): Scapy
 *    computes ICRC bytes 78 f3 53 f3.
 *  - IPv6, computed with Python's zlib over hand-masked headers:
 *      import zlib, struct, socket
 *      tp = bytes.fromhex('1140ffff00000011001234561f000007')
 *      a = lambda s: socket.inet_pton(socket.AF_INET6, s)
 *      ip = struct.pack('!IHBB', 0x6fffffff, 28, 17, 0xff) \
 *           + a('fd00::1') + a('fd00::2')
 *      udp = struct.pack('!HHHH', 49152, 4791, 28, 0xffff)
 *      bth = tp[:4] + b'\xff' + tp[5:]
 *      zlib.crc32(b'\xff' * 8 + ip + udp + bth)   # 0x6c54e5df
 */
static void test_icrc_vectors(void **state)
{
	static const uint8_t uc[36] =
		"\x24\x60\xff\xff\x00\x00\x00\xd3\x00\xcf\x17\x10" /* BTH */
		"F0\x81\x8b\xe2\x89" "5\xd9\x0e\x9a\x95PT\x01\xbe\x88^P"
		"\0\0\x78\xf3\x53\xf3";		/* pad, ICRC */
	uint8_t buf[64];
	struct roce_l3 l3;
	struct roce_pkt p, q;
	size_t n;

	l3 = (struct roce_l3){ .family = AF_INET, .sport = 49152, .tos = 1,
			       .dport = ROCE_UDP_PORT, .ip_id = 1144 };
	inet_pton(AF_INET, "192.168.0.7", l3.src);
	inet_pton(AF_INET, "192.168.0.7", l3.dst);
	assert_int_equal(roce_icrc(&l3, uc, sizeof(uc)), 0xf353f378);

	l3_init(&l3, AF_INET6);
	l3.tos = 0x12;
	p = (struct roce_pkt){ .opcode = ROCE_RC_ACK, .migreq = true,
			       .pkey = 0xFFFF, .dqpn = 0x11, .psn = 0x123456,
			       .aeth_syndrome = ROCE_AETH_CREDIT_INVALID,
			       .aeth_msn = 7 };
	n = roce_build(buf, sizeof(buf), &p, &l3);
	assert_int_equal(n, 20);
	assert_memory_equal(buf, "\x11\x40\xff\xff\x00\x00\x00\x11"
			    "\x00\x12\x34\x56\x1f\x00\x00\x07"
			    "\xdf\xe5\x54\x6c", 20);
	assert_int_equal(roce_parse(buf, n, &l3, true, &q), 0);
}

/* ---- frames ---- */

static uint16_t g16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void s16(uint8_t *p, unsigned int v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t ip_csum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += g16(p + i);
	while (s >> 16)
		s = (s & 0xFFFF) + (s >> 16);
	return (uint16_t)~s;
}

static void fix_ip_csum(uint8_t *f)
{
	size_t ihl = (f[14] & 0xF) * 4u;

	s16(f + 24, 0);
	s16(f + 24, ip_csum(f + 14, ihl < 20 ? 20 : ihl));
}

/* A good frame: SEND_ONLY with 8 payload bytes. Returns its length. */
static size_t make_frame(uint8_t *f, size_t cap, struct roce_l3 *l3,
			 int family)
{
	uint8_t pl[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct roce_pkt p;
	size_t hl = roce_frame_hdr_len(family), tl;

	l3_init(l3, family);
	l3->ip_id = 0x1234;
	fill_pkt(&p, ROCE_RC_SEND_ONLY, pl, 8);
	tl = roce_build(f + hl, cap - hl, &p, l3);
	assert_int_not_equal(tl, 0);
	return roce_frame_build(f, cap, l3, tl);
}

static uint32_t fparse(const uint8_t *f, size_t n, const struct roce_l3 *loc)
{
	struct roce_l3 l3;
	const uint8_t *tp;
	size_t tlen;
	uint8_t *c = dup_exact(f, n);
	uint32_t syn = roce_frame_parse(c, n, loc, &l3, &tp, &tlen);

	if (tp)
		assert_true(tp >= c && tp + tlen <= c + n);
	free(c);
	return syn;
}

static void test_frame_roundtrip(void **state)
{
	uint8_t f[256];
	struct roce_l3 l3, local, got;
	struct roce_pkt q;
	const uint8_t *tp;
	size_t n, tlen;

	for (int fam = 0; fam < 2; fam++) {
		int family = fam ? AF_INET6 : AF_INET;

		n = make_frame(f, sizeof(f), &l3, family);
		assert_int_equal(n, roce_frame_hdr_len(family) + 12 + 8 + 4);
		local_of(&l3, &local);
		assert_int_equal(roce_frame_parse(f, n, &local, &got, &tp,
						  &tlen), 0);
		assert_int_equal(got.family, family);
		assert_memory_equal(got.src, l3.src, 16);
		assert_memory_equal(got.dst, l3.dst, 16);
		assert_memory_equal(got.src_mac, mac_a, 6);
		assert_memory_equal(got.dst_mac, mac_b, 6);
		assert_true(got.sport == 49152 && got.dport == ROCE_UDP_PORT &&
			    got.tos == 0x02 && got.ttl == 64);
		assert_int_equal(got.ip_id, fam ? 0 : 0x1234);
		assert_int_equal(got.flow_label, fam ? 0xABCDE : 0);
		assert_int_equal(tlen, 24);
		assert_int_equal(roce_parse(tp, tlen, &got, true, &q), 0);
		/* Ethernet padding after the datagram is ignored */
		memset(f + n, 0, 16);
		assert_int_equal(fparse(f, n + 16, &local), 0);
		if (family == AF_INET) {
			assert_int_equal(g16(f + 12), 0x0800);
			assert_int_equal(ip_csum(f + 14, 20), 0);
			assert_int_equal(g16(f + 20), 0x4000);	/* DF */
			assert_int_equal(g16(f + 40), 0);	/* no UDP csum */
		} else {	/* UDP checksum over the pseudo header */
			uint8_t ph[256] = { 0 };

			assert_int_equal(g16(f + 12), 0x86DD);
			memcpy(ph, f + 22, 32);
			s16(ph + 34, n - 54);
			ph[39] = 17;
			memcpy(ph + 40, f + 54, n - 54);
			assert_int_equal(ip_csum(ph, 40 + n - 54), 0);
		}
	}
	/* TTL 0 is never sent */
	l3.ttl = 0;
	n = make_frame(f, sizeof(f), &l3, AF_INET);
	l3.ttl = 0;
	assert_int_equal(roce_frame_build(f, sizeof(f), &l3, n - 42), n);
	assert_int_equal(f[22], 64);
	/* build limits */
	assert_int_equal(roce_frame_build(f, 41, &l3, 0), 0);
	assert_int_equal(roce_frame_build(f, sizeof(f), &l3, sizeof(f) - 41),
			 0);
	l3.family = AF_UNIX;
	assert_int_equal(roce_frame_build(f, sizeof(f), &l3, 0), 0);
	assert_int_equal(roce_frame_hdr_len(AF_UNIX), 0);
	assert_int_equal(roce_frame_hdr_len(AF_INET), 42);
	assert_int_equal(roce_frame_hdr_len(AF_INET6), 62);
}

static void test_frame_not_ours(void **state)
{
	uint8_t f[256], g[256];
	struct roce_l3 l3, local, lo;
	size_t n;

	n = make_frame(f, sizeof(f), &l3, AF_INET);
	local_of(&l3, &local);

	/* other L2 / L3 / L4 protocols */
	memcpy(g, f, n);
	s16(g + 12, 0x0806);			/* ARP */
	assert_int_equal(fparse(g, n, &local), ROCE_NOT_ROCE);
	s16(g + 12, 0x8100);			/* VLAN tag */
	assert_int_equal(fparse(g, n, &local), ROCE_NOT_ROCE);
	memcpy(g, f, n);
	g[23] = 6;				/* TCP */
	assert_int_equal(fparse(g, n, &local), ROCE_NOT_ROCE);
	memcpy(g, f, n);
	s16(g + 36, 4792);			/* other UDP port */
	assert_int_equal(fparse(g, n, &local), ROCE_NOT_ROCE);

	/* another host's RoCE traffic: neither our MAC nor our IP */
	memcpy(g, f, n);
	g[5] ^= 1;
	g[33] ^= 1;
	assert_int_equal(fparse(g, n, &local), ROCE_NOT_ROCE);
	/* the other family, not to our MAC */
	memset(&lo, 0, sizeof(lo));
	lo.family = AF_INET6;
	memcpy(lo.dst, l3.dst, 4);
	memcpy(lo.dst_mac, mac_a, 6);
	assert_int_equal(fparse(f, n, &lo), ROCE_NOT_ROCE);

	/* loopback (zero MACs): only the IP decides */
	memset(&lo, 0, sizeof(lo));
	lo.family = AF_INET;
	inet_pton(AF_INET, "127.0.0.3", lo.dst);
	memcpy(g, f, n);
	memset(g, 0, 12);
	assert_int_equal(fparse(g, n, &lo), ROCE_NOT_ROCE);
	memcpy(g + 30, lo.dst, 4);
	fix_ip_csum(g);
	assert_int_equal(fparse(g, n, &lo), 0);

	/* every truncation: not ours until the ports show, then IP_LEN */
	for (int family = AF_INET; family; family = family == AF_INET ?
	     AF_INET6 : 0) {
		n = make_frame(f, sizeof(f), &l3, family);
		local_of(&l3, &local);
		for (size_t t = 0; t < n; t++)
			assert_int_equal(fparse(f, t, &local),
					 t < roce_frame_hdr_len(family) ?
					 ROCE_NOT_ROCE : ROCE_SYN_IP_LEN);
	}
}

static void test_frame_syndromes_v4(void **state)
{
	uint8_t f[256], g[256];
	struct roce_l3 l3, local, v6;
	size_t n;

	n = make_frame(f, sizeof(f), &l3, AF_INET);
	local_of(&l3, &local);
#define CASE(expect, stmts) do { memcpy(g, f, n); stmts; \
	assert_int_equal(fparse(g, n, &local), (expect)); } while (0)
	/* 0: our IP, another MAC (stale neighbour at the peer) */
	CASE(ROCE_SYN_MAC_DST, g[0] = 0xFF);
	/* 8: our MAC, another IP */
	CASE(ROCE_SYN_IP_DST, g[33] ^= 1; fix_ip_csum(g));
	/* 2: version field */
	CASE(ROCE_SYN_IP_VERSION, g[14] = 0x65; fix_ip_csum(g));
	/* 3: options (skipped to find UDP) and a too-short IHL */
	memcpy(g, f, n);
	memmove(g + 38, g + 34, n - 34);
	memset(g + 34, 1, 4);			/* 4 NOPs */
	g[14] = 0x46;
	s16(g + 16, g16(g + 16) + 4);
	fix_ip_csum(g);
	assert_int_equal(fparse(g, n + 4, &local), ROCE_SYN_IPV4_HDR_LEN);
	CASE(ROCE_SYN_IPV4_HDR_LEN, g[14] = 0x44);
	/* 5: flags other than DF alone; 6: fragment offset */
	CASE(ROCE_SYN_IPV4_FLAGS, s16(g + 20, 0x6000); fix_ip_csum(g));
	CASE(ROCE_SYN_IPV4_FLAGS, s16(g + 20, 0x0000); fix_ip_csum(g));
	CASE(ROCE_SYN_IPV4_FLAGS, s16(g + 20, 0xC000); fix_ip_csum(g));
	CASE(ROCE_SYN_IPV4_FRAG, s16(g + 20, 0x4001); fix_ip_csum(g));
	/* 9: header checksum */
	CASE(ROCE_SYN_IPV4_CSUM, g[25] ^= 0x20);
	/* 10: IP length beyond the frame, or below IP + UDP headers */
	CASE(ROCE_SYN_IP_LEN, s16(g + 16, n - 14 + 1); fix_ip_csum(g));
	CASE(ROCE_SYN_IP_LEN, s16(g + 16, 27); fix_ip_csum(g));
	/* 12: UDP length != IP payload */
	CASE(ROCE_SYN_UDP_LEN, s16(g + 38, g16(g + 38) - 4));
	CASE(ROCE_SYN_UDP_LEN, s16(g + 38, g16(g + 38) + 4));
	CASE(ROCE_SYN_UDP_LEN, s16(g + 38, 0));
	/* a shorter but consistent datagram is fine at this layer */
	CASE(0, s16(g + 16, g16(g + 16) - 4); s16(g + 38, g16(g + 38) - 4);
	     fix_ip_csum(g));
	/* several at once */
	CASE(ROCE_SYN_MAC_DST | ROCE_SYN_IPV4_FRAG | ROCE_SYN_IPV4_CSUM |
	     ROCE_SYN_UDP_LEN,
	     g[0] = 0xFF; g[21] = 9; s16(g + 38, 9));
#undef CASE
	/* 2: the other family sent to our MAC */
	memset(&v6, 0, sizeof(v6));
	v6.family = AF_INET6;
	inet_pton(AF_INET6, "fd00::2", v6.dst);
	memcpy(v6.dst_mac, mac_b, 6);
	assert_int_equal(fparse(f, n, &v6), ROCE_SYN_IP_VERSION);
}

static void test_frame_syndromes_v6(void **state)
{
	uint8_t f[256], g[256];
	struct roce_l3 l3, local, v4;
	size_t n;

	n = make_frame(f, sizeof(f), &l3, AF_INET6);
	local_of(&l3, &local);
#define CASE(expect, stmts) do { memcpy(g, f, n); stmts; \
	assert_int_equal(fparse(g, n, &local), (expect)); } while (0)
	CASE(ROCE_SYN_MAC_DST, g[0] = 0x33);	/* multicast MAC */
	CASE(ROCE_SYN_IP_DST, g[53] ^= 1);
	CASE(ROCE_SYN_IP_VERSION, g[14] = (uint8_t)(0x40 | (g[14] & 0xF)));
	CASE(ROCE_SYN_IP_LEN, s16(g + 18, n - 54 + 1));
	CASE(ROCE_SYN_IP_LEN, s16(g + 18, 7));
	CASE(ROCE_SYN_UDP_LEN, s16(g + 58, g16(g + 58) + 4));
	CASE(ROCE_NOT_ROCE, g[20] = 0);		/* hop-by-hop ext header */
	/* the UDP checksum is left to the ICRC */
	CASE(0, g[60] ^= 0xFF);
#undef CASE
	memset(&v4, 0, sizeof(v4));
	v4.family = AF_INET;
	memcpy(v4.dst_mac, mac_b, 6);
	assert_int_equal(fparse(f, n, &v4), ROCE_SYN_IP_VERSION);
}

/* Random damage to good frames and packets: no crash, no overread. */
static void test_fuzz(void **state)
{
	uint8_t f[256];
	struct roce_l3 l3, local;
	struct roce_pkt q;
	uint32_t seed = 12345, syn;
	const uint8_t *tp;
	size_t n, tlen;

	for (int it = 0; it < 20000; it++) {
		uint8_t *c;

		n = make_frame(f, sizeof(f), &l3, it & 1 ? AF_INET6 : AF_INET);
		local_of(&l3, &local);
		for (int k = 0; k <= it % 4; k++) {
			seed = seed * 1103515245u + 12345u;
			f[(seed >> 8) % n] ^= (uint8_t)(seed >> 20 | 1);
		}
		seed = seed * 1103515245u + 12345u;
		if (it % 3 == 0)
			n = (seed >> 8) % (n + 1);
		c = dup_exact(f, n);
		syn = roce_frame_parse(c, n, &local, &l3, &tp, &tlen);
		if (syn != ROCE_NOT_ROCE && tp) {
			assert_true(tp + tlen <= c + n);
			(void)roce_parse(tp, tlen, &l3, true, &q);
			if (q.payload_len)
				assert_true(q.payload + q.payload_len <=
					    tp + tlen);
		}
		free(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opcode_table),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_build_rejects),
		cmocka_unit_test(test_parse_lengths),
		cmocka_unit_test(test_parse_bth_checks),
		cmocka_unit_test(test_icrc_masking),
		cmocka_unit_test(test_icrc_connectx4_capture),
		cmocka_unit_test(test_icrc_vectors),
		cmocka_unit_test(test_frame_roundtrip),
		cmocka_unit_test(test_frame_not_ours),
		cmocka_unit_test(test_frame_syndromes_v4),
		cmocka_unit_test(test_frame_syndromes_v6),
		cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
