// SPDX-License-Identifier: MIT
/*
 * QPs on ids and endpoints: rdma_create_qp() makes the QP on the id's
 * device (with a PD and CQs of the library's when the application gives
 * none) and takes it to INIT; the connection takes it on from there
 * (cma_conn.c). rdma_create_ep() is the synchronous shorthand of
 * rdma_getaddrinfo()'s result: an id, its address and route, its QP.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cma.h"

/* The device's PD, made when the device was started (cma_dev.c). */
static struct ibv_pd *default_pd(struct cma_dev *dev)
{
	return dev->pd;
}

static void destroy_own_cqs(struct cma_id *id)
{
	struct rdma_cm_id *c = &id->id;

	if (id->own_cqs & CMA_OWN_SEND) {
		ibv_destroy_cq(c->send_cq);
		ibv_destroy_comp_channel(c->send_cq_channel);
		c->send_cq = NULL;
		c->send_cq_channel = NULL;
	}
	if (id->own_cqs & CMA_OWN_RECV) {
		ibv_destroy_cq(c->recv_cq);
		ibv_destroy_comp_channel(c->recv_cq_channel);
		c->recv_cq = NULL;
		c->recv_cq_channel = NULL;
	}
	id->own_cqs = 0;
}

/* A CQ with its completion channel, as librdmacm makes one for a QP the
 * application gave none: 0 or errno. */
static int own_cq(struct cma_id *id, struct ibv_comp_channel **ch,
		  struct ibv_cq **cq, uint32_t depth)
{
	*ch = id->dev->dv.create_comp_channel(id->id.verbs);
	if (!*ch)
		return errno ? errno : ENOMEM;
	*cq = ibv_create_cq(id->id.verbs, (int)(depth ? depth : 1), &id->id,
			    *ch, 0);
	if (!*cq) {
		int ret = errno ? errno : ENOMEM;

		ibv_destroy_comp_channel(*ch);
		*ch = NULL;
		return ret;
	}
	return 0;
}

static int own_cqs(struct cma_id *id, struct ibv_cq **send_cq,
		   struct ibv_cq **recv_cq, uint32_t send_wr, uint32_t recv_wr)
{
	struct rdma_cm_id *c = &id->id;
	int ret;

	if (!*recv_cq) {
		ret = own_cq(id, &c->recv_cq_channel, &c->recv_cq, recv_wr);
		if (ret)
			return ret;
		id->own_cqs |= CMA_OWN_RECV;
		*recv_cq = c->recv_cq;
	}
	if (!*send_cq) {
		ret = own_cq(id, &c->send_cq_channel, &c->send_cq, send_wr);
		if (ret) {
			destroy_own_cqs(id);
			return ret;
		}
		id->own_cqs |= CMA_OWN_SEND;
		*send_cq = c->send_cq;
	}
	c->send_cq = *send_cq;
	c->recv_cq = *recv_cq;
	return 0;
}

static int finish_qp(struct cma_id *id, struct ibv_qp *qp, struct ibv_pd *pd)
{
	int ret;

	if (!qp) {
		ret = errno ? errno : EINVAL;
		destroy_own_cqs(id);
		return ret;
	}
	id->id.qp = qp;
	id->id.pd = pd;
	ret = cma_qp_to_init(id);
	if (ret) {
		ibv_destroy_qp(qp);
		id->id.qp = NULL;
		destroy_own_cqs(id);
	}
	return ret;
}

static int check_for_qp(struct cma_id *id, struct ibv_pd **pd)
{
	if (!id->dev || id->id.qp)
		return EINVAL;	/* no address resolved or bound yet; or twice */
	if (!*pd)
		*pd = id->id.pd ? id->id.pd : default_pd(id->dev);
	if (!*pd)
		return ENOMEM;
	if ((*pd)->context != id->id.verbs) {
		cma_err("rdma_create_qp: the PD is of another device than the id");
		return EINVAL;
	}
	return 0;
}

/* Both entry points: the QP on the id's device, with the library's PD
 * and CQs where a has none, taken to INIT. a is updated (cap, CQs). */
