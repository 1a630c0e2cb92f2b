// SPDX-License-Identifier: MIT
/*
 * Batching on the model's UDP wire (model/wire_batch.h): which queued
 * packets may share a UDP GSO datagram, how a UDP_GRO buffer is cut back
 * into datagrams, and, over real sockets on 127.0.0.62/.63, that a
 * flushed batch arrives whole, in order, each packet with a good ICRC,
 * with the system calls the batching promises. With CAP_NET_RAW the
 * train as loopback carries it (one frame) is cut by hand and every
 * segment k checked for the ICRC of IPv4 ID k, the ID the kernel gives
 * it when it splits the train, and a frame-wire port on 127.0.0.64
 * must get each packet of such frames (model/wire_frame.h). QP1's MADs
 * never train.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ernic_conf.h"
#include "ernic_wire.h"
#include "model_wire.h"
#include "roce_pkt.h"
#include "wire_batch.h"
#include "wire_frame.h"
#include "wire_test_util.h"

#define ADDR_A "127.0.0.62"
#define ADDR_B "127.0.0.63"
#define ADDR_C "127.0.0.64"
#define PAYLOAD 1024u

/* The source port a wire opened with the defaults sends from. */
static uint16_t udp_sport(void)
{
	struct ernic_conf c;

	ernic_conf_defaults(&c);
	return c.udp_sport;
}

/* An RC WRITE MIDDLE (or LAST, shorter) of `pay` bytes to qpn. */
static size_t build(uint8_t *buf, size_t cap, const struct roce_l3 *l3,
		    uint32_t qpn, uint32_t psn, uint32_t pay)
{
	static uint8_t data[4096];
	struct roce_pkt p;
	size_t n;

	memset(&p, 0, sizeof(p));
	p.opcode = pay == PAYLOAD ? ROCE_RC_WRITE_MIDDLE : ROCE_RC_WRITE_LAST;
	p.migreq = true;
	p.pkey = ROCE_DEFAULT_PKEY;
	p.dqpn = qpn;
	p.psn = psn;
	for (uint32_t k = 0; k < pay; k++)
		data[k] = (uint8_t)(psn + k);
	p.payload = data;
	p.payload_len = pay;
	n = roce_build(buf, cap, &p, l3);
	assert_int_not_equal(n, 0);
	return n;
}

static void l3_to(struct roce_l3 *l3, const char *src, const char *dst,
		  uint8_t tos, uint8_t ttl)
{
	memset(l3, 0, sizeof(*l3));
	l3->family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, src, l3->src), 1);
	assert_int_equal(inet_pton(AF_INET, dst, l3->dst), 1);
	l3->sport = udp_sport();
	l3->dport = ROCE_UDP_PORT;
	l3->tos = tos;
	l3->ttl = ttl;
}

/* ---- which packets share a datagram (no socket: fd -1) ---- */

static void add(struct wire_tx_batch *b, const struct roce_l3 *l3,
		uint32_t qpn, uint32_t psn, uint32_t pay)
{
	uint8_t pkt[ROCE_MAX_TRANSPORT];
	size_t n = build(pkt, sizeof(pkt), l3, qpn, psn, pay);

	assert_int_equal(wire_tx_add(b, l3, pkt, n), 0);
}

/* The runs of the batch, as counts, into runs[]; returns how many. */
static uint32_t runs_of(const struct wire_tx_batch *b, uint32_t *runs)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < b->n;) {
		uint32_t k = wire_tx_run(b, i);

		assert_true(k >= 1 && i + k <= b->n);
		runs[n++] = k;
		i += k;
	}
	return n;
}

