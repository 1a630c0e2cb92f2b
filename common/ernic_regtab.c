// SPDX-License-Identifier: MIT
/* PG332 v3.1 Table 2-7 (ernic_regtab.h). */
#include <stddef.h>

#include "ernic_hw.h"
#include "ernic_regtab.h"

#define FULL 0xFFFFFFFFu

/*
 * Row builders. The name is the register's ernic_hw.h suffix, so a typo
 * in either place fails to compile. Non-QP rows carry first_qp = 0.
 */
#define PDT(reg, acc, msk) \
	{ #reg, ERNIC_##reg, ERNIC_SCOPE_PDT, ERNIC_REG_##acc, (msk), 0, 0 }
#define GLB(reg, acc, msk, rst) \
	{ #reg, ERNIC_##reg, ERNIC_SCOPE_GLOBAL, ERNIC_REG_##acc, (msk), (rst), 0 }
/* The eight per-32-QP bitmaps; PG332 puts n before a suffix ("1REG"). */
#define GLBN(reg, pre, n, post, acc) \
	{ pre #n post, ERNIC_##reg(n), ERNIC_SCOPE_GLOBAL, ERNIC_REG_##acc, \
	  FULL, 0, 0 }
#define GLB8(reg, pre, post, acc) \
	GLBN(reg, pre, 1, post, acc), GLBN(reg, pre, 2, post, acc), \
	GLBN(reg, pre, 3, post, acc), GLBN(reg, pre, 4, post, acc), \
	GLBN(reg, pre, 5, post, acc), GLBN(reg, pre, 6, post, acc), \
	GLBN(reg, pre, 7, post, acc), GLBN(reg, pre, 8, post, acc)
#define QPR(reg, acc, msk, rst, first) \
	{ #reg, ERNIC_##reg, ERNIC_SCOPE_QP, ERNIC_REG_##acc, (msk), (rst), (first) }

/*
 * "Any bits not specified ... are reserved and return 0 upon read. The
 * power-on reset values of control registers are 0 unless specified"
 * (PG332 "Register Space"). Masks below are the bits the table defines;
 * registers described only as "[31:0]" or with no bit list are full.
 */
const struct ernic_reg_desc ernic_reg_table[] = {
	/* Protection domain table, 0x0 + i * 0x100 (i = 0..255) */
	PDT(PDPDNUM, RW, ERNIC_PDPDNUM_PD),
	PDT(VIRTADDRLSB, RW, FULL),
	PDT(VIRTADDRMSB, RW, FULL),
	PDT(BUFBASEADDRLSB, RW, FULL),	/* access column empty in PG332 */
	PDT(BUFBASEADDRMSB, RW, FULL),
	PDT(BUFRKEY, RW, ERNIC_BUFRKEY_KEY),
	PDT(WRRDBUFLEN, RW, FULL),
	/* The prose says "[7:0] the Access description" but the bit list
	 * makes [15:4] reserved: follow the bit list. */
	PDT(ACCESSDESC, RW, ERNIC_ACCESSDESC_ACCESS | ERNIC_ACCESSDESC_LEN_MSB),

	/* Global configuration */
	GLB(XRNICCONF, RW, ERNIC_XRNICCONF_EN | ERNIC_XRNICCONF_TX_ACK_GEN |
	    ERNIC_XRNICCONF_ERRBUF_EN | ERNIC_XRNICCONF_NUM_QP |
	    ERNIC_XRNICCONF_UDP_SPORT, 0),
	GLB(XRNICADCONF, RW, ERNIC_XRNICADCONF_SW_OVERRIDE |
	    ERNIC_XRNICADCONF_RETRY_CNT_FATAL_DIS |
	    ERNIC_XRNICADCONF_BASE_COUNT_WIDTH |
	    ERNIC_XRNICADCONF_SW_OVERRIDE_QP, 0),
	GLB(XRNIC_BUF_THRESHOLD_ROCE, RW, FULL, 0x965A),
	/* [0], [1], [7:4], [11:8], [12] */
	GLB(XRNIC_PAUSE_CONF, RW, ERNIC_GENMASK(12, 4) | ERNIC_GENMASK(1, 0),
	    0x800),
	GLB(MACXADDLSB, RW, FULL, 0),
	GLB(MACXADDMSB, RW, ERNIC_MACXADDMSB_MAC, 0),
	GLB(XRNIC_BUF_THRESHOLD_NON_ROCE, RW, FULL, 0x965A),
	GLB(IPV6XADD1, RW, FULL, 0),
	GLB(IPV6XADD2, RW, FULL, 0),
	GLB(IPV6XADD3, RW, FULL, 0),
	GLB(IPV6XADD4, RW, FULL, 0),
	GLB(ERRBUFBA, RW, FULL, 0),
	GLB(ERRBUFBAMSB, RW, FULL, 0),
	GLB(ERRBUFSZ, RW, FULL, 0),
	GLB(ERRBUFWPTR, RO, ERNIC_ERRBUFWPTR_WPTR, 0),
	GLB(IPV4XADD, RW, FULL, 0),
	GLB(OPKTERRQBA, RW, FULL, 0),
	GLB(OPKTERRQBAMSB, RW, FULL, 0),
	GLB(OUTERRSTSQSZ, RW, ERNIC_OUTERRSTSQSZ_NUM, 0),
	GLB(OPTERRSTSQQPTRDB, RW, FULL, 0),	/* no bit list */
	GLB(IPKTERRQBA, RW, FULL, 0),
	GLB(IPKTERRQBAMSB, RW, FULL, 0),
	GLB(IPKTERRQSZ, RW, ERNIC_IPKTERRQSZ_NUM, 0),
	GLB(IPKTERRQWPTR, RO, ERNIC_IPKTERRQWPTR_WPTR, 0),
	GLB(DATBUFBA, RW, FULL, 0),
	GLB(DATBUFBAMSB, RW, FULL, 0),
	GLB(DATBUFSZ, RW, FULL, 0),
	/* [31] is a read-only "ready" flag inside an RW register (see
	 * sw_write_mask()). Model choice: it resets to 1, as nothing is
	 * pending on a fresh IP. */
	GLB(CON_IO_CONF, RW, ERNIC_CON_IO_CONF_QPID | ERNIC_CON_IO_CONF_READY,
	    ERNIC_CON_IO_CONF_READY),
	GLB(RESPERRPKTBA, RW, FULL, 0),
	GLB(RESPERRPKTBAMSB, RW, FULL, 0),
	GLB(RESPERRSZ, RW, FULL, 0),
	GLB(RESPERRSZMSB, RW, FULL, 0),

	/* Global status registers */
	GLB(INSRRPKTCNT, RO, FULL, 0),
	GLB(INAMPKTCNT, RO, FULL, 0),
	GLB(OUTIOPKTCNT, RO, FULL, 0),
	GLB(OUTAMPKTCNT, RO, FULL, 0),
	GLB(LSTINPKT, RO, FULL, 0),
	GLB(LSTOUTPKT, RO, FULL, 0),
	GLB(ININVDUPCNT, RO, FULL, 0),
	GLB(INNCKPKTSTS, RO, ERNIC_GENMASK(31, 16) | ERNIC_GENMASK(7, 0), 0),
	GLB(OUTRNRPKTSTS, RO, ERNIC_GENMASK(31, 16) | ERNIC_GENMASK(7, 0), 0),
	/* [2:0], [4], [5], [6], [12] and [15:12], [23:16], [31:24] */
	GLB(WQEPROCSTS, RO, ERNIC_GENMASK(31, 12) | ERNIC_GENMASK(6, 4) |
	    ERNIC_GENMASK(2, 0), 0),
	GLB(QPMSTS, RO, ERNIC_GENMASK(31, 16) | ERNIC_GENMASK(1, 0), 0),
	GLB(INALLDRPPKTCNT, RO, FULL, 0),
	GLB(INNAKPKTCNT, RO, ERNIC_GENMASK(15, 0), 0),
	GLB(OUTNAKPKTCNT, RO, ERNIC_GENMASK(15, 0), 0),
	/* Table 2-7 marks [16:14] reserved, but ch.6 "QP Fatal Recovery"
	 * polls bit 16 ("sq pici db check en"), so it is defined. Model
	 * choice: it resets to 1, as an idle IP has no SQ PI/CI checks
	 * pending and the recovery poll must not hang. */
	GLB(RESPHNDSTS, RO, ERNIC_RESPHNDSTS_QP_INDEX | ERNIC_RESPHNDSTS_FSM |
	    ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN |
	    ERNIC_RESPHNDSTS_ACKS_TO_PROCESS,
	    ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN),
	GLB(RETRYCNTSTS, RO, FULL, 0),
	GLB(INCNPPTKTCNT, RO, FULL, 0),
	GLB(OUTCNPPKTCNT, RO, FULL, 0),
	GLB(OUTRDRSPPKTCNT, RO, FULL, 0),
	GLB(INTEN, RW, ERNIC_INT_ALL, 0),
	GLB(INTSTS, W1C, ERNIC_INT_ALL, 0),
	/* "WC1" in the table: write 1 to clear (PG332 ch.3 "Interrupts") */
	GLB8(RQINTSTS, "RQINTSTS", "", W1C),
	GLB8(CQINTSTS, "CQINTSTS", "", W1C),
	GLB8(CNPSCHDSTSREG, "CNPSCHDSTS", "REG", RO),

	/* Per-QP registers, 0x20200 + (i - 1) * 0x100 */
	QPR(QPCONF, RW, ERNIC_QPCONF_QP_EN | ERNIC_GENMASK(10, 2) |
	    ERNIC_QPCONF_RQ_BUF_SIZE, 0, 1),
	QPR(QPADVCONF, RW, ERNIC_QPADVCONF_TRAFFIC_CLASS | ERNIC_QPADVCONF_TTL |
	    ERNIC_QPADVCONF_PKEY, 0, 2),
	QPR(RQBA, RW, ERNIC_RQBA_ADDR, 0, 1),
	QPR(SQBA, RW, ERNIC_SQBA_ADDR, 0, 1),
	QPR(CQBA, RW, ERNIC_CQBA_ADDR, 0, 1),
	QPR(RQWPTRDBADD, RW, FULL, 0, 1),
	QPR(RQWPTRDBADDMSB, RW, FULL, 0, 1),
	QPR(CQDBADD, RW, FULL, 0, 1),
	QPR(CQDBADDMSB, RW, FULL, 0, 1),
	/* Table 2-7 says "[31:0]: Reserved" after [15:0]: read [31:16]. */
	QPR(CQHEAD, RO_SWOVR, ERNIC_CQHEAD_PTR, 0, 1),
	QPR(RQCI, RW, ERNIC_RQCI_IDX, 0, 1),
	QPR(SQPI, RW, ERNIC_SQPI_IDX, 0, 1),
	QPR(QDEPTH, RW, FULL, 0, 1),
	QPR(SQPSN, RW, ERNIC_SQPSN_PSN, 0, 2),
	QPR(LSTRQREQ, RW, ERNIC_LSTRQREQ_PSN | ERNIC_LSTRQREQ_OPCODE, 0, 2),
	QPR(DESTQPCONF, RW, ERNIC_DESTQPCONF_QPN, 0, 1),
	/* Says both "i = 1 to C_NUM_QP" and "does not exist for QP1";
	 * QP1 carries only MADs and has no retry timer: take the latter. */
	QPR(TIMEOUTCONF, RW, ERNIC_TIMEOUTCONF_TIMEOUT |
	    ERNIC_TIMEOUTCONF_RETRY_CNT | ERNIC_TIMEOUTCONF_RNR_RETRY_CNT |
	    ERNIC_TIMEOUTCONF_RNR_NAK_TIMEOUT, 0, 2),
	QPR(MACDESADDLSB, RW, FULL, 0, 1),
	QPR(MACDESADDMSB, RW, ERNIC_MACDESADDMSB_MAC, 0, 1),
	QPR(IPDESADDR1, RW, FULL, 0, 1),
	QPR(IPDESADDR2, RW, FULL, 0, 1),
	QPR(IPDESADDR3, RW, FULL, 0, 1),
	QPR(IPDESADDR4, RW, FULL, 0, 1),
	QPR(STATSSN, RO, ERNIC_STATSSN_SSN, 0, 2),
	/* ch.6 "QP Deletion" step 4 and "QP Fatal Recovery" step 4 zero
	 * STATMSN, STATRQBUFCA(MSB) under SW override, like the three
	 * registers XRNICADCONF[0] names. */
	QPR(STATMSN, RO_SWOVR, ERNIC_STATMSN_MSN, 0, 2),
	/*
	 * Its fields marked "(Read/Write)" are re-initialised by "QP Fatal
	 * Recovery" step 9 under SW override; only those fields take the
	 * write (sw_write_mask()). Model choice: resets with "Send Q empty"
	 * and "Outstanding Q empty" set, since both queues start empty.
	 */
	QPR(STATQP, RO_SWOVR, ERNIC_STATQP_FATAL | ERNIC_STATQP_RQ_OVFL |
	    ERNIC_STATQP_SQ_FULL | ERNIC_STATQP_OSQ_FULL |
	    ERNIC_STATQP_CQ_FIFO_FULL | ERNIC_STATQP_SQ_EMPTY |
	    ERNIC_STATQP_OSQ_EMPTY | ERNIC_STATQP_RETRIED |
	    ERNIC_STATQP_NAK_SYNDROME | ERNIC_STATQP_RETRY_COUNT |
	    ERNIC_STATQP_RNR_NAK_COUNT,
	    ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY, 1),
	QPR(STATCURSQPTR, RO_SWOVR, ERNIC_STATCURSQPTR_PTR, 0, 2),
	QPR(STATRESPSN, RO, ERNIC_STATRESPSN_PSN, 0, 2),
	QPR(STATRQBUFCA, RO_SWOVR, ERNIC_STATRQBUFCA_ADDR, 0, 2),
	QPR(STATWQE, RO, ERNIC_STATWQE_COUNT, 0, 2),
	QPR(STATRQPIDB, RO_SWOVR, ERNIC_STATRQPIDB_IDX, 0, 2),
	QPR(PD, RW, ERNIC_PD_PDNUM, 0, 2),
	QPR(RQBAMSB, RW, FULL, 0, 1),
	QPR(SQBAMSB, RW, FULL, 0, 1),	/* access column empty in PG332 */
	QPR(CQBAMSB, RW, FULL, 0, 1),
	QPR(STATRQBUFCAMSB, RO_SWOVR, FULL, 0, 2),
	{ NULL, 0, 0, 0, 0, 0, 0 },
};
