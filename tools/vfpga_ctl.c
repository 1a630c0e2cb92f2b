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

#include "daemon.h"
#include "fsutil.h"
#include "paths.h"
#include "vfpga_ctl.h"


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

int vfpga_start(const char *rundir, struct ernic_conf *conf, char *err,
		size_t errlen)
{
	char dir[PATH_MAX], cfg[PATH_MAX + 16], exe[PATH_MAX];
	char log[PATH_MAX + 8];
	const char *args[] = { "--root", dir, "--conf", cfg, NULL };
	pid_t pid;
	int rc;

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
	snprintf(log, sizeof(log), "%s/log", dir);
	rc = daemon_start(exe, args, log, "virtual FPGA", &pid, err, errlen);
	if (rc) {
		remove_tree(dir);
		return rc;
	}
	conf->backend = ERNIC_BACKEND_UIO;
	snprintf(conf->uio, sizeof(conf->uio), "uio0");
	/* Fits: checked against ERNIC_UIO_ROOT_MAX above. */
	memcpy(conf->uio_root, dir, strlen(dir) + 1);
	snprintf(conf->udmabuf, sizeof(conf->udmabuf), "udmabuf0");
	return 0;
}

void vfpga_stop(const char *rundir, const char *name)
{
	char dir[PATH_MAX];

	if (tree(rundir, name, dir, sizeof(dir)))
		return;
	daemon_stop_dir(dir);
	remove_tree(dir);
}
