// SPDX-License-Identifier: MIT
/*
 * Payloads sent from where they are (model_wire_queue_split,
 * model/wire_batch.h): a train mixing packets whose payload stays in
 * the sender's memory with packets built whole arrives as one datagram
 * whose packets are byte for byte what roce_build makes, each with the
 * ICRC of its IPv4 ID; the payload is read at the flush, not when
 * queued (no copy was made); a tap port gets the packet glued. Real
 * sockets on 127.0.0.68 (sender) and .69 (receiver).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "ernic_conf.h"
#include "ernic_wire.h"
#include "model_wire.h"
#include "roce_pkt.h"
#include "wire_test_util.h"

#define ADDR_A "127.0.0.68"
#define ADDR_B "127.0.0.69"
#define PAY 1024u
#define NPKT 6u

static struct model_wire *wa, *wb;	/* closed by the teardown */

static int close_wires(void **state)
{
	(void)state;
	model_wire_close(wa);
	model_wire_close(wb);
	wa = wb = NULL;
	return 0;
}

static void l3_a_to_b(struct roce_l3 *l3, uint16_t sport)
{
	memset(l3, 0, sizeof(*l3));
	l3->family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, ADDR_A, l3->src), 1);
	assert_int_equal(inet_pton(AF_INET, ADDR_B, l3->dst), 1);
	l3->sport = sport;
	l3->dport = ROCE_UDP_PORT;
	l3->ttl = 64;
}

/* Packet k to QP 5: WRITE MIDDLE of PAY bytes, the last a shorter WRITE
 * LAST (pad 3), payload bytes from pay[k]. */
static void pkt_k(struct roce_pkt *p, uint32_t k, const uint8_t *pay)
{
	*p = (struct roce_pkt){
		.opcode = k + 1 < NPKT ? ROCE_RC_WRITE_MIDDLE :
					 ROCE_RC_WRITE_LAST,
		.migreq = true, .pkey = ROCE_DEFAULT_PKEY, .dqpn = 5,
		.psn = 200 + k, .payload = pay,
		.payload_len = k + 1 < NPKT ? PAY : 333,
	};
}

/* Queue packet k: even ones split (payload left in pay), odd whole. */
static void queue_k(struct model_wire *w, const struct roce_l3 *l3,
		    uint32_t k, const uint8_t *pay)
{
	uint8_t b[ROCE_MAX_TRANSPORT];
	struct roce_pkt p;
	size_t n, hl;

	pkt_k(&p, k, pay);
	if (k % 2) {
		n = roce_build(b, sizeof(b), &p, l3);
		assert_int_not_equal(n, 0);
		assert_int_equal(model_wire_queue(w, l3, b, n), 0);
		return;
	}
	n = roce_build_split(b, sizeof(b), &p, l3, &hl);
	assert_int_not_equal(n, 0);
	assert_int_equal(model_wire_queue_split(w, l3, b, n, hl, pay,
						p.payload_len), 0);
	memset(b, 0xEE, sizeof(b));	/* the slot is the wire's, not b */
}

static void test_split_train(void **state)
{
	static uint8_t pay[NPKT][PAY], want[ROCE_MAX_TRANSPORT],
		buf[ROCE_MAX_FRAME];
	const struct model_wire_stats *ta;
	struct roce_l3 l3, got_l3;
	uint16_t sport;
	uint64_t gen;

	(void)state;
	wa = wire_open_udp(ADDR_A, &sport);
	wb = wire_open_udp(ADDR_B, NULL);
	l3_a_to_b(&l3, sport);
	gen = model_wire_tx_gen(wa);
	for (uint32_t k = 0; k < NPKT; k++) {
		for (uint32_t j = 0; j < PAY; j++)
			pay[k][j] = (uint8_t)(k * 31 + j);
		queue_k(wa, &l3, k, pay[k]);
	}
	/* queued, not gone: the generation moves when the batch goes */
	assert_int_equal(model_wire_tx_gen(wa), gen);
	assert_int_equal(model_wire_flush(wa), 0);
	assert_int_equal(model_wire_tx_gen(wa), gen + 1);
	assert_int_equal(model_wire_flush(wa), 0);	/* nothing: no move */
	assert_int_equal(model_wire_tx_gen(wa), gen + 1);
	ta = model_wire_stats(wa);
	assert_int_equal(ta->tx_pkts, NPKT);
	assert_int_equal(ta->tx_datagrams, 1);	/* one train */
	assert_int_equal(ta->tx_gso, 1);
	for (uint32_t k = 0; k < NPKT; k++) {
		const uint8_t *tp;
		size_t tlen, n;
		uint32_t syn;
		int chk;
		struct roce_pkt p;
		struct roce_l3 l3k = l3;

		assert_true(wire_recv_wait(wb, buf, sizeof(buf), &got_l3, &tp,
					   &tlen, &syn, &chk));
		assert_int_equal(syn, 0);
		assert_int_equal(chk, 0);	/* an ID made the ICRC good */
		/* segment k carries the ICRC of IPv4 ID k (wire_batch.h) */
		assert_int_equal(got_l3.ip_id, k);
		l3k.ip_id = (uint16_t)k;
		pkt_k(&p, k, pay[k]);
		n = roce_build(want, sizeof(want), &p, &l3k);
		assert_int_equal(tlen, n);
		assert_memory_equal(tp, want, n);
	}
	assert_int_equal(model_wire_stats(wb)->rx_calls, 1);
}

