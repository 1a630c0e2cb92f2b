/* SPDX-License-Identifier: MIT */
/*
 * Steering of RoCEv2 datagrams between the processes that share one
 * software ERNIC (docs/multiprocess.md): every process binds the device's
 * UDP ADDR:4791 with SO_REUSEPORT, and an eBPF program of type
 * SK_REUSEPORT on the group looks up the owner of the packet's BTH
 * destination QP (an array: QP number -> process slot + 1) and picks that
 * slot's socket in a REUSEPORT_SOCKARRAY. (A socket can sit in one slot
 * of a sockarray only, hence the two maps.) A QP with no owner, or whose
 * process is gone (its socket's close empties the slot), and a runt fall
 * back to the kernel's hash choice; the process that gets it drops it as
 * the IP drops a packet for a QP it does not have.
 *
 * QP1 goes further (docs/multiprocess.md, "QP1 on a software device"): a
 * CM MAD (management class 0x07) that is a REQ goes by its service ID to
 * the slot a hash map names (ernic_steer_service_set: the listener's);
 * every other CM MAD by the top 8 bits of its remote communication ID,
 * which the CM that chose that ID set to its process's slot + 1
 * (ERNIC_STEER_COMM_TAG). Anything else on QP1, a tag of 0 and a service
 * nobody claims go to QP1's owner in the QP array, as any QP does.
 *
 * Loading the program needs CAP_BPF and CAP_NET_ADMIN (or root); joining
 * a group another process made needs CAP_SYS_ADMIN to open its maps by id.
 */
#ifndef ERNIC_WIRE_STEER_H
#define ERNIC_WIRE_STEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* QP numbers (QP1 and RC QPs) and process slots below these. */
#define ERNIC_STEER_QPS 256u
#define ERNIC_STEER_SLOTS 256u

/* Service IDs of listeners on one device: CM REQs steered by them. */
#define ERNIC_STEER_SERVICES 1024u

/* The top 8 bits of the communication IDs a CM in process slot `slot`
 * chooses, so that the MADs of its connections come back to it. */
#define ERNIC_STEER_COMM_TAG(slot) ((uint32_t)(slot) + 1u)

/* What another process joins a group by. */
struct ernic_steer_ids {
	uint32_t socks, owners, services;
};

struct ernic_steer {
	int socks_fd, owners_fd, services_fd;
	int prog_fd;			/* -1 when the group already had it */
	struct ernic_steer_ids ids;
};

/* No maps, no program: what ernic_steer_close may be called on. */
void ernic_steer_init(struct ernic_steer *st);
/*
 * Put fd (a UDP socket with SO_REUSEPORT, bound) under steering. With
 * join NULL, make the maps and program and attach the program to fd's
 * group; otherwise open the maps of those ids (made by the process that
 * attached the program). 0 or an errno, with the reason in err.
 */
int ernic_steer_open(struct ernic_steer *st, int fd,
		     const struct ernic_steer_ids *join, char *err,
		     size_t errlen);
/* Socket fd (of the group) receives for process slot `slot`; its close
 * ends that. */
int ernic_steer_member(struct ernic_steer *st, uint32_t slot, int fd);
/* Packets for QP qpn go to slot's socket, or (clear) to anyone. */
int ernic_steer_set(struct ernic_steer *st, uint32_t qpn, uint32_t slot);
int ernic_steer_clear(struct ernic_steer *st, uint32_t qpn);
/* CM REQs for service_id (host order) go to slot's socket, or (clear)
 * to QP1's owner. 0 or an errno (ENOSPC: the map is full). */
int ernic_steer_service_set(struct ernic_steer *st, uint64_t service_id,
			    uint32_t slot);
int ernic_steer_service_clear(struct ernic_steer *st, uint64_t service_id);
/* The slot that owns qpn: 0, or ENOENT when none does. */
int ernic_steer_owner(struct ernic_steer *st, uint32_t qpn, uint32_t *slot);
/* Whether slot has a socket in the group (its process is there). */
bool ernic_steer_live(struct ernic_steer *st, uint32_t slot);
struct roce_l3;
/*
 * Frame mode (AF_PACKET, every process sees every frame): an eBPF socket
 * filter program for process slot `slot`'s socket, to attach with
 * SO_ATTACH_BPF. It takes a frame only when it is IPv4 or IPv6 UDP to
 * port 4791 (IPv4 options skipped; IHL < 5 read as 20) and the steering
 * names `slot` for it: the same rules as the SK_REUSEPORT program (on
 * QP 1 the CM MAD rules, else the BTH destination QP's owner), and a
 * frame that names nobody goes to QP1's owner (owners[1]). Uses the
 * maps of st (made or joined with ernic_steer_open). With local (family,
 * dst, dst_mac), only frames addressed to that port as roce_pkt.h's rule
 * says (its IP, or its non-zero MAC); NULL: any address. Returns the
 * program's fd, or -1 with errno and the reason in err.
 */
int ernic_steer_frame_prog(struct ernic_steer *st, uint32_t slot,
			   const struct roce_l3 *local, char *err,
			   size_t errlen);
void ernic_steer_close(struct ernic_steer *st);

#endif
