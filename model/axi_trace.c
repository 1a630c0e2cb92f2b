// SPDX-License-Identifier: MIT
/*
 * The receive path's AXI trace (axi_trace.h; format in hw/README.md).
 *
 * The model writes an accepted SEND packet as: the element
 * (eng_dma_write into RQBA + k * bufsz), its RXLEN word, for SEND with
 * immediate or invalidate the IMMQ entry and the IMMQ write pointer
 * (RQWPTRDBADD + 4), then the RQ write pointer (RQWPTRDBADD + 0). A WRITE
 * with immediate writes only the IMMQ entry and the IMMQ write pointer;
 * a QP1 MAD the element, RXLEN and the RQ write pointer. This file sorts
 * each write by where it lands in a QP's RQ block (the registers tell),
 * collects one packet's writes and, at its last one, prints
 *
 *   to .trace, what the IP's ports carry for it, in the IP's order,
 *   after a comment naming the packet ("# H qp opcode se rethlen", for
 *   people and the test's counts: the block must find it itself):
 *   software's IMMQ consumer index in memory (C, a memory state the
 *   block may read), the element as 64-byte rx_pkt_hndler_ddr_m_axi
 *   bursts with exact write strobes (A, B), the ieth_immdt_m_axis beat
 *   (S: the Table 1-1 word, which is the first 8 bytes of the IMMQ
 *   entry), and the RQ doorbell write (D);
 *   to .expect, every byte the model wrote for it (E).
 *
 * Every packet the RX path is handed goes to .trace as the frame the
 * IP's roce_cmac_s_axis would carry (P, F), when it arrives: before the
 * writes of packets the model takes after it, refused ones included. On
 * the UDP wire the kernel kept the Ethernet, IP and UDP headers; they
 * are rebuilt from what the socket said (addresses, ports, the IP ID the
 * ICRC needed), with the device's MAC as destination. Register writes
 * (R) go to .trace as they happen, the device's addresses also once at
 * the start. Writes elsewhere (an RDMA WRITE's payload, CQEs, READ
 * responses) are not traced.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "axi_trace.h"
#include "ernic_conf.h"
#include "roce_pkt.h"

#define BEAT 64u		/* the IP's 512-bit data path */
#define MAX_BEATS 64u		/* a burst: 4 KiB, never across 4 KiB */
#define EL_MAX 65536u
#define FRAME_MIN 60u		/* Ethernet, FCS removed: shorter is padded */
#define FRAME_MAX 16384u

struct axi_trace {
	pthread_mutex_t lock;
	FILE *tr, *ex;
	uint32_t hint;		/* QP of the last classified write */
	/* the packet being collected (qp 0: none) */
	uint32_t qp;
	uint64_t el_bus;
	size_t el_len;
	bool have_el, have_rxlen, have_imm, have_iwp;
	uint32_t rxlen, iwp;
	uint64_t rxlen_bus, imm_bus, db;
	uint8_t imm[ERNIC_IMMQ_ENTRY_SIZE];
	uint8_t el[EL_MAX];
	uint8_t frame[FRAME_MAX];
	unsigned long npkts, nframes;
};

enum where { W_NONE, W_ELEM, W_RXLEN, W_IMMQ, W_RQWP, W_IMMWP };

struct qp_geom {
	uint64_t rqba, db;
	uint32_t depth, bufsz;
};

static uint32_t reg(const struct ernic_model *m, uint32_t off)
{
	return __atomic_load_n(&m->regs[off / 4], __ATOMIC_ACQUIRE);
}

static bool geom(const struct ernic_model *m, uint32_t i, struct qp_geom *g)
{
	g->rqba = (uint64_t)reg(m, ERNIC_QP(i, ERNIC_RQBAMSB)) << 32 |
		  reg(m, ERNIC_QP(i, ERNIC_RQBA));
	g->db = (uint64_t)reg(m, ERNIC_QP(i, ERNIC_RQWPTRDBADDMSB)) << 32 |
		reg(m, ERNIC_QP(i, ERNIC_RQWPTRDBADD));
	g->depth = ERNIC_FIELD_GET(ERNIC_QDEPTH_RQ,
				   reg(m, ERNIC_QP(i, ERNIC_QDEPTH)));
	g->bufsz = ERNIC_FIELD_GET(ERNIC_QPCONF_RQ_BUF_SIZE,
				   reg(m, ERNIC_QP(i, ERNIC_QPCONF))) *
		   ERNIC_RQ_BUF_UNIT;
	return g->rqba && g->depth && g->bufsz;
}

