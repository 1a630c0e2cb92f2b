// SPDX-License-Identifier: MIT
/*
 * faultq_check: the other end of ernic_faultq's self-test.
 *
 *   faultq_check run --family 4|6 --count N [--gap-us US] [--quiet-ms MS]
 *   faultq_check verify RECORDS LOG STATS --count N [--drop PCT] ...
 *
 * "run" sends N numbered RoCE-shaped datagrams (BTH with PSN = number,
 * the number twice more in the payload, so a flipped bit never hides
 * which one it was) to the loopback address on port 4791, receives
 * what the injector lets through and writes one record per arrival:
 * the number, its latency, and how it differs from what was sent. A
 * packet socket on lo also compares the IP and UDP headers of every
 * copy of a datagram. "verify" holds those records against the
 * injector's per-packet log (--log) and final counters (--stats).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <net/if.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "faultq.h"

#define MAX_LEN 2048
#define QPN 0x11

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* Datagram number seq: 24..1044 bytes, BTH .. "ICRC", all from seq. */
static size_t make_dgram(uint32_t seq, uint8_t *b)
{
	size_t len = 24 + 4 * (size_t)((seq * 37u) % 256u);
	uint32_t h = 2166136261u;

	memset(b, 0, BTH_LEN);
	b[0] = 0x04;		/* RC SEND ONLY */
	b[2] = b[3] = 0xff;	/* P_Key */
	b[7] = QPN;
	b[8] = 0x80;		/* AckReq */
	b[9] = (uint8_t)(seq >> 16);
	b[10] = (uint8_t)(seq >> 8);
	b[11] = (uint8_t)seq;
	put32(b + 12, seq);
	for (size_t i = 16; i < len - 8; i++)
		b[i] = (uint8_t)(seq * 131u + i * 7u + 0x5a);
	put32(b + len - 8, seq);
	for (size_t i = 0; i < len - 4; i++)
		h = (h ^ b[i]) * 16777619u;
	put32(b + len - 4, h);	/* stands in for the ICRC */
	return len;
}

/* The number by majority of its three copies; -1 if they disagree. */
static long dgram_seq(const uint8_t *b, size_t len)
{
	uint32_t a, c, d;

	if (len < 24)
		return -1;
	a = (uint32_t)b[9] << 16 | (uint32_t)b[10] << 8 | b[11];
	c = get32(b + 12) & 0xffffff;
	d = get32(b + len - 8) & 0xffffff;
	if (a == c || a == d)
		return a;
	return c == d ? (long)c : -1;
}

/* ---- run ---- */

struct run {
	int family, count, gap_us, quiet_ms;
	int tx, rx, pk;
	struct sockaddr_storage dst;
	socklen_t dstlen;
	uint64_t *sent_ns;
	int done;		/* sender finished (atomic) */
	uint8_t **hdr;		/* first copy's IP+UDP header, per number */
	uint16_t *hdrlen;
	FILE *out;
	long hdr_diff, hdr_seen;
};

