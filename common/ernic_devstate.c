// SPDX-License-Identifier: MIT
/* A device's state shared between processes (ernic_devstate.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "ernic_devstate.h"

#define DS_MAGIC 0x534E5245u	/* "ERNS" */
#define DS_VERSION 8u
#define PD_MAX 0xFFFFFFu	/* PDPDNUM is 24 bits */

uint64_t ernic_ds_start_time(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long start = 0;
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* comm may hold spaces and ')': fields go on after the last ')'.
	 * Field 3 (state) follows it; the start time is field 22. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	/* a zombie keeps its entry: it is gone all the same */
	if (p[2] == 'Z' || p[2] == 'X')
		return 0;
	p++;
	for (int field = 3; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &start) != 1)
		return 0;
	return start;
}

bool ernic_ds_alive(const struct ernic_ds *ds, uint32_t slot)
{
	const struct ernic_ds_proc *p = &ds->proc[slot];

	return p->pid > 0 && ernic_ds_start_time(p->pid) == p->start;
}

static void init(struct ernic_ds *ds)
{
	pthread_mutexattr_t a;

	memset(ds, 0, sizeof(*ds));
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&ds->lock, &a);
	pthread_mutexattr_destroy(&a);
	memset(ds->qp_owner, ERNIC_DS_NONE, sizeof(ds->qp_owner));
	memset(ds->pdt_owner, ERNIC_DS_NONE, sizeof(ds->pdt_owner));
	/* Key generations start at random: keys of an earlier life of the
	 * device are unlikely to match. */
	if (getrandom(ds->pdt_gen, sizeof(ds->pdt_gen), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(ds->pdt_gen))
		memset(ds->pdt_gen, 0, sizeof(ds->pdt_gen));
	ds->pd_next = 1;
	ds->version = DS_VERSION;
	ds->size = sizeof(*ds);
	/* last: a file with the magic is whole */
	__atomic_store_n(&ds->magic, DS_MAGIC, __ATOMIC_RELEASE);
}

int ernic_ds_open(struct ernic_ds_handle *h, const char *path, char *err,
		  size_t errlen)
{
	struct stat st;
	struct ernic_ds *ds;
	int e;

	h->ds = NULL;
	h->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (h->fd < 0) {
		e = errno;
		snprintf(err, errlen, "state file %s: %s", path, strerror(e));
		return e;
	}
	/* One process makes the file; the others wait for it whole. */
	if (flock(h->fd, LOCK_EX) || fstat(h->fd, &st)) {
		e = errno;
		snprintf(err, errlen, "state file %s: %s", path, strerror(e));
		goto fail;
	}
	if (st.st_size == 0 && ftruncate(h->fd, sizeof(*ds))) {
		e = errno;
		snprintf(err, errlen, "state file %s: %s", path, strerror(e));
		goto fail;
	}
	if (st.st_size != 0 && st.st_size != (off_t)sizeof(*ds)) {
		e = EPROTO;
		snprintf(err, errlen, "state file %s: %jd bytes, this library "
			 "uses %zu (another version made it: ernicctl del and "
			 "add the device again)", path, (intmax_t)st.st_size,
			 sizeof(*ds));
		goto fail;
	}
	ds = mmap(NULL, sizeof(*ds), PROT_READ | PROT_WRITE, MAP_SHARED,
		  h->fd, 0);
	if (ds == MAP_FAILED) {
		e = errno;
		snprintf(err, errlen, "state file %s: mmap: %s", path,
			 strerror(e));
		goto fail;
	}
	if (st.st_size == 0)
		init(ds);
	if (ds->magic != DS_MAGIC || ds->version != DS_VERSION ||
	    ds->size != sizeof(*ds)) {
		munmap(ds, sizeof(*ds));
		e = EPROTO;
		snprintf(err, errlen, "state file %s: not an ERNIC state file "
			 "of version %u", path, DS_VERSION);
		goto fail;
	}
	flock(h->fd, LOCK_UN);
	h->ds = ds;
	return 0;
fail:
	close(h->fd);
	h->fd = -1;
	return e;
}

