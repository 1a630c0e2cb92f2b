/* SPDX-License-Identifier: MIT */
/*
 * ERNIC register map and data-structure layouts, named exactly as in
 * PG332 v3.1 (Xilinx ERNIC LogiCORE IP product guide). Shared by the
 * provider core, the ERNIC model and the tools: this is the contract
 * between software and (real or modelled) hardware.
 *
 * Offsets are relative to the 256 KB AXI4-Lite window (PG332 Table 3-1).
 * Per-QP registers take the 1-based ERNIC QP index i (1 = QP1).
 */
#ifndef ERNIC_HW_H
#define ERNIC_HW_H

#include "ernic_bits.h"

/* PG332 Table 3-1 */
#define ERNIC_REG_SPACE_SIZE 0x40000u

/* PG332 Table 2-6 parameter ranges */
#define ERNIC_C_NUM_QP_MIN 8u
/*
 * Table 2-6 allows 256, but XRNICCONF[15:8], Table 1-1's QPID and the
 * "up to 255 RDMA queue pairs" feature line are all 8 bits wide: 255 is
 * the largest count the register interface can express.
 */
#define ERNIC_C_NUM_QP_MAX 255u
#define ERNIC_C_NUM_QP_DEFAULT 8u
#define ERNIC_QP1 1u			/* reserved for CM MADs (PG332 ch.6) */
#define ERNIC_FIRST_RC_QP 2u

/* ---- Protection domain table: 0x0 + i * 0x100, i = 0..255 ---- */
#define ERNIC_PDT_ENTRIES 256u
#define ERNIC_PDT_STRIDE 0x100u
#define ERNIC_PDT(i, reg) ((uint32_t)(i) * ERNIC_PDT_STRIDE + (reg))
#define ERNIC_PDPDNUM 0x00u
#define ERNIC_VIRTADDRLSB 0x04u
#define ERNIC_VIRTADDRMSB 0x08u
#define ERNIC_BUFBASEADDRLSB 0x0Cu
#define ERNIC_BUFBASEADDRMSB 0x10u
#define ERNIC_BUFRKEY 0x14u
#define ERNIC_WRRDBUFLEN 0x18u
#define ERNIC_ACCESSDESC 0x1Cu

#define ERNIC_PDPDNUM_PD ERNIC_GENMASK(23, 0)
#define ERNIC_BUFRKEY_KEY ERNIC_GENMASK(7, 0)
#define ERNIC_ACCESSDESC_ACCESS ERNIC_GENMASK(3, 0)
#define ERNIC_ACCESSDESC_LEN_MSB ERNIC_GENMASK(31, 16)
enum ernic_access_type {
	ERNIC_ACCESS_READ_ONLY = 0x0,
	ERNIC_ACCESS_WRITE_ONLY = 0x1,
	ERNIC_ACCESS_READ_WRITE = 0x2,
};

/* ---- Global configuration (PG332 Table 2-7) ---- */
#define ERNIC_XRNICCONF 0x20000u
#define ERNIC_XRNICADCONF 0x20004u
#define ERNIC_XRNIC_BUF_THRESHOLD_ROCE 0x20008u
#define ERNIC_XRNIC_PAUSE_CONF 0x2000Cu
#define ERNIC_MACXADDLSB 0x20010u
#define ERNIC_MACXADDMSB 0x20014u
#define ERNIC_XRNIC_BUF_THRESHOLD_NON_ROCE 0x20018u
#define ERNIC_IPV6XADD1 0x20020u
#define ERNIC_IPV6XADD2 0x20024u
#define ERNIC_IPV6XADD3 0x20028u
#define ERNIC_IPV6XADD4 0x2002Cu
#define ERNIC_ERRBUFBA 0x20060u
#define ERNIC_ERRBUFBAMSB 0x20064u
#define ERNIC_ERRBUFSZ 0x20068u
#define ERNIC_ERRBUFWPTR 0x2006Cu
#define ERNIC_IPV4XADD 0x20070u
#define ERNIC_OPKTERRQBA 0x20078u
#define ERNIC_OPKTERRQBAMSB 0x2007Cu
#define ERNIC_OUTERRSTSQSZ 0x20080u
#define ERNIC_OPTERRSTSQQPTRDB 0x20084u
#define ERNIC_IPKTERRQBA 0x20088u
#define ERNIC_IPKTERRQBAMSB 0x2008Cu
#define ERNIC_IPKTERRQSZ 0x20090u
#define ERNIC_IPKTERRQWPTR 0x20094u
#define ERNIC_DATBUFBA 0x200A0u
#define ERNIC_DATBUFBAMSB 0x200A4u
#define ERNIC_DATBUFSZ 0x200A8u
#define ERNIC_CON_IO_CONF 0x200ACu
#define ERNIC_RESPERRPKTBA 0x200B0u
#define ERNIC_RESPERRPKTBAMSB 0x200B4u
#define ERNIC_RESPERRSZ 0x200B8u
#define ERNIC_RESPERRSZMSB 0x200BCu

