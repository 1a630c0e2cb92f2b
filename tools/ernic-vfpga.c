// SPDX-License-Identifier: MIT
/*
 * ernic-vfpga: the ERNIC model as a "virtual FPGA" in its own process,
 * dressed as the Zynq platform device the provider's UIO backend drives
 * (docs/hardware.md). Started and stopped by `ernicctl add --sim-uio`.
 *
 * Under ROOT it makes what a board's kernel would show:
 *   dev/uio0                        the register window (map0), a file
 *                                   both processes map shared
 *   dev/uio0.irq                    the interrupt: a SOCK_SEQPACKET socket
 *                                   speaking UIO's protocol (4-byte event
 *                                   count to read, 1 to write to unmask),
 *                                   and flushes of posted writes
 *                                   (common/ernic_vfpga.h)
 *   dev/udmabuf0                    DDR the IP masters (u-dma-buf)
 *   sys/class/uio/uio0/...          name, maps/map0/{addr,size,offset}
 *   sys/class/u-dma-buf/udmabuf0/   phys_addr, size
 * and polls the register window as hardware polls doorbells.
 *
 *   usage: ernic-vfpga --root DIR --conf FILE [--dma-mib N] [--ready-fd FD]
 * FILE is the model's configuration (ernic.conf keys of a software
 * device: addr, wire, PG332 parameters). Runs until SIGTERM or SIGINT.
 * SIGUSR1 is a surprise removal (unplug): what a driver sees of a PCIe
 * card pulled or whose link went down. The IP stops, every register
 * reads all-ones, and the handler hears one last interrupt.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ernic_conf.h"
#include "ernic_hw.h"
#include "ernic_model.h"
#include "ernic_time.h"
#include "ernic_vfpga.h"
#include "ernic_window.h"
#include "fsutil.h"

/* one flush connection per process sharing the device, and the
 * broker's interrupt connection: ERNIC_DS_PROCS and more */
#define MAX_CLIENTS 160
#define UIO_NAME "ernic-vfpga"

static struct {
	const char *root;
	struct ernic_model *m;
	struct ernic_window *w;
	atomic_bool stop;
	bool gone;			/* unplugged (SIGUSR1) */
	pthread_t poller;
	uint32_t *regs;			/* the window file */
	int clients[MAX_CLIENTS];
	bool control[MAX_CLIENTS];	/* flushes only: no event counts */
	uint32_t irq_count;
	bool irq_out;			/* delivered, waiting for an unmask */
} vf;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("ernic-vfpga: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void path_of(char *buf, size_t len, const char *rel)
{
	if (snprintf(buf, len, "%s/%s", vf.root, rel) >= (int)len)
		die("path too long: %s/%s", vf.root, rel);
}

static void mkdirs(const char *rel)
{
	char p[PATH_MAX];
	int rc;

	path_of(p, sizeof(p), rel);
	rc = mkdir_p(p, 0755);
	if (rc)
		die("mkdir %s: %s", p, strerror(rc));
}

static void attr(const char *rel, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void attr(const char *rel, const char *fmt, ...)
{
	char p[PATH_MAX];
	va_list ap;
	FILE *f;

	path_of(p, sizeof(p), rel);
	f = fopen(p, "we");
	if (!f)
		die("%s: %s", p, strerror(errno));
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	if (fclose(f))
		die("%s: %s", p, strerror(errno));
}

/* A file of len bytes under ROOT, mapped shared. */
static void *shared_file(const char *rel, size_t len)
{
	char p[PATH_MAX];
	void *va;
	int fd;

	path_of(p, sizeof(p), rel);
	fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)len))
		die("%s: %s", p, strerror(errno));
	va = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (va == MAP_FAILED)
		die("mmap %s: %s", p, strerror(errno));
	close(fd);
	return va;
}

/*
 * The AXI4-Lite slave: polls the window. Spins while software is busy
 * (doorbells come in bursts), backs off to 20 us, then 1 ms when idle,
 * so an idle device costs little CPU.
 */
