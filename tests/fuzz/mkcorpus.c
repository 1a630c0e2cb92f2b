// SPDX-License-Identifier: MIT
/*
 * Seed corpora for the fuzz targets, written with the project's own
 * encoders so that each seed is a well-formed case the fuzzer mutates
 * from: RoCEv2 requests and responses (roce_build) for fuzz_model_rx,
 * configurations ernic_conf_save writes for fuzz_conf, and a consistent
 * device state for fuzz_provider_rx.
 *
 * usage: mkcorpus DIR   (creates DIR/model_rx, DIR/conf, DIR/provider_rx)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>

#include "ernic_conf.h"
#include "ernic_hw.h"
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
}

int main(int argc, char **argv)
{
	static const char *subs[] = { "model_rx", "conf", "provider_rx" };
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
	for (size_t k = 0; k < 3; k++) {
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
	printf("mkcorpus: %u seed files in %s\n", nfiles, dir);
	return 0;
}
