// SPDX-License-Identifier: MIT
/*
 * ernic_check: options, the shared configuration, and the order of
 * things (device, TCP, options, QPs, READY, run, summary).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: ernic_check -d DEV [options]              server\n"
"       ernic_check -d DEV [options] SERVER_ADDR  client\n"
"\n"
"A byte-exact RC traffic checker. Both sides run a seeded script of\n"
"SEND, SEND_IMM, WRITE, WRITE_IMM and READ ops on every QP, in both\n"
"directions at once, and check every byte, immediate and completion.\n"
"The server adopts the client's shared options (marked *); both print\n"
"the effective ones. Exit status: 0 PASS, 1 FAIL, 2 bad usage.\n"
"\n"
"  -d, --ib-dev DEV         device (default: the first)\n"
"  -i, --ib-port N          port (1)\n"
"  -g, --gid-idx N          GID index (0)\n"
"  -p, --port PORT          TCP port (18515)\n"
"* -q, --qps N              QPs (4)\n"
"* -n, --iters N            ops per QP per direction (1000)\n"
"* -T, --duration SECONDS   run for this long instead of -n (soak)\n"
"* -s, --seed N             seed (default: from the clock; always printed)\n"
"* -m, --max-size BYTES     largest message, K/M suffixes (64K; capped by\n"
"                           the devices' max_msg_sz)\n"
"*     --mtu N              path MTU 256..4096 (the ports' active MTU)\n"
"* -o, --ops LIST           of send,send_imm,write,write_imm,read,inline\n"
"                           (all); inline: some ops up to max_inline_data\n"
"                           go IBV_SEND_INLINE; write needs send, send_imm\n"
"                           or write_imm, whose completion checks it\n"
"* -t, --idle-timeout S     fail after S seconds without progress, with\n"
"                           what each QP waits for (30)\n"
"*     --qp-timeout N       QP ack timeout attribute (14)\n"
"*     --retry-cnt N        retry_cnt (7)\n"
"*     --rnr-retry N        rnr_retry (7: for ever)\n"
"*     --min-rnr-timer N    min_rnr_timer (12)\n"
"* -w, --window N           send queue depth = outstanding WRs per QP (32)\n"
"* -r, --rx-depth N         receives posted ahead per QP (8): the sender\n"
"                           may run ahead of them (RNR)\n"
"*     --signal-every N     at most N WRs per signaled one (16)\n"
"*     --rx-stall N         the receiver pauses 2 ms after about 1 in N\n"
"                           receives (200; 0: never)\n"

"      --expect-error[=LIST]\n"
"                           fault tests: pass only when every QP ends in\n"
"                           an error completion of LIST (retry_exc,\n"
"                           rnr_retry_exc, rem_access, rem_inv_req,\n"
"                           rem_op, rem_abort, loc_len, loc_prot, any;\n"
"                           default retry_exc,rnr_retry_exc) and all data\n"
"                           completed before it checked out. The peer may\n"
"                           be killed (its TCP close is noted, not fatal)\n"
"                           or stopped; use -T or a large -n so every QP\n"
"                           has work outstanding then.\n"
"      --psn PSN[,PSN...]   start every QP's send queue at this PSN\n"
"                           (0..0xffffff) instead of a seeded random one;\n"
"                           with --serve, one per run (the last one for\n"
"                           the runs after it)\n"
"      --serve N            server: serve N clients one after the other\n"
"                           (0: until SIGINT/SIGTERM), each with its own\n"
"                           QPs and its own summary line (run=N). A run\n"
"                           whose peer is gone under --expect-error goes\n"
"                           on unattended while the next client is served:\n"
"                           its QPs keep retrying what they have\n"
"                           outstanding until they fail (or -t passes);\n"
"                           then its verdict is printed and its QPs are\n"
"                           destroyed. A failed run's QPs are kept until\n"
"                           they fail too. Exit 0 when every run met its\n"
"                           expectation (and N runs took place)\n"
"      --expect-error-runs LIST\n"
"                           with --serve: the runs (1, 2-4, 5-: from 5 on;\n"
"                           comma-separated) that must end in the errors\n"
"                           of --expect-error (its default list if not\n"
"                           given); the others must PASS. Without it,\n"
"                           --expect-error applies to every run\n"
"      --corrupt OP[,KIND]  self-test of the checker: flip a byte of the\n"
"                           source of the first op (of KIND: send,\n"
"                           send_imm, write, write_imm) at or after op OP\n"
"                           of QP 0, before posting it; KIND read flips a\n"
"                           byte in the middle of our read source. The\n"
"                           side that checks the data must FAIL (exit 1)\n"
"  -v, --verbose            progress every 10 s; SIGUSR1 prints the state\n"
"                           of every QP (of every run) at any time\n"
"  -h, --help\n"
"\n"
"The last line is 'ernic_check: PASS seed=... ops=... bytes_verified=...'\n"
"(op counts of both directions; bytes this side checked; rnr_waits: the\n"
"times a QP's posted receives ran out with more messages due) or\n"
"'ernic_check: FAIL seed=...', after the failure's details and the\n"
"state of every QP. The TCP channel carries setup, WRITE-area credits,\n"
"the end barrier and aborts: when one side fails, the other exits\n"
"promptly too.\n");
}

static void bad(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "ernic_check: %s: '%s': expected %s\n", opt, val, want);
	exit(2);
}

static uint64_t num(const char *opt, const char *s, uint64_t lo, uint64_t hi,
		    bool suffix)
{
	unsigned long long v;
	char *end;
	char want[96];

	snprintf(want, sizeof(want), "a number in %llu..%llu%s",
		 (unsigned long long)lo, (unsigned long long)hi,
		 suffix ? " (K/M suffix)" : "");
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		bad(opt, s, want);
	if (suffix && (*end == 'K' || *end == 'k')) {
		v <<= 10;
		end++;
	} else if (suffix && (*end == 'M' || *end == 'm')) {
		v <<= 20;
		end++;
	}
	if (*end || v < lo || v > hi)
		bad(opt, s, want);
	return v;
}

static const struct {
	const char *name;
	enum ibv_wc_status st;
} err_names[] = {
	{ "retry_exc", IBV_WC_RETRY_EXC_ERR },
	{ "rnr_retry_exc", IBV_WC_RNR_RETRY_EXC_ERR },
	{ "rem_access", IBV_WC_REM_ACCESS_ERR },
	{ "rem_inv_req", IBV_WC_REM_INV_REQ_ERR },
	{ "rem_op", IBV_WC_REM_OP_ERR },
	{ "rem_abort", IBV_WC_REM_ABORT_ERR },
	{ "loc_len", IBV_WC_LOC_LEN_ERR },
	{ "loc_prot", IBV_WC_LOC_PROT_ERR },
};

static uint32_t parse_errs(const char *s)
{
	char buf[256], *save = NULL, *t;
	uint32_t m = 0;

	if (!s)
		return 1u << IBV_WC_RETRY_EXC_ERR |
		       1u << IBV_WC_RNR_RETRY_EXC_ERR;
	if (strlen(s) >= sizeof(buf))
		return 0;
	strcpy(buf, s);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t k;

		if (!strcmp(t, "any")) {
			m |= ~(1u << IBV_WC_SUCCESS |
			       1u << IBV_WC_WR_FLUSH_ERR);
			continue;
		}
		for (k = 0; k < sizeof(err_names) / sizeof(err_names[0]); k++)
			if (!strcmp(t, err_names[k].name))
				break;
		if (k == sizeof(err_names) / sizeof(err_names[0]))
			return 0;
		m |= 1u << err_names[k].st;
	}
	return m;
}

/* --corrupt OP[,KIND] */
static void parse_corrupt(struct chk *c, char *arg)
{
	char *kind = strchr(arg, ',');
	uint32_t m;

	c->o.corrupt_kind = OP_NKINDS;
	if (kind) {
		*kind++ = 0;
		m = ops_parse(kind);
		if (!m || (m & (m - 1)) || (m & OPS_INLINE))
			bad("--corrupt", kind, "one of send,send_imm,write,write_imm,read");
		c->o.corrupt_kind = (uint32_t)__builtin_ctz(m);
	}
	c->o.corrupt = (int64_t)num("--corrupt", arg, 0, 1ull << 40, false);
}

