/* SPDX-License-Identifier: MIT */
/*
 * The UIO backend of the device access layer, and the sysfs look-ups it
 * shares with the virtual FPGA's tests.
 */
#ifndef ERNIC_ACCESS_UIO_H
#define ERNIC_ACCESS_UIO_H

#include <stddef.h>
#include <stdint.h>

struct ernic_access;
struct ernic_conf;

/* One UIO map as sysfs describes it (maps/mapN/{addr,size,offset}). */
struct uio_map {
	uint64_t addr;		/* physical (bus) address */
	uint64_t size;
	uint64_t offset;	/* of addr inside its first page */
};

/* Backend constructor used by ernic_access_open(). Returns 0 or errno
 * with a one-line reason in err. */
int ernic_access_uio_open(const struct ernic_conf *conf,
			  struct ernic_access **out, char *err, size_t errlen);

/* The UIO device named want ("uioN", or its sysfs name) under
 * root/sys/class/uio: its sysfs directory and N. 0 or ENODEV. */
int uio_find(const char *root, const char *want, char *sysdir, size_t sdlen,
	     unsigned int *num);
int uio_map_info(const char *sysdir, unsigned int idx, struct uio_map *m);

#endif
