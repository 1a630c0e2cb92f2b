/* SPDX-License-Identifier: MIT */
/*
 * Where ernicctl finds the rest of ernic: the virtual FPGA program, the
 * preload library, our librdmacm and the provider module.
 *
 * Run from the build tree (its directory is the build's bin/), the build
 * tree's files are used; otherwise ernicctl is installed, and they are
 * where the install rules put them relative to sbindir, so a tree
 * installed under DESTDIR or another prefix uses its own files.
 */
#ifndef ERNIC_PATHS_H
#define ERNIC_PATHS_H

#include <limits.h>
#include <stddef.h>

struct ernic_paths {
	char vfpga[PATH_MAX];	/* the ernic-vfpga program */
	char broker[PATH_MAX];	/* the ernic-broker program */
	char preload[PATH_MAX];	/* libernic-preload.so */
	char rdmacm[PATH_MAX];	/* the directory of our librdmacm.so.1 */
	/* RDMAV_DRIVERS for the provider (libibverbs appends
	 * -rdmav34.so), or "" when libibverbs finds it through its own
	 * configuration: ernicctl installed where the system looks. */
	char driver[PATH_MAX];
};

/* 0, or an errno value with a one-line reason in err. */
int ernic_paths_get(struct ernic_paths *p, char *err, size_t errlen);

#endif
