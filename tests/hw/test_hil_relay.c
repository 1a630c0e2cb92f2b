// SPDX-License-Identifier: MIT
/*
 * hil_relay on this host, no guest (ctest hil_relay, in CI): two relays
 * in a row, unix -> TCP -> unix, as the hardware-in-the-loop test bed
 * chains them (tests/hw/hil.sh). Messages sent back to back arrive one by
 * one with their lengths, both ways; a message longer than the protocol's
 * and a bad frame on the TCP side each close the connection.
 *
 *   test_hil_relay HIL_RELAY
 */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw_check.h"

static struct sockaddr_un unix_addr(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	return sa;
}

/* A TCP port nobody listens on now. */
static int free_port(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int s = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (s >= 0 && !bind(s, (struct sockaddr *)&sin, sizeof(sin)) &&
	    !getsockname(s, (struct sockaddr *)&sin, &len))
		port = ntohs(sin.sin_port);
	close(s);
	return port;
}

static pid_t spawn(const char *prog, const char *lis, const char *con)
{
	char *argv[] = { (char *)prog, "--listen", (char *)lis, "--connect",
			 (char *)con, NULL };
	extern char **environ;
	pid_t pid;

	if (posix_spawn(&pid, prog, NULL, NULL, argv, environ))
		return -1;
	return pid;
}

/* A SOCK_SEQPACKET connection to path, retried while it comes up. */
static int connect_unix(const char *path)
{
	struct sockaddr_un sa = unix_addr(path);

	for (int k = 0; k < 100; k++) {
		int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);

		if (!connect(s, (struct sockaddr *)&sa, sizeof(sa)))
			return s;
		close(s);
		usleep(20000);
	}
	return -1;
}

/* The next message on s is exactly want[0..len). */
static int got(int s, const void *want, size_t len)
{
	char buf[256];
	ssize_t n;

	if (!readable(s, 5000))
		return 0;
	n = recv(s, buf, sizeof(buf), MSG_TRUNC);
	return n == (ssize_t)len && !memcmp(buf, want, len);
}

/* The peer of s has closed: s reads end of file. */
static int closed(int s)
{
	char buf[16];

	return readable(s, 5000) && recv(s, buf, sizeof(buf), 0) == 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/hil_relay.XXXXXX", a[64], b[64], lis[96], con[96];
	const char four[4] = "1234", four2[4] = "abcd", eight[8] = "FLSHseq1";
	const char big[100] = { 0 };
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_un sb;
	int port, srv, cli, peer, t;
	pid_t host, guest;

	if (argc != 2 || !mkdtemp(dir))
		return 2;
	snprintf(a, sizeof(a), "%s/a", dir);	/* the guest's uio0.irq */
	snprintf(b, sizeof(b), "%s/b", dir);	/* the virtual FPGA's */
	sb = unix_addr(b);
	srv = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (srv < 0 || bind(srv, (struct sockaddr *)&sb, sizeof(sb)) ||
	    listen(srv, 8))
		return 2;
	port = free_port();
	snprintf(lis, sizeof(lis), "tcp:127.0.0.1:%d", port);
	snprintf(con, sizeof(con), "unix:%s", b);
	host = spawn(argv[1], lis, con);
	snprintf(lis, sizeof(lis), "unix:%s", a);
	snprintf(con, sizeof(con), "tcp:127.0.0.1:%d", port);
	usleep(200000);		/* the host side listens first */
	guest = spawn(argv[1], lis, con);
	check(host > 0 && guest > 0, "two relays started (TCP port %d)", port);

	cli = connect_unix(a);
	peer = cli >= 0 && readable(srv, 5000) ? accept(srv, NULL, NULL) : -1;
	check(peer >= 0, "a connection to the guest's socket reaches the "
	      "virtual FPGA's");
	if (peer < 0)
		goto out;
	send(cli, four, 4, 0);
	send(cli, four2, 4, 0);
	send(cli, eight, 8, 0);
	check(got(peer, four, 4) && got(peer, four2, 4) && got(peer, eight, 8),
	      "4, 4 and 8 bytes sent back to back arrive as three messages");
	send(peer, eight, 8, 0);
	send(peer, four, 4, 0);
	check(got(cli, eight, 8) && got(cli, four, 4),
	      "and the other way: 8 then 4 bytes");
	send(cli, big, sizeof(big), 0);
	check(closed(peer) && closed(cli), "a 100-byte message closes the "
	      "connection, on both sides");
	close(peer);
	close(cli);

	/* Frames straight into the host side: two in one TCP segment, each
	 * way, then a bad one (length 0). */
	t = socket(AF_INET, SOCK_STREAM, 0);
	sin.sin_port = htons((uint16_t)port);
	if (t >= 0 && !connect(t, (struct sockaddr *)&sin, sizeof(sin)) &&
	    readable(srv, 5000)) {
		static const char two[] = "\x04" "1234" "\x08" "FLSHseq1";
		char in[sizeof(two)];
		size_t have = 0;
		ssize_t n;

		peer = accept(srv, NULL, NULL);
		send(t, two, sizeof(two) - 1, 0);
		check(got(peer, four, 4) && got(peer, eight, 8), "two frames in "
		      "one send() become two messages");
		send(peer, four, 4, 0);
		send(peer, eight, 8, 0);
		while (have < sizeof(two) - 1 && readable(t, 5000) &&
		       (n = recv(t, in + have, sizeof(two) - 1 - have, 0)) > 0)
			have += (size_t)n;
		check(have == sizeof(two) - 1 && !memcmp(in, two, have),
		      "two messages become two frames, a length byte each");
		send(t, "", 1, 0);
		check(peer >= 0 && closed(peer), "a frame of length 0 from TCP "
		      "closes the connection");
		close(peer);
	} else {
		check(0, "a TCP connection to the host side: %s", strerror(errno));
	}
	close(t);
out:
	kill(host, SIGTERM);
	kill(guest, SIGTERM);
	waitpid(host, NULL, 0);
	waitpid(guest, NULL, 0);
	unlink(a);
	unlink(b);
	rmdir(dir);
	printf("%s: %d failure(s)\n", check_failures() ? "FAIL" : "PASS",
	       check_failures());
	return check_failures();
}
