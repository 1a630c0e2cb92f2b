/* SPDX-License-Identifier: MIT */
/*
 * ernicctl add --uio / --vfio: an ERNIC the host cannot see as a netdev
 * of its own. Its address and MAC are given; --netdev names the host link
 * on its network (neighbour resolution, port state).
 */
#ifndef ERNIC_HWOPTS_H
#define ERNIC_HWOPTS_H

#include <stdbool.h>

#include "ernic_conf.h"
#include "ernic_net.h"

struct hw_opts {
	const char *dev;		/* --uio DEV or --vfio BDF */
	bool vfio;
	const char *addr, *mac, *netdev, *dma_map, *udmabuf, *bar, *offset,
		*uio_root, *vfio_root, *share_mib;
};

/* Remember option opt (its short letter in ernicctl's add) with value v;
 * true if it was given before. */
bool hw_opt(struct hw_opts *h, int opt, const char *v);

/* Which options go with which device (wire: --wire was given): 0 or a
 * usage error (EXIT_USAGE after its message). */
int hw_check(const struct hw_opts *h, bool wire);

/* Fill conf and ip from h through ernic.conf's own checks. 0, or 1 after
 * a message. */
int hw_conf(const struct hw_opts *h, struct ernic_conf *conf,
	    struct ernic_ip *ip);

#endif
