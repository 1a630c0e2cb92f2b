// SPDX-License-Identifier: MIT
/*
 * Frame-mode steering (ernic_steer_frame_prog): the socket filters of
 * slots 10, 11 and 12 on three AF_PACKET sockets on lo, each of which
 * sees every frame. Datagrams to 127.0.0.1:4791 (also with IP options)
 * and [::1]:4791, and frames written on AF_PACKET (odd IHLs, not UDP),
 * must reach exactly the socket the steering names: a QP's owner, on
 * QP1 a CM REQ's service or a CM MAD's comm-ID tag, QP1's owner for what
 * names nobody; none for what is not RoCEv2 or names a slot with no
 * socket. In a netns of its own, so no other test's traffic is on its
 * lo. Needs root (eBPF, AF_PACKET, unshare): exit 77 otherwise.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <setjmp.h>
#include <cmocka.h>

#include "ibta.h"
#include "roce_pkt.h"
#include "wire_steer.h"

#define PORT 4791
#define NPK 3			/* AF_PACKET sockets: slots 10, 11, 12 */
#define SLOT0 10u
#define NOBODY (-1)

/* IBTA names, short */
#define CM IB_MGMT_CLASS_CM
#define REQ IB_CM_ATTR_REQ
#define REP IB_CM_ATTR_REP
#define DREQ IB_CM_ATTR_DREQ
#define DREP IB_CM_ATTR_DREP
#define MAD_SIZE IB_MAD_SIZE
#define TAG(slot) ERNIC_STEER_COMM_TAG(slot)

#define SID_A 0x0000000001064791ull	/* slot 12's */
#define SID_B 0x1000000000000010ull	/* slot 11's */
#define SID_C 0x0000000001060001ull	/* nobody's */

/* How a case's datagram goes out. */
enum how {
	V4,		/* UDP socket, 127.0.0.1 */
	V4_OPT,		/* UDP socket with IP options: IHL 6 */
	V6,		/* UDP socket, ::1 */
	RAW4,		/* frames written on AF_PACKET: ihl, proto, eth */
	RAW6,
};

struct fcase {
	const char *what;
	uint16_t port;		/* 0: 4791 */
	uint32_t qpn;		/* the top byte: BTH byte 4 */
	uint8_t cls;		/* 0: no MAD, a 16-byte BTH datagram */
	uint16_t attr;
	uint64_t v;		/* REQ: service ID; else comm-ID tag */
	size_t len;		/* MAD bytes (cls), else datagram (0: 16) */
	int want;		/* slot, or NOBODY */
	uint8_t ihl, proto;	/* RAW4 (0: 5, UDP; ihl 0x10: IHL 0) */
	uint16_t eth;		/* RAW*: the ethertype (0: IPv4's, IPv6's) */
	uint8_t dip;		/* RAW4: to 127.0.0.dip (0: .1) */
	uint8_t dmac;		/* RAW*: to MAC 02:00:00:00:00:dmac (0: 0s) */
};

static struct {
	struct ernic_steer st;
	int grp, hold6;		/* UDP 127.0.0.1:4791 (steering), [::1] */
	int pk[NPK];
	int tx4, tx4_opt, tx6, raw;
	int ifindex;
	uint32_t tag;
} T;

/* Our own netns with lo up (127.0.0.1 and ::1 come with it). */
static int own_netns(void)
{
	struct ifreq ifr = { 0 };
	int s, e;

	if (unshare(CLONE_NEWNET)) {
		e = errno;
		printf("%sunshare(CLONE_NEWNET): %s\n",
		       e == EPERM ? "SKIP: " : "", strerror(e));
		return e == EPERM ? 77 : 1;
	}
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	strcpy(ifr.ifr_name, "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr))
		return 1;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr))
		return 1;
	close(s);
	T.ifindex = (int)if_nametoindex("lo");
	return T.ifindex ? 0 : 1;
}

static socklen_t sa(struct sockaddr_storage *ss, int family, uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sizeof(*s);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	s6->sin6_addr = in6addr_loopback;
	return sizeof(*s6);
}