static void *sender(void *arg)
{
	struct run *r = arg;
	uint8_t b[MAX_LEN];
	uint64_t t0 = now_ns();

	for (int s = 0; s < r->count; s++) {
		uint64_t due = t0 + (uint64_t)s * (uint64_t)r->gap_us * 1000u;
		size_t len = make_dgram((uint32_t)s, b);
		struct timespec ts = { .tv_sec = (time_t)(due / 1000000000u),
				       .tv_nsec = (long)(due % 1000000000u) };

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		__atomic_store_n(&r->sent_ns[s], now_ns(), __ATOMIC_RELEASE);
		if (sendto(r->tx, b, len, 0, (struct sockaddr *)&r->dst,
			   r->dstlen) != (ssize_t)len)
			fprintf(stderr, "faultq_check: send %d: %s\n", s,
				strerror(errno));
	}
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void on_dgram(struct run *r, const uint8_t *b, size_t len)
{
	uint8_t want[MAX_LEN];
	long seq = dgram_seq(b, len);
	uint64_t sent;
	int nbits = 0;
	long byte = -1;
	unsigned int mask = 0;

	if (seq < 0 || seq >= r->count ||
	    make_dgram((uint32_t)seq, want) != len) {
		fprintf(r->out, "garbage %zu\n", len);
		return;
	}
	sent = __atomic_load_n(&r->sent_ns[seq], __ATOMIC_ACQUIRE);
	for (size_t i = 0; i < len; i++) {
		uint8_t x = b[i] ^ want[i];

		if (x && byte < 0) {
			byte = (long)i;
			mask = x;
		}
		nbits += __builtin_popcount(x);
	}
	fprintf(r->out, "rx %ld %" PRIu64 " %d %ld 0x%02x\n", seq,
		(now_ns() - sent) / 1000u, nbits, byte, mask);
}

/* Every copy of a datagram must carry the same IP and UDP header. */
static void on_frame(struct run *r, const uint8_t *f, size_t n)
{
	struct fq_udp u;
	long seq;

	if (n < ETH_HLEN || fq_parse_udp(f + ETH_HLEN, n - ETH_HLEN, &u) ||
	    u.dport != ROCE_PORT)
		return;
	f += ETH_HLEN;
	seq = dgram_seq(f + u.payload, u.plen);
	if (seq < 0 || seq >= r->count)
		return;
	r->hdr_seen++;
	if (!r->hdr[seq]) {
		r->hdr[seq] = malloc(u.payload);
		if (r->hdr[seq])
			memcpy(r->hdr[seq], f, u.payload);
		r->hdrlen[seq] = (uint16_t)u.payload;
	} else if (r->hdrlen[seq] != u.payload ||
		   memcmp(r->hdr[seq], f, u.payload)) {
		r->hdr_diff++;
		fprintf(r->out, "hdrdiff %ld\n", seq);
	}
}

/* One counter of /proc/net/snmp (IPv4: "Udp:" rows) or snmp6. */
static long snmp(int family, const char *name)
{
	char line[4096], vals[4096], key[64];
	FILE *f = fopen(family == 4 ? "/proc/net/snmp" : "/proc/net/snmp6",
			"r");
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (family == 6) {
			long x;

			if (sscanf(line, "%63s %ld", key, &x) == 2 &&
			    !strncmp(key, "Udp6", 4) && !strcmp(key + 4, name))
				v = x;
			continue;
		}
		if (strncmp(line, "Udp: ", 5) || !fgets(vals, sizeof(vals), f))
			continue;
		char *sk, *sv, *k = strtok_r(line + 5, " \n", &sk);
		char *val = strtok_r(vals + 5, " \n", &sv);

		for (; k && val; k = strtok_r(NULL, " \n", &sk),
				 val = strtok_r(NULL, " \n", &sv))
			if (!strcmp(k, name))
				v = atol(val);
		break;
	}
	fclose(f);
	return v;
}