int ernic_ds_open_private(struct ernic_ds_handle *h)
{
	struct ernic_ds *ds = mmap(NULL, sizeof(*ds), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	h->fd = -1;
	h->ds = NULL;
	if (ds == MAP_FAILED)
		return errno;
	init(ds);
	h->ds = ds;
	return 0;
}

void ernic_ds_close(struct ernic_ds_handle *h)
{
	if (h->ds)
		munmap(h->ds, sizeof(*h->ds));
	if (h->fd >= 0)
		close(h->fd);
	h->ds = NULL;
	h->fd = -1;
}

static void reclaim(struct ernic_ds *ds, uint32_t slot, ernic_ds_dead_fn dead,
		    void *arg)
{
	if (dead)
		dead(arg, ds, slot);
	ernic_ds_detach(ds, slot);
	ds->reaped++;
}

int ernic_ds_lock(struct ernic_ds_handle *h, ernic_ds_dead_fn dead,
		  void *arg)
{
	struct ernic_ds *ds = h->ds;
	int ret = pthread_mutex_lock(&ds->lock);

	if (ret != EOWNERDEAD)
		return ret;
	/* Its holder died in the middle of a change. Owners are single
	 * bytes, so its half change is whole or absent: freeing every
	 * dead process's slot leaves the tables consistent. */
	pthread_mutex_consistent(&ds->lock);
	ernic_ds_reap(ds, dead, arg);
	return 0;
}

void ernic_ds_unlock(struct ernic_ds_handle *h)
{
	pthread_mutex_unlock(&h->ds->lock);
}

uint32_t ernic_ds_reap(struct ernic_ds *ds, ernic_ds_dead_fn dead, void *arg)
{
	uint32_t n = 0;

	for (uint32_t s = 0; s < ERNIC_DS_PROCS; s++) {
		if (ds->proc[s].pid && !ds->proc[s].broker_reaps &&
		    !ernic_ds_alive(ds, s)) {
			reclaim(ds, s, dead, arg);
			n++;
		}
	}
	return n;
}

void ernic_ds_reap_slot(struct ernic_ds *ds, uint32_t slot,
			ernic_ds_dead_fn dead, void *arg)
{
	if (slot < ERNIC_DS_PROCS && ds->proc[slot].pid)
		reclaim(ds, slot, dead, arg);
}

int ernic_ds_attach(struct ernic_ds *ds, pid_t pid)
{
	const uint64_t start = ernic_ds_start_time(pid);

	if (!start)
		return -ESRCH;
	for (uint32_t s = 0; s < ERNIC_DS_PROCS; s++) {
		struct ernic_ds_proc *p = &ds->proc[s];

		if (p->pid)
			continue;
		p->pid = pid;
		p->start = start;
		p->gen++;
		p->npd = p->ncq = 0;
		return (int)s;
	}
	return -ENOSPC;
}

void ernic_ds_detach(struct ernic_ds *ds, uint32_t slot)
{
	for (uint32_t q = 0; q < ERNIC_DS_QPS; q++)
		if (ds->qp_owner[q] == slot)
			ds->qp_owner[q] = ERNIC_DS_NONE;
	for (uint32_t e = 0; e < ERNIC_PDT_ENTRIES; e++)
		if (ds->pdt_owner[e] == slot)
			ds->pdt_owner[e] = ERNIC_DS_NONE;
	for (uint32_t k = 0; k < ERNIC_DS_SERVICES; k++)
		if (ds->svc[k].refs && ds->svc[k].slot == slot)
			ds->svc[k] = (struct ernic_ds_svc){ 0 };
	if (ds->proc[slot].steered && ds->steer_members)
		ds->steer_members--;
	ds->proc[slot].steered = 0;
	ds->proc[slot].broker_reaps = 0;
	ds->proc[slot].is_broker = 0;
	ds->proc[slot].pid = 0;
	ds->proc[slot].start = 0;
	ds->proc[slot].npd = ds->proc[slot].ncq = 0;
}

static struct ernic_ds_svc *svc_find(struct ernic_ds *ds, uint64_t id)
{
	for (uint32_t k = 0; k < ERNIC_DS_SERVICES; k++)
		if (ds->svc[k].refs && ds->svc[k].id == id)
			return &ds->svc[k];
	return NULL;
}

int ernic_ds_svc_claim(struct ernic_ds *ds, uint32_t slot, uint64_t id)
{
	struct ernic_ds_svc *e = svc_find(ds, id);

	if (e) {
		if (e->slot != slot)
			return EADDRINUSE;
		e->refs++;
		return 0;
	}
	for (uint32_t k = 0; k < ERNIC_DS_SERVICES; k++)
		if (!ds->svc[k].refs) {
			ds->svc[k] = (struct ernic_ds_svc){ .id = id,
							    .refs = 1,
							    .slot = slot };
			return 0;
		}
	return ENOSPC;
}

int ernic_ds_svc_release(struct ernic_ds *ds, uint32_t slot, uint64_t id,
			 bool *gone)
{
	struct ernic_ds_svc *e = svc_find(ds, id);

	if (!e || e->slot != slot)
		return ENOENT;
	*gone = --e->refs == 0;
	if (*gone)
		*e = (struct ernic_ds_svc){ 0 };
	return 0;
}

int ernic_ds_qp_alloc(struct ernic_ds *ds, uint32_t slot, uint32_t first,
		      uint32_t last)
{
	uint32_t n, start;

	if (last >= ERNIC_DS_QPS)
		last = ERNIC_DS_QPS - 1;
	if (first > last)
		return -ENOSPC;
	n = last - first + 1;
	start = ds->qp_cursor >= first && ds->qp_cursor <= last ?
			ds->qp_cursor - first : 0;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t q = first + (start + k) % n;

		if (ds->qp_owner[q] == ERNIC_DS_NONE) {
			ds->qp_owner[q] = (uint8_t)slot;
			ds->qp_cursor = q + 1;
			return (int)q;
		}
	}
	return -ENOSPC;
}

