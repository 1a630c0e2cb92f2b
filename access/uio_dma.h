/* SPDX-License-Identifier: MIT */
/*
 * DMA memory of the UIO backend: one physically contiguous region (a UIO
 * map) that the IP masters, carved into queues and doorbells, and into
 * which registered user buffers are moved (no IOMMU).
 */
#ifndef ERNIC_UIO_DMA_H
#define ERNIC_UIO_DMA_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

struct ernic_dma;
struct uio_dma;
struct uio_map;

/* The region `map` describes, mapped from fd at file offset foff (UIO:
 * the map index in pages; u-dma-buf: 0). what names it in messages.
 * With own_fd the region closes fd when destroyed. 0 or errno + reason. */
int uio_dma_create(int fd, off_t foff, bool own_fd, const char *what,
		   const struct uio_map *map, struct uio_dma **out, char *err,
		   size_t errlen);
void uio_dma_destroy(struct uio_dma *d);
/* The IP's DMA is not cache-coherent: moves clean and invalidate. */
void uio_dma_set_noncoherent(struct uio_dma *d);

/* Pages come from pager (a shared region) instead of this process's
 * own map; the pager's copy is kept. */
struct ernic_pager;
void uio_dma_set_pager(struct uio_dma *d, const struct ernic_pager *pager);
/* The CPU view of [bus, bus + len), which must lie in the region. */
int uio_dma_view(struct uio_dma *d, uint64_t bus, size_t len,
		 struct ernic_dma *out);

int uio_dma_alloc(struct uio_dma *d, size_t len, size_t align,
		  struct ernic_dma *out);
/* Exactly [bus, bus + len), zeroed; EBUSY when any page is taken. */
int uio_dma_claim(struct uio_dma *d, uint64_t bus, size_t len,
		  struct ernic_dma *out);
void uio_dma_free(struct uio_dma *d, struct ernic_dma *dma);

/*
 * Give [va, va + len) one contiguous bus range: its pages are copied into
 * the region, and the region's pages are moved (mremap) to the same
 * virtual addresses, so the application keeps using its pointer while
 * the IP reaches the same bytes. Only private anonymous memory can move
 * (EFAULT with a log line otherwise). Ranges sharing pages share one
 * move. unmap_user moves the bytes back into ordinary memory.
 */
int uio_dma_map_user(struct uio_dma *d, void *va, size_t len, uint64_t *bus);
void uio_dma_unmap_user(struct uio_dma *d, uint64_t bus);

#endif
