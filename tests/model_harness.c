// SPDX-License-Identifier: MIT
/*
 * The ERNIC model on a test bench (model_harness.h). Registers are
 * written as providers/ernic programs them (PG332 ch.6 "ERNIC Global
 * Configuration", "RC QP Creation", "Memory Registration"), through the
 * software (AXI4-Lite) interface, so the model's access rules apply.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ernic_conf.h"
#include "ernic_model.h"
#include "model_harness.h"
#include "model_wire.h"

#define CANARY 0xA5u
#define ERRBUF_NUM 64u
#define ERRBUF_SIZE 256u
#define IPKTERRQ_NUM 64u
#define ENGINE_PASS_LIMIT 100000u

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						     noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "model_harness: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static uint64_t bench_clock(void *arg)
{
	return ((struct mh *)arg)->now;
}

/* Every packet the model sends must parse, ICRC and all; requests are
 * marked sent for the completion oracle. */
static void tx_check(struct mh *h, const struct mh_pkt *t)
{
	struct roce_pkt p;
	uint32_t syn = roce_parse(t->b, t->len, &t->l3, true, &p);

	if (syn)
		die("the model sent a packet that does not parse: syndrome "
		    "0x%08x, opcode 0x%02x, %zu bytes", syn, t->b[0], t->len);
	if (p.opcode >= ROCE_RC_READ_RESP_FIRST &&
	    p.opcode <= ROCE_RC_ACK)
		return;		/* responses */
	for (uint32_t i = ERNIC_FIRST_RC_QP; i < MH_MAX_QP + 2; i++) {
		struct mh_qp *q = &h->qp[i];
		uint32_t off = (p.psn - q->first_psn) & ERNIC_PSN_MASK;

		if (q->up && q->peer_qpn == p.dqpn && off < MH_PSN_SPAN)
			q->sent[off / 8] |= (uint8_t)(1u << (off % 8));
	}
}

static void on_tx(void *arg, const struct roce_l3 *l3, const uint8_t *tp,
		  size_t tlen)
{
	struct mh *h = arg;
	struct mh_pkt *p;

	if (tlen > sizeof(h->tx[0].b))
		die("the model sent %zu transport bytes (at most %zu fit a "
		    "valid packet)", tlen, sizeof(h->tx[0].b));
	if (h->ntx == h->tx_cap && h->tx_cap < MH_MAX_TX) {
		size_t cap = h->tx_cap * 4;
		struct mh_pkt *n = realloc(h->tx, cap * sizeof(*n));

		if (!n)
			die("out of memory");
		h->tx = n;
		h->tx_cap = cap;
	}
	if (h->ntx == MH_MAX_TX) {
		/* keep the latest: tests look at what a step just sent */
		memmove(h->tx, h->tx + MH_MAX_TX / 2,
			(MH_MAX_TX / 2) * sizeof(*h->tx));
		h->ntx = MH_MAX_TX / 2;
		h->tx_seen = h->tx_seen > MH_MAX_TX / 2 ?
				     h->tx_seen - MH_MAX_TX / 2 : 0;
	}
	p = &h->tx[h->ntx++];
	p->l3 = *l3;
	p->len = tlen;
	memcpy(p->b, tp, tlen);
	tx_check(h, p);
}

/* len usable bytes at an align-aligned address between guard pages,
 * mapped for the model; the slack before va holds the canary. The end
 * of the buffer touches the trailing guard when alignment allows. */
static void buf_alloc(struct mh *h, struct mh_buf *b, size_t len, size_t align)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t body = (len + align + pg - 1) & ~(pg - 1);
	uintptr_t end;

	b->map_len = body + 2 * pg;
	b->map = mmap(NULL, b->map_len, PROT_NONE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->map == MAP_FAILED)
		die("mmap %zu bytes failed", b->map_len);
	if (mprotect(b->map + pg, body, PROT_READ | PROT_WRITE))
		die("mprotect failed");
	memset(b->map + pg, CANARY, body);
	end = (uintptr_t)(b->map + pg + body);
	b->va = (uint8_t *)((end - len) & ~(uintptr_t)(align - 1));
	b->len = len;
	memset(b->va, 0, len);
	if (ernic_model_map(h->m, b->va, len, align, &b->bus))
		die("ernic_model_map of %zu bytes failed", len);
}