/* Global status registers */
#define ERNIC_INSRRPKTCNT 0x20100u
#define ERNIC_INAMPKTCNT 0x20104u
#define ERNIC_OUTIOPKTCNT 0x20108u
#define ERNIC_OUTAMPKTCNT 0x2010Cu
#define ERNIC_LSTINPKT 0x20110u
#define ERNIC_LSTOUTPKT 0x20114u
#define ERNIC_ININVDUPCNT 0x20118u
#define ERNIC_INNCKPKTSTS 0x2011Cu
#define ERNIC_OUTRNRPKTSTS 0x20120u
#define ERNIC_WQEPROCSTS 0x20124u
#define ERNIC_QPMSTS 0x2012Cu
#define ERNIC_INALLDRPPKTCNT 0x20130u
#define ERNIC_INNAKPKTCNT 0x20134u
#define ERNIC_OUTNAKPKTCNT 0x20138u
#define ERNIC_RESPHNDSTS 0x2013Cu
#define ERNIC_RETRYCNTSTS 0x20140u
#define ERNIC_INCNPPTKTCNT 0x20174u
#define ERNIC_OUTCNPPKTCNT 0x20178u
#define ERNIC_OUTRDRSPPKTCNT 0x2017Cu
#define ERNIC_INTEN 0x20180u
#define ERNIC_INTSTS 0x20184u
/* n = 1..8, each covering QPs 32*(n-1) .. 32*n-1 */
#define ERNIC_RQINTSTS(n) (0x20190u + ((uint32_t)(n) - 1) * 4)
#define ERNIC_CQINTSTS(n) (0x201B0u + ((uint32_t)(n) - 1) * 4)
/* RQINTSTSn / CQINTSTSn: QP i is bit (i - 1) % 32 of word n (i - 1) / 32 + 1,
 * the numbering of the per-QP register blocks. */
#define ERNIC_QPINT_WORD(i) (((uint32_t)(i) - 1) / 32 + 1)
#define ERNIC_QPINT_BIT(i) (1u << (((uint32_t)(i) - 1) % 32))
/* The write-1-to-clear words of Table 2-7: INTSTS, RQINTSTS1..8 and
 * CQINTSTS1..8, the last two runs side by side. */
#define ERNIC_REG_IS_W1C(off)                                                 \
	((off) == ERNIC_INTSTS ||                                              \
	 ((off) >= ERNIC_RQINTSTS(1) && (off) <= ERNIC_CQINTSTS(8) &&         \
	  (off) % 4 == 0))
#define ERNIC_CNPSCHDSTSREG(n) (0x201D0u + ((uint32_t)(n) - 1) * 4)
/* CNPSCHDSTSnREG: "QPs 0 to 31" in word 1, so QP i is bit i % 32 of
 * word i / 32 + 1 (unlike RQINTSTSn / CQINTSTSn). */
#define ERNIC_CNPSCHD_WORD(i) ((uint32_t)(i) / 32 + 1)
#define ERNIC_CNPSCHD_BIT(i) ERNIC_BIT((uint32_t)(i) % 32)
#define ERNIC_CNPSCHD_WORDS 8u

