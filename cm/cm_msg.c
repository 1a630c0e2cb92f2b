// SPDX-License-Identifier: MIT
/*
 * IB CM message codec (cm_msg.h). Fields are placed as IBTA's tables
 * give them: byte offset from the start of the message (MAD byte 24),
 * bit offset from that byte's most significant bit, width in bits; the
 * bits run on, most significant first, across bytes (big-endian).
 */
#include <errno.h>
#include <string.h>

#include "cm_msg.h"

#define MSG(mad) ((mad) + IB_MAD_HDR_LEN)

static uint64_t bits_get(const uint8_t *m, unsigned int off, unsigned int bit,
			 unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int k = off * 8 + bit; k < off * 8 + bit + n; k++)
		v = v << 1 | ((m[k / 8] >> (7 - k % 8)) & 1);
	return v;
}

static void bits_put(uint8_t *m, unsigned int off, unsigned int bit,
		     unsigned int n, uint64_t v)
{
	for (unsigned int k = off * 8 + bit + n; k-- > off * 8 + bit; v >>= 1) {
		uint8_t mask = (uint8_t)(1u << (7 - k % 8));

		m[k / 8] = (uint8_t)((m[k / 8] & ~mask) | (v & 1 ? mask : 0));
	}
}

/* Does v fit in n bits? */
static bool fits(uint64_t v, unsigned int n)
{
	return n >= 64 || v >> n == 0;
}

/* Whole bytes, big-endian: the common case. */
#define GET(m, off, bytes) bits_get(m, off, 0, (bytes) * 8)
#define PUT(m, off, bytes, v) bits_put(m, off, 0, (bytes) * 8, v)

/* Local and remote communication IDs: bytes 0 and 4 of every message
 * but REQ. */
static void ids_put(uint8_t *m, uint32_t local, uint32_t remote)
{
	PUT(m, 0, 4, local);
	PUT(m, 4, 4, remote);
}

static void ids_get(const uint8_t *m, uint32_t *local, uint32_t *remote)
{
	*local = (uint32_t)GET(m, 0, 4);
	*remote = (uint32_t)GET(m, 4, 4);
}

static void pack_hdr(uint8_t *mad, const struct cm_mad_hdr *hdr,
		     uint16_t attr_id)
{
	memset(mad, 0, IB_MAD_SIZE);
	mad[0] = IB_MGMT_BASE_VERSION;
	mad[1] = IB_MGMT_CLASS_CM;
	mad[2] = IB_CM_CLASS_VERSION;
	mad[3] = hdr->method;
	PUT(mad, 4, 2, hdr->status);
	PUT(mad, 8, 8, hdr->tid);
	PUT(mad, 16, 2, attr_id);
	PUT(mad, 20, 4, hdr->attr_mod);
}

int cm_unpack_hdr(const uint8_t *mad, size_t len, struct cm_mad_hdr *hdr)
{
	if (!mad || !hdr || len != IB_MAD_SIZE || mad[0] != IB_MGMT_BASE_VERSION ||
	    mad[1] != IB_MGMT_CLASS_CM)
		return EINVAL;
	hdr->method = mad[3];
	hdr->status = (uint16_t)GET(mad, 4, 2);
	hdr->tid = GET(mad, 8, 8);
	hdr->attr_id = (uint16_t)GET(mad, 16, 2);
	hdr->attr_mod = (uint32_t)GET(mad, 20, 4);
	if (mad[2] != IB_CM_CLASS_VERSION || hdr->method != IB_MGMT_METHOD_SEND ||
	    hdr->status)
		return EPROTO;
	return 0;
}

/* ---- path (REQ 52..95 primary, 96..139 alternate) ---- */

static bool path_ok(const struct cm_path *p)
{
	return fits(p->flow_label, 20) && fits(p->packet_rate, 6) &&
	       fits(p->sl, 4) && fits(p->local_ack_timeout, 5);
}

