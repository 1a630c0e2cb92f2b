// SPDX-License-Identifier: MIT
/*
 * The CM message codec (cm/cm_msg.c): every message round-trips with
 * every field at a value of its full width, fields land on the bytes
 * IBTA's tables name, out-of-range values are refused, and hostile
 * headers are told apart. With --pcap FILE it also writes one RoCEv2
 * frame per message (ICRC from the model) for tshark to decode
 * (tests/cm_tshark.sh).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>

#include <cmocka.h>

#include "cm_msg.h"
#include "ernic_mad_frame.h"
#include "roce_pkt.h"

static const struct cm_mad_hdr hdr = {
	.method = IB_MGMT_METHOD_SEND, .tid = UINT64_C(0x0123456789ABCDEF),
};

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t k = 0; k < n; k++)
		p[k] = (uint8_t)(seed + k * 31);
}

static struct cm_req sample_req(void)
{
	struct cm_req r = {
		.local_comm_id = 0x11223344,
		.service_id = UINT64_C(0x0000000001060000) | 7471,
		.local_ca_guid = UINT64_C(0x0200000000000001),
		.local_qkey = 0,
		.local_qpn = 0xABCDEF, .responder_resources = 16,
		.initiator_depth = 8, .remote_cm_response_timeout = 20,
		.transport = 0, .e2e_flow_control = true,
		.starting_psn = 0xFEDCBA, .local_cm_response_timeout = 31,
		.retry_count = 7, .pkey = 0xFFFF, .path_mtu = 3,
		.rnr_retry_count = 6, .max_cm_retries = 15, .srq = false,
		.primary = {
			.local_lid = 0xFFFF, .remote_lid = 0xFFFF,
			.flow_label = 0xFFFFF, .packet_rate = 0x3F,
			.traffic_class = 0xA0, .hop_limit = 64, .sl = 0xF,
			.subnet_local = true, .local_ack_timeout = 18,
		},
	};

	r.primary.local_gid[10] = r.primary.local_gid[11] = 0xFF;
	r.primary.remote_gid[10] = r.primary.remote_gid[11] = 0xFF;
	inet_pton(AF_INET, "127.0.0.2", r.primary.local_gid + 12);
	inet_pton(AF_INET, "127.0.0.3", r.primary.remote_gid + 12);
	fill(r.pdata, sizeof(r.pdata), 1);
	return r;
}

static void test_req(void **state)
{
	struct cm_req r = sample_req(), q;
	struct cm_mad_hdr h;
	uint8_t mad[IB_MAD_SIZE];
	const uint8_t *m = mad + IB_MAD_HDR_LEN;

	(void)state;
	assert_int_equal(cm_pack_req(mad, &hdr, &r), 0);
	assert_int_equal(cm_unpack_hdr(mad, sizeof(mad), &h), 0);
	assert_int_equal(h.attr_id, IB_CM_ATTR_REQ);
	assert_true(h.tid == hdr.tid);
	assert_int_equal(cm_unpack_req(mad, &q), 0);
	assert_memory_equal(&q, &r, sizeof(q));
	/* Where Table 106 puts them. */
	assert_int_equal(mad[0], 1);
	assert_int_equal(mad[1], IB_MGMT_CLASS_CM);
	assert_int_equal(mad[2], 2);
	assert_int_equal(mad[3], IB_MGMT_METHOD_SEND);
	assert_int_equal(mad[16] << 8 | mad[17], IB_CM_ATTR_REQ);
	assert_int_equal(m[32] << 16 | m[33] << 8 | m[34], 0xABCDEF);
	assert_int_equal(m[35], 16);
	assert_int_equal(m[39], 8);
	assert_int_equal(m[43], 20 << 3 | 0 << 1 | 1);
	assert_int_equal(m[44] << 16 | m[45] << 8 | m[46], 0xFEDCBA);
	assert_int_equal(m[47], 31 << 3 | 7);
	assert_int_equal(m[50], 3 << 4 | 6);
	assert_int_equal(m[51], 15 << 4);
	assert_int_equal(m[88], 0xFF);
	assert_int_equal(m[90], 0xF0);
	assert_int_equal(m[91], 0x3F);
	assert_int_equal(m[94], 0xF << 4 | 1 << 3);
	assert_int_equal(m[95], 18 << 3);
	assert_memory_equal(m + 140, r.pdata, CM_REQ_PDATA);

	/* Out of range: refused, and an alternate path is not offered. */
	q = r;
	q.local_qpn = 1u << 24;
	assert_int_equal(cm_pack_req(mad, &hdr, &q), EINVAL);
	q = r;
	q.primary.flow_label = 1u << 20;
	assert_int_equal(cm_pack_req(mad, &hdr, &q), EINVAL);
	q = r;
	q.has_alternate = true;
	assert_int_equal(cm_pack_req(mad, &hdr, &q), EINVAL);
	/* An alternate path on the wire is reported. */
	assert_int_equal(cm_pack_req(mad, &hdr, &r), 0);
	mad[IB_MAD_HDR_LEN + 100] = 0xFE;
	assert_int_equal(cm_unpack_req(mad, &q), 0);
	assert_true(q.has_alternate);
}

