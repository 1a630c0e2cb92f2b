// SPDX-License-Identifier: MIT
/*
 * The broker of a hardware ERNIC shared by processes (ernic_broker.h,
 * docs/multiprocess.md). It starts the device as its first user would —
 * global configuration, QP1, the interrupt thread — and then serves its
 * clients over a UNIX socket beside the device's ernic.conf:
 *
 * - pages of the DMA region, zeroed, recorded per connection;
 * - QP1: MADs clients send go out of its SQ; MADs that arrive go to the
 *   client whose connection they name, by the same keys the software
 *   devices' eBPF steering uses (a REQ by the service ID its listener
 *   claimed in the state file, every other CM message by the process
 *   tag in its remote communication ID), else to a client with an agent
 *   of the class (which answers a REQ nobody listens to with a REJ), or
 *   when there is none, to the broker program's own answer (unrouted);
 * - FATALs of the error queue go to the QP's owner.
 *
 * When a client's control connection ends while its slot in the state
 * file is still attached, the client died: its QPs are disabled and its
 * PD-table slots cleared in the IP (so its keys stop matching at once),
 * then the state file frees its numbers and the broker its pages.
 *
 * Locking: b->lock guards the connection table; the interrupt thread
 * reads it to route. Order: the state file's lock, then b->lock.
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ernic.h"
#include "ernic_broker.h"
#include "ernic_fdpass.h"

#define MAX_CONNS (2 * ERNIC_DS_PROCS + 16)

enum conn_kind { CONN_NEW, CONN_CTL, CONN_EV };

struct conn {
	enum conn_kind kind;
	int fd;
	pid_t pid;			/* SO_PEERCRED at accept */
	uid_t uid;
	uint32_t slot, gen;		/* CONN_CTL, CONN_EV */
	int ev;				/* CONN_CTL: its event connection */
	uint8_t agents[256 / 8];	/* CONN_CTL: classes with an agent */
	/* CONN_CTL: a KICK its event connection had no room for, sent
	 * when there is (under b->lock) */
	bool kick_due;
	struct ernic_dma *dma;		/* CONN_CTL: pages it holds */
	size_t ndma, cap;
};

struct ernic_broker {
	struct ernic_dev *dev;
	int lfd;
	/* answers to unrouted MADs, from the interrupt thread (which holds
	 * QP1's lock) to the broker's thread, which sends them */
	ernic_broker_unrouted_fn unrouted;
	int answers[2];
	struct sockaddr_un sa;
	pthread_mutex_t lock;		/* conns */
	struct conn *conns[MAX_CONNS];
	size_t nconns;
};

/* ---- routing (the interrupt thread) ---- */

/* The control connection of slot, or with an agent of class when slot
 * is ERNIC_DS_NONE (the lowest slot). Caller holds b->lock. */
static struct conn *ctl_for(struct ernic_broker *b, uint32_t slot,
			    uint8_t cls)
{
	struct conn *best = NULL;

	for (size_t k = 0; k < b->nconns; k++) {
		struct conn *c = b->conns[k];

		if (c->kind != CONN_CTL || c->ev < 0 ||
		    !(c->agents[cls / 8] & 1u << (cls % 8)))
			continue;
		if (slot != ERNIC_DS_NONE) {
			if (c->slot == slot)
				return c;
		} else if (!best || c->slot < best->slot) {
			best = c;
		}
	}
	return best;
}

/* Whose connection a CM MAD names: its listener's slot (a REQ) or the
 * slot in the communication ID we chose; ERNIC_DS_NONE if nobody's. */
static uint32_t cm_slot(struct ernic_dev *dev, const uint8_t *mad)
{
	uint16_t attr;
	uint32_t slot = ERNIC_DS_NONE;
	uint64_t sid;

	memcpy(&attr, mad + IB_MAD_ATTR_ID_OFF, 2);
	if (be16toh(attr) != IB_CM_ATTR_REQ) {
		uint8_t tag = mad[IB_CM_REMOTE_COMM_ID_OFF];

		return tag ? tag - 1u : ERNIC_DS_NONE;
	}
	memcpy(&sid, mad + IB_CM_REQ_SERVICE_ID_OFF, 8);
	sid = be64toh(sid);
	if (ernic_share_lock(dev))
		return ERNIC_DS_NONE;
	for (uint32_t k = 0; k < ERNIC_DS_SERVICES; k++) {
		const struct ernic_ds_svc *v = &dev->ds.ds->svc[k];

		if (v->refs && v->id == sid) {
			slot = v->slot;
			break;
		}
	}
	ernic_share_unlock(dev);
	return slot;
}

