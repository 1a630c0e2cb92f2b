// SPDX-License-Identifier: MIT
/*
 * Writer of the sysfs overlay. A device is built under a hidden name and
 * renamed into place, and its uverbsN entry (what libibverbs scans) is
 * published last, so a concurrent ibv_get_device_list() never sees half
 * a device; every step is recorded so a failure undoes all of them.
 */
#include "fsutil.h"
#include "overlay.h"

#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ernic_net.h"

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* snprintf into a PATH_MAX buffer; ENAMETOOLONG instead of truncating. */
static int pathf(char *buf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int pathf(char *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	return n < 0 || n >= PATH_MAX ? ENAMETOOLONG : 0;
}

int overlay_lock(const char *rundir, bool exclusive, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd, rc;

	if (pathf(path, "%s/%s", rundir, OVERLAY_LOCK)) {
		set_err(err, errlen, "%s: path too long", rundir);
		return -1;
	}
	if (exclusive) {
		rc = mkdir_p(rundir, 0755);
		if (rc) {
			set_err(err, errlen, "cannot create %s: %s", rundir,
				strerror(rc));
			return -1;
		}
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		/* add creates the lock first: no lock file, no devices. */
		if (fd < 0 && errno == ENOENT)
			return -2;
	}
	if (fd < 0) {
		set_err(err, errlen, "cannot open %s: %s", path,
			strerror(errno));
		return -1;
	}
	while (flock(fd, exclusive ? LOCK_EX : LOCK_SH)) {
		if (errno == EINTR)
			continue;
		set_err(err, errlen, "cannot lock %s: %s", path,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int rm_entry(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	return remove(path) && errno != ENOENT ? -1 : 0;
}

/* rm -rf without following symlinks; a missing tree is not an error. */
static int rm_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : errno;
	if (nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS))
		return errno ? errno : EIO;
	return 0;
}

/* Write a whole small file; content is exact (callers add the '\n'). */
static int put(const char *dir, const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int put(const char *dir, const char *rel, const char *fmt, ...)
{
	char path[PATH_MAX], buf[512];
	va_list ap;
	ssize_t w;
	int fd, n, rc = 0;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return EOVERFLOW;
	if (pathf(path, "%s/%s", dir, rel))
		return ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0)
		return errno;
	w = write(fd, buf, (size_t)n);
	if (w != n)
		rc = w < 0 ? errno : EIO;
	if (close(fd) && !rc)
		rc = errno;
	return rc;
}

static int mkd(const char *dir, const char *rel)
{
	char path[PATH_MAX];

	if (pathf(path, "%s/%s", dir, rel))
		return ENAMETOOLONG;
	return mkdir(path, 0755) ? errno : 0;
}

/* device/net/NETDEV: where a kernel device's netdev is found (rdma-core's
 * tests and tools look there). */
static int net_dir(const char *dir, const char *netdev)
{
	char rel[64 + IF_NAMESIZE];
	int rc;

	if (!netdev[0] || strchr(netdev, '/'))
		return 0;
	rc = mkd(dir, "device/net");
	if (!rc) {
		snprintf(rel, sizeof(rel), "device/net/%s", netdev);
		rc = mkd(dir, rel);
	}
	return rc;
}

/* Read a one-line sysfs-style file without its trailing newline. */
static int read_line(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* "uverbsN" with N a plain decimal number, as the kernel names them. */
static bool parse_uverbs(const char *name, unsigned int *n)
{
	unsigned long v;
	char *end;

	if (strncmp(name, "uverbs", 6) || name[6] < '0' || name[6] > '9')
		return false;
	errno = 0;
	v = strtoul(name + 6, &end, 10);
	if (errno || *end || v >= OVERLAY_MAX_UVERBS ||
	    (name[6] == '0' && name[7]))
		return false;
	*n = (unsigned int)v;
	return true;
}

static int cmp_dev(const void *a, const void *b)
{
	const struct overlay_dev *x = a, *y = b;

	return (x->uverbs > y->uverbs) - (x->uverbs < y->uverbs);
}

int overlay_list(const char *rundir, struct overlay_dev **devs, size_t *n)
{
	char dir[PATH_MAX], path[PATH_MAX], err[256];
	struct overlay_dev *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	*devs = NULL;
	*n = 0;
	if (pathf(dir, "%s/%s/class/infiniband_verbs", rundir, OVERLAY_SYSFS))
		return ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : errno;
	while ((de = readdir(d))) {
		struct overlay_dev dev = {0};

		if (!parse_uverbs(de->d_name, &dev.uverbs))
			continue;
		if (pathf(path, "%s/%s/ibdev", dir, de->d_name) ||
		    read_line(path, dev.name, sizeof(dev.name)) || !*dev.name)
			continue;
		if (!pathf(path, "%s/%s/class/infiniband/%s/device/%s", rundir,
			   OVERLAY_SYSFS, dev.name, ERNIC_CONF_FILE))
			dev.conf_ok = !ernic_conf_load(path, &dev.conf, err,
						       sizeof(err));
		if (cnt == cap) {
			cap = cap ? cap * 2 : 8;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				return ENOMEM;
			}
			v = nv;
		}
		v[cnt++] = dev;
	}
	closedir(d);
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_dev);
	*devs = v;
	*n = cnt;
	return 0;
}

/*
 * node_guid = 02 | mac[3] mac[4] mac[5] | tag[0..3]
 *
 * The MAC-derived EUI-64 would give every device on one netdev the same
 * GUID, so the address goes in instead of the OUI: the first byte 0x02
 * marks the GUID locally administered (we are not the MAC's vendor), the
 * next three are the NIC-specific half of the MAC, the last four the
 * IPv4 address itself, or for IPv6 a 32-bit FNV-1a hash of its 16 bytes.
 * Deterministic, readable for IPv4 (127.0.0.2 on lo -> 0200:0000:7f00:0002)
 * and distinct for every address of one netdev; `ernicctl add` also
 * refuses a GUID already in use, which covers IPv6 hash collisions.
 */
uint64_t overlay_guid(const uint8_t mac[6], int family, const uint8_t addr[16])
{
	uint32_t tag;

	if (family == AF_INET) {
		tag = (uint32_t)addr[0] << 24 | (uint32_t)addr[1] << 16 |
		      (uint32_t)addr[2] << 8 | addr[3];
	} else {
		tag = 2166136261u;
		for (int i = 0; i < 16; i++)
			tag = (tag ^ addr[i]) * 16777619u;
	}
	return (uint64_t)0x02 << 56 | (uint64_t)mac[3] << 48 |
	       (uint64_t)mac[4] << 40 | (uint64_t)mac[5] << 32 | tag;
}

static void fmt_guid(uint64_t g, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%04x:%04x:%04x", (unsigned int)(g >> 48),
		 (unsigned int)(g >> 32) & 0xffff,
		 (unsigned int)(g >> 16) & 0xffff, (unsigned int)g & 0xffff);
}

