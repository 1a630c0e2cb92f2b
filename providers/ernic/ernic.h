/* SPDX-License-Identifier: MIT */
/*
 * Provider core: libibverbs objects on top of ERNIC registers and DDR
 * queues. Talks to hardware only through the device access layer.
 */
#ifndef ERNIC_H
#define ERNIC_H

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ernic-pabi.h"
#include "ernic_access.h"
#include "ernic_conf.h"
#include "ernic_hw.h"
#include "ernic_devstate.h"
#include "ernic_spin.h"

#define ERNIC_MAX_QP_WR 4095		/* QDEPTH fields are 16 bits */
/* A WQE has one LADDR: more SGEs than one are gathered into (or, for a
 * READ, scattered from) the QP's staging area, ERNIC_STAGE_SIZE bytes
 * per SQ slot (ernic_sge.c). */
#define ERNIC_MAX_SGE 16
#define ERNIC_STAGE_SIZE 4096u
/* Inline data is copied into the staging slot; up to 16 B of a SEND
 * travel in SDATA. A QP that asks for neither more than one SGE nor
 * more than 16 B inline gets a 16-byte bounce per slot instead. */
#define ERNIC_MAX_INLINE 256u
#define ERNIC_MIN_INLINE ERNIC_WQE_SDATA_SIZE
#define ERNIC_MAX_CQE 65535
#define ERNIC_MAX_PD (1u << 16)
/* An ibv_cq is the provider's view over QP rings: memory is its limit. */
#define ERNIC_MAX_CQ (1u << 16)
#define ERNIC_MAX_RD_ATOM 16		/* outstanding reads (PG332 ch.2) */
#define ERNIC_RQ_ELEM_SIZE 4096u	/* one element holds a PMTU-4096 packet */
/* RQ ring depth (elements): one element per incoming SEND packet, so it
 * is sized for traffic, not for max_recv_wr. */
#define ERNIC_RQ_RING_MIN 256u
#define ERNIC_RQ_RING_MAX 4096u
#define ERNIC_MAX_WR_LEN (1u << 31)	/* IBTA message size limit */
/* QP1's SQ and RQ depth: room for a burst of connection requests (a CM
 * answers a lost one only after a retransmission, ~1 s). */
#define ERNIC_QP1_DEPTH 128u
/* How long a peer's MAC may take to resolve (modify_qp, MADs). */
#define ERNIC_NEIGH_TIMEOUT_MS 1000
/* Doorbell pool, per QP: the IP's CQ and RQ doorbells in one 64-byte
 * line, the RQ block's software word (IMMQ_CI) in the next. */
#define ERNIC_DB_STRIDE 128u
#define ERNIC_DB_RQ_OFF 32u
/* PG332 Table 3-2 error buffer: 256 entries of 256 bytes. */
#define ERNIC_ERRBUF_NUM 256u
#define ERNIC_ERRBUF_ENTRY 256u
#define ERNIC_IPKTERRQ_NUM 512u
#define ERNIC_RESPERR_DEPTH 256u
#define ERNIC_RESPERR_ENTRY 64u
#define ERNIC_DATBUF_ENTRY 4096u	/* "Each RDMA data buffer is 4 KB" */
/* XRNICADCONF base count width = CLOG2(4.096 * f_MHz); 200 MHz AXI clock. */
#define ERNIC_BASE_COUNT_WIDTH_200MHZ 10u
#define ERNIC_PD_NONE 0u		/* PD numbers start at 1 */

/* One physical ERNIC, shared by every context of this process. */
struct ernic_dev {
	struct verbs_device vdev;
	char conf_path[IBV_SYSFS_PATH_MAX + 32];

	pthread_mutex_t lock;		/* everything below */
	int open_count;
	struct ernic_conf conf;
	struct ernic_access *acc;
	/* CQs of this process whose empty polls lent their thread to the
	 * IP and that still had work outstanding when last polled
	 * (ernic_cq_lend, ernic_cq_polled): polling is over when the last
	 * of them runs out of work, not when any one does. */
	_Atomic uint32_t lent_cqs;
	struct ernic_dma errbuf, ipkterrq, resperr, datbuf, dbpool;
	struct ernic_dma qp1_sq, qp1_cq, qp1_rq;
	struct ernic_mad *mad;		/* QP1's MADs (ernic_mad.c) */
	/* QPs of this process; QP numbers, PD-table slots and PD numbers
	 * are allocated device-wide in the state file (ernic_share.c). */
	uint8_t qp_used[ERNIC_C_NUM_QP_MAX + 1];
	struct ernic_ds_handle ds;
	uint32_t ds_slot;			/* this process's */
	/* A hardware device shared through its broker (ernic_broker.h):
	 * what this process is (enum ernic_hw_role), and its side. */
	uint32_t hw_role;
	struct ernic_broker *broker;		/* ERNIC_HW_BROKER */
	struct ernic_client *client;		/* ERNIC_HW_CLIENT */
	uint32_t npd, ncq;			/* of max_pd, max_cq */

