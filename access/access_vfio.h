/* SPDX-License-Identifier: MIT */
/*
 * Access backend for an ERNIC on a PCIe card under VFIO (vfio-pci): the
 * register window inside a BAR, DMA memory and user buffers mapped into
 * the IOMMU at IOVAs of our choosing, MSI-X (or MSI) vector 0 as an
 * eventfd.
 */
#ifndef ERNIC_ACCESS_VFIO_H
#define ERNIC_ACCESS_VFIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ernic_access;
struct ernic_access_share;
struct ernic_conf;
struct uio_dma;
struct vfio_dma;

/* The system calls the backend makes, so that a test can stand in for
 * the kernel (tests/test_vfio.c). */
struct vfio_sys {
	int (*open)(const char *path, int flags);
	int (*close)(int fd);
	int (*ioctl)(int fd, unsigned long req, void *arg);
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off);
	int (*munmap)(void *addr, size_t len);
	int (*eventfd)(unsigned int initval, int flags);
	/* PCI config space, through the device fd's config region. */
	ssize_t (*pread)(int fd, void *buf, size_t len, off_t off);
	ssize_t (*pwrite)(int fd, const void *buf, size_t len, off_t off);
};

extern const struct vfio_sys vfio_sys_kernel;

/* The backend on conf's vfio= function. 0, or errno with a one-line
 * reason naming the function and the step that failed. */
int ernic_access_vfio_open(const struct ernic_conf *conf,
			   struct ernic_access **out, char *err,
			   size_t errlen);
/* The same through sys instead of the kernel (tests). */
int ernic_access_vfio_open_sys(const struct ernic_conf *conf,
			       const struct vfio_sys *sys,
			       struct ernic_access **out, char *err,
			       size_t errlen);

/* A broker's client (vfio_share.c): the backend on the device file and
 * the shared DMA region its broker exported; it owns both fds. */
int ernic_access_vfio_attach(const struct ernic_conf *conf,
			     const struct ernic_access_share *share,
			     struct ernic_access **out, char *err,
			     size_t errlen);
int ernic_access_vfio_attach_sys(const struct ernic_conf *conf,
				 const struct vfio_sys *sys,
				 const struct ernic_access_share *share,
				 struct ernic_access **out, char *err,
				 size_t errlen);

/* The register window: whole pages of conf's BAR around vfio_offset. */
struct vfio_window {
	void *map;
	size_t maplen;
	volatile uint32_t *regs;
};

int vfio_window_map(const struct vfio_sys *sys, int device, const char *bdf,
		    const struct ernic_conf *c, struct vfio_window *w,
		    char *err, size_t errlen);
void vfio_window_unmap(const struct vfio_sys *sys, struct vfio_window *w);

/* A broker's shared DMA region (vfio_share.c): len bytes of a memory
 * file, mapped into the IOMMU through dma once, carved into pages by a
 * uio_dma. 0, or errno with a reason. */
struct vfio_region;
int vfio_region_create(struct vfio_dma *dma, const char *bdf, size_t len,
		       struct vfio_region **out, char *err, size_t errlen);
/* Out of the IOMMU, then gone; NULL is ignored. */
void vfio_region_destroy(struct vfio_region *r, struct vfio_dma *dma);
struct uio_dma *vfio_region_dma(struct vfio_region *r);
/* region_fd, region_bus, region_len of out (the fd stays the region's). */
void vfio_region_export(const struct vfio_region *r,
			struct ernic_access_share *out);

#endif
