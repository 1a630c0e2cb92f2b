// SPDX-License-Identifier: MIT
/*
 * DMA region of the UIO backend (uio_dma.h): a page allocator over one
 * physically contiguous UIO map, and "moves" that give registered user
 * buffers a contiguous bus range without an IOMMU.
 *
 * A move copies the buffer's pages into region pages, then mremap()s a
 * second mapping of those region pages over the buffer's own virtual
 * range: mremap with MREMAP_FIXED replaces the old pages in one step, so
 * the buffer is never unmapped. UIO can map a region only from its start
 * (the mmap offset selects the map), hence the second mapping covers
 * [0, off + len) and keeps only the tail it needs. Undoing a move swaps
 * ordinary anonymous pages back in the same way.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "access_uio.h"
#include "dma_cache.h"
#include "ernic_access.h"
#include "uio_dma.h"

struct move {
	uintptr_t start;	/* page-aligned user range */
	size_t len;
	size_t off;		/* its pages in the region */
	unsigned int refs;	/* registrations inside it */
	/* Region pages held free just before and after off (bytes): a
	 * buffer that malloc puts next to this one grows the move into
	 * them, whoever took the region's other pages meanwhile. */
	size_t held_front, held_back;
};

/* Pages held on each side of a new move. */
#define MOVE_HELD_PAGES 4

struct uio_dma {
	pthread_mutex_t lock;	/* everything below */
	int fd;
	off_t foff;		/* of the region in fd */
	bool own_fd;
	size_t page;
	uint8_t *va;		/* the whole region */
	uint64_t bus;
	size_t size;
	size_t npages;
	uint8_t *used;		/* one byte per page: cheap and simple */
	struct move *moves;
	size_t nmoves, cap;
	bool noncoherent;
	struct ernic_pager pager;	/* get == NULL: used[] decides */
};

