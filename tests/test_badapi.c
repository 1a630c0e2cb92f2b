// SPDX-License-Identifier: MIT
/*
 * test_badapi: the bad-API-input matrix (test_badapi.h). Each case runs
 * in a forked child, so a crash is a result, not the end of the run: the
 * parent reports, per case, the expected result against what the call
 * returned (errno names), the signal that killed the child and the step
 * it was in, and every failed check after the call. The test fails if
 * any case does, listing them all at the end.
 *
 * BADAPI_DEV / BADAPI_PEER name the device under test and its peer
 * (default: the fixture's ernict0 and ernict1); their addresses are read
 * from GID 0. BADAPI_CASE=<glob> runs the matching cases only.
 */
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_badapi.h"
#include "verbs_util.h"

#define CASE_TIMEOUT_S 60

/* ---- Child side: what the case reports to the parent ---- */

/* Lines on a memfd the parent reads once the child is gone:
 * S stage, O observed result, F failure, K skip. */
static int proto_fd = -1;
static const struct ba_case *cur;
static bool called, matched, failed;

static void proto(char tag, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void proto(char tag, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "%c ", tag);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(proto_fd, line, (size_t)n) != n)
		_exit(3);
}

const char *ba_errname(int e)
{
	static char buf[4][32];
	static int k;
	const char *s = e > 0 ? strerrorname_np(e) : NULL;

	if (s)
		return s;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%d", e);
	return buf[k];
}

static void exp_str(const struct ba_exp *x, char *out, size_t len)
{
	char e[64];

	snprintf(e, sizeof(e), "%s%s%s", ba_errname(x->err[0]),
		 x->err[1] ? " or " : "",
		 x->err[1] ? ba_errname(x->err[1]) : "");
	switch (x->kind) {
	case BA_ERR:
		snprintf(out, len, "%s", e);
		break;
	case BA_NULL:
		snprintf(out, len, "NULL with errno %s", e);
		break;
	case BA_OK:
		snprintf(out, len, "success");
		break;
	case BA_NEG:
		snprintf(out, len, "a negative value");
		break;
	case BA_LE0:
		snprintf(out, len, "0 or a negative value");
		break;
	}
}

void ba_call(void)
{
	proto('S', "the call under test");
	errno = 0;
}

static void observed(bool is_ptr, long ret, int err)
{
	const struct ba_exp *x = &cur->exp;
	char want[96], got[96];
	bool ok;

	called = true;
	if (is_ptr && ret)
		snprintf(got, sizeof(got), "a valid object");
	else if (is_ptr)
		snprintf(got, sizeof(got), "NULL with errno %s",
			 ba_errname(err));
	else if (ret > 0)
		snprintf(got, sizeof(got), "%s", ba_errname((int)ret));
	else
		snprintf(got, sizeof(got), "%ld%s%s", ret,
			 ret < 0 ? ", errno " : "",
			 ret < 0 ? ba_errname(err) : "");
	switch (x->kind) {
	case BA_ERR:
		ok = !is_ptr && ret && (ret == x->err[0] || ret == x->err[1]);
		break;
	case BA_NULL:
		ok = is_ptr && !ret && err &&
		     (err == x->err[0] || err == x->err[1]);
		break;
	case BA_OK:
		ok = is_ptr ? ret != 0 : ret == 0;
		break;
	case BA_NEG:
		ok = !is_ptr && ret < 0;
		break;
	default:
		ok = !is_ptr && ret <= 0;
		break;
	}
	matched = ok;
	proto('O', "%s", got);
	if (!ok) {
		exp_str(x, want, sizeof(want));
		failed = true;
		proto('F', "expected %s; got %s%s", want, got,
		      x->kind != BA_OK && (is_ptr ? ret : !ret) ?
			      " (silent success)" : "");
	}
	proto('S', "the checks after the call");
}

long ba_int(long ret)
{
	observed(false, ret, errno);
	return ret;
}

void *ba_ptr(void *p)
{
	observed(true, p != NULL, errno);
	return p;
}

bool ba_refused(void)
{
	return matched && cur->exp.kind != BA_OK;
}

static const char *base(const char *file)
{
	const char *b = strrchr(file, '/');

	return b ? b + 1 : file;
}

void ba_fail(const char *file, int line, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	failed = true;
	proto('F', "%s (%s:%d)", msg, base(file), line);
}

