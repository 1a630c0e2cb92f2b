// SPDX-License-Identifier: MIT
/*
 * ernicctl: create and remove ERNIC devices (software ERNICs, and
 * hardware ones under UIO or VFIO) that libibverbs discovers through a
 * sysfs overlay (SYSFS_PATH), list them, and print the environment that
 * points libibverbs at the overlay and provider.
 *
 * Exit status: 0 success, 1 failure (one "ernicctl: reason" line on
 * stderr), 2 command-line syntax error.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ernic_conf.h"
#include "ernic_net.h"
#include "broker_ctl.h"
#include "cli.h"
#include "devshow.h"
#include "regdump.h"
#include "hwopts.h"
#include "overlay.h"
#include "paths.h"
#include "vfpga_ctl.h"

#ifndef NETLINK_RDMA
#define NETLINK_RDMA 20
#endif

static const char usage_text[] =
	"Usage: ernicctl COMMAND [ARGS]\n"
	"\n"
	"Commands:\n"
	"  add NAME --sw|--sim-uio ADDR [--wire udp|frame]\n"
	"           [--param NAME=VALUE]... [--noncoherent] [--alone]\n"
	"  add NAME --uio DEV [--dma-map N|--udmabuf NAME] [--uio-root DIR]\n"
	"           --addr ADDR --mac MAC --netdev NETDEV [--noncoherent]\n"
	"           [--alone]\n"
	"  add NAME --vfio BDF [--bar N] [--offset X] [--vfio-root DIR]\n"
	"           [--share-mib N]\n"
	"           --addr ADDR --mac MAC --netdev NETDEV [--noncoherent]\n"
	"           [--alone]\n"
	"        create software ERNIC NAME on local address ADDR (root);\n"
	"        --sim-uio ADDR instead of --sw: the same ERNIC model as a\n"
	"        virtual FPGA process (ernic-vfpga) that the provider drives\n"
	"        through its UIO backend, as it drives a Zynq board;\n"
	"        --wire: how its RoCEv2 packets meet the network: udp (a UDP\n"
	"        socket on ADDR:4791, the default) or frame (whole Ethernet\n"
	"        frames on ADDR's netdev, AF_PACKET, needs CAP_NET_RAW);\n"
	"        --param sets a PG332 Table 2-6 parameter: C_NUM_QP,\n"
	"        C_M_AXI_ADDR_WIDTH, C_MAX_WR_RETRY_DATA_BUF_DEPTH,\n"
	"        C_EN_WR_RETRY_DATA_BUF, C_EN_INITIATOR_LITE, C_EN_DEBUG_PORTS;\n"
	"        --noncoherent: the IP's DMA is not cache-coherent (coherent=0):\n"
	"        the provider cleans and invalidates caches; a software ERNIC\n"
	"        then keeps its own copy of all DMA memory, as strict as a bus\n"
	"        can be, to test that;\n"
	"        --uio DEV (a UIO device name or uioN: a Zynq board's ERNIC)\n"
	"        or --vfio BDF (DDDD:BB:DD.F, a PCIe card's function bound to\n"
	"        vfio-pci): an ERNIC in hardware, which exists already. It is\n"
	"        not a host address: --addr ADDR is\n"
	"        the ERNIC's own IPv4/IPv6 address (its GID) and --mac MAC its\n"
	"        MAC; NETDEV is the host link on its network (peers' MACs,\n"
	"        port state). UIO DMA memory is map N (default 1) or a\n"
	"        u-dma-buf device; the VFIO register window is at byte offset\n"
	"        X (hex 0x... or decimal, 4 KiB aligned, default 0) of BAR N\n"
	"        (0..5, default 0); --uio-root/--vfio-root DIR find sysfs and\n"
	"        /dev under DIR (tests);\n"
	"        a UIO or VFIO device (--uio, --sim-uio, --vfio) gets a broker\n"
	"        (ernic-broker) through which processes share it; --alone: no\n"
	"        broker, one process at a time uses the device; a VFIO\n"
	"        device's broker maps N MiB (--share-mib, default 256) into\n"
	"        the IOMMU once and shares them out as DMA memory\n"
	"  del NAME      remove device NAME (root)\n"
	"  list          one line per device: NAME uverbsN sw|uio|vfio ADDR NETDEV\n"
	"                WIRE\n"
	"  env           print the shell exports that make libibverbs use\n"
	"                the overlay and the ernic provider\n"
	"  show NAME     the processes using device NAME, their QPs and MRs\n"
	"                (after reclaiming those of processes that died)\n"
	"  dump NAME     every ERNIC register of NAME, named, in offset order\n"
	"                (software device: one block per process using it)\n"
	"  stats NAME    the Table 2-7 counters and each enabled QP's status\n"
	"\n"
	"Options:\n"
	"  -h, --help    show this help\n"
	"\n"
	"Environment:\n"
	"  ERNIC_RUNDIR  overlay location (default " ERNIC_DEFAULT_RUNDIR ")\n";

static void usage(FILE *f)
{
	fputs(usage_text, f);
}

/* ERNIC_RUNDIR made absolute: SYSFS_PATH must not depend on the cwd. */
static int get_rundir(char *buf, size_t len)
{
	const char *env = getenv("ERNIC_RUNDIR");
	char cwd[PATH_MAX];
	size_t n;
	int w;

	if (!env || !*env)
		env = ERNIC_DEFAULT_RUNDIR;
	if (*env == '/') {
		w = snprintf(buf, len, "%s", env);
	} else {
		if (!getcwd(cwd, sizeof(cwd))) {
			fail_msg("cannot resolve ERNIC_RUNDIR '%s': %s", env,
				 strerror(errno));
			return -1;
		}
		w = snprintf(buf, len, "%s/%s", strcmp(cwd, "/") ? cwd : "",
			     env);
	}
	if (w < 0 || (size_t)w >= len - 64) { /* room for the overlay paths */
		fail_msg("ERNIC_RUNDIR is too long");
		return -1;
	}
	for (n = strlen(buf); n > 1 && buf[n - 1] == '/'; n--)
		buf[n - 1] = '\0';
	return 0;
}

