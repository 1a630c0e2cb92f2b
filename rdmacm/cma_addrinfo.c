// SPDX-License-Identifier: MIT
/*
 * rdma_getaddrinfo(): getaddrinfo(3) for rdma_cm. Names are resolved by
 * the C library; the result is one address (the first IPv4 or IPv6 one)
 * for RC on RDMA_PS_TCP unless the hints say otherwise, passive (a
 * source address to bind) with RAI_PASSIVE, active (a destination, and
 * the hints' source if any) without.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "cma.h"

static struct sockaddr *dup_sa(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *c = malloc(len);

	if (c)
		memcpy(c, sa, len);
	return c;
}

CMA_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = next;
	}
}

static int gai_to_errno(int gai)
{
	switch (gai) {
	case EAI_MEMORY:
		return ENOMEM;
	case EAI_FAMILY:
		return EAFNOSUPPORT;
	case EAI_SYSTEM:
		return errno;
	default:
		return EADDRNOTAVAIL;
	}
}

CMA_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
				const struct rdma_addrinfo *hints,
				struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_socktype = SOCK_STREAM }, *ai = NULL, *a;
	struct rdma_addrinfo *r;
	int ret;

	if (!res || (!node && !service))
		return cma_ret(EINVAL);
	if (hints) {
		if (hints->ai_qp_type && hints->ai_qp_type != IBV_QPT_RC) {
			cma_err("rdma_getaddrinfo: ERNIC has only RC QPs");
			return cma_ret(EOPNOTSUPP);
		}
		if (hints->ai_port_space && hints->ai_port_space != RDMA_PS_TCP &&
		    hints->ai_port_space != RDMA_PS_IB)
			return cma_ret(EPROTONOSUPPORT);
		if (hints->ai_flags & RAI_PASSIVE)
			h.ai_flags |= AI_PASSIVE;
		if (hints->ai_flags & RAI_NUMERICHOST)
			h.ai_flags |= AI_NUMERICHOST;
		if (hints->ai_flags & RAI_FAMILY)
			h.ai_family = hints->ai_family;
	}
	ret = getaddrinfo(node, service, &h, &ai);
	if (ret)
		return cma_ret(gai_to_errno(ret));
	for (a = ai; a; a = a->ai_next)
		if (a->ai_family == AF_INET || a->ai_family == AF_INET6)
			break;
	if (!a) {
		freeaddrinfo(ai);
		return cma_ret(EADDRNOTAVAIL);
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		freeaddrinfo(ai);
		return cma_ret(ENOMEM);
	}
	r->ai_flags = hints ? hints->ai_flags : 0;
	r->ai_family = a->ai_family;
	r->ai_qp_type = IBV_QPT_RC;
	r->ai_port_space = hints && hints->ai_port_space ? hints->ai_port_space :
							  RDMA_PS_TCP;
	if (r->ai_flags & RAI_PASSIVE) {
		r->ai_src_addr = dup_sa(a->ai_addr, a->ai_addrlen);
		r->ai_src_len = a->ai_addrlen;
	} else {
		r->ai_dst_addr = dup_sa(a->ai_addr, a->ai_addrlen);
		r->ai_dst_len = a->ai_addrlen;
		if (hints && hints->ai_src_addr && hints->ai_src_len) {
			r->ai_src_addr = dup_sa(hints->ai_src_addr,
						hints->ai_src_len);
			r->ai_src_len = hints->ai_src_len;
		}
	}
	freeaddrinfo(ai);
	if ((r->ai_src_len && !r->ai_src_addr) ||
	    (r->ai_dst_len && !r->ai_dst_addr)) {
		rdma_freeaddrinfo(r);
		return cma_ret(ENOMEM);
	}
	*res = r;
	return 0;
}