static void uio_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void uio_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("libernic: uio: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int uio_dma_create(int fd, off_t foff, bool own_fd, const char *what,
		   const struct uio_map *map, struct uio_dma **out, char *err,
		   size_t errlen)
{
	struct uio_dma *d = calloc(1, sizeof(*d));

	if (!d) {
		snprintf(err, errlen, "uio: out of memory");
		return ENOMEM;
	}
	d->page = (size_t)sysconf(_SC_PAGESIZE);
	if (map->offset || (map->addr & (d->page - 1)) ||
	    map->size < d->page || map->size > SIZE_MAX) {
		snprintf(err, errlen, "uio: DMA region %s at %#" PRIx64 " (%#"
			 PRIx64 " bytes) is not whole pages", what, map->addr,
			 map->size);
		free(d);
		return EINVAL;
	}
	d->fd = fd;
	d->foff = foff;
	d->bus = map->addr;
	d->size = (size_t)map->size & ~(d->page - 1);
	d->npages = d->size / d->page;
	d->used = calloc(d->npages, 1);
	d->va = mmap(NULL, d->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		     foff);
	if (!d->used || d->va == MAP_FAILED) {
		int rc = d->used ? errno : ENOMEM;

		snprintf(err, errlen, "uio: mmap DMA region %s (%zu bytes): %s",
			 what, d->size, strerror(rc));
		free(d->used);
		free(d);
		return rc;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->own_fd = own_fd;
	*out = d;
	return 0;
}

void uio_dma_destroy(struct uio_dma *d)
{
	if (!d)
		return;
	/* Buffers still moved stay usable: their mappings are their own. */
	munmap(d->va, d->size);
	if (d->own_fd)
		close(d->fd);
	pthread_mutex_destroy(&d->lock);
	free(d->moves);
	free(d->used);
	free(d);
}

/* First fit of n pages aligned to a pages, or the pager's choice.
 * Caller locks. */
static int pages_get(struct uio_dma *d, size_t n, size_t a, size_t *first)
{
	if (d->pager.get) {
		uint64_t bus;
		int rc = d->pager.get(d->pager.arg, n * d->page, a * d->page,
				      &bus);

		if (rc)
			return rc;
		if (bus < d->bus || (bus - d->bus) % d->page ||
		    (bus - d->bus) / d->page + n > d->npages) {
			uio_log("the broker gave pages at %#" PRIx64
				" outside the DMA region", bus);
			d->pager.put(d->pager.arg, bus, n * d->page);
			return EIO;
		}
		*first = (size_t)((bus - d->bus) / d->page);
		return 0;
	}
	for (size_t p = 0; p + n <= d->npages; p += a) {
		size_t k = 0;

		while (k < n && !d->used[p + k])
			k++;
		if (k == n) {
			memset(d->used + p, 1, n);
			*first = p;
			return 0;
		}
	}
	return ENOMEM;
}

void uio_dma_set_pager(struct uio_dma *d, const struct ernic_pager *pager)
{
	pthread_mutex_lock(&d->lock);
	d->pager = *pager;
	pthread_mutex_unlock(&d->lock);
}

int uio_dma_view(struct uio_dma *d, uint64_t bus, size_t len,
		 struct ernic_dma *out)
{
	if (!len || bus < d->bus || bus - d->bus > d->size ||
	    len > d->size - (bus - d->bus))
		return ERANGE;
	out->va = d->va + (bus - d->bus);
	out->bus = bus;
	out->len = len;
	return 0;
}

int uio_dma_alloc(struct uio_dma *d, size_t len, size_t align,
		  struct ernic_dma *out)
{
	size_t n, a, p;
	int rc;

	if (!len || (align & (align - 1)) || len > d->size)
		return len > d->size ? ENOMEM : EINVAL;
	n = (len + d->page - 1) / d->page;
	a = align > d->page ? align / d->page : 1;
	pthread_mutex_lock(&d->lock);
	rc = pages_get(d, n, a, &p);
	pthread_mutex_unlock(&d->lock);
	if (rc)
		return rc;
	out->va = d->va + p * d->page;
	out->bus = d->bus + p * d->page;
	out->len = len;
	memset(out->va, 0, n * d->page);
	return 0;
}

/* Exactly pages [first, first + n), or EBUSY. Caller locks. */
static int pages_claim(struct uio_dma *d, size_t first, size_t n)
{
	if (first > d->npages || n > d->npages - first)
		return EBUSY;
	if (d->pager.claim)
		return d->pager.claim(d->pager.arg, d->bus + first * d->page,
				      n * d->page);
	if (d->pager.get)
		return EBUSY;	/* a pager that cannot claim */
	for (size_t k = 0; k < n; k++)
		if (d->used[first + k])
			return EBUSY;
	memset(d->used + first, 1, n);
	return 0;
}

int uio_dma_claim(struct uio_dma *d, uint64_t bus, size_t len,
		  struct ernic_dma *out)
{
	size_t n = (len + d->page - 1) / d->page, p;
	int rc;

	if (!len || bus < d->bus || (bus - d->bus) % d->page)
		return EINVAL;
	p = (size_t)((bus - d->bus) / d->page);
	pthread_mutex_lock(&d->lock);
	rc = pages_claim(d, p, n);
	pthread_mutex_unlock(&d->lock);
	if (rc)
		return rc;
	out->va = d->va + p * d->page;
	out->bus = bus;
	out->len = len;
	memset(out->va, 0, n * d->page);
	return 0;
}

static void pages_put(struct uio_dma *d, size_t off, size_t len)
{
	if (d->pager.put) {
		d->pager.put(d->pager.arg, d->bus + off,
			     (len + d->page - 1) & ~(d->page - 1));
		return;
	}
	memset(d->used + off / d->page, 0, (len + d->page - 1) / d->page);
}

void uio_dma_free(struct uio_dma *d, struct ernic_dma *dma)
{
	if (!dma || !dma->va)
		return;
	pthread_mutex_lock(&d->lock);
	pages_put(d, (size_t)((uint8_t *)dma->va - d->va), dma->len);
	pthread_mutex_unlock(&d->lock);
	memset(dma, 0, sizeof(*dma));
}

/*
 * Is [start, end) private, writable, anonymous memory (heap, malloc
 * arenas, mmap(MAP_ANONYMOUS))? Moving file-backed or shared pages
 * would change what they are. On refusal, why names the culprit.
 */
static bool private_anon(uintptr_t start, uintptr_t end, char *why,
			 size_t wlen)
{
	char line[512];
	uintptr_t covered = start;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f) {
		snprintf(why, wlen, "/proc/self/maps: %s", strerror(errno));
		return false;
	}
	while (covered < end && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, inode;
		char perms[8], path[256] = "";

		if (sscanf(line, "%lx-%lx %7s %*x %*x:%*x %lu %255s", &lo, &hi,
			   perms, &inode, path) < 4)
			continue;
		if (hi <= covered || lo >= end)
			continue;
		if (lo > covered)
			break;		/* a hole */
		if (strncmp(perms, "rw-p", 4) || inode ||
		    (path[0] && strcmp(path, "[heap]"))) {
			snprintf(why, wlen, "%lx-%lx %s %s is not private "
				 "anonymous memory", lo, hi, perms,
				 path[0] ? path : "(shared)");
			fclose(f);
			return false;
		}
		covered = hi;
	}
	fclose(f);
	if (covered < end) {
		snprintf(why, wlen, "%#lx is not mapped",
			 (unsigned long)covered);
		return false;
	}
	return true;
}