static int need_root(void)
{
	if (geteuid() != 0) {
		fail_msg("must be run as root");
		return -1;
	}
	return 0;
}

static bool valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > ERNIC_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9') && *s != '_' && *s != '-')
			return false;
	return true;
}

static int check_name(const char *name)
{
	if (!*name) {
		fail_msg("device name must not be empty");
		return -1;
	}
	if (strlen(name) > ERNIC_NAME_MAX) {
		fail_msg("device name '%.20s...' is longer than %d characters",
			 name, ERNIC_NAME_MAX);
		return -1;
	}
	if (!valid_name(name)) {
		fail_msg("device name '%s' may only contain A-Z a-z 0-9 _ -",
			 name);
		return -1;
	}
	return 0;
}

/*
 * libibverbs only honours SYSFS_PATH when it enumerates devices through
 * sysfs, i.e. when the kernel has no RDMA netlink family.
 */
static void warn_rdma_netlink(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);

	if (fd < 0)
		return;
	close(fd);
	fprintf(stderr, "ernicctl: warning: this kernel has RDMA netlink; "
			"libibverbs will ignore the overlay (it reads "
			"SYSFS_PATH only where RDMA netlink is absent)\n");
}

/* getopt_long over the arguments after the command word; errors are
 * reported by bad_option() so they name ernicctl, not the command. */
static void reset_getopt(void)
{
	optind = 1;
	opterr = 0;
}

static int bad_option(char **argv, int opt)
{
	const char *arg = argv[optind - 1];

	if (opt == ':')
		fprintf(stderr, "ernicctl: option '%s' requires an argument\n",
			arg);
	else if (optopt)
		fprintf(stderr, "ernicctl: unknown option '-%c'\n", optopt);
	else
		fprintf(stderr, "ernicctl: unknown option '%s'\n", arg);
	usage(stderr);
	return EXIT_USAGE;
}

