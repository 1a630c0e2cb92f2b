// SPDX-License-Identifier: MIT
/*
 * Connections: rdma_connect / accept / reject / disconnect on the
 * device's IB CM (cm/cm_conn.c), the QP taken through INIT, RTR and RTS
 * from what the CM negotiated, and the CM's events told as rdma_cm's.
 *
 * Addressing is IBTA's RDMA IP CM Service annex (A11): the service ID is
 * the port space and the port (0x0000000001060000 | port for
 * RDMA_PS_TCP), and a REQ's private data starts with a 36-byte header:
 * version 0, IP version << 4, the active side's port, its address and
 * the passive side's address (IPv4 in the last 4 bytes of each 16).
 * RDMA_PS_IB carries no header.
 *
 * The CM's events arrive in the device's worker thread with the device
 * lock held (cma_dev.c); the calls here take that lock around every CM
 * call.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cma.h"

#define CMA_HDR_LEN 36u
#define CMA_VERSION 0u
#define CMA_DEFAULT_ACK_TIMEOUT 14u	/* 4.096 us * 2^14 ~ 67 ms */
#define CMA_MIN_RNR_TIMER 12u		/* 0.64 ms */

/* The service a listener offers: its own port; the service a REQ asks
 * for: the destination's. */
uint64_t cma_service_id(const struct cma_id *id)
{
	return (uint64_t)id->id.ps << 16 | id->port;
}

static uint64_t dst_service_id(const struct cma_id *id)
{
	return (uint64_t)id->id.ps << 16 | ntohs(rdma_get_dst_port((struct rdma_cm_id *)&id->id));
}

static bool has_hdr(const struct cma_id *id)
{
	return id->id.ps == RDMA_PS_TCP;
}

/*
 * A REQ's or REP's "starting PSN" is the PSN its sender's receive queue
 * expects, i.e. the one the other side starts sending with: each side
 * chooses its own and learns its send PSN from the other (the Linux CM
 * reads the fields so, and it is the peer that counts). An id's receive
 * PSN is chosen when it is made: a program with its own QP
 * (rdma_init_qp_attr) may take it to RTR before the CM has spoken.
 */
uint32_t cma_random_psn(void)
{
	uint32_t r = 0;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)(uintptr_t)&r;
	return r & 0xFFFFFF;
}

static uint8_t min_u8(unsigned int a, unsigned int b)
{
	return (uint8_t)(a < b ? a : b);
}

/* ---- QP states ---- */

CMA_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *cmid,
				 struct ibv_qp_attr *a, int *mask)
{
	struct cma_id *id = to_cma(cmid);

	if (!id || !a || !mask || !id->dev)
		return cma_ret(EINVAL);
	switch (a->qp_state) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		a->qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				     IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_REMOTE_READ;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			IBV_QP_ACCESS_FLAGS;
		return 0;
	case IBV_QPS_RTR:
		if (!id->remote_qpn)
			return cma_ret(EINVAL);	/* nothing negotiated yet */
		a->path_mtu = id->path_mtu;
		a->dest_qp_num = id->remote_qpn;
		a->rq_psn = id->rq_psn;
		a->max_dest_rd_atomic = id->responder_resources;
		a->min_rnr_timer = CMA_MIN_RNR_TIMER;
		memset(&a->ah_attr, 0, sizeof(a->ah_attr));
		a->ah_attr.is_global = 1;
		a->ah_attr.grh.dgid = id->id.route.addr.addr.ibaddr.dgid;
		a->ah_attr.grh.sgid_index = 0;
		a->ah_attr.grh.hop_limit = 64;
		a->ah_attr.grh.traffic_class = id->tos;
		a->ah_attr.port_num = 1;
		*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		return 0;
	case IBV_QPS_RTS:
		a->timeout = id->ack_timeout ? id->ack_timeout :
					       CMA_DEFAULT_ACK_TIMEOUT;
		a->retry_cnt = id->retry_count;
		a->rnr_retry = id->rnr_retry_count;
		a->sq_psn = id->sq_psn;
		a->max_rd_atomic = id->initiator_depth;
		*mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
		return 0;
	default:
		return cma_ret(EINVAL);
	}
}

static int qp_to(struct cma_id *id, enum ibv_qp_state state)
{
	struct ibv_qp_attr a = { .qp_state = state };
	int mask;

	if (rdma_init_qp_attr(&id->id, &a, &mask))
		return errno;
	return ibv_modify_qp(id->id.qp, &a, mask);
}

