// SPDX-License-Identifier: MIT
/*
 * PG332 Table 2-3 end to end, one row per test: a QP of the software
 * device ernict0 (127.0.0.2) is really connected, through verbs, to a
 * peer this program plays with a UDP socket on PEER_IP:4791. The peer
 * sends packets that fail one check each (built with the model's own
 * encoder, so that all but the fault is right, the ICRC included) and
 * checks what the row says: the syndrome counted from the error buffer
 * by the provider (ernicctl stats), and the impact: dropped (no reply,
 * nothing in memory, the next right packet taken at the same PSN), the
 * NAK with its AETH syndrome on the peer's socket, or the QP FATAL
 * (STATQPi, and the incoming packet error status entry with its
 * Table 2-4 code as ernicctl stats decodes it). docs/syndromes.md has
 * the table of rows and tests.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ernic_syndrome.h"
#include "ibta.h"
#include "roce_pkt.h"
#include "syn_util.h"
#include "verbs_util.h"

#define DEV_IP "127.0.0.2"	/* DEV4 */
#define PEER_IP "127.0.0.21"	/* the crafted peer */
#define OTHER_IP "127.0.0.22"	/* somebody else (row 27) */
#define PEER_QPN 0x000321u
#define RQ_PSN 0x000100u	/* what the device expects first */
#define SQ_PSN 0x000500u	/* what the device sends first */
#define BUF 2048u
#define NRECV 4u
#define WAIT_MS 3000

struct peer {
	int fd;
	struct roce_l3 l3;	/* peer -> device */
	struct sockaddr_in dev;
};

static struct ibv_context *ctx;
static struct peer peer, other;

struct conn {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* NRECV receive buffers, then a send one */
	uint32_t qpn;
};

/* ---- the peer's socket ---- */

static void peer_open(struct peer *p, const char *ip, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	socklen_t sl = sizeof(a);
	int on = IP_PMTUDISC_DO;

	memset(p, 0, sizeof(*p));
	assert_int_equal(inet_pton(AF_INET, ip, &a.sin_addr), 1);
	p->fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(p->fd >= 0);
	/* DF: Linux then writes IP ID 0, which the ICRC covers */
	assert_int_equal(setsockopt(p->fd, IPPROTO_IP, IP_MTU_DISCOVER, &on,
				    sizeof(on)), 0);
	if (bind(p->fd, (struct sockaddr *)&a, sizeof(a)))
		fail_msg("bind %s:%u: %s", ip, port, strerror(errno));
	assert_int_equal(getsockname(p->fd, (struct sockaddr *)&a, &sl), 0);
	p->dev.sin_family = AF_INET;
	p->dev.sin_port = htons(ROCE_UDP_PORT);
	assert_int_equal(inet_pton(AF_INET, DEV_IP, &p->dev.sin_addr), 1);
	p->l3.family = AF_INET;
	memcpy(p->l3.src, &a.sin_addr, 4);
	memcpy(p->l3.dst, &p->dev.sin_addr, 4);
	p->l3.sport = ntohs(a.sin_port);
	p->l3.dport = ROCE_UDP_PORT;
	p->l3.ttl = 64;
}

static void put_icrc(const struct peer *p, uint8_t *b, size_t len)
{
	uint32_t crc = roce_icrc(&p->l3, b, len);

	for (int k = 0; k < 4; k++)
		b[len - ROCE_ICRC_LEN + k] = (uint8_t)(crc >> (8 * k));
}

static void wire(const struct peer *p, const uint8_t *b, size_t len)
{
	assert_int_equal(sendto(p->fd, b, len, 0, (const void *)&p->dev,
				sizeof(p->dev)), (ssize_t)len);
}

/* Build pk to the device; opcode_on_wire (when not pk->opcode) replaces
 * the opcode afterwards, the ICRC made right again. */
static size_t build(const struct peer *p, struct roce_pkt *pk,
		    uint8_t opcode_on_wire, uint8_t *b, size_t cap)
{
	size_t len;

	pk->migreq = true;
	pk->pkey = ROCE_DEFAULT_PKEY;
	pk->ackreq = true;
	len = roce_build(b, cap, pk, &p->l3);
	assert_int_not_equal(len, 0);
	if (opcode_on_wire != pk->opcode) {
		b[0] = opcode_on_wire;	/* BTH OpCode */
		put_icrc(p, b, len);
	}
	return len;
}