static void push(struct conn *c, const struct eb_msg *m)
{
	/* A client that stopped reading loses the message (its peer
	 * retransmits a MAD) rather than stalling the device. */
	if (send(c->ev, m, sizeof(*m), MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    (ssize_t)sizeof(*m))
		ernic_dbg("broker: a message for slot %u lost: %s", c->slot,
			  strerror(errno));
}

bool ernic_broker_mad_rx(struct ernic_dev *dev,
			 const struct ernicdv_mad_addr *from,
			 const uint8_t *mad)
{
	struct ernic_broker *b = dev->broker;
	uint8_t cls = mad[IB_MAD_CLASS_OFF];
	uint32_t slot = cls == IB_MGMT_CLASS_CM ? cm_slot(dev, mad) :
						  ERNIC_DS_NONE;
	struct eb_msg m = { .op = EB_MAD_RECV, .from = *from };
	struct conn *c;

	memcpy(m.mad, mad, IB_MAD_SIZE);
	pthread_mutex_lock(&b->lock);
	c = ctl_for(b, slot, cls);
	/* A slot that is gone: whoever answers for unknown connections. */
	if (!c && slot != ERNIC_DS_NONE)
		c = ctl_for(b, ERNIC_DS_NONE, cls);
	if (c) {
		m.slot = c->slot;
		push(c, &m);
	}
	pthread_mutex_unlock(&b->lock);
	if (!c && b->unrouted) {
		struct eb_msg a = { .op = EB_MAD_SEND };

		if (b->unrouted(mad, a.mad)) {
			memcpy(a.peer.gid, from->gid, 16);
			memcpy(a.peer.mac, from->mac, 6);
			a.peer.qpn = from->qpn;
			a.peer.pkey = from->pkey;
			if (send(b->answers[1], &a, sizeof(a),
				 MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(a))
				ernic_dbg("broker: an answer to a MAD lost");
		}
		return true;
	}
	return c != NULL;
}

void ernic_broker_fatal(struct ernic_dev *dev, uint32_t qpn, uint32_t code)
{
	struct ernic_broker *b = dev->broker;
	struct eb_msg m = { .op = EB_FATAL, .qpn = qpn, .code = code };
	uint8_t owner = dev->ds.ds->qp_owner[qpn];

	pthread_mutex_lock(&b->lock);
	for (size_t k = 0; k < b->nconns; k++) {
		struct conn *c = b->conns[k];

		if (c->kind == CONN_CTL && c->slot == owner && c->ev >= 0) {
			push(c, &m);
			break;
		}
	}
	pthread_mutex_unlock(&b->lock);
}

/* Send c a kick. A kick is not dropped: a bit set while the owner's
 * interrupt status is being serviced raises no new cause once INTSTS is
 * clear, so the owner may hear of it only from this kick. When the event
 * connection is full, it stays due (one kick stands for any number) and
 * the broker's thread sends it as soon as there is room. Caller holds
 * b->lock. */
static void kick_send(struct ernic_broker *b, struct conn *c)
{
	static const struct eb_msg kick = { .op = EB_KICK };
	bool was_due = c->kick_due;

	c->kick_due = send(c->ev, &kick, sizeof(kick),
			   MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(kick);
	if (c->kick_due && !was_due) {
		const struct eb_msg wake = { .op = 0 };

		/* the broker's thread polls for room from now on */
		if (send(b->answers[1], &wake, sizeof(wake),
			 MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			ernic_dbg("broker: cannot wake its thread");
	}
}

void ernic_broker_lost(struct ernic_dev *dev)
{
	struct ernic_broker *b = dev->broker;
	const struct eb_msg wake = { .op = 0 };

	if (send(b->answers[1], &wake, sizeof(wake),
		 MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		ernic_log("broker: cannot wake its thread: %s",
			  strerror(errno));
}

void ernic_broker_kick(struct ernic_dev *dev)
{
	struct ernic_broker *b = dev->broker;
	const uint8_t *owner = dev->ds.ds->qp_owner;
	const uint32_t nwords = ERNIC_QPINT_WORD(dev->conf.c_num_qp);
	uint8_t kick[ERNIC_DS_PROCS / 8] = { 0 };

	/* Each owner clears its own bits when it services them; until
	 * then a bit stays set, and every interrupt kicks its owner. */
	for (uint32_t w = 1; w <= nwords; w++) {
		uint32_t v = ernic_rd(dev->acc, ERNIC_CQINTSTS(w)) |
			     ernic_rd(dev->acc, ERNIC_RQINTSTS(w));

		for (uint32_t bit = 0; v && bit < 32; bit++) {
			uint32_t i = (w - 1) * 32 + bit + 1;

			if (!(v & 1u << bit) || i > dev->conf.c_num_qp ||
			    owner[i] >= ERNIC_DS_PROCS)
				continue;
			kick[owner[i] / 8] |= 1u << (owner[i] % 8);
		}
	}
	pthread_mutex_lock(&b->lock);
	for (size_t k = 0; k < b->nconns; k++) {
		struct conn *c = b->conns[k];

		if (c->kind == CONN_CTL && c->ev >= 0 &&
		    (kick[c->slot / 8] & 1u << (c->slot % 8)))
			kick_send(b, c);
	}
	pthread_mutex_unlock(&b->lock);
}

/* ---- connections (the broker's thread) ---- */

static void conn_add(struct ernic_broker *b, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct conn *c;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    b->nconns == MAX_CONNS || !(c = calloc(1, sizeof(*c)))) {
		ernic_log("broker: a client refused: %s",
			  b->nconns == MAX_CONNS ? "too many connections" :
						   strerror(errno));
		close(fd);
		return;
	}
	c->fd = fd;
	c->ev = -1;
	c->pid = cred.pid;
	c->uid = cred.uid;
	pthread_mutex_lock(&b->lock);
	b->conns[b->nconns++] = c;
	pthread_mutex_unlock(&b->lock);
}

/* Its pages, after the IP stopped using them. */
static void conn_pages_free(struct ernic_dev *dev, struct conn *c)
{
	for (size_t k = 0; k < c->ndma; k++)
		dev->acc->ops->dma_free(dev->acc, &c->dma[k]);
	free(c->dma);
	c->dma = NULL;
	c->ndma = c->cap = 0;
}

/* The end of connection k. When the broker stops, its clients are alive
 * (and lose the device); otherwise a client's end may be its death. */
static void conn_close(struct ernic_broker *b, size_t k, bool stopping)
{
	struct ernic_dev *dev = b->dev;
	struct conn *c = b->conns[k];
	struct ernic_ds *ds = dev->ds.ds;

	if (c->kind == CONN_CTL && !stopping && !ernic_share_lock(dev)) {
		/* A client detaches before it hangs up: one that did not
		 * died. Clean the IP of it, then free its numbers. */
		if (ds->proc[c->slot].pid == c->pid &&
		    ds->proc[c->slot].gen == c->gen) {
			ernic_log("%s: broker: process %d (slot %u) ended "
				  "without closing the device: reclaiming its "
				  "QPs and keys",
				  dev->vdev.device.name, (int)c->pid,
				  c->slot);
			ernic_ds_reap_slot(ds, c->slot, ernic_share_hw_dead,
					   dev);
		}
		ernic_share_unlock(dev);
	}
	conn_pages_free(dev, c);
	pthread_mutex_lock(&b->lock);
	b->conns[k] = b->conns[--b->nconns];
	pthread_mutex_unlock(&b->lock);
	if (c->ev >= 0)
		close(c->ev);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

static int answer(struct conn *c, struct eb_msg *m, int status)
{
	m->status = status;
	return send(c->fd, m, sizeof(*m), MSG_NOSIGNAL) == (ssize_t)sizeof(*m) ?
		       0 : EPIPE;
}

static int on_hello(struct ernic_broker *b, struct conn *c, struct eb_msg *m)
{
	struct ernic_dev *dev = b->dev;
	const struct ernic_ds_proc *p;
	int status = 0;

	if (m->version != ERNIC_BROKER_VERSION || m->slot >= ERNIC_DS_PROCS)
		status = EPROTO;
	else if (ernic_share_lock(dev))
		status = EIO;
	if (!status) {
		p = &dev->ds.ds->proc[m->slot];
		/* the slot must be the caller's own */
		if (p->pid != c->pid || !p->broker_reaps)
			status = EPERM;
		c->gen = p->gen;
		ernic_share_unlock(dev);
	}
	if (status) {
		ernic_log("%s: broker: process %d refused: %s",
			  dev->vdev.device.name, (int)c->pid,
			  status == EPROTO ? "another protocol version" :
					     "slot not its own");
		if (m->op == EB_HELLO)
			answer(c, m, status);
		return status;
	}
	c->slot = m->slot;
	if (m->op == EB_HELLO_EV) {
		/* becomes the event side of the slot's control connection */
		pthread_mutex_lock(&b->lock);
		for (size_t k = 0; k < b->nconns; k++) {
			struct conn *o = b->conns[k];

			if (o->kind == CONN_CTL && o->slot == c->slot &&
			    o->pid == c->pid && o->ev < 0) {
				o->ev = c->fd;
				c->fd = -1;
				break;
			}
		}
		pthread_mutex_unlock(&b->lock);
		return c->fd < 0 ? 0 : EPROTO;
	}
	c->kind = CONN_CTL;
	m->bus = dev->dbpool.bus;
	m->len = dev->dbpool.len;
	return answer(c, m, 0);
}

/* DMA_GET, or DMA_CLAIM of exactly m->bus. */
static int on_dma_get(struct ernic_broker *b, struct conn *c,
		      struct eb_msg *m)
{
	struct ernic_access *acc = b->dev->acc;
	struct ernic_dma d;
	int rc;

	if (c->ndma == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct ernic_dma *v = realloc(c->dma, cap * sizeof(*v));

		if (!v)
			return answer(c, m, ENOMEM);
		c->dma = v;
		c->cap = cap;
	}
	if (!m->len || m->len > SIZE_MAX || (m->align & (m->align - 1)))
		return answer(c, m, EINVAL);
	rc = m->op == EB_DMA_CLAIM ?
		     (acc->ops->dma_claim ?
			      acc->ops->dma_claim(acc, m->bus, m->len, &d) :
			      EOPNOTSUPP) :
		     acc->ops->dma_alloc(acc, m->len, m->align, &d);
	if (rc)
		return answer(c, m, rc);
	c->dma[c->ndma++] = d;
	m->bus = d.bus;
	return answer(c, m, 0);
}

/* Every allocation inside [bus, bus + len): a buffer that grew over
 * claimed pages goes back whole. */
static int on_dma_put(struct ernic_broker *b, struct conn *c,
		      const struct eb_msg *m)
{
	bool found = false;

	for (size_t k = c->ndma; k-- > 0;) {
		struct ernic_dma *d = &c->dma[k];

		if (d->bus < m->bus || d->bus - m->bus >= m->len ||
		    d->len > m->len - (d->bus - m->bus))
			continue;
		b->dev->acc->ops->dma_free(b->dev->acc, d);
		*d = c->dma[--c->ndma];
		found = true;
	}
	if (!found)
		ernic_log("broker: process %d gave back pages at %#llx it "
			  "does not hold", (int)c->pid,
			  (unsigned long long)m->bus);
	return 0;
}

/*
 * The files of a device a client cannot open itself (VFIO: one process
 * holds the group). Whoever has them can drive the whole device, so
 * only a process of the broker's own user, or root, gets them: the
 * same processes that could have opened the group.
 */
static int on_attach(struct ernic_broker *b, struct conn *c, struct eb_msg *m)
{
	struct ernic_access *acc = b->dev->acc;
	struct ernic_access_share sh;

	if (!acc->ops->share_export)
		return answer(c, m, EOPNOTSUPP);
	if (c->uid != 0 && c->uid != geteuid()) {
		ernic_log("%s: broker: process %d of user %u refused the "
			  "device: only user %u or root may use it",
			  b->dev->vdev.device.name, (int)c->pid,
			  (unsigned int)c->uid, (unsigned int)geteuid());
		return answer(c, m, EACCES);
	}
	acc->ops->share_export(acc, &sh);
	m->status = 0;
	m->bus = sh.region_bus;
	m->len = sh.region_len;
	return ernic_fdpass_send(c->fd, m, sizeof(*m),
				 (const int[]){ sh.device_fd, sh.region_fd },
				 2) ? EPIPE : 0;
}

/* One message on connection k. Non-zero: close it. */
static int on_msg(struct ernic_broker *b, struct conn *c, struct eb_msg *m)
{
	if (c->kind == CONN_NEW)
		return m->op == EB_HELLO || m->op == EB_HELLO_EV ?
			       on_hello(b, c, m) :
		       m->op == EB_ATTACH ? on_attach(b, c, m) : EPROTO;
	switch (m->op) {
	case EB_DMA_GET:
	case EB_DMA_CLAIM:
		return on_dma_get(b, c, m);
	case EB_DMA_PUT:
		return on_dma_put(b, c, m);
	case EB_MAD_SEND: {
		int rc = ernic_mad_tx(b->dev, &m->peer, m->mad);

		if (rc)
			ernic_dbg("broker: a MAD of process %d not sent: %s",
				  (int)c->pid, strerror(rc));
		return 0;
	}
	case EB_AGENT:
		pthread_mutex_lock(&b->lock);
		if (m->on)
			c->agents[m->mgmt_class / 8] |= 1u << (m->mgmt_class % 8);
		else
			c->agents[m->mgmt_class / 8] &=
				~(1u << (m->mgmt_class % 8));
		pthread_mutex_unlock(&b->lock);
		return 0;
	default:
		return EPROTO;
	}
}

/* The answers the interrupt thread made: out of QP1. */
static void send_answers(struct ernic_broker *b)
{
	struct eb_msg m;

	while (recv(b->answers[0], &m, sizeof(m), MSG_DONTWAIT) ==
	       (ssize_t)sizeof(m)) {
		int rc;

		if (m.op != EB_MAD_SEND)
			continue;	/* a wake: kicks are due */
		rc = ernic_mad_tx(b->dev, &m.peer, m.mad);

		if (rc)
			ernic_dbg("broker: an answer to a MAD not sent: %s",
				  strerror(rc));
	}
}

/* The device is gone: each client hears why (a text in the message's
 * MAD field) before its connections close, which ends the service. */
static void lost_tell(struct ernic_broker *b)
{
	struct eb_msg m = { .op = EB_LOST };

	snprintf((char *)m.mad, sizeof(m.mad), "%s",
		 b->dev->lost_why ? b->dev->lost_why : "the device is lost");

	ernic_log("broker: %s is gone: its processes lose it",
		  b->dev->vdev.device.name);
	pthread_mutex_lock(&b->lock);
	for (size_t k = 0; k < b->nconns; k++)
		if (b->conns[k]->kind == CONN_CTL && b->conns[k]->ev >= 0)
			push(b->conns[k], &m);
	pthread_mutex_unlock(&b->lock);
}

enum { PFD_STOP, PFD_LISTEN, PFD_ANSWERS, PFD_CONNS };

static void serve(struct ernic_broker *b, int stop_fd)
{
	struct pollfd pfd[2 * MAX_CONNS + PFD_CONNS];

	for (;;) {
		size_t n = b->nconns;

		pfd[PFD_STOP] = (struct pollfd){ .fd = stop_fd,
						 .events = POLLIN };
		pfd[PFD_LISTEN] = (struct pollfd){ .fd = b->lfd,
						   .events = POLLIN };
		pfd[PFD_ANSWERS] = (struct pollfd){ .fd = b->answers[0],
						    .events = POLLIN };
		size_t ndue = 0;
		struct conn *due[MAX_CONNS];

		for (size_t k = 0; k < n; k++)
			pfd[k + PFD_CONNS] = (struct pollfd){
				.fd = b->conns[k]->fd, .events = POLLIN };
		/* event connections with a kick due: room for it */
		pthread_mutex_lock(&b->lock);
		for (size_t k = 0; k < n; k++)
			if (b->conns[k]->kick_due) {
				due[ndue] = b->conns[k];
				pfd[n + PFD_CONNS + ndue++] = (struct pollfd){
					.fd = b->conns[k]->ev,
					.events = POLLOUT };
			}
		pthread_mutex_unlock(&b->lock);
		if (poll(pfd, n + PFD_CONNS + ndue, -1) < 0) {
			if (errno == EINTR)
				continue;
			ernic_log("broker: poll: %s", strerror(errno));
			return;
		}
		if (pfd[PFD_STOP].revents)
			return;
		if (atomic_load(&b->dev->lost)) {
			lost_tell(b);
			return;
		}
		if (pfd[PFD_ANSWERS].revents)
			send_answers(b);
		pthread_mutex_lock(&b->lock);
		for (size_t k = 0; k < ndue; k++)
			if (pfd[n + PFD_CONNS + k].revents && due[k]->kick_due)
				kick_send(b, due[k]);
		pthread_mutex_unlock(&b->lock);
		/* from the last, so that a closed one moves no unseen one */
		for (size_t k = n; k-- > 0;) {
			struct conn *c = b->conns[k];
			struct eb_msg m;
			ssize_t got;
			int rc;

			if (!pfd[k + PFD_CONNS].revents)
				continue;
			got = recv(c->fd, &m, sizeof(m), MSG_DONTWAIT);
			if (got < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			rc = got == (ssize_t)sizeof(m) ? on_msg(b, c, &m) :
							 EPIPE;
			if (rc && rc != EPIPE && got > 0)
				ernic_log("broker: process %d: bad message "
					  "%u: %s", (int)c->pid, m.op,
					  strerror(rc));
			/* an event connection handed over, or the end */
			if (rc || c->fd < 0)
				conn_close(b, k, false);
		}
		if (pfd[PFD_LISTEN].revents & POLLIN) {
			int fd = accept4(b->lfd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0)
				conn_add(b, fd);
		}
	}
}

static int listen_on(struct ernic_broker *b, char *err, size_t errlen)
{
	int s, rc;

	if (ernic_broker_path(b->dev, b->sa.sun_path, sizeof(b->sa.sun_path))) {
		snprintf(err, errlen, "the broker socket beside %s: path too "
			 "long for a UNIX socket", b->dev->conf_path);
		return ENAMETOOLONG;
	}
	b->sa.sun_family = AF_UNIX;
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		goto fail;
	/* The device is ours (opened alone first): a socket left there
	 * is a dead broker's. */
	unlink(b->sa.sun_path);
	if (bind(s, (struct sockaddr *)&b->sa, sizeof(b->sa)) ||
	    chmod(b->sa.sun_path, 0666) || listen(s, 64))
		goto fail;
	b->lfd = s;
	return 0;
fail:
	rc = errno;
	snprintf(err, errlen, "broker socket %s: %s", b->sa.sun_path,
		 strerror(rc));
	if (s >= 0)
		close(s);
	return rc;
}

int ernic_broker_run(const char *conf_path, const char *name, int stop_fd,
		     int ready_fd, ernic_broker_unrouted_fn unrouted,
		     char *err, size_t errlen)
{
	struct ernic_broker b = { .lfd = -1, .unrouted = unrouted };
	struct ernic_dev *dev;
	int ret;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, b.answers)) {
		ret = errno;
		snprintf(err, errlen, "socketpair: %s", strerror(ret));
		return ret;
	}
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		snprintf(err, errlen, "out of memory");
		close(b.answers[0]);
		close(b.answers[1]);
		return ENOMEM;
	}
	snprintf(dev->conf_path, sizeof(dev->conf_path), "%s", conf_path);
	snprintf(dev->vdev.device.name, sizeof(dev->vdev.device.name), "%s",
		 name);
	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->ev_lock, NULL);
	pthread_mutex_init(&b.lock, NULL);
	b.dev = dev;
	dev->hw_role = ERNIC_HW_BROKER;
	/* before the interrupt thread starts: it routes through b (to
	 * nobody until clients come) */
	dev->broker = &b;

	pthread_mutex_lock(&dev->lock);
	ret = ernic_dev_start(dev, err, errlen);
	pthread_mutex_unlock(&dev->lock);
	if (!ret && dev->conf.backend == ERNIC_BACKEND_SW) {
		snprintf(err, errlen, "a %s device has no broker: only UIO "
			 "and VFIO devices are shared through one",
			 ernic_backend_name(dev->conf.backend));
		ret = EOPNOTSUPP;
		pthread_mutex_lock(&dev->lock);
		ernic_dev_stop(dev);
		pthread_mutex_unlock(&dev->lock);
	}
	if (ret)
		goto out;
	ret = listen_on(&b, err, errlen);
	if (!ret) {
		if (ready_fd >= 0 && write(ready_fd, "ready\n", 6) != 6)
			ernic_log("broker: cannot say it is ready: %s",
				  strerror(errno));
		serve(&b, stop_fd);
		close(b.lfd);
		unlink(b.sa.sun_path);
	}
	while (b.nconns)
		conn_close(&b, b.nconns - 1, true);
	pthread_mutex_lock(&dev->lock);
	ernic_dev_stop(dev);	/* routing ends with the interrupt thread */
	pthread_mutex_unlock(&dev->lock);
out:
	close(b.answers[0]);
	close(b.answers[1]);
	pthread_mutex_destroy(&b.lock);
	pthread_mutex_destroy(&dev->ev_lock);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
	return ret;
}
