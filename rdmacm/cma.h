/* SPDX-License-Identifier: MIT */
/*
 * librdmacm for ERNIC devices: what the files of rdmacm/ share.
 *
 *   cma_dv.c      the provider's ernicdv calls, found through a device
 *   cma_dev.c     ERNIC devices, their addresses, the CM agent on each
 *                 device's QP1 and the thread that serves it
 *   cma_event.c   event channels and events (rdma_get_cm_event & co)
 *   cma_id.c      ids, addresses, ports, listening, options
 *   cma_conn.c    connect / accept / reject / disconnect, the QP's
 *                 states, and the CM's events turned into rdma_cm's
 *   cma_qp.c      QPs and endpoints (rdma_create_qp, rdma_create_ep)
 *   cma_addrinfo.c rdma_getaddrinfo
 *   cma_unsup.c   what ERNIC cannot do (UD, multicast, rsockets)
 *
 * Lock order: a device's lock (cma_dev.lock: its cm_dev and every id on
 * it), then a channel's lock. The global lock (cma_lock) guards the
 * device table and the port table and is never taken under another.
 */
#ifndef ERNIC_RDMACM_CMA_H
#define ERNIC_RDMACM_CMA_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "cm_conn.h"

#define CMA_EXPORT __attribute__((visibility("default")))

/* The provider's ernicdv calls, found through the device (cma_dv.c). */
struct ernicdv_mad_addr;
struct ernicdv_mad_agent;
struct ernicdv_mad_agent_attr;
struct cma_dv {
	bool (*is_ernic)(struct ibv_device *dev);
	struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *c);
	struct ernicdv_mad_agent *(*agent_create)(struct ibv_context *c,
						  uint8_t mgmt_class);
	int (*agent_destroy)(struct ernicdv_mad_agent *a);
	int (*agent_fd)(struct ernicdv_mad_agent *a);
	int (*mad_send)(struct ernicdv_mad_agent *a,
			const struct ernicdv_mad_addr *to, const void *mad,
			size_t len);
	int (*mad_recv)(struct ernicdv_mad_agent *a,
			struct ernicdv_mad_addr *from, void *mad, size_t len);
	int (*qp_state)(struct ibv_context *c, uint32_t qp_num,
			enum ibv_qp_state *state);
	/* ERNIC_1.5, for devices shared by processes; NULL in an older
	 * provider, which shares none. */
	int (*agent_query)(struct ernicdv_mad_agent *a,
			   struct ernicdv_mad_agent_attr *attr, size_t inlen);
	int (*claim_service)(struct ernicdv_mad_agent *a, uint64_t sid);
	int (*release_service)(struct ernicdv_mad_agent *a, uint64_t sid);
};
/* 0, or ENODEV when dev is not an ERNIC device (or its provider lacks
 * the calls this library needs). */
int cma_dv_lookup(struct ibv_device *dev, struct cma_dv *dv);

/* One ERNIC device this process uses through rdma_cm. */
struct cma_dev {
	struct ibv_device *ibdev;
	struct ibv_context *verbs;	/* what ids on it hand out */
	struct cma_dv dv;
	union ibv_gid gid;		/* port 1, GID index 0 */
	uint64_t guid;
	uint8_t port_mtu;		/* enum ibv_mtu, active */
	uint8_t max_rd_atom, max_init_rd_atom;
	struct ernicdv_mad_agent *agent;
	struct cm_dev *cm;
	pthread_mutex_t lock;
	struct ibv_pd *pd;		/* for ids given no PD */
	struct cma_id *watched;		/* established ids with a QP */
	int wake[2];			/* the worker's wake-up pipe */
	pthread_t worker;
	bool running;
};

enum cma_state {
	CMA_IDLE,
	CMA_ADDR_QUERY,
	CMA_ADDR_RESOLVED,
	CMA_ROUTE_QUERY,
	CMA_ROUTE_RESOLVED,
	CMA_CONNECT,		/* REQ sent */
	CMA_CONNECT_REQ,	/* passive, not yet accepted */
	CMA_ACCEPTED,		/* REP sent */
	CMA_ESTABLISHED,
	CMA_DISCONNECT,
	CMA_LISTEN,
	CMA_DESTROYING,
};

struct cma_channel {
	struct rdma_event_channel ch;	/* first: what the application holds */
	int wfd;
	atomic_int readers;		/* threads in rdma_get_cm_event() */
	pthread_mutex_t lock;
	struct cma_event *head, *tail;
};
struct cma_event;

enum { CMA_OWN_SEND = 1, CMA_OWN_RECV = 2 };

