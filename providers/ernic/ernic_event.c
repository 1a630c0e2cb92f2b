// SPDX-License-Identifier: MIT
/*
 * Completion and asynchronous events, from the IP's single interrupt line
 * (PG332 ch.3 "Interrupts"). With no kernel driver the provider is the
 * interrupt handler: a thread per device waits on the access layer's
 * interrupt fd, reads INTSTS, then CQINTSTSn / RQINTSTSn to learn which
 * QPs need service, clears what it read (W1C) and unmasks the interrupt.
 * Each clear is flushed before the handler acts on it: a write may be
 * posted, and a cause raised again before a late clear would go with it.
 *
 * - A CQ event goes to an armed CQ's completion channel as the kernel
 *   would send it (struct ib_uverbs_comp_event_desc), so libibverbs'
 *   ibv_get_cq_event() / ibv_ack_cq_events() work unchanged.
 * - ECN-marked packets (INTSTS[8]) make CNPs, sent through QP1
 *   (ernic_cnp.c).
 * - A fatal QP (INTSTS[7]) is named, with its Table 2-4 code, by the
 *   incoming packet error status queue (PG332 "QP Fatal Recovery" step
 *   1): it becomes IBV_EVENT_QP_FATAL on the owning context's async_fd,
 *   and both of the QP's armed CQs fire (error completions are due).
 *
 * Per-QP interrupt enables (QPCONF[3:2]) are set only for QPs whose CQ
 * has a completion channel (ernic_qp_int_bits), so polling applications
 * never take an interrupt.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ernic.h"
#include "ernic_broker.h"
#include "ernic_cq.h"

/* Kernel ABI records (rdma/ib_user_verbs.h), what libibverbs reads. */
struct ernic_comp_event_desc {
	uint64_t cq_handle;
};

struct ernic_async_event_desc {
	uint64_t element;
	uint32_t event_type;
	uint32_t reserved;
};

/* Send one record without blocking the interrupt thread; a peer that has
 * stopped reading loses the event rather than stalling the device. */
