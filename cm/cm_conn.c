// SPDX-License-Identifier: MIT
/*
 * IB CM connection state machine (cm_conn.h): IBTA Vol 1 12.9's states
 * for RC connections without alternate paths or LAP. This file: ids,
 * what we send and resend, the consumer's calls and the timers;
 * cm_recv.c: what we receive.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm_priv.h"

uint32_t cm_timeout_ms(uint8_t exponent)
{
	/* 4.096 us << n, rounded up to whole milliseconds. */
	uint64_t us = (4096ull << (exponent & 31)) / 1000;

	return (uint32_t)(us / 1000 + 1);
}

uint64_t cm_now(struct cm_dev *dev)
{
	return dev->ops.now_ms(dev->ctx);
}

/* ---- ids ---- */

static bool id_in_use(struct cm_dev *dev, uint32_t local_id)
{
	for (struct cm_id *i = dev->ids; i; i = i->next)
		if (i->local_id == local_id)
			return true;
	return false;
}

static uint32_t new_local_id(struct cm_dev *dev)
{
	uint32_t id;

	do {
		/* A stride coprime with 2^32 walks every value once (and,
		 * being odd, every value of the low 24 bits). */
		dev->next_id += 0x9E3779B1u;
		id = dev->next_id;
		if (dev->id_tag)
			id = (id & 0xFFFFFFu) | (uint32_t)dev->id_tag << 24;
	} while (!id || id_in_use(dev, id));
	return id;
}

void cm_dev_set_id_tag(struct cm_dev *dev, uint8_t tag)
{
	dev->id_tag = tag;
}

void cm_id_free(struct cm_id *id)
{
	struct cm_dev *dev = id->dev;

	for (struct cm_id **p = &dev->ids; *p; p = &(*p)->next)
		if (*p == id) {
			*p = id->next;
			break;
		}
	/* Ids that came through a listener forget it. */
	for (struct cm_id *i = dev->ids; i; i = i->next)
		if (i->listener == id)
			i->listener = NULL;
	free(id);
}

struct cm_id *cm_id_create(struct cm_dev *dev, void *user)
{
	struct cm_id *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	id->dev = dev;
	id->user = user;
	id->state = CM_IDLE;
	id->local_id = new_local_id(dev);
	id->next = dev->ids;
	dev->ids = id;
	return id;
}

void *cm_id_user(const struct cm_id *id) { return id->user; }
void cm_id_set_user(struct cm_id *id, void *user) { id->user = user; }
enum cm_state cm_id_state(const struct cm_id *id) { return id->state; }
struct cm_id *cm_id_listener(const struct cm_id *id) { return id->listener; }
uint32_t cm_id_local_comm_id(const struct cm_id *id) { return id->local_id; }
uint32_t cm_id_remote_comm_id(const struct cm_id *id) { return id->remote_id; }
const struct cm_addr *cm_id_peer(const struct cm_id *id) { return &id->peer; }

/* ---- sending ---- */

int cm_xmit(struct cm_dev *dev, const struct cm_addr *to,
	    const uint8_t *mad)
{
	int ret = dev->ops.send(dev->ctx, to, mad);

	if (ret)
		dev->stats.tx_errors++;
	else
		dev->stats.tx++;
	return ret;
}

struct cm_mad_hdr cm_hdr_for(uint64_t tid)
{
	return (struct cm_mad_hdr){ .method = IB_MGMT_METHOD_SEND, .tid = tid };
}

/* Send id->msg; with a timer when the message waits for an answer. A
 * send that fails is treated as lost: the timer retries it. */