	/* MR of each PD-table slot, for lkey translation on the data path;
	 * &ernic_mr_none where there is none. Written under lock. Read with
	 * an acquire load by threads holding the sq_lock or rq_lock of the
	 * QP they post or poll on, and by nobody else: a cleared slot's MR
	 * is freed only after every QP's locks were taken once
	 * (ernic_mr_quiesce), so no lock is shared between QPs on the post
	 * path. */
	struct ernic_mr *_Atomic pdt_mr[ERNIC_PDT_ENTRIES];

	/* Interrupt thread (ernic_event.c), while the device is started.
	 * ev_lock guards ev_qp[], ipkterrq_rp and sending events; it is
	 * taken after dev->lock, never before. */
	pthread_mutex_t ev_lock;
	struct ernic_qp *ev_qp[ERNIC_C_NUM_QP_MAX + 1];
	uint32_t ipkterrq_rp;		/* next IPKTERRQ entry to read */
	uint32_t errbuf_rp;		/* next error buffer entry to count */
	pthread_t ev_thread;
	int ev_stop_fd;
	/* Open contexts, for port events (under ev_lock), and the link
	 * state last reported (ernic_port.c, interrupt thread only). */
	struct ernic_context *ev_ctxs;
	bool port_up;
	/* The device is gone and every QP in error (ernic_events_lost);
	 * cleared when it starts again. lost_why: what the interrupt thread
	 * saw, for a broker's clients (a static string, or NULL). */
	atomic_bool lost;
	const char *lost_why;
};

struct ernic_context {
	struct verbs_context ibv_ctx;
	struct ernic_dev *dev;
	/* async_fd is async_sv[0]; the provider sends
	 * ib_uverbs_async_event_desc records on async_sv[1]. */
	int async_sv[2];
	struct ernic_context *ev_next;	/* dev->ev_ctxs, under ev_lock */
	pthread_mutex_t chan_lock;	/* chans */
	struct ernic_chan *chans;	/* completion channels made here */
	uint32_t npd, ncq;		/* its share of dev's, under dev->lock */
};

struct ernic_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
	int refcnt;			/* MRs and QPs using it, under dev->lock */
};

struct ernic_mr {
	struct verbs_mr vmr;
	uint32_t slot;
	uint64_t bus;
	uint64_t iova;			/* the MR's address as keys see it */
	/* The lkey where the IP may write the buffer (the MR grants
	 * IBV_ACCESS_LOCAL_WRITE); else the key with its slot bits
	 * flipped, which no key naming this slot equals. */
	uint32_t wkey;
};

/* A PD-table slot without an MR (dev->pdt_mr): its PD is NULL, and no
 * QP's is, so no key matches it. */
extern struct ernic_mr ernic_mr_none;

struct ernic_qp;

/* What of a QP's completions an ibv_cq reports. */
enum { ERNIC_CQ_SEND = 1, ERNIC_CQ_RECV = 2 };
/* A CQ's busy bitmap has a bit per RC QP: QP n is bit n - 2. */
#define ERNIC_CQ_WORDS ((ERNIC_C_NUM_QP_MAX - ERNIC_FIRST_RC_QP + 1 + 63) / 64)

enum { ERNIC_ARM_ALL = 1, ERNIC_ARM_SOLICITED = 2 };

struct ernic_cq {
	struct verbs_cq vcq;
	struct ernic_dev *dev;		/* of its context */
	bool noncoherent;		/* the device's access has dma_sync */
	/* the device's access runs a software IP on the caller's thread
	 * (a progress op): empty polls lend it theirs (ernic_cq_lend) */
	bool lends;
	_Atomic int arm;		/* 0 or ERNIC_ARM_*: req_notify_cq */
	int ev_fd;			/* our end of its channel, or -1 */
	uint32_t events_sent;		/* under dev->ev_lock */
	int nqp;			/* QPs using it, under dev->lock */
	ernic_spinlock_t lock;	/* qps, cursor */
	/* The QPs reporting here (in one role or both), by QP number. */
	struct ernic_qp *qps[ERNIC_C_NUM_QP_MAX + 1];
	/* Which of them may have something to report, per role (send 0,
	 * receive 1): bit n is set by post_send / post_recv of QP n under
	 * its sq_lock / rq_lock, and cleared by poll_cq under the same lock
	 * once nothing is outstanding there. An empty poll looks at these
	 * words, not at every QP (ernic_cq_busy). */
	_Atomic uint64_t active[2][ERNIC_CQ_WORDS];
	_Atomic uint32_t nwords;	/* of them its QPs have needed */
	uint32_t cursor;		/* bit looked at first */
	_Atomic uint32_t quiet_polls;	/* empty polls in a row */
	/* Per role and bit as active: the doorbell words at which a look
	 * under the queue's lock last found nothing to report, or
	 * ERNIC_QUIET_NONE (ernic_quiet_set). Kept here, not in the QP, so
	 * that a spinning poll compares them without the CQ's lock
	 * (ernic_poll.c words_quiet): the CQ and the doorbell pool outlive
	 * every QP attached. */
	_Atomic uint64_t quiet[2][ERNIC_CQ_WORDS * 64];
	/* Empty polls lent their thread to the IP (ernic_cq_lend) since
	 * this CQ last ran out of work (ernic_cq_polled); counted in the
	 * device's lent_cqs while set. */
	_Atomic bool lent;
	struct ibv_wc cur;		/* ibv_cq_ex: the one being read */
};

