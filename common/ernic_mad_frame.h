/* SPDX-License-Identifier: MIT */
/*
 * QP1 frames as software builds and reads them on an ERNIC (ernic_hw.h,
 * "QP1 carries MADs"): Ethernet, IPv4 or IPv6, UDP, BTH (UD SEND_ONLY),
 * DETH and one 256-byte MAD, or a CNP; the IP adds the ICRC. Pure functions over
 * byte buffers; a received frame is hostile and every field is checked.
 */
#ifndef ERNIC_MAD_FRAME_H
#define ERNIC_MAD_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* Our end: the device's address, MAC and RoCE UDP source port. */
struct ernic_mad_frame_src {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];	/* network order; IPv4 in addr[0..3] */
	uint8_t mac[6];
	uint16_t udp_sport;
};

/* The other end of one MAD. */
struct ernic_mad_peer {
	uint8_t gid[16];	/* ::ffff:a.b.c.d or an IPv6 address */
	uint8_t mac[6];
	uint16_t udp_sport;	/* received: the sender's UDP source port */
	uint32_t qpn;		/* send: destination QP; received: DETH source */
	uint16_t pkey;		/* BTH P_Key; 0 on send means 0xFFFF */
	uint8_t hop_limit;	/* IPv4 TTL / IPv6 hop limit; 0: 64 */
	uint8_t traffic_class;
};

/* The largest frame (IPv6), without the ICRC the IP appends. */
#define ERNIC_MAD_FRAME_MAX (14u + 40u + 8u + 12u + 8u + 256u)

/*
 * Build the frame for one MAD from src to peer into buf. IP and UDP
 * lengths count the ICRC; IPv4 goes with DF, ID 0 and its checksum,
 * IPv6 with a zero UDP checksum (RoCEv2 relies on the ICRC, A17.3.1).
 * Returns its length, or 0 when it does not fit in cap or peer's GID is
 * not of src's family.
 */
uint32_t ernic_mad_frame_build(uint8_t *buf, size_t cap,
			       const struct ernic_mad_frame_src *src,
			       const struct ernic_mad_peer *peer, uint32_t psn,
			       const uint8_t *mad);

/*
 * A RoCEv2 CNP (A17.9) from src to peer->qpn, for QP1 to send: the same
 * headers, a BTH with BECN set and PSN 0, 16 reserved bytes. Returns its
 * length, or 0 as ernic_mad_frame_build.
 */
uint32_t ernic_cnp_frame_build(uint8_t *buf, size_t cap,
			       const struct ernic_mad_frame_src *src,
			       const struct ernic_mad_peer *peer);

/*
 * Read a frame stored by QP1 (len bytes, no ICRC): its sender into
 * *peer and the MAD into mad (256 bytes). 0, or EINVAL for anything
 * that is not exactly a RoCEv2 UD SEND_ONLY of the family to QP1 with
 * the GSI Q_Key and one MAD.
 */
int ernic_mad_frame_parse(const uint8_t *frame, size_t len, int family,
			  struct ernic_mad_peer *peer, uint8_t *mad);

#endif
