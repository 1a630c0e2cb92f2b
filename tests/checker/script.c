// SPDX-License-Identifier: MIT
/*
 * The deterministic op scripts and data patterns. Everything here is a
 * function of the shared options and (seed, qp, direction, op index),
 * so both sides compute the same scripts without talking.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"

uint64_t chk_mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t chk_rand(uint64_t seed, uint32_t qp, uint32_t dir, uint64_t idx,
		  uint32_t lane)
{
	uint64_t h = chk_mix(seed ^ ((uint64_t)lane << 56));

	h = chk_mix(h ^ ((uint64_t)qp << 1 | dir));
	return chk_mix(h ^ idx);
}

/* Byte pos of a pattern is byte (pos & 7) of 64-bit word pos / 8: where
 * a byte sits is part of its value, so a misplaced byte is caught. */
static inline uint64_t pword(uint64_t key, uint64_t w)
{
	return chk_mix(key ^ (w * 0xd6e8feb86659fd93ull));
}

uint8_t pattern_byte(uint64_t key, uint64_t pos)
{
	return (uint8_t)(pword(key, pos >> 3) >> (8 * (pos & 7)));
}

void pattern_fill(uint8_t *dst, uint64_t key, uint64_t start, uint64_t len)
{
	uint64_t pos = start, end = start + len;

	for (; pos < end && (pos & 7); pos++)
		*dst++ = pattern_byte(key, pos);
	for (; end - pos >= 8; pos += 8, dst += 8) {
		uint64_t w = pword(key, pos >> 3);

		for (int b = 0; b < 8; b++)
			dst[b] = (uint8_t)(w >> (8 * b));
	}
	for (; pos < end; pos++)
		*dst++ = pattern_byte(key, pos);
}

int64_t pattern_check(const uint8_t *buf, uint64_t key, uint64_t start,
		      uint64_t len)
{
	uint64_t pos = start, end = start + len;

	for (; pos < end && (pos & 7); pos++, buf++)
		if (*buf != pattern_byte(key, pos))
			return (int64_t)(pos - start);
	for (; end - pos >= 8; pos += 8, buf += 8) {
		uint64_t w = pword(key, pos >> 3);
		uint8_t e[8];

		for (int b = 0; b < 8; b++)
			e[b] = (uint8_t)(w >> (8 * b));
		if (memcmp(buf, e, 8))
			for (int b = 0; b < 8; b++)
				if (buf[b] != e[b])
					return (int64_t)(pos + b - start);
	}
	for (; pos < end; pos++, buf++)
		if (*buf != pattern_byte(key, pos))
			return (int64_t)(pos - start);
	return -1;
}

static const char *const kind_names[OP_NKINDS] = {
	[OP_SEND] = "send", [OP_SEND_IMM] = "send_imm",
	[OP_WRITE] = "write", [OP_WRITE_IMM] = "write_imm",
	[OP_READ] = "read",
};

const char *kind_name(unsigned int k)
{
	return k < OP_NKINDS ? kind_names[k] : "?";
}

uint32_t ops_parse(const char *s)
{
	char buf[256], *save = NULL, *t;
	uint32_t m = 0;

	if (strlen(s) >= sizeof(buf))
		return 0;
	strcpy(buf, s);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned int k;

		if (!strcmp(t, "all")) {
			m |= OPS_ALL;
			continue;
		}
		if (!strcmp(t, "inline")) {
			m |= OPS_INLINE;
			continue;
		}
		for (k = 0; k < OP_NKINDS && strcmp(t, kind_names[k]); k++)
			;
		if (k == OP_NKINDS)
			return 0;
		m |= OPB(k);
	}
	return m;
}

void ops_format(uint32_t ops, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (unsigned int k = 0; k <= OP_NKINDS; k++)
		if (ops & OPB(k))
			o += (size_t)snprintf(buf + o, o < len ? len - o : 0,
					      "%s%s", o ? "," : "",
					      k < OP_NKINDS ? kind_names[k] :
							      "inline");
}

/* The areas both sides must agree on follow from max_size only. */
void chk_area_sizes(struct chk *c)
{
	const uint64_t m = c->p.max_size;

	c->unit = m + CHK_GAP;
	/* 4 units: a plain WRITE is allowed only while one more region of
	 * the largest size still fits without touching unflushed ones. */
	c->wt_size = 4 * c->unit;
	c->rs_size = m + CHK_READ_SPARE;
	c->lr_size = 2 * (m + CHK_MAX_SGE * CHK_GAP) + 262144;
	c->rr_size = 2 * (m + CHK_SLACK + CHK_MAX_SGE * CHK_GAP) + 262144;
}

