// SPDX-License-Identifier: MIT
/*
 * The ERNIC provider's ernicdv calls, found through a device: the
 * provider is whatever object holds the device's ops table (libibverbs
 * loaded it, from its driver directory or RDMAV_DRIVERS), and it is ours
 * when it exports ernicdv_is_ernic_device() and that says yes. Linking
 * the provider instead would load a second copy beside libibverbs' own.
 */
#include <dlfcn.h>
#include <errno.h>

#include "cma.h"
#include "ernic-pabi.h"

#define LOOKUP(h, dst, name, ver) \
	(*(void **)&(dst) = dlvsym(h, name, ver)) != NULL

int cma_dv_lookup(struct ibv_device *dev, struct cma_dv *dv)
{
	const struct verbs_device *vdev = (const struct verbs_device *)dev;
	Dl_info info;
	bool ok;
	void *h;

	if (!vdev->ops || !dladdr(vdev->ops, &info) || !info.dli_fname)
		return ENODEV;
	/* libibverbs holds the provider; this reference is for the lookup
	 * only, and the functions stay valid while libibverbs holds it. */
	h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return ENODEV;
	ok = LOOKUP(h, dv->is_ernic, "ernicdv_is_ernic_device", "ERNIC_1.0") &&
	     dv->is_ernic(dev) &&
	     LOOKUP(h, dv->create_comp_channel, "ernicdv_create_comp_channel",
		    "ERNIC_1.1") &&
	     LOOKUP(h, dv->agent_create, "ernicdv_mad_agent_create", "ERNIC_1.3") &&
	     LOOKUP(h, dv->agent_destroy, "ernicdv_mad_agent_destroy",
		    "ERNIC_1.3") &&
	     LOOKUP(h, dv->agent_fd, "ernicdv_mad_agent_fd", "ERNIC_1.3") &&
	     LOOKUP(h, dv->mad_send, "ernicdv_mad_send", "ERNIC_1.3") &&
	     LOOKUP(h, dv->mad_recv, "ernicdv_mad_recv", "ERNIC_1.3") &&
	     LOOKUP(h, dv->qp_state, "ernicdv_query_qp_state", "ERNIC_1.4");
	/* Optional: sharing a device between processes. */
	if (ok && !(LOOKUP(h, dv->agent_query, "ernicdv_mad_agent_query",
			   "ERNIC_1.5") &&
		    LOOKUP(h, dv->claim_service, "ernicdv_mad_claim_service",
			   "ERNIC_1.5") &&
		    LOOKUP(h, dv->release_service,
			   "ernicdv_mad_release_service", "ERNIC_1.5")))
		dv->agent_query = NULL;
	dlclose(h);
	return ok ? 0 : ENODEV;
}