static void buf_check(const struct mh_buf *b, const char *what)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	const uint8_t *p = b->map + pg;
	const uint8_t *end = b->map + b->map_len - pg;

	for (; p < b->va; p++)
		if (*p != CANARY)
			die("%s: byte %td before the buffer was written",
			    what, b->va - p);
	for (p = b->va + b->len; p < end; p++)
		if (*p != CANARY)
			die("%s: byte %td after the buffer was written", what,
			    p - (b->va + b->len));
}

static void buf_free(struct mh *h, struct mh_buf *b)
{
	if (!b->map)
		return;
	ernic_model_unmap(h->m, b->bus);
	munmap(b->map, b->map_len);
	memset(b, 0, sizeof(*b));
}

static void wr(struct mh *h, uint32_t off, uint32_t v)
{
	ernic_model_reg_write(h->m, off, v);
}

static void wr64(struct mh *h, uint32_t lsb, uint32_t msb, uint64_t v)
{
	wr(h, lsb, (uint32_t)v);
	wr(h, msb, (uint32_t)(v >> 32));
}

uint32_t mh_reg(struct mh *h, uint32_t off)
{
	return ernic_model_reg_read(h->m, off);
}

uint32_t mh_qreg(struct mh *h, const struct mh_qp *q, uint32_t reg)
{
	return mh_reg(h, ERNIC_QP(q->idx, reg));
}

bool mh_fatal(struct mh *h, const struct mh_qp *q)
{
	return mh_qreg(h, q, ERNIC_STATQP) & ERNIC_STATQP_FATAL;
}

void mh_init(struct mh *h)
{
	static const uint8_t local[4] = { 192, 0, 2, 1 }, peer[4] = { 192, 0, 2, 2 };
	struct ernic_conf c;
	struct model_wire *w;
	char err[256];
	uint32_t ip[4];

	memset(h, 0, sizeof(*h));
	h->tx_cap = 16;
	h->tx = malloc(h->tx_cap * sizeof(*h->tx));
	if (!h->tx)
		die("out of memory");
	ernic_conf_defaults(&c);
	c.family = AF_INET;
	memcpy(c.addr, local, 4);
	c.c_num_qp = MH_MAX_QP + 1;
	h->m = ernic_model_create(&c);
	if (!h->m)
		die("ernic_model_create failed");
	h->now = 1000000000u;
	ernic_model_set_clock(h->m, bench_clock, h);
	w = model_wire_open_tap(AF_INET, on_tx, h);
	if (!w || ernic_model_start_manual(h->m, &c, w, err, sizeof(err)))
		die("cannot start the engine: %s", w ? err : "tap port");
	h->wire = w;

	h->from_peer.family = AF_INET;
	memcpy(h->from_peer.src, peer, 4);
	memcpy(h->from_peer.dst, local, 4);
	h->from_peer.sport = 0xC000;
	h->from_peer.dport = ROCE_UDP_PORT;
	h->from_peer.ttl = 64;

	buf_alloc(h, &h->errbuf, ERRBUF_NUM * ERRBUF_SIZE, ERRBUF_SIZE);
	wr64(h, ERNIC_ERRBUFBA, ERNIC_ERRBUFBAMSB, h->errbuf.bus);
	wr(h, ERNIC_ERRBUFSZ, ERNIC_FIELD_PREP(ERNIC_ERRBUFSZ_NUM, ERRBUF_NUM) |
				      ERNIC_FIELD_PREP(ERNIC_ERRBUFSZ_SIZE,
						       ERRBUF_SIZE));
	buf_alloc(h, &h->ipkterrq, IPKTERRQ_NUM * ERNIC_ERRSTS_ENTRY_SIZE,
		  ERNIC_ERRSTS_ENTRY_SIZE);
	wr64(h, ERNIC_IPKTERRQBA, ERNIC_IPKTERRQBAMSB, h->ipkterrq.bus);
	wr(h, ERNIC_IPKTERRQSZ,
	   ERNIC_FIELD_PREP(ERNIC_IPKTERRQSZ_NUM, IPKTERRQ_NUM));
	ernic_ip_to_regs(0, c.addr, ip);
	wr(h, ERNIC_IPV4XADD, ip[0]);
	wr(h, ERNIC_XRNICCONF,
	   ERNIC_XRNICCONF_EN | ERNIC_XRNICCONF_ERRBUF_EN |
		   ERNIC_FIELD_PREP(ERNIC_XRNICCONF_TX_ACK_GEN,
				    ERNIC_ACK_ON_REQ_OR_TIMEOUT) |
		   ERNIC_FIELD_PREP(ERNIC_XRNICCONF_NUM_QP, c.c_num_qp) |
		   ERNIC_FIELD_PREP(ERNIC_XRNICCONF_UDP_SPORT, c.udp_sport));
}

