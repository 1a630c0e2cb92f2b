// SPDX-License-Identifier: MIT
/*
 * The provider's fast path, as a program for callgrind to count
 * (bench/fastpath.sh): RC QP a on device A connected to QP b on device B,
 * in one process, and one of these loops:
 *   send   N signaled 64-byte RDMA WRITEs, one per ibv_post_send
 *   poll   N successful ibv_poll_cq calls, one completion each
 *   empty  N ibv_poll_cq calls on a CQ with nothing to report
 *   wait   the same with a receive posted (what a receiver spins on)
 *   recv   N ibv_post_recv calls, one WR each
 * The script counts instructions inside the verb alone (callgrind's
 * --toggle-collect) and takes the model's share out. The loops do only
 * what they count plus what makes the next call possible, which runs
 * outside the counted function. --idle K attaches K more connected, idle
 * QPs to A's CQ: a poll should not cost more for them.
 *
 * Plain libibverbs: it runs on any device, not only an ERNIC.
 */
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define BUF_SIZE 4096u
#define MSG_SIZE 64u
#define DEPTH 512u		/* SQ and RQ depth; batches of DEPTH - 1 */

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	enum ibv_mtu mtu;
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fastpath: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void nap_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void side_open(struct side *s, const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;

	if (!list)
		die("no RDMA devices: %s", strerror(errno));
	for (int k = 0; list[k]; k++)
		if (!strcmp(ibv_get_device_name(list[k]), name))
			s->ctx = ibv_open_device(list[k]);
	ibv_free_device_list(list);
	if (!s->ctx)
		die("cannot open device %s", name);
	if (ibv_query_port(s->ctx, 1, &pa) || ibv_query_gid(s->ctx, 1, 0,
							   &s->gid))
		die("%s: cannot query port 1 or GID 0", name);
	s->mtu = pa.active_mtu;
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = s->pd ? ibv_create_cq(s->ctx, 4 * DEPTH, NULL, NULL, 0) : NULL;
	/* private anonymous pages: what a device on the UIO path without an
	 * IOMMU can register (its pages move into the DMA region) */
	s->buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->buf == MAP_FAILED)
		s->buf = NULL;
	if (!s->cq || !s->buf)
		die("%s: cannot make a PD, CQ or buffer", name);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ);
	if (!s->mr)
		die("%s: ibv_reg_mr: %s", name, strerror(errno));
}

static struct ibv_qp *qp_make(struct side *s)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_qp *qp = ibv_create_qp(s->pd, &ia);

	if (!qp)
		die("ibv_create_qp: %s", strerror(errno));
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify_qp INIT: %s", strerror(errno));
	return qp;
}

/* qp (on s) to RTS towards QP dqpn at peer's GID. */
static void qp_connect(struct ibv_qp *qp, const struct side *s,
		       const struct side *peer, uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = s->mtu < peer->mtu ? s->mtu : peer->mtu,
		.dest_qp_num = dqpn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = peer->gid, .hop_limit = 1 } },
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					  IBV_QP_MAX_DEST_RD_ATOMIC |
					  IBV_QP_MIN_RNR_TIMER))
		die("modify_qp RTR: %s", strerror(errno));
	/* A 1 s transport timer: under valgrind everything is some 50
	 * times slower, and 67 ms (14) ran out with nothing lost. */
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 18,
				  .retry_cnt = 7, .rnr_retry = 7,
				  .max_rd_atomic = 1 };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
					  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify_qp RTS: %s", strerror(errno));
}

static void pair_make(struct side *a, struct side *b, struct ibv_qp **qa,
		      struct ibv_qp **qb)
{
	*qa = qp_make(a);
	*qb = qp_make(b);
	qp_connect(*qa, a, b, (*qb)->qp_num);
	qp_connect(*qb, b, a, (*qa)->qp_num);
}

static void post_write(struct ibv_qp *qp, const struct side *s,
		       const struct side *peer)
{
	struct ibv_sge sg = { .addr = (uintptr_t)s->buf, .length = MSG_SIZE,
			      .lkey = s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)peer->buf,
			     .rkey = peer->mr->rkey },
	}, *bad;

	if (ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send: %s", strerror(errno));
}

