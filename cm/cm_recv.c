// SPDX-License-Identifier: MIT
/*
 * Received CM messages (cm_conn.h): each is read whole (cm_msg.c checks
 * every field's range), matched to the connection it names, and checked
 * against that connection's state before it changes anything. A message
 * for no connection, or one the state does not expect, is counted and
 * dropped, or answered where IBTA says so (a DREQ for a connection we do
 * not know gets a DREP, a REP a REJ).
 */
#include <errno.h>
#include <string.h>

#include "cm_priv.h"

/* ---- lookups ---- */

struct cm_id *cm_find_local(struct cm_dev *dev, uint32_t local_id)
{
	for (struct cm_id *i = dev->ids; i; i = i->next)
		if (i->local_id == local_id && i->state != CM_LISTEN &&
		    i->state != CM_IDLE)
			return i;
	return NULL;
}

/* A REQ we have seen: the same sender's communication ID and GID. */
struct cm_id *cm_find_remote(struct cm_dev *dev, uint32_t remote_id,
			     const uint8_t *gid)
{
	for (struct cm_id *i = dev->ids; i; i = i->next)
		if (i->remote_id == remote_id && i->state != CM_LISTEN &&
		    i->state != CM_IDLE && !memcmp(i->remote_gid, gid, 16))
			return i;
	return NULL;
}

/* A live connection to the same remote QP under another ID (12.9.8.3.1). */
struct cm_id *cm_find_stale(struct cm_dev *dev, uint32_t remote_qpn,
			    const uint8_t *gid)
{
	for (struct cm_id *i = dev->ids; i; i = i->next)
		if ((i->state == CM_ESTABLISHED || i->state == CM_REP_SENT ||
		     i->state == CM_DREQ_SENT) &&
		    i->remote_qpn == remote_qpn && !memcmp(i->remote_gid, gid, 16))
			return i;
	return NULL;
}

struct cm_id *cm_find_listener(struct cm_dev *dev, uint64_t service_id)
{
	for (struct cm_id *i = dev->ids; i; i = i->next)
		if (i->state == CM_LISTEN && i->service_id == service_id)
			return i;
	return NULL;
}

/* ---- REQs held for a listener to come back ---- */

void cm_note_unlisten(struct cm_dev *dev, uint64_t service_id)
{
	unsigned int k;

	for (k = 0; k < CM_HELD_MAX; k++)
		if (dev->gone[k].at && dev->gone[k].service_id == service_id)
			break;
	if (k == CM_HELD_MAX)
		k = dev->gone_next++ % CM_HELD_MAX;
	dev->gone[k].service_id = service_id;
	dev->gone[k].at = cm_now(dev) + 1;	/* 0 marks a free slot */
}

static void forget_unlisten(struct cm_dev *dev, uint64_t service_id)
{
	for (unsigned int k = 0; k < CM_HELD_MAX; k++)
		if (dev->gone[k].service_id == service_id)
			dev->gone[k].at = 0;
}

static bool lately_listened(const struct cm_dev *dev, uint64_t service_id,
			    uint64_t now)
{
	for (unsigned int k = 0; k < CM_HELD_MAX; k++)
		if (dev->gone[k].at && dev->gone[k].service_id == service_id &&
		    now + 1 - dev->gone[k].at <= CM_RELISTEN_WINDOW_MS)
			return true;
	return false;
}

/* True if the REQ (nobody listens to its service) is held, or is a
 * duplicate of one held, and so must not be answered now. */
