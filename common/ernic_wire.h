/* SPDX-License-Identifier: MIT */
/*
 * Bytes on the wire: big-endian (network order) fields, the little-endian
 * ICRC, and the Internet checksum (RFC 1071). One home for the model's
 * packet codec, the provider's QP1 frames and the test tools. Callers
 * have checked that the bytes are there.
 */
#ifndef ERNIC_WIRE_H
#define ERNIC_WIRE_H

#include <stddef.h>
#include <stdint.h>

static inline uint16_t ernic_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t ernic_get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t ernic_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | ernic_get24(p + 1);
}

static inline uint64_t ernic_get64(const uint8_t *p)
{
	return (uint64_t)ernic_get32(p) << 32 | ernic_get32(p + 4);
}

static inline uint32_t ernic_get_le32(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[1] << 8 | p[0];
}

static inline void ernic_put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void ernic_put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	ernic_put16(p + 1, v);
}

static inline void ernic_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	ernic_put24(p + 1, v);
}

static inline void ernic_put64(uint8_t *p, uint64_t v)
{
	ernic_put32(p, (uint32_t)(v >> 32));
	ernic_put32(p + 4, (uint32_t)v);
}

static inline void ernic_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Ones' complement sum (RFC 1071), not yet folded or inverted. */
static inline uint32_t ernic_csum_add(uint32_t sum, const uint8_t *p,
				      size_t len)
{
	for (; len > 1; p += 2, len -= 2)
		sum += ernic_get16(p);
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

/* Fold and invert: the checksum field's value. */
static inline uint16_t ernic_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

#endif
