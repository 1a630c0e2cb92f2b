// SPDX-License-Identifier: MIT
/*
 * A VFIO device shared by processes through its broker
 * (docs/multiprocess.md). Only one process at a time may hold a VFIO
 * group, so the broker holds it, and a client drives the device through
 * two files the broker passes it over its socket (SCM_RIGHTS):
 *
 *   - the device's file, through which the client maps the register
 *     window of the BAR itself (vfio-pci lets any holder of the file
 *     mmap it);
 *   - a memory file, the region of DMA memory that the broker mapped
 *     into the IOMMU once, at start. The broker hands its pages out as a
 *     UIO device's region is handed out (uio_dma.c), and a client's
 *     registered buffers are moved into it in the same way.
 *
 * Why not let each client map its own memory through the container,
 * passed as well? VFIO type1 lets only the address space that mapped an
 * IOVA range unmap it: a client that died would leave its pages pinned
 * and reachable by the IP until the broker exits. The region stays the
 * broker's, and a dead client's pages go back to it like any others.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "access_uio.h"
#include "access_vfio.h"
#include "dma_cache.h"
#include "ernic_access.h"
#include "ernic_conf.h"
#include "ernic_hw.h"
#include "mmio.h"
#include "uio_dma.h"
#include "vfio_dma.h"
#include "vfio_util.h"

/* The region's IOVA alignment: uio_dma aligns allocations from the
 * region's start, so a start this aligned makes them aligned on the
 * bus too, up to 2 MiB (an IOMMU superpage). */
#define REGION_ALIGN (UINT64_C(2) << 20)

struct vfio_region {
	int fd;
	void *va;		/* the mapping the IOMMU was given */
	size_t len;
	uint64_t bus;
	struct uio_dma *dma;	/* a second mapping, handed out by pages */
};

int vfio_region_create(struct vfio_dma *dma, const char *bdf, size_t len,
		       struct vfio_region **out, char *err, size_t errlen)
{
	struct vfio_region *r = calloc(1, sizeof(*r));
	char why[160] = "";
	int rc;

	if (!r)
		return vfio_err(err, errlen, bdf, ENOMEM, "out of memory");
	r->len = len;
	r->va = MAP_FAILED;
	r->fd = memfd_create("ernic-shared-dma", MFD_CLOEXEC);
	if (r->fd < 0 || ftruncate(r->fd, (off_t)len)) {
		rc = errno;
		vfio_err(err, errlen, bdf, rc, "the DMA memory shared with "
			 "clients (%zu MiB): %s", len >> 20, strerror(rc));
		goto fail;
	}
	r->va = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->va == MAP_FAILED) {
		rc = errno;
		vfio_err(err, errlen, bdf, rc, "mmap of the DMA memory shared "
			 "with clients: %s", strerror(rc));
		goto fail;
	}
	rc = vfio_dma_map_region(dma, r->va, len, REGION_ALIGN, &r->bus);
	if (rc) {
		vfio_err(err, errlen, bdf, rc, "the DMA memory shared with "
			 "clients (%zu MiB) cannot go into the IOMMU: %s%s",
			 len >> 20, strerror(rc), rc == ENOMEM ?
			 " (RLIMIT_MEMLOCK, or a smaller vfio_share_mib)" : "");
		r->bus = 0;
		goto fail;
	}
	rc = uio_dma_create(r->fd, 0, false, "shared with clients",
			    &(struct uio_map){ .addr = r->bus, .size = len },
			    &r->dma, why, sizeof(why));
	if (rc) {
		vfio_err(err, errlen, bdf, rc, "%s", why);
		goto fail;
	}
	*out = r;
	return 0;
fail:
	vfio_region_destroy(r, dma);
	return rc;
}

