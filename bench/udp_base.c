// SPDX-License-Identifier: MIT
/*
 * ernic-udp-base: what the host's UDP stack does alone between two
 * addresses, the baselines bench/perftest.sh sets beside perftest's
 * figures on software ERNICs (whose wire is UDP sockets). Modes:
 *   stream    one datagram of --size bytes (4112: BTH, 4096 B, ICRC: a
 *             full PMTU-4096 packet's UDP payload) per sendto, as fast as
 *             the sender can; what the receiver got, in perftest's MB/s
 *             (2^20 bytes a second) and datagrams a second
 *   gso       the same, 15 datagrams per sendto with UDP_SEGMENT, read
 *             64 KiB at a time by a receiver with UDP_GRO
 *   rate      stream with 36-byte datagrams (a 2-byte RDMA WRITE's)
 *   pingpong  36-byte datagrams back and forth, both ends busy-polling
 *             recv(MSG_DONTWAIT); half round trips as perftest's
 *             ib_*_lat print them: t_typical (median), t_avg, t_99%
 * What the receiver's full socket drops counts against a stream
 * (goodput). Sockets get the software ERNIC's buffers (32 MiB,
 * model/model_wire.c) and send as it does, unconnected.
 *
 * Both ends are threads of one process, not forked processes: the
 * kernel's path between two sockets is the same either way, and threads
 * share the stop flag, counters and samples without IPC. Nothing is
 * pinned unless --cpu says so (perftest is not pinned in perftest.sh).
 * Output: one line "udp_base MODE key=value ..." for scripts, one for
 * people. Exit 1 with a message on any error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG "ernic-udp-base"
#define SOCKBUF (32 << 20)		/* as model/model_wire.c's WIRE_SOCKBUF */
#define GSO_SEGS 15			/* 15 x 4112 B fit one 64 KiB datagram */
#define RECV_BUF 65536
#define WARMUP_NS 500000000LL		/* stream modes: 0.5 s before counting */
#define WARMUP_ITERS 1000		/* pingpong: round trips not counted */
#define RCV_TIMEOUT_MS 100		/* a stream receiver looks at the stop flag */
#define REPLY_TIMEOUT_NS 2000000000LL	/* pingpong: a lost datagram is an error */

enum mode { M_STREAM, M_GSO, M_RATE, M_PINGPONG };
static const char *const mode_names[] = { "stream", "gso", "rate", "pingpong" };

struct opts {
	enum mode mode;
	const char *server, *client;
	size_t size;
	double seconds;
	long iters;
	int cpu[2];			/* server/receiver, client/sender; -1: any */
};

/* What both threads of a run share. */
struct run {
	const struct opts *o;
	int srv_fd, cli_fd;
	struct sockaddr_in srv_sa, cli_sa;
	atomic_bool stop;
	_Atomic uint64_t rx_bytes, rx_dgrams, tx_dgrams;
	uint64_t *rtt_ns;		/* pingpong: one per counted round trip */
};

static __attribute__((format(printf, 1, 2), noreturn)) void die(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		die("clock_gettime: %s", strerror(errno));
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Sleep until the monotonic clock reads T (ns), through signals. */
static void sleep_until(int64_t t)
{
	struct timespec ts = { .tv_sec = t / 1000000000LL,
			       .tv_nsec = t % 1000000000LL };
	int e;

	while ((e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)))
		if (e != EINTR)
			die("clock_nanosleep: %s", strerror(e));
}

static void usage(FILE *f)
{
	fputs("usage: " PROG " [OPTIONS] stream|gso|rate|pingpong\n"
	      "  --server ADDR   receiving / answering end (default 127.0.0.2)\n"
	      "  --client ADDR   sending / asking end (default 127.0.0.3)\n"
	      "  --size N        datagram bytes (default 4112; rate, pingpong: 36)\n"
	      "  --seconds S     counted whole seconds of stream, gso, rate (default 3)\n"
	      "  --iters N       counted round trips of pingpong (default 20000)\n"
	      "  --cpu A,B       pin the server end on CPU A, the client end on B\n",
	      f);
}