/* Shadow of one SQ slot: what the 16-bit WQE WRID stands for. */
enum {
	ERNIC_SWQE_SIGNALED = 1 << 0,
	ERNIC_SWQE_LAST = 1 << 1,	/* last WQE of a work request */
	/* Its completion has work besides a report: a READ's data to
	 * invalidate or scatter (read_len, nsg), a bounce buffer to free. */
	ERNIC_SWQE_SLOW = 1 << 2,
};
struct ernic_swqe {
	uint64_t wr_id;
	uint64_t read_va;		/* a READ piece's destination, and */
	uint32_t read_len;		/* its length: invalidated (coherent=0) */
	uint32_t length;		/* bytes of the whole work request */
	uint8_t opcode;			/* Table 2-1 OPCODE of the request */
	uint8_t flags;
	uint8_t nsg;			/* staged READ: SGEs in qp->rd_sg */
};

/* A posted receive work request (ERNIC has no receive WQEs). */
struct ernic_rwqe {
	uint64_t wr_id;
	uint8_t *va;			/* host view of the buffer (one SGE) */
	uint32_t length;		/* bytes of all its SGEs */
	uint32_t budget;		/* RQ elements a message into it takes */
	uint32_t nsg;			/* > 1: the SGEs are in qp->rsg */
};

/* One non-empty SGE of a posted receive, translated. */
struct ernic_rsg {
	uint8_t *va;
	uint32_t len;
};

/* ernic_qp_check_fatal's state, per queue. */
#define ERNIC_FATAL_POLLS 64u		/* a power of 2 */
#define ERNIC_QUIET_NONE UINT64_MAX	/* ernic_cq.quiet: not quiet */
#define ERNIC_QUIET_POLLS 64u		/* empty polls per full look */
#define ERNIC_PMTU_LOG2_MIN 8u		/* IBV_MTU_256 */
struct ernic_fatal_watch {
	uint64_t next_ns;		/* no register read before */
	uint32_t polls;			/* calls, for the clock */
};

/* An ibv_qp_ex work request waiting for its data (wr_set_*). */
struct ernic_qx_op {
	bool pending;
	enum ibv_wr_opcode opcode;
	uint64_t wr_id;
	unsigned int flags;
	uint32_t imm;			/* IMMDT value */
	uint64_t raddr;
	uint32_t rkey;
};

struct ernic_qp {
	struct verbs_qp vqp;
	uint32_t idx;			/* ERNIC QP index = QP number */
	struct ernic_dev *dev;		/* of its context */
	struct ernic_dma sq, cq, rq;
	uint32_t sq_depth, rq_depth;	/* ring slots (QDEPTH) */
	bool sq_sig_all;
	struct ibv_qp_cap cap;
	bool noncoherent;		/* the device's access has dma_sync */
	struct ibv_qp_attr attr;	/* shadow of what modify_qp set */
	uint32_t qpconf;		/* last QPCONF written */

	/* Data path state visible without dev->lock. */
	_Atomic int dp_state;		/* enum ibv_qp_state */
	atomic_bool err;		/* QP in error: flush everything */
	atomic_bool hw_offload;		/* user logic's (ernic_offload.c) */
	/* Receives may be posted on the fast path: a coherent bus, out of
	 * RESET, not offloaded (ernic_qp_gate). Read under rq_lock. */
	atomic_bool rq_open;
	_Atomic uint64_t fatal_ns;	/* when STATQPi.FATAL was seen, or 0 */
	_Atomic uint32_t dest_qpn;
	/* The active word and bit of this QP in the CQ of each role
	 * (ERNIC_CQ_SEND - 1, ERNIC_CQ_RECV - 1), and its quiet word there,
	 * set when it is attached (ernic_cq_attach): a post marks its CQ
	 * busy, and a poll its queue quiet, without finding the CQ. */
	_Atomic uint64_t *busy_word[2];
	_Atomic uint64_t *quiet_word[2];
	uint64_t busy_bit;

