// SPDX-License-Identifier: MIT
/* ernicctl's messages (cli.h). */
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"

static void vmsg(const char *fmt, va_list ap)
{
	fputs("ernicctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void fail_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}