static long parse_num(const char *what, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		die("%s: '%s' is not a number from %ld to %ld", what, s, lo, hi);
	return v;
}

static void parse_cpus(const char *s, int cpu[2])
{
	char extra;

	if (sscanf(s, "%d,%d%c", &cpu[0], &cpu[1], &extra) != 2 ||
	    cpu[0] < 0 || cpu[1] < 0 || cpu[0] >= CPU_SETSIZE || cpu[1] >= CPU_SETSIZE)
		die("--cpu: '%s' is not two CPU numbers A,B", s);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "server", required_argument, NULL, 's' },
		{ "client", required_argument, NULL, 'c' },
		{ "size", required_argument, NULL, 'z' },
		{ "seconds", required_argument, NULL, 't' },
		{ "iters", required_argument, NULL, 'n' },
		{ "cpu", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long size = 0;
	size_t i;
	int c;

	*o = (struct opts){ .server = "127.0.0.2", .client = "127.0.0.3",
			    .seconds = 3, .iters = 20000, .cpu = { -1, -1 } };
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's': o->server = optarg; break;
		case 'c': o->client = optarg; break;
		case 'z': size = parse_num("--size", optarg, 1, 65507); break;
		case 't': o->seconds = (double)parse_num("--seconds", optarg, 1, 3600); break;
		case 'n': o->iters = parse_num("--iters", optarg, 1, 100000000); break;
		case 'p': parse_cpus(optarg, o->cpu); break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		exit(2);
	}
	for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (!strcmp(argv[optind], mode_names[i]))
			break;
	if (i == sizeof(mode_names) / sizeof(mode_names[0]))
		die("unknown mode '%s' (stream, gso, rate or pingpong)", argv[optind]);
	o->mode = (enum mode)i;
	o->size = size ? (size_t)size :
		  (o->mode == M_RATE || o->mode == M_PINGPONG) ? 36 : 4112;
	if (o->mode == M_GSO && o->size * GSO_SEGS > 65507)
		die("gso: %d x %zu bytes is over a UDP datagram's 65507", GSO_SEGS, o->size);
	if (o->mode == M_PINGPONG && o->size < sizeof(uint32_t))
		die("pingpong: --size must hold a 4-byte sequence number");
}

/* Large socket buffers, as the software ERNIC's: root may pass rmem_max. */
static void size_buffers(int fd)
{
	int v = SOCKBUF;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)))
		die("SO_RCVBUF: %s", strerror(errno));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)) &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)))
		die("SO_SNDBUF: %s", strerror(errno));
}

/* A UDP socket bound to ADDR on a port the kernel picks; *sa its name. */
static int bound_socket(const char *addr, struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int fd;

	*sa = (struct sockaddr_in){ .sin_family = AF_INET };
	if (inet_pton(AF_INET, addr, &sa->sin_addr) != 1)
		die("'%s' is not an IPv4 address", addr);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	size_buffers(fd);
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa)))
		die("bind %s: %s", addr, strerror(errno));
	if (getsockname(fd, (struct sockaddr *)sa, &len))
		die("getsockname: %s", strerror(errno));
	return fd;
}

static void set_int(int fd, int level, int name, const char *what, int v)
{
	if (setsockopt(fd, level, name, &v, sizeof(v)))
		die("%s: %s", what, strerror(errno));
}

/* Send one datagram (or one GSO batch) of LEN; false: EAGAIN. */
static bool send_one(int fd, const void *buf, size_t len,
		     const struct sockaddr_in *to, int flags)
{
	ssize_t n;

	do
		n = sendto(fd, buf, len, flags, (const struct sockaddr *)to, sizeof(*to));
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return false;
	if (n < 0)
		die("sendto: %s", strerror(errno));
	if ((size_t)n != len)
		die("sendto: %zd of %zu bytes sent", n, len);
	return true;
}

