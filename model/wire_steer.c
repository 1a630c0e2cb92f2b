// SPDX-License-Identifier: MIT
/* SO_REUSEPORT steering by BTH destination QP, and on QP1 by CM MAD
 * (wire_steer.h). */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>

#include "ibta.h"
#include "roce_pkt.h"
#include "wire_steer.h"

#ifndef SO_ATTACH_REUSEPORT_EBPF
#define SO_ATTACH_REUSEPORT_EBPF 52
#endif

/* The eBPF instructions this program needs, as the kernel's filter.h
 * spells them (that header is not exported to user space). A jump's
 * offset o is a label (enum lbl), resolved by the builder below. */
#define INSN(c, d, s, o, i)                                               \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s),   \
			    .off = (o), .imm = (i) })
#define MOV64_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD64_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define AND32_IMM(d, i) INSN(BPF_ALU | BPF_AND | BPF_K, d, 0, 0, i)
#define LSH64_IMM(d, i) INSN(BPF_ALU64 | BPF_LSH | BPF_K, d, 0, 0, i)
#define TO_BE16(d) INSN(BPF_ALU | BPF_END | BPF_TO_BE, d, 0, 0, 16)
#define TO_BE32(d) INSN(BPF_ALU | BPF_END | BPF_TO_BE, d, 0, 0, 32)
#define LDX_B(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_B, d, s, o, 0)
#define LDX_H(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_H, d, s, o, 0)
#define LDX_W(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define STX_W(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_W, d, s, o, 0)
#define JA(l) INSN(BPF_JMP | BPF_JA, 0, 0, l, 0)
#define JNE_IMM(d, i, l) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, l, i)
/* 32-bit compare: imm is not sign-extended against a loaded word */
#define JNE32_IMM(d, i, l) INSN(BPF_JMP32 | BPF_JNE | BPF_K, d, 0, l, i)
#define JEQ_IMM(d, i, l) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, l, i)
#define JGE_IMM(d, i, l) INSN(BPF_JMP | BPF_JGE | BPF_K, d, 0, l, i)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* 64-bit immediate load of a map: two instructions. */
#define LD_MAP_FD(d, fd)                                                  \
	INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd),      \
		INSN(0, 0, 0, 0, 0)

/* Where the RoCE headers are, from the BTH: its bytes 4..7 are a
 * reserved byte and the 24-bit destination QP (IBTA 9.2); on QP1 (UD) a
 * DETH follows the BTH, then the MAD. An SK_REUSEPORT program's data
 * begins at the UDP header, a socket filter's on an AF_PACKET socket at
 * the Ethernet header (no VLAN tag: a NIC's is out of band). */
#define UDP_HDR_LEN 8
#define BTH_DESTQP_WORD 4
#define BTH_MAD (ROCE_BTH_LEN + ROCE_DETH_LEN)
#define IPV4_HDR_MIN 20
#define IPV6_HDR_LEN 40

/* In the MAD (IBTA 13.4.2, 12.6): the management class, the attribute
 * ID, a REQ's service ID, and the top byte of the remote communication
 * ID every other CM message carries. MAD_LEN bytes are read. */
#define MAD_CLASS 1
#define MAD_ATTR_ID 16
#define CM_REQ_SERVICE_ID 32
#define CM_REMOTE_COMM_ID 28
#define MAD_LEN 40

/* Stack (fp - n): the MAD's first bytes, the BTH word, the QP and then
 * the slot to select. A frame's first bytes (from its ethertype) go
 * where the MAD will, its UDP destination port where the BTH word will. */
#define FP_MAD (-8 - MAD_LEN)
#define FP_WORD (-8)
#define FP_KEY (-4)
#define FRAME_HEAD 12		/* ethertype .. IPv4 protocol */
#define FRAME_HEAD_LEN 12

/* The program, built with labels: emit() copies instructions in and
 * notes each jump, whose offset is a label until prog_done(). */
enum lbl {
	L_TAG, L_OWNER, L_NAMED, L_NOBODY, L_PASS,	/* both programs */
	L_IPV6, L_IHL, L_UDP, L_MAC, L_OURS, L_CHECK, L_DROP, /* frames */
	L_COUNT
};
#define PROG_MAX 160

struct prog {
	struct bpf_insn insn[PROG_MAX];
	int n, at[L_COUNT];
	int jump[PROG_MAX], njump;
	bool bad;		/* too long, or a jump to no label */
};

enum { R0, R1, R2, R3, R4, R5, R6, R7, R10 = 10 };

