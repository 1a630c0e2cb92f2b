// SPDX-License-Identifier: MIT
/*
 * Device, memory, CQs and QPs: plain libibverbs. The one exception is
 * optional: when the device is an ERNIC on a non-coherent bus, memory the
 * peer WRITEs or READs is named by no local work request, so it must be
 * synced by hand (ernicdv_sync_mr, man ernicdv(3)). The provider is
 * already loaded by libibverbs; we look the call up in it at run time,
 * so nothing but libibverbs is linked and other devices are untouched.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

#include "check.h"

/* PG332 Table 2-7: incoming invalid [15:0] / duplicate [31:16] packets */
#define ERNIC_ININVDUPCNT_OFF 0x20118u
/* STATQPi of QP i (PG332 Table 2-7): FATAL [0], NAK syndrome [22:16],
 * retries [26:24], RNR retries [30:28] */
#define ERNIC_STATQP_OFF(i) (0x20200u + ((i) - 1u) * 0x100u + 0x88u)

static int find_ernic(struct dl_phdr_info *info, size_t size, void *data)
{
	if (!strstr(info->dlpi_name, "libernic-rdmav"))
		return 0;
	snprintf(data, PATH_MAX, "%s", info->dlpi_name);
	return 1;
}

static void sync_lookup(struct chk *c)
{
	bool (*is_ernic)(struct ibv_device *dev);
	char path[PATH_MAX] = "";
	void *h;

	dl_iterate_phdr(find_ernic, path);
	if (!path[0])
		return;
	h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return;
	is_ernic = (bool (*)(struct ibv_device *))dlsym(h,
						"ernicdv_is_ernic_device");
	if (is_ernic && is_ernic(c->ctx->device)) {
		c->sync = (int (*)(struct ibv_mr *, void *, size_t, int))
			dlsym(h, "ernicdv_sync_mr");
		c->reg_read = (int (*)(struct ibv_context *, uint32_t,
				       uint32_t *))dlsym(h, "ernicdv_reg_read");
		c->qp_fatal = (int (*)(struct ibv_qp *, uint32_t *))dlsym(
			h, "ernicdv_query_qp_fatal");
		if (c->reg_read &&
		    c->reg_read(c->ctx, ERNIC_ININVDUPCNT_OFF, &c->inv_last))
			c->reg_read = NULL;
	}
	if (c->o.verbose && c->sync)
		printf("ernic_check: %s: an ERNIC: memory the peer accesses is synced with ernicdv_sync_mr (a no-op unless non-coherent)\n",
		       c->role);
}

void chk_counters(struct chk *c)
{
	uint32_t v;

	if (!c->reg_read || c->reg_read(c->ctx, ERNIC_ININVDUPCNT_OFF, &v))
		return;
	c->invalid_rx += (uint16_t)(v - c->inv_last);
	c->inv_last = v;
}

void chk_ernic_why(struct chk *c, struct ibv_qp *qp, char *buf, size_t len)
{
	const struct timespec ms = { 0, 1000000 };
	uint32_t st, code = 0;

	buf[0] = '\0';
	if (!c->reg_read || !qp ||
	    c->reg_read(c->ctx, ERNIC_STATQP_OFF(qp->qp_num), &st))
		return;
	/* The fatal code comes with the IP's interrupt: give it 20 ms. */
	for (int k = 0; c->qp_fatal && (st & 1) && k < 20; k++) {
		if (!c->qp_fatal(qp, &code) && code)
			break;
		nanosleep(&ms, NULL);
	}
	snprintf(buf, len, ", ERNIC STATQP %#x (fatal %u, NAK syndrome %#x, "
		 "retries %u, RNR retries %u), fatal code %#x", st, st & 1,
		 (st >> 16) & 0x7F, (st >> 24) & 7, (st >> 28) & 7, code);
}

void chk_sync(struct chk *c, struct ibv_mr *mr, void *addr, size_t len,
	      bool for_cpu)
{
	/* enum ernicdv_sync_dir: 0 for the CPU, 1 for the device */
	if (c->sync && len && c->sync(mr, addr, len, for_cpu ? 0 : 1))
		fprintf(stderr, "ernic_check: ernicdv_sync_mr failed\n");
}

