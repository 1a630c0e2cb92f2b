// SPDX-License-Identifier: MIT
/*
 * Event channels and events. A channel is a socket pair and a queue: every
 * queued event writes one byte, rdma_get_cm_event() reads one and takes
 * the oldest event. So the channel's fd polls readable exactly while an
 * event waits, blocks or not as the application set it (O_NONBLOCK:
 * EAGAIN), and events keep their order.
 *
 * An id counts the events it was given and not yet acknowledged;
 * rdma_destroy_id() waits for them, as librdmacm's does, because the
 * application may still be reading an event's private data.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cma.h"

struct cma_event {
	struct rdma_cm_event ev;	/* first: what the application holds */
	struct cma_id *owner;		/* the id whose count it is in */
	struct cma_event *next;
	uint8_t pdata[IB_MAD_SIZE];
};


/* Guards every id's events_pending and its condition. */
static pthread_mutex_t ack_lock = PTHREAD_MUTEX_INITIALIZER;

struct cma_channel *cma_channel_of(struct rdma_event_channel *ch)
{
	return (struct cma_channel *)ch;
}

CMA_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct cma_channel *c = calloc(1, sizeof(*c));
	int p[2];

	if (!c)
		return NULL;
	/* A socket pair, not a pipe: both ends can be used without
	 * blocking (MSG_DONTWAIT) whatever the application sets on its fd. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p)) {
		free(c);
		return NULL;
	}
	shutdown(p[0], SHUT_WR);
	c->ch.fd = p[0];
	c->wfd = p[1];
	pthread_mutex_init(&c->lock, NULL);
	return &c->ch;
}

/*
 * A destroyed channel's sockets stay open for a while, idle: a thread of
 * the application may be about to read the channel as another destroys
 * it (rping's event thread, as its program ends). On the kernel's
 * channel that thread usually is already blocked in read() and stays
 * blocked; here it may come a moment later, and would get EBADF (rping
 * then exits with an error). So it blocks too, on an fd nobody writes.
 * The last CMA_PARKED channels are kept; an older one is closed as a
 * new one comes (a thread blocked on it stays blocked: close(2) does not
 * wake it), and its memory goes only if no reader is inside.
 */
#define CMA_PARKED 16
static struct cma_channel *parked[CMA_PARKED];
static unsigned int parked_next;
static pthread_mutex_t parked_lock = PTHREAD_MUTEX_INITIALIZER;