static bool ev_send(int fd, const void *rec, size_t len)
{
	return send(fd, rec, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len;
}

/* Fire cq if it is armed; solicited says the completion may wake a
 * solicited-only arm. Caller holds ev_lock. */
static void cq_fire(struct ernic_cq *cq, bool solicited)
{
	int arm = atomic_load(&cq->arm);
	struct ernic_comp_event_desc ev = {
		.cq_handle = (uintptr_t)&cq->vcq.cq,
	};

	if (!arm || (arm == ERNIC_ARM_SOLICITED && !solicited))
		return;
	if (!atomic_compare_exchange_strong(&cq->arm, &arm, 0))
		return;
	if (cq->ev_fd >= 0 && ev_send(cq->ev_fd, &ev, sizeof(ev)))
		cq->events_sent++;
}

/* Both of qp's CQs (one, if it is shared), as for completions in error:
 * a solicited-only arm wakes too. Caller holds ev_lock. */
static void qp_cqs_fire(struct ernic_qp *qp)
{
	cq_fire(to_ecq(qp->vqp.qp.send_cq), true);
	if (qp->vqp.qp.recv_cq != qp->vqp.qp.send_cq)
		cq_fire(to_ecq(qp->vqp.qp.recv_cq), true);
}

/* The W1C writes so far take effect now: a cause raised from here on
 * stays set, and one raised before is serviced after this. */
static void ev_flush(struct ernic_dev *dev)
{
	int rc = ernic_access_flush(dev->acc);

	if (rc)
		ernic_log("interrupt: cannot flush the status clears: %s",
			  strerror(rc));
}

/* Bits of word w (1-based) of CQINTSTSn / RQINTSTSn that are QPs of
 * ours with that interrupt enabled; their QPs in qps[]. */
static uint32_t own_bits(struct ernic_dev *dev, uint32_t w, uint32_t v,
			 bool recv, struct ernic_qp *qps[32])
{
	const uint32_t en = recv ? ERNIC_QPCONF_RQ_INT_EN :
				   ERNIC_QPCONF_CQ_INT_EN;
	uint32_t own = 0;

	for (uint32_t b = 0; b < 32; b++) {
		uint32_t i = (w - 1) * 32 + b + 1;

		qps[b] = NULL;
		if (!(v & 1u << b) || i > dev->conf.c_num_qp ||
		    !dev->ev_qp[i] ||
		    !(ernic_qp_int_bits(dev->ev_qp[i]) & en))
			continue;
		qps[b] = dev->ev_qp[i];
		own |= 1u << b;
	}
	return own;
}

/* The QPs of one status word, their bits cleared already. */
static void qp_service(struct ernic_dev *dev, struct ernic_qp *qps[32],
		       bool recv)
{
	for (uint32_t b = 0; b < 32; b++) {
		struct ernic_qp *qp = qps[b];

		if (!qp)
			continue;
		if (recv) {
			bool sol;

			if (ernic_rq_service(dev, qp, &sol))
				cq_fire(to_ecq(qp->vqp.qp.recv_cq), sol);
			continue;
		}
		/* READs held back for max_rd_atomic go once those before
		 * them complete, polled or not. */
		ernic_spin_lock(&qp->sq_lock);
		if (qp->sq_db != qp->sq_pi && !qp->sq_flushing &&
		    !atomic_load(&qp->err))
			ernic_sq_doorbell(dev, qp);
		ernic_spin_unlock(&qp->sq_lock);
		cq_fire(to_ecq(qp->vqp.qp.send_cq), false);
	}
}

/* Bits of CQINTSTSn / RQINTSTSn: each set bit is a QP to service. Only
 * the bits of QPs we enabled that interrupt for are ours to clear
 * (PG332: "cleared upon successful handling"). Caller holds ev_lock. */
static void qp_bits(struct ernic_dev *dev, uint32_t (*reg)(uint32_t),
		    bool recv)
{
	struct ernic_access *acc = dev->acc;
	const uint32_t nwords = ERNIC_QPINT_WORD(dev->conf.c_num_qp);

	for (uint32_t w = 1; w <= nwords; w++) {
		struct ernic_qp *qps[32];
		uint32_t ack = own_bits(dev, w, ernic_rd(acc, reg(w)), recv,
					qps);

		if (!ack)
			continue;
		ernic_wr(acc, reg(w), ack);
		ev_flush(dev);
		qp_service(dev, qps, recv);
	}
}

static uint32_t cqintsts(uint32_t w)
{
	return ERNIC_CQINTSTS(w);
}

static uint32_t rqintsts(uint32_t w)
{
	return ERNIC_RQINTSTS(w);
}

/* Queue an async event for ctx. Caller holds ev_lock. */
static bool async_post(struct ernic_context *ctx, void *element,
		       enum ibv_event_type type)
{
	struct ernic_async_event_desc ev = {
		.element = (uintptr_t)element,
		.event_type = type,
	};

	return ev_send(ctx->async_sv[1], &ev, sizeof(ev));
}

/* A FATAL of one of our QPs. Caller holds ev_lock. */
static void fatal_one(struct ernic_dev *dev, struct ernic_qp *qp,
		      uint32_t code)
{
	qp->fatal_code = code;
	ernic_dbg("QP %u fatal: Table 2-4 code 0x%02x", qp->idx, code);
	if (async_post(to_ectx(qp->vqp.qp.context), &qp->vqp.qp,
		       IBV_EVENT_QP_FATAL))
		qp->async_sent++;
	qp_cqs_fire(qp);
}

/* One incoming packet error status entry into the state file: counted
 * by Table 2-4 code, kept among the last ones for ernicctl stats. */
static void fatal_count(struct ernic_ds *ds, uint64_t ent, uint32_t code)
{
	uint64_t n;

	if (!ds)
		return;
	n = __atomic_fetch_add(&ds->ipkterrq_entries, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&ds->fatal_last[n % ERNIC_DS_FATAL_LAST], ent,
			 __ATOMIC_RELAXED);
	if (code < ERNIC_FATAL_CODES)
		__atomic_fetch_add(&ds->fatal_codes[code], 1,
				   __ATOMIC_RELAXED);
}

/* INTSTS[7]: walk the incoming packet error status queue (Figure 2-3)
 * from where we stopped to the IP's write pointer. */
static void fatal_scan(struct ernic_dev *dev)
{
	const uint64_t *q = dev->ipkterrq.va;
	uint32_t wp = ERNIC_FIELD_GET(ERNIC_IPKTERRQWPTR_WPTR,
				      ernic_rd(dev->acc, ERNIC_IPKTERRQWPTR));

	if (wp >= ERNIC_IPKTERRQ_NUM) {
		ernic_log("IPKTERRQWPTR %u beyond the queue (%u entries)", wp,
			  ERNIC_IPKTERRQ_NUM);
		return;
	}
	for (; dev->ipkterrq_rp != wp;
	     dev->ipkterrq_rp = (dev->ipkterrq_rp + 1) % ERNIC_IPKTERRQ_NUM) {
		uint64_t ent;
		uint32_t code, i;

		ernic_dma_sync(dev->acc, &q[dev->ipkterrq_rp], sizeof(*q),
			       ERNIC_DMA_FROM_DEVICE);
		ent = le64toh(q[dev->ipkterrq_rp]);
		code = ERNIC_FIELD_GET(ERNIC_ERRSTS_FATAL_CODE, ent);
		i = ERNIC_FIELD_GET(ERNIC_ERRSTS_QPID, ent);
		fatal_count(dev->ds.ds, ent, code);
		if (i < ERNIC_FIRST_RC_QP || i > dev->conf.c_num_qp)
			continue;
		if (dev->ev_qp[i])
			fatal_one(dev, dev->ev_qp[i], code);
		else if (dev->broker)	/* a client's QP */
			ernic_broker_fatal(dev, i, code);
	}
}

/* INTSTS[0]: count the error buffer's new entries (a dropped or refused
 * packet's headers behind its Table 2-3 syndrome) by syndrome bit in the
 * device's state file, from where we stopped to the IP's write pointer.
 * Entries the IP wrote over before we came (more than ERNIC_ERRBUF_NUM
 * between two interrupts) are not counted. Caller holds ev_lock. */
static void errbuf_drain(struct ernic_dev *dev)
{
	struct ernic_ds *ds = dev->ds.ds;
	uint32_t wp = ERNIC_FIELD_GET(ERNIC_ERRBUFWPTR_WPTR,
				      ernic_rd(dev->acc, ERNIC_ERRBUFWPTR));

	if (!dev->errbuf.va)	/* a broker's client: the broker counts */
		return;
	if (wp >= ERNIC_ERRBUF_NUM) {
		ernic_log("ERRBUFWPTR %u beyond the error buffer (%u entries)",
			  wp, ERNIC_ERRBUF_NUM);
		return;
	}
	for (; dev->errbuf_rp != wp;
	     dev->errbuf_rp = (dev->errbuf_rp + 1) % ERNIC_ERRBUF_NUM) {
		const uint8_t *ent = (const uint8_t *)dev->errbuf.va +
				     (size_t)dev->errbuf_rp * ERNIC_ERRBUF_ENTRY;
		uint32_t syn;

		ernic_dma_sync(dev->acc, ent, sizeof(syn),
			       ERNIC_DMA_FROM_DEVICE);
		memcpy(&syn, ent, sizeof(syn));
		syn = le32toh(syn);
		if (!ds)
			continue;
		__atomic_fetch_add(&ds->errbuf_entries, 1, __ATOMIC_RELAXED);
		for (uint32_t b = 0; b < ERNIC_SYNDROME_BITS; b++)
			if (syn & (1u << b))
				__atomic_fetch_add(&ds->syndromes[b], 1,
						   __ATOMIC_RELAXED);
	}
}

void ernic_events_fatal(struct ernic_dev *dev, uint32_t qpn, uint32_t code)
{
	if (qpn < ERNIC_FIRST_RC_QP || qpn > dev->conf.c_num_qp)
		return;
	pthread_mutex_lock(&dev->ev_lock);
	if (dev->ev_qp[qpn])
		fatal_one(dev, dev->ev_qp[qpn], code);
	pthread_mutex_unlock(&dev->ev_lock);
}

void ernic_events_lost(struct ernic_dev *dev)
{
	atomic_store(&dev->lost, true);
	ernic_events_port(dev, IBV_EVENT_DEVICE_FATAL);
	pthread_mutex_lock(&dev->ev_lock);
	for (uint32_t i = 0; i <= dev->conf.c_num_qp; i++) {
		struct ernic_qp *qp = dev->ev_qp[i];

		if (!qp)
			continue;
		ernic_qp_set_err(qp);
		qp_cqs_fire(qp);
	}
	pthread_mutex_unlock(&dev->ev_lock);
	/* A broker's clients hear of it by their connections' end. */
	if (dev->broker)
		ernic_broker_lost(dev);
}

/* Nothing answers at the window any more (INTSTS read all-ones), or
 * the driver wants the device back (the access layer's ENODEV). The
 * interrupt thread stops after this: a level that reads all-ones would
 * call it again for ever. */
static void dev_gone(struct ernic_dev *dev, const char *why)
{
	ernic_log("%s: %s: the device is gone (removed, or its link is "
		  "down); its QPs are in error", dev->vdev.device.name, why);
	dev->lost_why = why;
	ernic_events_lost(dev);
}

/* One interrupt: the causes first (cleared before the per-QP words, so a
 * cause raised meanwhile interrupts again), then the QPs. False when the
 * device is gone (dev_gone). */
static bool ev_service(struct ernic_dev *dev)
{
	uint32_t sts, cnp[ERNIC_CNPSCHD_WORDS];

	sts = ernic_rd(dev->acc, ERNIC_INTSTS);
	if (sts == ERNIC_REG_GONE) {
		dev_gone(dev, "registers read all-ones");
		return false;
	}
	sts &= ERNIC_INT_ALL;
	if (!sts)
		return true;
	/* Clearing INTSTS[8] clears these: read them first. */
	if (sts & ERNIC_INT_CNP)
		ernic_cnp_pending(dev, cnp);
	ernic_wr(dev->acc, ERNIC_INTSTS, sts);
	ev_flush(dev);
	pthread_mutex_lock(&dev->ev_lock);
	if (sts & ERNIC_INT_WQE_COMPLETION)
		qp_bits(dev, cqintsts, false);
	if (sts & ERNIC_INT_RQ_PKT_RX)
		qp_bits(dev, rqintsts, true);
	if (sts & ERNIC_INT_FATAL)
		fatal_scan(dev);
	if (sts & ERNIC_INT_PKT_VALID_ERR)
		errbuf_drain(dev);
	pthread_mutex_unlock(&dev->ev_lock);
	if (sts & ERNIC_INT_MAD_RX)
		ernic_mad_service(dev);
	if (sts & ERNIC_INT_CNP)
		ernic_cnp_send(dev, cnp);
	/* The causes just cleared may be a client's QPs': tell them. */
	if (dev->broker &&
	    (sts & (ERNIC_INT_WQE_COMPLETION | ERNIC_INT_RQ_PKT_RX)))
		ernic_broker_kick(dev);
	return true;
}

void ernic_events_kicked(struct ernic_dev *dev)
{
	pthread_mutex_lock(&dev->ev_lock);
	qp_bits(dev, cqintsts, false);
	qp_bits(dev, rqintsts, true);
	pthread_mutex_unlock(&dev->ev_lock);
}

void ernic_events_ctx(struct ernic_dev *dev, struct ernic_context *ctx,
		      bool open)
{
	struct ernic_context **p;

	pthread_mutex_lock(&dev->ev_lock);
	if (open) {
		ctx->ev_next = dev->ev_ctxs;
		dev->ev_ctxs = ctx;
	} else {
		for (p = &dev->ev_ctxs; *p; p = &(*p)->ev_next)
			if (*p == ctx) {
				*p = ctx->ev_next;
				break;
			}
	}
	pthread_mutex_unlock(&dev->ev_lock);
}

void ernic_events_port(struct ernic_dev *dev, enum ibv_event_type type)
{
	pthread_mutex_lock(&dev->ev_lock);
	for (struct ernic_context *c = dev->ev_ctxs; c; c = c->ev_next)
		async_post(c, (void *)(uintptr_t)1 /* port_num */, type);
	pthread_mutex_unlock(&dev->ev_lock);
}

static void *ev_main(void *arg)
{
	struct ernic_dev *dev = arg;
	struct ernic_access *acc = dev->acc;
	struct pollfd pfd[4] = {
		/* a broker's client: its broker's kicks instead */
		{ .fd = dev->hw_role == ERNIC_HW_CLIENT ? -1 :
							  acc->ops->irq_fd(acc),
		  .events = POLLIN },
		{ .fd = dev->ev_stop_fd, .events = POLLIN },
		{ .fd = ernic_port_watch_open(dev), .events = POLLIN },
		{ .fd = ernic_client_event_fd(dev), .events = POLLIN },
	};
	int rc;

	/* named for top, perf and gdb (a failure costs only the name) */
	pthread_setname_np(pthread_self(), "ernic-events");
	for (;;) {
		if (poll(pfd, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			ernic_log("interrupt thread: poll: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents)
			break;
		if (pfd[2].revents)
			ernic_port_changed(dev, pfd[2].fd);
		if (pfd[3].revents) {
			ernic_client_event(dev);
			pfd[3].fd = ernic_client_event_fd(dev);
		}
		if (pfd[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
			ernic_log("interrupt fd failed: no more events");
			break;
		}
		if (!(pfd[0].revents & POLLIN))
			continue;
		if (!ev_service(dev))
			break;
		rc = acc->ops->irq_enable(acc);
		if (rc == ENODEV) {	/* gone since the service read INTSTS */
			dev_gone(dev, ernic_rd(acc, ERNIC_INTSTS) ==
					      ERNIC_REG_GONE ?
					      "registers read all-ones" :
					      "its driver asks for it back");
			break;
		}
		if (rc)
			ernic_log("cannot unmask the interrupt: no more events");
	}
	if (pfd[2].fd >= 0)
		close(pfd[2].fd);
	return NULL;
}

int ernic_events_start(struct ernic_dev *dev, char *err, size_t errlen)
{
	int rc;

	/* The IP outlives processes: entries before its write pointer are
	 * an earlier user's. */
	if (dev->hw_role != ERNIC_HW_CLIENT)
		dev->ipkterrq_rp =
			ERNIC_FIELD_GET(ERNIC_IPKTERRQWPTR_WPTR,
					ernic_rd(dev->acc, ERNIC_IPKTERRQWPTR)) %
			ERNIC_IPKTERRQ_NUM;
	memset(dev->ev_qp, 0, sizeof(dev->ev_qp));
	if (dev->hw_role != ERNIC_HW_CLIENT &&
	    (!dev->acc->ops->irq_fd || dev->acc->ops->irq_fd(dev->acc) < 0)) {
		snprintf(err, errlen, "%s backend has no interrupt",
			 dev->acc->ops->name);
		return ENODEV;
	}
	dev->ev_stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (dev->ev_stop_fd < 0) {
		rc = errno;
		snprintf(err, errlen, "eventfd: %s", strerror(rc));
		return rc;
	}
	rc = pthread_create(&dev->ev_thread, NULL, ev_main, dev);
	if (rc) {
		snprintf(err, errlen, "interrupt thread: %s", strerror(rc));
		close(dev->ev_stop_fd);
		return rc;
	}
	return 0;
}

void ernic_events_stop(struct ernic_dev *dev)
{
	uint64_t one = 1;

	if (write(dev->ev_stop_fd, &one, sizeof(one)) < 0)
		ernic_log("cannot stop the interrupt thread: %s",
			  strerror(errno));
	pthread_join(dev->ev_thread, NULL);
	close(dev->ev_stop_fd);
}

/* modify_qp to ERR: what is posted now completes in error, by poll_cq,
 * and an armed CQ is told so, as the kernel's flush tells it. Caller
 * holds neither ev_lock nor the QP's locks. */
void ernic_events_qp_flushed(struct ernic_dev *dev, struct ernic_qp *qp)
{
	pthread_mutex_lock(&dev->ev_lock);
	qp_cqs_fire(qp);
	pthread_mutex_unlock(&dev->ev_lock);
}

void ernic_events_qp(struct ernic_dev *dev, uint32_t idx, struct ernic_qp *qp)
{
	const uint32_t w = ERNIC_QPINT_WORD(idx), bit = ERNIC_QPINT_BIT(idx);

	pthread_mutex_lock(&dev->ev_lock);
	/* The QP number's status bits may be an earlier QP's, destroyed
	 * before its last interrupt was serviced (nobody owned them since,
	 * so nobody cleared them): they are not this QP's. Cleared before
	 * the handler may take them for it and fire its CQ for nothing. */
	if (qp && idx >= ERNIC_FIRST_RC_QP) {
		ernic_wr(dev->acc, ERNIC_CQINTSTS(w), bit);
		ernic_wr(dev->acc, ERNIC_RQINTSTS(w), bit);
	}
	dev->ev_qp[idx] = qp;
	pthread_mutex_unlock(&dev->ev_lock);
}

void ernic_qps_quiesce(struct ernic_dev *dev)
{
	pthread_mutex_lock(&dev->ev_lock);
	for (uint32_t i = 0; i <= dev->conf.c_num_qp; i++) {
		struct ernic_qp *qp = dev->ev_qp[i];

		if (!qp)
			continue;
		ernic_spin_lock(&qp->sq_lock);
		ernic_spin_unlock(&qp->sq_lock);
		ernic_spin_lock(&qp->rq_lock);
		ernic_spin_unlock(&qp->rq_lock);
	}
	pthread_mutex_unlock(&dev->ev_lock);
}

uint32_t ernic_qp_int_bits(const struct ernic_qp *qp)
{
	return (qp->vqp.qp.send_cq->channel ? ERNIC_QPCONF_CQ_INT_EN : 0) |
	       (qp->vqp.qp.recv_cq->channel ? ERNIC_QPCONF_RQ_INT_EN : 0);
}

int ernic_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct ernic_cq *cq = to_ecq(ibcq);
	struct ernic_dev *dev = ctx_dev(ibcq->context);

	/* Without a channel there is nowhere to deliver to, as with a
	 * kernel provider the arm is accepted and has no effect. */
	atomic_store(&cq->arm, solicited_only ? ERNIC_ARM_SOLICITED :
						ERNIC_ARM_ALL);
	/* A gone device's CQs hold flushes or nothing will come: an arm
	 * fires at once, or a program that re-armed after the loss's fire
	 * (polling completions that came before it) would sleep for ever.
	 * Against ernic_events_lost: each stores, then loads the other's
	 * word (sequentially consistent), so one of them fires. */
	if (atomic_load(&dev->lost)) {
		pthread_mutex_lock(&dev->ev_lock);
		cq_fire(cq, true);
		pthread_mutex_unlock(&dev->ev_lock);
		return 0;
	}
	/* The application waits for an event now, not in poll_cq. */
	ernic_progress_stop(dev->acc, true);
	return 0;
}

/*
 * Take back the records of a dying object (whose handle is `handle`)
 * that nobody has read from a SOCK_SEQPACKET event socket, keeping the
 * others in order, as the kernel drops a destroyed object's unread
 * events. Returns how many it took. rfd is the reading end, wfd the
 * writing end. Caller holds ev_lock, so nothing is sent meanwhile.
 */
static uint32_t ev_unread_drop(int rfd, int wfd, uint64_t handle,
			       size_t len)
{
	uint8_t keep[64][sizeof(struct ernic_async_event_desc)];
	uint8_t rec[sizeof(struct ernic_async_event_desc)];
	uint32_t dropped = 0, nkeep = 0;
	uint64_t h;

	while (recv(rfd, rec, len, MSG_DONTWAIT) == (ssize_t)len) {
		memcpy(&h, rec, sizeof(h));
		if (h == handle)
			dropped++;
		else if (nkeep < sizeof(keep) / sizeof(keep[0]))
			memcpy(keep[nkeep++], rec, len);
		else
			ev_send(wfd, rec, len);	/* order lost, not the event */
	}
	for (uint32_t k = 0; k < nkeep; k++)
		ev_send(wfd, keep[k], len);
	return dropped;
}

void ernic_events_cq_gone(struct ernic_dev *dev, struct ernic_cq *cq)
{
	struct ibv_cq *ibcq = &cq->vcq.cq;
	uint32_t read_by_app;

	if (!ibcq->channel || cq->ev_fd < 0)
		return;
	pthread_mutex_lock(&dev->ev_lock);
	read_by_app = cq->events_sent -
		      ev_unread_drop(ibcq->channel->fd, cq->ev_fd,
				     (uintptr_t)ibcq,
				     sizeof(struct ernic_comp_event_desc));
	pthread_mutex_unlock(&dev->ev_lock);
	/* IBTA/verbs: destroying a CQ waits for its events to be acked. */
	pthread_mutex_lock(&ibcq->mutex);
	while (ibcq->comp_events_completed != read_by_app)
		pthread_cond_wait(&ibcq->cond, &ibcq->mutex);
	pthread_mutex_unlock(&ibcq->mutex);
}

void ernic_events_qp_gone(struct ernic_dev *dev, struct ernic_qp *qp)
{
	struct ibv_qp *ibqp = &qp->vqp.qp;
	struct ernic_context *ctx = to_ectx(ibqp->context);
	uint32_t read_by_app;

	pthread_mutex_lock(&dev->ev_lock);
	dev->ev_qp[qp->idx] = NULL;
	read_by_app = qp->async_sent -
		      ev_unread_drop(ctx->async_sv[0], ctx->async_sv[1],
				     (uintptr_t)ibqp,
				     sizeof(struct ernic_async_event_desc));
	pthread_mutex_unlock(&dev->ev_lock);
	pthread_mutex_lock(&ibqp->mutex);
	while (ibqp->events_completed != read_by_app)
		pthread_cond_wait(&ibqp->cond, &ibqp->mutex);
	pthread_mutex_unlock(&ibqp->mutex);
}

/* ---- Completion channels (ernicdv_create_comp_channel) ---- */

struct ernic_chan {
	struct ibv_comp_channel *ch;
	int fd;			/* ch->fd when created: the app's end */
	int wfd;		/* ours */
	struct ernic_chan *next;
};

/* Forget channels the application has destroyed (its end is closed).
 * Caller holds ctx->chan_lock. */
static void chan_sweep(struct ernic_context *ctx)
{
	for (struct ernic_chan **pp = &ctx->chans, *c; (c = *pp);) {
		struct pollfd p = { .fd = c->wfd, .events = 0 };

		if (poll(&p, 1, 0) == 1 && (p.revents & POLLHUP)) {
			*pp = c->next;
			close(c->wfd);
			free(c);
		} else {
			pp = &c->next;
		}
	}
}

struct ibv_comp_channel *ernic_comp_channel_create(struct ibv_context *ibctx)
{
	struct ernic_context *ctx = to_ectx(ibctx);
	struct ibv_comp_channel *ch = calloc(1, sizeof(*ch));
	struct ernic_chan *c = calloc(1, sizeof(*c));
	int sv[2];

	if (!ch || !c ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		int e = ch && c ? errno : ENOMEM;

		free(ch);
		free(c);
		errno = e;
		return NULL;
	}
	/* Shaped as libibverbs' own: ibv_destroy_comp_channel() closes fd
	 * and frees the struct. */
	ch->context = ibctx;
	ch->fd = sv[0];
	ch->refcnt = 0;
	c->ch = ch;
	c->fd = sv[0];
	c->wfd = sv[1];
	pthread_mutex_lock(&ctx->chan_lock);
	chan_sweep(ctx);
	c->next = ctx->chans;
	ctx->chans = c;
	pthread_mutex_unlock(&ctx->chan_lock);
	return ch;
}

int ernic_comp_channel_attach(struct ernic_cq *cq, struct ibv_context *ibctx,
			      struct ibv_comp_channel *ch)
{
	struct ernic_context *ctx = to_ectx(ibctx);
	int ret = EINVAL;	/* not a channel of this context */

	cq->ev_fd = -1;
	if (!ch)
		return 0;
	if (ch->context != ibctx)
		return EINVAL;
	pthread_mutex_lock(&ctx->chan_lock);
	chan_sweep(ctx);
	for (struct ernic_chan *c = ctx->chans; c; c = c->next) {
		if (c->ch != ch || c->fd != ch->fd)
			continue;
		cq->ev_fd = fcntl(c->wfd, F_DUPFD_CLOEXEC, 0);
		ret = cq->ev_fd < 0 ? errno : 0;
		break;
	}
	pthread_mutex_unlock(&ctx->chan_lock);
	return ret;
}

void ernic_comp_channels_free(struct ernic_context *ctx)
{
	while (ctx->chans) {
		struct ernic_chan *c = ctx->chans;

		ctx->chans = c->next;
		close(c->wfd);
		free(c);
	}
}
