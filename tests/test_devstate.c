// SPDX-License-Identifier: MIT
/*
 * The device state file shared between processes (common/ernic_devstate.c),
 * with real processes: forked children allocate QPs and PD-table slots at
 * once and never get the same one; a child killed while it holds the lock,
 * and one that exits without detaching, are reclaimed with all they owned;
 * a recycled pid is not taken for its old process; CM service IDs are
 * claimed by one process at a time; a file of another version is refused
 * with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "ernic_devstate.h"

static char path[64];

static int setup(void **state)
{
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/ernic-ds-test.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	unlink(path);		/* ernic_ds_open makes it */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void ds_open(struct ernic_ds_handle *h)
{
	char err[256];

	if (ernic_ds_open(h, path, err, sizeof(err)))
		fail_msg("%s", err);
}

static void test_open_twice(void **state)
{
	struct ernic_ds_handle a, b;
	int s;

	(void)state;
	ds_open(&a);
	ds_open(&b);
	assert_int_equal(ernic_ds_lock(&a, NULL, NULL), 0);
	s = ernic_ds_attach(a.ds, getpid());
	assert_int_equal(s, 0);
	assert_int_equal(ernic_ds_qp_alloc(a.ds, (uint32_t)s, 2, 10), 2);
	ernic_ds_unlock(&a);
	/* the other mapping sees it */
	assert_int_equal(b.ds->qp_owner[2], 0);
	assert_int_equal(b.ds->proc[0].pid, getpid());
	assert_true(ernic_ds_alive(b.ds, 0));
	assert_int_equal(ernic_ds_lock(&b, NULL, NULL), 0);
	ernic_ds_detach(b.ds, 0);
	ernic_ds_unlock(&b);
	assert_int_equal(a.ds->qp_owner[2], ERNIC_DS_NONE);
	ernic_ds_close(&a);
	ernic_ds_close(&b);
}

#define KIDS 8
#define PER 30		/* 8 x 30 = 240 of 254 QPs */

/* Children allocate QPs and PD-table slots at once, each under the lock
 * for one allocation, and report them: no two got the same. */