static void emit(struct prog *p, size_t n, const struct bpf_insn *in)
{
	for (size_t k = 0; k < n; k++) {
		uint8_t op = BPF_OP(in[k].code);

		if (p->n == PROG_MAX) {
			p->bad = true;
			return;
		}
		if ((BPF_CLASS(in[k].code) == BPF_JMP ||
		     BPF_CLASS(in[k].code) == BPF_JMP32) && op != BPF_CALL &&
		    op != BPF_EXIT)
			p->jump[p->njump++] = p->n;
		p->insn[p->n++] = in[k];
	}
}

#define EMIT(p, ...)                                                      \
	emit(p, sizeof((struct bpf_insn[]){ __VA_ARGS__ }) /               \
			sizeof(struct bpf_insn),                          \
	     (struct bpf_insn[]){ __VA_ARGS__ })
#define LABEL(p, l) ((p)->at[l] = (p)->n)

static void prog_init(struct prog *p)
{
	*p = (struct prog){ .n = 0 };
	for (int l = 0; l < L_COUNT; l++)
		p->at[l] = -1;
}

static void prog_done(struct prog *p)
{
	for (int k = 0; k < p->njump; k++) {
		struct bpf_insn *j = &p->insn[p->jump[k]];

		if (j->off < 0 || j->off >= L_COUNT || p->at[j->off] < 0) {
			p->bad = true;
			return;
		}
		j->off = (int16_t)(p->at[j->off] - p->jump[k] - 1);
	}
}

/* Where the BTH begins in the program's data: at offset off, or (reg)
 * at the offset R7 holds. */
struct bth_at {
	bool reg;
	int32_t off;
};

/* r2 = the BTH's offset + k */
static void emit_bth_off(struct prog *p, const struct bth_at *at, int32_t k)
{
	if (at->reg)
		EMIT(p, MOV64_REG(R2, R7), ADD64_IMM(R2, k));
	else
		EMIT(p, MOV64_IMM(R2, at->off + k));
}

/*
 * Which process the RoCE packet whose BTH is at `at` names, as
 * wire_steer.h says (R6: the context). Ends at L_NAMED (next) with r1 =
 * slot + 1, or 0 where QP1's owner is not there either; a runt and a QP
 * past the array jump to L_NOBODY. The stack holds the QP at FP_KEY.
 */
static void emit_named(struct prog *p, const struct bth_at *at,
		       int owners_fd, int services_fd)
{
	/* r0 = skb_load_bytes(ctx, bth + 4, fp - 8, 4) */
	EMIT(p, MOV64_REG(R1, R6));
	emit_bth_off(p, at, BTH_DESTQP_WORD);
	EMIT(p, MOV64_REG(R3, R10), ADD64_IMM(R3, FP_WORD), MOV64_IMM(R4, 4),
	     CALL(BPF_FUNC_skb_load_bytes));
	EMIT(p, JNE_IMM(R0, 0, L_NOBODY));
	/* fp - 4 = be32(word) & 0xffffff: the destination QP */
	EMIT(p, LDX_W(R1, R10, FP_WORD), TO_BE32(R1), AND32_IMM(R1, 0xFFFFFF),
	     STX_W(R10, R1, FP_KEY));
	EMIT(p, JNE_IMM(R1, 1, L_OWNER));
	/* QP1: the MAD's first bytes; short, or not CM: QP1's owner */
	EMIT(p, MOV64_REG(R1, R6));
	emit_bth_off(p, at, (int32_t)BTH_MAD);
	EMIT(p, MOV64_REG(R3, R10), ADD64_IMM(R3, FP_MAD),
	     MOV64_IMM(R4, MAD_LEN), CALL(BPF_FUNC_skb_load_bytes),
	     JNE_IMM(R0, 0, L_OWNER));
	EMIT(p, LDX_B(R1, R10, FP_MAD + MAD_CLASS),
	     JNE_IMM(R1, IB_MGMT_CLASS_CM, L_OWNER));
	EMIT(p, LDX_H(R1, R10, FP_MAD + MAD_ATTR_ID), TO_BE16(R1),
	     JNE_IMM(R1, IB_CM_ATTR_REQ, L_TAG));
	/* a REQ: r0 = &services[service ID as on the wire], slot + 1;
	 * a service nobody claims: QP1's owner */
	EMIT(p, LD_MAP_FD(R1, services_fd), MOV64_REG(R2, R10),
	     ADD64_IMM(R2, FP_MAD + CM_REQ_SERVICE_ID),
	     CALL(BPF_FUNC_map_lookup_elem), JEQ_IMM(R0, 0, L_OWNER),
	     LDX_W(R1, R0, 0), JNE_IMM(R1, 0, L_NAMED), JA(L_OWNER));
	/* any other CM MAD: the remote communication ID's top byte is
	 * slot + 1, 0 for a CM that does not tag (QP1's owner) */
	LABEL(p, L_TAG);
	EMIT(p, LDX_B(R1, R10, FP_MAD + CM_REMOTE_COMM_ID),
	     JNE_IMM(R1, 0, L_NAMED));
	/* r0 = &owners[qp], NULL past the array; slot + 1, 0 for none */
	LABEL(p, L_OWNER);
	EMIT(p, LD_MAP_FD(R1, owners_fd), MOV64_REG(R2, R10),
	     ADD64_IMM(R2, FP_KEY), CALL(BPF_FUNC_map_lookup_elem),
	     JEQ_IMM(R0, 0, L_NOBODY), LDX_W(R1, R0, 0));
	LABEL(p, L_NAMED);
}

