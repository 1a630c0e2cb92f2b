// SPDX-License-Identifier: MIT
/*
 * rdmacm_cycles: connect / disconnect cycles through librdmacm in one
 * process that holds two devices: a listener on SERVER_ADDR's device and,
 * each cycle, a client on CLIENT_ADDR's that resolves the address and the
 * route, makes its QP and connects; the server side takes the connection
 * request, makes its QP and accepts; both see ESTABLISHED, one SEND goes
 * each way with its bytes checked, both sides disconnect (who goes first
 * alternates), both see DISCONNECTED, and QPs, MRs and ids are destroyed.
 * Every event is acknowledged. All events come through one channel whose
 * fd is O_NONBLOCK and polled: a drained channel must say EAGAIN; every
 * fourth cycle the client's DISCONNECTED waits on a second channel and
 * must follow the id back when rdma_migrate_id() moves it.
 *
 * Leak checks: after the warm-up cycles and at the end, once the CM's
 * timewaits are over (-W), the process's open fds, threads and memory
 * mappings, its heap in use (mallinfo2, all arenas; run it with
 * GLIBC_TUNABLES=glibc.malloc.tcache_count=0 for an exact figure: the
 * per-thread caches count as in use), the QPs each device can still
 * create (a probe: max_qp of them, or QPs leaked) and the QPs the IP has
 * programmed (QPCONFi through ernicdv_reg_read) are taken. Nothing may
 * change but the heap, by at most -m bytes. A leaked QP would also
 * exhaust the device's C_NUM_QP - 1 within the cycles.
 *
 * A plain rdma_cm program (<rdma/rdma_cma.h>, -lrdmacm): run after eval
 * "$(ernicctl env)", it checks in /proc/self/maps that the librdmacm it
 * runs on is ours (-L: that very file).
 *
 * --bench N: N cycles, no leak checks; the median and 99th percentile of
 * setup (rdma_create_id to the client's ESTABLISHED), connect
 * (rdma_connect to ESTABLISHED) and first byte (rdma_connect to the
 * server's completion of the client's first SEND).
 *
 * Exit status: 0 pass, 1 fail (a hang too: a watchdog names the step),
 * 2 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdmacm_cycles.h"

#define MAGIC_REQ 0x52455131u	/* "REQ1": the REQ's private data */
#define MAGIC_REP 0x52455031u	/* "REP1" */
#define RX_OFF 2048u		/* RECVs land in a side's buffer here */

struct opts {
	unsigned int cycles, warmup, bench, timeout_s, settle_ms;
	uint16_t port;
	size_t size, heap_bound;
	const char *lib;
	struct sockaddr_in srv_addr, cli_addr;
};

enum {
	EV_ADDR = 1u << 0,
	EV_ROUTE = 1u << 1,
	EV_REQ = 1u << 2,
	EV_CLI_EST = 1u << 3,
	EV_SRV_EST = 1u << 4,
	EV_CLI_DISC = 1u << 5,
	EV_SRV_DISC = 1u << 6,
	EV_COUNT = 7,
};

static const char *const ev_names[EV_COUNT] = {
	"client ADDR_RESOLVED", "client ROUTE_RESOLVED", "CONNECT_REQUEST",
	"client ESTABLISHED", "server ESTABLISHED", "client DISCONNECTED",
	"server DISCONNECTED",
};

/* One end of the cycle's connection. */
struct side {
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	uint8_t *buf;		/* a page: SENDs from 0, RECVs at RX_OFF */
	uint32_t qpn;
};

/* Times of one cycle, ns. */
struct cycle_times {
	uint64_t setup, connect, first_byte, total;
};

struct run {
	struct opts o;
	struct rdma_event_channel *ch;
	struct rdma_event_channel *side_ch;	/* migrate_out() */
	struct rdma_cm_id *listen;
	struct side cli, srv;
	struct ibv_context *ctx[2];	/* the server's and the client's device */
	unsigned int seen;		/* EV_* of this cycle */
	uint64_t t_cli_est;
	unsigned long events, eagains, migrations;
	uint32_t qpn_min, qpn_max;
};

