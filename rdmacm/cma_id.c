// SPDX-License-Identifier: MIT
/*
 * rdma_cm ids: creating and destroying them, their addresses and ports,
 * address and route resolution, listening, options.
 *
 * Addresses are IP addresses of ERNIC devices (a device's GID 0 is its
 * address, ::ffff:a.b.c.d for IPv4). Ports are this process's: an id
 * bound to a port owns it on its device (or on every device, bound to a
 * wildcard address) until it is destroyed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cma.h"
#include "ernic_net.h"

static struct cma_id *bound;	/* ids holding a port, under cma_lock */

void cma_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("librdmacm (ernic): ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static bool is_wildcard(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(
		&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

static uint16_t sa_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
}

static void sa_set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
}

static int sa_check(const struct sockaddr *sa)
{
	if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
		return EAFNOSUPPORT;
	return 0;
}

static size_t sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
					  sizeof(struct sockaddr_in6);
}

/* ---- ports ---- */

static bool port_clash(const struct cma_id *a, const struct cma_id *b)
{
	if (a->port != b->port)
		return false;
	if (!a->wildcard && !b->wildcard && a->dev != b->dev)
		return false;
	return !(a->reuseaddr && b->reuseaddr &&
		 a->state != CMA_LISTEN && b->state != CMA_LISTEN);
}

/* Caller holds cma_lock. */
static bool port_free(const struct cma_id *id)
{
	for (const struct cma_id *b = bound; b; b = b->bound_next)
		if (b != id && port_clash(id, b))
			return false;
	return true;
}

int cma_port_take(struct cma_id *id, uint16_t port)
{
	int ret = 0;

	pthread_mutex_lock(&cma_lock);
	if (port) {
		id->port = port;
		if (!port_free(id))
			ret = EADDRINUSE;
	} else {
		/* Ephemeral: Linux's default range, from a random start. */
		uint32_t r = 0;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint32_t)(uintptr_t)id;
		ret = EADDRINUSE;
		for (uint32_t k = 0; k < 28232; k++) {
			id->port = (uint16_t)(32768 + (r + k) % 28232);
			if (port_free(id)) {
				ret = 0;
				break;
			}
		}
	}
	if (ret) {
		id->port = 0;
	} else {
		id->bound_next = bound;
		bound = id;
	}
	pthread_mutex_unlock(&cma_lock);
	return ret;
}

void cma_port_release(struct cma_id *id)
{
	pthread_mutex_lock(&cma_lock);
	for (struct cma_id **p = &bound; *p; p = &(*p)->bound_next)
		if (*p == id) {
			*p = id->bound_next;
			break;
		}
	id->port = 0;
	pthread_mutex_unlock(&cma_lock);
}

/* ---- ids ---- */

void cma_id_on_device(struct cma_id *id, struct cma_dev *dev)
{
	id->dev = dev;
	id->id.verbs = dev->verbs;
	if (!id->id.qp)
		id->id.pd = dev->pd;
	id->id.port_num = 1;
	id->id.route.addr.addr.ibaddr.sgid = dev->gid;
	id->id.route.addr.addr.ibaddr.pkey = htons(0xFFFF);
}

int cma_bind_device(struct cma_id *id, struct cma_dev *dev)
{
	int ret = cma_dev_get(dev);

	if (!ret)
		cma_id_on_device(id, dev);
	return ret;
}

struct cma_id *cma_id_alloc(struct rdma_event_channel *channel,
			    void *context, enum rdma_port_space ps)
{
	struct cma_id *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	if (!channel) {
		channel = rdma_create_event_channel();
		if (!channel) {
			free(id);
			return NULL;
		}
		id->sync = true;
	}
	id->id.channel = channel;
	id->chan = cma_channel_of(channel);
	id->id.context = context;
	id->id.ps = ps;
	id->id.qp_type = IBV_QPT_RC;
	id->rq_psn = cma_random_psn();
	pthread_cond_init(&id->acked, NULL);
	return id;
}

CMA_EXPORT int rdma_create_id(struct rdma_event_channel *channel,
			      struct rdma_cm_id **out, void *context,
			      enum rdma_port_space ps)
{
	struct cma_dev **all;
	struct cma_id *id;
	int n, ret;

