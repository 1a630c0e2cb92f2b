// SPDX-License-Identifier: MIT
/*
 * The ERNIC model's bus address space: the addresses software programs
 * into RQBA/SQBA/CQBA, the doorbell and error-buffer registers and the
 * PD table (PG332 Table 2-7), and which the IP masters over AXI4.
 *
 * Like an IOMMU, the model hands out bus addresses for host memory and
 * translates every access, so that an address taken from a register or
 * a packet is checked against a live mapping before it is touched.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"

/*
 * Above 4 GiB, so every *MSB register carries a non-zero value and a
 * driver that drops the upper half of an address is caught.
 */
#define BUS_BASE UINT64_C(0x100000000)
/* A 32-bit AXI master (C_M_AXI_ADDR_WIDTH = 32) reaches only 4 GiB; its
 * space starts at 256 MiB so that a zero address is still never valid. */
#define BUS_BASE_32 UINT64_C(0x10000000)
#define BUS_LIMIT_32 UINT64_C(0x100000000)
#define BUS_PAGE UINT64_C(4096)

int ernic_model_mem_init(struct ernic_model *m)
{
	m->maps = NULL;
	m->nmaps = 0;
	m->maps_cap = 0;
	m->next_bus = m->c_m_axi_addr_width == 32 ? BUS_BASE_32 : BUS_BASE;
	return model_mutex_init(&m->map_lock);
}

void ernic_model_mem_fini(struct ernic_model *m)
{
	free(m->maps);
	m->maps = NULL;
	m->nmaps = m->maps_cap = 0;
	pthread_mutex_destroy(&m->map_lock);
}

/* Index of the last mapping with map.bus <= bus, or -1. Caller locks. */
static ptrdiff_t find_floor(const struct ernic_model *m, uint64_t bus)
{
	size_t lo = 0, hi = m->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->maps[mid].bus <= bus)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

int ernic_model_map(struct ernic_model *m, void *va, size_t len, size_t align,
		    uint64_t *bus)
{
	uint64_t a, start, span;
	int rc = 0;

	if (!va || !len || !bus || (align & (align - 1)))
		return EINVAL;
	a = align > BUS_PAGE ? align : BUS_PAGE;
	/* Whole pages plus one unmapped guard page after each mapping. */
	if ((uint64_t)len > UINT64_MAX - 2 * BUS_PAGE)
		return ENOMEM;
	span = (((uint64_t)len + BUS_PAGE - 1) & ~(BUS_PAGE - 1)) + BUS_PAGE;

	pthread_mutex_lock(&m->map_lock);
	if (m->next_bus > UINT64_MAX - (a - 1)) {
		rc = ENOMEM;
		goto out;
	}
	start = (m->next_bus + a - 1) & ~(a - 1);
	if (start > UINT64_MAX - span ||
	    (m->c_m_axi_addr_width == 32 && start + span > BUS_LIMIT_32)) {
		rc = ENOMEM;
		goto out;
	}
	if (m->nmaps == m->maps_cap) {
		size_t cap = m->maps_cap ? m->maps_cap * 2 : 64;
		struct ernic_bus_map *n = realloc(m->maps, cap * sizeof(*n));

		if (!n) {
			rc = ENOMEM;
			goto out;
		}
		m->maps = n;
		m->maps_cap = cap;
	}
	/*
	 * Freed ranges are never handed out again (64-bit space is ample),
	 * so a stale bus address faults instead of hitting new memory, and
	 * the newest mapping is always the highest: appending keeps the
	 * array sorted.
	 */
	m->maps[m->nmaps++] = (struct ernic_bus_map){
		.bus = start, .len = len, .va = va,
	};
	m->next_bus = start + span;
	*bus = start;
out:
	pthread_mutex_unlock(&m->map_lock);
	return rc;
}

void ernic_model_unmap(struct ernic_model *m, uint64_t bus)
{
	ptrdiff_t i;

	pthread_mutex_lock(&m->map_lock);
	i = find_floor(m, bus);
	if (i >= 0 && m->maps[i].bus == bus) {
		memmove(&m->maps[i], &m->maps[i + 1],
			(m->nmaps - (size_t)i - 1) * sizeof(m->maps[0]));
		m->nmaps--;
	}
	pthread_mutex_unlock(&m->map_lock);
}

void *ernic_model_bus_to_va(struct ernic_model *m, uint64_t bus, size_t len)
{
	const struct ernic_bus_map *mp;
	void *va = NULL;
	uint64_t off;
	ptrdiff_t i;

	if ((uint64_t)len > UINT64_MAX - bus)
		return NULL;	/* bus + len wraps */
	pthread_mutex_lock(&m->map_lock);
	i = find_floor(m, bus);
	if (i >= 0) {
		mp = &m->maps[i];
		off = bus - mp->bus;
		if (off < mp->len && (uint64_t)len <= mp->len - off)
			va = mp->va + off;
	}
	pthread_mutex_unlock(&m->map_lock);
	return va;
}

int ernic_model_dma(struct ernic_model *m, uint64_t bus, void *buf,
		    size_t len, bool to_bus)
{
	const struct ernic_bus_map *mp;
	int rc = EFAULT;
	uint64_t off;
	ptrdiff_t i;

	if (!len)
		return 0;
	if ((uint64_t)len > UINT64_MAX - bus)
		return EFAULT;
	pthread_mutex_lock(&m->map_lock);
	i = find_floor(m, bus);
	if (i >= 0) {
		mp = &m->maps[i];
		off = bus - mp->bus;
		if (off < mp->len && (uint64_t)len <= mp->len - off) {
			if (to_bus)
				memcpy(mp->va + off, buf, len);
			else
				memcpy(buf, mp->va + off, len);
			rc = 0;
		}
	}
	pthread_mutex_unlock(&m->map_lock);
	return rc;
}