int cma_qp_to_init(struct cma_id *id)
{
	return qp_to(id, IBV_QPS_INIT);
}

static int qp_to_rts(struct cma_id *id)
{
	int ret = qp_to(id, IBV_QPS_RTR);

	return ret ? ret : qp_to(id, IBV_QPS_RTS);
}

static void qp_to_err(struct cma_id *id)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (id->id.qp)
		ibv_modify_qp(id->id.qp, &a, IBV_QP_STATE);
}

/* ---- broken connections ----
 *
 * A process killed with SIGKILL takes its CM along: its peers get no
 * DREQ, where a kernel CM would have sent one. What they see is their
 * QP going to the error state (requests to the dead side run out of
 * retries). The worker looks at the QPs of established connections once
 * a second; one in error is disconnected (DREQ), and the application is
 * told DISCONNECTED at once, as a kernel's rdma_cm tells it on the
 * peer's DREQ: the connection is of no more use, and the DREQ to a dead
 * peer is retransmitted for the CM's whole timeout before it gives up.
 * That DREQ's end (DREP or timeout) is not told again. An idle QP never
 * goes to error: a connection nobody uses learns nothing, as over a
 * kernel's CM when the peer's host dies.
 */
/* The connection is over: DISCONNECTED, told once (the watch may have
 * told it when the QP broke, before the DREQ ended). Caller holds
 * dev->lock. */
static void tell_disconnected(struct cma_id *id)
{
	id->state = CMA_DISCONNECT;
	if (id->told_disc)
		return;
	id->told_disc = true;
	cma_post_event(id, NULL, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0, NULL);
}

static void watch(struct cma_id *id)
{
	if (id->is_watched || !id->id.qp)
		return;
	id->watch_qpn = id->id.qp->qp_num;
	id->watch_next = id->dev->watched;
	id->dev->watched = id;
	id->is_watched = true;
}

void cma_unwatch(struct cma_id *id)
{
	if (!id->is_watched)
		return;
	for (struct cma_id **p = &id->dev->watched; *p; p = &(*p)->watch_next)
		if (*p == id) {
			*p = id->watch_next;
			break;
		}
	id->is_watched = false;
}

bool cma_watch_qps(struct cma_dev *dev)
{
	struct cma_id *id, *nx;

	for (id = dev->watched; id; id = nx) {
		enum ibv_qp_state st;

		nx = id->watch_next;
		if (id->state != CMA_ESTABLISHED || !id->cm) {
			cma_unwatch(id);
			continue;
		}
		/* By number: the application may have destroyed the QP (then
		 * it is not ours to judge). */
		if (dev->dv.qp_state(dev->verbs, id->watch_qpn, &st) ||
		    st != IBV_QPS_ERR)
			continue;
		cma_unwatch(id);
		if (!cm_send_dreq(id->cm, NULL, 0))
			tell_disconnected(id);
	}
	return dev->watched != NULL;
}

/* ---- the CM's events ---- */

static void conn_param_of(const struct cma_id *id, struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = id->responder_resources;
	p->initiator_depth = id->initiator_depth;
	p->retry_count = id->retry_count;
	p->rnr_retry_count = id->rnr_retry_count;
	p->qp_num = id->remote_qpn;
}

/* The A11 header of a REQ: where the request comes from and goes to. */
static int read_hdr(const uint8_t *pd, struct sockaddr_storage *src,
		    struct sockaddr_storage *dst)
{
	uint16_t sport = (uint16_t)(pd[2] << 8 | pd[3]);
	unsigned int ipver = pd[1] >> 4;

	if (pd[0] != CMA_VERSION || (ipver != 4 && ipver != 6))
		return EINVAL;
	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	if (ipver == 4) {
		struct sockaddr_in *s = (struct sockaddr_in *)src;
		struct sockaddr_in *d = (struct sockaddr_in *)dst;

		s->sin_family = d->sin_family = AF_INET;
		s->sin_port = htons(sport);
		memcpy(&s->sin_addr, pd + 4 + 12, 4);
		memcpy(&d->sin_addr, pd + 20 + 12, 4);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)src;
		struct sockaddr_in6 *d = (struct sockaddr_in6 *)dst;

