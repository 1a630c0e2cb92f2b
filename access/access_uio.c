// SPDX-License-Identifier: MIT
/*
 * Access backend for an ERNIC platform device under UIO (Zynq MPSoC,
 * uio_pdrv_genirq or generic-uio): map0 is the 256 KB AXI4-Lite register
 * window, map dma_map (1 by default) a physically contiguous DDR region
 * the IP masters for queues, doorbells and registered memory, and the
 * device file's read()/write() are the interrupt (Documentation/
 * driver-api/uio-howto: a 4-byte event count; writing 1 unmasks). A PCIe
 * card under uio_pci_generic: map0 is BAR 0, DMA memory comes from
 * u-dma-buf, and INTx is unmasked in PCI_COMMAND instead.
 *
 * With no IOMMU the IP needs one physical base per MR (PG332 "Memory
 * Registration"), which an ordinary user buffer does not have: see
 * uio_dma.c for how registered buffers are moved into the DMA region.
 *
 * The same code runs against the virtual FPGA (tools/ernic-vfpga.c),
 * whose fake sysfs and device file live under uio_root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/pci_regs.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "access_uio.h"
#include "ernic_access.h"
#include "ernic_conf.h"
#include "dma_cache.h"
#include "ernic_hw.h"
#include "ernic_vfpga.h"
#include "mmio.h"
#include "uio_dma.h"

/* How long the virtual FPGA may take to answer a flush. */
#define VFPGA_FLUSH_TIMEOUT_MS 5000

struct uio_access {
	struct ernic_access base;	/* first: ops dispatch casts back */
	struct ernic_access_ops ops;	/* uio_ops, + dma_sync if coherent=0 */
	int fd;
	int irq;			/* fd, or the virtual FPGA's socket */
	int cfg;			/* uio_pci_generic: the function's
					 * config space (INTx unmask); -1 */
	int ctl;			/* virtual FPGA: flushes; else -1 */
	pthread_mutex_t ctl_lock;	/* one flush at a time on ctl */
	uint32_t ctl_seq;
	void *regs_map;			/* mmap of map0 */
	size_t regs_maplen;
	volatile uint32_t *regs;	/* the window inside it */
	struct uio_dma *dma;
};

static struct uio_access *to_uio(struct ernic_access *acc)
{
	return (struct uio_access *)acc;
}

static uint32_t ua_reg_read(struct ernic_access *acc, uint32_t off)
{
	return ernic_mmio_rd(to_uio(acc)->regs, off);
}

static void ua_reg_write(struct ernic_access *acc, uint32_t off, uint32_t val)
{
	ernic_mmio_wr(to_uio(acc)->regs, off, val);
}

/* The virtual FPGA's window holds values, not write events: a W1C write
 * is an atomic AND of the complement there (model/ernic_window.h), so
 * that clears of one word by several processes all count and a read
 * between them still sees the bits not cleared. */
static void vfpga_reg_write(struct ernic_access *acc, uint32_t off,
			    uint32_t val)
{
	struct uio_access *ua = to_uio(acc);

	if (!ERNIC_REG_IS_W1C(off)) {
		ernic_mmio_wr(ua->regs, off, val);
		return;
	}
	atomic_fetch_and_explicit((_Atomic uint32_t *)(uintptr_t)&ua->regs[off / 4],
				  ~val, memory_order_release);
}

static int ua_dma_alloc(struct ernic_access *acc, size_t len, size_t align,
			struct ernic_dma *out)
{
	return uio_dma_alloc(to_uio(acc)->dma, len, align, out);
}

static void ua_dma_free(struct ernic_access *acc, struct ernic_dma *dma)
{
	uio_dma_free(to_uio(acc)->dma, dma);
}

static int ua_map_user(struct ernic_access *acc, void *va, size_t len,
		       uint64_t *bus)
{
	return uio_dma_map_user(to_uio(acc)->dma, va, len, bus);
}

static void ua_unmap_user(struct ernic_access *acc, uint64_t bus, size_t len)
{
	uio_dma_unmap_user(to_uio(acc)->dma, bus);
}

static int ua_irq_fd(struct ernic_access *acc)
{
	return to_uio(acc)->irq;
}

/*
 * uio_pci_generic has no irqcontrol (a write to the device file fails
 * with ENOSYS): its handler masks INTx in PCI_COMMAND, and user space
 * unmasks by clearing INTX_DISABLE there, as the kernel's uio-howto
 * does: one byte, the command register's high one.
 */