static void tx_send(const struct peer *p, uint32_t qpn, uint8_t op,
		    uint32_t psn, const char *data, uint32_t len)
{
	uint8_t b[ROCE_MAX_TRANSPORT];
	struct roce_pkt pk = { .opcode = op, .dqpn = qpn, .psn = psn,
			       .payload = (const uint8_t *)data,
			       .payload_len = len };

	wire(p, b, build(p, &pk, op, b, sizeof(b)));
}

static void tx_ack(uint32_t qpn, uint8_t syn, uint32_t psn)
{
	uint8_t b[64];
	struct roce_pkt pk = { .opcode = ROCE_RC_ACK, .dqpn = qpn, .psn = psn,
			       .aeth_syndrome = syn, .aeth_msn = 1 };

	wire(&peer, b, build(&peer, &pk, ROCE_RC_ACK, b, sizeof(b)));
}

/* The next packet from the device to the peer within ms into *pk (its
 * payload pointing into a static buffer); false if none came. */
static bool rx(struct roce_pkt *pk, int ms)
{
	return syn_recv(peer.fd, &peer.l3, pk, ms);
}

/* The device's next answer: an ACK/NAK whose AETH syndrome, masked
 * with mask, is want, for psn. */
static void want_aeth(uint8_t mask, uint8_t want, uint32_t psn)
{
	struct roce_pkt pk;

	if (!rx(&pk, WAIT_MS))
		fail_msg("no answer (AETH 0x%02x wanted)", want);
	assert_int_equal(pk.opcode, ROCE_RC_ACK);
	assert_int_equal(pk.dqpn, PEER_QPN);
	assert_int_equal(pk.aeth_syndrome & mask, want);
	assert_int_equal(pk.psn, psn);
}

static void no_answer(void)
{
	syn_no_answer(peer.fd, &peer.l3);
}

static void drain(int fd)
{
	uint8_t b[64];

	while (recv(fd, b, sizeof(b), MSG_DONTWAIT) >= 0)
		;
}

/* ---- what ernicctl stats says ---- */

static void stats(struct syn_stats *s)
{
	syn_stats(DEV4, s);
}

/* Wait until syndrome bit has been counted want times more than in
 * before (and exactly that); other bits must not move. */
static void want_syn(const struct syn_stats *before, uint32_t bit,
		     uint64_t want)
{
	syn_want(DEV4, before, bit, want, WAIT_MS);
}

/* QP c went FATAL with Table 2-4 code: STATQPi, the IPKTERRQ entry as
 * ernicctl stats decodes it, the count by code. */
static void want_fatal(const struct conn *c, const struct syn_stats *before,
		       uint32_t code)
{
	struct syn_stats now;

	assert_true(tu_rd(ctx, ERNIC_QP(c->qpn, ERNIC_STATQP)) &
		    ERNIC_STATQP_FATAL);
	for (int t = 0; t < WAIT_MS / 50; t++) {
		stats(&now);
		if (now.fatal[code] > before->fatal[code])
			break;
		usleep(50000);
	}
	assert_int_equal(now.fatal[code] - before->fatal[code], 1);
	assert_int_equal(now.last_qp, c->qpn);
	assert_int_equal(now.last_code, code);
	assert_string_equal(now.last_text, ernic_fatal_text(code, NULL));
}

static void not_fatal(const struct conn *c)
{
	assert_false(tu_rd(ctx, ERNIC_QP(c->qpn, ERNIC_STATQP)) &
		     ERNIC_STATQP_FATAL);
}

/* ---- the device's QP ---- */

static void post_recv(struct conn *c, uint32_t k)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(c->buf + k * BUF),
			       .length = BUF, .lkey = c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = k, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	assert_int_equal(ibv_post_recv(c->qp, &wr, &bad), 0);
}

