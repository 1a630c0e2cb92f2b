// SPDX-License-Identifier: MIT
/*
 * The RC QP state machine and what each transition writes, following
 * PG332 ch.6 "RC QP Creation" (queues at INIT, connection at RTR/RTS)
 * and "QP Deletion" (->RESET). Every attribute is checked before the
 * first register write, so a refused call changes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "ernic.h"
#include "ernic_net.h"

/* IBTA opcode RC SEND_ONLY: "previous message complete" for LSTRQREQ. */
#define ERNIC_IB_OPC_RC_SEND_ONLY 0x04
#define ERNIC_DEFAULT_TTL 64

#define Q(x) IBV_QP_##x
struct qp_trans {
	bool ok;
	int req;
	int opt;
};

/* Required and optional attributes per transition (IBTA 11.2.5.2), less
 * what ERNIC lacks: alternate paths, SQD, UD/UC attributes. */
static const struct qp_trans qp_trans[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = { .ok = true },
		[IBV_QPS_ERR] = { .ok = true },
		[IBV_QPS_INIT] = { .ok = true,
				   .req = Q(PKEY_INDEX) | Q(PORT) | Q(ACCESS_FLAGS) },
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = { .ok = true },
		[IBV_QPS_ERR] = { .ok = true },
		[IBV_QPS_INIT] = { .ok = true,
				   .opt = Q(PKEY_INDEX) | Q(PORT) | Q(ACCESS_FLAGS) },
		[IBV_QPS_RTR] = { .ok = true,
				  .req = Q(AV) | Q(PATH_MTU) | Q(DEST_QPN) |
					 Q(RQ_PSN) | Q(MAX_DEST_RD_ATOMIC) |
					 Q(MIN_RNR_TIMER),
				  .opt = Q(ACCESS_FLAGS) | Q(PKEY_INDEX) },
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = { .ok = true },
		[IBV_QPS_ERR] = { .ok = true },
		[IBV_QPS_RTS] = { .ok = true,
				  .req = Q(TIMEOUT) | Q(RETRY_CNT) | Q(RNR_RETRY) |
					 Q(SQ_PSN) | Q(MAX_QP_RD_ATOMIC),
				  .opt = Q(ACCESS_FLAGS) | Q(MIN_RNR_TIMER) },
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = { .ok = true },
		[IBV_QPS_ERR] = { .ok = true },
		[IBV_QPS_RTS] = { .ok = true,
				  .opt = Q(ACCESS_FLAGS) | Q(MIN_RNR_TIMER) },
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = { .ok = true },
		[IBV_QPS_ERR] = { .ok = true },
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = { .ok = true },
		[IBV_QPS_ERR] = { .ok = true },
	},
};
#undef Q

/* Everything modify_qp needs, computed before touching a register. */
struct rtr_plan {
	struct ernic_ip dst;
	uint8_t mac[6];
};

static int check_av(struct ernic_dev *dev, const struct ibv_ah_attr *ah,
		    struct rtr_plan *plan)
{
	static const uint8_t zero[16];

	/* RoCEv2 needs the GRH: it carries the peer's IP address. */
	if (!ah->is_global || ah->port_num != 1 ||
	    ah->grh.sgid_index != 0 ||
	    !memcmp(ah->grh.dgid.raw, zero, sizeof(zero)))
		return EINVAL;
	ernic_gid_to_ip(ah->grh.dgid.raw, &plan->dst);
	/* One local address per ERNIC: its family is the QP's. */
	if (plan->dst.family != dev->conf.family)
		return EINVAL;
	return 0;
}

static int bad_attr(uint32_t qpn, const char *what)
{
	return ernic_refuse(EINVAL, "modify_qp: QP %u: bad %s", qpn, what);
}

