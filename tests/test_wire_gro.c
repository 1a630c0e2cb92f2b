// SPDX-License-Identifier: MIT
/*
 * UDP_GRO on a port shared between processes (model/wire_batch.h): a
 * train read from a shared socket gives only its first segment's QP's
 * segments; one for another QP, or a MAD after the first segment, may be
 * another process's and is dropped, counted, and GRO is turned off on
 * the socket, after which datagrams come one per read. A socket of our
 * own takes every segment. Real sockets on 127.0.0.66 (the port) and
 * .67 (a sender that mixes QPs in one GSO datagram, as a NIC's GRO may
 * merge them for a peer sending every QP from one UDP source port).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "ernic_wire.h"
#include "model_wire.h"
#include "roce_pkt.h"
#include "wire_batch.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define ADDR_PORT "127.0.0.66"
#define ADDR_PEER "127.0.0.67"
#define PEER_SPORT 49999
#define PAY 512u
#define MAXSEG 8u

struct rig {
	int tx;			/* the peer's socket */
	struct wire_rx rx;	/* the port */
	struct model_wire_stats st;
	struct roce_l3 l3;	/* peer -> port */
};

static int udp_bound(const char *addr, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	assert_int_equal(inet_pton(AF_INET, addr, &sa.sin_addr), 1);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		fail_msg("bind %s:%u: %s", addr, port, strerror(errno));
	return fd;
}

static int gro_of(int fd)
{
	int v = -1;
	socklen_t l = sizeof(v);

	assert_int_equal(getsockopt(fd, SOL_UDP, UDP_GRO, &v, &l), 0);
	return v;
}

/* The rig of the running test: closed by the teardown, also after a
 * failure. */
static struct rig the_rig = { .tx = -1, .rx.fd = -1 };

static struct rig *rig_open(bool shared)
{
	struct rig *r = &the_rig;
	int on = 1;

	memset(r, 0, sizeof(*r));
	r->tx = r->rx.fd = -1;
	r->tx = udp_bound(ADDR_PEER, PEER_SPORT);
	r->rx.fd = udp_bound(ADDR_PORT, ROCE_UDP_PORT);
	if (setsockopt(r->rx.fd, SOL_UDP, UDP_GRO, &on, sizeof(on)))
		skip();		/* a kernel without UDP_GRO: nothing to see */
	r->rx.family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, ADDR_PORT, r->rx.local), 1);
	r->rx.gro_buf = malloc(WIRE_GRO_BUF);
	assert_non_null(r->rx.gro_buf);
	r->rx.stats = &r->st;
	r->rx.shared = shared;
	r->l3.family = AF_INET;
	memcpy(r->l3.src, &(struct in_addr){ inet_addr(ADDR_PEER) }, 4);
	memcpy(r->l3.dst, r->rx.local, 4);
	r->l3.sport = PEER_SPORT;
	r->l3.dport = ROCE_UDP_PORT;
	return r;
}

static int rig_close(void **state)
{
	struct rig *r = &the_rig;

	(void)state;
	if (r->tx >= 0)
		close(r->tx);
	if (r->rx.fd >= 0)
		close(r->rx.fd);
	free(r->rx.gro_buf);
	r->tx = r->rx.fd = -1;
	r->rx.gro_buf = NULL;
	return 0;
}

/* One GSO datagram of n WRITE packets to qpn[k], PSN 100 + k, all PAY
 * bytes but a shorter last one. */
