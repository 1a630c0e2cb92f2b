// SPDX-License-Identifier: MIT
/*
 * Host network facts through rtnetlink. Everything asks the kernel of the
 * calling thread's network namespace, so it works unchanged inside one.
 */
#include "ernic_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <netlink/addr.h>
#include <netlink/cache.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/neighbour.h>
#include <netlink/route/nexthop.h>
#include <netlink/route/route.h>
#include <netlink/route/rtnl.h>
#include <netlink/socket.h>

#define ERNIC_DISCARD_PORT 9	/* RFC 863: nobody minds a stray datagram */
#define ERNIC_NEIGH_POLL_MS 10

static const uint8_t v4mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0,
					    0, 0, 0xff, 0xff};

int ernic_ip_parse(const char *text, struct ernic_ip *ip)
{
	uint8_t buf[16];

	memset(ip, 0, sizeof(*ip));
	if (!text || !*text)
		return EINVAL;
	if (inet_pton(AF_INET, text, buf) == 1) {
		ip->family = AF_INET;
		memcpy(ip->addr, buf, 4);
		return 0;
	}
	if (inet_pton(AF_INET6, text, buf) == 1) {
		/* One address, one spelling: ::ffff:a.b.c.d is IPv4. */
		ernic_gid_to_ip(buf, ip);
		return 0;
	}
	return EINVAL;
}

void ernic_ip_format(const struct ernic_ip *ip, char *buf, size_t len)
{
	if (!len)
		return;
	if ((ip->family != AF_INET && ip->family != AF_INET6) ||
	    !inet_ntop(ip->family, ip->addr, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

void ernic_ip_to_gid(const struct ernic_ip *ip, uint8_t gid[16])
{
	if (ip->family == AF_INET) {
		memcpy(gid, v4mapped_prefix, sizeof(v4mapped_prefix));
		memcpy(gid + 12, ip->addr, 4);
	} else {
		memcpy(gid, ip->addr, 16);
	}
}

void ernic_gid_to_ip(const uint8_t gid[16], struct ernic_ip *ip)
{
	memset(ip, 0, sizeof(*ip));
	if (!memcmp(gid, v4mapped_prefix, sizeof(v4mapped_prefix))) {
		ip->family = AF_INET;
		memcpy(ip->addr, gid + 12, 4);
	} else {
		ip->family = AF_INET6;
		memcpy(ip->addr, gid, 16);
	}
}

static int nl_open(struct nl_sock **out)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk)
		return ENOMEM;
	if (nl_connect(sk, NETLINK_ROUTE) < 0) {
		nl_socket_free(sk);
		return EIO;
	}
	*out = sk;
	return 0;
}

struct route_query {
	struct rtnl_route *route;
	int error;	/* errno the kernel answered with */
};

static int route_reply(struct nl_msg *msg, void *arg)
{
	struct route_query *q = arg;

	if (!q->route && rtnl_route_parse(nlmsg_hdr(msg), &q->route) < 0)
		q->route = NULL;
	return NL_OK;
}

static int route_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct route_query *q = arg;

	q->error = -e->error;
	return NL_STOP;
}

/*
 * RTM_GETROUTE for one destination, the question `ip route get` asks:
 * the kernel answers with the route a packet would take (type, oif,
 * gateway), not a table dump. Returns 0, or the kernel's errno
 * (ENETUNREACH: no route; blackhole, unreachable and prohibit routes
 * answer EINVAL, EHOSTUNREACH and EACCES).
 */
static int route_get(struct nl_sock *sk, const struct ernic_ip *dst,
		     struct rtnl_route **out)
{
	struct rtmsg rtm = {
		.rtm_family = (unsigned char)dst->family,
		.rtm_dst_len = (unsigned char)(ernic_ip_len(dst->family) * 8),
	};
	struct route_query q = {0};
	struct nl_msg *msg;
	int rc;

