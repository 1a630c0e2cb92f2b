/* SPDX-License-Identifier: MIT */
/*
 * PG332 v3.1 Table 2-7: every ERNIC register with its access type, the
 * bits it defines and its reset value. The model's register file is
 * built on it; ernicctl's dump and stats name registers with it.
 *
 * Register names are the ernic_hw.h spellings, which fix the table's
 * typos ("RQCLi"/"SQPLi" are RQCI/SQPI, "ERRBUFAMSB" is ERRBUFBAMSB,
 * "STATRESPSi" is STATRESPSN, "STATRQBUCAMSB" is STATRQBUFCAMSB).
 */
#ifndef ERNIC_REGTAB_H
#define ERNIC_REGTAB_H

#include <stdint.h>

/* Table 2-7 access types */
enum ernic_reg_access {
	ERNIC_REG_RW,
	ERNIC_REG_RO,
	ERNIC_REG_W1C,
	/* RO, but writable by software while XRNICADCONF[0] (SW override)
	 * is set (PG332 XRNICADCONF; ch.6 "QP Deletion", "QP Fatal
	 * Recovery"). */
	ERNIC_REG_RO_SWOVR,
};

enum ernic_reg_scope {
	ERNIC_SCOPE_GLOBAL,
	ERNIC_SCOPE_PDT,	/* 0x0 + i * 0x100, i = 0..255 */
	ERNIC_SCOPE_QP,		/* 0x20200 + (i - 1) * 0x100 */
};

/* One row of the register table. */
struct ernic_reg_desc {
	const char *name;	/* PG332 name without the QP suffix */
	uint32_t off;		/* absolute (global) or inside its block */
	enum ernic_reg_scope scope;
	enum ernic_reg_access access;
	uint32_t mask;		/* defined bits; others read as 0 */
	uint32_t reset;
	uint8_t first_qp;	/* per-QP: 1, or 2 for "does not exist for QP1" */
};

/* The whole register table, terminated by a row with name == NULL. */
extern const struct ernic_reg_desc ernic_reg_table[];

#endif
