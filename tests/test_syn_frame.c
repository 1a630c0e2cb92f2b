// SPDX-License-Identifier: MIT
/*
 * PG332 Table 2-3's MAC, IPv4 and UDP rows end to end, on the frame wire:
 * the rows a UDP-wire device never sees (the kernel's IP and UDP layers
 * decide them there). Run by syn_frame.sh: namespace A holds the
 * frame-wire software device NS_DEV on one end of a veth pair, the peer
 * namespace (argv[1]) the other end, PEER_IF, which this program plays
 * from A through sockets made in the peer's namespace: an AF_PACKET
 * socket on PEER_IF sends hand-made Ethernet frames, a UDP socket on
 * PEER_IP:4791 takes the device's answers.
 *
 * A QP of the device is connected through verbs to the peer (its remote
 * MAC resolved by ARP over the veth: PEER_MAC). Each row's frame is a
 * SEND_ONLY to it at the expected PSN, built by the model's encoder
 * (roce_build, roce_frame_build), then given exactly one header fault.
 * The ICRC covers the IP and UDP headers, some fields masked (IBTA
 * A17.3.3): a fault outside it (Ethernet) or in a masked field (IPv4
 * header checksum) keeps the encoder's ICRC, which the test checks is
 * still right over the faulty header; a fault in a covered field gets
 * the ICRC recomputed over the faulty header (the test's own masks over
 * zlib's CRC-32, checked against the model's roce_icrc on a right
 * frame), so that only the intended check fails. Each case then checks the row:
 * the syndrome counted by ernicctl stats (that bit, that many times, no
 * other bit), and "dropped": no answer, and the right SEND sent next at
 * the same PSN is ACKed and is the first thing in the RQ.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "ernic_syndrome.h"
#include "ernic_wire.h"
#include "ibta.h"
#include "roce_pkt.h"
#include "syn_util.h"
#include "verbs_util.h"

/* As syn_frame.sh makes them. */
#define NS_DEV "ernicsf"
#define DEV_IP "198.51.100.27"	/* on ernsfa, DEV_MAC */
#define PEER_IP "198.51.100.28"	/* on PEER_IF, PEER_MAC */
#define NOBODY_IP "198.51.100.29"	/* nobody's: row 8 */
#define DEV_IP6 "2001:db8:51::27"	/* row 2 by family: the device has */
#define PEER_IP6 "2001:db8:51::28"	/* no IPv6 address (documentation) */
#define PEER_IF "ernsfb"
static const uint8_t dev_mac[6] = { 0x02, 0x00, 0x5e, 0x10, 0x22, 0x27 };
static const uint8_t peer_mac[6] = { 0x02, 0x00, 0x5e, 0x10, 0x22, 0x28 };
/* a MAC nobody has: another destination (row 0), another source (28) */
static const uint8_t other_mac[6] = { 0x02, 0x00, 0x5e, 0x10, 0x22, 0x99 };

#define PEER_QPN 0x000654u
#define PEER_SPORT 49152u
#define RQ_PSN 0x000200u
#define SQ_PSN 0x000700u
#define BUF 2048u
#define NRECV 4u
#define WAIT_MS 3000

#define ETH_SRC 6u		/* Ethernet source address offset */
#define IP_OFF(f) ((f)->b + ROCE_ETH_LEN)

static const char *peer_ns;
static struct ibv_context *ctx;

static struct {
	int raw;		/* AF_PACKET on PEER_IF (peer namespace) */
	int udp;		/* PEER_IP:4791 (peer namespace) */
	struct roce_l3 l3;	/* peer -> device */
} peer;

struct frame {
	uint8_t b[ROCE_MAX_FRAME + 8];
	size_t len;
};

struct conn {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* NRECV receive buffers */
	uint32_t qpn;
};

/* ---- the peer, in its namespace ---- */

static void setns_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fail_msg("open %s: %s", path, strerror(errno));
	if (setns(fd, CLONE_NEWNET))
		fail_msg("setns %s: %s", path, strerror(errno));
	close(fd);
}

/* Both sockets are made in the peer's namespace; the thread comes back
 * to its own before the device is opened (its threads stay in A). */
