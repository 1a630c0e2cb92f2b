// SPDX-License-Identifier: MIT
/*
 * libernic-preload.so: ibv_create_comp_channel() for ERNIC devices.
 *
 * libibverbs 34-55 makes a completion channel by asking the kernel
 * (IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL written to the uverbs fd), and
 * an ERNIC device has no kernel driver behind that fd. `ernicctl env`
 * puts this library in LD_PRELOAD; it answers for contexts whose device
 * is driven by the ERNIC provider, with the provider's own channel
 * (ernicdv_create_comp_channel(), the same struct libibverbs makes), and
 * hands every other context to libibverbs unchanged. The rest of the
 * channel API (ibv_get_cq_event, ibv_ack_cq_events,
 * ibv_destroy_comp_channel) is libibverbs' own and works as it is.
 *
 * The provider is found from the device, not by name: a verbs_device
 * points at its provider's ops table, dladdr() names the object that
 * holds it, and that object, when it exports ernicdv_is_ernic_device()
 * and says yes, is ours. Nothing here links libibverbs: a program that
 * never calls ibv_create_comp_channel() never looks anything up.
 * (docs/cm.md, "Completion channels")
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <infiniband/verbs.h>

#include "ernic-pabi.h"

typedef struct ibv_comp_channel *(*create_channel_fn)(struct ibv_context *);
typedef bool (*is_ernic_fn)(struct ibv_device *);

__attribute__((visibility("default")))
struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context);

static create_channel_fn real_create;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

static void find_real(void)
{
	real_create = (create_channel_fn)dlvsym(RTLD_NEXT,
						"ibv_create_comp_channel",
						"IBVERBS_1.0");
	if (!real_create)
		real_create = (create_channel_fn)dlsym(RTLD_NEXT,
						       "ibv_create_comp_channel");
}

/* The ERNIC provider's channel maker if context is one of its devices. */
static create_channel_fn ernic_create_for(struct ibv_context *context)
{
	const struct verbs_device *vdev;
	create_channel_fn create = NULL;
	is_ernic_fn is_ernic;
	Dl_info info;
	void *h;

	if (!context || !context->device)
		return NULL;
	vdev = (const struct verbs_device *)context->device;
	if (!vdev->ops || !dladdr(vdev->ops, &info) || !info.dli_fname)
		return NULL;
	/* The provider is loaded (libibverbs holds it): take a reference
	 * for the lookup only. */
	h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return NULL;
	is_ernic = (is_ernic_fn)dlvsym(h, "ernicdv_is_ernic_device",
				       "ERNIC_1.0");
	if (is_ernic && is_ernic(context->device))
		create = (create_channel_fn)dlvsym(h,
				"ernicdv_create_comp_channel", "ERNIC_1.1");
	dlclose(h);
	return create;
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	create_channel_fn create = ernic_create_for(context);

	if (create)
		return create(context);
	pthread_once(&real_once, find_real);
	if (!real_create) {
		errno = ENOSYS;	/* preloaded into a program without libibverbs */
		return NULL;
	}
	return real_create(context);
}
