// SPDX-License-Identifier: MIT
/* ernicctl add's options for hardware ERNICs (hwopts.h). */
#include <net/if.h>
#include <stddef.h>

#include "cli.h"
#include "hwopts.h"

bool hw_opt(struct hw_opts *h, int opt, const char *v)
{
	const char **slot;

	switch (opt) {
	case 'a': slot = &h->addr; break;
	case 'M': slot = &h->mac; break;
	case 'N': slot = &h->netdev; break;
	case 'D': slot = &h->dma_map; break;
	case 'B': slot = &h->udmabuf; break;
	case 'b': slot = &h->bar; break;
	case 'o': slot = &h->offset; break;
	case 'r': slot = &h->uio_root; break;
	case 'S': slot = &h->share_mib; break;
	default: slot = &h->vfio_root; break;	/* 'R' */
	}
	if (*slot)
		return true;
	*slot = v;
	return false;
}

int hw_check(const struct hw_opts *h, bool wire)
{
	if (!h->dev) {
		if (h->addr || h->mac || h->netdev || h->dma_map || h->udmabuf ||
		    h->bar || h->offset || h->uio_root || h->vfio_root ||
		    h->share_mib)
			return usage_error("add: --addr, --mac, --netdev, "
					   "--dma-map, --udmabuf, --uio-root, "
					   "--bar, --offset, --vfio-root and "
					   "--share-mib are for --uio and "
					   "--vfio");
		return 0;
	}
	if (wire)
		return usage_error("add: --wire is for software ERNICs");
	if (!h->addr || !h->mac || !h->netdev)
		return usage_error("add: --%s needs --addr ADDR, --mac MAC and "
				   "--netdev NETDEV (the ERNIC's own address "
				   "and MAC, the host link on its network); "
				   "missing:%s%s%s", h->vfio ? "vfio" : "uio",
				   h->addr ? "" : " --addr",
				   h->mac ? "" : " --mac",
				   h->netdev ? "" : " --netdev");
	if (h->vfio && (h->dma_map || h->udmabuf || h->uio_root))
		return usage_error("add: --dma-map, --udmabuf and --uio-root are "
				   "for --uio");
	if (!h->vfio && (h->bar || h->offset || h->vfio_root || h->share_mib))
		return usage_error("add: --bar, --offset, --vfio-root and "
				   "--share-mib are for --vfio");
	if (h->dma_map && h->udmabuf)
		return usage_error("add: give --dma-map or --udmabuf, not both");
	return 0;
}

int hw_conf(const struct hw_opts *h, struct ernic_conf *conf,
	    struct ernic_ip *ip)
{
	const struct {
		const char *key, *val;
	} kv[] = {
		{ "backend", h->vfio ? "vfio" : "uio" },
		{ h->vfio ? "vfio" : "uio", h->dev },
		{ "mac", h->mac },
		{ "netdev", h->netdev },
		{ "dma_map", h->dma_map },
		{ "udmabuf", h->udmabuf },
		{ "vfio_bar", h->bar },
		{ "vfio_offset", h->offset },
		{ "uio_root", h->uio_root },
		{ "vfio_root", h->vfio_root },
		{ "vfio_share_mib", h->share_mib },
	};
	char err[256];

	for (size_t k = 0; k < sizeof(kv) / sizeof(kv[0]); k++)
		if (kv[k].val && ernic_conf_set_key(conf, kv[k].key, kv[k].val,
						    err, sizeof(err))) {
			fail_msg("%s", err);
			return 1;
		}
	if (ernic_ip_parse(h->addr, ip)) {
		fail_msg("'%s' is not an IPv4 or IPv6 address", h->addr);
		return 1;
	}
	if (!if_nametoindex(h->netdev)) {
		fail_msg("no netdev '%s' on this host", h->netdev);
		return 1;
	}
	return 0;
}
