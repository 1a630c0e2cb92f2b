// SPDX-License-Identifier: MIT
/*
 * Software devices through libernic-sw.so (ernic_sw.h): the provider
 * loads the ERNIC model only when a process opens a software device, so
 * hardware users carry none of it (nor its codec, wire and zlib).
 *
 * Where the backend is: ERNIC_SW_SUBDIR/ERNIC_SW_SONAME beside the file
 * that holds this code, after resolving symlinks (libibverbs loads the
 * provider through libibverbs/libernic-rdmav34.so -> ../libernic.so.1).
 * That one rule holds in the build tree (build/lib/ernic/), in the
 * installed tree (libdir/ernic/) and in a tree installed elsewhere
 * (DESTDIR, --prefix), so no path is compiled in. A program that links
 * the backend itself (ernic-vfpga, tests) already has it: that copy is
 * used, found by its soname.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ernic_access.h"
#include "ernic_conf.h"
#include "ernic_sw.h"

static pthread_mutex_t sw_lock = PTHREAD_MUTEX_INITIALIZER;
/* Never unloaded: open handles' ops and the model's threads run in it. */
static const struct ernic_sw_backend *sw_backend;

/* ERNIC_SW_SUBDIR/ERNIC_SW_SONAME beside the file that holds this code. */
static int sw_path(char *buf, size_t len)
{
	char real[PATH_MAX];
	Dl_info info;
	char *slash;

	if (!dladdr((void *)sw_path, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, real))
		return ENOENT;
	slash = strrchr(real, '/');
	if (!slash)
		return ENOENT;
	*slash = '\0';
	if ((size_t)snprintf(buf, len, "%s/%s/%s", real, ERNIC_SW_SUBDIR,
			     ERNIC_SW_SONAME) >= len)
		return ENAMETOOLONG;
	return 0;
}

static int sw_check(const struct ernic_sw_backend *b, const char *path,
		    char *err, size_t errlen)
{
	if (!b || b->abi != ERNIC_SW_ABI ||
	    b->conf_size != sizeof(struct ernic_conf) ||
	    b->ops_size != sizeof(struct ernic_access_ops) || !b->open) {
		snprintf(err, errlen, "software ERNIC backend %s does not "
			 "match this provider (ABI %u, want %u): install "
			 "matching ernic packages", path,
			 b ? b->abi : 0, ERNIC_SW_ABI);
		return ELIBBAD;
	}
	return 0;
}

static int sw_load(char *err, size_t errlen)
{
	const struct ernic_sw_backend *(*entry)(void);
	char path[PATH_MAX] = ERNIC_SW_SONAME;
	void *h;
	int rc;

	h = dlopen(ERNIC_SW_SONAME, RTLD_NOW | RTLD_NOLOAD);
	if (!h) {
		rc = sw_path(path, sizeof(path));
		if (rc) {
			snprintf(err, errlen, "cannot locate the software "
				 "ERNIC backend %s: %s", ERNIC_SW_SONAME,
				 strerror(rc));
			return rc;
		}
		if (access(path, F_OK)) {
			/* The advice first: err may be short. */
			snprintf(err, errlen, "software ERNIC backend not "
				 "found (install the ernic-tools package): %s",
				 path);
			return ENOENT;
		}
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
	if (!h) {
		snprintf(err, errlen, "software ERNIC backend: %s", dlerror());
		return ELIBACC;
	}
	entry = (const struct ernic_sw_backend *(*)(void))dlsym(h,
							ERNIC_SW_ENTRY);
	if (!entry) {
		snprintf(err, errlen, "software ERNIC backend %s has no %s",
			 path, ERNIC_SW_ENTRY);
		dlclose(h);
		return ELIBBAD;
	}
	rc = sw_check(entry(), path, err, errlen);
	if (rc) {
		dlclose(h);
		return rc;
	}
	sw_backend = entry();
	return 0;
}

int ernic_access_sw_open(const struct ernic_conf *conf,
			 struct ernic_access **out, char *err, size_t errlen)
{
	int rc = 0;

	pthread_mutex_lock(&sw_lock);
	if (!sw_backend)
		rc = sw_load(err, errlen);
	pthread_mutex_unlock(&sw_lock);
	if (rc)
		return rc;
	return sw_backend->open(conf, out, err, errlen);
}
