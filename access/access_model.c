// SPDX-License-Identifier: MIT
/*
 * Access backend for the in-process ERNIC model (ERNIC_BACKEND_SW), built
 * into libernic-sw.so (ernic_sw.h) with the model itself: the
 * register window is the model's register file, and "DMA" memory is
 * ordinary host memory given a bus address by the model's address space.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access_model.h"
#include "ernic_conf.h"
#include "ernic_devstate.h"
#include "ernic_access.h"
#include "ernic_model.h"
#include "ernic_sw.h"

/*
 * coherent=0 on a software ERNIC simulates a non-coherent bus at its
 * strictest, as a test oracle for the provider's cache maintenance: the
 * IP sees its own copy of every DMA block and mapped user buffer (the
 * "DDR"), the CPU the original (its "cache"), and only dma_sync moves
 * bytes between them, as if no cache line were ever evicted. A missing
 * clean leaves the IP reading old bytes; a missing invalidate leaves the
 * CPU reading old bytes. (Byte-exact: sharing a cache line between the
 * CPU's and the IP's words is not caught here; ernic_hw.h keeps them
 * apart.)
 */
struct shadow {
	uint8_t *cpu;
	uint8_t *dev;
	size_t len;
	uint64_t bus;
};

struct model_access {
	struct ernic_access base;	/* first: ops dispatch casts back */
	struct ernic_access_ops ops;	/* model_ops, + dma_sync if coherent=0 */
	struct ernic_model *m;
	pthread_mutex_t lock;		/* shadows */
	struct shadow *sh;
	size_t nsh, cap;
};

static struct ernic_model *to_model(struct ernic_access *acc)
{
	return ((struct model_access *)acc)->m;
}

static struct model_access *to_ma(struct ernic_access *acc)
{
	return (struct model_access *)acc;
}

static int shadow_add(struct model_access *ma, uint8_t *cpu, uint8_t *dev,
		      size_t len, uint64_t bus)
{
	int rc = 0;

	pthread_mutex_lock(&ma->lock);
	if (ma->nsh == ma->cap) {
		size_t cap = ma->cap ? ma->cap * 2 : 16;
		struct shadow *n = realloc(ma->sh, cap * sizeof(*n));

		if (!n) {
			rc = ENOMEM;
			goto out;
		}
		ma->sh = n;
		ma->cap = cap;
	}
	ma->sh[ma->nsh++] = (struct shadow){ cpu, dev, len, bus };
out:
	pthread_mutex_unlock(&ma->lock);
	return rc;
}

/* Drop the shadow of bus; returns its IP-side copy to free. */
static uint8_t *shadow_del(struct model_access *ma, uint64_t bus)
{
	uint8_t *dev = NULL;

	pthread_mutex_lock(&ma->lock);
	for (size_t k = 0; k < ma->nsh; k++)
		if (ma->sh[k].bus == bus) {
			dev = ma->sh[k].dev;
			ma->sh[k] = ma->sh[--ma->nsh];
			break;
		}
	pthread_mutex_unlock(&ma->lock);
	return dev;
}

/* Every shadow overlapping [va, va+len) (MRs may overlap). */
static void ma_dma_sync(struct ernic_access *acc, const void *va, size_t len,
			enum ernic_dma_dir dir)
{
	struct model_access *ma = to_ma(acc);
	const uintptr_t lo = (uintptr_t)va, hi = lo + len;

	pthread_mutex_lock(&ma->lock);
	for (size_t k = 0; k < ma->nsh; k++) {
		const struct shadow *sh = &ma->sh[k];
		uintptr_t a = (uintptr_t)sh->cpu, b = a + sh->len;
		size_t off, n;

		if (hi <= a || lo >= b)
			continue;
		off = (lo > a ? lo : a) - a;
		n = (hi < b ? hi : b) - a - off;
		if (dir == ERNIC_DMA_TO_DEVICE)
			memcpy(sh->dev + off, sh->cpu + off, n);
		else
			memcpy(sh->cpu + off, sh->dev + off, n);
	}
	pthread_mutex_unlock(&ma->lock);
}

static uint32_t ma_reg_read(struct ernic_access *acc, uint32_t off)
{
	return ernic_model_reg_read(to_model(acc), off);
}

static void ma_reg_write(struct ernic_access *acc, uint32_t off, uint32_t val)
{
	ernic_model_reg_write(to_model(acc), off, val);
}

static volatile uint32_t *ma_db_word(struct ernic_access *acc, uint32_t off,
				     const atomic_bool **wake)
{
	return ernic_model_db_word(to_model(acc), off, wake);
}

static int ma_dma_alloc(struct ernic_access *acc, size_t len, size_t align,
			struct ernic_dma *out)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t a, size;
	void *va, *dev = NULL;
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
	if (acc->ops->dma_sync) {
		rc = posix_memalign(&dev, a, size);
		if (rc) {
			free(va);
			return rc;
		}
		memset(dev, 0, size);
	}
	/* Map only what was asked for: an IP access past len must fault. */
	rc = ernic_model_map(to_model(acc), dev ? dev : va, len, a, &out->bus);
	if (!rc && dev) {
		rc = shadow_add(to_ma(acc), va, dev, len, out->bus);
		if (rc)
			ernic_model_unmap(to_model(acc), out->bus);
	}
	if (rc) {
		free(dev);
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
	if (acc->ops->dma_sync)
		free(shadow_del(to_ma(acc), dma->bus));
	free(dma->va);
	memset(dma, 0, sizeof(*dma));
}