	/* Send side, under sq_lock. Slots sq_ci..sq_pi-1 are posted and
	 * not yet retired; the CQ ring is read at sq_ci too (same depth,
	 * same order). */
	ernic_spinlock_t sq_lock;
	/* Staging, stage_size bytes per SQ slot: inline data and gathered
	 * SGEs the IP reads, and READ data to scatter (ernic_sge.c). */
	struct ernic_dma inl;
	uint32_t stage_size;		/* ERNIC_MIN_INLINE or _STAGE_SIZE */
	struct ibv_sge *rd_sg;		/* ERNIC_MAX_SGE per slot, or NULL */
	/* Per slot, with staging: a gathered message larger than the slot
	 * has DMA memory of its own until the slot retires, or NULL. */
	struct ernic_dma **bounce;
	struct ernic_swqe *swqe;	/* sq_depth shadows */
	uint32_t sq_pi, sq_ci;
	uint32_t sq_db;			/* SQPIi as written: sq_db <= sq_pi */
	/* max_rd_atomic below what the IP keeps outstanding: SQPIi stops
	 * before a READ that would exceed it (ernic_sq_doorbell). */
	uint32_t rd_limit;		/* 0: no limit needed */
	uint32_t rd_inflight;		/* READs rung and not completed */
	uint32_t rd_unrung;		/* READs queued past sq_db */
	uint32_t sq_hw_ci;		/* slots counted as completed */
	bool sq_flushing;		/* device done: retire by software */
	bool sq_skip;			/* drop slots up to the next LAST */
	struct ernic_fatal_watch sq_watch; /* STATQP looks while idle */
	uint32_t qx_start;		/* sq_pi at wr_start */
	int qx_err;			/* first error of the batch */
	bool qx_flush;			/* batch posted to a QP in error */
	struct ernic_qx_op qx;

	/* Receive side, under rq_lock. Receive credits (ernic_recv.c): the
	 * IP sees RQ elements, and the RX side band message credits, only
	 * for receives actually posted. */
	ernic_spinlock_t rq_lock;
	/* Set at create_qp: the receive credit word in the doorbell pool,
	 * and RQCIi as a word to store to, with the flag read after each
	 * store that asks for reg_write as well (ernic_rqci_bind). */
	volatile uint32_t *rq_credit_db;
	volatile uint32_t *rqci_reg;
	const atomic_bool *rqci_wake;
	uint32_t rqci_sink;		/* rqci_reg of a backend with none */
	struct ernic_rwqe *rwqe;	/* rwqe_depth posted receive WRs */
	struct ernic_rsg *rsg;		/* max_recv_sge per rwqe, or NULL */
	uint32_t rwqe_depth, rwqe_pi, rwqe_ci;
	uint32_t rq_ci;			/* next RQ element to read */
	uint32_t rq_done;		/* elements read since RESET (mod 2^32) */
	uint32_t rq_grant;		/* elements granted (mod 2^32); RQCI
					 * one past its last, as a slot */
	uint32_t rq_budget;		/* elements the posted receives take */
	uint32_t rq_credit;		/* receives posted since RESET */
	uint32_t immq_ci;		/* next IMMQ entry */
	uint32_t rq_ev_seen;		/* elements the event path has seen,
					 * counted as rq_done is */
	uint32_t immq_ev_wp;		/* IMMQ write pointer it last saw */
	uint32_t msg_len;		/* bytes of the SEND being received */
	uint32_t msg_pkts;		/* its elements read so far */
	bool msg_active;		/* FIRST/MIDDLE consumed, LAST pending */
	bool msg_ovfl;			/* it does not fit the receive buffer */
	struct ernic_fatal_watch rq_watch;
	/* log2 of the path MTU in bytes; before RTR the smallest (256),
	 * never too few receive credits (ernic_recv.c rwqe_budget) */
	_Atomic uint32_t pmtu_log2;

	/* Events, under dev->ev_lock. */
	uint32_t fatal_code;		/* last Table 2-4 code, 0 if none */
	uint32_t async_sent;
};

static inline struct ernic_context *to_ectx(struct ibv_context *c)
{
	return (struct ernic_context *)((char *)c -
					offsetof(struct ernic_context,
						 ibv_ctx.context));
}

static inline struct ernic_dev *to_edev(struct ibv_device *d)
{
	return (struct ernic_dev *)d;
}

static inline struct ernic_pd *to_epd(struct ibv_pd *p)
{
	return (struct ernic_pd *)p;
}

static inline struct ernic_mr *to_emr(struct verbs_mr *m)
{
	return (struct ernic_mr *)m;
}

static inline struct ernic_cq *to_ecq(struct ibv_cq *c)
{
	return (struct ernic_cq *)c;
}

static inline struct ernic_qp *to_eqp(struct ibv_qp *q)
{
	return (struct ernic_qp *)q;
}

static inline struct ernic_qp *qx_to_eqp(struct ibv_qp_ex *q)
{
	return (struct ernic_qp *)q;
}

static inline struct ernic_dev *ctx_dev(struct ibv_context *c)
{
	return to_ectx(c)->dev;
}

extern const struct verbs_device_ops ernic_dev_ops;

/* ernic_global.c: PG332 ch.6 "ERNIC Global Configuration", "QP1 Creation" */
int ernic_dev_start(struct ernic_dev *dev, char *err, size_t errlen);
void ernic_dev_stop(struct ernic_dev *dev);
/* Free a DMA block if allocated and clear its descriptor. */
void ernic_dma_put(struct ernic_dev *dev, struct ernic_dma *dma);

/* ernic_query.c */
int ernic_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);
int ernic_query_port(struct ibv_context *context, uint8_t port,
		     struct ibv_port_attr *attr);
