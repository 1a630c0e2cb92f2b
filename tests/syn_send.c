// SPDX-License-Identifier: MIT
/*
 * ernic-syn-send: sends RoCEv2 packets that fail one PG332 Table 2-3
 * check each, from a UDP socket on SRC to DST:4791, built with the
 * project's own encoder (model/roce_pkt.c) so that everything but the
 * fault is right, the ICRC over the headers the kernel writes included.
 *   syn_send SRC DST KIND COUNT
 * KIND: icrc (bit 30: the ICRC's last byte flipped), version (bit 13:
 * BTH TVer 1), qp (bit 15: a QP number nobody created, QPN 7).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ibta.h"
#include "roce_pkt.h"

int main(int argc, char **argv)
{
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(4791) };
	static const uint8_t payload[8] = "syndrome";
	struct roce_pkt p = { .opcode = ROCE_RC_SEND_ONLY, .pkey = 0xFFFF,
			      .dqpn = 2, .psn = 0, .ackreq = true,
			      .payload = payload, .payload_len = sizeof(payload) };
	struct roce_l3 l3 = { .family = AF_INET, .dport = 4791, .ttl = 64 };
	socklen_t sl = sizeof(src);
	uint8_t buf[256];
	int fd, n, on = IP_PMTUDISC_DO;
	size_t len;

	if (argc != 5 || inet_pton(AF_INET, argv[1], &src.sin_addr) != 1 ||
	    inet_pton(AF_INET, argv[2], &dst.sin_addr) != 1 ||
	    (n = atoi(argv[4])) <= 0) {
		fprintf(stderr, "usage: %s SRC DST icrc|version|qp COUNT\n",
			argv[0]);
		return 2;
	}
	if (!strcmp(argv[3], "version"))
		p.tver = 1;
	else if (!strcmp(argv[3], "qp"))
		p.dqpn = 7;
	else if (strcmp(argv[3], "icrc")) {
		fprintf(stderr, "%s: unknown kind '%s'\n", argv[0], argv[3]);
		return 2;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	/* DF: Linux then writes IP ID 0, which the ICRC covers */
	if (fd < 0 || setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &on,
				 sizeof(on)) ||
	    bind(fd, (struct sockaddr *)&src, sizeof(src)) ||
	    getsockname(fd, (struct sockaddr *)&src, &sl)) {
		perror("socket");
		return 1;
	}
	memcpy(l3.src, &src.sin_addr, 4);
	memcpy(l3.dst, &dst.sin_addr, 4);
	l3.sport = ntohs(src.sin_port);
	len = roce_build(buf, sizeof(buf), &p, &l3);
	if (!len) {
		fprintf(stderr, "%s: roce_build refused the packet\n", argv[0]);
		return 1;
	}
	if (!strcmp(argv[3], "icrc"))
		buf[len - 1] ^= 0xFF;
	for (int i = 0; i < n; i++)
		if (sendto(fd, buf, len, 0, (struct sockaddr *)&dst,
			   sizeof(dst)) != (ssize_t)len) {
			perror("sendto");
			return 1;
		}
	close(fd);
	return 0;
}