static void test_runs(void **state)
{
	struct wire_tx_batch *b = malloc(sizeof(*b));
	struct roce_l3 l3, other, tos, ttl;
	uint32_t runs[WIRE_TX_PKTS], psn = 0;

	(void)state;
	assert_non_null(b);
	assert_int_equal(wire_tx_init(b, -1, AF_INET, 0, true, NULL), 0);
	l3_to(&l3, ADDR_A, ADDR_B, 0, 64);
	l3_to(&other, ADDR_A, ADDR_C, 0, 64);
	l3_to(&tos, ADDR_A, ADDR_B, 0x68, 64);
	l3_to(&ttl, ADDR_A, ADDR_B, 0, 63);

	/* a message: equal packets and a shorter last one: one train */
	for (int k = 0; k < 5; k++)
		add(b, &l3, 5, psn++, PAYLOAD);
	add(b, &l3, 5, psn++, 100);
	/* after a short one, a new train; then another QP */
	add(b, &l3, 5, psn++, PAYLOAD);
	add(b, &l3, 5, psn++, PAYLOAD);
	add(b, &l3, 6, psn++, PAYLOAD);
	/* another address, TOS, TTL: each breaks the train */
	add(b, &other, 6, psn++, PAYLOAD);
	add(b, &tos, 6, psn++, PAYLOAD);
	add(b, &ttl, 6, psn++, PAYLOAD);
	add(b, &ttl, 6, psn++, PAYLOAD);
	/* a longer packet after a shorter one cannot join it */
	add(b, &l3, 7, psn++, 100);
	add(b, &l3, 7, psn++, PAYLOAD);
	assert_int_equal(runs_of(b, runs), 8);
	assert_int_equal(runs[0], 6);
	assert_int_equal(runs[1], 2);
	assert_int_equal(runs[2], 1);
	assert_int_equal(runs[3], 1);
	assert_int_equal(runs[4], 1);
	assert_int_equal(runs[5], 2);
	assert_int_equal(runs[6], 1);
	assert_int_equal(runs[7], 1);
	/* the queue keeps the bytes in order, back to back */
	for (uint32_t i = 1; i < b->n; i++)
		assert_int_equal(b->ent[i].off,
				 b->ent[i - 1].off + b->ent[i - 1].len);
	assert_int_equal(ernic_get24(b->buf + b->ent[6].off + 9), 6);
	b->n = 0;
	b->used = 0;

	/* UDP payload at most 65507 bytes: 1040-byte packets, 62 fit */
	for (int k = 0; k < 70; k++)
		add(b, &l3, 5, psn++, PAYLOAD);
	assert_int_equal(runs_of(b, runs), 2);
	assert_int_equal(runs[0], WIRE_GSO_BYTES / b->ent[0].len);
	b->n = 0;
	b->used = 0;

	/* QP1 never trains: its MADs are steered one by one by what they
	 * carry (CM service ID, communication ID), not by QP */
	for (int k = 0; k < 4; k++)
		add(b, &l3, IB_QP1, psn++, 256);
	add(b, &l3, 5, psn++, 256);
	add(b, &l3, 5, psn++, 256);
	assert_int_equal(runs_of(b, runs), 5);
	for (int k = 0; k < 4; k++)
		assert_int_equal(runs[k], 1);
	assert_int_equal(runs[4], 2);
	b->n = 0;
	b->used = 0;

	/* at most 64 segments */
	for (int k = 0; k < 70; k++)
		add(b, &l3, 5, psn++, 16);
	assert_int_equal(runs_of(b, runs), 2);
	assert_int_equal(runs[0], WIRE_GSO_SEGS);
	assert_int_equal(runs[1], 70 - WIRE_GSO_SEGS);

	/* without GSO every packet is its own datagram */
	b->gso = false;
	assert_int_equal(runs_of(b, runs), 70);
	wire_tx_fini(b);
	free(b);
}


/* A packet built in the batch's slot is queued where it was built, not
 * copied; a slot without room is refused, not overrun. */