static int create_qp(struct cma_id *id, struct ibv_qp_init_attr_ex *a,
		     const char *who)
{
	struct ibv_pd *pd;
	int ret;

	/* 0 is no QP type: the id's (RC), as librdmacm takes it. */
	if (a->qp_type && a->qp_type != IBV_QPT_RC) {
		cma_err("%s: ERNIC has only RC QPs", who);
		return EOPNOTSUPP;
	}
	pd = a->comp_mask & IBV_QP_INIT_ATTR_PD ? a->pd : NULL;
	ret = check_for_qp(id, &pd);
	if (ret)
		return ret;
	a->qp_type = IBV_QPT_RC;
	a->pd = pd;
	a->comp_mask |= IBV_QP_INIT_ATTR_PD;
	ret = own_cqs(id, &a->send_cq, &a->recv_cq, a->cap.max_send_wr,
		      a->cap.max_recv_wr);
	if (ret)
		return ret;
	return finish_qp(id, ibv_create_qp_ex(id->id.verbs, a), pd);
}

CMA_EXPORT int rdma_create_qp(struct rdma_cm_id *cmid, struct ibv_pd *pd,
			      struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex a = { 0 };
	int ret;

	if (!cmid || !attr)
		return cma_ret(EINVAL);
	/* struct ibv_qp_init_attr_ex begins with ibv_qp_init_attr's fields. */
	_Static_assert(offsetof(struct ibv_qp_init_attr_ex, sq_sig_all) ==
			       offsetof(struct ibv_qp_init_attr, sq_sig_all),
		       "ibv_qp_init_attr_ex no longer extends ibv_qp_init_attr");
	memcpy(&a, attr, sizeof(*attr));
	a.pd = pd;
	a.comp_mask = pd ? IBV_QP_INIT_ATTR_PD : 0;
	ret = create_qp(to_cma(cmid), &a, "rdma_create_qp");
	if (!ret) {
		attr->cap = a.cap;
		attr->send_cq = a.send_cq;
		attr->recv_cq = a.recv_cq;
	}
	return cma_ret(ret);
}

CMA_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *cmid,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_init_attr_ex a;
	int ret;

	if (!cmid || !attr)
		return cma_ret(EINVAL);
	a = *attr;
	ret = create_qp(to_cma(cmid), &a, "rdma_create_qp_ex");
	if (!ret)
		attr->cap = a.cap;
	return cma_ret(ret);
}

CMA_EXPORT void rdma_destroy_qp(struct rdma_cm_id *cmid)
{
	struct cma_id *id = to_cma(cmid);

	if (!id || !id->id.qp)
		return;
	ibv_destroy_qp(id->id.qp);
	id->id.qp = NULL;
	destroy_own_cqs(id);
}

CMA_EXPORT int rdma_create_ep(struct rdma_cm_id **out,
			      struct rdma_addrinfo *res, struct ibv_pd *pd,
			      struct ibv_qp_init_attr *qp_init_attr)
{
	enum rdma_port_space ps;
	struct rdma_cm_id *cmid;
	struct cma_id *id;
	int ret;

	if (!out || !res)
		return cma_ret(EINVAL);
	if (res->ai_qp_type && res->ai_qp_type != IBV_QPT_RC) {
		cma_err("rdma_create_ep: ERNIC has only RC QPs");
		return cma_ret(EOPNOTSUPP);
	}
	ps = res->ai_port_space ? (enum rdma_port_space)res->ai_port_space :
				  RDMA_PS_TCP;
	if (rdma_create_id(NULL, &cmid, NULL, ps))
		return -1;
	id = to_cma(cmid);
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cmid, res->ai_src_addr))
			goto err;
		cmid->pd = pd;
		if (qp_init_attr) {
			id->ep_attr = malloc(sizeof(*id->ep_attr));
			if (!id->ep_attr) {
				errno = ENOMEM;
				goto err;
			}
			*id->ep_attr = *qp_init_attr;
		}
		*out = cmid;
		return 0;
	}
	if (rdma_resolve_addr(cmid, res->ai_src_addr, res->ai_dst_addr, 2000) ||
	    rdma_resolve_route(cmid, 2000))
		goto err;
	if (qp_init_attr && rdma_create_qp(cmid, pd, qp_init_attr))
		goto err;
	*out = cmid;
	return 0;
err:
	ret = errno;
	rdma_destroy_id(cmid);
	return cma_ret(ret);
}

CMA_EXPORT void rdma_destroy_ep(struct rdma_cm_id *cmid)
{
	if (!cmid)
		return;
	rdma_destroy_qp(cmid);
	rdma_destroy_id(cmid);
}
