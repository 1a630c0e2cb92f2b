/* SPDX-License-Identifier: MIT */
/*
 * PG332 Table 2-3, "Packet Validation Error Syndrome": what each bit of
 * the syndrome the IP writes before a dropped packet's headers in the
 * error buffer (ERRBUFBA, XRNICCONF[5]) means, and what the IP did about
 * it. The provider counts them device-wide in the state file
 * (ernic_ds.syndromes); ernicctl stats prints them with this text.
 */
#ifndef ERNIC_SYNDROME_H
#define ERNIC_SYNDROME_H

#include <stdint.h>

#define ERNIC_SYNDROME_BITS 32u

struct ernic_syndrome {
	const char *layer;	/* "MAC", "IPv4", "BTH", ... */
	const char *what;	/* the check that failed */
	const char *impact;	/* what the IP did with the packet */
};

/* Bit b's row, or NULL for a reserved bit. */
const struct ernic_syndrome *ernic_syndrome_row(uint32_t b);

/*
 * PG332 Table 2-4, "Decoding for FATAL Codes": the code of an incoming
 * packet error status entry (Figure 2-3, IPKTERRQBA) that names a QP the
 * IP moved to FATAL. Codes are 5 bits; the provider counts them in the
 * state file (ernic_ds.fatal_codes), ernicctl stats prints them.
 */
#define ERNIC_FATAL_CODES 32u

/* Code c's description, or NULL for a code Table 2-4 does not list.
 * *remote (may be NULL): true for the one remote error. */
const char *ernic_fatal_text(uint32_t c, int *remote);

#endif
