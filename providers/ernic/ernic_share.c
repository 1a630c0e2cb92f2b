// SPDX-License-Identifier: MIT
/*
 * Device-wide allocation (docs/multiprocess.md): QP numbers, PD-table
 * slots with their key generations, and PD numbers come from the
 * device's state file (common/ernic_devstate.c), which every process
 * that opens the device maps, so that processes sharing a device never
 * hand out the same one. This process takes a slot in it when it starts
 * the device and gives it back, with everything it still owns, when it
 * stops it; a process that dies without doing so is reclaimed by
 * whoever next finds the table full or attaches.
 *
 * Lock contract: callers hold dev->lock; these take the state file's lock
 * inside it (dev->lock, then the file's), for one allocation each.
 * ernic_share_service needs no dev->lock.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ernic.h"

int ernic_share_start(struct ernic_dev *dev, char *err, size_t errlen)
{
	char path[sizeof(dev->conf_path) + sizeof(ERNIC_DS_FILE)];
	const char *slash = strrchr(dev->conf_path, '/');
	int ret, slot;

	/* beside ernic.conf, in the device's directory of the overlay */
	snprintf(path, sizeof(path), "%.*s/%s",
		 slash ? (int)(slash - dev->conf_path) : 1,
		 slash ? dev->conf_path : ".", ERNIC_DS_FILE);
	ret = ernic_ds_open(&dev->ds, path, err, errlen);
	/* A user who may use the device but not write its directory (made
	 * by root) uses it alone, as before devices were shared — unless a
	 * broker shares it: its clients allocate in the file. */
	if ((ret == EACCES || ret == EPERM || ret == EROFS) &&
	    dev->hw_role == ERNIC_HW_CLIENT) {
		snprintf(err, errlen, "the device is shared through its "
			 "broker, which needs each process to write %s: %s",
			 path, strerror(ret));
		return ret;
	}
	if (ret == EACCES || ret == EPERM || ret == EROFS) {
		if (ernic_log_level >= ERNIC_LOG_DEBUG)
			ernic_log("%s: %s: using the device alone",
				  dev->vdev.device.name, err);
		ret = ernic_ds_open_private(&dev->ds);
		path[0] = '\0';
		if (ret)
			snprintf(err, errlen, "private state: %s",
				 strerror(ret));
	}
	if (ret)
		return ret;
	ret = ernic_ds_lock(&dev->ds, NULL, NULL);
	if (!ret) {
		ernic_ds_reap(dev->ds.ds, NULL, NULL);
		slot = ernic_ds_attach(dev->ds.ds, getpid());
		ernic_ds_unlock(&dev->ds);
		if (slot < 0) {
			ret = -slot;
			snprintf(err, errlen, "state file %s: %s", path,
				 slot == -ENOSPC ? "all process slots taken" :
						   strerror(ret));
		}
	} else {
		snprintf(err, errlen, "state file %s: lock: %s", path,
			 strerror(ret));
	}
	if (ret) {
		ernic_ds_close(&dev->ds);
		return ret;
	}
	dev->ds_slot = (uint32_t)slot;
	/* Only the broker sees a client die, and it must clean the IP
	 * before the client's numbers go to someone else. */
	if (dev->hw_role == ERNIC_HW_CLIENT)
		dev->ds.ds->proc[slot].broker_reaps = 1;
	dev->ds.ds->proc[slot].is_broker = dev->hw_role == ERNIC_HW_BROKER;
	/* A software device's model shares its wire with the models of the
	 * device's other processes through the same file (model_wire.c). */
	if (dev->conf.backend == ERNIC_BACKEND_SW && path[0]) {
		snprintf(dev->conf.share_state, sizeof(dev->conf.share_state),
			 "%s", path);
		dev->conf.share_slot = dev->ds_slot;
	}
	return 0;
}

void ernic_share_stop(struct ernic_dev *dev)
{
	if (!dev->ds.ds)
		return;
	if (!ernic_share_lock(dev)) {
		/* A client leaves nothing enabled in the IP that it shares:
		 * QPs and MRs its application did not destroy. */
		if (dev->hw_role == ERNIC_HW_CLIENT && dev->acc)
			ernic_share_hw_dead(dev, dev->ds.ds, dev->ds_slot);
		ernic_ds_detach(dev->ds.ds, dev->ds_slot);
		ernic_share_unlock(dev);
	}
	ernic_ds_close(&dev->ds);
}

void ernic_share_hw_dead(void *arg, struct ernic_ds *ds, uint32_t slot)
{
	struct ernic_dev *dev = arg;

	for (uint32_t q = ERNIC_FIRST_RC_QP; q <= dev->conf.c_num_qp; q++)
		if (ds->qp_owner[q] == slot)
			ernic_qp_hw_clear(dev, q);
	for (uint32_t e = 0; e < ERNIC_PDT_ENTRIES; e++)
		if (ds->pdt_owner[e] == slot)
			ernic_pdt_clear(dev, e);
	ernic_access_flush(dev->acc);
}

