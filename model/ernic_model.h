/* SPDX-License-Identifier: MIT */
/*
 * Behavioural model of the ERNIC IP (PG332 v3.1). This part is the
 * register file: every Table 2-7 register with its access semantics and
 * reset value, and the IP's view of memory (bus address -> host memory).
 * The queue engine and the RoCEv2 wire build on it.
 */
#ifndef ERNIC_MODEL_H
#define ERNIC_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ernic_regtab.h"

struct ernic_conf;
struct ernic_model;
struct model_wire;
struct roce_l3;


/*
 * Find the register at an absolute offset. Returns NULL for reserved
 * offsets and for per-QP registers of QPs the device does not have
 * (index > C_NUM_QP, or QP1 for registers that do not exist for QP1).
 * *index receives the PD-table slot or QP index (0 for globals).
 */
const struct ernic_reg_desc *ernic_reg_lookup(uint32_t off, uint32_t c_num_qp,
					      uint32_t *index);

/* Create a model in its reset state for the given device configuration
 * (Table 2-6 parameters). Returns NULL with errno set on failure. */
struct ernic_model *ernic_model_create(const struct ernic_conf *conf);
/* The same, with the register file in regs_fd's first
 * ERNIC_REG_SPACE_SIZE bytes (sized to that), shared: readable by other
 * processes while this one runs. The caller may close regs_fd after. */
struct ernic_model *ernic_model_create_shared(const struct ernic_conf *conf,
					      int regs_fd);
void ernic_model_destroy(struct ernic_model *m);
/* Stop the queue engine (ernic_model_start); the registers stay. */
void ernic_model_stop(struct ernic_model *m);

/*
 * Start the queue engine: open the Ethernet port the configuration names
 * (ernic.conf wire=, addr, netdev) and run the engine thread. Until then
 * the model is a register file only. Returns 0 or errno with a one-line
 * reason in err.
 */
int ernic_model_start(struct ernic_model *m, const struct ernic_conf *conf,
		      char *err, size_t errlen);

/*
 * Driving the engine by hand, for tests and fuzzing: no thread, no
 * socket, no wall clock. ernic_model_start_manual starts the engine on
 * port w (model_wire_open_tap; ownership passes to the model, also on
 * failure) and then nothing happens but what these calls do:
 * ernic_model_rx hands it one received packet (transport bytes under
 * l3, as the port would: ICRC still to check when check_icrc), and
 * ernic_model_step runs one pass over doorbells, held packets and
 * timers, returning the next timer deadline (0: none) and in *busy
 * whether work is left for another pass. ernic_model_set_clock replaces
 * CLOCK_MONOTONIC (ns) for the engine's timers; set it before starting.
 */
int ernic_model_start_manual(struct ernic_model *m,
			     const struct ernic_conf *conf,
			     struct model_wire *w, char *err, size_t errlen);
/* Steer CM REQs for service_id to this process's wire (claim) or not;
 * model_wire_mad_steer. 0, ENODEV (not started) or an errno. */
int ernic_model_mad_steer(struct ernic_model *m, uint64_t service_id,
			  bool claim);
void ernic_model_set_clock(struct ernic_model *m, uint64_t (*now)(void *arg),
			   void *arg);
void ernic_model_rx(struct ernic_model *m, const struct roce_l3 *l3,
		    const uint8_t *tp, size_t tlen, int check_icrc);
uint64_t ernic_model_step(struct ernic_model *m, bool *busy);
/* Software found nothing new (an empty poll): while the engine thread
 * sleeps, run its pass in the caller's thread, so that what arrived is
 * taken now rather than after the thread's wakeup. Cheap when the
 * thread is awake or another pass runs. True when the pass took a
 * packet. */
bool ernic_model_progress(struct ernic_model *m);
/* Software's polls are ending (nothing outstanding on the CQ, or it is
 * `armed` for an event): the engine thread, which leaves the port to
 * polls while they run, watches it again now, unless (not armed) the
 * engine holds an ACK for the reply software posts next. */
void ernic_model_progress_stop(struct ernic_model *m, bool armed);

/* Software (AXI4-Lite) access, with the Table 2-7 semantics. */
uint32_t ernic_model_reg_read(struct ernic_model *m, uint32_t off);
void ernic_model_reg_write(struct ernic_model *m, uint32_t off, uint32_t val);
/* RQCIi of an RC QP as the register word itself, for software to store
 * to (release: the elements are copied out) with no call, as into a
 * board's window; then, with no fence between, read *wake: when it is
 * set the engine waits for RQ space and the value must also go through
 * ernic_model_reg_write (engine_hold.c). NULL where every write must be
 * a call: another register, no engine yet, an AXI trace (it records the
 * writes), no membarrier(2). The word lives as long as the model. */
volatile uint32_t *ernic_model_db_word(struct ernic_model *m, uint32_t off,
				       const atomic_bool **wake);

/* Hardware-side update of any register (status, counters, pointers),
 * bypassing the software access rules; bits outside the mask are dropped. */
void ernic_model_hw_write(struct ernic_model *m, uint32_t off, uint32_t val);
/* Set bits of a W1C status word as the IP raises a cause: atomic with
 * software's clears. A bit set already stays set; one that software
 * cleared before is set again, and INTSTS raises rnic_intr again. (A
 * read, then ernic_model_hw_write, could bring back bits software
 * cleared in between.) */
void ernic_model_hw_set(struct ernic_model *m, uint32_t off, uint32_t bits);

/* Wait for the rnic_intr line, the OR of INTSTS & INTEN (PG332 ch.3
 * "Interrupts"): level, so it returns at once while any enabled status
 * bit is set. timeout_ms < 0 waits forever. Returns 1 (line high) or 0
 * (timeout). */
int ernic_model_wait_irq(struct ernic_model *m, int timeout_ms);

/*
 * rnic_intr as an interrupt controller delivers it to a UIO driver: the
 * returned eventfd becomes readable when the line is high, and delivery
 * then masks the interrupt until ernic_model_irq_enable(), which
 * consumes the event and unmasks it (a line still high fires again at
 * once: level semantics). Starts unmasked.
 */
int ernic_model_irq_fd(struct ernic_model *m);
void ernic_model_irq_enable(struct ernic_model *m);

/*
 * The IP's address space. The model hands out bus addresses for host
 * memory (like an IOMMU would) so that every bus address the IP is given
 * can be checked before it is used: addresses never come from the
 * network or a register unchecked.
 */
int ernic_model_map(struct ernic_model *m, void *va, size_t len, size_t align,
		    uint64_t *bus);
void ernic_model_unmap(struct ernic_model *m, uint64_t bus);
/* Host pointer for [bus, bus + len), or NULL unless one mapping holds it
 * whole. */
void *ernic_model_bus_to_va(struct ernic_model *m, uint64_t bus, size_t len);

#endif