/* A UDP socket bound to the loopback address's 4791 (no ICMP back). */
static int udp_bound(int family)
{
	struct sockaddr_storage ss;
	socklen_t len = sa(&ss, family, PORT);
	int one = 1;
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one,
				    sizeof(one)), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	return fd;
}

/* Slot's program for frames addressed to local (NULL: any), on fd. */
static void attach_prog(int fd, uint32_t slot, const struct roce_l3 *local)
{
	char err[1536];
	int prog = ernic_steer_frame_prog(&T.st, slot, local, err, sizeof(err));

	if (prog < 0)
		fail_msg("%s", err);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_ATTACH_BPF, &prog,
				    sizeof(prog)), 0);
	close(prog);		/* the socket holds it */
}

/* Slot's AF_PACKET socket on lo, its filter attached before it binds. */
static int pk_open(uint32_t slot)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = T.ifindex };
	int one = 1;
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	attach_prog(fd, slot, NULL);
	/* lo's frames go out and come back in: see each once */
	assert_int_equal(setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING,
				    &one, sizeof(one)), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
	return fd;
}

static int setup(void **state)
{
	static const uint8_t opts[4] = { 1, 1, 1, 0 };	/* NOP x3, EOL */
	char err[1536];

	(void)state;
	T.grp = udp_bound(AF_INET);
	T.hold6 = udp_bound(AF_INET6);
	if (ernic_steer_open(&T.st, T.grp, NULL, err, sizeof(err)))
		fail_msg("%s", err);
	for (uint32_t k = 0; k < NPK; k++)
		T.pk[k] = pk_open(SLOT0 + k);
	T.tx4 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	T.tx4_opt = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	T.tx6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	T.raw = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	assert_true(T.tx4 >= 0 && T.tx4_opt >= 0 && T.tx6 >= 0 && T.raw >= 0);
	assert_int_equal(setsockopt(T.tx4_opt, IPPROTO_IP, IP_OPTIONS, opts,
				    sizeof(opts)), 0);
	/* QP1 to slot 10, QP 2 to 11, 3 to 12, 4 to 13 (no socket) */
	assert_int_equal(ernic_steer_set(&T.st, 1, 10), 0);
	assert_int_equal(ernic_steer_set(&T.st, 2, 11), 0);
	assert_int_equal(ernic_steer_set(&T.st, 3, 12), 0);
	assert_int_equal(ernic_steer_set(&T.st, 4, 13), 0);
	assert_int_equal(ernic_steer_service_set(&T.st, SID_A, 12), 0);
	assert_int_equal(ernic_steer_service_set(&T.st, SID_B, 11), 0);
	T.tag = 0xC0DE0000u;
	return 0;
}

static int teardown(void **state)
{
	const int fds[] = { T.pk[0], T.pk[1], T.pk[2], T.tx4, T.tx4_opt,
			    T.tx6, T.raw, T.grp, T.hold6 };

	(void)state;
	ernic_steer_close(&T.st);
	for (size_t k = 0; k < sizeof(fds) / sizeof(fds[0]); k++)
		close(fds[k]);
	return 0;
}

/* The UDP payload of case c, tagged tag in the BTH's first 4 bytes
 * (opcode .. P_Key: nothing the steering reads). */
static size_t payload(uint8_t *b, const struct fcase *c, uint32_t tag)
{
	size_t len = c->cls ? 20 + c->len + (c->len == MAD_SIZE ? 4 : 0) :
			      (c->len ? c->len : 16);
	uint8_t *mad = b + 20;

	memset(b, 0, 20 + MAD_SIZE + 4);
	for (int k = 0; k < 4; k++)	/* FECN, BECN, reserved; the QP */
		b[4 + k] = (uint8_t)(c->qpn >> (24 - 8 * k));
	if (c->cls) {
		uint64_t sid = htobe64(c->v);

		mad[0] = 1;			/* base version */
		mad[1] = c->cls;
		mad[2] = 2;			/* class version */
		mad[3] = 0x03;			/* Send */
		mad[16] = (uint8_t)(c->attr >> 8);
		mad[17] = (uint8_t)c->attr;
		memcpy(mad + 24, "\x5A\x11\x22\x33", 4);  /* local comm ID */
		if (c->attr == REQ && c->cls == CM)
			memcpy(mad + 32, &sid, 8);
		else
			memcpy(mad + 28, (uint8_t[]){ (uint8_t)c->v, 0x12,
						      0x34, 0x56 }, 4);
	}
	memcpy(b, &tag, 4);
	return len;
}