CMA_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cma_channel *c = cma_channel_of(channel), *old;
	char buf[64];

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	while (c->head) {
		struct cma_event *e = c->head;

		c->head = e->next;
		free(e);
	}
	c->tail = NULL;
	/* Their bytes too: a late reader must find nothing to wake it. */
	while (recv(c->ch.fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	pthread_mutex_unlock(&c->lock);

	pthread_mutex_lock(&parked_lock);
	old = parked[parked_next];
	parked[parked_next] = c;
	parked_next = (parked_next + 1) % CMA_PARKED;
	pthread_mutex_unlock(&parked_lock);
	if (!old)
		return;
	close(old->ch.fd);
	if (atomic_load(&old->readers))
		return;	/* blocked for ever on it: its sockets and memory stay */
	close(old->wfd);
	pthread_mutex_destroy(&old->lock);
	free(old);
}

int cma_post_event(struct cma_id *id, struct cma_id *listen_id,
		   enum rdma_cm_event_type type, int status,
		   const void *pdata, size_t pdata_len,
		   const struct rdma_conn_param *conn)
{
	struct cma_id *owner = listen_id ? listen_id : id;
	struct cma_channel *c = owner->chan;
	struct cma_event *e;
	char one = 1;

	if (!c)
		return EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return ENOMEM;
	e->ev.id = &id->id;
	e->ev.listen_id = listen_id ? &listen_id->id : NULL;
	e->ev.event = type;
	e->ev.status = status;
	if (conn)
		e->ev.param.conn = *conn;
	if (pdata_len > sizeof(e->pdata))
		pdata_len = sizeof(e->pdata);
	if (pdata_len) {
		memcpy(e->pdata, pdata, pdata_len);
		e->ev.param.conn.private_data = e->pdata;
		e->ev.param.conn.private_data_len = (uint8_t)pdata_len;
	} else {
		e->ev.param.conn.private_data = NULL;
		e->ev.param.conn.private_data_len = 0;
	}
	e->owner = owner;
	pthread_mutex_lock(&ack_lock);
	owner->events_pending++;
	pthread_mutex_unlock(&ack_lock);

	pthread_mutex_lock(&c->lock);
	if (c->tail)
		c->tail->next = e;
	else
		c->head = e;
	c->tail = e;
	if (send(c->wfd, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1) {
		/* The socket's buffer is full of events nobody reads. */
		c->tail = NULL;
		for (struct cma_event **p = &c->head; *p; p = &(*p)->next)
			if (*p == e) {
				*p = NULL;
				break;
			}
		for (struct cma_event *q = c->head; q; q = q->next)
			c->tail = q;
		pthread_mutex_unlock(&c->lock);
		pthread_mutex_lock(&ack_lock);
		owner->events_pending--;
		pthread_mutex_unlock(&ack_lock);
		free(e);
		return ENOSPC;
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

CMA_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel,
				 struct rdma_cm_event **event)
{
	struct cma_channel *c = cma_channel_of(channel);
	struct cma_event *e;
	char one;
	ssize_t n;

	if (!c || !event)
		return cma_ret(EINVAL);
	for (;;) {
		atomic_fetch_add(&c->readers, 1);
		do
			n = read(c->ch.fd, &one, 1);
		while (n < 0 && errno == EINTR);
		atomic_fetch_sub(&c->readers, 1);
		if (n < 0)
			return -1;	/* EAGAIN on a non-blocking channel */
		if (n == 0)
			return cma_ret(ENODATA);
		pthread_mutex_lock(&c->lock);
		e = c->head;
		if (e) {
			c->head = e->next;
			if (!c->head)
				c->tail = NULL;
		}
		pthread_mutex_unlock(&c->lock);
		if (e)
			break;
		/* The byte was an event that rdma_destroy_id or
		 * rdma_migrate_id took away meanwhile (take_events): as
		 * with the kernel's ucma, a blocking reader waits for the
		 * next one, a non-blocking one finds none. */
		if (fcntl(c->ch.fd, F_GETFL) & O_NONBLOCK)
			return cma_ret(EAGAIN);
	}
	*event = &e->ev;
	return 0;
}

CMA_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cma_event *e = (struct cma_event *)event;

	if (!e)
		return cma_ret(EINVAL);
	pthread_mutex_lock(&ack_lock);
	if (--e->owner->events_pending == 0)
		pthread_cond_broadcast(&e->owner->acked);
	pthread_mutex_unlock(&ack_lock);
	free(e);
	return 0;
}

void cma_wait_acked(struct cma_id *id)
{
	pthread_mutex_lock(&ack_lock);
	while (id->events_pending)
		pthread_cond_wait(&id->acked, &ack_lock);
	pthread_mutex_unlock(&ack_lock);
}

/*
 * Take back queued events of id, and those counted on it as a listener:
 * the new ids of connection requests nobody read are refused (their
 * REQ gets a REJ) and freed.
 */
void cma_drop_events(struct cma_id *id)
{
	cma_drop_events_from(id->chan, id);
}

/*
 * Take out of channel c, in their order, the events of id: those it owns
 * and, with about_too, those about it. Their bytes in the socket go with
 * them. A list, linked by next.
 */
static struct cma_event *take_events(struct cma_channel *c,
				     struct cma_id *id, bool about_too)
{
	struct cma_event *e, **p, *taken = NULL, **tail = &taken;
	char one;

	pthread_mutex_lock(&c->lock);
	for (p = &c->head; *p;) {
		e = *p;
		if (e->owner != id && (!about_too || e->ev.id != &id->id)) {
			p = &e->next;
			continue;
		}
		*p = e->next;
		e->next = NULL;
		*tail = e;
		tail = &e->next;
		if (recv(c->ch.fd, &one, 1, MSG_DONTWAIT) != 1) {
			/* A reader took the byte and waits for the lock:
			 * it will find no event and wait for the next. */
		}
	}
	c->tail = NULL;
	for (struct cma_event *q = c->head; q; q = q->next)
		c->tail = q;
	pthread_mutex_unlock(&c->lock);
	return taken;
}

void cma_drop_events_from(struct cma_channel *c, struct cma_id *id)
{
	struct cma_event *e, *taken;

	if (!c)
		return;
	taken = take_events(c, id, true);
	while (taken) {
		e = taken;
		taken = e->next;
		pthread_mutex_lock(&ack_lock);
		e->owner->events_pending--;
		pthread_mutex_unlock(&ack_lock);
		/* A connection request nobody read: its new id goes. */
		if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST &&
		    e->ev.id != &id->id)
			rdma_destroy_id(e->ev.id);
		free(e);
	}
}

int cma_sync_wait(struct cma_id *id, enum rdma_cm_event_type expect)
{
	struct rdma_cm_event *ev;

	if (!id->sync)
		return 0;
	if (id->id.event) {
		rdma_ack_cm_event(id->id.event);
		id->id.event = NULL;
	}
	if (rdma_get_cm_event(id->id.channel, &ev))
		return errno;
	id->id.event = ev;
	if (ev->status) {
		if (ev->event == RDMA_CM_EVENT_REJECTED)
			return ECONNREFUSED;
		return ev->status < 0 ? -ev->status : ev->status;
	}
	if (ev->event != expect)
		return EPROTO;
	return 0;
}

static const char *const event_names[] = {
	[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
	[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
	[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
	[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
	[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
	[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
	[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
	[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
	[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
	[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
	[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
	[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
	[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
	[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
	[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
	[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
};

CMA_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	if ((unsigned int)event < sizeof(event_names) / sizeof(event_names[0]))
		return event_names[event];
	return "UNKNOWN EVENT";
}

/*
 * rdma_migrate_id(): the events queued for id (those it owns: a
 * listener's connection requests too) leave FROM for TO, in their order
 * and behind what TO holds, as the kernel's channel moves them. The
 * caller holds the device lock, so nothing new is queued for id
 * meanwhile; one channel's lock at a time, so two migrations the other
 * way round cannot deadlock.
 */
void cma_move_events(struct cma_channel *from, struct cma_channel *to,
		     struct cma_id *id)
{
	struct cma_event *e, *moved;
	char one = 1;

	if (!from || !to || from == to)
		return;
	moved = take_events(from, id, false);
	while (moved) {
		e = moved;
		moved = e->next;
		e->next = NULL;
		pthread_mutex_lock(&to->lock);
		if (send(to->wfd, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1) {
			/* TO's buffer is full of events nobody reads. */
			pthread_mutex_unlock(&to->lock);
			pthread_mutex_lock(&ack_lock);
			e->owner->events_pending--;
			pthread_mutex_unlock(&ack_lock);
			free(e);
			continue;
		}
		if (to->tail)
			to->tail->next = e;
		else
			to->head = e;
		to->tail = e;
		pthread_mutex_unlock(&to->lock);
	}
}
