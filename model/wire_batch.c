// SPDX-License-Identifier: MIT
/* Batched sending (sendmmsg, UDP GSO) and UDP_GRO receive buffers of the
 * model's UDP wire (wire_batch.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>

#include "ernic_net.h"
#include "ernic_wire.h"
#include "wire_batch.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

int wire_tx_init(struct wire_tx_batch *b, int fd, int family,
		 unsigned int ifindex, bool gso,
		 struct model_wire_stats *stats)
{
	memset(b, 0, sizeof(*b));
	b->fd = fd;
	b->family = family;
	b->ifindex = ifindex;
	b->gso = gso;
	b->stats = stats;
	b->cap = (size_t)WIRE_TX_PKTS * ROCE_MAX_TRANSPORT;
	b->buf = malloc(b->cap);
	return b->buf ? 0 : ENOMEM;
}

void wire_tx_fini(struct wire_tx_batch *b)
{
	free(b->buf);
	b->buf = NULL;
	b->n = 0;
}

static void fill_ent(const struct wire_tx_batch *b, struct wire_tx_ent *e,
		     const struct roce_l3 *l3, const uint8_t *tp, size_t tlen)
{
	e->off = 0;
	e->len = (uint32_t)tlen;
	e->hdr = (uint32_t)tlen;
	e->pay = NULL;
	e->pay_len = 0;
	/* A runt has no QP, and QP1's MADs go to a shared device's
	 * processes by what they carry (wire_steer.h), which steering
	 * reads in a train's first segment only: neither ever joins a
	 * train (see wire_tx_run). */
	e->dqp = tlen >= ROCE_BTH_LEN ? ernic_get24(tp + 5) : UINT32_MAX;
	if (e->dqp == IB_QP1)
		e->dqp = UINT32_MAX;
	e->dport = l3->dport;
	e->tos = l3->tos;
	e->ttl = l3->ttl;
	memset(e->dst, 0, sizeof(e->dst));
	memcpy(e->dst, l3->dst, ernic_ip_len(b->family));
}

int wire_tx_add(struct wire_tx_batch *b, const struct roce_l3 *l3,
		const uint8_t *tp, size_t tlen)
{
	return wire_tx_add_split(b, l3, tp, tlen, tlen, NULL, 0);
}

int wire_tx_add_split(struct wire_tx_batch *b, const struct roce_l3 *l3,
		      const uint8_t *tp, size_t tlen, size_t hdr,
		      const uint8_t *pay, size_t pay_len)
{
	struct wire_tx_ent *e;

	if (hdr > tlen || (pay_len && !pay))
		return EINVAL;
	if (tlen > ROCE_MAX_TRANSPORT || tlen > b->cap ||
	    pay_len > ROCE_MAX_TRANSPORT - tlen)
		return EMSGSIZE;	/* a bigger one is nothing we build */
	/* what the kernel says of the others is theirs (their losses),
	 * not this packet's */
	if (b->n == WIRE_TX_PKTS || b->cap - b->used < tlen) {
		if (tp == b->buf + b->used)
			return EINVAL;	/* a slot not had from wire_tx_slot */
		(void)wire_tx_flush(b);
	}
	e = &b->ent[b->n++];
	fill_ent(b, e, l3, tp, tlen);
	e->len = (uint32_t)(tlen + pay_len);
	e->hdr = (uint32_t)hdr;
	e->pay = pay;
	e->pay_len = (uint32_t)pay_len;
	e->off = (uint32_t)b->used;
	if (tp != b->buf + b->used)	/* else built in place (slot) */
		memcpy(b->buf + b->used, tp, tlen);
	b->used += tlen;
	return 0;
}

uint8_t *wire_tx_slot(struct wire_tx_batch *b)
{
	if (b->cap < ROCE_MAX_TRANSPORT)
		return NULL;
	if (b->n == WIRE_TX_PKTS || b->cap - b->used < ROCE_MAX_TRANSPORT)
		(void)wire_tx_flush(b);
	return b->buf + b->used;
}

