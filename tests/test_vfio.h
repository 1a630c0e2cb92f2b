/* SPDX-License-Identifier: MIT */
/* test_vfio: the parts shared by its two files. */
#ifndef ERNIC_TEST_VFIO_H
#define ERNIC_TEST_VFIO_H

/* The fake sysfs tree (test_vfio.c), also the fake /dev's fake_root. */
extern char fake_root[64];

/* test_vfio_flow.c: the backend against a fake of the VFIO ioctls. */
int reset_fake(void **state);
void test_open_flow(void **state);
void test_hugepages(void **state);
void test_narrow(void **state);
void test_open_errors(void **state);

#endif