static int open_sockets(struct run *r)
{
	int big = 32 << 20, one = 1, pmtu = IP_PMTUDISC_DO;
	struct sockaddr_storage me = { 0 };
	struct sockaddr_ll ll = { .sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_ALL) };

	if (r->family == 4) {
		struct sockaddr_in *a = (struct sockaddr_in *)&me;

		a->sin_family = AF_INET;
		a->sin_port = htons(ROCE_PORT);
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		r->dstlen = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&me;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(ROCE_PORT);
		a->sin6_addr = in6addr_loopback;
		r->dstlen = sizeof(*a);
	}
	r->dst = me;
	r->rx = socket(me.ss_family, SOCK_DGRAM, 0);
	r->tx = socket(me.ss_family, SOCK_DGRAM, 0);
	r->pk = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (r->rx < 0 || r->tx < 0 || r->pk < 0) {
		perror("faultq_check: socket");
		return -1;
	}
	setsockopt(r->rx, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(r->rx, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	setsockopt(r->pk, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	/* DF, as RoCEv2 senders do: Linux then writes IP ID 0 */
	if (r->family == 4)
		setsockopt(r->tx, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu,
			   sizeof(pmtu));
	ll.sll_ifindex = (int)if_nametoindex("lo");
	if (bind(r->rx, (struct sockaddr *)&me, r->dstlen) ||
	    bind(r->pk, (struct sockaddr *)&ll, sizeof(ll))) {
		perror("faultq_check: bind");
		return -1;
	}
	return 0;
}

static int run(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "family", required_argument, NULL, 'f' },
		{ "count", required_argument, NULL, 'n' },
		{ "gap-us", required_argument, NULL, 'g' },
		{ "quiet-ms", required_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	struct run r = { .family = 4, .count = 1000, .gap_us = 100,
			 .quiet_ms = 500, .out = stdout };
	uint8_t buf[65536];
	uint64_t last;
	long csum0, rcvbuf0;
	pthread_t th;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'f': r.family = atoi(optarg); break;
		case 'n': r.count = atoi(optarg); break;
		case 'g': r.gap_us = atoi(optarg); break;
		case 'q': r.quiet_ms = atoi(optarg); break;
		default: return 2;
		}
	}
	if ((r.family != 4 && r.family != 6) || r.count < 1 ||
	    r.count > 1 << 24 || r.gap_us < 1 || r.quiet_ms < 1) {
		fprintf(stderr, "faultq_check run: bad arguments\n");
		return 2;
	}
	r.sent_ns = calloc((size_t)r.count, sizeof(*r.sent_ns));
	r.hdr = calloc((size_t)r.count, sizeof(*r.hdr));
	r.hdrlen = calloc((size_t)r.count, sizeof(*r.hdrlen));
	if (!r.sent_ns || !r.hdr || !r.hdrlen || open_sockets(&r))
		return 1;
	csum0 = snmp(r.family, "InCsumErrors");
	rcvbuf0 = snmp(r.family, "RcvbufErrors");
	if (pthread_create(&th, NULL, sender, &r))
		return 1;
	last = now_ns();
	for (;;) {
		struct pollfd p[2] = { { .fd = r.rx, .events = POLLIN },
				       { .fd = r.pk, .events = POLLIN } };
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t n;

		poll(p, 2, 50);
		while (p[0].revents &&
		       (n = recv(r.rx, buf, sizeof(buf), MSG_DONTWAIT)) >= 0) {
			on_dgram(&r, buf, (size_t)n);
			last = now_ns();
		}
		while (p[1].revents &&
		       (n = recvfrom(r.pk, buf, sizeof(buf), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &fl)) >= 0) {
			/* on lo every frame shows twice: keep the arrival */
			if (from.sll_pkttype == PACKET_HOST)
				on_frame(&r, buf, (size_t)n);
			fl = sizeof(from);
		}
		if (!p[0].revents && !p[1].revents &&
		    __atomic_load_n(&r.done, __ATOMIC_ACQUIRE) &&
		    now_ns() - last > (uint64_t)r.quiet_ms * 1000000u)
			break;
	}
	pthread_join(th, NULL);
	fprintf(r.out, "sent %d\n", r.count);
	fprintf(r.out, "csumerr %ld\n", snmp(r.family, "InCsumErrors") - csum0);
	fprintf(r.out, "rcvbuferr %ld\n",
		snmp(r.family, "RcvbufErrors") - rcvbuf0);
	fprintf(r.out, "hdrseen %ld\n", r.hdr_seen);
	fprintf(stderr, "faultq_check: sent %d, %ld frames on lo, %ld header mismatches\n",
		r.count, r.hdr_seen, r.hdr_diff);
	for (int s = 0; s < r.count; s++)
		free(r.hdr[s]);
	free(r.hdr);
	free(r.hdrlen);
	free(r.sent_ns);
	return 0;
}

/* ---- verify ---- */

struct seqinfo {
	int logged, drop, dup, delay, reorder, late_log;
	long cbyte;
	unsigned int cmask;
	int arrivals, late_rx, flipped_ok, bad;
};

struct expect {
	int count, delay_ms, keep_csum;
	double drop, dup, reorder, delay, corrupt;
};

static int failures;

__attribute__((format(printf, 1, 2)))
static void bad(const char *fmt, ...)
{
	va_list ap;

	if (++failures > 40)
		return;
	fprintf(stderr, "FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

/* n of base at p: within 5 sigma (+1 for tiny rates), 0 for p = 0. */
static void rate(const char *what, long n, long base, double p)
{
	double mean = (double)base * p;
	double lim = 5 * sqrt((double)base * p * (1 - p)) + 1;

	if (p == 0 ? n != 0 : fabs((double)n - mean) > lim)
		bad("%s: %ld of %ld, expected %.1f +- %.1f (%g%%)", what, n,
		    base, mean, lim, p * 100);
	else
		printf("  %-12s %6ld of %6ld  (expected %.1f +- %.1f)\n", what,
		       n, base, mean, lim);
}

static void same(const char *what, long injector, long observed)
{
	if (injector != observed)
		bad("%s: injector counted %ld, receiver saw %ld", what,
		    injector, observed);
}

/* Number after "key=" in the last stats line, -1 if absent. */
static long stat_of(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	return p ? atol(p + strlen(pat)) : -1;
}

static int read_log(const char *path, struct seqinfo *si, int count,
		    long *nseq, long nmax)
{
	char line[512], act[64], *p;
	unsigned long long n;
	unsigned int psn;
	FILE *f = fopen(path, "r");
	int late;

	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "n=%llu out=%*s late=%d", &n, &late) == 2) {
			if (n < (unsigned long long)nmax && nseq[n] >= 0)
				si[nseq[n]].late_log = late;
			continue;
		}
		if (strstr(line, "dup-failed")) {
			bad("log: %s", line);
			continue;
		}
		p = strstr(line, " psn=");
		if (sscanf(line, "n=%llu", &n) != 1 || !p ||
		    sscanf(p, " psn=%u act=%63s", &psn, act) != 2 ||
		    psn >= (unsigned int)count || n >= (unsigned long long)nmax) {
			bad("log: unexpected line: %s", line);
			continue;
		}
		struct seqinfo *s = &si[psn];

		if (s->logged++)
			bad("log: psn %u seen twice", psn);
		nseq[n] = psn;
		s->drop = !strcmp(act, "drop");
		s->delay = !strcmp(act, "delay");
		s->reorder = !strncmp(act, "reorder:", 8);
		s->dup = !!strstr(line, " dup");
		p = strstr(line, " corrupt=");
		s->cbyte = -1;
		if (p && sscanf(p, " corrupt=%ld:%x", &s->cbyte, &s->cmask) != 2)
			bad("log: bad corrupt= in %s", line);
	}
	fclose(f);
	return 0;
}