static bool inside(uint64_t bus, size_t len, uint64_t base, uint64_t size)
{
	return bus >= base && bus - base < size && len <= size - (bus - base);
}

static enum where where_in(const struct qp_geom *g, uint64_t bus, size_t len)
{
	uint64_t rx = g->rqba + ernic_rxlen_off(g->depth, g->bufsz);
	uint64_t im = g->rqba + ernic_immq_off(g->depth, g->bufsz);

	if (g->db && len == 4 && bus == g->db + ERNIC_RQDB_WPTR)
		return W_RQWP;
	if (g->db && len == 4 && bus == g->db + ERNIC_RQDB_IMMQ_WPTR)
		return W_IMMWP;
	if (inside(bus, len ? len : 1, g->rqba,
		   ernic_rxlen_off(g->depth, g->bufsz)))
		return W_ELEM;
	if (len == 4 && inside(bus, len, rx,
			       (uint64_t)g->depth * ERNIC_RXLEN_ENTRY_SIZE))
		return W_RXLEN;
	if (len == ERNIC_IMMQ_ENTRY_SIZE &&
	    inside(bus, len, im, (uint64_t)g->depth * ERNIC_IMMQ_ENTRY_SIZE))
		return W_IMMQ;
	return W_NONE;
}

/* Which QP's RQ block a write lands in, and where. */
static enum where classify(struct axi_trace *t, const struct ernic_model *m,
			   uint64_t bus, size_t len, uint32_t *qp,
			   struct qp_geom *g)
{
	enum where w;

	if (t->hint && geom(m, t->hint, g) &&
	    (w = where_in(g, bus, len)) != W_NONE) {
		*qp = t->hint;
		return w;
	}
	for (uint32_t i = 1; i <= m->c_num_qp; i++) {
		if (i == t->hint || !geom(m, i, g))
			continue;
		w = where_in(g, bus, len);
		if (w != W_NONE) {
			*qp = t->hint = i;
			return w;
		}
	}
	return W_NONE;
}

static void put_hex(FILE *f, const uint8_t *b, size_t n)
{
	for (size_t k = 0; k < n; k++)
		fprintf(f, "%02x", b[k]);
}

static void expect(struct axi_trace *t, uint64_t bus, const void *src,
		   size_t len)
{
	fprintf(t->ex, "E %llx %zx ", (unsigned long long)bus, len);
	put_hex(t->ex, src, len);
	fputc('\n', t->ex);
}

/* One beat: WSTRB and WDATA as 16 and 128 hex digits, lane 63 first. */
static void beat(FILE *f, uint64_t base, uint64_t lo, uint64_t hi,
		 const uint8_t *src, uint64_t src_bus)
{
	uint8_t lane[BEAT] = { 0 };
	uint64_t strb = 0;

	for (uint64_t a = lo; a < hi; a++) {
		lane[a - base] = src[a - src_bus];
		strb |= UINT64_C(1) << (a - base);
	}
	fprintf(f, "B %016llx ", (unsigned long long)strb);
	for (int k = BEAT - 1; k >= 0; k--)
		fprintf(f, "%02x", lane[k]);
	fputc('\n', f);
}

/* The element as the IP writes it: INCR bursts of 64-byte beats, at most
 * 64 beats and never across a 4 KiB boundary, strobes on the payload's
 * bytes only. */
static void element_bursts(struct axi_trace *t)
{
	uint64_t a = t->el_bus, end = t->el_bus + t->el_len;

	while (a < end) {
		uint64_t first = a & ~(uint64_t)(BEAT - 1);
		uint64_t lim = (a | 4095) + 1, bend;
		unsigned int n;

		if (lim > end)
			lim = end;
		n = (unsigned int)((lim - first + BEAT - 1) / BEAT);
		if (n > MAX_BEATS)
			n = MAX_BEATS;
		bend = first + (uint64_t)n * BEAT;
		if (bend > lim)
			bend = lim;
		fprintf(t->tr, "A %llx %x\n", (unsigned long long)a, n);
		for (unsigned int k = 0; k < n; k++) {
			uint64_t base = first + (uint64_t)k * BEAT;
			uint64_t lo = base > a ? base : a;
			uint64_t hi = base + BEAT < bend ? base + BEAT : bend;

			beat(t->tr, base, lo, hi, t->el, t->el_bus);
		}
		a = bend;
	}
}

static uint32_t le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

/* The collected packet's trace and expected memory; then forget it.
 * rqwp: the RQ write pointer store that ends it, or NULL. */
