/* SPDX-License-Identifier: MIT */
/*
 * ernic_faultq's parts: packet surgery and copies (faultq_pkt.c), the
 * nftables queue rule (faultq_rule.c); the queue loop is ernic_faultq.c.
 */
#ifndef FAULTQ_H
#define FAULTQ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Copies carry this mark so the queue rule lets them by (--mark). */
#define FAULTQ_MARK_DEFAULT 0xfa17u

#define ROCE_PORT 4791
#define BTH_LEN 12
#define BTH_RESV8A 4	/* BTH byte the ICRC masks out */

/* ernic_faultq's options (faultq_opts.c); rates are probabilities. */
struct fq_opts {
	unsigned int queue;
	double drop, dup, reorder, delay, corrupt;	/* probabilities */
	unsigned int reorder_depth, reorder_ms, delay_ms;
	uint64_t seed;
	int have_seed;
	const char *stats, *ready, *log;
	unsigned int stats_ms, max_held;
	uint32_t mark;
	int keep_csum, die_with_parent, cpu;
};

void fq_usage(FILE *f);
/* Exits 2 with a message on any bad option or value. */
void fq_parse_opts(struct fq_opts *o, int argc, char **argv);
uint64_t fq_parse_u64(const char *opt, const char *s, uint64_t min,
		      uint64_t max);

/* Where the UDP datagram sits in an IP packet. */
struct fq_udp {
	int family;		/* AF_INET or AF_INET6 */
	size_t udp;		/* offset of the UDP header */
	size_t payload;		/* offset of the UDP payload (BTH) */
	size_t plen;		/* UDP payload bytes, ICRC included */
	uint16_t dport;
};

/* 0 for an unfragmented UDP datagram over IPv4 or IPv6, else -1. */
int fq_parse_udp(const uint8_t *pkt, size_t len, struct fq_udp *u);

/* Recompute the UDP checksum (an IPv4 checksum of 0, "none", stays). */
void fq_udp_fix_csum(uint8_t *pkt, const struct fq_udp *u);

/*
 * Flip one bit of the UDP payload chosen by rnd, never in the BTH byte
 * the ICRC does not cover. Sets *byte (payload offset) and *mask; -1
 * when there is no payload.
 */
int fq_flip_bit(uint8_t *pkt, const struct fq_udp *u, uint64_t rnd,
		size_t *byte, uint8_t *mask);

/* Raw sockets that send whole IP packets (the duplicates). */
struct fq_raw {
	int fd4, fd6;
};

int fq_raw_open(struct fq_raw *r, uint32_t mark, char *err, size_t errlen);
void fq_raw_close(struct fq_raw *r);
/* 0 or -errno; ifindex scopes link-local IPv6 destinations. */
int fq_raw_send(const struct fq_raw *r, const uint8_t *pkt, size_t len,
		uint32_t ifindex);

/* Append "queue to QUEUE" to FAMILY TABLE CHAIN; *how says which kind. */
int fq_add_queue_rule(const char *family, const char *table,
		      const char *chain, uint16_t queue, int bypass,
		      const char **how, char *err, size_t errlen);

#endif