_Noreturn void ba_setup_failed(const char *file, int line, const char *what,
			       int err)
{
	proto('F', "%s failed: %s (%s:%d, errno %s)",
	      called ? "a step after the call" : "setup", what, base(file),
	      line, ba_errname(err));
	_exit(1);
}

_Noreturn void ba_skip(const char *why)
{
	proto('K', "%s", why);
	_exit(0);
}

/* ---- Fixture ---- */

static const char *dev_name(bool peer)
{
	const char *v = getenv(peer ? "BADAPI_PEER" : "BADAPI_DEV");

	return v && *v ? v : peer ? DEV4B : DEV4;
}

struct ibv_context *ba_open_ctx(bool peer)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	REQUIRE(list);
	for (int i = 0; list[i] && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev_name(peer)))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	REQUIRE(ctx);
	return ctx;
}

static void gid_ip(const union ibv_gid *g, char *ip)
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(g->raw, v4, sizeof(v4)))
		inet_ntop(AF_INET, &g->raw[12], ip, INET6_ADDRSTRLEN);
	else
		inet_ntop(AF_INET6, g->raw, ip, INET6_ADDRSTRLEN);
}

static void side_open(struct ba_side *s, bool peer)
{
	union ibv_gid gid;

	s->ctx = ba_open_ctx(peer);
	REQUIRE(ibv_query_gid(s->ctx, 1, 0, &gid) == 0);
	gid_ip(&gid, s->ip);
	s->pd = ibv_alloc_pd(s->ctx);
	REQUIRE(s->pd);
	s->cq = ibv_create_cq(s->ctx, 256, NULL, NULL, 0);
	REQUIRE(s->cq);
	s->buf = mmap(NULL, BA_BUF, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(s->buf != MAP_FAILED);
	s->mr = ibv_reg_mr(s->pd, s->buf, BA_BUF,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ);
	REQUIRE(s->mr);
}

void ba_open(struct ba_ctx *c, bool peer)
{
	side_open(&c->a, false);
	REQUIRE(ibv_query_device(c->a.ctx, &c->dev) == 0);
	REQUIRE(ibv_query_port(c->a.ctx, 1, &c->port) == 0);
	if (peer)
		side_open(&c->b, true);
}

struct ibv_qp *ba_qp(struct ba_ctx *c, struct ba_side *s, uint32_t sq,
		     uint32_t rq)
{
	/* As many SGEs as the device has: the cases go one beyond. */
	struct ibv_qp_init_attr ia = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = { .max_send_wr = sq, .max_recv_wr = rq,
			 .max_send_sge = (uint32_t)c->dev.max_sge,
			 .max_recv_sge = (uint32_t)c->dev.max_sge },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(s->pd, &ia);

	REQUIRE(qp);
	return qp;
}

struct ibv_qp_cap ba_cap(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	REQUIRE(ibv_query_qp(qp, &a, IBV_QP_CAP, &ia) == 0);
	return a.cap;
}

enum ibv_qp_state ba_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	REQUIRE(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) == 0);
	return a.qp_state;
}

void ba_init_attr(struct ibv_qp_attr *a, int *mask)
{
	tu_init_attr(a, mask);
}

/* Fast RNR retries, never exhausted: a receiver posts as it goes. */
void ba_rtr_attr(struct ibv_qp_attr *a, int *mask, const char *peer,
		 uint32_t dqpn)
{
	tu_rtr_attr(a, mask, peer, dqpn, BA_PSN);
	a->min_rnr_timer = 1;
}

void ba_rts_attr(struct ibv_qp_attr *a, int *mask)
{
	tu_rts_attr(a, mask, BA_PSN);
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
}

static void move(struct ibv_qp *qp, enum ibv_qp_state to, const char *peer,
		 uint32_t dqpn)
{
	struct ibv_qp_attr a;
	int m;

	if (to == IBV_QPS_INIT) {
		ba_init_attr(&a, &m);
	} else if (to == IBV_QPS_RTR) {
		ba_rtr_attr(&a, &m, peer, dqpn);
	} else if (to == IBV_QPS_RTS) {
		ba_rts_attr(&a, &m);
	} else {
		memset(&a, 0, sizeof(a));
		a.qp_state = to;
		m = IBV_QP_STATE;
	}
	REQUIRE(ibv_modify_qp(qp, &a, m) == 0);
}