static void flush(struct axi_trace *t, struct ernic_model *m,
		  const uint32_t *rqwp)
{
	uint32_t op, se = 0, reth = 0, ci = 0;
	const uint32_t *cip;

	if (!t->qp)
		return;
	if (t->have_rxlen) {
		op = ERNIC_FIELD_GET(ERNIC_RXLEN_OPCODE, t->rxlen);
		se = ERNIC_FIELD_GET(ERNIC_RXLEN_SE, t->rxlen);
	} else {
		/* WRITE with immediate: the model keeps no opcode; the
		 * block needs only "a WRITE with immediate" and the RETH
		 * length the sniffer kept from the message's first packet. */
		op = 0x0B;	/* RDMA WRITE Only with Immediate */
		reth = le32(t->imm + 12);
	}
	fprintf(t->tr, "# H %x %x %x %x\n", t->qp, op, se, reth);
	if (t->have_imm) {
		cip = ernic_model_bus_to_va(m, t->db + ERNIC_RQDB_IMMQ_CI, 4);
		if (cip)
			ci = __atomic_load_n(cip, __ATOMIC_ACQUIRE);
		fprintf(t->tr, "C %llx %x\n",
			(unsigned long long)(t->db + ERNIC_RQDB_IMMQ_CI), ci);
	}
	if (t->have_el)
		element_bursts(t);
	if (t->have_imm) {
		fputs("S ", t->tr);
		for (int k = 7; k >= 0; k--)
			fprintf(t->tr, "%02x", t->imm[k]);
		fputc('\n', t->tr);
	}
	if (rqwp)
		fprintf(t->tr, "D %llx %x\n", (unsigned long long)t->db, *rqwp);

	if (t->have_el && t->el_len)
		expect(t, t->el_bus, t->el, t->el_len);
	if (t->have_rxlen)
		expect(t, t->rxlen_bus, &t->rxlen, 4);
	if (t->have_imm)
		expect(t, t->imm_bus, t->imm, sizeof(t->imm));
	if (t->have_iwp)
		expect(t, t->db + ERNIC_RQDB_IMMQ_WPTR, &t->iwp, 4);
	if (rqwp)
		expect(t, t->db, rqwp, 4);
	t->npkts++;
	t->qp = 0;
	t->have_el = t->have_rxlen = t->have_imm = t->have_iwp = false;
}

/* A write of QP qp's packet: a packet of another QP still collected is
 * printed as it is first (not seen with the model's writes). */
static void begin(struct axi_trace *t, struct ernic_model *m, uint32_t qp,
		  const struct qp_geom *g)
{
	if (t->qp && t->qp != qp)
		flush(t, m, NULL);
	t->qp = qp;
	t->db = g->db;
}

void axi_trace_dma_slow(struct ernic_model *m, uint64_t bus, const void *src,
			size_t len)
{
	struct axi_trace *t = m->axi_trace;
	struct qp_geom g;
	enum where w;
	uint32_t qp = 0, v;

	pthread_mutex_lock(&t->lock);
	w = classify(t, m, bus, len, &qp, &g);
	if (w != W_NONE)
		begin(t, m, qp, &g);
	switch (w) {
	case W_NONE:
		break;
	case W_ELEM:
		if (t->have_el || t->have_rxlen)
			flush(t, m, NULL);	/* never seen: a new packet */
		begin(t, m, qp, &g);
		t->have_el = true;
		t->el_bus = bus;
		t->el_len = len < EL_MAX ? len : EL_MAX;
		if (t->el_len)
			memcpy(t->el, src, t->el_len);
		break;
	case W_RXLEN:
		t->have_rxlen = true;
		t->rxlen_bus = bus;
		memcpy(&t->rxlen, src, 4);
		break;
	case W_IMMQ:
		t->have_imm = true;
		t->imm_bus = bus;
		memcpy(t->imm, src, sizeof(t->imm));
		break;
	case W_IMMWP:
		t->have_iwp = true;
		memcpy(&t->iwp, src, 4);
		if (!t->have_rxlen)
			flush(t, m, NULL);	/* WRITE with immediate */
		break;
	case W_RQWP:
		memcpy(&v, src, 4);
		flush(t, m, &v);
		break;
	}
	pthread_mutex_unlock(&t->lock);
}

/* The device's own addresses, which the header sniffer checks. */
static bool global_traced(uint32_t off)
{
	return off == ERNIC_MACXADDLSB || off == ERNIC_MACXADDMSB ||
	       off == ERNIC_IPV4XADD ||
	       (off >= ERNIC_IPV6XADD1 && off <= ERNIC_IPV6XADD4);
}

