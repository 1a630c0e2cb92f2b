/* SPDX-License-Identifier: MIT */
/*
 * The parts of the VFIO backend that need no kernel: finding the IOMMU
 * group, reading capability chains, checking the BAR that holds the
 * ERNIC window, handing out IOVAs and filling ioctl arguments.
 * access_vfio.c and vfio_dma.c make the calls; tests/test_vfio.c calls
 * these directly.
 */
#ifndef ERNIC_VFIO_UTIL_H
#define ERNIC_VFIO_UTIL_H

#include <linux/vfio.h>
#include <stddef.h>
#include <stdint.h>

/* "vfio BDF: " and the message into err; returns rc. */
int vfio_err(char *err, size_t errlen, const char *bdf, int rc,
	     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The IOMMU group of bdf: the number its sysfs iommu_group link names,
 * under root ("" for the system). 0, or errno with a reason. */
int vfio_group_of(const char *root, const char *bdf, unsigned int *group,
		  char *err, size_t errlen);

/* Capability id in the chain of an info struct of len bytes whose chain
 * starts at offset first, at least need bytes long: NULL if absent. The
 * walk only moves forward and stays inside len. */
const struct vfio_info_cap_header *vfio_cap_find(const void *info,
						 size_t len, uint32_t first,
						 uint16_t id, size_t need);

/* [start, end) spans, end exclusive. */
struct iova_span {
	uint64_t start, end;
};

/* The usable IOVA ranges of a VFIO_IOMMU_GET_INFO answer of len bytes
 * (the IOVA-range capability): a malloc'd array in *out, or NULL when the
 * kernel does not say. 0 or ENOMEM. */
int vfio_iova_ranges(const struct vfio_iommu_type1_info *info, size_t len,
		     struct iova_span **out, size_t *n);

/* Whether the region (a BAR's VFIO_DEVICE_GET_REGION_INFO answer of len
 * bytes, capabilities included) holds the win-byte register window at
 * offset, mmap-able: inside the BAR, 4 KiB aligned, and inside one area
 * of a sparse-mmap capability if there is one (vfio-pci leaves out the
 * MSI-X table on some kernels). 0, or EINVAL with a reason. */
int vfio_window_check(const struct vfio_region_info *ri, size_t len,
		      uint64_t offset, uint32_t win, char *err, size_t errlen);

/* [va, va + len) widened to whole pages: *start, *span. EINVAL if it
 * wraps the address space. */
int vfio_page_span(uintptr_t va, size_t len, size_t page, uintptr_t *start,
		   size_t *span);

/*
 * IOVA allocator: first fit over sorted free spans, merged again on free.
 * The spans come from the IOMMU's ranges, capped at what the IP can
 * address (C_M_AXI_ADDR_WIDTH); page 0 is never handed out (a zero
 * address reads as "none" in the IP's registers).
 */
struct vfio_iova {
	struct iova_span *free;
	size_t n, cap;
};

int vfio_iova_init(struct vfio_iova *a, const struct iova_span *r,
		   size_t n, uint64_t limit);
void vfio_iova_fini(struct vfio_iova *a);
/* len bytes at an align-aligned IOVA (align a power of two). 0, EINVAL,
 * or ENOMEM when no free span fits. */
int vfio_iova_alloc(struct vfio_iova *a, uint64_t len, uint64_t align,
		    uint64_t *iova);
void vfio_iova_free(struct vfio_iova *a, uint64_t iova, uint64_t len);

/* VFIO_IOMMU_MAP_DMA / UNMAP_DMA arguments: read and write for the IP. */
void vfio_map_arg(struct vfio_iommu_type1_dma_map *m, uint64_t vaddr,
		  uint64_t iova, uint64_t size);
void vfio_unmap_arg(struct vfio_iommu_type1_dma_unmap *u, uint64_t iova,
		    uint64_t size);

/* VFIO_DEVICE_SET_IRQS argument: struct vfio_irq_set and its data[] in
 * one buffer (a struct cannot follow a flexible array). efd >= 0: vector
 * 0 of index triggers efd; efd < 0: every vector of index off. */
#define VFIO_IRQ_ARG_LEN (sizeof(struct vfio_irq_set) + sizeof(int32_t))
void vfio_irq_arg(void *buf, uint32_t index, int32_t efd);

#endif
