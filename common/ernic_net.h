/* SPDX-License-Identifier: MIT */
/*
 * Host network facts through rtnetlink (libnl-route-3): which netdev owns
 * a local address, its MAC, MTU and state, and the Ethernet address of a
 * peer (route lookup, then the neighbour table).
 */
#ifndef ERNIC_NET_H
#define ERNIC_NET_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* An IPv4 or IPv6 address in network order (IPv4 in bytes 0..3). */
struct ernic_ip {
	int family;
	uint8_t addr[16];
};

/* Bytes of an address of family (AF_INET: 4, else 16). */
static inline size_t ernic_ip_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

/* Parse "127.0.0.2" / "::1" / "fd00::2". Returns 0 or EINVAL. */
int ernic_ip_parse(const char *text, struct ernic_ip *ip);
void ernic_ip_format(const struct ernic_ip *ip, char *buf, size_t len);
/* GID (IPv4-mapped for IPv4) <-> address */
void ernic_ip_to_gid(const struct ernic_ip *ip, uint8_t gid[16]);
void ernic_gid_to_ip(const uint8_t gid[16], struct ernic_ip *ip);
/* The sockaddr of addr (4 or 16 bytes by family) and port, zeroed first;
 * a link-local IPv6 address gets ifindex as its scope. Returns its
 * length. */
socklen_t ernic_sockaddr(struct sockaddr_storage *ss, int family,
			 const uint8_t *addr, uint16_t port,
			 unsigned int ifindex);

/*
 * The local netdev that receives packets for ip (the kernel's route
 * lookup says RTN_LOCAL), its MAC and ifindex. ENOENT with a reason in
 * err when ip is not an address of this host.
 */
int ernic_net_local_netdev(const struct ernic_ip *ip, char netdev[IF_NAMESIZE],
			   uint8_t mac[6], char *err, size_t errlen);

/* Netdev MTU and whether it is administratively and operationally up. */
int ernic_net_netdev_state(const char *netdev, uint32_t *mtu, bool *running);

/*
 * Ethernet address for a destination: a local destination gets the MAC of
 * the netdev that owns it; otherwise the route's next hop is looked up in
 * the neighbour table, prodding the kernel to resolve it and waiting up
 * to timeout_ms. EHOSTUNREACH (no route / unresolved) with reason in err.
 */
int ernic_net_resolve_mac(const struct ernic_ip *src, const struct ernic_ip *dst,
			  uint8_t mac[6], int timeout_ms, char *err,
			  size_t errlen);

#endif