/* SK_REUSEPORT: select the named slot's socket in socks; nobody, and a
 * slot whose socket is gone, leave the kernel's hash choice. */
static void build(struct prog *p, int owners_fd, int socks_fd,
		  int services_fd)
{
	const struct bth_at at = { .reg = false, .off = UDP_HDR_LEN };

	prog_init(p);
	EMIT(p, MOV64_REG(R6, R1));		/* ctx */
	emit_named(p, &at, owners_fd, services_fd);
	/* r1 = slot + 1: sk_select_reuseport(ctx, socks, &slot, 0); a miss
	 * (the slot's socket is gone) leaves the kernel's choice */
	EMIT(p, JEQ_IMM(R1, 0, L_PASS), ADD64_IMM(R1, -1),
	     STX_W(R10, R1, FP_KEY), MOV64_REG(R1, R6),
	     LD_MAP_FD(R2, socks_fd), MOV64_REG(R3, R10),
	     ADD64_IMM(R3, FP_KEY), MOV64_IMM(R4, 0),
	     CALL(BPF_FUNC_sk_select_reuseport));
	LABEL(p, L_NOBODY);
	LABEL(p, L_PASS);
	EMIT(p, MOV64_IMM(R0, SK_PASS), EXIT());
	prog_done(p);
}

/*
 * A frame to UDP port 4791 (its first bytes from the ethertype at
 * FP_MAD) is this port's by roce_pkt.h's rule: its destination IP is
 * local's, or its destination MAC local's non-zero MAC. Else L_DROP.
 */
static void emit_ours(struct prog *p, const struct roce_l3 *local)
{
	const bool v6 = local->family == AF_INET6;
	const int32_t n = v6 ? 16 : 4;
	uint32_t w;
	uint16_t h;

	EMIT(p, LDX_H(R1, R10, FP_MAD), TO_BE16(R1),
	     JNE_IMM(R1, v6 ? ETH_P_IPV6 : ETH_P_IP, L_MAC));
	/* fp - 48 = the destination address */
	EMIT(p, MOV64_REG(R1, R6), MOV64_IMM(R2, ETH_HLEN + (v6 ? 24 : 16)),
	     MOV64_REG(R3, R10), ADD64_IMM(R3, FP_MAD), MOV64_IMM(R4, n),
	     CALL(BPF_FUNC_skb_load_bytes), JNE_IMM(R0, 0, L_DROP));
	for (int32_t k = 0; k < n; k += 4) {
		memcpy(&w, local->dst + k, 4);	/* as LDX_W reads it */
		EMIT(p, LDX_W(R1, R10, FP_MAD + k),
		     JNE32_IMM(R1, (int32_t)w, L_MAC));
	}
	EMIT(p, JA(L_OURS));
	LABEL(p, L_MAC);
	if (!roce_mac_claims(local->dst_mac)) {
		EMIT(p, JA(L_DROP));
	} else {
		memcpy(&w, local->dst_mac, 4);
		memcpy(&h, local->dst_mac + 4, 2);
		EMIT(p, MOV64_REG(R1, R6), MOV64_IMM(R2, 0),
		     MOV64_REG(R3, R10), ADD64_IMM(R3, FP_MAD),
		     MOV64_IMM(R4, 6), CALL(BPF_FUNC_skb_load_bytes),
		     JNE_IMM(R0, 0, L_DROP), LDX_W(R1, R10, FP_MAD),
		     JNE32_IMM(R1, (int32_t)w, L_DROP),
		     LDX_H(R1, R10, FP_MAD + 4), JNE32_IMM(R1, h, L_DROP));
	}
	LABEL(p, L_OURS);
}

