/* SPDX-License-Identifier: MIT */
/*
 * ernicctl's side of the virtual FPGA: start an ernic-vfpga process for
 * a device and stop it again. Its tree is RUNDIR/vfpga/NAME.
 */
#ifndef ERNIC_VFPGA_CTL_H
#define ERNIC_VFPGA_CTL_H

#include <stddef.h>

#include "ernic_conf.h"

/*
 * Start the virtual FPGA for conf (a software device's configuration:
 * name, addr, netdev, mac, wire, parameters) and wait until it is ready;
 * then turn conf into the UIO device the provider opens. 0, or an errno
 * value with a one-line reason in err (nothing is left running).
 */
int vfpga_start(const char *rundir, struct ernic_conf *conf, char *err,
		size_t errlen);

/* Stop NAME's virtual FPGA, if it runs, and remove its tree. */
void vfpga_stop(const char *rundir, const char *name);

#endif