void mh_fini(struct mh *h)
{
	mh_check_canaries(h);
	ernic_model_stop(h->m);
	for (uint32_t i = 0; i < MH_MAX_QP + 2; i++) {
		buf_free(h, &h->qp[i].sq);
		buf_free(h, &h->qp[i].cq);
		buf_free(h, &h->qp[i].rq);
		buf_free(h, &h->qp[i].db);
		buf_free(h, &h->qp[i].tx);
		free(h->qp[i].sent);
	}
	for (uint32_t k = 0; k < h->nmr; k++)
		buf_free(h, &h->mr[k].buf);
	buf_free(h, &h->errbuf);
	buf_free(h, &h->ipkterrq);
	ernic_model_destroy(h->m);
	free(h->tx);
	memset(h, 0, sizeof(*h));
}

static uint32_t pmtu_code(uint32_t pmtu)
{
	for (uint32_t c = 0; c <= ERNIC_PMTU_4096; c++)
		if (256u << c == pmtu)
			return c;
	die("no PMTU %u", pmtu);
}

struct mh_qp *mh_qp_up(struct mh *h, uint32_t idx, uint32_t pmtu,
		       uint32_t sq_psn, uint32_t rq_psn, uint32_t timeout,
		       uint32_t retry_cnt, uint32_t rnr_retry)
{
	struct mh_qp *q;
	uint32_t qpconf, ip[4];
	const uint32_t i = idx;

	if (idx < ERNIC_FIRST_RC_QP || idx > MH_MAX_QP + 1 || h->qp[idx].up)
		die("QP %u: not a free RC QP of the bench", idx);
	q = &h->qp[idx];
	q->idx = idx;
	q->sq_depth = MH_SQ_DEPTH;
	q->peer_qpn = MH_PEER_QPN + idx - ERNIC_FIRST_RC_QP;
	q->next_psn = sq_psn;
	q->sent = calloc(MH_PSN_SPAN / 8, 1);
	if (!q->sent)
		die("out of memory");
	q->rq_depth = 16;
	q->pmtu = pmtu;
	q->first_psn = sq_psn;
	buf_alloc(h, &q->sq, q->sq_depth * ERNIC_WQE_SIZE, ERNIC_SQ_ALIGN);
	buf_alloc(h, &q->cq, q->sq_depth * ERNIC_CQE_SIZE, ERNIC_CQ_ALIGN);
	buf_alloc(h, &q->rq, ernic_rq_block_size(q->rq_depth, MH_RQ_ELEM),
		  ERNIC_RQ_ALIGN);
	buf_alloc(h, &q->db, 128, 128);

	/* RC QP Creation steps 1-2 and the PD */
	wr64(h, ERNIC_QP(i, ERNIC_RQBA), ERNIC_QP(i, ERNIC_RQBAMSB), q->rq.bus);
	wr64(h, ERNIC_QP(i, ERNIC_SQBA), ERNIC_QP(i, ERNIC_SQBAMSB), q->sq.bus);
	wr(h, ERNIC_QP(i, ERNIC_QDEPTH),
	   ERNIC_FIELD_PREP(ERNIC_QDEPTH_SQ, q->sq_depth) |
		   ERNIC_FIELD_PREP(ERNIC_QDEPTH_RQ, q->rq_depth));
	wr64(h, ERNIC_QP(i, ERNIC_CQBA), ERNIC_QP(i, ERNIC_CQBAMSB), q->cq.bus);
	qpconf = ERNIC_QPCONF_HW_HANDSHAKE_DIS | ERNIC_QPCONF_CQE_WRITE_EN |
		 ERNIC_FIELD_PREP(ERNIC_QPCONF_RQ_BUF_SIZE,
				  MH_RQ_ELEM / ERNIC_RQ_BUF_UNIT) |
		 ERNIC_FIELD_PREP(ERNIC_QPCONF_PMTU, pmtu_code(pmtu));
	wr(h, ERNIC_QP(i, ERNIC_QPCONF), qpconf);
	wr64(h, ERNIC_QP(i, ERNIC_CQDBADD), ERNIC_QP(i, ERNIC_CQDBADDMSB),
	     q->db.bus);
	wr64(h, ERNIC_QP(i, ERNIC_RQWPTRDBADD),
	     ERNIC_QP(i, ERNIC_RQWPTRDBADDMSB), q->db.bus + 32);
	wr(h, ERNIC_QP(i, ERNIC_PD), ERNIC_FIELD_PREP(ERNIC_PD_PDNUM, 1));

	/* step 3: the connection, then enable */
	wr(h, ERNIC_QP(i, ERNIC_DESTQPCONF),
	   ERNIC_FIELD_PREP(ERNIC_DESTQPCONF_QPN, q->peer_qpn));
	ernic_ip_to_regs(0, h->from_peer.src, ip);
	wr(h, ERNIC_QP(i, ERNIC_IPDESADDR1), ip[0]);
	wr(h, ERNIC_QP(i, ERNIC_LSTRQREQ),
	   ERNIC_FIELD_PREP(ERNIC_LSTRQREQ_PSN, (rq_psn - 1) & ERNIC_PSN_MASK) |
		   ERNIC_FIELD_PREP(ERNIC_LSTRQREQ_OPCODE, ROCE_RC_SEND_ONLY));
	wr(h, ERNIC_QP(i, ERNIC_QPADVCONF),
	   ERNIC_FIELD_PREP(ERNIC_QPADVCONF_TTL, 64) |
		   ERNIC_FIELD_PREP(ERNIC_QPADVCONF_PKEY, ERNIC_PKEY_DEFAULT));
	wr(h, ERNIC_QP(i, ERNIC_TIMEOUTCONF),
	   ERNIC_FIELD_PREP(ERNIC_TIMEOUTCONF_TIMEOUT, timeout) |
		   ERNIC_FIELD_PREP(ERNIC_TIMEOUTCONF_RETRY_CNT, retry_cnt) |
		   ERNIC_FIELD_PREP(ERNIC_TIMEOUTCONF_RNR_RETRY_CNT, rnr_retry) |
		   ERNIC_FIELD_PREP(ERNIC_TIMEOUTCONF_RNR_NAK_TIMEOUT, 1));
	wr(h, ERNIC_QP(i, ERNIC_SQPSN),
	   ERNIC_FIELD_PREP(ERNIC_SQPSN_PSN, sq_psn));
	wr(h, ERNIC_QP(i, ERNIC_QPCONF), qpconf | ERNIC_QPCONF_QP_EN);
	q->up = true;
	mh_run(h);
	return q;
}