static int intx_unmask(struct uio_access *ua)
{
	const uint8_t dis = PCI_COMMAND_INTX_DISABLE >> 8;
	uint8_t hi;

	errno = 0;
	if (pread(ua->cfg, &hi, 1, PCI_COMMAND + 1) != 1)
		return errno ? errno : EIO;
	if (!(hi & dis))
		return 0;
	hi &= (uint8_t)~dis;
	errno = 0;
	if (pwrite(ua->cfg, &hi, 1, PCI_COMMAND + 1) != 1)
		return errno ? errno : EIO;
	return 0;
}

/* Consume the event count, then unmask (uio_pdrv_genirq irqcontrol, or
 * uio_pci_generic's INTx), or with gone_check leave the line masked and
 * return ENODEV when the device reads all-ones (ERNIC_REG_GONE). */
static int irq_unmask(struct uio_access *ua, bool gone_check)
{
	const uint32_t one = 1;
	uint32_t count;
	int fd = ua->irq;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN) &&
	    read(fd, &count, sizeof(count)) != sizeof(count))
		return errno ? errno : EIO;
	if (gone_check && ernic_mmio_gone(ua->regs))
		return ENODEV;
	if (ua->cfg >= 0)
		return intx_unmask(ua);
	if (write(fd, &one, sizeof(one)) != sizeof(one))
		return errno ? errno : EIO;
	return 0;
}

/* After the handler: a device gone meanwhile is not unmasked. */
static int ua_irq_enable(struct ernic_access *acc)
{
	return irq_unmask(to_uio(acc), true);
}

static int ua_wait_irq(struct ernic_access *acc, int timeout_ms)
{
	struct pollfd p = { .fd = to_uio(acc)->irq, .events = POLLIN };
	int r = poll(&p, 1, timeout_ms);

	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	r = ua_irq_enable(acc);
	return r ? -r : 1;
}

/*
 * The virtual FPGA applies the window's writes at its next pass: ask for
 * one now and wait until it is done (common/ernic_vfpga.h). Event counts
 * sent to this connection before the virtual FPGA knew it for a control
 * one are dropped: the interrupt socket has them too. So is the late
 * answer to a flush that timed out.
 */
static int vfpga_flush(struct uio_access *ua)
{
	struct ernic_vfpga_msg req = { .op = ERNIC_VFPGA_FLUSH }, ans;
	struct pollfd p = { .fd = ua->ctl, .events = POLLIN };
	int rc = 0;

	pthread_mutex_lock(&ua->ctl_lock);
	req.seq = ++ua->ctl_seq;
	if (send(ua->ctl, &req, sizeof(req), MSG_NOSIGNAL) !=
	    (ssize_t)sizeof(req)) {
		rc = errno ? errno : EIO;
		goto out;
	}
	for (;;) {
		int r = poll(&p, 1, VFPGA_FLUSH_TIMEOUT_MS);
		ssize_t n;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = r ? errno : ETIMEDOUT;
			break;
		}
		n = recv(ua->ctl, &ans, sizeof(ans), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			rc = n ? errno : ECONNRESET;
			break;
		}
		if (n == (ssize_t)sizeof(ans) && ans.op == ERNIC_VFPGA_FLUSH &&
		    ans.seq == req.seq)
			break;
	}
out:
	pthread_mutex_unlock(&ua->ctl_lock);
	return rc;
}

/* Writes are posted on the bus too: a read-back waits for them. */
static int ua_flush(struct ernic_access *acc)
{
	struct uio_access *ua = to_uio(acc);

	if (ua->ctl >= 0)
		return vfpga_flush(ua);
	ernic_mmio_flush(ua->regs);
	return 0;
}

static void ua_close(struct ernic_access *acc)
{
	struct uio_access *ua = to_uio(acc);

	if (!acc)
		return;
	uio_dma_destroy(ua->dma);
	if (ua->regs_map)
		munmap(ua->regs_map, ua->regs_maplen);
	if (ua->ctl >= 0)
		close(ua->ctl);
	pthread_mutex_destroy(&ua->ctl_lock);
	if (ua->irq >= 0 && ua->irq != ua->fd)
		close(ua->irq);
	if (ua->fd >= 0)
		close(ua->fd);
	if (ua->cfg >= 0)
		close(ua->cfg);
	free(ua);
}

static void ua_set_pager(struct ernic_access *acc,
			 const struct ernic_pager *pager)
{
	uio_dma_set_pager(to_uio(acc)->dma, pager);
}