unsigned int cur_cycle;
static const char *cur_step = "start";
static char hang_msg[160];	/* what the watchdog says */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rdmacm_cycles: FAIL: cycle %u: ", cur_cycle);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* A call that never returns (in the library) is named before the test's
 * timeout kills the process without a word. */
static void on_alarm(int sig)
{
	(void)sig;
	if (write(2, hang_msg, strlen(hang_msg)) < 0) {
		/* nothing more to say */
	}
	_exit(1);
}

static void step(struct run *r, const char *what)
{
	cur_step = what;
	snprintf(hang_msg, sizeof(hang_msg),
		 "rdmacm_cycles: FAIL: cycle %u: hang in: %s (%u s)\n",
		 cur_cycle, what, 3 * r->o.timeout_s);
	alarm(3 * r->o.timeout_s);
}

/* ---- events ---- */

static void describe(unsigned int bits, char *buf, size_t len)
{
	size_t k = 0;

	snprintf(buf, len, "none");
	for (int i = 0; i < EV_COUNT; i++)
		if (bits & (1u << i) && k < len)
			k += (size_t)snprintf(buf + k, len - k, "%s%s",
					      k ? ", " : "", ev_names[i]);
}

/* The private data of a REQ or REP: MAGIC and the cycle. */
static void check_pdata(const struct rdma_cm_event *ev, uint32_t magic)
{
	const struct rdma_conn_param *p = &ev->param.conn;
	uint32_t w[2];

	if (!p->private_data || p->private_data_len < sizeof(w))
		die("%s: %u bytes of private data, want at least %zu",
		    rdma_event_str(ev->event), p->private_data_len, sizeof(w));
	memcpy(w, p->private_data, sizeof(w));
	if (ntohl(w[0]) != magic || ntohl(w[1]) != cur_cycle)
		die("%s: private data %08x %08x, want %08x %08x",
		    rdma_event_str(ev->event), ntohl(w[0]), ntohl(w[1]), magic,
		    cur_cycle);
}

static void on_event(struct run *r, struct rdma_cm_event *ev)
{
	bool cli = r->cli.id && ev->id == r->cli.id;
	bool srv = r->srv.id && ev->id == r->srv.id;
	const char *who = cli ? "client" : srv ? "server" :
			  ev->id == r->listen ? "listening" : "unknown";
	unsigned int bit = 0;

	if (ev->status)
		die("%s on the %s id, status %d", rdma_event_str(ev->event),
		    who, ev->status);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		bit = cli ? EV_ADDR : 0;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		bit = cli ? EV_ROUTE : 0;
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (ev->listen_id != r->listen || r->srv.id || cli)
			break;
		check_pdata(ev, MAGIC_REQ);
		if (ev->param.conn.qp_num != r->cli.qpn)
			die("CONNECT_REQUEST names QP %u, the client's is %u",
			    ev->param.conn.qp_num, r->cli.qpn);
		r->srv.id = ev->id;
		bit = EV_REQ;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (cli) {
			r->t_cli_est = now_ns();
			check_pdata(ev, MAGIC_REP);
			if (ev->param.conn.qp_num != r->srv.qpn)
				die("the client's ESTABLISHED names QP %u, the server's is %u",
				    ev->param.conn.qp_num, r->srv.qpn);
		}
		bit = cli ? EV_CLI_EST : srv ? EV_SRV_EST : 0;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		bit = cli ? EV_CLI_DISC : srv ? EV_SRV_DISC : 0;
		break;
	default:
		break;
	}
	if (!bit)
		die("unexpected %s on the %s id", rdma_event_str(ev->event), who);
	if (r->seen & bit)
		die("a second %s", ev_names[__builtin_ctz(bit)]);
	r->seen |= bit;
}