static void test_slot(void **state)
{
	struct wire_tx_batch *b = malloc(sizeof(*b));
	uint8_t ref[ROCE_MAX_TRANSPORT], *slot;
	struct roce_l3 l3;
	size_t n;

	(void)state;
	assert_non_null(b);
	assert_int_equal(wire_tx_init(b, -1, AF_INET, 0, true, NULL), 0);
	l3_to(&l3, ADDR_A, ADDR_B, 0, 64);
	add(b, &l3, 5, 0, 100);
	slot = wire_tx_slot(b);
	assert_ptr_equal(slot, b->buf + b->ent[0].len);
	n = build(slot, ROCE_MAX_TRANSPORT, &l3, 5, 1, PAYLOAD);
	assert_int_equal(build(ref, sizeof(ref), &l3, 5, 1, PAYLOAD), n);
	assert_int_equal(wire_tx_add(b, &l3, slot, n), 0);
	assert_int_equal(b->n, 2);
	assert_int_equal(b->ent[1].off, b->ent[0].len);
	assert_memory_equal(b->buf + b->ent[1].off, ref, n);
	b->n = WIRE_TX_PKTS;		/* as if full */
	assert_int_equal(wire_tx_add(b, &l3, b->buf + b->used, n), EINVAL);
	assert_int_equal(b->n, WIRE_TX_PKTS);
	b->n = 0;
	wire_tx_fini(b);
	free(b);
}
/* ---- cutting a GRO buffer ---- */

static void expect_seg(struct wire_gro *g, const uint8_t *at, size_t len,
		       bool cut)
{
	const uint8_t *p;
	size_t n;
	bool c;

	assert_true(wire_gro_next(g, &p, &n, &c));
	assert_ptr_equal(p, at);
	assert_int_equal(n, len);
	assert_int_equal(c, cut);
}

static void test_gro_split(void **state)
{
	static uint8_t buf[400];
	struct wire_gro g = { 0 };
	const uint8_t *p;
	size_t n;
	bool c;

	(void)state;
	assert_false(wire_gro_next(&g, &p, &n, &c));	/* nothing loaded */
	/* three of 100 and a short odd tail */
	wire_gro_load(&g, buf, 337, 100, false);
	expect_seg(&g, buf, 100, false);
	expect_seg(&g, buf + 100, 100, false);
	expect_seg(&g, buf + 200, 100, false);
	expect_seg(&g, buf + 300, 37, false);
	assert_false(wire_gro_next(&g, &p, &n, &c));
	/* exact multiple */
	wire_gro_load(&g, buf, 300, 100, false);
	expect_seg(&g, buf, 100, false);
	expect_seg(&g, buf + 100, 100, false);
	expect_seg(&g, buf + 200, 100, false);
	assert_false(wire_gro_next(&g, &p, &n, &c));
	/* truncated: only the last piece is cut */
	wire_gro_load(&g, buf, 250, 100, true);
	expect_seg(&g, buf, 100, false);
	expect_seg(&g, buf + 100, 100, false);
	expect_seg(&g, buf + 200, 50, true);
	assert_false(wire_gro_next(&g, &p, &n, &c));
	/* no size, a size of 0, negative, or not below the length: one */
	wire_gro_load(&g, buf, 250, 0, false);
	expect_seg(&g, buf, 250, false);
	assert_false(wire_gro_next(&g, &p, &n, &c));
	wire_gro_load(&g, buf, 250, -4, true);
	expect_seg(&g, buf, 250, true);
	assert_false(wire_gro_next(&g, &p, &n, &c));
	wire_gro_load(&g, buf, 250, 250, false);
	expect_seg(&g, buf, 250, false);
	assert_false(wire_gro_next(&g, &p, &n, &c));
	wire_gro_load(&g, buf, 250, 4000, false);
	expect_seg(&g, buf, 250, false);
	assert_false(wire_gro_next(&g, &p, &n, &c));
	/* an empty datagram is one, once */
	wire_gro_load(&g, buf, 0, 100, false);
	expect_seg(&g, buf, 0, false);
	assert_false(wire_gro_next(&g, &p, &n, &c));
	/* a segment size of 1 */
	wire_gro_load(&g, buf, 3, 1, false);
	expect_seg(&g, buf, 1, false);
	expect_seg(&g, buf + 1, 1, false);
	expect_seg(&g, buf + 2, 1, false);
	assert_false(wire_gro_next(&g, &p, &n, &c));
}