/* --psn PSN[,PSN...] */
static void parse_psn(struct chk *c, const char *arg)
{
	char buf[256], *save = NULL, *t;

	if (strlen(arg) >= sizeof(buf))
		bad("--psn", arg, "at most 16 PSNs");
	strcpy(buf, arg);
	c->o.npsn = 0;
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (c->o.npsn == CHK_MAX_LIST)
			bad("--psn", arg, "at most 16 PSNs");
		c->o.psn[c->o.npsn++] = (uint32_t)num("--psn", t, 0, 0xffffff,
						       false);
	}
	if (!c->o.npsn)
		bad("--psn", arg, "PSN[,PSN...]");
}

/* --expect-error-runs 1,3-4,6- */
static void parse_runs(struct chk *c, const char *arg)
{
	char buf[256], *save = NULL, *t, *dash;
	const char *want = "runs N, N-M or N- (comma-separated, from 1)";

	if (strlen(arg) >= sizeof(buf))
		bad("--expect-error-runs", arg, want);
	strcpy(buf, arg);
	c->o.n_err_runs = 0;
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		uint32_t *r = c->o.err_runs[c->o.n_err_runs];

		if (c->o.n_err_runs == CHK_MAX_LIST)
			bad("--expect-error-runs", arg, want);
		dash = strchr(t, '-');
		if (dash)
			*dash++ = 0;
		r[0] = (uint32_t)num("--expect-error-runs", t, 1, UINT32_MAX,
				     false);
		r[1] = !dash ? r[0] : !*dash ? UINT32_MAX :
		       (uint32_t)num("--expect-error-runs", dash, r[0],
				     UINT32_MAX, false);
		c->o.n_err_runs++;
	}
	if (!c->o.n_err_runs)
		bad("--expect-error-runs", arg, want);
}