static void path_put(uint8_t *m, unsigned int o, const struct cm_path *p)
{
	PUT(m, o, 2, p->local_lid);
	PUT(m, o + 2, 2, p->remote_lid);
	memcpy(m + o + 4, p->local_gid, 16);
	memcpy(m + o + 20, p->remote_gid, 16);
	bits_put(m, o + 36, 0, 20, p->flow_label);
	bits_put(m, o + 39, 2, 6, p->packet_rate);
	m[o + 40] = p->traffic_class;
	m[o + 41] = p->hop_limit;
	bits_put(m, o + 42, 0, 4, p->sl);
	bits_put(m, o + 42, 4, 1, p->subnet_local);
	bits_put(m, o + 43, 0, 5, p->local_ack_timeout);
}

static void path_get(const uint8_t *m, unsigned int o, struct cm_path *p)
{
	p->local_lid = (uint16_t)GET(m, o, 2);
	p->remote_lid = (uint16_t)GET(m, o + 2, 2);
	memcpy(p->local_gid, m + o + 4, 16);
	memcpy(p->remote_gid, m + o + 20, 16);
	p->flow_label = (uint32_t)bits_get(m, o + 36, 0, 20);
	p->packet_rate = (uint8_t)bits_get(m, o + 39, 2, 6);
	p->traffic_class = m[o + 40];
	p->hop_limit = m[o + 41];
	p->sl = (uint8_t)bits_get(m, o + 42, 0, 4);
	p->subnet_local = bits_get(m, o + 42, 4, 1);
	p->local_ack_timeout = (uint8_t)bits_get(m, o + 43, 0, 5);
}

/* ---- REQ (Table 106) ---- */

int cm_pack_req(uint8_t *mad, const struct cm_mad_hdr *hdr,
		const struct cm_req *r)
{
	uint8_t *m;

	if (!mad || !hdr || !r || !fits(r->local_qpn, 24) ||
	    !fits(r->remote_cm_response_timeout, 5) || !fits(r->transport, 2) ||
	    !fits(r->starting_psn, 24) || !fits(r->local_cm_response_timeout, 5) ||
	    !fits(r->retry_count, 3) || !fits(r->path_mtu, 4) ||
	    !fits(r->rnr_retry_count, 3) || !fits(r->max_cm_retries, 4) ||
	    !path_ok(&r->primary) || r->has_alternate)
		return EINVAL;
	pack_hdr(mad, hdr, IB_CM_ATTR_REQ);
	m = MSG(mad);
	PUT(m, 0, 4, r->local_comm_id);
	PUT(m, 8, 8, r->service_id);
	PUT(m, 16, 8, r->local_ca_guid);
	PUT(m, 28, 4, r->local_qkey);
	bits_put(m, 32, 0, 24, r->local_qpn);
	m[35] = r->responder_resources;
	m[39] = r->initiator_depth;	/* local EECN (36, 24 bits): 0 */
	bits_put(m, 43, 0, 5, r->remote_cm_response_timeout);
	bits_put(m, 43, 5, 2, r->transport);
	bits_put(m, 43, 7, 1, r->e2e_flow_control);
	bits_put(m, 44, 0, 24, r->starting_psn);
	bits_put(m, 47, 0, 5, r->local_cm_response_timeout);
	bits_put(m, 47, 5, 3, r->retry_count);
	PUT(m, 48, 2, r->pkey);
	bits_put(m, 50, 0, 4, r->path_mtu);
	bits_put(m, 50, 5, 3, r->rnr_retry_count);
	bits_put(m, 51, 0, 4, r->max_cm_retries);
	bits_put(m, 51, 4, 1, r->srq);
	path_put(m, 52, &r->primary);
	memcpy(m + 140, r->pdata, CM_REQ_PDATA);
	return 0;
}