/* Largest path MTU the netdev carries; IBV_MTU_256 when it is down. */
enum ibv_mtu ernic_active_mtu(struct ernic_dev *dev);

/* ernic_mr.c: PDs and PG332 "Memory Registration" */
struct ibv_pd *ernic_alloc_pd(struct ibv_context *context);
int ernic_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *ernic_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			    uint64_t hca_va, int access);
int ernic_dereg_mr(struct verbs_mr *vmr);
/* A context closes with MRs left: their PD-table slots go back (the
 * kernel's uverbs does this for kernel providers). dev->lock held. */
void ernic_mr_reclaim(struct ernic_dev *dev, struct ibv_context *ctx);

/* ernic_share.c: device-wide allocation through the state file, for
 * the whole time this process has the device started. Callers hold
 * dev->lock. The getters return 0 or errno (ENOMEM: none left). */
int ernic_share_start(struct ernic_dev *dev, char *err, size_t errlen);
void ernic_share_stop(struct ernic_dev *dev);
int ernic_share_qp_get(struct ernic_dev *dev, uint32_t *idx);
void ernic_share_qp_put(struct ernic_dev *dev, uint32_t idx);
int ernic_share_pdt_get(struct ernic_dev *dev, uint32_t *slot, uint8_t *gen);
void ernic_share_pdt_put(struct ernic_dev *dev, uint32_t slot);
uint32_t ernic_share_pd_number(struct ernic_dev *dev);
/* Disable in the IP what the process in slot owns — its QPs, its
 * PD-table slots — before the state file frees them (an
 * ernic_ds_dead_fn; arg is the dev). */
void ernic_share_hw_dead(void *arg, struct ernic_ds *ds, uint32_t slot);
/* The state file's lock for a change made in the IP too. */
int ernic_share_lock(struct ernic_dev *dev);
void ernic_share_unlock(struct ernic_dev *dev);
/* CM REQs for service_id come to this process (claim) or stop coming:
 * recorded in the state file (who listens to what), steered by the
 * access layer where processes share a wire. 0, EADDRINUSE (another
 * process listens to it), ENOSPC, ENOENT (release of no claim). */
int ernic_share_service(struct ernic_dev *dev, uint64_t service_id,
			bool claim);

/* ernic_cq.c */
struct ibv_cq *ernic_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
struct ibv_cq_ex *ernic_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr);
int ernic_destroy_cq(struct ibv_cq *cq);

/* ernic_cqex.c: the ibv_cq_ex polling interface over ernic_cq_poll. */
#define ERNIC_CQ_EX_WC_FLAGS IBV_WC_STANDARD_FLAGS
void ernic_cq_ex_init(struct ernic_cq *cq, uint64_t wc_flags);

/* ernic_qp.c: PG332 "RC QP Creation", "QP Deletion" */
struct ibv_qp *ernic_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *ernic_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr);
int ernic_destroy_qp(struct ibv_qp *qp);
/* The same for QPs: reset in the IP, index and rings freed. */
void ernic_qp_reclaim(struct ernic_dev *dev, struct ibv_context *ctx);
int ernic_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		   struct ibv_qp_init_attr *init_attr);

/* ernic_modify_qp.c: the QP state machine */
int ernic_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
/* Take QP idx out of the IP, without freeing memory: PG332's "QP Fatal
 * Recovery" (clearing steps if not done yet, then reinitializing steps
 * 1-5) for a QP the IP made FATAL, "QP Deletion" steps 1-5 for any
 * other. 0, or ETIMEDOUT or EIO (logged) when the IP never got through
 * a step of the recovery: the QP is left as that step found it. Caller
 * holds dev->lock. */
int ernic_qp_hw_reset(struct ernic_dev *dev, uint32_t idx);
/* PG332 "QP Fatal Recovery", steps to clear traffic 4-8, for QP idx if
 * the IP made it FATAL and it is still enabled: the error state. 0 (also
 * when there is nothing to do), or ETIMEDOUT (logged). Caller holds
 * dev->lock. */
int ernic_qp_fatal_clear(struct ernic_dev *dev, uint32_t idx);
/* Zero QP i's doorbell slot, in DDR too. */
void ernic_qp_db_clear(struct ernic_dev *dev, uint32_t idx);
/* After QP EN is set: wait, bounded, until STATQPi.FATAL reads clear. */
void ernic_qp_hw_enabled(struct ernic_dev *dev, uint32_t idx);
/* Reset, without waiting, every RC QP a previous user of the IP left
 * configured (a process that exited without destroying its QPs: the IP
 * outlives it). Caller holds dev->lock. */
void ernic_qp_hw_reclaim(struct ernic_dev *dev);
/* QP Deletion steps 3-5 for QP idx at once, without waiting for it to
 * drain: its process is gone. Caller holds the state file's lock. */
void ernic_qp_hw_clear(struct ernic_dev *dev, uint32_t idx);
/* No key reaches PD-table slot s any more. */
void ernic_pdt_clear(struct ernic_dev *dev, uint32_t s);

