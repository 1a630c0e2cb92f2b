// SPDX-License-Identifier: MIT
/*
 * ernicdv_qp_hw_offload: a QP's SQ, CQ and RQ doorbells handed to user
 * logic on the IP's HW handshake ports, in PG332 ch.6 "Enabling QP HW
 * Offload" order. From then on the provider posts nothing on the QP
 * and polls none of its completions (man ernicdv(3)).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ernic.h"
#include "ernic_cq.h"
#include "ernic_recover.h"
#include "ernicdv.h"

/* How long CON_IO_CONF[31] may stay clear before ringing another QP. */
#define OFFLOAD_READY_MS 100

#define KNOWN_FLAGS ERNICDV_QP_HW_OFFLOAD_NO_CON_IO

static const char *state_name(enum ibv_qp_state s)
{
	static const char *const n[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR",	   [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD",	   [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	return (unsigned int)s < sizeof(n) / sizeof(n[0]) && n[s] ? n[s] : "?";
}

/* The caller's attr: known fields in, bytes past them zero. */
static int attr_check(const struct ernicdv_qp_hw_offload_attr *attr,
		      size_t inlen)
{
	const size_t known = sizeof(*attr);

	if (!attr || inlen < known)
		return ernic_refuse(EINVAL, "ernicdv_qp_hw_offload: attr "
				    "NULL or inlen %zu too short", inlen);
	for (size_t k = known; k < inlen; k++)
		if (((const uint8_t *)attr)[k])
			return ernic_refuse(EINVAL, "ernicdv_qp_hw_offload: "
					    "attr byte %zu past what this "
					    "library knows is not 0", k);
	if (attr->comp_mask)
		return ernic_refuse(EINVAL, "ernicdv_qp_hw_offload: comp_mask "
				    "0x%llx unknown",
				    (unsigned long long)attr->comp_mask);
	if (attr->flags & ~(uint32_t)KNOWN_FLAGS)
		return ernic_refuse(EINVAL, "ernicdv_qp_hw_offload: flags "
				    "0x%x unknown", attr->flags);
	return 0;
}

/* What the QP is and has: refusals that need no queue lock. */
static int qp_check(struct ernic_dev *dev, struct ernic_qp *qp)
{
	const char *sim = getenv("ERNIC_MODEL_HNDSHK");
	enum ibv_qp_state st = qp->attr.qp_state;

	if (qp->vqp.qp.qp_type != IBV_QPT_RC)
		return ernic_refuse(EINVAL, "ernicdv_qp_hw_offload: QP %u is "
				    "not RC", qp->idx);
	if (atomic_load(&qp->hw_offload))
		return ernic_refuse(EALREADY, "ernicdv_qp_hw_offload: QP %u "
				    "is offloaded already", qp->idx);
	/* A software ERNIC has no user logic but a test playing it on
	 * the model's ports (ERNIC_MODEL_HNDSHK=1). */
	if (dev->conf.backend == ERNIC_BACKEND_SW && !(sim && !strcmp(sim, "1")))
		return ernic_refuse(EOPNOTSUPP, "ernicdv_qp_hw_offload: QP %u: "
				    "a software device has no user logic on "
				    "its handshake ports (a test sets "
				    "ERNIC_MODEL_HNDSHK=1)", qp->idx);
	if ((st != IBV_QPS_RTR && st != IBV_QPS_RTS) || atomic_load(&qp->err) ||
	    (ernic_rd(dev->acc, ERNIC_QP(qp->idx, ERNIC_STATQP)) &
	     ERNIC_STATQP_FATAL))
		return ernic_refuse(EINVAL, "ernicdv_qp_hw_offload: QP %u is "
				    "in %s%s: it needs RTR or RTS", qp->idx,
				    state_name(st),
				    atomic_load(&qp->err) ? " (in error)" : "");
	return 0;
}

/* PG332 ch.1: "the upper layer should not have any traffic on that
 * particular QP". Caller holds both queue locks. */
static int traffic_check(struct ernic_dev *dev, struct ernic_qp *qp)
{
	struct ernic_access *acc = dev->acc;
	const uint32_t i = qp->idx, empty = ERNIC_STATQP_SQ_EMPTY |
					    ERNIC_STATQP_OSQ_EMPTY;
	uint32_t st = ernic_rd(acc, ERNIC_QP(i, ERNIC_STATQP));
	uint32_t pi = ernic_rd(acc, ERNIC_QP(i, ERNIC_SQPI)) & 0xFFFF;
	uint32_t head = ernic_rd(acc, ERNIC_QP(i, ERNIC_CQHEAD)) & 0xFFFF;
	uint32_t wp = ernic_rd(acc, ERNIC_QP(i, ERNIC_STATRQPIDB)) & 0xFFFF;

	if (qp->sq_ci != qp->sq_pi)
		return ernic_refuse(EBUSY, "ernicdv_qp_hw_offload: QP %u: %u "
				    "send WQEs not completed and polled",
				    i, ernic_ring_dist(qp->sq_ci, qp->sq_pi,
						       qp->sq_depth));
	if ((st & empty) != empty || pi != head)
		return ernic_refuse(EBUSY, "ernicdv_qp_hw_offload: QP %u: the "
				    "IP is still sending (STATQPi 0x%08x, "
				    "SQPIi %u, CQHEADi %u)", i, st, pi, head);
	if (qp->rwqe_ci != qp->rwqe_pi)
		return ernic_refuse(EBUSY, "ernicdv_qp_hw_offload: QP %u: %u "
				    "receive requests outstanding", i,
				    qp->rwqe_pi - qp->rwqe_ci);
	if (wp != qp->rq_ci || qp->msg_active)
		return ernic_refuse(EBUSY, "ernicdv_qp_hw_offload: QP %u: "
				    "received data not read (RQ write "
				    "pointer %u, next element %u)", i, wp,
				    qp->rq_ci);
	return 0;
}

/* "Enabling QP HW Offload" steps 1-5, and CON_IO_CONF. XRNICADCONF's
 * override is the IP's: the caller has the shared IP's turn. */
static void hand_over(struct ernic_dev *dev, struct ernic_qp *qp, bool ring)
{
	struct ernic_access *acc = dev->acc;
	const uint32_t i = qp->idx;
	uint32_t adconf, wp, diff;

	/* Step 1: software override, for this QP. */
	adconf = ernic_sw_override_on(acc, i);
	/* Step 2: the SQ's pointers to 0: the user logic's first WQE goes
	 * in slot 0. */
	ernic_wr(acc, ERNIC_QP(i, ERNIC_SQPI), 0);
	ernic_wr(acc, ERNIC_QP(i, ERNIC_CQHEAD), 0);
	ernic_wr(acc, ERNIC_QP(i, ERNIC_STATCURSQPTR), 0);
	/* Step 3: the RQ elements left to process, the write pointer less
	 * the consumer index (this provider's RQCIi is a grant window, so
	 * the consumer index is the element it reads next: traffic_check
	 * made that 0). The RQ starts over at element 0 with it: RQCIi 0,
	 * an empty ring the user logic owns. */
	wp = ernic_rd(acc, ERNIC_QP(i, ERNIC_STATRQPIDB)) & 0xFFFF;
	diff = ernic_ring_dist(qp->rq_ci, wp, qp->rq_depth);
	ernic_wr(acc, ERNIC_QP(i, ERNIC_STATRQPIDB), diff);
	ernic_wr(acc, ERNIC_QP(i, ERNIC_RQCI), 0);
	/* Step 4: QPCONFi[4] reset; the user logic hears of completions
	 * and SENDs on the ports, not by interrupt (PG332 "Interrupts"). */
	qp->qpconf &= ~(ERNIC_QPCONF_HW_HANDSHAKE_DIS | ERNIC_QPCONF_RQ_INT_EN |
			ERNIC_QPCONF_CQ_INT_EN);
	ernic_wr(acc, ERNIC_QP(i, ERNIC_QPCONF), qp->qpconf);
	/* Step 5: override off. */
	ernic_wr(acc, ERNIC_XRNICADCONF, adconf);
	/* CON_IO_CONF: "ring the doorbell when hardware handshake is just
	 * enabled", so the user logic learns where the rings start. */
	if (ring)
		ernic_wr(acc, ERNIC_CON_IO_CONF,
			 ERNIC_FIELD_PREP(ERNIC_CON_IO_CONF_QPID, i));
	if (dev->hw_role != ERNIC_HW_ALONE)
		ernic_access_flush(acc);
}

/* CON_IO_CONF[31]: ready for another QP ID, within OFFLOAD_READY_MS. */
static bool con_io_ready(struct ernic_access *acc)
{
	const struct timespec ms = { .tv_nsec = 1000000 };

	for (int t = 0; t < OFFLOAD_READY_MS; t++) {
		if (ernic_rd(acc, ERNIC_CON_IO_CONF) & ERNIC_CON_IO_CONF_READY)
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
}

int ernicdv_qp_hw_offload(struct ibv_qp *ibqp,
			  struct ernicdv_qp_hw_offload_attr *attr, size_t inlen)
{
	struct ernic_qp *qp;
	struct ernic_dev *dev;
	bool shared, ring;
	int r;

	if (!ibqp || !ernicdv_is_ernic_device(ibqp->context->device))
		return ernic_refuse(EINVAL, "ernicdv_qp_hw_offload: not an "
				    "ERNIC QP");
	r = attr_check(attr, inlen);
	if (r)
		return r;
	qp = to_eqp(ibqp);
	dev = ctx_dev(ibqp->context);
	ring = !(attr->flags & ERNICDV_QP_HW_OFFLOAD_NO_CON_IO);
	shared = dev->hw_role != ERNIC_HW_ALONE;
	pthread_mutex_lock(&dev->lock);
	r = qp_check(dev, qp);
	if (!r && ring && !con_io_ready(dev->acc))
		r = ernic_refuse(EBUSY, "ernicdv_qp_hw_offload: QP %u: "
				 "CON_IO_CONF not ready (the user logic has "
				 "not taken the doorbells of QP %u)", qp->idx,
				 ERNIC_FIELD_GET(ERNIC_CON_IO_CONF_QPID,
						 ernic_rd(dev->acc,
							  ERNIC_CON_IO_CONF)));
	if (r)
		goto out;
	/* Posts are refused from here; those under way finish first. */
	atomic_store(&qp->hw_offload, true);
	ernic_qp_gate(qp);
	ernic_spin_lock(&qp->sq_lock);
	ernic_spin_lock(&qp->rq_lock);
	r = traffic_check(dev, qp);
	ernic_spin_unlock(&qp->rq_lock);
	ernic_spin_unlock(&qp->sq_lock);
	if (!r && shared && ernic_share_lock(dev))
		r = ernic_refuse(EIO, "ernicdv_qp_hw_offload: QP %u: the "
				 "state file's lock failed", qp->idx);
	if (r) {
		atomic_store(&qp->hw_offload, false);
		ernic_qp_gate(qp);
		goto out;
	}
	/* No poll_cq looks at the QP: its completions are the user
	 * logic's (ernic_destroy_qp detaches it again, harmlessly). */
	ernic_cq_detach(to_ecq(ibqp->send_cq), qp);
	ernic_cq_detach(to_ecq(ibqp->recv_cq), qp);
	hand_over(dev, qp, ring);
	if (shared)
		ernic_share_unlock(dev);
	attr->qp_num = qp->idx;
	attr->sq_depth = qp->sq_depth;
	attr->rq_depth = qp->rq_depth;
	attr->rq_buf_size = ERNIC_FIELD_GET(ERNIC_QPCONF_RQ_BUF_SIZE,
					    qp->qpconf) * ERNIC_RQ_BUF_UNIT;
	attr->sq_bus = qp->sq.bus;
	attr->cq_bus = qp->cq.bus;
	attr->rq_bus = qp->rq.bus;
out:
	pthread_mutex_unlock(&dev->lock);
	return r;
}
