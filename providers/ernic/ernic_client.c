// SPDX-License-Identifier: MIT
/*
 * A client of a hardware device's broker (ernic_broker.h): this process
 * drives its own QPs in the shared IP, and asks the broker for what is
 * the device's — pages of the DMA region, QP1's sends — and hears from it
 * what arrived for its connections (MADs) and QPs (FATAL).
 *
 * Lock contract: client->lock makes each request and its answer one
 * exchange on the control connection; it is a leaf. The event
 * connection is read by the interrupt thread alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ernic.h"
#include "ernic_broker.h"
#include "ernic_fdpass.h"

struct ernic_client {
	int ctl, ev;
	pthread_mutex_t lock;
	bool gone;		/* the broker closed the event connection */
	bool lost;		/* it said the device is gone (EB_LOST), */
	char lost_why[64];	/* and why */
};

int ernic_broker_path(const struct ernic_dev *dev, char *buf, size_t len)
{
	const char *slash = strrchr(dev->conf_path, '/');
	int n = snprintf(buf, len, "%.*s/%s",
			 slash ? (int)(slash - dev->conf_path) : 1,
			 slash ? dev->conf_path : ".", ERNIC_BROKER_SOCK);

	return n < 0 || (size_t)n >= len ? ENAMETOOLONG : 0;
}

static int dial(const struct sockaddr_un *sa, int *fd)
{
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (s < 0)
		return errno;
	if (connect(s, (const struct sockaddr *)sa, sizeof(*sa))) {
		int rc = errno;

		close(s);
		return rc;
	}
	*fd = s;
	return 0;
}

int ernic_client_connect(struct ernic_dev *dev, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ernic_client *c;
	int rc;

	if (ernic_broker_path(dev, sa.sun_path, sizeof(sa.sun_path))) {
		snprintf(err, errlen, "the broker socket beside %s: path too "
			 "long for a UNIX socket", dev->conf_path);
		return ENAMETOOLONG;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return ENOMEM;
	}
	c->ctl = c->ev = -1;
	rc = dial(&sa, &c->ctl);
	/* No socket, or nobody behind it: the device has no broker. */
	if (rc == ENOENT || rc == ECONNREFUSED) {
		free(c);
		return ENOENT;
	}
	if (!rc)
		rc = dial(&sa, &c->ev);
	if (rc) {
		snprintf(err, errlen, "the device's broker at %s: %s",
			 sa.sun_path, strerror(rc));
		if (c->ctl >= 0)
			close(c->ctl);
		free(c);
		return rc;
	}
	pthread_mutex_init(&c->lock, NULL);
	dev->client = c;
	return 0;
}

/* One request; with an answer, wait for it. Caller holds c->lock. */
static int exchange(struct ernic_client *c, struct eb_msg *m, bool answer)
{
	uint32_t op = m->op;
	ssize_t n;

	n = send(c->ctl, m, sizeof(*m), MSG_NOSIGNAL);
	if (n != (ssize_t)sizeof(*m))
		return n < 0 ? errno : EIO;
	if (!answer)
		return 0;
	do
		n = recv(c->ctl, m, sizeof(*m), 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(*m) || m->op != op)
		return n < 0 ? errno : EPIPE;	/* the broker is gone */
	return m->status;
}