void script_init(struct script *s, const struct chk *c, uint32_t qp,
		 uint32_t dir)
{
	*s = (struct script){
		.seed = c->p.seed, .n = c->p.iters, .wt_size = c->wt_size,
		.unit = c->unit, .rs_size = c->rs_size, .qp = qp, .dir = dir,
		.ops = c->p.ops, .max_size = c->p.max_size, .mtu = c->mtu,
	};
}

/* Sizes that matter: 1, inline sizes, around the PMTU, multi-packet,
 * the max, and anything in between. */
static uint32_t pick_size(uint64_t r, uint32_t max, uint32_t mtu)
{
	uint64_t v, x = r >> 4;

	switch (r & 15) {
	case 0: v = 1; break;
	case 1: case 2: v = 2 + x % 15; break;
	case 3: case 4: v = 17 + x % 240; break;
	case 5: v = mtu - 1; break;
	case 6: v = mtu; break;
	case 7: v = mtu + 1; break;
	case 8: v = (2 + x % 7) * (uint64_t)mtu + (x >> 8) % 3 - 1; break;
	case 9: case 10: v = 257 + x % 7936; break;
	case 11: case 12: v = 1 + x % max; break;
	case 13: v = max; break;
	case 14: v = max / 2 + x % (max - max / 2 + 1); break;
	default: v = 64 * (1 + x % 1024); break;
	}
	if (v > max)
		v = 1 + (x >> 20) % max;
	return v ? (uint32_t)v : 1;
}

static unsigned int pick_kind(uint32_t mask, uint64_t r)
{
	unsigned int k[OP_NKINDS], n = 0;

	for (unsigned int i = 0; i < OP_NKINDS; i++)
		if (mask & OPB(i))
			k[n++] = i;
	return n ? k[r % n] : OP_SEND;
}

/* Where a region of size bytes goes in the WRITE area ring. */
static uint64_t place(const struct script *s, uint64_t gap, uint32_t size)
{
	uint64_t start = s->cursor + gap, off = start % s->wt_size;

	if (off + size > s->wt_size)
		start += s->wt_size - off;
	return start;
}

void script_next(struct script *s, struct op *op)
{
	const uint64_t i = s->next;
	const uint64_t rk = chk_rand(s->seed, s->qp, s->dir, i, LANE_KIND);
	const uint64_t rm = chk_rand(s->seed, s->qp, s->dir, i, LANE_MISC);
	/* -n: the last op flushes. -T (stopping) does not change the
	 * script: the requester ends at the first op that leaves no WRITE
	 * unflushed, and tells the peer where (STOP). */
	const bool ending = s->n && i == s->n - 1;
	unsigned int kind = pick_kind(s->ops & OPS_KINDS, rk);
	uint64_t gap = (rm & 3) ? (rm >> 2) % CHK_GAP : 0, start = 0;

	memset(op, 0, sizeof(*op));
	op->idx = i;
	op->size = pick_size(chk_rand(s->seed, s->qp, s->dir, i, LANE_SIZE),
			     s->max_size, s->mtu);
	/* Plain WRITEs are checked when the next receive-consuming op
	 * completes (RC ordering): that op comes within CHK_FLUSH_EVERY,
	 * before the end, and before the area could wrap onto them. */
	if (kind == OP_WRITE && !ending) {
		uint64_t oldest;

		start = place(s, gap, op->size);
		oldest = s->npend ? s->pend_start : start;
		if (start + op->size - oldest + 2 * s->unit > s->wt_size)
			kind = OP_NKINDS;
	}
	if ((s->npend && (s->npend >= CHK_FLUSH_EVERY || ending)) ||
	    kind == OP_NKINDS || (kind == OP_WRITE && ending))
		kind = pick_kind(s->ops & OPS_RECV, rk >> 32);
	op->kind = (uint8_t)kind;

	if (kind == OP_WRITE || kind == OP_WRITE_IMM) {
		start = place(s, gap, op->size);
		op->roff = start % s->wt_size;
		op->rend = start + op->size;
		if (kind == OP_WRITE && !s->npend++)
			s->pend_start = start;
		s->cursor = op->rend;
	} else if (kind == OP_READ) {
		op->roff = (rm >> 8) % (s->rs_size - op->size + 1);
	}
	if (OPB(kind) & OPS_RECV)
		s->npend = 0;
	if (kind == OP_SEND_IMM || kind == OP_WRITE_IMM)
		op->imm = (uint32_t)(rm >> 32);
	op->key = chk_rand(s->seed, s->qp, s->dir, i, LANE_DATA);
	op->last = ending || (s->stopping && !s->npend);
	s->ended = op->last;
	s->next++;
}