int verbs_open(struct chk *c)
{
	struct ibv_device **list;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	int n, i;

	list = ibv_get_device_list(&n);
	if (!list || !n) {
		fprintf(stderr, "ernic_check: no RDMA devices\n");
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!c->o.dev ||
		    !strcmp(ibv_get_device_name(list[i]), c->o.dev))
			break;
	if (i == n) {
		fprintf(stderr, "ernic_check: no device %s\n", c->o.dev);
		ibv_free_device_list(list);
		return -1;
	}
	c->o.dev = strdup(ibv_get_device_name(list[i]));
	c->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!c->ctx) {
		fprintf(stderr, "ernic_check: cannot open %s: %s\n", c->o.dev,
			strerror(errno));
		return -1;
	}
	if (ibv_query_device(c->ctx, &da) ||
	    ibv_query_port(c->ctx, (uint8_t)c->o.ib_port, &pa)) {
		fprintf(stderr, "ernic_check: %s: cannot query device/port %d\n",
			c->o.dev, c->o.ib_port);
		return -1;
	}
	if (pa.state != IBV_PORT_ACTIVE) {
		fprintf(stderr, "ernic_check: %s port %d is not active (%s)\n",
			c->o.dev, c->o.ib_port, ibv_port_state_str(pa.state));
		return -1;
	}
	if (ibv_query_gid(c->ctx, (uint8_t)c->o.ib_port, c->o.gid_idx,
			  &c->gid)) {
		fprintf(stderr, "ernic_check: %s: no GID index %d\n", c->o.dev,
			c->o.gid_idx);
		return -1;
	}
	c->mine = (struct caps){
		.max_msg = pa.max_msg_sz, .mtu = 128u << pa.active_mtu,
		.max_qp_wr = (uint32_t)da.max_qp_wr,
		.rd_atom = (uint32_t)da.max_qp_rd_atom,
		.init_rd_atom = (uint32_t)da.max_qp_init_rd_atom,
	};
	c->max_sge = (uint32_t)(da.max_sge < CHK_MAX_SGE ? da.max_sge :
						  CHK_MAX_SGE);
	if (c->max_sge < 1)
		c->max_sge = 1;
	c->max_qp = (uint32_t)da.max_qp;
	c->pd = ibv_alloc_pd(c->ctx);
	if (!c->pd) {
		fprintf(stderr, "ernic_check: ibv_alloc_pd: %s\n", strerror(errno));
		return -1;
	}
	sync_lookup(c);
	return 0;
}

static uint64_t pages(uint64_t n)
{
	return (n + 4095) & ~4095ull;
}

