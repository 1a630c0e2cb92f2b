// SPDX-License-Identifier: MIT
/*
 * ERNIC model register file: the PG332 v3.1 Table 2-7 register table,
 * offset decoding, and the software/hardware access rules.
 *
 * Register names are the ernic_hw.h spellings, which fix the table's
 * typos ("RQCLi"/"SQPLi" are RQCI/SQPI, "ERRBUFAMSB" is ERRBUFBAMSB,
 * "STATRESPSi" is STATRESPSN, "STATRQBUCAMSB" is STATRQBUFCAMSB).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "ernic_conf.h"
#include "model_priv.h"

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

/* ---- Offset decoding ---- */

#define PDT_SPACE (ERNIC_PDT_ENTRIES * ERNIC_PDT_STRIDE)	/* 0x10000 */
#define GLB_BASE ERNIC_XRNICCONF
#define GLB_SPACE (ERNIC_QP_BASE - GLB_BASE)			/* 0x200 */
#define BLOCK_WORDS (ERNIC_PDT_STRIDE / 4)

/* Register at each word of a PD slot, of the global block, of a QP block */
static const struct ernic_reg_desc *pdt_idx[BLOCK_WORDS];
static const struct ernic_reg_desc *glb_idx[GLB_SPACE / 4];
static const struct ernic_reg_desc *qp_idx[BLOCK_WORDS];
static pthread_once_t idx_once = PTHREAD_ONCE_INIT;

static void idx_build(void)
{
	const struct ernic_reg_desc *d;

	for (d = ernic_reg_table; d->name; d++) {
		switch (d->scope) {
		case ERNIC_SCOPE_PDT:
			pdt_idx[d->off / 4] = d;
			break;
		case ERNIC_SCOPE_GLOBAL:
			glb_idx[(d->off - GLB_BASE) / 4] = d;
			break;
		case ERNIC_SCOPE_QP:
			qp_idx[d->off / 4] = d;
			break;
		}
	}
}

/* ernic_reg_lookup once the index is built: a model's registers (every
 * model builds it at ernic_model_create), several per received packet. */
static inline const struct ernic_reg_desc *
reg_desc(uint32_t off, uint32_t c_num_qp, uint32_t *index)
{
	const struct ernic_reg_desc *d = NULL;
	uint32_t i = 0;

	if ((off & 3) || off >= ERNIC_REG_SPACE_SIZE) {
		/* no register */
	} else if (off < PDT_SPACE) {
		i = off / ERNIC_PDT_STRIDE;
		d = pdt_idx[(off % ERNIC_PDT_STRIDE) / 4];
	} else if (off >= GLB_BASE && off < ERNIC_QP_BASE) {
		d = glb_idx[(off - GLB_BASE) / 4];
	} else if (off >= ERNIC_QP_BASE) {
		i = (off - ERNIC_QP_BASE) / ERNIC_QP_STRIDE + 1;
		/* Blocks exist for QP 1..C_NUM_QP only (Table 2-7). */
		if (i <= c_num_qp && i <= ERNIC_C_NUM_QP_MAX) {
			d = qp_idx[(off % ERNIC_QP_STRIDE) / 4];
			if (d && i < d->first_qp)
				d = NULL;
		}
	}
	if (index)
		*index = i;
	return d;
}

const struct ernic_reg_desc *ernic_reg_lookup(uint32_t off, uint32_t c_num_qp,
					      uint32_t *index)
{
	pthread_once(&idx_once, idx_build);
	return reg_desc(off, c_num_qp, index);
}

/* ---- Register access ---- */

static inline uint32_t reg_get(const struct ernic_model *m, uint32_t off)
{
	return __atomic_load_n(&m->regs[off / 4], __ATOMIC_ACQUIRE);
}

static inline void reg_set(struct ernic_model *m, uint32_t off, uint32_t v)
{
	__atomic_store_n(&m->regs[off / 4], v, __ATOMIC_RELEASE);
}

/* Bits a software write may change; narrower than the mask where a
 * register mixes read-only and writable fields. */
static uint32_t sw_write_mask(const struct ernic_reg_desc *d)
{
	if (d->scope == ERNIC_SCOPE_GLOBAL && d->off == ERNIC_CON_IO_CONF)
		return d->mask & ~ERNIC_CON_IO_CONF_READY;
	if (d->scope == ERNIC_SCOPE_QP && d->off == ERNIC_STATQP)
		return ERNIC_STATQP_NAK_SYNDROME | ERNIC_STATQP_RETRY_COUNT |
		       ERNIC_STATQP_RNR_NAK_COUNT;
	return d->mask;
}

/*
 * XRNICADCONF[0] lets software write the RO_SWOVR registers; with
 * [31:24] non-zero only those of that QP. Caller holds m->lock.
 */