/* Put region pages [off, off + len) at start, replacing what is there. */
static int place(struct uio_dma *d, size_t off, size_t len, uintptr_t start)
{
	uint8_t *tmp = mmap(NULL, off + len, PROT_READ | PROT_WRITE,
			    MAP_SHARED, d->fd, d->foff);
	void *r;

	if (tmp == MAP_FAILED)
		return errno;
	r = mremap(tmp + off, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
		   (void *)start);
	if (r == MAP_FAILED) {
		int rc = errno;

		munmap(tmp, off + len);
		return rc;
	}
	if (off)
		munmap(tmp, off);
	return 0;
}

/* Move [start, end) into region pages at off, for a move: copy, clean
 * for the IP, map them over it. Caller locks and has the pages. */
static int move_in(struct uio_dma *d, size_t off, uintptr_t start,
		   uintptr_t end)
{
	memcpy(d->va + off, (void *)start, end - start);
	/* The IP may read the buffer as soon as the MR exists. */
	if (d->noncoherent)
		ernic_cache_maint(d->va + off, end - start, true);
	return place(d, off, end - start, start);
}

/*
 * A registration that shares pages with move m and reaches past it
 * (malloc puts buffers side by side): m grows over the pages before and
 * after it, which must sit in the region pages just before and after
 * m's, so that m stays one bus range and its MRs keep their addresses.
 * Caller locks.
 */
static int grow(struct uio_dma *d, struct move *m, uintptr_t start,
		uintptr_t end, const void *va, size_t len)
{
	size_t front = start < m->start ? m->start - start : 0;
	size_t back = end > m->start + m->len ? end - (m->start + m->len) : 0;
	size_t cf, cb;
	char why[160];
	int rc;

	if (!front && !back)
		return 0;
	/* m's own pages are the region's already */
	if ((front && !private_anon(start, m->start, why, sizeof(why))) ||
	    (back && !private_anon(m->start + m->len, end, why, sizeof(why)))) {
		uio_log("cannot register %p (%zu bytes): without an IOMMU its "
			"pages move into the DMA region, and %s", va, len, why);
		return EFAULT;
	}
	/* Beyond the pages held, the region's next ones must be free. */
	cf = front > m->held_front ? front - m->held_front : 0;
	cb = back > m->held_back ? back - m->held_back : 0;
	if (cf > m->off - m->held_front ||
	    (cf && pages_claim(d, (m->off - front) / d->page, cf / d->page)))
		goto taken;
	if (cb && pages_claim(d, (m->off + m->len + m->held_back) / d->page,
			      cb / d->page)) {
		if (cf)
			pages_put(d, m->off - front, cf);
		goto taken;
	}
	m->held_front = m->held_front > front ? m->held_front - front : 0;
	m->held_back = m->held_back > back ? m->held_back - back : 0;
	rc = front ? move_in(d, m->off - front, start, m->start) : 0;
	if (!rc) {
		m->start -= front;
		m->off -= front;
		m->len += front;
		front = 0;
		rc = back ? move_in(d, m->off + m->len, m->start + m->len,
				    end) : 0;
	}
	if (!rc) {
		m->len += back;
		return 0;
	}
	/* What did not move stays held, with the move. */
	m->held_front += front;
	m->held_back += back;
	goto failed;
taken:
	uio_log("cannot register %p (%zu bytes): it shares pages with a "
		"registered buffer, and the DMA region pages beside that "
		"buffer's are taken", va, len);
	return EINVAL;
failed:
	uio_log("cannot move %p (%zu bytes) into the DMA region: %s", va, len,
		strerror(rc));
	return rc;
}

