// SPDX-License-Identifier: MIT
/*
 * Bringing the IP up and down: PG332 ch.6 "ERNIC Global Configuration"
 * followed by "QP1 Creation", in the order the guide gives, and the
 * reverse on the last close. Called with dev->lock held. A client of the
 * device's broker (ernic_broker.h) finds the IP configured and leaves it
 * so.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "ernic.h"
#include "ernic_broker.h"

static int dma_get(struct ernic_dev *dev, struct ernic_dma *dma, size_t len,
		   size_t align, const char *what, char *err, size_t errlen)
{
	int ret = dev->acc->ops->dma_alloc(dev->acc, len, align, dma);

	if (ret) {
		snprintf(err, errlen, "cannot allocate %zu bytes of DMA memory for the %s: %s",
			 len, what, strerror(ret));
		return ret;
	}
	/* The IP masters only C_M_AXI_ADDR_WIDTH address bits (Table 2-6). */
	if (dev->conf.c_m_axi_addr_width == 32 &&
	    (dma->bus >> 32 || (dma->bus + len - 1) >> 32)) {
		snprintf(err, errlen, "DMA memory for the %s lies above 4 GiB but C_M_AXI_ADDR_WIDTH is 32",
			 what);
		dev->acc->ops->dma_free(dev->acc, dma);
		memset(dma, 0, sizeof(*dma));
		return ERANGE;
	}
	return 0;
}

void ernic_dma_put(struct ernic_dev *dev, struct ernic_dma *dma)
{
	if (dma->va)
		dev->acc->ops->dma_free(dev->acc, dma);
	memset(dma, 0, sizeof(*dma));
}

static void free_all(struct ernic_dev *dev)
{
	ernic_mad_stop(dev);
	ernic_dma_put(dev, &dev->qp1_rq);
	ernic_dma_put(dev, &dev->qp1_cq);
	ernic_dma_put(dev, &dev->qp1_sq);
	ernic_dma_put(dev, &dev->dbpool);
	ernic_dma_put(dev, &dev->datbuf);
	ernic_dma_put(dev, &dev->resperr);
	ernic_dma_put(dev, &dev->ipkterrq);
	ernic_dma_put(dev, &dev->errbuf);
}

/* Local MAC and IP; both must be set before XRNICCONF[0] (Table 2-7). */
static void write_local_addr(struct ernic_dev *dev)
{
	struct ernic_access *acc = dev->acc;
	uint32_t lsb, msb, ip[4];

	ernic_mac_to_regs(dev->conf.mac, &lsb, &msb);
	ernic_wr(acc, ERNIC_MACXADDLSB, lsb);
	ernic_wr(acc, ERNIC_MACXADDMSB, msb);
	ernic_ip_to_regs(dev->conf.family == AF_INET6, dev->conf.addr, ip);
	if (dev->conf.family == AF_INET6) {
		for (int w = 0; w < 4; w++)
			ernic_wr(acc, ERNIC_IPV6XADD1 + 4 * w, ip[w]);
	} else {
		ernic_wr(acc, ERNIC_IPV4XADD, ip[0]);
	}
}