static void peer_open(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(ROCE_UDP_PORT) };
	struct sockaddr_ll ll = { .sll_family = AF_PACKET };
	char path[256];
	int back = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);

	assert_true(back >= 0);
	snprintf(path, sizeof(path), "/run/netns/%s", peer_ns);
	setns_path(path);
	/* protocol 0: sends only, takes in nothing */
	peer.raw = socket(AF_PACKET, SOCK_RAW, 0);
	assert_true(peer.raw >= 0);
	ll.sll_ifindex = (int)if_nametoindex(PEER_IF);
	assert_true(ll.sll_ifindex > 0);
	if (bind(peer.raw, (struct sockaddr *)&ll, sizeof(ll)))
		fail_msg("bind AF_PACKET %s: %s", PEER_IF, strerror(errno));
	peer.udp = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(peer.udp >= 0);
	assert_int_equal(inet_pton(AF_INET, PEER_IP, &a.sin_addr), 1);
	if (bind(peer.udp, (struct sockaddr *)&a, sizeof(a)))
		fail_msg("bind %s:4791: %s", PEER_IP, strerror(errno));
	if (setns(back, CLONE_NEWNET))
		fail_msg("setns back: %s", strerror(errno));
	close(back);

	memset(&peer.l3, 0, sizeof(peer.l3));
	peer.l3.family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, PEER_IP, peer.l3.src), 1);
	assert_int_equal(inet_pton(AF_INET, DEV_IP, peer.l3.dst), 1);
	peer.l3.sport = PEER_SPORT;
	peer.l3.dport = ROCE_UDP_PORT;
	peer.l3.ttl = 64;
	memcpy(peer.l3.src_mac, peer_mac, 6);
	memcpy(peer.l3.dst_mac, dev_mac, 6);
}

/* A right SEND_ONLY frame under l3 to qpn at psn. */
static void frame_make(struct frame *f, const struct roce_l3 *l3,
		       uint32_t qpn, uint32_t psn, const void *data,
		       uint32_t n)
{
	size_t hl = roce_frame_hdr_len(l3->family), tlen;
	struct roce_pkt pk = { .opcode = ROCE_RC_SEND_ONLY, .migreq = true,
			       .pkey = ROCE_DEFAULT_PKEY, .ackreq = true,
			       .dqpn = qpn, .psn = psn,
			       .payload = data, .payload_len = n };

	tlen = roce_build(f->b + hl, sizeof(f->b) - hl, &pk, l3);
	assert_int_not_equal(tlen, 0);
	f->len = roce_frame_build(f->b, sizeof(f->b), l3, tlen);
	assert_int_equal(f->len, hl + tlen);
}

/* The same from the peer, as the QP knows it. */
static void frame_send(struct frame *f, uint32_t qpn, uint32_t psn,
		       const void *data, uint32_t n)
{
	frame_make(f, &peer.l3, qpn, psn, data, n);
}

static void frame_out(const struct frame *f)
{
	assert_int_equal(send(peer.raw, f->b, f->len, 0), (ssize_t)f->len);
}

/* ---- the ICRC over the headers as they are ---- */

/* CRC-32 (IEEE), chained: zlib's, not the model's ICRC code (which may
 * use ISA-L), over the bytes as the test lays them out. */
static uint32_t crc32_bits(uint32_t crc, const uint8_t *p, size_t n)
{
	return (uint32_t)crc32_z(crc, p, n);
}

/*
 * IBTA A17.3.3 over an IPv4 frame's bytes: 8 bytes of ones for the LRH
 * RoCEv2 lacks, the IPv4 header as long as its IHL says with TOS, TTL
 * and header checksum set to ones, the UDP header with its checksum set
 * to ones, the BTH with its byte 4 (FECN, BECN, reserved) set to ones,
 * then the transport bytes up to the ICRC (the frame's last 4).
 */
static uint32_t icrc_of(const struct frame *f)
{
	static const uint8_t ones[8] = { 0xFF, 0xFF, 0xFF, 0xFF,
					 0xFF, 0xFF, 0xFF, 0xFF };
	const uint8_t *ip = IP_OFF(f);
	size_t ihl = (ip[0] & 0xFu) * 4u;
	const uint8_t *udp = ip + ihl, *tp = udp + ROCE_UDP_LEN;
	size_t tlen = (size_t)(f->b + f->len - tp);
	uint8_t h[60], u[ROCE_UDP_LEN], bth[ROCE_BTH_LEN];
	uint32_t crc;

	assert_true(ihl >= ROCE_IPV4_LEN && ihl <= sizeof(h));
	assert_true(tlen >= ROCE_BTH_LEN + ROCE_ICRC_LEN);
	memcpy(h, ip, ihl);
	h[1] = 0xFF;			/* TOS */
	h[8] = 0xFF;			/* TTL */
	h[10] = h[11] = 0xFF;		/* header checksum */
	memcpy(u, udp, sizeof(u));
	u[6] = u[7] = 0xFF;		/* UDP checksum */
	memcpy(bth, tp, sizeof(bth));
	bth[4] = 0xFF;
	crc = crc32_bits(0, ones, sizeof(ones));
	crc = crc32_bits(crc, h, ihl);
	crc = crc32_bits(crc, u, sizeof(u));
	crc = crc32_bits(crc, bth, sizeof(bth));
	return crc32_bits(crc, tp + ROCE_BTH_LEN,
			  tlen - ROCE_BTH_LEN - ROCE_ICRC_LEN);
}