int cm_send_msg(struct cm_id *id, uint32_t timeout_ms)
{
	int ret = cm_xmit(id->dev, &id->peer, id->msg);

	id->have_msg = true;
	if (timeout_ms) {
		id->timeout_ms = timeout_ms;
		id->retries_left = id->max_retries;
		id->deadline = cm_now(id->dev) + timeout_ms;
	} else {
		id->deadline = 0;
	}
	id->busy = ret == EAGAIN;
	if (id->busy) {
		/* QP1's send queue is full for a moment: try again soon, and
		 * start the message's timer once it is out. */
		id->busy_timer = timeout_ms;
		id->deadline = cm_now(id->dev) + CM_BUSY_RETRY_MS;
		return 0;
	}
	return ret;
}

/* Table 110: a REJ for a timeout names its sender's CA GUID in the ARI
 * (a peer that never learnt our communication ID finds us by it). */
static void rej_ari(const struct cm_dev *dev, struct cm_rej *r)
{
	if (r->reason != IB_CM_REJ_TIMEOUT)
		return;
	for (int i = 0; i < 8; i++)
		r->ari[i] = (uint8_t)(dev->ca_guid >> (56 - 8 * i));
	r->ari_len = 8;
}

/* A REJ, DREP or REP answer to a message for no connection of ours: from
 * the fields of what came in, not from an id. */
void cm_answer_unknown(struct cm_dev *dev, const struct cm_addr *to,
		       uint64_t tid, uint16_t attr, uint32_t their_id,
		       uint32_t our_id, uint16_t reason)
{
	struct cm_mad_hdr hdr = cm_hdr_for(tid);
	uint8_t mad[IB_MAD_SIZE];
	int ret;

	if (attr == IB_CM_ATTR_DREP) {
		struct cm_drep d = { .local_comm_id = our_id,
				     .remote_comm_id = their_id };

		ret = cm_pack_drep(mad, &hdr, &d);
	} else {
		struct cm_rej r = { .local_comm_id = our_id,
				    .remote_comm_id = their_id,
				    .reason = reason };

		r.msg_rejected = attr == IB_CM_ATTR_REQ ? CM_MSG_REQ :
				 attr == IB_CM_ATTR_REP ? CM_MSG_REP :
							  CM_MSG_OTHER;
		rej_ari(dev, &r);
		ret = cm_pack_rej(mad, &hdr, &r);
	}
	if (!ret)
		cm_xmit(dev, to, mad);
}

void cm_enter_timewait(struct cm_id *id)
{
	/* What is in hand (REJ, DREP) is sent again for a duplicate. */
	id->busy = false;
	id->state = CM_TIMEWAIT;
	/* 12.9.3: long enough for anything still in flight to die. */
	id->deadline = cm_now(id->dev) + 2 * cm_timeout_ms(CM_PACKET_LIFETIME) +
		       id->peer_response_ms;
}

/* The attribute of what we last sent, 0 for nothing. */
uint16_t cm_msg_attr(const struct cm_id *id)
{
	return id->have_msg ? (uint16_t)(id->msg[16] << 8 | id->msg[17]) : 0;
}

/* Withdraw our REQ (attr REQ) or REP (attr REP) with a REJ and go to
 * timewait. The REJ replaces the REQ or REP in id->msg: a duplicate REP
 * in timewait gets the REJ again, not our old REQ. */
void cm_reject_own(struct cm_id *id, uint16_t attr, uint16_t reason)
{
	struct cm_mad_hdr hdr = cm_hdr_for(id->tid);
	struct cm_rej r = { .local_comm_id = id->local_id,
			    .remote_comm_id = id->remote_id,
			    .msg_rejected = attr == IB_CM_ATTR_REP ? CM_MSG_REP :
								     CM_MSG_REQ,
			    .reason = reason };

	id->have_msg = false;
	rej_ari(id->dev, &r);
	if (!cm_pack_rej(id->msg, &hdr, &r))
		cm_send_msg(id, 0);
	cm_enter_timewait(id);
}

void cm_tell(struct cm_id *id, const struct cm_event *ev)
{
	if (!id->detached)
		id->dev->ops.event(id->dev->ctx, id, ev);
}

void cm_id_report_timewait(struct cm_id *id)
{
	id->tw_event = true;
}