static const struct option help_only[] = {
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* For commands without options: only -h/--help. Returns -1 to go on,
 * else an exit status. */
static int plain_opts(int argc, char **argv)
{
	int opt;

	reset_getopt();
	while ((opt = getopt_long(argc, argv, ":h", help_only, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return 0;
		}
		return bad_option(argv, opt);
	}
	return -1;
}

static const char *long_name(const struct option *o, int val)
{
	for (; o->name; o++)
		if (o->val == val)
			return o->name;
	return "?";
}

static int cmd_add(int argc, char **argv)
{
	static const struct option opts[] = {
		{"sw", required_argument, NULL, 's'},
		{"sim-uio", required_argument, NULL, 'u'},
		{"param", required_argument, NULL, 'p'},
		{"wire", required_argument, NULL, 'w'},
		{"noncoherent", no_argument, NULL, 'n'},
		{"uio", required_argument, NULL, 'U'},
		{"vfio", required_argument, NULL, 'V'},
		{"addr", required_argument, NULL, 'a'},
		{"mac", required_argument, NULL, 'M'},
		{"netdev", required_argument, NULL, 'N'},
		{"dma-map", required_argument, NULL, 'D'},
		{"udmabuf", required_argument, NULL, 'B'},
		{"bar", required_argument, NULL, 'b'},
		{"offset", required_argument, NULL, 'o'},
		{"uio-root", required_argument, NULL, 'r'},
		{"vfio-root", required_argument, NULL, 'R'},
		{"share-mib", required_argument, NULL, 'S'},
		{"alone", no_argument, NULL, 'A'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char rundir[PATH_MAX], err[512];
	const char *addr = NULL, *wire_arg = NULL, *name;
	enum ernic_wire wire = ERNIC_WIRE_UDP;
	bool sim_uio = false, noncoherent = false, alone = false;
	struct hw_opts hw = { 0 };
	struct ernic_conf conf;
	struct ernic_ip ip;
	unsigned int uverbs;
	char **params;
	int nparams = 0, opt, fd, rc;

	params = calloc((size_t)argc, sizeof(*params));
	if (!params) {
		fail_msg("out of memory");
		return 1;
	}
	reset_getopt();
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
		case 'u':
			if (addr || hw.dev) {
				free(params);
				return usage_error("add: give one of --sw, "
						   "--sim-uio, --uio, --vfio");
			}
			addr = optarg;
			sim_uio = opt == 'u';
			break;
		case 'p':
			params[nparams++] = optarg;
			break;
		case 'n':
			noncoherent = true;
			break;
		case 'A':
			alone = true;
			break;
		case 'U':
		case 'V':
			if (hw.dev || addr) {
				free(params);
				return usage_error("add: give one of --sw, "
						   "--sim-uio, --uio, --vfio");
			}
			hw.dev = optarg;
			hw.vfio = opt == 'V';
			break;
		case 'a':
		case 'M':
		case 'N':
		case 'D':
		case 'B':
		case 'b':
		case 'o':
		case 'r':
		case 'R':
		case 'S':
			if (hw_opt(&hw, opt, optarg)) {
				free(params);
				return usage_error("add: --%s given twice",
						   long_name(opts, opt));
			}
			break;
		case 'w':
			if (wire_arg) {
				free(params);
				return usage_error("add: --wire given twice");
			}
			wire_arg = optarg;
			if (!strcmp(optarg, "udp")) {
				wire = ERNIC_WIRE_UDP;
			} else if (!strcmp(optarg, "frame")) {
				wire = ERNIC_WIRE_FRAME;
			} else {
				free(params);
				return usage_error("add: --wire must be 'udp' or "
						   "'frame', not '%s'", optarg);
			}
			break;
		case 'h':
			free(params);
			usage(stdout);
			return 0;
		default:
			free(params);
			return bad_option(argv, opt);
		}
	}
	rc = 1;
	if (optind >= argc) {
		rc = usage_error("add: missing device NAME");
		goto out;
	}
	if (argc - optind > 1) {
		rc = usage_error("add: unexpected argument '%s'",
				 argv[optind + 1]);
		goto out;
	}
	name = argv[optind];
	if (!addr && !hw.dev) {
		rc = usage_error("add: missing --sw ADDR, --sim-uio ADDR, "
				 "--uio DEV or --vfio BDF");
		goto out;
	}
	rc = hw_check(&hw, wire_arg != NULL);
	if (rc)
		goto out;
	if (alone && !sim_uio && !hw.dev) {
		rc = usage_error("add: --alone is for --uio, --vfio and "
				 "--sim-uio");
		goto out;
	}
	if (alone && hw.share_mib) {
		rc = usage_error("add: --share-mib is what a broker shares: "
				 "not with --alone");
		goto out;
	}
	rc = 1;
	if (need_root() || check_name(name) || get_rundir(rundir, sizeof(rundir)))
		goto out;

	ernic_conf_defaults(&conf);
	snprintf(conf.name, sizeof(conf.name), "%s", name);
	conf.wire = wire;
	conf.coherent = !noncoherent;
	for (int i = 0; i < nparams; i++) {
		char *eq = strchr(params[i], '=');

		if (!eq || eq == params[i]) {
			fail_msg("--param '%s': expected NAME=VALUE", params[i]);
			goto out;
		}
		*eq = '\0';
		if (ernic_conf_set_param(&conf, params[i], eq + 1, err,
					 sizeof(err))) {
			fail_msg("--param: %s", err);
			goto out;
		}
		/* Earlier entries were cut at '=': they are bare names. */
		for (int j = 0; j < i; j++) {
			if (!strcmp(params[j], params[i])) {
				fail_msg("--param %s given twice", params[i]);
				goto out;
			}
		}
	}

	if (hw.dev) {
		if (hw_conf(&hw, &conf, &ip))
			goto out;
	} else if (ernic_ip_parse(addr, &ip)) {
		fail_msg("'%s' is not an IPv4 or IPv6 address", addr);
		goto out;
	} else if (ernic_net_local_netdev(&ip, conf.netdev, conf.mac, err,
					  sizeof(err))) {
		fail_msg("%s", err);
		goto out;
	}
	conf.family = ip.family;
	memcpy(conf.addr, ip.addr, sizeof(conf.addr));
	conf.node_guid = overlay_guid(conf.mac, conf.family, conf.addr);

	warn_rdma_netlink();
	fd = overlay_lock(rundir, true, err, sizeof(err));
	if (fd < 0) {
		fail_msg("%s", err);
		goto out;
	}
	if (sim_uio && vfpga_start(rundir, &conf, err, sizeof(err))) {
		fail_msg("%s", err);
	} else if (overlay_add(rundir, &conf, &uverbs, err, sizeof(err))) {
		fail_msg("%s", err);
		if (sim_uio)
			vfpga_stop(rundir, name);
	} else if (conf.backend != ERNIC_BACKEND_SW && !alone &&
		   broker_start(rundir, name, err, sizeof(err))) {
		/* processes share a hardware device through its broker */
		fail_msg("%s", err);
		overlay_del(rundir, name, err, sizeof(err));
		if (sim_uio)
			vfpga_stop(rundir, name);
	} else {
		rc = 0;
	}
	close(fd);
out:
	free(params);
	return rc;
}

static int cmd_del(int argc, char **argv)
{
	char rundir[PATH_MAX], err[512];
	struct stat st;
	int fd, rc;

	rc = plain_opts(argc, argv);
	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return usage_error("del: missing device NAME");
	if (argc - optind > 1)
		return usage_error("del: unexpected argument '%s'",
				   argv[optind + 1]);
	if (need_root() || check_name(argv[optind]) ||
	    get_rundir(rundir, sizeof(rundir)))
		return 1;
	if (stat(rundir, &st)) { /* del must not create the rundir */
		fail_msg("no device named '%s'", argv[optind]);
		return 1;
	}
	fd = overlay_lock(rundir, true, err, sizeof(err));
	if (fd < 0) {
		fail_msg("%s", err);
		return 1;
	}
	broker_stop(rundir, argv[optind]);
	rc = overlay_del(rundir, argv[optind], err, sizeof(err));
	vfpga_stop(rundir, argv[optind]);
	close(fd);
	if (rc) {
		fail_msg("%s", err);
		return 1;
	}
	return 0;
}

/* The commands that take one device NAME and read what it has:
 * show (devshow), dump and stats (regdump). */
enum reader { READ_SHOW, READ_DUMP, READ_STATS };

static int cmd_reader(int argc, char **argv, enum reader r)
{
	static const char *const what[] = { "show", "dump", "stats" };
	char rundir[PATH_MAX], err[512];
	int rc;

	rc = plain_opts(argc, argv);
	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return usage_error("%s: missing device NAME", what[r]);
	if (argc - optind > 1)
		return usage_error("%s: unexpected argument '%s'", what[r],
				   argv[optind + 1]);
	if (check_name(argv[optind]) || get_rundir(rundir, sizeof(rundir)))
		return 1;
	rc = r == READ_SHOW ? devshow(rundir, argv[optind], err, sizeof(err)) :
			      regdump(rundir, argv[optind], r == READ_STATS,
				      err, sizeof(err));
	if (rc) {
		fail_msg("%s", err);
		return 1;
	}
	return 0;
}

static int cmd_show(int argc, char **argv)
{
	return cmd_reader(argc, argv, READ_SHOW);
}

static int cmd_dump(int argc, char **argv)
{
	return cmd_reader(argc, argv, READ_DUMP);
}

static int cmd_stats(int argc, char **argv)
{
	return cmd_reader(argc, argv, READ_STATS);
}

static const char *wire_name(enum ernic_wire w)
{
	return w == ERNIC_WIRE_FRAME ? "frame" : "udp";
}

static int cmd_list(int argc, char **argv)
{
	char rundir[PATH_MAX], err[512], addr[INET6_ADDRSTRLEN];
	struct overlay_dev *devs;
	size_t n;
	int fd, rc;

	rc = plain_opts(argc, argv);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return usage_error("list: unexpected argument '%s'",
				   argv[optind]);
	if (get_rundir(rundir, sizeof(rundir)))
		return 1;
	fd = overlay_lock(rundir, false, err, sizeof(err));
	if (fd == -2)
		return 0;
	if (fd == -1) {
		fail_msg("%s", err);
		return 1;
	}
	rc = overlay_list(rundir, &devs, &n);
	close(fd);
	if (rc) {
		fail_msg("cannot read the overlay: %s", strerror(rc));
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		struct ernic_ip ip = {.family = devs[i].conf.family};

		if (!devs[i].conf_ok) {
			fprintf(stderr, "ernicctl: warning: %s has no valid %s\n",
				devs[i].name, ERNIC_CONF_FILE);
			printf("%s uverbs%u sw ? ? ?\n", devs[i].name,
			       devs[i].uverbs);
			continue;
		}
		memcpy(ip.addr, devs[i].conf.addr, sizeof(ip.addr));
		ernic_ip_format(&ip, addr, sizeof(addr));
		printf("%s uverbs%u %s %s %s %s\n", devs[i].name,
		       devs[i].uverbs,
		       ernic_backend_name(devs[i].conf.backend),
		       addr, devs[i].conf.netdev,
		       wire_name(devs[i].conf.wire));
	}
	free(devs);
	return 0;
}

/* Print a path for a shell, quoted only when it needs to be. */
static void put_shell_word(const char *s)
{
	if (s[strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			"0123456789/._-+:,@%")] == '\0') {
		fputs(s, stdout);
		return;
	}
	putchar('\'');
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*s);
	}
	putchar('\'');
}

