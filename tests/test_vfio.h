/* SPDX-License-Identifier: MIT */
/* test_vfio: the parts shared by its three files. */
#ifndef ERNIC_TEST_VFIO_H
#define ERNIC_TEST_VFIO_H

#include <stdbool.h>
#include <stdint.h>

struct ernic_conf;
struct vfio_sys;

/* The fake sysfs tree (test_vfio.c), also the fake /dev's fake_root. */
extern char fake_root[64];

/* test_vfio_flow.c: the backend against a fake of the VFIO ioctls. */
int reset_fake(void **state);
void test_open_flow(void **state);
void test_hugepages(void **state);
void test_narrow(void **state);
void test_open_errors(void **state);

/* The fake itself, for test_vfio_share.c. */
extern const struct vfio_sys fake_sys;
enum { FAKE_FD_DEVICE2 = 110 };	/* a client's copy of the device file */
void conf_vfio(struct ernic_conf *c);
void assert_clean(void);
void fake_open_device2(void);	/* as SCM_RIGHTS would */
bool fake_device2_open(void);
int fake_nmaps(void);
volatile uint32_t *fake_regs(void);	/* the window, or NULL */
void fake_req(bool offer, bool fail);	/* VFIO_PCI_REQ_IRQ_INDEX */
bool fake_req_set(void);
int fake_irq_fd(void);
int fake_req_fd(void);
bool fd_readable(int fd);	/* readable now, without waiting */

/* test_vfio_share.c: a broker's shared region and a client on it. */
void test_share_region(void **state);
void test_attach_errors(void **state);

#endif
