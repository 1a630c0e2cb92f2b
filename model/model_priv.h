/* SPDX-License-Identifier: MIT */
/*
 * Internals of the ERNIC model shared by its source files. Not part of
 * the model's contract (ernic_model.h).
 */
#ifndef ERNIC_MODEL_PRIV_H
#define ERNIC_MODEL_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ernic_hw.h"
#include "ernic_model.h"

/* A QP's doorbells (qpoff: offset inside its register block): SQPIi
 * and RQCIi, whole words that software writes and the IP only reads. */
static inline bool model_qp_doorbell(uint32_t qpoff)
{
	return qpoff == ERNIC_SQPI || qpoff == ERNIC_RQCI;
}

/* One live bus mapping: [bus, bus + len) -> [va, va + len). */
struct ernic_bus_map {
	uint64_t bus;
	uint64_t len;
	uint8_t *va;
};

struct ernic_model {
	/*
	 * The register file as the AXI4-Lite slave sees it, one word per
	 * 4-byte offset. Plain data with no pointers, so that a separate
	 * "virtual FPGA" process can later place it in shared memory.
	 * Reserved words stay 0. Written under `lock`, read with atomic
	 * loads so that polling readers never take the lock.
	 */
	uint32_t regs[ERNIC_REG_SPACE_SIZE / 4];

	/* PG332 Table 2-6 parameters of this instance */
	uint32_t c_num_qp;
	uint32_t c_m_axi_addr_width;
	uint32_t c_max_wr_retry_data_buf_depth;
	uint32_t c_en_wr_retry_data_buf;
	uint32_t c_en_initiator_lite;
	uint32_t c_en_debug_ports;

	pthread_mutex_t lock;		/* register writes */
	pthread_cond_t irq_cond;	/* INTSTS & INTEN may have risen */
	/* rnic_intr as a UIO-style event: irq_efd is signalled when the
	 * line is high while irq_armed; delivery disarms until software
	 * re-enables (ernic_model_irq_enable). Under `lock`. */
	int irq_efd;
	bool irq_armed;

	/* Bus address space (model_mem.c). A priority-inheriting mutex,
	 * not a rwlock: the engine thread is SCHED_FIFO, and glibc's rdlock
	 * spins while a writer it preempted finishes its phase change. */
	pthread_mutex_t map_lock;
	struct ernic_bus_map *maps;	/* sorted by bus, non-overlapping */
	size_t nmaps;
	size_t maps_cap;
	uint64_t next_bus;		/* allocator cursor, only grows */

	struct eng *eng;		/* queue engine, once started */
	/* Test clock (ernic_model_set_clock), or NULL: CLOCK_MONOTONIC. */
	uint64_t (*clock)(void *arg);
	void *clock_arg;

	/* Told of every hardware-side register update, under `lock`: the
	 * virtual FPGA's window publishes it at once (model_window.c). */
	void (*hw_hook)(void *arg, uint32_t off);
	void *hw_hook_arg;
	/* Called by the engine, without locks, before it handles a received
	 * packet (bth: the transport headers on): the window applies the
	 * software writes the packet may depend on. Set before the engine
	 * starts, cleared after it stops. */
	void (*rx_hook)(void *arg, const uint8_t *bth, size_t len);
	void *rx_hook_arg;
	struct axi_trace *axi_trace;	/* ERNIC_AXI_TRACE, or NULL */
};

/*
 * The engine thread runs at a real-time priority (engine.c); the locks it
 * shares with software's threads (register file, engine state, the
 * virtual FPGA's window) inherit priority, so a preempted application
 * thread holding one cannot stall the IP (seen: 430 ms without a packet,
 * then retries exhausted, on a busy machine).
 */
int model_mutex_init(pthread_mutex_t *mx);

/* model_regs.c: a software write; ovr accepts a write to an RO_SWOVR
 * register as if XRNICADCONF[0] were set (model_window.c). */
void model_reg_write(struct ernic_model *m, uint32_t off, uint32_t val,
		     bool ovr);

struct eng;
/* engine.c: software wrote register `off` (of QP qp, or 0). */
void eng_reg_written(struct eng *e, uint32_t off, uint32_t qp);
void eng_destroy(struct eng *e);

/* model_mem.c: copy to/from the bus space under the map lock, so that an
 * unmap waits for an access in progress. 0 or EFAULT. */
int ernic_model_dma(struct ernic_model *m, uint64_t bus, void *buf,
		    size_t len, bool to_bus);

/* model_mem.c: set up / tear down the bus address space. */
int ernic_model_mem_init(struct ernic_model *m);
void ernic_model_mem_fini(struct ernic_model *m);

#endif
