/* SPDX-License-Identifier: MIT */
/*
 * IB CM connections (IBTA Vol 1 ch. 12.9): one cm_dev per device's CM
 * agent, one cm_id per connection or listener. No I/O and no threads:
 * MADs come in through cm_dev_recv(), time through cm_dev_tick(); MADs
 * go out and events are told through the ops the caller gives. What the
 * CM keeps per connection is what it needs to answer the network on its
 * own: retransmitting its last message until answered, answering
 * duplicates, rejecting stale requests, and remembering a closed
 * connection through its timewait.
 *
 * Lock contract: nothing here locks. The caller serialises every call
 * on one cm_dev and its ids (one mutex per device). Ops are called with
 * that serialisation held, after the id's state has been updated; an
 * event handler may call the cm_send_* functions on the id it was given,
 * and cm_id_destroy() on the new id of a CM_EV_REQ it refuses (and
 * nothing else): they are made for that.
 */
#ifndef ERNIC_CM_CONN_H
#define ERNIC_CM_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm_msg.h"

/* Where a MAD goes to or came from (the peer's QP1). */
struct cm_addr {
	uint8_t gid[16];
	uint8_t mac[6];		/* all zero: the sender looks it up */
	uint32_t qpn;		/* 1 */
	uint16_t pkey;
	uint8_t traffic_class;
	uint8_t hop_limit;
};

enum cm_state {
	CM_IDLE,
	CM_LISTEN,
	CM_REQ_SENT,		/* active: waiting for REP (or MRA/REJ) */
	CM_MRA_REQ_RCVD,	/* active: the peer asked for more time */
	CM_REQ_RCVD,		/* passive: the consumer decides */
	CM_MRA_REQ_SENT,	/* passive: a duplicate REQ got an MRA */
	CM_REP_SENT,		/* passive: waiting for RTU */
	CM_REP_RCVD,		/* active: the consumer sends RTU or REJ */
	CM_ESTABLISHED,
	CM_DREQ_SENT,
	CM_TIMEWAIT,
	CM_CLOSED,		/* rejected, timed out: nothing to answer */
};

enum cm_event_type {
	CM_EV_REQ,		/* a new passive id for a listener */
	CM_EV_REP,
	CM_EV_ESTABLISHED,	/* passive: RTU received */
	CM_EV_REJ,
	CM_EV_TIMEOUT,		/* REQ or REP never answered */
	CM_EV_DREQ,		/* the peer disconnected; DREP already sent */
	CM_EV_DISCONNECTED,	/* our DREQ answered, or it timed out */
	CM_EV_TIMEWAIT_EXIT,	/* timewait over (cm_id_report_timewait) */
};

struct cm_event {
	enum cm_event_type type;
	const struct cm_addr *from;	/* REQ */
	union {
		const struct cm_req *req;
		const struct cm_rep *rep;
		const struct cm_rej *rej;
		const struct cm_rtu *rtu;
		const struct cm_dreq *dreq;
		const struct cm_drep *drep;	/* NULL: DREQ timed out */
	} u;
};

struct cm_dev;
struct cm_id;

struct cm_ops {
	/* Queue mad (IB_MAD_SIZE bytes) to `to`: 0 or an errno. A failed
	 * send is retried at the next retransmission, as a lost one is. */
	int (*send)(void *ctx, const struct cm_addr *to, const uint8_t *mad);
	/* Something happened to id; for CM_EV_REQ, id is new and
	 * cm_id_listener(id) is the listener it came through. */
	void (*event)(void *ctx, struct cm_id *id, const struct cm_event *ev);
	/* Monotonic milliseconds. */
	uint64_t (*now_ms)(void *ctx);
};

/* Timing: IBTA's 4.096 us * 2^n, in milliseconds (at least 1). */
uint32_t cm_timeout_ms(uint8_t exponent);

/* Defaults this CM asks for (the kernel's rdma_cm uses the same order of
 * magnitude): response timeout, packet lifetime, retries. */
#define CM_RESPONSE_TIMEOUT 18u		/* 4.096 us * 2^18 ~ 1.07 s */
#define CM_PACKET_LIFETIME 14u		/* ~ 67 ms, one way */
#define CM_MAX_RETRIES 15u
/* A send that finds QP1's send queue full (EAGAIN) is tried again this
 * soon, without using up one of the message's retries. */
#define CM_BUSY_RETRY_MS 5u
/*
 * A REJ "invalid service ID" to our REQ is taken as "not listening yet"
 * this many times: the REQ goes again after 1, 2, 4, ... ms (511 ms in
 * all) before the consumer hears the REJ. A server may be between two
 * listens on the port — perftest -R listens again right after the
 * handshake on its first connection, and this CM's client, resolving
 * locally, can be there first. Not one of the REQ's retries.
 */
#define CM_NO_LISTENER_RETRIES 9u
/*
 * The passive side of that race, for clients that take REJ 8 at once
 * (the kernel's): a REQ for a service this CM listened on until lately
 * (CM_RELISTEN_WINDOW_MS) and has no listener for now is held,
 * unanswered, up to CM_RELISTEN_HOLD_MS (or the REQ's own response
 * timeout, if shorter) for the consumer to listen again; it then goes to
 * the new listener, or gets its REJ. A perftest -R server on a busy
 * 2-CPU host was seen listening 3.3 ms too late for rxe's REQ. At most
 * CM_HELD_MAX REQs are held; the others are rejected at once.
 */
