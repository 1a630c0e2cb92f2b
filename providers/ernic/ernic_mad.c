// SPDX-License-Identifier: MIT
/*
 * QP1: management datagrams for the connection manager (ernicdv_mad_*).
 *
 * QP1 belongs to the device, not to a context: one SQ, RQ and CQ made at
 * device start (ernic_global.c), shared by every context of the process.
 * Software builds each outgoing frame whole (ernic_hw.h, "QP1 carries
 * MADs") in one of ERNIC_QP1_DEPTH frame buffers and reads each incoming
 * frame whole from the RQ. Incoming MADs go to the agent registered for
 * their management class (one per class and device); the agent reads
 * them from a socket, so it can poll. On a hardware device shared
 * through its broker (ernic_broker.h), QP1 is the broker's: it routes
 * each MAD to the client whose connection it is, and clients send
 * through it.
 *
 * Locking: mad->lock guards the rings and the agent table. Only the
 * broker's routing is called under it (the state file's lock, then the
 * broker's). The interrupt thread calls ernic_mad_service(); senders call
 * ernicdv_mad_send().
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ernic.h"
#include "ernic_broker.h"
#include "ernicdv.h"
#include "ernic_mad_frame.h"
#include "ernic_net.h"
#include "ibta.h"

#define MAD_CLASSES 256

struct ernicdv_mad_agent {
	struct ernic_dev *dev;
	struct ibv_context *context;
	uint8_t mgmt_class;
	int sv[2];		/* [0] the agent's (fd), [1] ours */
	/* Service IDs claimed (ernicdv_mad_claim_service), one entry per
	 * claim, given back at destroy if the consumer did not. */
	pthread_mutex_t svc_lock;
	uint64_t *svc;
	size_t nsvc, svc_cap;
};

/* One received MAD as the agent's socket carries it. */
struct mad_rec {
	struct ernicdv_mad_addr from;
	uint8_t mad[IB_MAD_SIZE];
};

struct ernic_mad {
	pthread_mutex_t lock;
	struct ernic_dma tx;		/* ERNIC_QP1_DEPTH frame buffers */
	uint32_t sq_pi;			/* next SQ slot to write */
	uint32_t sq_ci;			/* next SQ slot to complete */
	uint32_t rq_ci;			/* next RQ element to read */
	uint32_t psn;
	struct ernicdv_mad_agent *agents[MAD_CLASSES];
	uint64_t rx_bad, rx_unclaimed, rx_overrun, tx_err;
};

int ernic_mad_start(struct ernic_dev *dev, char *err, size_t errlen)
{
	struct ernic_mad *mad = calloc(1, sizeof(*mad));
	int ret;

	if (!mad) {
		snprintf(err, errlen, "out of memory for QP1");
		return ENOMEM;
	}
	/* A broker's client sends through the broker's QP1. */
	if (dev->hw_role == ERNIC_HW_CLIENT) {
		pthread_mutex_init(&mad->lock, NULL);
		dev->mad = mad;
		return 0;
	}
	ret = dev->acc->ops->dma_alloc(dev->acc,
				       (size_t)ERNIC_QP1_DEPTH *
					       ERNIC_QP1_BUF_SIZE,
				       64, &mad->tx);
	if (ret) {
		snprintf(err, errlen, "cannot allocate QP1 frame buffers: %s",
			 strerror(ret));
		free(mad);
		return ret;
	}
	pthread_mutex_init(&mad->lock, NULL);
	dev->mad = mad;
	return 0;
}

void ernic_mad_stop(struct ernic_dev *dev)
{
	struct ernic_mad *mad = dev->mad;

	if (!mad)
		return;
	for (int c = 0; c < MAD_CLASSES; c++)
		if (mad->agents[c])
			mad->agents[c]->dev = NULL;	/* orphaned: EIO */
	if (mad->tx.va)
		dev->acc->ops->dma_free(dev->acc, &mad->tx);
	pthread_mutex_destroy(&mad->lock);
	free(mad);
	dev->mad = NULL;
}

