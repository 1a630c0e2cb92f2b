/* SPDX-License-Identifier: MIT */
/*
 * ernicctl's side of a hardware device's broker (docs/multiprocess.md):
 * ernic-broker is started once the device is in the overlay, so that
 * processes share the device through it, and stopped before the device
 * goes. Its tree is RUNDIR/broker/NAME (pid, log).
 */
#ifndef ERNIC_BROKER_CTL_H
#define ERNIC_BROKER_CTL_H

#include <stddef.h>

/* 0, or an errno value with a one-line reason in err. */
int broker_start(const char *rundir, const char *name, char *err,
		 size_t errlen);
/* Stop NAME's broker, if it runs, and remove its tree. */
void broker_stop(const char *rundir, const char *name);

#endif
