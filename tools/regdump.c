// SPDX-License-Identifier: MIT
/*
 * ernicctl dump / stats: a device's registers, read-only, while programs
 * use it. Where the register window is:
 *   - a software ERNIC: in each process that has it open (the model runs
 *     there); the model keeps its register file in "ernic.regs.SLOT"
 *     beside the state file (model_regs.c), one window per process;
 *   - UIO (a board, or the virtual FPGA's window): map0 of /dev/uioN,
 *     mapped read-only;
 *   - VFIO: the BAR's sysfs resource file at vfio_offset, read-only (the
 *     VFIO device itself belongs to the process using it).
 * Nothing is written and no lock is taken: a reader cannot disturb the
 * IP (PG332's registers have no read side effects).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access_uio.h"
#include "ernic_bits.h"
#include "ernic_conf.h"
#include "ernic_devstate.h"
#include "ernic_hw.h"
#include "ernic_regtab.h"
#include "ernic_syndrome.h"
#include "overlay.h"
#include "regdump.h"

struct window {
	const volatile uint32_t *w;	/* ERNIC_REG_SPACE_SIZE bytes */
	void *map;
	size_t maplen;
};

static uint32_t rd(const struct window *win, uint32_t off)
{
	return win->w[off / 4];
}

/* len bytes of path from off, read-only: *at points at them, *map and
 * *maplen are what to munmap. ERANGE (with the sizes in err) for a
 * regular file that ends before off + len: the mapping would fault
 * there (a process still making its register file, the wrong BAR). */
static int map_file(const char *path, uint64_t off, size_t len, void **map,
		    size_t *maplen, const void **at, char *err, size_t errlen)
{
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	const uint64_t base = off & ~(page - 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;
	struct stat st;
	void *p;

	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return e;
	}
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size < off + len) {
		close(fd);
		snprintf(err, errlen, "%s: %lld bytes, %#zx needed at %#llx",
			 path, (long long)st.st_size, len,
			 (unsigned long long)off);
		return ERANGE;
	}
	*maplen = (size_t)(off - base) + len;
	p = mmap(NULL, *maplen, PROT_READ, MAP_SHARED, fd, (off_t)base);
	e = errno;
	close(fd);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "%s: mmap: %s", path, strerror(e));
		return e;
	}
	*map = p;
	*at = (const char *)p + (off - base);
	return 0;
}

/* The ERNIC window at off in path. */
static int map_ro(const char *path, uint64_t off, struct window *win,
		  char *err, size_t errlen)
{
	const void *at;
	int ret = map_file(path, off, ERNIC_REG_SPACE_SIZE, &win->map,
			   &win->maplen, &at, err, errlen);

	if (!ret)
		win->w = at;
	return ret;
}

static void unmap(struct window *win)
{
	if (win->map)
		munmap(win->map, win->maplen);
	win->map = NULL;
}

/* ---- output ---- */

/* The rows of one scope, in offset order (Table 2-7 lists them so). */
static void dump_rows(const struct window *win, enum ernic_reg_scope scope,
		      uint32_t base, uint32_t idx, bool indexed)
{
	for (const struct ernic_reg_desc *d = ernic_reg_table; d->name; d++) {
		uint32_t off = base + d->off;

		if (d->scope != scope || (scope == ERNIC_SCOPE_QP &&
					  idx < d->first_qp))
			continue;
		if (indexed)
			printf("0x%05" PRIx32 " %s%" PRIu32 " 0x%08" PRIx32 "\n",
			       off, d->name, idx, rd(win, off));
		else
			printf("0x%05" PRIx32 " %s 0x%08" PRIx32 "\n", off,
			       d->name, rd(win, off));
	}
}

/* Appendix B's "complete dump": every register in offset order, PD table,
 * global block, then QP 1 .. C_NUM_QP. */
static void dump(const struct window *win, uint32_t nqp)
{
	for (uint32_t i = 0; i < ERNIC_PDT_ENTRIES; i++)
		dump_rows(win, ERNIC_SCOPE_PDT, i * ERNIC_PDT_STRIDE, i, true);
	dump_rows(win, ERNIC_SCOPE_GLOBAL, 0, 0, false);
	for (uint32_t i = 1; i <= nqp; i++)
		dump_rows(win, ERNIC_SCOPE_QP, ERNIC_QP(i, 0), i, true);
}