void vfio_region_destroy(struct vfio_region *r, struct vfio_dma *dma)
{
	if (!r)
		return;
	uio_dma_destroy(r->dma);
	if (r->bus)
		vfio_dma_unmap_user(dma, r->bus);
	if (r->va != MAP_FAILED)
		munmap(r->va, r->len);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

struct uio_dma *vfio_region_dma(struct vfio_region *r)
{
	return r->dma;
}

void vfio_region_export(const struct vfio_region *r,
			struct ernic_access_share *out)
{
	out->region_fd = r->fd;
	out->region_bus = r->bus;
	out->region_len = r->len;
}

/* ---- a client: the window from the device file, pages from the
 * broker's region ---- */

struct vfio_client {
	struct ernic_access base;	/* first: ops dispatch casts back */
	struct ernic_access_ops ops;
	const struct vfio_sys *sys;
	int device;
	struct vfio_window win;
	struct uio_dma *dma;
};

static struct vfio_client *to_client(struct ernic_access *acc)
{
	return (struct vfio_client *)acc;
}

static uint32_t vc_reg_read(struct ernic_access *acc, uint32_t off)
{
	return ernic_mmio_rd(to_client(acc)->win.regs, off);
}

static void vc_reg_write(struct ernic_access *acc, uint32_t off, uint32_t val)
{
	ernic_mmio_wr(to_client(acc)->win.regs, off, val);
}

static int vc_dma_alloc(struct ernic_access *acc, size_t len, size_t align,
			struct ernic_dma *out)
{
	return uio_dma_alloc(to_client(acc)->dma, len, align, out);
}

static void vc_dma_free(struct ernic_access *acc, struct ernic_dma *dma)
{
	uio_dma_free(to_client(acc)->dma, dma);
}

static int vc_map_user(struct ernic_access *acc, void *va, size_t len,
		       uint64_t *bus)
{
	return uio_dma_map_user(to_client(acc)->dma, va, len, bus);
}

static void vc_unmap_user(struct ernic_access *acc, uint64_t bus, size_t len)
{
	(void)len;
	uio_dma_unmap_user(to_client(acc)->dma, bus);
}

/* The broker alone takes the interrupt; its clients hear of it. */
static int vc_wait_irq(struct ernic_access *acc, int timeout_ms)
{
	(void)acc;
	(void)timeout_ms;
	return -EOPNOTSUPP;
}

static int vc_irq_fd(struct ernic_access *acc)
{
	(void)acc;
	return -1;
}

static int vc_irq_enable(struct ernic_access *acc)
{
	(void)acc;
	return EOPNOTSUPP;
}

static int vc_flush(struct ernic_access *acc)
{
	ernic_mmio_flush(to_client(acc)->win.regs);
	return 0;
}

static void vc_dma_sync(struct ernic_access *acc, const void *va, size_t len,
			enum ernic_dma_dir dir)
{
	(void)acc;
	ernic_cache_maint(va, len, dir == ERNIC_DMA_TO_DEVICE);
}

static void vc_set_pager(struct ernic_access *acc,
			 const struct ernic_pager *pager)
{
	uio_dma_set_pager(to_client(acc)->dma, pager);
}

static int vc_dma_view(struct ernic_access *acc, uint64_t bus, size_t len,
		       struct ernic_dma *out)
{
	return uio_dma_view(to_client(acc)->dma, bus, len, out);
}

static int vc_dma_claim(struct ernic_access *acc, uint64_t bus, size_t len,
			struct ernic_dma *out)
{
	return uio_dma_claim(to_client(acc)->dma, bus, len, out);
}

static void vc_close(struct ernic_access *acc)
{
	struct vfio_client *c = to_client(acc);

	uio_dma_destroy(c->dma);
	vfio_window_unmap(c->sys, &c->win);
	if (c->device >= 0)
		c->sys->close(c->device);
	free(c);
}

static const struct ernic_access_ops vfio_client_ops = {
	.name = "vfio",
	.reg_read = vc_reg_read,
	.reg_write = vc_reg_write,
	.dma_alloc = vc_dma_alloc,
	.dma_free = vc_dma_free,
	.map_user = vc_map_user,
	.unmap_user = vc_unmap_user,
	.wait_irq = vc_wait_irq,
	.irq_fd = vc_irq_fd,
	.irq_enable = vc_irq_enable,
	.flush = vc_flush,
	.set_pager = vc_set_pager,
	.dma_view = vc_dma_view,
	.dma_claim = vc_dma_claim,
	.close = vc_close,
};

int ernic_access_vfio_attach_sys(const struct ernic_conf *conf,
				 const struct vfio_sys *sys,
				 const struct ernic_access_share *share,
				 struct ernic_access **out, char *err,
				 size_t errlen)
{
	char bdf[ERNIC_BDF_LEN + 1] = "?", why[160] = "";
	struct vfio_client *c;
	int region_fd = share->region_fd, rc;

	if (!err)
		errlen = 0;
	ernic_bdf_parse(conf->vfio, bdf);
	c = calloc(1, sizeof(*c));
	if (!c) {
		rc = vfio_err(err, errlen, bdf, ENOMEM, "out of memory");
		goto fail_fds;
	}
	c->ops = vfio_client_ops;
	c->base.ops = &c->ops;
	c->sys = sys;
	c->device = share->device_fd;
	if (!conf->coherent) {
		if (!ERNIC_HAVE_CACHE_OPS) {
			rc = vfio_err(err, errlen, bdf, EOPNOTSUPP, "coherent=0 "
				      "needs cache maintenance from user space, "
				      "which this CPU architecture lacks");
			goto fail;
		}
		c->ops.dma_sync = vc_dma_sync;
	}
	rc = vfio_window_map(sys, c->device, bdf, conf, &c->win, err, errlen);
	if (rc)
		goto fail;
	c->base.doorbells = c->win.regs;
	rc = uio_dma_create(region_fd, 0, true, "shared by the broker",
			    &(struct uio_map){ .addr = share->region_bus,
					       .size = share->region_len },
			    &c->dma, why, sizeof(why));
	if (rc) {
		vfio_err(err, errlen, bdf, rc, "%s", why);
		goto fail;
	}
	if (!conf->coherent)
		uio_dma_set_noncoherent(c->dma);
	*out = &c->base;
	return 0;
fail:
	c->device = -1;
	vc_close(&c->base);
fail_fds:
	sys->close(share->device_fd);
	close(region_fd);
	return rc;
}

int ernic_access_vfio_attach(const struct ernic_conf *conf,
			     const struct ernic_access_share *share,
			     struct ernic_access **out, char *err,
			     size_t errlen)
{
	return ernic_access_vfio_attach_sys(conf, &vfio_sys_kernel, share, out,
					    err, errlen);
}