/* XRNICCONF fields */
#define ERNIC_XRNICCONF_EN ERNIC_BIT(0)
#define ERNIC_XRNICCONF_TX_ACK_GEN ERNIC_GENMASK(4, 3)
#define ERNIC_XRNICCONF_ERRBUF_EN ERNIC_BIT(5)
#define ERNIC_XRNICCONF_NUM_QP ERNIC_GENMASK(15, 8)
#define ERNIC_XRNICCONF_UDP_SPORT ERNIC_GENMASK(31, 16)
enum ernic_tx_ack_gen {
	ERNIC_ACK_ON_REQ_OR_TIMEOUT = 0,
	ERNIC_ACK_ON_TIMEOUT = 1,
	ERNIC_ACK_ON_REQ = 2,
};

/* XRNICADCONF fields */
#define ERNIC_XRNICADCONF_SW_OVERRIDE ERNIC_BIT(0)
#define ERNIC_XRNICADCONF_RETRY_CNT_FATAL_DIS ERNIC_BIT(2)
#define ERNIC_XRNICADCONF_BASE_COUNT_WIDTH ERNIC_GENMASK(19, 16)
#define ERNIC_XRNICADCONF_SW_OVERRIDE_QP ERNIC_GENMASK(31, 24)

#define ERNIC_MACXADDMSB_MAC ERNIC_GENMASK(15, 0)
#define ERNIC_ERRBUFSZ_NUM ERNIC_GENMASK(15, 0)
#define ERNIC_ERRBUFSZ_SIZE ERNIC_GENMASK(31, 16)
#define ERNIC_ERRBUFWPTR_WPTR ERNIC_GENMASK(15, 0)
#define ERNIC_IPKTERRQSZ_NUM ERNIC_GENMASK(15, 0)
#define ERNIC_IPKTERRQWPTR_WPTR ERNIC_GENMASK(15, 0)
#define ERNIC_OUTERRSTSQSZ_NUM ERNIC_GENMASK(15, 0)
#define ERNIC_DATBUFSZ_NUM ERNIC_GENMASK(15, 0)
#define ERNIC_DATBUFSZ_SIZE ERNIC_GENMASK(31, 16)
#define ERNIC_CON_IO_CONF_QPID ERNIC_GENMASK(23, 16)
#define ERNIC_CON_IO_CONF_READY ERNIC_BIT(31)
/*
 * RESPERRSZ: PG332 ch.6 asks for "queue depth and size"; the Xilinx
 * drivers program depth in [31:16] and entry size in [15:0].
 */
#define ERNIC_RESPERRSZ_SIZE ERNIC_GENMASK(15, 0)
#define ERNIC_RESPERRSZ_DEPTH ERNIC_GENMASK(31, 16)

/* INTEN / INTSTS bits */
#define ERNIC_INT_PKT_VALID_ERR ERNIC_BIT(0)
#define ERNIC_INT_MAD_RX ERNIC_BIT(1)
#define ERNIC_INT_RNR_NACK ERNIC_BIT(3)
#define ERNIC_INT_WQE_COMPLETION ERNIC_BIT(4)
#define ERNIC_INT_ILLEGAL_OPCODE ERNIC_BIT(5)
#define ERNIC_INT_RQ_PKT_RX ERNIC_BIT(6)
#define ERNIC_INT_FATAL ERNIC_BIT(7)
#define ERNIC_INT_CNP ERNIC_BIT(8)
#define ERNIC_INT_ALL (ERNIC_GENMASK(8, 0) & ~ERNIC_BIT(2))
/*
 * What every read returns once nothing answers at the window: a PCIe
 * function removed or whose link is down completes reads with all-ones.
 * A working IP never reads so at INTSTS, whose bits [31:9] are reserved
 * (read 0).
 */
#define ERNIC_REG_GONE 0xFFFFFFFFu

/* RESPHNDSTS: PG332 "QP Fatal Recovery" polls bit 16 ("sq pici db check en") */
#define ERNIC_RESPHNDSTS_QP_INDEX ERNIC_GENMASK(7, 0)
#define ERNIC_RESPHNDSTS_FSM ERNIC_GENMASK(13, 8)
#define ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN ERNIC_BIT(16)
#define ERNIC_RESPHNDSTS_ACKS_TO_PROCESS ERNIC_BIT(17)