/* An Ethernet + IP + UDP frame around the payload, as lo carries it
 * (MACs 0); IPv4 of IHL c->ihl, though a header under 20 B is 20 long. */
static void send_raw(enum how how, const struct fcase *c, const uint8_t *pl,
		     size_t len)
{
	uint8_t f[14 + 60 + 8 + 20 + MAD_SIZE + 4] = { 0 };
	struct sockaddr_ll to = { .sll_family = AF_PACKET,
				  .sll_ifindex = T.ifindex, .sll_halen = 6 };
	uint8_t ihl = c->ihl ? c->ihl & 0xF : 5;
	size_t hl = how == RAW6 ? 40 : ihl < 5 ? 20 : 4u * ihl;
	size_t n = 14 + hl + 8 + len;
	uint8_t *ip = f + 14, *udp = ip + hl;
	uint16_t port = c->port ? c->port : PORT;
	uint16_t eth = c->eth ? c->eth : how == RAW6 ? ETH_P_IPV6 : ETH_P_IP;

	if (c->dmac) {
		f[0] = 0x02;
		f[5] = c->dmac;
	}
	f[12] = (uint8_t)(eth >> 8);
	f[13] = (uint8_t)eth;
	if (how == RAW6) {
		ip[0] = 0x60;
		ip[5] = (uint8_t)(8 + len);	/* payload length < 256 */
		ip[6] = c->proto ? c->proto : IPPROTO_UDP;
		ip[7] = 64;
		ip[23] = ip[39] = 1;		/* ::1 to ::1 */
	} else {
		ip[0] = (uint8_t)(0x40 | ihl);
		ip[2] = (uint8_t)((n - 14) >> 8);
		ip[3] = (uint8_t)(n - 14);
		ip[8] = 64;
		ip[9] = c->proto ? c->proto : IPPROTO_UDP;
		memcpy(ip + 12, "\x7F\0\0\x01\x7F\0\0\x01", 8);
		if (c->dip)
			ip[19] = c->dip;
	}
	udp[0] = 0xC0;			/* source port 49152 */
	udp[2] = (uint8_t)(port >> 8);
	udp[3] = (uint8_t)port;
	udp[4] = (uint8_t)((8 + len) >> 8);
	udp[5] = (uint8_t)(8 + len);
	memcpy(udp + 8, pl, len);
	assert_int_equal(sendto(T.raw, f, n, 0, (struct sockaddr *)&to,
				sizeof(to)), (ssize_t)n);
}

/* Read what every AF_PACKET socket has: got[k] frames with the tag; a
 * frame without it is a stray (an earlier case's, or a duplicate). */
static void drain(uint32_t tag, int got[NPK], int *stray)
{
	for (int k = 0; k < NPK; k++) {
		uint8_t f[2048];
		ssize_t n;

		while ((n = recv(T.pk[k], f, sizeof(f), 0)) >= 0) {
			if (memmem(f, (size_t)n, &tag, 4))
				got[k]++;
			else
				(*stray)++;
		}
		assert_int_equal(errno, EAGAIN);
	}
}