static void *map(uint64_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static struct ibv_mr *reg(struct chk *c, void *p, uint64_t len, int acc,
			  const char *what)
{
	struct ibv_mr *mr = ibv_reg_mr(c->pd, p, len, acc);

	if (!mr)
		fprintf(stderr, "ernic_check: ibv_reg_mr(%s, %llu bytes): %s\n",
			what, (unsigned long long)len, strerror(errno));
	return mr;
}

/* Memory: per QP a local ring (send sources, READ destinations) and a
 * receive ring in one MR; per QP the WRITE area the peer may write; one
 * read source for all QPs, filled with this side's pattern. */
static int setup_mem(struct chk *c)
{
	const uint64_t lstride = pages(c->lr_size) + pages(c->rr_size);
	const uint64_t wstride = pages(c->wt_size);
	const uint64_t n = c->p.nqp, rs = pages(c->rs_size);
	const int lw = IBV_ACCESS_LOCAL_WRITE;

	c->lmem = map(n * lstride);
	c->wmem = map(n * wstride);
	c->rmem = map(rs);
	if (!c->lmem || !c->wmem || !c->rmem) {
		fprintf(stderr, "ernic_check: cannot map %llu MiB of buffers\n",
			(unsigned long long)(n * (lstride + wstride) + rs) >>
				20);
		return -1;
	}
	pattern_fill(c->rmem, chk_rand(c->p.seed, 0, c->my_dir, 0, LANE_RSRC),
		     0, c->rs_size);
	if (c->o.corrupt >= 0 && c->o.corrupt_kind == OP_READ) {
		c->rmem[c->rs_size / 2] ^= 0x5a;
		printf("ernic_check: self-test: corrupted byte %llu of the read source\n",
		       (unsigned long long)c->rs_size / 2);
	}
	c->lmr = reg(c, c->lmem, n * lstride, lw, "local");
	c->wmr = reg(c, c->wmem, n * wstride, lw | IBV_ACCESS_REMOTE_WRITE,
		     "write area");
	c->rmr = reg(c, c->rmem, rs, IBV_ACCESS_REMOTE_READ, "read source");
	if (!c->lmr || !c->wmr || !c->rmr)
		return -1;
	chk_sync(c, c->rmr, c->rmem, rs, false);
	chk_sync(c, c->wmr, c->wmem, n * wstride, false);
	for (uint32_t i = 0; i < n; i++) {
		struct cqp *q = &c->q[i];

		q->lr = (struct ring){ .base = c->lmem + i * lstride,
				       .size = c->lr_size };
		q->rr = (struct ring){ .base = q->lr.base + pages(c->lr_size),
				       .size = c->rr_size };
		q->wt = c->wmem + i * wstride;
	}
	return 0;
}

static int make_cq(struct chk *c, struct ibv_cq **cq, uint64_t n,
		   const char *what)
{
	struct ibv_device_attr da;

	if (!ibv_query_device(c->ctx, &da) && n > (uint64_t)da.max_cqe) {
		fprintf(stderr, "ernic_check: the %s CQ needs %llu entries, %s allows %d: use fewer QPs (-q) or a smaller -w/-r\n",
			what, (unsigned long long)n, c->o.dev, da.max_cqe);
		return -1;
	}
	*cq = ibv_create_cq(c->ctx, (int)n, NULL, NULL, 0);
	if (!*cq) {
		fprintf(stderr, "ernic_check: ibv_create_cq(%llu): %s\n",
			(unsigned long long)n, strerror(errno));
		return -1;
	}
	return 0;
}

/* max_inline_data is not in ibv_device_attr: ask for less until the
 * device agrees, and use what it grants. */
static int make_qp(struct chk *c, struct cqp *q)
{
	static const uint32_t inl[] = { 256, 64, 16, 0 };
	struct ibv_qp_init_attr ia;
	int err = 0;

	for (size_t k = 0; k < sizeof(inl) / sizeof(inl[0]) && !q->qp; k++) {
		ia = (struct ibv_qp_init_attr){
			.send_cq = c->scq, .recv_cq = c->rcq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = c->p.window,
				 .max_recv_wr = c->p.rx_depth,
				 .max_send_sge = c->max_sge,
				 .max_recv_sge = c->max_sge,
				 .max_inline_data = inl[k] },
		};
		q->qp = ibv_create_qp(c->pd, &ia);
		if (!q->qp)
			err = errno;
	}
	if (!q->qp) {
		fprintf(stderr, "ernic_check: ibv_create_qp (QP %u): %s\n",
			q->idx, strerror(err));
		return -1;
	}
	q->max_inline = ia.cap.max_inline_data;
	q->max_sge = ia.cap.max_send_sge < ia.cap.max_recv_sge ?
		     ia.cap.max_send_sge : ia.cap.max_recv_sge;
	if (q->max_sge > c->max_sge)
		q->max_sge = c->max_sge;
	if (q->max_sge < 1)
		q->max_sge = 1;
	if (q->max_inline < c->max_inline || q->idx == 0)
		c->max_inline = q->max_inline;
	if (c->o.npsn) {
		uint32_t k = c->run ? c->run - 1 : 0;

		q->psn = c->o.psn[k < c->o.npsn ? k : c->o.npsn - 1];
	} else {
		q->psn = (uint32_t)chk_rand(c->p.seed, q->idx, c->my_dir, 0,
					    LANE_PSN) & 0xffffff;
	}
	return 0;
}

