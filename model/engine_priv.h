/* SPDX-License-Identifier: MIT */
/*
 * The ERNIC model's queue engine: QP manager, WQE processor, response
 * handler and RX packet handler of PG332 ch.2, run by one thread per
 * model. Internal to model/.
 *
 * Locking: `eng->lock` guards all engine state and the port's send
 * queue; the engine thread holds it while it works and drops it to
 * sleep. An SQ doorbell rung while the thread sleeps sends from the
 * ringing thread under the lock (engine_thread.c, tx_inline); other
 * doorbells only set a dirty bit and wake the thread. QPCONFi writes
 * take the lock so that a QP disabled by software is never touched by
 * the engine afterwards (PG332 "QP Deletion").
 *
 * Packets are queued (eng_send_pkt, model_wire_queue) and leave at
 * model_wire_flush. Whoever queues packets flushes them before it is
 * done with the lock, so none waits for another thread: eng_run_once
 * after its RX loop and at the end of its pass (before the thread may
 * sleep), tx_inline before it unlocks, ernic_model_rx.
 */
#ifndef ENGINE_PRIV_H
#define ENGINE_PRIV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine_hndshk.h"
#include "ernic_conf.h"
#include "model_priv.h"
#include "model_wire.h"
#include "roce_pkt.h"

/* PG332: up to 16 outstanding transactions (WQEs) per QP. */
#define ENG_OSQ_MAX 16u
/* Outstanding WQEs of a QP once a CNP came (PG332 RX path). */
#define ENG_OSQ_CNP 8u
/* Outstanding read requests a responder serves per QP (ch.2). */
#define ENG_RDQ_MAX 16u
/* Queued READ answers: up to ENG_RDQ_MAX new requests and as many
 * repeats (a repeat's answer does not take a new request's place). */
#define ENG_RDQ_CAP (2 * ENG_RDQ_MAX)
/* Unacknowledged packets in flight per QP before the WQE processor waits
 * (keeps bursts inside the receiver's socket buffer). */
#define ENG_TX_WINDOW 256u
/* Unacknowledged packets in flight for the whole device (and READ
 * responses asked for): many QPs' windows together would overrun the
 * receiver's socket buffer (a loss each QP repairs by resending its
 * whole window at once, until retries run out). */
#define ENG_DEV_WINDOW 1024u
/* Ask for an ACK at least this often inside a long message. */
#define ENG_ACKREQ_EVERY 32u
/* How long the responder may hold back a coalesced ACK: 16 ticks of
 * the 4.096 us IBTA time base. */
#define ENG_ACK_DELAY_NS (16u * 4096u)
/* How long a request that found its RQ full waits for space before the
 * RNR NAK, and how many QPs may have one waiting at a time. A message
 * with a receive posted for it waits longer (software is only behind
 * in copying it out): up to ENG_RX_DRAIN_NS, but never more than a
 * quarter of the QP's own transport timeout, which stands in for the
 * requester's. */
#define ENG_RX_HOLD_NS 2000000u
#define ENG_RX_DRAIN_NS 16000000u
#define ENG_HOLD_MAX 4u
/* How long software's RQCIi stores stay watched after the last hold
 * ended (struct eng, rqci_watch). */
#define ENG_WATCH_LINGER_NS 10000000u
/* QPs whose ACK may wait for the end of a receive batch at once; more
 * are answered at once. */
#define ENG_OWED_MAX 64u
/* Requests of one QP in a receive batch after which it is ACKed at once,
 * before the batch ends: half the IP's 16 outstanding requests, so that
 * a requester at its limit sends again while the rest is taken. */
#define ENG_ACK_BATCH 8u
/* How long a ping-pong QP's ACK waits for the reply (eng_acks_late). */
#define ENG_ACK_REPLY_NS 50000u
/* A thread timer further away than this is not moved later or off by a
 * poll's pass (eng_timer_retune): it may fire early, for one pass. */
#define ENG_TIMER_LAZY_NS 2000000u
/* Packets one QP may send per turn, so that QPs share the port. */
#define ENG_TX_BUDGET 64u
/* 64-bit words of a per-QP bitmap (QPs 0..ERNIC_C_NUM_QP_MAX) */
#define ENG_QP_WORDS ((ERNIC_C_NUM_QP_MAX + 64) / 64)