enum { O_MTU = 256, O_QP_TIMEOUT, O_RETRY_CNT, O_RNR_RETRY, O_MIN_RNR,
       O_SIGNAL, O_RX_STALL, O_EXPECT_ERR, O_CORRUPT, O_PSN, O_SERVE,
       O_ERR_RUNS };

/* The 32-bit shared options that are plain numbers, and their ranges. */
static const struct {
	int ch;
	const char *name;
	size_t off;
	uint32_t lo, hi;
} num_opts[] = {
	{ 'q', "-q", offsetof(struct params, nqp), 1, CHK_MAX_QP },
	{ 'T', "-T", offsetof(struct params, duration), 1, 1u << 30 },
	{ 't', "-t", offsetof(struct params, idle), 1, 86400 },
	{ 'w', "-w", offsetof(struct params, window), 2, 65536 },
	{ 'r', "-r", offsetof(struct params, rx_depth), 1, 65536 },
	{ O_QP_TIMEOUT, "--qp-timeout", offsetof(struct params, qp_timeout),
	  0, 31 },
	{ O_RETRY_CNT, "--retry-cnt", offsetof(struct params, retry_cnt), 0, 7 },
	{ O_RNR_RETRY, "--rnr-retry", offsetof(struct params, rnr_retry), 0, 7 },
	{ O_MIN_RNR, "--min-rnr-timer", offsetof(struct params, min_rnr_timer),
	  0, 31 },
	{ O_SIGNAL, "--signal-every", offsetof(struct params, signal_every),
	  1, 65536 },
	{ O_RX_STALL, "--rx-stall", offsetof(struct params, rx_stall),
	  0, 1u << 30 },
};