/* A QP of the device connected to the peer, nrecv receives posted. */
static void conn_up(struct conn *c, uint32_t nrecv)
{
	struct ibv_qp_attr a;
	int mask;

	memset(c, 0, sizeof(*c));
	drain(peer.fd);
	c->pd = ibv_alloc_pd(ctx);
	c->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	assert_non_null(c->pd);
	assert_non_null(c->cq);
	c->buf = calloc(NRECV + 1, BUF);
	assert_non_null(c->buf);
	c->mr = ibv_reg_mr(c->pd, c->buf, (NRECV + 1) * BUF,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	assert_non_null(c->mr);
	c->qp = tu_rc_qp(c->pd, c->cq, 4, NRECV);
	c->qpn = c->qp->qp_num;
	tu_init_attr(&a, &mask);
	assert_int_equal(ibv_modify_qp(c->qp, &a, mask), 0);
	for (uint32_t k = 0; k < nrecv; k++)
		post_recv(c, k);
	tu_rtr_attr(&a, &mask, PEER_IP, PEER_QPN, RQ_PSN);
	assert_int_equal(ibv_modify_qp(c->qp, &a, mask), 0);
	tu_rts_attr(&a, &mask, SQ_PSN);
	assert_int_equal(ibv_modify_qp(c->qp, &a, mask), 0);
}

static void conn_down(struct conn *c)
{
	assert_int_equal(ibv_destroy_qp(c->qp), 0);
	assert_int_equal(ibv_dereg_mr(c->mr), 0);
	assert_int_equal(ibv_destroy_cq(c->cq), 0);
	assert_int_equal(ibv_dealloc_pd(c->pd), 0);
	free(c->buf);
}

static bool poll_one(struct conn *c, struct ibv_wc *wc, int ms)
{
	for (int t = 0; t < ms; t++) {
		int n = ibv_poll_cq(c->cq, 1, wc);

		assert_true(n >= 0);
		if (n)
			return true;
		usleep(1000);
	}
	return false;
}

/* Dropped means gone without a trace: the right SEND at the same PSN
 * is then taken, ACKed, and is the first thing in the RQ. */
static void next_taken(struct conn *c, uint32_t psn)
{
	static const char msg[] = "the right one";
	struct ibv_wc wc;

	tx_send(&peer, c->qpn, ROCE_RC_SEND_ONLY, psn, msg, sizeof(msg));
	want_aeth(ROCE_AETH_TYPE_MASK, ROCE_AETH_ACK, psn);
	assert_true(poll_one(c, &wc, WAIT_MS));
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.wr_id, 0);
	assert_int_equal(wc.byte_len, sizeof(msg));
	assert_memory_equal(c->buf, msg, sizeof(msg));
	not_fatal(c);
}

/* A dropped row: the packet, n times, counted under bit, no answer, the
 * QP untouched. */
static void dropped(struct conn *c, uint32_t bit, const uint8_t *b,
		    size_t len, const struct peer *from, int n)
{
	struct syn_stats s;

	stats(&s);
	for (int k = 0; k < n; k++)
		wire(from, b, len);
	want_syn(&s, bit, (uint64_t)n);
	no_answer();
	next_taken(c, RQ_PSN);
}

/* ---- the rows ---- */

static const char data[64] = "Table 2-3, one check failed";

/* Rows 13, 14, 30, 31: failed before the QP is looked at. */
static void test_row13_bth_version(void **state)
{
	struct conn c;
	uint8_t b[256];
	struct roce_pkt pk = { .opcode = ROCE_RC_SEND_ONLY, .psn = RQ_PSN,
			       .tver = 1, .payload = (const uint8_t *)data,
			       .payload_len = sizeof(data) };

	(void)state;
	conn_up(&c, NRECV);
	pk.dqpn = c.qpn;
	dropped(&c, 13, b, build(&peer, &pk, pk.opcode, b, sizeof(b)), &peer,
		3);
	conn_down(&c);
}

static void test_row14_qp_unsupported(void **state)
{
	struct conn c;
	uint8_t b[256];
	struct roce_pkt pk = { .opcode = ROCE_RC_SEND_ONLY, .psn = RQ_PSN,
			       .dqpn = TEST_C_NUM_QP + 1,
			       .payload = (const uint8_t *)data,
			       .payload_len = sizeof(data) };

	(void)state;
	conn_up(&c, NRECV);
	dropped(&c, 14, b, build(&peer, &pk, pk.opcode, b, sizeof(b)), &peer,
		3);
	conn_down(&c);
}

