// SPDX-License-Identifier: MIT
/*
 * Port state async events: the ERNIC's port is the Ethernet link of the
 * netdev it shares (query_port reports that netdev's state), so a change
 * of that link is IBV_EVENT_PORT_ACTIVE or IBV_EVENT_PORT_ERR on every
 * open context's async_fd, as the kernel sends them for a RoCE port.
 *
 * The interrupt thread (ernic_event.c) polls an rtnetlink socket that
 * hears of every link change in the namespace; the message is only a
 * hint, the state is read again through ernic_net as query_port does.
 */
#include <errno.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ernic.h"
#include "ernic_net.h"

static bool port_up(struct ernic_dev *dev)
{
	uint32_t mtu = 0;
	bool running = false;

	if (ernic_net_netdev_state(dev->conf.netdev, &mtu, &running))
		return false;
	return running;
}

int ernic_port_watch_open(struct ernic_dev *dev)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
				  .nl_groups = RTMGRP_LINK };
	int fd;

	dev->port_up = port_up(dev);
	if (!dev->conf.netdev[0])
		return -1;	/* no netdev, no link to follow */
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    NETLINK_ROUTE);
	if (fd < 0)
		goto fail;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		goto fail;
	}
	return fd;
fail:
	ernic_log("%s: no port events: rtnetlink: %s", dev->conf.name,
		  strerror(errno));
	return -1;
}

/* The socket is readable: drain it, then compare. Caller: the interrupt
 * thread, without ev_lock. */
void ernic_port_changed(struct ernic_dev *dev, int fd)
{
	char buf[8192];
	bool up;

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		/* ENOBUFS: messages were lost; the state is read anyway. */
		if (n > 0 || (n < 0 && errno == ENOBUFS))
			continue;
		break;
	}
	up = port_up(dev);
	if (up == dev->port_up)
		return;
	dev->port_up = up;
	ernic_events_port(dev, up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR);
}

int ernic_peer_mac(struct ernic_dev *dev, const struct ernic_ip *dst,
		   uint8_t mac[6], const char *who)
{
	struct ernic_ip src = { .family = dev->conf.family };
	char err[256];
	int ret;

	memcpy(src.addr, dev->conf.addr, sizeof(src.addr));
	ret = ernic_net_resolve_mac(&src, dst, mac, ERNIC_NEIGH_TIMEOUT_MS, err,
				    sizeof(err));
	if (ret)
		ernic_log("%s: %s: %s", dev->vdev.device.name, who, err);
	return ret;
}