static int sw_override(const struct ernic_model *m, uint32_t qp)
{
	uint32_t ad = reg_get(m, ERNIC_XRNICADCONF);
	uint32_t sel = ERNIC_FIELD_GET(ERNIC_XRNICADCONF_SW_OVERRIDE_QP, ad);

	if (!(ad & ERNIC_XRNICADCONF_SW_OVERRIDE))
		return 0;
	return sel == 0 || sel == qp;
}

static int irq_line(const struct ernic_model *m)
{
	return (reg_get(m, ERNIC_INTSTS) & reg_get(m, ERNIC_INTEN)) != 0;
}

/* Deliver the line if it is high and unmasked. Caller holds m->lock. */
static void irq_deliver(struct ernic_model *m)
{
	uint64_t one = 1;

	if (!m->irq_armed || !irq_line(m))
		return;
	m->irq_armed = false;
	if (write(m->irq_efd, &one, sizeof(one)) < 0) {
		/* counter saturated: the event is pending anyway */
	}
}

/* Caller holds m->lock and has just written off. */
static void irq_update(struct ernic_model *m, uint32_t off)
{
	if ((off == ERNIC_INTSTS || off == ERNIC_INTEN) && irq_line(m)) {
		pthread_cond_broadcast(&m->irq_cond);
		irq_deliver(m);
	}
}

int ernic_model_irq_fd(struct ernic_model *m)
{
	return m->irq_efd;
}