/* ---- receive (interrupt thread) ---- */

/* Hand one MAD to the agent of its class. Caller holds mad->lock. */
static void deliver(struct ernic_mad *mad, const struct mad_rec *rec)
{
	struct ernicdv_mad_agent *a = mad->agents[rec->mad[IB_MAD_CLASS_OFF]];

	if (!a) {
		mad->rx_unclaimed++;
		return;
	}
	if (send(a->sv[1], rec, sizeof(*rec), MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    (ssize_t)sizeof(*rec))
		mad->rx_overrun++;	/* the agent is behind: a MAD lost,
					 * which its sender retransmits */
}

void ernic_mad_deliver(struct ernic_dev *dev,
		       const struct ernicdv_mad_addr *from, const uint8_t *mad)
{
	struct ernic_mad *m = dev->mad;
	struct mad_rec rec = { .from = *from };

	if (!m)
		return;
	memcpy(rec.mad, mad, IB_MAD_SIZE);
	pthread_mutex_lock(&m->lock);
	deliver(m, &rec);
	pthread_mutex_unlock(&m->lock);
}

static void rx_one(struct ernic_dev *dev, struct ernic_mad *mad,
		   const uint8_t *frame, uint32_t len)
{
	struct mad_rec rec = { 0 };
	struct ernic_mad_peer peer;

	if (ernic_mad_frame_parse(frame, len, dev->conf.family, &peer,
				  rec.mad)) {
		mad->rx_bad++;
		return;
	}
	memcpy(rec.from.gid, peer.gid, 16);
	memcpy(rec.from.mac, peer.mac, 6);
	rec.from.udp_sport = peer.udp_sport;
	rec.from.qpn = peer.qpn;
	rec.from.pkey = peer.pkey;
	rec.from.hop_limit = peer.hop_limit;
	rec.from.traffic_class = peer.traffic_class;
	/* A broker's QP1 serves its clients' connections first. */
	if (dev->broker && ernic_broker_mad_rx(dev, &rec.from, rec.mad))
		return;
	deliver(mad, &rec);
}

void ernic_mad_service(struct ernic_dev *dev)
{
	struct ernic_mad *mad = dev->mad;
	struct ernic_access *acc = dev->acc;
	const uint32_t d = ERNIC_QP1_DEPTH, bs = ERNIC_QP1_BUF_SIZE;
	const uint8_t *rq = dev->qp1_rq.va;
	const uint32_t *rxlen = (const void *)(rq + ernic_rxlen_off(d, bs));
	uint32_t wp;

	if (!mad)
		return;
	pthread_mutex_lock(&mad->lock);
	wp = ernic_db_load(acc, ernic_rq_db_va(dev, ERNIC_QP1) +
					ERNIC_RQDB_WPTR / 4);
	if (wp >= d) {
		ernic_log("QP1 RQ write pointer %u beyond its %u elements", wp,
			  d);
		pthread_mutex_unlock(&mad->lock);
		return;
	}
	if (wp == mad->rq_ci) {
		pthread_mutex_unlock(&mad->lock);
		return;
	}
	while (mad->rq_ci != wp) {
		const uint8_t *el = rq + (size_t)mad->rq_ci * bs;
		uint32_t v;

		ernic_dma_sync(acc, &rxlen[mad->rq_ci], 4,
			       ERNIC_DMA_FROM_DEVICE);
		v = le32toh(rxlen[mad->rq_ci]);
		ernic_dma_sync(acc, el, bs, ERNIC_DMA_FROM_DEVICE);
		if (ERNIC_FIELD_GET(ERNIC_RXLEN_LEN, v) > bs)
			mad->rx_bad++;
		else
			rx_one(dev, mad, el, ERNIC_FIELD_GET(ERNIC_RXLEN_LEN, v));
		mad->rq_ci = (mad->rq_ci + 1) % d;
	}
	/* The elements are free again. */
	ernic_wr(acc, ERNIC_QP(ERNIC_QP1, ERNIC_RQCI), mad->rq_ci);
	pthread_mutex_unlock(&mad->lock);
}

/* ---- send ---- */

/* Retire completed sends (the CQ doorbell word says how far the IP got).
 * Caller holds mad->lock. */
static void tx_reap(struct ernic_dev *dev, struct ernic_mad *mad)
{
	const uint32_t d = ERNIC_QP1_DEPTH;
	const uint32_t *cq = dev->qp1_cq.va;
	uint32_t head = ernic_db_load(dev->acc, ernic_cq_db_va(dev, ERNIC_QP1));

	if (head >= d)
		return;
	while (mad->sq_ci != head) {
		uint32_t cqe;

		ernic_dma_sync(dev->acc, &cq[mad->sq_ci], 4,
			       ERNIC_DMA_FROM_DEVICE);
		cqe = le32toh(cq[mad->sq_ci]);
		if (ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, cqe))
			mad->tx_err++;
		mad->sq_ci = (mad->sq_ci + 1) % d;
	}
}