int ernic_share_lock(struct ernic_dev *dev)
{
	/* A holder that died mid-change is reclaimed by the lock; on a
	 * shared IP that reclaim must clean the IP too. */
	if (dev->hw_role != ERNIC_HW_ALONE && dev->acc)
		return ernic_ds_lock(&dev->ds, ernic_share_hw_dead, dev);
	return ernic_ds_lock(&dev->ds, NULL, NULL);
}

void ernic_share_unlock(struct ernic_dev *dev)
{
	ernic_ds_unlock(&dev->ds);
}

/* What one allocation asks of the state file: an index, or -ENOSPC. */
struct share_req {
	uint32_t first, last;	/* QP numbers */
	uint8_t gen;		/* PD-table slot: its key generation */
};
typedef int (*share_fn)(struct ernic_ds *ds, uint32_t slot,
			struct share_req *rq);

static int qp_fn(struct ernic_ds *ds, uint32_t slot, struct share_req *rq)
{
	return ernic_ds_qp_alloc(ds, slot, rq->first, rq->last);
}

static int pdt_fn(struct ernic_ds *ds, uint32_t slot, struct share_req *rq)
{
	return ernic_ds_pdt_alloc(ds, slot, &rq->gen);
}

/* One allocation under the file's lock; when nothing is free, the
 * processes that died holding something give it back first. An index,
 * or a negative errno (ENOMEM when the device has none left). */
static int share_alloc(struct ernic_dev *dev, share_fn fn,
		       struct share_req *rq)
{
	int r = ernic_share_lock(dev);

	if (r)
		return -r;
	r = fn(dev->ds.ds, dev->ds_slot, rq);
	if (r == -ENOSPC && ernic_ds_reap(dev->ds.ds, NULL, NULL))
		r = fn(dev->ds.ds, dev->ds_slot, rq);
	ernic_ds_unlock(&dev->ds);
	return r == -ENOSPC ? -ENOMEM : r;
}

int ernic_share_qp_get(struct ernic_dev *dev, uint32_t *idx)
{
	struct share_req rq = { .first = ERNIC_FIRST_RC_QP,
				.last = dev->conf.c_num_qp };
	int r = share_alloc(dev, qp_fn, &rq);

	if (r < 0)
		return -r;
	*idx = (uint32_t)r;
	return 0;
}

void ernic_share_qp_put(struct ernic_dev *dev, uint32_t idx)
{
	if (ernic_share_lock(dev))
		return;
	ernic_ds_qp_free(dev->ds.ds, dev->ds_slot, idx);
	ernic_ds_unlock(&dev->ds);
}

int ernic_share_pdt_get(struct ernic_dev *dev, uint32_t *slot, uint8_t *gen)
{
	struct share_req rq = { 0 };
	int r = share_alloc(dev, pdt_fn, &rq);

	if (r < 0)
		return -r;
	*slot = (uint32_t)r;
	*gen = rq.gen;
	return 0;
}

void ernic_share_pdt_put(struct ernic_dev *dev, uint32_t slot)
{
	if (ernic_share_lock(dev))
		return;
	ernic_ds_pdt_free(dev->ds.ds, dev->ds_slot, slot);
	ernic_ds_unlock(&dev->ds);
}

uint32_t ernic_share_pd_number(struct ernic_dev *dev)
{
	uint32_t pdn;

	if (ernic_share_lock(dev))
		return ERNIC_PD_NONE;
	pdn = ernic_ds_pd_number(dev->ds.ds);
	ernic_ds_unlock(&dev->ds);
	return pdn;
}

int ernic_share_service(struct ernic_dev *dev, uint64_t service_id,
			bool claim)
{
	struct ernic_ds *ds = dev->ds.ds;
	int (*steer)(struct ernic_access *, uint64_t, bool);
	bool gone = false;
	int r;

	if (!ds || !dev->acc)
		return ENODEV;	/* the device was stopped */
	steer = dev->acc->ops->mad_steer;
	r = ernic_share_lock(dev);
	if (r)
		return r;
	if (claim) {
		r = ernic_ds_svc_claim(ds, dev->ds_slot, service_id);
		/* the other listener may be a process that died */
		if (r == EADDRINUSE && ernic_ds_reap(ds, NULL, NULL))
			r = ernic_ds_svc_claim(ds, dev->ds_slot, service_id);
		if (!r && steer) {
			r = steer(dev->acc, service_id, true);
			if (r)
				ernic_ds_svc_release(ds, dev->ds_slot,
						     service_id, &gone);
		}
	} else {
		r = ernic_ds_svc_release(ds, dev->ds_slot, service_id, &gone);
		if (!r && gone && steer)
			r = steer(dev->acc, service_id, false);
	}
	ernic_ds_unlock(&dev->ds);
	return r;
}
