/* SPDX-License-Identifier: MIT */
/* Helpers for tests that drive the real libibverbs against ernicctl's
 * software devices and read the ERNIC register file back. */
#ifndef VERBS_UTIL_H
#define VERBS_UTIL_H

#include <infiniband/verbs.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ernic_hw.h"
#include "ernicdv.h"

#define DEV4 "ernict0"	/* 127.0.0.2 */
#define DEV4B "ernict1"	/* 127.0.0.3 */
#define DEV6 "ernict6"	/* ::1 */
#define DEV8 "ernict8"	/* 127.0.0.4, C_NUM_QP=8 and other parameters */
#define TEST_C_NUM_QP 64 /* ernicctl's default for software devices */

/* Exit 77 (skipped) with a message unless root and the devices exist. */
void tu_require_env(void);
struct ibv_context *tu_open(const char *name);
uint32_t tu_rd(struct ibv_context *ctx, uint32_t off);
uint64_t tu_rd64(struct ibv_context *ctx, uint32_t lsb, uint32_t msb);
/* All 64 registers of QP i's block, to prove a call changed nothing. */
void tu_qp_snapshot(struct ibv_context *ctx, uint32_t i, uint32_t out[64]);
/* An RC QP on its own CQ, in RESET. */
struct ibv_qp *tu_rc_qp(struct ibv_pd *pd, struct ibv_cq *cq, uint32_t sq,
			uint32_t rq);
/* Standard attributes for each step, towards peer address gid_text. */
void tu_init_attr(struct ibv_qp_attr *a, int *mask);
void tu_rtr_attr(struct ibv_qp_attr *a, int *mask, const char *peer_ip,
		 uint32_t dest_qpn, uint32_t rq_psn);
void tu_rts_attr(struct ibv_qp_attr *a, int *mask, uint32_t sq_psn);

#endif
