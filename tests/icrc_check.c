// SPDX-License-Identifier: MIT
/*
 * icrc_check: verify the ICRC of every RoCEv2 packet in pcap captures.
 *
 * Wireshark's InfiniBand dissector shows the ICRC but does not verify it
 * (there is no infiniband.invariant.crc status field and no preference
 * for it), so the app tests capture with dumpcap and check here.
 *
 * Each UDP packet to port 4791 is checked twice:
 *  - independently: CRC-32 (zlib) over 8 bytes of 0xFF (the masked LRH),
 *    the IP and UDP headers as captured with IBTA Annex A17's variant
 *    fields set to ones (IPv4 TOS, TTL, header checksum; IPv6 traffic
 *    class, flow label, hop limit; UDP checksum), the BTH with its resv8a
 *    byte set to ones, and the rest of the transport packet; the 4 ICRC
 *    bytes hold that CRC little-endian (checked by --selftest against a
 *    packet captured from a ConnectX-4 Lx);
 *  - with the model's roce_icrc() (model/roce_pkt.h) under the envelope
 *    read from the captured headers, when this build has it
 *    (ICRC_HAVE_MODEL); --require-model makes its absence an error.
 *
 * A frame whose ICRC is wrong may be a UDP GSO train that lo or a veth
 * carried whole (the software ERNIC's udp wire sends the packets of a
 * message so): it counts as one when it cuts into packets of one size
 * (and a shorter last) that each begin as the first does and each carry
 * the right ICRC under the headers the kernel gives them when it splits
 * the train (their own lengths; IPv4 ID the train's + k). Each is then
 * checked and counted as a packet.
 *
 * Also an error: a truncated capture, IP/UDP lengths that disagree with
 * the frame, a transport packet too short for BTH + ICRC, IPv4 options
 * or fragments. Prints per-file counts and an opcode histogram.
 *
 * Exit status: 0 all checked packets good and at least --min (default
 * 1) of them; 1 a bad packet, too few packets, or --selftest failed; 2
 * usage or file error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <zlib.h>

#ifdef ICRC_HAVE_MODEL
#include "roce_pkt.h"
#endif

#define ROCEV2_PORT 4791
#define BTH_LEN 12
#define ICRC_LEN 4
/* The longest transport packet: BTH, RETH, ImmDt, 4096 B, ICRC. */
#define MAX_TPKT (BTH_LEN + 16 + 4 + 4096 + ICRC_LEN)
#define MAX_REPORTS 10

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

struct counts {
	unsigned long frames, roce, good, bad, malformed, other;
	unsigned long model_agree, model_disagree;
	unsigned long trains, train_pkts;	/* UDP GSO trains, whole */
	unsigned long opcodes[256];
};

static int reports;