static void test_rep_rtu_rej_mra(void **state)
{
	struct cm_rep p = {
		.local_comm_id = 1, .remote_comm_id = 2, .local_qkey = 3,
		.local_qpn = 0xFFFFFF, .starting_psn = 0x123456,
		.responder_resources = 4, .initiator_depth = 5,
		.target_ack_delay = 31, .failover_accepted = 3,
		.e2e_flow_control = true, .rnr_retry_count = 7, .srq = true,
		.local_ca_guid = UINT64_C(0x0102030405060708),
	}, p2;
	struct cm_rtu t = { .local_comm_id = 9, .remote_comm_id = 10 }, t2;
	struct cm_rej j = { .local_comm_id = 11, .remote_comm_id = 12,
			    .msg_rejected = CM_MSG_REQ, .ari_len = 72,
			    .reason = IB_CM_REJ_CONSUMER_DEFINED }, j2;
	struct cm_mra a = { .local_comm_id = 13, .remote_comm_id = 14,
			    .msg_mraed = CM_MSG_REP, .service_timeout = 31 }, a2;
	uint8_t mad[IB_MAD_SIZE];
	struct cm_mad_hdr h;

	(void)state;
	fill(p.pdata, sizeof(p.pdata), 2);
	fill(t.pdata, sizeof(t.pdata), 3);
	fill(j.ari, sizeof(j.ari), 4);
	fill(j.pdata, sizeof(j.pdata), 5);
	fill(a.pdata, sizeof(a.pdata), 6);

	assert_int_equal(cm_pack_rep(mad, &hdr, &p), 0);
	assert_int_equal(cm_unpack_hdr(mad, sizeof(mad), &h), 0);
	assert_int_equal(h.attr_id, IB_CM_ATTR_REP);
	assert_int_equal(cm_unpack_rep(mad, &p2), 0);
	assert_memory_equal(&p, &p2, sizeof(p));
	assert_int_equal(mad[IB_MAD_HDR_LEN + 26], 31 << 3 | 3 << 1 | 1);
	assert_int_equal(mad[IB_MAD_HDR_LEN + 27], 7 << 5 | 1 << 4);

	assert_int_equal(cm_pack_rtu(mad, &hdr, &t), 0);
	assert_int_equal(cm_unpack_rtu(mad, &t2), 0);
	assert_memory_equal(&t, &t2, sizeof(t));

	assert_int_equal(cm_pack_rej(mad, &hdr, &j), 0);
	assert_int_equal(cm_unpack_rej(mad, &j2), 0);
	assert_memory_equal(&j, &j2, sizeof(j));
	assert_int_equal(mad[IB_MAD_HDR_LEN + 9], 72 << 1);
	mad[IB_MAD_HDR_LEN + 9] = 73 << 1;	/* ARI longer than its room */
	assert_int_equal(cm_unpack_rej(mad, &j2), EINVAL);
	j.ari_len = 73;
	assert_int_equal(cm_pack_rej(mad, &hdr, &j), EINVAL);

	assert_int_equal(cm_pack_mra(mad, &hdr, &a), 0);
	assert_int_equal(cm_unpack_mra(mad, &a2), 0);
	assert_memory_equal(&a, &a2, sizeof(a));
	a.msg_mraed = 3;
	assert_int_equal(cm_pack_mra(mad, &hdr, &a), EINVAL);
}

