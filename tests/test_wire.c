// SPDX-License-Identifier: MIT
/*
 * The model's wire port over real sockets: UDP mode between 127.0.0.2
 * and 127.0.0.3 (and ::1 to itself), frame mode on lo, and the two
 * modes talking to each other, which shows that the ICRC a UDP-mode
 * sender computes matches the IPv4 header Linux really writes, and that
 * a UDP-mode receiver recovers an IPv4 ID it cannot see.
 *
 * Frame mode needs CAP_NET_RAW and a private network namespace
 * (CAP_SYS_ADMIN); without them those tests are skipped and the program
 * exits 77 after the UDP tests pass.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ernic_conf.h"
#include "model_wire.h"
#include "roce_pkt.h"

static bool frame_skipped;
static bool private_netns;

struct port {
	struct model_wire *w;
	enum ernic_wire mode;
	struct roce_l3 self;	/* family, src = our address, sport */
};

/* A port on lo at addr; mac: its MAC (NULL: zeros, as lo's). */
static bool open_port_mac(struct port *p, int family, const char *addr,
			  enum ernic_wire mode, const uint8_t *mac,
			  bool may_fail)
{
	struct ernic_conf c;
	char err[256] = "";

	ernic_conf_defaults(&c);
	c.family = family;
	assert_int_equal(inet_pton(family, addr, c.addr), 1);
	c.wire = mode;
	strcpy(c.netdev, "lo");
	if (mac)
		memcpy(c.mac, mac, 6);
	p->w = model_wire_open(&c, err, sizeof(err));
	if (!p->w) {
		if (may_fail)
			return false;
		fail_msg("model_wire_open %s %s: %s", addr,
			 mode == ERNIC_WIRE_FRAME ? "frame" : "udp", err);
	}
	p->mode = mode;
	memset(&p->self, 0, sizeof(p->self));
	p->self.family = family;
	memcpy(p->self.src, c.addr, 16);
	memcpy(p->self.src_mac, c.mac, 6);
	p->self.sport = c.udp_sport;
	p->self.ttl = 64;
	return true;
}

static bool open_port(struct port *p, int family, const char *addr,
		      enum ernic_wire mode, bool may_fail)
{
	return open_port_mac(p, family, addr, mode, NULL, may_fail);
}

/* Envelope of a packet from a to b. */
static void l3_between(const struct port *a, const struct port *b,
		       struct roce_l3 *l3)
{
	*l3 = a->self;
	memcpy(l3->dst, b->self.src, 16);
	l3->dport = ROCE_UDP_PORT;
}

static size_t build_send(const struct port *a, const struct roce_l3 *l3,
			 uint8_t *buf, size_t cap, uint8_t op,
			 const char *payload, uint32_t psn)
{
	struct roce_pkt p;
	size_t n;

	memset(&p, 0, sizeof(p));
	p.opcode = op;
	p.migreq = true;
	p.pkey = ROCE_DEFAULT_PKEY;
	p.dqpn = 2;
	p.psn = psn;
	p.ackreq = true;
	p.aeth_syndrome = ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID;
	p.aeth_msn = 1;
	if (payload) {
		p.payload = (const uint8_t *)payload;
		p.payload_len = (uint32_t)strlen(payload);
	}
	n = roce_build(buf, cap, &p, l3);
	assert_int_not_equal(n, 0);
	assert_int_equal(model_wire_send(a->w, l3, buf, n), 0);
	return n;
}

struct rx {
	uint8_t buf[ROCE_MAX_FRAME];
	struct roce_l3 l3;
	const uint8_t *tp;
	size_t tlen;
	uint32_t syn;
	int check_icrc;
};

