// SPDX-License-Identifier: MIT
/*
 * ERNIC devices as rdma_cm sees them: which device has which address,
 * and, once an id uses a device, its context, the CM agent on its QP1
 * and the thread that serves that agent (MADs in, retransmission and
 * timewait timers).
 *
 * A device is opened the first time an id needs it and stays open until
 * the process ends: applications free their PDs and QPs after their ids
 * as often as before, and a connection's timewait outlives its id.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cma.h"
#include "ernicdv.h"

pthread_mutex_t cma_lock = PTHREAD_MUTEX_INITIALIZER;

static struct cma_dev **devs;
static int ndevs;
static struct ibv_device **dev_list;
static pthread_once_t devs_once = PTHREAD_ONCE_INIT;
static int devs_err;

/* "0000:0000:0000:0000:0000:ffff:7f00:0002" (sysfs gids/N) */
static int read_gid(const char *ibdev_path, union ibv_gid *gid)
{
	char path[IBV_SYSFS_PATH_MAX + 32], buf[64];
	unsigned int w[8];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "%s/ports/1/gids/0", ibdev_path);
	f = fopen(path, "re");
	if (!f)
		return errno;
	n = fgets(buf, sizeof(buf), f) ? sscanf(buf, "%x:%x:%x:%x:%x:%x:%x:%x",
						&w[0], &w[1], &w[2], &w[3],
						&w[4], &w[5], &w[6], &w[7]) : 0;
	fclose(f);
	if (n != 8)
		return EINVAL;
	for (int i = 0; i < 8; i++) {
		gid->raw[2 * i] = (uint8_t)(w[i] >> 8);
		gid->raw[2 * i + 1] = (uint8_t)w[i];
	}
	return 0;
}

static void find_devices(void)
{
	int n = 0;

	dev_list = ibv_get_device_list(&n);
	if (!dev_list) {
		devs_err = errno ? errno : ENODEV;
		return;
	}
	devs = calloc((size_t)n + 1, sizeof(*devs));
	if (!devs) {
		devs_err = ENOMEM;
		return;
	}
	for (int i = 0; i < n; i++) {
		struct cma_dev *d = calloc(1, sizeof(*d));

		if (!d) {
			devs_err = ENOMEM;
			return;
		}
		if (cma_dv_lookup(dev_list[i], &d->dv) ||
		    read_gid(dev_list[i]->ibdev_path, &d->gid)) {
			free(d);
			continue;
		}
		d->ibdev = dev_list[i];
		d->guid = be64toh(ibv_get_device_guid(dev_list[i]));
		d->wake[0] = d->wake[1] = -1;
		pthread_mutex_init(&d->lock, NULL);
		devs[ndevs++] = d;
	}
}

int cma_devices(struct cma_dev ***out, int *n)
{
	pthread_once(&devs_once, find_devices);
	if (devs_err)
		return devs_err;
	*out = devs;
	*n = ndevs;
	return 0;
}

void cma_addr_to_gid(const struct sockaddr *sa, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (sa->sa_family == AF_INET) {
		gid->raw[10] = gid->raw[11] = 0xff;
		memcpy(&gid->raw[12],
		       &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(gid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr,
		       16);
	}
}

int cma_gid_to_addr(const union ibv_gid *gid, uint16_t port,
		    struct sockaddr_storage *ss)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(ss, 0, sizeof(*ss));
	if (!memcmp(gid->raw, v4mapped, sizeof(v4mapped))) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, &gid->raw[12], 4);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, gid->raw, 16);
	}
	return 0;
}

struct cma_dev *cma_dev_by_ip(const struct sockaddr *addr)
{
	struct cma_dev **all;
	union ibv_gid gid;
	int n;

	if (cma_devices(&all, &n))
		return NULL;
	cma_addr_to_gid(addr, &gid);
	for (int i = 0; i < n; i++)
		if (!memcmp(all[i]->gid.raw, gid.raw, 16))
			return all[i];
	return NULL;
}

/*
 * The device to reach dst from: the one that has the source address the
 * kernel's routing would choose; failing that (peers on one host, whose
 * addresses all route through lo), the first ERNIC device that is not
 * dst itself.
 */
struct cma_dev *cma_dev_for_dst(const struct sockaddr *dst)
{
	struct sockaddr_storage src;
	socklen_t len = sizeof(src);
	struct cma_dev **all, *d = NULL;
	union ibv_gid dgid;
	int fd, n;