int ernicdv_mad_send(struct ernicdv_mad_agent *a,
		     const struct ernicdv_mad_addr *to, const void *mad_buf,
		     size_t len)
{
	struct ernic_dev *dev;
	struct ernic_mad_peer dst = { 0 };
	struct ernic_ip peer_ip;
	int ret;

	if (!a || !to || !mad_buf || len != IB_MAD_SIZE || to->comp_mask)
		return EINVAL;
	dev = a->dev;
	if (!dev || !dev->mad)
		return EIO;
	ernic_gid_to_ip(to->gid, &peer_ip);
	if (peer_ip.family != dev->conf.family)
		return EINVAL;	/* the device speaks one IP version */
	memcpy(dst.gid, to->gid, 16);
	memcpy(dst.mac, to->mac, 6);
	dst.qpn = to->qpn;
	dst.pkey = to->pkey;
	dst.hop_limit = to->hop_limit;
	dst.traffic_class = to->traffic_class;
	/* The kernel finds the MAC itself only for the model's UDP wire. */
	if (!memcmp(dst.mac, "\0\0\0\0\0\0", 6) &&
	    !(dev->conf.backend == ERNIC_BACKEND_SW &&
	      dev->conf.wire == ERNIC_WIRE_UDP)) {
		ret = ernic_peer_mac(dev, &peer_ip, dst.mac, "MAD");
		if (ret)
			return ret;
	}
	if (dev->client)
		return ernic_client_mad_send(dev, &dst, mad_buf);
	return ernic_mad_tx(dev, &dst, mad_buf);
}

/* Post one QP1 frame to dst: the MAD mad_buf, or with none a CNP. */
static int qp1_tx(struct ernic_dev *dev, const struct ernic_mad_peer *dst,
		  const void *mad_buf)
{
	struct ernic_mad *mad = dev->mad;
	struct ernic_mad_frame_src src;
	struct ernic_wqe *wqe;
	uint8_t *frame;
	uint32_t flen, slot;

	if (!mad || !mad->tx.va)
		return EIO;
	src.family = dev->conf.family;
	memcpy(src.addr, dev->conf.addr, sizeof(src.addr));
	memcpy(src.mac, dev->conf.mac, 6);
	src.udp_sport = dev->conf.udp_sport;

	pthread_mutex_lock(&mad->lock);
	tx_reap(dev, mad);
	if ((mad->sq_pi + 1) % ERNIC_QP1_DEPTH == mad->sq_ci) {
		pthread_mutex_unlock(&mad->lock);
		return EAGAIN;	/* QP1's SQ is full: try again shortly */
	}
	slot = mad->sq_pi;
	frame = (uint8_t *)mad->tx.va + (size_t)slot * ERNIC_QP1_BUF_SIZE;
	flen = mad_buf ? ernic_mad_frame_build(frame, ERNIC_QP1_BUF_SIZE,
					       &src, dst, mad->psn, mad_buf) :
			 ernic_cnp_frame_build(frame, ERNIC_QP1_BUF_SIZE, &src,
					       dst);
	if (!flen) {
		pthread_mutex_unlock(&mad->lock);
		return EINVAL;	/* a family other than the device's */
	}
	if (mad_buf)
		mad->psn = (mad->psn + 1) & ERNIC_PSN_MASK;
	ernic_dma_sync(dev->acc, frame, flen, ERNIC_DMA_TO_DEVICE);
	wqe = (struct ernic_wqe *)dev->qp1_sq.va + slot;
	memset(wqe, 0, sizeof(*wqe));
	wqe->wrid = htole16((uint16_t)slot);
	wqe->laddr = htole64(mad->tx.bus + (uint64_t)slot * ERNIC_QP1_BUF_SIZE);
	wqe->length = htole32(flen);
	wqe->opcode = ERNIC_OP_SEND;
	ernic_dma_sync(dev->acc, wqe, sizeof(*wqe), ERNIC_DMA_TO_DEVICE);
	mad->sq_pi = (slot + 1) % ERNIC_QP1_DEPTH;
	/* ernic_wr orders the frame and WQE before it */
	ernic_wr(dev->acc, ERNIC_QP(ERNIC_QP1, ERNIC_SQPI), mad->sq_pi);
	pthread_mutex_unlock(&mad->lock);
	return 0;
}