void ba_peer_for(struct ba_ctx *c)
{
	c->qb = ba_qp(c, &c->b, 16, 16);
	ba_peer_up(c);
}

void ba_peer_up(struct ba_ctx *c)
{
	move(c->qb, IBV_QPS_INIT, NULL, 0);
	move(c->qb, IBV_QPS_RTR, c->a.ip, c->qa->qp_num);
	move(c->qb, IBV_QPS_RTS, NULL, 0);
}

void ba_up(struct ba_ctx *c)
{
	enum ibv_qp_state s = ba_state(c->qa);

	if (s != IBV_QPS_RESET && s != IBV_QPS_INIT && s != IBV_QPS_RTR &&
	    s != IBV_QPS_RTS) {
		move(c->qa, IBV_QPS_RESET, NULL, 0);
		s = IBV_QPS_RESET;
	}
	if (s == IBV_QPS_RESET)
		move(c->qa, IBV_QPS_INIT, NULL, 0);
	if (s <= IBV_QPS_INIT)
		move(c->qa, IBV_QPS_RTR, c->b.ip, c->qb->qp_num);
	if (s <= IBV_QPS_RTR)
		move(c->qa, IBV_QPS_RTS, NULL, 0);
}

void ba_pair(struct ba_ctx *c, uint32_t sq, uint32_t rq)
{
	c->qa = ba_qp(c, &c->a, sq, rq);
	ba_peer_for(c);
	ba_up(c);
}

void ba_goto(struct ba_ctx *c, enum ibv_qp_state s)
{
	if (s == IBV_QPS_RESET)
		return;
	move(c->qa, IBV_QPS_INIT, NULL, 0);
	if (s == IBV_QPS_INIT)
		return;
	move(c->qa, IBV_QPS_RTR, c->b.ip, c->qb->qp_num);
	if (s == IBV_QPS_RTR)
		return;
	move(c->qa, IBV_QPS_RTS, NULL, 0);
	if (s != IBV_QPS_RTS)
		move(c->qa, s, NULL, 0);
}

struct ibv_sge ba_sge(void *addr, uint32_t len, uint32_t lkey)
{
	return (struct ibv_sge){ .addr = (uintptr_t)addr, .length = len,
				 .lkey = lkey };
}

void *ba_guarded(size_t n, size_t size)
{
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	REQUIRE(m != MAP_FAILED);
	REQUIRE(n * size <= pg);
	REQUIRE(mprotect(m + pg, pg, PROT_NONE) == 0);
	return m + pg - n * size;
}

uint32_t ba_sqpi(struct ba_ctx *c, struct ibv_qp *qp)
{
	uint32_t v = 0;

	REQUIRE(ernicdv_reg_read(qp->context, ERNIC_QP(qp->qp_num, ERNIC_SQPI),
				 &v) == 0);
	return v;
}

static int elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int)((t.tv_sec - t0->tv_sec) * 1000 +
		     (t.tv_nsec - t0->tv_nsec) / 1000000);
}

int ba_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	struct timespec t0;
	int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		int k = ibv_poll_cq(cq, n - got, &wc[got]);

		if (!CHECK(k >= 0, "ibv_poll_cq returned %d", k))
			break;
		got += k;
		if (elapsed_ms(&t0) >= ms)
			break;
	}
	return got;
}