/* An rdma_cm_id and what this library keeps with it. */
struct cma_id {
	struct rdma_cm_id id;		/* what the application sees */
	struct cma_channel *chan;
	struct cma_dev *dev;		/* NULL until bound to a device */
	enum cma_state state;
	bool sync;			/* made without a channel */
	bool wildcard;			/* bound to any address */
	bool reuseaddr, afonly;
	uint16_t port;			/* host order; 0: not bound */
	uint8_t tos;
	uint8_t ack_timeout;		/* 0: the default */
	int backlog;
	/* Listening on a wildcard address: one CM listener per device. */
	struct cm_id **listen_cm;
	int nlisten;
	struct cma_dev **listen_devs;
	struct cma_id *listener;	/* passive ids: who they came to */
	struct cma_id *bound_next;	/* the port table (cma_id.c) */
	struct cma_id *watch_next;	/* dev->watched, under dev->lock */
	bool is_watched;
	uint32_t watch_qpn;		/* the QP's number when established */
	bool told_disc;			/* DISCONNECTED delivered (once) */
	/* rdma_create_ep() on a passive id: what rdma_get_request()
	 * creates each new id's QP with. */
	struct ibv_qp_init_attr *ep_attr;
	struct cm_id *cm;		/* the connection on the device's CM */
	/* What the connection negotiates. */
	uint32_t remote_qpn, sq_psn, rq_psn;
	uint8_t path_mtu;
	uint8_t responder_resources, initiator_depth;
	uint8_t retry_count, rnr_retry_count;
	int events_pending;		/* delivered, not acked */
	pthread_cond_t acked;
	struct ibv_sa_path_rec path;
	/* CQs (and their channels) the library made for the QP. */
	unsigned int own_cqs;	/* CMA_OWN_SEND | CMA_OWN_RECV */
};

static inline struct cma_id *to_cma(struct rdma_cm_id *id)
{
	return (struct cma_id *)id;
}

/* cma_dev.c */
int cma_devices(struct cma_dev ***devs, int *ndevs);	/* all ERNICs */
struct cma_dev *cma_dev_by_ip(const struct sockaddr *addr);
struct cma_dev *cma_dev_for_dst(const struct sockaddr *dst);
/* Open the device for ids (context, QP1 agent, worker) if it is not
 * open yet: 0 or errno. It stays open until the process ends. */
int cma_dev_get(struct cma_dev *dev);
void cma_dev_wake(struct cma_dev *dev);
int cma_gid_to_addr(const union ibv_gid *gid, uint16_t port,
		    struct sockaddr_storage *ss);
void cma_addr_to_gid(const struct sockaddr *sa, union ibv_gid *gid);
extern pthread_mutex_t cma_lock;

/* cma_event.c */
struct cma_channel *cma_channel_of(struct rdma_event_channel *ch);
/* Queue an event for id; pdata is copied. Caller holds the device lock
 * (or none when the id has no device yet). */
int cma_post_event(struct cma_id *id, struct cma_id *listen_id,
		   enum rdma_cm_event_type type, int status,
		   const void *pdata, size_t pdata_len,
		   const struct rdma_conn_param *conn);
/* Sync ids: wait for the next event of id and check its type. */
int cma_sync_wait(struct cma_id *id, enum rdma_cm_event_type expect);
/* Take back id's unread events (rdma_destroy_id), then wait until the
 * application has acknowledged the ones it took. */
void cma_drop_events(struct cma_id *id);
void cma_drop_events_from(struct cma_channel *c, struct cma_id *id);
void cma_move_events(struct cma_channel *from, struct cma_channel *to,
		     struct cma_id *id);
void cma_wait_acked(struct cma_id *id);

/* cma_conn.c */
void cma_cm_event(void *ctx, struct cm_id *cm, const struct cm_event *ev);
int cma_qp_to_init(struct cma_id *id);
uint64_t cma_service_id(const struct cma_id *id);
uint32_t cma_random_psn(void);
/* Under dev->lock: established connections whose QP went to the error
 * state are disconnected (cma_conn.c); true while any is watched. */
bool cma_watch_qps(struct cma_dev *dev);
void cma_unwatch(struct cma_id *id);

/* cma_id.c */
void cma_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
struct cma_id *cma_id_alloc(struct rdma_event_channel *channel,
			    void *context, enum rdma_port_space ps);
void cma_id_free(struct cma_id *id);
/* Give id the device's context, port and address (the device is open). */
void cma_id_on_device(struct cma_id *id, struct cma_dev *dev);
int cma_bind_device(struct cma_id *id, struct cma_dev *dev);
int cma_port_take(struct cma_id *id, uint16_t port);
void cma_port_release(struct cma_id *id);

/* errno-style return of the public calls: 0, or -1 with errno. */
static inline int cma_ret(int err)
{
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

#endif
