// SPDX-License-Identifier: MIT
/*
 * ernic_faultq: a fault injector for the test wire. It takes the RoCEv2
 * packets an nftables rule queues to NFQUEUE and drops, duplicates,
 * reorders, delays and corrupts them at chosen rates, each decision
 * independent per packet from a seeded PRNG (same seed, same packets:
 * same faults).
 *
 * One thread, one poll loop: the queue socket, a signalfd, and timers
 * computed from the held packets. Held packets (reorder, delay) are
 * NFQUEUE packets whose verdict we have not given yet; verdicts may come
 * in any order, by packet id. At most --max-held are held; beyond that a
 * packet is let through unharmed rather than released early.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "faultq.h"

#define RECV_BUF (256 * 1024)
/*
 * A RoCE sender may have its whole socket send buffer (the model's: 32
 * MiB) queued here at once; the kernel drops what does not fit in the
 * queue or our socket, and we report those drops as kernel_dropped.
 */
#define RCVBUF_BYTES (128 << 20)
#define QUEUE_MAXLEN 16384

struct held {
	uint64_t n;		/* arrival number, from 1 */
	uint64_t due;		/* CLOCK_MONOTONIC ns */
	int countdown;		/* reorder: packets still to let by; delay: -1 */
	uint32_t id, outdev;
	int dup, modified;
	size_t len;
	uint8_t data[];
};

struct counters {
	uint64_t seen, bytes, dropped, duplicated, reordered, reorder_held;
	uint64_t delayed, corrupted, corrupt_dup, overflow, errors, overrun;
};

struct fq {
	struct fq_opts o;
	struct nfq_handle *h;
	struct nfq_q_handle *qh;
	struct fq_raw raw;
	uint64_t rng[4];
	struct held **held;
	unsigned int nheld;
	uint64_t arrivals;
	uint64_t last_out;	/* highest arrival number let out so far */
	struct counters c;
	uint64_t reports;
	FILE *log;
};

/* ---- PRNG: splitmix64 seeds xoshiro256** ---- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(uint64_t s[4])
{
	uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

static int chance(uint64_t r, double p)
{
	return (double)(r >> 11) * 0x1.0p-53 < p;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- verdicts ---- */

static void let_out(struct fq *q, uint32_t id, uint64_t n,
		    const uint8_t *data, size_t len, int modified, int dup,
		    uint32_t outdev)
{
	int rc;

	if (nfq_set_verdict(q->qh, id, NF_ACCEPT, modified ? (uint32_t)len : 0,
			    modified ? data : NULL) < 0)
		q->c.errors++;
	if (n > q->last_out)
		q->last_out = n;
	if (!dup)
		return;
	/* after the original: on lo both take the same per-CPU backlog */
	rc = fq_raw_send(&q->raw, data, len, outdev);
	if (rc) {
		q->c.errors++;
		if (q->log)
			fprintf(q->log, "n=%" PRIu64 " dup-failed %s\n", n,
				strerror(-rc));
	} else {
		q->c.duplicated++;
		/* a corrupted packet's copy is corrupted too: it arrives,
		 * and must be refused, twice */
		if (modified)
			q->c.corrupt_dup++;
	}
}

static void release(struct fq *q, unsigned int i, const char *why)
{
	struct held *e = q->held[i];
	int late = q->last_out > e->n;

	if (late && e->countdown >= 0)
		q->c.reordered++;
	if (q->log)
		fprintf(q->log, "n=%" PRIu64 " out=%s late=%d\n", e->n, why,
			late);
	let_out(q, e->id, e->n, e->data, e->len, e->modified, e->dup,
		e->outdev);
	free(e);
	q->nheld--;
	memmove(q->held + i, q->held + i + 1,
		(q->nheld - i) * sizeof(q->held[0]));
}

static void release_due(struct fq *q, uint64_t now)
{
	for (unsigned int i = 0; i < q->nheld;) {
		if (q->held[i]->due <= now)
			release(q, i, "timer");
		else if (q->held[i]->countdown == 0)
			release(q, i, "count");
		else
			i++;
	}
}

