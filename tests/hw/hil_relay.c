// SPDX-License-Identifier: MIT
/*
 * hil_relay: carries SOCK_SEQPACKET connections over TCP, for the
 * hardware-in-the-loop test bed (tests/hw/hil.sh, docs/hardware.md).
 *
 * The virtual FPGA's interrupt socket (common/ernic_vfpga.h) tells its
 * messages apart by their length: a 4-byte event count or unmask, an
 * 8-byte flush. A guest reaches the host only through its network, and
 * a TCP stream would merge two messages sent close together (two
 * unmasks read as one 8-byte message, which the virtual FPGA ignores:
 * the line would stay masked for ever). So each message crosses TCP as
 * one frame: a length byte, then the message.
 *
 *   hil_relay --listen unix:PATH --connect tcp:ADDR:PORT    (guest)
 *   hil_relay --listen tcp:ADDR:PORT --connect unix:PATH    (host)
 *
 * Every connection accepted on the listening side gets its own
 * connection on the other side; either end closing closes both. Prints
 * "hil_relay: listening" once it listens. Runs until killed.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_PAIRS 64
#define MAX_MSG 64			/* the protocol's are 4 and 8 bytes */

struct endpoint {
	bool tcp;
	struct sockaddr_storage sa;
	socklen_t salen;
	const char *text;
};

struct pair {
	int unix_fd, tcp_fd;		/* -1: slot free */
	uint8_t in[2 * (1 + MAX_MSG)];	/* TCP bytes not yet a whole frame */
	size_t inlen;
};

static struct pair pairs[MAX_PAIRS];

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "hil_relay: %s: %s\n", what, detail);
	exit(1);
}

static void parse(const char *text, struct endpoint *e)
{
	e->text = text;
	memset(&e->sa, 0, sizeof(e->sa));
	if (!strncmp(text, "unix:", 5)) {
		struct sockaddr_un *sun = (struct sockaddr_un *)&e->sa;

		if (strlen(text + 5) >= sizeof(sun->sun_path) || !text[5])
			die(text, "empty, or too long for a socket path");
		sun->sun_family = AF_UNIX;
		strcpy(sun->sun_path, text + 5);
		e->salen = sizeof(*sun);
		e->tcp = false;
	} else if (!strncmp(text, "tcp:", 4)) {
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
					  .ai_flags = AI_NUMERICHOST |
						      AI_NUMERICSERV };
		char host[128];
		const char *port = strrchr(text + 4, ':');
		struct addrinfo *ai;
		size_t hl = port ? (size_t)(port - (text + 4)) : sizeof(host);

		if (hl >= sizeof(host))
			die(text, "want tcp:ADDR:PORT");
		memcpy(host, text + 4, hl);
		host[hl] = 0;
		if (getaddrinfo(host, port + 1, &hints, &ai))
			die(text, "not a numeric address and port");
		memcpy(&e->sa, ai->ai_addr, ai->ai_addrlen);
		e->salen = ai->ai_addrlen;
		e->tcp = true;
		freeaddrinfo(ai);
	} else {
		die(text, "want unix:PATH or tcp:ADDR:PORT");
	}
}

static int sock_for(const struct endpoint *e)
{
	int s = socket(e->sa.ss_family,
		       (e->tcp ? SOCK_STREAM : SOCK_SEQPACKET) | SOCK_CLOEXEC,
		       0);
	int one = 1;

	if (s >= 0 && e->tcp)
		setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return s;
}

static void pair_close(struct pair *p, const char *why)
{
	if (why)
		fprintf(stderr, "hil_relay: connection closed: %s\n", why);
	close(p->unix_fd);
	close(p->tcp_fd);
	p->unix_fd = p->tcp_fd = -1;
	p->inlen = 0;
}

static bool send_all(int fd, const uint8_t *b, size_t len)
{
	while (len) {
		ssize_t n = send(fd, b, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		b += n;
		len -= (size_t)n;
	}
	return true;
}

/* One message from the SOCK_SEQPACKET side becomes one frame. */
static void from_unix(struct pair *p)
{
	uint8_t f[1 + MAX_MSG];
	ssize_t n = recv(p->unix_fd, f + 1, MAX_MSG, MSG_TRUNC);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		pair_close(p, n ? strerror(errno) : NULL);
		return;
	}
	if (n > MAX_MSG) {
		pair_close(p, "a message longer than the protocol's");
		return;
	}
	f[0] = (uint8_t)n;
	if (!send_all(p->tcp_fd, f, 1 + (size_t)n))
		pair_close(p, "TCP send failed");
}