static int ma_map_user(struct ernic_access *acc, void *va, size_t len,
		       uint64_t *bus)
{
	uint8_t *dev;
	int rc;

	if (!acc->ops->dma_sync)
		return ernic_model_map(to_model(acc), va, len, 1, bus);
	/* Registration leaves DDR as the CPU sees it (the kernel's
	 * dma_map cleans the buffer). */
	dev = malloc(len ? len : 1);
	if (!dev)
		return ENOMEM;
	memcpy(dev, va, len);
	rc = ernic_model_map(to_model(acc), dev, len, 1, bus);
	if (!rc) {
		rc = shadow_add(to_ma(acc), va, dev, len, *bus);
		if (rc)
			ernic_model_unmap(to_model(acc), *bus);
	}
	if (rc)
		free(dev);
	return rc;
}

static void ma_unmap_user(struct ernic_access *acc, uint64_t bus, size_t len)
{
	ernic_model_unmap(to_model(acc), bus);
	if (acc->ops->dma_sync)
		free(shadow_del(to_ma(acc), bus));
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

static int ma_mad_steer(struct ernic_access *acc, uint64_t service_id,
			bool claim)
{
	return ernic_model_mad_steer(to_model(acc), service_id, claim);
}

static void ma_close(struct ernic_access *acc)
{
	if (!acc)
		return;
	struct model_access *ma = to_ma(acc);

	ernic_model_destroy(ma->m);
	for (size_t k = 0; k < ma->nsh; k++)
		free(ma->sh[k].dev);
	free(ma->sh);
	pthread_mutex_destroy(&ma->lock);
	free(acc);
}

static bool ma_progress(struct ernic_access *acc)
{
	return ernic_model_progress(to_model(acc));
}

static void ma_progress_stop(struct ernic_access *acc, bool armed)
{
	ernic_model_progress_stop(to_model(acc), armed);
}

static const struct ernic_access_ops model_ops = {
	.name = "model",
	.reg_read = ma_reg_read,
	.reg_write = ma_reg_write,
	.db_word = ma_db_word,
	.dma_alloc = ma_dma_alloc,
	.dma_free = ma_dma_free,
	.map_user = ma_map_user,
	.unmap_user = ma_unmap_user,
	.wait_irq = ma_wait_irq,
	.irq_fd = ma_irq_fd,
	.irq_enable = ma_irq_enable,
	.mad_steer = ma_mad_steer,
	.progress = ma_progress,
	.progress_stop = ma_progress_stop,
	.close = ma_close,
};


/*
 * A shared software device's register file goes to "ernic.regs.SLOT"
 * beside its state file, for ernicctl dump and stats to read while the
 * process runs; the next process in the slot takes the file over. -1
 * (private memory) when the device is not shared or the file cannot be
 * made. The fd is closed again once the model has mapped it.
 */
static int regs_file(const struct ernic_conf *conf)
{
	const char *slash = strrchr(conf->share_state, '/');
	char path[sizeof(conf->share_state) + 32];

	if (!conf->share_state[0] || !slash)
		return -1;
	snprintf(path, sizeof(path), "%.*s/" ERNIC_DS_REGS_FILE "%u",
		 (int)(slash - conf->share_state), conf->share_state,
		 conf->share_slot);
	return open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
}

int ernic_access_model_open(const struct ernic_conf *conf,
			    struct ernic_access **out, char *err,
			    size_t errlen)
{
	struct model_access *ma = calloc(1, sizeof(*ma));
	int rc, fd;

	if (!ma) {
		snprintf(err, errlen, "model: out of memory");
		return ENOMEM;
	}
	pthread_mutex_init(&ma->lock, NULL);
	fd = regs_file(conf);
	ma->m = ernic_model_create_shared(conf, fd);
	if (!ma->m && fd >= 0)	/* the file would not take it: private */
		ma->m = ernic_model_create(conf);
	if (fd >= 0)
		close(fd);
	if (!ma->m) {
		rc = errno ? errno : ENOMEM;
		snprintf(err, errlen, "model: %s%s", strerror(rc),
			 rc == EINVAL ? " (C_NUM_QP out of range)" : "");
		pthread_mutex_destroy(&ma->lock);
		free(ma);
		return rc;
	}
	/* The IP is only useful with its Ethernet port: open it now so a
	 * busy address fails the open with a clear reason. */
	rc = ernic_model_start(ma->m, conf, err, errlen);
	if (rc) {
		ernic_model_destroy(ma->m);
		pthread_mutex_destroy(&ma->lock);
		free(ma);
		return rc;
	}
	ma->ops = model_ops;
	if (!conf->coherent)
		ma->ops.dma_sync = ma_dma_sync;
	ma->base.ops = &ma->ops;
	*out = &ma->base;
	return 0;
}

struct ernic_model *ernic_access_model(struct ernic_access *acc)
{
	return acc && acc->ops->reg_read == ma_reg_read ? to_model(acc) : NULL;
}

/* libernic-sw.so's entry point (ernic_sw.h): what the provider's access
 * layer loads for a software device. */
const struct ernic_sw_backend *ernic_sw_backend_v1(void)
{
	static const struct ernic_sw_backend b = {
		.abi = ERNIC_SW_ABI,
		.conf_size = sizeof(struct ernic_conf),
		.ops_size = sizeof(struct ernic_access_ops),
		.open = ernic_access_model_open,
	};

	return &b;
}