static void send_train(struct rig *r, const uint32_t *qpn, uint32_t n)
{
	static uint8_t data[PAY], buf[MAXSEG * ROCE_MAX_TRANSPORT];
	union {
		char b[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} cm;
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(ROCE_UDP_PORT) };
	struct iovec iov = { .iov_base = buf };
	struct msghdr h = { .msg_name = &to, .msg_namelen = sizeof(to),
			    .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	uint16_t seg = 0;
	size_t used = 0;

	assert_true(n <= MAXSEG);
	to.sin_addr.s_addr = inet_addr(ADDR_PORT);
	for (uint32_t k = 0; k < n; k++) {
		struct roce_pkt p = {
			.opcode = k + 1 < n ? ROCE_RC_WRITE_MIDDLE :
					      ROCE_RC_WRITE_LAST,
			.migreq = true, .pkey = ROCE_DEFAULT_PKEY,
			.dqpn = qpn[k], .psn = 100 + k, .payload = data,
			.payload_len = k + 1 < n ? PAY : PAY / 2,
		};
		size_t len = roce_build(buf + used, sizeof(buf) - used, &p,
					&r->l3);

		assert_int_not_equal(len, 0);
		if (!k)
			seg = (uint16_t)len;
		used += len;
	}
	iov.iov_len = used;
	if (n > 1) {
		h.msg_control = cm.b;
		h.msg_controllen = sizeof(cm.b);
		c = CMSG_FIRSTHDR(&h);
		c->cmsg_level = SOL_UDP;
		c->cmsg_type = UDP_SEGMENT;
		c->cmsg_len = CMSG_LEN(sizeof(seg));
		memcpy(CMSG_DATA(c), &seg, sizeof(seg));
	}
	assert_int_equal(sendmsg(r->tx, &h, 0), (ssize_t)used);
}

/* Read the port until n packets came (ms milliseconds at most); their
 * QPs and PSNs into qpn[] / psn[]. Each must pass the port's checks. */
static uint32_t recv_for(struct rig *r, uint32_t n, uint32_t *qpn,
			 uint32_t *psn, int ms)
{
	static uint8_t buf[ROCE_MAX_FRAME];
	uint32_t got = 0;

	for (int spins = 0; got < n && spins < ms;) {
		struct pollfd pfd = { .fd = r->rx.fd, .events = POLLIN };
		struct roce_l3 l3;
		const uint8_t *tp;
		size_t tlen;
		uint32_t syn;
		int chk, rc;

		rc = wire_udp_recv(&r->rx, buf, sizeof(buf), &l3, &tp, &tlen,
				   &syn, &chk);
		assert_true(rc >= 0);
		if (!rc) {
			poll(&pfd, 1, 1);
			spins++;
			continue;
		}
		assert_int_equal(syn, 0);
		assert_int_equal(chk, 0);	/* the solved ID checked it */
		qpn[got] = ernic_get24(tp + 5);
		psn[got] = ernic_get24(tp + 9);
		got++;
	}
	return got;
}

static uint32_t recv_all(struct rig *r, uint32_t n, uint32_t *qpn,
			 uint32_t *psn)
{
	return recv_for(r, n, qpn, psn, 2000);
}

/* Nothing more is waiting on the port (what loopback carries is there
 * within microseconds: 100 ms is ample). */
static void expect_quiet(struct rig *r)
{
	uint32_t q, p;

	assert_int_equal(recv_for(r, 1, &q, &p, 100), 0);
}

static void test_shared_mixed_train(void **state)
{
	static const uint32_t mixed[] = { 5, 6, 5, IB_QP1, 5 };
	static const uint32_t one_qp[] = { 5, 5, 5 };
	uint32_t q[8], p[8];
	struct rig *r;

	(void)state;
	r = rig_open(true);
	send_train(r, mixed, 5);
	/* QP 5's three; QP 6's and the MAD dropped, one read */
	assert_int_equal(recv_all(r, 3, q, p), 3);
	assert_int_equal(q[0], 5);
	assert_int_equal(p[0], 100);
	assert_int_equal(q[1], 5);
	assert_int_equal(p[1], 102);
	assert_int_equal(q[2], 5);
	assert_int_equal(p[2], 104);
	expect_quiet(r);
	assert_int_equal(r->st.rx_foreign, 2);
	assert_int_equal(r->st.rx_calls, 1);
	assert_int_equal(r->st.rx_pkts, 3);
	/* GRO is off now: a train comes a datagram per read */
	assert_int_equal(gro_of(r->rx.fd), 0);
	send_train(r, one_qp, 3);
	assert_int_equal(recv_all(r, 3, q, p), 3);
	for (uint32_t k = 0; k < 3; k++) {
		assert_int_equal(q[k], 5);
		assert_int_equal(p[k], 100 + k);
	}
	assert_int_equal(r->st.rx_calls, 4);
	assert_int_equal(r->st.rx_foreign, 2);
}

/* A MAD first: it was steered by what it carries, so QP 5's segment
 * behind it may be another process's: dropped; a read that drops a
 * train's last segments goes on to the socket's next datagram. */
static void test_shared_mad_first(void **state)
{
	static const uint32_t mad_first[] = { IB_QP1, 5 }, qp7[] = { 7 };
	static uint8_t buf[ROCE_MAX_FRAME];
	uint32_t q[4], p[4], syn;
	struct rig *r;
	struct roce_l3 l3;
	const uint8_t *tp;
	size_t tlen;
	int chk;

	(void)state;
	r = rig_open(true);
	send_train(r, mad_first, 2);
	send_train(r, qp7, 1);		/* queued behind it (lo is at once) */
	assert_int_equal(recv_all(r, 1, q, p), 1);
	assert_int_equal(q[0], IB_QP1);
	/* the train's last segment dropped, the same call reads on */
	assert_int_equal(wire_udp_recv(&r->rx, buf, sizeof(buf), &l3, &tp,
				       &tlen, &syn, &chk), 1);
	assert_int_equal(ernic_get24(tp + 5), 7);
	expect_quiet(r);
	assert_int_equal(r->st.rx_foreign, 1);
	assert_int_equal(gro_of(r->rx.fd), 0);
}

/* One QP's train on a shared socket: whole, one read, GRO stays on. */
static void test_shared_one_qp(void **state)
{
	static const uint32_t one_qp[] = { 7, 7, 7, 7 };
	uint32_t q[4], p[4];
	struct rig *r;

	(void)state;
	r = rig_open(true);
	send_train(r, one_qp, 4);
	assert_int_equal(recv_all(r, 4, q, p), 4);
	for (uint32_t k = 0; k < 4; k++)
		assert_int_equal(p[k], 100 + k);
	assert_int_equal(r->st.rx_calls, 1);
	assert_int_equal(r->st.rx_foreign, 0);
	assert_int_equal(gro_of(r->rx.fd), 1);
}

/* A socket of our own: every QP of a mixed train is ours. */
static void test_own_mixed_train(void **state)
{
	static const uint32_t mixed[] = { 5, 6, 5, IB_QP1, 5 };
	uint32_t q[8], p[8];
	struct rig *r;

	(void)state;
	r = rig_open(false);
	send_train(r, mixed, 5);
	assert_int_equal(recv_all(r, 5, q, p), 5);
	for (uint32_t k = 0; k < 5; k++) {
		assert_int_equal(q[k], mixed[k]);
		assert_int_equal(p[k], 100 + k);
	}
	assert_int_equal(r->st.rx_calls, 1);
	assert_int_equal(r->st.rx_foreign, 0);
	assert_int_equal(gro_of(r->rx.fd), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_shared_mixed_train, rig_close),
		cmocka_unit_test_teardown(test_shared_mad_first, rig_close),
		cmocka_unit_test_teardown(test_shared_one_qp, rig_close),
		cmocka_unit_test_teardown(test_own_mixed_train, rig_close),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