/* TCP bytes: every whole frame becomes one message. */
static void from_tcp(struct pair *p)
{
	ssize_t n = recv(p->tcp_fd, p->in + p->inlen,
			 sizeof(p->in) - p->inlen, 0);
	size_t at = 0;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		pair_close(p, n ? strerror(errno) : NULL);
		return;
	}
	p->inlen += (size_t)n;
	while (at < p->inlen) {
		size_t len = p->in[at];

		if (!len || len > MAX_MSG) {
			pair_close(p, "a bad frame length from TCP");
			return;
		}
		if (p->inlen - at < 1 + len)
			break;
		if (send(p->unix_fd, p->in + at + 1, len, MSG_NOSIGNAL) !=
		    (ssize_t)len) {
			pair_close(p, "the socket refused a message");
			return;
		}
		at += 1 + len;
	}
	memmove(p->in, p->in + at, p->inlen - at);
	p->inlen -= at;
}

static void accept_one(int lsock, const struct endpoint *lis,
		       const struct endpoint *con)
{
	int a = accept4(lsock, NULL, NULL, SOCK_CLOEXEC), c, one = 1, k;

	if (a < 0)
		return;
	if (lis->tcp)
		setsockopt(a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (k = 0; k < MAX_PAIRS && pairs[k].unix_fd >= 0; k++)
		;
	c = k < MAX_PAIRS ? sock_for(con) : -1;
	if (c < 0 || connect(c, (struct sockaddr *)&con->sa, con->salen)) {
		fprintf(stderr, "hil_relay: %s: %s\n", con->text,
			k < MAX_PAIRS ? strerror(errno) : "too many connections");
		if (c >= 0)
			close(c);
		close(a);
		return;
	}
	pairs[k].unix_fd = lis->tcp ? c : a;
	pairs[k].tcp_fd = lis->tcp ? a : c;
	pairs[k].inlen = 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "connect", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ltext = NULL, *ctext = NULL;
	struct endpoint lis, con;
	int opt, lsock, one = 1;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'l')
			ltext = optarg;
		else if (opt == 'c')
			ctext = optarg;
		else
			return 2;
	}
	if (!ltext || !ctext || optind != argc) {
		fprintf(stderr, "usage: hil_relay --listen unix:PATH|tcp:ADDR:PORT "
			"--connect tcp:ADDR:PORT|unix:PATH\n");
		return 2;
	}
	parse(ltext, &lis);
	parse(ctext, &con);
	if (lis.tcp == con.tcp)
		die("usage", "one side unix:, the other tcp:");
	for (int k = 0; k < MAX_PAIRS; k++)
		pairs[k].unix_fd = pairs[k].tcp_fd = -1;

	lsock = sock_for(&lis);
	if (lsock < 0)
		die(ltext, strerror(errno));
	if (lis.tcp)
		setsockopt(lsock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	else
		unlink(((struct sockaddr_un *)&lis.sa)->sun_path);
	if (bind(lsock, (struct sockaddr *)&lis.sa, lis.salen) ||
	    listen(lsock, MAX_PAIRS))
		die(ltext, strerror(errno));
	printf("hil_relay: listening on %s, relaying to %s\n", ltext, ctext);
	fflush(stdout);

	for (;;) {
		struct pollfd p[1 + 2 * MAX_PAIRS];

		p[0] = (struct pollfd){ .fd = lsock, .events = POLLIN };
		for (int k = 0; k < MAX_PAIRS; k++) {
			p[1 + 2 * k] = (struct pollfd){ .fd = pairs[k].unix_fd,
							.events = POLLIN };
			p[2 + 2 * k] = (struct pollfd){ .fd = pairs[k].tcp_fd,
							.events = POLLIN };
		}
		if (poll(p, 1 + 2 * MAX_PAIRS, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll", strerror(errno));
		}
		if (p[0].revents & POLLIN)
			accept_one(lsock, &lis, &con);
		for (int k = 0; k < MAX_PAIRS; k++) {
			if (pairs[k].unix_fd >= 0 && p[1 + 2 * k].revents)
				from_unix(&pairs[k]);
			if (pairs[k].tcp_fd >= 0 && p[2 + 2 * k].revents)
				from_tcp(&pairs[k]);
		}
	}
}