	msg = nlmsg_alloc_simple(RTM_GETROUTE, 0);
	if (!msg)
		return ENOMEM;
	if (nlmsg_append(msg, &rtm, sizeof(rtm), NLMSG_ALIGNTO) < 0 ||
	    nla_put(msg, RTA_DST, (int)ernic_ip_len(dst->family), dst->addr) < 0) {
		nlmsg_free(msg);
		return ENOMEM;
	}
	/* No ACK: a reply or an error ends the exchange. */
	nl_socket_disable_auto_ack(sk);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, route_reply, &q);
	nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, route_error, &q);
	rc = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (rc >= 0)
		rc = nl_recvmsgs_default(sk);
	/* The callbacks point at this frame: detach them. */
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_DEFAULT, NULL, NULL);
	nl_socket_modify_err_cb(sk, NL_CB_DEFAULT, NULL, NULL);
	if (q.route && !q.error && rc >= 0) {
		*out = q.route;
		return 0;
	}
	if (q.route)
		rtnl_route_put(q.route);
	return q.error ? q.error : EIO;
}

static struct rtnl_nexthop *route_nh(struct rtnl_route *route)
{
	return rtnl_route_get_nnexthops(route) > 0 ?
		       rtnl_route_nexthop_n(route, 0) : NULL;
}

static bool nl_addr_is(struct nl_addr *a, const struct ernic_ip *ip)
{
	return a && nl_addr_get_family(a) == ip->family &&
	       nl_addr_get_len(a) == ernic_ip_len(ip->family) &&
	       !memcmp(nl_addr_get_binary_addr(a), ip->addr,
		       ernic_ip_len(ip->family));
}

/*
 * ifindex of the netdev carrying ip. Local routes always point at `lo`
 * (the kernel delivers them there), so the owner is found in the
 * address list; addresses that are local only by prefix (127.0.0.2 in
 * 127/8, AnyIP routes) belong to the route's interface.
 */
static int local_owner(struct nl_sock *sk, const struct ernic_ip *ip,
		       struct rtnl_route *route)
{
	struct rtnl_nexthop *nh = route_nh(route);
	int ifindex = nh ? rtnl_route_nh_get_ifindex(nh) : 0;
	struct nl_cache *cache;
	struct nl_object *obj;

	if (rtnl_addr_alloc_cache(sk, &cache) < 0)
		return ifindex;
	for (obj = nl_cache_get_first(cache); obj; obj = nl_cache_get_next(obj)) {
		struct rtnl_addr *a = (struct rtnl_addr *)obj;

		if (nl_addr_is(rtnl_addr_get_local(a), ip)) {
			ifindex = rtnl_addr_get_ifindex(a);
			break;
		}
	}
	nl_cache_free(cache);
	return ifindex;
}

/* Name and MAC of a netdev; a device without a 6-byte address (none
 * should reach here) reports all zeros, as `lo` does. */
static int link_info(struct nl_sock *sk, int ifindex, const char *name,
		     char netdev[IF_NAMESIZE], uint8_t mac[6], uint32_t *mtu,
		     unsigned int *flags)
{
	struct rtnl_link *link;
	struct nl_addr *lladdr;

	if (rtnl_link_get_kernel(sk, ifindex, name, &link) < 0)
		return ENODEV;
	if (netdev)
		snprintf(netdev, IF_NAMESIZE, "%s", rtnl_link_get_name(link));
	if (mac) {
		lladdr = rtnl_link_get_addr(link);
		memset(mac, 0, 6);
		if (lladdr && nl_addr_get_len(lladdr) == 6)
			memcpy(mac, nl_addr_get_binary_addr(lladdr), 6);
	}
	if (mtu)
		*mtu = rtnl_link_get_mtu(link);
	if (flags)
		*flags = rtnl_link_get_flags(link);
	rtnl_link_put(link);
	return 0;
}

/* Common start of a query: a printable address and an rtnetlink socket. */
static int net_begin(const struct ernic_ip *ip, char text[INET6_ADDRSTRLEN],
		     struct nl_sock **sk, char *err, size_t errlen)
{
	int rc;

	ernic_ip_format(ip, text, INET6_ADDRSTRLEN);
	if (ip->family != AF_INET && ip->family != AF_INET6) {
		snprintf(err, errlen, "not an IP address");
		return EINVAL;
	}
	rc = nl_open(sk);
	if (rc)
		snprintf(err, errlen, "cannot open an rtnetlink socket");
	return rc;
}

