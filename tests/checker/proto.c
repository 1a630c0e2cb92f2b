// SPDX-License-Identifier: MIT
/*
 * The TCP side channel. Setup: HELLO (client: its options and device
 * limits), CONFIG (server: the effective options), QPINFO both ways
 * (GID, QPNs, PSNs, the WRITE area and read source), READY both ways
 * once every QP is in RTS. During the run: PROGRESS (how far each QP's
 * WRITE area has been verified: the peer may reuse it up to there),
 * STOP (each QP's script length, for -T), DONE (final counts; the end
 * barrier) and ABORT (a reason; the peer exits at once). The socket is
 * non-blocking: a stopped peer must not stop us.
 *
 * A message is a 4-byte type and a 4-byte length, big-endian, then the
 * payload: big-endian 64-bit words, or text for ABORT.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"

#define CHK_MAGIC 0x45524e4943484b31ull	/* "ERNICHK1" */
#define MSG_MAX (1u << 20)

enum msg_type { MSG_HELLO = 1, MSG_CONFIG, MSG_QPINFO, MSG_READY,
		MSG_PROGRESS, MSG_STOP, MSG_DONE, MSG_ABORT };

struct ctl {
	int fd;
	uint8_t *in, *out;
	size_t in_len, in_cap, out_len, out_cap;
	bool eof;
	bool broken;		/* a send failed: read what is left */
};

/* ---- encoding ---- */

struct wb {
	uint8_t *p;
	size_t len, cap;
};

static void put64(struct wb *b, uint64_t v)
{
	if (b->len + 8 > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 256;
		uint8_t *n = realloc(b->p, cap);

		if (!n) {
			perror("ernic_check: realloc");
			exit(1);
		}
		b->p = n;
		b->cap = cap;
	}
	for (int i = 0; i < 8; i++)
		b->p[b->len++] = (uint8_t)(v >> (56 - 8 * i));
}

struct rb {
	const uint8_t *p;
	size_t len, pos;
	bool bad;
};

static uint64_t get64(struct rb *b)
{
	uint64_t v = 0;

	if (b->pos + 8 > b->len) {
		b->bad = true;
		return 0;
	}
	for (int i = 0; i < 8; i++)
		v = v << 8 | b->p[b->pos++];
	return v;
}

static void put_params(struct wb *b, const struct params *p)
{
	const uint64_t v[] = {
		p->seed, p->iters, p->duration, p->nqp, p->max_size, p->mtu,
		p->ops, p->idle, p->qp_timeout, p->retry_cnt, p->rnr_retry,
		p->min_rnr_timer, p->window, p->rx_depth, p->signal_every,
		p->rx_stall,
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		put64(b, v[i]);
}

static void get_params(struct rb *b, struct params *p)
{
	p->seed = get64(b);
	p->iters = get64(b);
	p->duration = (uint32_t)get64(b);
	p->nqp = (uint32_t)get64(b);
	p->max_size = (uint32_t)get64(b);
	p->mtu = (uint32_t)get64(b);
	p->ops = (uint32_t)get64(b);
	p->idle = (uint32_t)get64(b);
	p->qp_timeout = (uint32_t)get64(b);
	p->retry_cnt = (uint32_t)get64(b);
	p->rnr_retry = (uint32_t)get64(b);
	p->min_rnr_timer = (uint32_t)get64(b);
	p->window = (uint32_t)get64(b);
	p->rx_depth = (uint32_t)get64(b);
	p->signal_every = (uint32_t)get64(b);
	p->rx_stall = (uint32_t)get64(b);
}

static void put_caps(struct wb *b, const struct caps *k)
{
	put64(b, k->max_msg);
	put64(b, k->mtu);
	put64(b, k->max_qp_wr);
	put64(b, k->rd_atom);
	put64(b, k->init_rd_atom);
}

static void get_caps(struct rb *b, struct caps *k)
{
	k->max_msg = get64(b);
	k->mtu = (uint32_t)get64(b);
	k->max_qp_wr = (uint32_t)get64(b);
	k->rd_atom = (uint32_t)get64(b);
	k->init_rd_atom = (uint32_t)get64(b);
}

/* ---- the socket ---- */

int ctl_fd(const struct chk *c)
{
	return c->ctl ? c->ctl->fd : -1;
}

static int ctl_attach(struct chk *c, int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		perror("ernic_check: fcntl");
		close(fd);
		return -1;
	}
	c->ctl = calloc(1, sizeof(*c->ctl));
	if (!c->ctl) {
		close(fd);
		return -1;
	}
	c->ctl->fd = fd;
	return 0;
}

