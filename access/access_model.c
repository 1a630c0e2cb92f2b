// SPDX-License-Identifier: MIT
/*
 * Access backend for the in-process ERNIC model (ERNIC_BACKEND_SW): the
 * register window is the model's register file, and "DMA" memory is
 * ordinary host memory given a bus address by the model's address space.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access_model.h"
#include "ernic_access.h"
#include "ernic_model.h"

struct model_access {
	struct ernic_access base;	/* first: ops dispatch casts back */
	struct ernic_model *m;
};

static struct ernic_model *to_model(struct ernic_access *acc)
{
	return ((struct model_access *)acc)->m;
}

static uint32_t ma_reg_read(struct ernic_access *acc, uint32_t off)
{
	return ernic_model_reg_read(to_model(acc), off);
}

static void ma_reg_write(struct ernic_access *acc, uint32_t off, uint32_t val)
{
	ernic_model_reg_write(to_model(acc), off, val);
}

static int ma_dma_alloc(struct ernic_access *acc, size_t len, size_t align,
			struct ernic_dma *out)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t a, size;
	void *va;
	int rc;

	if (!len || (align & (align - 1)))
		return EINVAL;
	a = align > page ? align : page;
	if (len > SIZE_MAX - (page - 1))
		return ENOMEM;
	size = (len + page - 1) & ~(page - 1);
	rc = posix_memalign(&va, a, size);
	if (rc)
		return rc;
	memset(va, 0, size);
	/* Map only what was asked for: an IP access past len must fault. */
	rc = ernic_model_map(to_model(acc), va, len, a, &out->bus);
	if (rc) {
		free(va);
		return rc;
	}
	out->va = va;
	out->len = len;
	return 0;
}

static void ma_dma_free(struct ernic_access *acc, struct ernic_dma *dma)
{
	if (!dma || !dma->va)
		return;
	ernic_model_unmap(to_model(acc), dma->bus);
	free(dma->va);
	memset(dma, 0, sizeof(*dma));
}

static int ma_map_user(struct ernic_access *acc, void *va, size_t len,
		       uint64_t *bus)
{
	return ernic_model_map(to_model(acc), va, len, 1, bus);
}

static void ma_unmap_user(struct ernic_access *acc, uint64_t bus, size_t len)
{
	ernic_model_unmap(to_model(acc), bus);
}

/* The model raises rnic_intr from INTSTS & INTEN (PG332 ch.3). */
static int ma_wait_irq(struct ernic_access *acc, int timeout_ms)
{
	return ernic_model_wait_irq(to_model(acc), timeout_ms);
}

static int ma_irq_fd(struct ernic_access *acc)
{
	return ernic_model_irq_fd(to_model(acc));
}

static int ma_irq_enable(struct ernic_access *acc)
{
	ernic_model_irq_enable(to_model(acc));
	return 0;
}

static void ma_close(struct ernic_access *acc)
{
	if (!acc)
		return;
	ernic_model_destroy(to_model(acc));
	free(acc);
}

static const struct ernic_access_ops model_ops = {
	.name = "model",
	.reg_read = ma_reg_read,
	.reg_write = ma_reg_write,
	.dma_alloc = ma_dma_alloc,
	.dma_free = ma_dma_free,
	.map_user = ma_map_user,
	.unmap_user = ma_unmap_user,
	.wait_irq = ma_wait_irq,
	.irq_fd = ma_irq_fd,
	.irq_enable = ma_irq_enable,
	.close = ma_close,
};

int ernic_access_model_open(const struct ernic_conf *conf,
			    struct ernic_access **out, char *err,
			    size_t errlen)
{
	struct model_access *ma = calloc(1, sizeof(*ma));
	int rc;

	if (!ma) {
		snprintf(err, errlen, "model: out of memory");
		return ENOMEM;
	}
	ma->m = ernic_model_create(conf);
	if (!ma->m) {
		rc = errno ? errno : ENOMEM;
		snprintf(err, errlen, "model: %s%s", strerror(rc),
			 rc == EINVAL ? " (C_NUM_QP out of range)" : "");
		free(ma);
		return rc;
	}
	/* The IP is only useful with its Ethernet port: open it now so a
	 * busy address fails the open with a clear reason. */
	rc = ernic_model_start(ma->m, conf, err, errlen);
	if (rc) {
		ernic_model_destroy(ma->m);
		free(ma);
		return rc;
	}
	ma->base.ops = &model_ops;
	*out = &ma->base;
	return 0;
}

struct ernic_model *ernic_access_model(struct ernic_access *acc)
{
	return acc && acc->ops == &model_ops ? to_model(acc) : NULL;
}
