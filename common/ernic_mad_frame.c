// SPDX-License-Identifier: MIT
/* QP1 frames: build and parse (ernic_mad_frame.h). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "ernic_mad_frame.h"
#include "ernic_net.h"
#include "ernic_wire.h"
#include "ibta.h"

#define ETH_LEN 14u
#define IPV4_LEN 20u
#define IPV6_LEN 40u
#define UDP_LEN 8u
#define ETHERTYPE_IPV4 0x0800u
#define ETHERTYPE_IPV6 0x86DDu
#define IPPROTO_UDP_NUM 17u
#define DEFAULT_HOPS 64u

static uint32_t l3_len(int family)
{
	return family == AF_INET ? IPV4_LEN : family == AF_INET6 ? IPV6_LEN : 0;
}

/* Ethernet, IP and UDP headers from src to peer for tlen transport
 * bytes (and the ICRC) into buf, zeroed up to the frame's end; the BTH's
 * place, or NULL when it does not fit or peer is of another family. */
static uint8_t *headers(uint8_t *buf, size_t cap,
			const struct ernic_mad_frame_src *src,
			const struct ernic_mad_peer *peer, uint32_t tlen)
{
	const uint32_t ll = l3_len(src ? src->family : 0);
	const uint32_t flen = ETH_LEN + ll + UDP_LEN + tlen;
	const uint8_t hops = peer && peer->hop_limit ? peer->hop_limit :
						      DEFAULT_HOPS;
	struct ernic_ip dst;
	uint8_t *ip, *udp;

	if (!ll || !buf || !peer || cap < flen)
		return NULL;
	ernic_gid_to_ip(peer->gid, &dst);
	if (dst.family != src->family)
		return NULL;
	memset(buf, 0, flen);
	memcpy(buf, peer->mac, 6);
	memcpy(buf + 6, src->mac, 6);
	ip = buf + ETH_LEN;
	udp = ip + ll;
	if (src->family == AF_INET) {
		ernic_put16(buf + 12, ETHERTYPE_IPV4);
		ip[0] = 0x45;
		ip[1] = peer->traffic_class;
		ernic_put16(ip + 2, ll + UDP_LEN + tlen + ROCE_ICRC_LEN);
		ernic_put16(ip + 6, 0x4000);		/* DF, ID 0 */
		ip[8] = hops;
		ip[9] = IPPROTO_UDP_NUM;
		memcpy(ip + 12, src->addr, 4);
		memcpy(ip + 16, dst.addr, 4);
		ernic_put16(ip + 10,
			    ernic_csum_fold(ernic_csum_add(0, ip, IPV4_LEN)));
	} else {
		ernic_put16(buf + 12, ETHERTYPE_IPV6);
		ernic_put32(ip, 6u << 28 | (uint32_t)peer->traffic_class << 20);
		ernic_put16(ip + 4, UDP_LEN + tlen + ROCE_ICRC_LEN);
		ip[6] = IPPROTO_UDP_NUM;
		ip[7] = hops;
		memcpy(ip + 8, src->addr, 16);
		memcpy(ip + 24, dst.addr, 16);
	}
	ernic_put16(udp, src->udp_sport);
	ernic_put16(udp + 2, ROCE_UDP_PORT);
	ernic_put16(udp + 4, UDP_LEN + tlen + ROCE_ICRC_LEN);
	return udp + UDP_LEN;
}

uint32_t ernic_mad_frame_build(uint8_t *buf, size_t cap,
			       const struct ernic_mad_frame_src *src,
			       const struct ernic_mad_peer *peer, uint32_t psn,
			       const uint8_t *mad)
{
	const uint32_t tlen = ROCE_BTH_LEN + ROCE_DETH_LEN + IB_MAD_SIZE;
	uint8_t *bth = mad ? headers(buf, cap, src, peer, tlen) : NULL;

	if (!bth)
		return 0;
	bth[0] = ROCE_UD_SEND_ONLY;
	bth[1] = 0;			/* SE 0, M 0, pad 0 (256 B), TVer 0 */
	ernic_put16(bth + 2, peer->pkey ? peer->pkey : ROCE_DEFAULT_PKEY);
	ernic_put32(bth + 4, peer->qpn & 0xFFFFFF);
	ernic_put32(bth + 8, psn & 0xFFFFFF);	/* AckReq 0 */
	ernic_put32(bth + 12, IB_QP1_QKEY);	/* DETH */
	ernic_put32(bth + 16, IB_QP1);
	memcpy(bth + ROCE_BTH_LEN + ROCE_DETH_LEN, mad, IB_MAD_SIZE);
	return (uint32_t)(bth - buf) + tlen;
}

