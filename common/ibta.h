/* SPDX-License-Identifier: MIT */
/*
 * InfiniBand Architecture constants (IBTA Vol 1 r1.4 with the RoCEv2
 * annex A17): transport opcodes, ACK syndromes, the datagram and
 * management headers, the communication manager's messages. The one home
 * for them: provider, model, connection manager and tests all include
 * this instead of writing numbers.
 */
#ifndef ERNIC_IBTA_H
#define ERNIC_IBTA_H

#include <stdint.h>

/* 9.2: transport opcodes ERNIC sends or receives. RC is transport 000,
 * UD 011 (QP1's MADs), CNP the RoCEv2 congestion notification (A17.9). */
enum roce_opcode {
	ROCE_RC_SEND_FIRST = 0x00,
	ROCE_RC_SEND_MIDDLE = 0x01,
	ROCE_RC_SEND_LAST = 0x02,
	ROCE_RC_SEND_LAST_IMM = 0x03,
	ROCE_RC_SEND_ONLY = 0x04,
	ROCE_RC_SEND_ONLY_IMM = 0x05,
	ROCE_RC_WRITE_FIRST = 0x06,
	ROCE_RC_WRITE_MIDDLE = 0x07,
	ROCE_RC_WRITE_LAST = 0x08,
	ROCE_RC_WRITE_LAST_IMM = 0x09,
	ROCE_RC_WRITE_ONLY = 0x0A,
	ROCE_RC_WRITE_ONLY_IMM = 0x0B,
	ROCE_RC_READ_REQ = 0x0C,
	ROCE_RC_READ_RESP_FIRST = 0x0D,
	ROCE_RC_READ_RESP_MIDDLE = 0x0E,
	ROCE_RC_READ_RESP_LAST = 0x0F,
	ROCE_RC_READ_RESP_ONLY = 0x10,
	ROCE_RC_ACK = 0x11,
	ROCE_RC_CMP_SWAP = 0x12,	/* atomics: ERNIC does not support */
	ROCE_RC_FETCH_ADD = 0x13,
	ROCE_RC_SEND_LAST_INV = 0x16,
	ROCE_RC_SEND_ONLY_INV = 0x17,
	ROCE_UD_SEND_ONLY = 0x64,
	ROCE_UD_SEND_ONLY_IMM = 0x65,
	/* A17.9: the RoCEv2 congestion notification packet (CNP class). */
	ROCE_CNP = 0x81,
};

/* A17.9: a CNP is a BTH (BECN set, PSN 0, to the QP whose packets were
 * marked) and 16 reserved bytes. */
#define ROCE_CNP_RSVD_LEN 16u
#define ROCE_BTH_BECN 0x40u		/* in BTH byte 4 */
/* RFC 3168: the ECN field, the low 2 bits of the IPv4 TOS / IPv6 traffic
 * class. RoCEv2 senders mark ECT(0); a congested switch marks CE. */
#define ROCE_ECN_MASK 0x03u
#define ROCE_ECN_ECT0 0x02u
#define ROCE_ECN_CE 0x03u

/* A17.2: the RoCEv2 UDP destination port; 9.2: BTH fields. */
#define ROCE_UDP_PORT 4791u
#define ROCE_DEFAULT_PKEY 0xFFFFu
#define ROCE_BTH_LEN 12u
#define ROCE_RETH_LEN 16u
#define ROCE_AETH_LEN 4u
#define ROCE_DETH_LEN 8u
#define ROCE_IMM_LEN 4u
#define ROCE_IETH_LEN 4u
#define ROCE_ICRC_LEN 4u
#define ROCE_ATOMIC_ETH_LEN 28u		/* 9.3.3.3: AtomicETH */

/* 9.7.5.1: AETH syndrome, [7] 0, [6:5] type, [4:0] value. */
#define ROCE_AETH_ACK 0x00u		/* | credit count, 0x1F = invalid */
#define ROCE_AETH_RNR 0x20u		/* | RNR timer */
#define ROCE_AETH_NAK 0x60u		/* | NAK code below */
#define ROCE_AETH_RSVD 0x40u		/* type 10: reserved */
#define ROCE_AETH_TYPE_MASK 0x60u
enum roce_nak_code {
	ROCE_NAK_PSN_SEQ = 0,
	ROCE_NAK_INVALID_REQ = 1,
	ROCE_NAK_REMOTE_ACCESS = 2,
	ROCE_NAK_REMOTE_OP = 3,
	ROCE_NAK_INVALID_RD_REQ = 4,
};
#define ROCE_AETH_CREDIT_INVALID 0x1Fu

/* 13.4: general services on QP1. The GSI Q_Key (10.2.4.1) is in every
 * DETH to and from QP1; a MAD is 256 bytes with a 24-byte common header
 * (13.4.2). */
#define IB_QP1 1u
#define IB_QP1_QKEY 0x80010000u
#define IB_MAD_SIZE 256u
#define IB_MAD_HDR_LEN 24u
#define IB_MGMT_BASE_VERSION 1u
#define IB_MGMT_CLASS_CM 0x07u
#define IB_CM_CLASS_VERSION 2u
/* Annex A11, RDMA IP CM Service: an IP service's ID is 0x01 (bits
 * 31..24), the IP protocol (bits 23..16: rdma_cm's port space) and the
 * port (bits 15..0). */
#define IB_IP_SID_PREFIX 0x01u
#define IB_IP_SID_PROTO(sid) ((unsigned int)((sid) >> 16) & 0xFFu)
#define IB_IP_SID_PORT(sid) ((unsigned int)(sid) & 0xFFFFu)
#define IB_IP_SID_IS_IP(sid) (((sid) >> 24) == IB_IP_SID_PREFIX)
enum ib_mad_method {
	IB_MGMT_METHOD_GET = 0x01,
	IB_MGMT_METHOD_SET = 0x02,
	IB_MGMT_METHOD_SEND = 0x03,
	IB_MGMT_METHOD_GET_RESP = 0x81,
};
/* 13.4.7: MAD status, bits [4:2] the invalid-field code. */
#define IB_MAD_STATUS_BAD_VERSION 0x0004u
#define IB_MAD_STATUS_METHOD_UNSUPP 0x0008u
#define IB_MAD_STATUS_ATTR_UNSUPP 0x000Cu

/* Where a CM MAD says whose it is (12.6): the management class and the
 * AttributeID (big-endian) of the common header, a REQ's ServiceID
 * (big-endian 64 bits) and every other message's remote communication
 * ID (big-endian 32 bits), as byte offsets in the MAD. */
#define IB_MAD_CLASS_OFF 1u
#define IB_MAD_ATTR_ID_OFF 16u
#define IB_CM_REMOTE_COMM_ID_OFF 28u
#define IB_CM_REQ_SERVICE_ID_OFF 32u

/* 12.6: communication management attributes (AttributeID). */
enum ib_cm_attr {
	IB_CM_ATTR_CLASS_PORT_INFO = 0x0001,
	IB_CM_ATTR_REQ = 0x0010,
	IB_CM_ATTR_MRA = 0x0011,
	IB_CM_ATTR_REJ = 0x0012,
	IB_CM_ATTR_REP = 0x0013,
	IB_CM_ATTR_RTU = 0x0014,
	IB_CM_ATTR_DREQ = 0x0015,
	IB_CM_ATTR_DREP = 0x0016,
	IB_CM_ATTR_SIDR_REQ = 0x0017,
	IB_CM_ATTR_SIDR_REP = 0x0018,
	IB_CM_ATTR_LAP = 0x0019,
	IB_CM_ATTR_APR = 0x001A,
};

#endif
