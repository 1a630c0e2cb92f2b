// SPDX-License-Identifier: MIT
/* Start and stop ernic-vfpga processes (vfpga_ctl.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "paths.h"
#include "vfpga_ctl.h"

#define READY_TIMEOUT_MS 10000
#define STOP_TIMEOUT_MS 5000

static int tree(const char *rundir, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/vfpga/%s", rundir, name);

	return n < 0 || (size_t)n >= len ? ENAMETOOLONG : 0;
}

/* rm -r of the tree the daemon made: two levels of plain entries. */
static void remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[PATH_MAX];

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(p))
			continue;
		if (de->d_type == DT_DIR)
			remove_tree(p);
		else
			unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

/* The ernic-vfpga of this ernicctl's tree (paths.h). */
static int vfpga_exe(char *buf, size_t len, char *err, size_t errlen)
{
	struct ernic_paths p;
	int rc;

	rc = ernic_paths_get(&p, err, errlen);
	if (rc)
		return rc;
	if ((size_t)snprintf(buf, len, "%s", p.vfpga) >= len) {
		snprintf(err, errlen, "%s: path too long", p.vfpga);
		return ENAMETOOLONG;
	}
	if (access(buf, X_OK)) {
		rc = errno;
		snprintf(err, errlen, "cannot run %s: %s", buf, strerror(rc));
		return rc;
	}
	return 0;
}

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

int vfpga_start(const char *rundir, struct ernic_conf *conf, char *err,
		size_t errlen)
{
	char dir[PATH_MAX], cfg[PATH_MAX + 16], exe[PATH_MAX], fdarg[16];
	char buf[16] = "", log[PATH_MAX + 8], buf2[256];
	int pfd[2], rc, st;
	pid_t pid;
	struct pollfd p;

	rc = tree(rundir, conf->name, dir, sizeof(dir));
	if (!rc && strlen(dir) > ERNIC_UIO_ROOT_MAX)
		rc = ENAMETOOLONG;
	if (rc) {
		snprintf(err, errlen, "%s/vfpga/%s: path too long", rundir,
			 conf->name);
		return rc;
	}
	rc = vfpga_exe(exe, sizeof(exe), err, errlen);
	if (rc)
		return rc;
	vfpga_stop(rundir, conf->name);	/* a stale tree from a crash */
	rc = mkdir_p(dir, 0755);
	snprintf(cfg, sizeof(cfg), "%s/model.conf", dir);
	if (rc || (rc = ernic_conf_save(cfg, conf, err, errlen))) {
		if (rc && !err[0])
			snprintf(err, errlen, "%s: %s", dir, strerror(rc));
		remove_tree(dir);
		return rc;
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		rc = errno;
		snprintf(err, errlen, "pipe: %s", strerror(rc));
		remove_tree(dir);
		return rc;
	}
	snprintf(log, sizeof(log), "%s/log", dir);
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
		snprintf(fdarg, sizeof(fdarg), "%d", pfd[1]);
		execl(exe, exe, "--root", dir, "--conf", cfg, "--ready-fd",
		      fdarg, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	if (pid < 0) {
		rc = errno;
		close(pfd[0]);
		snprintf(err, errlen, "fork: %s", strerror(rc));
		remove_tree(dir);
		return rc;
	}
	p = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
	if (poll(&p, 1, READY_TIMEOUT_MS) != 1 ||
	    read(pfd[0], buf, sizeof(buf) - 1) != 6 || strcmp(buf, "ready\n")) {
		close(pfd[0]);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		last_line(log, buf2, sizeof(buf2));
		remove_tree(dir);
		snprintf(err, errlen, "the virtual FPGA did not start: %s",
			 buf2[0] ? buf2 : "no message");
		return EIO;
	}
	close(pfd[0]);
	conf->backend = ERNIC_BACKEND_UIO;
	snprintf(conf->uio, sizeof(conf->uio), "uio0");
	/* Fits: checked against ERNIC_UIO_ROOT_MAX above. */
	memcpy(conf->uio_root, dir, strlen(dir) + 1);
	snprintf(conf->udmabuf, sizeof(conf->udmabuf), "udmabuf0");
	return 0;
}

/* Running, and not a zombie nobody reaps (a container's init may not). */
static bool alive(int pid)
{
	char p[64], buf[512], *rp;
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "/proc/%d/stat", pid);
	f = fopen(p, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

void vfpga_stop(const char *rundir, const char *name)
{
	char dir[PATH_MAX], pidf[PATH_MAX + 8];
	struct timespec ts = { 0, 10000000 };
	FILE *f;
	int pid = 0;

	if (tree(rundir, name, dir, sizeof(dir)))
		return;
	snprintf(pidf, sizeof(pidf), "%s/pid", dir);
	f = fopen(pidf, "re");
	if (f) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	if (pid > 0 && !kill(pid, SIGTERM)) {
		for (int t = 0; t < STOP_TIMEOUT_MS / 10 && alive(pid); t++)
			nanosleep(&ts, NULL);
		if (alive(pid))
			kill(pid, SIGKILL);
	}
	remove_tree(dir);
}
