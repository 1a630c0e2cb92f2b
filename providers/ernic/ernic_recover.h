/* SPDX-License-Identifier: MIT */
/*
 * PG332 ch.6 "QP Fatal Recovery", step by step, on the register
 * interface alone (an ernic_access): the provider runs it on the device,
 * tests run it on a model they step by hand.
 */
#ifndef ERNIC_RECOVER_H
#define ERNIC_RECOVER_H

#include <stddef.h>
#include <stdint.h>

struct ernic_access;

/* How the IP is waited for: wait() lets step_us pass (the provider
 * sleeps; a test bench runs its model), and a wait that has let limit_us
 * pass without the IP getting there fails. */
struct ernic_hw_wait {
	void (*wait)(void *arg, uint32_t us);
	void *arg;
	uint32_t step_us, limit_us;
};

/*
 * XRNICADCONF's software override on for QP i (PG332 ch.6: QP Deletion,
 * Fatal Recovery, Enabling QP HW Offload), which lets software write the
 * QP's read-only pointers. Returns the value that turns it off again.
 * The override is the device's: the caller holds the shared IP's turn.
 */
uint32_t ernic_sw_override_on(struct ernic_access *acc, uint32_t i);

/*
 * "Steps to clear traffic on QP", 4 to 8, for enabled QP i (steps 1-2,
 * reading the incoming packet error status queue, are the event
 * thread's; step 3, no more SQPIi doorbells, is the caller's: the QP is
 * in the error state). Ends with the QP disabled and under recovery.
 * 0, or ETIMEDOUT with the step the IP never finished in err; the QP is
 * then left as that step found it.
 */
int ernic_qp_recover_clear(struct ernic_access *acc, uint32_t i,
			   const struct ernic_hw_wait *w, char *err,
			   size_t errlen);

/*
 * "Steps to reinitialize the QP", 1 to 5, for QP i after the clearing:
 * the waits again, then under the software override its pointers zeroed
 * in PG332's order. Steps 6-13 are the QP's next INIT/RTR/RTS; the
 * override is released here (step 14), since none of them writes a
 * read-only register. Also zeroes what QP Deletion does besides
 * (RQWPTRDBADDi) and the STATQPi counts (step 9), and leaves the QP
 * disabled and under recovery, as a deleted QP is. The caller holds the
 * device's turn at XRNICADCONF (the state file's lock on a shared IP).
 * 0, or ETIMEDOUT as above.
 */
int ernic_qp_recover_reinit(struct ernic_access *acc, uint32_t i,
			    const struct ernic_hw_wait *w, char *err,
			    size_t errlen);

#endif