static void post_send_msg(struct ibv_qp *qp, const struct side *s)
{
	struct ibv_sge sg = { .addr = (uintptr_t)s->buf, .length = MSG_SIZE,
			      .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send SEND: %s", strerror(errno));
}

static void post_one_recv(struct ibv_qp *qp, const struct side *s)
{
	struct ibv_sge sg = { .addr = (uintptr_t)s->buf, .length = BUF_SIZE,
			      .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 3, .sg_list = &sg, .num_sge = 1 },
			   *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		die("ibv_post_recv: %s", strerror(errno));
}

/* Poll cq until n successful completions arrived (not counted). */
static void drain(struct ibv_cq *cq, uint32_t n)
{
	struct ibv_wc wc[16];
	time_t end = time(NULL) + 120;

	while (n) {
		int k = ibv_poll_cq(cq, n < 16 ? (int)n : 16, wc);

		if (k < 0)
			die("ibv_poll_cq: %d", k);
		for (int j = 0; j < k; j++)
			if (wc[j].status != IBV_WC_SUCCESS)
				die("completion: %s",
				    ibv_wc_status_str(wc[j].status));
		n -= (uint32_t)k;
		if (!k && time(NULL) > end)
			die("completions missing after 120 s");
	}
}

/* The loops. Each returns how many counted calls it made. */
static uint32_t run_send(struct ibv_qp *qa, struct side *a, struct side *b,
			 uint32_t n)
{
	for (uint32_t done = 0; done < n;) {
		uint32_t k = n - done < DEPTH - 1 ? n - done : DEPTH - 1;

		for (uint32_t j = 0; j < k; j++)
			post_write(qa, a, b);
		drain(a->cq, k);
		done += k;
	}
	return n;
}

/* Completions are waited for, not polled for: each counted poll finds
 * one (misses are counted and reported). */
static uint32_t run_poll(struct ibv_qp *qa, struct side *a, struct side *b,
			 uint32_t n, uint32_t *miss)
{
	uint32_t calls = 0;

	for (uint32_t done = 0; done < n;) {
		uint32_t k = n - done < DEPTH - 1 ? n - done : DEPTH - 1;
		struct ibv_wc wc;

		for (uint32_t j = 0; j < k; j++)
			post_write(qa, a, b);
		nap_ms(200);
		for (uint32_t got = 0; got < k;) {
			int r = ibv_poll_cq(a->cq, 1, &wc);

			calls++;
			if (r < 0 || (r == 1 && wc.status != IBV_WC_SUCCESS))
				die("poll: %d %s", r,
				    r == 1 ? ibv_wc_status_str(wc.status) : "");
			if (r == 0) {
				(*miss)++;
				nap_ms(20);
			}
			got += (uint32_t)r;
		}
		done += k;
	}
	return calls;
}

static uint32_t run_empty(struct side *a, uint32_t n)
{
	struct ibv_wc wc;

	for (uint32_t j = 0; j < n; j++)
		if (ibv_poll_cq(a->cq, 1, &wc))
			die("empty poll found a completion");
	return n;
}

/* A receiver spinning for its message: one receive posted on a, nothing
 * sent (run_empty with work outstanding). */
static uint32_t run_wait(struct ibv_qp *qa, struct side *a, uint32_t n)
{
	post_one_recv(qa, a);
	return run_empty(a, n);
}

/* a's receives, consumed by b's SENDs after each batch. */
static uint32_t run_recv(struct ibv_qp *qa, struct ibv_qp *qb, struct side *a,
			 struct side *b, uint32_t n)
{
	for (uint32_t done = 0; done < n;) {
		uint32_t k = n - done < DEPTH - 1 ? n - done : DEPTH - 1;

		for (uint32_t j = 0; j < k; j++)
			post_one_recv(qa, a);
		for (uint32_t j = 0; j < k; j++)
			post_send_msg(qb, b);
		drain(b->cq, k);
		drain(a->cq, k);
		done += k;
	}
	return n;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: ernic-fastpath -a DEV -b DEV -m send|poll|empty|wait|recv "
		"[-n N] [-i IDLE_QPS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev-a", required_argument, NULL, 'a' },
		{ "dev-b", required_argument, NULL, 'b' },
		{ "mode", required_argument, NULL, 'm' },
		{ "iters", required_argument, NULL, 'n' },
		{ "idle", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	const char *da = NULL, *db = NULL, *mode = NULL;
	unsigned long n = 10000, idle = 0;
	struct side a = { 0 }, b = { 0 };
	struct ibv_qp *qa, *qb, *ia, *ib;
	uint32_t calls = 0, miss = 0;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "a:b:m:n:i:", opts, NULL)) != -1) {
		switch (c) {
		case 'a': da = optarg; break;
		case 'b': db = optarg; break;
		case 'm': mode = optarg; break;
		case 'n':
		case 'i': {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !*optarg || v > 1000000)
				die("-%c %s: not a count up to 1000000", c,
				    optarg);
			*(c == 'n' ? &n : &idle) = v;
			break;
		}
		default: usage();
		}
	}
	if (!da || !db || !mode || optind != argc)
		usage();
	side_open(&a, da);
	side_open(&b, db);
	pair_make(&a, &b, &qa, &qb);
	for (unsigned long k = 0; k < idle; k++)
		pair_make(&a, &b, &ia, &ib);
	if (!strcmp(mode, "send"))
		calls = run_send(qa, &a, &b, (uint32_t)n);
	else if (!strcmp(mode, "poll"))
		calls = run_poll(qa, &a, &b, (uint32_t)n, &miss);
	else if (!strcmp(mode, "empty"))
		calls = run_empty(&a, (uint32_t)n);
	else if (!strcmp(mode, "wait"))
		calls = run_wait(qa, &a, (uint32_t)n);
	else if (!strcmp(mode, "recv"))
		calls = run_recv(qa, qb, &a, &b, (uint32_t)n);
	else
		usage();
	/* What the script divides by. */
	printf("fastpath mode=%s calls=%u miss=%u idle=%lu\n", mode, calls,
	       miss, idle);
	/* The process exit tears everything down, as an app's would. */
	return 0;
}