bool ba_quiet(struct ibv_cq *cq, const char *which)
{
	struct ibv_wc wc;

	if (!ba_poll(cq, &wc, 1, 50))
		return true;
	return CHECK(false, "%s: unexpected completion wr_id %#llx, status %s, "
		     "opcode %d, byte_len %u", which,
		     (unsigned long long)wc.wr_id,
		     ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
}

bool ba_wc_is(const struct ibv_wc *wc, uint64_t id, enum ibv_wc_opcode op,
	      uint32_t len, const char *which)
{
	bool ok = wc->wr_id == id && wc->status == IBV_WC_SUCCESS &&
		  wc->opcode == op &&
		  (op != IBV_WC_RECV || wc->byte_len == len);

	return CHECK(ok, "%s: expected wr_id %#llx %s opcode %d (%u bytes), "
		     "got wr_id %#llx status %s opcode %d byte_len %u", which,
		     (unsigned long long)id, ibv_wc_status_str(IBV_WC_SUCCESS),
		     op, len, (unsigned long long)wc->wr_id,
		     ibv_wc_status_str(wc->status), wc->opcode, wc->byte_len);
}

void ba_check_exchange(struct ba_ctx *c)
{
	const uint32_t len = 40;
	uint8_t *src = c->a.buf + BA_BUF - 4096;
	uint8_t *dst = c->b.buf + BA_BUF - 4096;
	struct ibv_sge ss = ba_sge(src, len, c->a.mr->lkey);
	struct ibv_sge rs = ba_sge(dst, 256, c->b.mr->lkey);
	struct ibv_send_wr wr = { .wr_id = 0x5e4d, .sg_list = &ss,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr rwr = { .wr_id = 0x4ecf, .sg_list = &rs,
				   .num_sge = 1 };
	struct ibv_send_wr *bad;
	struct ibv_recv_wr *rbad;
	struct ibv_wc wc;

	for (uint32_t k = 0; k < len; k++)
		src[k] = (uint8_t)(0x30 + k);
	memset(dst, 0, 256);
	if (!CHECK(ibv_post_recv(c->qb, &rwr, &rbad) == 0,
		   "afterwards: a valid receive is refused") ||
	    !CHECK(ibv_post_send(c->qa, &wr, &bad) == 0,
		   "afterwards: a valid SEND is refused"))
		return;
	if (CHECK(ba_poll(c->a.cq, &wc, 1, BA_WAIT_MS) == 1,
		  "afterwards: no completion for a valid SEND"))
		ba_wc_is(&wc, 0x5e4d, IBV_WC_SEND, len,
			 "afterwards, the sender's CQ");
	if (CHECK(ba_poll(c->b.cq, &wc, 1, BA_WAIT_MS) == 1,
		  "afterwards: the peer received nothing") &&
	    ba_wc_is(&wc, 0x4ecf, IBV_WC_RECV, len,
		     "afterwards, the receiver's CQ"))
		CHECK(!memcmp(src, dst, len),
		      "afterwards: wrong data received");
	ba_quiet(c->a.cq, "afterwards, the sender's CQ");
	ba_quiet(c->b.cq, "afterwards, the receiver's CQ");
}

/* ---- Parent side ---- */

struct result {
	bool fail, skip;
	char text[4096];
};

static void child(const struct ba_case *k, int pfd, int lfd)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
				    SIGSYS, SIGALRM, SIGPIPE };
	struct ba_ctx c;

	/* cmocka catches these in the parent: here they end the case. */
	for (size_t s = 0; s < sizeof(sigs) / sizeof(sigs[0]); s++)
		signal(sigs[s], SIG_DFL);
	dup2(lfd, STDOUT_FILENO);
	dup2(lfd, STDERR_FILENO);
	proto_fd = pfd;
	cur = k;
	alarm(CASE_TIMEOUT_S);
	memset(&c, 0, sizeof(c));
	c.arg = k->arg;
	proto('S', "setup");
	k->fn(&c);
	if (!called)
		proto('F', "the case made no call under test");
	_exit(failed || !called ? 1 : 0);
}

