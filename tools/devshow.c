// SPDX-License-Identifier: MIT
/*
 * ernicctl show NAME: the device's state file (common/ernic_devstate.c,
 * docs/multiprocess.md) as lines a person or a test reads:
 *
 *   [broker pid PID]
 *   processes N
 *   process SLOT pid PID qps Q,Q,... mrs M [listens S,S,...] [dead]
 *   qps N
 *   mrs N
 *   listens N
 *   reaped N (now R)
 *
 * Processes that are gone are reclaimed first, as the provider would on
 * its next allocation, so what is printed is what is really in use —
 * except a hardware device's clients: only its broker can clean the IP
 * of them, and it does so when they die; until then they show "dead".
 * "processes" counts the users of the device, not its broker.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "devshow.h"
#include "ernic_devstate.h"
#include "ibta.h"
#include "overlay.h"

/* A CM service ID a process listens to: tcp:PORT for an IP service
 * (rdma_cm's), its number otherwise. */
static void print_service(uint64_t sid)
{
	static const struct {
		unsigned int proto;
		const char *name;
	} ps[] = { { 0x06, "tcp" }, { 0x11, "udp" }, { 0x3F, "ib" } };

	if (IB_IP_SID_IS_IP(sid))
		for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++)
			if (ps[k].proto == IB_IP_SID_PROTO(sid)) {
				printf("%s:%u", ps[k].name,
				       IB_IP_SID_PORT(sid));
				return;
			}
	printf("0x%016llx", (unsigned long long)sid);
}

int devshow(const char *rundir, const char *name, char *err, size_t errlen)
{
	struct ernic_ds_handle h;
	struct stat st;
	struct ernic_ds *ds;
	char path[4096];
	uint32_t now, nproc = 0, nqp = 0, nmr = 0, nsvc = 0;
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
		printf("processes 0\nqps 0\nmrs 0\nlistens 0\n"
		       "reaped 0 (now 0)\n");
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
	for (uint32_t s = 0; s < ERNIC_DS_PROCS; s++) {
		if (ds->proc[s].pid && ds->proc[s].is_broker)
			printf("broker pid %d\n", (int)ds->proc[s].pid);
		nproc += ds->proc[s].pid && !ds->proc[s].is_broker;
	}
	printf("processes %u\n", nproc);
	for (uint32_t s = 0; s < ERNIC_DS_PROCS; s++) {
		const char *sep = "";
		uint32_t m = 0;

		if (!ds->proc[s].pid || ds->proc[s].is_broker)
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
		printf("%s mrs %u", *sep ? "" : "-", m);
		sep = " listens ";
		for (uint32_t k = 0; k < ERNIC_DS_SERVICES; k++) {
			if (!ds->svc[k].refs || ds->svc[k].slot != s)
				continue;
			printf("%s", sep);
			print_service(ds->svc[k].id);
			sep = ",";
		}
		printf("%s\n", ernic_ds_alive(ds, s) ? "" : " dead");
	}
	for (uint32_t q = 0; q < ERNIC_DS_QPS; q++)
		nqp += ds->qp_owner[q] != ERNIC_DS_NONE;
	for (uint32_t e = 0; e < ERNIC_PDT_ENTRIES; e++)
		nmr += ds->pdt_owner[e] != ERNIC_DS_NONE;
	for (uint32_t k = 0; k < ERNIC_DS_SERVICES; k++)
		nsvc += ds->svc[k].refs != 0;
	printf("qps %u\nmrs %u\nlistens %u\nreaped %u (now %u)\n", nqp, nmr,
	       nsvc, ds->reaped, now);
	ernic_ds_unlock(&h);
	ernic_ds_close(&h);
	return 0;
}