/* One fetched WQE: in the outstanding queue until acknowledged. */
struct eng_wqe {
	struct ernic_wqe w;
	uint32_t slot;		/* SQ index it came from */
	uint32_t first_psn;
	uint32_t npkts;		/* PSNs it uses (READ: response packets) */
	uint32_t sent;		/* packets sent in the current attempt */
	uint32_t rd_got;	/* READ: response packets received */
	/* model_wire_tx_gen + 1 when a packet of it was last queued with
	 * its payload left in its buffer (eng_tx_payload), 0: never */
	uint64_t lent_gen;
};

/* A read request the responder is answering. */
struct eng_rdjob {
	uint64_t bus;		/* source of the data */
	uint32_t len;
	uint32_t first_psn;
	uint32_t npkts;
	uint32_t sent;
	bool again;		/* answers a repeated request */
};

/* A read request the responder accepted, as the requester sent it: a
 * duplicate is answered only if it repeats one of these (IBTA 9.9.2.1),
 * so a stale request of an earlier connection reads nothing. */
struct eng_rdhist {
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
	uint32_t first_psn;
	uint32_t npkts;
};

struct eng_qp {
	bool en;		/* QPCONF.QP_EN as the engine last saw it */
	bool fatal;
	uint8_t recover;	/* under recovery: ENG_RECOVER_* */
	bool cnp_cut;		/* a CNP came: ENG_OSQ_CNP outstanding */

	/* requester (QP manager, WQE processor, response handler) */
	bool psn_loaded;	/* SQPSN read since enable */
	uint32_t sq_fetch;	/* next SQ slot to fetch */
	uint32_t cq_pi;		/* completions written (CQ ring index) */
	uint32_t npsn;		/* PSN of the next new WQE */
	uint32_t una;		/* oldest PSN not yet acknowledged */
	uint32_t base;		/* the windows' start: una, or while a retry
				 * sends again what was acknowledged, the
				 * PSN before which the peer is known to
				 * have taken the retry's packets (never
				 * after una) */
	uint32_t nxt;		/* PSN after the highest one sent (a READ
				 * takes its responses' PSNs when sent):
				 * responses at or past it are invalid */
	struct eng_wqe osq[ENG_OSQ_MAX];
	uint32_t osq_head, osq_n;	/* ring, head = oldest */
	uint32_t tx_cur;	/* osq offset of the WQE being sent */
	uint64_t rto_at;	/* retransmit timer, 0 = off (ns) */
	uint64_t rnr_at;	/* RNR wait ends (ns), 0 = none */
	uint32_t retries, rnr_retries;
	uint32_t retry_psn;	/* first PSN the last rewind sends again */
	bool rd_resync;		/* READ rewound: drop stale responses */

	/* responder (RX packet handler) */
	uint32_t epsn;		/* next expected request PSN */
	uint32_t msn;
	uint8_t last_op;	/* last accepted request opcode */
	bool nak_sent;		/* a NAK for epsn is out: stay quiet */
	uint64_t wr_va;		/* current incoming WRITE */
	uint64_t wr_bus;
	uint32_t wr_left, wr_len;
	uint32_t send_len;	/* current incoming SEND, bytes so far */
	struct eng_rdjob rdq[ENG_RDQ_CAP];
	uint32_t rdq_head, rdq_n;	/* ring of READs to answer */
	struct eng_rdhist rdh[ENG_RDQ_MAX];	/* ring of accepted READs */
	uint32_t rdh_next;
	uint32_t msgs;		/* messages started since enable: SENDs and
				 * WRITEs with immediate (receive credits) */
	uint32_t hold;		/* 1 + its eng->hold slot, or 0 */
	bool ack_owed;		/* ACK owed at the end of the RX batch */
	bool ack_listed;	/* in eng->owed[] */
	uint32_t owed_reqs;	/* requests the owed ACK answers */
	bool replied;		/* sent a request since it last left an
				 * ACK for later (eng_acks_late) */
	uint32_t owed_psn, owed_msn;
	bool ack_pending;	/* coalesced ACK owed for ack_psn */
	uint32_t ack_psn;
	uint32_t last_psn;	/* last request taken that was not a READ */
	uint64_t ack_at;
	uint32_t rq_wp;		/* QP1 only: its RQ write pointer (QP1 has
				 * no STATRQPIDB) */
};