/* ---- finding a train's packets in one frame (wire_frame.h) ---- */

/* A WRITE MIDDLE/LAST of `pay` bytes whose payload is `fill`, repeated. */
static size_t build_fill(uint8_t *buf, const struct roce_l3 *l3,
			 uint32_t psn, uint32_t pay, const uint8_t *fill,
			 size_t flen)
{
	uint8_t data[PAYLOAD];
	struct roce_pkt p;
	size_t n;

	for (uint32_t k = 0; k < pay; k++)
		data[k] = fill[k % flen];
	memset(&p, 0, sizeof(p));
	p.opcode = ROCE_RC_WRITE_MIDDLE;
	p.pkey = ROCE_DEFAULT_PKEY;
	p.dqpn = 5;
	p.psn = psn;
	p.payload = data;
	p.payload_len = pay;
	n = roce_build(buf, ROCE_MAX_TRANSPORT, &p, l3);
	assert_int_not_equal(n, 0);
	return n;
}

static void test_train_seg(void **state)
{
	static uint8_t t[8 * ROCE_MAX_TRANSPORT];
	/* what every packet to QP 5 has at bytes 2..7, as an 8-byte
	 * block that a payload (from byte 12 on) repeats at every
	 * multiple of 8 */
	static const uint8_t bth[8] = { 0, 0, 0, 5, 1, 2, 0xff, 0xff };
	static const uint8_t zero[1] = { 0 };
	struct roce_l3 l3, l3k;
	size_t n = 0, len, one;

	(void)state;
	l3_to(&l3, ADDR_A, ADDR_C, 0, 64);
	/* three of 1024 B payload and a short last, IDs 0..3 */
	for (uint32_t k = 0; k < 4; k++) {
		uint8_t *p = t + n;

		l3k = l3;
		l3k.ip_id = (uint16_t)k;
		len = build(p, ROCE_MAX_TRANSPORT, &l3k, 5, 10 + k,
			    k == 3 ? 100 : PAYLOAD);
		n += len;
	}
	one = n - len;
	one /= 3;
	assert_int_equal(wire_train_seg(&l3, t, n), one);
	/* one packet alone, or with the last cut: no train */
	assert_int_equal(wire_train_seg(&l3, t, one), 0);
	assert_int_equal(wire_train_seg(&l3, t, 3 * one + 12), 0);
	assert_int_equal(wire_train_seg(&l3, t, n - 2), 0);
	/* a wrong ICRC in the first: no size is right */
	t[20] ^= 1;
	assert_int_equal(wire_train_seg(&l3, t, n), 0);
	t[20] ^= 1;
	/* another address: its ICRC does not hold */
	l3k = l3;
	l3k.dst[3]++;
	assert_int_equal(wire_train_seg(&l3k, t, n), 0);
	/* another QP in the second packet: not one train */
	t[one + 7] = 6;
	assert_int_equal(wire_train_seg(&l3, t, n), 0);
	t[one + 7] = 5;

	/* payloads that look like BTHs where a smaller size would put
	 * the next packet: those sizes fail on the ICRC, the real one
	 * is found */
	n = 0;
	for (uint32_t k = 0; k < 3; k++) {
		l3k = l3;
		l3k.ip_id = (uint16_t)k;
		n += build_fill(t + n, &l3k, 20 + k, PAYLOAD, bth,
				sizeof(bth));
	}
	one = n / 3;
	/* (a packet at every multiple of 8 looks right) */
	assert_int_equal(one % 8, 0);
	assert_true(WIRE_SEG_TRIES < one / 8);
	assert_int_equal(wire_train_seg(&l3, t, n), 0);	/* tries ran out */
	n = 0;
	for (uint32_t k = 0; k < 3; k++) {
		l3k = l3;
		l3k.ip_id = (uint16_t)k;
		n += build_fill(t + n, &l3k, 20 + k, PAYLOAD, zero, 1);
	}
	/* decoys: what a packet begins with at 520 in every packet (a
	 * train of 520-byte packets passes all but the ICRC), at 40 in the
	 * first only; the ICRCs made good again for the new payloads */
	for (uint32_t k = 0; k < 3; k++) {
		uint8_t *p = t + k * one;

		memcpy(p + 520 + 2, t + 2, 6);
		if (!k)
			memcpy(p + 40 + 2, t + 2, 6);
		l3k = l3;
		l3k.ip_id = (uint16_t)k;
		ernic_put_le32(p + one - ROCE_ICRC_LEN,
			       roce_icrc(&l3k, p, one));
	}
	assert_int_equal(wire_train_seg(&l3, t, n), one);
	/* nothing to find in what is not a train */
	assert_int_equal(wire_train_seg(&l3, t, 30), 0);
	assert_int_equal(wire_train_seg(&l3, t, 2 * WIRE_SEG_MIN + 2), 0);
	assert_int_equal(wire_train_seg(NULL, t, n), 0);
}