static void hold(struct fq *q, uint32_t id, uint64_t n, const uint8_t *pkt,
		 size_t len, int modified, int dup, uint32_t outdev,
		 int countdown, unsigned int ms)
{
	struct held *e = malloc(sizeof(*e) + len);

	if (!e) {
		q->c.errors++;
		let_out(q, id, n, pkt, len, modified, dup, outdev);
		return;
	}
	*e = (struct held){ .n = n, .id = id, .outdev = outdev, .dup = dup,
			    .modified = modified, .len = len,
			    .countdown = countdown,
			    .due = now_ns() + (uint64_t)ms * 1000000u };
	memcpy(e->data, pkt, len);
	q->held[q->nheld++] = e;
}

/* The BTH fields the log shows, read before any corruption. */
static void bth_fields(const uint8_t *pkt, const struct fq_udp *u,
		       int udp_ok, char *out, size_t outlen)
{
	const uint8_t *b = pkt + u->payload;

	if (!udp_ok || u->plen < BTH_LEN) {
		snprintf(out, outlen, " op=- qpn=- psn=-");
		return;
	}
	snprintf(out, outlen, " op=0x%02x qpn=%u psn=%u", b[0],
		 (unsigned int)(b[5] << 16 | b[6] << 8 | b[7]),
		 (unsigned int)(b[9] << 16 | b[10] << 8 | b[11]));
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg,
		     struct nfq_data *nfa, void *arg)
{
	struct fq *q = arg;
	struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
	unsigned char *pkt;
	int len = nfq_get_payload(nfa, &pkt);
	uint64_t r[7], n;
	uint32_t id, outdev = nfq_get_outdev(nfa);
	struct fq_udp u;
	int udp_ok, dup, modified = 0, countdown = -1;
	unsigned int ms = 0;
	long cbyte = -1;
	uint8_t cmask = 0;
	const char *act = "pass";
	char what[32], bth[64];

	if (!ph) {
		q->c.errors++;
		return 0;
	}
	id = ntohl(ph->packet_id);
	if (len < 0) {
		q->c.errors++;
		nfq_set_verdict(qh, id, NF_ACCEPT, 0, NULL);
		return 0;
	}
	/* The same draws for every packet: decisions stay independent. */
	for (int i = 0; i < 7; i++)
		r[i] = rng_next(q->rng);
	n = ++q->arrivals;
	q->c.seen++;
	q->c.bytes += (uint64_t)len;
	/* this packet passes every reorder-held one */
	for (unsigned int i = 0; i < q->nheld; i++)
		if (q->held[i]->countdown > 0)
			q->held[i]->countdown--;
	udp_ok = !fq_parse_udp(pkt, (size_t)len, &u);

	if (q->log)
		bth_fields(pkt, &u, udp_ok, bth, sizeof(bth));
	if (chance(r[0], q->o.drop)) {
		if (nfq_set_verdict(qh, id, NF_DROP, 0, NULL) < 0)
			q->c.errors++;
		q->c.dropped++;
		if (q->log)
			fprintf(q->log, "n=%" PRIu64 " id=%u len=%d%s act=drop\n",
				n, id, len, bth);
		release_due(q, now_ns());
		return 0;
	}
	if (chance(r[1], q->o.corrupt) && udp_ok) {
		size_t byte;

		if (!fq_flip_bit(pkt, &u, r[5], &byte, &cmask)) {
			if (!q->o.keep_csum)
				fq_udp_fix_csum(pkt, &u);
			modified = 1;
			cbyte = (long)byte;
			q->c.corrupted++;
		}
	}
	dup = chance(r[2], q->o.dup);
	if (chance(r[3], q->o.delay)) {
		act = "delay";
		ms = q->o.delay_ms;
	} else if (chance(r[4], q->o.reorder)) {
		countdown = 1 + (int)(r[6] % q->o.reorder_depth);
		ms = q->o.reorder_ms;
		snprintf(what, sizeof(what), "reorder:%d", countdown);
		act = what;
	}
	if (ms && q->nheld >= q->o.max_held) {
		q->c.overflow++;
		act = "pass-full";
		ms = 0;
	}
	if (ms) {
		if (countdown < 0)
			q->c.delayed++;
		else
			q->c.reorder_held++;
		hold(q, id, n, pkt, (size_t)len, modified, dup, outdev,
		     countdown, ms);
	}
	if (q->log) {
		fprintf(q->log, "n=%" PRIu64 " id=%u len=%d%s act=%s", n, id,
			len, bth, act);
		if (cbyte >= 0)
			fprintf(q->log, " corrupt=%ld:0x%02x", cbyte, cmask);
		fprintf(q->log, "%s\n", dup ? " dup" : "");
	}
	if (!ms)
		let_out(q, id, n, pkt, (size_t)len, modified, dup, outdev);
	release_due(q, now_ns());
	return 0;
}

