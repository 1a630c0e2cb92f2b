// SPDX-License-Identifier: MIT
/* ernic_faultq's command line: every bad value is an error, exit 2. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "faultq.h"

void fq_usage(FILE *f)
{
	fprintf(f,
"usage: ernic_faultq --queue N [fault options] [--seed S] [--stats FILE]\n"
"       ernic_faultq add-rule FAMILY TABLE CHAIN QUEUE [bypass]\n"
"Faults, decided per packet with independent draws (PCT: percent, may be\n"
"fractional). A packet is dropped, or else: maybe corrupted, maybe\n"
"duplicated, and held for a delay or else for reordering.\n"
"  --drop PCT             drop it\n"
"  --corrupt PCT          flip one bit of the UDP payload (BTH..ICRC, not\n"
"                         BTH byte 4, which the ICRC masks), fix the UDP\n"
"                         checksum\n"
"  --dup PCT              let it through and send one copy right after it,\n"
"                         from a raw socket with SO_MARK --mark\n"
"  --delay PCT --delay-ms MS   hold it MS milliseconds\n"
"  --reorder PCT          hold it until 1..K later packets came by, at\n"
"                         most --reorder-ms (default 10)\n"
"  --reorder-depth K      (default 3)\n"
"Other:\n"
"  --seed S               PRNG seed (default: random; printed)\n"
"  --stats FILE           counters, rewritten every --stats-ms (default 1000)\n"
"  --ready FILE           created once the queue is bound\n"
"  --log FILE             one line per packet decision and release\n"
"  --mark M               SO_MARK of the copies (default 0x%x)\n"
"  --max-held N           held packets at most (default 1024)\n"
"  --corrupt-keep-csum    leave the UDP checksum stale (self-test only)\n"
"  --die-with-parent      exit (cleanly) when the parent process dies\n"
"  --cpu N                run on CPU N only: on lo, packets then reach the\n"
"                         receiver in verdict order\n"
"Signals: INT/TERM print the counters and exit, USR1 prints them.\n",
		FAULTQ_MARK_DEFAULT);
}

__attribute__((format(printf, 1, 2), noreturn))
static void die_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ernic_faultq: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (--help for usage)\n");
	exit(2);
}

static double parse_pct(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0 || v > 100)
		die_usage("--%s: '%s' is not a percentage in [0, 100]", opt, s);
	return v / 100;
}

uint64_t fq_parse_u64(const char *opt, const char *s, uint64_t min,
			  uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v < min || v > max)
		die_usage("--%s: '%s' is not a number in [%" PRIu64 ", %" PRIu64
			  "]", opt, s, min, max);
	return v;
}

enum {
	O_QUEUE = 256, O_DROP, O_DUP, O_REORDER, O_RDEPTH, O_RMS, O_DELAY,
	O_DMS, O_CORRUPT, O_SEED, O_STATS, O_STATS_MS, O_READY, O_LOG, O_MARK,
	O_MAXHELD, O_KEEPCSUM, O_PDEATH, O_CPU, O_HELP,
};

void fq_parse_opts(struct fq_opts *o, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "queue", required_argument, NULL, O_QUEUE },
		{ "drop", required_argument, NULL, O_DROP },
		{ "dup", required_argument, NULL, O_DUP },
		{ "reorder", required_argument, NULL, O_REORDER },
		{ "reorder-depth", required_argument, NULL, O_RDEPTH },
		{ "reorder-ms", required_argument, NULL, O_RMS },
		{ "delay", required_argument, NULL, O_DELAY },
		{ "delay-ms", required_argument, NULL, O_DMS },
		{ "corrupt", required_argument, NULL, O_CORRUPT },
		{ "seed", required_argument, NULL, O_SEED },
		{ "stats", required_argument, NULL, O_STATS },
		{ "stats-ms", required_argument, NULL, O_STATS_MS },
		{ "ready", required_argument, NULL, O_READY },
		{ "log", required_argument, NULL, O_LOG },
		{ "mark", required_argument, NULL, O_MARK },
		{ "max-held", required_argument, NULL, O_MAXHELD },
		{ "corrupt-keep-csum", no_argument, NULL, O_KEEPCSUM },
		{ "die-with-parent", no_argument, NULL, O_PDEATH },
		{ "cpu", required_argument, NULL, O_CPU },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int c, have_queue = 0;

	*o = (struct fq_opts){ .reorder_depth = 3, .reorder_ms = 10,
			    .stats_ms = 1000, .max_held = 1024,
			    .mark = FAULTQ_MARK_DEFAULT, .cpu = -1 };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		const char *name = "";

		for (const struct option *l = lo; l->name; l++)
			if (l->val == c)
				name = l->name;

		switch (c) {
		case O_QUEUE:
			o->queue = (unsigned int)fq_parse_u64(name, optarg, 0, 65535);
			have_queue = 1;
			break;
		case O_DROP: o->drop = parse_pct(name, optarg); break;
		case O_DUP: o->dup = parse_pct(name, optarg); break;
		case O_REORDER: o->reorder = parse_pct(name, optarg); break;
		case O_DELAY: o->delay = parse_pct(name, optarg); break;
		case O_CORRUPT: o->corrupt = parse_pct(name, optarg); break;
		case O_RDEPTH:
			o->reorder_depth = (unsigned int)fq_parse_u64(name, optarg, 1, 1000);
			break;
		case O_RMS:
			o->reorder_ms = (unsigned int)fq_parse_u64(name, optarg, 1, 60000);
			break;
		case O_DMS:
			o->delay_ms = (unsigned int)fq_parse_u64(name, optarg, 1, 60000);
			break;
		case O_SEED:
			o->seed = fq_parse_u64(name, optarg, 0, UINT64_MAX);
			o->have_seed = 1;
			break;
		case O_STATS: o->stats = optarg; break;
		case O_STATS_MS:
			o->stats_ms = (unsigned int)fq_parse_u64(name, optarg, 10, 3600000);
			break;
		case O_READY: o->ready = optarg; break;
		case O_LOG: o->log = optarg; break;
		case O_MARK:
			o->mark = (uint32_t)fq_parse_u64(name, optarg, 1, UINT32_MAX);
			break;
		case O_MAXHELD:
			o->max_held = (unsigned int)fq_parse_u64(name, optarg, 1, 65536);
			break;
		case O_KEEPCSUM: o->keep_csum = 1; break;
		case O_PDEATH: o->die_with_parent = 1; break;
		case O_CPU:
			o->cpu = (int)fq_parse_u64(name, optarg, 0, CPU_SETSIZE - 1);
			break;
		case O_HELP: fq_usage(stdout); exit(0);
		default: die_usage("bad option");
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (!have_queue)
		die_usage("--queue N is required");
	if (o->delay > 0 && !o->delay_ms)
		die_usage("--delay needs --delay-ms MS");
}
