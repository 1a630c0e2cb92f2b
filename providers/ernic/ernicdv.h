/* SPDX-License-Identifier: MIT */
/*
 * ernicdv: direct-verbs extensions of the ERNIC provider. Link with
 * -lernic (pkg-config libernic; uninstalled: build/lib/libernic.so).
 */
#ifndef ERNICDV_H
#define ERNICDV_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* True when the device is driven by this provider. */
bool ernicdv_is_ernic_device(struct ibv_device *device);

/*
 * Read / write one 32-bit ERNIC register (PG332 Table 2-7 offset) of an
 * open device: for register dumps, diagnostics and tests. Writing can
 * break the device's state; the provider does not guard against it.
 * Return 0, EINVAL (not an ERNIC context, offset unaligned or outside the
 * 256 KB window) or ENODEV.
 */
int ernicdv_reg_read(struct ibv_context *context, uint32_t offset,
		     uint32_t *value);
int ernicdv_reg_write(struct ibv_context *context, uint32_t offset,
		      uint32_t value);

/*
 * A completion channel for the CQs of an ERNIC context. libibverbs 34-55
 * asks the kernel for channels (ibv_create_comp_channel() fails here:
 * there is no kernel driver); this one is the same struct, so it works
 * with ibv_create_cq(), ibv_get_cq_event(), ibv_ack_cq_events() and
 * ibv_destroy_comp_channel(), and its fd can be polled for POLLIN.
 * Returns NULL with errno set (EINVAL: not an ERNIC context).
 */
struct ibv_comp_channel *ernicdv_create_comp_channel(struct ibv_context *context);

/*
 * ibv_get_cq_event() with a timeout in milliseconds (-1: none): 0 with
 * *cq and *cq_context set, or -1 with errno ETIMEDOUT, EINVAL (not an
 * ERNIC channel) or the poll/recv error. Acknowledge with
 * ibv_ack_cq_events() as usual.
 */
int ernicdv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
			 void **cq_context, int timeout_ms);

/*
 * The PG332 Table 2-4 code of the QP's last fatal error (the incoming
 * packet error status queue entry that came with IBV_EVENT_QP_FATAL),
 * or 0 if none since the QP was last reset. Returns 0 or EINVAL.
 */
int ernicdv_query_qp_fatal(struct ibv_qp *qp, uint32_t *code);

/*
 * The state of the QP numbered qp_num on context's device, as
 * ibv_query_qp() would give it (IBV_QPS_ERR once a request completed in
 * error or the IP stopped the QP), without touching a struct ibv_qp: for
 * a connection manager watching connections whose QPs the application
 * may destroy at any time. Returns 0, ENOENT (no such QP, or not any
 * more) or EINVAL (not an ERNIC context).
 */
int ernicdv_query_qp_state(struct ibv_context *context, uint32_t qp_num,
			   enum ibv_qp_state *state);

enum ernicdv_sync_dir {
	ERNICDV_SYNC_FOR_CPU,		/* before reading what the peer wrote */
	ERNICDV_SYNC_FOR_DEVICE,	/* after writing what the IP will read */
};

/*
 * Non-coherent DMA (ernic.conf coherent=0): make [addr, addr+len) of
 * the MR agree between the CPU's caches and DDR. The provider does this
 * itself for every buffer a work request names; memory the peer writes
 * with RDMA WRITE is named by none, so an application reads it only
 * after ERNICDV_SYNC_FOR_CPU. A no-op on coherent devices. Returns 0, or
 * EINVAL (not an ERNIC MR, range outside it).
 */
int ernicdv_sync_mr(struct ibv_mr *mr, void *addr, size_t len,
		    enum ernicdv_sync_dir dir);

/*
 * MADs on QP1, for a connection manager (docs/cm.md). QP1 belongs to the
 * device: an agent registers for one management class (one agent per
 * class and device: EBUSY) and receives that class's MADs, each with its
 * sender, from a socket it can poll (ernicdv_mad_agent_fd, POLLIN).
 * MADs are 256 bytes, sent as RoCEv2 UD SEND_ONLY with the GSI Q_Key.
 */
struct ernicdv_mad_addr {
	uint64_t comp_mask;	/* 0 */
	uint8_t gid[16];	/* the peer: ::ffff:a.b.c.d or IPv6 */
	uint8_t mac[6];		/* its MAC; all zero: looked up on send */
	uint16_t udp_sport;	/* received: the sender's UDP source port */
	uint32_t qpn;		/* send: destination QP (1); received: the
				 * sender's QP (DETH) */
	uint16_t pkey;		/* BTH P_Key; 0 on send: 0xFFFF */
	uint8_t hop_limit;	/* 0 on send: 64 */
	uint8_t traffic_class;
};
struct ernicdv_mad_agent;

