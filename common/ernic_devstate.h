/* SPDX-License-Identifier: MIT */
/*
 * A device's state shared by every process that opens it
 * (docs/multiprocess.md): one file, mapped shared, with the process table
 * and the owners of QP numbers, PD-table slots and PD numbers. A robust,
 * process-shared mutex guards it; only verbs that create or destroy take
 * it, never the data path.
 *
 * Lock contract: every function below except ernic_ds_open/close expects
 * the caller to hold the lock (ernic_ds_lock), and none takes it.
 * ernic_ds_lock itself reclaims the slots of dead processes, first of all
 * a process that died holding the lock.
 */
#ifndef ERNIC_DEVSTATE_H
#define ERNIC_DEVSTATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ernic_hw.h"
#include "ernic_syndrome.h"

/* How many incoming packet error status entries the file keeps. */
#define ERNIC_DS_FATAL_LAST 16u

/* Its name, in the device's directory beside ernic.conf. */
#define ERNIC_DS_FILE "ernic.state"
/* Beside it, the register file of the software ERNIC in the process of
 * slot N: "ernic.regs.N" (model_regs.c, ernicctl dump). */
#define ERNIC_DS_REGS_FILE "ernic.regs."
#define ERNIC_DS_PROCS 128u		/* processes on one device at once */
#define ERNIC_DS_QPS (ERNIC_C_NUM_QP_MAX + 1)
#define ERNIC_DS_NONE 0xFFu		/* owner of nothing */
#define ERNIC_DS_SERVICES 256u		/* CM service IDs listened to */

struct ernic_ds_proc {
	int32_t pid;			/* 0: free */
	uint32_t gen;			/* bumped at each take */
	uint64_t start;			/* /proc/PID/stat start time */
	uint32_t npd, ncq;		/* counted against max_pd / max_cq */
	uint32_t steered;		/* its socket joined the group */
	/* A client of a hardware device's broker: only the broker may
	 * reclaim it, as it alone sees it die and cleans the IP first. */
	uint32_t broker_reaps;
	uint32_t is_broker;		/* the hardware device's broker */
};

/* The top 8 bits of every communication ID the CM of the process in
 * slot chooses: MADs of its connections are steered back to it by them
 * (model/wire_steer.h). 0 names no process. */
#define ERNIC_DS_COMM_TAG(slot) ((uint32_t)(slot) + 1u)

/* A CM service ID some process listens to: REQs for it go there. */
struct ernic_ds_svc {
	uint64_t id;
	uint32_t refs;			/* 0: a free entry */
	uint32_t slot;
};

struct ernic_ds {
	uint32_t magic, version, size, pad;
	/* The same room on every LP64 ABI (glibc's mutex is 40 bytes on
	 * x86_64, 48 on aarch64), so the file's layout does not depend on
	 * which architecture made it (tests/cross/aarch64.sh). */
	union {
		pthread_mutex_t lock;
		uint8_t lock_room[64];
	};
	struct ernic_ds_proc proc[ERNIC_DS_PROCS];
	uint8_t qp_owner[ERNIC_DS_QPS];		/* slot, or ERNIC_DS_NONE */
	uint8_t pdt_owner[ERNIC_PDT_ENTRIES];
	uint8_t pdt_gen[ERNIC_PDT_ENTRIES];	/* last key generation */
	uint32_t pdt_cursor;			/* round-robin search */
	/* Where the next QP search starts: a destroyed QP's number is the
	 * last one given again, so packets still in flight for it (a
	 * retransmission, a late response) find a QP that is not enabled
	 * rather than its successor at the same PSN. */
	uint32_t qp_cursor;
	uint32_t pd_next;			/* PD numbers, device-wide */
	uint32_t steer_socks, steer_owners;	/* wire_steer map ids */
	uint32_t steer_services;
	uint32_t steer_members;			/* processes with steered */
	uint32_t reaped;			/* dead processes reclaimed */
	struct ernic_ds_svc svc[ERNIC_DS_SERVICES];
	/* Packets the IP dropped or refused, by PG332 Table 2-3 syndrome
	 * bit, counted from the error buffers of every process (a software
	 * device's) or of the device's one driver (UIO/VFIO), since the
	 * device was added. Atomic adds, no lock (ernic_errbuf_drain). */
	uint64_t syndromes[ERNIC_SYNDROME_BITS];
	uint64_t errbuf_entries;	/* error buffer entries read */
	/* The incoming packet error status queues (PG332 Figure 2-3) the
	 * same way: entries read, by Table 2-4 FATAL code, and the last
	 * ERNIC_DS_FATAL_LAST entries as the IP wrote them (entry n at
	 * fatal_last[n % ERNIC_DS_FATAL_LAST], n from 0). Atomic. */
	uint64_t ipkterrq_entries;
	uint64_t fatal_codes[ERNIC_FATAL_CODES];
	uint64_t fatal_last[ERNIC_DS_FATAL_LAST];
};