static const struct {
	uint32_t bit;
	const char *what;
} statqp_bits[] = {
	{ ERNIC_STATQP_FATAL, "fatal" },
	{ ERNIC_STATQP_RQ_OVFL, "rq-overflow" },
	{ ERNIC_STATQP_SQ_FULL, "sq-full" },
	{ ERNIC_STATQP_OSQ_FULL, "outstanding-full" },
	{ ERNIC_STATQP_CQ_FIFO_FULL, "cq-fifo-full" },
	{ ERNIC_STATQP_SQ_EMPTY, "sq-empty" },
	{ ERNIC_STATQP_OSQ_EMPTY, "outstanding-empty" },
	{ ERNIC_STATQP_RETRIED, "retried" },
};

/* The fields of Table 2-7's global status registers (PG332 "Global
 * Status Registers"); a register not listed is one count or word. */
#define LO ERNIC_GENMASK(15, 0)
#define HI ERNIC_GENMASK(31, 16)
static const struct {
	uint32_t off;
	struct { uint32_t mask; const char *what; } f[3];
} fields[] = {
	{ ERNIC_INSRRPKTCNT, { { LO, "in-send" }, { HI, "in-read-resp" } } },
	{ ERNIC_INAMPKTCNT, { { LO, "in-ack" }, { HI, "in-mad" } } },
	{ ERNIC_OUTIOPKTCNT, { { LO, "out-send" }, { HI, "out-read-write" } } },
	{ ERNIC_OUTAMPKTCNT, { { LO, "out-ack" }, { HI, "out-mad" } } },
	{ ERNIC_LSTINPKT, { { ERNIC_GENMASK(7, 0), "opcode" },
			    { ERNIC_GENMASK(15, 8), "qp" }, { HI, "psn-lsb" } } },
	{ ERNIC_LSTOUTPKT, { { ERNIC_GENMASK(7, 0), "opcode" },
			     { ERNIC_GENMASK(15, 8), "qp" }, { HI, "psn-lsb" } } },
	{ ERNIC_ININVDUPCNT, { { LO, "in-invalid" }, { HI, "in-duplicate" } } },
	{ ERNIC_INNCKPKTSTS, { { ERNIC_GENMASK(7, 0), "last-qp" },
			       { HI, "in-nak" } } },
	{ ERNIC_OUTRNRPKTSTS, { { ERNIC_GENMASK(7, 0), "last-qp" },
				{ HI, "out-rnr-nak" } } },
	{ ERNIC_QPMSTS, { { ERNIC_BIT(0), "wqe-cache-full" },
			  { ERNIC_BIT(1), "wqe-cache-empty" },
			  { HI, "wqes-processed" } } },
	{ ERNIC_INALLDRPPKTCNT, { { LO, "in-all" }, { HI, "in-dropped" } } },
	{ ERNIC_INNAKPKTCNT, { { LO, "in-nak" } } },
	{ ERNIC_OUTNAKPKTCNT, { { LO, "out-nak" } } },
	{ ERNIC_RESPHNDSTS, { { ERNIC_RESPHNDSTS_QP_INDEX, "qp" },
			      { ERNIC_RESPHNDSTS_FSM, "fsm" },
			      { ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN,
				"sq-pici-db-check-en" } } },
};
#undef LO
#undef HI

static void stat_line(const struct ernic_reg_desc *d, uint32_t v)
{
	printf("%s 0x%08" PRIx32, d->name, v);
	for (size_t k = 0; k < ERNIC_ARRAY_SIZE(fields); k++) {
		if (fields[k].off != d->off)
			continue;
		for (size_t j = 0; j < 3 && fields[k].f[j].what; j++)
			printf(" %s %" PRIu32, fields[k].f[j].what,
			       (v & fields[k].f[j].mask) >>
				       __builtin_ctz(fields[k].f[j].mask));
		putchar('\n');
		return;
	}
	printf(" %" PRIu32 "\n", v);
}

/* Table 2-7's counters and status words (the global RO registers), their
 * fields decoded, then each enabled QP's status. */