unsigned int cm_listener_pending(const struct cm_id *lis)
{
	unsigned int n = 0;

	for (const struct cm_id *i = lis->dev->ids; i; i = i->next)
		n += i->listener == lis && !i->detached &&
		     (i->state == CM_REQ_RCVD || i->state == CM_MRA_REQ_SENT);
	return n;
}

/* ---- the consumer's calls ---- */

int cm_listen(struct cm_id *id, uint64_t service_id)
{
	if (id->state != CM_IDLE)
		return EINVAL;
	if (cm_find_listener(id->dev, service_id))
		return EADDRINUSE;
	id->service_id = service_id;
	id->state = CM_LISTEN;
	return 0;
}

int cm_send_req(struct cm_id *id, const struct cm_addr *to,
		struct cm_req *req)
{
	struct cm_dev *dev = id->dev;
	struct cm_mad_hdr hdr;
	int ret;

	if (id->state != CM_IDLE)
		return EINVAL;
	req->local_comm_id = id->local_id;
	req->local_ca_guid = dev->ca_guid;
	if (!req->remote_cm_response_timeout)
		req->remote_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	if (!req->local_cm_response_timeout)
		req->local_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	if (!req->max_cm_retries)
		req->max_cm_retries = CM_MAX_RETRIES;
	id->tid = ++dev->next_tid;
	hdr = cm_hdr_for(id->tid);
	ret = cm_pack_req(id->msg, &hdr, req);
	if (ret)
		return ret;
	id->peer = *to;
	memcpy(id->remote_gid, req->primary.remote_gid, 16);
	id->local_qpn = req->local_qpn;
	id->service_id = req->service_id;
	id->max_retries = req->max_cm_retries;
	id->peer_response_ms = cm_timeout_ms(req->remote_cm_response_timeout);
	id->state = CM_REQ_SENT;
	id->no_listener_left = CM_NO_LISTENER_RETRIES;
	return cm_send_msg(id, id->peer_response_ms +
				    2 * cm_timeout_ms(CM_PACKET_LIFETIME));
}

int cm_send_rep(struct cm_id *id, struct cm_rep *rep)
{
	struct cm_mad_hdr hdr = cm_hdr_for(id->tid);
	int ret;

	if (id->state != CM_REQ_RCVD && id->state != CM_MRA_REQ_SENT)
		return EINVAL;
	rep->local_comm_id = id->local_id;
	rep->remote_comm_id = id->remote_id;
	rep->local_ca_guid = id->dev->ca_guid;
	if (!rep->target_ack_delay)
		rep->target_ack_delay = CM_PACKET_LIFETIME;
	ret = cm_pack_rep(id->msg, &hdr, rep);
	if (ret)
		return ret;
	id->local_qpn = rep->local_qpn;
	id->state = CM_REP_SENT;
	return cm_send_msg(id, id->peer_response_ms +
				    2 * cm_timeout_ms(CM_PACKET_LIFETIME));
}

int cm_copy_pdata(uint8_t *dst, size_t room, const void *pdata,
		  size_t len)
{
	if (len > room || (len && !pdata))
		return EINVAL;
	memset(dst, 0, room);
	if (len)
		memcpy(dst, pdata, len);
	return 0;
}

int cm_send_rtu(struct cm_id *id, const void *pdata, size_t len)
{
	struct cm_mad_hdr hdr = cm_hdr_for(id->tid);
	struct cm_rtu m = { .local_comm_id = id->local_id,
			    .remote_comm_id = id->remote_id };
	int ret;

	if (id->state != CM_REP_RCVD)
		return EINVAL;
	ret = cm_copy_pdata(m.pdata, sizeof(m.pdata), pdata, len);
	if (!ret)
		ret = cm_pack_rtu(id->msg, &hdr, &m);
	if (ret)
		return ret;
	id->state = CM_ESTABLISHED;
	/* The RTU is kept: a duplicate REP gets it again (12.9.5.2). */
	return cm_send_msg(id, 0);
}