static void test_row30_icrc(void **state)
{
	struct conn c;
	uint8_t b[256];
	struct roce_pkt pk = { .opcode = ROCE_RC_SEND_ONLY, .psn = RQ_PSN,
			       .payload = (const uint8_t *)data,
			       .payload_len = sizeof(data) };
	size_t len;

	(void)state;
	conn_up(&c, NRECV);
	pk.dqpn = c.qpn;
	len = build(&peer, &pk, pk.opcode, b, sizeof(b));
	b[len - 1] ^= 0xFF;
	dropped(&c, 30, b, len, &peer, 3);
	conn_down(&c);
}

/* Row 31 is the FCS; a UDP wire has none, the model gives the bit to a
 * packet cut short of its headers (ernic_syndrome.c). */
static void test_row31_short(void **state)
{
	struct conn c;
	uint8_t b[256];
	struct roce_pkt pk = { .opcode = ROCE_RC_SEND_ONLY, .psn = RQ_PSN,
			       .payload = (const uint8_t *)data,
			       .payload_len = sizeof(data) };

	(void)state;
	conn_up(&c, NRECV);
	pk.dqpn = c.qpn;
	build(&peer, &pk, pk.opcode, b, sizeof(b));
	dropped(&c, 31, b, ROCE_BTH_LEN, &peer, 2);
	conn_down(&c);
}

/* Row 18: a FIRST with pad bits (a 1021-byte ONLY, pad 3, relabeled). */
static void test_row18_pad(void **state)
{
	struct conn c;
	static uint8_t b[ROCE_MAX_TRANSPORT], big[1021];
	struct roce_pkt pk = { .opcode = ROCE_RC_SEND_ONLY, .psn = RQ_PSN,
			       .payload = big, .payload_len = sizeof(big) };
	size_t len;

	(void)state;
	conn_up(&c, NRECV);
	pk.dqpn = c.qpn;
	memset(big, 0xA5, sizeof(big));
	len = build(&peer, &pk, ROCE_RC_SEND_FIRST, b, sizeof(b));
	assert_int_equal(pk.pad, 3);
	dropped(&c, 18, b, len, &peer, 2);
	conn_down(&c);
}

/* Row 19: a FIRST shorter than the path MTU (1024). */
static void test_row19_pmtu(void **state)
{
	struct conn c;
	static uint8_t b[ROCE_MAX_TRANSPORT], half[512];
	struct roce_pkt pk = { .opcode = ROCE_RC_SEND_FIRST, .psn = RQ_PSN,
			       .payload = half, .payload_len = sizeof(half) };

	(void)state;
	conn_up(&c, NRECV);
	pk.dqpn = c.qpn;
	memset(half, 0x5A, sizeof(half));
	dropped(&c, 19, b, build(&peer, &pk, pk.opcode, b, sizeof(b)), &peer,
		2);
	conn_down(&c);
}

/* Row 27: the QP's PSN and number right, the source address not its
 * remote's. */
static void test_row27_ip_src(void **state)
{
	struct conn c;
	uint8_t b[256];
	struct roce_pkt pk = { .opcode = ROCE_RC_SEND_ONLY, .psn = RQ_PSN,
			       .payload = (const uint8_t *)data,
			       .payload_len = sizeof(data) };

	(void)state;
	conn_up(&c, NRECV);
	pk.dqpn = c.qpn;
	dropped(&c, 27, b, build(&other, &pk, pk.opcode, b, sizeof(b)),
		&other, 3);
	conn_down(&c);
}

/* Row 16: a MIDDLE outside any message, with the expected PSN:
 * NAK-Invalid, FATAL (Table 2-4 0x01); the QP's packets are row 15
 * from then on. */