	if (!out)
		return cma_ret(EINVAL);
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_IB) {
		cma_err("port space 0x%x: ERNIC has only RC QPs (RDMA_PS_TCP, RDMA_PS_IB)",
			ps);
		return cma_ret(EPROTONOSUPPORT);
	}
	ret = cma_devices(&all, &n);
	if (ret)
		return cma_ret(ret);
	id = cma_id_alloc(channel, context, ps);
	if (!id)
		return cma_ret(ENOMEM);
	*out = &id->id;
	return 0;
}

void cma_id_free(struct cma_id *id)
{
	/* A synchronous id holds its last event itself. */
	if (id->id.event) {
		rdma_ack_cm_event(id->id.event);
		id->id.event = NULL;
	}
	cma_drop_events(id);
	cma_wait_acked(id);
	if (id->port)
		cma_port_release(id);
	if (id->sync)
		rdma_destroy_event_channel(id->id.channel);
	free(id->listen_cm);
	free(id->listen_devs);
	free(id->ep_attr);
	pthread_cond_destroy(&id->acked);
	free(id);
}

/* REQs for id's service come to this process, not to another one on
 * the same device (ernicdv_mad_claim_service), or stop coming. */
static int claim(struct cma_id *id, struct cma_dev *dev, bool on)
{
	uint64_t sid = cma_service_id(id);

	if (!dev->dv.agent_query)
		return 0;
	if (on)
		return dev->dv.claim_service(dev->agent, sid);
	dev->dv.release_service(dev->agent, sid);
	return 0;
}

/* The listeners of id on every device, and their claims, go. */
static void unlisten(struct cma_id *id)
{
	for (int i = 0; i < id->nlisten; i++) {
		struct cma_dev *d = id->listen_devs[i];

		pthread_mutex_lock(&d->lock);
		cm_id_destroy(id->listen_cm[i]);
		pthread_mutex_unlock(&d->lock);
		claim(id, d, false);
	}
	id->nlisten = 0;
}

CMA_EXPORT int rdma_destroy_id(struct rdma_cm_id *cmid)
{
	struct cma_id *id = to_cma(cmid);

	if (!id)
		return cma_ret(EINVAL);
	/* Detach from the CM first: after this no event is made for id. */
	if (id->cm) {
		pthread_mutex_lock(&id->dev->lock);
		cma_unwatch(id);
		cm_id_destroy(id->cm);
		id->cm = NULL;
		pthread_mutex_unlock(&id->dev->lock);
		cma_dev_wake(id->dev);
	}
	unlisten(id);
	cma_id_free(id);
	return 0;
}

/* ---- addresses ---- */

static int bind_to(struct cma_id *id, const struct sockaddr *addr)
{
	struct cma_dev *dev = NULL;
	int ret;

	ret = sa_check(addr);
	if (ret)
		return ret;
	if (id->state != CMA_IDLE || id->port)
		return EINVAL;
	if (!is_wildcard(addr)) {
		dev = cma_dev_by_ip(addr);
		if (!dev) {
			char s[INET6_ADDRSTRLEN] = "?";

			inet_ntop(addr->sa_family,
				  addr->sa_family == AF_INET ?
					  (const void *)&((const struct sockaddr_in *)addr)->sin_addr :
					  (const void *)&((const struct sockaddr_in6 *)addr)->sin6_addr,
				  s, sizeof(s));
			cma_err("no ERNIC device has address %s", s);
			return EADDRNOTAVAIL;
		}
	}
	id->wildcard = !dev;
	id->dev = dev;
	ret = cma_port_take(id, sa_port(addr));
	if (ret) {
		id->dev = NULL;
		return ret;
	}
	if (dev) {
		id->dev = NULL;
		ret = cma_bind_device(id, dev);
		if (ret) {
			cma_port_release(id);
			return ret;
		}
	}
	memcpy(&id->id.route.addr.src_storage, addr, sa_len(addr));
	sa_set_port(&id->id.route.addr.src_addr, id->port);
	return 0;
}

/* Resolution is local and immediate: the new state, its event, and for
 * a synchronous id the wait for that event. */
