// SPDX-License-Identifier: MIT
/*
 * The software ERNIC's Ethernet port (see model_wire.h): UDP sockets, or
 * an AF_PACKET socket carrying whole frames.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ernic_devstate.h"
#include "ernic_net.h"
#include "ernic_wire.h"
#include "model_wire.h"
#include "wire_batch.h"
#include "wire_frame.h"
#include "wire_steer.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif

struct model_wire {
	enum ernic_wire mode;
	int family;
	int fd;			/* polled: UDP ADDR:4791 or AF_PACKET */
	int send_fd;		/* UDP ADDR:udp_sport (may be fd) */
	int drop_fd;		/* frame mode: UDP ADDR:4791, drops all */
	unsigned int ifindex;	/* netdev, 0 if unknown (UDP mode) */
	uint16_t sport;
	struct roce_l3 local;	/* family, dst = ADDR, dst_mac = MAC */
	model_wire_tx_fn tap;	/* a tap port: no sockets */
	void *tap_arg;
	struct tap_pkt *inbox;	/* ring of MODEL_TAP_INBOX, lazily */
	uint32_t in_head, in_n;
	/* fd shared with other processes' models: steered to us by QP
	 * (wire_steer.h); slot is ours in the device's state file */
	bool shared;
	uint32_t slot;
	struct ernic_steer st;
	/* UDP mode: the send batch, and the receive side (wire_batch.h) */
	struct wire_tx_batch *tx;
	struct wire_rx rx;
	/* frame mode: the rings (wire_ring.h) and the receive side
	 * (wire_frame.h) */
	struct wire_ring ring;
	struct wire_frame_rx frx;
	struct model_wire_stats stats;
};

struct tap_pkt {
	struct roce_l3 l3;
	size_t len;
	uint8_t b[ROCE_MAX_TRANSPORT];
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int setopt(int fd, int level, int name, int val)
{
	return setsockopt(fd, level, name, &val, sizeof(val));
}

/* For sockets that must exist but never deliver (nor provoke ICMP). */
static int attach_drop_all(int fd)
{
	struct sock_filter drop[] = { BPF_STMT(BPF_RET | BPF_K, 0) };

	return wire_attach_filter(fd, drop, 1);
}

static int udp_socket(const struct model_wire *w, uint16_t port, bool reuse,
		      char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char text[INET6_ADDRSTRLEN] = "?";
	int fd, e;

	fd = socket(w->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		set_err(err, errlen, "UDP socket: %s", strerror(e));
		errno = e;
		return -1;
	}
	if (w->family == AF_INET6 && setopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1))
		goto fail;
	if (reuse && setopt(fd, SOL_SOCKET, SO_REUSEPORT, 1))
		goto fail;
	sl = ernic_sockaddr(&ss, w->family, w->local.dst, port,
			   w->ifindex);
	if (bind(fd, (struct sockaddr *)&ss, sl) == 0)
		return fd;
	e = errno;
	inet_ntop(w->family, w->local.dst, text, sizeof(text));
	set_err(err, errlen, "bind UDP %s%s%s:%u: %s",
		w->family == AF_INET6 ? "[" : "", text,
		w->family == AF_INET6 ? "]" : "", port, strerror(e));
	close(fd);
	errno = e;
	return -1;
fail:
	e = errno;
	set_err(err, errlen, "UDP socket option: %s", strerror(e));
	close(fd);
	errno = e;
	return -1;
}

/*
 * The IP's RX FIFO is the socket buffer: a burst of a whole send window
 * (ENG_TX_WINDOW packets of up to 4 KiB, several truesize each) must fit
 * or the peer sees losses on an idle host. Root may exceed rmem_max.
 */
#define WIRE_SOCKBUF (32 << 20)
static void size_buffers(int fd)
{
	if (setopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, WIRE_SOCKBUF))
		(void)setopt(fd, SOL_SOCKET, SO_RCVBUF, WIRE_SOCKBUF);
	if (setopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, WIRE_SOCKBUF))
		(void)setopt(fd, SOL_SOCKET, SO_SNDBUF, WIRE_SOCKBUF);
}