static void *poller(void *arg)
{
	uint64_t last = ernic_mono_ns();

	while (!atomic_load(&vf.stop)) {
		uint64_t idle;
		struct timespec ts = { 0, 0 };

		if (ernic_window_sync(vf.w)) {
			last = ernic_mono_ns();
			continue;
		}
		idle = ernic_mono_ns() - last;
		if (idle < 200000) {
			sched_yield();
			continue;
		}
		ts.tv_nsec = idle < 20000000 ? 20000 : 1000000;
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void client_close(int k)
{
	close(vf.clients[k]);
	vf.clients[k] = -1;
	vf.control[k] = false;
}

static void send_count(void)
{
	for (int k = 0; k < MAX_CLIENTS; k++)
		if (vf.clients[k] >= 0 && !vf.control[k] &&
		    send(vf.clients[k], &vf.irq_count, sizeof(vf.irq_count),
			 MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno != EAGAIN)
			client_close(k);
}

/*
 * A flush: software's writes so far take effect now, as on the IP when
 * they arrive, not at the poller's next pass; the answer tells software
 * they have. The provider's interrupt handler flushes its W1C writes
 * before it services what it cleared: a cause raised again after the
 * pass stays set and interrupts again, where one raised between the
 * write and a later pass would be cleared with the old one, unserviced.
 */
static void client_flush(int k, const struct ernic_vfpga_msg *req)
{
	vf.control[k] = true;
	if (!vf.gone)
		ernic_window_sync(vf.w);
	if (send(vf.clients[k], req, sizeof(*req),
		 MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(*req))
		client_close(k);
}

/* A client's message: a 4-byte write, where 1 unmasks (UIO irqcontrol)
 * and 0 is ignored, or a flush. */
static void client_msg(int k)
{
	union {
		uint32_t v;
		struct ernic_vfpga_msg req;
	} u;
	ssize_t n = recv(vf.clients[k], &u, sizeof(u), MSG_DONTWAIT);

	if (n == 0 || (n < 0 && errno != EAGAIN)) {
		client_close(k);
		return;
	}
	if (n == sizeof(u.req) && u.req.op == ERNIC_VFPGA_FLUSH) {
		client_flush(k, &u.req);
		return;
	}
	if (n != sizeof(u.v) || u.v != 1 || vf.gone)
		return;
	/* The handler's W1C writes reach the model before the unmask, as
	 * on the bus they precede it. */
	ernic_window_sync(vf.w);
	vf.irq_out = false;
	ernic_model_irq_enable(vf.m);
}

/* SIGUSR1: the card is pulled. The IP stops first (no DMA, nothing on
 * the wire, no window pass that would write registers back), then every
 * register reads all-ones, as reads of a PCIe function that is gone
 * complete; the handler hears of it by one last interrupt. */
static void unplug(void)
{
	if (vf.gone)
		return;
	vf.gone = true;
	atomic_store(&vf.stop, true);
	pthread_join(vf.poller, NULL);
	ernic_model_stop(vf.m);
	memset(vf.regs, 0xFF, ERNIC_REG_SPACE_SIZE);
	vf.irq_count++;
	vf.irq_out = true;
	send_count();
	fprintf(stderr, "ernic-vfpga: unplugged (SIGUSR1): registers read "
		"all-ones\n");
}

static int listen_irq(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s;

	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/dev/uio0.irq",
		     vf.root) >= (int)sizeof(sa.sun_path))
		die("%s/dev/uio0.irq: path too long for a socket", vf.root);
	unlink(sa.sun_path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(s, MAX_CLIENTS))
		die("%s: %s", sa.sun_path, strerror(errno));
	return s;
}

static void serve(int lsock, int sigfd)
{
	int irqfd = ernic_model_irq_fd(vf.m);

	for (;;) {
		struct pollfd p[3 + MAX_CLIENTS];
		struct signalfd_siginfo si;
		int n = 0;

		p[n++] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = lsock, .events = POLLIN };
		/* While delivered, the line is masked: do not look. */
		p[n++] = (struct pollfd){ .fd = vf.irq_out || vf.gone ? -1 :
									irqfd,
					  .events = POLLIN };
		for (int k = 0; k < MAX_CLIENTS; k++)
			p[n++] = (struct pollfd){ .fd = vf.clients[k],
						  .events = POLLIN };
		if (poll(p, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (p[0].revents) {
			if (read(sigfd, &si, sizeof(si)) == sizeof(si) &&
			    si.ssi_signo == SIGUSR1) {
				unplug();
				continue;
			}
			break;
		}
		if (p[1].revents & POLLIN) {
			int c = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
			int k = 0;

			while (k < MAX_CLIENTS && vf.clients[k] >= 0)
				k++;
			if (c >= 0 && k < MAX_CLIENTS)
				vf.clients[k] = c;
			else if (c >= 0)
				close(c);
		}
		if (p[2].revents & POLLIN) {
			/* What the handler will read must be in the window
			 * before it hears of the interrupt. */
			ernic_window_sync(vf.w);
			vf.irq_count++;
			vf.irq_out = true;
			send_count();
		}
		for (int k = 0; k < MAX_CLIENTS; k++)
			if (vf.clients[k] >= 0 && p[3 + k].revents)
				client_msg(k);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"root", required_argument, NULL, 'r'},
		{"conf", required_argument, NULL, 'c'},
		{"dma-mib", required_argument, NULL, 'd'},
		{"ready-fd", required_argument, NULL, 'f'},
		{NULL, 0, NULL, 0},
	};
	const char *conf_path = NULL;
	unsigned long dma_mib = 256;
	int ready_fd = -1, opt, lsock, sigfd;
	struct ernic_conf conf;
	char err[512];
	uint64_t dma_bus;
	uint8_t *dma;
	sigset_t sigs;
	char *end;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			vf.root = optarg;
			break;
		case 'c':
			conf_path = optarg;
			break;
		case 'd':
			dma_mib = strtoul(optarg, &end, 10);
			if (*end || !dma_mib || dma_mib > 4096)
				die("--dma-mib must be 1..4096");
			break;
		case 'f':
			ready_fd = atoi(optarg);
			break;
		default:
			die("usage: ernic-vfpga --root DIR --conf FILE "
			    "[--dma-mib N] [--ready-fd FD]");
		}
	}
	if (!vf.root || vf.root[0] != '/' || !conf_path || optind != argc)
		die("usage: ernic-vfpga --root DIR --conf FILE [--dma-mib N] "
		    "[--ready-fd FD] (DIR absolute)");
	if (ernic_conf_load(conf_path, &conf, err, sizeof(err)))
		die("%s", err);
	for (int k = 0; k < MAX_CLIENTS; k++)
		vf.clients[k] = -1;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGPIPE);
	sigaddset(&sigs, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	sigfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sigfd < 0)
		die("signalfd: %s", strerror(errno));

	mkdirs("dev");
	mkdirs("sys/class/uio/uio0/maps/map0");
	mkdirs("sys/class/u-dma-buf/udmabuf0");
	vf.regs = shared_file("dev/uio0", ERNIC_REG_SPACE_SIZE);
	dma = shared_file("dev/udmabuf0", dma_mib << 20);

	vf.m = ernic_model_create(&conf);
	if (!vf.m)
		die("model: %s", strerror(errno));
	if (ernic_model_map(vf.m, dma, dma_mib << 20, 4096, &dma_bus))
		die("model: cannot map the DMA region");
	vf.w = ernic_window_create(vf.m, vf.regs);
	if (!vf.w)
		die("register window: %s", strerror(errno));
	if (ernic_model_start(vf.m, &conf, err, sizeof(err)))
		die("%s", err);

	/* Where a board's PL would sit: an AXI4-Lite window at a PL
	 * address (that of the ZCU102 designs). */
	attr("sys/class/uio/uio0/name", UIO_NAME);
	attr("sys/class/uio/uio0/version", "virtual FPGA");
	attr("sys/class/uio/uio0/maps/map0/name", "ernic");
	attr("sys/class/uio/uio0/maps/map0/addr", "0x00000000a0000000");
	attr("sys/class/uio/uio0/maps/map0/size", "0x%08x",
	     ERNIC_REG_SPACE_SIZE);
	attr("sys/class/uio/uio0/maps/map0/offset", "0x0");
	attr("sys/class/u-dma-buf/udmabuf0/phys_addr", "0x%016" PRIx64,
	     dma_bus);
	attr("sys/class/u-dma-buf/udmabuf0/size", "%lu", dma_mib << 20);
	lsock = listen_irq();
	attr("pid", "%d", (int)getpid());

	if (pthread_create(&vf.poller, NULL, poller, NULL))
		die("poller thread failed");
	if (ready_fd >= 0) {
		if (write(ready_fd, "ready\n", 6) != 6)
			die("cannot report readiness: %s", strerror(errno));
		close(ready_fd);
	}
	serve(lsock, sigfd);

	if (!vf.gone) {
		atomic_store(&vf.stop, true);
		pthread_join(vf.poller, NULL);
	}
	ernic_model_stop(vf.m);	/* no rx hook into a window that is gone */
	ernic_window_destroy(vf.w);
	ernic_model_destroy(vf.m);
	return 0;
}