		s->sin6_family = d->sin6_family = AF_INET6;
		s->sin6_port = htons(sport);
		memcpy(&s->sin6_addr, pd + 4, 16);
		memcpy(&d->sin6_addr, pd + 20, 16);
	}
	return 0;
}

static void write_hdr(const struct cma_id *id, uint8_t *pd)
{
	const struct sockaddr *src = &id->id.route.addr.src_addr;
	const struct sockaddr *dst = &id->id.route.addr.dst_addr;

	memset(pd, 0, CMA_HDR_LEN);
	pd[0] = CMA_VERSION;
	pd[2] = (uint8_t)(id->port >> 8);
	pd[3] = (uint8_t)id->port;
	if (src->sa_family == AF_INET) {
		pd[1] = 4 << 4;
		memcpy(pd + 4 + 12, &((const struct sockaddr_in *)src)->sin_addr, 4);
		memcpy(pd + 20 + 12, &((const struct sockaddr_in *)dst)->sin_addr, 4);
	} else {
		pd[1] = 6 << 4;
		memcpy(pd + 4, &((const struct sockaddr_in6 *)src)->sin6_addr, 16);
		memcpy(pd + 20, &((const struct sockaddr_in6 *)dst)->sin6_addr, 16);
	}
}

/* A REQ for a listener: a new id, told as CONNECT_REQUEST. */
static void on_req(struct cma_dev *dev, struct cm_id *cm,
		   const struct cm_event *ev)
{
	struct cm_id *lcm = cm_id_listener(cm);
	struct cma_id *lid = lcm ? cm_id_user(lcm) : NULL;
	const struct cm_req *req = ev->u.req;
	struct sockaddr_storage src, dst;
	struct rdma_conn_param p;
	const uint8_t *pdata = req->pdata;
	size_t plen = sizeof(req->pdata);
	struct cma_id *id;

	if (!lid || lid->state != CMA_LISTEN) {
		cm_send_rej(cm, IB_CM_REJ_INVALID_SERVICE_ID, NULL, 0, NULL, 0);
		cm_id_destroy(cm);
		return;
	}
	if (has_hdr(lid)) {
		union ibv_gid dgid;

		if (read_hdr(req->pdata, &src, &dst)) {
			cm_send_rej(cm, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
				    NULL, 0);
			cm_id_destroy(cm);
			return;
		}
		/* The request names an address: it must be this device's. */
		cma_addr_to_gid((struct sockaddr *)&dst, &dgid);
		if (memcmp(dgid.raw, dev->gid.raw, 16)) {
			cm_send_rej(cm, IB_CM_REJ_INVALID_SERVICE_ID, NULL, 0,
				    NULL, 0);
			cm_id_destroy(cm);
			return;
		}
		pdata += CMA_HDR_LEN;
		plen -= CMA_HDR_LEN;
	} else {
		cma_gid_to_addr((const union ibv_gid *)req->primary.local_gid,
				0, &src);
		cma_gid_to_addr(&dev->gid, 0, &dst);
	}
	/* listen(2)'s backlog: requests not yet accepted or rejected
	 * (this one included); 0 or less means the kernel's default. */
	if (cm_listener_pending(lcm) > (unsigned int)(lid->backlog > 0 ?
						      lid->backlog : 1024)) {
		cm_send_rej(cm, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		cm_id_destroy(cm);
		return;
	}
	id = cma_id_alloc(lid->sync ? NULL : lid->id.channel, lid->id.context,
			  lid->id.ps);
	if (!id) {
		cm_send_rej(cm, IB_CM_REJ_NO_RESOURCES, NULL, 0, NULL, 0);
		cm_id_destroy(cm);
		return;
	}
	cma_id_on_device(id, dev);
	id->port = lid->port;	/* the listener's; not in the port table */
	if (dst.ss_family == AF_INET)
		((struct sockaddr_in *)&dst)->sin_port = htons(lid->port);
	else
		((struct sockaddr_in6 *)&dst)->sin6_port = htons(lid->port);
	memcpy(&id->id.route.addr.src_storage, &dst, sizeof(dst));
	memcpy(&id->id.route.addr.dst_storage, &src, sizeof(src));
	memcpy(id->id.route.addr.addr.ibaddr.dgid.raw, req->primary.local_gid, 16);
	id->listener = lid;
	id->cm = cm;
	cm_id_set_user(cm, id);
	cm_id_report_timewait(cm);
	id->remote_qpn = req->local_qpn;
	id->sq_psn = req->starting_psn;
	id->path_mtu = min_u8(req->path_mtu, dev->port_mtu);
	/* What we accept is what they will issue, and the reverse. */
	id->responder_resources = min_u8(req->initiator_depth, dev->max_rd_atom);
	id->initiator_depth = min_u8(req->responder_resources,
				     dev->max_init_rd_atom);
	id->retry_count = req->retry_count;
	id->rnr_retry_count = req->rnr_retry_count;
	id->ack_timeout = req->primary.local_ack_timeout;
	id->tos = req->primary.traffic_class;
	id->state = CMA_CONNECT_REQ;
	conn_param_of(id, &p);
	p.flow_control = req->e2e_flow_control;
	if (cma_post_event(id, lid, RDMA_CM_EVENT_CONNECT_REQUEST, 0, pdata,
			   plen, &p)) {
		cm_send_rej(cm, IB_CM_REJ_NO_RESOURCES, NULL, 0, NULL, 0);
		cm_id_destroy(cm);
		id->cm = NULL;
		cma_id_free(id);
	}
}

/* The REP to our REQ: finish the QP, send the RTU. */
static void on_rep(struct cma_id *id, struct cm_id *cm,
		   const struct cm_event *ev)
{
	const struct cm_rep *rep = ev->u.rep;
	struct rdma_conn_param p;
	int ret;

	id->remote_qpn = rep->local_qpn;
	id->sq_psn = rep->starting_psn;
	id->initiator_depth = min_u8(id->initiator_depth,
				     rep->responder_resources);
	id->responder_resources = min_u8(id->responder_resources,
					 rep->initiator_depth);
	id->rnr_retry_count = rep->rnr_retry_count;
	conn_param_of(id, &p);
	p.flow_control = rep->e2e_flow_control;
	if (!id->id.qp) {
		/* The application has its own QP: it calls rdma_establish(). */
		cma_post_event(id, NULL, RDMA_CM_EVENT_CONNECT_RESPONSE, 0,
			       rep->pdata, sizeof(rep->pdata), &p);
		return;
	}
	ret = qp_to_rts(id);
	if (ret) {
		cm_send_rej(cm, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		id->state = CMA_DISCONNECT;
		cma_post_event(id, NULL, RDMA_CM_EVENT_CONNECT_ERROR, -ret,
			       NULL, 0, NULL);
		return;
	}
	cm_send_rtu(cm, NULL, 0);
	id->state = CMA_ESTABLISHED;
	watch(id);
	cma_post_event(id, NULL, RDMA_CM_EVENT_ESTABLISHED, 0, rep->pdata,
		       sizeof(rep->pdata), &p);
}

void cma_cm_event(void *ctx, struct cm_id *cm, const struct cm_event *ev)
{
	struct cma_dev *dev = ctx;
	struct cma_id *id = cm_id_user(cm);
	struct rdma_conn_param p;

	if (ev->type == CM_EV_REQ) {
		on_req(dev, cm, ev);
		return;
	}
	if (!id)
		return;
	switch (ev->type) {
	case CM_EV_REP:
		on_rep(id, cm, ev);
		break;
	case CM_EV_ESTABLISHED:
		id->state = CMA_ESTABLISHED;
		watch(id);
		conn_param_of(id, &p);
		cma_post_event(id, NULL, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, 0,
			       &p);
		break;
	case CM_EV_REJ:
		if (id->state == CMA_ACCEPTED)
			qp_to_err(id);
		id->state = CMA_DISCONNECT;
		cma_post_event(id, NULL, RDMA_CM_EVENT_REJECTED,
			       ev->u.rej->reason, ev->u.rej->pdata,
			       sizeof(ev->u.rej->pdata), NULL);
		break;
	case CM_EV_TIMEOUT:
		id->state = CMA_DISCONNECT;
		cma_post_event(id, NULL, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT,
			       NULL, 0, NULL);
		break;
	case CM_EV_TIMEWAIT_EXIT:
		cma_post_event(id, NULL, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, NULL,
			       0, NULL);
		break;
	case CM_EV_DREQ:
	case CM_EV_DISCONNECTED:
		tell_disconnected(id);
		break;
	default:
		break;
	}
}

/* ---- the application's calls ---- */

static int check_pdata(const struct cma_id *id, const void *pdata,
		       size_t len, size_t room)
{
	if (has_hdr(id) && room == CM_REQ_PDATA)
		room -= CMA_HDR_LEN;
	if (len > room || (len && !pdata))
		return EINVAL;
	return 0;
}

CMA_EXPORT int rdma_connect(struct rdma_cm_id *cmid,
			    struct rdma_conn_param *param)
{
	struct cma_id *id = to_cma(cmid);
	struct rdma_conn_param none = { 0 };
	struct cm_req req = { 0 };
	struct cma_dev *dev;
	struct cm_addr to = { .qpn = IB_QP1, .hop_limit = 64 };
	uint8_t *pd = req.pdata;
	int ret;

	if (!id || id->state != CMA_ROUTE_RESOLVED)
		return cma_ret(EINVAL);
	if (!param)
		param = &none;
	ret = check_pdata(id, param->private_data, param->private_data_len,
			  CM_REQ_PDATA);
	if (ret)
		return cma_ret(ret);
	if (!id->id.qp && !param->qp_num)
		return cma_ret(EINVAL);
	dev = id->dev;
	id->path_mtu = dev->port_mtu;
	id->responder_resources = min_u8(param->responder_resources,
					 dev->max_rd_atom);
	id->initiator_depth = min_u8(param->initiator_depth,
				     dev->max_init_rd_atom);
	id->retry_count = min_u8(param->retry_count, 7);
	id->rnr_retry_count = min_u8(param->rnr_retry_count, 7);

	req.service_id = dst_service_id(id);
	req.local_qpn = id->id.qp ? id->id.qp->qp_num : param->qp_num;
	req.responder_resources = id->responder_resources;
	req.initiator_depth = id->initiator_depth;
	req.e2e_flow_control = param->flow_control;
	req.starting_psn = id->rq_psn;
	req.retry_count = id->retry_count;
	req.rnr_retry_count = id->rnr_retry_count;
	req.pkey = 0xFFFF;
	req.path_mtu = id->path_mtu;
	req.primary.local_lid = req.primary.remote_lid = 0xFFFF;
	memcpy(req.primary.local_gid, dev->gid.raw, 16);
	memcpy(req.primary.remote_gid, id->id.route.addr.addr.ibaddr.dgid.raw, 16);
	req.primary.traffic_class = id->tos;
	req.primary.hop_limit = 64;
	req.primary.subnet_local = true;
	req.primary.local_ack_timeout = id->ack_timeout ? id->ack_timeout :
							  CMA_DEFAULT_ACK_TIMEOUT;
	if (has_hdr(id)) {
		write_hdr(id, pd);
		pd += CMA_HDR_LEN;
	}
	if (param->private_data_len)
		memcpy(pd, param->private_data, param->private_data_len);
	memcpy(to.gid, req.primary.remote_gid, 16);
	to.traffic_class = id->tos;

	pthread_mutex_lock(&dev->lock);
	id->cm = cm_id_create(dev->cm, id);
	if (id->cm)
		cm_id_report_timewait(id->cm);
	ret = id->cm ? cm_send_req(id->cm, &to, &req) : ENOMEM;
	if (ret && id->cm) {
		cm_id_destroy(id->cm);
		id->cm = NULL;
	}
	if (!ret)
		id->state = CMA_CONNECT;
	pthread_mutex_unlock(&dev->lock);
	cma_dev_wake(dev);
	if (ret)
		return cma_ret(ret);
	return cma_ret(cma_sync_wait(id, RDMA_CM_EVENT_ESTABLISHED));
}

CMA_EXPORT int rdma_accept(struct rdma_cm_id *cmid,
			   struct rdma_conn_param *param)
{
	struct cma_id *id = to_cma(cmid);
	struct cm_rep rep = { 0 };
	int ret;

	if (!id || id->state != CMA_CONNECT_REQ || !id->cm)
		return cma_ret(EINVAL);
	if (param) {
		ret = check_pdata(id, param->private_data,
				  param->private_data_len, CM_REP_PDATA);
		if (ret)
			return cma_ret(ret);
		/* RDMA_MAX_RESP_RES / RDMA_MAX_INIT_DEPTH: as many as may be */
		id->responder_resources = min_u8(id->responder_resources,
						 param->responder_resources);
		id->initiator_depth = min_u8(id->initiator_depth,
					     param->initiator_depth);
	}
	if (!id->id.qp && (!param || !param->qp_num))
		return cma_ret(EINVAL);
	pthread_mutex_lock(&id->dev->lock);
	if (id->id.qp) {
		ret = qp_to_rts(id);
		if (ret) {
			pthread_mutex_unlock(&id->dev->lock);
			return cma_ret(ret);
		}
	}
	rep.local_qpn = id->id.qp ? id->id.qp->qp_num : param->qp_num;
	rep.starting_psn = id->rq_psn;
	rep.responder_resources = id->responder_resources;
	rep.initiator_depth = id->initiator_depth;
	rep.rnr_retry_count = param ? min_u8(param->rnr_retry_count, 7) : 7;
	rep.e2e_flow_control = param && param->flow_control;
	if (param && param->private_data_len)
		memcpy(rep.pdata, param->private_data, param->private_data_len);
	ret = cm_send_rep(id->cm, &rep);
	if (!ret)
		id->state = CMA_ACCEPTED;
	pthread_mutex_unlock(&id->dev->lock);
	cma_dev_wake(id->dev);
	if (ret) {
		qp_to_err(id);
		return cma_ret(ret);
	}
	return cma_ret(cma_sync_wait(id, RDMA_CM_EVENT_ESTABLISHED));
}

CMA_EXPORT int rdma_reject(struct rdma_cm_id *cmid, const void *private_data,
			   uint8_t private_data_len)
{
	struct cma_id *id = to_cma(cmid);
	int ret;

	if (!id || !id->cm ||
	    (id->state != CMA_CONNECT_REQ && id->state != CMA_CONNECT))
		return cma_ret(EINVAL);
	ret = check_pdata(id, private_data, private_data_len, CM_REJ_PDATA);
	if (ret)
		return cma_ret(ret);
	pthread_mutex_lock(&id->dev->lock);
	ret = cm_send_rej(id->cm, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
			  private_data, private_data_len);
	if (!ret)
		id->state = CMA_DISCONNECT;
	pthread_mutex_unlock(&id->dev->lock);
	cma_dev_wake(id->dev);
	return cma_ret(ret);
}

CMA_EXPORT int rdma_reject_ece(struct rdma_cm_id *cmid, const void *private_data,
			       uint8_t private_data_len)
{
	return rdma_reject(cmid, private_data, private_data_len);
}

CMA_EXPORT int rdma_establish(struct rdma_cm_id *cmid)
{
	struct cma_id *id = to_cma(cmid);
	int ret;

	if (!id || !id->cm || id->state != CMA_CONNECT)
		return cma_ret(EINVAL);
	pthread_mutex_lock(&id->dev->lock);
	ret = cm_send_rtu(id->cm, NULL, 0);
	if (!ret)
		id->state = CMA_ESTABLISHED;
	pthread_mutex_unlock(&id->dev->lock);
	return cma_ret(ret);
}

CMA_EXPORT int rdma_notify(struct rdma_cm_id *cmid, enum ibv_event_type event)
{
	/* IBV_EVENT_COMM_EST: the CM's REP retransmission brings the RTU
	 * again; nothing to do. */
	(void)event;
	return cma_ret(cmid ? 0 : EINVAL);
}

CMA_EXPORT int rdma_disconnect(struct rdma_cm_id *cmid)
{
	struct cma_id *id = to_cma(cmid);
	bool sent = false;
	int ret = 0;

	if (!id || !id->cm)
		return cma_ret(EINVAL);
	qp_to_err(id);
	pthread_mutex_lock(&id->dev->lock);
	switch (cm_id_state(id->cm)) {
	case CM_ESTABLISHED:
		ret = cm_send_dreq(id->cm, NULL, 0);
		sent = !ret;
		if (sent)
			id->state = CMA_DISCONNECT;
		break;
	case CM_DREQ_SENT:
	case CM_TIMEWAIT:
	case CM_CLOSED:
		break;	/* disconnected already, or on its way */
	default:
		ret = EINVAL;
		break;
	}
	pthread_mutex_unlock(&id->dev->lock);
	cma_dev_wake(id->dev);
	if (ret)
		return cma_ret(ret);
	return cma_ret(sent ? cma_sync_wait(id, RDMA_CM_EVENT_DISCONNECTED) : 0);
}
