// SPDX-License-Identifier: MIT
/* Start and stop ernicctl's helper processes (daemon.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

#define READY_TIMEOUT_MS 10000
#define STOP_TIMEOUT_MS 5000
#define MAX_ARGS 16

/* The last line of a file, without its newline ("" if none). */
static void last_line(const char *path, char *buf, size_t len)
{
	char line[256];
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0])
			snprintf(buf, len, "%s", line);
	}
	fclose(f);
}

int daemon_start(const char *exe, const char *const *args, const char *log,
		 const char *what, pid_t *pidp, char *err, size_t errlen)
{
	const char *argv[MAX_ARGS + 4];
	char fdarg[16], buf[16] = "", msg[256];
	int pfd[2], rc, st, n = 0;
	struct pollfd p;
	pid_t pid;

	argv[n++] = exe;
	for (; args[n - 1] && n <= MAX_ARGS; n++)
		argv[n] = args[n - 1];
	if (pipe2(pfd, O_CLOEXEC)) {
		rc = errno;
		snprintf(err, errlen, "pipe: %s", strerror(rc));
		return rc;
	}
	snprintf(fdarg, sizeof(fdarg), "%d", pfd[1]);
	argv[n++] = "--ready-fd";
	argv[n++] = fdarg;
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		/* A daemon of its own: no controlling terminal, no cwd, and
		 * none of our output pipes (a caller waiting for EOF on them,
		 * as ctest does, would wait for ever). */
		int null = open("/dev/null", O_RDWR);
		int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		setsid();
		if (chdir("/") || null < 0 || lfd < 0 || dup2(null, 0) < 0 ||
		    dup2(lfd, 1) < 0 || dup2(lfd, 2) < 0)
			_exit(127);
		fcntl(pfd[1], F_SETFD, 0);
		execv(exe, (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	if (pid < 0) {
		rc = errno;
		close(pfd[0]);
		snprintf(err, errlen, "fork: %s", strerror(rc));
		return rc;
	}
	p = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
	if (poll(&p, 1, READY_TIMEOUT_MS) != 1 ||
	    read(pfd[0], buf, sizeof(buf) - 1) != 6 || strcmp(buf, "ready\n")) {
		close(pfd[0]);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		last_line(log, msg, sizeof(msg));
		snprintf(err, errlen, "the %s did not start: %s", what,
			 msg[0] ? msg : "no message");
		return EIO;
	}
	close(pfd[0]);
	*pidp = pid;
	return 0;
}

/* Running, and not a zombie nobody reaps (a container's init may not). */
static bool alive(pid_t pid)
{
	char p[64], buf[512], *rp;
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

void daemon_stop(pid_t pid)
{
	struct timespec ts = { 0, 10000000 };

	if (pid <= 0 || kill(pid, SIGTERM))
		return;
	for (int t = 0; t < STOP_TIMEOUT_MS / 10 && alive(pid); t++)
		nanosleep(&ts, NULL);
	if (alive(pid))
		kill(pid, SIGKILL);
}

void daemon_stop_dir(const char *dir)
{
	char path[PATH_MAX + 8];
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "%s/pid", dir);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	daemon_stop(pid);
}
