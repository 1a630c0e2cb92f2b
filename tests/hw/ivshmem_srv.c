// SPDX-License-Identifier: MIT
/*
 * hil_ivshmem: an ivshmem server for one QEMU ivshmem-doorbell device
 * (the protocol of QEMU's docs/specs/ivshmem-spec.txt), so that the
 * kernel test bed has a PCI function with MSI-X and a BAR big enough for
 * the ERNIC window: BAR 2 is FILE, and this process raises the guest's
 * MSI-X vectors (tests/hw/hil.sh, vfio_msix.c). Debian packages no
 * ivshmem-server.
 *
 *   hil_ivshmem SOCKET FILE BYTES VECTORS
 *
 * Makes FILE (BYTES long, zeroed), serves the first client on SOCKET,
 * then reads commands on stdin, one per line:
 *   irq N      raise the client's vector N (write its eventfd)
 *   fill XX    set every byte of FILE to the hex byte XX
 * and exits at the end of stdin. Prints "hil_ivshmem: serving" once the
 * client has its file descriptors.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ernic_fdpass.h"

#define MAX_VECTORS 8
#define CLIENT_ID 1

static void die(const char *what)
{
	fprintf(stderr, "hil_ivshmem: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* One message: an 8-byte little-endian number, with fd if fd >= 0. */
static void send_msg(int s, int64_t v, int fd)
{
	uint64_t le = htole64((uint64_t)v);
	int rc = ernic_fdpass_send(s, &le, sizeof(le), &fd, fd >= 0);

	if (rc) {
		errno = rc;
		die("sendmsg");
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int efd[MAX_VECTORS], ls, c, fd;
	unsigned long vectors, bytes;
	char line[64];
	uint8_t *shm;

	if (argc != 5 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: hil_ivshmem SOCKET FILE BYTES VECTORS\n");
		return 2;
	}
	bytes = strtoul(argv[3], NULL, 0);
	vectors = strtoul(argv[4], NULL, 0);
	if (!bytes || !vectors || vectors > MAX_VECTORS) {
		fprintf(stderr, "hil_ivshmem: BYTES > 0, VECTORS 1..%d\n",
			MAX_VECTORS);
		return 2;
	}
	fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)bytes))
		die(argv[2]);
	shm = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shm == MAP_FAILED)
		die("mmap");
	for (unsigned long k = 0; k < vectors; k++) {
		efd[k] = eventfd(0, EFD_CLOEXEC);
		if (efd[k] < 0)
			die("eventfd");
	}

	strcpy(sa.sun_path, argv[1]);
	unlink(sa.sun_path);
	ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(ls, 1))
		die(argv[1]);
	c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		die("accept");
	send_msg(c, 0, -1);			/* protocol version */
	send_msg(c, CLIENT_ID, -1);		/* its id */
	send_msg(c, -1, fd);			/* the shared memory */
	for (unsigned long k = 0; k < vectors; k++)
		send_msg(c, CLIENT_ID, efd[k]);	/* its vector k */
	printf("hil_ivshmem: serving\n");
	fflush(stdout);

	while (fgets(line, sizeof(line), stdin)) {
		const uint64_t one = 1;
		unsigned long n;
		char *end;

		if (!strncmp(line, "irq ", 4)) {
			n = strtoul(line + 4, &end, 10);
			if (n >= vectors || end == line + 4) {
				fprintf(stderr, "hil_ivshmem: no vector %s", line + 4);
				continue;
			}
			if (write(efd[n], &one, sizeof(one)) != sizeof(one))
				die("eventfd write");
		} else if (!strncmp(line, "fill ", 5)) {
			n = strtoul(line + 5, &end, 16);
			if (n > 0xff || end == line + 5) {
				fprintf(stderr, "hil_ivshmem: not a byte: %s", line + 5);
				continue;
			}
			memset(shm, (int)n, bytes);
		} else {
			fprintf(stderr, "hil_ivshmem: unknown command: %s", line);
		}
	}
	return 0;
}
