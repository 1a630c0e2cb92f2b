// SPDX-License-Identifier: MIT
/*
 * RoCEv2 codec, Ethernet/IP/UDP frames: build/parse round trips over
 * IPv4 and IPv6, what is not ours (other protocols, hosts, truncations),
 * the PG332 Table 2-3 frame checks, and random damage to good frames.
 * The transport packets inside them: test_roce_pkt.c.
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
#include "roce_test_util.h"

/* The receiving side's view of l3 (frame parse's `local`). */
static void local_of(const struct roce_l3 *l3, struct roce_l3 *local)
{
	*local = (struct roce_l3){ .family = l3->family };
	memcpy(local->dst, l3->dst, 16);
	memcpy(local->dst_mac, l3->dst_mac, 6);
}

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

/* One syndrome case of the two tests below: frame g is a copy of the good
 * frame f (n bytes) changed by stmts, and parses to expect. */
#define CASE(expect, stmts) do { memcpy(g, f, n); stmts; \
	assert_int_equal(fparse(g, n, &local), (expect)); } while (0)

static void test_frame_syndromes_v4(void **state)
{
	uint8_t f[256], g[256];
	struct roce_l3 l3, local, v6;
	size_t n;

	n = make_frame(f, sizeof(f), &l3, AF_INET);
	local_of(&l3, &local);
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
		cmocka_unit_test(test_frame_roundtrip),
		cmocka_unit_test(test_frame_not_ours),
		cmocka_unit_test(test_frame_syndromes_v4),
		cmocka_unit_test(test_frame_syndromes_v6),
		cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
