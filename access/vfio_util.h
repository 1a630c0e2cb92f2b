/* SPDX-License-Identifier: MIT */
/*
 * The parts of the VFIO backend that need no kernel: finding its IOMMU group, checking the BAR that holds the
 * ERNIC window, and handing out IOVAs. access_vfio.c does the ioctls.
 */
#ifndef ERNIC_VFIO_UTIL_H
#define ERNIC_VFIO_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* The IOMMU group of bdf: the number its sysfs iommu_group link names,
 * under root ("" for the system). 0, or errno with a reason. */
int vfio_group_of(const char *root, const char *bdf, unsigned int *group,
		  char *err, size_t errlen);

/* Whether a BAR of size bytes, mmap-able or not, holds the register
 * window (win bytes) at offset. 0, or EINVAL with a reason. */
int vfio_window_check(uint64_t bar_size, int mmappable, uint64_t offset,
		      uint32_t win, char *err, size_t errlen);

/* [va, va + len) widened to whole pages: *start, *span. */
void vfio_page_span(uintptr_t va, size_t len, size_t page, uintptr_t *start,
		    size_t *span);

/*
 * IOVA allocator: first fit over free ranges, merged again on free. The
 * ranges come from the IOMMU's aperture (VFIO_IOMMU_GET_INFO), capped
 * at what the IP can address (C_M_AXI_ADDR_WIDTH).
 */
struct iova_span {
	uint64_t start, end;	/* [start, end) */
};

struct vfio_iova {
	struct iova_span *free;
	size_t n, cap;
};

int vfio_iova_init(struct vfio_iova *a, const struct iova_span *r,
		   size_t n, uint64_t limit);
void vfio_iova_fini(struct vfio_iova *a);
/* len bytes at an align-aligned IOVA (align a power of two). 0, or
 * ENOMEM when no free range fits. */
int vfio_iova_alloc(struct vfio_iova *a, uint64_t len, uint64_t align,
		    uint64_t *iova);
void vfio_iova_free(struct vfio_iova *a, uint64_t iova, uint64_t len);

#endif