static bool hold_req(struct cm_dev *dev, const struct cm_addr *from,
		     uint64_t tid, const struct cm_req *req,
		     const uint8_t *mad)
{
	uint64_t now = cm_now(dev), wait;
	struct cm_held *slot = NULL;

	if (!lately_listened(dev, req->service_id, now))
		return false;
	for (unsigned int k = 0; k < CM_HELD_MAX; k++) {
		struct cm_held *h = &dev->held[k];

		if (!h->until) {
			slot = slot ? slot : h;
		} else if (h->remote_id == req->local_comm_id &&
			   !memcmp(h->gid, req->primary.local_gid, 16)) {
			dev->stats.rx_dup++;
			return true;
		}
	}
	if (!slot)
		return false;
	wait = cm_timeout_ms(req->remote_cm_response_timeout);
	if (wait > CM_RELISTEN_HOLD_MS)
		wait = CM_RELISTEN_HOLD_MS;
	slot->until = now + wait;
	slot->tid = tid;
	slot->service_id = req->service_id;
	slot->remote_id = req->local_comm_id;
	memcpy(slot->gid, req->primary.local_gid, 16);
	slot->from = *from;
	memcpy(slot->mad, mad, IB_MAD_SIZE);
	dev->stats.held++;
	return true;
}

/* Forget the held REQ of (remote_id, gid), if any: true if there was. */
static bool unhold_req(struct cm_dev *dev, uint32_t remote_id,
		       const uint8_t *gid)
{
	for (unsigned int k = 0; k < CM_HELD_MAX; k++) {
		struct cm_held *h = &dev->held[k];

		if (h->until && h->remote_id == remote_id &&
		    !memcmp(h->gid, gid, 16)) {
			h->until = 0;
			return true;
		}
	}
	return false;
}

static void reject_no_listener(struct cm_dev *dev, const struct cm_addr *from,
			       uint64_t tid, uint32_t their_id)
{
	dev->stats.rx_unknown++;
	cm_answer_unknown(dev, from, tid, IB_CM_ATTR_REQ, their_id, 0,
			  IB_CM_REJ_INVALID_SERVICE_ID);
}

static void recv_req(struct cm_dev *dev, const struct cm_addr *from,
		     uint64_t tid, const uint8_t *mad);

uint64_t cm_held_tick(struct cm_dev *dev, uint64_t now)
{
	uint64_t next = 0;

	for (unsigned int k = 0; k < CM_HELD_MAX; k++) {
		const struct cm_held *h = &dev->held[k];

		if (!h->until)
			continue;
		if (cm_find_listener(dev, h->service_id)) {
			/* The slot is free again before the REQ is taken:
			 * whatever it leads to may hold another. */
			struct cm_held c = *h;

			dev->held[k].until = 0;
			recv_req(dev, &c.from, c.tid, c.mad);
		} else if (h->until <= now) {
			/* Not between two listens after all: later REQs for
			 * the service (this one's again, from a CM that takes
			 * REJ 8 as "not yet") are answered at once. */
			dev->held[k].until = 0;
			forget_unlisten(dev, h->service_id);
			reject_no_listener(dev, &h->from, h->tid, h->remote_id);
		} else if (!next || h->until < next) {
			next = h->until;
		}
	}
	return next;
}

void cm_held_reject_all(struct cm_dev *dev)
{
	for (unsigned int k = 0; k < CM_HELD_MAX; k++) {
		struct cm_held *h = &dev->held[k];

		if (h->until) {
			h->until = 0;
			reject_no_listener(dev, &h->from, h->tid, h->remote_id);
		}
	}
}

/* ---- messages ---- */

