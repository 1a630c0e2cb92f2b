/* SPDX-License-Identifier: MIT */
/*
 * Inside the IB CM (cm/): what cm_conn.c (ids, the consumer's calls,
 * timers) and cm_recv.c (received messages, lookups) share. Lock
 * contract as cm_conn.h: the caller serialises everything on a cm_dev.
 */
#ifndef ERNIC_CM_PRIV_H
#define ERNIC_CM_PRIV_H

#include "cm_conn.h"

struct cm_id {
	struct cm_dev *dev;
	struct cm_id *next;		/* dev->ids */
	void *user;
	bool detached;			/* the consumer let go */
	enum cm_state state;
	struct cm_id *listener;		/* passive ids: where the REQ came */
	uint64_t service_id;
	uint32_t local_id, remote_id;
	uint32_t remote_qpn, local_qpn;
	uint8_t remote_gid[16];
	struct cm_addr peer;
	uint64_t tid;			/* of the exchange in progress */
	/* What we last sent and may have to send again. */
	uint8_t msg[IB_MAD_SIZE];
	bool have_msg;
	bool busy;			/* its send found QP1's queue full */
	uint32_t busy_timer;		/* the timer to start once it is out */
	bool tw_event;			/* tell CM_EV_TIMEWAIT_EXIT */
	uint8_t retries_left, max_retries;
	uint8_t no_listener_left;	/* REJ/8s still taken as "not yet" */
	bool no_listener_wait;		/* the deadline sends the REQ again */
	uint32_t timeout_ms;		/* per retransmission */
	uint32_t peer_response_ms;	/* the peer's CM response timeout */
	uint64_t deadline;		/* 0: no timer */
};

/* A REQ waiting for its service's listener to come back
 * (CM_RELISTEN_HOLD_MS). */
struct cm_held {
	uint64_t until;			/* 0: a free slot */
	uint64_t tid, service_id;
	uint32_t remote_id;		/* the REQ's local comm ID and GID */
	uint8_t gid[16];
	struct cm_addr from;
	uint8_t mad[IB_MAD_SIZE];
};

struct cm_dev {
	struct cm_ops ops;
	void *ctx;
	uint64_t ca_guid;
	uint32_t next_id;
	uint8_t id_tag;			/* top 8 bits of our comm IDs; 0: any */
	uint64_t next_tid;
	struct cm_id *ids;
	struct cm_stats stats;
	struct cm_held held[CM_HELD_MAX];
	/* Services whose listener went lately: when (ms), a ring. */
	struct {
		uint64_t service_id, at;
	} gone[CM_HELD_MAX];
	unsigned int gone_next;
};

/* cm_conn.c */
uint64_t cm_now(struct cm_dev *dev);
void cm_id_free(struct cm_id *id);
int cm_xmit(struct cm_dev *dev, const struct cm_addr *to,
	    const uint8_t *mad);
struct cm_mad_hdr cm_hdr_for(uint64_t tid);
int cm_send_msg(struct cm_id *id, uint32_t timeout_ms);
void cm_answer_unknown(struct cm_dev *dev, const struct cm_addr *to,
		       uint64_t tid, uint16_t attr, uint32_t their_id,
		       uint32_t our_id, uint16_t reason);
void cm_enter_timewait(struct cm_id *id);
uint16_t cm_msg_attr(const struct cm_id *id);
void cm_reject_own(struct cm_id *id, uint16_t attr, uint16_t reason);
void cm_tell(struct cm_id *id, const struct cm_event *ev);
int cm_copy_pdata(uint8_t *dst, size_t room, const void *pdata,
		  size_t len);

/* cm_recv.c: an id by what a message names (NULL: none) */
struct cm_id *cm_find_local(struct cm_dev *dev, uint32_t local_id);
struct cm_id *cm_find_remote(struct cm_dev *dev, uint32_t remote_id,
			     const uint8_t *gid);
struct cm_id *cm_find_stale(struct cm_dev *dev, uint32_t remote_qpn,
			    const uint8_t *gid);
struct cm_id *cm_find_listener(struct cm_dev *dev, uint64_t service_id);
/* cm_recv.c: REQs held for a listener to come back (CM_RELISTEN_HOLD_MS).
 * A listener of service_id went; hand each held REQ whose listener came
 * to it and reject those whose wait is over, returning the earliest end
 * of a wait left (0: none); reject every REQ held. */
void cm_note_unlisten(struct cm_dev *dev, uint64_t service_id);
uint64_t cm_held_tick(struct cm_dev *dev, uint64_t now);
void cm_held_reject_all(struct cm_dev *dev);

#endif