static void test_row16_opcode_seq(void **state)
{
	struct conn c;
	static char mid[1024];
	struct syn_stats s;
	uint8_t b[256];
	struct roce_pkt pk = { .opcode = ROCE_RC_SEND_ONLY, .psn = RQ_PSN,
			       .payload = (const uint8_t *)data,
			       .payload_len = sizeof(data) };
	size_t len;

	(void)state;
	conn_up(&c, NRECV);
	stats(&s);
	tx_send(&peer, c.qpn, ROCE_RC_SEND_MIDDLE, RQ_PSN, mid, sizeof(mid));
	want_aeth(0xFF, ROCE_AETH_NAK | ROCE_NAK_INVALID_REQ, RQ_PSN);
	want_syn(&s, 16, 1);
	want_fatal(&c, &s, ERNIC_FATAL_OPCODE_SEQ);
	pk.dqpn = c.qpn;
	len = build(&peer, &pk, pk.opcode, b, sizeof(b));
	stats(&s);
	wire(&peer, b, len);
	want_syn(&s, 15, 1);
	no_answer();
	conn_down(&c);
}

/* Row 17: an atomic (unsupported) with the expected PSN: NAK-Invalid,
 * FATAL (Table 2-4 0x04). */
static void test_row17_unsupported(void **state)
{
	struct conn c;
	struct syn_stats s;
	uint8_t b[256];
	static const uint8_t eth[ROCE_ATOMIC_ETH_LEN];
	struct roce_pkt pk = { .opcode = ROCE_RC_SEND_ONLY, .psn = RQ_PSN,
			       .payload = eth, .payload_len = sizeof(eth) };
	size_t len;

	(void)state;
	conn_up(&c, NRECV);
	pk.dqpn = c.qpn;
	len = build(&peer, &pk, ROCE_RC_CMP_SWAP, b, sizeof(b));
	stats(&s);
	wire(&peer, b, len);
	want_aeth(0xFF, ROCE_AETH_NAK | ROCE_NAK_INVALID_REQ, RQ_PSN);
	want_syn(&s, 17, 1);
	want_fatal(&c, &s, ERNIC_FATAL_UNSUPPORTED_OPCODE);
	conn_down(&c);
}

/* Row 20: no receive posted: RNR NAK; once one is, the same PSN is
 * taken. */
static void test_row20_rq_full(void **state)
{
	struct conn c;
	struct syn_stats s;

	(void)state;
	conn_up(&c, 0);
	stats(&s);
	tx_send(&peer, c.qpn, ROCE_RC_SEND_ONLY, RQ_PSN, data, sizeof(data));
	want_aeth(ROCE_AETH_TYPE_MASK, ROCE_AETH_RNR, RQ_PSN);
	want_syn(&s, 20, 1);
	not_fatal(&c);
	post_recv(&c, 0);
	next_taken(&c, RQ_PSN);
	conn_down(&c);
}

/* Row 21: a PSN ahead: one NAK-Sequence for the expected PSN, silence
 * for the next, both counted; the expected PSN is then taken. */
static void test_row21_psn(void **state)
{
	struct conn c;
	struct syn_stats s;

	(void)state;
	conn_up(&c, NRECV);
	stats(&s);
	tx_send(&peer, c.qpn, ROCE_RC_SEND_ONLY, RQ_PSN + 3, data,
		sizeof(data));
	want_aeth(0xFF, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ, RQ_PSN);
	tx_send(&peer, c.qpn, ROCE_RC_SEND_ONLY, RQ_PSN + 4, data,
		sizeof(data));
	want_syn(&s, 21, 2);
	no_answer();
	next_taken(&c, RQ_PSN);
	conn_down(&c);
}

/* The device sends a SEND; the peer sees it. */
static void dev_send(struct conn *c)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(c->buf + NRECV * BUF),
			       .length = sizeof(data), .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 77, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct roce_pkt pk;

	memcpy(c->buf + NRECV * BUF, data, sizeof(data));
	assert_int_equal(ibv_post_send(c->qp, &wr, &bad), 0);
	assert_true(rx(&pk, WAIT_MS));
	assert_int_equal(pk.opcode, ROCE_RC_SEND_ONLY);
	assert_int_equal(pk.dqpn, PEER_QPN);
	assert_int_equal(pk.psn, SQ_PSN);
}

/* Row 22: an ACK whose AETH has the reserved type: dropped, the SEND
 * not completed; a right ACK completes it. */