/* ---- Per-QP registers: 0x20200 + (i - 1) * 0x100, i = 1..C_NUM_QP ---- */
#define ERNIC_QP_BASE 0x20200u
#define ERNIC_QP_STRIDE 0x100u
#define ERNIC_QP(i, reg) \
	(ERNIC_QP_BASE + ((uint32_t)(i) - 1) * ERNIC_QP_STRIDE + (reg))
/* Offsets inside one QP's block */
#define ERNIC_QPCONF 0x00u
#define ERNIC_QPADVCONF 0x04u
#define ERNIC_RQBA 0x08u
#define ERNIC_SQBA 0x10u
#define ERNIC_CQBA 0x18u
#define ERNIC_RQWPTRDBADD 0x20u
#define ERNIC_RQWPTRDBADDMSB 0x24u
#define ERNIC_CQDBADD 0x28u
#define ERNIC_CQDBADDMSB 0x2Cu
#define ERNIC_CQHEAD 0x30u
#define ERNIC_RQCI 0x34u
#define ERNIC_SQPI 0x38u
#define ERNIC_QDEPTH 0x3Cu
#define ERNIC_SQPSN 0x40u
#define ERNIC_LSTRQREQ 0x44u
#define ERNIC_DESTQPCONF 0x48u
#define ERNIC_TIMEOUTCONF 0x4Cu
#define ERNIC_MACDESADDLSB 0x50u
#define ERNIC_MACDESADDMSB 0x54u
#define ERNIC_IPDESADDR1 0x60u
#define ERNIC_IPDESADDR2 0x64u
#define ERNIC_IPDESADDR3 0x68u
#define ERNIC_IPDESADDR4 0x6Cu
#define ERNIC_STATSSN 0x80u
#define ERNIC_STATMSN 0x84u
#define ERNIC_STATQP 0x88u
#define ERNIC_STATCURSQPTR 0x8Cu
#define ERNIC_STATRESPSN 0x90u
#define ERNIC_STATRQBUFCA 0x94u
#define ERNIC_STATWQE 0x98u
#define ERNIC_STATRQPIDB 0x9Cu
#define ERNIC_PD 0xB0u			/* "Protection domain number" */
#define ERNIC_RQBAMSB 0xC0u
#define ERNIC_SQBAMSB 0xC8u
#define ERNIC_CQBAMSB 0xD0u
#define ERNIC_STATRQBUFCAMSB 0xD8u

/* QPCONFi */
#define ERNIC_QPCONF_QP_EN ERNIC_BIT(0)
#define ERNIC_QPCONF_RQ_INT_EN ERNIC_BIT(2)
#define ERNIC_QPCONF_CQ_INT_EN ERNIC_BIT(3)
#define ERNIC_QPCONF_HW_HANDSHAKE_DIS ERNIC_BIT(4)
#define ERNIC_QPCONF_CQE_WRITE_EN ERNIC_BIT(5)
#define ERNIC_QPCONF_QP_UNDER_RECOVERY ERNIC_BIT(6)
#define ERNIC_QPCONF_IPV6 ERNIC_BIT(7)
#define ERNIC_QPCONF_PMTU ERNIC_GENMASK(10, 8)
#define ERNIC_QPCONF_RQ_BUF_SIZE ERNIC_GENMASK(31, 16) /* units of 256 B */
#define ERNIC_RQ_BUF_UNIT 256u
enum ernic_pmtu {
	ERNIC_PMTU_256 = 0,
	ERNIC_PMTU_512 = 1,
	ERNIC_PMTU_1024 = 2,
	ERNIC_PMTU_2048 = 3,
	ERNIC_PMTU_4096 = 4,
};

/* QPADVCONFi */
#define ERNIC_QPADVCONF_TRAFFIC_CLASS ERNIC_GENMASK(5, 0)
#define ERNIC_QPADVCONF_TTL ERNIC_GENMASK(15, 8)
#define ERNIC_QPADVCONF_PKEY ERNIC_GENMASK(31, 16)

