// SPDX-License-Identifier: MIT
/* Kernel-free parts of the VFIO backend (vfio_util.h). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vfio_util.h"

int vfio_err(char *err, size_t errlen, const char *bdf, int rc,
	     const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return rc;
	n = snprintf(err, errlen, "vfio %s: ", bdf);
	if (n < 0 || (size_t)n >= errlen)
		return rc;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return rc;
}

int vfio_group_of(const char *root, const char *bdf, unsigned int *group,
		  char *err, size_t errlen)
{
	char link[PATH_MAX], target[PATH_MAX], *base, *end;
	unsigned long g;
	ssize_t n;

	snprintf(link, sizeof(link), "%s/sys/bus/pci/devices/%s/iommu_group",
		 root, bdf);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0) {
		int rc = errno;

		return vfio_err(err, errlen, bdf, rc, "%s: %s%s", link,
				strerror(rc), rc == ENOENT ?
				" (no such function, or no IOMMU: enable it, "
				"e.g. intel_iommu=on; noiommu mode cannot "
				"work, the IP needs IOVAs)" : "");
	}
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	errno = 0;
	g = strtoul(base, &end, 10);
	if (*base < '0' || *base > '9' || *end || errno || g > UINT_MAX)
		return vfio_err(err, errlen, bdf, EINVAL, "iommu_group link "
				"'%s' does not name a group number", target);
	*group = (unsigned int)g;
	return 0;
}

const struct vfio_info_cap_header *vfio_cap_find(const void *info,
						 size_t len, uint32_t first,
						 uint16_t id, size_t need)
{
	const struct vfio_info_cap_header *h;
	uint32_t off = first;

	while (off && off % 4 == 0 && off <= len &&
	       len - off >= sizeof(*h)) {
		h = (const void *)((const char *)info + off);
		if (h->id == id)
			return len - off >= need ? h : NULL;
		if (h->next <= off)
			break;	/* a chain moves forward, or ends */
		off = h->next;
	}
	return NULL;
}

int vfio_iova_ranges(const struct vfio_iommu_type1_info *info, size_t len,
		     struct iova_span **out, size_t *n)
{
	const struct vfio_iommu_type1_info_cap_iova_range *c;
	struct iova_span *r;

	*out = NULL;
	*n = 0;
	if (!(info->flags & VFIO_IOMMU_INFO_CAPS) || len < sizeof(*info))
		return 0;
	c = (const void *)vfio_cap_find(info, len, info->cap_offset,
					VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE,
					sizeof(*c));
	if (!c || (len - (size_t)((const char *)c - (const char *)info) -
		   sizeof(*c)) / sizeof(c->iova_ranges[0]) < c->nr_iovas)
		return 0;	/* absent or cut short: not trusted */
	r = calloc(c->nr_iovas ? c->nr_iovas : 1, sizeof(*r));
	if (!r)
		return ENOMEM;
	for (uint32_t k = 0; k < c->nr_iovas; k++) {
		uint64_t s = c->iova_ranges[k].start, e = c->iova_ranges[k].end;

		if (e < s)
			continue;
		/* Inclusive end; the last byte of a 64-bit space is lost. */
		r[(*n)++] = (struct iova_span){ s, e == UINT64_MAX ? e : e + 1 };
	}
	*out = r;
	return 0;
}

int vfio_window_check(const struct vfio_region_info *ri, size_t len,
		      uint64_t offset, uint32_t win, char *err, size_t errlen)
{
	const struct vfio_region_info_cap_sparse_mmap *sp = NULL;

	if (!ri->size) {
		snprintf(err, errlen, "the BAR does not exist");
		return EINVAL;
	}
	if (!(ri->flags & VFIO_REGION_INFO_FLAG_MMAP)) {
		snprintf(err, errlen, "the BAR cannot be mapped (an I/O BAR, or "
			 "the platform refuses)");
		return EINVAL;
	}
	if (offset % 4096) {
		snprintf(err, errlen, "offset %#llx is not 4 KiB aligned",
			 (unsigned long long)offset);
		return EINVAL;
	}
	if (offset > ri->size || ri->size - offset < win) {
		snprintf(err, errlen, "the %#x-byte ERNIC window at offset %#llx "
			 "does not fit the %#llx-byte BAR", win,
			 (unsigned long long)offset,
			 (unsigned long long)ri->size);
		return EINVAL;
	}
	if (ri->flags & VFIO_REGION_INFO_FLAG_CAPS)
		sp = (const void *)vfio_cap_find(ri, len, ri->cap_offset,
						 VFIO_REGION_INFO_CAP_SPARSE_MMAP,
						 sizeof(*sp));
	if (!sp)
		return 0;
	for (uint32_t k = 0; k < sp->nr_areas; k++) {
		const struct vfio_region_sparse_mmap_area *a = &sp->areas[k];

		if ((const char *)(a + 1) > (const char *)ri + len)
			break;
		if (offset >= a->offset && offset - a->offset <= a->size &&
		    a->size - (offset - a->offset) >= win)
			return 0;
	}
	snprintf(err, errlen, "the ERNIC window at offset %#llx is not inside "
		 "one mmap-able area of the BAR (the MSI-X table is there?)",
		 (unsigned long long)offset);
	return EINVAL;
}