static int resolved(struct cma_id *id, enum cma_state state,
		    enum rdma_cm_event_type type)
{
	int ret;

	id->state = state;
	ret = cma_post_event(id, NULL, type, 0, NULL, 0, NULL);
	return ret ? ret : cma_sync_wait(id, type);
}

CMA_EXPORT int rdma_bind_addr(struct rdma_cm_id *cmid, struct sockaddr *addr)
{
	if (!cmid)
		return cma_ret(EINVAL);
	return cma_ret(bind_to(to_cma(cmid), addr));
}

/* As the kernel's address resolution: the peer's Ethernet address, from
 * the neighbour table (libnl-route-3), the kernel prodded to resolve it
 * and waited for up to timeout_ms. 0 or EHOSTUNREACH, said why. */
static int peer_reachable(struct cma_id *id, const struct sockaddr *dst,
			  int timeout_ms)
{
	struct ernic_ip src_ip, dst_ip;
	union ibv_gid dgid;
	uint8_t mac[6];
	char err[256];

	cma_addr_to_gid(dst, &dgid);
	ernic_gid_to_ip(id->dev->gid.raw, &src_ip);
	ernic_gid_to_ip(dgid.raw, &dst_ip);
	if (!ernic_net_resolve_mac(&src_ip, &dst_ip, mac,
				   timeout_ms > 0 ? timeout_ms : 2000, err,
				   sizeof(err)))
		return 0;
	cma_err("rdma_resolve_addr: %s", err);
	return EHOSTUNREACH;
}

CMA_EXPORT int rdma_resolve_addr(struct rdma_cm_id *cmid,
				 struct sockaddr *src_addr,
				 struct sockaddr *dst_addr, int timeout_ms)
{
	struct cma_id *id = to_cma(cmid);
	int ret;

	if (!id)
		return cma_ret(EINVAL);
	ret = sa_check(dst_addr);
	if (ret)
		return cma_ret(ret);
	if (id->state != CMA_IDLE)
		return cma_ret(EINVAL);
	if (src_addr && !id->port) {
		ret = bind_to(id, src_addr);
		if (ret)
			return cma_ret(ret);
	}
	if (!id->dev) {
		struct cma_dev *dev = cma_dev_for_dst(dst_addr);
		struct sockaddr_storage src;
		uint16_t port = id->port;

		if (!dev) {
			cma_err("no ERNIC device to reach the destination from");
			return cma_ret(EADDRNOTAVAIL);
		}
		/* Bound to a port on any address: the port moves to the
		 * device's address. */
		if (port)
			cma_port_release(id);
		id->wildcard = false;
		id->dev = dev;
		ret = cma_port_take(id, port);
		id->dev = NULL;
		if (ret)
			return cma_ret(ret);
		ret = cma_bind_device(id, dev);
		if (ret) {
			cma_port_release(id);
			return cma_ret(ret);
		}
		cma_gid_to_addr(&dev->gid, id->port, &src);
		memcpy(&id->id.route.addr.src_storage, &src, sizeof(src));
	}
	ret = peer_reachable(id, dst_addr, timeout_ms);
	if (ret) {
		/* The id stays as it was: the program may try again. */
		ret = cma_post_event(id, NULL, RDMA_CM_EVENT_ADDR_ERROR, -ret,
				     NULL, 0, NULL);
		return cma_ret(ret ? ret :
				     cma_sync_wait(id, RDMA_CM_EVENT_ADDR_RESOLVED));
	}
	memcpy(&id->id.route.addr.dst_storage, dst_addr, sa_len(dst_addr));
	cma_addr_to_gid(dst_addr, &id->id.route.addr.addr.ibaddr.dgid);
	return cma_ret(resolved(id, CMA_ADDR_RESOLVED,
				RDMA_CM_EVENT_ADDR_RESOLVED));
}