/*
 * ADDR:4791 shared with the models of other processes using the device
 * (docs/multiprocess.md): in the port's SO_REUSEPORT group, with the
 * eBPF steering that gives each process the packets for its QPs. Under
 * the state file's lock, the first member makes the group's maps and
 * program and the others join them. Without the rights for eBPF, the
 * first process binds the port alone, as an unshared device does.
 */
static int share_socket(struct model_wire *w, const struct ernic_conf *conf,
			char *err, size_t errlen)
{
	struct ernic_ds_handle h;
	struct ernic_ds *ds;
	struct ernic_steer_ids ids;
	int fd, ret;

	ret = ernic_ds_open(&h, conf->share_state, err, errlen);
	if (!ret) {
		ret = ernic_ds_lock(&h, NULL, NULL);
		if (ret) {
			set_err(err, errlen, "%s: lock: %s",
				conf->share_state, strerror(ret));
			ernic_ds_close(&h);
		}
	}
	if (ret) {
		errno = ret;
		return -1;
	}
	ds = h.ds;
	/* (The provider reaped the dead at attach, just before.) */
	fd = udp_socket(w, ROCE_UDP_PORT, true, err, errlen);
	if (fd < 0)
		goto out;
	ids = (struct ernic_steer_ids){ ds->steer_socks, ds->steer_owners,
					ds->steer_services };
	ret = ENOENT;
	if (ds->steer_members)
		ret = ernic_steer_open(&w->st, fd, &ids, err, errlen);
	/* nobody there (or the group went with its last member): make it */
	if (ret == ENOENT) {
		ret = ernic_steer_open(&w->st, fd, NULL, err, errlen);
		if (!ret) {
			ds->steer_socks = w->st.ids.socks;
			ds->steer_owners = w->st.ids.owners;
			ds->steer_services = w->st.ids.services;
		}
	}
	if (!ret) {
		ret = ernic_steer_member(&w->st, conf->share_slot, fd);
		if (ret)
			set_err(err, errlen, "steering: slot %u: %s",
				conf->share_slot, strerror(ret));
	}
	if (ret) {
		ernic_steer_close(&w->st);
		close(fd);
		fd = -1;
		/* no eBPF for us (rights, kernel) and nobody to share
		 * with: alone, as an unshared device */
		if (!ds->steer_members)
			fd = udp_socket(w, ROCE_UDP_PORT, false, err, errlen);
		else
			errno = ret;
		goto out;
	}
	ds->proc[conf->share_slot].steered = 1;
	ds->steer_members++;
	w->shared = true;
	w->slot = conf->share_slot;
out:
	ret = errno;
	ernic_ds_unlock(&h);
	ernic_ds_close(&h);
	errno = ret;
	return fd;
}

/* The socket on ADDR:4791: shared with the device's other processes
 * when the device has a state file, else this process's alone. */
static int port_socket(struct model_wire *w, const struct ernic_conf *conf,
		       char *err, size_t errlen)
{
	return conf->share_state[0] ?
		       share_socket(w, conf, err, errlen) :
		       udp_socket(w, ROCE_UDP_PORT, false, err, errlen);
}

void model_wire_qp_enabled(struct model_wire *w, uint32_t qpn, bool en)
{
	uint32_t cur;

	if (!w->shared || qpn >= ERNIC_STEER_QPS)
		return;
	/* Every model enables QP1: it stays with the first process that
	 * did, while that one is there. CM MADs go by connection instead
	 * (model_wire_mad_steer); QP1's owner gets the rest. */
	if (qpn == ERNIC_QP1) {
		if (en && !ernic_steer_owner(&w->st, qpn, &cur) &&
		    ernic_steer_live(&w->st, cur))
			return;
		if (!en && (ernic_steer_owner(&w->st, qpn, &cur) ||
			    cur != w->slot))
			return;
	}
	if (en)
		ernic_steer_set(&w->st, qpn, w->slot);
	else
		ernic_steer_clear(&w->st, qpn);
}

/* The CM tags its communication IDs with the state file's slot; the
 * program reads them as the steering slot. */
_Static_assert(ERNIC_STEER_COMM_TAG(7) == ERNIC_DS_COMM_TAG(7),
	       "one communication ID tag for the CM and the steering");

