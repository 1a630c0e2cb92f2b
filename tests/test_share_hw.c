// SPDX-License-Identifier: MIT
/*
 * A UIO device shared through its broker (docs/multiprocess.md), on the
 * fixture's virtual FPGAs ernicu0 (127.0.0.52) and ernicu1 (127.0.0.53):
 * what a process leaves in the IP when it is SIGKILLed, read back from
 * the IP's own registers by a second process on the same device.
 *
 * - Its PD-table entry, with the key the registration put there, is
 *   cleared once the broker sees the process gone: the key stops
 *   matching in the IP.
 * - Its QP is disabled in the IP, and its QP number is handed out again.
 * - A peer's RDMA WRITE through the dead key, on a connection between
 *   two live processes' QPs, gets a remote access error, and the memory
 *   of the live process on that device is untouched.
 * - A process that closes the device leaves its QPs and keys cleared too,
 *   and the device keeps serving the others.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "verbs_util.h"

#define DEVA "ernicu0"
#define IPA "127.0.0.52"
#define DEVB "ernicu1"
#define IPB "127.0.0.53"
#define BUF 4096u
#define GONE_MS 3000	/* the broker acts at once; this is a bound */

/* What the child tells the parent: its key and QP. */
struct victim {
	pid_t pid;
	uint32_t rkey, qpn;
	uint64_t addr;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A process of its own on DEVA with a remote-writable MR and a QP in RTR
 * (enabled in the IP): it reports them, then waits to be killed. */
static void victim_start(struct victim *v)
{
	int pfd[2];
	pid_t pid;

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ibv_context *ctx = tu_open(DEVA);
		struct ibv_pd *pd = ibv_alloc_pd(ctx);
		struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		uint8_t *buf = aligned_alloc(BUF, BUF);
		struct ibv_qp_attr a;
		struct ibv_mr *mr;
		struct ibv_qp *qp;
		struct victim out;
		int mask;

		if (!pd || !cq || !buf)
			_exit(2);
		memset(buf, 0x5A, BUF);
		mr = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE);
		qp = tu_rc_qp(pd, cq, 4, 4);
		tu_init_attr(&a, &mask);
		if (!mr || ibv_modify_qp(qp, &a, mask))
			_exit(3);
		tu_rtr_attr(&a, &mask, IPB, 2, 0);
		if (ibv_modify_qp(qp, &a, mask))
			_exit(3);
		out = (struct victim){ getpid(), mr->rkey, qp->qp_num,
				       (uintptr_t)buf };
		if (write(pfd[1], &out, sizeof(out)) != sizeof(out))
			_exit(4);
		for (;;)
			pause();
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], v, sizeof(*v)), (ssize_t)sizeof(*v));
	close(pfd[0]);
}

static void victim_kill(const struct victim *v)
{
	int st;

	assert_int_equal(kill(v->pid, SIGKILL), 0);
	assert_int_equal(waitpid(v->pid, &st, 0), v->pid);
}

/* PD-table slot of key: its entry holds the key's generation. */
static bool key_live(struct ibv_context *ctx, uint32_t key)
{
	uint32_t s = ERNIC_FIELD_GET(ERNIC_KEY_SLOT, key);

	return ERNIC_FIELD_GET(ERNIC_BUFRKEY_KEY,
			       tu_rd(ctx, ERNIC_PDT(s, ERNIC_BUFRKEY))) ==
		       ERNIC_FIELD_GET(ERNIC_KEY_GEN, key) &&
	       tu_rd(ctx, ERNIC_PDT(s, ERNIC_PDPDNUM)) != 0;
}

static bool key_cleared(struct ibv_context *ctx, uint32_t key)
{
	uint32_t s = ERNIC_FIELD_GET(ERNIC_KEY_SLOT, key);

	return !tu_rd(ctx, ERNIC_PDT(s, ERNIC_BUFRKEY)) &&
	       !tu_rd(ctx, ERNIC_PDT(s, ERNIC_ACCESSDESC)) &&
	       !tu_rd(ctx, ERNIC_PDT(s, ERNIC_PDPDNUM));
}

static bool qp_enabled(struct ibv_context *ctx, uint32_t qpn)
{
	return tu_rd(ctx, ERNIC_QP(qpn, ERNIC_QPCONF)) & ERNIC_QPCONF_QP_EN;
}

/* Wait, bounded, until the victim's key and QP are gone from the IP. */
static uint64_t wait_cleared(struct ibv_context *ctx, const struct victim *v)
{
	uint64_t t0 = now_ms();

	while (!key_cleared(ctx, v->rkey) || qp_enabled(ctx, v->qpn)) {
		if (now_ms() - t0 > GONE_MS)
			fail_msg("after %u ms the dead process's key 0x%x and "
				 "QP %u are still in the IP", GONE_MS, v->rkey,
				 v->qpn);
		usleep(1000);
	}
	return now_ms() - t0;
}

