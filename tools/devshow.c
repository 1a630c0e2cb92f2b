// SPDX-License-Identifier: MIT
/*
 * ernicctl show NAME: the device's state file (common/ernic_devstate.c,
 * docs/multiprocess.md) as lines a person or a test reads:
 *
 *   processes N
 *   process SLOT pid PID qps Q,Q,... mrs M
 *   qps N
 *   mrs N
 *   reaped N (now R)
 *
 * Processes that are gone are reclaimed first, as the provider would on
 * its next allocation, so what is printed is what is really in use.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "devshow.h"
#include "ernic_devstate.h"
#include "overlay.h"

int devshow(const char *rundir, const char *name, char *err, size_t errlen)
{
	struct ernic_ds_handle h;
	struct stat st;
	struct ernic_ds *ds;
	char path[4096];
	uint32_t now, nproc = 0, nqp = 0, nmr = 0;
	int ret;

	snprintf(path, sizeof(path), "%s/" OVERLAY_SYSFS
		 "/class/infiniband/%s", rundir, name);
	if (stat(path, &st)) {
		snprintf(err, errlen, "no device named '%s'", name);
		return ENOENT;
	}
	snprintf(path, sizeof(path), "%s/" OVERLAY_SYSFS
		 "/class/infiniband/%s/device/" ERNIC_DS_FILE, rundir, name);
	if (stat(path, &st)) {
		/* nobody has opened it yet */
		printf("processes 0\nqps 0\nmrs 0\nreaped 0 (now 0)\n");
		return 0;
	}
	ret = ernic_ds_open(&h, path, err, errlen);
	if (ret)
		return ret;
	ds = h.ds;
	ret = ernic_ds_lock(&h, NULL, NULL);
	if (ret) {
		snprintf(err, errlen, "%s: lock: %d", path, ret);
		ernic_ds_close(&h);
		return ret;
	}
	now = ernic_ds_reap(ds, NULL, NULL);
	for (uint32_t s = 0; s < ERNIC_DS_PROCS; s++)
		nproc += ds->proc[s].pid != 0;
	printf("processes %u\n", nproc);
	for (uint32_t s = 0; s < ERNIC_DS_PROCS; s++) {
		const char *sep = "";
		uint32_t m = 0;

		if (!ds->proc[s].pid)
			continue;
		printf("process %u pid %d qps ", s, (int)ds->proc[s].pid);
		for (uint32_t q = 0; q < ERNIC_DS_QPS; q++) {
			if (ds->qp_owner[q] != s)
				continue;
			printf("%s%u", sep, q);
			sep = ",";
		}
		for (uint32_t e = 0; e < ERNIC_PDT_ENTRIES; e++)
			m += ds->pdt_owner[e] == s;
		printf("%s mrs %u\n", *sep ? "" : "-", m);
	}
	for (uint32_t q = 0; q < ERNIC_DS_QPS; q++)
		nqp += ds->qp_owner[q] != ERNIC_DS_NONE;
	for (uint32_t e = 0; e < ERNIC_PDT_ENTRIES; e++)
		nmr += ds->pdt_owner[e] != ERNIC_DS_NONE;
	printf("qps %u\nmrs %u\nreaped %u (now %u)\n", nqp, nmr, ds->reaped,
	       now);
	ernic_ds_unlock(&h);
	ernic_ds_close(&h);
	return 0;
}
