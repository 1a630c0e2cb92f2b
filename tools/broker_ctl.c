// SPDX-License-Identifier: MIT
/* Start and stop a hardware device's ernic-broker (broker_ctl.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "broker_ctl.h"
#include "daemon.h"
#include "ernic_conf.h"
#include "fsutil.h"
#include "overlay.h"
#include "paths.h"

static int tree(const char *rundir, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/broker/%s", rundir, name);

	return n < 0 || (size_t)n >= len ? ENAMETOOLONG : 0;
}

static void tree_remove(const char *dir)
{
	char p[PATH_MAX + 8];

	snprintf(p, sizeof(p), "%s/pid", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/log", dir);
	unlink(p);
	rmdir(dir);
}

int broker_start(const char *rundir, const char *name, char *err,
		 size_t errlen)
{
	char dir[PATH_MAX], conf[PATH_MAX], log[PATH_MAX + 8];
	char pidf[PATH_MAX + 8];
	const char *args[] = { "--conf", conf, "--name", name, NULL };
	struct ernic_paths p;
	FILE *f;
	pid_t pid;
	int rc;

	if (tree(rundir, name, dir, sizeof(dir)) ||
	    snprintf(conf, sizeof(conf), "%s/%s/class/infiniband/%s/device/%s",
		     rundir, OVERLAY_SYSFS, name, ERNIC_CONF_FILE) >=
		    (int)sizeof(conf)) {
		snprintf(err, errlen, "%s: path too long", rundir);
		return ENAMETOOLONG;
	}
	rc = ernic_paths_get(&p, err, errlen);
	if (rc)
		return rc;
	if (access(p.broker, X_OK)) {
		rc = errno;
		snprintf(err, errlen, "cannot run %s: %s", p.broker,
			 strerror(rc));
		return rc;
	}
	broker_stop(rundir, name);	/* a stale tree from a crash */
	rc = mkdir_p(dir, 0755);
	if (rc) {
		snprintf(err, errlen, "%s: %s", dir, strerror(rc));
		return rc;
	}
	snprintf(log, sizeof(log), "%s/log", dir);
	rc = daemon_start(p.broker, args, log, "device's broker", &pid, err,
			  errlen);
	if (rc) {
		tree_remove(dir);
		return rc;
	}
	snprintf(pidf, sizeof(pidf), "%s/pid", dir);
	f = fopen(pidf, "we");
	if (!f || fprintf(f, "%d\n", (int)pid) < 0 || fclose(f)) {
		rc = errno ? errno : EIO;
		snprintf(err, errlen, "%s: %s", pidf, strerror(rc));
		daemon_stop(pid);
		tree_remove(dir);
		return rc;
	}
	return 0;
}

void broker_stop(const char *rundir, const char *name)
{
	char dir[PATH_MAX];

	if (tree(rundir, name, dir, sizeof(dir)))
		return;
	daemon_stop_dir(dir);
	tree_remove(dir);
}
