// SPDX-License-Identifier: MIT
/* What the kernel test bed's programs share (hw_check.h). */
#include <fcntl.h>
#include <linux/pci_regs.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "hw_check.h"

static int failures;

void check(int ok, const char *fmt, ...)
{
	va_list ap;

	fputs(ok ? "ok: " : "FAIL: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	failures += !ok;
}

int check_failures(void)
{
	return failures;
}

uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

int readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

int pci_command(const char *bdf)
{
	char path[128];
	uint16_t cmd = 0;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", bdf);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (pread(fd, &cmd, 2, PCI_COMMAND) != 2) {
		close(fd);
		return -1;
	}
	close(fd);
	return cmd;
}