void mh_qp_forget(struct mh *h, struct mh_qp *q)
{
	buf_free(h, &q->sq);
	buf_free(h, &q->cq);
	buf_free(h, &q->rq);
	buf_free(h, &q->db);
	buf_free(h, &q->tx);
	free(q->sent);
	memset(q, 0, sizeof(*q));
}

static struct mh_mr *mr_new(struct mh *h)
{
	if (h->nmr == MH_MAX_MR)
		die("too many MRs");
	return &h->mr[h->nmr++];
}

/* PG332 "Memory Registration" for r (slot = its index + 1). */
static void mr_program(struct mh *h, struct mh_mr *r, uint64_t len,
		       uint32_t access, bool remote)
{
	uint32_t slot = (uint32_t)(r - h->mr) + 1, gen = 0x40 + slot;

	r->iova = 0x100000000ull * slot;	/* keys see an address of ours */
	r->key = ERNIC_FIELD_PREP(ERNIC_KEY_SLOT, slot) |
		 ERNIC_FIELD_PREP(ERNIC_KEY_GEN, gen);
	wr(h, ERNIC_PDT(slot, ERNIC_PDPDNUM),
	   ERNIC_FIELD_PREP(ERNIC_PDPDNUM_PD, 1));
	wr64(h, ERNIC_PDT(slot, ERNIC_VIRTADDRLSB),
	     ERNIC_PDT(slot, ERNIC_VIRTADDRMSB), r->iova);
	wr64(h, ERNIC_PDT(slot, ERNIC_BUFBASEADDRLSB),
	     ERNIC_PDT(slot, ERNIC_BUFBASEADDRMSB), r->buf.bus);
	wr(h, ERNIC_PDT(slot, ERNIC_WRRDBUFLEN), (uint32_t)len);
	wr(h, ERNIC_PDT(slot, ERNIC_ACCESSDESC),
	   ERNIC_FIELD_PREP(ERNIC_ACCESSDESC_ACCESS, access) |
		   ERNIC_FIELD_PREP(ERNIC_ACCESSDESC_LEN_MSB, len >> 32));
	wr(h, ERNIC_PDT(slot, ERNIC_BUFRKEY),
	   remote ? ERNIC_FIELD_PREP(ERNIC_BUFRKEY_KEY, gen) : 0);
}