static void test_dreq_drep(void **state)
{
	struct cm_dreq d = { .local_comm_id = 21, .remote_comm_id = 22,
			     .remote_qpn = 0x000102 }, d2;
	struct cm_drep e = { .local_comm_id = 23, .remote_comm_id = 24 }, e2;
	uint8_t mad[IB_MAD_SIZE];

	(void)state;
	fill(d.pdata, sizeof(d.pdata), 7);
	fill(e.pdata, sizeof(e.pdata), 8);
	assert_int_equal(cm_pack_dreq(mad, &hdr, &d), 0);
	assert_int_equal(cm_unpack_dreq(mad, &d2), 0);
	assert_memory_equal(&d, &d2, sizeof(d));
	d.remote_qpn = 1u << 24;
	assert_int_equal(cm_pack_dreq(mad, &hdr, &d), EINVAL);
	assert_int_equal(cm_pack_drep(mad, &hdr, &e), 0);
	assert_int_equal(cm_unpack_drep(mad, &e2), 0);
	assert_memory_equal(&e, &e2, sizeof(e));
	assert_string_equal(cm_attr_name(IB_CM_ATTR_DREQ), "DREQ");
	assert_string_equal(cm_attr_name(0x4242), "?");
}

static void test_hostile_headers(void **state)
{
	struct cm_rtu t = { 0 };
	struct cm_mad_hdr h;
	uint8_t mad[IB_MAD_SIZE], bad[IB_MAD_SIZE];

	(void)state;
	assert_int_equal(cm_pack_rtu(mad, &hdr, &t), 0);
	assert_int_equal(cm_unpack_hdr(mad, 255, &h), EINVAL);
	memcpy(bad, mad, sizeof(bad));
	bad[0] = 2;
	assert_int_equal(cm_unpack_hdr(bad, sizeof(bad), &h), EINVAL);
	memcpy(bad, mad, sizeof(bad));
	bad[1] = 0x04;		/* not the CM class */
	assert_int_equal(cm_unpack_hdr(bad, sizeof(bad), &h), EINVAL);
	memcpy(bad, mad, sizeof(bad));
	bad[2] = 3;		/* a CM class version we do not speak */
	assert_int_equal(cm_unpack_hdr(bad, sizeof(bad), &h), EPROTO);
	memcpy(bad, mad, sizeof(bad));
	bad[3] = IB_MGMT_METHOD_GET;
	assert_int_equal(cm_unpack_hdr(bad, sizeof(bad), &h), EPROTO);
	memcpy(bad, mad, sizeof(bad));
	bad[5] = 4;		/* a status */
	assert_int_equal(cm_unpack_hdr(bad, sizeof(bad), &h), EPROTO);
}

/* ---- pcap for tshark ---- */

static void put_le32(FILE *f, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 24) };

	fwrite(b, 1, 4, f);
}