/* Take every queued event; the non-blocking channel ends with EAGAIN. */
static void drain(struct run *r)
{
	struct rdma_cm_event *ev;

	while (!rdma_get_cm_event(r->ch, &ev)) {
		r->events++;
		on_event(r, ev);
		if (rdma_ack_cm_event(ev))
			die("rdma_ack_cm_event: %s", strerror(errno));
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		die("rdma_get_cm_event: %s, want EAGAIN when drained",
		    strerror(errno));
	r->eagains++;
}

/* Poll the channel until every event of WANT has been seen. */
static void pump(struct run *r, unsigned int want)
{
	uint64_t end = now_ns() + (uint64_t)r->o.timeout_s * 1000000000u;

	while ((r->seen & want) != want) {
		struct pollfd p = { .fd = r->ch->fd, .events = POLLIN };
		uint64_t t = now_ns();
		char a[256], b[256];
		int n;

		if (t >= end) {
			describe(want & ~r->seen, a, sizeof(a));
			describe(r->seen, b, sizeof(b));
			die("no %s after %u s (seen: %s)", a, r->o.timeout_s, b);
		}
		n = poll(&p, 1, (int)((end - t) / 1000000u) + 1);
		if (n < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (n > 0)
			drain(r);
	}
}

/* Between cycles nothing may wait: no event, no byte in the channel. */
static void check_channel_empty(struct run *r)
{
	struct rdma_cm_event *ev;
	int queued = 0;

	if (!rdma_get_cm_event(r->ch, &ev))
		die("a stray %s after the cycle", rdma_event_str(ev->event));
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		die("rdma_get_cm_event on an empty channel: %s, want EAGAIN",
		    strerror(errno));
	if (ioctl(r->ch->fd, FIONREAD, &queued) || queued)
		die("the channel's fd holds %d bytes after the cycle", queued);
}

/* ---- data ---- */

static uint8_t pattern(unsigned int dir, size_t k)
{
	return (uint8_t)((cur_cycle * 131u + dir * 0x5Au + k * 7u) ^ (k >> 8));
}

/* One completion of opcode OP from CQ, waiting on its channel. */
static void wait_wc(struct run *r, struct ibv_cq *cq,
		    struct ibv_comp_channel *cc, enum ibv_wc_opcode op,
		    struct ibv_wc *wc)
{
	uint64_t end = now_ns() + (uint64_t)r->o.timeout_s * 1000000000u;
	bool armed = false;
	int n;

	while (!(n = ibv_poll_cq(cq, 1, wc))) {
		struct pollfd p = { .fd = cc->fd, .events = POLLIN };
		uint64_t t = now_ns();
		struct ibv_cq *ecq;
		void *ectx;

		if (!armed) {
			/* then poll again: what completed before arming */
			if (ibv_req_notify_cq(cq, 0))
				die("ibv_req_notify_cq: %s", strerror(errno));
			armed = true;
			continue;
		}
		if (t >= end)
			die("%s: no completion after %u s", cur_step,
			    r->o.timeout_s);
		n = poll(&p, 1, (int)((end - t) / 1000000u) + 1);
		if (n < 0 && errno != EINTR)
			die("poll (completion channel): %s", strerror(errno));
		if (n <= 0)
			continue;
		if (ibv_get_cq_event(cc, &ecq, &ectx))
			die("ibv_get_cq_event: %s", strerror(errno));
		if (ecq != cq)
			die("a completion event for another CQ");
		ibv_ack_cq_events(ecq, 1);
		armed = false;
	}
	if (n < 0)
		die("ibv_poll_cq: %d", n);
	if (wc->status != IBV_WC_SUCCESS)
		die("%s: completion status %s", cur_step,
		    ibv_wc_status_str(wc->status));
	if (wc->opcode != op)
		die("%s: completion opcode %d, want %d", cur_step, wc->opcode,
		    op);
}

static void post(struct run *r, struct side *s, bool send, unsigned int dir)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->buf + (send ? 0 : RX_OFF)),
		.length = (uint32_t)r->o.size,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr swr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 },
			   *rbad;

	if (!send) {
		memset(s->buf + RX_OFF, 0, r->o.size);
		if (ibv_post_recv(s->id->qp, &rwr, &rbad))
			die("ibv_post_recv: %s", strerror(errno));
		return;
	}
	for (size_t k = 0; k < r->o.size; k++)
		s->buf[k] = pattern(dir, k);
	if (ibv_post_send(s->id->qp, &swr, &sbad))
		die("ibv_post_send: %s", strerror(errno));
}