static void report(const char *file, unsigned long frame, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void report(const char *file, unsigned long frame, const char *fmt, ...)
{
	va_list ap;

	if (++reports > MAX_REPORTS) {
		if (reports == MAX_REPORTS + 1)
			fprintf(stderr, "icrc_check: (further errors not shown)\n");
		return;
	}
	fprintf(stderr, "icrc_check: %s: frame %lu: ", file, frame);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The packet located inside a frame. */
struct roce_view {
	const uint8_t *ip;	/* IPv4 or IPv6 header */
	size_t ip_len;		/* header length */
	int family;
	const uint8_t *udp;
	const uint8_t *tp;	/* BTH .. ICRC */
	size_t tlen;
};

/* Independent ICRC (see the top of the file); returns the CRC value
 * whose little-endian bytes the packet should end with. */
static uint32_t icrc_independent(const struct roce_view *v)
{
	uint8_t ph[8 + 40 + 8 + BTH_LEN];
	size_t n = 0;
	uLong crc;

	memset(ph, 0xff, 8);
	n = 8;
	memcpy(ph + n, v->ip, v->ip_len);
	if (v->family == AF_INET) {
		ph[n + 1] = 0xff;		/* TOS */
		ph[n + 8] = 0xff;		/* TTL */
		ph[n + 10] = ph[n + 11] = 0xff;	/* header checksum */
	} else {
		ph[n] |= 0x0f;			/* traffic class, high nibble */
		ph[n + 1] = ph[n + 2] = ph[n + 3] = 0xff; /* TC, flow label */
		ph[n + 7] = 0xff;		/* hop limit */
	}
	n += v->ip_len;
	memcpy(ph + n, v->udp, 8);
	ph[n + 6] = ph[n + 7] = 0xff;		/* UDP checksum */
	n += 8;
	memcpy(ph + n, v->tp, BTH_LEN);
	ph[n + 4] = 0xff;			/* BTH resv8a */
	n += BTH_LEN;
	crc = crc32(0L, Z_NULL, 0);
	crc = crc32(crc, ph, (uInt)n);
	crc = crc32(crc, v->tp + BTH_LEN, (uInt)(v->tlen - BTH_LEN - ICRC_LEN));
	return (uint32_t)crc;
}

#ifdef ICRC_HAVE_MODEL
static uint32_t icrc_model(const struct roce_view *v)
{
	struct roce_l3 l3;

	memset(&l3, 0, sizeof(l3));
	l3.family = v->family;
	l3.sport = rd16(v->udp);
	l3.dport = rd16(v->udp + 2);
	if (v->family == AF_INET) {
		memcpy(l3.src, v->ip + 12, 4);
		memcpy(l3.dst, v->ip + 16, 4);
		l3.ip_id = rd16(v->ip + 4);
		l3.tos = v->ip[1];
		l3.ttl = v->ip[8];
	} else {
		memcpy(l3.src, v->ip + 8, 16);
		memcpy(l3.dst, v->ip + 24, 16);
		l3.tos = (uint8_t)((v->ip[0] & 0x0f) << 4 | v->ip[1] >> 4);
		l3.flow_label = (uint32_t)(v->ip[1] & 0x0f) << 16 |
				(uint32_t)v->ip[2] << 8 | v->ip[3];
		l3.ttl = v->ip[7];
	}
	return roce_icrc(&l3, v->tp, v->tlen);
}
#endif

/* Offset of the network header and its ethertype, per link type. */
static bool link_header(int dlt, const uint8_t *p, size_t len, size_t *off,
			uint16_t *etype)
{
	switch (dlt) {
	case DLT_EN10MB:
		if (len < 14)
			return false;
		*off = 14;
		*etype = rd16(p + 12);
		while ((*etype == 0x8100 || *etype == 0x88a8) &&
		       len >= *off + 4) {
			*etype = rd16(p + *off + 2);
			*off += 4;
		}
		return true;
	case DLT_LINUX_SLL:
		if (len < 16)
			return false;
		*off = 16;
		*etype = rd16(p + 14);
		return true;
	case DLT_LINUX_SLL2:
		if (len < 20)
			return false;
		*off = 20;
		*etype = rd16(p);
		return true;
	case DLT_RAW:
#ifdef DLT_IPV4
	case DLT_IPV4:
	case DLT_IPV6:
#endif
		if (len < 1)
			return false;
		*off = 0;
		*etype = (p[0] >> 4) == 6 ? 0x86dd : 0x0800;
		return true;
	default:
		return false;
	}
}

/*
 * Find a RoCEv2 packet in a frame. Returns 1 (found, v filled), 0 (not
 * UDP to 4791: not ours), -1 (malformed, reason in why).
 */
static int locate(int dlt, const uint8_t *p, size_t caplen, size_t len,
		  struct roce_view *v, const char **why)
{
	size_t off, ip_total, udp_len, end;
	uint16_t etype;
	const uint8_t *ip;
	uint8_t proto;

	if (!link_header(dlt, p, caplen, &off, &etype))
		return 0;
	if (etype != 0x0800 && etype != 0x86dd)
		return 0;
	ip = p + off;
	if (etype == 0x0800) {
		if (caplen < off + 20 || (ip[0] >> 4) != 4)
			return 0;
		proto = ip[9];
		if (proto != 17)
			return 0;
		v->family = AF_INET;
		v->ip_len = (size_t)(ip[0] & 0x0f) * 4;
		ip_total = rd16(ip + 2);
		if (v->ip_len != 20) {
			*why = "IPv4 header with options (or a bad IHL)";
			return caplen >= off + v->ip_len + 4 &&
			       rd16(p + off + v->ip_len + 2) == ROCEV2_PORT ?
				-1 : 0;
		}
		if (rd16(ip + 6) & 0x3fff) {
			/* Only the first fragment has the UDP header. */
			if (rd16(ip + 6) & 0x1fff || caplen < off + 24 ||
			    rd16(ip + 22) != ROCEV2_PORT)
				return 0;
			*why = "IPv4 fragment";
			return -1;
		}
	} else {
		if (caplen < off + 40 || (ip[0] >> 4) != 6)
			return 0;
		proto = ip[6];
		if (proto != 17) /* RoCEv2 uses no extension headers */
			return 0;
		v->family = AF_INET6;
		v->ip_len = 40;
		ip_total = 40 + (size_t)rd16(ip + 4);
	}
	if (caplen < off + v->ip_len + 8)
		return 0;
	v->ip = ip;
	v->udp = ip + v->ip_len;
	if (rd16(v->udp + 2) != ROCEV2_PORT)
		return 0;
	/* From here on it claims to be RoCEv2: every problem is an error. */
	if (caplen < len) {
		*why = "capture truncated (snaplen too small?)";
		return -1;
	}
	end = off + ip_total;
	if (ip_total < v->ip_len + 8 || end > caplen) {
		*why = "IP length disagrees with the frame";
		return -1;
	}
	/* Ethernet may pad short frames: only less than 60 bytes. */
	if (end != caplen && !(dlt == DLT_EN10MB && caplen <= 60)) {
		*why = "bytes after the IP packet";
		return -1;
	}
	udp_len = rd16(v->udp + 4);
	if (udp_len != ip_total - v->ip_len) {
		*why = "UDP length disagrees with the IP length";
		return -1;
	}
	v->tp = v->udp + 8;
	v->tlen = udp_len - 8;
	if (v->tlen < BTH_LEN + ICRC_LEN) {
		*why = "too short for BTH and ICRC";
		return -1;
	}
	return 1;
}

static const char *opcode_name(uint8_t op)
{
	static const char *const rc[] = {
		"SEND_FIRST", "SEND_MIDDLE", "SEND_LAST", "SEND_LAST_IMM",
		"SEND_ONLY", "SEND_ONLY_IMM", "WRITE_FIRST", "WRITE_MIDDLE",
		"WRITE_LAST", "WRITE_LAST_IMM", "WRITE_ONLY", "WRITE_ONLY_IMM",
		"READ_REQ", "READ_RESP_FIRST", "READ_RESP_MIDDLE",
		"READ_RESP_LAST", "READ_RESP_ONLY", "ACK", "ATOMIC_ACK",
		"CMP_SWAP", "FETCH_ADD", "RESERVED", "SEND_LAST_INV",
		"SEND_ONLY_INV",
	};

	if (op < sizeof(rc) / sizeof(rc[0]))
		return rc[op];
	if (op == 0x81)
		return "CNP";
	return "?";
}

/* Count one packet (of a frame, or of a train in it) and report it if
 * its ICRC is wrong by either computation. */
static void check_one(const char *file, unsigned long frame,
		      const struct roce_view *v, struct counts *c)
{
	const uint8_t *icrc = v->tp + v->tlen - ICRC_LEN;
	uint32_t wire = rd_le32(icrc), want = icrc_independent(v);
	uint8_t op = v->tp[0];

	c->roce++;
	c->opcodes[op]++;
	if (want == wire) {
		c->good++;
	} else {
		c->bad++;
		report(file, frame, "%s PSN %u QP 0x%06x: ICRC %02x%02x%02x%02x,"
		       " computed %02x%02x%02x%02x", opcode_name(op),
		       (unsigned int)(rd16(v->tp + 10) | (uint32_t)v->tp[9] << 16),
		       (unsigned int)(rd16(v->tp + 6) | (uint32_t)v->tp[5] << 16),
		       icrc[0], icrc[1], icrc[2], icrc[3], want & 0xff,
		       want >> 8 & 0xff, want >> 16 & 0xff, want >> 24);
	}
#ifdef ICRC_HAVE_MODEL
	{
		/* roce_icrc() gives the value the packet holds little-endian */
		uint32_t model = icrc_model(v), stored = wire;

		if (model == stored) {
			c->model_agree++;
		} else {
			c->model_disagree++;
			report(file, frame, "%s: roce_icrc() gives 0x%08" PRIx32
			       ", the packet holds 0x%08" PRIx32,
			       opcode_name(op), model, stored);
		}
	}
#endif
}

/*
 * A UDP GSO train seen whole. A sender that hands the kernel several
 * RoCEv2 packets as one datagram (UDP_SEGMENT: the software ERNIC's
 * udp wire does) has them carried whole by lo and veth, so a capture
 * there holds one frame whose UDP payload is the packets back to back,
 * all of one size but a shorter last one. Each is checked under the
 * headers the kernel gives it when it splits the train: its own IP and
 * UDP lengths and, for IPv4, the train's identification plus k.
 */
struct seg_hdrs {
	uint8_t ip[40], udp[8];
};

static void wr16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The view of packet k of the train in v: len bytes at off. */
static void seg_view(const struct roce_view *v, struct seg_hdrs *h,
		     size_t off, size_t len, unsigned int k,
		     struct roce_view *seg)
{
	memcpy(h->ip, v->ip, v->ip_len);
	memcpy(h->udp, v->udp, 8);
	if (v->family == AF_INET) {
		wr16(h->ip + 2, 20 + 8 + len);
		wr16(h->ip + 4, (rd16(v->ip + 4) + k) & 0xffff);
	} else {
		wr16(h->ip + 4, 8 + len);
	}
	wr16(h->udp + 4, 8 + len);
	*seg = (struct roce_view){ .ip = h->ip, .ip_len = v->ip_len,
				   .family = v->family, .udp = h->udp,
				   .tp = v->tp + off, .tlen = len };
}

/* The packet size s that cuts v into a train: every packet at k * s
 * starts with the first one's P_Key, reserved byte and destination QP,
 * is at least a BTH and an ICRC long, and ends with its own ICRC
 * (independent computation). 0 when no size does. */
static size_t train_size(const struct roce_view *v)
{
	size_t s, off, len;

	if (v->tlen % 4 || v->tlen < 2 * (BTH_LEN + ICRC_LEN))
		return 0;
	for (s = BTH_LEN + ICRC_LEN;
	     s + BTH_LEN + ICRC_LEN <= v->tlen && s <= MAX_TPKT; s += 4) {
		bool ok = true;
		unsigned int k;

		for (off = 0; ok && off < v->tlen; off += len) {
			len = v->tlen - off < s ? v->tlen - off : s;
			ok = len >= BTH_LEN + ICRC_LEN &&
			     !memcmp(v->tp + off + 2, v->tp + 2, 6);
		}
		for (off = 0, k = 0; ok && off < v->tlen; off += len, k++) {
			struct seg_hdrs h;
			struct roce_view seg;

			len = v->tlen - off < s ? v->tlen - off : s;
			seg_view(v, &h, off, len, k, &seg);
			ok = icrc_independent(&seg) ==
			     rd_le32(seg.tp + len - ICRC_LEN);
		}
		if (ok)
			return s;
	}
	return 0;
}

static void check_packet(const char *file, unsigned long frame,
			 const struct roce_view *v, struct counts *c)
{
	size_t s, off, len;
	unsigned int k = 0;

	if (icrc_independent(v) == rd_le32(v->tp + v->tlen - ICRC_LEN) ||
	    !(s = train_size(v))) {
		check_one(file, frame, v, c);
		return;
	}
	c->trains++;
	for (off = 0; off < v->tlen; off += len, k++) {
		struct seg_hdrs h;
		struct roce_view seg;

		len = v->tlen - off < s ? v->tlen - off : s;
		seg_view(v, &h, off, len, k, &seg);
		check_one(file, frame, &seg, c);
		c->train_pkts++;
	}
}

static int check_file(const char *file, struct counts *c)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *pc;
	int dlt, rc;

	pc = pcap_open_offline(file, errbuf);
	if (!pc) {
		fprintf(stderr, "icrc_check: %s\n", errbuf);
		return -1;
	}
	dlt = pcap_datalink(pc);
	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		struct roce_view v;
		const char *why = "?";
		int r;

		c->frames++;
		r = locate(dlt, data, h->caplen, h->len, &v, &why);
		if (r == 0) {
			c->other++;
		} else if (r < 0) {
			c->malformed++;
			report(file, c->frames, "malformed RoCEv2 packet: %s", why);
		} else {
			check_packet(file, c->frames, &v, c);
		}
	}
	if (rc == -1) {
		fprintf(stderr, "icrc_check: %s: %s\n", file, pcap_geterr(pc));
		pcap_close(pc);
		return -1;
	}
	pcap_close(pc);
	return 0;
}

