/* SPDX-License-Identifier: MIT */
/*
 * ernicdv: direct-verbs extensions of the ERNIC provider. Link with
 * -lernic (or the uninstalled build/lib/libernic-rdmav34.so).
 */
#ifndef ERNICDV_H
#define ERNICDV_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* True when the device is driven by this provider. */
bool ernicdv_is_ernic_device(struct ibv_device *device);

/*
 * Read / write one 32-bit ERNIC register (PG332 Table 2-7 offset) of an
 * open device: for register dumps, diagnostics and tests. Writing can
 * break the device's state; the provider does not guard against it.
 * Return 0, EINVAL (not an ERNIC context, offset unaligned or outside the
 * 256 KB window) or ENODEV.
 */
int ernicdv_reg_read(struct ibv_context *context, uint32_t offset,
		     uint32_t *value);
int ernicdv_reg_write(struct ibv_context *context, uint32_t offset,
		      uint32_t value);

#ifdef __cplusplus
}
#endif

#endif
