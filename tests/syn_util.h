/* SPDX-License-Identifier: MIT */
/*
 * What syn_rows and syn_frame share: a device's counts as `ernicctl
 * stats` prints them (syndromes by Table 2-3 bit, FATAL entries by
 * Table 2-4 code, the newest IPKTERRQ line), the check that one bit
 * moved by exactly so much, and the packets the device sends to a peer
 * the test plays on a UDP socket.
 */
#ifndef SYN_UTIL_H
#define SYN_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "ernic_syndrome.h"
#include "roce_pkt.h"

struct syn_stats {
	uint64_t syn[ERNIC_SYNDROME_BITS];
	uint64_t fatal[ERNIC_FATAL_CODES];
	uint32_t last_qp, last_code;	/* the newest IPKTERRQ line */
	char last_text[128];
};

/* `$ERNICCTL stats dev` into *s; fails the test if it cannot run. */
void syn_stats(const char *dev, struct syn_stats *s);

/* Wait (up to wait_ms) until bit has been counted want times more than
 * in before, and exactly that; fail if any other bit moved. */
void syn_want(const char *dev, const struct syn_stats *before, uint32_t bit,
	      uint64_t want, int wait_ms);

/* The next packet on UDP socket fd within ms, parsed as sent from l3's
 * destination to its source (IPv4), into *pk (its payload in a static
 * buffer); false if none came. */
bool syn_recv(int fd, const struct roce_l3 *l3, struct roce_pkt *pk, int ms);

/* Fail if a packet comes on fd within 300 ms. */
void syn_no_answer(int fd, const struct roce_l3 *l3);

#endif
