// SPDX-License-Identifier: MIT
/*
 * Protection domains and PG332 ch.6 "Memory Registration": one PD-table
 * slot per MR.
 *
 * Keys: BUFRKEY is 8 bits wide, so an MR's key carries the slot in bits
 * [7:0] and an 8-bit generation in [15:8]; the generation is what the
 * slot's BUFRKEY holds. Generation 0 is never issued, so a cleared slot
 * matches no key, and slots are taken round-robin: an old key becomes
 * valid again only after 256 * 255 registrations.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ernic.h"
#include "ernic_vm.h"


/* What PG332 can express: remote read and/or write. Local access needs
 * no table entry (the provider translates lkeys itself). Remote atomic
 * and MW bind are accepted as the kernel's uverbs accepts them on a
 * device without atomics (atomic_cap NONE) or memory windows: no atomic
 * ever reaches the MR, and no window can be bound to it. */
#define ERNIC_ACCESS_SUPPORTED \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
	 IBV_ACCESS_MW_BIND | IBV_ACCESS_HUGETLB)
#define ERNIC_ACCESS_REMOTE (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

struct ibv_pd *ernic_alloc_pd(struct ibv_context *context)
{
	struct ernic_dev *dev = ctx_dev(context);
	struct ernic_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&dev->lock);
	if (dev->npd >= ERNIC_MAX_PD) {
		pthread_mutex_unlock(&dev->lock);
		free(pd);
		errno = ENOMEM;
		return NULL;
	}
	/* device-wide, 24 bits (PDPDNUM), never ERNIC_PD_NONE */
	pd->pdn = ernic_share_pd_number(dev);
	if (pd->pdn == ERNIC_PD_NONE) {
		pthread_mutex_unlock(&dev->lock);
		free(pd);
		errno = ernic_refuse(EIO, "alloc_pd: the device's state file "
				     "cannot be locked");
		return NULL;
	}
	dev->npd++;
	to_ectx(context)->npd++;
	pthread_mutex_unlock(&dev->lock);
	pd->ibv_pd.context = context;
	pd->ibv_pd.handle = pd->pdn;
	return &pd->ibv_pd;
}

int ernic_dealloc_pd(struct ibv_pd *ibpd)
{
	struct ernic_pd *pd = to_epd(ibpd);
	struct ernic_dev *dev = ctx_dev(ibpd->context);
	int busy;

	pthread_mutex_lock(&dev->lock);
	busy = pd->refcnt;
	if (!busy) {
		dev->npd--;
		to_ectx(ibpd->context)->npd--;
	}
	pthread_mutex_unlock(&dev->lock);
	if (busy)
		return EBUSY;
	free(pd);
	return 0;
}

static int access_to_hw(int access, uint32_t *type)
{
	/* As the kernel's ib_check_mr_access: no paging, no such MR. */
	if (access & IBV_ACCESS_ON_DEMAND)
		return ernic_refuse(EOPNOTSUPP, "reg_mr: on-demand paging");
	if (access & ~ERNIC_ACCESS_SUPPORTED)
		return ernic_refuse(EINVAL, "reg_mr: access flags 0x%x",
				    access & ~ERNIC_ACCESS_SUPPORTED);
	/* Verbs: remote write and remote atomic require local write. */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return ernic_refuse(EINVAL, "reg_mr: remote write or atomic "
				    "without local write");
	switch (access & ERNIC_ACCESS_REMOTE) {
	case IBV_ACCESS_REMOTE_WRITE:
		*type = ERNIC_ACCESS_WRITE_ONLY;
		break;
	case ERNIC_ACCESS_REMOTE:
		*type = ERNIC_ACCESS_READ_WRITE;
		break;
	default:
		*type = ERNIC_ACCESS_READ_ONLY;
		break;
	}
	return 0;
}

