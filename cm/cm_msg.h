/* SPDX-License-Identifier: MIT */
/*
 * IB CM messages (IBTA Vol 1 ch. 12.6, RoCE annex A17): the MAD header
 * and REQ, MRA, REJ, REP, RTU, DREQ, DREP as C structs, packed into and
 * read out of 256-byte MADs. Pure functions over byte buffers; a MAD
 * from the network is hostile and every field is range-checked before
 * it is used. What the fields mean for a connection is cm_conn.c's.
 */
#ifndef ERNIC_CM_MSG_H
#define ERNIC_CM_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibta.h"

/* Private data room per message (12.6.5 .. 12.6.11). */
#define CM_REQ_PDATA 92u
#define CM_MRA_PDATA 222u
#define CM_REJ_PDATA 148u
#define CM_REP_PDATA 196u
#define CM_RTU_PDATA 224u
#define CM_DREQ_PDATA 220u
#define CM_DREP_PDATA 224u
#define CM_REJ_ARI 72u
#define CM_MAX_PDATA CM_RTU_PDATA

/* 13.4.2: the common MAD header (what the CM uses of it). */
struct cm_mad_hdr {
	uint8_t method;		/* IB_MGMT_METHOD_SEND for every CM message */
	uint16_t status;
	uint64_t tid;		/* TransactionID */
	uint16_t attr_id;	/* enum ib_cm_attr */
	uint32_t attr_mod;
};

/* A path as the CM carries it (REQ primary path). */
struct cm_path {
	uint16_t local_lid, remote_lid;	/* 0xFFFF on RoCE (A16.4.4) */
	uint8_t local_gid[16], remote_gid[16];
	uint32_t flow_label;		/* 20 bits */
	uint8_t packet_rate;		/* 6 bits */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;			/* 4 bits */
	bool subnet_local;
	uint8_t local_ack_timeout;	/* 5 bits: 4.096 us * 2^n */
};

struct cm_req {
	uint32_t local_comm_id;
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn;		/* 24 bits */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t remote_cm_response_timeout;	/* 5 bits */
	uint8_t transport;		/* 2 bits: 0 RC */
	bool e2e_flow_control;
	uint32_t starting_psn;		/* 24 bits */
	uint8_t local_cm_response_timeout;	/* 5 bits */
	uint8_t retry_count;		/* 3 bits */
	uint16_t pkey;
	uint8_t path_mtu;		/* 4 bits, IBV_MTU_* numbering */
	uint8_t rnr_retry_count;	/* 3 bits */
	uint8_t max_cm_retries;		/* 4 bits */
	bool srq;
	struct cm_path primary;
	bool has_alternate;		/* an alternate path was given */
	uint8_t pdata[CM_REQ_PDATA];
};

struct cm_mra {
	uint32_t local_comm_id, remote_comm_id;
	uint8_t msg_mraed;		/* 0 REQ, 1 REP, 2 LAP */
	uint8_t service_timeout;	/* 5 bits */
	uint8_t pdata[CM_MRA_PDATA];
};

struct cm_rej {
	uint32_t local_comm_id, remote_comm_id;
	uint8_t msg_rejected;		/* 0 REQ, 1 REP, 2 other */
	uint8_t ari_len;		/* 7 bits, <= CM_REJ_ARI */
	uint16_t reason;		/* enum ib_cm_rej_reason */
	uint8_t ari[CM_REJ_ARI];
	uint8_t pdata[CM_REJ_PDATA];
};

struct cm_rep {
	uint32_t local_comm_id, remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn;		/* 24 bits */
	uint32_t starting_psn;		/* 24 bits */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;	/* 5 bits */
	uint8_t failover_accepted;	/* 2 bits */
	bool e2e_flow_control;
	uint8_t rnr_retry_count;	/* 3 bits */
	bool srq;
	uint64_t local_ca_guid;
	uint8_t pdata[CM_REP_PDATA];
};

/* RTU and DREP: the two IDs and private data; DREQ adds the QPN. */
struct cm_rtu {
	uint32_t local_comm_id, remote_comm_id;
	uint8_t pdata[CM_RTU_PDATA];
};

struct cm_dreq {
	uint32_t local_comm_id, remote_comm_id;
	uint32_t remote_qpn;		/* 24 bits */
	uint8_t pdata[CM_DREQ_PDATA];
};

struct cm_drep {
	uint32_t local_comm_id, remote_comm_id;
	uint8_t pdata[CM_DREP_PDATA];
};