int uio_dma_map_user(struct uio_dma *d, void *va, size_t len, uint64_t *bus)
{
	const uintptr_t a = (uintptr_t)va;
	uintptr_t start, end;
	struct move *m;
	size_t p, held;
	char why[160];
	int rc;

	if (!va || !len || a > UINTPTR_MAX - len - d->page)
		return EINVAL;
	start = a & ~(uintptr_t)(d->page - 1);
	end = (a + len + d->page - 1) & ~(uintptr_t)(d->page - 1);
	pthread_mutex_lock(&d->lock);
	m = NULL;
	for (size_t k = 0; k < d->nmoves; k++) {
		if (end <= d->moves[k].start ||
		    start >= d->moves[k].start + d->moves[k].len)
			continue;
		if (m) {
			uio_log("cannot register %p (%zu bytes): it spans two "
				"registered buffers' pages", va, len);
			rc = EINVAL;
			goto out;
		}
		m = &d->moves[k];
	}
	if (m) {
		rc = grow(d, m, start, end, va, len);
		if (!rc) {
			m->refs++;
			*bus = d->bus + m->off + (a - m->start);
		}
		goto out;
	}
	if (!private_anon(start, end, why, sizeof(why))) {
		uio_log("cannot register %p (%zu bytes): without an IOMMU its "
			"pages move into the DMA region, and %s", va, len, why);
		rc = EFAULT;
		goto out;
	}
	if (d->nmoves == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;
		struct move *n = realloc(d->moves, cap * sizeof(*n));

		if (!n) {
			rc = ENOMEM;
			goto out;
		}
		d->moves = n;
		d->cap = cap;
	}
	held = MOVE_HELD_PAGES * d->page;
	rc = pages_get(d, (end - start + 2 * held) / d->page, 1, &p);
	if (rc) {
		held = 0;	/* a region nearly full: no room to spare */
		rc = pages_get(d, (end - start) / d->page, 1, &p);
	}
	if (rc) {
		uio_log("cannot register %p (%zu bytes): the DMA region "
			"(%zu MiB) is full", va, len, d->size >> 20);
		goto out;
	}
	rc = move_in(d, p * d->page + held, start, end);
	if (rc) {
		uio_log("cannot move %p (%zu bytes) into the DMA region: %s",
			va, len, strerror(rc));
		pages_put(d, p * d->page, end - start + 2 * held);
		goto out;
	}
	d->moves[d->nmoves++] = (struct move){
		.start = start, .len = end - start, .off = p * d->page + held,
		.refs = 1, .held_front = held, .held_back = held,
	};
	*bus = d->bus + p * d->page + held + (a - start);
out:
	pthread_mutex_unlock(&d->lock);
	return rc;
}

void uio_dma_set_noncoherent(struct uio_dma *d)
{
	d->noncoherent = true;
}

void uio_dma_unmap_user(struct uio_dma *d, uint64_t bus)
{
	pthread_mutex_lock(&d->lock);
	for (size_t k = 0; k < d->nmoves; k++) {
		struct move *m = &d->moves[k];
		uint8_t *anon;

		if (bus < d->bus + m->off || bus >= d->bus + m->off + m->len)
			continue;
		if (--m->refs)
			break;
		/* Fresh private pages with the bytes, swapped in whole. */
		anon = mmap(NULL, m->len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (anon == MAP_FAILED) {
			uio_log("cannot move %#lx back out of the DMA region: "
				"%s; it stays there", (unsigned long)m->start,
				strerror(errno));
			break;
		}
		if (d->noncoherent)
			ernic_cache_maint((void *)m->start, m->len, false);
		memcpy(anon, (void *)m->start, m->len);
		if (mremap(anon, m->len, m->len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   (void *)m->start) == MAP_FAILED) {
			uio_log("cannot move %#lx back out of the DMA region: "
				"%s; it stays there", (unsigned long)m->start,
				strerror(errno));
			munmap(anon, m->len);
			break;
		}
		pages_put(d, m->off - m->held_front,
			  m->held_front + m->len + m->held_back);
		*m = d->moves[--d->nmoves];
		break;
	}
	pthread_mutex_unlock(&d->lock);
}
