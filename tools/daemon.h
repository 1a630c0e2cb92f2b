/* SPDX-License-Identifier: MIT */
/*
 * ernicctl's helper processes (the virtual FPGA, a hardware device's
 * broker): started as daemons that say "ready\n" on a pipe, stopped by
 * the pid ernicctl recorded.
 */
#ifndef ERNIC_DAEMON_H
#define ERNIC_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Run exe with args (NULL-terminated, without argv[0]) plus
 * "--ready-fd N", its output going to log, and wait until it writes
 * "ready\n". *pid is the daemon's. 0, or an errno value with a one-line
 * reason in err naming it as what (nothing is left running). */
int daemon_start(const char *exe, const char *const *args, const char *log,
		 const char *what, pid_t *pid, char *err, size_t errlen);
/* SIGTERM, then SIGKILL when it is still there after a while. */
void daemon_stop(pid_t pid);
/* daemon_stop of the pid in DIR/pid, if there is one. */
void daemon_stop_dir(const char *dir);

#endif
