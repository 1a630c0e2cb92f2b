// SPDX-License-Identifier: MIT
/*
 * rdmacm_survivor: what the side of a connection that is still working
 * sees when its peer dies mid-transfer (SIGKILL). A plain rdma_cm
 * program (<rdma/rdma_cma.h>, -lrdmacm), run after eval "$(ernicctl env)".
 *
 *   rdmacm_survivor server ADDR PORT   listen on ADDR:PORT, accept one
 *       connection and RDMA WRITE 64 KiB after 64 KiB into the buffer
 *       the client announced in its REQ's private data, until the
 *       connection ends. Prints "writing" once the first WRITE has
 *       completed, then, when RDMA_CM_EVENT_DISCONNECTED comes, the
 *       first failed completion and how long after it the event came.
 *   rdmacm_survivor client ADDR PORT [SRC]   connect to ADDR:PORT (from
 *       SRC) offering a 64 KiB buffer for remote writes, print
 *       "connected", then sleep until killed.
 *
 * A killed peer cannot send its DREQ (it has no kernel to send it, and
 * with an idle connection nothing would ever tell the survivor, as with
 * a crashed host). A survivor that is sending learns it from its QP: the
 * retries run out, the QP goes to error, and its CM says goodbye and
 * reports DISCONNECTED, as a kernel's rdma_cm does when the peer's DREQ
 * comes.
 *
 * Exit status: 0 the server saw DISCONNECTED, 1 failure (no event within
 * the deadline, a CM event out of place), 2 usage.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define BUF_LEN (64u << 10)
#define DEADLINE_S 90		/* from the first failed completion */

struct offer {			/* the REQ's private data, network order */
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

static _Noreturn void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "rdmacm_survivor: FAIL: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The next CM event, which must be `want`; waits up to ms (-1: ever). */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch,
					enum rdma_cm_event_type want, int ms)
{
	struct pollfd pf = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pf, 1, ms) != 1)
		die("no %s in time", rdma_event_str(want));
	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event: %s", strerror(errno));
	if (ev->event != want || ev->status)
		die("unexpected CM event %s", rdma_event_str(ev->event));
	return ev;
}

static void resolve(struct sockaddr_in *sa, const char *addr, const char *port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(port));
	if (inet_pton(AF_INET, addr, &sa->sin_addr) != 1)
		die("bad IPv4 address %s", addr);
}

static struct ibv_qp_init_attr qp_attr(void)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};

	return a;
}

static _Noreturn void run_client(struct rdma_event_channel *ch,
				struct sockaddr_in *sa, struct sockaddr_in *src)
{
	struct ibv_qp_init_attr qa = qp_attr();
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct offer of;
	struct ibv_mr *mr;
	void *buf;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, (struct sockaddr *)src, (struct sockaddr *)sa,
			      5000))
		die("client: resolve_addr: %s", strerror(errno));
	rdma_ack_cm_event(next_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 10000));
	if (rdma_resolve_route(id, 5000))
		die("client: resolve_route: %s", strerror(errno));
	rdma_ack_cm_event(next_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 10000));
	if (rdma_create_qp(id, NULL, &qa))
		die("client: rdma_create_qp: %s", strerror(errno));
	buf = aligned_alloc(4096, BUF_LEN);
	mr = buf ? ibv_reg_mr(id->pd, buf, BUF_LEN,
			      IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (!mr)
		die("client: ibv_reg_mr: %s", strerror(errno));
	of.addr = htobe64((uintptr_t)buf);
	of.rkey = htonl(mr->rkey);
	of.len = htonl(BUF_LEN);
	cp.private_data = &of;
	cp.private_data_len = sizeof(of);
	if (rdma_connect(id, &cp))
		die("client: rdma_connect: %s", strerror(errno));
	ev = next_event(ch, RDMA_CM_EVENT_ESTABLISHED, 30000);
	rdma_ack_cm_event(ev);
	printf("connected\n");
	fflush(stdout);
	for (;;)
		pause();	/* the test kills us here */
}

/* Keep up to 8 WRITEs in flight until one fails; the WC status of the
 * first failure in *st. Returns when the CM channel has an event. */