/*
 * RX pause (PG332 ch.2 RX path, XRNIC_PAUSE_CONF), per QP: a request
 * that finds its RQ full (or no receive credit) waits here until
 * software frees space (RQCIi) or ENG_RX_HOLD_NS pass; only then is it
 * RNR-NAKed. Newer requests of the QP that arrive meanwhile queue up
 * behind it, as they would in the port's buffer, so other QPs' traffic
 * flows on and nothing is dropped: a drop would cost a whole-WQE
 * retransmission (PG332), up to 8 MiB for one lost packet. Beyond
 * ENG_HOLD_DEPTH (a requester's window) they are dropped, and a sequence
 * NAK at release asks for them again.
 */
#define ENG_HOLD_DEPTH ENG_TX_WINDOW
struct eng_parked {
	size_t len;
	int chk;			/* ICRC still to check */
	struct roce_l3 l3;
	uint8_t pkt[ROCE_MAX_TRANSPORT];
};

struct eng_hold {
	uint32_t qp;			/* 0: slot free */
	bool dropped;			/* the queue overflowed */
	uint64_t until;			/* when its head is RNR-NAKed */
	struct eng_parked *q;		/* ring of ENG_HOLD_DEPTH, head first */
	uint32_t head, n;
};

struct eng {
	struct ernic_model *m;
	struct model_wire *wire;
	pthread_t thread;
	bool running;
	int wake_fd;			/* eventfd */
	/* A timer for the thread, set by doorbells that sent from their
	 * own thread while it slept (tx_inline), and the deadline it is
	 * set to (0: none); under lock. */
	int timer_fd;
	uint64_t timer_at;
	atomic_int sleeping;
	atomic_bool stop;
	/* QPs with a doorbell or configuration change to look at */
	atomic_uint_least64_t dirty[ENG_QP_WORDS];
	/* A request is held for RQ space (eng->hold): only then must an
	 * RQCI doorbell wake the thread. Set when a hold starts, recomputed
	 * under lock at the end of each pass. */
	atomic_bool holding;
	/* RQCIi words software stores to itself (ernic_model_db_word):
	 * set once, under lock. Software then reads `rqci_watch` after
	 * each store with no fence of its own, and writes the register as
	 * well while it is set: a hold sets it with a membarrier for both
	 * sides (eng_rx_one), and it is cleared only ENG_WATCH_LINGER_NS
	 * after the last hold ended (eng_watch_idle), so that a QP whose
	 * RQ fills again and again pays that system call seldom. */
	atomic_bool db_direct;
	atomic_bool rqci_watch;
	uint64_t watch_idle_since;	/* under lock; 0: a hold, or none */
	/* One pass at a time (eng_run_once): the thread's, or one a poll
	 * runs in its caller's thread while the thread sleeps (eng_progress).
	 * Taken before lock. */
	pthread_mutex_t pass_lock;
	uint64_t rx_taken;		/* packets passes took, under pass_lock */
	/* Passes polls ran (eng_progress): while this moves, the thread
	 * leaves the port to them (eng_thread_main), asleep `away` from
	 * it, until software says its polls end (`reclaim`). */
	atomic_uint polls;
	/* ERNIC_ENGINE_STATS: what the thread and the polls did, printed
	 * when the engine ends (eng_destroy). Each counter has one writer
	 * context, named; read after the thread is joined. */
	struct {
		bool on;
		char name[ERNIC_NAME_MAX + 1];
		uint64_t wakeups, passes, spins;	/* the thread's */
		uint64_t switches;	/* its context switches, at its end */
		uint64_t acks_held, acks_overdue;	/* engine lock */
		uint64_t holds, hold_barriers;		/* engine lock */
		atomic_uint port_returned, port_kept;	/* progress_stop */
	} st;
	atomic_bool away, reclaim;
	/* A pass left the ACK a ping-pong QP owes unpaid for its reply
	 * (eng_acks_late): a post pays it with the reply, a pass after
	 * late_at (engine lock) whatever comes. */
	atomic_bool acks_late;
	uint64_t late_at;
	/* Requests taken (eng_rx_one, engine lock), and their number at the
	 * last end of polling (eng_progress_stop, no lock). */
	atomic_uint rx_reqs, reqs_at_stop;
	/* The pass took a READ request (eng_rx_read_req): the thread,
	 * whose pass it was, stays awake for the next (ENG_READ_SPIN_NS).
	 * Under pass_lock. */
	bool read_served;
	/* The earliest deadline a poll's full pass found and left to the
	 * polls (eng_timer_retune): an empty poll's pass looks at the clock
	 * only while one is set, and makes a full pass once it is due. */
	_Atomic uint64_t poll_next;