CMA_EXPORT int rdma_resolve_route(struct rdma_cm_id *cmid, int timeout_ms)
{
	struct cma_id *id = to_cma(cmid);
	struct ibv_sa_path_rec *p;

	(void)timeout_ms;
	if (!id || id->state != CMA_ADDR_RESOLVED)
		return cma_ret(EINVAL);
	p = &id->path;
	memset(p, 0, sizeof(*p));
	p->sgid = id->id.route.addr.addr.ibaddr.sgid;
	p->dgid = id->id.route.addr.addr.ibaddr.dgid;
	p->dlid = p->slid = htons(0xFFFF);
	p->pkey = htons(0xFFFF);
	p->hop_limit = 64;
	p->traffic_class = id->tos;
	p->mtu_selector = 2;	/* exactly */
	p->mtu = id->dev->port_mtu;
	p->packet_life_time_selector = 2;
	p->packet_life_time = CM_PACKET_LIFETIME;
	p->reversible = 1;
	p->numb_path = 1;
	id->id.route.path_rec = p;
	id->id.route.num_paths = 1;
	return cma_ret(resolved(id, CMA_ROUTE_RESOLVED,
				RDMA_CM_EVENT_ROUTE_RESOLVED));
}

/* ---- listening ---- */

/* The listener first, then the claim that steers the service's REQs
 * here: a REQ that came between the two would find no listener and be
 * rejected (invalid service ID) although the caller listens. */
static int listen_on(struct cma_id *id, struct cma_dev *dev)
{
	struct cm_id *cm;
	int ret;

	pthread_mutex_lock(&dev->lock);
	cm = cm_id_create(dev->cm, id);
	ret = cm ? cm_listen(cm, cma_service_id(id)) : ENOMEM;
	if (ret && cm)
		cm_id_destroy(cm);
	pthread_mutex_unlock(&dev->lock);
	if (ret)
		return ret;
	ret = claim(id, dev, true);
	if (ret) {
		if (ret == EADDRINUSE)
			cma_err("listen: port %u on %s: another process "
				"listens there", id->port,
				ibv_get_device_name(dev->ibdev));
		pthread_mutex_lock(&dev->lock);
		cm_id_destroy(cm);
		pthread_mutex_unlock(&dev->lock);
		return ret;
	}
	id->listen_cm[id->nlisten] = cm;
	id->listen_devs[id->nlisten++] = dev;
	/* A REQ the CM held for a listener to come back is taken now
	 * (CM_RELISTEN_HOLD_MS), not at the end of its wait. */
	cma_dev_wake(dev);
	return 0;
}

CMA_EXPORT int rdma_listen(struct rdma_cm_id *cmid, int backlog)
{
	struct cma_id *id = to_cma(cmid);
	struct cma_dev **all;
	int n, ret;

	if (!id)
		return cma_ret(EINVAL);
	if (id->state == CMA_LISTEN) {
		id->backlog = backlog;	/* a new backlog, as listen(2) */
		return 0;
	}
	if (id->state != CMA_IDLE)
		return cma_ret(EINVAL);
	if (!id->port) {
		struct sockaddr_in any = { .sin_family = AF_INET };

		ret = bind_to(id, (struct sockaddr *)&any);
		if (ret)
			return cma_ret(ret);
	}
	ret = cma_devices(&all, &n);
	if (ret)
		return cma_ret(ret);
	id->listen_cm = calloc((size_t)n + 1, sizeof(*id->listen_cm));
	id->listen_devs = calloc((size_t)n + 1, sizeof(*id->listen_devs));
	if (!id->listen_cm || !id->listen_devs)
		return cma_ret(ENOMEM);
	id->state = CMA_LISTEN;
	id->backlog = backlog;
	if (id->dev) {
		ret = listen_on(id, id->dev);
	} else {
		/* Every ERNIC device this process can open; one that another
		 * process holds is not ours to listen on. */
		ret = ENODEV;
		for (int i = 0; i < n && ret != EADDRINUSE; i++) {
			int r;

			if (cma_dev_get(all[i]))
				continue;
			r = listen_on(id, all[i]);
			/* a port another process listens to on any device
			 * is taken, as a port is for the kernel's rdma_cm */
			if (!r || r == EADDRINUSE)
				ret = r;
		}
		if (ret == EADDRINUSE)
			unlisten(id);
		else if (ret)
			cma_err("listen: no ERNIC device could be opened");
	}
	if (ret)
		id->state = CMA_IDLE;
	return cma_ret(ret);
}

