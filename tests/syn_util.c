// SPDX-License-Identifier: MIT
/* Shared by syn_rows and syn_frame (syn_util.h). */
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "syn_util.h"

void syn_stats(const char *dev, struct syn_stats *s)
{
	const char *ctl = getenv("ERNICCTL");
	char cmd[512], line[512];
	unsigned int b, q, c;
	uint64_t n, k;
	int off;
	FILE *f;

	assert_non_null(ctl);
	memset(s, 0, sizeof(*s));
	snprintf(cmd, sizeof(cmd), "'%s' stats '%s'", ctl, dev);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "syndrome %u %" SCNu64, &b, &n) == 2 &&
		    b < ERNIC_SYNDROME_BITS)
			s->syn[b] = n;
		else if (sscanf(line, "fatal-code %x %" SCNu64, &c, &n) == 2 &&
			 c < ERNIC_FATAL_CODES)
			s->fatal[c] = n;
		else if (sscanf(line, "ipkterrq %" SCNu64 " qp %u code %x %n",
				&k, &q, &c, &off) == 3) {
			s->last_qp = q;
			s->last_code = c;
			snprintf(s->last_text, sizeof(s->last_text), "%s",
				 line + off);
		}
	}
	assert_int_equal(pclose(f), 0);
}

void syn_want(const char *dev, const struct syn_stats *before, uint32_t bit,
	      uint64_t want, int wait_ms)
{
	struct syn_stats now;

	for (int t = 0; t < wait_ms / 50; t++) {
		syn_stats(dev, &now);
		if (now.syn[bit] - before->syn[bit] >= want)
			break;
		usleep(50000);
	}
	usleep(100000);		/* anything more would show now */
	syn_stats(dev, &now);
	for (uint32_t b = 0; b < ERNIC_SYNDROME_BITS; b++)
		if (now.syn[b] - before->syn[b] != (b == bit ? want : 0))
			fail_msg("syndrome %u counted %" PRIu64 " times, not %"
				 PRIu64, b, now.syn[b] - before->syn[b],
				 b == bit ? want : 0);
}

bool syn_recv(int fd, const struct roce_l3 *l3, struct roce_pkt *pk, int ms)
{
	static uint8_t b[ROCE_MAX_TRANSPORT];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct roce_l3 from = *l3;
	ssize_t n;

	if (poll(&pfd, 1, ms) != 1)
		return false;
	n = recv(fd, b, sizeof(b), 0);
	assert_true(n > 0);
	memcpy(from.src, l3->dst, 4);
	memcpy(from.dst, l3->src, 4);
	assert_int_equal(roce_parse(b, (size_t)n, &from, false, pk), 0);
	return true;
}

void syn_no_answer(int fd, const struct roce_l3 *l3)
{
	struct roce_pkt pk;

	if (syn_recv(fd, l3, &pk, 300))
		fail_msg("unexpected %s PSN 0x%06x AETH 0x%02x",
			 roce_opcode_name(pk.opcode), pk.psn,
			 pk.aeth_syndrome);
}
