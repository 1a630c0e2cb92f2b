// SPDX-License-Identifier: MIT
/*
 * Address-space checks from /proc/self/maps (see ernic_vm.h). The file
 * lists mappings in address order, one per line:
 * "start-end perms offset dev inode [path]", addresses in hex.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ernic_vm.h"

int ernic_vm_check(const void *va, size_t len, bool write)
{
	uintptr_t cur = (uintptr_t)va, end = cur + len;
	char *line = NULL;
	size_t cap = 0;
	int rc = EFAULT;
	FILE *f;

	if (!len)
		return 0;
	if (end < cur)
		return EFAULT;		/* wraps the address space */
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return errno ? errno : EIO;
	while (getline(&line, &cap, f) > 0) {
		uintptr_t lo, hi;
		char perms[5];

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s", &lo, &hi,
			   perms) != 3)
			continue;
		if (hi <= cur)
			continue;
		/* a hole before this mapping, or no access */
		if (lo > cur || perms[0] != 'r' || (write && perms[1] != 'w'))
			break;
		cur = hi;
		if (cur >= end) {
			rc = 0;
			break;
		}
	}
	free(line);
	fclose(f);
	return rc;
}