static int check_attrs(struct ernic_dev *dev, uint32_t qpn,
		       const struct ibv_qp_attr *a, int mask,
		       struct rtr_plan *plan)
{
	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		return bad_attr(qpn, "port");
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
		return bad_attr(qpn, "pkey_index");
	/* Remote atomic as the kernel takes it on a device without atomics:
	 * allowed, and no atomic request ever arrives (the IP NAKs them). */
	if ((mask & IBV_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~(IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC)))
		return bad_attr(qpn, "access_flags");
	/* A packet bigger than the link carries would never arrive. */
	if ((mask & IBV_QP_PATH_MTU) &&
	    (a->path_mtu < IBV_MTU_256 || a->path_mtu > ernic_active_mtu(dev)))
		return bad_attr(qpn, "path_mtu");
	if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > ERNIC_DESTQPCONF_QPN)
		return bad_attr(qpn, "dest_qpn");
	if ((mask & IBV_QP_RQ_PSN) && a->rq_psn > ERNIC_PSN_MASK)
		return bad_attr(qpn, "rq_psn");
	if ((mask & IBV_QP_SQ_PSN) && a->sq_psn > ERNIC_PSN_MASK)
		return bad_attr(qpn, "sq_psn");
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > ERNIC_MAX_RD_ATOM)
		return bad_attr(qpn, "max_dest_rd_atomic");
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
	    a->max_rd_atomic > ERNIC_MAX_RD_ATOM)
		return bad_attr(qpn, "max_qp_rd_atomic");
	if ((mask & IBV_QP_MIN_RNR_TIMER) &&
	    !ERNIC_FIELD_FITS(ERNIC_TIMEOUTCONF_RNR_NAK_TIMEOUT,
			      a->min_rnr_timer))
		return bad_attr(qpn, "min_rnr_timer");
	/* IBTA timeouts are 5 bits even though TIMEOUTCONF[5:0] has 6. */
	if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
		return bad_attr(qpn, "timeout");
	if ((mask & IBV_QP_RETRY_CNT) &&
	    !ERNIC_FIELD_FITS(ERNIC_TIMEOUTCONF_RETRY_CNT, a->retry_cnt))
		return bad_attr(qpn, "retry_cnt");
	if ((mask & IBV_QP_RNR_RETRY) &&
	    !ERNIC_FIELD_FITS(ERNIC_TIMEOUTCONF_RNR_RETRY_CNT, a->rnr_retry))
		return bad_attr(qpn, "rnr_retry");
	if ((mask & IBV_QP_AV) && check_av(dev, &a->ah_attr, plan))
		return bad_attr(qpn, "ah_attr (RoCEv2: GRH, port 1, sgid 0, "
				"a destination of the device's family)");
	return 0;
}

/* RC QP Creation steps 1-2 plus the QP's PD (step h): done on entering
 * INIT, since ->RESET cleared them (QP Deletion step 4). */