/* Wait up to ms for one packet; returns false on timeout. */
static bool recv_one(const struct port *p, struct rx *rx, int ms)
{
	struct timespec t0, t;
	struct pollfd pfd = { .fd = model_wire_fd(p->w), .events = POLLIN };

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int rc = model_wire_recv(p->w, rx->buf, sizeof(rx->buf),
					 &rx->l3, &rx->tp, &rx->tlen,
					 &rx->syn, &rx->check_icrc);
		long left;

		assert_true(rc >= 0);
		if (rc == 1)
			return true;
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = ms - ((t.tv_sec - t0.tv_sec) * 1000 +
			     (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			return false;
		poll(&pfd, 1, (int)left);
	}
}

/* Receive what a sent to b and check it end to end. */
static void expect_packet(const struct port *a, const struct port *b,
			  uint8_t op, const char *payload, uint32_t psn,
			  struct rx *rx)
{
	struct roce_pkt q;
	size_t alen = a->self.family == AF_INET ? 4 : 16;

	assert_true(recv_one(b, rx, 2000));
	assert_int_equal(rx->syn, 0);
	/* left to the engine, but where solving a UDP port's IPv4 ID
	 * checked it; roce_parse below checks it in every case */
	assert_int_equal(rx->check_icrc,
			 b->mode != ERNIC_WIRE_UDP || b->self.family != AF_INET);
	assert_int_equal(rx->l3.family, a->self.family);
	assert_memory_equal(rx->l3.src, a->self.src, alen);
	assert_memory_equal(rx->l3.dst, b->self.src, alen);
	assert_int_equal(rx->l3.sport, a->self.sport);
	assert_int_equal(rx->l3.dport, ROCE_UDP_PORT);
	assert_int_equal(roce_parse(rx->tp, rx->tlen, &rx->l3, true, &q), 0);
	assert_int_equal(q.opcode, op);
	assert_int_equal(q.psn, psn);
	assert_int_equal(q.dqpn, 2);
	if (payload) {
		assert_int_equal(q.payload_len, strlen(payload));
		assert_memory_equal(q.payload, payload, q.payload_len);
	}
}

static struct rx rx_buf, rx_spare;	/* ~4 KiB each: off the stack */

static void expect_nothing(const struct port *p)
{
	assert_false(recv_one(p, &rx_spare, 100));
}

static void test_udp_v4(void **state)
{
	struct port a, b;
	struct roce_l3 l3, bad;
	uint8_t buf[ROCE_MAX_TRANSPORT];
	struct rx *rx = &rx_buf;
	size_t n;

	(void)state;
	open_port(&a, AF_INET, "127.0.0.2", ERNIC_WIRE_UDP, false);
	open_port(&b, AF_INET, "127.0.0.3", ERNIC_WIRE_UDP, false);

	l3_between(&a, &b, &l3);
	l3.tos = 0x02;		/* ECT(0): arrives as sent */
	build_send(&a, &l3, buf, sizeof(buf), ROCE_RC_SEND_ONLY, "hello", 7);
	expect_packet(&a, &b, ROCE_RC_SEND_ONLY, "hello", 7, rx);
	assert_int_equal(rx->l3.ip_id, 0);	/* Linux, DF, unconnected */
	assert_int_equal(rx->l3.tos, 0x02);
	assert_int_equal(rx->l3.ttl, 64);

	l3_between(&b, &a, &l3);
	l3.ttl = 7;
	build_send(&b, &l3, buf, sizeof(buf), ROCE_RC_ACK, NULL, 7);
	expect_packet(&b, &a, ROCE_RC_ACK, NULL, 7, rx);
	assert_int_equal(rx->l3.ttl, 7);
	expect_nothing(&a);
	expect_nothing(&b);

	/* Headers the kernel would not write are refused. */
	l3_between(&a, &b, &l3);
	n = build_send(&a, &l3, buf, sizeof(buf), ROCE_RC_SEND_ONLY, "x", 8);
	expect_packet(&a, &b, ROCE_RC_SEND_ONLY, "x", 8, rx);
	bad = l3;
	bad.sport++;
	assert_int_equal(model_wire_send(a.w, &bad, buf, n), EINVAL);
	bad = l3;
	bad.ip_id = 1;
	assert_int_equal(model_wire_send(a.w, &bad, buf, n), EINVAL);
	bad = l3;
	bad.src[3] = 9;
	assert_int_equal(model_wire_send(a.w, &bad, buf, n), EINVAL);
	bad = l3;
	bad.family = AF_INET6;
	assert_int_equal(model_wire_send(a.w, &bad, buf, n), EINVAL);

	/* A corrupted packet is delivered; its ICRC fails (no ID fits). */
	buf[n - 6] ^= 1;
	assert_int_equal(model_wire_send(a.w, &l3, buf, n), 0);
	{
		struct roce_pkt q;

		assert_true(recv_one(&b, rx, 2000));
		assert_int_equal(rx->check_icrc, 1);	/* the engine's */
		assert_int_equal(roce_parse(rx->tp, rx->tlen, &rx->l3, true,
					    &q), ROCE_SYN_ICRC);
	}
	model_wire_close(a.w);
	model_wire_close(b.w);
}

/* A second port on the same address cannot open; the reason says why. */
static void test_udp_busy(void **state)
{
	struct port a;
	struct ernic_conf c;
	char err[256] = "";

	(void)state;
	open_port(&a, AF_INET, "127.0.0.2", ERNIC_WIRE_UDP, false);
	ernic_conf_defaults(&c);
	c.family = AF_INET;
	inet_pton(AF_INET, "127.0.0.2", c.addr);
	assert_null(model_wire_open(&c, err, sizeof(err)));
	assert_int_equal(errno, EADDRINUSE);
	assert_non_null(strstr(err, "127.0.0.2:4791"));
	model_wire_close(a.w);

	c.udp_sport = 0;
	assert_null(model_wire_open(&c, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
}

/* Oversized and foreign datagrams reach the model flagged, not lost. */
static void test_udp_odd_datagrams(void **state)
{
	struct port b;
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(ROCE_UDP_PORT) };
	static uint8_t big[ROCE_MAX_FRAME + 100];
	struct rx *rx = &rx_buf;
	struct roce_pkt q;
	int s;

	(void)state;
	open_port(&b, AF_INET, "127.0.0.3", ERNIC_WIRE_UDP, false);
	inet_pton(AF_INET, "127.0.0.3", &to.sin_addr);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(s >= 0);
	assert_int_equal(sendto(s, big, sizeof(big), 0, (void *)&to,
				sizeof(to)), sizeof(big));
	assert_true(recv_one(&b, rx, 2000));
	assert_int_equal(rx->syn, ROCE_SYN_MALFORMED);
	assert_int_equal(rx->tlen, sizeof(rx->buf));

	assert_int_equal(sendto(s, "abc", 3, 0, (void *)&to, sizeof(to)), 3);
	assert_true(recv_one(&b, rx, 2000));
	assert_int_equal(rx->syn, 0);
	assert_int_equal(rx->tlen, 3);
	assert_int_equal(roce_parse(rx->tp, rx->tlen, &rx->l3, true, &q),
			 ROCE_SYN_MALFORMED);
	close(s);
	model_wire_close(b.w);
}

static void tap_tx(void *arg, const struct roce_l3 *l3, const uint8_t *tp,
		   size_t tlen)
{
	(void)arg;
	(void)l3;
	(void)tp;
	(void)tlen;
}

/* A wire that never had steering closes no fd but its own: fd 0 (the
 * fd a zeroed steering handle would name) stays open. */
static void test_close_keeps_fd0(void **state)
{
	struct model_wire *w;
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(dup2(p[0], 0), 0);
	w = model_wire_open_tap(AF_INET, tap_tx, NULL);
	assert_non_null(w);
	model_wire_close(w);
	assert_int_not_equal(fcntl(0, F_GETFD), -1);
	close(p[0]);
	close(p[1]);
}

static void test_udp_v6(void **state)
{
	struct port a;
	struct roce_l3 l3;
	uint8_t buf[ROCE_MAX_TRANSPORT];
	struct rx *rx = &rx_buf;

	(void)state;
	if (!open_port(&a, AF_INET6, "::1", ERNIC_WIRE_UDP, true)) {
		print_message("no usable ::1 (IPv6 off?): %s\n",
			      strerror(errno));
		skip();
	}
	l3_between(&a, &a, &l3);
	l3.tos = 0x61;
	l3.ttl = 3;
	build_send(&a, &l3, buf, sizeof(buf), ROCE_RC_SEND_ONLY_IMM,
		   "over IPv6", 0xFFFFFF);
	expect_packet(&a, &a, ROCE_RC_SEND_ONLY_IMM, "over IPv6", 0xFFFFFF,
		      rx);
	assert_int_equal(rx->l3.tos, 0x61);
	assert_int_equal(rx->l3.ttl, 3);
	model_wire_close(a.w);
}

/*
 * As root everything runs in a private network namespace: its lo is
 * ours alone (the software devices of other tests bind 127.0.0.2/.3 on
 * the host), and there route_localnet=1 lets the kernel accept frames an
 * AF_PACKET socket injects on lo (it drops 127.x sources that arrive
 * without a route attached otherwise; see model_wire.h). Unprivileged,
 * the UDP tests use the host's lo.
 */
static void enter_private_netns(void)
{
	struct ifreq ifr;
	FILE *f;
	int s;

	if (unshare(CLONE_NEWNET))
		return;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr))
		goto broken;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr))
		goto broken;
	close(s);
	f = fopen("/proc/sys/net/ipv4/conf/lo/route_localnet", "w");
	if (!f || fputs("1\n", f) < 0 || fclose(f))
		goto broken;
	private_netns = true;
	return;