static void check_recv(struct run *r, struct side *s, unsigned int dir)
{
	struct ibv_wc wc;

	wait_wc(r, s->id->recv_cq, s->id->recv_cq_channel, IBV_WC_RECV, &wc);
	if (wc.byte_len != r->o.size)
		die("%s: received %u bytes, want %zu", cur_step, wc.byte_len,
		    r->o.size);
	for (size_t k = 0; k < r->o.size; k++)
		if (s->buf[RX_OFF + k] != pattern(dir, k))
			die("%s: byte %zu is 0x%02x, want 0x%02x", cur_step, k,
			    s->buf[RX_OFF + k], pattern(dir, k));
}

/* ---- one cycle ---- */

/* The id's QP on the library's PD and own CQs (with completion
 * channels), an MR on its buffer, a RECV posted. */
static void make_qp(struct run *r, struct side *s)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	if (rdma_create_qp(s->id, NULL, &a))
		die("%s: %s", cur_step, strerror(errno));
	if (!s->id->send_cq_channel || !s->id->recv_cq_channel)
		die("rdma_create_qp made CQs without completion channels");
	s->qpn = s->id->qp->qp_num;
	if (s->qpn < r->qpn_min)
		r->qpn_min = s->qpn;
	if (s->qpn > r->qpn_max)
		r->qpn_max = s->qpn;
	s->mr = ibv_reg_mr(s->id->pd, s->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr)
		die("%s: ibv_reg_mr: %s", cur_step, strerror(errno));
	post(r, s, false, 0);
}