static void run_case(enum how how, const struct fcase *c)
{
	static const char *const hows[] = { "IPv4", "IPv4+options", "IPv6",
					    "raw IPv4", "raw IPv6" };
	uint8_t pl[20 + MAD_SIZE + 4];
	uint32_t tag = ++T.tag;
	size_t len = payload(pl, c, tag);
	int got[NPK] = { 0 }, stray = 0;

	if (how >= RAW4) {
		send_raw(how, c, pl, len);
	} else {
		struct sockaddr_storage ss;
		socklen_t sl = sa(&ss, how == V6 ? AF_INET6 : AF_INET,
				  c->port ? c->port : PORT);
		int fd = how == V4 ? T.tx4 : how == V6 ? T.tx6 : T.tx4_opt;

		assert_int_equal(sendto(fd, pl, len, 0, (struct sockaddr *)&ss,
					sl), (ssize_t)len);
	}
	/* lo delivers before sendto returns; poll some, for the slow */
	for (int w = 0; w < 10; w++) {
		struct pollfd p[NPK];
		int k;

		for (k = 0; k < NPK; k++)
			p[k] = (struct pollfd){ .fd = T.pk[k],
						.events = POLLIN };
		(void)poll(p, NPK, 10);
		drain(tag, got, &stray);
		for (k = 0; k < NPK; k++)
			if (got[k] != (c->want == (int)SLOT0 + k))
				break;
		if (k == NPK && w >= 2)
			break;
	}
	for (int k = 0; k < NPK; k++)
		if (stray || got[k] != (c->want == (int)SLOT0 + k))
			fail_msg("%s %s (QP 0x%x): slot %u's socket got %d "
				 "(want %d), %d stray frames", hows[how],
				 c->what, c->qpn, SLOT0 + (uint32_t)k, got[k],
				 c->want == (int)SLOT0 + k, stray);
}

