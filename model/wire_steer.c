// SPDX-License-Identifier: MIT
/* SO_REUSEPORT steering by BTH destination QP, and on QP1 by CM MAD
 * (wire_steer.h). */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "ibta.h"
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
#define TO_BE16(d) INSN(BPF_ALU | BPF_END | BPF_TO_BE, d, 0, 0, 16)
#define TO_BE32(d) INSN(BPF_ALU | BPF_END | BPF_TO_BE, d, 0, 0, 32)
#define LDX_B(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_B, d, s, o, 0)
#define LDX_H(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_H, d, s, o, 0)
#define LDX_W(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define STX_W(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_W, d, s, o, 0)
#define JA(l) INSN(BPF_JMP | BPF_JA, 0, 0, l, 0)
#define JNE_IMM(d, i, l) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, l, i)
#define JEQ_IMM(d, i, l) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, l, i)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* 64-bit immediate load of a map: two instructions. */
#define LD_MAP_FD(d, fd)                                                  \
	INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd),      \
		INSN(0, 0, 0, 0, 0)

/* Offsets from the UDP header, where an SK_REUSEPORT program's data
 * begins: the BTH follows the 8-byte UDP header, and its bytes 4..7 are
 * a reserved byte and the 24-bit destination QP (IBTA 9.2). On QP1 (UD)
 * a DETH follows the BTH, then the MAD. */
#define UDP_HDR_LEN 8
#define BTH_DESTQP_WORD (UDP_HDR_LEN + 4)
#define MAD_OFF (UDP_HDR_LEN + ROCE_BTH_LEN + ROCE_DETH_LEN)

/* In the MAD (IBTA 13.4.2, 12.6): the management class, the attribute
 * ID, a REQ's service ID, and the top byte of the remote communication
 * ID every other CM message carries. MAD_LEN bytes are read. */
#define MAD_CLASS 1
#define MAD_ATTR_ID 16
#define CM_REQ_SERVICE_ID 32
#define CM_REMOTE_COMM_ID 28
#define MAD_LEN 40

/* Stack (fp - n): the MAD's first bytes, the BTH word, the QP and then
 * the slot to select. */
#define FP_MAD (-8 - MAD_LEN)
#define FP_WORD (-8)
#define FP_KEY (-4)

/* The program, built with labels: emit() copies instructions in and
 * notes each jump, whose offset is a label until prog_done(). */
enum lbl { L_TAG, L_OWNER, L_SELECT, L_PASS, L_COUNT };
#define PROG_MAX 64

struct prog {
	struct bpf_insn insn[PROG_MAX];
	int n, at[L_COUNT];
	int jump[PROG_MAX], njump;
	bool bad;		/* too long, or a jump to no label */
};