static void *sender(void *arg)
{
	struct run *r = arg;
	size_t len = r->o->size * (r->o->mode == M_GSO ? GSO_SEGS : 1);
	uint64_t per = r->o->mode == M_GSO ? GSO_SEGS : 1, sent = 0;
	char *buf = calloc(1, len);

	if (!buf)
		die("out of memory");
	if (r->o->mode == M_GSO)
		set_int(r->cli_fd, SOL_UDP, UDP_SEGMENT, "UDP_SEGMENT", (int)r->o->size);
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		send_one(r->cli_fd, buf, len, &r->srv_sa, 0);
		sent += per;
		atomic_store_explicit(&r->tx_dgrams, sent, memory_order_relaxed);
	}
	free(buf);
	return NULL;
}

/* One recvmsg; its datagram count (GRO: by the cmsg's segment size). */
static ssize_t recv_counted(int fd, char *buf, uint64_t *dgrams)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = RECV_BUF };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int seg = 0;
	ssize_t n;

	n = recvmsg(fd, &msg, 0);
	if (n < 0)
		return n;
	if (msg.msg_flags & MSG_TRUNC)
		die("recvmsg: a datagram over %d bytes", RECV_BUF);
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO)
			memcpy(&seg, CMSG_DATA(c), sizeof(seg));
	*dgrams = seg > 0 ? ((uint64_t)n + (uint64_t)seg - 1) / (uint64_t)seg : 1;
	return n;
}