/*
 * verbs_qp.comp_mask bit saying qp_ex is valid (rdma-core driver.h
 * VERBS_QP_EX); ibv_qp_to_qp_ex() tests it.
 */
#define ERNIC_VERBS_QP_EX (1u << 1)

/* ernic_mr.c: lkey + address -> bus address and host pointer. Returns 0
 * or EINVAL (unknown key, other PD, range outside the MR, or missing
 * IBV_ACCESS_LOCAL_WRITE when need_write). pd is a QP's (not NULL:
 * ernic_mr_none). Caller holds the sq_lock or rq_lock of a QP of the
 * device (dev->pdt_mr). */
static inline int ernic_mr_translate(struct ernic_dev *dev,
				     struct ibv_pd *pd, uint32_t lkey,
				     uint64_t addr, uint64_t len,
				     bool need_write, uint64_t *bus,
				     uint8_t **va)
{
	const struct ernic_mr *mr = atomic_load_explicit(
		&dev->pdt_mr[ERNIC_FIELD_GET(ERNIC_KEY_SLOT, lkey)],
		memory_order_acquire);
	uint64_t off, end;

	/* The whole key matches: slot, generation and zero reserved bits.
	 * Where the IP writes the buffer (READ responses, received data),
	 * wkey: only an MR with local write has its key there. */
	if ((need_write ? mr->wkey : mr->vmr.ibv_mr.lkey) != lkey ||
	    mr->vmr.ibv_mr.pd != pd)
		return EINVAL;
	/* One test for off <= length and len <= length - off: the sum must
	 * not carry. Below iova, addr - iova wraps past any length (reg_mr
	 * refuses a range that wraps), and the sum with it, or it carries. */
	off = addr - mr->iova;
	if (__builtin_add_overflow(off, len, &end) ||
	    end > mr->vmr.ibv_mr.length)
		return EINVAL;
	if (bus)
		*bus = mr->bus + off;
	if (va)
		*va = (uint8_t *)mr->vmr.ibv_mr.addr + off;
	return 0;
}

/* One work request, from ibv_send_wr or from the ibv_qp_ex calls. */
struct ernic_wr {
	uint64_t wr_id;
	enum ibv_wr_opcode opcode;
	unsigned int flags;
	uint32_t imm;			/* IMMDT value, host order */
	uint64_t raddr;
	uint32_t rkey;
	const struct ibv_sge *sge;	/* data, or inline data when INLINE */
	size_t num_sge;
	const struct ibv_data_buf *buf;	/* inline data (qp_ex), or NULL */
	size_t num_buf;
};

/* ernic_post.c: send queue */
/* Check one work request and queue its WQEs; on error nothing is
 * queued. Caller holds sq_lock. */
int ernic_post_one(struct ernic_dev *dev, struct ernic_qp *qp,
		   const struct ernic_wr *w, bool flush);
/* Where posting goes: the IP (RTS, 0), the flush path (error, 0 and
 * *flush), or nowhere (IBTA: RESET, INIT and RTR refuse send work
 * requests: EINVAL). */
static inline int ernic_sq_state(struct ernic_qp *qp, bool *flush)
{
	int st = atomic_load(&qp->dp_state);
	bool err = atomic_load(&qp->err);

	if (st == IBV_QPS_RTS && !err) {	/* the common case first */
		*flush = false;
		return 0;
	}
	*flush = err || st == IBV_QPS_ERR || st == IBV_QPS_SQE;
	return *flush ? 0 : EINVAL;
}
int ernic_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
/* Ring SQPIi for what is posted, as far as max_rd_atomic allows (and
 * again once READs complete). Caller holds sq_lock. */
void ernic_sq_doorbell(struct ernic_dev *dev, struct ernic_qp *qp);
/* IBV_QP_EX_WITH_* the qp_ex API supports */
#define ERNIC_QP_EX_SEND_OPS \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_SEND_WITH_INV)
void ernic_qp_ex_init(struct ernic_qp *qp, uint64_t send_ops_flags);

/* ernic_recv.c: posted receives and the RX side band */
int ernic_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
/* Completions of QP's receive side, at most max. Caller holds rq_lock. */
int ernic_rq_poll(struct ernic_dev *dev, struct ernic_qp *qp,
		  struct ibv_wc *wc, int max);
/* A fresh RQ for RESET -> INIT: nothing granted to the IP (RQCIi says
 * full) until receives are posted. Caller holds dev->lock; the QP is
 * disabled. */
void ernic_rq_reset_hw(struct ernic_dev *dev, struct ernic_qp *qp);
/* At create_qp, its index known: the QP's RQCIi word and wake flag. */
void ernic_rqci_bind(struct ernic_access *acc, struct ernic_qp *qp);

/* ernic_qp.c: data-path side of a state change (modify_qp, dev->lock). */
void ernic_qp_dp_state(struct ernic_qp *qp, enum ibv_qp_state next,
		       const struct ibv_qp_attr *attr);