/* ---- real sockets ---- */

struct sent {
	uint32_t qpn, psn;
	size_t len;
};

/* The traffic: a train of 11 to QP 5 (the last shorter), one to QP 6,
 * two to QP 5 again. */
#define NSENT 14
static void queue_traffic(struct model_wire *a, struct sent *s)
{
	uint8_t pkt[ROCE_MAX_TRANSPORT];
	struct roce_l3 l3;

	l3_to(&l3, ADDR_A, ADDR_B, 0, 64);
	for (uint32_t k = 0; k < NSENT; k++) {
		s[k].qpn = k == 11 ? 6 : 5;
		s[k].psn = 100 + k;
		s[k].len = build(pkt, sizeof(pkt), &l3, s[k].qpn, s[k].psn,
				 k == 10 ? 333 : PAYLOAD);
		assert_int_equal(model_wire_queue(a, &l3, pkt, s[k].len), 0);
	}
}

/* Receive nsent packets on b and check them against s: order, QP, PSN,
 * length, syndrome and ICRC (with the ID the receiver solved for). */
static void expect_traffic(struct model_wire *b, const struct sent *s,
			   uint32_t nsent)
{
	static uint8_t buf[ROCE_MAX_FRAME];
	uint32_t got = 0;

	struct roce_l3 l3;
	const uint8_t *tp;
	size_t tlen;
	uint32_t syn;
	int chk;

	while (got < nsent &&
	       wire_recv_wait(b, buf, sizeof(buf), &l3, &tp, &tlen, &syn, &chk)) {
		assert_int_equal(syn, 0);
		assert_int_equal(chk, 0);	/* solving the ID checked it */
		assert_int_equal(tlen, s[got].len);
		assert_int_equal(ernic_get24(tp + 5), s[got].qpn);
		assert_int_equal(ernic_get24(tp + 9), s[got].psn);
		assert_int_equal(roce_icrc(&l3, tp, tlen),
				 ernic_get_le32(tp + tlen - ROCE_ICRC_LEN));
		got++;
	}
	assert_int_equal(got, nsent);
}