/*
 * A RoCEv2 CNP captured from a ConnectX-4 Lx (published with scapy's
 * RoCE tests): a hardware-made ICRC to prove the independent algorithm
 * and its byte order.
 */
static const uint8_t cx4_cnp[] = {
	0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32,
	0x08, 0x00, 0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
	0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01, 0x00, 0x00,
	0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00, 0xff, 0xff, 0x40, 0x00,
	0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x82, 0xfd,
	0x00, 0x2a,
};

static int selftest(void)
{
	uint8_t bad[sizeof(cx4_cnp)];
	struct roce_view v;
	const char *why = NULL;
	uint32_t want;

	if (locate(DLT_EN10MB, cx4_cnp, sizeof(cx4_cnp), sizeof(cx4_cnp), &v,
		   &why) != 1) {
		fprintf(stderr, "icrc_check: selftest: reference frame not "
			"recognised (%s)\n", why ? why : "not RoCEv2");
		return 1;
	}
	want = icrc_independent(&v);
	if (want != rd_le32(v.tp + v.tlen - ICRC_LEN)) {
		fprintf(stderr, "icrc_check: selftest: ICRC of the ConnectX-4 "
			"frame computed as 0x%08" PRIx32 "\n", want);
		return 1;
	}
	/* The masked fields must not matter, the others must. */
	memcpy(bad, cx4_cnp, sizeof(bad));
	bad[15] = 0x00;			/* TOS */
	bad[22] = 0x01;			/* TTL */
	bad[24] = bad[25] = 0;		/* IP checksum */
	bad[40] = bad[41] = 0x12;	/* UDP checksum */
	bad[46] = 0x5a;			/* BTH resv8a */
	locate(DLT_EN10MB, bad, sizeof(bad), sizeof(bad), &v, &why);
	if (icrc_independent(&v) != want) {
		fprintf(stderr, "icrc_check: selftest: a masked field changed "
			"the ICRC\n");
		return 1;
	}
	bad[18] ^= 1;			/* IP identification: covered */
	if (icrc_independent(&v) == want) {
		fprintf(stderr, "icrc_check: selftest: the IP ID is not "
			"covered\n");
		return 1;
	}
	printf("icrc_check: selftest ok (ConnectX-4 Lx CNP ICRC 82fd002a)\n");
	return 0;
}

