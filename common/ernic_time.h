/* SPDX-License-Identifier: MIT */
/*
 * Clock readings in nanoseconds, for the provider, the model and the
 * tools (deadlines, back-off, CPU budgets).
 */
#ifndef ERNIC_TIME_H
#define ERNIC_TIME_H

#include <stdint.h>
#include <time.h>

/* Clock c (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, ...) in ns. */
static inline uint64_t ernic_clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The monotonic clock in ns. */
static inline uint64_t ernic_mono_ns(void)
{
	return ernic_clock_ns(CLOCK_MONOTONIC);
}

#endif