/* The payload is taken when the batch is flushed: a byte changed after
 * queueing is what arrives (and the ICRC, made before, no longer holds). */
static void test_split_reads_at_flush(void **state)
{
	static uint8_t pay[PAY], buf[ROCE_MAX_FRAME];
	struct roce_l3 l3, got_l3;
	const uint8_t *tp;
	size_t tlen, hl = roce_hdrs_len(ROCE_RC_WRITE_MIDDLE);
	uint32_t syn;
	uint16_t sport, id;
	int chk;

	(void)state;
	wa = wire_open_udp(ADDR_A, &sport);
	wb = wire_open_udp(ADDR_B, NULL);
	l3_a_to_b(&l3, sport);
	memset(pay, 0x11, sizeof(pay));
	queue_k(wa, &l3, 0, pay);
	pay[100] = 0x77;
	assert_int_equal(model_wire_flush(wa), 0);
	assert_true(wire_recv_wait(wb, buf, sizeof(buf), &got_l3, &tp,
				   &tlen, &syn, &chk));
	assert_int_equal(tlen, hl + PAY + ROCE_ICRC_LEN);
	assert_int_equal(tp[hl + 100], 0x77);
	assert_int_equal(tp[hl + 99], 0x11);
	assert_int_equal(chk, 1);	/* left to the engine, which drops it */
	assert_false(roce_icrc_solve_ip_id(&got_l3, tp, tlen, &id));
}

struct tapped {
	uint8_t b[ROCE_MAX_TRANSPORT];
	size_t n;
	int calls;
};

static void tap_tx(void *arg, const struct roce_l3 *l3, const uint8_t *tp,
		   size_t tlen)
{
	struct tapped *t = arg;

	(void)l3;
	assert_true(tlen <= sizeof(t->b));
	memcpy(t->b, tp, tlen);
	t->n = tlen;
	t->calls++;
}

/* A port without a send batch (tap, frame) gets the packet glued. */
static void test_split_on_tap(void **state)
{
	static uint8_t pay[PAY], want[ROCE_MAX_TRANSPORT];
	struct tapped t = { .n = 0 };
	struct roce_l3 l3;
	struct roce_pkt p;
	size_t n;

	(void)state;
	wa = model_wire_open_tap(AF_INET, tap_tx, &t);
	assert_non_null(wa);
	assert_null(model_wire_tx_slot(wa));	/* the engine copies here */
	l3_a_to_b(&l3, 49152);
	for (uint32_t j = 0; j < PAY; j++)
		pay[j] = (uint8_t)(j ^ 0x5A);
	queue_k(wa, &l3, NPKT - 1, pay);	/* (odd: whole) */
	queue_k(wa, &l3, 0, pay);		/* split */
	assert_int_equal(t.calls, 2);	/* sent at once, copied */
	assert_int_equal(model_wire_tx_gen(wa), 0);
	pkt_k(&p, 0, pay);
	n = roce_build(want, sizeof(want), &p, &l3);
	assert_int_equal(t.n, n);
	assert_memory_equal(t.b, want, n);
	/* what cannot be a packet is refused before anything is sent */
	assert_int_equal(model_wire_queue_split(wa, &l3, want, 8, 9, pay, 4),
			 EINVAL);
	assert_int_equal(model_wire_queue_split(wa, &l3, want, 16, 12, NULL,
						4), EINVAL);
	assert_int_equal(model_wire_queue_split(wa, &l3, want, 16, 12, pay,
						ROCE_MAX_TRANSPORT), EMSGSIZE);
	assert_int_equal(t.calls, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_split_train, close_wires),
		cmocka_unit_test_teardown(test_split_reads_at_flush,
					  close_wires),
		cmocka_unit_test_teardown(test_split_on_tap, close_wires),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
