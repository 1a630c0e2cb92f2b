// SPDX-License-Identifier: MIT
/*
 * ERNIC model register file over PG332 v3.1 Table 2-7 (ernic_regtab.c):
 * offset decoding, and the software/hardware access rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "axi_trace.h"
#include "ernic_conf.h"
#include "model_priv.h"

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

	axi_trace_reg(m, off, val);
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
		/* Clearing the CNP scheduling interrupt clears the words
		 * that said which QPs (engine_cnp.c). */
		if (off == ERNIC_INTSTS && (val & ERNIC_INT_CNP))
			for (uint32_t n = 1; n <= ERNIC_CNPSCHD_WORDS; n++)
				reg_set(m, ERNIC_CNPSCHDSTSREG(n), 0);
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
 * register (irq_update), a W1C word, nor a CNPSCHDSTSn word (cleared by
 * software's INTSTS write).
 */
static bool hw_lockless(struct ernic_model *m, const struct ernic_reg_desc *d,
			uint32_t off, uint32_t keep)
{
	if (__atomic_load_n(&m->hw_hook, __ATOMIC_ACQUIRE))
		return false;
	if (d->access == ERNIC_REG_RO)
		return off < ERNIC_CNPSCHDSTSREG(1) ||
		       off > ERNIC_CNPSCHDSTSREG(ERNIC_CNPSCHD_WORDS);
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

/*
 * The model's memory, zeroed as calloc's. With regs_fd >= 0 the register
 * file (regs, the struct's first ERNIC_REG_SPACE_SIZE bytes) is that
 * file's pages, shared: a tool reads the registers of a software device
 * there while the process runs (ernicctl dump and stats), as it reads a
 * board's through its UIO map. The rest stays private.
 */
_Static_assert(offsetof(struct ernic_model, regs) == 0 &&
		      ERNIC_REG_SPACE_SIZE % 4096 == 0,
	      "the register file is whole pages at the start");

static struct ernic_model *model_alloc(int regs_fd)
{
	void *p = mmap(NULL, sizeof(struct ernic_model),
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	int e;

	if (p == MAP_FAILED)
		return NULL;
	if (regs_fd < 0)
		return p;
	if (!ftruncate(regs_fd, ERNIC_REG_SPACE_SIZE) &&
	    mmap(p, ERNIC_REG_SPACE_SIZE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, regs_fd, 0) != MAP_FAILED)
		return p;
	e = errno;
	munmap(p, sizeof(struct ernic_model));
	errno = e;
	return NULL;
}

struct ernic_model *ernic_model_create(const struct ernic_conf *conf)
{
	return ernic_model_create_shared(conf, -1);
}

struct ernic_model *ernic_model_create_shared(const struct ernic_conf *conf,
					      int regs_fd)
{
	struct ernic_model *m;
	int rc;

	if (!conf || conf->c_num_qp < ERNIC_C_NUM_QP_MIN ||
	    conf->c_num_qp > ERNIC_C_NUM_QP_MAX) {
		errno = EINVAL;
		return NULL;
	}
	m = model_alloc(regs_fd);
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
	axi_trace_open(m, conf);
	return m;

err_efd:
	close(m->irq_efd);
err_cond:
	pthread_cond_destroy(&m->irq_cond);
err_mutex:
	pthread_mutex_destroy(&m->lock);
err_free:
	munmap(m, sizeof(*m));
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
	axi_trace_close(m);
	ernic_model_mem_fini(m);
	close(m->irq_efd);
	pthread_cond_destroy(&m->irq_cond);
	pthread_mutex_destroy(&m->lock);
	munmap(m, sizeof(*m));
}