static void fmt_gid(const uint8_t gid[16], char *buf, size_t len)
{
	size_t off = 0;

	for (int i = 0; i < 16 && off < len; i += 2)
		off += (size_t)snprintf(buf + off, len - off, "%s%02x%02x",
					i ? ":" : "", gid[i], gid[i + 1]);
}

/* The class/infiniband/<name> tree, built in dir (not yet published). */
static int build_ibdev(const char *dir, const struct ernic_conf *c)
{
	static const uint8_t zero[16];
	char guid[20], gid[40], rel[64];
	uint8_t g[16];
	int rc;
	const char *be = ernic_backend_name(c->backend);
	const char *kind = c->backend == ERNIC_BACKEND_SW ? "software" :
			   c->backend == ERNIC_BACKEND_UIO ? "UIO" : "VFIO";

	fmt_guid(c->node_guid, guid, sizeof(guid));
	ernic_conf_gid(c, g);
	if ((rc = mkdir(dir, 0755) ? errno : 0) ||
	    (rc = put(dir, "node_type", "1: CA\n")) ||
	    (rc = put(dir, "node_guid", "%s\n", guid)) ||
	    (rc = put(dir, "sys_image_guid", "%s\n", guid)) ||
	    (rc = put(dir, "fw_ver", "%s\n", ERNIC_FW_VER)) ||
	    (rc = put(dir, "hw_rev", "0x%x\n", ERNIC_HW_VER)) ||
	    (rc = put(dir, "hca_type", "ERNIC\n")) ||
	    (rc = put(dir, "board_id", "XLNX_ERNIC_%s\n",
		      c->backend == ERNIC_BACKEND_SW ? "SW" :
		      c->backend == ERNIC_BACKEND_UIO ? "UIO" : "VFIO")) ||
	    (rc = put(dir, "node_desc", "%s %s ERNIC on %s\n", c->name, kind,
		      c->netdev)) ||
	    (rc = mkd(dir, "device")) ||
	    (rc = put(dir, "device/modalias", "%s%s\n",
		      ERNIC_MODALIAS_PREFIX, be)) ||
	    (rc = net_dir(dir, c->netdev)) ||
	    (rc = mkd(dir, "ports")) || (rc = mkd(dir, "ports/1")) ||
	    (rc = put(dir, "ports/1/state", "4: ACTIVE\n")) ||
	    (rc = put(dir, "ports/1/phys_state", "5: LinkUp\n")) ||
	    (rc = put(dir, "ports/1/link_layer", "Ethernet\n")) ||
	    (rc = put(dir, "ports/1/rate", "100 Gb/sec (4X EDR)\n")) ||
	    (rc = put(dir, "ports/1/lid", "0x0\n")) ||
	    (rc = put(dir, "ports/1/sm_lid", "0x0\n")) ||
	    (rc = put(dir, "ports/1/lid_mask_count", "0\n")) ||
	    (rc = put(dir, "ports/1/sm_sl", "0\n")) ||
	    (rc = put(dir, "ports/1/cap_mask", "0x00000000\n")) ||
	    (rc = mkd(dir, "ports/1/pkeys")) ||
	    (rc = put(dir, "ports/1/pkeys/0", "0x%04x\n", ERNIC_PKEY_DEFAULT)) ||
	    (rc = mkd(dir, "ports/1/gids")) ||
	    (rc = mkd(dir, "ports/1/gid_attrs")) ||
	    (rc = mkd(dir, "ports/1/gid_attrs/types")) ||
	    (rc = mkd(dir, "ports/1/gid_attrs/ndevs")))
		return rc;
	for (int k = 0; k < ERNIC_GID_TBL_LEN; k++) {
		fmt_gid(k ? zero : g, gid, sizeof(gid));
		snprintf(rel, sizeof(rel), "ports/1/gids/%d", k);
		if ((rc = put(dir, rel, "%s\n", gid)))
			return rc;
		snprintf(rel, sizeof(rel), "ports/1/gid_attrs/types/%d", k);
		if ((rc = put(dir, rel, "RoCE v2\n")))
			return rc;
		/* Unused entries: empty, where the kernel would fail the read. */
		snprintf(rel, sizeof(rel), "ports/1/gid_attrs/ndevs/%d", k);
		if ((rc = k ? put(dir, rel, "%s", "") :
			      put(dir, rel, "%s\n", c->netdev)))
			return rc;
	}
	return 0;
}

