/* SPDX-License-Identifier: MIT */
/*
 * One message with open files attached (SCM_RIGHTS) on a UNIX
 * SOCK_SEQPACKET socket: how a hardware device's broker hands a client
 * the files of a device the client cannot open itself
 * (docs/multiprocess.md, EB_ATTACH).
 */
#ifndef ERNIC_FDPASS_H
#define ERNIC_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

#define ERNIC_FDPASS_MAX 4

/* Send msg (len bytes) with n files (n <= ERNIC_FDPASS_MAX; the kernel
 * passes copies, ours stay open). 0 or errno (EMSGSIZE for a short
 * send). */
int ernic_fdpass_send(int sock, const void *msg, size_t len, const int *fds,
		      size_t n);

/* Receive one message into msg (len bytes) and its files into fds[]
 * (n of them, close-on-exec). Returns the message's length (0 at the
 * end of the connection) or -errno. fds[] is filled only when exactly
 * n files came whole; otherwise every file that came is closed and
 * fds[] is all -1. */
ssize_t ernic_fdpass_recv(int sock, void *msg, size_t len, int *fds,
			  size_t n);

#endif