int cm_send_rej(struct cm_id *id, uint16_t reason, const void *ari,
		size_t ari_len, const void *pdata, size_t len)
{
	struct cm_mad_hdr hdr = cm_hdr_for(id->tid);
	struct cm_rej m = { .local_comm_id = id->local_id,
			    .remote_comm_id = id->remote_id,
			    .reason = reason };
	int ret;

	switch (id->state) {
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
		m.msg_rejected = CM_MSG_REQ;
		break;
	case CM_REP_RCVD:
		m.msg_rejected = CM_MSG_REP;
		break;
	default:
		return EINVAL;
	}
	ret = cm_copy_pdata(m.pdata, sizeof(m.pdata), pdata, len);
	if (!ret)
		ret = cm_copy_pdata(m.ari, sizeof(m.ari), ari, ari_len);
	if (ret)
		return ret;
	m.ari_len = (uint8_t)ari_len;
	ret = cm_pack_rej(id->msg, &hdr, &m);
	if (ret)
		return ret;
	/* A REJ is not answered; a duplicate REQ or REP gets it again while
	 * the id lingers in timewait. */
	ret = cm_send_msg(id, 0);
	cm_enter_timewait(id);
	return ret;
}

int cm_send_dreq(struct cm_id *id, const void *pdata, size_t len)
{
	struct cm_dev *dev = id->dev;
	struct cm_mad_hdr hdr;
	struct cm_dreq m = { .local_comm_id = id->local_id,
			     .remote_comm_id = id->remote_id,
			     .remote_qpn = id->remote_qpn };
	int ret;

	if (id->state != CM_ESTABLISHED)
		return EINVAL;
	id->tid = ++dev->next_tid;
	hdr = cm_hdr_for(id->tid);
	ret = cm_copy_pdata(m.pdata, sizeof(m.pdata), pdata, len);
	if (!ret)
		ret = cm_pack_dreq(id->msg, &hdr, &m);
	if (ret)
		return ret;
	id->state = CM_DREQ_SENT;
	return cm_send_msg(id, id->peer_response_ms +
				    2 * cm_timeout_ms(CM_PACKET_LIFETIME));
}

void cm_id_destroy(struct cm_id *id)
{
	id->detached = true;
	id->user = NULL;
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
		/* 12.9.5.1: a REQ we give up on is withdrawn with a REJ. */
		cm_reject_own(id, IB_CM_ATTR_REQ, IB_CM_REJ_TIMEOUT);
		break;
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
	case CM_REP_RCVD:
		cm_send_rej(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		break;
	case CM_REP_SENT:
		cm_reject_own(id, IB_CM_ATTR_REP, IB_CM_REJ_CONSUMER_DEFINED);
		break;
	case CM_ESTABLISHED:
		/* The DREQ is retransmitted until answered, then timewait. */
		cm_send_dreq(id, NULL, 0);
		break;
	case CM_DREQ_SENT:
	case CM_TIMEWAIT:
		break;
	case CM_LISTEN:
		cm_note_unlisten(id->dev, id->service_id);
		cm_id_free(id);
		break;
	case CM_IDLE:
	case CM_CLOSED:
		cm_id_free(id);
		break;
	}
}

/* ---- timers ---- */

static void timed_out(struct cm_id *id)
{
	struct cm_dev *dev = id->dev;
	struct cm_event ev = { .type = CM_EV_TIMEOUT };

	id->deadline = 0;
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
	case CM_REP_SENT:
		/* 12.9.5: the peer never answered; tell it, in case only its
		 * answers were lost, and close. */
		dev->stats.timeouts++;
		cm_reject_own(id, id->state == CM_REP_SENT ? IB_CM_ATTR_REP :
							  IB_CM_ATTR_REQ,
			   IB_CM_REJ_TIMEOUT);
		cm_tell(id, &ev);
		break;
	case CM_DREQ_SENT:
		dev->stats.timeouts++;
		cm_enter_timewait(id);
		ev.type = CM_EV_DISCONNECTED;
		cm_tell(id, &ev);
		break;
	case CM_TIMEWAIT:
		id->state = CM_CLOSED;
		if (id->detached) {
			cm_id_free(id);
		} else if (id->tw_event) {
			ev.type = CM_EV_TIMEWAIT_EXIT;
			cm_tell(id, &ev);
		}
		break;
	default:
		break;
	}
}