/*
 * Socket filter for slot's AF_PACKET socket: IPv4 (options skipped, IHL
 * < 5 read as 20) or IPv6 UDP to 4791, as wire_frame_filter in
 * wire_frame.c takes them, whose named slot (nobody: QP1's owner's) is
 * slot. Keeps the whole frame (skb->len), or nothing.
 */
static void build_frame(struct prog *p, uint32_t slot,
			const struct roce_l3 *local, int owners_fd,
			int services_fd)
{
	const struct bth_at at = { .reg = true };

	prog_init(p);
	EMIT(p, MOV64_REG(R6, R1));		/* ctx */
	/* fp - 48 = frame bytes 12..23, or drop a runt */
	EMIT(p, MOV64_IMM(R2, FRAME_HEAD), MOV64_REG(R3, R10),
	     ADD64_IMM(R3, FP_MAD), MOV64_IMM(R4, FRAME_HEAD_LEN),
	     CALL(BPF_FUNC_skb_load_bytes), JNE_IMM(R0, 0, L_DROP));
	EMIT(p, LDX_H(R1, R10, FP_MAD), TO_BE16(R1),
	     JNE_IMM(R1, ETH_P_IP, L_IPV6));
	/* IPv4: UDP; r7 = the UDP header's offset, 14 + 4 * IHL (>= 20) */
	EMIT(p, LDX_B(R2, R10, FP_MAD + ETH_HLEN - FRAME_HEAD + 9),
	     JNE_IMM(R2, IPPROTO_UDP, L_DROP),
	     LDX_B(R1, R10, FP_MAD + ETH_HLEN - FRAME_HEAD),
	     AND32_IMM(R1, 0xF), LSH64_IMM(R1, 2),
	     JGE_IMM(R1, IPV4_HDR_MIN, L_IHL), MOV64_IMM(R1, IPV4_HDR_MIN));
	LABEL(p, L_IHL);
	EMIT(p, ADD64_IMM(R1, ETH_HLEN), MOV64_REG(R7, R1), JA(L_UDP));
	/* IPv6: UDP as the next header, no extension headers */
	LABEL(p, L_IPV6);
	EMIT(p, JNE_IMM(R1, ETH_P_IPV6, L_DROP),
	     LDX_B(R2, R10, FP_MAD + ETH_HLEN - FRAME_HEAD + 6),
	     JNE_IMM(R2, IPPROTO_UDP, L_DROP),
	     MOV64_IMM(R7, ETH_HLEN + IPV6_HDR_LEN));
	/* the UDP destination port: 4791; r7 = the BTH's offset */
	LABEL(p, L_UDP);
	EMIT(p, MOV64_REG(R1, R6), MOV64_REG(R2, R7), ADD64_IMM(R2, 2),
	     MOV64_REG(R3, R10), ADD64_IMM(R3, FP_WORD), MOV64_IMM(R4, 2),
	     CALL(BPF_FUNC_skb_load_bytes), JNE_IMM(R0, 0, L_DROP),
	     LDX_H(R1, R10, FP_WORD), TO_BE16(R1),
	     JNE_IMM(R1, ROCE_UDP_PORT, L_DROP), ADD64_IMM(R7, UDP_HDR_LEN));
	if (local)
		emit_ours(p, local);
	emit_named(p, &at, owners_fd, services_fd);
	EMIT(p, JNE_IMM(R1, 0, L_CHECK));
	/* nobody: r1 = owners[1], slot + 1 or 0 */
	LABEL(p, L_NOBODY);
	EMIT(p, MOV64_IMM(R1, 1), STX_W(R10, R1, FP_KEY),
	     LD_MAP_FD(R1, owners_fd), MOV64_REG(R2, R10),
	     ADD64_IMM(R2, FP_KEY), CALL(BPF_FUNC_map_lookup_elem),
	     JEQ_IMM(R0, 0, L_DROP), LDX_W(R1, R0, 0));
	LABEL(p, L_CHECK);
	EMIT(p, JNE_IMM(R1, (int32_t)slot + 1, L_DROP),
	     LDX_W(R0, R6, offsetof(struct __sk_buff, len)), EXIT());
	LABEL(p, L_DROP);
	EMIT(p, MOV64_IMM(R0, 0), EXIT());
	prog_done(p);
}

