// SPDX-License-Identifier: MIT
/*
 * rdmacm_relisten: a connection request that arrives while its server is
 * between two listens on the port, as perftest -R's second connection
 * can: the server listens, lets the listener go, and listens again only
 * after the client's REQ is on its way. One process holds two devices:
 * the server's on SERVER_ADDR, the client's on CLIENT_ADDR.
 *
 *   rdmacm_relisten [-g GAP_MS] SERVER_ADDR CLIENT_ADDR PORT
 *
 * The client resolves, makes its QP and connects while nobody listens;
 * GAP_MS (default 100) later the server listens again and must get the
 * CONNECT_REQUEST through its new listener, accept it, and both sides
 * reach ESTABLISHED; then one SEND, its bytes checked, and a disconnect.
 * Whether the server's CM held the REQ (and did not reject it, which
 * this CM's client would have taken as "not yet" and sent again) is in
 * the counters ERNIC_CM_STATS prints at exit: the script checks them.
 *
 * A plain rdma_cm program (<rdma/rdma_cma.h>, -lrdmacm), run after eval
 * "$(ernicctl env)". Exit status: 0 pass, 1 fail, 2 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define MSG "relisten: the request outlived its listener"
#define TIMEOUT_MS 10000

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rdmacm_relisten: FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rdmacm_relisten [-g GAP_MS] SERVER_ADDR CLIENT_ADDR PORT\n");
	exit(2);
}

/* The next event on ch, which must be want on id; acknowledged. */
static void expect(struct rdma_event_channel *ch, struct rdma_cm_id *id,
		   enum rdma_cm_event_type want, struct rdma_cm_id **new_id)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, TIMEOUT_MS) != 1)
		die("no event in %d ms, waiting for %s", TIMEOUT_MS,
		    rdma_event_str(want));
	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event: %s", strerror(errno));
	/* A CONNECT_REQUEST comes on its listener with a new id. */
	if (ev->event != want ||
	    (id && (want == RDMA_CM_EVENT_CONNECT_REQUEST ? ev->listen_id :
							    ev->id) != id))
		die("%s (status %d) on %s id, want %s",
		    rdma_event_str(ev->event), ev->status,
		    ev->id == id ? "that" : "another", rdma_event_str(want));
	if (new_id)
		*new_id = ev->id;
	rdma_ack_cm_event(ev);
}

/* Nothing on ch for ms: a REJECTED here is the bug this checks. */
static void expect_quiet(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, ms) == 0)
		return;
	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event: %s", strerror(errno));
	die("%s (status %d) while the server was between listens",
	    rdma_event_str(ev->event), ev->status);
}

static void parse(const char *s, uint16_t port, struct sockaddr_in *a)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	if (inet_pton(AF_INET, s, &a->sin_addr) != 1)
		usage();
}

static struct rdma_cm_id *listener(struct rdma_event_channel *ch,
				   struct sockaddr_in *at)
{
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id: %s", strerror(errno));
	if (rdma_bind_addr(id, (struct sockaddr *)at))
		die("rdma_bind_addr: %s", strerror(errno));
	if (rdma_listen(id, 4))
		die("rdma_listen: %s", strerror(errno));
	return id;
}

static void make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};

	if (rdma_create_qp(id, NULL, &a))
		die("rdma_create_qp: %s", strerror(errno));
}

static void wait_wc(struct ibv_cq *cq, enum ibv_wc_opcode op, uint32_t len)
{
	struct ibv_wc wc;
	struct timespec t0, t;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!(n = ibv_poll_cq(cq, 1, &wc))) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 > TIMEOUT_MS)
			die("no completion in %d ms", TIMEOUT_MS);
	}
	if (n < 0 || wc.status != IBV_WC_SUCCESS || wc.opcode != op ||
	    (op == IBV_WC_RECV && wc.byte_len != len))
		die("completion: n %d status %s opcode %d length %u", n,
		    ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
}