/* NULL with errno EINVAL (not an ERNIC context), EBUSY, ENODEV. */
struct ernicdv_mad_agent *ernicdv_mad_agent_create(struct ibv_context *context,
						   uint8_t mgmt_class);
int ernicdv_mad_agent_destroy(struct ernicdv_mad_agent *agent);
int ernicdv_mad_agent_fd(struct ernicdv_mad_agent *agent);
/* Queue one MAD (len 256) to `to`. 0, EAGAIN (QP1's send queue is full:
 * retry), EINVAL, EHOSTUNREACH (no MAC for the peer), EIO (device gone). */
int ernicdv_mad_send(struct ernicdv_mad_agent *agent,
		     const struct ernicdv_mad_addr *to, const void *mad,
		     size_t len);
/* Take the next MAD without blocking: 0, or EAGAIN when none is queued. */
int ernicdv_mad_recv(struct ernicdv_mad_agent *agent,
		     struct ernicdv_mad_addr *from, void *mad, size_t len);

/*
 * A device shared by several processes (ernic(7), "SHARING A DEVICE")
 * has one QP1: each CM MAD must reach the process its connection belongs
 * to. A CM agent asks which top 8 bits the communication IDs it chooses
 * must carry (comm_id_tag: the MADs of those connections come back to
 * this process by them), and claims the service IDs it listens to (REQs
 * for them come to this process). inlen: sizeof the caller's struct;
 * bytes past what this library knows must be 0.
 */
struct ernicdv_mad_agent_attr {
	uint64_t comp_mask;	/* out: 0 */
	uint32_t comm_id_tag;	/* 1..255 */
	uint32_t reserved;
};

/* 0 or EINVAL. */
int ernicdv_mad_agent_query(struct ernicdv_mad_agent *agent,
			    struct ernicdv_mad_agent_attr *attr,
			    size_t inlen);
/* A CM agent only (EINVAL otherwise). 0, EADDRINUSE (another process on
 * the device claims it), ENOSPC (the device's table is full), ENOMEM.
 * Claims count: release as many as were made; destroying the agent
 * releases the rest, and a process's death all of its own. */
int ernicdv_mad_claim_service(struct ernicdv_mad_agent *agent,
			      uint64_t service_id);
/* 0, or ENOENT (this agent holds no claim on it). */
int ernicdv_mad_release_service(struct ernicdv_mad_agent *agent,
				uint64_t service_id);

/*
 * Hand QP's doorbells to user logic on the IP's HW handshake ports
 * (PG332 ch.6 "Enabling QP HW Offload", QPCONFi[4] reset): the user
 * logic writes WQEs into the SQ ring itself and rings SQ PI on
 * i_qp_sq_pidb_*, sees completions as resp_hndler_o_send_cq_db_cnt and
 * incoming SEND packets as rx_pkt_hndler_o_rq_db_data, and returns RQ
 * elements on i_qp_rq_cldb_*. The rings start at slot 0. One way: the
 * QP stays the user logic's until destroyed. ibv_post_send(),
 * ibv_post_recv() and wr_start refuse it (EPERM) and ibv_poll_cq()
 * reports none of its completions. inlen: sizeof the caller's struct;
 * bytes past what this library knows must be 0. man ernicdv(3).
 */
enum ernicdv_qp_hw_offload_flags {
	/* Do not ring the QP's doorbells through CON_IO_CONF afterwards */
	ERNICDV_QP_HW_OFFLOAD_NO_CON_IO = 1 << 0,
};

struct ernicdv_qp_hw_offload_attr {
	uint64_t comp_mask;	/* in: 0 */
	uint32_t flags;		/* in: enum ernicdv_qp_hw_offload_flags */
	uint32_t qp_num;	/* out: the QP's ports address it as * 4 */
	uint32_t sq_depth;	/* out: ring slots (a ring holds depth - 1) */
	uint32_t rq_depth;	/* out: RQ elements */
	uint32_t rq_buf_size;	/* out: bytes per RQ element */
	uint32_t reserved;
	uint64_t sq_bus;	/* out: SQBAi, CQBAi, RQBAi as the IP sees */
	uint64_t cq_bus;
	uint64_t rq_bus;
};

/* 0; EINVAL (not an ERNIC RC QP, bad attr, not RTR or RTS, in error);
 * EBUSY (traffic outstanding: posted and unpolled sends or receives,
 * received data unread; or CON_IO_CONF not ready); EALREADY;
 * EOPNOTSUPP (a software device, unless ERNIC_MODEL_HNDSHK=1: a test
 * plays the user logic on the model's ports); EIO. */
int ernicdv_qp_hw_offload(struct ibv_qp *qp,
			  struct ernicdv_qp_hw_offload_attr *attr,
			  size_t inlen);

#ifdef __cplusplus
}
#endif

#endif