static void test_killed_process_keys_and_qp(void **state)
{
	struct ibv_context *ctx;
	struct victim v;
	uint64_t ms;

	(void)state;
	victim_start(&v);
	ctx = tu_open(DEVA);	/* a second process on the device */
	assert_true(key_live(ctx, v.rkey));
	assert_true(qp_enabled(ctx, v.qpn));
	victim_kill(&v);
	ms = wait_cleared(ctx, &v);
	printf("ok: the SIGKILLed process's key 0x%x and QP %u were cleared "
	       "in the IP within %llu ms\n", v.rkey, v.qpn,
	       (unsigned long long)ms);
	ibv_close_device(ctx);
}

/* One side of a connection, in this process. */
struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static void side_up(struct side *s, const char *dev, uint8_t fill)
{
	s->ctx = tu_open(dev);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 16, NULL, NULL, 0);
	s->buf = aligned_alloc(BUF, BUF);
	assert_non_null(s->pd);
	assert_non_null(s->cq);
	assert_non_null(s->buf);
	memset(s->buf, fill, BUF);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	assert_non_null(s->mr);
	s->qp = tu_rc_qp(s->pd, s->cq, 4, 4);
}

static void side_connect(struct side *s, const char *peer_ip, uint32_t qpn)
{
	struct ibv_qp_attr a;
	int mask;

	tu_init_attr(&a, &mask);
	assert_int_equal(ibv_modify_qp(s->qp, &a, mask), 0);
	tu_rtr_attr(&a, &mask, peer_ip, qpn, 0x100);
	assert_int_equal(ibv_modify_qp(s->qp, &a, mask), 0);
	tu_rts_attr(&a, &mask, 0x100);
	a.retry_cnt = 1;
	a.timeout = 10;
	assert_int_equal(ibv_modify_qp(s->qp, &a, mask), 0);
}

static void side_down(struct side *s)
{
	ibv_destroy_qp(s->qp);
	ibv_dereg_mr(s->mr);
	ibv_destroy_cq(s->cq);
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
	free(s->buf);
}

static enum ibv_wc_status write_once(struct side *s, uint64_t raddr,
				     uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, 64, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { raddr, rkey },
	}, *bad;
	struct ibv_wc wc;
	uint64_t t0 = now_ms();
	int n;

	assert_int_equal(ibv_post_send(s->qp, &wr, &bad), 0);
	while ((n = ibv_poll_cq(s->cq, 1, &wc)) == 0) {
		if (now_ms() - t0 > 10000)
			fail_msg("no completion for the WRITE in 10 s");
		usleep(100);
	}
	assert_int_equal(n, 1);
	return wc.status;
}

static void test_write_through_dead_key(void **state)
{
	struct side a, b;
	struct victim v;
	uint8_t want[BUF];

	(void)state;
	victim_start(&v);
	side_up(&a, DEVA, 0x11);	/* the live process's memory on DEVA */
	side_up(&b, DEVB, 0x22);
	side_connect(&a, IPB, b.qp->qp_num);
	side_connect(&b, IPA, a.qp->qp_num);
	/* The connection works: a WRITE with a live key lands. */
	assert_int_equal(write_once(&b, (uintptr_t)a.buf, a.mr->rkey),
			 IBV_WC_SUCCESS);
	assert_int_equal(a.buf[0], 0x22);
	memset(a.buf, 0x11, BUF);
	memcpy(want, a.buf, BUF);
	victim_kill(&v);
	wait_cleared(a.ctx, &v);
	assert_int_equal(write_once(&b, v.addr, v.rkey),
			 IBV_WC_REM_ACCESS_ERR);
	assert_memory_equal(a.buf, want, BUF);
	printf("ok: a WRITE through the dead process's key 0x%x: remote "
	       "access error, the live process's memory untouched\n", v.rkey);
	side_down(&b);
	side_down(&a);
}

/* A process that closes the device without destroying what it made:
 * nothing of it stays enabled in the IP. */
static void test_close_clears(void **state)
{
	struct ibv_context *watch = tu_open(DEVA);
	struct side s;
	uint32_t key, qpn;

	(void)state;
	side_up(&s, DEVA, 0x33);
	side_connect(&s, IPB, 2);
	key = s.mr->rkey;
	qpn = s.qp->qp_num;
	assert_true(key_live(watch, key));
	assert_true(qp_enabled(watch, qpn));
	/* no destroy: the close has to clear them */
	assert_int_equal(ibv_close_device(s.ctx), 0);
	assert_true(key_cleared(watch, key));
	assert_false(qp_enabled(watch, qpn));
	ibv_close_device(watch);
	free(s.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_killed_process_keys_and_qp),
		cmocka_unit_test(test_write_through_dead_key),
		cmocka_unit_test(test_close_clears),
	};

	tu_require_env();
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("share_hw", tests, NULL, NULL);
}
