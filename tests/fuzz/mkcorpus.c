// SPDX-License-Identifier: MIT
/*
 * Seed corpora for the fuzz targets, written with the project's own
 * encoders so that each seed is a well-formed case the fuzzer mutates
 * from: RoCEv2 requests and responses (roce_build) for fuzz_model_rx,
 * configurations ernic_conf_save writes for fuzz_conf, a consistent
 * device state for fuzz_provider_rx, and CM programs (fuzz_cm.h) with
 * MADs cm_pack_* makes for fuzz_cm.
 *
 * usage: mkcorpus DIR   (creates DIR/model_rx, DIR/conf, DIR/provider_rx,
 *                        DIR/cm)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>

#include "cm_msg.h"
#include "ernic_conf.h"
#include "ernic_hw.h"
#include "fuzz_cm.h"
#include "roce_pkt.h"

/* What fuzz_model_rx sets up (keep in step): QP 2 at PMTU 1024 and QP 3
 * at 256, our first PSN 100, the peer's 500; MR slot 1 remote RW (64 KiB),
 * slot 2 remote RO (8 KiB) at IOVA slot << 32 with key gen 0x40 + slot. */
#define SQ_PSN 100u
#define RQ_PSN 500u
#define KEY(slot) ((slot) | (0x40u + (slot)) << 8)
#define IOVA(slot) ((uint64_t)(slot) << 32)

static const char *dir;
static unsigned int nfiles;

