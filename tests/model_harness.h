/* SPDX-License-Identifier: MIT */
/*
 * The ERNIC model on a test bench: one model instance driven by hand
 * (ernic_model_start_manual: no thread, no socket, a clock of our own),
 * its registers programmed the way the provider programs them, a remote
 * peer that hand-crafts packets, and every packet the model sends kept
 * for inspection. Used by the model's unit tests and by the fuzz target
 * over its receive path.
 *
 * Every buffer the IP may touch (queues, doorbells, error buffers, MRs)
 * sits between PROT_NONE guard pages with a canary pattern in the slack
 * around it, so a write past any of them crashes at once or shows in
 * mh_check_canaries(). Functions that cannot go on print why and abort:
 * a bench that is not set up right must not look like a passing test.
 */
#ifndef MODEL_HARNESS_H
#define MODEL_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ernic_hw.h"
#include "roce_pkt.h"

struct ernic_model;

#define MH_MAX_QP 8u
#define MH_MAX_MR 8u
#define MH_MAX_TX 4096u		/* packets kept: the latest ones */
#define MH_PEER_QPN 0x11u	/* QP i's peer is MH_PEER_QPN + i - 2 */
#define MH_RQ_ELEM 4096u
#define MH_SQ_DEPTH 64u
#define MH_PSN_SPAN (1u << 16)	/* PSNs tracked per QP for the oracle */

/* A buffer between guard pages; [va, va + len) is the usable part. */
struct mh_buf {
	uint8_t *map;		/* whole mapping, guards included */
	size_t map_len;
	uint8_t *va;
	size_t len;
	uint64_t bus;
};

struct mh_qp {
	uint32_t idx;
	bool up;
	uint32_t sq_depth, rq_depth, pmtu;
	struct mh_buf sq, cq, rq, db;	/* db: CQ doorbell +0, RQ +32 */
	struct mh_buf tx;		/* QP1: the frames its WQEs name */
	uint32_t sq_pi;			/* next SQ slot to post */
	uint32_t cq_ci;			/* CQEs read so far */
	uint32_t rq_ci, immq_ci;	/* RQ elements / IMMQ entries read */
	uint32_t credit;		/* receive credits given */
	uint32_t first_psn;		/* SQPSN */
	uint32_t peer_qpn;
	/* The oracle: what each posted WQE (by SQ slot) was and which PSNs
	 * it takes, and which request PSNs the model has sent (bit k: PSN
	 * first_psn + k). A WQE may complete with success only once all
	 * its packets (a READ: its request) have left. */
	struct ernic_wqe posted[MH_SQ_DEPTH];
	uint32_t wqe_psn[MH_SQ_DEPTH], wqe_npkts[MH_SQ_DEPTH];
	uint32_t next_psn;
	uint8_t *sent;			/* MH_PSN_SPAN bits */
};

struct mh_mr {
	struct mh_buf buf;
	bool lazy;			/* mh_mr_lazy: no fill, no canaries */
	uint32_t key;
	uint64_t iova;
};

struct mh_pkt {
	struct roce_l3 l3;
	size_t len;
	uint8_t b[ROCE_MAX_TRANSPORT];
};

struct mh {
	struct ernic_model *m;
	struct model_wire *wire;	/* the model's tap port */
	uint64_t now;			/* the model's clock, ns */
	struct roce_l3 from_peer;	/* envelope of packets to the model */
	struct mh_buf errbuf, ipkterrq;
	struct mh_qp qp[MH_MAX_QP + 2];
	struct mh_mr mr[MH_MAX_MR];
	uint32_t nmr;
	struct mh_pkt *tx;		/* what the model sent */
	size_t ntx, tx_cap;
	size_t tx_seen;			/* mh_tx_next cursor */
	uint32_t passes;		/* engine passes in the last mh_run */
};

/* A model with C_NUM_QP = MH_MAX_QP + 1 on 192.0.2.1, its peer at
 * 192.0.2.2, enabled (XRNICCONF) with error buffers. */
void mh_init(struct mh *h);
void mh_fini(struct mh *h);

/* RC QP idx (2..MH_MAX_QP+1) connected to MH_PEER_QPN at the peer, in
 * RTS: PMTU pmtu bytes, our first PSN sq_psn, the peer's rq_psn; timeout
 * and retry limits as in TIMEOUTCONF (timeout 0 = none). */
struct mh_qp *mh_qp_up(struct mh *h, uint32_t idx, uint32_t pmtu,
		       uint32_t sq_psn, uint32_t rq_psn, uint32_t timeout,
		       uint32_t retry_cnt, uint32_t rnr_retry);

/* Forget QP q on the bench side (its buffers freed, its registers left
 * as they are), so that mh_qp_up may bring it up again. */