/* Base address alignment (Table 2-7): RQBA [31:8], SQBA/CQBA [31:5] */
#define ERNIC_RQBA_ADDR ERNIC_GENMASK(31, 8)
#define ERNIC_SQBA_ADDR ERNIC_GENMASK(31, 5)
#define ERNIC_CQBA_ADDR ERNIC_GENMASK(31, 5)
#define ERNIC_RQ_ALIGN 256u
#define ERNIC_SQ_ALIGN 32u
#define ERNIC_CQ_ALIGN 32u

#define ERNIC_CQHEAD_PTR ERNIC_GENMASK(15, 0)
#define ERNIC_RQCI_IDX ERNIC_GENMASK(15, 0)
#define ERNIC_SQPI_IDX ERNIC_GENMASK(15, 0)
#define ERNIC_QDEPTH_SQ ERNIC_GENMASK(15, 0)
#define ERNIC_QDEPTH_RQ ERNIC_GENMASK(31, 16)
#define ERNIC_PSN_MASK ERNIC_GENMASK(23, 0)
#define ERNIC_SQPSN_PSN ERNIC_GENMASK(23, 0)
#define ERNIC_LSTRQREQ_PSN ERNIC_GENMASK(23, 0)
#define ERNIC_LSTRQREQ_OPCODE ERNIC_GENMASK(31, 24)
#define ERNIC_DESTQPCONF_QPN ERNIC_GENMASK(23, 0)
#define ERNIC_MACDESADDMSB_MAC ERNIC_GENMASK(15, 0)
#define ERNIC_PD_PDNUM ERNIC_GENMASK(23, 0)

/* TIMEOUTCONFi */
#define ERNIC_TIMEOUTCONF_TIMEOUT ERNIC_GENMASK(5, 0)
#define ERNIC_TIMEOUTCONF_RETRY_CNT ERNIC_GENMASK(10, 8)
#define ERNIC_TIMEOUTCONF_RNR_RETRY_CNT ERNIC_GENMASK(13, 11)
#define ERNIC_TIMEOUTCONF_RNR_NAK_TIMEOUT ERNIC_GENMASK(20, 16)

/* STATQPi */
#define ERNIC_STATQP_FATAL ERNIC_BIT(0)
#define ERNIC_STATQP_RQ_OVFL ERNIC_BIT(1)
#define ERNIC_STATQP_SQ_FULL ERNIC_BIT(2)
#define ERNIC_STATQP_OSQ_FULL ERNIC_BIT(3)
#define ERNIC_STATQP_CQ_FIFO_FULL ERNIC_BIT(4)
#define ERNIC_STATQP_SQ_EMPTY ERNIC_BIT(9)
#define ERNIC_STATQP_OSQ_EMPTY ERNIC_BIT(10)
#define ERNIC_STATQP_RETRIED ERNIC_BIT(11)
#define ERNIC_STATQP_NAK_SYNDROME ERNIC_GENMASK(22, 16)
#define ERNIC_STATQP_RETRY_COUNT ERNIC_GENMASK(26, 24)
#define ERNIC_STATQP_RNR_NAK_COUNT ERNIC_GENMASK(30, 28)

#define ERNIC_STATSSN_SSN ERNIC_GENMASK(23, 0)
#define ERNIC_STATMSN_MSN ERNIC_GENMASK(23, 0)
#define ERNIC_STATCURSQPTR_PTR ERNIC_GENMASK(15, 0)
#define ERNIC_STATRESPSN_PSN ERNIC_GENMASK(23, 0)
#define ERNIC_STATRQBUFCA_ADDR ERNIC_GENMASK(31, 8)
#define ERNIC_STATWQE_COUNT ERNIC_GENMASK(15, 0)
#define ERNIC_STATRQPIDB_IDX ERNIC_GENMASK(15, 0)

/* ---- Data structures in DDR ---- */

/* PG332 Table 2-1: 64-byte send WQE */
#define ERNIC_WQE_SIZE 64u
#define ERNIC_WQE_SDATA_SIZE 16u
struct ernic_wqe {
	uint16_t wrid;
	uint16_t rsvd0;
	uint64_t laddr;
	uint32_t length;
	uint8_t opcode;
	uint8_t rsvd1[3];
	uint64_t roffset;
	uint32_t rtag;
	uint8_t sdata[ERNIC_WQE_SDATA_SIZE];
	uint32_t immdt;
	uint8_t rsvd2[12];
} __attribute__((packed));
_Static_assert(sizeof(struct ernic_wqe) == ERNIC_WQE_SIZE, "Table 2-1");