static int read_records(const char *path, struct seqinfo *si,
			const struct expect *e, long *misc)
{
	char line[256];
	FILE *f = fopen(path, "r");
	long seq, maxseq = -1, byte, v;
	unsigned long long lat;
	unsigned int mask;
	int nbits;

	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "rx %ld %llu %d %ld %x", &seq, &lat, &nbits,
			   &byte, &mask) == 5) {
			struct seqinfo *s;

			if (seq < 0 || seq >= e->count) {
				bad("records: number %ld out of range", seq);
				continue;
			}
			s = &si[seq];

			if (!s->arrivals++)
				s->late_rx = maxseq > seq;
			if (seq > maxseq)
				maxseq = seq;
			if (s->cbyte < 0 ? nbits != 0 :
			    nbits != 1 || byte != s->cbyte || mask != s->cmask)
				bad("%ld: arrived with %d bit(s) different (first at byte %ld mask 0x%02x); the log says corrupt=%ld:0x%02x",
				    seq, nbits, byte, mask, s->cbyte, s->cmask);
			if (s->delay && lat < (unsigned long long)e->delay_ms * 1000)
				bad("%ld: delayed but arrived after %llu us", seq, lat);
		} else if (sscanf(line, "hdrdiff %ld", &seq) == 1) {
			bad("%ld: a copy's IP/UDP header differs from the first's", seq);
		} else if (!strncmp(line, "garbage", 7)) {
			bad("unidentifiable datagram: %s", line);
		} else if (sscanf(line, "csumerr %ld", &v) == 1) {
			misc[0] = v;
		} else if (sscanf(line, "rcvbuferr %ld", &v) == 1) {
			misc[1] = v;
		} else if (sscanf(line, "hdrseen %ld", &v) == 1) {
			misc[2] = v;
		}
	}
	fclose(f);
	return 0;
}