/* IPv6 first (dual-stack, so IPv4 clients reach it too), then IPv4.
 * Returns the listening socket (non-blocking), or -1. */
int ctl_listen(struct chk *c)
{
	const int fams[] = { AF_INET6, AF_INET };
	int lfd = -1, one = 1, zero = 0, err = 0;

	for (size_t i = 0; i < 2 && lfd < 0; i++) {
		struct addrinfo hints = { .ai_flags = AI_PASSIVE,
					  .ai_family = fams[i],
					  .ai_socktype = SOCK_STREAM };
		struct addrinfo *res;

		if (getaddrinfo(NULL, c->o.port, &hints, &res))
			continue;
		lfd = socket(res->ai_family, SOCK_STREAM, 0);
		if (lfd >= 0) {
			setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one,
				   sizeof(one));
			if (fams[i] == AF_INET6)
				setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY,
					   &zero, sizeof(zero));
			if (bind(lfd, res->ai_addr, res->ai_addrlen) ||
			    listen(lfd, 1) ||
			    fcntl(lfd, F_SETFL, O_NONBLOCK)) {
				err = errno;
				close(lfd);
				lfd = -1;
			}
		}
		freeaddrinfo(res);
	}
	if (lfd < 0)
		fprintf(stderr, "ernic_check: cannot listen on TCP port %s: %s\n",
			c->o.port, strerror(err));
	return lfd;
}

/* 1: a client is attached, 0: none within timeout_ms, -1: error. */
int ctl_accept(struct chk *c, int lfd, int timeout_ms)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	int fd;

	if (poll(&pfd, 1, timeout_ms) < 0)
		return errno == EINTR ? 0 : -1;
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		return errno == EAGAIN || errno == EINTR ||
		       errno == ECONNABORTED ? 0 : -1;
	return ctl_attach(c, fd) ? -1 : 1;
}

int ctl_server(struct chk *c)
{
	int lfd = ctl_listen(c), rc = 0;

	if (lfd < 0)
		return -1;
	printf("ernic_check: server: waiting for a client on TCP port %s\n",
	       c->o.port);
	fflush(stdout);
	while (!rc)
		rc = ctl_accept(c, lfd, -1);
	if (rc < 0)
		perror("ernic_check: accept");
	close(lfd);
	return rc < 0 ? -1 : 0;
}

/* A few retries: the server may still be starting. */
int ctl_client(struct chk *c)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *a;
	int fd = -1, err = 0, rc;

	rc = getaddrinfo(c->o.server, c->o.port, &hints, &res);
	if (rc) {
		fprintf(stderr, "ernic_check: %s: %s\n", c->o.server,
			gai_strerror(rc));
		return -1;
	}
	for (int tries = 0; fd < 0 && tries < 50; tries++) {
		if (tries)
			usleep(100000);
		for (a = res; a && fd < 0; a = a->ai_next) {
			fd = socket(a->ai_family, SOCK_STREAM, 0);
			if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen)) {
				err = errno;
				close(fd);
				fd = -1;
			}
		}
		if (err != ECONNREFUSED)
			break;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		fprintf(stderr, "ernic_check: cannot connect to %s port %s: %s\n",
			c->o.server, c->o.port, strerror(err));
		return -1;
	}
	return ctl_attach(c, fd);
}

static int ctl_queue(struct ctl *t, uint32_t type, const void *p,
		     uint32_t len)
{
	if (t->out_len + 8 + len > t->out_cap) {
		size_t cap = t->out_cap ? t->out_cap : 4096;
		uint8_t *n;

		while (cap < t->out_len + 8 + len)
			cap *= 2;
		n = realloc(t->out, cap);
		if (!n)
			return -1;
		t->out = n;
		t->out_cap = cap;
	}
	for (int i = 0; i < 4; i++) {
		t->out[t->out_len + i] = (uint8_t)(type >> (24 - 8 * i));
		t->out[t->out_len + 4 + i] = (uint8_t)(len >> (24 - 8 * i));
	}
	memcpy(t->out + t->out_len + 8, p, len);
	t->out_len += 8 + len;
	return 0;
}