static void program_queues(struct ernic_dev *dev, struct ernic_qp *qp)
{
	struct ernic_access *acc = dev->acc;
	const uint32_t i = qp->idx;

	/* Fresh rings: nothing produced, nothing completed. */
	memset(qp->sq.va, 0, qp->sq.len);
	memset(qp->cq.va, 0, qp->cq.len);
	ernic_dma_sync(acc, qp->sq.va, qp->sq.len, ERNIC_DMA_TO_DEVICE);
	ernic_dma_sync(acc, qp->cq.va, qp->cq.len, ERNIC_DMA_TO_DEVICE);
	ernic_qp_db_clear(dev, i);

	ernic_wr64(acc, ERNIC_QP(i, ERNIC_RQBA), ERNIC_QP(i, ERNIC_RQBAMSB),
		   qp->rq.bus);
	ernic_wr64(acc, ERNIC_QP(i, ERNIC_SQBA), ERNIC_QP(i, ERNIC_SQBAMSB),
		   qp->sq.bus);
	/* QDEPTH RQ is the element ring (ernic_qp.c), not max_recv_wr. */
	ernic_wr(acc, ERNIC_QP(i, ERNIC_QDEPTH),
		 ERNIC_FIELD_PREP(ERNIC_QDEPTH_SQ, qp->sq_depth) |
			 ERNIC_FIELD_PREP(ERNIC_QDEPTH_RQ, qp->rq_depth));
	ernic_wr64(acc, ERNIC_QP(i, ERNIC_CQBA), ERNIC_QP(i, ERNIC_CQBAMSB),
		   qp->cq.bus);
	qp->qpconf = ERNIC_QPCONF_HW_HANDSHAKE_DIS | ERNIC_QPCONF_CQE_WRITE_EN |
		     ernic_qp_int_bits(qp) |
		     ERNIC_FIELD_PREP(ERNIC_QPCONF_RQ_BUF_SIZE,
				      ERNIC_RQ_ELEM_SIZE / ERNIC_RQ_BUF_UNIT);
	ernic_wr(acc, ERNIC_QP(i, ERNIC_QPCONF), qp->qpconf);
	ernic_wr64(acc, ERNIC_QP(i, ERNIC_CQDBADD), ERNIC_QP(i, ERNIC_CQDBADDMSB),
		   ernic_cq_db_bus(dev, i));
	ernic_wr64(acc, ERNIC_QP(i, ERNIC_RQWPTRDBADD),
		   ERNIC_QP(i, ERNIC_RQWPTRDBADDMSB), ernic_rq_db_bus(dev, i));
	ernic_wr(acc, ERNIC_QP(i, ERNIC_PD),
		 ERNIC_FIELD_PREP(ERNIC_PD_PDNUM, to_epd(qp->vqp.qp.pd)->pdn));
	ernic_rq_reset_hw(dev, qp);
}

static uint32_t timeoutconf(const struct ibv_qp_attr *a)
{
	return ERNIC_FIELD_PREP(ERNIC_TIMEOUTCONF_TIMEOUT, a->timeout) |
	       ERNIC_FIELD_PREP(ERNIC_TIMEOUTCONF_RETRY_CNT, a->retry_cnt) |
	       ERNIC_FIELD_PREP(ERNIC_TIMEOUTCONF_RNR_RETRY_CNT, a->rnr_retry) |
	       ERNIC_FIELD_PREP(ERNIC_TIMEOUTCONF_RNR_NAK_TIMEOUT,
				a->min_rnr_timer);
}

/* RC QP Creation step 3 a-h, then QP enable. */
static void program_rtr(struct ernic_dev *dev, struct ernic_qp *qp,
			const struct ibv_qp_attr *a, const struct rtr_plan *p)
{
	struct ernic_access *acc = dev->acc;
	const uint32_t i = qp->idx;
	const struct ibv_global_route *grh = &a->ah_attr.grh;
	bool v6 = p->dst.family == AF_INET6;
	uint32_t lsb, msb, ip[4];

	ernic_mac_to_regs(p->mac, &lsb, &msb);
	ernic_wr(acc, ERNIC_QP(i, ERNIC_MACDESADDLSB), lsb);
	ernic_wr(acc, ERNIC_QP(i, ERNIC_MACDESADDMSB), msb);
	ernic_wr(acc, ERNIC_QP(i, ERNIC_DESTQPCONF),
		 ERNIC_FIELD_PREP(ERNIC_DESTQPCONF_QPN, a->dest_qp_num));
	/* IPv4 uses IPDESADDR1 only; the other three are cleared. */
	ernic_ip_to_regs(v6, p->dst.addr, ip);
	for (int w = 0; w < 4; w++)
		ernic_wr(acc, ERNIC_QP(i, ERNIC_IPDESADDR1) + 4 * w, ip[w]);
	qp->qpconf &= ~(ERNIC_QPCONF_IPV6 | ERNIC_QPCONF_PMTU);
	qp->qpconf |= (v6 ? ERNIC_QPCONF_IPV6 : 0) |
		      ERNIC_FIELD_PREP(ERNIC_QPCONF_PMTU,
				       a->path_mtu - IBV_MTU_256);
	ernic_wr(acc, ERNIC_QP(i, ERNIC_QPCONF), qp->qpconf);
	/* The last request "received" is the one before the first PSN. */
	ernic_wr(acc, ERNIC_QP(i, ERNIC_LSTRQREQ),
		 ERNIC_FIELD_PREP(ERNIC_LSTRQREQ_PSN,
				  (a->rq_psn - 1) & ERNIC_PSN_MASK) |
			 ERNIC_FIELD_PREP(ERNIC_LSTRQREQ_OPCODE,
					  ERNIC_IB_OPC_RC_SEND_ONLY));
	/* QPADVCONF: DSCP from the traffic class, TTL from the hop limit. */
	ernic_wr(acc, ERNIC_QP(i, ERNIC_QPADVCONF),
		 ERNIC_FIELD_PREP(ERNIC_QPADVCONF_TRAFFIC_CLASS,
				  grh->traffic_class >> 2) |
			 ERNIC_FIELD_PREP(ERNIC_QPADVCONF_TTL,
					  grh->hop_limit ? grh->hop_limit :
							   ERNIC_DEFAULT_TTL) |
			 ERNIC_FIELD_PREP(ERNIC_QPADVCONF_PKEY,
					  ERNIC_PKEY_DEFAULT));
	ernic_wr(acc, ERNIC_QP(i, ERNIC_TIMEOUTCONF), timeoutconf(a));
	qp->qpconf |= ERNIC_QPCONF_QP_EN;
	ernic_wr(acc, ERNIC_QP(i, ERNIC_QPCONF), qp->qpconf);
	ernic_qp_hw_enabled(dev, i);
}

