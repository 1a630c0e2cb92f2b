/* SPDX-License-Identifier: MIT */
/* File-system helpers shared by ernicctl and ernic-vfpga. */
#ifndef ERNIC_FSUTIL_H
#define ERNIC_FSUTIL_H

#include <sys/types.h>

/* mkdir -p: path and its missing parents. 0 or an errno value. */
int mkdir_p(const char *path, mode_t mode);

#endif