static int cmd_env(int argc, char **argv)
{
	char rundir[PATH_MAX], buf[PATH_MAX + 32], err[PATH_MAX + 64];
	struct ernic_paths paths;
	int rc;

	rc = plain_opts(argc, argv);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return usage_error("env: unexpected argument '%s'",
				   argv[optind]);
	if (get_rundir(rundir, sizeof(rundir)))
		return 1;
	if (ernic_paths_get(&paths, err, sizeof(err))) {
		fail_msg("%s", err);
		return 1;
	}
	fputs("export SYSFS_PATH=", stdout);
	snprintf(buf, sizeof(buf), "%s/%s", rundir, OVERLAY_SYSFS);
	put_shell_word(buf);
	/* libibverbs appends -rdmav<PABI>.so to a driver given by path;
	 * none when it finds the provider through /etc/libibverbs.d. */
	if (paths.driver[0]) {
		fputs(" RDMAV_DRIVERS=", stdout);
		put_shell_word(paths.driver);
	}
	/* ibv_create_comp_channel() for ERNIC devices; whatever else the
	 * caller preloads stays, after it. */
	fputs(" LD_PRELOAD=", stdout);
	put_shell_word(paths.preload);
	fputs("\"${LD_PRELOAD:+:$LD_PRELOAD}\"", stdout);
	/* librdmacm for ERNIC devices (rdma_cm programs), in a directory
	 * of its own so it stands in for the distribution's only here. */
	fputs(" LD_LIBRARY_PATH=", stdout);
	put_shell_word(paths.rdmacm);
	fputs("\"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"", stdout);
	putchar('\n');
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} cmds[] = {
		{"add", cmd_add},
		{"del", cmd_del},
		{"list", cmd_list},
		{"env", cmd_env},
		{"show", cmd_show},
		{"dump", cmd_dump},
		{"stats", cmd_stats},
	};
	int rc;

	umask(022); /* overlay files must be readable by every verbs user */
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		rc = cmds[i].fn(argc - 1, argv + 1);
		if (fflush(stdout) || ferror(stdout)) {
			fail_msg("write error: %s", strerror(errno));
			return 1;
		}
		return rc;
	}
	fprintf(stderr, "ernicctl: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