int ernic_mad_tx(struct ernic_dev *dev, const struct ernic_mad_peer *dst,
		 const void *mad_buf)
{
	return mad_buf ? qp1_tx(dev, dst, mad_buf) : EINVAL;
}

int ernic_cnp_tx(struct ernic_dev *dev, const struct ernic_mad_peer *dst)
{
	return qp1_tx(dev, dst, NULL);
}

/* ---- agents ---- */

struct ernicdv_mad_agent *ernicdv_mad_agent_create(struct ibv_context *context,
						   uint8_t mgmt_class)
{
	struct ernicdv_mad_agent *a;
	struct ernic_mad *mad;
	struct ernic_dev *dev;

	if (!context || !ernicdv_is_ernic_device(context->device)) {
		errno = EINVAL;
		return NULL;
	}
	dev = ctx_dev(context);
	mad = dev->mad;
	if (!mad) {
		errno = ENODEV;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, a->sv)) {
		free(a);
		return NULL;
	}
	/* Ours never blocks the interrupt thread; theirs is as they set. */
	fcntl(a->sv[1], F_SETFL, O_NONBLOCK);
	a->dev = dev;
	a->context = context;
	a->mgmt_class = mgmt_class;
	pthread_mutex_init(&a->svc_lock, NULL);
	pthread_mutex_lock(&mad->lock);
	if (mad->agents[mgmt_class]) {
		pthread_mutex_unlock(&mad->lock);
		close(a->sv[0]);
		close(a->sv[1]);
		pthread_mutex_destroy(&a->svc_lock);
		free(a);
		errno = EBUSY;	/* one agent per class and device */
		return NULL;
	}
	mad->agents[mgmt_class] = a;
	pthread_mutex_unlock(&mad->lock);
	if (dev->client)
		ernic_client_agent(dev, mgmt_class, true);
	return a;
}

int ernicdv_mad_agent_fd(struct ernicdv_mad_agent *a)
{
	return a ? a->sv[0] : -1;
}

int ernicdv_mad_recv(struct ernicdv_mad_agent *a, struct ernicdv_mad_addr *from,
		     void *mad_buf, size_t len)
{
	struct mad_rec rec;
	ssize_t n;

	if (!a || !from || !mad_buf || len < IB_MAD_SIZE)
		return EINVAL;
	n = recv(a->sv[0], &rec, sizeof(rec), MSG_DONTWAIT);
	if (n < 0)
		return errno == EWOULDBLOCK ? EAGAIN : errno;
	if (n != (ssize_t)sizeof(rec))
		return EIO;
	*from = rec.from;
	memcpy(mad_buf, rec.mad, IB_MAD_SIZE);
	return 0;
}