static int global_config(struct ernic_dev *dev, char *err, size_t errlen)
{
	struct ernic_access *acc = dev->acc;
	const struct ernic_conf *c = &dev->conf;
	int ret;

	/* Error buffers: packets failing validation, with their syndrome. */
	ret = dma_get(dev, &dev->errbuf, ERNIC_ERRBUF_NUM * ERNIC_ERRBUF_ENTRY,
		      ERNIC_ERRBUF_ENTRY, "error buffer", err, errlen);
	if (ret)
		return ret;
	ernic_wr64(acc, ERNIC_ERRBUFBA, ERNIC_ERRBUFBAMSB, dev->errbuf.bus);
	ernic_wr(acc, ERNIC_ERRBUFSZ,
		 ERNIC_FIELD_PREP(ERNIC_ERRBUFSZ_NUM, ERNIC_ERRBUF_NUM) |
			 ERNIC_FIELD_PREP(ERNIC_ERRBUFSZ_SIZE, ERNIC_ERRBUF_ENTRY));
	/* Count from what the IP writes next (it keeps the pointer across
	 * a reconfiguration: an earlier user's entries are not ours). */
	dev->errbuf_rp = ERNIC_FIELD_GET(ERNIC_ERRBUFWPTR_WPTR,
					 ernic_rd(acc, ERNIC_ERRBUFWPTR)) %
			 ERNIC_ERRBUF_NUM;

	/* Incoming packet error status queue: how software learns of FATAL. */
	ret = dma_get(dev, &dev->ipkterrq,
		      ERNIC_IPKTERRQ_NUM * ERNIC_ERRSTS_ENTRY_SIZE,
		      ERNIC_ERRSTS_ENTRY_SIZE, "incoming packet error queue",
		      err, errlen);
	if (ret)
		return ret;
	ernic_wr64(acc, ERNIC_IPKTERRQBA, ERNIC_IPKTERRQBAMSB, dev->ipkterrq.bus);
	ernic_wr(acc, ERNIC_IPKTERRQSZ,
		 ERNIC_FIELD_PREP(ERNIC_IPKTERRQSZ_NUM, ERNIC_IPKTERRQ_NUM));

	ret = dma_get(dev, &dev->resperr,
		      ERNIC_RESPERR_DEPTH * ERNIC_RESPERR_ENTRY,
		      ERNIC_RESPERR_ENTRY, "response error buffer", err, errlen);
	if (ret)
		return ret;
	ernic_wr64(acc, ERNIC_RESPERRPKTBA, ERNIC_RESPERRPKTBAMSB,
		   dev->resperr.bus);
	ernic_wr(acc, ERNIC_RESPERRSZ,
		 ERNIC_FIELD_PREP(ERNIC_RESPERRSZ_DEPTH, ERNIC_RESPERR_DEPTH) |
			 ERNIC_FIELD_PREP(ERNIC_RESPERRSZ_SIZE,
					  ERNIC_RESPERR_ENTRY));

	/* RDMA WRITE retry data buffers (Table 2-6 C_EN_WR_RETRY_DATA_BUF). */
	if (c->c_en_wr_retry_data_buf) {
		ret = dma_get(dev, &dev->datbuf,
			      (size_t)c->c_max_wr_retry_data_buf_depth *
				      ERNIC_DATBUF_ENTRY,
			      ERNIC_DATBUF_ENTRY, "write retry buffers", err,
			      errlen);
		if (ret)
			return ret;
		ernic_wr64(acc, ERNIC_DATBUFBA, ERNIC_DATBUFBAMSB,
			   dev->datbuf.bus);
		ernic_wr(acc, ERNIC_DATBUFSZ,
			 ERNIC_FIELD_PREP(ERNIC_DATBUFSZ_NUM,
					  c->c_max_wr_retry_data_buf_depth) |
				 ERNIC_FIELD_PREP(ERNIC_DATBUFSZ_SIZE,
						  ERNIC_DATBUF_ENTRY));
	}

	/* Only the causes this provider services; per-QP CQ/RQ interrupts
	 * stay masked in QPCONF until a CQ is armed. A dropped packet's
	 * entry in the error buffer is counted by its syndrome. */
	ernic_wr(acc, ERNIC_INTEN,
		 ERNIC_INT_WQE_COMPLETION | ERNIC_INT_RQ_PKT_RX |
			 ERNIC_INT_ILLEGAL_OPCODE | ERNIC_INT_FATAL |
			 ERNIC_INT_MAD_RX | ERNIC_INT_PKT_VALID_ERR |
			 ERNIC_INT_CNP);

	/* Doorbell pool the IP writes CQ heads and RQ write pointers into. */
	ret = dma_get(dev, &dev->dbpool, (size_t)c->c_num_qp * ERNIC_DB_STRIDE,
		      ERNIC_DB_STRIDE, "doorbell pool", err, errlen);
	if (ret)
		return ret;

	write_local_addr(dev);
	ernic_wr(acc, ERNIC_XRNICADCONF,
		 ERNIC_FIELD_PREP(ERNIC_XRNICADCONF_BASE_COUNT_WIDTH,
				  ERNIC_BASE_COUNT_WIDTH_200MHZ));
	ernic_wr(acc, ERNIC_XRNICCONF,
		 ERNIC_XRNICCONF_EN | ERNIC_XRNICCONF_ERRBUF_EN |
			 ERNIC_FIELD_PREP(ERNIC_XRNICCONF_TX_ACK_GEN,
					  ERNIC_ACK_ON_REQ_OR_TIMEOUT) |
			 ERNIC_FIELD_PREP(ERNIC_XRNICCONF_NUM_QP, c->c_num_qp) |
			 ERNIC_FIELD_PREP(ERNIC_XRNICCONF_UDP_SPORT,
					  c->udp_sport));
	return 0;
}