void ernic_model_irq_enable(struct ernic_model *m)
{
	uint64_t v;

	pthread_mutex_lock(&m->lock);
	if (read(m->irq_efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing was pending */
	}
	m->irq_armed = true;
	irq_deliver(m);
	pthread_mutex_unlock(&m->lock);
}

uint32_t ernic_model_reg_read(struct ernic_model *m, uint32_t off)
{
	const struct ernic_reg_desc *d = reg_desc(off, m->c_num_qp, NULL);

	return d ? reg_get(m, off) & d->mask : 0;
}

void ernic_model_reg_write(struct ernic_model *m, uint32_t off, uint32_t val)
{
	model_reg_write(m, off, val, false);
}

void model_reg_write(struct ernic_model *m, uint32_t off, uint32_t val,
		     bool ovr)
{
	uint32_t qp, cur, wm;
	const struct ernic_reg_desc *d = reg_desc(off, m->c_num_qp, &qp);

	if (!d || d->access == ERNIC_REG_RO)
		return;		/* reserved: ignored; RO: no effect */
	/* The doorbells (one write per post), no interrupt's: no
	 * read-modify-write of the IP's to be ordered with, no lock. */
	if (d->scope == ERNIC_SCOPE_QP && model_qp_doorbell(d->off)) {
		reg_set(m, off, val & d->mask);
		if (m->eng)
			eng_reg_written(m->eng, off, qp);
		return;
	}
	wm = sw_write_mask(d);
	pthread_mutex_lock(&m->lock);
	cur = reg_get(m, off);
	switch (d->access) {
	case ERNIC_REG_RW:
		reg_set(m, off, (cur & ~wm) | (val & wm));
		break;
	case ERNIC_REG_W1C:
		reg_set(m, off, cur & ~(val & d->mask));
		break;
	case ERNIC_REG_RO_SWOVR:
		if (ovr || sw_override(m, qp))	/* all are per-QP */
			reg_set(m, off, (cur & ~wm) | (val & wm));
		break;
	case ERNIC_REG_RO:
		break;
	}
	irq_update(m, off);
	pthread_mutex_unlock(&m->lock);
	if (m->eng)
		eng_reg_written(m->eng, off, qp);
}

/*
 * Whether hw_update may skip the lock (several status words and counters
 * change per received packet): when no virtual-FPGA window mirrors the
 * registers (hw_hook, called under the lock), for a word software cannot
 * write (the engine, whose passes run one at a time, is its only
 * writer), or a whole overwrite of a word software also writes whole
 * (either write then comes wholly before the other). Never an interrupt
 * register (irq_update) nor a W1C word.
 */
static bool hw_lockless(struct ernic_model *m, const struct ernic_reg_desc *d,
			uint32_t off, uint32_t keep)
{
	if (__atomic_load_n(&m->hw_hook, __ATOMIC_ACQUIRE))
		return false;
	if (d->access == ERNIC_REG_RO)
		return true;
	return !keep && d->access != ERNIC_REG_W1C && off != ERNIC_INTEN &&
	       sw_write_mask(d) == d->mask;
}

/* The word becomes (word & keep) | val, under the lock that software's
 * writes take (unless hw_lockless): a W1C clear comes wholly before or
 * after it. */
static void hw_update(struct ernic_model *m, uint32_t off, uint32_t keep,
		      uint32_t val)
{
	const struct ernic_reg_desc *d = reg_desc(off, m->c_num_qp, NULL);

	if (!d)
		return;
	if (hw_lockless(m, d, off, keep)) {
		reg_set(m, off, ((reg_get(m, off) & keep) | val) & d->mask);
		return;
	}
	pthread_mutex_lock(&m->lock);
	reg_set(m, off, ((reg_get(m, off) & keep) | val) & d->mask);
	if (m->hw_hook)
		m->hw_hook(m->hw_hook_arg, off);
	irq_update(m, off);
	pthread_mutex_unlock(&m->lock);
}

void ernic_model_hw_write(struct ernic_model *m, uint32_t off, uint32_t val)
{
	hw_update(m, off, 0, val);
}

void ernic_model_hw_set(struct ernic_model *m, uint32_t off, uint32_t bits)
{
	hw_update(m, off, UINT32_MAX, bits);
}

int ernic_model_wait_irq(struct ernic_model *m, int timeout_ms)
{
	struct timespec dl;
	int rc = 0, line;

	if (timeout_ms >= 0) {
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_sec += timeout_ms / 1000;
		dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&m->lock);
	while (!(line = irq_line(m)) && rc != ETIMEDOUT) {
		if (timeout_ms < 0)
			pthread_cond_wait(&m->irq_cond, &m->lock);
		else
			rc = pthread_cond_timedwait(&m->irq_cond, &m->lock,
						    &dl);
	}
	pthread_mutex_unlock(&m->lock);
	return line;
}

/* ---- Life cycle ---- */

/* Put every register instance the configuration has into reset. */
static void model_reset(struct ernic_model *m)
{
	const struct ernic_reg_desc *d;
	uint32_t i;

	memset(m->regs, 0, sizeof(m->regs));
	for (d = ernic_reg_table; d->name; d++) {
		uint32_t v = d->reset & d->mask;

		switch (d->scope) {
		case ERNIC_SCOPE_PDT:
			for (i = 0; i < ERNIC_PDT_ENTRIES; i++)
				m->regs[ERNIC_PDT(i, d->off) / 4] = v;
			break;
		case ERNIC_SCOPE_GLOBAL:
			m->regs[d->off / 4] = v;
			break;
		case ERNIC_SCOPE_QP:
			for (i = d->first_qp; i <= m->c_num_qp; i++)
				m->regs[ERNIC_QP(i, d->off) / 4] = v;
			break;
		}
	}
}

static int cond_init_monotonic(pthread_cond_t *c)
{
	pthread_condattr_t a;
	int rc;

	rc = pthread_condattr_init(&a);
	if (rc)
		return rc;
	rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	if (!rc)
		rc = pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
	return rc;
}

int model_mutex_init(pthread_mutex_t *mx)
{
	pthread_mutexattr_t a;
	int rc;

	rc = pthread_mutexattr_init(&a);
	if (rc)
		return rc;
	rc = pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	if (!rc)
		rc = pthread_mutex_init(mx, &a);
	pthread_mutexattr_destroy(&a);
	return rc;
}

struct ernic_model *ernic_model_create(const struct ernic_conf *conf)
{
	struct ernic_model *m;
	int rc;

	if (!conf || conf->c_num_qp < ERNIC_C_NUM_QP_MIN ||
	    conf->c_num_qp > ERNIC_C_NUM_QP_MAX) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	/* reg_desc's index, for this model's every register access */
	pthread_once(&idx_once, idx_build);
	m->c_num_qp = conf->c_num_qp;
	m->c_m_axi_addr_width = conf->c_m_axi_addr_width;
	m->c_max_wr_retry_data_buf_depth = conf->c_max_wr_retry_data_buf_depth;
	m->c_en_wr_retry_data_buf = conf->c_en_wr_retry_data_buf;
	m->c_en_initiator_lite = conf->c_en_initiator_lite;
	m->c_en_debug_ports = conf->c_en_debug_ports;

	rc = model_mutex_init(&m->lock);
	if (rc)
		goto err_free;
	rc = cond_init_monotonic(&m->irq_cond);
	if (rc)
		goto err_mutex;
	m->irq_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (m->irq_efd < 0) {
		rc = errno;
		goto err_cond;
	}
	m->irq_armed = true;
	rc = ernic_model_mem_init(m);
	if (rc)
		goto err_efd;
	model_reset(m);
	return m;

err_efd:
	close(m->irq_efd);
err_cond:
	pthread_cond_destroy(&m->irq_cond);
err_mutex:
	pthread_mutex_destroy(&m->lock);
err_free:
	free(m);
	errno = rc;
	return NULL;
}

void ernic_model_stop(struct ernic_model *m)
{
	eng_destroy(m->eng);
}

void ernic_model_destroy(struct ernic_model *m)
{
	if (!m)
		return;
	eng_destroy(m->eng);	/* stops the thread before memory goes */
	ernic_model_mem_fini(m);
	close(m->irq_efd);
	pthread_cond_destroy(&m->irq_cond);
	pthread_mutex_destroy(&m->lock);
	free(m);
}