static void run_cases(enum how how, const struct fcase *c, size_t n)
{
	for (size_t k = 0; k < n; k++)
		run_case(how, &c[k]);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
/* A BTH-only datagram to QP q; a MAD on QP q. */
#define Q(w, q, to) { .what = (w), .qpn = (q), .want = (to) }
#define MAD(w, q, c, a, val, l, to)                                      \
	{ .what = (w), .qpn = (q), .cls = (c), .attr = (a), .v = (val),    \
	  .len = (l), .want = (to) }

/* The same rules over IPv4 and IPv6. */
static const struct fcase rules[] = {
	Q("QP 2 (11's)", 2, 11),
	Q("QP 3 (12's)", 3, 12),
	Q("QP 2, byte 4 set", 0xFF000002, 11),
	Q("QP 0xAB0002 (24 bits)", 0xAB0002, 10),
	Q("QP 5 (nobody's): QP1's owner", 5, 10),
	Q("QP 300 (past the array)", 300, 10),
	Q("QP 4 (slot 13, no socket)", 4, NOBODY),
	{ .what = "runt (7 B) to QP 2", .qpn = 2, .len = 7, .want = 10 },
	Q("QP1, no MAD (10's)", 1, 10),
	MAD("CM REQ, service A (12's)", 1, CM, REQ, SID_A, MAD_SIZE, 12),
	MAD("CM REQ, service B (11's)", 1, CM, REQ, SID_B, MAD_SIZE, 11),
	MAD("CM REQ, service C (nobody's)", 1, CM, REQ, SID_C, MAD_SIZE, 10),
	MAD("CM DREQ, tag 11", 1, CM, DREQ, TAG(11), MAD_SIZE, 11),
	MAD("CM REP, tag 12", 1, CM, REP, TAG(12), MAD_SIZE, 12),
	MAD("CM DREP, untagged", 1, CM, DREP, 0, MAD_SIZE, 10),
	MAD("CM DREQ, tag 199 (no socket)", 1, CM, DREQ, TAG(199), MAD_SIZE,
	    NOBODY),
	MAD("class 0x01, tag 11", 1, 0x01, REP, TAG(11), MAD_SIZE, 10),
	MAD("CM REP tag 11, MAD cut at 39", 1, CM, REP, TAG(11), 39, 10),
	MAD("CM REP tag 11, MAD of 40", 1, CM, REP, TAG(11), 40, 11),
	MAD("CM REQ service A on QP 2", 2, CM, REQ, SID_A, MAD_SIZE, 11),
	{ .what = "port 4792, QP 2", .port = 4792, .qpn = 2, .want = NOBODY },
	{ .what = "port 4792, CM REQ service A", .port = 4792, .qpn = 1,
	  .cls = CM, .attr = REQ, .v = SID_A, .len = MAD_SIZE,
	  .want = NOBODY },
};

static void test_rules(void **state)
{
	(void)state;
	run_cases(V4, rules, N(rules));
	run_cases(V6, rules, N(rules));
}

/* IHL 6: the UDP header 4 bytes later. */
static void test_ipv4_options(void **state)
{
	static const struct fcase c[] = {
		Q("QP 2", 2, 11),
		Q("QP 3", 3, 12),
		Q("QP 5: QP1's owner", 5, 10),
		MAD("CM REQ, service A", 1, CM, REQ, SID_A, MAD_SIZE, 12),
		MAD("CM DREQ, tag 11", 1, CM, DREQ, TAG(11), MAD_SIZE, 11),
		{ .what = "port 4792, QP 2", .port = 4792, .qpn = 2,
		  .want = NOBODY },
	};

	(void)state;
	run_cases(V4_OPT, c, N(c));
}

/* Frames no UDP socket writes: IHL < 5 is 20 bytes, IHL 15 is 60; not
 * UDP, not 4791, not IPv4 or IPv6 by the ethertype: nobody's. */
static void test_raw_frames(void **state)
{
	static const struct fcase v4[] = {
		{ .what = "IHL 5, QP 2", .qpn = 2, .want = 11, .ihl = 5 },
		{ .what = "IHL 3, QP 2", .qpn = 2, .want = 11, .ihl = 3 },
		{ .what = "IHL 0, QP 3", .qpn = 3, .want = 12, .ihl = 0x10 },
		{ .what = "IHL 3, CM REQ service A", .qpn = 1, .cls = CM,
		  .attr = REQ, .v = SID_A, .len = MAD_SIZE, .want = 12,
		  .ihl = 3 },
		{ .what = "IHL 15, QP 3", .qpn = 3, .want = 12, .ihl = 15 },
		{ .what = "IHL 15, CM DREQ tag 11", .qpn = 1, .cls = CM,
		  .attr = DREQ, .v = TAG(11), .len = MAD_SIZE, .want = 11,
		  .ihl = 15 },
		{ .what = "TCP, QP 2", .qpn = 2, .want = NOBODY,
		  .proto = IPPROTO_TCP },
		{ .what = "port 4792, IHL 3", .port = 4792, .qpn = 2,
		  .want = NOBODY, .ihl = 3 },
		{ .what = "ethertype 0x88B5", .qpn = 2, .want = NOBODY,
		  .eth = 0x88B5 },
	};
	static const struct fcase v6[] = {
		Q("QP 2", 2, 11),
		MAD("CM REQ service A", 1, CM, REQ, SID_A, MAD_SIZE, 12),
		{ .what = "TCP, QP 2", .qpn = 2, .want = NOBODY,
		  .proto = IPPROTO_TCP },
		{ .what = "ethertype 0x88B5", .qpn = 2, .want = NOBODY,
		  .eth = 0x88B5 },
		{ .what = "ethertype IPv4", .qpn = 2, .want = NOBODY,
		  .eth = ETH_P_IP },
	};

	(void)state;
	run_cases(RAW4, v4, N(v4));
	run_cases(RAW6, v6, N(v6));
}

/* Without QP1's owner what names nobody is nobody's; cleared QPs and
 * services are nobody's, then QP1's owner's again. */
static void test_no_qp1_owner(void **state)
{
	static const struct fcase gone[] = {
		Q("QP 5", 5, NOBODY),
		Q("QP 3 (cleared)", 3, NOBODY),
		Q("QP 2", 2, 11),
		MAD("CM REQ, service A (cleared)", 1, CM, REQ, SID_A, MAD_SIZE,
		    NOBODY),
		MAD("CM REQ, service B", 1, CM, REQ, SID_B, MAD_SIZE, 11),
		MAD("CM DREP, untagged", 1, CM, DREP, 0, MAD_SIZE, NOBODY),
	};
	static const struct fcase back[] = {
		Q("QP 3 (cleared)", 3, 12),
		MAD("CM REQ, service A (cleared)", 1, CM, REQ, SID_A, MAD_SIZE,
		    12),
	};

	(void)state;
	assert_int_equal(ernic_steer_clear(&T.st, 1), 0);
	assert_int_equal(ernic_steer_clear(&T.st, 3), 0);
	assert_int_equal(ernic_steer_service_clear(&T.st, SID_A), 0);
	run_cases(V4, gone, N(gone));
	run_cases(V6, gone, N(gone));
	/* QP1 to slot 12: what was nobody's is 12's */
	assert_int_equal(ernic_steer_set(&T.st, 1, 12), 0);
	run_cases(V4, back, N(back));
	assert_int_equal(ernic_steer_set(&T.st, 1, 10), 0);
	assert_int_equal(ernic_steer_set(&T.st, 3, 12), 0);
	assert_int_equal(ernic_steer_service_set(&T.st, SID_A, 12), 0);
	run_cases(V6, rules, N(rules));
}

/*
 * With the port's address (frame mode's own filter, model_wire.c): slot
 * 11's socket keeps only frames to its IP, or to its MAC when that is
 * not zero (roce_pkt.h's rule); the others' steering is unchanged.
 */
static void test_addressed(void **state)
{
	struct roce_l3 lo1 = { .family = AF_INET }, mac = { .family = AF_INET };
	static const struct fcase ip4[] = {
		{ .what = "QP 2 to 127.0.0.1", .qpn = 2, .want = 11 },
		{ .what = "QP 2 to 127.0.0.2", .qpn = 2, .dip = 2,
		  .want = NOBODY },
		{ .what = "QP 2 to .2, a MAC", .qpn = 2, .dip = 2, .dmac = 0x0B,
		  .want = NOBODY },
		{ .what = "QP 3 to 127.0.0.2", .qpn = 3, .dip = 2, .want = 12 },
	};
	static const struct fcase ip6[] = {
		{ .what = "QP 2 to ::1 (IPv4 port)", .qpn = 2, .want = NOBODY },
	};
	static const struct fcase v6_ours[] = {
		{ .what = "QP 2 to ::1 (IPv6 port)", .qpn = 2, .want = 11 },
	};
	static const struct fcase v4_not[] = {
		{ .what = "QP 2 to 127.0.0.1 (IPv6 port)", .qpn = 2,
		  .want = NOBODY },
	};
	struct roce_l3 v6 = { .family = AF_INET6 };
	static const struct fcase by_mac[] = {
		{ .what = "QP 2 to .1, its MAC", .qpn = 2, .dmac = 0x0B,
		  .want = 11 },
		{ .what = "QP 2 to .1, another MAC", .qpn = 2, .dmac = 0x0C,
		  .want = NOBODY },
		{ .what = "QP 2 to .5, no MAC", .qpn = 2, .dip = 5,
		  .want = 11 },
	};

	(void)state;
	memcpy(lo1.dst, "\x7F\0\0\x01", 4);
	memcpy(mac.dst, "\x7F\0\0\x05", 4);
	memcpy(mac.dst_mac, "\x02\0\0\0\0\x0B", 6);
	attach_prog(T.pk[1], 11, &lo1);
	run_cases(RAW4, ip4, N(ip4));
	run_cases(RAW6, ip6, N(ip6));
	attach_prog(T.pk[1], 11, &mac);
	run_cases(RAW4, by_mac, N(by_mac));
	v6.dst[15] = 1;		/* ::1 */
	attach_prog(T.pk[1], 11, &v6);
	run_cases(RAW6, v6_ours, N(v6_ours));
	run_cases(RAW4, v4_not, N(v4_not));
	attach_prog(T.pk[1], 11, NULL);
}

static void test_bad_args(void **state)
{
	struct ernic_steer none;
	char err[256] = "";

	(void)state;
	errno = 0;
	assert_int_equal(ernic_steer_frame_prog(&T.st, ERNIC_STEER_SLOTS, NULL,
						err, sizeof(err)), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "frame steering program"));
	ernic_steer_init(&none);
	errno = 0;
	assert_int_equal(ernic_steer_frame_prog(&none, 1, NULL, err,
						sizeof(err)), -1);
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_ipv4_options),
		cmocka_unit_test(test_raw_frames),
		cmocka_unit_test(test_no_qp1_owner),
		cmocka_unit_test(test_addressed),
		cmocka_unit_test(test_bad_args),
	};
	int rc;

	if (geteuid() != 0) {
		printf("SKIP: needs root (eBPF, AF_PACKET, a netns)\n");
		return 77;
	}
	rc = own_netns();
	if (rc)
		return rc;
	return cmocka_run_group_tests_name("steer_frame", tests, setup,
					   teardown);
}