struct mh_mr *mh_mr(struct mh *h, size_t len, uint32_t access, bool remote,
		    uint8_t fill)
{
	struct mh_mr *r = mr_new(h);

	buf_alloc(h, &r->buf, len, 64);
	memset(r->buf.va, fill, len);
	mr_program(h, r, len, access, remote);
	return r;
}

struct mh_mr *mh_mr_lazy(struct mh *h, uint64_t len, uint32_t access)
{
	struct mh_mr *r = mr_new(h);

	r->lazy = true;
	r->buf.map_len = len;
	r->buf.map = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r->buf.map == MAP_FAILED)
		die("mmap of %llu bytes failed", (unsigned long long)len);
	r->buf.va = r->buf.map;
	r->buf.len = len;
	if (ernic_model_map(h->m, r->buf.va, len, 64, &r->buf.bus))
		die("ernic_model_map of %llu bytes failed",
		    (unsigned long long)len);
	mr_program(h, r, len, access, true);
	return r;
}

uint32_t mh_post(struct mh *h, struct mh_qp *q, uint8_t opcode,
		 uint64_t laddr, uint32_t len, uint64_t raddr, uint32_t rkey,
		 uint32_t imm)
{
	struct ernic_wqe w = { 0 };
	const uint32_t slot = q->sq_pi;

	w.wrid = htole16((uint16_t)slot);
	w.opcode = opcode;
	w.laddr = htole64(laddr);
	w.length = htole32(len);
	w.roffset = htole64(raddr);
	w.rtag = htole32(rkey);
	w.immdt = htole32(imm);
	if ((opcode == ERNIC_OP_SEND || opcode == ERNIC_OP_SEND_IMM ||
	     opcode == ERNIC_OP_SEND_INV) && len <= ERNIC_WQE_SDATA_SIZE)
		for (uint32_t k = 0; k < len; k++)
			w.sdata[k] = (uint8_t)(0x30 + k);
	memcpy(q->sq.va + (size_t)slot * ERNIC_WQE_SIZE, &w, sizeof(w));
	q->posted[slot] = w;
	q->wqe_psn[slot] = q->next_psn;
	q->wqe_npkts[slot] = len ? (len + q->pmtu - 1) / q->pmtu : 1;
	q->next_psn = (q->next_psn + q->wqe_npkts[slot]) & ERNIC_PSN_MASK;
	q->sq_pi = (slot + 1) % q->sq_depth;
	wr(h, ERNIC_QP(q->idx, ERNIC_SQPI),
	   ERNIC_FIELD_PREP(ERNIC_SQPI_IDX, q->sq_pi));
	return slot;
}

static volatile uint32_t *db_word(struct mh_qp *q, uint32_t off)
{
	return (volatile uint32_t *)(q->db.va + off);
}

void mh_credit(struct mh *h, struct mh_qp *q, uint32_t n)
{
	q->credit += n;
	__atomic_store_n(db_word(q, 32 + ERNIC_RQDB_RECV_CREDIT), q->credit,
			 __ATOMIC_RELEASE);
	/* the provider's post_recv writes RQCIi too: the engine looks again */
	wr(h, ERNIC_QP(q->idx, ERNIC_RQCI),
	   ERNIC_FIELD_PREP(ERNIC_RQCI_IDX, q->rq_ci));
}

uint32_t mh_rq_pending(struct mh *h, const struct mh_qp *q)
{
	uint32_t wp = __atomic_load_n((const uint32_t *)(q->db.va + 32),
				      __ATOMIC_ACQUIRE);

	(void)h;
	return (wp + q->rq_depth - q->rq_ci) % q->rq_depth;
}

void mh_rq_drain(struct mh *h, struct mh_qp *q)
{
	uint32_t wp = *db_word(q, 32 + ERNIC_RQDB_WPTR);
	uint32_t iwp = *db_word(q, 32 + ERNIC_RQDB_IMMQ_WPTR);

	if (wp >= q->rq_depth || iwp >= q->rq_depth)
		die("QP %u: RQ write pointers %u/%u beyond depth %u", q->idx,
		    wp, iwp, q->rq_depth);
	q->rq_ci = wp;
	q->immq_ci = iwp;
	*db_word(q, 32 + ERNIC_RQDB_IMMQ_CI) = q->immq_ci;
	wr(h, ERNIC_QP(q->idx, ERNIC_RQCI),
	   ERNIC_FIELD_PREP(ERNIC_RQCI_IDX, q->rq_ci));
}