int model_wire_mad_steer(struct model_wire *w, uint64_t service_id,
			 bool claim)
{
	if (!w->shared)
		return 0;	/* alone on the device: every MAD is ours */
	return claim ? ernic_steer_service_set(&w->st, service_id, w->slot) :
		       ernic_steer_service_clear(&w->st, service_id);
}

/*
 * Batching and offloads of the UDP wire (wire_batch.h): sends go out in
 * batches, as GSO trains unless ERNIC_WIRE_OFFLOAD=0; receives use
 * UDP_GRO unless ERNIC_WIRE_OFFLOAD=0, also on a shared socket, where a
 * train that mixes QPs turns it off (wire_batch.h). A kernel without
 * UDP_GRO just gets datagrams.
 */
static bool offload_wanted(void)
{
	const char *v = getenv("ERNIC_WIRE_OFFLOAD");

	return !v || strcmp(v, "0");
}

static int open_batching(struct model_wire *w, char *err, size_t errlen)
{
	bool offload = offload_wanted();
	int rc;

	w->tx = malloc(sizeof(*w->tx));
	rc = w->tx ? wire_tx_init(w->tx, w->send_fd, w->family, w->ifindex,
				  offload, &w->stats) :
		     ENOMEM;
	if (rc) {
		set_err(err, errlen, "wire: out of memory");
		errno = rc;
		return -1;
	}
	w->rx.fd = w->fd;
	w->rx.family = w->family;
	memcpy(w->rx.local, w->local.dst, sizeof(w->rx.local));
	w->rx.stats = &w->stats;
	w->rx.shared = w->shared;
	if (!offload || setopt(w->fd, SOL_UDP, UDP_GRO, 1))
		return 0;
	w->rx.gro_buf = malloc(WIRE_GRO_BUF);
	if (!w->rx.gro_buf) {
		/* as a kernel without it: one datagram per read */
		(void)setopt(w->fd, SOL_UDP, UDP_GRO, 0);
	}
	return 0;
}

static int open_udp(struct model_wire *w, const struct ernic_conf *conf,
		    char *err, size_t errlen)
{
	int fd;
	bool v6 = w->family == AF_INET6;

	w->fd = port_socket(w, conf, err, errlen);
	if (w->fd < 0)
		return -1;
	size_buffers(w->fd);
	/* Destination, TOS/traffic class (ECN) and TTL of each datagram */
	if (v6 ? setopt(w->fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1) ||
		 setopt(w->fd, IPPROTO_IPV6, IPV6_RECVTCLASS, 1) ||
		 setopt(w->fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, 1) :
		 setopt(w->fd, IPPROTO_IP, IP_PKTINFO, 1) ||
		 setopt(w->fd, IPPROTO_IP, IP_RECVTOS, 1) ||
		 setopt(w->fd, IPPROTO_IP, IP_RECVTTL, 1))
		goto opt_fail;

	if (w->sport == ROCE_UDP_PORT) {
		fd = w->fd;
	} else {
		/* Shared: every process sends from ADDR:udp_sport, the
		 * device's one source port. */
		fd = udp_socket(w, w->sport, w->shared, err, errlen);
		if (fd < 0)
			return -1;
		w->send_fd = fd;
		/* Nothing is addressed to the source port: keep it empty. */
		if (attach_drop_all(fd))
			goto opt_fail;
	}
	w->send_fd = fd;
	size_buffers(fd);
	/*
	 * DF, never fragment: RoCEv2 requires it, and Linux then writes IP
	 * ID 0 for an unconnected socket, which the ICRC covers.
	 */
	if (v6 ? setopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER,
			IPV6_PMTUDISC_DO) ||
		 setopt(fd, IPPROTO_IPV6, IPV6_DONTFRAG, 1) :
		 setopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO))
		goto opt_fail;
	return open_batching(w, err, errlen);
opt_fail:
	set_err(err, errlen, "UDP socket option: %s", strerror(errno));
	return -1;
}

/*
 * Frame mode on a device shared by processes: every process's AF_PACKET
 * socket sees every frame, so each takes only its own (eBPF socket
 * filter of the steering maps, wire_steer.h). The maps, QP1's owner and
 * who is alive come from the UDP socket that holds ADDR:4791, which
 * joins the device's reuseport group as in UDP mode and drops all.
 */