static int load_prog(const struct prog *p, enum bpf_prog_type type,
		     enum bpf_attach_type attach, const char *name,
		     char *log, size_t loglen)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = attach);
	int fd, e;

	if (p->bad) {
		snprintf(log, loglen, "over %d instructions, or a jump to "
			 "no label", PROG_MAX);
		errno = EFAULT;
		return -1;
	}
	fd = bpf_prog_load(type, name, "MIT", p->insn, (size_t)p->n, &opts);
	if (fd >= 0 || errno != EINVAL)
		return fd;
	/* Refused by the verifier: load again for its reason. */
	e = errno;
	opts.log_buf = log;
	opts.log_size = (__u32)loglen;
	opts.log_level = 1;
	(void)bpf_prog_load(type, name, "MIT", p->insn, (size_t)p->n, &opts);
	errno = e;
	return -1;
}

/* err = the formatted reason, ": ", strerror(e) and a hint for EPERM */
static void vreason(char *err, size_t errlen, int e, const char *fmt,
		    va_list ap)
{
	int n = vsnprintf(err, errlen, fmt, ap);

	if (n >= 0 && (size_t)n < errlen)
		snprintf(err + n, errlen - (size_t)n, ": %s%s", strerror(e),
			 e == EPERM ? " (sharing a software ERNIC between "
				      "processes needs CAP_BPF and "
				      "CAP_NET_ADMIN, or root)" : "");
}

static void reason(char *err, size_t errlen, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreason(err, errlen, e, fmt, ap);
	va_end(ap);
}

static int fail(struct ernic_steer *st, char *err, size_t errlen, int e,
		const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreason(err, errlen, e, fmt, ap);
	va_end(ap);
	ernic_steer_close(st);
	return e;
}

static int map_id(int fd, uint32_t *id)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	*id = info.id;
	return 0;
}

void ernic_steer_init(struct ernic_steer *st)
{
	st->socks_fd = st->owners_fd = st->services_fd = st->prog_fd = -1;
	st->ids = (struct ernic_steer_ids){ 0 };
}

int ernic_steer_open(struct ernic_steer *st, int fd,
		     const struct ernic_steer_ids *join, char *err,
		     size_t errlen)
{
	char log[1024] = "";
	struct prog p;

	ernic_steer_init(st);
	if (join) {
		st->socks_fd = bpf_map_get_fd_by_id(join->socks);
		if (st->socks_fd < 0)
			return fail(st, err, errlen, errno,
				    "steering map %u", join->socks);
		st->owners_fd = bpf_map_get_fd_by_id(join->owners);
		if (st->owners_fd < 0)
			return fail(st, err, errlen, errno,
				    "steering map %u", join->owners);
		st->services_fd = bpf_map_get_fd_by_id(join->services);
		if (st->services_fd < 0)
			return fail(st, err, errlen, errno,
				    "steering map %u", join->services);
		st->ids = *join;
		return 0;
	}
	st->socks_fd = bpf_map_create(BPF_MAP_TYPE_REUSEPORT_SOCKARRAY,
				      "ernic_socks", sizeof(uint32_t),
				      sizeof(uint64_t), ERNIC_STEER_SLOTS,
				      NULL);
	if (st->socks_fd < 0)
		return fail(st, err, errlen, errno, "steering map (sockets)");
	st->owners_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ernic_owners",
				       sizeof(uint32_t), sizeof(uint32_t),
				       ERNIC_STEER_QPS, NULL);
	if (st->owners_fd < 0)
		return fail(st, err, errlen, errno, "steering map (owners)");
	/* key: the service ID as on the wire (big-endian) */
	st->services_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "ernic_svcs",
					 sizeof(uint64_t), sizeof(uint32_t),
					 ERNIC_STEER_SERVICES, NULL);
	if (st->services_fd < 0)
		return fail(st, err, errlen, errno,
			    "steering map (services)");
	build(&p, st->owners_fd, st->socks_fd, st->services_fd);
	st->prog_fd = load_prog(&p, BPF_PROG_TYPE_SK_REUSEPORT,
				BPF_SK_REUSEPORT_SELECT, "ernic_destqp", log,
				sizeof(log));
	if (st->prog_fd < 0)
		return fail(st, err, errlen, errno, "steering program%s%s",
			    *log ? ": " : "", log);
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF,
		       &st->prog_fd, sizeof(st->prog_fd)))
		return fail(st, err, errlen, errno,
			    "SO_ATTACH_REUSEPORT_EBPF");
	if (map_id(st->socks_fd, &st->ids.socks) ||
	    map_id(st->owners_fd, &st->ids.owners) ||
	    map_id(st->services_fd, &st->ids.services))
		return fail(st, err, errlen, errno, "steering map ids");
	return 0;
}