/* rq_open from noncoherent, dp_state and hw_offload, after a change.
 * Caller holds dev->lock (as their writers do). */
void ernic_qp_gate(struct ernic_qp *qp);

/* ernic_mad.c: QP1, MADs for the connection manager */
int ernic_mad_start(struct ernic_dev *dev, char *err, size_t errlen);
void ernic_mad_stop(struct ernic_dev *dev);
/* Interrupt thread, INTSTS "incoming MAD": hand new MADs to agents. */
void ernic_mad_service(struct ernic_dev *dev);
/* One MAD to the agent of its class in this process. */
struct ernicdv_mad_addr;
void ernic_mad_deliver(struct ernic_dev *dev,
		       const struct ernicdv_mad_addr *from, const uint8_t *mad);
/* Send one MAD from this process's QP1 (not a broker's client). */
struct ernic_mad_peer;
int ernic_mad_tx(struct ernic_dev *dev, const struct ernic_mad_peer *dst,
		 const void *mad);
/* Send one CNP from this process's QP1 (ernic_cnp.c). */
int ernic_cnp_tx(struct ernic_dev *dev, const struct ernic_mad_peer *dst);
/* ernic_cnp.c: the CNP scheduling interrupt (INTSTS[8]). Read, before
 * INTSTS[8] is cleared (which clears them), the QPs that saw ECN-marked
 * packets; then send each a CNP through QP1. */
void ernic_cnp_pending(struct ernic_dev *dev,
		       uint32_t words[ERNIC_CNPSCHD_WORDS]);
void ernic_cnp_send(struct ernic_dev *dev,
		    const uint32_t words[ERNIC_CNPSCHD_WORDS]);

/* ernic_event.c: interrupts, CQ and async events, completion channels */
int ernic_events_start(struct ernic_dev *dev, char *err, size_t errlen);
void ernic_events_stop(struct ernic_dev *dev);
/* QP qpn went FATAL with Table 2-4 code (the IP's error queue, or a
 * broker relaying it): IBV_EVENT_QP_FATAL and both CQs fire. */
void ernic_events_fatal(struct ernic_dev *dev, uint32_t qpn, uint32_t code);
/* A broker's client, kicked: service our QPs' interrupt status bits
 * (read and clear our own bits of CQINTSTSn / RQINTSTSn). */
void ernic_events_kicked(struct ernic_dev *dev);
/* QP idx is now qp (or NULL) for the interrupt handler. */
void ernic_events_qp(struct ernic_dev *dev, uint32_t idx, struct ernic_qp *qp);
/* Every QP's sq_lock and rq_lock taken and let go once: whoever held
 * one before the call is done with it. Caller may hold dev->lock, not
 * ev_lock or a QP's lock. */
void ernic_qps_quiesce(struct ernic_dev *dev);
/* The QP went to ERR: its armed CQs fire (flush completions are due). */
void ernic_events_qp_flushed(struct ernic_dev *dev, struct ernic_qp *qp);
/* The device is gone (its registers read all-ones, its driver wants it
 * back, or a client's broker went away). As the kernel reports a device
 * that is gone, every context hears IBV_EVENT_DEVICE_FATAL; every QP goes
 * to error, so that what was posted completes flushed in poll_cq and
 * armed CQs wake to find it; a broker ends its service. Caller holds
 * neither dev->lock nor ev_lock. */
void ernic_events_lost(struct ernic_dev *dev);
/* Before freeing: drop unread events, wait for the read ones' acks. */
void ernic_events_qp_gone(struct ernic_dev *dev, struct ernic_qp *qp);
void ernic_events_cq_gone(struct ernic_dev *dev, struct ernic_cq *cq);
/* QPCONF[3:2] for qp: interrupts only where a channel can take them. */
uint32_t ernic_qp_int_bits(const struct ernic_qp *qp);
int ernic_req_notify_cq(struct ibv_cq *cq, int solicited_only);
struct ibv_comp_channel *ernic_comp_channel_create(struct ibv_context *ctx);
/* Give cq (of ctx) its own end of channel ch, if any. 0 or errno. */
int ernic_comp_channel_attach(struct ernic_cq *cq, struct ibv_context *ctx,
			      struct ibv_comp_channel *ch);
void ernic_comp_channels_free(struct ernic_context *ctx);
/* ctx joins / leaves the contexts that get port events. */
void ernic_events_ctx(struct ernic_dev *dev, struct ernic_context *ctx,
		      bool open);
/* A port event for every open context. */
void ernic_events_port(struct ernic_dev *dev, enum ibv_event_type type);

/* ernic_port.c: the netdev's link as the port's state. The socket to
 * poll (or -1: no netdev), and what to do when it is readable. */
int ernic_port_watch_open(struct ernic_dev *dev);
void ernic_port_changed(struct ernic_dev *dev, int fd);
/* The Ethernet address of dst as seen from the device's address (route,
 * then neighbour table, waiting up to ERNIC_NEIGH_TIMEOUT_MS). 0, or
 * EHOSTUNREACH logged with who ("modify_qp", "MAD") and the reason. */