/* Write what the socket takes now. When the peer is gone, drop it: what
 * it sent before (an ABORT, say) is still to be read, then EOF. */
static int ctl_flush(struct ctl *t)
{
	if (t->broken)
		t->out_len = 0;
	while (t->out_len) {
		ssize_t n = send(t->fd, t->out, t->out_len,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
			t->broken = true;
			t->out_len = 0;
			return 0;
		}
		if (n < 0)
			return -1;
		memmove(t->out, t->out + n, t->out_len - (size_t)n);
		t->out_len -= (size_t)n;
	}
	return 0;
}

/* Read what is there; -1 on a socket error (EOF sets eof). */
static int ctl_fill(struct ctl *t)
{
	for (;;) {
		ssize_t n;

		if (t->in_cap - t->in_len < 65536) {
			uint8_t *p = realloc(t->in, t->in_cap + 65536);

			if (!p)
				return -1;
			t->in = p;
			t->in_cap += 65536;
		}
		n = recv(t->fd, t->in + t->in_len, t->in_cap - t->in_len,
			 MSG_DONTWAIT);
		if (n > 0) {
			t->in_len += (size_t)n;
			continue;
		}
		if (n == 0) {
			t->eof = true;
			return 0;
		}
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		if (errno == ECONNRESET) {
			t->eof = true;
			return 0;
		}
		return -1;
	}
}

/* The next whole message: 1 (type, payload in buf), 0 none, -1 bad. */
static int ctl_next(struct ctl *t, uint32_t *type, uint8_t **buf,
		    uint32_t *len)
{
	uint32_t ty = 0, ln = 0;

	if (t->in_len < 8)
		return 0;
	for (int i = 0; i < 4; i++) {
		ty = ty << 8 | t->in[i];
		ln = ln << 8 | t->in[4 + i];
	}
	if (ln > MSG_MAX || !ty || ty > MSG_ABORT)
		return -1;
	if (t->in_len < 8 + (size_t)ln)
		return 0;
	*buf = malloc(ln + 1);
	if (!*buf)
		return -1;
	memcpy(*buf, t->in + 8, ln);
	(*buf)[ln] = 0;
	memmove(t->in, t->in + 8 + ln, t->in_len - 8 - ln);
	t->in_len -= 8 + ln;
	*type = ty;
	*len = ln;
	return 1;
}

static int ctl_wait(struct ctl *t, int timeout_ms)
{
	struct pollfd pfd = { .fd = t->fd, .events = POLLIN };

	if (t->out_len)
		pfd.events |= POLLOUT;
	if (poll(&pfd, 1, timeout_ms) < 0 && errno != EINTR)
		return -1;
	if (ctl_fill(t) || ctl_flush(t))
		return -1;
	return 0;
}