static void emit(struct prog *p, size_t n, const struct bpf_insn *in)
{
	for (size_t k = 0; k < n; k++) {
		uint8_t op = BPF_OP(in[k].code);

		if (p->n == PROG_MAX) {
			p->bad = true;
			return;
		}
		if (BPF_CLASS(in[k].code) == BPF_JMP && op != BPF_CALL &&
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

static void build(struct prog *p, int owners_fd, int socks_fd,
		  int services_fd)
{
	enum { R0, R1, R2, R3, R4, R5, R6, R10 = 10 };

	*p = (struct prog){ .n = 0 };
	for (int l = 0; l < L_COUNT; l++)
		p->at[l] = -1;
	EMIT(p, MOV64_REG(R6, R1));		/* ctx */
	/* r0 = skb_load_bytes(ctx, 12, fp - 8, 4) */
	EMIT(p, MOV64_IMM(R2, BTH_DESTQP_WORD), MOV64_REG(R3, R10),
	     ADD64_IMM(R3, FP_WORD), MOV64_IMM(R4, 4),
	     CALL(BPF_FUNC_skb_load_bytes));
	/* a runt: the kernel's own choice */
	EMIT(p, JNE_IMM(R0, 0, L_PASS));
	/* fp - 4 = be32(word) & 0xffffff: the destination QP */
	EMIT(p, LDX_W(R1, R10, FP_WORD), TO_BE32(R1), AND32_IMM(R1, 0xFFFFFF),
	     STX_W(R10, R1, FP_KEY));
	EMIT(p, JNE_IMM(R1, 1, L_OWNER));
	/* QP1: the MAD's first bytes; short, or not CM: QP1's owner */
	EMIT(p, MOV64_REG(R1, R6), MOV64_IMM(R2, MAD_OFF), MOV64_REG(R3, R10),
	     ADD64_IMM(R3, FP_MAD), MOV64_IMM(R4, MAD_LEN),
	     CALL(BPF_FUNC_skb_load_bytes), JNE_IMM(R0, 0, L_OWNER));
	EMIT(p, LDX_B(R1, R10, FP_MAD + MAD_CLASS),
	     JNE_IMM(R1, IB_MGMT_CLASS_CM, L_OWNER));
	EMIT(p, LDX_H(R1, R10, FP_MAD + MAD_ATTR_ID), TO_BE16(R1),
	     JNE_IMM(R1, IB_CM_ATTR_REQ, L_TAG));
	/* a REQ: r0 = &services[service ID as on the wire], slot + 1;
	 * a service nobody claims: QP1's owner */
	EMIT(p, LD_MAP_FD(R1, services_fd), MOV64_REG(R2, R10),
	     ADD64_IMM(R2, FP_MAD + CM_REQ_SERVICE_ID),
	     CALL(BPF_FUNC_map_lookup_elem), JEQ_IMM(R0, 0, L_OWNER),
	     LDX_W(R1, R0, 0), JNE_IMM(R1, 0, L_SELECT), JA(L_OWNER));
	/* any other CM MAD: the remote communication ID's top byte is
	 * slot + 1, 0 for a CM that does not tag (QP1's owner) */
	LABEL(p, L_TAG);
	EMIT(p, LDX_B(R1, R10, FP_MAD + CM_REMOTE_COMM_ID),
	     JNE_IMM(R1, 0, L_SELECT));
	/* r0 = &owners[qp], NULL past the array; slot + 1, 0 for none */
	LABEL(p, L_OWNER);
	EMIT(p, LD_MAP_FD(R1, owners_fd), MOV64_REG(R2, R10),
	     ADD64_IMM(R2, FP_KEY), CALL(BPF_FUNC_map_lookup_elem),
	     JEQ_IMM(R0, 0, L_PASS), LDX_W(R1, R0, 0));
	/* r1 = slot + 1: sk_select_reuseport(ctx, socks, &slot, 0); a miss
	 * (the slot's socket is gone) leaves the kernel's choice */
	LABEL(p, L_SELECT);
	EMIT(p, JEQ_IMM(R1, 0, L_PASS), ADD64_IMM(R1, -1),
	     STX_W(R10, R1, FP_KEY), MOV64_REG(R1, R6),
	     LD_MAP_FD(R2, socks_fd), MOV64_REG(R3, R10),
	     ADD64_IMM(R3, FP_KEY), MOV64_IMM(R4, 0),
	     CALL(BPF_FUNC_sk_select_reuseport));
	LABEL(p, L_PASS);
	EMIT(p, MOV64_IMM(R0, SK_PASS), EXIT());
	prog_done(p);
}

static int load_prog(int owners_fd, int socks_fd, int services_fd,
		     char *log, size_t loglen)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = BPF_SK_REUSEPORT_SELECT);
	struct prog p;
	int fd, e;

	build(&p, owners_fd, socks_fd, services_fd);
	if (p.bad) {
		snprintf(log, loglen, "over %d instructions, or a jump to "
			 "no label", PROG_MAX);
		errno = EFAULT;
		return -1;
	}
	fd = bpf_prog_load(BPF_PROG_TYPE_SK_REUSEPORT, "ernic_destqp", "MIT",
			   p.insn, (size_t)p.n, &opts);
	if (fd >= 0 || errno != EINVAL)
		return fd;
	/* Refused by the verifier: load again for its reason. */
	e = errno;
	opts.log_buf = log;
	opts.log_size = (__u32)loglen;
	opts.log_level = 1;
	(void)bpf_prog_load(BPF_PROG_TYPE_SK_REUSEPORT, "ernic_destqp", "MIT",
			    p.insn, (size_t)p.n, &opts);
	errno = e;
	return -1;
}

static int fail(struct ernic_steer *st, char *err, size_t errlen, int e,
		const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < errlen)
		snprintf(err + n, errlen - (size_t)n, ": %s%s", strerror(e),
			 e == EPERM ? " (sharing a software ERNIC between "
				      "processes needs CAP_BPF and "
				      "CAP_NET_ADMIN, or root)" : "");
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
	st->prog_fd = load_prog(st->owners_fd, st->socks_fd,
				st->services_fd, log, sizeof(log));
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
