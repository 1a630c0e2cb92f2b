/* SPDX-License-Identifier: MIT */
/*
 * CPU cache maintenance for an IP whose DMA is not coherent with the CPU
 * (a Zynq MPSoC design on the PS's non-coherent HP ports): before the IP
 * reads what the CPU wrote, the CPU's dirty lines go to DDR (clean);
 * before the CPU reads what the IP wrote, its stale lines go (invalidate).
 *
 * AArch64 allows both from user space (Linux sets SCTLR_EL1.UCI): DC CVAC
 * cleans a line to the point of coherency, DC CIVAC cleans and
 * invalidates it. DC IVAC, invalidate only, is privileged; CIVAC is the
 * safe form anyway, since it never drops a dirty CPU write. x86-64 DMA is
 * coherent, but CLFLUSH does both, so the code path runs there too.
 */
#ifndef ERNIC_DMA_CACHE_H
#define ERNIC_DMA_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__aarch64__) || defined(__x86_64__)
#define ERNIC_HAVE_CACHE_OPS 1
#else
#define ERNIC_HAVE_CACHE_OPS 0
#endif

static inline size_t ernic_cache_line(void)
{
#if defined(__aarch64__)
	uint64_t ctr;

	/* CTR_EL0.DminLine: log2 of the smallest D-cache line in words. */
	__asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
	return (size_t)4 << ((ctr >> 16) & 0xF);
#else
	return 64;
#endif
}

/* clean: write dirty lines of [va, va+len) back; else also invalidate. */
static inline void ernic_cache_maint(const void *va, size_t len, bool clean)
{
#if ERNIC_HAVE_CACHE_OPS
	const size_t line = ernic_cache_line();
	uintptr_t p = (uintptr_t)va & ~(uintptr_t)(line - 1);
	const uintptr_t end = (uintptr_t)va + len;

	if (!len)
		return;
#if defined(__aarch64__)
	for (; p < end; p += line) {
		if (clean)
			__asm__ volatile("dc cvac, %0" : : "r"(p) : "memory");
		else
			__asm__ volatile("dc civac, %0" : : "r"(p) : "memory");
	}
	/* Complete before the doorbell store or the reads that follow; the
	 * IP is outside the inner shareable domain. */
	__asm__ volatile("dsb sy" : : : "memory");
#else
	(void)clean;
	__asm__ volatile("mfence" : : : "memory");
	for (; p < end; p += line)
		__asm__ volatile("clflush (%0)" : : "r"(p) : "memory");
	__asm__ volatile("mfence" : : : "memory");
#endif
#else
	(void)va;
	(void)len;
	(void)clean;
#endif
}

#endif