int ernicdv_mad_agent_destroy(struct ernicdv_mad_agent *a)
{
	struct ernic_dev *dev;

	if (!a)
		return EINVAL;
	dev = a->dev;
	if (dev && dev->mad) {
		pthread_mutex_lock(&dev->mad->lock);
		if (dev->mad->agents[a->mgmt_class] == a)
			dev->mad->agents[a->mgmt_class] = NULL;
		pthread_mutex_unlock(&dev->mad->lock);
		if (dev->client)
			ernic_client_agent(dev, a->mgmt_class, false);
	}
	/* (A device stopped first gave them back with its process slot.) */
	while (a->nsvc)
		ernicdv_mad_release_service(a, a->svc[a->nsvc - 1]);
	free(a->svc);
	pthread_mutex_destroy(&a->svc_lock);
	close(a->sv[0]);
	close(a->sv[1]);
	free(a);
	return 0;
}

int ernicdv_mad_agent_query(struct ernicdv_mad_agent *a,
			    struct ernicdv_mad_agent_attr *attr, size_t inlen)
{
	struct ernicdv_mad_agent_attr out = { 0 };

	if (!a || !attr)
		return EINVAL;
	if (inlen < offsetof(struct ernicdv_mad_agent_attr, comm_id_tag) +
			    sizeof(out.comm_id_tag))
		return ernic_refuse(EINVAL, "ernicdv_mad_agent_query: inlen %zu "
				    "holds no comm_id_tag", inlen);
	/* Fields this library does not know must be zero. */
	for (size_t k = sizeof(out); k < inlen; k++)
		if (((const uint8_t *)attr)[k])
			return ernic_refuse(EINVAL, "ernicdv_mad_agent_query: "
					    "byte %zu past the fields of this "
					    "version is not 0", k);
	out.comm_id_tag = ERNIC_DS_COMM_TAG(a->dev->ds_slot);
	memcpy(attr, &out, inlen < sizeof(out) ? inlen : sizeof(out));
	return 0;
}

int ernicdv_mad_claim_service(struct ernicdv_mad_agent *a,
			      uint64_t service_id)
{
	int ret;

	if (!a)
		return EINVAL;
	if (a->mgmt_class != IB_MGMT_CLASS_CM)
		return ernic_refuse(EINVAL, "ernicdv_mad_claim_service: the "
				    "agent is of class 0x%02x, not the CM's",
				    a->mgmt_class);
	pthread_mutex_lock(&a->svc_lock);
	if (a->nsvc == a->svc_cap) {
		size_t cap = a->svc_cap ? 2 * a->svc_cap : 8;
		uint64_t *v = realloc(a->svc, cap * sizeof(*v));

		if (!v) {
			pthread_mutex_unlock(&a->svc_lock);
			return ENOMEM;
		}
		a->svc = v;
		a->svc_cap = cap;
	}
	ret = ernic_share_service(a->dev, service_id, true);
	if (!ret)
		a->svc[a->nsvc++] = service_id;
	else
		ernic_dbg("%s: service ID 0x%016llx: %s%s",
			  a->dev->vdev.device.name,
			  (unsigned long long)service_id, strerror(ret),
			  ret == EADDRINUSE ? " (another process on the "
					      "device listens to it)" : "");
	pthread_mutex_unlock(&a->svc_lock);
	return ret;
}

int ernicdv_mad_release_service(struct ernicdv_mad_agent *a,
				uint64_t service_id)
{
	size_t k;
	int ret;

	if (!a)
		return EINVAL;
	pthread_mutex_lock(&a->svc_lock);
	for (k = 0; k < a->nsvc && a->svc[k] != service_id; k++)
		;
	if (k == a->nsvc) {
		pthread_mutex_unlock(&a->svc_lock);
		return ENOENT;
	}
	a->svc[k] = a->svc[--a->nsvc];
	ret = ernic_share_service(a->dev, service_id, false);
	pthread_mutex_unlock(&a->svc_lock);
	return ret;
}
