/* SPDX-License-Identifier: MIT */
/*
 * Facts about this process's own address space: what the kernel's page
 * pinning (ib_umem_get) would check before an RDMA device may use user
 * memory, for providers that have no kernel to ask.
 */
#ifndef ERNIC_VM_H
#define ERNIC_VM_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Is [va, va + len) mapped, readable and, when write is set, writable,
 * without a hole? 0 if so, EFAULT if not (as get_user_pages fails), or
 * the errno of reading /proc/self/maps. len 0 checks nothing.
 */
int ernic_vm_check(const void *va, size_t len, bool write);

#endif