	if (cma_devices(&all, &n) || !n)
		return NULL;
	fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		if (!connect(fd, dst, dst->sa_family == AF_INET ?
					      sizeof(struct sockaddr_in) :
					      sizeof(struct sockaddr_in6)) &&
		    !getsockname(fd, (struct sockaddr *)&src, &len))
			d = cma_dev_by_ip((struct sockaddr *)&src);
		close(fd);
	}
	if (d)
		return d;
	cma_addr_to_gid(dst, &dgid);
	for (int i = 0; i < n; i++)
		if (memcmp(all[i]->gid.raw, dgid.raw, 16))
			return all[i];
	return NULL;
}

/* ---- the CM agent and its thread ---- */

static uint64_t mono_ms(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int cm_send(void *ctx, const struct cm_addr *to, const uint8_t *mad)
{
	struct cma_dev *dev = ctx;
	struct ernicdv_mad_addr a = {
		.qpn = to->qpn ? to->qpn : 1,
		.pkey = to->pkey,
		.hop_limit = to->hop_limit,
		.traffic_class = to->traffic_class,
	};

	memcpy(a.gid, to->gid, 16);
	memcpy(a.mac, to->mac, 6);
	return dev->dv.mad_send(dev->agent, &a, mad, IB_MAD_SIZE);
}

static const struct cm_ops cma_cm_ops = {
	.send = cm_send,
	.event = cma_cm_event,
	.now_ms = mono_ms,
};

static void *worker(void *arg)
{
	struct cma_dev *dev = arg;
	uint8_t mad[IB_MAD_SIZE];
	int timeout = -1;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = dev->dv.agent_fd(dev->agent), .events = POLLIN },
			{ .fd = dev->wake[0], .events = POLLIN },
		};
		char drain[64];

		if (poll(p, 2, timeout) < 0 && errno != EINTR)
			break;
		if (p[1].revents & POLLIN)
			while (read(dev->wake[0], drain, sizeof(drain)) > 0)
				;
		pthread_mutex_lock(&dev->lock);
		if (!dev->running) {
			pthread_mutex_unlock(&dev->lock);
			break;
		}
		for (int k = 0; k < 64; k++) {
			struct ernicdv_mad_addr from;
			struct cm_addr ca = { 0 };

			if (dev->dv.mad_recv(dev->agent, &from, mad, sizeof(mad)))
				break;
			memcpy(ca.gid, from.gid, 16);
			memcpy(ca.mac, from.mac, 6);
			ca.qpn = from.qpn;
			ca.pkey = from.pkey;
			ca.hop_limit = from.hop_limit;
			ca.traffic_class = from.traffic_class;
			cm_dev_recv(dev->cm, &ca, mad, sizeof(mad));
		}
		timeout = cm_dev_tick(dev->cm);
		if (cma_watch_qps(dev) && (timeout < 0 || timeout > 1000))
			timeout = 1000;
		pthread_mutex_unlock(&dev->lock);
	}
	return NULL;
}

void cma_dev_wake(struct cma_dev *dev)
{
	char c = 1;

	if (dev->wake[1] >= 0 && write(dev->wake[1], &c, 1) < 0) {
		/* Full pipe: the worker has a wake-up waiting already. */
	}
}