/* 12.6.7.2 Table 109: REJ reasons the CM sends or tells apart. */
enum ib_cm_rej_reason {
	IB_CM_REJ_NO_QP = 1,
	IB_CM_REJ_NO_EEC = 2,
	IB_CM_REJ_NO_RESOURCES = 3,
	IB_CM_REJ_TIMEOUT = 4,
	IB_CM_REJ_UNSUPPORTED = 5,
	IB_CM_REJ_INVALID_COMM_ID = 6,
	IB_CM_REJ_INVALID_COMM_INSTANCE = 7,
	IB_CM_REJ_INVALID_SERVICE_ID = 8,
	IB_CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	IB_CM_REJ_STALE_CONN = 10,
	IB_CM_REJ_RDC_NOT_EXIST = 11,
	IB_CM_REJ_INVALID_GID = 12,
	IB_CM_REJ_INVALID_LID = 13,
	IB_CM_REJ_INVALID_SL = 14,
	IB_CM_REJ_INVALID_TRAFFIC_CLASS = 15,
	IB_CM_REJ_INVALID_HOP_LIMIT = 16,
	IB_CM_REJ_INVALID_PACKET_RATE = 17,
	IB_CM_REJ_INVALID_ALT_GID = 18,
	IB_CM_REJ_PORT_CM_REDIRECT = 24,
	IB_CM_REJ_INVALID_MTU = 26,
	IB_CM_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	IB_CM_REJ_CONSUMER_DEFINED = 28,
	IB_CM_REJ_INVALID_RNR_RETRY = 29,
	IB_CM_REJ_DUPLICATE_LOCAL_COMM_ID = 30,
	IB_CM_REJ_INVALID_CLASS_VERSION = 31,
	IB_CM_REJ_INVALID_FLOW_LABEL = 32,
	IB_CM_REJ_INVALID_ALT_FLOW_LABEL = 33,
};

/* MessageREJected / MessageMRAed values. */
enum { CM_MSG_REQ = 0, CM_MSG_REP = 1, CM_MSG_OTHER = 2 };

/*
 * Pack: the MAD header (base version 1, class CM, class version 2) and
 * one message into mad[IB_MAD_SIZE]; the attribute ID comes from the
 * message kind, hdr->attr_id is ignored. Fields wider than the wire's
 * are refused: EINVAL, mad untouched. 0 otherwise.
 */
int cm_pack_req(uint8_t *mad, const struct cm_mad_hdr *hdr,
		const struct cm_req *m);
int cm_pack_mra(uint8_t *mad, const struct cm_mad_hdr *hdr,
		const struct cm_mra *m);
int cm_pack_rej(uint8_t *mad, const struct cm_mad_hdr *hdr,
		const struct cm_rej *m);
int cm_pack_rep(uint8_t *mad, const struct cm_mad_hdr *hdr,
		const struct cm_rep *m);
int cm_pack_rtu(uint8_t *mad, const struct cm_mad_hdr *hdr,
		const struct cm_rtu *m);
int cm_pack_dreq(uint8_t *mad, const struct cm_mad_hdr *hdr,
		 const struct cm_dreq *m);
int cm_pack_drep(uint8_t *mad, const struct cm_mad_hdr *hdr,
		 const struct cm_drep *m);

/*
 * Read the header of a received MAD (len bytes). 0 for a CM MAD this
 * side understands (base version 1, class CM, class version 2, method
 * SEND, status 0): then hdr->attr_id says which cm_unpack_* applies.
 * EPROTO with hdr filled for a CM MAD of another class version or
 * method (the caller may answer it: 13.4.7); EINVAL for anything else.
 */
int cm_unpack_hdr(const uint8_t *mad, size_t len, struct cm_mad_hdr *hdr);

/* The message of a MAD cm_unpack_hdr accepted with that attr_id:
 * 0, or EINVAL when a field is out of its range. */
int cm_unpack_req(const uint8_t *mad, struct cm_req *m);
int cm_unpack_mra(const uint8_t *mad, struct cm_mra *m);
int cm_unpack_rej(const uint8_t *mad, struct cm_rej *m);
int cm_unpack_rep(const uint8_t *mad, struct cm_rep *m);
int cm_unpack_rtu(const uint8_t *mad, struct cm_rtu *m);
int cm_unpack_dreq(const uint8_t *mad, struct cm_dreq *m);
int cm_unpack_drep(const uint8_t *mad, struct cm_drep *m);

/* Any of the seven messages, by the header's attr_id. */
union cm_msg {
	struct cm_req req;
	struct cm_mra mra;
	struct cm_rej rej;
	struct cm_rep rep;
	struct cm_rtu rtu;
	struct cm_dreq dreq;
	struct cm_drep drep;
};

/* cm_unpack_hdr() and the cm_unpack_* its attr_id names, in one call: 0
 * with hdr and m filled, or the first error (EINVAL also for an
 * attribute other than the seven). */
int cm_unpack_msg(const uint8_t *mad, size_t len, struct cm_mad_hdr *hdr,
		  union cm_msg *m);

/* A name for logs ("REQ"); "?" for other attributes. */
const char *cm_attr_name(uint16_t attr_id);

#endif
