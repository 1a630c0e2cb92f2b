/* SPDX-License-Identifier: MIT */
/*
 * rdmacm_cycles (tests/rdmacm_cycles.c): what the cycles and the leak
 * observations (rdmacm_cycles_leak.c) share.
 */
#ifndef RDMACM_CYCLES_H
#define RDMACM_CYCLES_H

#include <stddef.h>

#include <infiniband/verbs.h>

/* The cycle in progress (for messages) and a failure: exit status 1. */
extern unsigned int cur_cycle;
void die(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

/* Every librdmacm mapped must be LIB (NULL: any in a lib/rdmacm
 * directory, ours rather than the system's); prints which it is. */
void check_library(const char *lib);

/* What the process holds, on the server's (0) and the client's (1)
 * device. hw_qps is -1 when the provider has no ernicdv_reg_read. */
struct snap {
	int fds, threads, maps;
	size_t heap;
	int max_qp[2], free_qps[2], hw_qps[2];
};
void take_snap(struct ibv_context *const ctx[2], struct snap *s);
/* Print it; fail unless every QP is free and none is programmed. */
void check_snap(const char *when, const struct snap *s);

#endif
