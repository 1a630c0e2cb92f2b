/* SPDX-License-Identifier: MIT */
/*
 * The interface between the device access layer (in libernic.so.1) and
 * the software ERNIC backend, libernic-sw.so: the ERNIC model behind
 * struct ernic_access.
 *
 * The hardware provider carries no model code: the access layer dlopens
 * libernic-sw.so only when a software device is opened, and asks it for
 * one versioned symbol, ERNIC_SW_ENTRY, which returns this table. The
 * two may come from different packages, so the table says which layouts
 * of the structures they share it was built with, and the loader refuses
 * a backend that does not match instead of misreading them.
 */
#ifndef ERNIC_SW_H
#define ERNIC_SW_H

#include <stddef.h>
#include <stdint.h>

struct ernic_access;
struct ernic_conf;

/* Bumped on any change to this table or to the meaning of its fields. */
#define ERNIC_SW_ABI		1
#define ERNIC_SW_ENTRY		"ernic_sw_backend_v1"
/* The backend's file name, in the directory ERNIC_SW_SUBDIR beside the
 * library holding the loader (libdir/ernic/ installed, build/lib/ernic/
 * in the build tree). */
#define ERNIC_SW_SONAME		"libernic-sw.so"
#define ERNIC_SW_SUBDIR		"ernic"

struct ernic_sw_backend {
	uint32_t abi;			/* ERNIC_SW_ABI */
	uint32_t conf_size;		/* sizeof(struct ernic_conf) */
	uint32_t ops_size;		/* sizeof(struct ernic_access_ops) */
	/* ernic_access_open() for ERNIC_BACKEND_SW: 0, or errno with a
	 * one-line reason in err. The handle's ops (close included) point
	 * into the backend, which therefore stays loaded. */
	int (*open)(const struct ernic_conf *conf, struct ernic_access **out,
		    char *err, size_t errlen);
};

/* The entry point libernic-sw.so exports under ERNIC_SW_ENTRY. */
const struct ernic_sw_backend *ernic_sw_backend_v1(void);

/* The loader's side (access_sw.c): ernic_access_open() for software
 * devices, through libernic-sw.so. */
int ernic_access_sw_open(const struct ernic_conf *conf,
			 struct ernic_access **out, char *err, size_t errlen);

#endif
