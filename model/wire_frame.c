// SPDX-License-Identifier: MIT
/* The frame wire's receive side: its socket's filter, frames, and UDP
 * GSO trains cut back into their packets (wire_frame.h). */
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ernic_wire.h"
#include "wire_frame.h"

int wire_attach_filter(int fd, struct sock_filter *code, unsigned short n)
{
	struct sock_fprog prog = { .len = n, .filter = code };

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog,
			  sizeof(prog));
}

/*
 * Frames that can be RoCEv2 for this port: IPv4/UDP or IPv6/UDP with
 * destination port 4791, located as roce_frame_parse does (IPv4 options
 * skipped, IHL < 5 read as 20 B), and addressed to it as roce_pkt.h's
 * rule says (the destination IP is local's, or the destination MAC is
 * local's non-zero one): other devices' frames on a shared netdev (two
 * ports on lo see each other's, and their own looped back) stay in the
 * kernel. Everything else does too.
 */
int wire_frame_filter(int fd, const struct roce_l3 *local)
{
	const bool v6 = local->family == AF_INET6;
	const uint32_t ip_at = ETH_HLEN + (v6 ? 24 : 16);
	struct sock_filter code[40] = {
		/* 0 */ BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
		/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 8),
		/* 2 */ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 14 + 9),
		/* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, 12),
		/* 4 */ BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 14),
		/* 5 */ BPF_STMT(BPF_MISC | BPF_TXA, 0),
		/* 6 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 20, 1, 0),
		/* 7 */ BPF_STMT(BPF_LDX | BPF_IMM, 20),
		/* 8 */ BPF_STMT(BPF_LD | BPF_H | BPF_IND, 14 + 2),
		/* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ROCE_UDP_PORT, 5, 6),
		/* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IPV6, 0, 5),
		/* 11 */ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 14 + 6),
		/* 12 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, 3),
		/* 13 */ BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 14 + 40 + 2),
		/* 14 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ROCE_UDP_PORT, 0, 1),
		/* 15 */ BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0),
		/* 16 */ BPF_STMT(BPF_RET | BPF_K, 0),
		/* 17: UDP to 4791; is it ours? The family first. */
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
	};
	const unsigned int words = v6 ? 4 : 1;
	unsigned short n = 18;
	uint32_t mac4;
	uint16_t mac2;

	/* jf: to the MAC test, past the rest of this block: the words
	 * left (two each), the accept */
	code[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						 v6 ? ETH_P_IPV6 : ETH_P_IP, 0,
						 (uint8_t)(2 * words + 1));
	for (unsigned int k = 0; k < words; k++) {
		code[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
							 ip_at + 4 * k);
		code[n++] = (struct sock_filter)BPF_JUMP(
			BPF_JMP | BPF_JEQ | BPF_K,
			ernic_get32(local->dst + 4 * k), 0,
			(uint8_t)(2 * (words - 1 - k) + 1));
	}
	code[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0xFFFFFFFFu);
	/* not our address: ours only by a MAC of our own (not lo's zeros) */
	if (!roce_mac_claims(local->dst_mac)) {
		code[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	} else {
		mac4 = ernic_get32(local->dst_mac);
		mac2 = ernic_get16(local->dst_mac + 4);
		code[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0);
		code[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							 mac4, 0, 3);
		code[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 4);
		code[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							 mac2, 0, 1);
		code[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
							 0xFFFFFFFFu);
		code[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	}
	return wire_attach_filter(fd, code, n);
}

/* A burst of foreign frames must not keep model_wire_recv busy. */
#define RECV_SKIP_MAX 64

/* Frame syndromes after which l3 cannot describe the header the ICRC
 * covered (options, other flags/offset, lengths, family). */
#define NOT_CHECKABLE (ROCE_SYN_IP_VERSION | ROCE_SYN_IPV4_HDR_LEN | \
		       ROCE_SYN_IPV4_FLAGS | ROCE_SYN_IPV4_FRAG | \
		       ROCE_SYN_IP_LEN | ROCE_SYN_UDP_LEN | ROCE_SYN_MALFORMED)

/* Every packet of a train of s-byte packets begins as the first does
 * (P_Key, reserved byte, destination QP), and the last is a packet. */
static bool train_fits(const uint8_t *tp, size_t tlen, size_t s)
{
	size_t off;

	for (off = s; tlen - off > s; off += s)
		if (memcmp(tp + off + 2, tp + 2, 6))
			return false;
	/* the last: tlen - off bytes, 0 < them <= s */
	return tlen - off >= WIRE_SEG_MIN && !memcmp(tp + off + 2, tp + 2, 6);
}

size_t wire_train_seg(const struct roce_l3 *l3, const uint8_t *tp,
		      size_t tlen)
{
	unsigned int tries = 0;
	size_t max;

	if (!l3 || !tp || tlen < 2 * WIRE_SEG_MIN || tlen % 4)
		return 0;
	max = tlen - WIRE_SEG_MIN;	/* room for a last packet */
	if (max > ROCE_MAX_TRANSPORT)
		max = ROCE_MAX_TRANSPORT;
	for (size_t s = WIRE_SEG_MIN; s <= max; s += 4) {
		/* cheap first: the next packet's BTH where s says */
		if (memcmp(tp + s + 2, tp + 2, 6) || !train_fits(tp, tlen, s))
			continue;
		if (++tries > WIRE_SEG_TRIES)
			return 0;
		if (roce_icrc(l3, tp, s) ==
		    ernic_get_le32(tp + s - ROCE_ICRC_LEN))
			return s;
	}
	return 0;
}