int cm_unpack_req(const uint8_t *mad, struct cm_req *r)
{
	const uint8_t *m = MSG(mad);
	static const uint8_t zero[44];

	memset(r, 0, sizeof(*r));
	r->local_comm_id = (uint32_t)GET(m, 0, 4);
	r->service_id = GET(m, 8, 8);
	r->local_ca_guid = GET(m, 16, 8);
	r->local_qkey = (uint32_t)GET(m, 28, 4);
	r->local_qpn = (uint32_t)bits_get(m, 32, 0, 24);
	r->responder_resources = m[35];
	r->initiator_depth = m[39];
	r->remote_cm_response_timeout = (uint8_t)bits_get(m, 43, 0, 5);
	r->transport = (uint8_t)bits_get(m, 43, 5, 2);
	r->e2e_flow_control = bits_get(m, 43, 7, 1);
	r->starting_psn = (uint32_t)bits_get(m, 44, 0, 24);
	r->local_cm_response_timeout = (uint8_t)bits_get(m, 47, 0, 5);
	r->retry_count = (uint8_t)bits_get(m, 47, 5, 3);
	r->pkey = (uint16_t)GET(m, 48, 2);
	r->path_mtu = (uint8_t)bits_get(m, 50, 0, 4);
	r->rnr_retry_count = (uint8_t)bits_get(m, 50, 5, 3);
	r->max_cm_retries = (uint8_t)bits_get(m, 51, 0, 4);
	r->srq = bits_get(m, 51, 4, 1);
	path_get(m, 52, &r->primary);
	r->has_alternate = memcmp(m + 96, zero, sizeof(zero)) != 0;
	memcpy(r->pdata, m + 140, CM_REQ_PDATA);
	return 0;
}

/* ---- MRA (Table 107) ---- */

int cm_pack_mra(uint8_t *mad, const struct cm_mad_hdr *hdr,
		const struct cm_mra *r)
{
	uint8_t *m;

	if (!mad || !hdr || !r || r->msg_mraed > CM_MSG_OTHER ||
	    !fits(r->service_timeout, 5))
		return EINVAL;
	pack_hdr(mad, hdr, IB_CM_ATTR_MRA);
	m = MSG(mad);
	ids_put(m, r->local_comm_id, r->remote_comm_id);
	bits_put(m, 8, 0, 2, r->msg_mraed);
	bits_put(m, 9, 0, 5, r->service_timeout);
	memcpy(m + 10, r->pdata, CM_MRA_PDATA);
	return 0;
}

int cm_unpack_mra(const uint8_t *mad, struct cm_mra *r)
{
	const uint8_t *m = MSG(mad);

	memset(r, 0, sizeof(*r));
	ids_get(m, &r->local_comm_id, &r->remote_comm_id);
	r->msg_mraed = (uint8_t)bits_get(m, 8, 0, 2);
	r->service_timeout = (uint8_t)bits_get(m, 9, 0, 5);
	memcpy(r->pdata, m + 10, CM_MRA_PDATA);
	return r->msg_mraed > CM_MSG_OTHER ? EINVAL : 0;
}

/* ---- REJ (Table 108) ---- */

int cm_pack_rej(uint8_t *mad, const struct cm_mad_hdr *hdr,
		const struct cm_rej *r)
{
	uint8_t *m;

	if (!mad || !hdr || !r || r->msg_rejected > CM_MSG_OTHER ||
	    r->ari_len > CM_REJ_ARI)
		return EINVAL;
	pack_hdr(mad, hdr, IB_CM_ATTR_REJ);
	m = MSG(mad);
	ids_put(m, r->local_comm_id, r->remote_comm_id);
	bits_put(m, 8, 0, 2, r->msg_rejected);
	bits_put(m, 9, 0, 7, r->ari_len);
	PUT(m, 10, 2, r->reason);
	memcpy(m + 12, r->ari, CM_REJ_ARI);
	memcpy(m + 84, r->pdata, CM_REJ_PDATA);
	return 0;
}