static int verify(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "drop", required_argument, NULL, 'd' },
		{ "dup", required_argument, NULL, 'u' },
		{ "reorder", required_argument, NULL, 'r' },
		{ "delay", required_argument, NULL, 'y' },
		{ "delay-ms", required_argument, NULL, 'm' },
		{ "corrupt", required_argument, NULL, 'c' },
		{ "corrupt-keep-csum", no_argument, NULL, 'k' },
		/* the injector's other options, so both take one list */
		{ "seed", required_argument, NULL, 'i' },
		{ "cpu", required_argument, NULL, 'i' },
		{ "reorder-depth", required_argument, NULL, 'i' },
		{ "reorder-ms", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	struct expect e = { 0 };
	struct seqinfo *si;
	long *nseq, misc[3] = { -1, -1, -1 };
	long n_drop = 0, n_dup = 0, n_delay = 0, n_reorder = 0, n_corrupt = 0;
	long n_late = 0, n_twice = 0, n_missing = 0, n_flipped = 0, csum_exp = 0;
	char stats[1024] = "";
	FILE *f;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'n': e.count = atoi(optarg); break;
		case 'd': e.drop = atof(optarg) / 100; break;
		case 'u': e.dup = atof(optarg) / 100; break;
		case 'r': e.reorder = atof(optarg) / 100; break;
		case 'y': e.delay = atof(optarg) / 100; break;
		case 'm': e.delay_ms = atoi(optarg); break;
		case 'c': e.corrupt = atof(optarg) / 100; break;
		case 'k': e.keep_csum = 1; break;
		case 'i': break;
		default: return 2;
		}
	}
	if (argc - optind != 3 || e.count < 1) {
		fprintf(stderr, "usage: faultq_check verify RECORDS LOG STATS --count N ...\n");
		return 2;
	}
	si = calloc((size_t)e.count, sizeof(*si));
	nseq = malloc(sizeof(*nseq) * ((size_t)e.count + 1));
	if (!si || !nseq)
		return 1;
	memset(nseq, 0xff, sizeof(*nseq) * ((size_t)e.count + 1));
	for (int s = 0; s < e.count; s++)
		si[s].cbyte = -1;
	if (read_log(argv[optind + 1], si, e.count, nseq, e.count + 1) ||
	    read_records(argv[optind], si, &e, misc))
		return 1;
	f = fopen(argv[optind + 2], "r");
	if (!f || !fgets(stats, sizeof(stats), f)) {
		bad("no stats in %s", argv[optind + 2]);
		return 1;
	}
	fclose(f);

	for (int s = 0; s < e.count; s++) {
		struct seqinfo *x = &si[s];
		int want = x->drop ? 0 : 1 + x->dup;

		if (x->logged != 1)
			bad("%d: %d log lines", s, x->logged);
		n_drop += x->drop;
		n_dup += !x->drop && x->dup;
		n_delay += x->delay;
		n_reorder += x->reorder;
		n_corrupt += x->cbyte >= 0;
		n_missing += !x->arrivals;
		n_twice += x->arrivals == 2;
		n_flipped += x->arrivals && x->cbyte >= 0;
		if (e.keep_csum && x->cbyte >= 0) {
			csum_exp += want;
			want = 0;	/* the kernel must have thrown it away */
		}
		if (x->arrivals != want)
			bad("%d: arrived %d times, expected %d (log: drop=%d dup=%d corrupt=%ld)",
			    s, x->arrivals, want, x->drop, x->dup, x->cbyte);
		if (!e.keep_csum && x->arrivals && x->late_rx != x->late_log)
			bad("%d: out of order at the receiver: %d, in the injector's log: %d",
			    s, x->late_rx, x->late_log);
		if (x->late_log && x->reorder)
			n_late++;
	}
	printf("faultq_check: %d sent; injector: %s", e.count, stats);
	rate("dropped", n_drop, e.count, e.drop);
	rate("corrupted", n_corrupt, e.count - n_drop, e.corrupt);
	rate("duplicated", n_dup, e.count - n_drop, e.dup);
	rate("delayed", n_delay, e.count - n_drop, e.delay);
	rate("reorder_held", n_reorder, e.count - n_drop - n_delay, e.reorder);
	printf("  receiver: %ld missing, %ld twice, %ld with one bit flipped, %ld overtaken after a reorder hold; UDP checksum errors %ld, rcvbuf errors %ld, %ld frames header-checked\n",
	       n_missing, n_twice, n_flipped, n_late, misc[0], misc[1], misc[2]);
	same("seen", stat_of(stats, "seen"), e.count);
	same("dropped", stat_of(stats, "dropped"), n_drop);
	same("duplicated", stat_of(stats, "duplicated"), n_dup);
	same("delayed", stat_of(stats, "delayed"), n_delay);
	same("reorder_held", stat_of(stats, "reorder_held"), n_reorder);
	same("reordered", stat_of(stats, "reordered"), n_late);
	same("corrupted", stat_of(stats, "corrupted"), n_corrupt);
	if (!e.keep_csum) {
		same("missing datagrams", n_drop, n_missing);
		same("datagrams twice", n_dup, n_twice);
		same("corrupted datagrams", n_corrupt, n_flipped);
	}
	same("UDP checksum errors", csum_exp, misc[0]);
	same("receive buffer errors", 0, misc[1]);
	for (const char *k = "overflow\0held\0kernel_dropped\0overrun\0errors\0";
	     *k; k += strlen(k) + 1)
		same(k, stat_of(stats, k), 0);
	if (e.reorder > 0 && !e.keep_csum && n_late == 0)
		bad("reordering enabled but nothing arrived out of order");
	if (misc[2] <= 0)
		bad("the packet socket on lo saw no frame");
	if (failures)
		fprintf(stderr, "faultq_check: %d failure(s)\n", failures);
	free(si);
	free(nseq);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "run"))
		return run(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "verify"))
		return verify(argc - 1, argv + 1);
	fprintf(stderr, "usage: faultq_check run|verify ... (see the source)\n");
	return 2;
}