int wire_frame_init(struct wire_frame_rx *r, int fd, struct wire_ring *ring,
		    const struct roce_l3 *local,
		    struct model_wire_stats *stats, char *err, size_t errlen)
{
	int one = 1;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->ring = ring;
	r->local = *local;
	r->stats = stats;
	/* tp_status: which frames this host's stack built (wire_frame.h) */
	if (setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one))) {
		int e = errno;

		snprintf(err, errlen, "AF_PACKET auxiliary data: %s",
			 strerror(e));
		return e;
	}
	r->buf = malloc(WIRE_FRAME_BUF);
	if (!r->buf) {
		snprintf(err, errlen, "wire: out of memory");
		return ENOMEM;
	}
	return 0;
}

void wire_frame_fini(struct wire_frame_rx *r)
{
	free(r->buf);
	r->buf = NULL;
	r->pending = false;
}

/* The next packet of the train being handed out, as a frame of its own
 * would give it. */
static int train_next(struct wire_frame_rx *r, struct roce_l3 *l3,
		      const uint8_t **tp, size_t *tlen, uint32_t *syndrome,
		      int *check_icrc)
{
	size_t n = r->left < r->seg ? r->left : r->seg;

	*l3 = r->l3;
	/* the kernel numbers the packets of a train it splits on */
	if (l3->family == AF_INET)
		l3->ip_id = (uint16_t)(r->l3.ip_id + r->k);
	*tp = r->tp;
	*tlen = n;
	*syndrome = 0;
	*check_icrc = 1;
	r->tp += n;
	r->left -= n;
	r->k++;
	r->pending = r->left != 0;
	r->stats->rx_pkts++;
	return 1;
}

/* One frame: n bytes long, have of them at frame (fewer: it was cut),
 * status its tp_status. 1 with a packet (or a train's first), 0 if not
 * ours. */
static int take_frame(struct wire_frame_rx *r, const uint8_t *frame,
		      size_t n, size_t have, size_t cap, uint32_t status,
		      struct roce_l3 *l3, const uint8_t **tp, size_t *tlen,
		      uint32_t *syndrome, int *check_icrc)
{
	uint32_t syn;

	syn = roce_frame_parse(frame, have, &r->local, l3, tp, tlen);
	if (syn == ROCE_NOT_ROCE)
		return 0;
	if (!syn && n == have && (status & TP_STATUS_CSUMNOTREADY)) {
		size_t seg = wire_train_seg(l3, *tp, *tlen);

		if (seg) {
			r->l3 = *l3;
			r->tp = *tp;
			r->left = *tlen;
			r->seg = seg;
			r->k = 0;
			r->stats->rx_trains++;
			return train_next(r, l3, tp, tlen, syndrome,
					  check_icrc);
		}
	}
	r->stats->rx_pkts++;
	if (n > cap || n > have) {
		/* longer than any RoCE frame, or cut: what fits, flagged */
		syn = roce_frame_parse(frame, have < cap ? have : cap,
				       &r->local, l3, tp, tlen);
		if (syn == ROCE_NOT_ROCE)
			return 0;
		syn = ROCE_SYN_MALFORMED;
	}
	*syndrome = syn;
	*check_icrc = !(syn & NOT_CHECKABLE);
	return 1;
}

/* The frame the ring says is queued whole on the socket (TP_STATUS_COPY),
 * into r->buf: its length (more than the buffer: cut), 0 if none, or
 * -errno; *status its tp_status. */
static ssize_t read_queued(struct wire_frame_rx *r, uint32_t *status)
{
	struct iovec iov = { .iov_base = r->buf, .iov_len = WIRE_FRAME_BUF };
	union {
		char buf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
		struct cmsghdr align;
	} cbuf;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf.buf,
			      .msg_controllen = sizeof(cbuf.buf) };
	struct cmsghdr *c;
	ssize_t n;

	do
		n = recvmsg(r->fd, &msg, MSG_DONTWAIT | MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	*status = 0;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		struct tpacket_auxdata aux;

		if (c->cmsg_level != SOL_PACKET ||
		    c->cmsg_type != PACKET_AUXDATA ||
		    c->cmsg_len < CMSG_LEN(sizeof(aux)))
			continue;
		memcpy(&aux, CMSG_DATA(c), sizeof(aux));
		*status = aux.tp_status;
	}
	return n;
}

int wire_frame_recv(struct wire_frame_rx *r, size_t cap, struct roce_l3 *l3,
		    const uint8_t **tp, size_t *tlen, uint32_t *syndrome,
		    int *check_icrc)
{
	if (r->pending)
		return train_next(r, l3, tp, tlen, syndrome, check_icrc);
	if (cap > WIRE_FRAME_BUF)
		cap = WIRE_FRAME_BUF;
	for (int i = 0; i < RECV_SKIP_MAX; i++) {
		struct wire_ring_frame f;
		uint32_t status = 0;
		ssize_t n;

		/* gives back the slot of the last call's frame first */
		if (!wire_ring_rx_next(r->ring, &f))
			return 0;
		if (f.pkttype == PACKET_OUTGOING)
			continue;
		r->stats->rx_calls++;
		if (!(f.status & TP_STATUS_COPY)) {
			if (take_frame(r, f.data, f.len, f.snaplen, cap,
				       f.status, l3, tp, tlen, syndrome,
				       check_icrc))
				return 1;
			continue;
		}
		/* longer than a slot: read whole from the socket */
		wire_ring_rx_release(r->ring);
		n = read_queued(r, &status);
		if (n < 0)
			return (int)n;
		if (n && take_frame(r, r->buf, (size_t)n,
				    (size_t)n < WIRE_FRAME_BUF ? (size_t)n :
								WIRE_FRAME_BUF,
				    cap, status, l3, tp, tlen, syndrome,
				    check_icrc))
			return 1;
	}
	wire_ring_rx_release(r->ring);
	return 0;	/* more may be pending: the fd stays readable */
}
