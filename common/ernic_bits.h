/* SPDX-License-Identifier: MIT */
/*
 * Bit-field helpers shared by the provider, the model and the tools.
 * Masks are compile-time constants; FIELD_PREP/FIELD_GET derive the shift
 * from the mask so a field is named once.
 */
#ifndef ERNIC_BITS_H
#define ERNIC_BITS_H

#include <stdint.h>

#define ERNIC_BIT(n) (UINT32_C(1) << (n))
#define ERNIC_GENMASK(h, l) \
	((uint32_t)((UINT64_C(1) << ((h) + 1)) - (UINT64_C(1) << (l))))

#define ERNIC_FIELD_SHIFT(mask) ((unsigned int)__builtin_ctz(mask))
#define ERNIC_FIELD_PREP(mask, val) \
	((((uint32_t)(val)) << ERNIC_FIELD_SHIFT(mask)) & (mask))
#define ERNIC_FIELD_GET(mask, reg) \
	((((uint32_t)(reg)) & (mask)) >> ERNIC_FIELD_SHIFT(mask))
/* Elements of an array (rdma-core's ARRAY_SIZE). */
#define ERNIC_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* True when val fits in the field without truncation. */
#define ERNIC_FIELD_FITS(mask, val) \
	((uint64_t)(val) <= ((mask) >> ERNIC_FIELD_SHIFT(mask)))

static inline uint32_t ernic_lo32(uint64_t v)
{
	return (uint32_t)v;
}

static inline uint32_t ernic_hi32(uint64_t v)
{
	return (uint32_t)(v >> 32);
}

#endif