/* Clear a slot so that no key reaches it: BUFRKEY first. */
void ernic_pdt_clear(struct ernic_dev *dev, uint32_t s)
{
	struct ernic_access *acc = dev->acc;

	ernic_wr(acc, ERNIC_PDT(s, ERNIC_BUFRKEY), 0);
	ernic_wr(acc, ERNIC_PDT(s, ERNIC_ACCESSDESC), 0);
	ernic_wr(acc, ERNIC_PDT(s, ERNIC_WRRDBUFLEN), 0);
	ernic_wr64(acc, ERNIC_PDT(s, ERNIC_BUFBASEADDRLSB),
		   ERNIC_PDT(s, ERNIC_BUFBASEADDRMSB), 0);
	ernic_wr64(acc, ERNIC_PDT(s, ERNIC_VIRTADDRLSB),
		   ERNIC_PDT(s, ERNIC_VIRTADDRMSB), 0);
	ernic_wr(acc, ERNIC_PDT(s, ERNIC_PDPDNUM), 0);
}

struct ibv_mr *ernic_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			    uint64_t hca_va, int access)
{
	struct ernic_dev *dev = ctx_dev(ibpd->context);
	struct ernic_pd *pd = to_epd(ibpd);
	struct ernic_access *acc = dev->acc;
	struct ernic_mr *mr;
	uint32_t type = 0, slot, gen, key;
	uint8_t gen8;
	int ret;

	ret = ernic_lost_refuse(dev, "reg_mr");
	if (!ret)
		ret = access_to_hw(access, &type);
	if (!ret && (!addr || !length || (uint64_t)length >> 48 ||
		     hca_va + length < hca_va))
		ret = ernic_refuse(EINVAL, "reg_mr: addr %p, length %zu, "
				   "iova 0x%llx", addr, length,
				   (unsigned long long)hca_va);
	/* Without C_EN_INITIATOR_LITE the IP drops incoming READ/WRITE. */
	if (!ret && (access & ERNIC_ACCESS_REMOTE) &&
	    !dev->conf.c_en_initiator_lite)
		ret = ernic_refuse(EINVAL, "reg_mr: remote access on an IP "
				   "without C_EN_INITIATOR_LITE");
	/* As the kernel's pinning would: memory that is there, writable if
	 * the IP may write it. Else a peer's WRITE, or a local READ, would
	 * fault in the model (software devices) or land in memory the
	 * process cannot write (hardware). */
	if (!ret)
		ret = ernic_vm_check(addr, length,
				     access & (IBV_ACCESS_LOCAL_WRITE |
					       IBV_ACCESS_REMOTE_WRITE));
	if (ret == EFAULT)
		ernic_refuse(ret, "reg_mr: %p + %zu not mapped%s", addr,
			     length, access & IBV_ACCESS_LOCAL_WRITE ?
			     " writable" : "");
	if (ret) {
		errno = ret;
		return NULL;
	}

	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}

	pthread_mutex_lock(&dev->lock);
	/* A slot no process of the device has, taken round-robin, and its
	 * next key generation (1..255, never 0): ernic_share.c. */
	ret = ernic_share_pdt_get(dev, &slot, &gen8);
	if (ret) {
		ernic_refuse(ret, "reg_mr: all %u PD-table entries in use",
			     ERNIC_PDT_ENTRIES);
		goto err_unlock;
	}
	ret = acc->ops->map_user(acc, addr, length, &mr->bus);
	if (ret) {
		ernic_refuse(ret, "reg_mr: cannot map %p + %zu for the IP",
			     addr, length);
		ernic_share_pdt_put(dev, slot);
		goto err_unlock;
	}
	gen = gen8;
	key = ERNIC_FIELD_PREP(ERNIC_KEY_SLOT, slot) |
	      ERNIC_FIELD_PREP(ERNIC_KEY_GEN, gen);

	/* PG332 "Memory Registration" steps 2-6; the key goes in last so the
	 * entry is complete before any incoming request can match it. A
	 * local-only MR keeps BUFRKEY 0, which no remote key matches. */
	ernic_wr(acc, ERNIC_PDT(slot, ERNIC_PDPDNUM),
		 ERNIC_FIELD_PREP(ERNIC_PDPDNUM_PD, pd->pdn));
	ernic_wr64(acc, ERNIC_PDT(slot, ERNIC_VIRTADDRLSB),
		   ERNIC_PDT(slot, ERNIC_VIRTADDRMSB), hca_va);
	ernic_wr64(acc, ERNIC_PDT(slot, ERNIC_BUFBASEADDRLSB),
		   ERNIC_PDT(slot, ERNIC_BUFBASEADDRMSB), mr->bus);
	ernic_wr(acc, ERNIC_PDT(slot, ERNIC_WRRDBUFLEN), (uint32_t)length);
	ernic_wr(acc, ERNIC_PDT(slot, ERNIC_ACCESSDESC),
		 ERNIC_FIELD_PREP(ERNIC_ACCESSDESC_ACCESS, type) |
			 ERNIC_FIELD_PREP(ERNIC_ACCESSDESC_LEN_MSB,
					  (uint64_t)length >> 32));
	ernic_wr(acc, ERNIC_PDT(slot, ERNIC_BUFRKEY),
		 (access & ERNIC_ACCESS_REMOTE) ?
			 ERNIC_FIELD_PREP(ERNIC_BUFRKEY_KEY, gen) : 0);
	pd->refcnt++;

	mr->slot = slot;
	mr->iova = hca_va;
	mr->vmr.mr_type = IBV_MR_TYPE_MR;
	mr->vmr.access = access;
	mr->vmr.ibv_mr.context = ibpd->context;
	mr->vmr.ibv_mr.pd = ibpd;
	mr->vmr.ibv_mr.addr = addr;
	mr->vmr.ibv_mr.length = length;
	mr->vmr.ibv_mr.handle = slot;
	mr->vmr.ibv_mr.lkey = key;
	mr->wkey = (access & IBV_ACCESS_LOCAL_WRITE) ? key :
						       key ^ ERNIC_KEY_SLOT;
	mr->vmr.ibv_mr.rkey = key;
	/* Visible to lkey translation only once complete. */
	atomic_store_explicit(&dev->pdt_mr[slot], mr, memory_order_release);
	pthread_mutex_unlock(&dev->lock);
	return &mr->vmr.ibv_mr;