static uint32_t icrc_stored(const struct frame *f)
{
	return ernic_get_le32(f->b + f->len - ROCE_ICRC_LEN);
}

/* The IPv4 header checksum made right again for the header as it is. */
static void ip_csum_redo(struct frame *f)
{
	uint8_t *ip = IP_OFF(f);
	size_t ihl = (ip[0] & 0xFu) * 4u;

	ernic_put16(ip + 10, 0);
	ernic_put16(ip + 10, ernic_csum_fold(ernic_csum_add(0, ip, ihl)));
}

/* ---- one fault each ---- */

static void fault_mac_dst(struct frame *f)
{
	memcpy(f->b, other_mac, 6);
}

static void fault_ip_version(struct frame *f)
{
	IP_OFF(f)[0] = 6u << 4 | 5u;	/* version 6, IHL still 5 */
	ip_csum_redo(f);
}

/* IHL 6: one 4-byte option word (three NOPs, end of list), the total
 * length and checksum made to match. */
static void fault_ihl(struct frame *f)
{
	uint8_t *ip = IP_OFF(f);
	const uint8_t opt[4] = { IPOPT_NOP, IPOPT_NOP, IPOPT_NOP, IPOPT_END };

	memmove(ip + ROCE_IPV4_LEN + 4, ip + ROCE_IPV4_LEN,
		f->len - ROCE_ETH_LEN - ROCE_IPV4_LEN);
	memcpy(ip + ROCE_IPV4_LEN, opt, sizeof(opt));
	f->len += 4;
	ip[0] = 4u << 4 | 6u;
	ernic_put16(ip + 2, ernic_get16(ip + 2) + 4u);
	ip_csum_redo(f);
}

static void fault_flags(struct frame *f)
{
	ernic_put16(IP_OFF(f) + 6, 0);	/* DF clear, offset 0 */
	ip_csum_redo(f);
}

static void fault_frag(struct frame *f)
{
	ernic_put16(IP_OFF(f) + 6, IP_DF | 1u);	/* DF alone, offset 8 B */
	ip_csum_redo(f);
}

static void fault_ip_dst(struct frame *f)
{
	assert_int_equal(inet_pton(AF_INET, NOBODY_IP, IP_OFF(f) + 16), 1);
	ip_csum_redo(f);
}

static void fault_ip_csum(struct frame *f)
{
	IP_OFF(f)[11] ^= 0x01;
}

/* 4 bytes longer than the frame holds. */
static void fault_ip_len(struct frame *f)
{
	uint8_t *ip = IP_OFF(f);

	ernic_put16(ip + 2, ernic_get16(ip + 2) + 4u);
	ip_csum_redo(f);
}

/* 4 bytes more than the IP payload (not in the IPv4 checksum). */
static void fault_udp_len(struct frame *f)
{
	uint8_t *udp = IP_OFF(f) + ROCE_IPV4_LEN;

	ernic_put16(udp + 4, ernic_get16(udp + 4) + 4u);
}

static void fault_mac_src(struct frame *f)
{
	memcpy(f->b + ETH_SRC, other_mac, 6);
}

/* ---- what ernicctl stats says, what the device answers ---- */

/* Bit counted want more times than in before, and no other bit moved. */
static void want_syn(const struct syn_stats *before, uint32_t bit,
		     uint64_t want)
{
	syn_want(NS_DEV, before, bit, want, WAIT_MS);
}

/* The device's next packet to the peer within ms. */
static bool answer(struct roce_pkt *pk, int ms)
{
	return syn_recv(peer.udp, &peer.l3, pk, ms);
}

static void no_answer(void)
{
	syn_no_answer(peer.udp, &peer.l3);
}

/* ---- the device's QP ---- */

