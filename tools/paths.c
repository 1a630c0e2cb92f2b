// SPDX-License-Identifier: MIT
/*
 * ernicctl's file locations (paths.h). The compile-time facts come from
 * tools/CMakeLists.txt: the build tree's bin/ and lib/, and the install
 * layout as paths relative to sbindir.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paths.h"

/* The directory of the running program, symlinks resolved. */
static int exe_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n < 0)
		return errno;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return ENOENT;
	*slash = '\0';
	return 0;
}

static bool same_dir(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

/*
 * dir + "/" + rel with "x/.." pairs folded away: dir is canonical (no
 * symlinks, from /proc/self/exe), so folding them is exact, and the
 * environment ernicctl prints stays readable.
 */
static int join(char *buf, size_t len, const char *dir, const char *rel)
{
	char *slash;

	if ((size_t)snprintf(buf, len, "%s", dir) >= len)
		return ENAMETOOLONG;
	while (!strncmp(rel, "../", 3) || !strcmp(rel, "..")) {
		slash = strrchr(buf, '/');
		if (slash)
			*(slash == buf ? slash + 1 : slash) = '\0';
		rel += rel[2] ? 3 : 2;
	}
	if (!*rel)
		return 0;
	if (strlen(buf) + 1 + strlen(rel) >= len)
		return ENAMETOOLONG;
	if (strcmp(buf, "/"))
		strcat(buf, "/");
	strcat(buf, rel);
	return 0;
}

static int build_tree(struct ernic_paths *p, const char *dir)
{
	static const char lib[] = ERNIC_BUILD_LIBDIR;

	/* The layout the build writes: bin/, lib/, lib/rdmacm/. */
	if ((size_t)snprintf(p->vfpga, sizeof(p->vfpga), "%s/ernic-vfpga",
			     dir) >= sizeof(p->vfpga) ||
	    (size_t)snprintf(p->broker, sizeof(p->broker), "%s/ernic-broker",
			     dir) >= sizeof(p->broker) ||
	    (size_t)snprintf(p->preload, sizeof(p->preload),
			     "%s/libernic-preload.so", lib) >= sizeof(p->preload) ||
	    (size_t)snprintf(p->rdmacm, sizeof(p->rdmacm), "%s/rdmacm", lib) >=
		    sizeof(p->rdmacm) ||
	    (size_t)snprintf(p->driver, sizeof(p->driver), "%s/libernic", lib) >=
		    sizeof(p->driver))
		return ENAMETOOLONG;
	return 0;
}

static int installed(struct ernic_paths *p, const char *dir)
{
	char priv[PATH_MAX];
	int rc;

	rc = join(p->vfpga, sizeof(p->vfpga), dir, ERNIC_SBIN_TO_VFPGA);
	if (!rc)
		rc = join(p->broker, sizeof(p->broker), dir,
			  ERNIC_SBIN_TO_BROKER);
	if (!rc)
		rc = join(priv, sizeof(priv), dir, ERNIC_SBIN_TO_PRIVLIB);
	if (!rc && ((size_t)snprintf(p->preload, sizeof(p->preload),
				     "%s/libernic-preload.so", priv) >=
			    sizeof(p->preload) ||
		    (size_t)snprintf(p->rdmacm, sizeof(p->rdmacm), "%s/rdmacm",
				     priv) >= sizeof(p->rdmacm)))
		rc = ENAMETOOLONG;
	if (rc)
		return rc;
	/* Installed at the prefix it was configured for, into the
	 * system's libibverbs directories: /etc/libibverbs.d/ernic.driver
	 * leads libibverbs to the module, and RDMAV_DRIVERS would only
	 * load it a second way. */
	if (ERNIC_SYSTEM_PROVIDER && !strcmp(dir, ERNIC_SBINDIR)) {
		p->driver[0] = '\0';
		return 0;
	}
	return join(p->driver, sizeof(p->driver), dir,
		    ERNIC_SBIN_TO_PROVIDERDIR "/libernic");
}

int ernic_paths_get(struct ernic_paths *p, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	int rc;

	rc = exe_dir(dir, sizeof(dir));
	if (rc) {
		snprintf(err, errlen, "cannot resolve /proc/self/exe: %s",
			 strerror(rc));
		return rc;
	}
	if (same_dir(dir, ERNIC_BUILD_BINDIR))
		rc = build_tree(p, dir);
	else
		rc = installed(p, dir);
	if (rc)
		snprintf(err, errlen, "%s: path too long", dir);
	return rc;
}