int main(int argc, char **argv)
{
	struct sockaddr_in srv, cli;
	struct rdma_event_channel *ch, *cch;
	struct rdma_cm_id *lis, *c, *s;
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	char sbuf[64] = MSG, rbuf[64] = { 0 };
	struct ibv_mr *smr, *rmr;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND }, *sbad;
	int gap = 100, opt;

	while ((opt = getopt(argc, argv, "g:")) != -1) {
		if (opt != 'g')
			usage();
		gap = atoi(optarg);
		if (gap < 1 || gap > 5000)
			usage();
	}
	if (argc - optind != 3)
		usage();
	parse(argv[optind], (uint16_t)atoi(argv[optind + 2]), &srv);
	parse(argv[optind + 1], 0, &cli);

	/* Separate channels: the client's events are checked while the
	 * server has none to read. */
	ch = rdma_create_event_channel();
	cch = rdma_create_event_channel();
	if (!ch || !cch)
		die("rdma_create_event_channel: %s", strerror(errno));
	/* The first listen, and its end. */
	lis = listener(ch, &srv);
	if (rdma_destroy_id(lis))
		die("rdma_destroy_id (listener): %s", strerror(errno));

	if (rdma_create_id(cch, &c, NULL, RDMA_PS_TCP))
		die("rdma_create_id (client): %s", strerror(errno));
	if (rdma_resolve_addr(c, (struct sockaddr *)&cli,
			      (struct sockaddr *)&srv, 2000))
		die("rdma_resolve_addr: %s", strerror(errno));
	expect(cch, c, RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
	if (rdma_resolve_route(c, 2000))
		die("rdma_resolve_route: %s", strerror(errno));
	expect(cch, c, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL);
	make_qp(c);
	if (rdma_connect(c, &cp))
		die("rdma_connect: %s", strerror(errno));
	expect_quiet(cch, gap);

	/* The second listen takes the REQ that came meanwhile. */
	lis = listener(ch, &srv);
	expect(ch, lis, RDMA_CM_EVENT_CONNECT_REQUEST, &s);
	make_qp(s);
	rmr = ibv_reg_mr(s->pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	smr = ibv_reg_mr(c->pd, sbuf, sizeof(sbuf), 0);
	if (!rmr || !smr)
		die("ibv_reg_mr: %s", strerror(errno));
	sge = (struct ibv_sge){ (uintptr_t)rbuf, sizeof(rbuf), rmr->lkey };
	if (ibv_post_recv(s->qp, &rwr, &rbad))
		die("ibv_post_recv: %s", strerror(errno));
	if (rdma_accept(s, &cp))
		die("rdma_accept: %s", strerror(errno));
	expect(cch, c, RDMA_CM_EVENT_ESTABLISHED, NULL);
	expect(ch, s, RDMA_CM_EVENT_ESTABLISHED, NULL);

	sge = (struct ibv_sge){ (uintptr_t)sbuf, sizeof(MSG), smr->lkey };
	if (ibv_post_send(c->qp, &swr, &sbad))
		die("ibv_post_send: %s", strerror(errno));
	wait_wc(c->send_cq, IBV_WC_SEND, 0);
	wait_wc(s->recv_cq, IBV_WC_RECV, sizeof(MSG));
	if (memcmp(rbuf, MSG, sizeof(MSG)))
		die("the server received '%.*s', want '%s'", (int)sizeof(rbuf),
		    rbuf, MSG);

	if (rdma_disconnect(c))
		die("rdma_disconnect: %s", strerror(errno));
	expect(cch, c, RDMA_CM_EVENT_DISCONNECTED, NULL);
	expect(ch, s, RDMA_CM_EVENT_DISCONNECTED, NULL);
	rdma_destroy_qp(c);
	rdma_destroy_qp(s);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	rdma_destroy_id(c);
	rdma_destroy_id(s);
	rdma_destroy_id(lis);
	rdma_destroy_event_channel(cch);
	rdma_destroy_event_channel(ch);
	printf("rdmacm_relisten: connected through the second listener "
	       "%d ms after the REQ, one SEND checked\n", gap);
	return 0;
}