#define CM_RELISTEN_WINDOW_MS 10000u
#define CM_RELISTEN_HOLD_MS 250u
#define CM_HELD_MAX 8u

struct cm_stats {
	uint64_t rx, tx, tx_errors;
	uint64_t rx_bad;		/* not a CM MAD we read, or a bad field */
	uint64_t rx_unknown;		/* for no connection we have */
	uint64_t rx_dup;		/* duplicates answered again, or of a
					 * REQ held (not answered) */
	uint64_t rx_stale;		/* stale REQs rejected */
	uint64_t retransmits;
	uint64_t no_listener_resends;	/* REQs sent again after a REJ/8 */
	uint64_t held;			/* REQs held for a listener to return */
	uint64_t timeouts;
};

/* ca_guid: the device's (REQ/REP LocalCAGUID); id_seed: the first
 * local communication ID's random part. NULL with errno on failure. */
struct cm_dev *cm_dev_create(const struct cm_ops *ops, void *ctx,
			     uint64_t ca_guid, uint32_t id_seed);
/* Every communication ID chosen from now on carries tag in its top 8
 * bits (0: none): on a device shared by processes, the MADs of this
 * CM's connections are steered back to it by them (ernicdv.3). */
void cm_dev_set_id_tag(struct cm_dev *dev, uint8_t tag);
/* Frees every id, ones still referenced by the consumer too. */
void cm_dev_destroy(struct cm_dev *dev);
void cm_dev_recv(struct cm_dev *dev, const struct cm_addr *from,
		 const uint8_t *mad, size_t len);
/* Retransmit, time out, end timewaits that are due. Returns the time in
 * ms until the next deadline, or -1 if none. */
int cm_dev_tick(struct cm_dev *dev);
const struct cm_stats *cm_dev_stats(const struct cm_dev *dev);
/*
 * The consumer is leaving (its process ends): every id it still holds is
 * let go as cm_id_destroy() does (established connections get a DREQ,
 * connections being made a REJ). cm_dev_pending() then counts the ids
 * whose DREQ, REQ or REP still waits for an answer: a consumer that can
 * keep ticking a little longer lets the peer learn that it left (a CM in
 * the kernel outlives processes; one in a process does not).
 */
void cm_dev_shutdown(struct cm_dev *dev);
unsigned int cm_dev_pending(const struct cm_dev *dev);

struct cm_id *cm_id_create(struct cm_dev *dev, void *user);
/*
 * The consumer lets go of the id: no event for it any more. A connection
 * being set up is rejected, an established one disconnected (DREQ); the
 * CM keeps what it needs until the peer has been answered and timewait
 * is over, then frees it.
 */
void cm_id_destroy(struct cm_id *id);
void *cm_id_user(const struct cm_id *id);
void cm_id_set_user(struct cm_id *id, void *user);
enum cm_state cm_id_state(const struct cm_id *id);
struct cm_id *cm_id_listener(const struct cm_id *id);
uint32_t cm_id_local_comm_id(const struct cm_id *id);
uint32_t cm_id_remote_comm_id(const struct cm_id *id);
const struct cm_addr *cm_id_peer(const struct cm_id *id);

/* Tell CM_EV_TIMEWAIT_EXIT when the id's timewait ends (rdma_cm's
 * RDMA_CM_EVENT_TIMEWAIT_EXIT); off unless asked. */
void cm_id_report_timewait(struct cm_id *id);
/* REQs that came through listener lis and wait for the consumer's
 * answer (REP or REJ): for a backlog. */
unsigned int cm_listener_pending(const struct cm_id *lis);

/* Receive REQs for service_id: 0, EADDRINUSE, EINVAL (id not idle). */
int cm_listen(struct cm_id *id, uint64_t service_id);

/*
 * Active side. The CM fills req's local_comm_id, local_ca_guid and, when
 * zero, the timeouts and max_cm_retries with its defaults; the rest is
 * the caller's. 0, EINVAL (state, a field out of range) or the send's
 * error.
 */
int cm_send_req(struct cm_id *id, const struct cm_addr *to,
		struct cm_req *req);
/* Passive side, in CM_REQ_RCVD / CM_MRA_REQ_SENT; the IDs, CA GUID and
 * target ACK delay are the CM's. */
int cm_send_rep(struct cm_id *id, struct cm_rep *rep);
/* Active side, in CM_REP_RCVD: the connection is established. */
int cm_send_rtu(struct cm_id *id, const void *pdata, size_t len);
/* Refuse a REQ (CM_REQ_RCVD, CM_MRA_REQ_SENT) or a REP (CM_REP_RCVD). */
int cm_send_rej(struct cm_id *id, uint16_t reason, const void *ari,
		size_t ari_len, const void *pdata, size_t len);
/* Disconnect an established connection. */
int cm_send_dreq(struct cm_id *id, const void *pdata, size_t len);

#endif