/* ---- counters ---- */

/* The kernel's own drops for our queue: queue full, or socket overrun. */
static uint64_t kernel_dropped(unsigned int queue)
{
	FILE *f = fopen("/proc/net/netfilter/nfnetlink_queue", "r");
	unsigned int num, portid, total, mode, range, id, one;
	unsigned long long qd, ud;
	uint64_t n = 0;

	if (!f)
		return 0;
	while (fscanf(f, "%u %u %u %u %u %llu %llu %u %u", &num, &portid,
		      &total, &mode, &range, &qd, &ud, &id, &one) == 9)
		if (num == queue)
			n = qd + ud;
	fclose(f);
	return n;
}

/*
 * One line, key=value: packets seen and their bytes; dropped; duplicated
 * (copies sent); reorder_held (held for reordering) and reordered (of
 * those, let out after a later packet: really out of order); delayed;
 * corrupted, and corrupt_dup (corrupted packets also duplicated: their
 * copies carry the flip too); overflow (a hold refused: --max-held);
 * held (now);
 * kernel_dropped (queue full or socket overrun, by the kernel's count);
 * overrun (our ENOBUFS); errors (verdicts or copies that failed); report
 * (this line's number: a reader can wait for a fresh one).
 */
static void format_stats(struct fq *q, char *buf, size_t len)
{
	const struct counters *c = &q->c;

	snprintf(buf, len,
		 "ernic_faultq: seen=%" PRIu64 " bytes=%" PRIu64
		 " dropped=%" PRIu64 " duplicated=%" PRIu64
		 " reordered=%" PRIu64 " reorder_held=%" PRIu64
		 " delayed=%" PRIu64 " corrupted=%" PRIu64
		 " corrupt_dup=%" PRIu64 " overflow=%" PRIu64 " held=%u kernel_dropped=%" PRIu64
		 " overrun=%" PRIu64 " errors=%" PRIu64 " report=%" PRIu64,
		 c->seen, c->bytes, c->dropped, c->duplicated, c->reordered,
		 c->reorder_held, c->delayed, c->corrupted, c->corrupt_dup,
		 c->overflow,
		 q->nheld, kernel_dropped(q->o.queue), c->overrun, c->errors,
		 ++q->reports);
}

/* Readers see the old file or the new one, never half of one. */
static void write_file(const char *path, const char *line)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "ernic_faultq: %s: %s\n", tmp, strerror(errno));
		return;
	}
	fprintf(f, "%s\n", line);
	if (fclose(f) || rename(tmp, path))
		fprintf(stderr, "ernic_faultq: %s: %s\n", path, strerror(errno));
}

static void report(struct fq *q, int to_stdout)
{
	char line[512];

	format_stats(q, line, sizeof(line));
	if (to_stdout)
		printf("%s\n", line);
	if (q->o.stats)
		write_file(q->o.stats, line);
	if (q->log)
		fflush(q->log);
}

/* ---- setup and loop ---- */