/*
 * Sample captures to test the checks themselves (tests/apps/
 * pcap_selftest.sh): "good" holds four well-formed RC packets with
 * correct ICRCs (SEND_ONLY, RDMA WRITE_ONLY with pad, READ_REQ, ACK)
 * and a UDP GSO train of three SEND_ONLYs as lo carries it; "bad" holds
 * the same with the WRITE's ICRC corrupted, a packet too short for a
 * BTH before the train, and the train's second ICRC corrupted.
 */
static size_t sample_frame(uint8_t *f, uint16_t id, const uint8_t *tp,
			   size_t tlen, bool good_icrc)
{
	static const uint8_t hdr[14 + 20 + 8] = {
		0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00,
		0x45, 0x00, 0, 0, 0, 0, 0x40, 0x00, 0x40, 0x11, 0, 0,
		192, 0, 2, 1, 192, 0, 2, 2,
		0xc0, 0x00, 0x12, 0xb7, 0, 0, 0, 0,
	};
	uint8_t *ip = f + 14, *udp = ip + 20;
	struct roce_view v;
	uint32_t sum = 0, crc;

	memcpy(f, hdr, sizeof(hdr));
	memcpy(udp + 8, tp, tlen);
	ip[2] = (uint8_t)((20 + 8 + tlen) >> 8);
	ip[3] = (uint8_t)(20 + 8 + tlen);
	ip[4] = (uint8_t)(id >> 8);
	ip[5] = (uint8_t)id;
	for (int i = 0; i < 20; i += 2)
		sum += rd16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
	udp[4] = (uint8_t)((8 + tlen) >> 8);
	udp[5] = (uint8_t)(8 + tlen);
	if (tlen >= BTH_LEN + ICRC_LEN) {
		v = (struct roce_view){ .ip = ip, .ip_len = 20,
					.family = AF_INET, .udp = udp,
					.tp = udp + 8, .tlen = tlen };
		crc = icrc_independent(&v) ^ (good_icrc ? 0 : 0x1000);
		for (int i = 0; i < 4; i++)
			udp[8 + tlen - 4 + i] = (uint8_t)(crc >> (8 * i));
	}
	return 14 + 20 + 8 + tlen;
}