void mh_rq_drain_one(struct mh *h, struct mh_qp *q)
{
	uint32_t wp = *db_word(q, 32 + ERNIC_RQDB_WPTR);

	if (wp >= q->rq_depth)
		die("QP %u: RQ write pointer %u beyond depth %u", q->idx, wp,
		    q->rq_depth);
	if (q->rq_ci == wp)
		die("QP %u: no RQ element to drain", q->idx);
	q->rq_ci = (q->rq_ci + 1) % q->rq_depth;
	wr(h, ERNIC_QP(q->idx, ERNIC_RQCI),
	   ERNIC_FIELD_PREP(ERNIC_RQCI_IDX, q->rq_ci));
}

void mh_run(struct mh *h)
{
	bool busy = true;

	for (h->passes = 0; busy; h->passes++) {
		if (h->passes == ENGINE_PASS_LIMIT)
			die("the engine is still busy after %u passes",
			    ENGINE_PASS_LIMIT);
		ernic_model_step(h->m, &busy);
	}
}

void mh_advance(struct mh *h, uint64_t ns)
{
	h->now += ns;
	mh_run(h);
}

void mh_rx_raw(struct mh *h, const uint8_t *tp, size_t len, bool check_icrc)
{
	ernic_model_rx(h->m, &h->from_peer, tp, len, check_icrc);
	mh_run(h);
}

/* p as the peer sends it, in buf: dqpn and pkey defaulted. */
static size_t peer_build(struct mh *h, struct roce_pkt *p, uint8_t *buf,
			 size_t cap)
{
	size_t n;

	if (!p->dqpn)
		p->dqpn = ERNIC_FIRST_RC_QP;
	if (!p->pkey)
		p->pkey = ROCE_DEFAULT_PKEY;
	n = roce_build(buf, cap, p, &h->from_peer);
	if (!n)
		die("roce_build refused opcode 0x%02x", p->opcode);
	return n;
}

void mh_rx(struct mh *h, struct roce_pkt *p)
{
	uint8_t buf[ROCE_MAX_TRANSPORT];
	size_t n = peer_build(h, p, buf, sizeof(buf));

	mh_rx_raw(h, buf, n, true);
}

void mh_rx_queue(struct mh *h, struct roce_pkt *p)
{
	uint8_t buf[ROCE_MAX_TRANSPORT];
	size_t n = peer_build(h, p, buf, sizeof(buf));
	int rc = model_wire_tap_push(h->wire, &h->from_peer, buf, n);

	if (rc)
		die("model_wire_tap_push: %s", strerror(rc));
}

bool mh_tx_next(struct mh *h, struct roce_pkt *p)
{
	struct mh_pkt *t;
	uint32_t syn;

	if (h->tx_seen == h->ntx)
		return false;
	t = &h->tx[h->tx_seen++];
	syn = roce_parse(t->b, t->len, &t->l3, true, p);
	if (syn)
		die("the model sent a packet that does not parse: syndrome "
		    "0x%08x, opcode 0x%02x, %zu bytes", syn, t->b[0], t->len);
	return true;
}

void mh_tx_clear(struct mh *h)
{
	h->tx_seen = h->ntx;
}

static bool psn_sent(const struct mh_qp *q, uint32_t psn)
{
	uint32_t off = (psn - q->first_psn) & ERNIC_PSN_MASK;

	return off < MH_PSN_SPAN && (q->sent[off / 8] >> (off % 8) & 1);
}

/* The CQE at cq_ci: in SQ order, and success only for work done. */
static void cqe_check(const struct mh_qp *q, uint32_t cqe)
{
	uint32_t slot = ERNIC_FIELD_GET(ERNIC_CQE_WRID, cqe);
	uint32_t n;

	if (slot != q->cq_ci)
		die("QP %u: CQE %u has WRID %u", q->idx, q->cq_ci, slot);
	if (ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe))
		return;
	n = q->posted[slot].opcode == ERNIC_OP_RDMA_READ ? 1 :
							   q->wqe_npkts[slot];
	for (uint32_t k = 0; k < n; k++)
		if (!psn_sent(q, (q->wqe_psn[slot] + k) & ERNIC_PSN_MASK))
			die("QP %u: WQE %u (opcode %u) completed with success "
			    "but its PSN %u was never sent", q->idx, slot,
			    q->posted[slot].opcode,
			    (q->wqe_psn[slot] + k) & ERNIC_PSN_MASK);
}

