/* SPDX-License-Identifier: MIT */
/*
 * What the kernel test bed's programs share (tests/hw: vfio_edu.c,
 * uio_edu.c, vfio_msix.c, test_hil_relay.c): checks that print "ok: ..."
 * or "FAIL: ..." and count, a readiness wait, config space from sysfs.
 */
#ifndef ERNIC_TEST_HW_CHECK_H
#define ERNIC_TEST_HW_CHECK_H

#include <stdint.h>

/* Prints "ok: ..." or "FAIL: ..." and counts the failures. */
void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Checks that failed so far. */
int check_failures(void);
uint64_t now_ms(void);
/* fd turns readable within ms. */
int readable(int fd, int ms);
/* The PCI command register of function bdf from sysfs, -1 if unread. */
int pci_command(const char *bdf);

#endif