static void test_udp_train(void **state)
{
	struct model_wire *a, *b;
	struct sent s[NSENT];
	const struct model_wire_stats *ta, *tb;

	(void)state;
	a = wire_open_udp(ADDR_A, NULL);
	b = wire_open_udp(ADDR_B, NULL);
	queue_traffic(a, s);
	assert_int_equal(model_wire_flush(a), 0);
	ta = model_wire_stats(a);
	tb = model_wire_stats(b);
	/* one system call: the train, the one to QP 6, the pair */
	assert_int_equal(ta->tx_pkts, NSENT);
	assert_int_equal(ta->tx_calls, 1);
	assert_int_equal(ta->tx_datagrams, 3);
	assert_int_equal(ta->tx_gso, 2);
	assert_int_equal(ta->tx_dropped, 0);
	expect_traffic(b, s, NSENT);
	/* loopback carried the trains whole, and GRO kept them so */
	assert_int_equal(tb->rx_pkts, NSENT);
	assert_int_equal(tb->rx_calls, 3);
	/* an empty flush sends nothing */
	assert_int_equal(model_wire_flush(a), 0);
	assert_int_equal(ta->tx_calls, 1);
	model_wire_close(a);
	model_wire_close(b);
}

/* ERNIC_WIRE_OFFLOAD=0: one sendmmsg still, but datagrams one by one. */
static void test_udp_no_offload(void **state)
{
	struct model_wire *a, *b;
	struct sent s[NSENT];

	(void)state;
	setenv("ERNIC_WIRE_OFFLOAD", "0", 1);
	a = wire_open_udp(ADDR_A, NULL);
	b = wire_open_udp(ADDR_B, NULL);
	unsetenv("ERNIC_WIRE_OFFLOAD");
	queue_traffic(a, s);
	assert_int_equal(model_wire_flush(a), 0);
	assert_int_equal(model_wire_stats(a)->tx_calls, 1);
	assert_int_equal(model_wire_stats(a)->tx_datagrams, NSENT);
	assert_int_equal(model_wire_stats(a)->tx_gso, 0);
	expect_traffic(b, s, NSENT);
	assert_int_equal(model_wire_stats(b)->rx_calls, NSENT);
	model_wire_close(a);
	model_wire_close(b);
}

/* model_wire_send after queued packets sends those first. */
static void test_send_keeps_order(void **state)
{
	struct model_wire *a, *b;
	struct sent s[NSENT + 1];
	uint8_t pkt[ROCE_MAX_TRANSPORT];
	struct roce_l3 l3;

	(void)state;
	a = wire_open_udp(ADDR_A, NULL);
	b = wire_open_udp(ADDR_B, NULL);
	queue_traffic(a, s);
	l3_to(&l3, ADDR_A, ADDR_B, 0, 64);
	s[NSENT].qpn = 9;
	s[NSENT].psn = 7;
	s[NSENT].len = build(pkt, sizeof(pkt), &l3, 9, 7, 40);
	assert_int_equal(model_wire_send(a, &l3, pkt, s[NSENT].len), 0);
	assert_int_equal(model_wire_stats(a)->tx_pkts, NSENT + 1);
	assert_int_equal(model_wire_stats(a)->tx_calls, 2);
	expect_traffic(b, s, NSENT + 1);
	model_wire_close(a);
	model_wire_close(b);
}

/*
 * The train as loopback carries it: one frame, its UDP payload the
 * packets back to back. Segment k's ICRC must be good for IPv4 ID k.
 */