	pthread_mutex_t lock;		/* everything below */
	struct roce_l3 local;		/* our address, MAC, UDP port */
	struct eng_qp qp[ERNIC_C_NUM_QP_MAX + 1];
	bool frame;			/* wire=frame: MACs are real */
	bool may_hold;			/* current packet may be held */
	bool hold_wanted;		/* the responder asked to hold it */
	uint64_t hold_ns;		/* ... for this long at most */
	bool rerun;			/* a held packet again: counted once */
	bool parked;			/* this pass started a hold */
	int32_t tx_room;		/* ENG_DEV_WINDOW left (eng_tx_room) */
	/* QPs with outstanding WQEs (osq_n > 0): the only ones with
	 * packets in flight, all eng_tx_room looks at (eng_osq_count). */
	uint64_t osq_map[ENG_QP_WORDS];
	/* QPs enabled (q->en), all a pass walks (eng_qp_sync) */
	uint64_t en_map[ENG_QP_WORDS];
	bool tx_starved;		/* a QP found it used up */
	uint32_t tx_rr;			/* QP whose turn comes first */
	uint32_t owed[ENG_OWED_MAX];	/* QPs with ack_owed, in order */
	uint32_t owed_n;
	struct eng_hold hold[ENG_HOLD_MAX];
	struct eng_hndshk hs;		/* HW handshake ports */
	/* the payload eng_tx_payload left in place for the next packet */
	const uint8_t *tx_pay;
	uint8_t pkt[ROCE_MAX_TRANSPORT];	/* TX scratch */
	uint8_t pay[4096];			/* payload scratch */
	uint8_t rxbuf[ROCE_MAX_FRAME + 64];
};

/* ---- engine.c: shared helpers ---- */
/* CLOCK_MONOTONIC in ns, or the model's test clock (ernic_model.h). */
uint64_t eng_now(const struct eng *e);
static inline uint32_t eng_reg(const struct ernic_model *m, uint32_t off)
{
	return __atomic_load_n(&m->regs[off / 4], __ATOMIC_ACQUIRE);
}
static inline uint32_t eng_qreg(const struct ernic_model *m, uint32_t i,
				uint32_t reg)
{
	return eng_reg(m, ERNIC_QP(i, reg));
}
/* A 64-bit bus address from its LSB / MSB register pair. */
static inline uint64_t eng_reg64(const struct ernic_model *m, uint32_t lsb,
				 uint32_t msb)
{
	return (uint64_t)eng_reg(m, msb) << 32 | eng_reg(m, lsb);
}
void eng_set(struct eng *e, uint32_t off, uint32_t val);
/* Add to a 16-bit counter field of a status register. */
void eng_count(struct eng *e, uint32_t off, unsigned int shift);
/* Set bits of a W1C status word (ernic_model_hw_set). */
void eng_raise(struct eng *e, uint32_t off, uint32_t bits);
/* Raise INTSTS bits (PG332 "Interrupts"). */
void eng_irq(struct eng *e, uint32_t bits);
/* Memory the IP masters: bounds-checked against live mappings. */
int eng_dma_read(struct eng *e, uint64_t bus, void *dst, size_t len);
int eng_dma_write(struct eng *e, uint64_t bus, const void *src, size_t len);
int eng_dma_store32(struct eng *e, uint64_t bus, uint32_t v);
int eng_dma_load32(struct eng *e, uint64_t bus, uint32_t *v);
/* Path MTU of QP i in bytes (QPCONF[10:8]). */
uint32_t eng_pmtu(const struct ernic_model *m, uint32_t i);
/* Build and send one packet of QP i to its configured peer. */
int eng_send_pkt(struct eng *e, uint32_t i, struct roce_pkt *p);
/* The payload of the next eng_send_pkt, len bytes at bus, DMA-read
 * straight to where that packet (opcode) will be built; or, with
 * borrow on the UDP wire, sent from where it is: the send batch keeps a
 * pointer to it until it goes out. The caller records that in its
 * WQE's lent_gen: eng_cqe_write sends the batch before the CQE that
 * gives the buffer back to software. Not for memory software may write
 * at any time (a READ responder's): its ICRC, taken now, must still
 * hold when the batch goes. NULL on a DMA fault. Nothing else may be
 * sent in between. */
