/* SPDX-License-Identifier: MIT */
/*
 * Doorbell words in DMA memory (PG332 "Doorbell" slots of the pool,
 * docs/datapath.md): where QP i's slots are, and how the words the IP
 * writes (CQ head, RQ and IMMQ write pointers) and the words software
 * writes for it are read and written. Included by ernic.h.
 */
#ifndef ERNIC_DB_H
#define ERNIC_DB_H

#include "udma_barrier.h"

/* Doorbell slot addresses inside the pool, for QP index i. */
static inline uint64_t ernic_cq_db_bus(struct ernic_dev *dev, uint32_t i)
{
	return dev->dbpool.bus + (uint64_t)(i - 1) * ERNIC_DB_STRIDE;
}

static inline uint64_t ernic_rq_db_bus(struct ernic_dev *dev, uint32_t i)
{
	return ernic_cq_db_bus(dev, i) + ERNIC_DB_RQ_OFF;
}

static inline volatile uint32_t *ernic_cq_db_va(struct ernic_dev *dev,
						uint32_t i)
{
	return (volatile uint32_t *)((char *)dev->dbpool.va +
				     (size_t)(i - 1) * ERNIC_DB_STRIDE);
}

static inline volatile uint32_t *ernic_rq_db_va(struct ernic_dev *dev,
						uint32_t i)
{
	return (volatile uint32_t *)((char *)ernic_cq_db_va(dev, i) +
				     ERNIC_DB_RQ_OFF);
}

/* Doorbell words in the pool. What the IP writes is read with acquire
 * for a DMA master (udma_load_acquire32), so what it wrote before them
 * (CQEs, RQ elements, RXLEN, IMMQ entries) is visible; on a non-coherent
 * bus the word is invalidated first. What software writes for the IP is
 * released, and cleaned after. */
static inline uint32_t ernic_db_word(const volatile uint32_t *p)
{
	return udma_load_acquire32(p);
}

static inline uint32_t ernic_db_load(struct ernic_access *acc,
				     const volatile uint32_t *p)
{
	ernic_dma_sync(acc, (const void *)p, sizeof(*p), ERNIC_DMA_FROM_DEVICE);
	return ernic_db_word(p);
}

/* The IP's RQ and IMMQ write pointers of QP qpn in one word:
 * RQ | IMMQ << 32; sync: invalidated first (a non-coherent bus). */
static inline uint64_t ernic_rq_wptrs_sync(struct ernic_dev *dev,
					   uint32_t qpn, bool sync)
{
	volatile uint32_t *db = ernic_rq_db_va(dev, qpn);

	static_assert(ERNIC_RQDB_IMMQ_WPTR == ERNIC_RQDB_WPTR + 4,
		      "one sync and one load cover both words");
	static_assert(ERNIC_DB_STRIDE % 8 == 0 &&
			      (ERNIC_DB_RQ_OFF + ERNIC_RQDB_WPTR) % 8 == 0,
		      "both words in one aligned 8 bytes");
	if (sync)
		ernic_dma_sync(dev->acc, (const void *)&db[ERNIC_RQDB_WPTR / 4],
			       8, ERNIC_DMA_FROM_DEVICE);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* both at once, RQ in the low half: one acquire load */
	return udma_load_acquire64(
		(const volatile uint64_t *)&db[ERNIC_RQDB_WPTR / 4]);
#else
	/* the RQ pointer first (acquire: the IMMQ pointer is read after) */
	uint64_t rq = ernic_db_word(&db[ERNIC_RQDB_WPTR / 4]);

	return rq | (uint64_t)ernic_db_word(&db[ERNIC_RQDB_IMMQ_WPTR / 4]) << 32;
#endif
}

static inline uint64_t ernic_rq_wptrs(struct ernic_dev *dev, uint32_t qpn)
{
	return ernic_rq_wptrs_sync(dev, qpn, true);
}

/* ernic_db_load for a word of qp's queues: the QP knows whether the bus
 * is coherent (one load, not three). */
static inline uint32_t ernic_qp_db_load(struct ernic_dev *dev,
					const struct ernic_qp *qp,
					const volatile uint32_t *p)
{
	return qp->noncoherent ? ernic_db_load(dev->acc, p) : ernic_db_word(p);
}

/* ernic_db_word's counterpart: v published (release), no cache care. */
static inline void ernic_db_set(volatile uint32_t *p, uint32_t v)
{
	udma_store_release32(p, v);
}

static inline void ernic_db_store(struct ernic_access *acc,
				  volatile uint32_t *p, uint32_t v)
{
	ernic_db_set(p, v);
	ernic_dma_sync(acc, (const void *)p, sizeof(*p), ERNIC_DMA_TO_DEVICE);
}

/* ernic_db_store for a word of qp's queues (see ernic_qp_db_load). */
static inline void ernic_qp_db_store(struct ernic_dev *dev,
				     const struct ernic_qp *qp,
				     volatile uint32_t *p, uint32_t v)
{
	if (qp->noncoherent)
		ernic_db_store(dev->acc, p, v);
	else
		ernic_db_set(p, v);
}

#endif