int vfio_page_span(uintptr_t va, size_t len, size_t page, uintptr_t *start,
		   size_t *span)
{
	uintptr_t last = va + (len ? len - 1 : 0);	/* its last byte */

	if (last < va)
		return EINVAL;
	last |= page - 1;
	*start = va & ~(uintptr_t)(page - 1);
	if (last - *start == UINTPTR_MAX)
		return EINVAL;
	*span = last - *start + 1;
	return 0;
}

static int add_span(struct vfio_iova *a, size_t at, uint64_t start,
		    uint64_t end)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 8;
		struct iova_span *f = realloc(a->free, cap * sizeof(*f));

		if (!f)
			return ENOMEM;
		a->free = f;
		a->cap = cap;
	}
	memmove(&a->free[at + 1], &a->free[at], (a->n - at) * sizeof(*a->free));
	a->free[at] = (struct iova_span){ start, end };
	a->n++;
	return 0;
}

static void del_span(struct vfio_iova *a, size_t at)
{
	memmove(&a->free[at], &a->free[at + 1],
		(a->n - at - 1) * sizeof(*a->free));
	a->n--;
}

int vfio_iova_init(struct vfio_iova *a, const struct iova_span *r,
		   size_t n, uint64_t limit)
{
	memset(a, 0, sizeof(*a));
	for (size_t k = 0; k < n; k++) {
		uint64_t s = r[k].start, e = r[k].end < limit ? r[k].end : limit;

		if (s < 4096)
			s = 4096;
		if (s < e)
			vfio_iova_free(a, s, e - s);
	}
	return a->n ? 0 : ENOSPC;
}

void vfio_iova_fini(struct vfio_iova *a)
{
	free(a->free);
	memset(a, 0, sizeof(*a));
}

int vfio_iova_alloc(struct vfio_iova *a, uint64_t len, uint64_t align,
		    uint64_t *iova)
{
	if (!len || !align || (align & (align - 1)))
		return EINVAL;
	for (size_t k = 0; k < a->n; k++) {
		struct iova_span *f = &a->free[k];
		uint64_t s = (f->start + align - 1) & ~(align - 1);

		if (s < f->start || s >= f->end || f->end - s < len)
			continue;
		/* What is left before and after stays free. */
		if (s > f->start && s + len < f->end) {
			uint64_t tail = s + len, end = f->end;

			if (add_span(a, k + 1, tail, end))
				return ENOMEM;
			a->free[k].end = s;
		} else if (s > f->start) {
			f->end = s;
		} else if (s + len < f->end) {
			f->start = s + len;
		} else {
			del_span(a, k);
		}
		*iova = s;
		return 0;
	}
	return ENOMEM;
}

void vfio_iova_free(struct vfio_iova *a, uint64_t iova, uint64_t len)
{
	uint64_t s = iova, e = iova + len;
	size_t k = 0;

	while (k < a->n && a->free[k].start < s)
		k++;
	/* Merge with the neighbours it touches. */
	if (k > 0 && a->free[k - 1].end == s) {
		a->free[k - 1].end = e;
		if (k < a->n && a->free[k].start == e) {
			a->free[k - 1].end = a->free[k].end;
			del_span(a, k);
		}
		return;
	}
	if (k < a->n && a->free[k].start == e) {
		a->free[k].start = s;
		return;
	}
	/* Without memory for the list the span is lost, never handed out
	 * twice. */
	(void)add_span(a, k, s, e);
}

void vfio_map_arg(struct vfio_iommu_type1_dma_map *m, uint64_t vaddr,
		  uint64_t iova, uint64_t size)
{
	*m = (struct vfio_iommu_type1_dma_map){
		.argsz = sizeof(*m),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = vaddr,
		.iova = iova,
		.size = size,
	};
}

void vfio_unmap_arg(struct vfio_iommu_type1_dma_unmap *u, uint64_t iova,
		    uint64_t size)
{
	*u = (struct vfio_iommu_type1_dma_unmap){
		.argsz = sizeof(*u), .iova = iova, .size = size,
	};
}

void vfio_irq_arg(void *buf, uint32_t index, int32_t efd)
{
	struct vfio_irq_set set = {
		.argsz = efd < 0 ? sizeof(set) : VFIO_IRQ_ARG_LEN,
		.flags = VFIO_IRQ_SET_ACTION_TRIGGER |
			 (efd < 0 ? VFIO_IRQ_SET_DATA_NONE :
				    VFIO_IRQ_SET_DATA_EVENTFD),
		.index = index,
		.start = 0,
		.count = efd < 0 ? 0 : 1,
	};

	memset(buf, 0, VFIO_IRQ_ARG_LEN);
	memcpy(buf, &set, sizeof(set));
	if (efd >= 0)
		memcpy((char *)buf + sizeof(set), &efd, sizeof(efd));
}
