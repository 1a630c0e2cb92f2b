/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cm's input, for fuzz_cm.c and the seeds mkcorpus.c writes: a
 * program of steps, each an operation byte (taken modulo FC_NOPS) and
 * then fc_args[op] argument bytes (zeros past the end of the input).
 * S is a side (bit 0: A or B), K one of the consumer's FC_SLOTS slots
 * for ids on that side (modulo); a call on an empty slot other than
 * LISTEN and REQ does nothing, those two create an id there first.
 */
#ifndef FUZZ_CM_H
#define FUZZ_CM_H

#include <stdint.h>
#include <string.h>

enum fc_op {
	FC_MAD,		/* S flags target MAD[256]: a MAD from outside */
	FC_NET,		/* how index offset xor: queued real MAD index
			 * (mod) delivered, lost, duplicated, or damaged
			 * (mad[offset] ^= xor | 1) and delivered: how % 4 */
	FC_RUN,		/* deliver the queue in order (at most 16) */
	FC_CLOCK,	/* ms lo, hi: time passes, A then B tick */
	FC_TICK,	/* S: a tick, no time passing */
	FC_LISTEN,	/* S K sid */
	FC_REQ,		/* S K f[12] */
	FC_REP,		/* S K f[6] */
	FC_RTU,		/* S K len flags */
	FC_REJ,		/* S K reason-hi reason-lo ari-len len */
	FC_DREQ,	/* S K len flags */
	FC_DESTROY,	/* S K */
	FC_POLICY,	/* S policy: how that side's events are answered */
	FC_FAIL,	/* S e: its next send fails (ENOBUFS EAGAIN EIO -) */
	FC_SHUTDOWN,	/* S: cm_dev_shutdown, the consumer leaves */
	FC_NOPS
};

static const uint16_t fc_args[FC_NOPS] = {
	[FC_MAD] = 3 + 256, [FC_NET] = 4, [FC_RUN] = 0, [FC_CLOCK] = 2,
	[FC_TICK] = 1, [FC_LISTEN] = 3, [FC_REQ] = 14, [FC_REP] = 8,
	[FC_RTU] = 4, [FC_REJ] = 6, [FC_DREQ] = 4, [FC_DESTROY] = 2,
	[FC_POLICY] = 2, [FC_FAIL] = 2, [FC_SHUTDOWN] = 1,
};

#define FC_SLOTS 8
/* FC_CLOCK: ms = value % 30001; this value: to the next deadline. */
#define FC_CLOCK_NEXT 0xFFFFu
/* FC_LISTEN, FC_REQ: service IDs by index (sid & 3). */
#define FC_SID0 UINT64_C(0x0106000000004E20)
#define FC_SID1 UINT64_C(0x0106000000004E21)

/* FC_MAD flags. The header is made that of a CM MAD we read (base and
 * class version, class, method SEND, status 0; an attribute outside
 * 0x10..0x1A mapped into it) and then spoilt as FCM_SPOIL says. */
enum {
	FCM_SPOIL = 7,		/* 0 none, 1 header as given, 2 base
				 * version, 3 class, 4 class version,
				 * 5 method, 6 status (^= target | 1),
				 * 7 a length not 256 (by target >> 5) */
	FCM_FIX = 0x08,		/* the comm IDs name an id of the
				 * receiver (its list, target-th): to
				 * it, from its peer */
	FCM_FIX_MORE = 0x10,	/* and REQ: its service, QPN and GID;
				 * DREQ: its QPN; REJ: no remote ID */
	FCM_FROM = 0x60,	/* from: 0, 1 peer, 2 a stranger, 3 itself */
	FCM_KEEP_LOCAL = 0x80,	/* FCM_FIX leaves the sender's ID alone */
};
#define FCM_FROM_STRANGER 0x40
#define FCM_FROM_SELF 0x60

/* FC_POLICY bits: what an event handler does, from inside the event. */
enum {
	FCP_REQ = 3,		/* CM_EV_REQ: 0 wait, 1 REP, 2 REJ,
				 * 3 destroy */
	FCP_REP = 3 << 2,	/* CM_EV_REP: 0 wait, 1 RTU, 2 REJ, 3 DREQ
				 * (refused) */
	FCP_EST_DREQ = 1 << 4,	/* CM_EV_ESTABLISHED: DREQ */
	FCP_POKE = 1 << 5,	/* a final event: try an RTU (refused) */
	FCP_PDATA = 1 << 6,	/* answers carry private data */
	FCP_LONG = 1 << 7,	/* ... too much of it (refused) */
};
#define FCP_DEFAULT (1 | 1 << 2)	/* accept, RTU: connections happen */

/* FC_REQ f[0]: where to (0, 1 the peer, 2 itself, 3 a stranger),
 * FCQ_RAW: fields unmasked (the CM may refuse them). */
enum {
	FCQ_TO = 3,
	FCQ_RAW = 4,
	FCQ_TRANSPORT = 3 << 3,
	FCQ_SRQ = 1 << 5,
	FCQ_ALT = 1 << 6,
	FCQ_ODD_GID = 1 << 7,	/* primary local GID not the sender's */
};

/* The sides' GIDs: ::ffff:192.0.2.(1 + side); 66 the stranger. */
static inline void fc_gid(uint8_t *gid, uint8_t last)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xFF;
	gid[12] = 192;
	gid[14] = 2;
	gid[15] = last;
}

#endif