static bool same_envelope(const struct wire_tx_ent *a,
			  const struct wire_tx_ent *b)
{
	return a->dqp == b->dqp && a->dqp != UINT32_MAX &&
	       a->dport == b->dport && a->tos == b->tos && a->ttl == b->ttl &&
	       !memcmp(a->dst, b->dst, sizeof(a->dst));
}

uint32_t wire_tx_run(const struct wire_tx_batch *b, uint32_t first)
{
	const struct wire_tx_ent *h = &b->ent[first];
	uint32_t k = 1;
	size_t bytes = h->len;

	if (!b->gso || first >= b->n)
		return first < b->n ? 1 : 0;
	while (first + k < b->n && k < WIRE_GSO_SEGS) {
		const struct wire_tx_ent *e = &b->ent[first + k];

		/* all segments but the last are gso_size long; the last
		 * may be shorter (never empty) */
		if (b->ent[first + k - 1].len != h->len || e->len > h->len ||
		    !e->len || bytes + e->len > WIRE_GSO_BYTES ||
		    !same_envelope(h, e))
			break;
		bytes += e->len;
		k++;
	}
	return k;
}

/* IPv4: segment k of a train is patched for ID k (wire_batch.h); again
 * to undo it. */
static void patch_ids(struct wire_tx_batch *b, uint32_t first, uint32_t n)
{
	if (b->family != AF_INET)
		return;
	for (uint32_t k = 1; k < n; k++) {
		const struct wire_tx_ent *e = &b->ent[first + k];
		uint8_t *icrc = b->buf + e->off + e->len - e->pay_len -
				ROCE_ICRC_LEN;
		uint32_t d = roce_icrc_ip_id_delta(e->len, (uint16_t)k);

		ernic_put_le32(icrc, ernic_get_le32(icrc) ^ d);
	}
}

static void put_int_cmsg(struct cmsghdr *c, int level, int type, int v)
{
	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &v, sizeof(int));
}

/* msg[m] for the niov pieces at iov to e's envelope, as one datagram,
 * or a GSO train of e->len segments (gso). TOS/traffic class and TTL per
 * datagram: no socket state to race. */
static void build_msg(struct wire_tx_batch *b, uint32_t m,
		      const struct wire_tx_ent *e, struct iovec *iov,
		      size_t niov, bool gso)
{
	struct msghdr *h = &b->msg[m].msg_hdr;
	struct cmsghdr *c;
	bool v6 = b->family == AF_INET6;
	size_t space;
	uint16_t seg;

	memset(h, 0, sizeof(*h));
	h->msg_name = &b->sa[m];
	h->msg_namelen = ernic_sockaddr(&b->sa[m], b->family, e->dst, e->dport,
				       b->ifindex);
	h->msg_iov = iov;
	h->msg_iovlen = niov;
	memset(&b->cm[m], 0, sizeof(b->cm[m]));
	h->msg_control = b->cm[m].buf;
	space = CMSG_SPACE(sizeof(int));
	if (e->ttl)
		space += CMSG_SPACE(sizeof(int));
	if (gso)
		space += CMSG_SPACE(sizeof(uint16_t));
	h->msg_controllen = space;
	c = CMSG_FIRSTHDR(h);
	put_int_cmsg(c, v6 ? IPPROTO_IPV6 : IPPROTO_IP,
		     v6 ? IPV6_TCLASS : IP_TOS, e->tos);
	if (e->ttl) {
		c = CMSG_NXTHDR(h, c);
		put_int_cmsg(c, v6 ? IPPROTO_IPV6 : IPPROTO_IP,
			     v6 ? IPV6_HOPLIMIT : IP_TTL, e->ttl);
	}
	if (gso) {
		c = CMSG_NXTHDR(h, c);
		c->cmsg_level = SOL_UDP;
		c->cmsg_type = UDP_SEGMENT;
		c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
		seg = (uint16_t)e->len;
		memcpy(CMSG_DATA(c), &seg, sizeof(seg));
	}
	b->msg[m].msg_len = 0;
}

/* Append len bytes at p to the pieces iov[0, *n), merged into the last
 * one when they follow it in memory. */