static void test_row22_aeth(void **state)
{
	struct conn c;
	struct ibv_wc wc;
	struct syn_stats s;

	(void)state;
	conn_up(&c, NRECV);
	dev_send(&c);
	stats(&s);
	tx_ack(c.qpn, ROCE_AETH_RSVD, SQ_PSN);
	want_syn(&s, 22, 1);
	assert_false(poll_one(&c, &wc, 100));
	not_fatal(&c);
	tx_ack(c.qpn, ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID, SQ_PSN);
	assert_true(poll_one(&c, &wc, WAIT_MS));
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 77);
	conn_down(&c);
}

/* Row 23: a NAK-Invalid for the device's SEND: FATAL (Table 2-4 0x0A,
 * remote), the SEND completes in error. Before it, an ACK for a PSN
 * never sent, a bad response the model drops (IBTA) without FATAL. */
static void test_row23_bad_response(void **state)
{
	struct conn c;
	struct ibv_wc wc;
	struct syn_stats s;

	(void)state;
	conn_up(&c, NRECV);
	dev_send(&c);
	stats(&s);
	tx_ack(c.qpn, ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID, SQ_PSN + 9);
	want_syn(&s, 23, 1);
	assert_false(poll_one(&c, &wc, 100));
	not_fatal(&c);
	stats(&s);
	tx_ack(c.qpn, ROCE_AETH_NAK | ROCE_NAK_INVALID_REQ, SQ_PSN);
	want_syn(&s, 23, 1);
	assert_true(poll_one(&c, &wc, WAIT_MS));
	assert_int_equal(wc.status, IBV_WC_REM_INV_REQ_ERR);
	assert_int_equal(wc.wr_id, 77);
	want_fatal(&c, &s, ERNIC_FATAL_REMOTE_NAK);
	conn_down(&c);
}

/* Not a Table 2-3 row: a WRITE with a wrong R_Key is NAK-Remote-Access
 * and FATAL (Table 2-4 0x15) with nothing in the error buffer. */
static void test_rkey_no_syndrome(void **state)
{
	struct conn c;
	struct syn_stats s;
	uint8_t b[256];
	struct roce_pkt pk = { .opcode = ROCE_RC_WRITE_ONLY, .psn = RQ_PSN,
			       .payload = (const uint8_t *)data,
			       .payload_len = sizeof(data) };

	(void)state;
	conn_up(&c, NRECV);
	pk.dqpn = c.qpn;
	pk.reth_va = (uintptr_t)c.buf;
	pk.reth_rkey = c.mr->rkey ^ 0x100;	/* another key generation */
	pk.reth_len = sizeof(data);
	stats(&s);
	wire(&peer, b, build(&peer, &pk, pk.opcode, b, sizeof(b)));
	want_aeth(0xFF, ROCE_AETH_NAK | ROCE_NAK_REMOTE_ACCESS, RQ_PSN);
	want_fatal(&c, &s, ERNIC_FATAL_RKEY_ACCESS);
	want_syn(&s, 0, 0);
	for (size_t k = 0; k < sizeof(data); k++)
		assert_int_equal(c.buf[k], 0);
	conn_down(&c);
}

static int setup(void **state)
{
	(void)state;
	ctx = tu_open(DEV4);
	peer_open(&peer, PEER_IP, ROCE_UDP_PORT);
	peer_open(&other, OTHER_IP, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	close(peer.fd);
	close(other.fd);
	ibv_close_device(ctx);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_row13_bth_version),
		cmocka_unit_test(test_row14_qp_unsupported),
		cmocka_unit_test(test_row16_opcode_seq),
		cmocka_unit_test(test_row17_unsupported),
		cmocka_unit_test(test_row18_pad),
		cmocka_unit_test(test_row19_pmtu),
		cmocka_unit_test(test_row20_rq_full),
		cmocka_unit_test(test_row21_psn),
		cmocka_unit_test(test_row22_aeth),
		cmocka_unit_test(test_row23_bad_response),
		cmocka_unit_test(test_row27_ip_src),
		cmocka_unit_test(test_row30_icrc),
		cmocka_unit_test(test_row31_short),
		cmocka_unit_test(test_rkey_no_syndrome),
	};

	tu_require_env();
	return cmocka_run_group_tests(tests, setup, teardown);
}