int cm_unpack_rej(const uint8_t *mad, struct cm_rej *r)
{
	const uint8_t *m = MSG(mad);

	memset(r, 0, sizeof(*r));
	ids_get(m, &r->local_comm_id, &r->remote_comm_id);
	r->msg_rejected = (uint8_t)bits_get(m, 8, 0, 2);
	r->ari_len = (uint8_t)bits_get(m, 9, 0, 7);
	r->reason = (uint16_t)GET(m, 10, 2);
	memcpy(r->ari, m + 12, CM_REJ_ARI);
	memcpy(r->pdata, m + 84, CM_REJ_PDATA);
	return r->msg_rejected > CM_MSG_OTHER || r->ari_len > CM_REJ_ARI ?
		       EINVAL : 0;
}

/* ---- REP (Table 110) ---- */

int cm_pack_rep(uint8_t *mad, const struct cm_mad_hdr *hdr,
		const struct cm_rep *r)
{
	uint8_t *m;

	if (!mad || !hdr || !r || !fits(r->local_qpn, 24) ||
	    !fits(r->starting_psn, 24) || !fits(r->target_ack_delay, 5) ||
	    !fits(r->failover_accepted, 2) || !fits(r->rnr_retry_count, 3))
		return EINVAL;
	pack_hdr(mad, hdr, IB_CM_ATTR_REP);
	m = MSG(mad);
	ids_put(m, r->local_comm_id, r->remote_comm_id);
	PUT(m, 8, 4, r->local_qkey);
	bits_put(m, 12, 0, 24, r->local_qpn);
	bits_put(m, 20, 0, 24, r->starting_psn);
	m[24] = r->responder_resources;
	m[25] = r->initiator_depth;
	bits_put(m, 26, 0, 5, r->target_ack_delay);
	bits_put(m, 26, 5, 2, r->failover_accepted);
	bits_put(m, 26, 7, 1, r->e2e_flow_control);
	bits_put(m, 27, 0, 3, r->rnr_retry_count);
	bits_put(m, 27, 3, 1, r->srq);
	PUT(m, 28, 8, r->local_ca_guid);
	memcpy(m + 36, r->pdata, CM_REP_PDATA);
	return 0;
}

int cm_unpack_rep(const uint8_t *mad, struct cm_rep *r)
{
	const uint8_t *m = MSG(mad);

	memset(r, 0, sizeof(*r));
	ids_get(m, &r->local_comm_id, &r->remote_comm_id);
	r->local_qkey = (uint32_t)GET(m, 8, 4);
	r->local_qpn = (uint32_t)bits_get(m, 12, 0, 24);
	r->starting_psn = (uint32_t)bits_get(m, 20, 0, 24);
	r->responder_resources = m[24];
	r->initiator_depth = m[25];
	r->target_ack_delay = (uint8_t)bits_get(m, 26, 0, 5);
	r->failover_accepted = (uint8_t)bits_get(m, 26, 5, 2);
	r->e2e_flow_control = bits_get(m, 26, 7, 1);
	r->rnr_retry_count = (uint8_t)bits_get(m, 27, 0, 3);
	r->srq = bits_get(m, 27, 3, 1);
	r->local_ca_guid = GET(m, 28, 8);
	memcpy(r->pdata, m + 36, CM_REP_PDATA);
	return 0;
}

/* ---- RTU, DREQ, DREP (Tables 111-113) ---- */

/* RTU and DREP are the same shape: the two IDs, 224 bytes of private
 * data. */
_Static_assert(CM_RTU_PDATA == CM_DREP_PDATA, "RTU and DREP alike");

static int pack_ids_pdata(uint8_t *mad, const struct cm_mad_hdr *hdr,
			  uint16_t attr_id, uint32_t local, uint32_t remote,
			  const uint8_t *pdata)
{
	if (!mad || !hdr)
		return EINVAL;
	pack_hdr(mad, hdr, attr_id);
	ids_put(MSG(mad), local, remote);
	memcpy(MSG(mad) + 8, pdata, CM_RTU_PDATA);
	return 0;
}

static int unpack_ids_pdata(const uint8_t *mad, uint32_t *local,
			    uint32_t *remote, uint8_t *pdata)
{
	ids_get(MSG(mad), local, remote);
	memcpy(pdata, MSG(mad) + 8, CM_RTU_PDATA);
	return 0;
}