err_unlock:
	pthread_mutex_unlock(&dev->lock);
	free(mr);
	errno = ret;
	return NULL;
}

struct ernic_mr ernic_mr_none;

/* Take mr's slot back from the IP. Caller holds dev->lock. */
static void mr_release(struct ernic_dev *dev, struct ernic_mr *mr)
{
	/* No post may translate this lkey once dereg returns: translations
	 * run under a QP's lock, and one begun before the store ended when
	 * its lock was let go. */
	atomic_store_explicit(&dev->pdt_mr[mr->slot], &ernic_mr_none,
			      memory_order_relaxed);
	ernic_qps_quiesce(dev);
	ernic_pdt_clear(dev, mr->slot);
	dev->acc->ops->unmap_user(dev->acc, mr->bus, mr->vmr.ibv_mr.length);
	ernic_share_pdt_put(dev, mr->slot);
	to_epd(mr->vmr.ibv_mr.pd)->refcnt--;
}

int ernic_dereg_mr(struct verbs_mr *vmr)
{
	struct ernic_mr *mr = to_emr(vmr);
	struct ernic_dev *dev = ctx_dev(vmr->ibv_mr.context);

	pthread_mutex_lock(&dev->lock);
	mr_release(dev, mr);
	pthread_mutex_unlock(&dev->lock);
	free(mr);
	return 0;
}

void ernic_mr_reclaim(struct ernic_dev *dev, struct ibv_context *ctx)
{
	for (uint32_t s = 0; s < ERNIC_PDT_ENTRIES; s++) {
		struct ernic_mr *mr = atomic_load(&dev->pdt_mr[s]);

		if (mr != &ernic_mr_none && mr->vmr.ibv_mr.context == ctx) {
			mr_release(dev, mr);
			free(mr);
		}
	}
}