static int send_wb(struct chk *c, uint32_t type, struct wb *b)
{
	int rc = ctl_queue(c->ctl, type, b->p, (uint32_t)b->len);

	free(b->p);
	if (rc || ctl_flush(c->ctl)) {
		chk_fail(c, "TCP: cannot send to the peer: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Setup: wait (idle timeout) for a message of one type. */
static int expect(struct chk *c, uint32_t want, struct rb *b, uint8_t **buf)
{
	const double end = now_s() + (c->p.idle ? c->p.idle : 30);
	uint32_t type, len;
	int rc;

	for (;;) {
		rc = ctl_next(c->ctl, &type, buf, &len);
		if (rc < 0) {
			chk_fail(c, "TCP: garbled message from the peer (not ernic_check?)");
			return -1;
		}
		if (rc > 0 && type == MSG_ABORT) {
			chk_fail(c, "peer: %s", (char *)*buf);
			c->peer_gone = true;
			free(*buf);
			return -1;
		}
		if (rc > 0 && type != want) {
			chk_fail(c, "TCP: message %u from the peer, expected %u",
				 type, want);
			free(*buf);
			return -1;
		}
		if (rc > 0) {
			*b = (struct rb){ .p = *buf, .len = len };
			return 0;
		}
		if (c->ctl->eof) {
			chk_fail(c, "peer closed the connection during setup");
			c->peer_gone = true;
			return -1;
		}
		if (now_s() > end) {
			chk_fail(c, "setup: no answer from the peer for %us",
				 c->p.idle ? c->p.idle : 30);
			return -1;
		}
		chk_tick(c);	/* earlier runs go on meanwhile */
		if (ctl_wait(c->ctl, 10)) {
			chk_fail(c, "TCP: %s", strerror(errno));
			return -1;
		}
	}
}

/* HELLO / CONFIG: the server adopts the client's options. */
int proto_hello(struct chk *c)
{
	struct wb w = { 0 };
	struct rb r;
	uint8_t *buf;

	if (!c->server) {
		put64(&w, CHK_MAGIC);
		put_params(&w, &c->p);
		put_caps(&w, &c->mine);
		if (send_wb(c, MSG_HELLO, &w) ||
		    expect(c, MSG_CONFIG, &r, &buf))
			return -1;
		get_params(&r, &c->p);
		get_caps(&r, &c->peer);
	} else {
		if (expect(c, MSG_HELLO, &r, &buf))
			return -1;
		if (get64(&r) != CHK_MAGIC) {
			free(buf);
			chk_fail(c, "the client is not a compatible ernic_check");
			return -1;
		}
		get_params(&r, &c->p);
		get_caps(&r, &c->peer);
	}
	free(buf);
	if (r.bad) {
		chk_fail(c, "TCP: short HELLO/CONFIG message");
		return -1;
	}
	if (!c->server)
		return 0;
	if (negotiate(c))
		return -1;
	put_params(&w, &c->p);
	put_caps(&w, &c->mine);
	return send_wb(c, MSG_CONFIG, &w);
}

/* QPINFO both ways, then (after the caller's RTS) READY both ways. */
int proto_qpinfo(struct chk *c, uint32_t *qpn, uint32_t *psn)
{
	struct wb w = { 0 };
	uint64_t g[2];
	struct rb r;
	uint8_t *buf;

	memcpy(g, c->gid.raw, 16);
	put64(&w, g[0]);
	put64(&w, g[1]);
	put64(&w, c->wmr->rkey);
	put64(&w, (uintptr_t)c->wmem);
	put64(&w, c->rmr->rkey);
	put64(&w, (uintptr_t)c->rmem);
	put64(&w, c->p.nqp);
	for (uint32_t i = 0; i < c->p.nqp; i++) {
		put64(&w, c->q[i].qp->qp_num);
		put64(&w, c->q[i].psn);
	}
	if (send_wb(c, MSG_QPINFO, &w) || expect(c, MSG_QPINFO, &r, &buf))
		return -1;
	g[0] = get64(&r);
	g[1] = get64(&r);
	memcpy(c->peer_gid.raw, g, 16);
	c->peer_wt_rkey = (uint32_t)get64(&r);
	c->peer_wt_addr = get64(&r);
	c->peer_rs_rkey = (uint32_t)get64(&r);
	c->peer_rs_addr = get64(&r);
	if (get64(&r) != c->p.nqp)
		r.bad = true;
	for (uint32_t i = 0; i < c->p.nqp && !r.bad; i++) {
		qpn[i] = (uint32_t)get64(&r);
		psn[i] = (uint32_t)get64(&r);
	}
	free(buf);
	if (r.bad) {
		chk_fail(c, "TCP: bad QPINFO message");
		return -1;
	}
	return 0;
}

int proto_ready(struct chk *c)
{
	struct wb w = { 0 };
	struct rb r;
	uint8_t *buf;

	put64(&w, CHK_MAGIC);
	if (send_wb(c, MSG_READY, &w) || expect(c, MSG_READY, &r, &buf))
		return -1;
	free(buf);
	return 0;
}

/* ---- during the run ---- */

int proto_progress(struct chk *c, bool force)
{
	struct wb w = { 0 };

	/* Cumulative: when the socket is backed up, the next one will do
	 * (1: not sent). */
	if (c->ctl->out_len && !force)
		return 1;
	put64(&w, c->st.completions);
	for (uint32_t i = 0; i < c->p.nqp; i++)
		put64(&w, c->q[i].wfree);
	return send_wb(c, MSG_PROGRESS, &w);
}

int proto_stop(struct chk *c)
{
	struct wb w = { 0 };

	for (uint32_t i = 0; i < c->p.nqp; i++)
		put64(&w, c->q[i].nops);
	c->stop_sent = true;
	return send_wb(c, MSG_STOP, &w);
}

/* Our requester's completed ops per kind, and the bytes we verified. */
int proto_done(struct chk *c)
{
	struct kcount k = { 0 };
	struct wb w = { 0 };

	for (uint32_t i = 0; i < c->p.nqp; i++) {
		for (int j = 0; j < OP_NKINDS; j++)
			k.n[j] += c->q[i].sent.n[j];
		k.inl += c->q[i].sent.inl;
	}
	for (int j = 0; j < OP_NKINDS; j++)
		put64(&w, k.n[j]);
	put64(&w, k.inl);
	put64(&w, c->st.bytes_verified);
	c->done_sent = true;
	return send_wb(c, MSG_DONE, &w);
}

void proto_abort(struct chk *c, const char *why)
{
	const double end = now_s() + 0.5;

	if (!c->ctl || c->ctl->eof || c->ctl->broken)
		return;
	if (ctl_queue(c->ctl, MSG_ABORT, why, (uint32_t)strlen(why)))
		return;
	while (c->ctl->out_len && now_s() < end)
		if (ctl_wait(c->ctl, 50))
			break;
}

void proto_close(struct chk *c)
{
	if (!c->ctl)
		return;
	close(c->ctl->fd);
	free(c->ctl->in);
	free(c->ctl->out);
	free(c->ctl);
	c->ctl = NULL;
}

static int on_msg(struct chk *c, uint32_t type, struct rb *r)
{
	switch (type) {
	case MSG_PROGRESS:
		get64(r);
		for (uint32_t i = 0; i < c->p.nqp; i++) {
			uint64_t v = get64(r);

			if (!r->bad && v > c->q[i].credit)
				c->q[i].credit = v;
		}
		break;
	case MSG_STOP:
		for (uint32_t i = 0; i < c->p.nqp; i++) {
			uint64_t v = get64(r);

			if (!r->bad)
				c->q[i].peer_n = v;
		}
		break;
	case MSG_DONE:
		for (int j = 0; j < OP_NKINDS; j++)
			c->peer_sent.n[j] = get64(r);
		c->peer_sent.inl = get64(r);
		c->peer_bytes = get64(r);
		c->peer_done = true;
		break;
	case MSG_ABORT:
		c->peer_gone = true;
		if (c->o.expect_err) {
			printf("ernic_check: %snote: peer failed: %s\n",
			       c->tag, (const char *)r->p);
			return 0;
		}
		chk_fail(c, "peer: %s", (const char *)r->p);
		printf("ernic_check:   our state:\n");
		chk_dump(c);
		return -1;
	default:
		chk_fail(c, "TCP: unexpected message %u during the run", type);
		return -1;
	}
	if (r->bad) {
		chk_fail(c, "TCP: short message %u from the peer", type);
		return -1;
	}
	return 0;
}

/* Read and act on what the peer sent; wait up to timeout_ms for it. */
int proto_poll(struct chk *c, int timeout_ms)
{
	struct ctl *t = c->ctl;
	uint32_t type, len;
	uint8_t *buf;
	int rc;

	if (t->eof)
		return 0;
	if (ctl_wait(t, timeout_ms)) {
		if (c->o.expect_err) {
			t->eof = true;
			c->peer_gone = true;
			return 0;
		}
		chk_fail(c, "TCP: %s (peer gone?)", strerror(errno));
		return -1;
	}
	while ((rc = ctl_next(t, &type, &buf, &len)) > 0) {
		struct rb r = { .p = buf, .len = len };

		c->last_progress = now_s();
		rc = on_msg(c, type, &r);
		free(buf);
		if (rc)
			return -1;
	}
	if (rc < 0) {
		chk_fail(c, "TCP: garbled message from the peer");
		return -1;
	}
	if (t->eof && !c->peer_done) {
		c->peer_gone = true;
		if (c->o.expect_err) {
			printf("ernic_check: %snote: the peer closed the connection\n",
			       c->tag);
			return 0;
		}
		chk_fail(c, "the peer closed the connection before the end (killed?)");
		chk_dump(c);
		return -1;
	}
	return 0;
}