uint32_t mh_cqes(struct mh *h, struct mh_qp *q, uint32_t *cqe, uint32_t max)
{
	uint32_t wi = *db_word(q, 0), n = 0;

	(void)h;
	if (wi >= q->sq_depth)
		die("QP %u: CQ write index %u beyond depth %u", q->idx, wi,
		    q->sq_depth);
	while (q->cq_ci != wi && n < max) {
		uint32_t v;

		memcpy(&v, q->cq.va + (size_t)q->cq_ci * ERNIC_CQE_SIZE, 4);
		cqe[n] = le32toh(v);
		cqe_check(q, cqe[n++]);
		q->cq_ci = (q->cq_ci + 1) % q->sq_depth;
	}
	return n;
}

uint32_t mh_errbuf_count(struct mh *h)
{
	return ERNIC_FIELD_GET(ERNIC_ERRBUFWPTR_WPTR,
			       mh_reg(h, ERNIC_ERRBUFWPTR));
}

uint32_t mh_errbuf_syndrome(struct mh *h, uint32_t k)
{
	uint32_t syn;

	memcpy(&syn, h->errbuf.va + (size_t)(k % ERRBUF_NUM) * ERRBUF_SIZE, 4);
	return syn;
}

uint32_t mh_errsts_count(struct mh *h)
{
	return ERNIC_FIELD_GET(ERNIC_IPKTERRQWPTR_WPTR,
			       mh_reg(h, ERNIC_IPKTERRQWPTR));
}

uint32_t mh_errsts(struct mh *h, uint32_t k, uint32_t *qp)
{
	uint64_t e;

	memcpy(&e, h->ipkterrq.va +
			   (size_t)(k % IPKTERRQ_NUM) * ERNIC_ERRSTS_ENTRY_SIZE,
	       sizeof(e));
	if (qp)
		*qp = (uint32_t)ERNIC_FIELD_GET(ERNIC_ERRSTS_QPID, e);
	return (uint32_t)ERNIC_FIELD_GET(ERNIC_ERRSTS_FATAL_CODE, e);
}

void mh_check_canaries(struct mh *h)
{
	char what[32];

	for (uint32_t i = 0; i < MH_MAX_QP + 2; i++) {
		const struct mh_qp *q = &h->qp[i];

		if (!q->up)
			continue;
		snprintf(what, sizeof(what), "QP %u SQ", i);
		buf_check(&q->sq, what);
		snprintf(what, sizeof(what), "QP %u CQ", i);
		buf_check(&q->cq, what);
		snprintf(what, sizeof(what), "QP %u RQ", i);
		buf_check(&q->rq, what);
		snprintf(what, sizeof(what), "QP %u doorbells", i);
		buf_check(&q->db, what);
	}
	for (uint32_t k = 0; k < h->nmr; k++) {
		if (h->mr[k].lazy)
			continue;
		snprintf(what, sizeof(what), "MR %u", k);
		buf_check(&h->mr[k].buf, what);
	}
	buf_check(&h->errbuf, "error buffer");
	buf_check(&h->ipkterrq, "error status queue");
}

/* ---- QP1 ---- */

#define MH_QP1_DEPTH 8u

struct mh_qp *mh_qp1_up(struct mh *h)
{
	struct mh_qp *q = &h->qp[ERNIC_QP1];
	const uint32_t i = ERNIC_QP1;

