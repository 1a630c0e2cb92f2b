// SPDX-License-Identifier: MIT
/*
 * Files passed with a message (ernic_fdpass.h).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ernic_fdpass.h"

union fd_ctl {
	struct cmsghdr h;
	char buf[CMSG_SPACE(ERNIC_FDPASS_MAX * sizeof(int))];
};

int ernic_fdpass_send(int sock, const void *msg, size_t len, const int *fds,
		      size_t n)
{
	union fd_ctl ctl;
	struct iovec iov = { .iov_base = (void *)(uintptr_t)msg,
			     .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *h;
	ssize_t sent;

	if (n > ERNIC_FDPASS_MAX)
		return EINVAL;
	if (n) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
		h = CMSG_FIRSTHDR(&mh);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(h), fds, n * sizeof(int));
	}
	do
		sent = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (sent < 0 && errno == EINTR);
	if (sent < 0)
		return errno;
	return (size_t)sent == len ? 0 : EMSGSIZE;
}

/* Every file that came with mh: kept in fds[] when exactly n came,
 * else closed (EPROTO). */
static int take_files(struct msghdr *mh, int *fds, size_t n)
{
	size_t got = 0;
	int rc = 0;

	for (struct cmsghdr *h = CMSG_FIRSTHDR(mh); h; h = CMSG_NXTHDR(mh, h)) {
		size_t k, m;

		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		m = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < m; k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(h) + k * sizeof(int), sizeof(fd));
			if (got < n)
				fds[got] = fd;
			else
				close(fd);
			got++;
		}
	}
	if (got != n || (mh->msg_flags & MSG_CTRUNC))
		rc = EPROTO;
	if (rc)
		for (size_t k = 0; k < n && k < got; k++) {
			close(fds[k]);
			fds[k] = -1;
		}
	return rc;
}

ssize_t ernic_fdpass_recv(int sock, void *msg, size_t len, int *fds,
			  size_t n)
{
	union fd_ctl ctl;
	struct iovec iov = { .iov_base = msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	ssize_t got;

	for (size_t k = 0; k < n; k++)
		fds[k] = -1;
	if (n > ERNIC_FDPASS_MAX)
		return -EINVAL;
	do
		got = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -errno;
	take_files(&mh, fds, n);
	return got;
}