broken:
	perror("setting up lo in a private network namespace");
	exit(1);
}

static bool frame_env(void)
{
	int s;

	if (!private_netns) {
		frame_skipped = true;
		return false;
	}
	s = socket(AF_PACKET, SOCK_RAW, 0);
	if (s < 0) {
		frame_skipped = true;
		return false;
	}
	close(s);
	return true;
}

static void test_frame_lo(void **state)
{
	struct port a, b;
	struct roce_l3 l3;
	uint8_t buf[ROCE_MAX_TRANSPORT];
	struct rx *rx = &rx_buf;
	char big[2001];

	(void)state;
	if (!frame_env())
		skip();
	open_port(&a, AF_INET, "127.0.0.2", ERNIC_WIRE_FRAME, false);
	open_port(&b, AF_INET, "127.0.0.3", ERNIC_WIRE_FRAME, false);

	/* Any ID: the receiver sees the real header, the ICRC covers it. */
	l3_between(&a, &b, &l3);
	l3.ip_id = 0x1234;
	l3.tos = 0x03;		/* CE */
	build_send(&a, &l3, buf, sizeof(buf), ROCE_RC_WRITE_ONLY, "frame", 1);
	expect_packet(&a, &b, ROCE_RC_WRITE_ONLY, "frame", 1, rx);
	assert_int_equal(rx->l3.ip_id, 0x1234);
	assert_int_equal(rx->l3.tos, 0x03);
	assert_int_equal(rx->l3.ttl, 64);
	/* Neither our own transmission nor b's traffic reaches a. */
	expect_nothing(&a);

	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	l3_between(&b, &a, &l3);
	build_send(&b, &l3, buf, sizeof(buf), ROCE_RC_SEND_LAST, big, 2);
	expect_packet(&b, &a, ROCE_RC_SEND_LAST, big, 2, rx);
	expect_nothing(&b);
	model_wire_close(a.w);
	model_wire_close(b.w);
}