static int frame_filter(struct model_wire *w, char *err, size_t errlen)
{
	int prog, rc = 0;

	prog = ernic_steer_frame_prog(&w->st, w->slot, &w->local, err, errlen);
	if (prog < 0)
		return -1;
	if (setsockopt(w->fd, SOL_SOCKET, SO_ATTACH_BPF, &prog,
		       sizeof(prog))) {
		set_err(err, errlen, "AF_PACKET steering filter: %s",
			strerror(errno));
		rc = -1;
	}
	close(prog);	/* the socket holds it */
	return rc;
}

static int open_frame(struct model_wire *w, const struct ernic_conf *conf,
		      char *err, size_t errlen)
{
	struct sockaddr_ll sll;

	if (!w->ifindex) {
		set_err(err, errlen, "frame mode: netdev '%s': %s",
			conf->netdev, strerror(errno ? errno : ENODEV));
		if (!errno)
			errno = ENODEV;
		return -1;
	}
	/* Holds ADDR:4791 so the kernel answers no ICMP port unreachable;
	 * shared, it is also what makes or joins the steering group. */
	w->drop_fd = port_socket(w, conf, err, errlen);
	if (w->drop_fd < 0)
		return -1;
	if (attach_drop_all(w->drop_fd)) {
		set_err(err, errlen, "UDP drop filter: %s", strerror(errno));
		return -1;
	}
	/* Protocol 0 until bound, so nothing unfiltered is queued. */
	w->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (w->fd < 0) {
		set_err(err, errlen, "AF_PACKET socket: %s%s", strerror(errno),
			errno == EPERM ? " (needs CAP_NET_RAW)" : "");
		return -1;
	}
	if (w->shared) {
		if (frame_filter(w, err, errlen))
			return -1;
	} else if (wire_frame_filter(w->fd, &w->local)) {
		set_err(err, errlen, "AF_PACKET filter: %s", strerror(errno));
		return -1;
	}
	size_buffers(w->fd);
	/* Our own transmissions (looped back to taps) are not input. Old
	 * kernels lack the option; recv checks the packet type anyway. */
	(void)setopt(w->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1);
	errno = wire_ring_init(&w->ring, w->fd, &w->stats, err, errlen);
	if (errno)
		return -1;
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)w->ifindex;
	if (bind(w->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		set_err(err, errlen, "bind AF_PACKET to %s: %s", conf->netdev,
			strerror(errno));
		return -1;
	}
	w->send_fd = w->fd;
	errno = wire_frame_init(&w->frx, w->fd, &w->ring, &w->local,
				&w->stats, err, errlen);
	return errno ? -1 : 0;
}