static void put(const char *sub, const char *name, const void *p, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		fprintf(stderr, "mkcorpus: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	nfiles++;
}

/* ---- fuzz_model_rx: records of [kind][len:2][bytes] ---- */

struct script {
	uint8_t b[16384];
	size_t n;
};

static void rec(struct script *s, uint8_t kind, const void *p, size_t n)
{
	if (s->n + 3 + n > sizeof(s->b))
		exit(2);
	s->b[s->n++] = kind;
	s->b[s->n++] = (uint8_t)n;
	s->b[s->n++] = (uint8_t)(n >> 8);
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void pkt(struct script *s, struct roce_pkt *p, uint8_t kind)
{
	static const struct roce_l3 l3 = {
		.family = AF_INET, .src = { 192, 0, 2, 2 },
		.dst = { 192, 0, 2, 1 }, .sport = 0xC000,
		.dport = ROCE_UDP_PORT,
	};
	uint8_t buf[ROCE_MAX_TRANSPORT];
	size_t n;

	if (!p->dqpn)
		p->dqpn = 2;
	p->pkey = ROCE_DEFAULT_PKEY;
	n = roce_build(buf, sizeof(buf), p, &l3);
	if (!n)
		exit(3);
	rec(s, kind, buf, n);
}

static void ack(struct script *s, uint8_t syn, uint32_t psn)
{
	struct roce_pkt p = { .opcode = ROCE_RC_ACK, .psn = psn,
			      .aeth_syndrome = syn };

	pkt(s, &p, 0);
}

static void model_seeds(void)
{
	static uint8_t pay[4096];
	struct script s;
	uint8_t t[3] = { 0xFF, 0xFF, 0x0F };
	uint8_t post[12] = { 0 };

	for (size_t k = 0; k < sizeof(pay); k++)
		pay[k] = (uint8_t)(k * 7);

	/* the requester's work ACKed, NAKed, READ answered */
	memset(&s, 0, sizeof(s));
	ack(&s, ROCE_AETH_ACK | 0x1F, SQ_PSN);
	ack(&s, ROCE_AETH_ACK | 0x1F, SQ_PSN + 3);
	{
		struct roce_pkt p = { .opcode = ROCE_RC_READ_RESP_FIRST,
				      .psn = SQ_PSN + 4, .payload = pay,
				      .payload_len = 1024 };

		pkt(&s, &p, 0);
		p.opcode = ROCE_RC_READ_RESP_LAST;
		p.psn++;
		pkt(&s, &p, 0);
	}
	rec(&s, 6, NULL, 0);
	put("model_rx", "responses", s.b, s.n);

	memset(&s, 0, sizeof(s));
	ack(&s, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ, SQ_PSN + 1);
	ack(&s, ROCE_AETH_RNR | 3, SQ_PSN + 1);
	rec(&s, 3, t, 3);
	ack(&s, ROCE_AETH_NAK | ROCE_NAK_REMOTE_ACCESS, SQ_PSN + 1);
	put("model_rx", "naks", s.b, s.n);

	memset(&s, 0, sizeof(s));
	rec(&s, 3, t, 3);		/* retransmit timeout */
	rec(&s, 3, t, 3);
	rec(&s, 6, NULL, 0);
	put("model_rx", "timeouts", s.b, s.n);

	/* the responder: every request opcode */
	memset(&s, 0, sizeof(s));
	{
		struct roce_pkt p = { .opcode = ROCE_RC_SEND_ONLY,
				      .psn = RQ_PSN, .ackreq = true,
				      .payload = pay, .payload_len = 100 };

		pkt(&s, &p, 0);
		p = (struct roce_pkt){ .opcode = ROCE_RC_SEND_FIRST,
				       .psn = RQ_PSN + 1, .payload = pay,
				       .payload_len = 1024 };
		pkt(&s, &p, 0);
		p.opcode = ROCE_RC_SEND_MIDDLE;
		p.psn++;
		pkt(&s, &p, 0);
		p.opcode = ROCE_RC_SEND_LAST_IMM;
		p.psn++;
		p.payload_len = 10;
		p.imm = 0x01020304;
		p.ackreq = true;
		pkt(&s, &p, 0);
		p = (struct roce_pkt){ .opcode = ROCE_RC_SEND_ONLY_INV,
				       .psn = RQ_PSN + 4, .payload = pay,
				       .payload_len = 20, .ieth_rkey = KEY(1) };
		pkt(&s, &p, 0);
	}
	rec(&s, 5, (uint8_t[]){ 4 }, 1);
	put("model_rx", "sends", s.b, s.n);

	memset(&s, 0, sizeof(s));
	{
		struct roce_pkt p = { .opcode = ROCE_RC_WRITE_ONLY,
				      .psn = RQ_PSN, .ackreq = true,
				      .reth_va = IOVA(1) + 64,
				      .reth_rkey = KEY(1), .reth_len = 512,
				      .payload = pay, .payload_len = 512 };

		pkt(&s, &p, 0);
		p = (struct roce_pkt){ .opcode = ROCE_RC_WRITE_FIRST,
				       .psn = RQ_PSN + 1,
				       .reth_va = IOVA(1), .reth_rkey = KEY(1),
				       .reth_len = 1500, .payload = pay,
				       .payload_len = 1024 };
		pkt(&s, &p, 0);
		p = (struct roce_pkt){ .opcode = ROCE_RC_WRITE_LAST_IMM,
				       .psn = RQ_PSN + 2, .ackreq = true,
				       .imm = 7, .payload = pay,
				       .payload_len = 476 };
		pkt(&s, &p, 0);
		p = (struct roce_pkt){ .opcode = ROCE_RC_READ_REQ,
				       .psn = RQ_PSN + 3, .ackreq = true,
				       .reth_va = IOVA(2), .reth_rkey = KEY(2),
				       .reth_len = 3000 };
		pkt(&s, &p, 0);
		/* and again, as a duplicate */
		pkt(&s, &p, 0);
		p.dqpn = 3;
		p.psn = RQ_PSN;
		pkt(&s, &p, 0);
	}
	put("model_rx", "rdma", s.b, s.n);

	/* QP 3 (PMTU 256): a 64 KiB WRITE fills the 256-packet window, the
	 * SEND behind it is fetched but not sent; then the peer ACKs */
	memset(&s, 0, sizeof(s));
	post[0] = 3 << 1 | 1;		/* WRITE on QP 3 */
	post[1] = 0;
	post[2] = 0;
	post[3] = 1;			/* 65536 bytes */
	rec(&s, 4, post, sizeof(post));
	post[0] = 0 << 1 | 1;		/* SEND on QP 3 */
	post[1] = 16;
	post[3] = 0;
	rec(&s, 4, post, sizeof(post));
	{
		struct roce_pkt p = { .opcode = ROCE_RC_ACK, .dqpn = 3,
				      .psn = SQ_PSN + 2,
				      .aeth_syndrome = ROCE_AETH_ACK | 0x1F };

		pkt(&s, &p, 7);
		p.psn = SQ_PSN + 3 + 100;
		pkt(&s, &p, 7);
	}
	rec(&s, 6, NULL, 0);
	put("model_rx", "window", s.b, s.n);

	/* software posts work, the peer answers */
	memset(&s, 0, sizeof(s));
	for (uint8_t op = 0; op < 6; op++) {
		post[0] = (uint8_t)(op << 1);
		post[1] = 0x80;		/* 128..: one or two packets */
		post[4] = 0x40;
		post[8] = (uint8_t)KEY(1);
		post[9] = (uint8_t)(KEY(1) >> 8);
		rec(&s, 4, post, sizeof(post));
	}
	for (uint32_t k = 0; k < 10; k++)
		ack(&s, ROCE_AETH_ACK | 0x1F, SQ_PSN + k);
	rec(&s, 6, NULL, 0);
	put("model_rx", "posts", s.b, s.n);
}

/* ---- fuzz_conf: ernic.conf files ---- */

static void conf_seed(const char *name, const struct ernic_conf *c)
{
	char path[512], err[256];

	snprintf(path, sizeof(path), "%s/conf/%s", dir, name);
	if (ernic_conf_save(path, c, err, sizeof(err))) {
		fprintf(stderr, "mkcorpus: %s\n", err);
		exit(1);
	}
	nfiles++;
}

static void conf_seeds(void)
{
	struct ernic_conf c;
	char err[256];
	static const char hand[] =
		"# written by hand\n"
		"name = ernic9\n\n"
		"backend=sw\n"
		"  addr=fe80::1  \n"
		"netdev=lo\n"
		"mac=02:00:00:00:00:09\n"
		"C_NUM_QP=8\n";

	ernic_conf_defaults(&c);
	strcpy(c.name, "ernic0");
	c.family = AF_INET;
	inet_pton(AF_INET, "127.0.0.2", c.addr);
	strcpy(c.netdev, "lo");
	conf_seed("sw", &c);
	c.wire = ERNIC_WIRE_FRAME;
	c.c_num_qp = 255;
	conf_seed("frame", &c);
	c.wire = ERNIC_WIRE_UDP;
	c.family = AF_INET6;
	inet_pton(AF_INET6, "fd00::2", c.addr);
	conf_seed("ipv6", &c);
	c.backend = ERNIC_BACKEND_UIO;
	strcpy(c.uio, "uio0");
	c.coherent = 0;
	conf_seed("uio", &c);
	c.backend = ERNIC_BACKEND_VFIO;
	c.uio[0] = '\0';
	c.coherent = 1;
	if (ernic_bdf_parse("0000:03:00.0", c.vfio) ||
	    ernic_conf_set_key(&c, "vfio_offset", "0x10000", err, sizeof(err)))
		exit(1);
	conf_seed("vfio", &c);
	put("conf", "hand", hand, sizeof(hand) - 1);
}

/* ---- fuzz_provider_rx: one consistent device state ---- */

static void provider_seeds(void)
{
	uint8_t b[2048], *p = b;
	uint32_t v;

	memset(b, 0, sizeof(b));
	*p++ = 0;			/* flags: RTS, one CQ */
	p += 4;				/* STATQP: not fatal */
	*p++ = 2;			/* PMTU 1024 */
	*p++ = 4;			/* four receives */
	for (int k = 0; k < 4; k++) {
		*p++ = 0x00;
		*p++ = 0x08;		/* 2048 bytes */
		*p++ = 2;		/* budget */
	}
	*p++ = 3;			/* three sends */
	for (int k = 0; k < 3; k++) {
		*p++ = (uint8_t)(k | 0x30);	/* signaled, last */
		*p++ = 100;
		*p++ = 0;
	}
	*p++ = 2;			/* polls */
	*p++ = 3;			/* CQ write index */
	*p++ = 3;			/* RQ write pointer */
	*p++ = 1;			/* IMMQ write pointer */
	for (uint32_t k = 0; k < 16; k++) {
		v = k;			/* CQE: WRID k */
		memcpy(p, &v, 4);
		p += 4;
	}
	v = 100 | (uint32_t)ROCE_RC_SEND_ONLY << 24;
	memcpy(p, &v, 4);
	v = 1024 | (uint32_t)ROCE_RC_SEND_FIRST << 24;
	memcpy(p + 4, &v, 4);
	v = 10 | (uint32_t)ROCE_RC_SEND_LAST_IMM << 24;
	memcpy(p + 8, &v, 4);
	p += 16 * 4;
	{
		struct ernic_immq_entry e = {
			.entry = 0xABCDu |
				 (uint64_t)ERNIC_IMMINV_SEND_IMM
					 << ERNIC_IMMINV_TYPE_SHIFT |
				 (uint64_t)2 << ERNIC_IMMINV_QPID_SHIFT |
				 (uint64_t)2 << ERNIC_IMMINV_RQPI_SHIFT,
			.rqpi = 2,
		};

		memcpy(p, &e, sizeof(e));
	}
	p += 16 * ERNIC_IMMQ_ENTRY_SIZE;
	for (int k = 0; k < 64; k++)
		*p++ = (uint8_t)k;
	put("provider_rx", "state", b, (size_t)(p - b));

	/* An RQ of 17 elements whose element count wraps past 2^32 while
	 * four SENDs are read, from slot 15 on (RQCIi then goes by slot). */
	memset(b, 0, sizeof(b));
	p = b;
	*p++ = 4;			/* flags: RTS, one CQ, 17-element RQ */
	p += 4;				/* STATQP: not fatal */
	*p++ = 3;			/* elements read so far: 2^32 - 3 */
	*p++ = 15;			/* the next one in slot 15 */
	*p++ = 2;			/* PMTU 1024 */
	*p++ = 4;			/* four receives */
	for (int k = 0; k < 4; k++) {
		*p++ = 0x00;
		*p++ = 0x08;		/* 2048 bytes */
		*p++ = 7;		/* budget 8: the grant is the room */
	}
	*p++ = 0;			/* no sends */
	*p++ = 1;			/* polls: two */
	*p++ = 0;			/* CQ write index */
	*p++ = 2;			/* RQ write pointer: slots 15, 16, 0, 1 */
	*p++ = 0;			/* IMMQ write pointer */
	p += 16 * 4;			/* CQEs */
	for (uint32_t k = 0; k < 17; k++) {
		v = k == 15 || k == 16 || k < 2 ?
			    100 | (uint32_t)ROCE_RC_SEND_ONLY << 24 : 0;
		memcpy(p, &v, 4);
		p += 4;
	}
	p += 17 * ERNIC_IMMQ_ENTRY_SIZE;
	for (int k = 0; k < 64; k++)
		*p++ = (uint8_t)k;
	put("provider_rx", "wrap", b, (size_t)(p - b));
}

/* ---- fuzz_cm: programs of steps (fuzz_cm.h) ---- */

enum { SA, SB };

/* One step: op and its fc_args[op] bytes, a (zeros if NULL or short). */
static void step(struct script *s, enum fc_op op, const uint8_t *a,
		 size_t n)
{
	if (s->n + 1 + fc_args[op] > sizeof(s->b))
		exit(2);
	s->b[s->n++] = (uint8_t)op;
	memset(s->b + s->n, 0, fc_args[op]);
	if (a)
		memcpy(s->b + s->n, a, n < fc_args[op] ? n : fc_args[op]);
	s->n += fc_args[op];
}

#define STEP(s, op, ...)                                                      \
	step(s, op, (const uint8_t[]){ __VA_ARGS__ },                         \
	     sizeof((const uint8_t[]){ __VA_ARGS__ }))

/* A MAD from outside to side, as flags (FCM_*) say. */
static void cm_mad(struct script *s, int side, uint8_t flags, uint8_t target,
		   const uint8_t *mad)
{
	uint8_t a[3 + IB_MAD_SIZE] = { (uint8_t)side, flags, target };

	memcpy(a + 3, mad, IB_MAD_SIZE);
	step(s, FC_MAD, a, sizeof(a));
}

/* Each CM message, packed as a peer would send it. */
static void cm_msgs(uint8_t mads[7][IB_MAD_SIZE])
{
	struct cm_mad_hdr h = { .method = IB_MGMT_METHOD_SEND, .tid = 77 };
	struct cm_req req = {
		.local_comm_id = 0x11111111, .service_id = FC_SID0,
		.local_qpn = 0x155, .starting_psn = 0xABCDE,
		.remote_cm_response_timeout = 16,
		.local_cm_response_timeout = 16, .max_cm_retries = 3,
		.retry_count = 7, .rnr_retry_count = 7, .pkey = 0xFFFF,
		.path_mtu = 3,
		.primary = { .local_lid = 0xFFFF, .remote_lid = 0xFFFF,
			     .hop_limit = 64, .local_ack_timeout = 14 },
	};
	struct cm_mra mra = { .local_comm_id = 0x22222222,
			      .remote_comm_id = 0x33333333,
			      .service_timeout = 20 };
	struct cm_rej rej = { .local_comm_id = 0x22222222,
			      .remote_comm_id = 0x33333333,
			      .reason = IB_CM_REJ_CONSUMER_DEFINED };
	struct cm_rep rep = { .local_comm_id = 0x22222222,
			      .remote_comm_id = 0x33333333, .local_qpn = 0x266,
			      .starting_psn = 0x12345, .target_ack_delay = 14,
			      .rnr_retry_count = 7 };
	struct cm_rtu rtu = { .local_comm_id = 0x22222222,
			      .remote_comm_id = 0x33333333 };
	struct cm_dreq dreq = { .local_comm_id = 0x22222222,
				.remote_comm_id = 0x33333333,
				.remote_qpn = 0x200 };
	struct cm_drep drep = { .local_comm_id = 0x22222222,
				.remote_comm_id = 0x33333333 };

	fc_gid(req.primary.local_gid, 1);
	fc_gid(req.primary.remote_gid, 2);
	if (cm_pack_req(mads[0], &h, &req) || cm_pack_mra(mads[1], &h, &mra) ||
	    cm_pack_rej(mads[2], &h, &rej) || cm_pack_rep(mads[3], &h, &rep) ||
	    cm_pack_rtu(mads[4], &h, &rtu) ||
	    cm_pack_dreq(mads[5], &h, &dreq) ||
	    cm_pack_drep(mads[6], &h, &drep))
		exit(4);
}

/* B listens on FC_SID0 (slot 0), A connects from slot 0 with timeouts
 * of 4.096 us * 2^tmo and retries; the REQ is queued. */
static void cm_connect(struct script *s, uint8_t tmo, uint8_t retries)
{
	STEP(s, FC_LISTEN, SB, 0, 0);
	STEP(s, FC_REQ, SA, 0, 0, 0, 0, 0, 0, tmo, tmo, retries, 0x3F, 3, 14,
	     4);
}

static void cm_seeds(void)
{
	static const char *const kinds[7] = { "req", "mra", "rej", "rep",
					      "rtu", "dreq", "drep" };
	uint8_t mads[7][IB_MAD_SIZE];
	struct script s;
	char name[32];

	cm_msgs(mads);

	/* connect, disconnect, timewait */
	memset(&s, 0, sizeof(s));
	cm_connect(&s, 0, 0);
	step(&s, FC_RUN, NULL, 0);
	STEP(&s, FC_DREQ, SA, 0, 4, 0);
	step(&s, FC_RUN, NULL, 0);
	STEP(&s, FC_CLOCK, 0x30, 0x75);
	STEP(&s, FC_CLOCK, 0xFF, 0xFF);
	put("cm", "connect", s.b, s.n);

	/* REQ and REP lost and retransmitted, an RTU duplicated */
	memset(&s, 0, sizeof(s));
	cm_connect(&s, 12, 3);
	STEP(&s, FC_NET, 1, 0);
	STEP(&s, FC_CLOCK, 0xFF, 0xFF);
	STEP(&s, FC_NET, 0, 0);
	STEP(&s, FC_NET, 1, 0);
	STEP(&s, FC_CLOCK, 0xFF, 0xFF);
	STEP(&s, FC_NET, 0, 0);
	STEP(&s, FC_NET, 2, 0);
	step(&s, FC_RUN, NULL, 0);
	STEP(&s, FC_DREQ, SB, 1, 0, 0);
	STEP(&s, FC_NET, 3, 0, IB_MAD_HDR_LEN + 4, 0x40);
	STEP(&s, FC_CLOCK, 0xFF, 0xFF);
	step(&s, FC_RUN, NULL, 0);
	put("cm", "lossy", s.b, s.n);

	/* B waits: a duplicate REQ gets an MRA; B accepts late, A lets go */
	memset(&s, 0, sizeof(s));
	STEP(&s, FC_POLICY, SB, 0);
	cm_connect(&s, 10, 2);
	STEP(&s, FC_NET, 2, 0);
	step(&s, FC_RUN, NULL, 0);
	STEP(&s, FC_REP, SB, 1, 0, 2, 0, 0, 7, 0);
	STEP(&s, FC_DESTROY, SA, 0);
	step(&s, FC_RUN, NULL, 0);
	STEP(&s, FC_CLOCK, 0xFF, 0xFF);
	step(&s, FC_RUN, NULL, 0);
	STEP(&s, FC_CLOCK, 0xFF, 0xFF);
	put("cm", "mra", s.b, s.n);

	/* refused: by B's handler, then by A on the REP */
	memset(&s, 0, sizeof(s));
	STEP(&s, FC_POLICY, SB, 2 | FCP_PDATA | FCP_POKE);
	cm_connect(&s, 0, 0);
	step(&s, FC_RUN, NULL, 0);
	STEP(&s, FC_POLICY, SB, FCP_DEFAULT);
	STEP(&s, FC_POLICY, SA, 2 << 2);
	STEP(&s, FC_REQ, SA, 1, 0, 0);
	step(&s, FC_RUN, NULL, 0);
	STEP(&s, FC_REJ, SB, 1, 0, 28, 8, 16);
	STEP(&s, FC_CLOCK, 0xFF, 0xFF);
	put("cm", "reject", s.b, s.n);

	/* nobody answers: REQ, then REP, time out */
	memset(&s, 0, sizeof(s));
	STEP(&s, FC_POLICY, SB, 0);
	cm_connect(&s, 8, 2);
	step(&s, FC_RUN, NULL, 0);
	STEP(&s, FC_REP, SB, 1, 0, 0, 0, 0, 0, 8);
	for (int k = 0; k < 8; k++) {
		STEP(&s, FC_NET, 1, 0);
		STEP(&s, FC_CLOCK, 0xFF, 0xFF);
	}
	put("cm", "timeout", s.b, s.n);

	/* A connects to itself, sends fail, and it all goes */
	memset(&s, 0, sizeof(s));
	STEP(&s, FC_LISTEN, SA, 0, 1);
	STEP(&s, FC_FAIL, SA, 0);
	STEP(&s, FC_REQ, SA, 1, 2, 1);
	STEP(&s, FC_CLOCK, 0xFF, 0xFF);
	step(&s, FC_RUN, NULL, 0);
	STEP(&s, FC_FAIL, SA, 1);
	STEP(&s, FC_DESTROY, SA, 2);
	STEP(&s, FC_DESTROY, SA, 1);
	STEP(&s, FC_DESTROY, SA, 0);
	step(&s, FC_RUN, NULL, 0);
	STEP(&s, FC_TICK, SA);
	put("cm", "loopback", s.b, s.n);

	/* each message kind from outside, naming ids in several states */
	for (int k = 0; k < 7; k++) {
		memset(&s, 0, sizeof(s));
		STEP(&s, FC_POLICY, SB, 0);
		cm_connect(&s, 0, 0);
		cm_mad(&s, SB, 0, 0, mads[k]);
		step(&s, FC_RUN, NULL, 0);
		cm_mad(&s, SB, FCM_FIX, 0, mads[k]);
		cm_mad(&s, SA, FCM_FIX | FCM_FIX_MORE, 0, mads[k]);
		STEP(&s, FC_REP, SB, 1);
		step(&s, FC_RUN, NULL, 0);
		cm_mad(&s, SB, FCM_FIX | FCM_FIX_MORE, 0, mads[k]);
		cm_mad(&s, SA, FCM_FIX, 1, mads[k]);
		STEP(&s, FC_DESTROY, SA, 0);
		cm_mad(&s, SA, FCM_FIX | FCM_FIX_MORE, 0, mads[k]);
		snprintf(name, sizeof(name), "mad-%s", kinds[k]);
		put("cm", name, s.b, s.n);
	}

	/* A leaves with a connection made, one half made, one listening */
	memset(&s, 0, sizeof(s));
	cm_connect(&s, 0, 0);
	step(&s, FC_RUN, NULL, 0);
	STEP(&s, FC_POLICY, SB, 0);
	STEP(&s, FC_LISTEN, SA, 2, 1);
	STEP(&s, FC_REQ, SA, 1, 0, 1 << 2);	/* from QPN 0x101 */
	step(&s, FC_RUN, NULL, 0);
	STEP(&s, FC_SHUTDOWN, SA);
	step(&s, FC_RUN, NULL, 0);
	STEP(&s, FC_CLOCK, 0xFF, 0xFF);
	STEP(&s, FC_SHUTDOWN, SB);
	put("cm", "shutdown", s.b, s.n);

	/* a REQ with each spoilt header, from each sender */
	memset(&s, 0, sizeof(s));
	STEP(&s, FC_LISTEN, SB, 0, 0);
	for (uint8_t k = 0; k < 8; k++)
		cm_mad(&s, SB, (uint8_t)(k | (k & 3) << 5), (uint8_t)(k << 5),
		       mads[0]);
	put("cm", "headers", s.b, s.n);
}

int main(int argc, char **argv)
{
	static const char *subs[] = { "model_rx", "conf", "provider_rx",
				      "cm" };
	char path[512];

	if (argc != 2) {
		fprintf(stderr, "usage: mkcorpus DIR\n");
		return 2;
	}
	dir = argv[1];
	/* DIR and its parents */
	snprintf(path, sizeof(path), "%s", dir);
	for (char *c = path + 1; *c; c++) {
		if (*c != '/')
			continue;
		*c = '\0';
		mkdir(path, 0755);
		*c = '/';
	}
	mkdir(path, 0755);
	for (size_t k = 0; k < sizeof(subs) / sizeof(subs[0]); k++) {
		snprintf(path, sizeof(path), "%s/%s", dir, subs[k]);
		if (mkdir(path, 0755) && errno != EEXIST) {
			fprintf(stderr, "mkcorpus: %s: %s\n", path,
				strerror(errno));
			return 1;
		}
	}
	model_seeds();
	conf_seeds();
	provider_seeds();
	cm_seeds();
	printf("mkcorpus: %u seed files in %s\n", nfiles, dir);
	return 0;
}
