// SPDX-License-Identifier: MIT
/*
 * rdmacm_cycles: which librdmacm the process runs on, and what it holds
 * (fds, threads, memory mappings, heap, QPs) for the leak checks.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ernic_hw.h"
#include "rdmacm_cycles.h"

void check_library(const char *lib)
{
	char want[PATH_MAX] = "", line[PATH_MAX + 128], found[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/maps", "re");

	if (lib && !realpath(lib, want))
		die("-L %s: %s", lib, strerror(errno));
	if (!f)
		die("/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');

		if (!path || !strstr(path, "/librdmacm.so"))
			continue;
		path[strcspn(path, "\n")] = 0;
		if (lib ? strcmp(path, want) != 0 : !strstr(path, "/lib/rdmacm/"))
			die("librdmacm is %s, not %s: run after eval \"$(ernicctl env)\"",
			    path, lib ? want : "build/lib/rdmacm/");
		snprintf(found, sizeof(found), "%s", path);
	}
	fclose(f);
	if (!found[0])
		die("no librdmacm.so in /proc/self/maps");
	printf("rdmacm_cycles: librdmacm: %s\n", found);
}

static int find_provider(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (!strstr(info->dlpi_name, "libernic-rdmav"))
		return 0;
	snprintf(data, PATH_MAX, "%s", info->dlpi_name);
	return 1;
}

/* ernicdv_reg_read of the provider libibverbs loaded, if it did: the
 * program links no ERNIC library. */
typedef int (*reg_read_fn)(struct ibv_context *c, uint32_t off, uint32_t *v);
static reg_read_fn find_reg_read(void)
{
	char path[PATH_MAX] = "";
	reg_read_fn fn = NULL;
	void *h;

	dl_iterate_phdr(find_provider, path);
	h = path[0] ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
	if (h)
		*(void **)&fn = dlsym(h, "ernicdv_reg_read");
	return fn;
}

/* QPs the IP has programmed: a destroyed (or never used) QP's QPCONFi
 * holds nothing but QP_UNDER_RECOVERY (QP Deletion step 4). */
static int hw_qps(struct ibv_context *c)
{
	reg_read_fn reg_read = find_reg_read();
	uint32_t nqp, v;
	int n = 0;

	if (!reg_read || reg_read(c, ERNIC_XRNICCONF, &nqp))
		return -1;
	nqp = ERNIC_FIELD_GET(ERNIC_XRNICCONF_NUM_QP, nqp);
	for (uint32_t i = ERNIC_FIRST_RC_QP; i <= nqp; i++) {
		if (reg_read(c, ERNIC_QP(i, ERNIC_QPCONF), &v))
			return -1;
		n += (v & ~ERNIC_QPCONF_QP_UNDER_RECOVERY) != 0;
	}
	return n;
}

/* How many more RC QPs the device gives: max_qp when none is held. */
static int free_qps(struct ibv_context *c)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qps[ERNIC_C_NUM_QP_MAX + 1];
	struct ibv_pd *pd = ibv_alloc_pd(c);
	struct ibv_cq *cq = ibv_create_cq(c, 1, NULL, NULL, 0);
	int n = 0;

	if (!pd || !cq)
		die("QP probe: ibv_alloc_pd / ibv_create_cq: %s", strerror(errno));
	a.send_cq = a.recv_cq = cq;
	while (n < (int)(sizeof(qps) / sizeof(qps[0])) &&
	       (qps[n] = ibv_create_qp(pd, &a)))
		n++;
	for (int i = 0; i < n; i++)
		if (ibv_destroy_qp(qps[i]))
			die("QP probe: ibv_destroy_qp: %s", strerror(errno));
	if (ibv_destroy_cq(cq) || ibv_dealloc_pd(pd))
		die("QP probe: ibv_destroy_cq / ibv_dealloc_pd: %s",
		    strerror(errno));
	return n;
}

/* Entries of a /proc directory, or lines of a /proc file. */
static int count(const char *path, bool lines)
{
	int n = 0, c;

	if (lines) {
		FILE *f = fopen(path, "re");

		if (!f)
			die("%s: %s", path, strerror(errno));
		while ((c = getc(f)) != EOF)
			n += c == '\n';
		fclose(f);
	} else {
		DIR *d = opendir(path);
		struct dirent *e;

		if (!d)
			die("%s: %s", path, strerror(errno));
		while ((e = readdir(d)))
			n += e->d_name[0] != '.';
		closedir(d);
	}
	return n;
}

void take_snap(struct ibv_context *const ctx[2], struct snap *s)
{
	struct ibv_device_attr da;

	for (int d = 0; d < 2; d++) {
		if (ibv_query_device(ctx[d], &da))
			die("ibv_query_device: %s", strerror(errno));
		s->max_qp[d] = da.max_qp;
		s->free_qps[d] = free_qps(ctx[d]);
		s->hw_qps[d] = hw_qps(ctx[d]);
	}
	s->fds = count("/proc/self/fd", false);
	s->threads = count("/proc/self/task", false);
	s->maps = count("/proc/self/maps", true);
	s->heap = mallinfo2().uordblks;
}

void check_snap(const char *when, const struct snap *s)
{
	printf("rdmacm_cycles: %s: fds %d, threads %d, mappings %d, heap in use %zu B, "
	       "QPs free %d/%d and %d/%d, QPs programmed %d and %d\n",
	       when, s->fds, s->threads, s->maps, s->heap, s->free_qps[0],
	       s->max_qp[0], s->free_qps[1], s->max_qp[1], s->hw_qps[0],
	       s->hw_qps[1]);
	for (int d = 0; d < 2; d++) {
		if (s->free_qps[d] != s->max_qp[d])
			die("%s: the %s's device gives %d QPs of max_qp %d: %d held",
			    when, d ? "client" : "server", s->free_qps[d],
			    s->max_qp[d], s->max_qp[d] - s->free_qps[d]);
		if (s->hw_qps[d] > 0)
			die("%s: the %s's device has %d QPs programmed (QPCONFi), want 0",
			    when, d ? "client" : "server", s->hw_qps[d]);
	}
}