/*
 * The uverbsN entry, and in OVERLAY_NODE_ID the inode of the node made
 * for it: /dev/infiniband is shared by every overlay, and another one
 * may hold a node of the same name later (made after ours went, or in
 * a mount namespace of its own with a private /dev/infiniband). del
 * removes the node only if it is still the one this add made.
 */
#define OVERLAY_NODE_ID "ernic_node_ino"

static int build_uverbs(const char *dir, const char *name, ino_t node_ino)
{
	int rc;

	if ((rc = mkdir(dir, 0755) ? errno : 0) ||
	    (rc = put(dir, "ibdev", "%s\n", name)) ||
	    (rc = put(dir, "abi_version", "1\n")) ||
	    (rc = put(dir, "dev", "%d:%d\n", OVERLAY_CDEV_MAJOR,
		      OVERLAY_CDEV_MINOR)) ||
	    (rc = put(dir, OVERLAY_NODE_ID, "%llu\n",
		      (unsigned long long)node_ino)))
		return rc;
	return 0;
}

/* The inode build_uverbs recorded in entry vpath; false if none. */
static bool node_id(const char *vpath, unsigned long long *ino)
{
	char path[PATH_MAX];
	bool ok;
	FILE *f;

	if (pathf(path, "%s/%s", vpath, OVERLAY_NODE_ID))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fscanf(f, "%llu", ino) == 1;
	fclose(f);
	return ok;
}

/* Anything there, or unknowable (EACCES...), counts as taken. */
static bool exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st) || (errno != ENOENT && errno != ENOTDIR);
}

/* Lowest N free both in the overlay and in /dev/infiniband. */
static int pick_uverbs(const char *vdir, unsigned int *out)
{
	char a[PATH_MAX], b[PATH_MAX];

	for (unsigned int i = 0; i < OVERLAY_MAX_UVERBS; i++) {
		if (pathf(a, "%s/uverbs%u", vdir, i) ||
		    pathf(b, "%s/uverbs%u", OVERLAY_DEVDIR, i))
			return ENAMETOOLONG;
		if (!exists(a) && !exists(b)) {
			*out = i;
			return 0;
		}
	}
	return ENOSPC;
}

/* Undo log: paths created so far, removed in reverse on failure. */
struct undo {
	char path[12][PATH_MAX];
	int n;
};

static void undo_push(struct undo *u, const char *path)
{
	if (u->n < (int)(sizeof(u->path) / sizeof(u->path[0])))
		snprintf(u->path[u->n++], PATH_MAX, "%s", path);
}

