/* SPDX-License-Identifier: MIT */
/*
 * Ordering between the CPU and the IP's DMA, with rdma-core's names
 * (util/udma_barrier.h) so the provider moves there with renames only.
 *
 * The IP is a DMA master outside the CPUs' inner shareable domain (a
 * Zynq MPSoC's PL behind an HP/HPC port, a PCIe card), so on aarch64 the
 * barriers are outer shareable: "dmb ish" and the acquire/release
 * instructions (LDAR/STLR on inner shareable memory) order accesses only
 * for the other CPUs. x86-64 is TSO for write-back memory; its barriers
 * are those rdma-core uses. access/dma_cache.h is the non-coherent part.
 */
#ifndef ERNIC_UDMA_BARRIER_H
#define ERNIC_UDMA_BARRIER_H

#include <stdatomic.h>
#include <stdint.h>

/*
 * udma_to_device_barrier: before an MMIO store that may start DMA (a
 * doorbell), the IP sees every store to DMA memory the CPU made before.
 * udma_from_device_barrier: after observing something the IP wrote (a
 * register read, a doorbell word in DMA memory), later loads see what
 * the IP wrote before it.
 * udma_reads_done_barrier (ours, not rdma-core's): before a store that
 * hands DMA memory back to the IP (RQCI once the elements are copied
 * out), the CPU's loads of it are complete: "dmb oshld" on aarch64 (DMB
 * LD orders earlier loads against later loads and stores); x86 does not
 * reorder a load with a later store.
 */
#if defined(__x86_64__) || defined(__i386__)
#define udma_to_device_barrier() __asm__ volatile("" : : : "memory")
#define udma_from_device_barrier() __asm__ volatile("lfence" : : : "memory")
#define udma_reads_done_barrier() __asm__ volatile("" : : : "memory")
#elif defined(__aarch64__)
#define udma_to_device_barrier() __asm__ volatile("dmb oshst" : : : "memory")
#define udma_from_device_barrier() __asm__ volatile("dmb oshld" : : : "memory")
#define udma_reads_done_barrier() __asm__ volatile("dmb oshld" : : : "memory")
#else
#define udma_to_device_barrier() atomic_thread_fence(memory_order_seq_cst)
#define udma_from_device_barrier() atomic_thread_fence(memory_order_seq_cst)
#define udma_reads_done_barrier() atomic_thread_fence(memory_order_seq_cst)
#endif

/*
 * A 32-bit word in DMA memory the IP writes (a CQ or RQ doorbell slot):
 * what the IP wrote before it is visible to the loads after. On x86 an
 * acquire load is enough (write-back memory is TSO; rdma-core's LFENCE
 * is for other memory types); on aarch64 a plain load and "dmb oshld".
 */
static inline uint32_t udma_load_acquire32(const volatile uint32_t *p)
{
#if defined(__aarch64__)
	uint32_t v = atomic_load_explicit((_Atomic uint32_t *)(uintptr_t)p,
					  memory_order_relaxed);

	udma_from_device_barrier();
	return v;
#else
	return atomic_load_explicit((_Atomic uint32_t *)(uintptr_t)p,
				    memory_order_acquire);
#endif
}

/* The same for two adjacent words read as one aligned 64-bit load. */
static inline uint64_t udma_load_acquire64(const volatile uint64_t *p)
{
#if defined(__aarch64__)
	uint64_t v = atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)p,
					  memory_order_relaxed);

	udma_from_device_barrier();
	return v;
#else
	return atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)p,
				    memory_order_acquire);
#endif
}

/* A word in DMA memory the IP reads (a receive credit word, a consumer
 * index): published after every load and store before it, for the IP
 * and for other CPUs. */
static inline void udma_store_release32(volatile uint32_t *p, uint32_t v)
{
#if defined(__aarch64__)
	/* loads and stores before it: "dmb osh" */
	__asm__ volatile("dmb osh" : : : "memory");
	atomic_store_explicit((_Atomic uint32_t *)(uintptr_t)p, v,
			      memory_order_relaxed);
#else
	atomic_store_explicit((_Atomic uint32_t *)(uintptr_t)p, v,
			      memory_order_release);
#endif
}

#endif