/* Caller holds dev->lock. */
static int dev_open(struct cma_dev *dev)
{
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	uint32_t seed;
	int ret;

	dev->verbs = ibv_open_device(dev->ibdev);
	if (!dev->verbs)
		return errno ? errno : ENODEV;
	if (ibv_query_device(dev->verbs, &attr) ||
	    ibv_query_port(dev->verbs, 1, &port)) {
		ret = errno ? errno : EIO;
		goto err_close;
	}
	dev->max_rd_atom = (uint8_t)(attr.max_qp_rd_atom > 255 ? 255 :
						attr.max_qp_rd_atom);
	dev->max_init_rd_atom = (uint8_t)(attr.max_qp_init_rd_atom > 255 ?
						     255 : attr.max_qp_init_rd_atom);
	dev->port_mtu = (uint8_t)port.active_mtu;
	/* The device's PD, every id's until it makes a QP with its own
	 * (rdma_cm_id.pd is set once an id has a device, as librdmacm's:
	 * applications allocate from it). */
	dev->pd = ibv_alloc_pd(dev->verbs);
	if (!dev->pd) {
		ret = errno ? errno : ENOMEM;
		goto err_close;
	}
	dev->agent = dev->dv.agent_create(dev->verbs, IB_MGMT_CLASS_CM);
	if (!dev->agent) {
		ret = errno ? errno : EIO;
		goto err_pd;
	}
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (uint32_t)mono_ms(NULL) ^ (uint32_t)getpid() << 16;
	dev->cm = cm_dev_create(&cma_cm_ops, dev, dev->guid, seed);
	if (!dev->cm) {
		ret = errno ? errno : ENOMEM;
		goto err_agent;
	}
	/* On a device other processes share, our communication IDs name
	 * this process, so that the MADs of our connections reach us. */
	if (dev->dv.agent_query) {
		struct ernicdv_mad_agent_attr a = { 0 };

		if (!dev->dv.agent_query(dev->agent, &a, sizeof(a)))
			cm_dev_set_id_tag(dev->cm, (uint8_t)a.comm_id_tag);
	}
	if (pipe2(dev->wake, O_CLOEXEC | O_NONBLOCK)) {
		ret = errno;
		goto err_cm;
	}
	dev->running = true;
	ret = pthread_create(&dev->worker, NULL, worker, dev);
	if (ret)
		goto err_pipe;
	return 0;

err_pipe:
	dev->running = false;
	close(dev->wake[0]);
	close(dev->wake[1]);
	dev->wake[0] = dev->wake[1] = -1;
err_cm:
	cm_dev_destroy(dev->cm);
	dev->cm = NULL;
err_agent:
	dev->dv.agent_destroy(dev->agent);
	dev->agent = NULL;
err_pd:
	ibv_dealloc_pd(dev->pd);
	dev->pd = NULL;
err_close:
	ibv_close_device(dev->verbs);
	dev->verbs = NULL;
	return ret;
}

int cma_dev_get(struct cma_dev *dev)
{
	int ret = 0;

	pthread_mutex_lock(&dev->lock);
	if (!dev->verbs)
		ret = dev_open(dev);
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

/* ERNIC_CM_STATS set: what each device's CM did, on stderr. */
static void print_stats(struct cma_dev *d)
{
	const struct cm_stats *st = cm_dev_stats(d->cm);

	fprintf(stderr,
		"librdmacm (ernic): %s CM: rx %" PRIu64 " tx %" PRIu64
		" tx_errors %" PRIu64 " rx_bad %" PRIu64 " rx_unknown %" PRIu64
		" rx_dup %" PRIu64 " rx_stale %" PRIu64 " retransmits %" PRIu64
		" timeouts %" PRIu64 " no_listener_resends %" PRIu64
		" held %" PRIu64 "\n",
		ibv_get_device_name(d->ibdev), st->rx, st->tx, st->tx_errors,
		st->rx_bad, st->rx_unknown, st->rx_dup, st->rx_stale,
		st->retransmits, st->timeouts, st->no_listener_resends,
		st->held);
}

/* The process is ending: connections it did not close are closed (as
 * the kernel closes a dead process's), and each device's CM keeps
 * working up to linger_ms until its DREQs are answered, so the peers
 * learn it left. ERNIC_CM_LINGER_MS changes the wait (0: none). */
static void linger(uint64_t linger_ms)
{
	uint64_t end = mono_ms(NULL) + linger_ms;
	unsigned int pending;

	for (int i = 0; i < ndevs; i++) {
		pthread_mutex_lock(&devs[i]->lock);
		if (devs[i]->running)
			cm_dev_shutdown(devs[i]->cm);
		pthread_mutex_unlock(&devs[i]->lock);
		cma_dev_wake(devs[i]);
	}
	do {
		pending = 0;
		for (int i = 0; i < ndevs; i++) {
			pthread_mutex_lock(&devs[i]->lock);
			if (devs[i]->running)
				pending += cm_dev_pending(devs[i]->cm);
			pthread_mutex_unlock(&devs[i]->lock);
		}
		if (!pending)
			break;
		usleep(5000);
	} while (mono_ms(NULL) < end);
}

/* At exit: stop the workers so none runs while the process unmaps the
 * provider. Contexts are left to the process's end. */
static void __attribute__((destructor)) cma_dev_fini(void)
{
	bool stats = getenv("ERNIC_CM_STATS") != NULL;
	const char *l = getenv("ERNIC_CM_LINGER_MS");

	linger(l ? strtoull(l, NULL, 10) : 5000);
	for (int i = 0; i < ndevs; i++) {
		struct cma_dev *d = devs[i];

		pthread_mutex_lock(&d->lock);
		if (!d->running) {
			pthread_mutex_unlock(&d->lock);
			continue;
		}
		d->running = false;
		pthread_mutex_unlock(&d->lock);
		cma_dev_wake(d);
		pthread_join(d->worker, NULL);
		if (stats)
			print_stats(d);
	}
}
