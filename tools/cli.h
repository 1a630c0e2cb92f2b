/* SPDX-License-Identifier: MIT */
/* ernicctl's messages: one "ernicctl: reason" line on stderr. */
#ifndef ERNIC_CLI_H
#define ERNIC_CLI_H

/* Exit status of a command-line syntax error (1 is any other failure). */
#define EXIT_USAGE 2

/* A failure's reason, one line. */
void fail_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A missing or extra argument: one line naming it; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