	if (q->up)
		die("QP1 is up already");
	q->idx = i;
	q->sq_depth = q->rq_depth = MH_QP1_DEPTH;
	buf_alloc(h, &q->sq, MH_QP1_DEPTH * ERNIC_WQE_SIZE, ERNIC_SQ_ALIGN);
	buf_alloc(h, &q->cq, MH_QP1_DEPTH * ERNIC_CQE_SIZE, ERNIC_CQ_ALIGN);
	buf_alloc(h, &q->rq, ernic_rq_block_size(MH_QP1_DEPTH,
						 ERNIC_QP1_BUF_SIZE),
		  ERNIC_RQ_ALIGN);
	buf_alloc(h, &q->db, 128, 128);
	/* Frames to send, one per SQ slot, in the same kind of buffer. */
	buf_alloc(h, &q->tx, MH_QP1_DEPTH * ERNIC_QP1_BUF_SIZE, 64);
	wr64(h, ERNIC_QP(i, ERNIC_RQBA), ERNIC_QP(i, ERNIC_RQBAMSB), q->rq.bus);
	wr64(h, ERNIC_QP(i, ERNIC_SQBA), ERNIC_QP(i, ERNIC_SQBAMSB), q->sq.bus);
	wr(h, ERNIC_QP(i, ERNIC_QDEPTH),
	   ERNIC_FIELD_PREP(ERNIC_QDEPTH_SQ, MH_QP1_DEPTH) |
		   ERNIC_FIELD_PREP(ERNIC_QDEPTH_RQ, MH_QP1_DEPTH));
	wr64(h, ERNIC_QP(i, ERNIC_CQBA), ERNIC_QP(i, ERNIC_CQBAMSB), q->cq.bus);
	wr64(h, ERNIC_QP(i, ERNIC_CQDBADD), ERNIC_QP(i, ERNIC_CQDBADDMSB),
	     q->db.bus);
	wr64(h, ERNIC_QP(i, ERNIC_RQWPTRDBADD),
	     ERNIC_QP(i, ERNIC_RQWPTRDBADDMSB), q->db.bus + 32);
	wr(h, ERNIC_QP(i, ERNIC_QPCONF),
	   ERNIC_QPCONF_QP_EN | ERNIC_QPCONF_HW_HANDSHAKE_DIS |
		   ERNIC_QPCONF_CQE_WRITE_EN |
		   ERNIC_FIELD_PREP(ERNIC_QPCONF_PMTU, ERNIC_PMTU_256) |
		   ERNIC_FIELD_PREP(ERNIC_QPCONF_RQ_BUF_SIZE,
				    ERNIC_QP1_BUF_SIZE / ERNIC_RQ_BUF_UNIT));
	q->up = true;
	mh_run(h);
	return q;
}

uint32_t mh_qp1_send(struct mh *h, const uint8_t *frame, uint32_t len,
		     uint8_t opcode)
{
	struct mh_qp *q = &h->qp[ERNIC_QP1];
	const uint32_t slot = q->sq_pi;
	struct ernic_wqe w = {
		.wrid = htole16((uint16_t)slot),
		.laddr = htole64(q->tx.bus + (uint64_t)slot * ERNIC_QP1_BUF_SIZE),
		.length = htole32(len),
		.opcode = opcode,
	};

	if (!q->up || len > ERNIC_QP1_BUF_SIZE)
		die("mh_qp1_send: QP1 down or frame too long");
	memcpy(q->tx.va + (size_t)slot * ERNIC_QP1_BUF_SIZE, frame, len);
	memcpy(q->sq.va + (size_t)slot * ERNIC_WQE_SIZE, &w, sizeof(w));
	q->sq_pi = (slot + 1) % q->sq_depth;
	wr(h, ERNIC_QP(ERNIC_QP1, ERNIC_SQPI), q->sq_pi);
	mh_run(h);
	return slot;
}

uint32_t mh_qp1_cqe(struct mh *h, uint32_t slot)
{
	const struct mh_qp *q = &h->qp[ERNIC_QP1];
	uint32_t v;

	memcpy(&v, q->cq.va + (size_t)slot * ERNIC_CQE_SIZE, 4);
	return le32toh(v);
}

uint32_t mh_qp1_recv(struct mh *h, uint8_t *frame, size_t cap)
{
	struct mh_qp *q = &h->qp[ERNIC_QP1];
	uint32_t wp, len;

	memcpy(&wp, q->db.va + 32, 4);
	wp = le32toh(wp);
	if (wp == q->rq_ci)
		return 0;
	memcpy(&len, q->rq.va + ernic_rxlen_off(q->rq_depth,
						ERNIC_QP1_BUF_SIZE) +
			     (size_t)q->rq_ci * ERNIC_RXLEN_ENTRY_SIZE, 4);
	len = ERNIC_FIELD_GET(ERNIC_RXLEN_LEN, le32toh(len));
	if (len > cap || len > ERNIC_QP1_BUF_SIZE)
		die("QP1 element %u: length %u", q->rq_ci, len);
	memcpy(frame, q->rq.va + (size_t)q->rq_ci * ERNIC_QP1_BUF_SIZE, len);
	q->rq_ci = (q->rq_ci + 1) % q->rq_depth;
	wr(h, ERNIC_QP(ERNIC_QP1, ERNIC_RQCI), q->rq_ci);
	mh_run(h);
	return len;
}