int cm_pack_rtu(uint8_t *mad, const struct cm_mad_hdr *hdr,
		const struct cm_rtu *r)
{
	return r ? pack_ids_pdata(mad, hdr, IB_CM_ATTR_RTU, r->local_comm_id,
				  r->remote_comm_id, r->pdata) :
		   EINVAL;
}

int cm_unpack_rtu(const uint8_t *mad, struct cm_rtu *r)
{
	return unpack_ids_pdata(mad, &r->local_comm_id, &r->remote_comm_id,
				r->pdata);
}

int cm_pack_drep(uint8_t *mad, const struct cm_mad_hdr *hdr,
		 const struct cm_drep *r)
{
	return r ? pack_ids_pdata(mad, hdr, IB_CM_ATTR_DREP, r->local_comm_id,
				  r->remote_comm_id, r->pdata) :
		   EINVAL;
}

int cm_unpack_drep(const uint8_t *mad, struct cm_drep *r)
{
	return unpack_ids_pdata(mad, &r->local_comm_id, &r->remote_comm_id,
				r->pdata);
}

int cm_pack_dreq(uint8_t *mad, const struct cm_mad_hdr *hdr,
		 const struct cm_dreq *r)
{
	if (!mad || !hdr || !r || !fits(r->remote_qpn, 24))
		return EINVAL;
	pack_hdr(mad, hdr, IB_CM_ATTR_DREQ);
	ids_put(MSG(mad), r->local_comm_id, r->remote_comm_id);
	bits_put(MSG(mad), 8, 0, 24, r->remote_qpn);
	memcpy(MSG(mad) + 12, r->pdata, CM_DREQ_PDATA);
	return 0;
}

int cm_unpack_dreq(const uint8_t *mad, struct cm_dreq *r)
{
	ids_get(MSG(mad), &r->local_comm_id, &r->remote_comm_id);
	r->remote_qpn = (uint32_t)bits_get(MSG(mad), 8, 0, 24);
	memcpy(r->pdata, MSG(mad) + 12, CM_DREQ_PDATA);
	return 0;
}

const char *cm_attr_name(uint16_t attr_id)
{
	static const char *const names[] = {
		[IB_CM_ATTR_REQ] = "REQ",   [IB_CM_ATTR_MRA] = "MRA",
		[IB_CM_ATTR_REJ] = "REJ",   [IB_CM_ATTR_REP] = "REP",
		[IB_CM_ATTR_RTU] = "RTU",   [IB_CM_ATTR_DREQ] = "DREQ",
		[IB_CM_ATTR_DREP] = "DREP", [IB_CM_ATTR_SIDR_REQ] = "SIDR_REQ",
		[IB_CM_ATTR_SIDR_REP] = "SIDR_REP", [IB_CM_ATTR_LAP] = "LAP",
		[IB_CM_ATTR_APR] = "APR",
	};

	if (attr_id < sizeof(names) / sizeof(names[0]) && names[attr_id])
		return names[attr_id];
	return "?";
}

int cm_unpack_msg(const uint8_t *mad, size_t len, struct cm_mad_hdr *hdr,
		  union cm_msg *m)
{
	int ret = cm_unpack_hdr(mad, len, hdr);

	if (ret)
		return ret;
	switch (hdr->attr_id) {
	case IB_CM_ATTR_REQ: return cm_unpack_req(mad, &m->req);
	case IB_CM_ATTR_MRA: return cm_unpack_mra(mad, &m->mra);
	case IB_CM_ATTR_REJ: return cm_unpack_rej(mad, &m->rej);
	case IB_CM_ATTR_REP: return cm_unpack_rep(mad, &m->rep);
	case IB_CM_ATTR_RTU: return cm_unpack_rtu(mad, &m->rtu);
	case IB_CM_ATTR_DREQ: return cm_unpack_dreq(mad, &m->dreq);
	case IB_CM_ATTR_DREP: return cm_unpack_drep(mad, &m->drep);
	default: return EINVAL;
	}
}