static int ua_dma_view(struct ernic_access *acc, uint64_t bus, size_t len,
		       struct ernic_dma *out)
{
	return uio_dma_view(to_uio(acc)->dma, bus, len, out);
}

static int ua_dma_claim(struct ernic_access *acc, uint64_t bus, size_t len,
			struct ernic_dma *out)
{
	return uio_dma_claim(to_uio(acc)->dma, bus, len, out);
}

static void ua_dma_sync(struct ernic_access *acc, const void *va, size_t len,
			enum ernic_dma_dir dir)
{
	(void)acc;
	ernic_cache_maint(va, len, dir == ERNIC_DMA_TO_DEVICE);
}

static const struct ernic_access_ops uio_ops = {
	.name = "uio",
	.reg_read = ua_reg_read,
	.reg_write = ua_reg_write,
	.dma_alloc = ua_dma_alloc,
	.dma_free = ua_dma_free,
	.map_user = ua_map_user,
	.unmap_user = ua_unmap_user,
	.wait_irq = ua_wait_irq,
	.irq_fd = ua_irq_fd,
	.irq_enable = ua_irq_enable,
	.flush = ua_flush,
	.set_pager = ua_set_pager,
	.dma_view = ua_dma_view,
	.dma_claim = ua_dma_claim,
	.close = ua_close,
};

/* One line of a sysfs attribute, newline dropped. */
static int read_attr(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return EIO;
	}
	fclose(f);
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

static int read_hex(const char *path, uint64_t *v)
{
	char buf[64], *end;
	int rc = read_attr(path, buf, sizeof(buf));

	if (rc)
		return rc;
	errno = 0;
	*v = strtoull(buf, &end, 16);
	return errno || end == buf || *end ? EINVAL : 0;
}

int uio_map_info(const char *sysdir, unsigned int idx, struct uio_map *m)
{
	char p[PATH_MAX];
	int rc = 0;

	snprintf(p, sizeof(p), "%s/maps/map%u/addr", sysdir, idx);
	rc = rc ? rc : read_hex(p, &m->addr);
	snprintf(p, sizeof(p), "%s/maps/map%u/size", sysdir, idx);
	rc = rc ? rc : read_hex(p, &m->size);
	snprintf(p, sizeof(p), "%s/maps/map%u/offset", sysdir, idx);
	/* "offset" appeared in Linux 3.x; older kernels: page aligned. */
	if (!rc && read_hex(p, &m->offset))
		m->offset = 0;
	return rc;
}

/* The UIO device is a PCI function under uio_pci_generic (its name). */
static bool uio_pci_generic(const char *sysdir)
{
	char p[PATH_MAX + 8], name[64];

	snprintf(p, sizeof(p), "%s/name", sysdir);
	return !read_attr(p, name, sizeof(name)) &&
	       !strcmp(name, "uio_pci_generic");
}

int uio_find(const char *root, const char *want, char *sysdir, size_t sdlen,
	     unsigned int *num)
{
	char dir[PATH_MAX], p[PATH_MAX + 300], name[128];
	struct dirent *de;
	DIR *d;
	int rc = ENODEV;

	snprintf(dir, sizeof(dir), "%s/sys/class/uio", root);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? ENODEV : errno;
	while ((de = readdir(d))) {
		unsigned int n;
		char tail;

		if (sscanf(de->d_name, "uio%u%c", &n, &tail) != 1)
			continue;
		snprintf(p, sizeof(p), "%s/%s/name", dir, de->d_name);
		if (strcmp(de->d_name, want) &&
		    (read_attr(p, name, sizeof(name)) || strcmp(name, want)))
			continue;
		snprintf(sysdir, sdlen, "%s/%s", dir, de->d_name);
		*num = n;
		rc = 0;
		break;
	}
	closedir(d);
	return rc;
}

/*
 * A u-dma-buf device (github.com/ikwzm/udmabuf, the usual way to give
 * user space reserved, physically contiguous memory on Zynq): /dev/NAME
 * maps at any page offset; sysfs gives phys_addr and size.
 */
