// SPDX-License-Identifier: MIT
/*
 * DMA memory of the VFIO backend (vfio_dma.h). VFIO_IOMMU_MAP_DMA pins
 * the pages it maps, so nothing here can move under the IP; the pinned
 * pages count against RLIMIT_MEMLOCK.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "access_vfio.h"
#include "ernic_access.h"
#include "ernic_conf.h"
#include "vfio_dma.h"
#include "vfio_util.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#define HUGE_SHIFT 21
#define HUGE_SIZE (UINT64_C(1) << HUGE_SHIFT)

struct vfio_map {
	uint64_t iova, size;
	void *va;
	bool owned;		/* dma_alloc's memory: munmap on free */
};

struct vfio_dma {
	const struct vfio_sys *sys;
	int container;
	char bdf[ERNIC_BDF_LEN + 1];
	size_t page;		/* max(CPU page, smallest IOMMU page) */
	pthread_mutex_t lock;	/* iova, maps */
	struct vfio_iova iova;
	struct vfio_map *maps;
	size_t nmaps, cap;
};

static void logf_(const struct vfio_dma *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void logf_(const struct vfio_dma *d, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "libernic: vfio %s: ", d->bdf);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int iommu_map(struct vfio_dma *d, void *va, uint64_t size,
		     uint64_t iova)
{
	struct vfio_iommu_type1_dma_map m;
	int rc;

	vfio_map_arg(&m, (uintptr_t)va, iova, size);
	if (!d->sys->ioctl(d->container, VFIO_IOMMU_MAP_DMA, &m))
		return 0;
	rc = errno;
	logf_(d, "VFIO_IOMMU_MAP_DMA of %#llx bytes: %s%s",
	      (unsigned long long)size, strerror(rc), rc == ENOMEM ?
	      " (the locked-memory limit, ulimit -l, counts pinned pages)" :
	      rc == EFAULT ? " (not writable memory?)" : "");
	return rc;
}

static void iommu_unmap(struct vfio_dma *d, uint64_t iova, uint64_t size)
{
	struct vfio_iommu_type1_dma_unmap u;

	vfio_unmap_arg(&u, iova, size);
	if (d->sys->ioctl(d->container, VFIO_IOMMU_UNMAP_DMA, &u))
		logf_(d, "VFIO_IOMMU_UNMAP_DMA of IOVA %#llx: %s",
		      (unsigned long long)iova, strerror(errno));
}

/* Map [va, va+size) at a fresh IOVA and remember it. Lock held. */
static int map_new(struct vfio_dma *d, void *va, uint64_t size,
		   uint64_t align, bool owned, uint64_t *iova)
{
	int rc;

	if (d->nmaps == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct vfio_map *n = realloc(d->maps, cap * sizeof(*n));

		if (!n)
			return ENOMEM;
		d->maps = n;
		d->cap = cap;
	}
	rc = vfio_iova_alloc(&d->iova, size, align, iova);
	if (rc) {
		logf_(d, "no free IOVA range of %#llx bytes below the IP's "
		      "address limit", (unsigned long long)size);
		return rc;
	}
	rc = iommu_map(d, va, size, *iova);
	if (rc) {
		vfio_iova_free(&d->iova, *iova, size);
		return rc;
	}
	d->maps[d->nmaps++] = (struct vfio_map){ *iova, size, va, owned };
	return 0;
}

/* Unmap the mapping that holds bus, munmap it if owned. Lock held. */
static bool map_del(struct vfio_dma *d, uint64_t bus)
{
	for (size_t k = 0; k < d->nmaps; k++) {
		struct vfio_map m = d->maps[k];

		if (bus < m.iova || bus - m.iova >= m.size)
			continue;
		iommu_unmap(d, m.iova, m.size);
		vfio_iova_free(&d->iova, m.iova, m.size);
		if (m.owned)
			d->sys->munmap(m.va, m.size);
		d->maps[k] = d->maps[--d->nmaps];
		return true;
	}
	return false;
}

int vfio_dma_alloc(struct vfio_dma *d, size_t len, size_t align,
		   struct ernic_dma *out)
{
	const int anon = MAP_PRIVATE | MAP_ANONYMOUS;
	uint64_t size = 0, iova;
	void *va = MAP_FAILED;
	int rc;

	if (!len || (align & (align - 1)) || len > SIZE_MAX - HUGE_SIZE)
		return EINVAL;
	if (align < d->page)
		align = d->page;
	/* Anonymous memory comes zeroed. */
	if (len >= HUGE_SIZE) {
		size = (len + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1);
		va = d->sys->mmap(NULL, size, PROT_READ | PROT_WRITE,
				  anon | MAP_HUGETLB |
				  (HUGE_SHIFT << MAP_HUGE_SHIFT), -1, 0);
		if (va != MAP_FAILED && align < HUGE_SIZE)
			align = HUGE_SIZE;	/* a superpage in the IOMMU */
	}
	if (va == MAP_FAILED) {
		size = (len + d->page - 1) & ~(uint64_t)(d->page - 1);
		va = d->sys->mmap(NULL, size, PROT_READ | PROT_WRITE, anon, -1,
				  0);
		if (va == MAP_FAILED)
			return errno;
	}
	pthread_mutex_lock(&d->lock);
	rc = map_new(d, va, size, align, true, &iova);
	pthread_mutex_unlock(&d->lock);
	if (rc) {
		d->sys->munmap(va, size);
		return rc;
	}
	*out = (struct ernic_dma){ .va = va, .bus = iova, .len = len };
	return 0;
}

void vfio_dma_free(struct vfio_dma *d, struct ernic_dma *dma)
{
	if (!dma || !dma->va)
		return;
	pthread_mutex_lock(&d->lock);
	map_del(d, dma->bus);
	pthread_mutex_unlock(&d->lock);
	memset(dma, 0, sizeof(*dma));
}

int vfio_dma_map_user(struct vfio_dma *d, void *va, size_t len,
		      uint64_t *bus)
{
	uintptr_t start;
	size_t span;
	uint64_t iova;
	int rc;

	if (vfio_page_span((uintptr_t)va, len, d->page, &start, &span))
		return EINVAL;
	pthread_mutex_lock(&d->lock);
	rc = map_new(d, (void *)start, span, d->page, false, &iova);
	pthread_mutex_unlock(&d->lock);
	if (!rc)
		*bus = iova + ((uintptr_t)va - start);
	return rc;
}

int vfio_dma_map_region(struct vfio_dma *d, void *va, size_t len,
			size_t align, uint64_t *bus)
{
	int rc;

	if ((uintptr_t)va % d->page || !len || len % d->page ||
	    (align & (align - 1)))
		return EINVAL;
	pthread_mutex_lock(&d->lock);
	rc = map_new(d, va, len, align > d->page ? align : d->page, false,
		     bus);
	pthread_mutex_unlock(&d->lock);
	return rc;
}

void vfio_dma_unmap_user(struct vfio_dma *d, uint64_t bus)
{
	pthread_mutex_lock(&d->lock);
	if (!map_del(d, bus))
		logf_(d, "unmap of IOVA %#llx, which is not mapped",
		      (unsigned long long)bus);
	pthread_mutex_unlock(&d->lock);
}

/* VFIO_IOMMU_GET_INFO, asked again with room for the capabilities when
 * the kernel says it has some. */
static int iommu_info(struct vfio_dma *d, struct vfio_iommu_type1_info **out,
		      char *err, size_t errlen)
{
	struct vfio_iommu_type1_info *info = calloc(1, sizeof(*info)), *big;
	uint32_t sz = sizeof(*info);
	int rc;

	if (!info)
		goto nomem;
	info->argsz = sz;
	if (d->sys->ioctl(d->container, VFIO_IOMMU_GET_INFO, info))
		goto fail;
	if ((info->flags & VFIO_IOMMU_INFO_CAPS) && info->argsz > sz) {
		sz = info->argsz;
		big = realloc(info, sz);
		if (!big)
			goto nomem;
		info = big;
		memset(info, 0, sz);
		info->argsz = sz;
		if (d->sys->ioctl(d->container, VFIO_IOMMU_GET_INFO, info))
			goto fail;
		if (info->argsz > sz)	/* grew meanwhile: do without */
			info->flags &= ~(uint32_t)VFIO_IOMMU_INFO_CAPS;
	}
	info->argsz = sz;
	*out = info;
	return 0;
fail:
	rc = errno ? errno : EIO;
	free(info);
	vfio_err(err, errlen, d->bdf, rc, "VFIO_IOMMU_GET_INFO: %s",
		 strerror(rc));
	return rc;
nomem:
	free(info);
	vfio_err(err, errlen, d->bdf, ENOMEM, "out of memory");
	return ENOMEM;
}

int vfio_dma_create(const struct vfio_sys *sys, int container,
		    const char *bdf, uint64_t limit, struct vfio_dma **out,
		    char *err, size_t errlen)
{
	/* Without the IOVA-range capability (kernels before 5.4): a 48-bit
	 * space, which every type1 IOMMU has. */
	static const struct iova_span all = { 0, UINT64_C(1) << 48 };
	struct vfio_iommu_type1_info *info = NULL;
	struct iova_span *r;
	struct vfio_dma *d;
	size_t n;
	int rc;

	d = calloc(1, sizeof(*d));
	if (!d)
		return vfio_err(err, errlen, bdf, ENOMEM, "out of memory");
	d->sys = sys;
	d->container = container;
	snprintf(d->bdf, sizeof(d->bdf), "%s", bdf);
	d->page = (size_t)sysconf(_SC_PAGESIZE);
	pthread_mutex_init(&d->lock, NULL);
	rc = iommu_info(d, &info, err, errlen);
	if (rc)
		goto fail;
	if ((info->flags & VFIO_IOMMU_INFO_PGSIZES) && info->iova_pgsizes) {
		uint64_t smallest = info->iova_pgsizes & -info->iova_pgsizes;

		if (smallest > d->page)
			d->page = (size_t)smallest;
	}
	rc = vfio_iova_ranges(info, info->argsz, &r, &n);
	free(info);
	if (rc) {
		vfio_err(err, errlen, bdf, rc, "out of memory");
		goto fail;
	}
	rc = r ? vfio_iova_init(&d->iova, r, n, limit) :
		 vfio_iova_init(&d->iova, &all, 1, limit);
	free(r);
	if (rc) {
		vfio_err(err, errlen, bdf, rc, "the IOMMU offers no IOVA range "
			 "below %#llx, which the IP (C_M_AXI_ADDR_WIDTH) can "
			 "reach", (unsigned long long)limit);
		goto fail;
	}
	*out = d;
	return 0;
fail:
	vfio_dma_destroy(d);
	return rc;
}

void vfio_dma_destroy(struct vfio_dma *d)
{
	if (!d)
		return;
	while (d->nmaps)
		map_del(d, d->maps[0].iova);
	vfio_iova_fini(&d->iova);
	free(d->maps);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