static void conn_up(struct conn *c)
{
	struct ibv_qp_attr a;
	uint8_t junk[64];
	int mask;

	memset(c, 0, sizeof(*c));
	while (recv(peer.udp, junk, sizeof(junk), MSG_DONTWAIT) >= 0)
		;
	c->pd = ibv_alloc_pd(ctx);
	c->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	assert_non_null(c->pd);
	assert_non_null(c->cq);
	c->buf = calloc(NRECV, BUF);
	assert_non_null(c->buf);
	c->mr = ibv_reg_mr(c->pd, c->buf, NRECV * BUF,
			   IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(c->mr);
	c->qp = tu_rc_qp(c->pd, c->cq, 4, NRECV);
	c->qpn = c->qp->qp_num;
	tu_init_attr(&a, &mask);
	assert_int_equal(ibv_modify_qp(c->qp, &a, mask), 0);
	for (uint32_t k = 0; k < NRECV; k++) {
		struct ibv_sge sge = { .addr = (uintptr_t)(c->buf + k * BUF),
				       .length = BUF, .lkey = c->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = k, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		assert_int_equal(ibv_post_recv(c->qp, &wr, &bad), 0);
	}
	/* RTR resolves PEER_IP's MAC by ARP over the veth */
	tu_rtr_attr(&a, &mask, PEER_IP, PEER_QPN, RQ_PSN);
	assert_int_equal(ibv_modify_qp(c->qp, &a, mask), 0);
	tu_rts_attr(&a, &mask, SQ_PSN);
	assert_int_equal(ibv_modify_qp(c->qp, &a, mask), 0);
	/* the QP's remote MAC is the peer's: row 28's frame is not */
	assert_int_equal(tu_rd(ctx, ERNIC_QP(c->qpn, ERNIC_MACDESADDMSB)),
			 ernic_get16(peer_mac));
	assert_int_equal(tu_rd(ctx, ERNIC_QP(c->qpn, ERNIC_MACDESADDLSB)),
			 ernic_get32(peer_mac + 2));
}

static void conn_down(struct conn *c)
{
	assert_int_equal(ibv_destroy_qp(c->qp), 0);
	assert_int_equal(ibv_dereg_mr(c->mr), 0);
	assert_int_equal(ibv_destroy_cq(c->cq), 0);
	assert_int_equal(ibv_dealloc_pd(c->pd), 0);
	free(c->buf);
}

/* Dropped means gone without a trace: the right SEND at the same PSN
 * is then ACKed, and is the first thing in the RQ. */
static void next_taken(struct conn *c)
{
	static const char msg[] = "the right one, after the faulty";
	struct ibv_wc wc;
	struct roce_pkt pk;
	struct frame f;
	int n = 0;

	frame_send(&f, c->qpn, RQ_PSN, msg, sizeof(msg));
	frame_out(&f);
	if (!answer(&pk, WAIT_MS))
		fail_msg("no ACK for the right SEND");
	assert_int_equal(pk.opcode, ROCE_RC_ACK);
	assert_int_equal(pk.dqpn, PEER_QPN);
	assert_int_equal(pk.aeth_syndrome & ROCE_AETH_TYPE_MASK,
			 ROCE_AETH_ACK);
	assert_int_equal(pk.psn, RQ_PSN);
	for (int t = 0; t < WAIT_MS && !n; t++) {
		n = ibv_poll_cq(c->cq, 1, &wc);
		assert_true(n >= 0);
		if (!n)
			usleep(1000);
	}
	assert_int_equal(n, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.wr_id, 0);
	assert_int_equal(wc.byte_len, sizeof(msg));
	assert_memory_equal(c->buf, msg, sizeof(msg));
	assert_false(tu_rd(ctx, ERNIC_QP(c->qpn, ERNIC_STATQP)) &
		     ERNIC_STATQP_FATAL);
}

/* ---- the rows ---- */

/* Where the fault sits for the ICRC (IBTA A17.3.3). */
enum icrc_rule {
	ICRC_KEPT,	/* outside it (Ethernet) or masked: still right */
	ICRC_REDONE,	/* covered: recomputed over the faulty header */
};

static const char data[64] = "Table 2-3 on the frame wire";

/* The faulty frame f to QP c, sent twice: counted twice under bit
 * alone, no answer, then the right one taken. */
static void dropped(struct conn *c, uint32_t bit, const struct frame *f)
{
	struct syn_stats before;

	syn_stats(NS_DEV, &before);
	frame_out(f);
	frame_out(f);
	want_syn(&before, bit, 2);
	no_answer();
	next_taken(c);
}

/* Row bit: a SEND_ONLY at the expected PSN with fault, the ICRC as rule
 * says, dropped. */
static void row(uint32_t bit, void (*fault)(struct frame *),
		enum icrc_rule rule)
{
	struct conn c;
	struct frame f;
	uint32_t icrc;

	conn_up(&c);
	frame_send(&f, c.qpn, RQ_PSN, data, sizeof(data));
	assert_int_equal(icrc_of(&f), icrc_stored(&f));
	icrc = icrc_stored(&f);
	fault(&f);
	if (rule == ICRC_KEPT) {
		assert_int_equal(icrc_of(&f), icrc);
	} else {
		assert_int_not_equal(icrc_of(&f), icrc);
		ernic_put_le32(f.b + f.len - ROCE_ICRC_LEN, icrc_of(&f));
	}
	dropped(&c, bit, &f);
	conn_down(&c);
}

/* The frames are right before their fault: a right one is taken, and the
 * test's ICRC is the model's (roce_icrc, under roce_build). */
static void test_right_frame(void **state)
{
	struct syn_stats before;
	struct conn c;
	struct frame f;

	(void)state;
	conn_up(&c);
	frame_send(&f, c.qpn, RQ_PSN, data, sizeof(data));
	assert_int_equal(icrc_of(&f), icrc_stored(&f));
	syn_stats(NS_DEV, &before);
	next_taken(&c);
	want_syn(&before, 0, 0);
	conn_down(&c);
}

static void test_row0_mac_dst(void **state)
{
	(void)state;
	row(0, fault_mac_dst, ICRC_KEPT);
}

static void test_row2_ip_version(void **state)
{
	(void)state;
	row(2, fault_ip_version, ICRC_REDONE);
}

/* Row 2 by family: a right IPv6 frame to the IPv4 device's MAC (the
 * encoder's ICRC, over the IPv6 header it describes). */
static void test_row2_family(void **state)
{
	struct roce_l3 v6 = peer.l3;
	struct conn c;
	struct frame f;

	(void)state;
	v6.family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, PEER_IP6, v6.src), 1);
	assert_int_equal(inet_pton(AF_INET6, DEV_IP6, v6.dst), 1);
	conn_up(&c);
	frame_make(&f, &v6, c.qpn, RQ_PSN, data, sizeof(data));
	assert_int_equal(ernic_get16(f.b + 12), ETH_P_IPV6);
	dropped(&c, 2, &f);
	conn_down(&c);
}