/* Merge the attributes named in mask into the shadow copy. */
static void shadow_update(struct ibv_qp_attr *s, const struct ibv_qp_attr *a,
			  int mask)
{
	if (mask & IBV_QP_STATE)
		s->qp_state = a->qp_state;
	if (mask & IBV_QP_ACCESS_FLAGS)
		s->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_PKEY_INDEX)
		s->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT)
		s->port_num = a->port_num;
	if (mask & IBV_QP_AV)
		s->ah_attr = a->ah_attr;
	if (mask & IBV_QP_PATH_MTU)
		s->path_mtu = a->path_mtu;
	if (mask & IBV_QP_TIMEOUT)
		s->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		s->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		s->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_RQ_PSN)
		s->rq_psn = a->rq_psn;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		s->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		s->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_SQ_PSN)
		s->sq_psn = a->sq_psn;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		s->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_DEST_QPN)
		s->dest_qp_num = a->dest_qp_num;
}

int ernic_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct ernic_qp *qp = to_eqp(ibqp);
	struct ernic_dev *dev = ctx_dev(ibqp->context);
	const int known = IBV_QP_STATE | IBV_QP_CUR_STATE |
			  IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER |
			  IBV_QP_SQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_DEST_QPN;
	struct rtr_plan plan = {};
	struct ibv_qp_attr m;
	enum ibv_qp_state cur, next;
	const struct qp_trans *t;
	int attrs, ret;

	if (mask & ~known)
		return ernic_refuse(EINVAL, "modify_qp: QP %u: attr_mask 0x%x "
				    "not supported", to_eqp(ibqp)->idx,
				    mask & ~known);
	/* A gone device takes nothing but the way out: ERR, RESET. */
	if (!(mask & IBV_QP_STATE) || (attr->qp_state != IBV_QPS_ERR &&
				       attr->qp_state != IBV_QPS_RESET)) {
		ret = ernic_lost_refuse(dev, "modify_qp");
		if (ret)
			return ret;
	}

	pthread_mutex_lock(&dev->lock);
	cur = qp->attr.qp_state;
	next = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
	ret = EINVAL;
	if ((unsigned int)next > IBV_QPS_ERR) {
		ernic_refuse(ret, "modify_qp: QP %u: qp_state %d", qp->idx,
			     next);
		goto out;
	}
	if ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		ernic_refuse(ret, "modify_qp: QP %u: cur_qp_state %d, is %d",
			     qp->idx, attr->cur_qp_state, cur);
		goto out;
	}
	t = &qp_trans[cur][next];
	attrs = mask & ~(IBV_QP_STATE | IBV_QP_CUR_STATE);
	if (!t->ok || (attrs & t->req) != t->req ||
	    (attrs & ~(t->req | t->opt))) {
		ernic_refuse(ret, "modify_qp: QP %u: %d -> %d with attr_mask "
			     "0x%x (%s)", qp->idx, cur, next, attrs,
			     !t->ok ? "no such transition" :
			     (attrs & t->req) != t->req ? "required missing" :
							  "not allowed");
		goto out;
	}
	ret = check_attrs(dev, qp->idx, attr, attrs, &plan);
	if (!ret && (attrs & IBV_QP_AV))
		ret = ernic_peer_mac(dev, &plan.dst, plan.mac, "modify_qp");
	if (ret)
		goto out;

	/* Validated: from here on the call succeeds, unless the IP never
	 * finishes a fatal recovery. m is the QP's attribute set as it will
	 * be after this call. */
	m = qp->attr;
	shadow_update(&m, attr, mask);
	if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT) {
		program_queues(dev, qp);
	} else if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR) {
		program_rtr(dev, qp, &m, &plan);
	} else if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS) {
		ernic_wr(dev->acc, ERNIC_QP(qp->idx, ERNIC_SQPSN),
			 ERNIC_FIELD_PREP(ERNIC_SQPSN_PSN, m.sq_psn));
		ernic_wr(dev->acc, ERNIC_QP(qp->idx, ERNIC_TIMEOUTCONF),
			 timeoutconf(&m));
	} else if (cur == IBV_QPS_RTS && next == IBV_QPS_RTS &&
		   (attrs & IBV_QP_MIN_RNR_TIMER)) {
		ernic_wr(dev->acc, ERNIC_QP(qp->idx, ERNIC_TIMEOUTCONF),
			 timeoutconf(&m));
	} else if (next == IBV_QPS_ERR && cur != IBV_QPS_RESET &&
		   cur != IBV_QPS_ERR) {
		/* The IP has no error state. One it made FATAL goes through
		 * PG332's clearing steps (it retires the SQ, then is
		 * disabled); any other is disabled at once, which stops it
		 * taking packets. The provider flushes what is queued. An
		 * IP that never finishes the clearing leaves it to RESET. */
		qp->qpconf &= ~ERNIC_QPCONF_QP_EN;
		if (ernic_rd(dev->acc, ERNIC_QP(qp->idx, ERNIC_STATQP)) &
		    ERNIC_STATQP_FATAL)
			ernic_qp_fatal_clear(dev, qp->idx);
		else
			ernic_wr(dev->acc, ERNIC_QP(qp->idx, ERNIC_QPCONF),
				 qp->qpconf);
	} else if (next == IBV_QPS_RESET && cur != IBV_QPS_RESET) {
		if (ernic_qp_hw_reset(dev, qp->idx)) {
			ret = ernic_refuse(EIO, "modify_qp: QP %u: the IP did "
					   "not finish PG332's fatal recovery "
					   "(logged); the QP stays in %d",
					   qp->idx, cur);
			goto out;
		}
		memset(&m, 0, sizeof(m));
		pthread_mutex_lock(&dev->ev_lock);
		qp->fatal_code = 0;
		pthread_mutex_unlock(&dev->ev_lock);
	}
	qp->attr = m;
	ernic_qp_dp_state(qp, next, &m);
out:
	pthread_mutex_unlock(&dev->lock);
	if (!ret && next == IBV_QPS_ERR && cur != IBV_QPS_ERR &&
	    cur != IBV_QPS_RESET)
		ernic_events_qp_flushed(dev, qp);
	return ret;
}