static int open_queue(struct fq *q)
{
	int rcvbuf = RCVBUF_BYTES;

	q->h = nfq_open();
	if (!q->h) {
		fprintf(stderr, "ernic_faultq: nfq_open: %s\n", strerror(errno));
		return -1;
	}
	q->qh = nfq_create_queue(q->h, (uint16_t)q->o.queue, on_packet, q);
	if (!q->qh) {
		fprintf(stderr,
			"ernic_faultq: cannot bind queue %u: %s (another listener on it?)\n",
			q->o.queue, strerror(errno));
		return -1;
	}
	/* whole packets; the kernel completes partial checksums first */
	if (nfq_set_mode(q->qh, NFQNL_COPY_PACKET, 0xffff) < 0 ||
	    nfq_set_queue_maxlen(q->qh, QUEUE_MAXLEN + q->o.max_held) < 0) {
		fprintf(stderr, "ernic_faultq: queue %u setup: %s\n",
			q->o.queue, strerror(errno));
		return -1;
	}
	if (setsockopt(nfq_fd(q->h), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)))
		nfnl_rcvbufsiz(nfq_nfnlh(q->h), RCVBUF_BYTES);
	return 0;
}

static int signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static int poll_timeout(struct fq *q, uint64_t now, uint64_t next_stats)
{
	uint64_t next = q->o.stats ? next_stats : now + 3600000000000ull;

	for (unsigned int i = 0; i < q->nheld; i++)
		if (q->held[i]->due < next)
			next = q->held[i]->due;
	if (next <= now)
		return 0;
	/* round up: waking early only costs a loop */
	return (int)((next - now + 999999) / 1000000);
}

/* Returns 1 to go on, 0 to exit. */
static int on_signal(struct fq *q, int sfd)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGUSR1)
			report(q, 1);
		else
			return 0;
	}
	return 1;
}

static int drain(struct fq *q, int fd, uint8_t *buf)
{
	for (int i = 0; i < 64; i++) {
		ssize_t n = recv(fd, buf, RECV_BUF, MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == EINTR)
				return 0;
			if (errno == ENOBUFS) {	/* the kernel counts the loss */
				q->c.overrun++;
				continue;
			}
			fprintf(stderr, "ernic_faultq: recv: %s\n",
				strerror(errno));
			return -1;
		}
		nfq_handle_packet(q->h, (char *)buf, (int)n);
		release_due(q, now_ns());
	}
	return 0;
}

static int run(struct fq *q, int sfd)
{
	static uint8_t buf[RECV_BUF];
	int fd = nfq_fd(q->h), rc = 0;
	uint64_t step = (uint64_t)q->o.stats_ms * 1000000u;
	uint64_t next_stats = now_ns() + step;

	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN } };
		uint64_t now = now_ns();

		if (poll(p, 2, poll_timeout(q, now, next_stats)) < 0 &&
		    errno != EINTR) {
			perror("ernic_faultq: poll");
			rc = 1;
			break;
		}
		if (p[1].revents && !on_signal(q, sfd))
			break;
		if (p[0].revents && drain(q, fd, buf)) {
			rc = 1;
			break;
		}
		now = now_ns();
		release_due(q, now);
		if (q->o.stats && now >= next_stats) {
			report(q, 0);
			next_stats = now + step;
		}
	}
	/*
	 * What the kernel queued already would be dropped when we close:
	 * take it (bounded, traffic may go on), then let every held one go.
	 */
	for (uint64_t end = now_ns() + 200000000u; !rc && now_ns() < end;) {
		ssize_t n = recv(fd, buf, RECV_BUF, MSG_DONTWAIT);

		if (n < 0 && errno != EINTR && errno != ENOBUFS)
			break;
		if (n > 0)
			nfq_handle_packet(q->h, (char *)buf, (int)n);
	}
	while (q->nheld)
		release(q, 0, "exit");
	return rc;
}