/* A UDP GSO train of n copies of tp (PSNs counting up) as lo carries
 * it, each copy's ICRC for the headers it gets when split; copy `bad`
 * (n: none) with its ICRC off by one bit. */
static size_t sample_train(uint8_t *f, uint16_t id, const uint8_t *tp,
			   size_t tlen, unsigned int n, unsigned int bad)
{
	uint8_t all[4 * 64];
	struct roce_view v;
	size_t len;

	for (unsigned int k = 0; k < n; k++) {
		memcpy(all + k * tlen, tp, tlen);
		all[k * tlen + 11] = (uint8_t)(tp[11] + k);	/* PSN */
	}
	len = sample_frame(f, id, all, n * tlen, true);
	v = (struct roce_view){ .ip = f + 14, .ip_len = 20,
				.family = AF_INET, .udp = f + 14 + 20,
				.tp = f + 14 + 20 + 8, .tlen = n * tlen };
	for (unsigned int k = 0; k < n; k++) {
		struct seg_hdrs h;
		struct roce_view seg;
		uint32_t crc;

		seg_view(&v, &h, k * tlen, tlen, k, &seg);
		crc = icrc_independent(&seg) ^ (k == bad ? 0x1000 : 0);
		for (int i = 0; i < 4; i++)
			f[14 + 20 + 8 + (k + 1) * tlen - 4 + i] =
				(uint8_t)(crc >> (8 * i));
	}
	return len;
}