static void test_concurrent(void **state)
{
	int fds[2];
	uint8_t got_qp[ERNIC_DS_QPS] = { 0 };
	uint8_t got_pdt[ERNIC_PDT_ENTRIES] = { 0 };
	struct ernic_ds_handle h;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	for (int k = 0; k < KIDS; k++) {
		if (fork() == 0) {
			struct ernic_ds_handle c;
			int32_t out[2 * PER];
			char err[256];
			int s;

			close(fds[0]);
			if (ernic_ds_open(&c, path, err, sizeof(err)))
				_exit(2);
			ernic_ds_lock(&c, NULL, NULL);
			s = ernic_ds_attach(c.ds, getpid());
			ernic_ds_unlock(&c);
			for (int i = 0; i < PER; i++) {
				uint8_t gen;

				ernic_ds_lock(&c, NULL, NULL);
				out[2 * i] = ernic_ds_qp_alloc(c.ds,
							       (uint32_t)s, 2,
							       255);
				out[2 * i + 1] = ernic_ds_pdt_alloc(
					c.ds, (uint32_t)s, &gen);
				ernic_ds_unlock(&c);
				if (i % 7 == 0)
					sched_yield();
			}
			if (write(fds[1], out, sizeof(out)) !=
			    (ssize_t)sizeof(out))
				_exit(3);
			_exit(0);
		}
	}
	close(fds[1]);
	for (int k = 0; k < KIDS; k++) {
		int32_t in[2 * PER];

		assert_int_equal(read(fds[0], in, sizeof(in)),
				 (ssize_t)sizeof(in));
		for (int i = 0; i < PER; i++) {
			assert_true(in[2 * i] >= 2 && in[2 * i] <= 255);
			assert_true(in[2 * i + 1] >= 0);
			if (got_qp[in[2 * i]]++)
				fail_msg("QP %d given twice", in[2 * i]);
			if (got_pdt[in[2 * i + 1]]++)
				fail_msg("PD-table slot %d given twice",
					 in[2 * i + 1]);
		}
	}
	close(fds[0]);
	for (int k = 0; k < KIDS; k++) {
		int st;

		wait(&st);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	/* They exited without detaching: all 8 are reclaimed. */
	ds_open(&h);
	assert_int_equal(ernic_ds_lock(&h, NULL, NULL), 0);
	assert_int_equal(ernic_ds_reap(h.ds, NULL, NULL), KIDS);
	for (uint32_t q = 0; q < ERNIC_DS_QPS; q++)
		assert_int_equal(h.ds->qp_owner[q], ERNIC_DS_NONE);
	for (uint32_t e = 0; e < ERNIC_PDT_ENTRIES; e++)
		assert_int_equal(h.ds->pdt_owner[e], ERNIC_DS_NONE);
	ernic_ds_unlock(&h);
	ernic_ds_close(&h);
}

static uint32_t dead_seen[4];
static int ndead;

static void on_dead(void *arg, struct ernic_ds *ds, uint32_t slot)
{
	(void)arg;
	/* called before the slot is freed: what it owned is still there */
	assert_int_equal(ds->qp_owner[7], slot);
	dead_seen[ndead++] = slot;
}

/* SIGKILL while holding the lock: the next taker gets it, at once, with
 * the dead process's slot and QP reclaimed. */
static void test_killed_holding_lock(void **state)
{
	struct ernic_ds_handle h;
	pid_t kid;
	int st, me;

	(void)state;
	ds_open(&h);
	assert_int_equal(ernic_ds_lock(&h, NULL, NULL), 0);
	me = ernic_ds_attach(h.ds, getpid());
	ernic_ds_unlock(&h);
	kid = fork();
	if (kid == 0) {
		struct ernic_ds_handle c;
		char err[256];
		int s;

		if (ernic_ds_open(&c, path, err, sizeof(err)))
			_exit(2);
		ernic_ds_lock(&c, NULL, NULL);
		s = ernic_ds_attach(c.ds, getpid());
		ernic_ds_qp_alloc(c.ds, (uint32_t)s, 7, 7);
		raise(SIGKILL);	/* the lock held */
		_exit(3);
	}
	assert_int_equal(waitpid(kid, &st, 0), kid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	ndead = 0;
	alarm(10);	/* a lock that stays taken fails here, not forever */
	assert_int_equal(ernic_ds_lock(&h, on_dead, NULL), 0);
	alarm(0);
	assert_int_equal(ndead, 1);
	assert_int_not_equal(dead_seen[0], (uint32_t)me);
	assert_int_equal(h.ds->qp_owner[7], ERNIC_DS_NONE);
	assert_int_equal(h.ds->proc[dead_seen[0]].pid, 0);
	/* we are alive and kept */
	assert_int_equal(h.ds->proc[me].pid, getpid());
	assert_int_equal(ernic_ds_qp_alloc(h.ds, (uint32_t)me, 7, 7), 7);
	ernic_ds_detach(h.ds, (uint32_t)me);
	ernic_ds_unlock(&h);
	ernic_ds_close(&h);
}

/* A slot whose pid lives but started at another time (a recycled pid)
 * is a dead process; ours, with its start time, is not. */
static void test_recycled_pid(void **state)
{
	struct ernic_ds_handle h;
	int s, t;

	(void)state;
	ds_open(&h);
	assert_int_equal(ernic_ds_lock(&h, NULL, NULL), 0);
	s = ernic_ds_attach(h.ds, getpid());
	t = ernic_ds_attach(h.ds, getpid());
	assert_int_not_equal(s, t);
	h.ds->proc[t].start--;
	assert_true(ernic_ds_alive(h.ds, (uint32_t)s));
	assert_false(ernic_ds_alive(h.ds, (uint32_t)t));
	assert_int_equal(ernic_ds_reap(h.ds, NULL, NULL), 1);
	assert_int_equal(h.ds->proc[t].pid, 0);
	assert_int_equal(h.ds->proc[s].pid, getpid());
	ernic_ds_detach(h.ds, (uint32_t)s);
	ernic_ds_unlock(&h);
	ernic_ds_close(&h);
}

/* CM service IDs: one process per ID, claims counted, a second
 * process refused until the first gives its last claim back or dies
 * (reaped, its claims go with it); the table's end is ENOSPC. */
static void test_services(void **state)
{
	struct ernic_ds_handle h;
	bool gone = false;
	int s, t;

	(void)state;
	ds_open(&h);
	assert_int_equal(ernic_ds_lock(&h, NULL, NULL), 0);
	s = ernic_ds_attach(h.ds, getpid());
	t = ernic_ds_attach(h.ds, getpid());
	assert_int_equal(ernic_ds_svc_claim(h.ds, (uint32_t)s, 0x1060000 | 7471), 0);
	assert_int_equal(ernic_ds_svc_claim(h.ds, (uint32_t)s, 0x1060000 | 7471), 0);
	assert_int_equal(ernic_ds_svc_claim(h.ds, (uint32_t)t, 0x1060000 | 7471),
			 EADDRINUSE);
	assert_int_equal(ernic_ds_svc_claim(h.ds, (uint32_t)t, 0x1060000 | 7472), 0);
	assert_int_equal(ernic_ds_svc_release(h.ds, (uint32_t)t, 0x1060000 | 7471,
					      &gone), ENOENT);
	assert_int_equal(ernic_ds_svc_release(h.ds, (uint32_t)s, 0x1060000 | 7471,
					      &gone), 0);
	assert_false(gone);
	assert_int_equal(ernic_ds_svc_claim(h.ds, (uint32_t)t, 0x1060000 | 7471),
			 EADDRINUSE);
	assert_int_equal(ernic_ds_svc_release(h.ds, (uint32_t)s, 0x1060000 | 7471,
					      &gone), 0);
	assert_true(gone);
	assert_int_equal(ernic_ds_svc_claim(h.ds, (uint32_t)t, 0x1060000 | 7471), 0);
	/* t dies (another start time): reaping frees its two claims */
	h.ds->proc[t].start--;
	assert_int_equal(ernic_ds_reap(h.ds, NULL, NULL), 1);
	assert_int_equal(ernic_ds_svc_claim(h.ds, (uint32_t)s, 0x1060000 | 7471), 0);
	assert_int_equal(ernic_ds_svc_claim(h.ds, (uint32_t)s, 0x1060000 | 7472), 0);
	for (uint32_t k = 2; k < ERNIC_DS_SERVICES; k++)
		assert_int_equal(ernic_ds_svc_claim(h.ds, (uint32_t)s, 0x1110000 | k), 0);
	assert_int_equal(ernic_ds_svc_claim(h.ds, (uint32_t)s, 0x1110000), ENOSPC);
	ernic_ds_detach(h.ds, (uint32_t)s);
	for (uint32_t k = 0; k < ERNIC_DS_SERVICES; k++)
		assert_int_equal(h.ds->svc[k].refs, 0);
	ernic_ds_unlock(&h);
	ernic_ds_close(&h);
}

/* Start times: ours is read; a name with ') Z (' does not fool the
 * parser; a zombie and a pid nobody has are gone. */
static void test_start_time(void **state)
{
	uint64_t mine = ernic_ds_start_time(getpid());
	int fds[2], st;
	pid_t kid;
	uint64_t before, after;

	(void)state;
	assert_true(mine > 0);
	{
		/* our name has no space: plain word 22 is the start time */
		char buf[1024], *tok, *save;
		FILE *f = fopen("/proc/self/stat", "r");
		int w = 1;

		assert_non_null(f);
		assert_non_null(fgets(buf, sizeof(buf), f));
		fclose(f);
		for (tok = strtok_r(buf, " ", &save); tok && w < 22; w++)
			tok = strtok_r(NULL, " ", &save);
		assert_non_null(tok);
		assert_int_equal(mine, strtoull(tok, NULL, 10));
	}
	assert_int_equal(ernic_ds_start_time(0x3FFFFFFF), 0);
	assert_int_equal(pipe(fds), 0);
	kid = fork();
	if (kid == 0) {
		uint64_t a = ernic_ds_start_time(getpid()), b;

		prctl(PR_SET_NAME, "x) Z (y 1 2 3");
		b = ernic_ds_start_time(getpid());
		if (write(fds[1], &a, sizeof(a)) != sizeof(a) ||
		    write(fds[1], &b, sizeof(b)) != sizeof(b))
			_exit(2);
		pause();
		_exit(0);
	}
	assert_int_equal(read(fds[0], &before, sizeof(before)),
			 sizeof(before));
	assert_int_equal(read(fds[0], &after, sizeof(after)), sizeof(after));
	assert_true(before >= mine);
	assert_int_equal(after, before);
	assert_int_equal(ernic_ds_start_time(kid), before);
	kill(kid, SIGKILL);
	/* a zombie until waited for */
	for (int i = 0; i < 200 && ernic_ds_start_time(kid); i++)
		usleep(5000);
	assert_int_equal(ernic_ds_start_time(kid), 0);
	waitpid(kid, &st, 0);
	close(fds[0]);
	close(fds[1]);
}

/* Key generations go 1..255 and never 0; slots are taken round-robin;
 * 128 processes fill the table. */
static void test_limits(void **state)
{
	struct ernic_ds_handle h;
	uint8_t gen, first;
	int e, s;

	(void)state;
	ds_open(&h);
	assert_int_equal(ernic_ds_lock(&h, NULL, NULL), 0);
	s = ernic_ds_attach(h.ds, getpid());
	e = ernic_ds_pdt_alloc(h.ds, (uint32_t)s, &first);
	assert_int_not_equal(first, 0);
	ernic_ds_pdt_free(h.ds, (uint32_t)s, (uint32_t)e);
	for (int i = 0; i < 600; i++) {
		int f = ernic_ds_pdt_alloc(h.ds, (uint32_t)s, &gen);

		assert_int_not_equal(gen, 0);
		assert_int_equal(f, (e + 1 + i) % (int)ERNIC_PDT_ENTRIES);
		ernic_ds_pdt_free(h.ds, (uint32_t)s, (uint32_t)f);
	}
	/* 600 / 256: slot e came round twice more, its gen moved on */
	assert_int_not_equal(h.ds->pdt_gen[e], first);
	/* only its owner frees an entry */
	e = ernic_ds_pdt_alloc(h.ds, (uint32_t)s, &gen);
	ernic_ds_pdt_free(h.ds, (uint32_t)s + 1, (uint32_t)e);
	assert_int_equal(h.ds->pdt_owner[e], s);
	for (uint32_t k = 1; k < ERNIC_DS_PROCS; k++)
		assert_true(ernic_ds_attach(h.ds, getpid()) >= 0);
	assert_int_equal(ernic_ds_attach(h.ds, getpid()), -ENOSPC);
	assert_int_equal(ernic_ds_attach(h.ds, 0x3FFFFFFF), -ESRCH);
	for (uint32_t k = 0; k < ERNIC_DS_PROCS; k++)
		ernic_ds_detach(h.ds, k);
	assert_int_equal(h.ds->pdt_owner[e], ERNIC_DS_NONE);
	ernic_ds_unlock(&h);
	ernic_ds_close(&h);
}

/* A file of another size, or without the magic, is refused. */
static void test_foreign_file(void **state)
{
	struct ernic_ds_handle h;
	char err[256];
	int fd;

	(void)state;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 100), 0);
	assert_int_equal(ernic_ds_open(&h, path, err, sizeof(err)), EPROTO);
	assert_non_null(strstr(err, "100 bytes"));
	assert_int_equal(ftruncate(fd, sizeof(struct ernic_ds)), 0);
	assert_int_equal(pwrite(fd, "XXXX", 4, 0), 4);
	assert_int_equal(ernic_ds_open(&h, path, err, sizeof(err)), EPROTO);
	assert_non_null(strstr(err, "not an ERNIC state file"));
	close(fd);
	unlink(path);
}