void mh_qp_forget(struct mh *h, struct mh_qp *q);

/* An MR of len bytes in PD 1 (QPs are in PD 1), filled with fill;
 * access as PG332 ACCESSDESC (ERNIC_ACCESS_*); remote=false: BUFRKEY 0. */
struct mh_mr *mh_mr(struct mh *h, size_t len, uint32_t access, bool remote,
		    uint8_t fill);

/* A huge MR (gigabytes) in lazily mapped memory that reads as zeros and
 * is only paid for where the model touches it; remote access. */
struct mh_mr *mh_mr_lazy(struct mh *h, uint64_t len, uint32_t access);

/* Post one WQE (WRID = its slot) and ring SQPI. Returns the slot. */
uint32_t mh_post(struct mh *h, struct mh_qp *q, uint8_t opcode,
		 uint64_t laddr, uint32_t len, uint64_t raddr, uint32_t rkey,
		 uint32_t imm);
/* Give the model n more receive credits (the provider's post_recv). */
void mh_credit(struct mh *h, struct mh_qp *q, uint32_t n);
/* Release every RQ element and IMMQ entry the model has filled (the
 * provider's poll), through RQCIi and IMMQ_CI. */
void mh_rq_drain(struct mh *h, struct mh_qp *q);
/* Software copies out the oldest RQ element only. */
void mh_rq_drain_one(struct mh *h, struct mh_qp *q);

/* Run the engine until it has nothing left to do now; aborts if it is
 * still busy after a bound of passes (a livelock). */
void mh_run(struct mh *h);
/* Move the clock on by ns and run (timers fire). */
void mh_advance(struct mh *h, uint64_t ns);

/* Hand the model a packet from the peer: built with roce_build under the
 * peer's envelope (so the ICRC is good), p->dqpn/pkey defaulted when 0,
 * then mh_run. */
void mh_rx(struct mh *h, struct roce_pkt *p);
/* The same, queued in the tap port without running the engine: the
 * next mh_run receives what was queued in one batch, as from a socket. */
void mh_rx_queue(struct mh *h, struct roce_pkt *p);
/* Raw transport bytes from the peer, ICRC checked or not. */
void mh_rx_raw(struct mh *h, const uint8_t *tp, size_t len, bool check_icrc);

/* The next packet the model sent since the last call, parsed (aborts if
 * it does not parse or its ICRC is wrong); false when there is none. */
bool mh_tx_next(struct mh *h, struct roce_pkt *p);
/* Forget what was sent so far. */
void mh_tx_clear(struct mh *h);

/* CQEs the model wrote for q since the last call, oldest first, up to
 * max; returns how many. Aborts if one breaks the oracle: out of SQ
 * order, or success for a WQE whose packets were not all sent. */
uint32_t mh_cqes(struct mh *h, struct mh_qp *q, uint32_t *cqe, uint32_t max);
/* RQ elements written and not yet drained by mh_rq_drain. */
uint32_t mh_rq_pending(struct mh *h, const struct mh_qp *q);

uint32_t mh_reg(struct mh *h, uint32_t off);
uint32_t mh_qreg(struct mh *h, const struct mh_qp *q, uint32_t reg);
bool mh_fatal(struct mh *h, const struct mh_qp *q);
/* Error-buffer entries (dropped packets) written so far. */
uint32_t mh_errbuf_count(struct mh *h);
/* Syndrome of error-buffer entry k (0-based, oldest first). */
uint32_t mh_errbuf_syndrome(struct mh *h, uint32_t k);

/* Incoming packet error status entries (QP fatal events) so far, and
 * the Table 2-4 code and QP of entry k. */
uint32_t mh_errsts_count(struct mh *h);
uint32_t mh_errsts(struct mh *h, uint32_t k, uint32_t *qp);

/* QP1 as the provider programs it (8-deep queues, RQ elements of
 * ERNIC_QP1_BUF_SIZE), enabled. */
struct mh_qp *mh_qp1_up(struct mh *h);
/* Post one QP1 WQE (opcode as given) naming a copy of frame; ring SQPI,
 * run. Returns its slot; mh_qp1_cqe(slot) is its CQE once written. */
uint32_t mh_qp1_send(struct mh *h, const uint8_t *frame, uint32_t len,
		     uint8_t opcode);
uint32_t mh_qp1_cqe(struct mh *h, uint32_t slot);
/* The oldest frame QP1 stored (copied to frame, its length returned, the
 * element freed through RQCI), or 0 when there is none. */
uint32_t mh_qp1_recv(struct mh *h, uint8_t *frame, size_t cap);

/* Abort unless every canary around every buffer is intact. */
void mh_check_canaries(struct mh *h);

#endif