static void undo_all(struct undo *u)
{
	while (u->n > 0)
		rm_tree(u->path[--u->n]);
}

/* mkdir that records the directory only when this run created it. */
static int mkdir_undo(struct undo *u, const char *path)
{
	if (!mkdir(path, 0755)) {
		undo_push(u, path);
		return 0;
	}
	return errno == EEXIST ? 0 : errno;
}

/* Name into other of a device already using conf's address or GUID,
 * with what names the clash; false if there is none. */
static bool conflict(const char *rundir, const struct ernic_conf *c,
		     char *what, size_t len, char other[ERNIC_NAME_MAX + 1])
{
	struct overlay_dev *devs;
	size_t n;

	*other = '\0';
	if (overlay_list(rundir, &devs, &n))
		return false;
	for (size_t i = 0; i < n && !*other; i++) {
		const struct ernic_conf *o = &devs[i].conf;

		if (!devs[i].conf_ok)
			continue;
		if (o->family == c->family &&
		    !memcmp(o->addr, c->addr, sizeof(o->addr))) {
			struct ernic_ip ip = {.family = c->family};
			char text[INET6_ADDRSTRLEN];

			memcpy(ip.addr, c->addr, sizeof(ip.addr));
			ernic_ip_format(&ip, text, sizeof(text));
			snprintf(what, len, "address %s", text);
		} else if (o->node_guid == c->node_guid) {
			snprintf(what, len, "node GUID 0x%016" PRIx64,
				 c->node_guid);
		} else {
			continue;
		}
		snprintf(other, ERNIC_NAME_MAX + 1, "%s", devs[i].name);
	}
	free(devs);
	return *other;
}

int overlay_add(const char *rundir, const struct ernic_conf *conf,
		unsigned int *uverbs, char *err, size_t errlen)
{
	char sys[PATH_MAX], ibdir[PATH_MAX], vdir[PATH_MAX], tmp[PATH_MAX];
	char path[PATH_MAX], node[PATH_MAX], what[64];
	char other[ERNIC_NAME_MAX + 1];
	struct undo *u;
	unsigned int n = 0;
	struct stat st;
	int rc;

	u = calloc(1, sizeof(*u));
	if (!u) {
		set_err(err, errlen, "out of memory");
		return ENOMEM;
	}
	if (pathf(sys, "%s/%s", rundir, OVERLAY_SYSFS) ||
	    pathf(ibdir, "%s/class/infiniband", sys) ||
	    pathf(vdir, "%s/class/infiniband_verbs", sys) ||
	    pathf(path, "%s/%s", ibdir, conf->name)) {
		set_err(err, errlen, "%s: path too long", rundir);
		rc = ENAMETOOLONG;
		goto out;
	}
	if (exists(path)) {
		set_err(err, errlen, "device '%s' already exists", conf->name);
		rc = EEXIST;
		goto out;
	}
	if (conflict(rundir, conf, what, sizeof(what), other)) {
		set_err(err, errlen, "%s is already used by device '%s'", what,
			other);
		rc = EEXIST;
		goto out;
	}

	/* The shared skeleton, kept after del; undone only if made here. */
	if ((rc = mkdir_undo(u, sys)) ||
	    (rc = pathf(tmp, "%s/class", sys)) || (rc = mkdir_undo(u, tmp)) ||
	    (rc = mkdir_undo(u, ibdir)) || (rc = mkdir_undo(u, vdir))) {
		set_err(err, errlen, "cannot create %s: %s", sys, strerror(rc));
		goto fail;
	}
	if ((rc = pathf(tmp, "%s/abi_version", vdir)))
		goto fail;
	if (!exists(tmp)) {
		rc = put(vdir, "abi_version", "6\n");
		if (rc) {
			set_err(err, errlen, "cannot write %s: %s", tmp,
				strerror(rc));
			goto fail;
		}
		undo_push(u, tmp);
	}

	/* class/infiniband/<name>: built hidden, then renamed into place. */
	if ((rc = pathf(tmp, "%s/.%s.new", ibdir, conf->name)))
		goto fail;
	rm_tree(tmp); /* leftover of a run killed mid-way (we hold the lock) */
	undo_push(u, tmp);
	rc = build_ibdev(tmp, conf);
	if (!rc) {
		char cpath[PATH_MAX];

		if ((rc = pathf(cpath, "%s/device/%s", tmp, ERNIC_CONF_FILE)) ||
		    (rc = ernic_conf_save(cpath, conf, err, errlen)))
			goto fail;
	}
	if (rc) {
		set_err(err, errlen, "cannot build %s: %s", tmp, strerror(rc));
		goto fail;
	}
	if (rename(tmp, path)) {
		rc = errno;
		set_err(err, errlen, "cannot rename %s: %s", tmp, strerror(rc));
		goto fail;
	}
	u->n--; /* tmp is gone: track the published name instead */
	undo_push(u, path);

	/* The character device libibverbs checks against uverbsN/dev. */
	if ((rc = pick_uverbs(vdir, &n))) {
		set_err(err, errlen, "no free uverbs index below %d",
			OVERLAY_MAX_UVERBS);
		goto fail;
	}
	if ((rc = mkdir_undo(u, OVERLAY_DEVDIR))) {
		set_err(err, errlen, "cannot create %s: %s", OVERLAY_DEVDIR,
			strerror(rc));
		goto fail;
	}
	if ((rc = pathf(node, "%s/uverbs%u", OVERLAY_DEVDIR, n)))
		goto fail;
	if (mknod(node, S_IFCHR | 0666,
		  makedev(OVERLAY_CDEV_MAJOR, OVERLAY_CDEV_MINOR))) {
		rc = errno;
		set_err(err, errlen, "cannot create %s: %s", node, strerror(rc));
		goto fail;
	}
	undo_push(u, node);
	if (chmod(node, 0666) || lstat(node, &st)) { /* mknod: umask */
		rc = errno;
		set_err(err, errlen, "cannot chmod %s: %s", node, strerror(rc));
		goto fail;
	}

	/* Publish: from here on libibverbs can find the device. */
	if ((rc = pathf(tmp, "%s/.uverbs%u.new", vdir, n)) ||
	    (rc = pathf(path, "%s/uverbs%u", vdir, n)))
		goto fail;
	rm_tree(tmp);
	undo_push(u, tmp);
	rc = build_uverbs(tmp, conf->name, st.st_ino);
	if (!rc && rename(tmp, path))
		rc = errno;
	if (rc) {
		set_err(err, errlen, "cannot create %s: %s", path, strerror(rc));
		goto fail;
	}
	*uverbs = n;
	rc = 0;
	goto out;
fail:
	if (rc == ENAMETOOLONG)
		set_err(err, errlen, "%s: path too long", rundir);
	undo_all(u);
out:
	free(u);
	return rc;
}