static void conn_param(struct rdma_conn_param *p, uint32_t *pd,
		       uint32_t magic)
{
	pd[0] = htonl(magic);
	pd[1] = htonl(cur_cycle);
	*p = (struct rdma_conn_param){
		.private_data = pd,
		.private_data_len = 8,
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
}

static void destroy_side(struct run *r, struct side *s, bool server)
{
	step(r, server ? "server: rdma_destroy_qp" : "client: rdma_destroy_qp");
	rdma_destroy_qp(s->id);
	if (ibv_dereg_mr(s->mr))
		die("ibv_dereg_mr: %s", strerror(errno));
	step(r, server ? "server: rdma_destroy_id" : "client: rdma_destroy_id");
	if (rdma_destroy_id(s->id))
		die("%s: %s", cur_step, strerror(errno));
	s->id = NULL;
	s->mr = NULL;
	s->qpn = 0;
}

/*
 * Every fourth cycle, rdma_migrate_id() with an event queued, as
 * ucmatose -m may meet it: the client's id goes to a second channel
 * before the server disconnects; once its DISCONNECTED waits there,
 * unread, the id comes back. The event must come with it (the kernel's
 * channel moves an id's events) and leave nothing behind. The second
 * channel lives as long as the run: a destroyed channel's fds outlive it
 * for a while (rdma_destroy_event_channel), which the leak check would
 * count.
 */
static void migrate_out(struct run *r)
{
	step(r, "client: rdma_migrate_id to the second channel");
	if (rdma_migrate_id(r->cli.id, r->side_ch))
		die("%s: %s", cur_step, strerror(errno));
	if (r->cli.id->channel != r->side_ch)
		die("rdma_migrate_id left the id's channel as it was");
}

static void migrate_back(struct run *r)
{
	struct pollfd p = { .fd = r->side_ch->fd, .events = POLLIN };
	int queued = -1;

	step(r, "client: waiting for DISCONNECTED on its own channel");
	if (poll(&p, 1, (int)r->o.timeout_s * 1000) != 1)
		die("%s: nothing after %u s", cur_step, r->o.timeout_s);
	step(r, "client: rdma_migrate_id back, an event queued");
	if (rdma_migrate_id(r->cli.id, r->ch))
		die("%s: %s", cur_step, strerror(errno));
	if (ioctl(r->side_ch->fd, FIONREAD, &queued) || queued)
		die("the channel left holds %d bytes after rdma_migrate_id",
		    queued);
	r->migrations++;
}

static void cycle(struct run *r, unsigned int n, struct cycle_times *t)
{
	struct rdma_conn_param p;
	uint64_t t0, t_conn, t_fb;
	struct ibv_wc wc;
	uint32_t pd[2];

	cur_cycle = n;
	r->seen = 0;
	t0 = now_ns();
	step(r, "client: rdma_create_id");
	if (rdma_create_id(r->ch, &r->cli.id, &r->cli, RDMA_PS_TCP))
		die("%s: %s", cur_step, strerror(errno));
	step(r, "client: rdma_resolve_addr");
	if (rdma_resolve_addr(r->cli.id, (struct sockaddr *)&r->o.cli_addr,
			      (struct sockaddr *)&r->o.srv_addr, 2000))
		die("%s: %s", cur_step, strerror(errno));
	pump(r, EV_ADDR);
	/* As librdmacm: an id with a device has that device's PD, which
	 * applications make their own QPs and MRs in. */
	if (!r->cli.id->pd || r->cli.id->pd->context != r->cli.id->verbs)
		die("rdma_cm_id.pd is %p after ADDR_RESOLVED, want the device's PD",
		    (void *)r->cli.id->pd);
	step(r, "client: rdma_resolve_route");
	if (rdma_resolve_route(r->cli.id, 2000))
		die("%s: %s", cur_step, strerror(errno));
	pump(r, EV_ROUTE);
	step(r, "client: rdma_create_qp");
	make_qp(r, &r->cli);
	r->ctx[1] = r->cli.id->verbs;

	step(r, "client: rdma_connect");
	conn_param(&p, pd, MAGIC_REQ);
	t_conn = now_ns();
	if (rdma_connect(r->cli.id, &p))
		die("%s: %s", cur_step, strerror(errno));
	step(r, "server: waiting for CONNECT_REQUEST");
	pump(r, EV_REQ);
	step(r, "server: rdma_create_qp");
	make_qp(r, &r->srv);
	r->ctx[0] = r->srv.id->verbs;
	step(r, "server: rdma_accept");
	conn_param(&p, pd, MAGIC_REP);
	if (rdma_accept(r->srv.id, &p))
		die("%s: %s", cur_step, strerror(errno));
	step(r, "client: waiting for ESTABLISHED");
	pump(r, EV_CLI_EST);

	/* The client talks first, as soon as it may. */
	step(r, "client -> server SEND");
	post(r, &r->cli, true, 0);
	check_recv(r, &r->srv, 0);
	t_fb = now_ns();
	wait_wc(r, r->cli.id->send_cq, r->cli.id->send_cq_channel,
		IBV_WC_SEND, &wc);
	step(r, "server: waiting for ESTABLISHED");
	pump(r, EV_SRV_EST);
	step(r, "server -> client SEND");
	post(r, &r->srv, true, 1);
	check_recv(r, &r->cli, 1);
	wait_wc(r, r->srv.id->send_cq, r->srv.id->send_cq_channel,
		IBV_WC_SEND, &wc);

	/* Both disconnect; in odd cycles the server goes first. */
	if (n % 4 == 1)
		migrate_out(r);
	for (int k = 0; k < 2; k++) {
		bool server = (k == 0) == (n % 2 == 1);

		step(r, server ? "server: rdma_disconnect" :
				 "client: rdma_disconnect");
		if (rdma_disconnect(server ? r->srv.id : r->cli.id))
			die("%s: %s", cur_step, strerror(errno));
		if (k == 0 && n % 4 == 1)
			migrate_back(r);
	}
	step(r, "waiting for both DISCONNECTED");
	pump(r, EV_CLI_DISC | EV_SRV_DISC);
	destroy_side(r, &r->cli, false);
	destroy_side(r, &r->srv, true);
	check_channel_empty(r);
	alarm(0);

	t->setup = r->t_cli_est - t0;
	t->connect = r->t_cli_est - t_conn;
	t->first_byte = t_fb - t_conn;
	t->total = now_ns() - t0;
}

/* ---- main ---- */

/* The leak observations, once the CM has freed what closed connections
 * keep through their timewait (about 1.2 s). */
static void snapshot(struct run *r, const char *when, struct snap *s)
{
	struct timespec settle = { r->o.settle_ms / 1000,
				   (long)(r->o.settle_ms % 1000) * 1000000 };

	step(r, "waiting for the timewaits to end");
	while (nanosleep(&settle, &settle) && errno == EINTR)
		;
	step(r, "leak snapshot");
	take_snap(r->ctx, s);
	alarm(0);
	check_snap(when, s);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: rdmacm_cycles [options] SERVER_ADDR CLIENT_ADDR\n"
"  Connect / disconnect cycles between two ERNIC devices of this process\n"
"  (after eval \"$(ernicctl env)\"), checking that nothing leaks.\n"
"  -n, --cycles N      cycles (200)\n"
"  -w, --warmup N      cycles before the leak baseline (10)\n"
"  -p, --port PORT     the listener's port (18790)\n"
"  -s, --size BYTES    SEND size, 1..2048 (64)\n"
"  -m, --heap-bound B  heap growth allowed from baseline to end (65536)\n"
"  -t, --timeout S     per step (10)\n"
"  -W, --settle MS     wait before a leak snapshot: the CM's timewaits (2000)\n"
"  -L, --lib PATH      the librdmacm that must be the one loaded\n"
"      --bench N       N cycles, no leak checks: connect and first-byte times\n");
}