static void test_train_ids(void **state)
{
	static uint8_t f[70000];
	struct model_wire *a, *b;
	struct sent s[NSENT];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL) };
	struct roce_l3 l3;
	uint8_t dst[4];
	int fd, trains = 0;

	(void)state;
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
	if (fd < 0) {
		print_message("no AF_PACKET socket (%s): train IDs not "
			      "checked\n", strerror(errno));
		return;
	}
	sll.sll_ifindex = (int)if_nametoindex("lo");
	assert_int_equal(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
	a = wire_open_udp(ADDR_A, NULL);
	b = wire_open_udp(ADDR_B, NULL);
	queue_traffic(a, s);
	assert_int_equal(model_wire_flush(a), 0);
	inet_pton(AF_INET, ADDR_B, dst);
	l3_to(&l3, ADDR_A, ADDR_B, 0, 64);
	for (int tries = 0; tries < 200 && trains < 2; tries++) {
		socklen_t sl = sizeof(sll);
		ssize_t n = recvfrom(fd, f, sizeof(f), 0,
				     (struct sockaddr *)&sll, &sl);
		size_t ihl, off, seg, k = 0;
		uint32_t first;

		if (n < 0) {
			usleep(1000);
			continue;
		}
		/* outgoing copies only; IPv4 UDP to ADDR_B:4791 */
		if (sll.sll_pkttype != PACKET_OUTGOING || n < 14 + 20 + 8 ||
		    ernic_get16(f + 12) != ETH_P_IP || f[14 + 9] != 17 ||
		    memcmp(f + 14 + 16, dst, 4))
			continue;
		ihl = (size_t)(f[14] & 15) * 4;
		off = 14 + ihl + 8;
		if (ernic_get16(f + 14 + ihl + 2) != ROCE_UDP_PORT)
			continue;
		first = ernic_get24(f + off + 9) - 100;
		seg = s[first].len;
		if ((size_t)n - off <= seg)
			continue;	/* a single datagram */
		/* a train: cut it as the kernel would */
		for (; off < (size_t)n; k++) {
			size_t len = (size_t)n - off < seg ? (size_t)n - off :
							     seg;

			assert_int_equal(len, s[first + k].len);
			assert_int_equal(ernic_get24(f + off + 9),
					 s[first + k].psn);
			l3.ip_id = (uint16_t)k;
			assert_int_equal(roce_icrc(&l3, f + off, len),
					 ernic_get_le32(f + off + len -
							ROCE_ICRC_LEN));
			off += len;
		}
		trains++;
	}
	assert_int_equal(trains, 2);
	close(fd);
	model_wire_close(a);
	model_wire_close(b);
}

/*
 * A frame-wire port on lo fed by a UDP-wire port: lo carries each train
 * whole, as one frame; the frame wire hands out its packets one by one,
 * each with the envelope of the frame the kernel would split it into
 * (IPv4 ID k), its ICRC good under it. Needs CAP_NET_RAW.
 */
static void test_frame_gets_trains(void **state)
{
	uint8_t pkt[ROCE_MAX_TRANSPORT];
	struct ernic_conf c;
	char err[256] = "";
	struct model_wire *a, *f;
	struct roce_l3 l3;
	struct sent s[NSENT];
	uint32_t got = 0, first = 0;
	static uint8_t buf[ROCE_MAX_FRAME + 64];
	struct roce_l3 r;
	const uint8_t *tp;
	size_t tlen;
	uint32_t syn;
	int chk;

	(void)state;
	ernic_conf_defaults(&c);
	c.family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, ADDR_C, c.addr), 1);
	c.wire = ERNIC_WIRE_FRAME;
	strcpy(c.netdev, "lo");
	memset(c.mac, 0, sizeof(c.mac));	/* lo's */
	f = model_wire_open(&c, err, sizeof(err));
	if (!f) {
		print_message("no frame port on lo (%s): not checked\n", err);
		return;
	}
	a = wire_open_udp(ADDR_A, NULL);
	l3_to(&l3, ADDR_A, ADDR_C, 0, 64);
	/* a train of 11 to QP 5 (the last shorter), one to QP 6, two to
	 * QP 5 again; then two ACK-sized packets to QP 5: a train too */
	for (uint32_t k = 0; k < NSENT; k++) {
		s[k].qpn = k == 11 ? 6 : 5;
		s[k].psn = 100 + k;
		s[k].len = build(pkt, sizeof(pkt), &l3, s[k].qpn, s[k].psn,
				 k == 10 ? 333 : k >= 12 ? 4 : PAYLOAD);
		assert_int_equal(model_wire_queue(a, &l3, pkt, s[k].len), 0);
	}
	assert_int_equal(model_wire_flush(a), 0);
	assert_int_equal(model_wire_stats(a)->tx_gso, 2);
	while (got < NSENT &&
	       wire_recv_wait(f, buf, sizeof(buf), &r, &tp, &tlen, &syn, &chk)) {
		assert_int_equal(syn, 0);
		assert_int_equal(chk, 1);
		assert_int_equal(tlen, s[got].len);
		assert_int_equal(ernic_get24(tp + 5), s[got].qpn);
		assert_int_equal(ernic_get24(tp + 9), s[got].psn);
		/* IDs count from each datagram's first packet */
		if (got == 0 || got == 11 || got == 12)
			first = got;
		assert_int_equal(r.ip_id, got - first);
		assert_int_equal(roce_icrc(&r, tp, tlen),
				 ernic_get_le32(tp + tlen - ROCE_ICRC_LEN));
		got++;
	}
	assert_int_equal(got, NSENT);
	assert_int_equal(model_wire_stats(f)->rx_trains, 2);
	assert_int_equal(model_wire_stats(f)->rx_pkts, NSENT);
	model_wire_close(a);
	model_wire_close(f);
}