struct model_wire *model_wire_open(const struct ernic_conf *conf, char *err,
				   size_t errlen)
{
	struct model_wire *w;
	int rc, e;

	if (!conf || (conf->family != AF_INET && conf->family != AF_INET6) ||
	    (conf->wire != ERNIC_WIRE_UDP && conf->wire != ERNIC_WIRE_FRAME) ||
	    !conf->udp_sport) {
		set_err(err, errlen, "wire: bad configuration (family, wire "
			"mode or udp_sport)");
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		set_err(err, errlen, "wire: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	w->mode = conf->wire;
	w->family = conf->family;
	w->fd = w->send_fd = w->drop_fd = -1;
	ernic_steer_init(&w->st);
	w->sport = conf->udp_sport;
	w->local.family = conf->family;
	memcpy(w->local.dst, conf->addr, ernic_ip_len(conf->family));
	memcpy(w->local.dst_mac, conf->mac, 6);
	errno = 0;
	w->ifindex = conf->netdev[0] ? if_nametoindex(conf->netdev) : 0;

	rc = w->mode == ERNIC_WIRE_UDP ? open_udp(w, conf, err, errlen) :
					 open_frame(w, conf, err, errlen);
	if (rc) {
		e = errno;
		model_wire_close(w);
		errno = e ? e : EIO;
		return NULL;
	}
	return w;
}

struct model_wire *model_wire_open_tap(int family, model_wire_tx_fn tx,
				       void *arg)
{
	struct model_wire *w;

	if ((family != AF_INET && family != AF_INET6) || !tx) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->family = family;
	w->fd = w->send_fd = w->drop_fd = -1;
	ernic_steer_init(&w->st);	/* (0 would be stdin's fd) */
	w->tap = tx;
	w->tap_arg = arg;
	return w;
}

int model_wire_tap_push(struct model_wire *w, const struct roce_l3 *l3,
			const uint8_t *tp, size_t tlen)
{
	struct tap_pkt *t;

	if (!w || !w->tap || !l3 || !tp || tlen > sizeof(t->b))
		return EINVAL;
	if (w->in_n == MODEL_TAP_INBOX)
		return ENOSPC;
	if (!w->inbox) {
		w->inbox = calloc(MODEL_TAP_INBOX, sizeof(*w->inbox));
		if (!w->inbox)
			return ENOMEM;
	}
	t = &w->inbox[(w->in_head + w->in_n++) % MODEL_TAP_INBOX];
	t->l3 = *l3;
	t->len = tlen;
	memcpy(t->b, tp, tlen);
	return 0;
}

void model_wire_close(struct model_wire *w)
{
	if (!w)
		return;
	free(w->inbox);
	if (w->send_fd >= 0 && w->send_fd != w->fd)
		close(w->send_fd);
	if (w->fd >= 0)
		close(w->fd);
	if (w->drop_fd >= 0)
		close(w->drop_fd);
	ernic_steer_close(&w->st);
	if (w->tx) {
		wire_tx_fini(w->tx);
		free(w->tx);
	}
	free(w->rx.gro_buf);
	wire_frame_fini(&w->frx);
	wire_ring_fini(&w->ring);
	free(w);
}

int model_wire_fd(const struct model_wire *w)
{
	return w->fd;
}

/* The kernel writes these headers: the ICRC must be built for them. */
static bool udp_l3_ok(const struct model_wire *w, const struct roce_l3 *l3)
{
	return !memcmp(l3->src, w->local.dst, ernic_ip_len(w->family)) &&
	       l3->sport == w->sport && l3->ip_id == 0;
}

/* A packet in roce_build_split's layout, tp[0, hdr), pay_len bytes at
 * pay, then tp[hdr, tlen): 0 when it is one we build, else EINVAL or
 * EMSGSIZE. */
static int split_check(size_t tlen, size_t hdr, const uint8_t *pay,
		       size_t pay_len)
{
	if (hdr > tlen || (pay_len && !pay))
		return EINVAL;
	if (tlen > ROCE_MAX_TRANSPORT || pay_len > ROCE_MAX_TRANSPORT - tlen)
		return EMSGSIZE;
	return 0;
}

/* That packet glued at dst (tlen + pay_len bytes; split_check passed). */
static void split_glue(uint8_t *dst, const uint8_t *tp, size_t tlen,
		       size_t hdr, const uint8_t *pay, size_t pay_len)
{
	memcpy(dst, tp, hdr);
	if (pay_len)
		memcpy(dst + hdr, pay, pay_len);
	memcpy(dst + hdr + pay_len, tp + hdr, tlen - hdr);
}

/* A frame for l3 and the packet tp[0, hdr), pay_len bytes at pay, then
 * tp[hdr, tlen), written into the next transmit slot and marked for
 * sending (wire_ring.h): the frame port's one copy of each packet. */
static int frame_queue(struct model_wire *w, const struct roce_l3 *l3,
		       const uint8_t *tp, size_t tlen, size_t hdr,
		       const uint8_t *pay, size_t pay_len)
{
	size_t hl = roce_frame_hdr_len(l3->family), cap, flen;
	int rc = split_check(tlen, hdr, pay, pay_len);
	uint8_t *f;

	if (rc)
		return rc;
	f = wire_ring_tx_slot(&w->ring, w->fd, &cap);
	if (!f) {
		/* every slot still the kernel's: a congested link */
		w->stats.tx_dropped++;
		return 0;
	}
	if (hl + tlen + pay_len > cap)
		return EMSGSIZE;
	split_glue(f + hl, tp, tlen, hdr, pay, pay_len);
	flen = roce_frame_build(f, cap, l3, tlen + pay_len);
	if (!flen)
		return EINVAL;
	w->stats.tx_pkts++;
	return wire_ring_tx_commit(&w->ring, w->fd, flen);
}

static int send_frame(struct model_wire *w, const struct roce_l3 *l3,
		      const uint8_t *tp, size_t tlen)
{
	int rc = frame_queue(w, l3, tp, tlen, tlen, NULL, 0);

	return rc ? rc : wire_ring_tx_flush(&w->ring, w->fd);
}

int model_wire_send(struct model_wire *w, const struct roce_l3 *l3,
		    const uint8_t *tp, size_t tlen)
{
	if (!w || !l3 || !tp || l3->family != w->family)
		return EINVAL;
	if (w->tap) {
		w->tap(w->tap_arg, l3, tp, tlen);
		return 0;
	}
	if (w->mode != ERNIC_WIRE_UDP)
		return send_frame(w, l3, tp, tlen);
	if (!udp_l3_ok(w, l3))
		return EINVAL;
	return wire_tx_send_now(w->tx, l3, tp, tlen);
}

int model_wire_queue(struct model_wire *w, const struct roce_l3 *l3,
		     const uint8_t *tp, size_t tlen)
{
	return model_wire_queue_split(w, l3, tp, tlen, tlen, NULL, 0);
}

int model_wire_queue_split(struct model_wire *w, const struct roce_l3 *l3,
			   const uint8_t *tp, size_t tlen, size_t hdr,
			   const uint8_t *pay, size_t pay_len)
{
	uint8_t pkt[ROCE_MAX_TRANSPORT];
	int rc;

	if (w && w->tx) {
		if (!l3 || !tp || l3->family != w->family || !udp_l3_ok(w, l3))
			return EINVAL;
		if (!pay_len && tlen > ROCE_MAX_TRANSPORT) /* nothing we build */
			return wire_tx_send_now(w->tx, l3, tp, tlen);
		return wire_tx_add_split(w->tx, l3, tp, tlen, hdr, pay,
					 pay_len);
	}
	if (w && !w->tap && w->mode == ERNIC_WIRE_FRAME) {
		if (!l3 || !tp || l3->family != w->family)
			return EINVAL;
		return frame_queue(w, l3, tp, tlen, hdr, pay, pay_len);
	}
	if (!pay_len)
		return model_wire_send(w, l3, tp, tlen);
	/* A tap port copies each packet anyway: glued here. */
	if (!tp)
		return EINVAL;
	rc = split_check(tlen, hdr, pay, pay_len);
	if (rc)
		return rc;
	split_glue(pkt, tp, tlen, hdr, pay, pay_len);
	return model_wire_send(w, l3, pkt, tlen + pay_len);
}

uint8_t *model_wire_tx_slot(struct model_wire *w)
{
	return w && w->tx ? wire_tx_slot(w->tx) : NULL;
}

int model_wire_flush(struct model_wire *w)
{
	if (w && w->ring.map)
		return wire_ring_tx_flush(&w->ring, w->fd);
	return w && w->tx && w->tx->n ? wire_tx_flush(w->tx) : 0;
}

uint64_t model_wire_tx_gen(const struct model_wire *w)
{
	return w && w->tx ? w->tx->flushes : 0;
}

const struct model_wire_stats *model_wire_stats(const struct model_wire *w)
{
	return &w->stats;
}

int model_wire_recv(struct model_wire *w, uint8_t *buf, size_t cap,
		    struct roce_l3 *l3, const uint8_t **tp, size_t *tlen,
		    uint32_t *syndrome, int *check_icrc)
{
	if (!w || !buf || !l3 || !tp || !tlen || !syndrome || !check_icrc)
		return -EINVAL;
	*check_icrc = 1;
	if (w->tap) {
		const struct tap_pkt *t;

		if (!w->in_n)
			return 0;
		t = &w->inbox[w->in_head];
		w->in_head = (w->in_head + 1) % MODEL_TAP_INBOX;
		w->in_n--;
		if (t->len > cap)
			return 0;
		memcpy(buf, t->b, t->len);
		*l3 = t->l3;
		*tp = buf;
		*tlen = t->len;
		*syndrome = 0;
		return (int)t->len;
	}
	if (w->mode == ERNIC_WIRE_UDP)
		return wire_udp_recv(&w->rx, buf, cap, l3, tp, tlen, syndrome,
				     check_icrc);
	return wire_frame_recv(&w->frx, cap, l3, tp, tlen, syndrome,
			       check_icrc);
}
