// SPDX-License-Identifier: MIT
/*
 * SO_REUSEPORT steering by BTH destination QP (model/wire_steer.c) on real
 * UDP sockets: sockets of one reuseport group on 127.0.0.9 and on ::1, a
 * sender that writes BTHs; each datagram must reach the socket registered
 * for its destination QP, a QP with no socket and a runt must still be
 * delivered (to some socket of the group), and a closed socket's QPs fall
 * back the same way. The group is joined twice, once by the map's id, as
 * a second process joins it. On QP1, CM MADs go by a REQ's service ID
 * and by the tag in the remote communication ID, the rest to QP1's owner.
 * Needs root (eBPF): exit 77 otherwise.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "ibta.h"
#include "wire_steer.h"

#define PORT 48791	/* not 4791: devices of other tests may be up */
#define NSOCK 3

struct grp {
	int family;
	int fd[NSOCK];
	struct ernic_steer st[NSOCK];
	int tx;
	struct sockaddr_storage to;
	socklen_t tolen;
	uint32_t tag;		/* of the last datagram send_mad sent */
};

static void sa(struct sockaddr_storage *ss, socklen_t *len, int family,
	       uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		inet_pton(AF_INET, "127.0.0.9", &s->sin_addr);
		*len = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		s->sin6_addr = in6addr_loopback;
		*len = sizeof(*s);
	}
}

static int member(int family)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1;
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one,
				    sizeof(one)), 0);
	if (family == AF_INET6)
		assert_int_equal(setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY,
					    &one, sizeof(one)), 0);
	sa(&ss, &len, family, PORT);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	return fd;
}

static void grp_up(struct grp *g, int family)
{
	char err[1536];

	g->family = family;
	for (int k = 0; k < NSOCK; k++)
		g->fd[k] = member(family);
	/* the first makes the map and program, the others join by id */
	if (ernic_steer_open(&g->st[0], g->fd[0], NULL, err, sizeof(err)))
		fail_msg("%s", err);
	for (int k = 1; k < NSOCK; k++)
		if (ernic_steer_open(&g->st[k], g->fd[k], &g->st[0].ids,
				     err, sizeof(err)))
			fail_msg("%s", err);
	/* socket k is process slot 10 + k's */
	for (int k = 0; k < NSOCK; k++)
		assert_int_equal(ernic_steer_member(&g->st[k], 10 + (uint32_t)k,
						    g->fd[k]), 0);
	g->tx = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(g->tx >= 0);
	sa(&g->to, &g->tolen, family, PORT);
	g->tag = 0x10000;
}

/* A new sender, so a new source port: the kernel's hash choice changes
 * (a packet left to it lands on another socket, some rounds). */