/* IPv6 (no ID to patch): a port on ::1 sends a train to itself. */
static void test_udp_train_v6(void **state)
{
	static uint8_t buf[ROCE_MAX_FRAME];
	uint8_t pkt[ROCE_MAX_TRANSPORT];
	struct ernic_conf c;
	char err[256] = "";
	struct model_wire *w;
	struct roce_l3 l3;
	size_t len[5];
	uint32_t got = 0;

	(void)state;
	ernic_conf_defaults(&c);
	c.family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, "::1", c.addr), 1);
	c.wire = ERNIC_WIRE_UDP;
	strcpy(c.netdev, "lo");
	w = model_wire_open(&c, err, sizeof(err));
	if (!w) {
		print_message("no UDP port on [::1] (%s): IPv6 not checked\n",
			      err);
		return;
	}
	memset(&l3, 0, sizeof(l3));
	l3.family = AF_INET6;
	memcpy(l3.src, c.addr, 16);
	memcpy(l3.dst, c.addr, 16);
	l3.sport = c.udp_sport;
	l3.dport = ROCE_UDP_PORT;
	l3.ttl = 64;
	for (uint32_t k = 0; k < 5; k++) {
		len[k] = build(pkt, sizeof(pkt), &l3, 5, 300 + k,
			       k == 4 ? 1 : PAYLOAD);
		assert_int_equal(model_wire_queue(w, &l3, pkt, len[k]), 0);
	}
	assert_int_equal(model_wire_flush(w), 0);
	assert_int_equal(model_wire_stats(w)->tx_gso, 1);
	while (got < 5) {
		struct roce_l3 r;
		const uint8_t *tp;
		size_t tlen;
		uint32_t syn;
		int chk;

		if (!wire_recv_wait(w, buf, sizeof(buf), &r, &tp, &tlen, &syn,
				    &chk))
			break;
		assert_int_equal(syn, 0);
		assert_int_equal(chk, 1);	/* no ID to solve: the engine's */
		assert_int_equal(tlen, len[got]);
		assert_int_equal(ernic_get24(tp + 9), 300 + got);
		assert_int_equal(roce_icrc(&r, tp, tlen),
				 ernic_get_le32(tp + tlen - ROCE_ICRC_LEN));
		got++;
	}
	assert_int_equal(got, 5);
	assert_int_equal(model_wire_stats(w)->rx_calls, 1);
	model_wire_close(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_slot),
		cmocka_unit_test(test_gro_split),
		cmocka_unit_test(test_train_seg),
		cmocka_unit_test(test_udp_train),
		cmocka_unit_test(test_udp_no_offload),
		cmocka_unit_test(test_send_keeps_order),
		cmocka_unit_test(test_train_ids),
		cmocka_unit_test(test_udp_train_v6),
		cmocka_unit_test(test_frame_gets_trains),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
