/* SPDX-License-Identifier: MIT */
/*
 * test_badapi: every verb called with bad arguments, as a careless caller
 * would, each case in a forked child (test_badapi.c runs them). A case
 * sets up what it needs, makes the one call under test through CALL_INT
 * or CALL_PTR, which compares the result with the case's expectation,
 * then CHECKs that nothing else happened and that the objects involved
 * still work. Case tables: test_badapi_mr.c (PD, MR), test_badapi_res.c
 * (CQ, QP creation, queries, destroy order), test_badapi_modify.c
 * (ibv_modify_qp), test_badapi_post.c (post, poll, notify).
 */
#ifndef TEST_BADAPI_H
#define TEST_BADAPI_H

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the call under test must return. */
enum ba_kind {
	BA_ERR,		/* int verb: this errno value (or the second) */
	BA_NULL,	/* pointer verb: NULL, errno this (or the second) */
	BA_OK,		/* success: 0, or a valid object */
	BA_NEG,		/* a negative value (ibv_query_gid/pkey: -1) */
	BA_LE0,		/* 0 or negative: nothing returned */
};

struct ba_exp {
	enum ba_kind kind;
	int err[2];
};

#define EXP_ERR(...) { BA_ERR, { __VA_ARGS__ } }
#define EXP_NULL(...) { BA_NULL, { __VA_ARGS__ } }
#define EXP_OK { BA_OK, { 0 } }
#define EXP_NEG { BA_NEG, { 0 } }
#define EXP_LE0 { BA_LE0, { 0 } }

#define BA_BUF (64u << 10)	/* each side's registered buffer */
#define BA_PSN 0x100
#define BA_WAIT_MS 5000
#define BA_BAD_ID 0xbadull	/* wr_id of the work request under test */

/* One device: a context, a PD, a CQ and a buffer registered for every
 * access. */
struct ba_side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t *buf;
	struct ibv_mr *mr;
	char ip[INET6_ADDRSTRLEN];	/* from GID 0 */
};

struct ba_ctx {
	struct ba_side a, b;		/* device under test, its peer */
	struct ibv_device_attr dev;	/* a's limits */
	struct ibv_port_attr port;	/* a's port 1 */
	struct ibv_qp *qa, *qb;		/* a QP on each, ba_pair() */
	int arg;			/* the case's parameter */
};

struct ba_case {
	const char *name;
	void (*fn)(struct ba_ctx *c);
	int arg;
	struct ba_exp exp;
};

extern const struct ba_case ba_mr_cases[], ba_res_cases[],
	ba_modify_cases[], ba_post_cases[];
extern const size_t ba_mr_ncases, ba_res_ncases, ba_modify_ncases,
	ba_post_ncases;

/* The call under test. */
void ba_call(void);
long ba_int(long ret);
void *ba_ptr(void *p);
#define CALL_INT(x) ba_int((ba_call(), (long)(x)))
#define CALL_PTR(x) ba_ptr((ba_call(), (void *)(x)))
/* Did the call under test fail as it should? */
bool ba_refused(void);

/* A failed check after the call: reported, the case goes on. */
void ba_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define CHECK(cond, ...) \
	((cond) ? true : (ba_fail(__FILE__, __LINE__, __VA_ARGS__), false))
/* A failed setup step: reported, the case ends. */
_Noreturn void ba_setup_failed(const char *file, int line, const char *what,
			       int err);
#define REQUIRE(cond) \
	do { \
		if (!(cond)) \
			ba_setup_failed(__FILE__, __LINE__, #cond, errno); \
	} while (0)
/* "EINVAL", or the number. */
const char *ba_errname(int e);
/* The case does not apply to this device. */
_Noreturn void ba_skip(const char *why);

/* Fixture, in the child. */
void ba_open(struct ba_ctx *c, bool peer);
struct ibv_context *ba_open_ctx(bool peer);
struct ibv_qp *ba_qp(struct ba_ctx *c, struct ba_side *s, uint32_t sq,
		     uint32_t rq);
struct ibv_qp_cap ba_cap(struct ibv_qp *qp);
enum ibv_qp_state ba_state(struct ibv_qp *qp);
void ba_init_attr(struct ibv_qp_attr *a, int *mask);
void ba_rtr_attr(struct ibv_qp_attr *a, int *mask, const char *peer,
		 uint32_t dqpn);
void ba_rts_attr(struct ibv_qp_attr *a, int *mask);
/* c->qb on b, RTS towards c->qa (ba_peer_up: c->qb from RESET); then
 * c->qa from any state to RTS. */
void ba_peer_for(struct ba_ctx *c);
void ba_peer_up(struct ba_ctx *c);
void ba_up(struct ba_ctx *c);
/* Both, connected and RTS. */
void ba_pair(struct ba_ctx *c, uint32_t sq, uint32_t rq);
/* A to state s (RESET, INIT, RTR, RTS or ERR) the ordinary way. */
void ba_goto(struct ba_ctx *c, enum ibv_qp_state s);

struct ibv_sge ba_sge(void *addr, uint32_t len, uint32_t lkey);
/* n objects of size bytes ending where a PROT_NONE page begins. */
void *ba_guarded(size_t n, size_t size);
uint32_t ba_sqpi(struct ba_ctx *c, struct ibv_qp *qp);
/* Poll until n completions or ms pass; returns how many. */
int ba_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms);
/* No completion arrives on cq for a while. */
bool ba_quiet(struct ibv_cq *cq, const char *which);
bool ba_wc_is(const struct ibv_wc *wc, uint64_t id, enum ibv_wc_opcode op,
	      uint32_t len, const char *which);
/* The pair still works as if nothing bad had been posted: one SEND from
 * a, received by b, nothing else on either CQ. */
void ba_check_exchange(struct ba_ctx *c);

#endif