static int qp1_create(struct ernic_dev *dev, char *err, size_t errlen)
{
	struct ernic_access *acc = dev->acc;
	const uint32_t d = ERNIC_QP1_DEPTH;
	int ret;

	ret = dma_get(dev, &dev->qp1_rq,
		      ernic_rq_block_size(d, ERNIC_QP1_BUF_SIZE),
		      ERNIC_RQ_ALIGN, "QP1 receive queue", err, errlen);
	if (!ret)
		ret = dma_get(dev, &dev->qp1_sq, d * ERNIC_WQE_SIZE,
			      ERNIC_SQ_ALIGN, "QP1 send queue", err, errlen);
	if (!ret)
		ret = dma_get(dev, &dev->qp1_cq, d * ERNIC_CQE_SIZE,
			      ERNIC_CQ_ALIGN, "QP1 completion queue", err,
			      errlen);
	if (ret)
		return ret;

	/* Step 1: queues, depths and the RQ buffer size. */
	ernic_wr64(acc, ERNIC_QP(ERNIC_QP1, ERNIC_RQBA),
		   ERNIC_QP(ERNIC_QP1, ERNIC_RQBAMSB), dev->qp1_rq.bus);
	ernic_wr64(acc, ERNIC_QP(ERNIC_QP1, ERNIC_SQBA),
		   ERNIC_QP(ERNIC_QP1, ERNIC_SQBAMSB), dev->qp1_sq.bus);
	ernic_wr(acc, ERNIC_QP(ERNIC_QP1, ERNIC_QDEPTH),
		 ERNIC_FIELD_PREP(ERNIC_QDEPTH_SQ, d) |
			 ERNIC_FIELD_PREP(ERNIC_QDEPTH_RQ, d));
	ernic_wr64(acc, ERNIC_QP(ERNIC_QP1, ERNIC_CQBA),
		   ERNIC_QP(ERNIC_QP1, ERNIC_CQBAMSB), dev->qp1_cq.bus);
	/* Step 2: doorbells from the pool. */
	ernic_wr64(acc, ERNIC_QP(ERNIC_QP1, ERNIC_CQDBADD),
		   ERNIC_QP(ERNIC_QP1, ERNIC_CQDBADDMSB),
		   ernic_cq_db_bus(dev, ERNIC_QP1));
	ernic_wr64(acc, ERNIC_QP(ERNIC_QP1, ERNIC_RQWPTRDBADD),
		   ERNIC_QP(ERNIC_QP1, ERNIC_RQWPTRDBADDMSB),
		   ernic_rq_db_bus(dev, ERNIC_QP1));
	/* Enable last, once everything it points at is in place. */
	ernic_wr(acc, ERNIC_QP(ERNIC_QP1, ERNIC_QPCONF),
		 ERNIC_QPCONF_QP_EN | ERNIC_QPCONF_HW_HANDSHAKE_DIS |
			 ERNIC_QPCONF_CQE_WRITE_EN |
			 (dev->conf.family == AF_INET6 ? ERNIC_QPCONF_IPV6 : 0) |
			 ERNIC_FIELD_PREP(ERNIC_QPCONF_PMTU, ERNIC_PMTU_256) |
			 ERNIC_FIELD_PREP(ERNIC_QPCONF_RQ_BUF_SIZE,
					  ERNIC_QP1_BUF_SIZE /
						  ERNIC_RQ_BUF_UNIT));
	dev->qp_used[ERNIC_QP1] = 1;
	return ernic_mad_start(dev, err, errlen);
}

/* Something answers at the window: a device that is gone (removed, its
 * link down) reads all-ones, which INTSTS never does on the IP. The
 * access layer opens such a window (a test device behind the driver may
 * read so there); the provider does not drive it. */
static int check_answers(struct ernic_dev *dev, char *err, size_t errlen)
{
	if (ernic_rd(dev->acc, ERNIC_INTSTS) != ERNIC_REG_GONE)
		return 0;
	snprintf(err, errlen, "registers read all-ones: the device is gone "
		 "(removed, or its link is down)");
	dev->acc->ops->close(dev->acc);
	dev->acc = NULL;
	return ENODEV;
}

/* A broker's client: the IP is configured and QP1 is the broker's; this
 * process only drives its own QPs. */