static unsigned long num(const char *s, unsigned long min, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "rdmacm_cycles: %s: want %lu..%lu\n", s, min, max);
		exit(2);
	}
	return v;
}

static void parse_addr(const char *s, struct sockaddr_in *sa, uint16_t port)
{
	*sa = (struct sockaddr_in){ .sin_family = AF_INET,
				    .sin_port = htons(port) };
	if (inet_pton(AF_INET, s, &sa->sin_addr) != 1) {
		fprintf(stderr, "rdmacm_cycles: not an IPv4 address: %s\n", s);
		exit(2);
	}
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "cycles", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "port", required_argument, NULL, 'p' },
		{ "size", required_argument, NULL, 's' },
		{ "heap-bound", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 't' },
		{ "settle", required_argument, NULL, 'W' },
		{ "lib", required_argument, NULL, 'L' },
		{ "bench", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	*o = (struct opts){ .cycles = 200, .warmup = 10, .port = 18790,
			    .size = 64, .heap_bound = 65536, .timeout_s = 10,
			    .settle_ms = 2000 };
	while ((c = getopt_long(argc, argv, "n:w:p:s:m:t:W:L:h", lo, NULL)) != -1) {
		switch (c) {
		case 'n': o->cycles = (unsigned int)num(optarg, 2, 1000000); break;
		case 'w': o->warmup = (unsigned int)num(optarg, 1, 1000000); break;
		case 'p': o->port = (uint16_t)num(optarg, 1, 65535); break;
		case 's': o->size = num(optarg, 1, RX_OFF); break;
		case 'm': o->heap_bound = num(optarg, 0, LONG_MAX); break;
		case 't': o->timeout_s = (unsigned int)num(optarg, 1, 3600); break;
		case 'W': o->settle_ms = (unsigned int)num(optarg, 0, 600000); break;
		case 'L': o->lib = optarg; break;
		case 'B': o->bench = (unsigned int)num(optarg, 1, 1000000); break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		exit(2);
	}
	if (o->bench) {
		o->cycles = o->bench;
	} else if (o->warmup >= o->cycles) {
		fprintf(stderr, "rdmacm_cycles: -w must be below -n\n");
		exit(2);
	}
	parse_addr(argv[optind], &o->srv_addr, o->port);
	parse_addr(argv[optind + 1], &o->cli_addr, 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void bench_report(const struct cycle_times *t, unsigned int n,
			 uint64_t sum)
{
	static const char *const what[] = { "setup", "connect", "first_byte" };
	uint64_t *v = calloc(n, sizeof(*v));

	if (!v)
		die("out of memory");
	printf("rdmacm_cycles: bench: %u connections in %.3f s: %.1f connections/s\n",
	       n, (double)sum / 1e9, n / ((double)sum / 1e9));
	for (int k = 0; k < 3; k++) {
		for (unsigned int i = 0; i < n; i++)
			v[i] = k == 0 ? t[i].setup :
			       k == 1 ? t[i].connect : t[i].first_byte;
		qsort(v, n, sizeof(*v), cmp_u64);
		printf("rdmacm_cycles: bench: %s_us median %.1f p99 %.1f max %.1f\n",
		       what[k], (double)v[(n - 1) / 2] / 1e3,
		       (double)v[(unsigned int)(0.99 * (n - 1) + 0.5)] / 1e3,
		       (double)v[n - 1] / 1e3);
	}
	free(v);
}

int main(int argc, char **argv)
{
	struct run r = { .qpn_min = UINT32_MAX };
	struct cycle_times *t;
	struct snap s0, s1;
	uint64_t sum = 0, worst = 0;
	char sa[INET_ADDRSTRLEN], ca[INET_ADDRSTRLEN];
	long growth;

	parse(argc, argv, &r.o);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	check_library(r.o.lib);
	inet_ntop(AF_INET, &r.o.srv_addr.sin_addr, sa, sizeof(sa));
	inet_ntop(AF_INET, &r.o.cli_addr.sin_addr, ca, sizeof(ca));
	t = calloc(r.o.cycles, sizeof(*t));
	/* Private anonymous pages: what the UIO backend can register. */
	r.cli.buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!t || r.cli.buf == MAP_FAILED)
		die("out of memory");
	r.srv.buf = r.cli.buf + 4096;

	step(&r, "listening");
	r.ch = rdma_create_event_channel();
	r.side_ch = rdma_create_event_channel();
	if (!r.ch || !r.side_ch)
		die("rdma_create_event_channel: %s", strerror(errno));
	if (fcntl(r.ch->fd, F_SETFL, fcntl(r.ch->fd, F_GETFL) | O_NONBLOCK))
		die("O_NONBLOCK on the channel: %s", strerror(errno));
	if (rdma_create_id(r.ch, &r.listen, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(r.listen, (struct sockaddr *)&r.o.srv_addr) ||
	    rdma_listen(r.listen, 8))
		die("listening on %s port %u: %s", sa, r.o.port,
		    strerror(errno));
	check_channel_empty(&r);

	for (unsigned int n = 1; n <= r.o.cycles; n++) {
		cycle(&r, n, &t[n - 1]);
		if (r.ctx[0] == r.ctx[1])
			die("the server and the client use one device");
		if (n == r.o.warmup && !r.o.bench)
			snapshot(&r, "baseline", &s0);
	}
	for (unsigned int i = 0; i < r.o.cycles; i++) {
		sum += t[i].total;
		worst = t[i].total > worst ? t[i].total : worst;
	}
	printf("rdmacm_cycles: %u cycles %s (%s) <- %s (%s), %zu-byte SENDs both ways\n",
	       r.o.cycles, sa, ibv_get_device_name(r.ctx[0]->device), ca,
	       ibv_get_device_name(r.ctx[1]->device), r.o.size);
	if (r.o.bench) {
		bench_report(t, r.o.cycles, sum);
		return 0;
	}
	printf("rdmacm_cycles: %.1f connections/s (the cycles took %.3f s, the longest %.1f ms); "
	       "%lu events, %lu EAGAINs, %lu migrations with an event queued; QP numbers %u..%u\n",
	       r.o.cycles / ((double)sum / 1e9), (double)sum / 1e9,
	       (double)worst / 1e6, r.events, r.eagains, r.migrations,
	       r.qpn_min, r.qpn_max);

	snapshot(&r, "end", &s1);
	growth = (long)s1.heap - (long)s0.heap;
	printf("rdmacm_cycles: over %u cycles: fds %+d, threads %+d, mappings %+d, heap %+ld B (%.1f B/cycle)\n",
	       r.o.cycles - r.o.warmup, s1.fds - s0.fds, s1.threads - s0.threads,
	       s1.maps - s0.maps, growth,
	       (double)growth / (r.o.cycles - r.o.warmup));
	if (s1.fds != s0.fds || s1.threads != s0.threads || s1.maps != s0.maps)
		die("fds, threads or memory mappings changed (see above)");
	if (growth > (long)r.o.heap_bound)
		die("the heap grew by %ld B (bound %zu)", growth, r.o.heap_bound);

	step(&r, "teardown");
	if (rdma_destroy_id(r.listen))
		die("rdma_destroy_id (the listener): %s", strerror(errno));
	rdma_destroy_event_channel(r.side_ch);
	rdma_destroy_event_channel(r.ch);
	alarm(0);
	munmap(r.cli.buf, 8192);
	free(t);
	printf("rdmacm_cycles: PASS\n");
	return 0;
}