static void *receiver(void *arg)
{
	struct run *r = arg;
	struct timeval tv = { .tv_usec = RCV_TIMEOUT_MS * 1000 };
	uint64_t bytes = 0, dgrams = 0, d;
	char *buf = malloc(RECV_BUF);
	ssize_t n;

	if (!buf)
		die("out of memory");
	if (setsockopt(r->srv_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		die("SO_RCVTIMEO: %s", strerror(errno));
	if (r->o->mode == M_GSO)
		set_int(r->srv_fd, SOL_UDP, UDP_GRO, "UDP_GRO", 1);
	/* Until stopped and drained: nothing came for RCV_TIMEOUT_MS. */
	for (;;) {
		n = recv_counted(r->srv_fd, buf, &d);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
		    atomic_load_explicit(&r->stop, memory_order_relaxed))
			break;
		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (n < 0)
			die("recvmsg: %s", strerror(errno));
		bytes += (uint64_t)n;
		dgrams += d;
		atomic_store_explicit(&r->rx_bytes, bytes, memory_order_relaxed);
		atomic_store_explicit(&r->rx_dgrams, dgrams, memory_order_relaxed);
	}
	free(buf);
	return NULL;
}

/* Start FN on CPU (-1: wherever the kernel likes). */
static pthread_t start_thread(void *(*fn)(void *), struct run *r, int cpu)
{
	pthread_attr_t attr;
	pthread_t t;
	cpu_set_t set;
	int e;

	if ((e = pthread_attr_init(&attr)))
		die("pthread_attr_init: %s", strerror(e));
	if (cpu >= 0) {
		if (sched_getaffinity(0, sizeof(set), &set))
			die("sched_getaffinity: %s", strerror(errno));
		if (!CPU_ISSET(cpu, &set))
			die("--cpu: this process may not run on CPU %d", cpu);
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if ((e = pthread_attr_setaffinity_np(&attr, sizeof(set), &set)))
			die("CPU %d: %s", cpu, strerror(e));
	}
	if ((e = pthread_create(&t, &attr, fn, r)))
		die("pthread_create: %s", strerror(e));
	pthread_attr_destroy(&attr);
	return t;
}

static void join_thread(pthread_t t)
{
	int e = pthread_join(t, NULL);

	if (e)
		die("pthread_join: %s", strerror(e));
}

/* The counters at one moment. */
struct snap {
	int64_t t;
	uint64_t bytes, dgrams, sent;
};

static struct snap take_snap(struct run *r)
{
	return (struct snap){ .t = now_ns(), .bytes = atomic_load(&r->rx_bytes),
			      .dgrams = atomic_load(&r->rx_dgrams),
			      .sent = atomic_load(&r->tx_dgrams) };
}

/* Rates between A and B; the share of all datagrams sent that the
 * receiver never got (its socket was full). */
static void report_stream(const struct run *r, const struct snap *a, const struct snap *b)
{
	const struct opts *o = r->o;
	double secs = (double)(b->t - a->t) / 1e9;
	double mbps = (double)(b->bytes - a->bytes) / secs / 1048576.0;
	double pps = (double)(b->dgrams - a->dgrams) / secs;
	double spps = (double)(b->sent - a->sent) / secs;
	double lost = 100.0 * (1.0 - (double)atomic_load(&r->rx_dgrams) /
				     (double)atomic_load(&r->tx_dgrams));
	socklen_t len = sizeof(int);
	int rcvbuf;

	if (b->dgrams == a->dgrams)
		die("%s: nothing received in %.1f s", mode_names[o->mode], secs);
	if (getsockopt(r->srv_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len))
		die("getsockopt SO_RCVBUF: %s", strerror(errno));
	printf("udp_base %s size=%zu seconds=%.3f MBps=%.2f pps=%.0f Mpps=%.6f sent_pps=%.0f lost_pct=%.2f rcvbuf=%d\n",
	       mode_names[o->mode], o->size, secs, mbps, pps, pps / 1e6, spps, lost, rcvbuf);
	printf("%s: %s -> %s, %zu-byte datagrams%s: received %.2f MB/s (2^20 B/s), %.0f datagrams/s (%.3f M/s); sent %.0f/s; %.2f%% of all sent never received\n",
	       mode_names[o->mode], o->client, o->server, o->size,
	       o->mode == M_GSO ? " (UDP_SEGMENT x15, UDP_GRO)" : "",
	       mbps, pps, pps / 1e6, spps, lost);
}

/* stream, gso, rate: warm up, count for --seconds, drain, report. */
static void run_stream(struct run *r)
{
	pthread_t rx = start_thread(receiver, r, r->o->cpu[0]);
	pthread_t tx = start_thread(sender, r, r->o->cpu[1]);
	struct snap a, b;

	sleep_until(now_ns() + WARMUP_NS);
	a = take_snap(r);
	sleep_until(a.t + (int64_t)(r->o->seconds * 1e9));
	b = take_snap(r);
	atomic_store(&r->stop, true);
	join_thread(tx);
	join_thread(rx);		/* once it has drained its socket */
	report_stream(r, &a, &b);
}

/* Busy-poll one datagram of LEN into BUF; false when STOP is set or,
 * with a deadline (> 0), when it passes. */
static bool poll_recv(struct run *r, int fd, char *buf, size_t len, int64_t deadline)
{
	ssize_t n;
	unsigned spins = 0;

	for (;;) {
		n = recv(fd, buf, len, MSG_DONTWAIT | MSG_TRUNC);
		if (n >= 0) {
			if ((size_t)n != len)
				die("pingpong: a %zd-byte datagram, want %zu", n, len);
			return true;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			die("recv: %s", strerror(errno));
		if (atomic_load_explicit(&r->stop, memory_order_relaxed))
			return false;
		if (deadline > 0 && !(++spins & 1023) && now_ns() > deadline)
			return false;
	}
}

/* The answering end: each datagram straight back, until stopped. */
static void *pong(void *arg)
{
	struct run *r = arg;
	char *buf = malloc(r->o->size);

	if (!buf)
		die("out of memory");
	while (poll_recv(r, r->srv_fd, buf, r->o->size, 0))
		while (!send_one(r->srv_fd, buf, r->o->size, &r->cli_sa, MSG_DONTWAIT))
			;
	free(buf);
	return NULL;
}

/* The asking end: WARMUP_ITERS + --iters timed round trips. */
static void *ping(void *arg)
{
	struct run *r = arg;
	long total = WARMUP_ITERS + r->o->iters, i;
	char *buf = calloc(1, r->o->size);
	uint32_t seq, got;
	int64_t t0, t1;

	if (!buf)
		die("out of memory");
	for (i = 0; i < total; i++) {
		seq = (uint32_t)i;
		memcpy(buf, &seq, sizeof(seq));
		t0 = now_ns();
		while (!send_one(r->cli_fd, buf, r->o->size, &r->srv_sa, MSG_DONTWAIT))
			;
		if (!poll_recv(r, r->cli_fd, buf, r->o->size, t0 + REPLY_TIMEOUT_NS))
			die("pingpong: no answer to datagram %ld within %lld s",
			    i, REPLY_TIMEOUT_NS / 1000000000LL);
		t1 = now_ns();
		memcpy(&got, buf, sizeof(got));
		if (got != seq)
			die("pingpong: answer %" PRIu32 " to datagram %" PRIu32, got, seq);
		if (i >= WARMUP_ITERS)
			r->rtt_ns[i - WARMUP_ITERS] = (uint64_t)(t1 - t0);
	}
	free(buf);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Half round trips in µs, as perftest's print_report_lat: the median
 * (mean of the middle two of an even count), mean and 99th percentile. */
static void report_pingpong(const struct run *r)
{
	size_t n = (size_t)r->o->iters, i;
	uint64_t *s = r->rtt_ns;
	double sum = 0, typ, avg, p99;

	qsort(s, n, sizeof(*s), cmp_u64);
	for (i = 0; i < n; i++)
		sum += (double)s[i];
	/* ns of a round trip to µs of half one; an odd n: twice the middle */
	typ = ((double)s[(n - 1) / 2] + (double)s[n / 2]) / 4000.0;
	avg = sum / (double)n / 2000.0;
	p99 = (double)s[(size_t)((double)n * 0.99)] / 2000.0;
	printf("udp_base pingpong size=%zu iters=%zu t_typical=%.2f t_avg=%.2f t_99=%.2f t_min=%.2f t_max=%.2f\n",
	       r->o->size, n, typ, avg, p99, (double)s[0] / 2000.0, (double)s[n - 1] / 2000.0);
	printf("pingpong: %s <-> %s, %zu-byte datagrams, busy-polled, %zu round trips: half round trip t_typical %.2f us, t_avg %.2f us, t_99%% %.2f us (round trip %.2f us)\n",
	       r->o->client, r->o->server, r->o->size, n, typ, avg, p99, 2 * typ);
}

static void run_pingpong(struct run *r)
{
	pthread_t srv, cli;

	r->rtt_ns = calloc((size_t)r->o->iters, sizeof(*r->rtt_ns));
	if (!r->rtt_ns)
		die("out of memory for %ld samples", r->o->iters);
	srv = start_thread(pong, r, r->o->cpu[0]);
	cli = start_thread(ping, r, r->o->cpu[1]);
	join_thread(cli);
	atomic_store(&r->stop, true);
	join_thread(srv);
	report_pingpong(r);
	free(r->rtt_ns);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct run r = { .o = &o };	/* the flag and counters start at 0 */

	parse_args(argc, argv, &o);
	r.srv_fd = bound_socket(o.server, &r.srv_sa);
	r.cli_fd = bound_socket(o.client, &r.cli_sa);
	if (o.mode == M_PINGPONG)
		run_pingpong(&r);
	else
		run_stream(&r);
	if (fflush(stdout) || ferror(stdout))
		die("stdout: %s", strerror(errno));
	if (close(r.srv_fd) || close(r.cli_fd))
		die("close: %s", strerror(errno));
	return 0;
}