static void stats(const struct window *win, uint32_t nqp)
{
	for (const struct ernic_reg_desc *d = ernic_reg_table; d->name; d++)
		if (d->scope == ERNIC_SCOPE_GLOBAL &&
		    d->access == ERNIC_REG_RO)
			stat_line(d, rd(win, d->off));
	for (uint32_t i = 1; i <= nqp; i++) {
		uint32_t conf = rd(win, ERNIC_QP(i, ERNIC_QPCONF));
		uint32_t st = rd(win, ERNIC_QP(i, ERNIC_STATQP));

		if (!(conf & ERNIC_QPCONF_QP_EN))
			continue;
		printf("qp %" PRIu32 " statqp 0x%08" PRIx32, i, st);
		for (size_t k = 0; k < ERNIC_ARRAY_SIZE(statqp_bits); k++)
			if (st & statqp_bits[k].bit)
				printf(" %s", statqp_bits[k].what);
		printf(" nak-syndrome 0x%02" PRIx32 " retries %" PRIu32
		       " rnr-naks %" PRIu32 " sqpsn %" PRIu32 " cqhead %" PRIu32
		       "\n", ERNIC_FIELD_GET(ERNIC_STATQP_NAK_SYNDROME, st),
		       ERNIC_FIELD_GET(ERNIC_STATQP_RETRY_COUNT, st),
		       ERNIC_FIELD_GET(ERNIC_STATQP_RNR_NAK_COUNT, st),
		       rd(win, ERNIC_QP(i, ERNIC_SQPSN)),
		       rd(win, ERNIC_QP(i, ERNIC_CQHEAD)));
	}
}

static void show(const struct window *win, uint32_t nqp, bool counters)
{
	if (counters)
		stats(win, nqp);
	else
		dump(win, nqp);
}

/* ---- where the windows are ---- */

static bool alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* The device's state file, read-only; ENOENT when nobody opened the
 * device yet. */
static int map_state(const char *devdir, struct ernic_ds **out, char *err,
		     size_t errlen)
{
	char path[PATH_MAX + 32];
	const void *at;
	size_t len;
	void *p;
	int ret;

	snprintf(path, sizeof(path), "%s/" ERNIC_DS_FILE, devdir);
	ret = map_file(path, 0, sizeof(struct ernic_ds), &p, &len, &at, err,
		       errlen);
	if (!ret && ((const struct ernic_ds *)at)->size !=
			    sizeof(struct ernic_ds)) {
		munmap(p, len);
		ret = ERANGE;
	}
	if (ret == ERANGE) {
		snprintf(err, errlen, "%s: made by another version of ernic "
			 "(ernicctl del and add the device again)", path);
		return EPROTO;
	}
	if (ret)
		return ret;
	*out = p;
	return 0;
}

/* What the provider counted from the incoming packet error status
 * queues: the entries read, one line per Table 2-4 code seen, then the
 * last entries (oldest first) with their QP. */
static void fatal_codes(const struct ernic_ds *ds)
{
	uint64_t n = __atomic_load_n(&ds->ipkterrq_entries, __ATOMIC_RELAXED);
	uint64_t k = n > ERNIC_DS_FATAL_LAST ? n - ERNIC_DS_FATAL_LAST : 0;
	const char *t;
	int remote;

	printf("ipkterrq-entries %" PRIu64 "\n", n);
	for (uint32_t c = 0; c < ERNIC_FATAL_CODES; c++) {
		if (!ds->fatal_codes[c])
			continue;
		t = ernic_fatal_text(c, &remote);
		printf("fatal-code 0x%02x %" PRIu64 " %s (%s)\n", c,
		       ds->fatal_codes[c], t ? t : "not in Table 2-4",
		       remote ? "remote" : "local");
	}
	for (; k < n; k++) {
		uint64_t e = __atomic_load_n(
			&ds->fatal_last[k % ERNIC_DS_FATAL_LAST],
			__ATOMIC_RELAXED);
		uint32_t c = ERNIC_FIELD_GET(ERNIC_ERRSTS_FATAL_CODE, e);

		t = ernic_fatal_text(c, &remote);
		printf("ipkterrq %" PRIu64 " qp %u code 0x%02x %s\n", k,
		       (unsigned)ERNIC_FIELD_GET(ERNIC_ERRSTS_QPID, e), c,
		       t ? t : "not in Table 2-4");
	}
}

/* What the provider counted from the error buffers: one line per
 * Table 2-3 syndrome bit. */