static int write_sample(const char *kind, const char *file)
{
	/* BTH: opcode, SE|M|pad|tver, P_Key, resv8a, DestQP, A|resv7, PSN */
	static const uint8_t send_only[12 + 16 + 4] = {
		0x04, 0x40, 0xff, 0xff, 0, 0, 0, 0x02, 0x80, 0, 0, 0x01,
		'e', 'r', 'n', 'i', 'c', ' ', 's', 'a', 'm', 'p', 'l', 'e',
		' ', 'p', 'k', 't',
	};
	static const uint8_t write_only[12 + 16 + 5 + 3 + 4] = {
		0x0a, 0x70, 0xff, 0xff, 0, 0, 0, 0x03, 0x80, 0, 0, 0x02,
		0, 0, 0x7f, 0x12, 0x34, 0x56, 0x70, 0, 0, 0, 0x01, 0x01,
		0, 0, 0, 5,
		'h', 'e', 'l', 'l', 'o', 0, 0, 0,
	};
	static const uint8_t read_req[12 + 16 + 4] = {
		0x0c, 0x40, 0xff, 0xff, 0, 0, 0, 0x03, 0x80, 0, 0, 0x03,
		0, 0, 0x7f, 0x12, 0x34, 0x56, 0x70, 0, 0, 0, 0x01, 0x01,
		0, 0, 0x10, 0,
	};
	static const uint8_t ack[12 + 4 + 4] = {
		0x11, 0x40, 0xff, 0xff, 0, 0, 0, 0x02, 0, 0, 0, 0x01,
		0x1f, 0, 0, 0x01,
	};
	static const uint8_t runt[6] = { 0x04, 0x40, 0xff, 0xff, 0, 0 };
	bool bad = !strcmp(kind, "bad");
	uint8_t frame[256];
	struct pcap_pkthdr h;
	pcap_dumper_t *d;
	pcap_t *pc;
	size_t n;

	if (!bad && strcmp(kind, "good")) {
		fprintf(stderr, "icrc_check: --write-sample good|bad FILE\n");
		return 2;
	}
	pc = pcap_open_dead(DLT_EN10MB, 65535);
	d = pc ? pcap_dump_open(pc, file) : NULL;
	if (!d) {
		fprintf(stderr, "icrc_check: %s: %s\n", file,
			pc ? pcap_geterr(pc) : "pcap_open_dead failed");
		if (pc)
			pcap_close(pc);
		return 2;
	}
	memset(&h, 0, sizeof(h));
#define DUMP(tp, good)                                                      \
	do {                                                                \
		n = sample_frame(frame, (uint16_t)(h.ts.tv_sec + 1), tp,    \
				 sizeof(tp), good);                         \
		h.caplen = h.len = (bpf_u_int32)n;                          \
		h.ts.tv_sec++;                                              \
		pcap_dump((u_char *)d, &h, frame);                          \
	} while (0)
	DUMP(send_only, true);
	DUMP(write_only, !bad);
	DUMP(read_req, true);
	DUMP(ack, true);
	if (bad)
		DUMP(runt, true);
#undef DUMP
	/* a train of three SEND_ONLYs (bad: the second's ICRC off) */
	n = sample_train(frame, (uint16_t)(h.ts.tv_sec + 1), send_only,
			 sizeof(send_only), 3, bad ? 1 : 3);
	h.caplen = h.len = (bpf_u_int32)n;
	h.ts.tv_sec++;
	pcap_dump((u_char *)d, &h, frame);
	pcap_dump_close(d);
	pcap_close(pc);
	return 0;
}