static int udmabuf_open(const struct ernic_conf *conf, struct uio_dma **out,
			char *err, size_t errlen)
{
	char dev[PATH_MAX], p[PATH_MAX];
	struct uio_map m = { 0 };
	char buf[64], *end;
	int fd, rc;

	snprintf(p, sizeof(p), "%s/sys/class/u-dma-buf/%s/phys_addr",
		 conf->uio_root, conf->udmabuf);
	rc = read_hex(p, &m.addr);
	snprintf(p, sizeof(p), "%s/sys/class/u-dma-buf/%s/size",
		 conf->uio_root, conf->udmabuf);
	if (!rc)
		rc = read_attr(p, buf, sizeof(buf));
	if (!rc) {
		errno = 0;
		m.size = strtoull(buf, &end, 10);
		rc = errno || end == buf || *end ? EINVAL : 0;
	}
	if (rc) {
		snprintf(err, errlen, "uio: u-dma-buf %s: cannot read its "
			 "phys_addr and size under %s/sys/class/u-dma-buf",
			 conf->udmabuf, conf->uio_root);
		return rc;
	}
	snprintf(dev, sizeof(dev), "%s/dev/%s", conf->uio_root, conf->udmabuf);
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		rc = errno;
		snprintf(err, errlen, "uio: %s: %s", dev, strerror(rc));
		return rc;
	}
	rc = uio_dma_create(fd, 0, true, dev, &m, out, err, errlen);
	if (rc)
		close(fd);
	return rc;
}

/* A connection to the virtual FPGA's socket sa; 0 or errno. */
static int vfpga_connect(const struct sockaddr_un *sa, int *fd)
{
	*fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (*fd < 0 || connect(*fd, (const struct sockaddr *)sa, sizeof(*sa)))
		return errno;
	return 0;
}

/*
 * UIO's interrupt is the device file itself. The virtual FPGA's device
 * file is a plain file (it cannot block a read): it serves the same
 * 4-byte protocol on the socket DEV.irq instead, and flushes on a
 * second connection to it.
 */
static int irq_open(struct uio_access *ua, const char *dev, bool want_irq,
		    char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int rc;

	if (fstat(ua->fd, &st))
		return errno;
	if (S_ISCHR(st.st_mode)) {
		ua->irq = want_irq ? ua->fd : -1;
		return 0;
	}
	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s.irq", dev) >=
	    (int)sizeof(sa.sun_path)) {
		snprintf(err, errlen, "uio: %s.irq: path too long", dev);
		return ENAMETOOLONG;
	}
	rc = want_irq ? vfpga_connect(&sa, &ua->irq) : 0;
	if (!rc)
		rc = vfpga_connect(&sa, &ua->ctl);
	if (rc) {
		snprintf(err, errlen, "uio: %s is not a character device and "
			 "%s does not answer: %s", dev, sa.sun_path,
			 strerror(rc));
		return rc;
	}
	/* The first flush makes ctl a control connection, and shows that
	 * this virtual FPGA knows flushes. */
	rc = vfpga_flush(ua);
	if (rc)
		snprintf(err, errlen, "uio: %s does not answer a flush: %s "
			 "(an ernic-vfpga older than this provider?)",
			 sa.sun_path, strerror(rc));
	return rc;
}