const uint8_t *eng_tx_payload(struct eng *e, uint8_t opcode, uint64_t bus,
			      uint32_t len, bool borrow);
/* Put QP i into the FATAL state with a Table 2-4 code (and a CQE with
 * ERRFLAG for the WQE at the head of its outstanding queue, if any). */
void eng_qp_fatal(struct eng *e, uint32_t i, uint32_t code,
		  uint8_t syndrome);
/* Write one CQE for WQE w of QP i and publish it (CQHEADi, doorbell,
 * interrupt). */
void eng_cqe_write(struct eng *e, uint32_t i, const struct eng_wqe *w,
		   bool err);
/* Complete the oldest outstanding WQE of QP i (CQE, CQHEAD, doorbell). */
void eng_complete_head(struct eng *e, uint32_t i);
/* Keep STATQPi's SQ/OSQ empty bits and STATCURSQPTRi current. */
void eng_statqp(struct eng *e, uint32_t i);
/* Reset the engine's view of QP i (QP enable edge, deletion). */
void eng_qp_reset(struct eng *e, uint32_t i);
/* Follow QPCONF.QP_EN for QP i; true when it is enabled and not FATAL.
 * Lock held. */
bool eng_qp_sync(struct eng *e, uint32_t i);
/* One pass over everything: held packets, RX, doorbells, timers. Returns
 * the next timer deadline (0 = none) and whether work remains. */
uint64_t eng_run_once(struct eng *e, bool *busy);
/* The same; with rx_or_none, only the receive half when the port had
 * nothing and no packet is held (what a poll lends its thread for). */
uint64_t eng_run(struct eng *e, bool *busy, bool rx_or_none);

/* ---- engine_thread.c: the engine's thread ---- */
/* The thread makes another pass (one eventfd write). No lock needed. */
void eng_wake(struct eng *e);
void *eng_thread_main(void *arg);
/* ERNIC_ENGINE_STATS's line on stderr; the thread joined. */
void eng_print_stats(struct eng *e);
/* A poll found nothing: run a pass in the caller's thread if the engine
 * thread sleeps. True when it took a packet. */
bool eng_progress(struct eng *e);
void eng_progress_stop(struct eng *e, bool armed);
/* A poll's pass that looked at every QP found `next` (0: none) its
 * earliest deadline at `now`: the polls watch it, the thread's timer
 * follows it when that costs no near timer and the one set is near.
 * Lock held. */
void eng_timer_retune(struct eng *e, uint64_t next, uint64_t now);
/* Bit i of a per-QP bitmap (osq_map, en_map) becomes on. */
static inline void eng_map_put(uint64_t *map, uint32_t i, bool on)
{
	const uint64_t bit = UINT64_C(1) << (i % 64);

	if (on)
		map[i / 64] |= bit;
	else
		map[i / 64] &= ~bit;
}

/* QP i's outstanding queue grew (+1) or shrank (-1; reset: -osq_n):
 * keeps osq_map. Lock held. */