static void write_until_event(struct rdma_cm_id *id, struct ibv_mr *mr,
			      const struct offer *of, int cfd,
			      enum ibv_wc_status *st, uint64_t *t_fail)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge = { (uintptr_t)mr->addr, BUF_LEN, mr->lkey };
	unsigned int inflight = 0;
	bool said = false, failed = false;

	for (;;) {
		struct pollfd pf = { .fd = cfd, .events = POLLIN };
		struct ibv_wc wc;
		int n;

		while (!failed && inflight < 8) {
			memset(&wr, 0, sizeof(wr));
			wr.opcode = IBV_WR_RDMA_WRITE;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.wr.rdma.remote_addr = be64toh(of->addr);
			wr.wr.rdma.rkey = ntohl(of->rkey);
			if (ibv_post_send(id->qp, &wr, &bad))
				break;	/* full, or the QP is gone */
			inflight++;
		}
		while ((n = ibv_poll_cq(id->send_cq, 1, &wc)) == 1) {
			inflight--;
			if (wc.status == IBV_WC_SUCCESS && !said) {
				printf("writing\n");
				fflush(stdout);
				said = true;
			} else if (wc.status != IBV_WC_SUCCESS && !failed) {
				*st = wc.status;
				*t_fail = now_ms();
				failed = true;
			}
		}
		if (n < 0)
			die("ibv_poll_cq: %s", strerror(errno));
		if (poll(&pf, 1, failed ? 10 : 0) == 1)
			return;
		if (failed && now_ms() - *t_fail > DEADLINE_S * 1000u)
			die("no CM event %s", "within the deadline");
	}
}

static int run_server(struct rdma_event_channel *ch, struct sockaddr_in *sa)
{
	struct ibv_qp_init_attr qa = qp_attr();
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	struct rdma_cm_id *lid, *id;
	struct rdma_cm_event *ev;
	uint64_t t_fail = 0;
	struct offer of;
	struct ibv_mr *mr;
	void *buf;

	if (rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, (struct sockaddr *)sa) || rdma_listen(lid, 1))
		die("server: bind/listen: %s", strerror(errno));
	ev = next_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, -1);
	id = ev->id;
	if (ev->param.conn.private_data_len < sizeof(of))
		die("server: REQ without the buffer %s", "offer");
	memcpy(&of, ev->param.conn.private_data, sizeof(of));
	rdma_ack_cm_event(ev);
	if (rdma_create_qp(id, NULL, &qa))
		die("server: rdma_create_qp: %s", strerror(errno));
	buf = aligned_alloc(4096, BUF_LEN);
	mr = buf ? ibv_reg_mr(id->pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE) :
		   NULL;
	if (!mr)
		die("server: ibv_reg_mr: %s", strerror(errno));
	memset(buf, 0x5a, BUF_LEN);
	if (rdma_accept(id, &cp))
		die("server: rdma_accept: %s", strerror(errno));
	rdma_ack_cm_event(next_event(ch, RDMA_CM_EVENT_ESTABLISHED, 30000));
	if (fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK))
		die("fcntl: %s", strerror(errno));
	write_until_event(id, mr, &of, ch->fd, &st, &t_fail);
	ev = next_event(ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	rdma_ack_cm_event(ev);
	if (!t_fail)
		die("DISCONNECTED before any WRITE %s", "failed");
	printf("server: DISCONNECTED %llu ms after the first failed "
	       "completion (%s)\n",
	       (unsigned long long)(now_ms() - t_fail),
	       ibv_wc_status_str(st));
	rdma_disconnect(id);
	rdma_destroy_qp(id);
	ibv_dereg_mr(mr);
	free(buf);
	rdma_destroy_id(id);
	rdma_destroy_id(lid);
	return 0;
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *ch;
	struct sockaddr_in sa, src;

	if (argc < 4 || argc > 5 ||
	    (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: %s server|client ADDR PORT [SRC]\n",
			argv[0]);
		return 2;
	}
	resolve(&sa, argv[2], argv[3]);
	if (argc == 5)
		resolve(&src, argv[4], "0");
	setvbuf(stdout, NULL, _IOLBF, 0);
	ch = rdma_create_event_channel();
	if (!ch)
		die("rdma_create_event_channel: %s", strerror(errno));
	if (!strcmp(argv[1], "client"))
		run_client(ch, &sa, argc == 5 ? &src : NULL);
	return run_server(ch, &sa);
}