int cm_dev_tick(struct cm_dev *dev)
{
	uint64_t t = cm_now(dev), next = 0;
	struct cm_id *id, *nx;

	next = cm_held_tick(dev, t);
	for (id = dev->ids; id; id = nx) {
		nx = id->next;
		if (!id->deadline || id->deadline > t)
			continue;
		if (id->busy) {
			if (cm_xmit(dev, &id->peer, id->msg) == EAGAIN) {
				id->deadline = t + CM_BUSY_RETRY_MS;
				continue;
			}
			id->busy = false;
			id->deadline = id->busy_timer ? t + id->busy_timer : 0;
			continue;
		}
		if (id->no_listener_wait) {
			id->no_listener_wait = false;
			if (id->state == CM_REQ_SENT) {
				/* not one of the REQ's retries: its timer
				 * starts over */
				dev->stats.no_listener_resends++;
				id->deadline = t + id->timeout_ms;
				if (cm_xmit(dev, &id->peer, id->msg) == EAGAIN) {
					id->busy = true;
					id->busy_timer = id->timeout_ms;
					id->deadline = t + CM_BUSY_RETRY_MS;
				}
				continue;
			}
		}
		if (id->state != CM_TIMEWAIT && id->state != CM_MRA_REQ_RCVD &&
		    id->have_msg && id->retries_left) {
			id->retries_left--;
			dev->stats.retransmits++;
			cm_xmit(dev, &id->peer, id->msg);
			id->deadline = t + id->timeout_ms;
			continue;
		}
		timed_out(id);	/* may free id; nx is already taken */
	}
	for (id = dev->ids; id; id = id->next)
		if (id->deadline && (!next || id->deadline < next))
			next = id->deadline;
	if (!next)
		return -1;
	return next <= t ? 0 : (int)(next - t > 60000 ? 60000 : next - t);
}

/* ---- receiving ---- */

/* ---- device ---- */

struct cm_dev *cm_dev_create(const struct cm_ops *ops, void *ctx,
			     uint64_t ca_guid, uint32_t id_seed)
{
	struct cm_dev *dev;

	if (!ops || !ops->send || !ops->event || !ops->now_ms) {
		errno = EINVAL;
		return NULL;
	}
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	dev->ops = *ops;
	dev->ctx = ctx;
	dev->ca_guid = ca_guid;
	dev->next_id = id_seed;
	dev->next_tid = (uint64_t)id_seed << 32;
	return dev;
}

void cm_dev_destroy(struct cm_dev *dev)
{
	if (!dev)
		return;
	while (dev->ids) {
		struct cm_id *id = dev->ids;

		dev->ids = id->next;
		free(id);
	}
	free(dev);
}

const struct cm_stats *cm_dev_stats(const struct cm_dev *dev)
{
	return &dev->stats;
}

void cm_dev_shutdown(struct cm_dev *dev)
{
	struct cm_id *id, *nx;

	for (id = dev->ids; id; id = nx) {
		nx = id->next;	/* cm_id_destroy may free id, never another */
		if (!id->detached)
			cm_id_destroy(id);
	}
	cm_held_reject_all(dev);
}

unsigned int cm_dev_pending(const struct cm_dev *dev)
{
	unsigned int n = 0;

	for (const struct cm_id *id = dev->ids; id; id = id->next)
		n += id->state == CM_REQ_SENT || id->state == CM_MRA_REQ_RCVD ||
		     id->state == CM_REP_SENT || id->state == CM_DREQ_SENT;
	return n;
}