static void recv_req(struct cm_dev *dev, const struct cm_addr *from,
		     uint64_t tid, const uint8_t *mad)
{
	struct cm_event ev = { .type = CM_EV_REQ, .from = from };
	struct cm_id *id, *lis;
	struct cm_req req;

	if (cm_unpack_req(mad, &req)) {
		dev->stats.rx_bad++;
		return;
	}
	id = cm_find_remote(dev, req.local_comm_id, req.primary.local_gid);
	if (id) {
		dev->stats.rx_dup++;
		switch (id->state) {
		case CM_REQ_RCVD:
		case CM_MRA_REQ_SENT: {
			/* The consumer has not decided yet: ask for time. */
			struct cm_mad_hdr hdr = cm_hdr_for(id->tid);
			struct cm_mra m = {
				.local_comm_id = id->local_id,
				.remote_comm_id = id->remote_id,
				.msg_mraed = CM_MSG_REQ,
				.service_timeout = CM_RESPONSE_TIMEOUT + 2,
			};

			if (!cm_pack_mra(id->msg, &hdr, &m)) {
				id->state = CM_MRA_REQ_SENT;
				cm_send_msg(id, 0);
			}
			break;
		}
		case CM_REP_SENT:
			cm_xmit(dev, &id->peer, id->msg);
			break;
		case CM_TIMEWAIT:
		case CM_CLOSED:
			dev->stats.rx_stale++;
			cm_answer_unknown(dev, from, tid, IB_CM_ATTR_REQ,
				       req.local_comm_id, id->local_id,
				       IB_CM_REJ_STALE_CONN);
			break;
		default:
			break;	/* established: the REQ is old news */
		}
		return;
	}
	if (cm_find_stale(dev, req.local_qpn, req.primary.local_gid)) {
		dev->stats.rx_stale++;
		cm_answer_unknown(dev, from, tid, IB_CM_ATTR_REQ,
			       req.local_comm_id, 0, IB_CM_REJ_STALE_CONN);
		return;
	}
	lis = cm_find_listener(dev, req.service_id);
	if (!lis || lis->detached) {
		if (!hold_req(dev, from, tid, &req, mad))
			reject_no_listener(dev, from, tid, req.local_comm_id);
		return;
	}
	if (req.transport != 0 || req.srq) {
		cm_answer_unknown(dev, from, tid, IB_CM_ATTR_REQ,
			       req.local_comm_id, 0,
			       IB_CM_REJ_INVALID_TRANSPORT_TYPE);
		return;
	}
	id = cm_id_create(dev, NULL);
	if (!id) {
		cm_answer_unknown(dev, from, tid, IB_CM_ATTR_REQ,
			       req.local_comm_id, 0, IB_CM_REJ_NO_RESOURCES);
		return;
	}
	id->listener = lis;
	id->service_id = req.service_id;
	id->remote_id = req.local_comm_id;
	id->remote_qpn = req.local_qpn;
	memcpy(id->remote_gid, req.primary.local_gid, 16);
	id->peer = *from;
	id->tid = tid;
	id->max_retries = req.max_cm_retries;
	id->peer_response_ms = cm_timeout_ms(req.local_cm_response_timeout);
	id->state = CM_REQ_RCVD;
	ev.u.req = &req;
	dev->ops.event(dev->ctx, id, &ev);
}

static void recv_rep(struct cm_dev *dev, const struct cm_addr *from,
		     uint64_t tid, const uint8_t *mad)
{
	struct cm_event ev = { .type = CM_EV_REP, .from = from };
	struct cm_rep rep;
	struct cm_id *id;

	if (cm_unpack_rep(mad, &rep)) {
		dev->stats.rx_bad++;
		return;
	}
	id = cm_find_local(dev, rep.remote_comm_id);
	if (!id) {
		dev->stats.rx_unknown++;
		cm_answer_unknown(dev, from, tid, IB_CM_ATTR_REP,
			       rep.local_comm_id, rep.remote_comm_id,
			       IB_CM_REJ_INVALID_COMM_ID);
		return;
	}
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
		break;
	case CM_ESTABLISHED:
	case CM_TIMEWAIT:
		/* Our RTU was lost (12.9.5.2), or our REJ: send it again.
		 * Only those: a passive id holds its REP, a disconnected one
		 * its DREQ or DREP, and they are no answer to a REP. */
		if (id->remote_id == rep.local_comm_id &&
		    cm_msg_attr(id) == (id->state == CM_ESTABLISHED ?
					     IB_CM_ATTR_RTU : IB_CM_ATTR_REJ)) {
			dev->stats.rx_dup++;
			cm_xmit(dev, &id->peer, id->msg);
		} else {
			dev->stats.rx_unknown++;
		}
		return;
	default:
		dev->stats.rx_unknown++;
		return;
	}
	id->remote_id = rep.local_comm_id;
	id->remote_qpn = rep.local_qpn;
	id->deadline = 0;
	id->state = CM_REP_RCVD;
	ev.u.rep = &rep;
	cm_tell(id, &ev);
	/* A consumer that let go already: refuse. */
	if (id->detached && id->state == CM_REP_RCVD)
		cm_send_rej(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
}

