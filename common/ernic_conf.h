/* SPDX-License-Identifier: MIT */
/*
 * Per-device configuration: written by `ernicctl add` into the sysfs
 * overlay (<ibdev_path>/device/ernic.conf), read by the provider when it
 * opens the device. Plain "key=value" lines, '#' comments.
 */
#ifndef ERNIC_CONF_H
#define ERNIC_CONF_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

#define ERNIC_CONF_FILE "ernic.conf"
#define ERNIC_NAME_MAX 63 /* fits IBV_SYSFS_NAME_MAX (64) with the NUL */
#define ERNIC_MODALIAS_PREFIX "ernic:"	/* device/modalias is "ernic:<backend>" */
#define ERNIC_GID_TBL_LEN 16		/* index 0 holds the device address */
#define ERNIC_PKEY_DEFAULT 0xffff
#define ERNIC_FW_VER "3.1"		/* the PG332 IP version modelled */
#define ERNIC_HW_VER 0x31
#define ERNIC_VENDOR_ID 0x10ee		/* Xilinx */
#define ERNIC_VENDOR_PART_ID 0x0332	/* PG332 */
#define ERNIC_DEFAULT_RUNDIR "/run/ernic"
#define ERNIC_UDP_SPORT_DEFAULT 49152

enum ernic_backend {
	ERNIC_BACKEND_SW = 1,	/* in-process ERNIC model */
	ERNIC_BACKEND_UIO = 2,	/* platform device under UIO (Zynq MPSoC) */
	ERNIC_BACKEND_VFIO = 3,	/* PCIe function under VFIO (a card) */
};

#define ERNIC_UIO_ROOT_MAX 127	/* uio_root=, vfio_root= */
#define ERNIC_VFIO_SHARE_MIB_DEFAULT 256u
#define ERNIC_VFIO_SHARE_MIB_MAX 65536u
#define ERNIC_SHARE_PATH_MAX 4095	/* share_state (not a key) */
#define ERNIC_BDF_LEN 12		/* "DDDD:BB:DD.F" */

/* How the software ERNIC puts RoCEv2 on the host network. */
enum ernic_wire {
	/* UDP socket on ADDR:4791: unprivileged; the kernel owns the
	 * Ethernet/IP/UDP headers. */
	ERNIC_WIRE_UDP = 0,
	/* AF_PACKET on the netdev: whole frames built and checked by the
	 * model, as the IP does (needs CAP_NET_RAW). */
	ERNIC_WIRE_FRAME = 1,
};

struct ernic_conf {
	char name[ERNIC_NAME_MAX + 1];
	enum ernic_backend backend;
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];	/* network order; IPv4 uses addr[0..3] */
	char netdev[IF_NAMESIZE];
	uint8_t mac[6];
	uint64_t node_guid;	/* host order */
	uint16_t udp_sport;	/* XRNICCONF[31:16] */
	enum ernic_wire wire;	/* software backend only */
	/* UIO backend: the device (its sysfs name, or "uioN"), where sysfs
	 * and /dev are ("" for the system's; the virtual FPGA's fake tree
	 * otherwise), the UIO map holding DMA memory or the u-dma-buf device
	 * (reserved memory) that does, and whether the IP's
	 * DMA is cache-coherent with the CPU. */
	char uio[ERNIC_NAME_MAX + 1];
	char uio_root[ERNIC_UIO_ROOT_MAX + 1];
	uint32_t dma_map;
	char udmabuf[ERNIC_NAME_MAX + 1];	/* instead of dma_map */
	uint32_t coherent;
	/* VFIO backend: the PCI function (canonical DDDD:BB:DD.F), the BAR
	 * holding the ERNIC window (0..5) and its offset there (4 KiB
	 * aligned; cards such as RecoNIC place the IP inside a larger BAR),
	 * and where sysfs and /dev are ("" for the system's). The vfio_*
	 * keys need backend=vfio. */
	char vfio[ERNIC_BDF_LEN + 1];
	uint32_t vfio_bar;
	uint64_t vfio_offset;
	char vfio_root[ERNIC_UIO_ROOT_MAX + 1];
	/* MiB of DMA memory a broker maps into the IOMMU once and shares
	 * out to its clients (docs/multiprocess.md). */
	uint32_t vfio_share_mib;
	/* PG332 Table 2-6 parameters */
	uint32_t c_num_qp;
	uint32_t c_m_axi_addr_width;
	uint32_t c_max_wr_retry_data_buf_depth;
	uint32_t c_en_wr_retry_data_buf;
	uint32_t c_en_initiator_lite;
	uint32_t c_en_debug_ports;
	/* Not read from ernic.conf: the provider sets them when it opens a
	 * software device. The device's state file (ernic_devstate.h) and
	 * this process's slot in it, for sharing the wire with other
	 * processes (docs/multiprocess.md); "" when not shared. */
	char share_state[ERNIC_SHARE_PATH_MAX + 1];
	uint32_t share_slot;
	/* A hardware device's role among the processes using it: alone
	 * (exclusive open), its broker or a client of the broker (shared
	 * open). Set by the provider, not read from ernic.conf. */
	uint32_t hw_role;
};

enum ernic_hw_role {
	ERNIC_HW_ALONE,
	ERNIC_HW_BROKER,
	ERNIC_HW_CLIENT,
};

/* A PCI function "DDDD:BB:DD.F" or "BB:DD.F" (domain 0), hex, device
 * < 32, function < 8: its canonical lower-case form in out. 0/EINVAL. */
int ernic_bdf_parse(const char *text, char out[ERNIC_BDF_LEN + 1]);

/* "sw", "uio" or "vfio". */
const char *ernic_backend_name(enum ernic_backend b);

/* Defaults of a software ERNIC (addresses left empty). */
void ernic_conf_defaults(struct ernic_conf *c);

/* Set one Table 2-6 parameter by its PG332 name (e.g. "C_NUM_QP") from
 * text. Returns 0, or EINVAL with a one-line reason in err. */
int ernic_conf_set_param(struct ernic_conf *c, const char *name,
			 const char *value, char *err, size_t errlen);

/* Set one ernic.conf key from text, with the file's checks. Returns 0,
 * or EINVAL with a one-line reason in err. */
int ernic_conf_set_key(struct ernic_conf *c, const char *key,
		       const char *val, char *err, size_t errlen);

/* Parse / write a configuration file. Returns 0 or an errno value with a
 * one-line reason in err ("file:line: ..."). */
int ernic_conf_load(const char *path, struct ernic_conf *c, char *err,
		    size_t errlen);
int ernic_conf_save(const char *path, const struct ernic_conf *c, char *err,
		    size_t errlen);

/* RoCEv2 GID of the configured address (IPv4-mapped for IPv4). */
void ernic_conf_gid(const struct ernic_conf *c, uint8_t gid[16]);

#endif
