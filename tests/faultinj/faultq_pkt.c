// SPDX-License-Identifier: MIT
/*
 * Packet surgery for ernic_faultq: find the UDP payload (BTH .. ICRC),
 * flip a bit there, make the UDP checksum right again, and send whole
 * IP packets (duplicates) through raw sockets.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "ernic_wire.h"
#include "faultq.h"

#ifndef IPV6_HDRINCL
#define IPV6_HDRINCL 36		/* linux/in6.h; glibc lacks it */
#endif

/* IPv6 extension headers we can walk over to reach UDP. */
static int ipv6_udp(const uint8_t *pkt, size_t len, size_t *off)
{
	uint8_t nh = pkt[6];
	size_t o = 40;

	for (int i = 0; i < 8; i++) {
		if (nh == IPPROTO_UDP) {
			*off = o;
			return 0;
		}
		/* a fragment holds part of the datagram: leave it alone */
		if (nh != IPPROTO_HOPOPTS && nh != IPPROTO_ROUTING &&
		    nh != IPPROTO_DSTOPTS)
			return -1;
		if (o + 8 > len)
			return -1;
		nh = pkt[o];
		o += ((size_t)pkt[o + 1] + 1) * 8;
	}
	return -1;
}

int fq_parse_udp(const uint8_t *pkt, size_t len, struct fq_udp *u)
{
	size_t end, o;
	uint16_t ulen;

	memset(u, 0, sizeof(*u));
	if (len < 1)
		return -1;
	if (pkt[0] >> 4 == 4) {
		size_t ihl = (size_t)(pkt[0] & 15) * 4;

		if (len < 20 || ihl < 20 || pkt[9] != IPPROTO_UDP)
			return -1;
		end = ernic_get16(pkt + 2);
		/* offset or more-fragments: not a whole datagram */
		if (end > len || (ernic_get16(pkt + 6) & 0x3fff))
			return -1;
		u->family = AF_INET;
		o = ihl;
	} else if (pkt[0] >> 4 == 6) {
		if (len < 40)
			return -1;
		end = 40 + (size_t)ernic_get16(pkt + 4);
		if (end > len || ipv6_udp(pkt, end, &o))
			return -1;
		u->family = AF_INET6;
	} else {
		return -1;
	}
	if (o + 8 > end)
		return -1;
	ulen = ernic_get16(pkt + o + 4);
	if (ulen < 8 || o + ulen > end)
		return -1;
	u->udp = o;
	u->payload = o + 8;
	u->plen = ulen - 8u;
	u->dport = ernic_get16(pkt + o + 2);
	return 0;
}

void fq_udp_fix_csum(uint8_t *pkt, const struct fq_udp *u)
{
	uint8_t *udp = pkt + u->udp;
	size_t ulen = u->plen + 8;
	uint32_t s;
	uint16_t c;

	if (u->family == AF_INET) {
		if (!udp[6] && !udp[7])
			return;	/* the sender sent none: still none */
		s = ernic_csum_add(0, pkt + 12, 8);
	} else {
		s = ernic_csum_add(0, pkt + 8, 32);
	}
	s += IPPROTO_UDP + (uint32_t)ulen;
	udp[6] = udp[7] = 0;
	c = ernic_csum_fold(ernic_csum_add(s, udp, ulen));
	if (!c)
		c = 0xffff;	/* 0 would mean "no checksum" */
	udp[6] = (uint8_t)(c >> 8);
	udp[7] = (uint8_t)c;
}

int fq_flip_bit(uint8_t *pkt, const struct fq_udp *u, uint64_t rnd,
		size_t *byte, uint8_t *mask)
{
	/* resv8a is masked out of the ICRC: a flip there is invisible */
	int skip = u->plen > BTH_RESV8A;
	uint64_t nbits = (uint64_t)(u->plen - (size_t)skip) * 8;
	size_t b;

	if (!nbits)
		return -1;
	rnd %= nbits;
	b = (size_t)(rnd / 8);
	if (skip && b >= BTH_RESV8A)
		b++;
	*byte = b;
	*mask = (uint8_t)(1u << (rnd % 8));
	pkt[u->payload + b] ^= *mask;
	return 0;
}

int fq_raw_open(struct fq_raw *r, uint32_t mark, char *err, size_t errlen)
{
	int one = 1;

	r->fd6 = -1;
	r->fd4 = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (r->fd4 < 0 ||
	    setsockopt(r->fd4, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)) ||
	    setsockopt(r->fd4, SOL_SOCKET, SO_MARK, &mark, sizeof(mark))) {
		snprintf(err, errlen, "raw IPv4 socket with SO_MARK: %s",
			 strerror(errno));
		fq_raw_close(r);
		return -1;
	}
	/* A host without IPv6 only cannot copy IPv6 packets. */
	r->fd6 = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (r->fd6 >= 0 &&
	    (setsockopt(r->fd6, IPPROTO_IPV6, IPV6_HDRINCL, &one, sizeof(one)) ||
	     setsockopt(r->fd6, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)))) {
		snprintf(err, errlen, "raw IPv6 socket with SO_MARK: %s",
			 strerror(errno));
		fq_raw_close(r);
		return -1;
	}
	return 0;
}

void fq_raw_close(struct fq_raw *r)
{
	if (r->fd4 >= 0)
		close(r->fd4);
	if (r->fd6 >= 0)
		close(r->fd6);
	r->fd4 = r->fd6 = -1;
}

int fq_raw_send(const struct fq_raw *r, const uint8_t *pkt, size_t len,
		uint32_t ifindex)
{
	ssize_t n;

	if (len >= 20 && pkt[0] >> 4 == 4) {
		struct sockaddr_in sin = { .sin_family = AF_INET };

		/*
		 * The kernel keeps our header; it fills in only an IP ID
		 * of 0 and then keeps 0 for DF packets, as RoCEv2's are.
		 */
		memcpy(&sin.sin_addr, pkt + 16, 4);
		n = sendto(r->fd4, pkt, len, 0, (struct sockaddr *)&sin,
			   sizeof(sin));
	} else if (len >= 40 && pkt[0] >> 4 == 6 && r->fd6 >= 0) {
		struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };

		memcpy(&sin6.sin6_addr, pkt + 24, 16);
		if (IN6_IS_ADDR_LINKLOCAL(&sin6.sin6_addr))
			sin6.sin6_scope_id = ifindex;
		n = sendto(r->fd6, pkt, len, 0, (struct sockaddr *)&sin6,
			   sizeof(sin6));
	} else {
		return -EAFNOSUPPORT;
	}
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EMSGSIZE;
}