static void usage(FILE *f)
{
	fputs("Usage: icrc_check [--min N] [--require-model] FILE.pcap...\n"
	      "       icrc_check --selftest\n"
	      "       icrc_check --write-sample good|bad FILE.pcap\n"
	      "Verify the ICRC of every RoCEv2 (UDP 4791) packet.\n", f);
}

int main(int argc, char **argv)
{
	struct counts c;
	unsigned long min = 1;
	bool require_model = false;
	int i, nfiles = 0, rc = 0;

	memset(&c, 0, sizeof(c));
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--selftest")) {
			return selftest();
		} else if (!strcmp(argv[i], "--write-sample") && i + 2 < argc) {
			return write_sample(argv[i + 1], argv[i + 2]);
		} else if (!strcmp(argv[i], "--require-model")) {
			require_model = true;
		} else if (!strcmp(argv[i], "--min") && i + 1 < argc) {
			char *end;

			errno = 0;
			min = strtoul(argv[++i], &end, 10);
			if (errno || *end || !*argv[i]) {
				fprintf(stderr, "icrc_check: bad --min '%s'\n",
					argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
#ifdef ICRC_HAVE_MODEL
	(void)require_model; /* the model's check is built in */
#else
	if (require_model) {
		fprintf(stderr, "icrc_check: built without the model's "
			"roce_icrc() (re-run cmake once model/ defines it)\n");
		return 1;
	}
#endif
	if (selftest())
		return 1;
	for (; i < argc; i++, nfiles++)
		if (check_file(argv[i], &c))
			return 2;

	printf("icrc_check: %d file(s): %lu frames, %lu RoCEv2, ICRC good %lu, "
	       "bad %lu, malformed %lu, other %lu\n", nfiles, c.frames, c.roce,
	       c.good, c.bad, c.malformed, c.other);
	printf("icrc_check: UDP GSO trains seen whole: %lu, holding %lu "
	       "packets\n", c.trains, c.train_pkts);
#ifdef ICRC_HAVE_MODEL
	printf("icrc_check: model roce_icrc(): agrees %lu, disagrees %lu\n",
	       c.model_agree, c.model_disagree);
#else
	printf("icrc_check: model roce_icrc() not built in: independent "
	       "check only\n");
#endif
	for (int op = 0; op < 256; op++)
		if (c.opcodes[op])
			printf("icrc_check:   %-16s (0x%02x) %lu\n",
			       opcode_name((uint8_t)op), op, c.opcodes[op]);
	if (c.bad || c.malformed || c.model_disagree)
		rc = 1;
	if (c.roce < min) {
		fprintf(stderr, "icrc_check: %lu RoCEv2 packets, expected at "
			"least %lu\n", c.roce, min);
		rc = 1;
	}
	return rc;
}