/* Private state: the same tables in this process only. */
/* QP numbers go round: the one just freed is the last one given again. */
static void test_qp_cycle(void **state)
{
	struct ernic_ds_handle h;
	int s;

	(void)state;
	assert_int_equal(ernic_ds_open_private(&h), 0);
	assert_int_equal(ernic_ds_lock(&h, NULL, NULL), 0);
	s = ernic_ds_attach(h.ds, getpid());
	assert_int_equal(s, 0);
	assert_int_equal(ernic_ds_qp_alloc(h.ds, 0, 2, 4), 2);
	assert_int_equal(ernic_ds_qp_alloc(h.ds, 0, 2, 4), 3);
	ernic_ds_qp_free(h.ds, 0, 2);
	assert_int_equal(ernic_ds_qp_alloc(h.ds, 0, 2, 4), 4);
	assert_int_equal(ernic_ds_qp_alloc(h.ds, 0, 2, 4), 2);
	assert_int_equal(ernic_ds_qp_alloc(h.ds, 0, 2, 4), -ENOSPC);
	ernic_ds_qp_free(h.ds, 0, 3);
	assert_int_equal(ernic_ds_qp_alloc(h.ds, 0, 2, 4), 3);
	/* a narrower range than the cursor's still starts at its first */
	ernic_ds_qp_free(h.ds, 0, 2);
	assert_int_equal(ernic_ds_qp_alloc(h.ds, 0, 2, 2), 2);
	assert_int_equal(ernic_ds_qp_alloc(h.ds, 0, 5, 2), -ENOSPC);
	ernic_ds_unlock(&h);
	ernic_ds_close(&h);
}

static void test_private(void **state)
{
	struct ernic_ds_handle h;
	uint8_t gen;
	int s;

	(void)state;
	assert_int_equal(ernic_ds_open_private(&h), 0);
	assert_int_equal(h.fd, -1);
	assert_int_equal(ernic_ds_lock(&h, NULL, NULL), 0);
	s = ernic_ds_attach(h.ds, getpid());
	assert_int_equal(s, 0);
	assert_int_equal(ernic_ds_qp_alloc(h.ds, (uint32_t)s, 2, 255), 2);
	assert_true(ernic_ds_pdt_alloc(h.ds, (uint32_t)s, &gen) >= 0);
	assert_int_not_equal(gen, 0);
	ernic_ds_unlock(&h);
	ernic_ds_close(&h);
	assert_null(h.ds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_twice, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_concurrent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_killed_holding_lock,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_recycled_pid, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_services, setup,
						teardown),
		cmocka_unit_test(test_start_time),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_file, setup,
						teardown),
		cmocka_unit_test(test_qp_cycle),
		cmocka_unit_test(test_private),
	};

	return cmocka_run_group_tests_name("devstate", tests, NULL, NULL);
}