static void new_tx(struct grp *g)
{
	close(g->tx);
	g->tx = socket(g->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(g->tx >= 0);
}

static void grp_down(struct grp *g)
{
	for (int k = 0; k < NSOCK; k++) {
		ernic_steer_close(&g->st[k]);
		if (g->fd[k] >= 0)
			close(g->fd[k]);
	}
	close(g->tx);
}

/* A datagram with a BTH for destination QP qpn (len 0: a runt) and a tag
 * that names it. */
static void send_to_qp(struct grp *g, uint32_t qpn, uint32_t tag, int len)
{
	/* byte 4 (FECN, BECN, reserved) is not part of the QP */
	uint8_t b[16] = { 0x04 /* RC SEND ONLY */, 0, 0xFF, 0xFF, 0xFF };

	b[5] = (uint8_t)(qpn >> 16);
	b[6] = (uint8_t)(qpn >> 8);
	b[7] = (uint8_t)qpn;
	memcpy(b + 12, &tag, 4);
	assert_int_equal(sendto(g->tx, b, (size_t)len, 0,
				(struct sockaddr *)&g->to, g->tolen), len);
}

/* Which socket got the datagram tagged tag (-1: none within 1 s). */
static int who_got(struct grp *g, uint32_t tag)
{
	struct pollfd p[NSOCK];

	for (int tries = 0; tries < 100; tries++) {
		for (int k = 0; k < NSOCK; k++)
			p[k] = (struct pollfd){ .fd = g->fd[k],
						.events = POLLIN };
		if (poll(p, NSOCK, 10) <= 0)
			continue;
		for (int k = 0; k < NSOCK; k++) {
			uint8_t b[64];
			uint32_t t;
			ssize_t n;

			if (!(p[k].revents & POLLIN))
				continue;
			n = recv(g->fd[k], b, sizeof(b), 0);
			assert_true(n >= 0);
			if (n < 16)	/* a runt: tagged by its length */
				return n == (ssize_t)(tag & 0xF) ? k : -2;
			memcpy(&t, b + 12, 4);
			assert_int_equal(t, tag);
			return k;
		}
	}
	return -1;
}

/* IBTA names, short */
#define CM IB_MGMT_CLASS_CM
#define REQ IB_CM_ATTR_REQ
#define REP IB_CM_ATTR_REP
#define DREQ IB_CM_ATTR_DREQ
#define DREP IB_CM_ATTR_DREP
#define MAD_SIZE IB_MAD_SIZE
#define TAG(sock) ERNIC_STEER_COMM_TAG(10 + (sock))

/*
 * A datagram to QP qpn (1: QP1): BTH, DETH (its Q_Key the tag who_got
 * checks), the first mad_len bytes of a MAD of class cls and attribute
 * attr, and an ICRC when the MAD is whole. A CM REQ carries v as its
 * service ID, anything else v as the top byte of the remote
 * communication ID. Which socket got it.
 */
static int mad_to(struct grp *g, uint8_t qpn, uint8_t cls, uint16_t attr,
		  uint64_t v, size_t mad_len)
{
	uint8_t b[12 + 8 + MAD_SIZE + 4] = { 0x64 /* UD SEND ONLY */, 0,
					     0xFF, 0xFF, 0xFF, 0, 0, qpn };
	uint8_t *mad = b + 20;
	uint64_t sid = htobe64(v);
	size_t len = 20 + mad_len + (mad_len == MAD_SIZE ? 4 : 0);
	uint32_t tag = ++g->tag;

	memcpy(b + 12, &tag, 4);
	mad[0] = 1;			/* base version */
	mad[1] = cls;
	mad[2] = 2;			/* class version */
	mad[3] = 0x03;			/* Send */
	mad[16] = (uint8_t)(attr >> 8);
	mad[17] = (uint8_t)attr;
	memcpy(mad + 24, "\x5A\x11\x22\x33", 4);	/* local comm ID */
	if (attr == REQ && cls == CM)
		memcpy(mad + 32, &sid, 8);
	else
		memcpy(mad + 28, (uint8_t[]){ (uint8_t)v, 0x12, 0x34, 0x56 },
		       4);
	assert_int_equal(sendto(g->tx, b, len, 0, (struct sockaddr *)&g->to,
				g->tolen), (ssize_t)len);
	return who_got(g, tag);
}

struct mad_case {
	uint8_t qpn, cls;
	uint16_t attr;
	uint64_t v;
	size_t mad_len;
	int sock;		/* -1: any but the closed socket 2 */
};

/* Each case, from new source ports round after round. */
static void mads(struct grp *g, const struct mad_case *c, size_t n)
{
	for (int r = 0; r < 20; r++) {
		new_tx(g);
		for (size_t k = 0; k < n; k++) {
			int got = mad_to(g, c[k].qpn, c[k].cls, c[k].attr,
					 c[k].v, c[k].mad_len);

			if (c[k].sock >= 0 ? got != c[k].sock :
					     got < 0 || got == 2)
				fail_msg("case %zu (QP %u class 0x%x attr 0x%x"
					 " v 0x%" PRIx64 " MAD %zu): socket %d,"
					 " want %d", k, c[k].qpn, c[k].cls,
					 c[k].attr, c[k].v, c[k].mad_len, got,
					 c[k].sock);
		}
	}
}

#define SID_A 0x0000000001064791ull	/* RDMA_PS_TCP, port 0x4791 */
#define SID_B 0x1000000000000010ull
#define SID_C 0x0000000001060001ull	/* nobody's */

static void run_qp1(int family)
{
	static const struct mad_case live[] = {
		{ 1, CM, REQ, SID_A, MAD_SIZE, 2 },	/* by service */
		{ 1, CM, REQ, SID_B, MAD_SIZE, 1 },	/* set by a joiner */
		{ 1, CM, REQ, SID_C, MAD_SIZE, 0 },	/* QP1's owner */
		{ 1, CM, REP, TAG(1), MAD_SIZE, 1 },	/* by tag */
		{ 1, CM, DREQ, TAG(1), MAD_SIZE, 1 },
		{ 1, CM, DREP, TAG(1), MAD_SIZE, 1 },
		{ 1, CM, REP, TAG(2), MAD_SIZE, 2 },
		{ 1, CM, DREP, 0, MAD_SIZE, 0 },	/* untagged */
		{ 1, 0x01, REP, TAG(1), MAD_SIZE, 0 },	/* not CM */
		{ 1, 0x01, REQ, TAG(2), MAD_SIZE, 0 },
		{ 1, CM, REP, TAG(1), 12, 0 },		/* cut short */
		{ 1, CM, REP, TAG(1), 39, 0 },
		{ 1, CM, REP, TAG(1), 40, 1 },		/* just enough */
		{ 2, CM, REQ, SID_A, MAD_SIZE, 1 },	/* QP 2's owner */
		{ 2, CM, REP, TAG(2), MAD_SIZE, 1 },
	};
	static const struct mad_case cleared[] = {
		{ 1, CM, REQ, SID_A, MAD_SIZE, 0 },
		{ 1, CM, REQ, SID_B, MAD_SIZE, 1 },
	};
	/* socket 2 closed: its tag and service to the kernel's choice */
	static const struct mad_case closed[] = {
		{ 1, CM, REQ, SID_A, MAD_SIZE, -1 },
		{ 1, CM, REP, TAG(2), MAD_SIZE, -1 },
		{ 1, CM, DREQ, TAG(200), MAD_SIZE, -1 }, /* nobody's */
		{ 1, CM, REP, TAG(1), MAD_SIZE, 1 },
		{ 1, CM, REQ, SID_C, MAD_SIZE, 0 },
	};
	struct grp g;

	grp_up(&g, family);
	assert_int_equal(ernic_steer_set(&g.st[0], 1, 10), 0);
	assert_int_equal(ernic_steer_set(&g.st[1], 2, 11), 0);
	assert_int_equal(ernic_steer_service_set(&g.st[0], SID_A, 12), 0);
	assert_int_equal(ernic_steer_service_set(&g.st[1], SID_B, 11), 0);
	assert_int_equal(ernic_steer_service_set(&g.st[0], SID_C,
						 ERNIC_STEER_SLOTS), EINVAL);
	mads(&g, live, sizeof(live) / sizeof(live[0]));
	assert_int_equal(ernic_steer_service_clear(&g.st[2], SID_A), 0);
	assert_int_equal(ernic_steer_service_clear(&g.st[2], SID_A), 0);
	mads(&g, cleared, sizeof(cleared) / sizeof(cleared[0]));
	assert_int_equal(ernic_steer_service_set(&g.st[0], SID_A, 12), 0);
	close(g.fd[2]);
	ernic_steer_close(&g.st[2]);
	g.fd[2] = -1;
	mads(&g, closed, sizeof(closed) / sizeof(closed[0]));
	grp_down(&g);
}

static void run(int family)
{
	struct grp g;
	uint32_t tag = 0x100;

	grp_up(&g, family);
	/* QP 2 and 7 to socket 1, QP 3 to socket 2, QP1 to socket 0 */
	assert_int_equal(ernic_steer_set(&g.st[1], 2, 11), 0);
	assert_int_equal(ernic_steer_set(&g.st[2], 7, 11), 0);
	assert_int_equal(ernic_steer_set(&g.st[2], 3, 12), 0);
	assert_int_equal(ernic_steer_set(&g.st[0], 1, 10), 0);
	assert_int_equal(ernic_steer_set(&g.st[0], ERNIC_STEER_QPS, 10),
			 EINVAL);
	assert_int_equal(ernic_steer_set(&g.st[0], 4, ERNIC_STEER_SLOTS),
			 EINVAL);
	assert_int_equal(ernic_steer_member(&g.st[0], ERNIC_STEER_SLOTS,
					    g.fd[0]), EINVAL);
	/* one slot per socket */
	assert_int_equal(ernic_steer_member(&g.st[0], 20, g.fd[0]), EBUSY);
	for (int r = 0; r < 50; r++) {
		static const struct {
			uint32_t qpn;
			int sock;
		} want[] = { { 2, 1 }, { 7, 1 }, { 3, 2 }, { 1, 0 },
			     /* the QP field's top byte is not the QP */
			     { 0xAB0003, -1 } };

		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
			int got;

			send_to_qp(&g, want[k].qpn, ++tag, 16);
			got = who_got(&g, tag);
			if (want[k].sock >= 0 && got != want[k].sock)
				fail_msg("QP 0x%x: socket %d, want %d",
					 want[k].qpn, got, want[k].sock);
			/* 24 bits: QP 0xAB0003 is no QP we have: any */
			if (want[k].sock < 0)
				assert_true(got >= 0);
		}
	}
	/* Unknown QPs and runts: delivered, to the kernel's choice. */
	for (uint32_t q = 20; q < 40; q++) {
		send_to_qp(&g, q, ++tag, 16);
		assert_true(who_got(&g, tag) >= 0);
	}
	send_to_qp(&g, 2, 0x5, 5);
	assert_true(who_got(&g, 0x5) >= 0);
	/* Cleared, and closed: QP 3 and then QP 2 go to whoever. */
	assert_int_equal(ernic_steer_clear(&g.st[0], 3), 0);
	assert_int_equal(ernic_steer_clear(&g.st[0], 3), 0);
	close(g.fd[1]);
	ernic_steer_close(&g.st[1]);
	g.fd[1] = -1;
	for (int r = 0; r < 20; r++) {
		int got;

		send_to_qp(&g, 2, ++tag, 16);
		got = who_got(&g, tag);
		assert_true(got == 0 || got == 2);
		send_to_qp(&g, 1, ++tag, 16);
		assert_int_equal(who_got(&g, tag), 0);
	}
	grp_down(&g);
}

