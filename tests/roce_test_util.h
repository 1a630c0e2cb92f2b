/* SPDX-License-Identifier: MIT */
/*
 * What test_roce_pkt.c (transport packets) and test_roce_frame.c
 * (Ethernet/IP/UDP frames) share: the two MACs, an IPv4/IPv6 envelope,
 * a packet with every header field set, and exact-length copies.
 */
#ifndef ROCE_TEST_UTIL_H
#define ROCE_TEST_UTIL_H

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

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0A };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0x0B };

static inline void l3_init(struct roce_l3 *l3, int family)
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

static inline uint8_t *dup_exact(const uint8_t *p, size_t n)
{
	uint8_t *q = malloc(n ? n : 1);

	assert_non_null(q);
	if (n)
		memcpy(q, p, n);
	return q;
}

static inline void fill_pkt(struct roce_pkt *p, uint8_t op,
			    const uint8_t *pl, uint32_t len)
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

#endif /* ROCE_TEST_UTIL_H */