static void syndromes(const char *devdir)
{
	struct ernic_ds *ds;
	char err[PATH_MAX + 128];
	int ret = map_state(devdir, &ds, err, sizeof(err));

	if (ret == ENOENT)
		return;
	if (ret) {
		printf("# syndromes: %s\n", err);
		return;
	}
	printf("errbuf-entries %" PRIu64 "\n", ds->errbuf_entries);
	for (uint32_t b = 0; b < ERNIC_SYNDROME_BITS; b++) {
		const struct ernic_syndrome *r = ernic_syndrome_row(b);

		if (r)
			printf("syndrome %u %" PRIu64 " %s: %s (%s)\n", b,
			       ds->syndromes[b], r->layer, r->what, r->impact);
	}
	fatal_codes(ds);
	munmap(ds, sizeof(*ds));
}

/* Each process that has the software device open: its model's file. */
static int sw_windows(const char *devdir, uint32_t nqp, bool counters,
		      char *err, size_t errlen)
{
	char path[PATH_MAX + 64];
	struct ernic_ds *ds;
	unsigned int n = 0;
	int ret;

	ret = map_state(devdir, &ds, err, errlen);
	if (ret == ENOENT) {
		printf("no process has the device open\n");
		return 0;
	}
	if (ret)
		return ret;
	for (uint32_t s = 0; s < ERNIC_DS_PROCS; s++) {
		pid_t pid = ds->proc[s].pid;
		struct window win = { 0 };
		char comm[64] = "?";
		FILE *f;

		if (!alive(pid))
			continue;
		snprintf(path, sizeof(path), "%s/" ERNIC_DS_REGS_FILE "%u",
			 devdir, s);
		if (map_ro(path, 0, &win, err, errlen)) {
			/* a process that cannot write the directory keeps its
			 * registers in private memory */
			printf("# process %u pid %d: no register file (%s)\n",
			       s, (int)pid, err);
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		printf("# process %u pid %d (%s)\n", s, (int)pid, comm);
		show(&win, nqp, counters);
		unmap(&win);
		n++;
	}
	munmap(ds, sizeof(*ds));
	if (!n)
		printf("no process has the device open\n");
	return 0;
}

static int uio_window(const struct ernic_conf *c, struct window *win,
		      char *err, size_t errlen)
{
	char sysdir[PATH_MAX], dev[PATH_MAX + 32];
	struct uio_map m0;
	unsigned int num;

	if (uio_find(c->uio_root, c->uio, sysdir, sizeof(sysdir), &num)) {
		snprintf(err, errlen, "no UIO device '%s' under %s/sys/class/uio",
			 c->uio, c->uio_root);
		return ENODEV;
	}
	if (uio_map_info(sysdir, 0, &m0) ||
	    m0.size < m0.offset + ERNIC_REG_SPACE_SIZE) {
		snprintf(err, errlen, "%s: map0 does not hold the ERNIC window",
			 sysdir);
		return ENODEV;
	}
	snprintf(dev, sizeof(dev), "%s/dev/uio%u", c->uio_root, num);
	return map_ro(dev, m0.offset, win, err, errlen);
}

static int vfio_window(const struct ernic_conf *c, struct window *win,
		       char *err, size_t errlen)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/resource%u",
		 c->vfio_root, c->vfio, c->vfio_bar);
	return map_ro(path, c->vfio_offset, win, err, errlen);
}

int regdump(const char *rundir, const char *name, bool counters, char *err,
	    size_t errlen)
{
	char devdir[PATH_MAX], path[PATH_MAX + 32];
	struct window win = { 0 };
	struct ernic_conf c;
	int ret;

	snprintf(devdir, sizeof(devdir), "%s/" OVERLAY_SYSFS
		 "/class/infiniband/%s/device", rundir, name);
	snprintf(path, sizeof(path), "%s/" ERNIC_CONF_FILE, devdir);
	if (access(path, F_OK)) {
		snprintf(err, errlen, "no device named '%s'", name);
		return ENOENT;
	}
	ret = ernic_conf_load(path, &c, err, errlen);
	if (ret)
		return ret;
	switch (c.backend) {
	case ERNIC_BACKEND_SW:
		ret = sw_windows(devdir, c.c_num_qp, counters, err, errlen);
		if (!ret && counters)
			syndromes(devdir);
		return ret;
	case ERNIC_BACKEND_UIO:
		ret = uio_window(&c, &win, err, errlen);
		break;
	case ERNIC_BACKEND_VFIO:
		ret = vfio_window(&c, &win, err, errlen);
		break;
	default:
		snprintf(err, errlen, "%s: unknown backend", name);
		return EINVAL;
	}
	if (ret)
		return ret;
	show(&win, c.c_num_qp, counters);
	unmap(&win);
	if (counters)
		syndromes(devdir);
	return 0;
}