int ernic_access_uio_open(const struct ernic_conf *conf,
			  struct ernic_access **out, char *err, size_t errlen)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct uio_access *ua;
	struct uio_map m0, md;
	char sysdir[PATH_MAX], dev[PATH_MAX];
	unsigned int num;
	bool pci;
	int rc;

	rc = uio_find(conf->uio_root, conf->uio, sysdir, sizeof(sysdir), &num);
	if (rc) {
		snprintf(err, errlen, "uio: no UIO device '%s' under %s/sys/class/uio",
			 conf->uio, conf->uio_root);
		return rc;
	}
	pci = uio_pci_generic(sysdir);
	if (pci && !conf->udmabuf[0]) {
		snprintf(err, errlen, "uio: %s is a PCI function under "
			 "uio_pci_generic, which maps its BARs but no DMA "
			 "memory: load u-dma-buf and name its buffer with "
			 "udmabuf= (docs/hardware.md)", sysdir);
		return ENODEV;
	}
	if (uio_map_info(sysdir, 0, &m0) ||
	    (!conf->udmabuf[0] && uio_map_info(sysdir, conf->dma_map, &md))) {
		snprintf(err, errlen, "uio: %s: needs map0 (registers) and "
			 "map%u (DMA memory)", sysdir, conf->dma_map);
		return ENODEV;
	}
	if (m0.size < m0.offset + ERNIC_REG_SPACE_SIZE) {
		snprintf(err, errlen, "uio: %s map0 is %#" PRIx64 " bytes, the "
			 "ERNIC window needs %#x", sysdir, m0.size,
			 ERNIC_REG_SPACE_SIZE);
		return ENODEV;
	}
	if (!conf->coherent && !ERNIC_HAVE_CACHE_OPS) {
		snprintf(err, errlen, "uio: coherent=0 needs cache maintenance "
			 "from user space, which this CPU architecture lacks");
		return EOPNOTSUPP;
	}
	ua = calloc(1, sizeof(*ua));
	if (!ua) {
		snprintf(err, errlen, "uio: out of memory");
		return ENOMEM;
	}
	ua->ops = uio_ops;
	if (!conf->coherent)
		ua->ops.dma_sync = ua_dma_sync;
	ua->base.ops = &ua->ops;
	ua->irq = -1;
	ua->ctl = -1;
	ua->cfg = -1;
	pthread_mutex_init(&ua->ctl_lock, NULL);
	snprintf(dev, sizeof(dev), "%s/dev/uio%u", conf->uio_root, num);
	ua->fd = open(dev, O_RDWR | O_CLOEXEC);
	if (ua->fd < 0) {
		rc = errno;
		snprintf(err, errlen, "uio: %s: %s", dev, strerror(rc));
		goto err;
	}
	/* Alone, one process drives the IP and keeps its DMA allocations
	 * in its own memory: exclusive. A broker and its clients share the
	 * IP (docs/multiprocess.md): the broker first makes sure that
	 * nobody uses it (a process alone, an earlier broker's client),
	 * then shares it. */
	if (flock(ua->fd, (conf->hw_role == ERNIC_HW_CLIENT ? LOCK_SH :
								LOCK_EX) |
				  LOCK_NB) ||
	    (conf->hw_role == ERNIC_HW_BROKER &&
	     flock(ua->fd, LOCK_SH | LOCK_NB))) {
		rc = errno == EWOULDBLOCK ? EBUSY : errno;
		snprintf(err, errlen, "uio: %s is in use by %s", dev,
			 conf->hw_role == ERNIC_HW_ALONE ?
				 "another process (processes share a UIO "
				 "ERNIC only through its broker, which "
				 "`ernicctl add` starts)" :
			 conf->hw_role == ERNIC_HW_BROKER ?
				 "another process: a broker must be the "
				 "first to open it" :
				 "a process that opened it alone");
		goto err;
	}
	/* A broker's client hears of its QPs' interrupts from the broker,
	 * which alone takes the interrupt (docs/multiprocess.md). */
	rc = irq_open(ua, dev, conf->hw_role != ERNIC_HW_CLIENT, err, errlen);
	if (rc)
		goto err;
	if (pci && ua->irq >= 0) {
		char cfg[PATH_MAX + 16];

		snprintf(cfg, sizeof(cfg), "%s/device/config", sysdir);
		ua->cfg = open(cfg, O_RDWR | O_CLOEXEC);
		if (ua->cfg < 0) {
			rc = errno;
			snprintf(err, errlen, "uio: %s (uio_pci_generic's INTx "
				 "is unmasked there): %s", cfg, strerror(rc));
			goto err;
		}
	}
	if (ua->ctl >= 0)
		ua->ops.reg_write = vfpga_reg_write;
	/* UIO selects map N with offset N pages; a map starts mid-page by
	 * its "offset". */
	ua->regs_maplen = (size_t)(m0.offset + m0.size + page - 1) & ~(page - 1);
	ua->regs_map = mmap(NULL, ua->regs_maplen, PROT_READ | PROT_WRITE,
			    MAP_SHARED, ua->fd, 0);
	if (ua->regs_map == MAP_FAILED) {
		rc = errno;
		ua->regs_map = NULL;
		snprintf(err, errlen, "uio: mmap map0 of %s: %s", dev,
			 strerror(rc));
		goto err;
	}
	ua->regs = (volatile uint32_t *)((char *)ua->regs_map + m0.offset);
	ua->base.doorbells = ua->regs;	/* vfpga_reg_write too: not W1C */
	rc = conf->udmabuf[0] ?
		     udmabuf_open(conf, &ua->dma, err, errlen) :
		     uio_dma_create(ua->fd, (off_t)(conf->dma_map * page), false,
				    dev, &md, &ua->dma, err, errlen);
	if (rc)
		goto err;
	if (!conf->coherent)
		uio_dma_set_noncoherent(ua->dma);
	/* Interrupts start masked until the first unmask (UIO semantics
	 * for a fresh open): unmask now, the provider handles them. */
	rc = ua->irq < 0 ? 0 : irq_unmask(ua, false);
	if (rc) {
		snprintf(err, errlen, "uio: %s: cannot unmask the interrupt: %s",
			 dev, strerror(rc));
		goto err;
	}
	*out = &ua->base;
	return 0;
err:
	ua_close(&ua->base);
	return rc;
}
