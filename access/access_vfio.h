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
#include <sys/types.h>

struct ernic_access;
struct ernic_conf;

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

#endif