struct ernic_ip;
int ernic_peer_mac(struct ernic_dev *dev, const struct ernic_ip *dst,
		   uint8_t mac[6], const char *who);

/* ernic_recv.c, interrupt thread: drain the packets of a message still
 * arriving, then say whether a completion waits for poll_cq and whether
 * a waiting message is solicited. Caller holds ev_lock. */
bool ernic_rq_service(struct ernic_dev *dev, struct ernic_qp *qp,
		      bool *solicited);

/* Provider log on stderr: device errors always; with VERBS_LOG_LEVEL
 * (rdma-core's variable and levels, read once at load) at
 * ERNIC_LOG_DEBUG or more, also why a verb was refused. */
enum { ERNIC_LOG_ERR = 1, ERNIC_LOG_WARN, ERNIC_LOG_INFO, ERNIC_LOG_DEBUG };
extern int ernic_log_level;
void ernic_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define ernic_dbg(...)                                  \
	do {                                            \
		if (ernic_log_level >= ERNIC_LOG_DEBUG) \
			ernic_log(__VA_ARGS__);         \
	} while (0)
/* A verb refuses its input: log why (debug level), return err. */
int ernic_refuse(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* EIO for a verb that needs the IP once the device is gone (the
 * kernel's answer on a disassociated device); 0 while it is there. */
static inline int ernic_lost_refuse(struct ernic_dev *dev, const char *verb)
{
	if (!atomic_load_explicit(&dev->lost, memory_order_relaxed))
		return 0;
	return ernic_refuse(EIO, "%s: the device is gone", verb);
}

/* EPERM for a post on a QP handed to user logic (ernic_offload.c). */
static inline int ernic_offload_refuse(const struct ernic_qp *qp,
				       const char *verb)
{
	return ernic_refuse(EPERM, "%s: QP %u: its doorbells belong to user "
			    "logic (ernicdv_qp_hw_offload): refused", verb,
			    qp->idx);
}

/* ernic_sge.c: staging for gathered and scattered SGEs. */
/* The ring slot after i, without a division. */
static inline uint32_t ernic_ring_next(uint32_t i, uint32_t depth)
{
	return i + 1 == depth ? 0 : i + 1;
}

/* Slots from a forward to b in a ring of depth slots (a, b < depth). */
static inline uint32_t ernic_ring_dist(uint32_t a, uint32_t b, uint32_t depth)
{
	return b >= a ? b - a : b + depth - a;
}

static inline uint8_t *ernic_stage_va(const struct ernic_qp *qp,
				      uint32_t slot)
{
	return (uint8_t *)qp->inl.va + (size_t)slot * qp->stage_size;
}

static inline uint64_t ernic_stage_bus(const struct ernic_qp *qp,
				       uint32_t slot)
{
	return qp->inl.bus + (uint64_t)slot * qp->stage_size;
}

/* A bounce buffer of len bytes for a gathered message larger than the
 * staging slot, or NULL (ENOMEM, logged). */
struct ernic_dma *ernic_bounce_get(struct ernic_dev *dev, struct ernic_qp *qp,
				   uint64_t len);
/* Free the bounce of SQ slots [from, to), if any. Caller holds sq_lock. */
void ernic_bounce_put(struct ernic_dev *dev, struct ernic_qp *qp,
		      uint32_t from, uint32_t to);
/* EINVAL for SGE k, logged. */
int ernic_sge_refuse(const struct ernic_qp *qp, const char *verb,
		     uint64_t wr_id, size_t k, const struct ibv_sge *s,
		     bool need_write);
/* Copy the non-empty SGEs (already checked) into dst. Caller holds the
 * QP's queue lock (ernic_mr_translate). */
void ernic_sge_gather(struct ernic_dev *dev, struct ibv_pd *pd,
		      const struct ibv_sge *sge, size_t n, uint8_t *dst);
/* Check every non-empty SGE of a work request (need_write: the IP
 * writes them); their sum in *sum, how many in *nonempty. 0 or EINVAL
 * (logged with verb and the SGE's index). Caller holds the QP's queue
 * lock (ernic_mr_translate). */
int ernic_sge_check(struct ernic_dev *dev, struct ernic_qp *qp,
		    const char *verb, uint64_t wr_id,
		    const struct ibv_sge *sge, size_t n, bool need_write,
		    uint64_t *sum, size_t *nonempty);
/* A staged READ completed: its data goes from the slot to its SGEs.
 * IBV_WC_SUCCESS, or IBV_WC_LOC_PROT_ERR when an MR has gone since the
 * post. Caller holds sq_lock. */
enum ibv_wc_status ernic_read_scatter(struct ernic_dev *dev,
				      struct ernic_qp *qp, uint32_t slot);
/* len received bytes at message offset off go to the SGEs of receive r
 * (off + len within r->length). */
void ernic_recv_scatter(const struct ernic_qp *qp, uint32_t ri,
			uint32_t off, const uint8_t *src, uint32_t len);

#include "ernic_db.h"

#endif