static void recv_rtu(struct cm_dev *dev, const uint8_t *mad)
{
	struct cm_event ev = { .type = CM_EV_ESTABLISHED };
	struct cm_rtu rtu;
	struct cm_id *id;

	if (cm_unpack_rtu(mad, &rtu)) {
		dev->stats.rx_bad++;
		return;
	}
	id = cm_find_local(dev, rtu.remote_comm_id);
	if (!id || id->remote_id != rtu.local_comm_id ||
	    id->state != CM_REP_SENT) {
		dev->stats.rx_unknown++;
		return;
	}
	id->deadline = 0;
	id->state = CM_ESTABLISHED;
	ev.u.rtu = &rtu;
	cm_tell(id, &ev);
	if (id->detached)
		cm_send_dreq(id, NULL, 0);
}

static void recv_mra(struct cm_dev *dev, const uint8_t *mad)
{
	struct cm_mra mra;
	struct cm_id *id;

	if (cm_unpack_mra(mad, &mra)) {
		dev->stats.rx_bad++;
		return;
	}
	id = cm_find_local(dev, mra.remote_comm_id);
	if (!id || mra.msg_mraed != CM_MSG_REQ ||
	    (id->state != CM_REQ_SENT && id->state != CM_MRA_REQ_RCVD)) {
		dev->stats.rx_unknown++;
		return;
	}
	/* 12.9.5.1: stop retransmitting; wait the service timeout. */
	id->remote_id = mra.local_comm_id;
	id->state = CM_MRA_REQ_RCVD;
	id->deadline = cm_now(dev) + cm_timeout_ms(mra.service_timeout) +
		       2 * cm_timeout_ms(CM_PACKET_LIFETIME);
}

static void recv_rej(struct cm_dev *dev, const struct cm_addr *from,
		     const uint8_t *mad)
{
	struct cm_event ev = { .type = CM_EV_REJ };
	struct cm_rej rej;
	struct cm_id *id;

	if (cm_unpack_rej(mad, &rej)) {
		dev->stats.rx_bad++;
		return;
	}
	if (!rej.remote_comm_id && rej.local_comm_id) {
		/* The active side withdrew its REQ before it learnt our ID
		 * (its cm_id_destroy, its timeout): find the connection
		 * as a duplicate REQ does, by the sender's ID and GID. A
		 * REQ still held is forgotten. */
		if (unhold_req(dev, rej.local_comm_id, from->gid))
			return;
		id = cm_find_remote(dev, rej.local_comm_id, from->gid);
		if (id && id->state != CM_REQ_RCVD &&
		    id->state != CM_MRA_REQ_SENT && id->state != CM_REP_SENT)
			id = NULL;
	} else {
		id = cm_find_local(dev, rej.remote_comm_id);
	}
	if (!id) {
		dev->stats.rx_unknown++;
		return;
	}
	if (id->state == CM_REQ_SENT && !rej.local_comm_id &&
	    rej.msg_rejected == CM_MSG_REQ &&
	    rej.reason == IB_CM_REJ_INVALID_SERVICE_ID && id->no_listener_left) {
		/* Nobody listens there yet: ask again a little later
		 * (CM_NO_LISTENER_RETRIES; cm_dev_tick sends it). */
		unsigned int n = CM_NO_LISTENER_RETRIES - id->no_listener_left--;

		id->no_listener_wait = true;
		id->deadline = cm_now(dev) + (1u << n);
		return;
	}
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
		break;	/* the passive side may not have an ID for us yet */
	case CM_REP_SENT:
	case CM_REP_RCVD:
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
	case CM_ESTABLISHED:
		/* Established too: the passive side gave up waiting for an
		 * RTU that was only late (its REP's retries ran out) and has
		 * closed; so does this side (12.9.7, as Linux's CM does). */
		if (rej.local_comm_id != id->remote_id) {
			dev->stats.rx_unknown++;
			return;
		}
		break;
	default:
		dev->stats.rx_unknown++;
		return;
	}
	id->deadline = 0;
	id->have_msg = false;
	cm_enter_timewait(id);
	ev.u.rej = &rej;
	cm_tell(id, &ev);
}