int ernic_net_local_netdev(const struct ernic_ip *ip, char netdev[IF_NAMESIZE],
			   uint8_t mac[6], char *err, size_t errlen)
{
	struct rtnl_route *route = NULL;
	char text[INET6_ADDRSTRLEN];
	struct nl_sock *sk;
	int rc;

	rc = net_begin(ip, text, &sk, err, errlen);
	if (rc)
		return rc;
	if (route_get(sk, ip, &route) ||
	    rtnl_route_get_type(route) != RTN_LOCAL) {
		snprintf(err, errlen, "%s is not an address of this host", text);
		rc = ENOENT;
		goto out;
	}
	rc = link_info(sk, local_owner(sk, ip, route), NULL, netdev, mac, NULL,
		       NULL);
	if (rc)
		snprintf(err, errlen, "cannot find the netdev owning %s", text);
out:
	if (route)
		rtnl_route_put(route);
	nl_socket_free(sk);
	return rc;
}

int ernic_net_netdev_state(const char *netdev, uint32_t *mtu, bool *running)
{
	struct nl_sock *sk;
	unsigned int flags = 0;
	int rc;

	if (!netdev || !*netdev || strlen(netdev) >= IF_NAMESIZE)
		return EINVAL;
	rc = nl_open(&sk);
	if (rc)
		return rc;
	rc = link_info(sk, 0, netdev, NULL, NULL, mtu, &flags);
	nl_socket_free(sk);
	if (rc)
		return rc;
	/* Not operstate: `lo` reports UNKNOWN there yet carries traffic. */
	*running = (flags & IFF_UP) && (flags & IFF_RUNNING);
	return 0;
}

static bool neigh_usable(int state)
{
	return state & (NUD_REACHABLE | NUD_STALE | NUD_PERMANENT | NUD_DELAY |
			NUD_PROBE);
}

/* Look the next hop up in the neighbour cache (refilled by the caller). */
static bool neigh_lookup(struct nl_cache *cache, int ifindex,
			 struct nl_addr *hop, uint8_t mac[6])
{
	struct rtnl_neigh *n = rtnl_neigh_get(cache, ifindex, hop);
	struct nl_addr *lladdr;
	bool ok = false;

	if (!n)
		return false;
	lladdr = rtnl_neigh_get_lladdr(n);
	if (neigh_usable(rtnl_neigh_get_state(n)) && lladdr &&
	    nl_addr_get_len(lladdr) == 6) {
		memcpy(mac, nl_addr_get_binary_addr(lladdr), 6);
		ok = true;
	}
	rtnl_neigh_put(n);
	return ok;
}

/*
 * Make the kernel resolve the next hop: any datagram routed to it starts
 * ARP / neighbour discovery. Best effort; polling decides the outcome.
 */
socklen_t ernic_sockaddr(struct sockaddr_storage *ss, int family,
			 const uint8_t *addr, uint16_t port,
			 unsigned int ifindex)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, addr, 4);
		return sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, addr, 16);
		/* fe80::/10 means nothing without its link (the kernel
		 * looks at a scope only there) */
		if (IN6_IS_ADDR_LINKLOCAL(&sin6->sin6_addr))
			sin6->sin6_scope_id = ifindex;
		return sizeof(*sin6);
	}
}

static void prod_neighbour(const struct ernic_ip *src, struct nl_addr *hop,
			   int ifindex)
{
	struct sockaddr_storage from, to;
	int family = nl_addr_get_family(hop);
	socklen_t len;
	int fd;

	/* Gateways are usually link-local: their link is said. */
	len = ernic_sockaddr(&to, family, nl_addr_get_binary_addr(hop),
			     ERNIC_DISCARD_PORT, (unsigned int)ifindex);
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return;
	if (src->family == family)
		(void)bind(fd, (struct sockaddr *)&from,
			   ernic_sockaddr(&from, family, src->addr, 0,
					  (unsigned int)ifindex));
	(void)sendto(fd, "", 0, MSG_DONTWAIT, (struct sockaddr *)&to, len);
	close(fd);
}