int verbs_setup(struct chk *c)
{
	const uint64_t n = c->p.nqp;

	if (n > c->max_qp) {
		fprintf(stderr, "ernic_check: %s has room for %u QPs, -q %u\n",
			c->o.dev, c->max_qp, c->p.nqp);
		return -1;
	}
	c->q = calloc(n, sizeof(*c->q));
	if (!c->q)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		struct cqp *q = &c->q[i];

		q->idx = i;
		q->sq = calloc(c->p.window, sizeof(*q->sq));
		q->rq = calloc(c->p.rx_depth, sizeof(*q->rq));
		if (!q->sq || !q->rq)
			return -1;
		q->err_status = -1;
		q->peer_n = c->p.iters ? c->p.iters : UINT64_MAX;
		q->nops = c->p.iters;
		script_init(&q->req, c, i, c->my_dir);
		script_init(&q->rx, c, i, c->peer_dir);
	}
	if (setup_mem(c) ||
	    make_cq(c, &c->scq, n * c->p.window, "send") ||
	    make_cq(c, &c->rcq, n * c->p.rx_depth, "receive"))
		return -1;
	for (uint32_t i = 0; i < n; i++)
		if (make_qp(c, &c->q[i]))
			return -1;
	return 0;
}

static int modify(struct cqp *q, struct ibv_qp_attr *a, int mask,
		  const char *to)
{
	int rc = ibv_modify_qp(q->qp, a, mask);

	if (rc)
		fprintf(stderr, "ernic_check: QP %u: modify to %s: %s\n", q->idx,
			to, strerror(rc));
	return rc;
}

int verbs_connect(struct chk *c, const uint32_t *peer_qpn,
		  const uint32_t *peer_psn)
{
	for (uint32_t i = 0; i < c->p.nqp; i++) {
		struct cqp *q = &c->q[i];
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT, .pkey_index = 0,
			.port_num = (uint8_t)c->o.ib_port,
			.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
					   IBV_ACCESS_REMOTE_WRITE |
					   IBV_ACCESS_REMOTE_READ,
		};

		if (modify(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT"))
			return -1;
		a = (struct ibv_qp_attr){
			.qp_state = IBV_QPS_RTR, .path_mtu = c->path_mtu,
			.dest_qp_num = peer_qpn[i], .rq_psn = peer_psn[i],
			.max_dest_rd_atomic = (uint8_t)c->dest_rd_atomic,
			.min_rnr_timer = (uint8_t)c->p.min_rnr_timer,
			.ah_attr = {
				.is_global = 1,
				.port_num = (uint8_t)c->o.ib_port,
				.grh = { .dgid = c->peer_gid, .hop_limit = 64,
					 .sgid_index = (uint8_t)c->o.gid_idx },
			},
		};
		if (modify(q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
			   "RTR"))
			return -1;
		a = (struct ibv_qp_attr){
			.qp_state = IBV_QPS_RTS, .sq_psn = q->psn,
			.timeout = (uint8_t)c->p.qp_timeout,
			.retry_cnt = (uint8_t)c->p.retry_cnt,
			.rnr_retry = (uint8_t)c->p.rnr_retry,
			.max_rd_atomic = (uint8_t)c->rd_atomic,
		};
		if (modify(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			   IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC, "RTS"))
			return -1;
	}
	return 0;
}

/* What one run made; the device and its PD stay (serve mode). */
void verbs_close_run(struct chk *c)
{
	const uint64_t n = c->p.nqp;

	for (uint32_t i = 0; c->q && i < n; i++) {
		if (c->q[i].qp && ibv_destroy_qp(c->q[i].qp))
			fprintf(stderr, "ernic_check: ibv_destroy_qp failed\n");
		free(c->q[i].sq);
		free(c->q[i].rq);
	}
	if (c->scq)
		ibv_destroy_cq(c->scq);
	if (c->rcq)
		ibv_destroy_cq(c->rcq);
	if (c->lmr)
		ibv_dereg_mr(c->lmr);
	if (c->wmr)
		ibv_dereg_mr(c->wmr);
	if (c->rmr)
		ibv_dereg_mr(c->rmr);
	if (c->lmem)
		munmap(c->lmem, n * (pages(c->lr_size) + pages(c->rr_size)));
	if (c->wmem)
		munmap(c->wmem, n * pages(c->wt_size));
	if (c->rmem)
		munmap(c->rmem, pages(c->rs_size));
	free(c->q);
	c->q = NULL;
	c->scq = c->rcq = NULL;
	c->lmr = c->wmr = c->rmr = NULL;
	c->lmem = c->wmem = c->rmem = NULL;
}

void verbs_close(struct chk *c)
{
	verbs_close_run(c);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->ctx)
		ibv_close_device(c->ctx);
	c->pd = NULL;
	c->ctx = NULL;
}