void ernic_ds_qp_free(struct ernic_ds *ds, uint32_t slot, uint32_t qpn)
{
	if (qpn < ERNIC_DS_QPS && ds->qp_owner[qpn] == slot)
		ds->qp_owner[qpn] = ERNIC_DS_NONE;
}

int ernic_ds_pdt_alloc(struct ernic_ds *ds, uint32_t slot, uint8_t *gen)
{
	for (uint32_t n = 0; n < ERNIC_PDT_ENTRIES; n++) {
		uint32_t e = (ds->pdt_cursor + n) % ERNIC_PDT_ENTRIES;

		if (ds->pdt_owner[e] != ERNIC_DS_NONE)
			continue;
		ds->pdt_owner[e] = (uint8_t)slot;
		ds->pdt_cursor = (e + 1) % ERNIC_PDT_ENTRIES;
		/* 1..255, never 0 (BUFRKEY 0 is "no remote access") */
		ds->pdt_gen[e] = (uint8_t)(ds->pdt_gen[e] % 255 + 1);
		*gen = ds->pdt_gen[e];
		return (int)e;
	}
	return -ENOSPC;
}

void ernic_ds_pdt_free(struct ernic_ds *ds, uint32_t slot, uint32_t entry)
{
	if (entry < ERNIC_PDT_ENTRIES && ds->pdt_owner[entry] == slot)
		ds->pdt_owner[entry] = ERNIC_DS_NONE;
}

uint32_t ernic_ds_pd_number(struct ernic_ds *ds)
{
	const uint32_t pdn = ds->pd_next;

	ds->pd_next = pdn >= PD_MAX ? 1 : pdn + 1;
	return pdn;
}