static void put_reg(struct axi_trace *t, uint32_t off, uint32_t val)
{
	pthread_mutex_lock(&t->lock);
	fprintf(t->tr, "R %x %x\n", off, val);
	pthread_mutex_unlock(&t->lock);
}

void axi_trace_rx_slow(struct ernic_model *m, const struct roce_l3 *l3,
		       const uint8_t *tp, size_t tlen)
{
	static const uint8_t zero[6];
	struct axi_trace *t = m->axi_trace;
	struct roce_l3 f = *l3;
	size_t hl = roce_frame_hdr_len(l3->family), n;

	if (!hl || tlen > FRAME_MAX - hl)
		return;
	if (!memcmp(f.dst_mac, zero, sizeof(zero)))
		ernic_mac_from_regs(reg(m, ERNIC_MACXADDLSB),
				    reg(m, ERNIC_MACXADDMSB), f.dst_mac);
	pthread_mutex_lock(&t->lock);
	memcpy(t->frame + hl, tp, tlen);
	n = roce_frame_build(t->frame, FRAME_MAX, &f, tlen);
	if (n) {
		if (n < FRAME_MIN) {
			memset(t->frame + n, 0, FRAME_MIN - n);
			n = FRAME_MIN;
		}
		fprintf(t->tr, "P %zx\n", (n + BEAT - 1) / BEAT);
		for (size_t b = 0; b < n; b += BEAT) {
			size_t e = b + BEAT < n ? b + BEAT : n;
			uint64_t keep = e - b == BEAT ? ~UINT64_C(0) :
				(UINT64_C(1) << (e - b)) - 1;

			fprintf(t->tr, "F %016llx ", (unsigned long long)keep);
			for (size_t k = BEAT; k-- > 0;)
				fprintf(t->tr, "%02x", b + k < e ? t->frame[b + k] : 0);
			fputc('\n', t->tr);
		}
		t->nframes++;
	}
	pthread_mutex_unlock(&t->lock);
}

void axi_trace_reg_slow(struct ernic_model *m, uint32_t off, uint32_t val)
{
	struct axi_trace *t = m->axi_trace;
	uint32_t r, qp;

	if (global_traced(off))
		put_reg(t, off, val);
	if (off < ERNIC_QP_BASE)
		return;
	r = (off - ERNIC_QP_BASE) % ERNIC_QP_STRIDE;
	qp = (off - ERNIC_QP_BASE) / ERNIC_QP_STRIDE + 1;
	if (qp > m->c_num_qp)
		return;
	switch (r) {
	case ERNIC_QPCONF:
	case ERNIC_RQBA:
	case ERNIC_RQBAMSB:
	case ERNIC_RQWPTRDBADD:
	case ERNIC_RQWPTRDBADDMSB:
	case ERNIC_QDEPTH:
	case ERNIC_STATRQPIDB:
	case ERNIC_LSTRQREQ:
		put_reg(t, off, val);
		break;
	default:
		break;
	}
}

void axi_trace_open(struct ernic_model *m, const struct ernic_conf *conf)
{
	const char *dir = getenv("ERNIC_AXI_TRACE");
	struct axi_trace *t;
	char path[4096];

	if (!dir || !*dir)
		return;
	t = calloc(1, sizeof(*t));
	if (!t)
		return;
	snprintf(path, sizeof(path), "%s/%s-%ld.trace", dir, conf->name,
		 (long)getpid());
	t->tr = fopen(path, "we");
	snprintf(path, sizeof(path), "%s/%s-%ld.expect", dir, conf->name,
		 (long)getpid());
	t->ex = fopen(path, "we");
	if (!t->tr || !t->ex || pthread_mutex_init(&t->lock, NULL)) {
		fprintf(stderr, "ernic: ERNIC_AXI_TRACE: cannot write %s: %s\n",
			path, strerror(errno));
		if (t->tr)
			fclose(t->tr);
		if (t->ex)
			fclose(t->ex);
		free(t);
		return;
	}
	fprintf(t->tr, "# ernic AXI trace v2: %s, C_NUM_QP=%u\n", conf->name,
		m->c_num_qp);
	for (uint32_t off = ERNIC_MACXADDLSB; off <= ERNIC_IPV4XADD; off += 4)
		if (global_traced(off))
			fprintf(t->tr, "R %x %x\n", off, reg(m, off));
	m->axi_trace = t;
}

void axi_trace_close(struct ernic_model *m)
{
	struct axi_trace *t = m->axi_trace;

	if (!t)
		return;
	m->axi_trace = NULL;
	fprintf(t->tr, "# %lu packets stored, %lu frames\n", t->npkts,
		t->nframes);
	fclose(t->tr);
	fclose(t->ex);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
