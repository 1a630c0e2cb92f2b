/* SPDX-License-Identifier: MIT */
/*
 * Device access layer: the only way the provider core reaches an ERNIC.
 *
 * A backend gives 32-bit access to the AXI4-Lite register window, DMA
 * memory the IP can master (queues, doorbells, error buffers) with its bus
 * address, a way to make a user buffer visible to the IP at one contiguous
 * bus address (an MR needs one base: PG332 "Memory Registration"), and a
 * wait for the single ERNIC interrupt line (PG332 ch.3 "Interrupts").
 *
 * Backends: the in-process ERNIC model, UIO (access_uio.c), VFIO
 * (access_vfio.c).
 */
#ifndef ERNIC_ACCESS_H
#define ERNIC_ACCESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mmio.h"

struct ernic_access;

/* Who hands out pages of a DMA region several processes share (the
 * hardware broker, docs/multiprocess.md): get returns the bus address of
 * len zeroed bytes aligned to align, or an errno; put gives them back. */
struct ernic_pager {
	int (*get)(void *arg, size_t len, size_t align, uint64_t *bus);
	/* exactly [bus, bus + len), or EBUSY when any of it is taken */
	int (*claim)(void *arg, uint64_t bus, size_t len);
	void (*put)(void *arg, uint64_t bus, size_t len);
	void *arg;
};

/* What a broker's client drives a device with when it cannot open the
 * device itself (VFIO: one process at a time holds a group): the
 * device's file, for the register window, and a memory file that the
 * broker mapped into the IOMMU at region_bus and shares out by pages. */
struct ernic_access_share {
	int device_fd;
	int region_fd;
	uint64_t region_bus;
	uint64_t region_len;
};

/* A block of DMA-able memory: CPU view and the IP's (bus) view. */
struct ernic_dma {
	void *va;
	uint64_t bus;
	size_t len;
};

/* Which side reads next (dma_sync). */
enum ernic_dma_dir {
	ERNIC_DMA_TO_DEVICE,	/* the IP reads what the CPU wrote: clean */
	ERNIC_DMA_FROM_DEVICE,	/* the CPU reads what the IP wrote: invalidate */
};

struct ernic_access_ops {
	const char *name;
	/* Ordered as the kernel's readl() / writel(): loads after a read see
	 * what the IP wrote to DMA memory before it; the CPU's stores to DMA
	 * memory before a write reach the IP first (access/udma_barrier.h),
	 * so a doorbell needs no barrier of its own. */
	uint32_t (*reg_read)(struct ernic_access *acc, uint32_t off);
	void (*reg_write)(struct ernic_access *acc, uint32_t off, uint32_t val);
	/* Doorbell register off as a word in memory the backend takes it
	 * from (the model's register file), with *wake, a flag to read
	 * after each store with no fence between: while it is set, the
	 * value must also go through reg_write (ernic_db_reg). NULL when
	 * every write of off must be a reg_write. Optional. */
	volatile uint32_t *(*db_word)(struct ernic_access *acc, uint32_t off,
				      const atomic_bool **wake);
	/* Zeroed, at least `align`-aligned on the bus. Returns 0 or errno. */
	int (*dma_alloc)(struct ernic_access *acc, size_t len, size_t align,
			 struct ernic_dma *out);
	void (*dma_free)(struct ernic_access *acc, struct ernic_dma *dma);
	/* Make [va, va+len) reachable by the IP at one contiguous bus range. */
	int (*map_user)(struct ernic_access *acc, void *va, size_t len,
			uint64_t *bus);
	void (*unmap_user)(struct ernic_access *acc, uint64_t bus, size_t len);
	/* Block until the interrupt fires or timeout_ms passes (-1: forever).
	 * Returns 1 on interrupt, 0 on timeout, -errno on failure. */
	int (*wait_irq)(struct ernic_access *acc, int timeout_ms);
	/* The interrupt as UIO delivers it: a pollable fd that turns
	 * readable when rnic_intr fires, after which the interrupt stays
	 * masked until irq_enable() consumes the event and unmasks it. */
	int (*irq_fd)(struct ernic_access *acc);
	int (*irq_enable)(struct ernic_access *acc);
	/* Register writes may be posted: make those made so far take
	 * effect in the IP before returning (hardware: a read-back, which
	 * does not pass the writes before it; the virtual FPGA: a window
	 * pass). NULL when every write takes effect as it is made. Returns
	 * 0 or errno. */
	int (*flush)(struct ernic_access *acc);
	/* Non-coherent DMA only (NULL when the IP's DMA is coherent): make
	 * [va, va+len) of DMA memory or of a mapped user buffer agree
	 * between the CPU's caches and DDR in direction dir. */
	void (*dma_sync)(struct ernic_access *acc, const void *va, size_t len,
			 enum ernic_dma_dir dir);
	/* An IP that runs on the CPU (the model): a poll found nothing, let
	 * it use the caller's thread to take what has arrived. True when it
	 * took something (worth polling again). NULL on hardware, which
	 * runs beside the CPU. */
	bool (*progress)(struct ernic_access *acc);
	/* The caller's polls are ending (its CQs have nothing outstanding
	 * any more, or one is armed for an event: `armed`): an IP that
	 * leaves its packets to polls (progress) takes them back now
	 * rather than after a while, unless it knows that nothing comes
	 * before the caller posts again (and it is not armed). NULL where
	 * progress is. */
	void (*progress_stop)(struct ernic_access *acc, bool armed);
	/* A device shared by processes (docs/multiprocess.md): CM REQs for
	 * service_id (host order) reach this process (claim) or not any
	 * more. The caller holds the device's state-file lock. 0 or errno.
	 * NULL when nothing steers MADs between processes. */
	int (*mad_steer)(struct ernic_access *acc, uint64_t service_id,
			 bool claim);
	/* A hardware device shared by processes: pages of the DMA region
	 * come from pager from now on (set before any allocation), and
	 * dma_view gives the CPU view of len bytes at bus that another
	 * process allocated. NULL when the backend cannot be shared. */
	void (*set_pager)(struct ernic_access *acc,
			  const struct ernic_pager *pager);
	int (*dma_view)(struct ernic_access *acc, uint64_t bus, size_t len,
			struct ernic_dma *out);
	/* dma_alloc of exactly [bus, bus + len): EBUSY when any of it is
	 * taken (a pager's claim, served by the broker). */
	int (*dma_claim)(struct ernic_access *acc, uint64_t bus, size_t len,
			 struct ernic_dma *out);
	/* A broker's device that clients cannot open themselves: the files
	 * they attach with (ernic_access_attach). They stay the backend's:
	 * the caller passes copies on. NULL: clients open the device. */
	int (*share_export)(struct ernic_access *acc,
			    struct ernic_access_share *out);
	void (*close)(struct ernic_access *acc);
};