int ernic_steer_member(struct ernic_steer *st, uint32_t slot, int fd)
{
	uint64_t v = (uint64_t)fd;

	if (slot >= ERNIC_STEER_SLOTS)
		return EINVAL;
	return bpf_map_update_elem(st->socks_fd, &slot, &v, BPF_ANY) ?
		       errno : 0;
}

static int set_owner(struct ernic_steer *st, uint32_t qpn, uint32_t v)
{
	if (qpn >= ERNIC_STEER_QPS)
		return EINVAL;
	return bpf_map_update_elem(st->owners_fd, &qpn, &v, BPF_ANY) ?
		       errno : 0;
}

int ernic_steer_set(struct ernic_steer *st, uint32_t qpn, uint32_t slot)
{
	if (slot >= ERNIC_STEER_SLOTS)
		return EINVAL;
	return set_owner(st, qpn, slot + 1);
}

int ernic_steer_clear(struct ernic_steer *st, uint32_t qpn)
{
	return set_owner(st, qpn, 0);
}

int ernic_steer_service_set(struct ernic_steer *st, uint64_t service_id,
			    uint32_t slot)
{
	uint64_t key = htobe64(service_id);
	uint32_t v = slot + 1;

	if (slot >= ERNIC_STEER_SLOTS)
		return EINVAL;
	if (!bpf_map_update_elem(st->services_fd, &key, &v, BPF_ANY))
		return 0;
	/* a full hash map answers E2BIG */
	return errno == E2BIG ? ENOSPC : errno;
}

int ernic_steer_service_clear(struct ernic_steer *st, uint64_t service_id)
{
	uint64_t key = htobe64(service_id);

	if (bpf_map_delete_elem(st->services_fd, &key) && errno != ENOENT)
		return errno;
	return 0;
}

int ernic_steer_owner(struct ernic_steer *st, uint32_t qpn, uint32_t *slot)
{
	uint32_t v = 0;

	if (qpn >= ERNIC_STEER_QPS ||
	    bpf_map_lookup_elem(st->owners_fd, &qpn, &v) || !v)
		return ENOENT;
	*slot = v - 1;
	return 0;
}

bool ernic_steer_live(struct ernic_steer *st, uint32_t slot)
{
	uint64_t cookie;

	/* a sockarray answers with the socket's cookie, or ENOENT */
	return slot < ERNIC_STEER_SLOTS &&
	       !bpf_map_lookup_elem(st->socks_fd, &slot, &cookie);
}

void ernic_steer_close(struct ernic_steer *st)
{
	/* The group keeps the program, and the program the maps, for as
	 * long as any socket of the group is open. */
	if (st->prog_fd >= 0)
		close(st->prog_fd);
	if (st->socks_fd >= 0)
		close(st->socks_fd);
	if (st->owners_fd >= 0)
		close(st->owners_fd);
	if (st->services_fd >= 0)
		close(st->services_fd);
	st->socks_fd = st->owners_fd = st->services_fd = st->prog_fd = -1;
}

int ernic_steer_frame_prog(struct ernic_steer *st, uint32_t slot,
			   const struct roce_l3 *local, char *err,
			   size_t errlen)
{
	char log[1024] = "";
	struct prog p;
	int fd, e;

	if (slot >= ERNIC_STEER_SLOTS || st->owners_fd < 0 ||
	    st->services_fd < 0) {
		reason(err, errlen, EINVAL, "frame steering program: %s %u",
		       slot >= ERNIC_STEER_SLOTS ? "no slot" : "no maps for slot",
		       slot);
		errno = EINVAL;
		return -1;
	}
	if (local && local->family != AF_INET && local->family != AF_INET6) {
		reason(err, errlen, EINVAL, "frame steering program: family %d",
		       local->family);
		errno = EINVAL;
		return -1;
	}
	build_frame(&p, slot, local, st->owners_fd, st->services_fd);
	fd = load_prog(&p, BPF_PROG_TYPE_SOCKET_FILTER, 0, "ernic_frame", log,
		       sizeof(log));
	if (fd < 0) {
		e = errno;
		reason(err, errlen, e, "frame steering program%s%s",
		       *log ? ": " : "", log);
		errno = e;
	}
	return fd;
}
