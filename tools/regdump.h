/* SPDX-License-Identifier: MIT */
/* ernicctl dump and stats: a device's registers, read-only. */
#ifndef ERNIC_REGDUMP_H
#define ERNIC_REGDUMP_H

#include <stdbool.h>
#include <stddef.h>

/* Print device name's registers: every one, named, in offset order
 * (PG332 Appendix B's "complete dump"), or with counters the Table 2-7
 * counters and status words and each enabled QP's status decoded. A
 * software device prints one block per process that has it open. 0, or
 * an errno with the reason in err. */
int regdump(const char *rundir, const char *name, bool counters, char *err,
	    size_t errlen);

#endif
