/* SPDX-License-Identifier: MIT */
/*
 * The sysfs overlay that stands in for the kernel's uverbs class when
 * libibverbs runs with SYSFS_PATH=<rundir>/sysfs: one
 * class/infiniband/<name> tree and one class/infiniband_verbs/uverbsN
 * entry per software ERNIC, plus the /dev/infiniband/uverbsN node that
 * libibverbs stat()s before it trusts the entry.
 */
#ifndef ERNIC_OVERLAY_H
#define ERNIC_OVERLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ernic_conf.h"

#define OVERLAY_SYSFS "sysfs"
#define OVERLAY_LOCK ".lock"
#define OVERLAY_DEVDIR "/dev/infiniband"
#define OVERLAY_CDEV_MAJOR 1	/* 1:7 is /dev/full: harmless if opened */
#define OVERLAY_CDEV_MINOR 7
#define OVERLAY_MAX_UVERBS 1024

struct overlay_dev {
	char name[ERNIC_NAME_MAX + 1];
	unsigned int uverbs;		/* N of uverbsN */
	bool conf_ok;			/* conf below was loaded */
	struct ernic_conf conf;
};

/* Take RUNDIR/.lock (created with RUNDIR if missing when exclusive).
 * Returns an fd to close, -1 with a reason in err, or -2 when a shared
 * lock was asked for and there is no lock file (so no devices). */
int overlay_lock(const char *rundir, bool exclusive, char *err, size_t errlen);

/* Every device of the overlay, sorted by uverbs index. Returns 0 or an
 * errno value; *devs is malloc()ed. */
int overlay_list(const char *rundir, struct overlay_dev **devs, size_t *n);

/* Deterministic node GUID for a device on (netdev MAC, address). */
uint64_t overlay_guid(const uint8_t mac[6], int family, const uint8_t addr[16]);

/* Create everything for conf (name, addr, netdev, mac, node_guid set);
 * all-or-nothing. Returns 0 with *uverbs set, or an errno value with a
 * one-line reason in err. Caller holds the exclusive lock. */
int overlay_add(const char *rundir, const struct ernic_conf *conf,
		unsigned int *uverbs, char *err, size_t errlen);

/* Remove a device. ENOENT when name is not in the overlay. */
int overlay_del(const char *rundir, const char *name, char *err,
		size_t errlen);

#endif