static const struct option long_opts[] = {
	{ "ib-dev", required_argument, NULL, 'd' },
	{ "ib-port", required_argument, NULL, 'i' },
	{ "gid-idx", required_argument, NULL, 'g' },
	{ "port", required_argument, NULL, 'p' },
	{ "qps", required_argument, NULL, 'q' },
	{ "iters", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 'T' },
	{ "seed", required_argument, NULL, 's' },
	{ "max-size", required_argument, NULL, 'm' },
	{ "mtu", required_argument, NULL, O_MTU },
	{ "ops", required_argument, NULL, 'o' },
	{ "idle-timeout", required_argument, NULL, 't' },
	{ "qp-timeout", required_argument, NULL, O_QP_TIMEOUT },
	{ "retry-cnt", required_argument, NULL, O_RETRY_CNT },
	{ "rnr-retry", required_argument, NULL, O_RNR_RETRY },
	{ "min-rnr-timer", required_argument, NULL, O_MIN_RNR },
	{ "window", required_argument, NULL, 'w' },
	{ "rx-depth", required_argument, NULL, 'r' },
	{ "signal-every", required_argument, NULL, O_SIGNAL },
	{ "rx-stall", required_argument, NULL, O_RX_STALL },
	{ "expect-error", optional_argument, NULL, O_EXPECT_ERR },
	{ "corrupt", required_argument, NULL, O_CORRUPT },
	{ "psn", required_argument, NULL, O_PSN },
	{ "serve", required_argument, NULL, O_SERVE },
	{ "expect-error-runs", required_argument, NULL, O_ERR_RUNS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static bool parse_num_opt(struct params *p, int ch)
{
	for (size_t k = 0; k < sizeof(num_opts) / sizeof(num_opts[0]); k++)
		if (num_opts[k].ch == ch) {
			*(uint32_t *)((char *)p + num_opts[k].off) =
				(uint32_t)num(num_opts[k].name, optarg,
					      num_opts[k].lo, num_opts[k].hi,
					      false);
			return true;
		}
	return false;
}

static void parse(struct chk *c, int argc, char **argv)
{
	struct params *p = &c->p;
	const char *ops = "all";
	bool seeded = false;
	int ch;

	*p = (struct params){
		.iters = 1000, .nqp = 4, .max_size = 65536, .ops = OPS_ALL,
		.idle = 30, .qp_timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.min_rnr_timer = 12, .window = 32, .rx_depth = 8,
		.signal_every = 16, .rx_stall = 200,
	};
	c->o = (struct local_opts){ .port = "18515", .ib_port = 1,
				    .corrupt = -1 };
	while ((ch = getopt_long(argc, argv, "d:i:g:p:q:n:T:s:m:o:t:w:r:vh",
				 long_opts, NULL)) != -1) {
		if (strchr("qnTsmotwr", ch) || (ch >= O_MTU && ch <= O_RX_STALL))
			c->o.explicit_shared = true;
		if (parse_num_opt(p, ch))
			continue;
		switch (ch) {
		case 'd':
			c->o.dev = optarg;
			break;
		case 'i':
			c->o.ib_port = (int)num("-i", optarg, 1, 255, false);
			break;
		case 'g':
			c->o.gid_idx = (int)num("-g", optarg, 0, 65535, false);
			break;
		case 'p':
			num("-p", optarg, 1, 65535, false);
			c->o.port = optarg;
			break;
		case 'n':
			p->iters = num("-n", optarg, 1, 1ull << 40, false);
			break;
		case 's':
			p->seed = num("-s", optarg, 0, UINT64_MAX, false);
			seeded = true;
			break;
		case 'm':
			p->max_size = (uint32_t)num("-m", optarg, 1, 1u << 30,
						    true);
			break;
		case O_MTU:
			p->mtu = (uint32_t)num("--mtu", optarg, 256, 4096, false);
			if (p->mtu & (p->mtu - 1))
				bad("--mtu", optarg, "256, 512, 1024, 2048 or 4096");
			break;
		case 'o':
			ops = optarg;
			p->ops = ops_parse(optarg);
			if (!p->ops)
				bad("-o", optarg, "a list of send,send_imm,write,write_imm,read,inline,all");
			break;
		case O_EXPECT_ERR:
			c->o.expect_kinds = parse_errs(optarg);
			c->o.expect_given = true;
			if (!c->o.expect_kinds)
				bad("--expect-error", optarg, "a list of retry_exc,rnr_retry_exc,rem_access,rem_inv_req,rem_op,rem_abort,loc_len,loc_prot,any");
			break;
		case O_PSN:
			parse_psn(c, optarg);
			break;
		case O_SERVE:
			c->o.serve = true;
			c->o.serve_runs = (uint32_t)num("--serve", optarg, 0,
							UINT32_MAX, false);
			break;
		case O_ERR_RUNS:
			parse_runs(c, optarg);
			break;
		case O_CORRUPT:
			parse_corrupt(c, optarg);
			break;
		case 'v':
			c->o.verbose++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "ernic_check: one server address at most, got '%s' and '%s'\n",
			argv[optind], argv[optind + 1]);
		exit(2);
	}
	c->server = optind == argc;
	c->o.server = c->server ? NULL : argv[optind];
	c->role = c->server ? "server" : "client";
	if (c->o.serve && !c->server)
		bad("--serve", argv[optind], "no server address (--serve is for the server)");
	if (c->o.n_err_runs && !c->o.serve)
		bad("--expect-error-runs", "", "--serve too");
	if (c->o.n_err_runs && !c->o.expect_kinds)
		c->o.expect_kinds = parse_errs(NULL);
	c->o.expect_err = c->o.expect_given ? c->o.expect_kinds : 0;
	if (p->duration)
		p->iters = 0;
	if (!(p->ops & OPS_KINDS))
		bad("-o", ops, "at least one op kind besides inline");
	if ((p->ops & OPB(OP_WRITE)) && !(p->ops & OPS_RECV))
		bad("-o", ops, "send, send_imm or write_imm with write: their completion is when a plain WRITE is checked");
	if (!seeded)
		p->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	c->my_dir = c->server ? DIR_S2C : DIR_C2S;
	c->peer_dir = c->server ? DIR_C2S : DIR_S2C;
}

static uint32_t min32(uint64_t a, uint64_t b)
{
	return (uint32_t)(a < b ? a : b);
}

/* Server: the client's options, within both devices' limits. */
int negotiate(struct chk *c)
{
	struct params *p = &c->p;
	const uint64_t msg = c->mine.max_msg < c->peer.max_msg ?
			     c->mine.max_msg : c->peer.max_msg;
	const uint32_t mtu = min32(c->mine.mtu, c->peer.mtu);
	const uint32_t wr = min32(c->mine.max_qp_wr, c->peer.max_qp_wr);

	if (c->o.explicit_shared)
		printf("ernic_check: server: note: the shared options are the client's; those given here are ignored\n");
	if (p->max_size > msg) {
		printf("ernic_check: note: max size %u capped to max_msg_sz %llu\n",
		       p->max_size, (unsigned long long)msg);
		p->max_size = (uint32_t)msg;
	}
	if (p->mtu > mtu)
		printf("ernic_check: note: MTU %u capped to the ports' active MTU %u\n",
		       p->mtu, mtu);
	if (!p->mtu || p->mtu > mtu)
		p->mtu = mtu;
	if (p->window > wr)
		p->window = wr;
	if (p->rx_depth > wr)
		p->rx_depth = wr;
	if (p->signal_every > p->window / 2)
		p->signal_every = p->window / 2 ? p->window / 2 : 1;
	if ((p->ops & OPB(OP_READ)) &&
	    (!c->mine.rd_atom || !c->mine.init_rd_atom ||
	     !c->peer.rd_atom || !c->peer.init_rd_atom)) {
		printf("ernic_check: note: a device takes no RDMA READ (max_qp_rd_atom 0): no reads\n");
		p->ops &= ~OPB(OP_READ);
	}
	if (!(p->ops & OPS_KINDS) || !p->max_size || p->mtu < 256) {
		chk_fail(c, "nothing to do within these devices' limits");
		return -1;
	}
	return 0;
}

static enum ibv_mtu mtu_enum(uint32_t b)
{
	switch (b) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	default: return IBV_MTU_4096;
	}
}

/* Both sides, once the options are settled. */
static void configure(struct chk *c)
{
	char ops[128];
	uint64_t mem;

	c->mtu = c->p.mtu;
	c->path_mtu = mtu_enum(c->mtu);
	c->rd_atomic = min32(c->mine.init_rd_atom, c->peer.rd_atom);
	c->dest_rd_atomic = min32(c->mine.rd_atom, 255);
	if (c->rd_atomic > 255)
		c->rd_atomic = 255;
	if (!c->rd_atomic)
		c->rd_atomic = 1;
	if (!c->dest_rd_atomic)
		c->dest_rd_atomic = 1;
	chk_area_sizes(c);
	ops_format(c->p.ops, ops, sizeof(ops));
	mem = c->p.nqp * (c->lr_size + c->rr_size + c->wt_size) + c->rs_size;
	printf("ernic_check: %s: options: seed=%" PRIu64 " qps=%u %s%" PRIu64 "%s max_size=%u mtu=%u ops=%s window=%u rx_depth=%u signal_every=%u rx_stall=%u idle_timeout=%u qp_timeout=%u retry_cnt=%u rnr_retry=%u min_rnr_timer=%u\n",
	       c->role, c->p.seed, c->p.nqp,
	       c->p.duration ? "duration=" : "iters=",
	       c->p.duration ? (uint64_t)c->p.duration : c->p.iters,
	       c->p.duration ? "s" : "", c->p.max_size, c->p.mtu, ops,
	       c->p.window, c->p.rx_depth, c->p.signal_every, c->p.rx_stall,
	       c->p.idle, c->p.qp_timeout, c->p.retry_cnt, c->p.rnr_retry,
	       c->p.min_rnr_timer);
	printf("ernic_check: %s: device %s port %d gid %d: max_rd_atomic=%u max_dest_rd_atomic=%u buffers=%llu MiB\n",
	       c->role, c->o.dev, c->o.ib_port, c->o.gid_idx, c->rd_atomic,
	       c->dest_rd_atomic, (unsigned long long)(mem >> 20));
}

void chk_summary(struct chk *c, bool pass)
{
	struct kcount t = { 0 };
	uint64_t ops = 0;
	uint32_t nerr = 0;

	for (uint32_t i = 0; c->q && i < c->p.nqp; i++) {
		const struct cqp *q = &c->q[i];

		for (int k = 0; k < OP_NKINDS; k++)
			t.n[k] += q->sent.n[k] +
				  (c->peer_done ? 0 : q->recvd.n[k]);
		t.inl += q->sent.inl;
		nerr += q->err_status >= 0;
	}
	for (int k = 0; k < OP_NKINDS; k++) {
		t.n[k] += c->peer_done ? c->peer_sent.n[k] : 0;
		ops += t.n[k];
	}
	t.inl += c->peer_done ? c->peer_sent.inl : 0;
	printf("ernic_check: %s seed=%" PRIu64 " qps=%u ops=%" PRIu64 " sends=%" PRIu64 " writes=%" PRIu64 " reads=%" PRIu64 " imms=%" PRIu64 " inline=%" PRIu64 " bytes_verified=%" PRIu64 " rnr_waits=%" PRIu64 " elapsed=%.2fs",
	       pass ? "PASS" : "FAIL", c->p.seed, c->p.nqp, ops,
	       t.n[OP_SEND] + t.n[OP_SEND_IMM],
	       t.n[OP_WRITE] + t.n[OP_WRITE_IMM], t.n[OP_READ],
	       t.n[OP_SEND_IMM] + t.n[OP_WRITE_IMM], t.inl,
	       c->st.bytes_verified, c->st.rnr_waits,
	       c->t0 ? now_s() - c->t0 : 0.0);
	if (c->reg_read) {
		chk_counters(c);
		printf(" invalid_rx=%" PRIu64, c->invalid_rx);
	}
	if (c->o.expect_err)
		printf(" expected_errors=%u/%u", nerr, c->p.nqp);
	if (c->run)
		printf(" run=%u", c->run);
	printf("\n");
}

static void gid_str(const union ibv_gid *g, char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, g->raw, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* Everything between the TCP connection and the traffic. */
int chk_setup(struct chk *c)
{
	uint32_t *qpn, *psn;
	char a[64], b[64];
	int rc = -1;

	if (proto_hello(c))
		return -1;
	configure(c);
	qpn = calloc(c->p.nqp, sizeof(*qpn));
	psn = calloc(c->p.nqp, sizeof(*psn));
	if (!qpn || !psn)
		goto out;
	if (verbs_setup(c)) {
		chk_fail(c, "setting up %u QPs on %s failed (see above)",
			 c->p.nqp, c->o.dev);
		goto out;
	}
	if (proto_qpinfo(c, qpn, psn))
		goto out;
	gid_str(&c->gid, a, sizeof(a));
	gid_str(&c->peer_gid, b, sizeof(b));
	printf("ernic_check: %s%s: local GID %s, peer GID %s, %u QPs, QPN %u..%u -> %u..%u, qp 0 SQ PSN %#x -> %#x, max_inline=%u max_sge=%u\n",
	       c->tag, c->role, a, b, c->p.nqp, c->q[0].qp->qp_num,
	       c->q[c->p.nqp - 1].qp->qp_num, qpn[0], qpn[c->p.nqp - 1],
	       c->q[0].psn, psn[0], c->max_inline, c->max_sge);
	if (verbs_connect(c, qpn, psn)) {
		chk_fail(c, "connecting the QPs failed (see above)");
		goto out;
	}
	for (uint32_t i = 0; i < c->p.nqp; i++)
		if (post_recvs(c, &c->q[i]))
			goto out;
	rc = proto_ready(c);
out:
	free(qpn);
	free(psn);
	return rc;
}

int main(int argc, char **argv)
{
	static struct chk chk;
	struct chk *c = &chk;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(c, argc, argv);
	serve_signals(c->o.serve);
	if (c->o.serve)
		return serve_main(c);
	rc = verbs_open(c) || (c->server ? ctl_server(c) : ctl_client(c)) ||
	     chk_setup(c);
	if (!rc) {
		c->t0 = now_s();
		printf("ernic_check: %s: running\n", c->role);
		rc = chk_run(c);
	}
	if (rc && !c->failed)
		chk_fail(c, "setup failed");
	if (c->failed && !c->peer_gone && c->ctl)
		proto_abort(c, c->why);
	proto_close(c);
	chk_summary(c, !rc && !c->failed);
	verbs_close(c);
	return rc || c->failed ? 1 : 0;
}