uint32_t ernic_cnp_frame_build(uint8_t *buf, size_t cap,
			       const struct ernic_mad_frame_src *src,
			       const struct ernic_mad_peer *peer)
{
	const uint32_t tlen = ROCE_BTH_LEN + ROCE_CNP_RSVD_LEN;
	uint8_t *bth = headers(buf, cap, src, peer, tlen);

	if (!bth)
		return 0;
	bth[0] = ROCE_CNP;
	ernic_put16(bth + 2, peer->pkey ? peer->pkey : ROCE_DEFAULT_PKEY);
	ernic_put32(bth + 4, peer->qpn & 0xFFFFFF);
	bth[4] = ROCE_BTH_BECN;		/* PSN 0, reserved bytes 0 */
	return (uint32_t)(bth - buf) + tlen;
}

int ernic_mad_frame_parse(const uint8_t *frame, size_t len, int family,
			  struct ernic_mad_peer *peer, uint8_t *mad)
{
	const uint32_t ll = l3_len(family);
	const uint32_t tlen = ROCE_BTH_LEN + ROCE_DETH_LEN + IB_MAD_SIZE;
	const uint8_t *ip, *udp, *bth;
	struct ernic_ip src = { .family = family };

	if (!ll || !frame || !peer || !mad ||
	    len != ETH_LEN + ll + UDP_LEN + tlen)
		return EINVAL;
	ip = frame + ETH_LEN;
	udp = ip + ll;
	bth = udp + UDP_LEN;
	memset(peer, 0, sizeof(*peer));
	if (family == AF_INET) {
		if (ernic_get16(frame + 12) != ETHERTYPE_IPV4 || ip[0] != 0x45 ||
		    ip[9] != IPPROTO_UDP_NUM ||
		    ernic_get16(ip + 2) != ll + UDP_LEN + tlen + ROCE_ICRC_LEN)
			return EINVAL;
		memcpy(src.addr, ip + 12, 4);
		peer->traffic_class = ip[1];
		peer->hop_limit = ip[8];
	} else {
		if (ernic_get16(frame + 12) != ETHERTYPE_IPV6 || ip[0] >> 4 != 6 ||
		    ip[6] != IPPROTO_UDP_NUM ||
		    ernic_get16(ip + 4) != UDP_LEN + tlen + ROCE_ICRC_LEN)
			return EINVAL;
		memcpy(src.addr, ip + 8, 16);
		peer->traffic_class = (uint8_t)(ernic_get32(ip) >> 20);
		peer->hop_limit = ip[7];
	}
	if (ernic_get16(udp + 2) != ROCE_UDP_PORT ||
	    ernic_get16(udp + 4) != UDP_LEN + tlen + ROCE_ICRC_LEN ||
	    bth[0] != ROCE_UD_SEND_ONLY || (bth[1] & 0x3F) != 0 ||
	    ernic_get24(bth + 5) != IB_QP1 || ernic_get32(bth + 12) != IB_QP1_QKEY)
		return EINVAL;
	ernic_ip_to_gid(&src, peer->gid);
	memcpy(peer->mac, frame + 6, 6);
	peer->udp_sport = (uint16_t)ernic_get16(udp);
	peer->pkey = (uint16_t)ernic_get16(bth + 2);
	peer->qpn = ernic_get24(bth + 17);
	memcpy(mad, bth + ROCE_BTH_LEN + ROCE_DETH_LEN, IB_MAD_SIZE);
	return 0;
}