struct ernic_access {
	const struct ernic_access_ops *ops;
	/* The mapped register window, where a doorbell write (SQPIi,
	 * RQCIi: plain registers, not W1C) is all reg_write would do: one
	 * ordered store (UIO, VFIO, the virtual FPGA). The fast path makes
	 * it without the call (ernic_wr_db). NULL: reg_write does more (the
	 * model, tests' fakes). */
	volatile uint32_t *doorbells;
};

struct ernic_conf;

/* Open the backend the device configuration names. Returns 0 or errno and
 * writes a one-line reason into err. */
int ernic_access_open(const struct ernic_conf *conf,
		      struct ernic_access **out, char *err, size_t errlen);
/* A broker's client of a device it cannot open itself: the backend on
 * the files its broker exported. The files are the backend's from here
 * on, closed with it or on failure. Returns 0 or errno with a reason. */
int ernic_access_attach(const struct ernic_conf *conf,
			const struct ernic_access_share *share,
			struct ernic_access **out, char *err, size_t errlen);

/* A doorbell register write (SQPIi, RQCIi) on the fast path: what
 * ernic_wr does, ordered after the DMA stores before it, with no call
 * where the window is mapped. */
static inline void ernic_wr_db(struct ernic_access *acc, uint32_t off,
			       uint32_t val)
{
	if (acc->doorbells)
		ernic_mmio_wr(acc->doorbells, off, val);
	else
		acc->ops->reg_write(acc, off, val);
}

/* Doorbell register off as a place to store to (ernic_mmio_wr_reg), its
 * window and offset checked once: a QP keeps it. *wake: NULL in a mapped
 * window, where the store is the write; else a flag to load after each
 * store with no fence between (atomic_signal_fence): when it is set,
 * make the write again with ernic_wr. NULL: ernic_wr only. */
static inline volatile uint32_t *ernic_db_reg(struct ernic_access *acc,
					      uint32_t off,
					      const atomic_bool **wake)
{
	*wake = NULL;
	if (off >= ERNIC_REG_SPACE_SIZE || (off & 3))
		return NULL;
	if (acc->doorbells)
		return &acc->doorbells[off / 4];
	return acc->ops->db_word ? acc->ops->db_word(acc, off, wake) : NULL;
}

static inline uint32_t ernic_rd(struct ernic_access *acc, uint32_t off)
{
	return acc->ops->reg_read(acc, off);
}

static inline void ernic_wr(struct ernic_access *acc, uint32_t off,
			    uint32_t val)
{
	acc->ops->reg_write(acc, off, val);
}

static inline void ernic_dma_sync(struct ernic_access *acc, const void *va,
				  size_t len, enum ernic_dma_dir dir)
{
	if (acc->ops->dma_sync)
		acc->ops->dma_sync(acc, va, len, dir);
}

/* A poll found nothing: true if the IP used the caller's thread and
 * took something (poll again). Only for an access that has the op (an
 * IP on the CPU; a CQ that lends: ernic_cq_lend): hardware has none. */
static inline bool ernic_progress(struct ernic_access *acc)
{
	return acc->ops->progress(acc);
}

/* Polls are ending (`armed`: the caller waits for an event now): the
 * IP watches its port itself again. */
static inline void ernic_progress_stop(struct ernic_access *acc, bool armed)
{
	if (acc->ops->progress_stop)
		acc->ops->progress_stop(acc, armed);
}

/* Flush posted register writes: after W1C writes, before acting on
 * what was cleared, so a cause raised again from then on stays set. */
static inline int ernic_access_flush(struct ernic_access *acc)
{
	return acc->ops->flush ? acc->ops->flush(acc) : 0;
}

/* Write a 64-bit bus address to an LSB/MSB register pair. */
static inline void ernic_wr64(struct ernic_access *acc, uint32_t lsb_off,
			      uint32_t msb_off, uint64_t val)
{
	acc->ops->reg_write(acc, lsb_off, (uint32_t)val);
	acc->ops->reg_write(acc, msb_off, (uint32_t)(val >> 32));
}

#endif