static void add_piece(struct iovec *iov, size_t *n, const uint8_t *p,
		      size_t len)
{
	struct iovec *last = *n ? &iov[*n - 1] : NULL;

	if (!len)
		return;
	if (last && (const uint8_t *)last->iov_base + last->iov_len == p) {
		last->iov_len += len;
		return;
	}
	iov[*n].iov_base = (void *)p;
	iov[*n].iov_len = len;
	(*n)++;
}

/* msg[m] for the run of n packets from ent[first], its pieces in iov
 * (room for three per packet). Returns how many pieces it took. */
static size_t build_run(struct wire_tx_batch *b, uint32_t m, uint32_t first,
			uint32_t n, struct iovec *iov)
{
	size_t niov = 0;

	for (uint32_t k = 0; k < n; k++) {
		const struct wire_tx_ent *e = &b->ent[first + k];
		const uint8_t *at = b->buf + e->off;

		add_piece(iov, &niov, at, e->hdr);
		add_piece(iov, &niov, e->pay, e->pay_len);
		add_piece(iov, &niov, at + e->hdr,
			  e->len - e->pay_len - e->hdr);
	}
	build_msg(b, m, &b->ent[first], iov, niov, n > 1);
	return niov;
}

/* Send errors that a real link would show as loss. */
static bool is_loss(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS;
}

static void count(struct wire_tx_batch *b, uint32_t calls, uint32_t dgrams,
		  uint32_t gso, uint32_t dropped)
{
	if (!b->stats)
		return;
	b->stats->tx_calls += calls;
	b->stats->tx_datagrams += dgrams;
	b->stats->tx_gso += gso;
	b->stats->tx_dropped += dropped;
}

/* The packets of a train the kernel would not take as one, each alone. */
static int send_singly(struct wire_tx_batch *b, uint32_t m)
{
	uint32_t first = b->run_first[m], n = b->run_n[m];
	int first_err = 0;

	patch_ids(b, first, n);		/* back to ID 0 each */
	if (b->stats)
		b->stats->tx_gso_refused++;
	for (uint32_t k = 0; k < n; k++) {
		ssize_t r;

		build_run(b, m, first + k, 1, b->one_iov);
		do
			r = sendmsg(b->fd, &b->msg[m].msg_hdr,
				    MSG_DONTWAIT | MSG_NOSIGNAL);
		while (r < 0 && errno == EINTR);
		count(b, 1, r >= 0, 0, r < 0);
		if (r < 0 && !is_loss(errno) && !first_err)
			first_err = errno;
	}
	return first_err;
}

