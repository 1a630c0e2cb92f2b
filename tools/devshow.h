/* SPDX-License-Identifier: MIT */
/* ernicctl show: who uses a device, from its state file. */
#ifndef ERNIC_DEVSHOW_H
#define ERNIC_DEVSHOW_H

#include <stddef.h>

/* Print the processes using device name and what they own, after
 * reclaiming what dead processes left. 0, or an errno with the reason in
 * err. */
int devshow(const char *rundir, const char *name, char *err, size_t errlen);

#endif