/*
 * A frame port takes from the netdev only frames addressed to it (its
 * IP, or its MAC when that is not zero): another address's frames on a
 * shared segment, and its own looped back on lo, stay in the kernel's
 * filter and never reach the port (its read count says so), as a NIC's
 * address filter keeps them from an IP. A frame to its MAC with another
 * IP still comes, with the IP_DST syndrome (roce_pkt.h's rule).
 */
static void test_frame_addressed(void **state)
{
	static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0x0B };
	static const uint8_t mac_x[6] = { 0x02, 0, 0, 0, 0, 0x0C };
	struct port a, b;
	struct roce_l3 l3;
	uint8_t buf[ROCE_MAX_TRANSPORT];
	struct rx *rx = &rx_buf;

	(void)state;
	if (!frame_env())
		skip();
	open_port(&a, AF_INET, "127.0.0.2", ERNIC_WIRE_FRAME, false);
	open_port_mac(&b, AF_INET, "127.0.0.3", ERNIC_WIRE_FRAME, mac_b, false);
	/* to a third address, other MAC: nobody's (twice, for the read) */
	l3_between(&a, &b, &l3);
	assert_int_equal(inet_pton(AF_INET, "127.0.0.9", l3.dst), 1);
	memcpy(l3.dst_mac, mac_x, 6);
	build_send(&a, &l3, buf, sizeof(buf), ROCE_RC_WRITE_ONLY, "x", 1);
	build_send(&a, &l3, buf, sizeof(buf), ROCE_RC_WRITE_ONLY, "x", 2);
	/* to b */
	l3_between(&a, &b, &l3);
	memcpy(l3.dst_mac, mac_b, 6);
	build_send(&a, &l3, buf, sizeof(buf), ROCE_RC_WRITE_ONLY, "for b", 3);
	expect_packet(&a, &b, ROCE_RC_WRITE_ONLY, "for b", 3, rx);
	assert_int_equal(rx->syn, 0);
	expect_nothing(&b);
	assert_int_equal(model_wire_stats(b.w)->rx_calls, 1);
	/* to b's MAC, another IP: b's, flagged */
	l3_between(&a, &b, &l3);
	assert_int_equal(inet_pton(AF_INET, "127.0.0.9", l3.dst), 1);
	memcpy(l3.dst_mac, mac_b, 6);
	build_send(&a, &l3, buf, sizeof(buf), ROCE_RC_WRITE_ONLY, "mac", 4);
	assert_true(recv_one(&b, rx, 1000));
	assert_int_equal(rx->syn, ROCE_SYN_IP_DST);
	assert_int_equal(model_wire_stats(b.w)->rx_calls, 2);
	/* a saw none of it: its own frames come back to it on lo */
	expect_nothing(&a);
	assert_int_equal(model_wire_stats(a.w)->rx_calls, 0);
	model_wire_close(a.w);
	model_wire_close(b.w);
}