static void test_row3_ihl(void **state)
{
	(void)state;
	row(3, fault_ihl, ICRC_REDONE);
}

static void test_row5_flags(void **state)
{
	(void)state;
	row(5, fault_flags, ICRC_REDONE);
}

static void test_row6_frag(void **state)
{
	(void)state;
	row(6, fault_frag, ICRC_REDONE);
}

static void test_row8_ip_dst(void **state)
{
	(void)state;
	row(8, fault_ip_dst, ICRC_REDONE);
}

static void test_row9_ip_csum(void **state)
{
	(void)state;
	row(9, fault_ip_csum, ICRC_KEPT);
}

static void test_row10_ip_len(void **state)
{
	(void)state;
	row(10, fault_ip_len, ICRC_REDONE);
}

static void test_row12_udp_len(void **state)
{
	(void)state;
	row(12, fault_udp_len, ICRC_REDONE);
}

static void test_row28_mac_src(void **state)
{
	(void)state;
	row(28, fault_mac_src, ICRC_KEPT);
}

static int setup(void **state)
{
	(void)state;
	peer_open();
	ctx = tu_open(NS_DEV);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	close(peer.raw);
	close(peer.udp);
	ibv_close_device(ctx);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_right_frame),
		cmocka_unit_test(test_row0_mac_dst),
		cmocka_unit_test(test_row2_ip_version),
		cmocka_unit_test(test_row2_family),
		cmocka_unit_test(test_row3_ihl),
		cmocka_unit_test(test_row5_flags),
		cmocka_unit_test(test_row6_frag),
		cmocka_unit_test(test_row8_ip_dst),
		cmocka_unit_test(test_row9_ip_csum),
		cmocka_unit_test(test_row10_ip_len),
		cmocka_unit_test(test_row12_udp_len),
		cmocka_unit_test(test_row28_mac_src),
	};

	tu_require_env();
	if (argc != 2) {
		fprintf(stderr, "usage: %s PEER_NETNS (see syn_frame.sh)\n",
			argv[0]);
		return 2;
	}
	peer_ns = argv[1];
	return cmocka_run_group_tests(tests, setup, teardown);
}