static int add_rule(int argc, char **argv)
{
	const char *how = "";
	char err[256];
	unsigned int queue;

	if (argc < 6 || argc > 7 || (argc == 7 && strcmp(argv[6], "bypass"))) {
		fq_usage(stderr);
		return 2;
	}
	queue = (unsigned int)fq_parse_u64("queue", argv[5], 0, 65535);
	if (fq_add_queue_rule(argv[2], argv[3], argv[4], (uint16_t)queue,
			      argc == 7, &how, err, sizeof(err))) {
		fprintf(stderr, "ernic_faultq: %s\n", err);
		return 1;
	}
	printf("ernic_faultq: %s %s %s: queue to %u%s (%s)\n", argv[2],
	       argv[3], argv[4], queue, argc == 7 ? " bypass" : "", how);
	return 0;
}

int main(int argc, char **argv)
{
	static struct fq q;
	uint64_t s;
	int sfd, rc;
	pid_t parent = getppid();

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "add-rule"))
		return add_rule(argc, argv);
	fq_parse_opts(&q.o, argc, argv);
	if (!q.o.have_seed &&
	    getrandom(&q.o.seed, sizeof(q.o.seed), 0) != sizeof(q.o.seed))
		q.o.seed = now_ns() ^ (uint64_t)getpid() << 32;
	s = q.o.seed;
	for (int i = 0; i < 4; i++)
		q.rng[i] = splitmix64(&s);
	q.held = calloc(q.o.max_held, sizeof(q.held[0]));
	q.raw.fd4 = q.raw.fd6 = -1;
	if (!q.held)
		return 1;
	if (q.o.die_with_parent &&
	    (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent))
		return 1;
	if (q.o.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(q.o.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "ernic_faultq: --cpu %d: %s\n", q.o.cpu,
				strerror(errno));
			return 1;
		}
	}
	/*
	 * This is the wire: it must not be the slowest thing on it. The
	 * models' engine threads run at SCHED_FIFO 1 (model/engine.c), and
	 * busy ones, ours or another test's on the same machine, can keep
	 * an ordinary process off both CPUs for most of a second (RT
	 * throttling leaves 5%): every packet then waits here longer than
	 * the QPs' transport timeout, and they exhaust their retries with
	 * nothing lost. One step above them; without the privilege, as an
	 * ordinary process.
	 */
	(void)sched_setscheduler(0, SCHED_FIFO,
				 &(struct sched_param){ .sched_priority = 2 });
	sfd = signals();
	if (sfd < 0) {
		perror("ernic_faultq: signalfd");
		return 1;
	}
	if (q.o.log) {
		q.log = fopen(q.o.log, "w");
		if (!q.log) {
			fprintf(stderr, "ernic_faultq: %s: %s\n", q.o.log,
				strerror(errno));
			return 1;
		}
	}
	if (q.o.dup > 0) {
		char err[256];

		if (fq_raw_open(&q.raw, q.o.mark, err, sizeof(err))) {
			fprintf(stderr, "ernic_faultq: %s\n", err);
			return 1;
		}
	}
	printf("ernic_faultq: start queue=%u seed=%" PRIu64
	       " drop=%g dup=%g reorder=%g reorder_depth=%u reorder_ms=%u"
	       " delay=%g delay_ms=%u corrupt=%g mark=0x%x max_held=%u\n",
	       q.o.queue, q.o.seed, q.o.drop * 100, q.o.dup * 100,
	       q.o.reorder * 100, q.o.reorder_depth, q.o.reorder_ms,
	       q.o.delay * 100, q.o.delay_ms, q.o.corrupt * 100, q.o.mark,
	       q.o.max_held);
	if (open_queue(&q))
		return 1;
	if (q.o.ready) {
		int fd = open(q.o.ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			      0644);

		if (fd < 0) {
			fprintf(stderr, "ernic_faultq: %s: %s\n", q.o.ready,
				strerror(errno));
			return 1;
		}
		close(fd);
	}
	printf("ernic_faultq: ready queue=%u\n", q.o.queue);
	if (q.o.stats)
		report(&q, 0);
	rc = run(&q, sfd);
	report(&q, 1);
	if (q.log)
		fclose(q.log);
	nfq_destroy_queue(q.qh);
	nfq_close(q.h);
	fq_raw_close(&q.raw);
	free(q.held);
	return rc;
}