int wire_tx_flush(struct wire_tx_batch *b)
{
	uint32_t nm = 0, done = 0;
	size_t niov = 0;
	int first_err = 0;

	for (uint32_t i = 0; i < b->n;) {
		uint32_t k = wire_tx_run(b, i);

		b->run_first[nm] = i;
		b->run_n[nm] = k;
		if (k > 1)
			patch_ids(b, i, k);
		niov += build_run(b, nm++, i, k, &b->iov[niov]);
		i += k;
	}
	if (b->stats)
		b->stats->tx_pkts += b->n;
	while (done < nm) {
		int r = sendmmsg(b->fd, &b->msg[done], nm - done,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		int err;
		uint32_t gso = 0;

		if (r > 0) {
			for (uint32_t m = done; m < done + (uint32_t)r; m++)
				gso += b->run_n[m] > 1;
			count(b, 1, (uint32_t)r, gso, 0);
			done += (uint32_t)r;
			continue;
		}
		err = r < 0 ? errno : EIO;
		if (err == EINTR)
			continue;
		count(b, 1, 0, 0, 0);
		/* datagram `done` failed; the ones behind it are tried */
		if (b->run_n[done] > 1 && (err == EINVAL || err == EIO ||
					   err == EMSGSIZE)) {
			err = send_singly(b, done);
		} else {
			count(b, 0, 0, 0, b->run_n[done]);
			if (is_loss(err))
				err = 0;
		}
		if (err && !first_err)
			first_err = err;
		done++;
	}
	b->n = 0;
	b->used = 0;
	b->flushes++;
	return first_err;
}

void wire_gro_load(struct wire_gro *g, const uint8_t *buf, size_t len,
		   int gso, bool trunc)
{
	g->buf = buf;
	g->len = len;
	g->off = 0;
	g->trunc = trunc;
	g->seg = gso > 0 && (size_t)gso < len ? (size_t)gso : len;
	g->pending = true;
	g->dqp = UINT32_MAX;
}

bool wire_gro_next(struct wire_gro *g, const uint8_t **p, size_t *len,
		   bool *cut)
{
	size_t n;

	if (!g->pending)
		return false;
	/* (an empty datagram is one datagram too) */
	n = g->len - g->off < g->seg ? g->len - g->off : g->seg;
	*p = g->buf + g->off;
	*len = n;
	g->off += n;
	g->pending = g->off < g->len;
	/* only the last piece of a cut buffer lost its end */
	*cut = g->trunc && !g->pending;
	return true;
}

int wire_tx_send_now(struct wire_tx_batch *b, const struct roce_l3 *l3,
		     const uint8_t *tp, size_t tlen)
{
	struct wire_tx_ent e;
	ssize_t r;
	int rc = b->n ? wire_tx_flush(b) : 0;

	fill_ent(b, &e, l3, tp, tlen);
	b->one_iov[0].iov_base = (void *)tp;
	b->one_iov[0].iov_len = tlen;
	build_msg(b, 0, &e, b->one_iov, 1, false);
	do
		r = sendmsg(b->fd, &b->msg[0].msg_hdr,
			    MSG_DONTWAIT | MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	if (b->stats)
		b->stats->tx_pkts++;
	count(b, 1, r >= 0, 0, r < 0);
	if (r < 0 && !is_loss(errno))
		return errno;
	return rc;
}

/* The envelope from the cmsgs, and the UDP_GRO segment size (0: none). */
static void read_cmsgs(struct msghdr *msg, struct roce_l3 *l3, int *gso)
{
	struct cmsghdr *c;
	int v;

	*gso = 0;
	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		size_t dlen = c->cmsg_len - CMSG_LEN(0);
		const void *d = CMSG_DATA(c);

		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO &&
		    dlen >= sizeof(struct in_pktinfo)) {
			struct in_pktinfo pi;

			memcpy(&pi, d, sizeof(pi));
			memcpy(l3->dst, &pi.ipi_addr, 4);
		} else if (c->cmsg_level == IPPROTO_IPV6 &&
			   c->cmsg_type == IPV6_PKTINFO &&
			   dlen >= sizeof(struct in6_pktinfo)) {
			struct in6_pktinfo pi;

			memcpy(&pi, d, sizeof(pi));
			memcpy(l3->dst, &pi.ipi6_addr, 16);
		} else if (c->cmsg_level == SOL_UDP &&
			   c->cmsg_type == UDP_GRO && dlen >= sizeof(int)) {
			memcpy(gso, d, sizeof(int));
		} else if (c->cmsg_level == IPPROTO_IP &&
			   c->cmsg_type == IP_TOS && dlen >= 1) {
			l3->tos = *(const uint8_t *)d;
		} else if (dlen >= sizeof(int) &&
			   ((c->cmsg_level == IPPROTO_IP &&
			     c->cmsg_type == IP_TTL) ||
			    (c->cmsg_level == IPPROTO_IPV6 &&
			     (c->cmsg_type == IPV6_TCLASS ||
			      c->cmsg_type == IPV6_HOPLIMIT)))) {
			memcpy(&v, d, sizeof(v));
			if (c->cmsg_type == IPV6_TCLASS)
				l3->tos = (uint8_t)v;
			else
				l3->ttl = (uint8_t)v;
		}
	}
}

/*
 * Whether a segment of a train read from a shared socket may belong to
 * another process (wire_batch.h): not the first segment's QP, or a MAD
 * after the first segment. The first time, GRO is turned off on the
 * socket. A runt shows no QP: its checks drop it anyway.
 */
static bool steered_elsewhere(struct wire_rx *w, const uint8_t *tp,
			      size_t tlen, bool first)
{
	uint32_t dqp;

	if (!w->shared || tlen < ROCE_BTH_LEN)
		return false;
	dqp = ernic_get24(tp + 5);
	if (first) {
		w->gro.dqp = dqp;
		return false;
	}
	if (dqp == w->gro.dqp && dqp != IB_QP1)
		return false;
	w->stats->rx_foreign++;
	if (!w->gro_off) {
		int off = 0;

		/* (what is queued already may still come merged: without
		 * the segment size it is one long datagram, malformed) */
		(void)setsockopt(w->fd, SOL_UDP, UDP_GRO, &off, sizeof(off));
		w->gro_off = true;
	}
	return true;
}

