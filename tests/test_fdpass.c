// SPDX-License-Identifier: MIT
/*
 * Files passed with a message (common/ernic_fdpass.h), over a real
 * SOCK_SEQPACKET socket pair: the message and exactly the files asked
 * for arrive, and anything else (no files, too few, too many) leaves
 * the receiver with none open and the message still readable.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "ernic_fdpass.h"

struct msg {
	uint32_t op;
	int32_t status;
	char text[24];
};

static int sv[2];

static int setup(void **state)
{
	(void)state;
	return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv);
}

static int teardown(void **state)
{
	(void)state;
	close(sv[0]);
	close(sv[1]);
	return 0;
}

static int open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

static void test_two_files(void **state)
{
	struct msg out = { .op = 7, .status = 0, .text = "region" }, in;
	int fds[2], pipefd[2], got[2];
	char c = 0;

	(void)state;
	assert_int_equal(pipe(pipefd), 0);
	fds[0] = pipefd[1];
	fds[1] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_int_equal(ernic_fdpass_send(sv[0], &out, sizeof(out), fds, 2),
			 0);
	memset(&in, 0, sizeof(in));
	assert_int_equal(ernic_fdpass_recv(sv[1], &in, sizeof(in), got, 2),
			 sizeof(in));
	assert_int_equal(in.op, 7);
	assert_string_equal(in.text, "region");
	/* Copies: new numbers, close-on-exec, the same open files. */
	assert_true(got[0] >= 0 && got[1] >= 0);
	assert_true(got[0] != fds[0] && got[1] != fds[1]);
	assert_int_equal(fcntl(got[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_int_equal(write(got[0], "x", 1), 1);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	assert_int_equal(c, 'x');
	for (int k = 0; k < 2; k++) {
		close(got[k]);
		close(fds[k]);
	}
	close(pipefd[0]);
}

/* A refusal carries no files; a wrong count is no files at all. */
static void test_wrong_count(void **state)
{
	struct msg out = { .op = 9, .status = EACCES }, in;
	int fds[3], got[2], before;

	(void)state;
	for (int k = 0; k < 3; k++)
		fds[k] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	before = open_fds();
	for (size_t n = 0; n <= 3; n++) {
		if (n == 2)
			continue;
		assert_int_equal(ernic_fdpass_send(sv[0], &out, sizeof(out),
						   fds, n),
				 0);
		memset(&in, 0, sizeof(in));
		assert_int_equal(ernic_fdpass_recv(sv[1], &in, sizeof(in), got,
						   2),
				 sizeof(in));
		assert_int_equal(in.status, EACCES);
		assert_int_equal(got[0], -1);
		assert_int_equal(got[1], -1);
		assert_int_equal(open_fds(), before);
	}
	for (int k = 0; k < 3; k++)
		close(fds[k]);
}

static void test_end_and_limits(void **state)
{
	struct msg m = { 0 };
	int fds[ERNIC_FDPASS_MAX + 1] = { 0 }, got[2];

	(void)state;
	assert_int_equal(ernic_fdpass_send(sv[0], &m, sizeof(m), fds,
					   ERNIC_FDPASS_MAX + 1),
			 EINVAL);
	close(sv[0]);
	sv[0] = -1;
	assert_int_equal(ernic_fdpass_recv(sv[1], &m, sizeof(m), got, 2), 0);
	assert_int_equal(got[0], -1);
	assert_int_equal(ernic_fdpass_send(sv[1], &m, sizeof(m), NULL, 0),
			 EPIPE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_files, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_wrong_count, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_end_and_limits, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