static void recv_dreq(struct cm_dev *dev, const struct cm_addr *from,
		      uint64_t tid, const uint8_t *mad)
{
	struct cm_event ev = { .type = CM_EV_DREQ };
	struct cm_mad_hdr hdr = cm_hdr_for(tid);
	struct cm_drep drep = { 0 };
	struct cm_dreq dreq;
	struct cm_id *id;

	if (cm_unpack_dreq(mad, &dreq)) {
		dev->stats.rx_bad++;
		return;
	}
	id = cm_find_local(dev, dreq.remote_comm_id);
	if (!id || id->remote_id != dreq.local_comm_id ||
	    id->local_qpn != dreq.remote_qpn) {
		/* 12.9.6: answer anyway, so the peer stops asking. */
		dev->stats.rx_unknown++;
		cm_answer_unknown(dev, from, tid, IB_CM_ATTR_DREP,
			       dreq.local_comm_id, dreq.remote_comm_id, 0);
		return;
	}
	switch (id->state) {
	case CM_REP_SENT:	/* the RTU was lost, the data was not */
	case CM_ESTABLISHED:
	case CM_DREQ_SENT:	/* both sides disconnect at once */
		break;
	case CM_TIMEWAIT:
	case CM_CLOSED:
		/* Our DREP was lost, or the peer's DREQ crossed ours: a DREP
		 * (id->msg may be our DREQ or a REJ, no answer to a DREQ). */
		dev->stats.rx_dup++;
		cm_answer_unknown(dev, from, tid, IB_CM_ATTR_DREP,
			       dreq.local_comm_id, dreq.remote_comm_id, 0);
		return;
	default:
		dev->stats.rx_unknown++;
		return;
	}
	drep.local_comm_id = id->local_id;
	drep.remote_comm_id = id->remote_id;
	id->tid = tid;
	if (cm_pack_drep(id->msg, &hdr, &drep))
		return;
	cm_send_msg(id, 0);
	cm_enter_timewait(id);
	ev.u.dreq = &dreq;
	cm_tell(id, &ev);
}

static void recv_drep(struct cm_dev *dev, const uint8_t *mad)
{
	struct cm_event ev = { .type = CM_EV_DISCONNECTED };
	struct cm_drep drep;
	struct cm_id *id;

	if (cm_unpack_drep(mad, &drep)) {
		dev->stats.rx_bad++;
		return;
	}
	id = cm_find_local(dev, drep.remote_comm_id);
	if (!id || id->remote_id != drep.local_comm_id ||
	    id->state != CM_DREQ_SENT) {
		dev->stats.rx_unknown++;
		return;
	}
	cm_enter_timewait(id);
	ev.u.drep = &drep;
	cm_tell(id, &ev);
}

void cm_dev_recv(struct cm_dev *dev, const struct cm_addr *from,
		 const uint8_t *mad, size_t len)
{
	struct cm_mad_hdr hdr;

	dev->stats.rx++;
	if (cm_unpack_hdr(mad, len, &hdr)) {
		dev->stats.rx_bad++;
		return;
	}
	switch (hdr.attr_id) {
	case IB_CM_ATTR_REQ:
		recv_req(dev, from, hdr.tid, mad);
		break;
	case IB_CM_ATTR_MRA:
		recv_mra(dev, mad);
		break;
	case IB_CM_ATTR_REJ:
		recv_rej(dev, from, mad);
		break;
	case IB_CM_ATTR_REP:
		recv_rep(dev, from, hdr.tid, mad);
		break;
	case IB_CM_ATTR_RTU:
		recv_rtu(dev, mad);
		break;
	case IB_CM_ATTR_DREQ:
		recv_dreq(dev, from, hdr.tid, mad);
		break;
	case IB_CM_ATTR_DREP:
		recv_drep(dev, mad);
		break;
	default:
		dev->stats.rx_bad++;	/* LAP, APR, SIDR: not supported */
		break;
	}
}