/* Table 2-1 OPCODE values */
enum ernic_wqe_opcode {
	ERNIC_OP_RDMA_WRITE = 0x00,
	ERNIC_OP_RDMA_WRITE_IMM = 0x01,
	ERNIC_OP_SEND = 0x02,
	ERNIC_OP_SEND_IMM = 0x03,
	ERNIC_OP_RDMA_READ = 0x04,
	ERNIC_OP_SEND_INV = 0x0C,
};

/* PG332 Table 2-2: 4-byte completion queue entry */
#define ERNIC_CQE_SIZE 4u
#define ERNIC_CQE_WRID ERNIC_GENMASK(15, 0)
#define ERNIC_CQE_OPCODE ERNIC_GENMASK(23, 16)
#define ERNIC_CQE_ERRFLAG ERNIC_GENMASK(31, 24)

/* PG332 Table 1-1: invalidate / immediate side-stream entry (64 bit) */
#define ERNIC_IMMINV_DATA UINT64_C(0x00000000FFFFFFFF)
#define ERNIC_IMMINV_TYPE_SHIFT 32
#define ERNIC_IMMINV_QPID_SHIFT 40
#define ERNIC_IMMINV_RQPI_SHIFT 48
enum ernic_imminv_type {
	ERNIC_IMMINV_SEND_INV = 0x01,
	ERNIC_IMMINV_SEND_IMM = 0x02,
	ERNIC_IMMINV_WRITE_IMM = 0x03,
};

/* PG332 Figure 2-3: incoming packet error status entry (64 bit) */
#define ERNIC_ERRSTS_FATAL_CODE ERNIC_GENMASK(15, 0)
#define ERNIC_ERRSTS_QPID ERNIC_GENMASK(31, 16)
#define ERNIC_ERRSTS_ENTRY_SIZE 8u

/* PG332 Table 2-4: FATAL codes */
enum ernic_fatal_code {
	ERNIC_FATAL_OPCODE_SEQ = 0x01,
	ERNIC_FATAL_REQ_LEN = 0x02,
	ERNIC_FATAL_OPCODE_SEQ_AND_LEN = 0x03,
	ERNIC_FATAL_UNSUPPORTED_OPCODE = 0x04,
	ERNIC_FATAL_WQE_PROCESSOR = 0x05,
	ERNIC_FATAL_RESP_HANDLER = 0x06,
	ERNIC_FATAL_ACK_OPCODE = 0x0C,
	ERNIC_FATAL_RNR_DOWN_COUNTER = 0x0D,
	ERNIC_FATAL_REMOTE_NAK = 0x0A,
	ERNIC_FATAL_RNR_COUNTER = 0x09,
	ERNIC_FATAL_READ_RESOURCES_FULL = 0x10,
	ERNIC_FATAL_WRITE_OPCODE_SEQ = 0x11,
	ERNIC_FATAL_WRITE_LEN = 0x12,
	ERNIC_FATAL_WRITE_SEQ_AND_LEN = 0x13,
	ERNIC_FATAL_RKEY_ACCESS = 0x15,
	ERNIC_FATAL_RETH_DMA_LEN = 0x16,
	ERNIC_FATAL_RKEY_AND_DMA_LEN = 0x17,
	ERNIC_FATAL_BAD_AETH = 0x19,
	ERNIC_FATAL_READ_RESP_ONLY_LEN = 0x1A,
	ERNIC_FATAL_BAD_RESPONSE = 0x1B,
	ERNIC_FATAL_READ_RESP_LAST_NOT_ONLY = 0x1C,
	ERNIC_FATAL_READ_RESP_MIDDLE_LEN = 0x1E,
	ERNIC_FATAL_READ_RESP_LAST = 0x1F,
};

