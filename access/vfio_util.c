// SPDX-License-Identifier: MIT
/* Kernel-free parts of the VFIO backend (vfio_util.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ernic_conf.h"
#include "vfio_util.h"

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

		snprintf(err, errlen, "vfio %s: %s: %s%s", bdf, link,
			 strerror(rc), rc == ENOENT ?
			 " (no such device, or no IOMMU: boot with the IOMMU "
			 "on, or vfio's noiommu mode)" : "");
		return rc;
	}
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	errno = 0;
	g = strtoul(base, &end, 10);
	if (!*base || *end || errno || g > UINT_MAX) {
		snprintf(err, errlen, "vfio %s: iommu_group link '%s' does not "
			 "name a group number", bdf, target);
		return EINVAL;
	}
	*group = (unsigned int)g;
	return 0;
}

int vfio_window_check(uint64_t bar_size, int mmappable, uint64_t offset,
		      uint32_t win, char *err, size_t errlen)
{
	if (!bar_size) {
		snprintf(err, errlen, "the BAR does not exist");
		return EINVAL;
	}
	if (!mmappable) {
		snprintf(err, errlen, "the BAR cannot be mapped (not a memory "
			 "BAR, or the platform refuses)");
		return EINVAL;
	}
	if (offset % 4096) {
		snprintf(err, errlen, "offset %#llx is not 4 KiB aligned",
			 (unsigned long long)offset);
		return EINVAL;
	}
	if (offset > bar_size || bar_size - offset < win) {
		snprintf(err, errlen, "the %#x-byte ERNIC window at offset %#llx "
			 "does not fit the %#llx-byte BAR", win,
			 (unsigned long long)offset,
			 (unsigned long long)bar_size);
		return EINVAL;
	}
	return 0;
}

void vfio_page_span(uintptr_t va, size_t len, size_t page, uintptr_t *start,
		    size_t *span)
{
	uintptr_t end = va + (len ? len : 1);

	*start = va & ~(uintptr_t)(page - 1);
	*span = ((end + page - 1) & ~(uintptr_t)(page - 1)) - *start;
}

static int add_range(struct vfio_iova *a, size_t at, uint64_t start,
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

static void del_range(struct vfio_iova *a, size_t at)
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

		/* IOVA 0 reads as "no address" in the IP's registers. */
		if (!s)
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
		/* Split off what is left before and after. */
		if (s + len < f->end) {
			uint64_t tail_s = s + len, tail_e = f->end;

			if (s > f->start) {
				f->end = s;
				if (add_range(a, k + 1, tail_s, tail_e))
					return ENOMEM;
			} else {
				f->start = tail_s;
			}
		} else if (s > f->start) {
			f->end = s;
		} else {
			del_range(a, k);
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
			del_range(a, k);
		}
		return;
	}
	if (k < a->n && a->free[k].start == e) {
		a->free[k].start = s;
		return;
	}
	if (add_range(a, k, s, e)) {
		/* Out of memory for the list: the range is lost, not
		 * handed out twice. */
	}
}
