/* SPDX-License-Identifier: MIT */
/*
 * DMA memory of the VFIO backend: with an IOMMU any page can have any
 * IOVA, so queues are ordinary anonymous memory and a registered user
 * buffer keeps its own pages, each given one contiguous IOVA range
 * (PG332 "Memory Registration": one base per MR).
 */
#ifndef ERNIC_VFIO_DMA_H
#define ERNIC_VFIO_DMA_H

#include <stddef.h>
#include <stdint.h>

struct ernic_dma;
struct vfio_dma;
struct vfio_sys;

/* DMA through container (type1 IOMMU already set): its page sizes and
 * usable IOVA ranges (VFIO_IOMMU_GET_INFO), IOVAs kept below limit (what
 * the IP can address). bdf names the function in messages. 0, or errno
 * with a reason. */
int vfio_dma_create(const struct vfio_sys *sys, int container,
		    const char *bdf, uint64_t limit, struct vfio_dma **out,
		    char *err, size_t errlen);
/* Unmaps everything still mapped, user buffers included. */
void vfio_dma_destroy(struct vfio_dma *d);

/* Zeroed memory at an align-aligned IOVA: 2 MiB huge pages when len is
 * that big and the system has them (the IOMMU then maps it with few
 * entries), else pages. */
int vfio_dma_alloc(struct vfio_dma *d, size_t len, size_t align,
		   struct ernic_dma *out);
void vfio_dma_free(struct vfio_dma *d, struct ernic_dma *dma);

/* The pages of [va, va + len), whole, at one fresh IOVA range; *bus is
 * va's IOVA. unmap_user takes any bus address inside the range. */
int vfio_dma_map_user(struct vfio_dma *d, void *va, size_t len,
		      uint64_t *bus);
void vfio_dma_unmap_user(struct vfio_dma *d, uint64_t bus);
/* Like map_user, for whole pages at va, at an align-aligned IOVA. */
int vfio_dma_map_region(struct vfio_dma *d, void *va, size_t len,
			size_t align, uint64_t *bus);

#endif