_Static_assert(sizeof(pthread_mutex_t) <= 64, "ernic_ds.lock_room");

struct ernic_ds_handle {
	struct ernic_ds *ds;
	int fd;
};

/* What ernic_ds_lock found of a dead process before it freed its slot:
 * the caller's chance to clean up what the file does not hold (disable
 * its QPs in the IP, say). May be NULL. */
typedef void (*ernic_ds_dead_fn)(void *arg, struct ernic_ds *ds,
				 uint32_t slot);

/* Open (making it if needed) and map the state file at path. */
int ernic_ds_open(struct ernic_ds_handle *h, const char *path, char *err,
		  size_t errlen);
/* The same state in this process's memory only: for a process that may
 * not write the device's file, which then uses the device alone. */
int ernic_ds_open_private(struct ernic_ds_handle *h);
void ernic_ds_close(struct ernic_ds_handle *h);

/* Take the lock. When its last holder died holding it, that process's
 * slot is reclaimed at once (dead called first). 0 or an errno. */
int ernic_ds_lock(struct ernic_ds_handle *h, ernic_ds_dead_fn dead,
		  void *arg);
void ernic_ds_unlock(struct ernic_ds_handle *h);
/* Reclaim the slot of every process that is gone (dead called first for
 * each), except a hardware broker's clients; how many. Run at attach, and when an allocation finds nothing
 * free: reading /proc for every process costs too much for each lock. */
uint32_t ernic_ds_reap(struct ernic_ds *ds, ernic_ds_dead_fn dead,
		       void *arg);

/* The broker reclaims its client in slot (dead called first), whether
 * or not ernic_ds_reap would. */
void ernic_ds_reap_slot(struct ernic_ds *ds, uint32_t slot,
			ernic_ds_dead_fn dead, void *arg);

/* This process's slot: the lowest free one. -ENOSPC when all are taken. */
int ernic_ds_attach(struct ernic_ds *ds, pid_t pid);
/* Give the slot back with everything it owns. */
void ernic_ds_detach(struct ernic_ds *ds, uint32_t slot);

/* A QP number in [first, last] for slot, or -ENOSPC: the next free one
 * after the last given, wrapping (as rxe hands out QP numbers). */
int ernic_ds_qp_alloc(struct ernic_ds *ds, uint32_t slot, uint32_t first,
		      uint32_t last);
void ernic_ds_qp_free(struct ernic_ds *ds, uint32_t slot, uint32_t qpn);
/* A PD-table slot for slot and its next key generation (1..255, never
 * the last one used), or -ENOSPC. */
int ernic_ds_pdt_alloc(struct ernic_ds *ds, uint32_t slot, uint8_t *gen);
void ernic_ds_pdt_free(struct ernic_ds *ds, uint32_t slot, uint32_t entry);
/* The next PD number (1..2^24-1, wrapping). */
uint32_t ernic_ds_pd_number(struct ernic_ds *ds);

/* Slot listens for CM REQs to service id: 0, EADDRINUSE (another
 * process does) or ENOSPC. Claims count: as many releases as claims. */
int ernic_ds_svc_claim(struct ernic_ds *ds, uint32_t slot, uint64_t id);
/* 0 (*gone: that was the last claim), or ENOENT: slot held none. */
int ernic_ds_svc_release(struct ernic_ds *ds, uint32_t slot, uint64_t id,
			 bool *gone);

/* Whether the process of slot is alive: same pid, same start time. */
bool ernic_ds_alive(const struct ernic_ds *ds, uint32_t slot);
/* A process's start time (/proc/PID/stat field 22); 0 when it is gone. */
uint64_t ernic_ds_start_time(pid_t pid);

#endif