CMA_EXPORT int rdma_get_request(struct rdma_cm_id *listen,
				struct rdma_cm_id **out)
{
	struct cma_id *lid = to_cma(listen);
	struct rdma_cm_event *ev;
	struct cma_id *id;
	int ret;

	if (!lid || !out || lid->state != CMA_LISTEN || !lid->sync)
		return cma_ret(EINVAL);
	ret = cma_sync_wait(lid, RDMA_CM_EVENT_CONNECT_REQUEST);
	if (ret)
		return cma_ret(ret);
	ev = lid->id.event;
	id = to_cma(ev->id);
	if (lid->ep_attr) {
		struct ibv_qp_init_attr attr = *lid->ep_attr;

		ret = rdma_create_qp(&id->id, lid->id.pd, &attr);
		if (ret) {
			ret = errno;
			rdma_reject(&id->id, NULL, 0);
			rdma_destroy_id(&id->id);
			return cma_ret(ret);
		}
	}
	/* The request is the new id's to read and to acknowledge. */
	id->id.event = ev;
	lid->id.event = NULL;
	*out = &id->id;
	return 0;
}

/* ---- options and the rest ---- */

CMA_EXPORT int rdma_set_option(struct rdma_cm_id *cmid, int level,
			       int optname, void *optval, size_t optlen)
{
	struct cma_id *id = to_cma(cmid);

	if (!id || !optval)
		return cma_ret(EINVAL);
	if (level == RDMA_OPTION_IB && optname == RDMA_OPTION_IB_PATH)
		return cma_ret(EOPNOTSUPP);	/* paths come from addresses */
	if (level != RDMA_OPTION_ID)
		return cma_ret(ENOPROTOOPT);
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		if (optlen != sizeof(uint8_t))
			return cma_ret(EINVAL);
		id->tos = *(uint8_t *)optval;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
		if (optlen != sizeof(int) || id->port)
			return cma_ret(EINVAL);
		id->reuseaddr = *(int *)optval != 0;
		return 0;
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int) || id->port)
			return cma_ret(EINVAL);
		id->afonly = *(int *)optval != 0;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t) || *(uint8_t *)optval > 31)
			return cma_ret(EINVAL);
		id->ack_timeout = *(uint8_t *)optval;
		return 0;
	default:
		return cma_ret(ENOPROTOOPT);
	}
}

CMA_EXPORT int rdma_migrate_id(struct rdma_cm_id *cmid,
			       struct rdma_event_channel *channel)
{
	struct cma_id *id = to_cma(cmid);
	bool sync = false;

	if (!id)
		return cma_ret(EINVAL);
	if (!channel) {
		channel = rdma_create_event_channel();
		if (!channel)
			return -1;
		sync = true;
	}
	/* Events queued already go with the id, as the kernel's do. An
	 * id made without a channel had its own: it goes, after its current
	 * (synchronous) event is acknowledged. */
	struct cma_channel *old = id->chan;
	bool old_sync = id->sync;

	if (id->dev)
		pthread_mutex_lock(&id->dev->lock);
	id->id.channel = channel;
	id->chan = cma_channel_of(channel);
	id->sync = sync;
	cma_move_events(old, id->chan, id);
	if (id->dev)
		pthread_mutex_unlock(&id->dev->lock);
	if (old_sync) {
		if (id->id.event) {
			rdma_ack_cm_event(id->id.event);
			id->id.event = NULL;
		}
		rdma_destroy_event_channel(&old->ch);
	}
	return 0;
}

CMA_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *cmid)
{
	return htons(sa_port(&cmid->route.addr.src_addr));
}

CMA_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *cmid)
{
	return htons(sa_port(&cmid->route.addr.dst_addr));
}

CMA_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list;
	struct cma_dev **all;
	int n, k = 0;

	if (cma_devices(&all, &n)) {
		n = 0;
		all = NULL;
	}
	list = calloc((size_t)n + 1, sizeof(*list));
	if (!list)
		return NULL;
	for (int i = 0; i < n; i++)
		if (!cma_dev_get(all[i]))
			list[k++] = all[i]->verbs;
	if (num_devices)
		*num_devices = k;
	return list;
}

CMA_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	/* The contexts stay open (cma_dev.c): only the array goes. */
	free(list);
}