static inline void eng_osq_count(struct eng *e, uint32_t i, int d)
{
	e->qp[i].osq_n = (uint32_t)((int)e->qp[i].osq_n + d);
	eng_map_put(e->osq_map, i, e->qp[i].osq_n != 0);
}

static inline uint32_t psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & ERNIC_PSN_MASK;
}
/* Signed distance a - b in 24-bit PSN space. */
static inline int32_t psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/* ---- engine_cnp.c: ECN and CNPs ---- */
/* A packet for enabled RC QP i came ECN CE: CNPSCHDSTS and INTSTS[8]. */
void eng_ecn_seen(struct eng *e, uint32_t i);
/* A CNP for QP i: counted, and its outstanding WQEs cut to 8. */
void eng_rx_cnp(struct eng *e, uint32_t i);
/* A whole 32-bit counter register plus one. */
void eng_count32(struct eng *e, uint32_t off);

/* ---- engine_recover.c: QP under recovery (QPCONFi[6]) ---- */
enum { ENG_RECOVER_NONE, ENG_RECOVER_RETIRING, ENG_RECOVER_RETIRED };
/* Software set QPCONFi[6] on enabled QP i: stop its requests and start
 * retiring its SQ. Lock held. */
void eng_recover_start(struct eng *e, uint32_t i);
/* QP i's part of a pass while under recovery: retire one WQE, or, with
 * CQHEADi at SQPIi, show the queues empty and RESPHNDSTS[16] set. True
 * when it left work for another pass. Lock held. */
bool eng_recover_turn(struct eng *e, uint32_t i);
/* QP i left recovery (disabled, or the bit cleared). Lock held. */
void eng_recover_end(struct eng *e, uint32_t i);

/* ---- engine_tx.c: requester ---- */
/* Read SQ slot `slot` of QP i, Table 2-1 fields in host order. 0, or
 * EFAULT when the IP cannot read it. */
int eng_wqe_read(struct eng *e, uint32_t i, uint32_t slot,
		 struct ernic_wqe *w);
/* Fetch and send WQEs of QP i as its window and the device's (tx_room)
 * allow. True when it stopped only because its turn's budget ran out. */
bool eng_tx_pump(struct eng *e, uint32_t i);
/* Set tx_room: ENG_DEV_WINDOW less what the QPs have in flight. Lock
 * held; before a round of eng_tx_pump. */
void eng_tx_room(struct eng *e);
/* Retransmit / RNR timers. Returns the next deadline (ns) or 0. */
uint64_t eng_tx_timers(struct eng *e, uint32_t i, uint64_t now);
/* A response (ACK/NAK/read response) arrived for QP i. */
void eng_tx_response(struct eng *e, uint32_t i, const struct roce_pkt *p);

/* ---- engine_rx.c: RX packet handler and responder ---- */
/* One received packet (transport bytes); syndrome from the frame checks. */
void eng_rx_packet(struct eng *e, const struct roce_l3 *l3,
		   const uint8_t *tp, size_t tlen, uint32_t syndrome,
		   int check_icrc);
/* Check an R_Key access of len bytes at va against the PD table; on
 * success *bus is where the data lives. */
bool eng_mr_check(struct eng *e, uint32_t i, uint32_t rkey, uint64_t va,
		  uint32_t len, bool write, uint64_t *bus);

/* ---- engine_ack.c: ACK, NAK and RNR NAK ---- */
/* An ACK, NAK or RNR NAK (AETH syndrome syn) for psn now, after the ACK
 * owed for earlier requests. */
void eng_send_aeth(struct eng *e, uint32_t i, uint32_t psn, uint8_t syn);
void eng_send_ack(struct eng *e, uint32_t i, uint32_t psn);
/* NAK (nak: a ROCE_NAK_ code) and the QP to FATAL with Table 2-4 code. */
void eng_nak_fatal(struct eng *e, uint32_t i, uint32_t psn, uint8_t nak,
		   uint32_t code);