/*
 * Address register layouts shared by the local (MACXADD*, IPv4XADD,
 * IPv6XADD1-4) and per-QP destination (MACDESADD*, IPDESADDR1-4) sets:
 * the MAC LSB register holds bytes 2..5 and MSB[15:0] bytes 0..1 (first
 * on the wire); IP word 0 is address bits [31:0] — an IPv4 address, or
 * the last four bytes of an IPv6 one (as the Xilinx drivers program it).
 */
static inline void ernic_mac_to_regs(const uint8_t mac[6], uint32_t *lsb,
				     uint32_t *msb)
{
	*lsb = (uint32_t)mac[2] << 24 | (uint32_t)mac[3] << 16 |
	       (uint32_t)mac[4] << 8 | mac[5];
	*msb = (uint32_t)mac[0] << 8 | mac[1];
}

static inline void ernic_ip_to_regs(int is_ipv6, const uint8_t addr[16],
				    uint32_t word[4])
{
	for (int w = 0; w < 4; w++) {
		const uint8_t *b = is_ipv6 ? &addr[12 - 4 * w] : addr;

		word[w] = (is_ipv6 || w == 0) ?
				  ((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
				   (uint32_t)b[2] << 8 | b[3]) :
				  0;
	}
}

/* The reverse of the two above: what a QP's registers say. */
static inline void ernic_mac_from_regs(uint32_t lsb, uint32_t msb,
				       uint8_t mac[6])
{
	mac[0] = (uint8_t)(msb >> 8);
	mac[1] = (uint8_t)msb;
	for (int b = 0; b < 4; b++)
		mac[2 + b] = (uint8_t)(lsb >> (24 - 8 * b));
}

static inline void ernic_ip_from_regs(int is_ipv6, const uint32_t word[4],
				      uint8_t addr[16])
{
	for (int w = 0; w < (is_ipv6 ? 4 : 1); w++)
		for (int b = 0; b < 4; b++)
			addr[(is_ipv6 ? 12 - 4 * w : 0) + b] =
				(uint8_t)(word[w] >> (24 - 8 * b));
}

/*
 * ---- Conventions between ERNIC software and the ERNIC subsystem ----
 * Not in PG332; the model implements them and so must any FPGA design
 * that runs this provider. docs/datapath.md explains why.
 *
 * Ring indices (SQPI, CQHEAD, RQ write pointer, RQCI, IMMQ pointers) are
 * slot numbers in [0, depth) that wrap at the ring's depth (QDEPTH), so
 * a ring holds depth - 1 entries. The CQ ring is as deep as the SQ; its
 * entries are written in SQ order, WRID = the WQE's SQ slot.
 */

/* R_Key / L_Key: PD-table slot in [7:0], the slot's BUFRKEY in [15:8]. */
#define ERNIC_KEY_SLOT ERNIC_GENMASK(7, 0)
#define ERNIC_KEY_GEN ERNIC_GENMASK(15, 8)
#define ERNIC_KEY_RSVD ERNIC_GENMASK(31, 16)

/*
 * RX side band. PG332 stores each incoming SEND packet in one RQ buffer
 * element but records neither its length nor its opcode, and emits
 * ImmDt/IETH on an AXI4-Stream (Table 1-1). The subsystem writes both to
 * memory next to the RQ, before the RQ write-pointer doorbell:
 *
 *   RQBA + k * bufsz                 element k (PG332)
 *   RXLEN = RQBA + depth * bufsz     u32 per element: payload bytes, BTH
 *                                    SE and opcode of the packet in element k
 *   IMMQ  = RXLEN + depth * 4, 8-aligned
 *                                    16-byte entry per Table 1-1 event
 *
 * Doorbell words at RQWPTRDBADD: +0 RQ write pointer (PG332), +4 IMMQ
 * write pointer (device); written by software: +64 IMMQ consumer index
 * (the device treats a full IMMQ like a full RQ: RNR NAK) and +68 the
 * receive credit, the number of receive requests posted since the QP
 * was enabled (mod 2^32): the device starts a message that consumes a
 * receive (SEND FIRST/ONLY, RDMA WRITE with immediate) only while fewer
 * have started since the enable, and otherwise answers RNR NAK as for a
 * full RQ. So a message for which no receive was posted is never ACKed.
 */
#define ERNIC_RXLEN_ENTRY_SIZE 4u
#define ERNIC_RXLEN_LEN ERNIC_GENMASK(15, 0)
#define ERNIC_RXLEN_SE ERNIC_BIT(16)	/* BTH SE: solicited event */
#define ERNIC_RXLEN_OPCODE ERNIC_GENMASK(31, 24)
#define ERNIC_IMMQ_ENTRY_SIZE 16u
struct ernic_immq_entry {
	uint64_t entry;		/* Table 1-1, exactly as streamed */
	uint32_t rqpi;		/* full RQ index: the element of a SEND; for
				 * WRITE_IMM the RQ write pointer on arrival */
	uint32_t len;		/* WRITE_IMM: RETH DMA length; else 0 */
};
_Static_assert(sizeof(struct ernic_immq_entry) == ERNIC_IMMQ_ENTRY_SIZE,
	       "IMMQ entry");
/* RQ doorbell block: the IP writes the first two words; software writes
 * IMMQ_CI, a cache line (64 B) away, so that on a non-coherent bus the
 * CPU never writes back a stale copy of the IP's words with its own. */
#define ERNIC_RQDB_WPTR 0u
#define ERNIC_RQDB_IMMQ_WPTR 4u
#define ERNIC_RQDB_IMMQ_CI 64u
#define ERNIC_RQDB_RECV_CREDIT 68u

static inline uint64_t ernic_rxlen_off(uint32_t depth, uint32_t bufsz)
{
	return (uint64_t)depth * bufsz;
}

static inline uint64_t ernic_immq_off(uint32_t depth, uint32_t bufsz)
{
	return (ernic_rxlen_off(depth, bufsz) +
		(uint64_t)depth * ERNIC_RXLEN_ENTRY_SIZE + 7) & ~UINT64_C(7);
}

/* Bytes of the whole RQ block (elements, RXLEN, IMMQ). */
static inline uint64_t ernic_rq_block_size(uint32_t depth, uint32_t bufsz)
{
	return ernic_immq_off(depth, bufsz) +
	       (uint64_t)depth * ERNIC_IMMQ_ENTRY_SIZE;
}

/*
 * QP1 carries MADs (IBTA GSI: UD SEND_ONLY, DETH, 256-byte MAD). PG332
 * says only that QP1 sends and receives them; as Xilinx's own driver
 * uses it, software builds every header and the IP adds the ICRC:
 *  - a QP1 SEND WQE's LADDR/LENGTH name a whole frame in memory, from the
 *    Ethernet header to the last MAD byte (ICRC excluded); its IP total
 *    length and UDP length count the 4 ICRC bytes the IP appends. The IP
 *    sends it unchanged and writes a CQE; a frame that is not a RoCEv2
 *    UD SEND_ONLY from the device's own address gets an ERRFLAG CQE and
 *    is not sent (QP1 stays usable).
 *  - a valid packet for QP1 is stored whole, Ethernet header to the last
 *    MAD byte, in the next RQ element (RQCIi frees elements as for any
 *    QP); RXLEN holds the stored length and the BTH opcode; the RQ write
 *    pointer doorbell, then INTSTS "incoming MAD packet". With no free
 *    element the MAD is dropped (UD: no RNR NAK; the CM retransmits).
 */
#define ERNIC_QP1_BUF_SIZE 512u	/* RQ element and largest frame */

/*
 * Error completions: ERRFLAG (Table 2-2) says only "QP fatal". The
 * subsystem reason is in STATQPi: NAK syndrome [22:16] holds the AETH
 * syndrome of the NAK or RNR NAK that ended the QP (0 for a timeout),
 * and the retry counters show which limit ran out.
 *
 * Order (PG332 is silent; the model keeps it): the syndrome, then the
 * error CQE and the CQ write index, then STATQPi.FATAL. A register read
 * and a DDR write take different paths on a board, so software that sees
 * FATAL with no error CQE still gives the CQE a millisecond to land
 * before it takes "no CQE" as final.
 */

/* PG332 ch.1 "Unsupported Features" */
#define ERNIC_MAX_MSG_SIZE (8u << 20)
#define ERNIC_ROCEV2_UDP_PORT 4791u

#endif