static int request(struct ernic_client *c, struct eb_msg *m, bool answer)
{
	int rc;

	pthread_mutex_lock(&c->lock);
	rc = exchange(c, m, answer);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

static int pager_get(void *arg, size_t len, size_t align, uint64_t *bus)
{
	struct eb_msg m = { .op = EB_DMA_GET, .len = len, .align = align };
	int rc = request(arg, &m, true);

	if (!rc)
		*bus = m.bus;
	return rc;
}

static int pager_claim(void *arg, uint64_t bus, size_t len)
{
	struct eb_msg m = { .op = EB_DMA_CLAIM, .bus = bus, .len = len };

	return request(arg, &m, true);
}

static void pager_put(void *arg, uint64_t bus, size_t len)
{
	struct eb_msg m = { .op = EB_DMA_PUT, .bus = bus, .len = len };
	int rc = request(arg, &m, false);

	if (rc)
		ernic_log("cannot give %zu bytes of DMA memory back to the "
			  "broker: %s", len, strerror(rc));
}

int ernic_client_attach(struct ernic_dev *dev,
			struct ernic_access_share *share, char *err,
			size_t errlen)
{
	struct ernic_client *c = dev->client;
	struct eb_msg m = { .op = EB_ATTACH, .version = ERNIC_BROKER_VERSION };
	int fds[2] = { -1, -1 }, rc = 0;
	ssize_t n;

	pthread_mutex_lock(&c->lock);
	n = send(c->ctl, &m, sizeof(m), MSG_NOSIGNAL);
	if (n == (ssize_t)sizeof(m))
		n = ernic_fdpass_recv(c->ctl, &m, sizeof(m), fds, 2);
	else
		rc = n < 0 ? errno : EIO;
	pthread_mutex_unlock(&c->lock);
	/* A refusal comes without files: its status says why. */
	if (!rc && n != (ssize_t)sizeof(m))
		rc = n < 0 ? (int)-n : EPIPE;	/* 0: the broker is gone */
	else if (!rc && m.op != EB_ATTACH)
		rc = EPROTO;
	else if (!rc)
		rc = m.status ? m.status : fds[0] < 0 ? EPROTO : 0;
	if (rc) {
		snprintf(err, errlen, "the device's broker did not give us the "
			 "device: %s%s", strerror(rc), rc == EACCES ?
			 " (only its own user or root may use it)" : "");
		if (n > 0 && fds[0] >= 0) {
			close(fds[0]);
			close(fds[1]);
		}
		return rc;
	}
	*share = (struct ernic_access_share){ .device_fd = fds[0],
					      .region_fd = fds[1],
					      .region_bus = m.bus,
					      .region_len = m.len };
	return 0;
}

int ernic_client_hello(struct ernic_dev *dev, char *err, size_t errlen)
{
	struct ernic_client *c = dev->client;
	struct ernic_access *acc = dev->acc;
	struct eb_msg m = { .op = EB_HELLO, .version = ERNIC_BROKER_VERSION,
			    .slot = dev->ds_slot };
	struct ernic_pager pager = { pager_get, pager_claim, pager_put, c };
	int rc;

	if (!acc->ops->set_pager || !acc->ops->dma_view) {
		snprintf(err, errlen, "the %s backend cannot share a device",
			 acc->ops->name);
		return EOPNOTSUPP;
	}
	rc = request(c, &m, true);
	if (rc) {
		snprintf(err, errlen, "the device's broker refused us: %s%s",
			 strerror(rc), rc == EPROTO ? " (another version of "
			 "libernic: restart the device with ernicctl)" : "");
		return rc;
	}
	rc = acc->ops->dma_view(acc, m.bus, m.len, &dev->dbpool);
	if (rc) {
		snprintf(err, errlen, "the broker's doorbell pool at %#llx "
			 "(%llu bytes) is not in our DMA region",
			 (unsigned long long)m.bus, (unsigned long long)m.len);
		return rc;
	}
	if (m.len < (uint64_t)dev->conf.c_num_qp * ERNIC_DB_STRIDE) {
		snprintf(err, errlen, "the broker's doorbell pool holds %llu "
			 "bytes, C_NUM_QP=%u needs %u", (unsigned long long)m.len,
			 dev->conf.c_num_qp,
			 dev->conf.c_num_qp * ERNIC_DB_STRIDE);
		memset(&dev->dbpool, 0, sizeof(dev->dbpool));
		return EPROTO;
	}
	m = (struct eb_msg){ .op = EB_HELLO_EV,
			     .version = ERNIC_BROKER_VERSION,
			     .slot = dev->ds_slot };
	if (send(c->ev, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m)) {
		rc = errno;
		snprintf(err, errlen, "the device's broker: %s", strerror(rc));
		return rc;
	}
	acc->ops->set_pager(acc, &pager);
	return 0;
}

void ernic_client_close(struct ernic_dev *dev)
{
	struct ernic_client *c = dev->client;

	if (!c)
		return;
	close(c->ev);
	close(c->ctl);
	pthread_mutex_destroy(&c->lock);
	free(c);
	dev->client = NULL;
}

int ernic_client_event_fd(struct ernic_dev *dev)
{
	return dev->client && !dev->client->gone ? dev->client->ev : -1;
}

void ernic_client_event(struct ernic_dev *dev)
{
	struct ernic_client *c = dev->client;
	struct eb_msg m;
	ssize_t n;

	while ((n = recv(c->ev, &m, sizeof(m), MSG_DONTWAIT)) ==
	       (ssize_t)sizeof(m)) {
		if (m.op == EB_MAD_RECV)
			ernic_mad_deliver(dev, &m.from, m.mad);
		else if (m.op == EB_FATAL)
			ernic_events_fatal(dev, m.qpn, m.code);
		else if (m.op == EB_KICK)
			ernic_events_kicked(dev);
		else if (m.op == EB_LOST) {
			/* the broker's text, cut to fit, terminated */
			c->lost = true;
			memcpy(c->lost_why, m.mad, sizeof(c->lost_why) - 1);
			c->lost_why[sizeof(c->lost_why) - 1] = '\0';
		}
		else
			ernic_log("the broker sent an unknown message %u",
				  m.op);
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* End of the connection: without its broker the IP serves nobody. */
	if (c->lost)
		ernic_log("%s: %s: the device is gone (removed, or its link "
			  "is down); its QPs are in error",
			  dev->vdev.device.name, c->lost_why);
	else
		ernic_log("%s: the device's broker is gone: the device is lost",
			  dev->vdev.device.name);
	c->gone = true;
	ernic_events_lost(dev);
}

int ernic_client_mad_send(struct ernic_dev *dev,
			  const struct ernic_mad_peer *peer, const void *mad)
{
	struct eb_msg m = { .op = EB_MAD_SEND, .peer = *peer };

	memcpy(m.mad, mad, IB_MAD_SIZE);
	return request(dev->client, &m, false);
}

void ernic_client_agent(struct ernic_dev *dev, uint8_t mgmt_class, bool on)
{
	struct eb_msg m = { .op = EB_AGENT, .mgmt_class = mgmt_class,
			    .on = on };
	int rc = request(dev->client, &m, false);

	if (rc)
		ernic_log("cannot tell the broker of a MAD agent: %s",
			  strerror(rc));
}