/* RNR NAK with the QP's own RNR timer (TIMEOUTCONF[20:16]). */
void eng_send_rnr(struct eng *e, uint32_t i, uint32_t psn);
/* A request p was taken: ACK it as XRNICCONF[4:3] says. */
void eng_ack_policy(struct eng *e, uint32_t i, const struct roce_pkt *p);
/* Coalesced-ACK timer (XRNICCONF[4:3]). Returns its deadline or 0. */
uint64_t eng_rx_timers(struct eng *e, uint32_t i, uint64_t now);
/* Send the ACKs a receive batch owes (owe_ack). */
void eng_rx_acks_flush(struct eng *e);
/* Those ACKs, and with them whatever else is queued, out now. */
void eng_rx_acks_send(struct eng *e);
/* A pass may leave the ACK it owes a ping-pong QP until its reply has
 * gone: true if it may (acks_late set, late_at the deadline), false if
 * the owed ACKs must go now. Lock held. */
bool eng_acks_late(struct eng *e, uint64_t now);

/* ---- engine_read.c: the READ responder ---- */
/* Response packets of a read of len bytes (a zero-length read has one). */
static inline uint32_t eng_read_npkts(uint32_t len, uint32_t pmtu)
{
	return len ? (len + pmtu - 1) / pmtu : 1;
}
/* The opcode of response k of a READ answered in npkts packets. */
static inline uint8_t eng_read_resp_op(uint32_t npkts, uint32_t k)
{
	return npkts == 1     ? ROCE_RC_READ_RESP_ONLY :
	       k == 0	      ? ROCE_RC_READ_RESP_FIRST :
	       k + 1 == npkts ? ROCE_RC_READ_RESP_LAST :
				ROCE_RC_READ_RESP_MIDDLE;
}
/* A READ request for QP i: new (the expected PSN) or a duplicate. */
void eng_rx_read_req(struct eng *e, uint32_t i, const struct roce_pkt *p,
		     bool dup);
/* Send pending read responses of QP i within the budget; true if some
 * remain. */
bool eng_rx_pump(struct eng *e, uint32_t i);
/* QP i's RQ as the IP sees it: base, doorbell, depth, element size,
 * write pointer (STATRQPIDBi; QP1, which has none, keeps its own) and
 * software's RQCIi. */
struct eng_rq_view {
	uint64_t rqba, db;
	uint32_t depth, bufsz, wp, ci;
};
void eng_rq_view(struct eng *e, uint32_t i, struct eng_rq_view *v);
static inline bool eng_ring_full(uint32_t wp, uint32_t ci, uint32_t depth)
{
	return (wp + 1) % depth == ci;
}
/* Record a dropped packet's headers in the error buffer (Table 2-3). */
void eng_errbuf(struct eng *e, uint32_t syndrome, const uint8_t *tp,
		size_t tlen);
/* A held request of QP i was taken or RNR-NAKed: if newer requests were
 * dropped while it waited, ask for them again (sequence NAK). */
void eng_rx_released(struct eng *e, uint32_t i, bool dropped);
/* ---- engine_qp1.c: MADs ---- */
/* A packet addressed to QP1 (or any UD packet) that passed the header
 * and ICRC checks; QP1 is enabled. */
void eng_qp1_rx(struct eng *e, const struct roce_l3 *l3, const uint8_t *tp,
		size_t tlen, const struct roce_pkt *p);
/* Send QP1's new WQEs; true if some remain for the next pass. */
bool eng_qp1_pump(struct eng *e);

/* ---- engine_hold.c: the RX pause ---- */
/* One received packet; it may be held (its QP's RQ full). Lock held. */
void eng_rx_one(struct eng *e, const struct roce_l3 *l3, const uint8_t *tp,
		size_t tlen, uint32_t syn, int chk, uint64_t now);
/* Try the held requests again. Returns the earliest deadline of those
 * still held, or 0. Lock held. */
uint64_t eng_rx_held(struct eng *e, uint64_t now, bool enabled);
/* The end of a pass that found nothing held, rqci_watch set: clears it
 * once nothing was held for ENG_WATCH_LINGER_NS. Lock held. */
void eng_watch_idle(struct eng *e, uint64_t now);
/* Queue a packet behind QP i's held request; false if it is full. */
bool eng_hold_park(struct eng *e, uint32_t i, const struct roce_l3 *l3,
		   const uint8_t *tp, size_t tlen, int chk);

#endif
