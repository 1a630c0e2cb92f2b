/* SPDX-License-Identifier: MIT */
/*
 * The data path's locks: a QP's sq_lock and rq_lock and a CQ's lock are
 * taken by every post and poll, by threads of one process, and held for
 * tens of instructions. Inline, so that an uncontended lock and unlock
 * cost an exchange and a store (pthread_spin_lock is a library call:
 * about three times the instructions on a successful poll's two pairs).
 * Same semantics as a PTHREAD_PROCESS_PRIVATE pthread spin lock.
 */
#ifndef ERNIC_SPIN_H
#define ERNIC_SPIN_H

#include <stdatomic.h>
#include <stdbool.h>

typedef struct {
	atomic_bool held;
} ernic_spinlock_t;

/* A hint to the CPU that this is a spin-wait loop. */
static inline void ernic_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

static inline void ernic_spin_init(ernic_spinlock_t *l)
{
	atomic_init(&l->held, false);
}

static inline bool ernic_spin_trylock(ernic_spinlock_t *l)
{
	return !atomic_exchange_explicit(&l->held, true, memory_order_acquire);
}

static inline void ernic_spin_lock(ernic_spinlock_t *l)
{
	/* test and test-and-set: waiters spin on a shared line */
	while (!ernic_spin_trylock(l))
		while (atomic_load_explicit(&l->held, memory_order_relaxed))
			ernic_cpu_relax();
}

static inline void ernic_spin_unlock(ernic_spinlock_t *l)
{
	atomic_store_explicit(&l->held, false, memory_order_release);
}

#endif