static int client_start(struct ernic_dev *dev, char *err, size_t errlen)
{
	struct ernic_access_share sh;
	int ret;

	/* A VFIO group is the broker's alone: its files come from it. */
	if (dev->conf.backend == ERNIC_BACKEND_VFIO) {
		ret = ernic_client_attach(dev, &sh, err, errlen);
		if (!ret)
			ret = ernic_access_attach(&dev->conf, &sh, &dev->acc,
						  err, errlen);
	} else {
		ret = ernic_access_open(&dev->conf, &dev->acc, err, errlen);
	}
	if (!ret)
		ret = check_answers(dev, err, errlen);
	if (ret)
		return ret;
	/* Its slot is what the broker knows it by: after the access (a
	 * slot is released through the IP), before the hello. */
	ret = ernic_share_start(dev, err, errlen);
	if (!ret) {
		ret = ernic_client_hello(dev, err, errlen);
		if (ret)
			ernic_share_stop(dev);
	}
	if (ret) {
		dev->acc->ops->close(dev->acc);
		dev->acc = NULL;
		return ret;
	}
	memset(dev->qp_used, 0, sizeof(dev->qp_used));
	ret = ernic_mad_start(dev, err, errlen);
	if (!ret)
		ret = ernic_events_start(dev, err, errlen);
	if (ret) {
		ernic_mad_stop(dev);
		ernic_share_stop(dev);
		dev->acc->ops->close(dev->acc);
		dev->acc = NULL;
	}
	return ret;
}

int ernic_dev_start(struct ernic_dev *dev, char *err, size_t errlen)
{
	int ret;

	ret = ernic_conf_load(dev->conf_path, &dev->conf, err, errlen);
	if (ret)
		return ret;
	atomic_store(&dev->lost, false);	/* a device back after a loss */
	/* A UIO or VFIO device with a broker is shared through it (its own
	 * start chose ERNIC_HW_BROKER); without one, this process has it
	 * alone. */
	if (dev->hw_role != ERNIC_HW_BROKER) {
		dev->hw_role = ERNIC_HW_ALONE;
		if (dev->conf.backend != ERNIC_BACKEND_SW) {
			ret = ernic_client_connect(dev, err, errlen);
			if (!ret)
				dev->hw_role = ERNIC_HW_CLIENT;
			else if (ret != ENOENT)
				return ret;
		}
	}
	dev->conf.hw_role = dev->hw_role;
	if (dev->hw_role == ERNIC_HW_CLIENT) {
		ret = client_start(dev, err, errlen);
		if (ret)
			ernic_client_close(dev);
		return ret;
	}
	ret = ernic_share_start(dev, err, errlen);
	if (ret)
		return ret;
	ret = ernic_access_open(&dev->conf, &dev->acc, err, errlen);
	if (!ret)
		ret = check_answers(dev, err, errlen);
	if (ret) {
		ernic_share_stop(dev);
		return ret;
	}

	memset(dev->qp_used, 0, sizeof(dev->qp_used));
	ret = global_config(dev, err, errlen);
	if (!ret) {
		ernic_qp_hw_reclaim(dev);
		ret = qp1_create(dev, err, errlen);
	}
	if (!ret)
		ret = ernic_events_start(dev, err, errlen);
	if (ret) {
		ernic_wr(dev->acc, ERNIC_XRNICCONF, 0);
		free_all(dev);
		dev->acc->ops->close(dev->acc);
		dev->acc = NULL;
		ernic_share_stop(dev);
	}
	return ret;
}

void ernic_dev_stop(struct ernic_dev *dev)
{
	ernic_events_stop(dev);
	if (dev->hw_role == ERNIC_HW_CLIENT) {
		ernic_mad_stop(dev);
		/* what we leave enabled in the IP, then our slot; our
		 * pages go back to the broker with our connection */
		ernic_share_stop(dev);
		memset(&dev->dbpool, 0, sizeof(dev->dbpool));
		dev->acc->ops->close(dev->acc);
		dev->acc = NULL;
		ernic_client_close(dev);
		return;
	}
	(void)ernic_qp_hw_reset(dev, ERNIC_QP1);
	ernic_wr(dev->acc, ERNIC_INTEN, 0);
	ernic_wr(dev->acc, ERNIC_XRNICCONF, 0);
	free_all(dev);
	dev->acc->ops->close(dev->acc);
	dev->acc = NULL;
	/* last: the QP numbers and keys go back once the IP is idle */
	ernic_share_stop(dev);
}
