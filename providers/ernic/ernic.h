/* SPDX-License-Identifier: MIT */
/*
 * Provider core: libibverbs objects on top of ERNIC registers and DDR
 * queues. Talks to hardware only through the device access layer.
 */
#ifndef ERNIC_H
#define ERNIC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "ernic-pabi.h"
#include "ernic_access.h"
#include "ernic_conf.h"
#include "ernic_hw.h"

#define ERNIC_MAX_QP_WR 4095		/* QDEPTH fields are 16 bits */
#define ERNIC_MAX_SGE 1			/* a WQE has one LADDR */
#define ERNIC_MAX_INLINE ERNIC_WQE_SDATA_SIZE
#define ERNIC_MAX_CQE 65535
#define ERNIC_MAX_PD (1u << 16)
#define ERNIC_MAX_RD_ATOM 16		/* outstanding reads (PG332 ch.2) */
#define ERNIC_RQ_ELEM_SIZE 4096u	/* one element holds a PMTU-4096 packet */
#define ERNIC_QP1_DEPTH 32u
#define ERNIC_QP1_RQ_ELEM_SIZE 256u	/* a MAD is 256 bytes */
/* Doorbell pool: one 64-byte line per QP, CQ doorbell then RQ doorbell. */
#define ERNIC_DB_STRIDE 64u
#define ERNIC_DB_RQ_OFF 32u
/* PG332 Table 3-2 error buffer: 256 entries of 256 bytes. */
#define ERNIC_ERRBUF_NUM 256u
#define ERNIC_ERRBUF_ENTRY 256u
#define ERNIC_IPKTERRQ_NUM 512u
#define ERNIC_RESPERR_DEPTH 256u
#define ERNIC_RESPERR_ENTRY 64u
#define ERNIC_DATBUF_ENTRY 4096u	/* "Each RDMA data buffer is 4 KB" */
/* XRNICADCONF base count width = CLOG2(4.096 * f_MHz); 200 MHz AXI clock. */
#define ERNIC_BASE_COUNT_WIDTH_200MHZ 10u
#define ERNIC_PD_NONE 0u		/* PD numbers start at 1 */

/* One physical ERNIC, shared by every context of this process. */
struct ernic_dev {
	struct verbs_device vdev;
	char conf_path[IBV_SYSFS_PATH_MAX + 32];

	pthread_mutex_t lock;		/* everything below */
	int open_count;
	struct ernic_conf conf;
	struct ernic_access *acc;
	struct ernic_dma errbuf, ipkterrq, resperr, datbuf, dbpool;
	struct ernic_dma qp1_sq, qp1_cq, qp1_rq;
	uint8_t qp_used[ERNIC_C_NUM_QP_MAX + 1];
	uint32_t pd_next;
	uint8_t pdt_gen[ERNIC_PDT_ENTRIES];	/* last key generation per slot */
	bool pdt_used[ERNIC_PDT_ENTRIES];
	uint32_t pdt_cursor;			/* round-robin slot search */
};

struct ernic_context {
	struct verbs_context ibv_ctx;
	struct ernic_dev *dev;
	int async_pipe[2];		/* [1] carries ib_uverbs_async_event_desc */
};

struct ernic_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
	int refcnt;			/* MRs and QPs using it, under dev->lock */
};

struct ernic_mr {
	struct verbs_mr vmr;
	uint32_t slot;
	uint64_t bus;
};

struct ernic_cq {
	struct verbs_cq vcq;
	int nqp;			/* QPs using it, under dev->lock */
};

struct ernic_qp {
	struct verbs_qp vqp;
	uint32_t idx;			/* ERNIC QP index = QP number */
	struct ernic_dma sq, cq, rq;
	uint32_t sq_depth, rq_depth;
	bool sq_sig_all;
	struct ibv_qp_cap cap;
	struct ibv_qp_attr attr;	/* shadow of what modify_qp set */
	uint32_t qpconf;		/* last QPCONF written */
};

static inline struct ernic_context *to_ectx(struct ibv_context *c)
{
	return (struct ernic_context *)((char *)c -
					offsetof(struct ernic_context,
						 ibv_ctx.context));
}

static inline struct ernic_dev *to_edev(struct ibv_device *d)
{
	return (struct ernic_dev *)d;
}

static inline struct ernic_pd *to_epd(struct ibv_pd *p)
{
	return (struct ernic_pd *)p;
}

static inline struct ernic_mr *to_emr(struct verbs_mr *m)
{
	return (struct ernic_mr *)m;
}

static inline struct ernic_cq *to_ecq(struct ibv_cq *c)
{
	return (struct ernic_cq *)c;
}

static inline struct ernic_qp *to_eqp(struct ibv_qp *q)
{
	return (struct ernic_qp *)q;
}

static inline struct ernic_dev *ctx_dev(struct ibv_context *c)
{
	return to_ectx(c)->dev;
}

extern const struct verbs_device_ops ernic_dev_ops;

/* ernic_global.c: PG332 ch.6 "ERNIC Global Configuration", "QP1 Creation" */
int ernic_dev_start(struct ernic_dev *dev, char *err, size_t errlen);
void ernic_dev_stop(struct ernic_dev *dev);
/* Free a DMA block if allocated and clear its descriptor. */
void ernic_dma_put(struct ernic_dev *dev, struct ernic_dma *dma);

/* ernic_query.c */
int ernic_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);
int ernic_query_port(struct ibv_context *context, uint8_t port,
		     struct ibv_port_attr *attr);
/* Largest path MTU the netdev carries; IBV_MTU_256 when it is down. */
enum ibv_mtu ernic_active_mtu(struct ernic_dev *dev);

/* ernic_mr.c: PDs and PG332 "Memory Registration" */
struct ibv_pd *ernic_alloc_pd(struct ibv_context *context);
int ernic_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *ernic_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			    uint64_t hca_va, int access);
int ernic_dereg_mr(struct verbs_mr *vmr);

/* ernic_cq.c */
struct ibv_cq *ernic_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
int ernic_destroy_cq(struct ibv_cq *cq);

/* ernic_qp.c: PG332 "RC QP Creation", "QP Deletion" */
struct ibv_qp *ernic_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *ernic_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr);
int ernic_destroy_qp(struct ibv_qp *qp);
int ernic_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		   struct ibv_qp_init_attr *init_attr);

/* ernic_modify_qp.c: the QP state machine */
int ernic_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
/* QP Deletion steps 1-5, without freeing memory. Caller holds dev->lock. */
void ernic_qp_hw_reset(struct ernic_dev *dev, uint32_t idx);

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

/* Provider log: stderr, only when ERNIC_DEBUG is set or for errors. */
void ernic_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