/* The next datagram of the GRO buffer, as wire_udp_recv returns one: cut to
 * cap and flagged when longer (or when the kernel cut its end). */
static int gro_next(struct wire_rx *w, size_t cap, struct roce_l3 *l3,
		    const uint8_t **tp, size_t *tlen, uint32_t *syndrome,
		    int *check_icrc)
{
	bool cut, first;
	uint16_t id;

	do {
		first = w->gro.off == 0;
		if (!wire_gro_next(&w->gro, tp, tlen, &cut))
			return 0;
	} while (steered_elsewhere(w, *tp, *tlen, first));
	w->stats->rx_pkts++;
	*l3 = w->gro.l3;
	*syndrome = 0;
	*check_icrc = 1;
	if (cut || *tlen > cap) {	/* longer than any RoCE packet */
		if (*tlen > cap)
			*tlen = cap;
		*syndrome = ROCE_SYN_MALFORMED;
		return 1;
	}
	/* The sender's IPv4 ID is invisible here: recover it (roce_pkt.h).
	 * The ID found makes the ICRC good, so the check is done: the
	 * engine need not run the CRC over the packet again. No ID: the
	 * engine's check finds the bad ICRC (with whatever else is bad). */
	if (w->family == AF_INET && *tlen >= ROCE_BTH_LEN + ROCE_ICRC_LEN &&
	    roce_icrc_solve_ip_id(l3, *tp, *tlen, &id)) {
		l3->ip_id = id;
		*check_icrc = 0;
	}
	return 1;
}

/*
 * One datagram. With UDP_GRO a read may bring a train of them (same
 * addresses, ports, TOS and TTL: what GRO merges by), kept in w->gro and
 * handed out one per call; without, the datagram is read into buf.
 */
int wire_udp_recv(struct wire_rx *w, uint8_t *buf, size_t cap,
		  struct roce_l3 *l3, const uint8_t **tp, size_t *tlen,
		  uint32_t *syndrome, int *check_icrc)
{
	struct sockaddr_storage from;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	union {
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo)) +
			 4 * CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct msghdr msg;
	struct roce_l3 *env = &w->gro.l3;
	ssize_t n;
	int gso;

	/* (a train's last segments may all have been dropped: then read) */
	if (w->gro.pending &&
	    gro_next(w, cap, l3, tp, tlen, syndrome, check_icrc))
		return 1;
	if (w->gro_buf) {
		iov.iov_base = w->gro_buf;
		iov.iov_len = WIRE_GRO_BUF;
	}
	for (;;) {
		memset(&msg, 0, sizeof(msg));
		msg.msg_name = &from;
		msg.msg_namelen = sizeof(from);
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cbuf.buf;
		msg.msg_controllen = sizeof(cbuf.buf);
		n = recvmsg(w->fd, &msg, MSG_DONTWAIT);
		if (n >= 0)
			break;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
	w->stats->rx_calls++;
	memset(env, 0, sizeof(*env));
	env->family = w->family;
	memcpy(env->dst, w->local, ernic_ip_len(w->family));
	if (w->family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)&from;

		memcpy(env->src, &sin->sin_addr, 4);
		env->sport = ntohs(sin->sin_port);
	} else {
		const struct sockaddr_in6 *sin6 = (const void *)&from;

		memcpy(env->src, &sin6->sin6_addr, 16);
		env->sport = ntohs(sin6->sin6_port);
	}
	env->dport = ROCE_UDP_PORT;
	read_cmsgs(&msg, env, &gso);
	/* without GRO asked for, a segment size is no concern of ours: the
	 * bytes are one datagram */
	wire_gro_load(&w->gro, iov.iov_base, (size_t)n, w->gro_buf ? gso : 0,
		      msg.msg_flags & MSG_TRUNC);
	return gro_next(w, cap, l3, tp, tlen, syndrome, check_icrc);
}