static void pcap_frame(FILE *f, const uint8_t *mad)
{
	struct ernic_mad_frame_src src = { .family = AF_INET,
					   .udp_sport = 49152,
					   .mac = { 2, 0, 0, 0, 0, 2 } };
	struct ernic_mad_peer to = { .qpn = IB_QP1,
				     .mac = { 2, 0, 0, 0, 0, 3 } };
	struct roce_l3 l3 = { .family = AF_INET, .sport = 49152,
			      .dport = ROCE_UDP_PORT, .ttl = 64 };
	uint8_t frame[ERNIC_MAD_FRAME_MAX + 4];
	uint32_t len, icrc;

	inet_pton(AF_INET, "127.0.0.2", src.addr);
	to.gid[10] = to.gid[11] = 0xFF;
	inet_pton(AF_INET, "127.0.0.3", to.gid + 12);
	memcpy(l3.src, src.addr, 4);
	memcpy(l3.dst, to.gid + 12, 4);
	len = ernic_mad_frame_build(frame, sizeof(frame), &src, &to, 1, mad);
	icrc = roce_icrc(&l3, frame + 42, len - 42 + 4);
	memcpy(frame + len, &icrc, 4);	/* little-endian host: as stored */
	len += 4;
	put_le32(f, 0);
	put_le32(f, 0);
	put_le32(f, len);
	put_le32(f, len);
	fwrite(frame, 1, len, f);
}

static int write_pcap(const char *path)
{
	struct cm_req req = sample_req();
	struct cm_rep rep = { .local_comm_id = 2, .remote_comm_id = 1,
			      .local_qpn = 3, .starting_psn = 4,
			      .responder_resources = 1, .initiator_depth = 1,
			      .rnr_retry_count = 7 };
	struct cm_rtu rtu = { .local_comm_id = 1, .remote_comm_id = 2 };
	struct cm_rej rej = { .local_comm_id = 2, .remote_comm_id = 1,
			      .reason = IB_CM_REJ_INVALID_SERVICE_ID };
	struct cm_mra mra = { .local_comm_id = 2, .remote_comm_id = 1,
			      .service_timeout = 20 };
	struct cm_dreq dreq = { .local_comm_id = 1, .remote_comm_id = 2,
				.remote_qpn = 3 };
	struct cm_drep drep = { .local_comm_id = 2, .remote_comm_id = 1 };
	uint8_t mad[7][IB_MAD_SIZE];
	FILE *f = fopen(path, "wb");

	if (!f)
		return 1;
	/* The RDMA IP CM header (annex A11): version 0, IPv4, port 7471. */
	memset(req.pdata, 0, sizeof(req.pdata));
	req.pdata[1] = 4 << 4;
	req.pdata[2] = 0x1D;
	req.pdata[3] = 0x2F;
	inet_pton(AF_INET, "127.0.0.2", req.pdata + 4 + 12);
	inet_pton(AF_INET, "127.0.0.3", req.pdata + 20 + 12);
	if (cm_pack_req(mad[0], &hdr, &req) || cm_pack_rep(mad[1], &hdr, &rep) ||
	    cm_pack_rtu(mad[2], &hdr, &rtu) || cm_pack_rej(mad[3], &hdr, &rej) ||
	    cm_pack_mra(mad[4], &hdr, &mra) ||
	    cm_pack_dreq(mad[5], &hdr, &dreq) ||
	    cm_pack_drep(mad[6], &hdr, &drep)) {
		fclose(f);
		return 1;
	}
	put_le32(f, 0xA1B2C3D4);
	put_le32(f, 2 | 4u << 16);	/* version 2.4 */
	put_le32(f, 0);
	put_le32(f, 0);
	put_le32(f, 65535);
	put_le32(f, 1);			/* Ethernet */
	for (int k = 0; k < 7; k++)
		pcap_frame(f, mad[k]);
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req),
		cmocka_unit_test(test_rep_rtu_rej_mra),
		cmocka_unit_test(test_dreq_drep),
		cmocka_unit_test(test_hostile_headers),
	};

	if (argc == 3 && !strcmp(argv[1], "--pcap"))
		return write_pcap(argv[2]);
	return cmocka_run_group_tests_name("cm_msg", tests, NULL, NULL);
}
