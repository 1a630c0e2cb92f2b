// SPDX-License-Identifier: MIT
/*
 * ernic-broker: the part of a UIO ERNIC that its processes share — the
 * IP's global configuration, QP1, the DMA region's pages and the
 * cleanup after a process that dies (providers/ernic/ernic_broker.c,
 * docs/multiprocess.md). `ernicctl add` starts it for every UIO device
 * and `ernicctl del` stops it.
 *
 *   usage: ernic-broker --conf FILE --name NAME [--ready-fd FD]
 *
 * FILE is the device's ernic.conf in the overlay; the broker's socket
 * goes beside it. Runs until SIGTERM or SIGINT.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cm_msg.h"
#include "ernic_broker.h"

/*
 * A CM MAD no process on the device takes: answered as the kernel's CM
 * (and ours, cm_recv.c) answers for a connection it does not have, so
 * that the peer hears at once instead of timing out — a REQ nobody
 * listens to gets REJ "invalid service ID", a REP of no connection REJ
 * "invalid communication ID", a DREQ a DREP.
 */
static bool answer_unknown(const uint8_t *mad, uint8_t *answer)
{
	struct cm_mad_hdr hdr;
	struct cm_mad_hdr out;
	struct cm_rej rej = { 0 };

	if (cm_unpack_hdr(mad, IB_MAD_SIZE, &hdr))
		return false;
	out = (struct cm_mad_hdr){ .method = IB_MGMT_METHOD_SEND,
				   .tid = hdr.tid };
	switch (hdr.attr_id) {
	case IB_CM_ATTR_REQ: {
		struct cm_req req;

		if (cm_unpack_req(mad, &req))
			return false;
		rej.remote_comm_id = req.local_comm_id;
		rej.reason = IB_CM_REJ_INVALID_SERVICE_ID;
		rej.msg_rejected = CM_MSG_REQ;
		return !cm_pack_rej(answer, &out, &rej);
	}
	case IB_CM_ATTR_REP: {
		struct cm_rep rep;

		if (cm_unpack_rep(mad, &rep))
			return false;
		rej.local_comm_id = rep.remote_comm_id;
		rej.remote_comm_id = rep.local_comm_id;
		rej.reason = IB_CM_REJ_INVALID_COMM_ID;
		rej.msg_rejected = CM_MSG_REP;
		return !cm_pack_rej(answer, &out, &rej);
	}
	case IB_CM_ATTR_DREQ: {
		struct cm_dreq dreq;
		struct cm_drep drep = { 0 };

		if (cm_unpack_dreq(mad, &dreq))
			return false;
		drep.local_comm_id = dreq.remote_comm_id;
		drep.remote_comm_id = dreq.local_comm_id;
		return !cm_pack_drep(answer, &out, &drep);
	}
	default:
		return false;
	}
}

static int usage(void)
{
	fputs("usage: ernic-broker --conf FILE --name NAME [--ready-fd FD]\n",
	      stderr);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "conf", required_argument, NULL, 'c' },
		{ "name", required_argument, NULL, 'n' },
		{ "ready-fd", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf = NULL, *name = NULL;
	int ready = -1, opt, sfd, rc;
	char err[512] = "", *end;
	sigset_t set;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			conf = optarg;
			break;
		case 'n':
			name = optarg;
			break;
		case 'r':
			errno = 0;
			ready = (int)strtol(optarg, &end, 10);
			if (errno || *end || ready < 0)
				return usage();
			break;
		default:
			return usage();
		}
	}
	if (!conf || !name || optind != argc)
		return usage();
	/* The signals that stop it arrive as a readable fd. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, "ernic-broker: signalfd: %s\n", strerror(errno));
		return 1;
	}
	/* A client that vanishes mid-send must not take the broker. */
	signal(SIGPIPE, SIG_IGN);
	rc = ernic_broker_run(conf, name, sfd, ready, answer_unknown, err,
			      sizeof(err));
	if (rc) {
		fprintf(stderr, "ernic-broker: %s: %s\n", name, err);
		return 1;
	}
	return 0;
}