int overlay_del(const char *rundir, const char *name, char *err,
		size_t errlen)
{
	char ibpath[PATH_MAX], vpath[PATH_MAX], node[PATH_MAX];
	struct overlay_dev *devs;
	bool found = false, have_id;
	unsigned long long ino = 0;
	struct stat st;
	size_t n;
	int rc;

	if (pathf(ibpath, "%s/%s/class/infiniband/%s", rundir, OVERLAY_SYSFS,
		  name)) {
		set_err(err, errlen, "%s: path too long", rundir);
		return ENAMETOOLONG;
	}
	rc = overlay_list(rundir, &devs, &n);
	if (rc) {
		set_err(err, errlen, "cannot read the overlay: %s",
			strerror(rc));
		return rc;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		if (strcmp(devs[i].name, name))
			continue;
		found = true;
		/* Unpublish first so no reader sees a device without files. */
		if (pathf(vpath, "%s/%s/class/infiniband_verbs/uverbs%u",
			  rundir, OVERLAY_SYSFS, devs[i].uverbs) ||
		    pathf(node, "%s/uverbs%u", OVERLAY_DEVDIR, devs[i].uverbs)) {
			rc = ENAMETOOLONG;
			break;
		}
		have_id = node_id(vpath, &ino);
		rc = rm_tree(vpath);
		/* Only our own kind of node, never a real uverbs device, and
		 * only the one made for this entry (an entry of an older
		 * ernicctl has no record: its node of our kind goes). */
		if (!rc && !lstat(node, &st) && S_ISCHR(st.st_mode) &&
		    st.st_rdev == makedev(OVERLAY_CDEV_MAJOR,
					  OVERLAY_CDEV_MINOR) &&
		    (!have_id || st.st_ino == ino) && unlink(node))
			rc = errno;
	}
	free(devs);
	if (!found && !exists(ibpath)) {
		set_err(err, errlen, "no device named '%s'", name);
		return ENOENT;
	}
	if (!rc)
		rc = rm_tree(ibpath);
	if (rc) {
		set_err(err, errlen, "cannot remove '%s': %s", name,
			strerror(rc));
		return rc;
	}
	rmdir(OVERLAY_DEVDIR); /* only succeeds when we left it empty */
	return 0;
}
