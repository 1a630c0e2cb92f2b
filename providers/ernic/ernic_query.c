// SPDX-License-Identifier: MIT
/*
 * Device and port attributes: honest limits derived from PG332 and the
 * device's Table 2-6 parameters, port state from the netdev it uses.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ernic.h"
#include "ernic_net.h"

static void fill_device_attr(struct ernic_dev *dev, struct ibv_device_attr *a)
{
	const struct ernic_conf *c = &dev->conf;
	/* Incoming READ/WRITE exist only with C_EN_INITIATOR_LITE. */
	uint32_t rd_atom = c->c_en_initiator_lite ? ERNIC_MAX_RD_ATOM : 0;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", ERNIC_FW_VER);
	a->node_guid = htobe64(c->node_guid);
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = (UINT64_C(1) << 48) - 1; /* WRRDBUFLEN + 16 MSBs */
	a->page_size_cap = 4096;
	a->vendor_id = ERNIC_VENDOR_ID;
	a->vendor_part_id = ERNIC_VENDOR_PART_ID;
	a->hw_ver = ERNIC_HW_VER;
	a->max_qp = (int)c->c_num_qp - 1; /* QP1 is reserved for CM */
	a->max_qp_wr = ERNIC_MAX_QP_WR;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN |
			      IBV_DEVICE_PORT_ACTIVE_EVENT;
	/* Several SGEs are staged (ernic_sge.c); SRQs, memory windows,
	 * atomics, UD/UC and multicast do not exist: their maxima stay 0. */
	a->max_sge = ERNIC_MAX_SGE;
	a->max_sge_rd = ERNIC_MAX_SGE;
	a->max_cq = ERNIC_MAX_CQ;
	a->max_cqe = ERNIC_MAX_CQE;
	a->max_mr = ERNIC_PDT_ENTRIES;
	a->max_pd = ERNIC_MAX_PD;
	a->max_qp_rd_atom = (int)rd_atom;
	a->max_qp_init_rd_atom = ERNIC_MAX_RD_ATOM;
	a->max_res_rd_atom = (int)(rd_atom * (c->c_num_qp - 1));
	a->atomic_cap = IBV_ATOMIC_NONE;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
}

int ernic_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ernic_dev *dev = ctx_dev(context);
	struct ibv_device_attr_ex full;

	if (input && input->comp_mask)
		return ernic_refuse(EINVAL, "query_device_ex: comp_mask 0x%x",
				    input->comp_mask);
	if (attr_size < sizeof(attr->orig_attr))
		return ernic_refuse(EINVAL, "query_device_ex: attr_size %zu",
				    attr_size);

	memset(&full, 0, sizeof(full));
	fill_device_attr(dev, &full.orig_attr);
	/* ibv_query_device_ex users read the port count here. */
	full.phys_port_cnt_ex = full.orig_attr.phys_port_cnt;
	full.max_dm_size = 0;
	full.raw_packet_caps = 0;
	/* Everything past orig_attr describes features this IP lacks
	 * (TSO, RSS, tag matching, ...): zero says "none". */
	if (attr_size > sizeof(full))
		attr_size = sizeof(full);
	memcpy(attr, &full, attr_size);
	return 0;
}

static enum ibv_mtu mtu_for_netdev(uint32_t netdev_mtu)
{
	/* Room for IPv6 (40) + UDP (8) + BTH (12) + RETH (16) + ICRC (4). */
	const uint32_t overhead = 40 + 8 + 12 + 16 + 4;
	enum ibv_mtu m = IBV_MTU_4096;

	while (m > IBV_MTU_256 && netdev_mtu < (128u << m) + overhead)
		m--;
	return m;
}

enum ibv_mtu ernic_active_mtu(struct ernic_dev *dev)
{
	uint32_t mtu = 0;
	bool running = false;

	if (ernic_net_netdev_state(dev->conf.netdev, &mtu, &running) ||
	    !running)
		return IBV_MTU_256;
	return mtu_for_netdev(mtu);
}

int ernic_query_port(struct ibv_context *context, uint8_t port,
		     struct ibv_port_attr *attr)
{
	struct ernic_dev *dev = ctx_dev(context);
	uint32_t mtu = 0;
	bool running = false;

	if (port != 1)
		return ernic_refuse(EINVAL, "query_port: port %u (one port)",
				    port);
	if (ernic_net_netdev_state(dev->conf.netdev, &mtu, &running))
		running = false;

	memset(attr, 0, sizeof(*attr));
	attr->state = running ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	attr->max_mtu = IBV_MTU_4096; /* QPCONF[10:8] stops at 4096 */
	attr->active_mtu = ernic_active_mtu(dev);
	attr->gid_tbl_len = ERNIC_GID_TBL_LEN;
	attr->max_msg_sz = ERNIC_MAX_MSG_SIZE;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 1;
	attr->active_width = 2;		/* 4X */
	attr->active_speed = 32;	/* EDR: 4X EDR = the IP's 100 Gb/s */
	attr->phys_state = running ? 5 /* LinkUp */ : 3 /* Disabled */;
	attr->link_layer = IBV_LINK_LAYER_ETHERNET;
	return 0;
}