static void test_ipv4(void **state)
{
	(void)state;
	run(AF_INET);
}

static void test_ipv6(void **state)
{
	(void)state;
	run(AF_INET6);
}

static void test_qp1_ipv4(void **state)
{
	(void)state;
	run_qp1(AF_INET);
}

static void test_qp1_ipv6(void **state)
{
	(void)state;
	run_qp1(AF_INET6);
}

/* ERNIC_STEER_SERVICES services; one more is ENOSPC, not the kernel's
 * E2BIG, while a service already there can still move. */
static void test_services_full(void **state)
{
	const uint64_t base = 0x0000000001060000ull;
	struct grp g;

	(void)state;
	grp_up(&g, AF_INET);
	for (uint64_t k = 0; k < ERNIC_STEER_SERVICES; k++)
		assert_int_equal(ernic_steer_service_set(&g.st[k % NSOCK],
							 base + k, 10), 0);
	assert_int_equal(ernic_steer_service_set(&g.st[0], base - 1, 10),
			 ENOSPC);
	assert_int_equal(ernic_steer_service_set(&g.st[1], base, 11), 0);
	assert_int_equal(ernic_steer_service_clear(&g.st[2], base - 1), 0);
	assert_int_equal(ernic_steer_service_clear(&g.st[2], base + 1), 0);
	assert_int_equal(ernic_steer_service_set(&g.st[0], base - 1, 10), 0);
	grp_down(&g);
}

/* A map id nobody has: a clear error. */
static void test_bad_join(void **state)
{
	const struct ernic_steer_ids ids = { 0x7FFFFFF0, 0x7FFFFFF1,
					     0x7FFFFFF2 };
	struct ernic_steer st;
	char err[256];
	int fd = member(AF_INET);

	(void)state;
	assert_int_equal(ernic_steer_open(&st, fd, &ids, err, sizeof(err)),
			 ENOENT);
	assert_non_null(strstr(err, "steering map 2147483632"));
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_qp1_ipv4),
		cmocka_unit_test(test_qp1_ipv6),
		cmocka_unit_test(test_services_full),
		cmocka_unit_test(test_bad_join),
	};

	if (geteuid() != 0) {
		printf("SKIP: needs root (eBPF steering program)\n");
		return 77;
	}
	return cmocka_run_group_tests_name("steer", tests, NULL, NULL);
}