/*
 * UDP-mode sender, frame-mode receiver: the receiver computes the ICRC
 * over the IPv4 header Linux actually wrote, so this fails if the kernel
 * ever stops writing ID 0 for DF datagrams. And back: a frame with ID
 * 0x4321 reaches the UDP port, which must recover the ID.
 */
static void test_frame_udp_interop(void **state)
{
	struct port u, f;
	struct roce_l3 l3;
	uint8_t buf[ROCE_MAX_TRANSPORT];
	struct rx *rx = &rx_buf;

	(void)state;
	if (!frame_env())
		skip();
	open_port(&u, AF_INET, "127.0.0.2", ERNIC_WIRE_UDP, false);
	open_port(&f, AF_INET, "127.0.0.3", ERNIC_WIRE_FRAME, false);

	l3_between(&u, &f, &l3);
	build_send(&u, &l3, buf, sizeof(buf), ROCE_RC_READ_REQ, NULL, 5);
	expect_packet(&u, &f, ROCE_RC_READ_REQ, NULL, 5, rx);
	assert_int_equal(rx->l3.ip_id, 0);

	l3_between(&f, &u, &l3);
	l3.ip_id = 0x4321;
	build_send(&f, &l3, buf, sizeof(buf), ROCE_RC_READ_RESP_ONLY,
		   "data!", 5);
	expect_packet(&f, &u, ROCE_RC_READ_RESP_ONLY, "data!", 5, rx);
	assert_int_equal(rx->l3.ip_id, 0x4321);
	model_wire_close(u.w);
	model_wire_close(f.w);
}

static void test_frame_v6(void **state)
{
	struct port a;
	struct roce_l3 l3;
	uint8_t buf[ROCE_MAX_TRANSPORT];
	struct rx *rx = &rx_buf;

	(void)state;
	if (!frame_env())
		skip();
	if (!open_port(&a, AF_INET6, "::1", ERNIC_WIRE_FRAME, true)) {
		print_message("no usable ::1 (IPv6 off?)\n");
		skip();
	}
	l3_between(&a, &a, &l3);
	l3.flow_label = 0x54321;
	build_send(&a, &l3, buf, sizeof(buf), ROCE_RC_SEND_ONLY_INV, "v6!", 9);
	expect_packet(&a, &a, ROCE_RC_SEND_ONLY_INV, "v6!", 9, rx);
	assert_int_equal(rx->l3.flow_label, 0x54321);
	model_wire_close(a.w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udp_v4),
		cmocka_unit_test(test_udp_busy),
		cmocka_unit_test(test_udp_odd_datagrams),
		cmocka_unit_test(test_udp_v6),
		cmocka_unit_test(test_close_keeps_fd0),
		cmocka_unit_test(test_frame_lo),
		cmocka_unit_test(test_frame_addressed),
		cmocka_unit_test(test_frame_udp_interop),
		cmocka_unit_test(test_frame_v6),
	};
	int rc;

	enter_private_netns();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (rc == 0 && frame_skipped) {
		printf("SKIP: frame mode (AF_PACKET on lo in a private netns) "
		       "needs root; the UDP-mode tests passed\n");
		return 77;
	}
	return rc;
}
