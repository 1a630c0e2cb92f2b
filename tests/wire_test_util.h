/* SPDX-License-Identifier: MIT */
/*
 * What the UDP-wire tests over real sockets share (test_wire_batch.c,
 * test_wire_split.c): a port opened on a loopback address with the
 * defaults, and a receive that waits.
 */
#ifndef WIRE_TEST_UTIL_H
#define WIRE_TEST_UTIL_H

#include <arpa/inet.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "ernic_conf.h"
#include "model_wire.h"

/* A UDP-wire port on addr (IPv4, lo); *sport (if given) is the UDP
 * source port it sends from. */
static inline struct model_wire *wire_open_udp(const char *addr,
					       uint16_t *sport)
{
	struct ernic_conf c;
	char err[256] = "";
	struct model_wire *w;

	ernic_conf_defaults(&c);
	c.family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, addr, c.addr), 1);
	c.wire = ERNIC_WIRE_UDP;
	strcpy(c.netdev, "lo");
	w = model_wire_open(&c, err, sizeof(err));
	if (!w)
		fail_msg("model_wire_open %s: %s", addr, err);
	if (sport)
		*sport = c.udp_sport;
	return w;
}

/* model_wire_recv, waiting up to 2 s for a packet: false when none came. */
static inline bool wire_recv_wait(struct model_wire *w, uint8_t *buf,
				  size_t cap, struct roce_l3 *l3,
				  const uint8_t **tp, size_t *tlen,
				  uint32_t *syn, int *chk)
{
	for (int spins = 0; spins < 2000; spins++) {
		struct pollfd pfd = { .fd = model_wire_fd(w), .events = POLLIN };
		int rc = model_wire_recv(w, buf, cap, l3, tp, tlen, syn, chk);

		assert_true(rc >= 0);
		if (rc)
			return true;
		poll(&pfd, 1, 1);
	}
	return false;
}

#endif