static long elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000 +
	       (now.tv_nsec - start->tv_nsec) / 1000000;
}

static int resolve_hop(struct nl_sock *sk, const struct ernic_ip *src,
		       struct rtnl_route *route, const struct ernic_ip *dst,
		       uint8_t mac[6], int timeout_ms, char *err, size_t errlen)
{
	struct rtnl_nexthop *nh = route_nh(route);
	char dtext[INET6_ADDRSTRLEN], htext[INET6_ADDRSTRLEN];
	char ifname[IF_NAMESIZE] = "?";
	struct nl_cache *cache = NULL;
	struct nl_addr *gw, *hop;
	struct timespec start;
	int ifindex, rc = EHOSTUNREACH;
	bool prodded = false;

	ernic_ip_format(dst, dtext, sizeof(dtext));
	ifindex = nh ? rtnl_route_nh_get_ifindex(nh) : 0;
	if (!ifindex) {
		snprintf(err, errlen, "route to %s has no output interface",
			 dtext);
		return EHOSTUNREACH;
	}
	gw = rtnl_route_nh_get_gateway(nh);
	hop = gw ? nl_addr_clone(gw) :
		   nl_addr_build(dst->family, dst->addr, ernic_ip_len(dst->family));
	if (!hop) {
		snprintf(err, errlen, "out of memory");
		return ENOMEM;
	}
	nl_addr2str(hop, htext, sizeof(htext));
	link_info(sk, ifindex, NULL, ifname, NULL, NULL, NULL);
	if (rtnl_neigh_alloc_cache(sk, &cache) < 0) {
		snprintf(err, errlen, "cannot read the neighbour table");
		rc = EIO;
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (neigh_lookup(cache, ifindex, hop, mac)) {
			rc = 0;
			break;
		}
		if (!prodded) {
			prod_neighbour(src, hop, ifindex);
			prodded = true;
		}
		if (elapsed_ms(&start) >= timeout_ms)
			break;
		poll(NULL, 0, ERNIC_NEIGH_POLL_MS);
		if (nl_cache_refill(sk, cache) < 0)
			break;
	}
	if (rc)
		snprintf(err, errlen,
			 "%s: next hop %s on %s did not resolve within %d ms",
			 dtext, htext, ifname, timeout_ms);
out:
	if (cache)
		nl_cache_free(cache);
	nl_addr_put(hop);
	return rc;
}

int ernic_net_resolve_mac(const struct ernic_ip *src, const struct ernic_ip *dst,
			  uint8_t mac[6], int timeout_ms, char *err,
			  size_t errlen)
{
	struct rtnl_route *route = NULL;
	char text[INET6_ADDRSTRLEN];
	struct nl_sock *sk;
	int rc;

	rc = net_begin(dst, text, &sk, err, errlen);
	if (rc)
		return rc;
	rc = route_get(sk, dst, &route);
	if (rc) {
		snprintf(err, errlen, "no route to %s (%s)", text, strerror(rc));
		rc = EHOSTUNREACH;
		goto out;
	}
	switch (rtnl_route_get_type(route)) {
	case RTN_LOCAL:
		/* Loopback traffic: the peer is this host's own netdev. */
		rc = link_info(sk, local_owner(sk, dst, route), NULL, NULL, mac,
			       NULL, NULL);
		if (rc)
			snprintf(err, errlen, "cannot find the netdev owning %s",
				 text);
		break;
	case RTN_UNICAST:
		rc = resolve_hop(sk, src, route, dst, mac, timeout_ms, err,
				 errlen);
		break;
	default: {
		char type[32];

		nl_rtntype2str(rtnl_route_get_type(route), type, sizeof(type));
		snprintf(err, errlen, "%s is not a unicast destination (%s)",
			 text, type);
		rc = EHOSTUNREACH;
		break;
	}
	}
out:
	if (route)
		rtnl_route_put(route);
	nl_socket_free(sk);
	return rc;
}