static void append(struct result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void append(struct result *r, const char *fmt, ...)
{
	size_t n = strlen(r->text);
	va_list ap;

	if (n + 1 >= sizeof(r->text))
		return;
	va_start(ap, fmt);
	vsnprintf(r->text + n, sizeof(r->text) - n, fmt, ap);
	va_end(ap);
}

static char *slurp(int fd)
{
	off_t len = lseek(fd, 0, SEEK_END);
	char *s = calloc(1, (size_t)(len > 0 ? len : 0) + 1);

	if (s && len > 0 && pread(fd, s, (size_t)len, 0) != len)
		s[0] = '\0';
	return s;
}

/* Wait for the child; a hung one is killed (alarm() is its own limit).
 * Returns the wait status, or -1. */
static int reap(pid_t pid)
{
	const struct timespec step = { 0, 5000000 };
	pid_t w;
	int st = 0;

	for (int t = 0; (w = waitpid(pid, &st, WNOHANG)) == 0; t++) {
		if (t == (CASE_TIMEOUT_S + 10) * 200)
			kill(pid, SIGKILL);
		nanosleep(&step, NULL);
	}
	return w == pid ? st : -1;
}

static void run_case(const struct ba_case *k, struct result *r)
{
	int pfd = memfd_create("badapi-proto", MFD_CLOEXEC);
	int lfd = memfd_create("badapi-log", MFD_CLOEXEC);
	char want[96], *proto_txt, *log, *line, *save;
	const char *stage = "?";
	bool seen = false;
	pid_t pid;
	int st;

	memset(r, 0, sizeof(*r));
	if (pfd < 0 || lfd < 0) {
		r->fail = true;
		append(r, "memfd_create: %s\n", strerror(errno));
		return;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0)
		child(k, pfd, lfd);
	st = pid > 0 ? reap(pid) : -1;
	proto_txt = slurp(pfd);
	log = slurp(lfd);
	close(pfd);
	close(lfd);
	if (st == -1 || !proto_txt || !log) {
		r->fail = true;
		append(r, "fork/wait: %s\n", strerror(errno));
		goto out;
	}
	for (line = strtok_r(proto_txt, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == 'S') {
			stage = line + 2;
		} else if (line[0] == 'O') {
			seen = true;
		} else if (line[0] == 'K') {
			r->skip = true;
			append(r, "%s\n", line + 2);
		} else if (line[0] == 'F') {
			r->fail = true;
			append(r, "  %s\n", line + 2);
		}
	}
	exp_str(&k->exp, want, sizeof(want));
	if (WIFSIGNALED(st)) {
		const char *sig = sigabbrev_np(WTERMSIG(st));
		const char *why = WTERMSIG(st) == SIGALRM ||
					  WTERMSIG(st) == SIGKILL ?
					  " (timeout)" : "";

		r->fail = true;
		if (seen)
			append(r, "  killed by SIG%s%s during %s\n",
			       sig ? sig : "?", why, stage);
		else
			append(r,
			       "  expected %s; got signal SIG%s%s during %s\n",
			       want, sig ? sig : "?", why, stage);
	} else if (WEXITSTATUS(st) && !r->fail) {
		r->fail = true;
		append(r, "  child exited with %d during %s\n",
		       WEXITSTATUS(st), stage);
	}
	if (r->fail && log[0]) {
		int n = 0;

		append(r, "  its output:\n");
		for (line = strtok_r(log, "\n", &save); line && n < 12;
		     line = strtok_r(NULL, "\n", &save), n++)
			append(r, "    | %s\n", line);
	}
out:
	free(proto_txt);
	free(log);
}

static void test_matrix(void **state)
{
	static const struct {
		const struct ba_case *cases;
		const size_t *n;
	} groups[] = {
		{ ba_mr_cases, &ba_mr_ncases },
		{ ba_res_cases, &ba_res_ncases },
		{ ba_modify_cases, &ba_modify_ncases },
		{ ba_post_cases, &ba_post_ncases },
	};
	const char *filter = getenv("BADAPI_CASE");
	char *summary = NULL;
	size_t slen = 0;
	FILE *sf = open_memstream(&summary, &slen);
	int total = 0, nfail = 0, nskip = 0;
	struct result r;

	assert_non_null(sf);
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		for (size_t i = 0; i < *groups[g].n; i++) {
			const struct ba_case *k = &groups[g].cases[i];

			if (filter && fnmatch(filter, k->name, 0))
				continue;
			total++;
			run_case(k, &r);
			if (r.fail) {
				nfail++;
				printf("FAIL %s\n%s", k->name, r.text);
				fprintf(sf, "  %s\n", k->name);
			} else if (r.skip) {
				nskip++;
				printf("skip %s: %s", k->name, r.text);
			} else {
				printf("ok   %s\n", k->name);
			}
			fflush(stdout);
		}
	}
	fclose(sf);
	printf("badapi: %d cases, %d passed, %d failed, %d skipped\n", total,
	       total - nfail - nskip, nfail, nskip);
	if (nfail)
		printf("failed cases:\n%s", summary);
	free(summary);
	fflush(stdout);
	if (nfail)
		fail_msg("%d of %d bad-API cases failed", nfail, total);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matrix),
	};
	struct ibv_device **list;
	int found = 0;

	tu_require_env();
	list = ibv_get_device_list(NULL);
	for (int i = 0; list && list[i]; i++)
		for (int p = 0; p < 2; p++)
			found |= !strcmp(ibv_get_device_name(list[i]),
					 dev_name(p)) << p;
	if (list)
		ibv_free_device_list(list);
	if (found != 3) {
		printf("SKIP: device %s not found (BADAPI_DEV / BADAPI_PEER)\n",
		       dev_name(found & 1));
		return 77;
	}
	return cmocka_run_group_tests_name("badapi", tests, NULL, NULL);
}
