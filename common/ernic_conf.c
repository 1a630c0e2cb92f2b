// SPDX-License-Identifier: MIT
/*
 * ernic.conf: parsed strictly so that a typo in a hand-edited file is an
 * error naming the line, never a silently ignored or defaulted value.
 */
#include "ernic_conf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ernic_hw.h"
#include "ernic_net.h"

#define CONF_LINE_MAX 255

void ernic_conf_defaults(struct ernic_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->backend = ERNIC_BACKEND_SW;
	c->udp_sport = ERNIC_UDP_SPORT_DEFAULT;
	c->dma_map = 1;
	c->coherent = 1;
	c->vfio_share_mib = ERNIC_VFIO_SHARE_MIB_DEFAULT;
	/* A software device is not bound by FPGA resources: be generous. */
	c->c_num_qp = 64;
	c->c_m_axi_addr_width = 64;
	c->c_max_wr_retry_data_buf_depth = 512;
	c->c_en_wr_retry_data_buf = 1;
	c->c_en_initiator_lite = 1;
	c->c_en_debug_ports = 0;
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/*
 * Decimal (or 0x-prefixed hex when base is 16) without sign, spaces or
 * trailing junk; strtoul alone would accept " -1" as ULONG_MAX.
 */
static bool parse_ulong(const char *s, int base, unsigned long long max,
			unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (base == 16) {
		if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
			return false;
		s += 2;
		if (!isxdigit((unsigned char)*s))
			return false;
	} else if (!isdigit((unsigned char)*s)) {
		return false;
	}
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

struct param {
	const char *name;
	size_t offset;
	uint32_t min, max;
	bool width;	/* only 32 or 64 */
};

#define PARAM(n, field, lo, hi, w) \
	{ n, offsetof(struct ernic_conf, field), lo, hi, w }
static const struct param params[] = {
	PARAM("C_NUM_QP", c_num_qp, ERNIC_C_NUM_QP_MIN, ERNIC_C_NUM_QP_MAX,
	      false),
	PARAM("C_M_AXI_ADDR_WIDTH", c_m_axi_addr_width, 32, 64, true),
	PARAM("C_MAX_WR_RETRY_DATA_BUF_DEPTH", c_max_wr_retry_data_buf_depth,
	      1, 65535, false),
	PARAM("C_EN_WR_RETRY_DATA_BUF", c_en_wr_retry_data_buf, 0, 1, false),
	PARAM("C_EN_INITIATOR_LITE", c_en_initiator_lite, 0, 1, false),
	PARAM("C_EN_DEBUG_PORTS", c_en_debug_ports, 0, 1, false),
};
#define NPARAMS (sizeof(params) / sizeof(params[0]))

static const struct param *find_param(const char *name)
{
	for (size_t i = 0; i < NPARAMS; i++)
		if (!strcmp(params[i].name, name))
			return &params[i];
	return NULL;
}

static uint32_t *param_field(struct ernic_conf *c, const struct param *p)
{
	return (uint32_t *)((char *)c + p->offset);
}

int ernic_conf_set_param(struct ernic_conf *c, const char *name,
			 const char *value, char *err, size_t errlen)
{
	const struct param *p = find_param(name);
	unsigned long long v;

	if (!p) {
		set_err(err, errlen,
			"unknown parameter '%s' (expected one of C_NUM_QP, "
			"C_M_AXI_ADDR_WIDTH, C_MAX_WR_RETRY_DATA_BUF_DEPTH, "
			"C_EN_WR_RETRY_DATA_BUF, C_EN_INITIATOR_LITE, "
			"C_EN_DEBUG_PORTS)", name);
		return EINVAL;
	}
	if (!parse_ulong(value, 10, p->max, &v) || v < p->min ||
	    (p->width && v != 32 && v != 64)) {
		if (p->width)
			set_err(err, errlen, "%s must be 32 or 64, not '%s'",
				p->name, value);
		else
			set_err(err, errlen, "%s must be %" PRIu32 "..%" PRIu32
				", not '%s'", p->name, p->min, p->max, value);
		return EINVAL;
	}
	*param_field(c, p) = (uint32_t)v;
	return 0;
}

static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > ERNIC_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return false;
	return true;
}

/* Kernel rules for interface names: no '/', ':' or whitespace. */
static bool netdev_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n >= IF_NAMESIZE || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (*s == '/' || *s == ':' || isspace((unsigned char)*s) ||
		    !isprint((unsigned char)*s))
			return false;
	return true;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch = (char)tolower((unsigned char)ch);
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

/* Exactly aa:bb:cc:dd:ee:ff. */
static bool parse_mac(const char *s, uint8_t mac[6])
{
	if (strlen(s) != 17)
		return false;
	for (int i = 0; i < 6; i++) {
		int hi = hexval(s[3 * i]), lo = hexval(s[3 * i + 1]);

		if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':'))
			return false;
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

enum conf_key {
	K_NAME,
	K_BACKEND,
	K_ADDR,
	K_NETDEV,
	K_MAC,
	K_NODE_GUID,
	K_UDP_SPORT,
	K_WIRE,
	K_UIO,
	K_UIO_ROOT,
	K_DMA_MAP,
	K_UDMABUF,
	K_COHERENT,
	K_VFIO,
	K_VFIO_BAR,
	K_VFIO_OFFSET,
	K_VFIO_ROOT,
	K_VFIO_SHARE_MIB,
	K_PARAM0,	/* params[] follow in order */
	K_COUNT = K_PARAM0 + NPARAMS,
};

static const char *const key_names[K_PARAM0] = {
	"name", "backend", "addr", "netdev", "mac", "node_guid", "udp_sport",
	"wire", "uio", "uio_root", "dma_map", "udmabuf", "coherent",
	"vfio", "vfio_bar", "vfio_offset", "vfio_root", "vfio_share_mib",
};
static const enum conf_key required[] = {K_NAME, K_BACKEND, K_ADDR,
					 K_NETDEV, K_MAC};

static int key_index(const char *key)
{
	for (int i = 0; i < K_PARAM0; i++)
		if (!strcmp(key_names[i], key))
			return i;
	for (size_t i = 0; i < NPARAMS; i++)
		if (!strcmp(params[i].name, key))
			return K_PARAM0 + (int)i;
	return -1;
}

/* Apply one key; on error fills reason (no location prefix). */
static bool apply_key(struct ernic_conf *c, int key, const char *val,
		      char *reason, size_t rlen)
{
	unsigned long long v;
	struct ernic_ip ip;

	switch (key) {
	case K_NAME:
		if (!name_ok(val)) {
			set_err(reason, rlen, "name must be 1..%d characters "
				"of [A-Za-z0-9_-]", ERNIC_NAME_MAX);
			return false;
		}
		strcpy(c->name, val);
		return true;
	case K_BACKEND:
		if (!strcmp(val, "sw")) {
			c->backend = ERNIC_BACKEND_SW;
		} else if (!strcmp(val, "uio")) {
			c->backend = ERNIC_BACKEND_UIO;
		} else if (!strcmp(val, "vfio")) {
			c->backend = ERNIC_BACKEND_VFIO;
		} else {
			set_err(reason, rlen, "unknown backend '%s' "
				"(expected 'sw', 'uio' or 'vfio')", val);
			return false;
		}
		return true;
	case K_VFIO:
		if (ernic_bdf_parse(val, c->vfio)) {
			set_err(reason, rlen, "vfio must be a PCI address "
				"DDDD:BB:DD.F, not '%s'", val);
			return false;
		}
		return true;
	case K_VFIO_BAR:
		if (!parse_ulong(val, 10, 5, &v)) {
			set_err(reason, rlen, "vfio_bar must be a BAR 0..5, "
				"not '%s'", val);
			return false;
		}
		c->vfio_bar = (uint32_t)v;
		return true;
	case K_VFIO_OFFSET:
		/* 0x hex or decimal; a leading 0 is not octal here. */
		if (!parse_ulong(val, val[0] == '0' && (val[1] == 'x' ||
			val[1] == 'X') ? 16 : 10, UINT64_MAX, &v) || v % 4096) {
			set_err(reason, rlen, "vfio_offset must be a 4 KiB "
				"aligned byte offset, not '%s'", val);
			return false;
		}
		c->vfio_offset = v;
		return true;
	case K_VFIO_SHARE_MIB:
		if (!parse_ulong(val, 10, ERNIC_VFIO_SHARE_MIB_MAX, &v) || !v) {
			set_err(reason, rlen, "vfio_share_mib must be 1..%u "
				"(MiB of DMA memory a broker shares), not '%s'",
				ERNIC_VFIO_SHARE_MIB_MAX, val);
			return false;
		}
		c->vfio_share_mib = (uint32_t)v;
		return true;
	case K_VFIO_ROOT:
		if (val[0] != '/' || strlen(val) > ERNIC_UIO_ROOT_MAX ||
		    strstr(val, "/../")) {
			set_err(reason, rlen, "vfio_root must be an absolute "
				"path of at most %d characters", ERNIC_UIO_ROOT_MAX);
			return false;
		}
		strcpy(c->vfio_root, val);
		return true;
	case K_UIO:
		if (!name_ok(val)) {
			set_err(reason, rlen, "uio must be a UIO device name "
				"or uioN, not '%s'", val);
			return false;
		}
		strcpy(c->uio, val);
		return true;
	case K_UIO_ROOT:
		if (val[0] != '/' || strlen(val) > ERNIC_UIO_ROOT_MAX ||
		    strstr(val, "/../")) {
			set_err(reason, rlen, "uio_root must be an absolute "
				"path of at most %d characters", ERNIC_UIO_ROOT_MAX);
			return false;
		}
		strcpy(c->uio_root, val);
		return true;
	case K_DMA_MAP:
		if (!parse_ulong(val, 10, 4, &v) || v == 0) {
			set_err(reason, rlen, "dma_map must be a UIO map index "
				"1..4, not '%s'", val);
			return false;
		}
		c->dma_map = (uint32_t)v;
		return true;
	case K_UDMABUF:
		if (!name_ok(val)) {
			set_err(reason, rlen, "udmabuf must be a u-dma-buf "
				"device name, not '%s'", val);
			return false;
		}
		strcpy(c->udmabuf, val);
		return true;
	case K_COHERENT:
		if (strcmp(val, "0") && strcmp(val, "1")) {
			set_err(reason, rlen, "coherent must be 0 or 1, not "
				"'%s'", val);
			return false;
		}
		c->coherent = val[0] == '1';
		return true;
	case K_ADDR:
		if (ernic_ip_parse(val, &ip)) {
			set_err(reason, rlen, "'%s' is not an IPv4 or IPv6 "
				"address", val);
			return false;
		}
		c->family = ip.family;
		memcpy(c->addr, ip.addr, sizeof(c->addr));
		return true;
	case K_NETDEV:
		if (!netdev_ok(val)) {
			set_err(reason, rlen, "'%s' is not a valid netdev name",
				val);
			return false;
		}
		strcpy(c->netdev, val);
		return true;
	case K_MAC:
		if (!parse_mac(val, c->mac)) {
			set_err(reason, rlen, "'%s' is not a MAC address "
				"(aa:bb:cc:dd:ee:ff)", val);
			return false;
		}
		return true;
	case K_NODE_GUID:
		if (!parse_ulong(val, 16, UINT64_MAX, &v)) {
			set_err(reason, rlen, "node_guid must be 0x followed "
				"by up to 16 hex digits, not '%s'", val);
			return false;
		}
		c->node_guid = v;
		return true;
	case K_UDP_SPORT:
		if (!parse_ulong(val, 10, 65535, &v) || v == 0) {
			set_err(reason, rlen, "udp_sport must be 1..65535, "
				"not '%s'", val);
			return false;
		}
		c->udp_sport = (uint16_t)v;
		return true;
	case K_WIRE:
		if (!strcmp(val, "udp")) {
			c->wire = ERNIC_WIRE_UDP;
		} else if (!strcmp(val, "frame")) {
			c->wire = ERNIC_WIRE_FRAME;
		} else {
			set_err(reason, rlen, "wire must be 'udp' or 'frame', "
				"not '%s'", val);
			return false;
		}
		return true;
	default:
		return !ernic_conf_set_param(c, params[key - K_PARAM0].name, val,
					     reason, rlen);
	}
}

int ernic_conf_set_key(struct ernic_conf *c, const char *key,
		       const char *val, char *err, size_t errlen)
{
	int k = key_index(key);

	if (k < 0) {
		set_err(err, errlen, "unknown key '%s'", key);
		return EINVAL;
	}
	return apply_key(c, k, val, err, errlen) ? 0 : EINVAL;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* Parse one non-comment line; returns false with reason set. */
static bool parse_line(struct ernic_conf *c, char *line, bool seen[K_COUNT],
		       char *reason, size_t rlen)
{
	char *eq = strchr(line, '='), *key, *val;
	int k;

	if (!eq) {
		set_err(reason, rlen, "expected key=value");
		return false;
	}
	*eq = '\0';
	key = trim(line);
	val = trim(eq + 1);
	if (!*key) {
		set_err(reason, rlen, "missing key before '='");
		return false;
	}
	k = key_index(key);
	if (k < 0) {
		set_err(reason, rlen, "unknown key '%s'", key);
		return false;
	}
	if (seen[k]) {
		set_err(reason, rlen, "duplicate key '%s'", key);
		return false;
	}
	seen[k] = true;
	if (!*val) {
		set_err(reason, rlen, "empty value for '%s'", key);
		return false;
	}
	return apply_key(c, k, val, reason, rlen);
}

int ernic_conf_load(const char *path, struct ernic_conf *c, char *err,
		    size_t errlen)
{
	char buf[CONF_LINE_MAX + 2], reason[256];
	bool seen[K_COUNT] = {false};
	struct ernic_conf tmp;
	unsigned int lineno = 0;
	int rc = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		rc = errno;
		set_err(err, errlen, "%s: %s", path, strerror(rc));
		return rc;
	}
	ernic_conf_defaults(&tmp);
	while (fgets(buf, sizeof(buf), f)) {
		size_t len = strlen(buf);
		char *line;

		lineno++;
		if (len && buf[len - 1] == '\n') {
			buf[--len] = '\0';
		} else if (!feof(f)) {
			set_err(err, errlen, "%s:%u: line longer than %d "
				"characters", path, lineno, CONF_LINE_MAX);
			rc = EINVAL;
			goto out;
		}
		line = trim(buf);
		if (!*line || *line == '#')
			continue;
		if (!parse_line(&tmp, line, seen, reason, sizeof(reason))) {
			set_err(err, errlen, "%s:%u: %s", path, lineno, reason);
			rc = EINVAL;
			goto out;
		}
	}
	if (ferror(f)) {
		rc = EIO;
		set_err(err, errlen, "%s: read error", path);
		goto out;
	}
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (!seen[required[i]]) {
			set_err(err, errlen, "%s: missing required key '%s'",
				path, key_names[required[i]]);
			rc = EINVAL;
			goto out;
		}
	}
	if (seen[K_UDMABUF] && seen[K_DMA_MAP]) {
		set_err(err, errlen, "%s: dma_map= and udmabuf= exclude each "
			"other", path);
		rc = EINVAL;
		goto out;
	}
	if ((tmp.backend == ERNIC_BACKEND_VFIO) != seen[K_VFIO]) {
		set_err(err, errlen, "%s: %s", path, seen[K_VFIO] ?
			"vfio= needs backend=vfio" :
			"backend=vfio needs vfio=DDDD:BB:DD.F");
		rc = EINVAL;
		goto out;
	}
	if (tmp.backend != ERNIC_BACKEND_VFIO &&
	    (seen[K_VFIO_BAR] || seen[K_VFIO_OFFSET] || seen[K_VFIO_ROOT] ||
	     seen[K_VFIO_SHARE_MIB])) {
		set_err(err, errlen, "%s: %s= needs backend=vfio", path,
			key_names[seen[K_VFIO_BAR] ? K_VFIO_BAR :
				  seen[K_VFIO_OFFSET] ? K_VFIO_OFFSET :
				  seen[K_VFIO_ROOT] ? K_VFIO_ROOT :
				  K_VFIO_SHARE_MIB]);
		rc = EINVAL;
		goto out;
	}
	if ((tmp.backend == ERNIC_BACKEND_UIO) != seen[K_UIO]) {
		set_err(err, errlen, "%s: %s", path, seen[K_UIO] ?
			"uio= needs backend=uio" :
			"backend=uio needs uio=NAME");
		rc = EINVAL;
		goto out;
	}
	*c = tmp;
out:
	fclose(f);
	return rc;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int format_conf(const struct ernic_conf *c, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN];
	struct ernic_ip ip = {.family = c->family};
	int n;

	memcpy(ip.addr, c->addr, sizeof(ip.addr));
	ernic_ip_format(&ip, addr, sizeof(addr));
	n = snprintf(buf, len,
		     "# ERNIC device configuration (ernicctl)\n"
		     "name=%s\nbackend=%s\naddr=%s\nnetdev=%s\n"
		     "mac=%02x:%02x:%02x:%02x:%02x:%02x\n"
		     "node_guid=0x%016" PRIx64 "\nudp_sport=%u\nwire=%s\n"
		     "C_NUM_QP=%" PRIu32 "\nC_M_AXI_ADDR_WIDTH=%" PRIu32 "\n"
		     "C_MAX_WR_RETRY_DATA_BUF_DEPTH=%" PRIu32 "\n"
		     "C_EN_WR_RETRY_DATA_BUF=%" PRIu32 "\n"
		     "C_EN_INITIATOR_LITE=%" PRIu32 "\n"
		     "C_EN_DEBUG_PORTS=%" PRIu32 "\n",
		     c->name, ernic_backend_name(c->backend),
		     addr, c->netdev, c->mac[0], c->mac[1], c->mac[2],
		     c->mac[3], c->mac[4], c->mac[5], c->node_guid,
		     c->udp_sport,
		     c->wire == ERNIC_WIRE_FRAME ? "frame" : "udp", c->c_num_qp, c->c_m_axi_addr_width,
		     c->c_max_wr_retry_data_buf_depth, c->c_en_wr_retry_data_buf,
		     c->c_en_initiator_lite, c->c_en_debug_ports);
	if (n >= 0 && (size_t)n < len && c->backend == ERNIC_BACKEND_UIO) {
		char dma_map[16];
		int m;

		snprintf(dma_map, sizeof(dma_map), "%" PRIu32, c->dma_map);
		m = snprintf(buf + n, len - (size_t)n,
				 "uio=%s\n%s%s%s%s%s\ncoherent=%" PRIu32 "\n",
				 c->uio, c->uio_root[0] ? "uio_root=" : "",
				 c->uio_root, c->uio_root[0] ? "\n" : "",
				 c->udmabuf[0] ? "udmabuf=" : "dma_map=",
				 c->udmabuf[0] ? c->udmabuf : dma_map,
				 c->coherent);

		n = m < 0 ? -1 : n + m;
	} else if (n >= 0 && (size_t)n < len &&
		   c->backend == ERNIC_BACKEND_VFIO) {
		int m = snprintf(buf + n, len - (size_t)n,
				 "vfio=%s\nvfio_bar=%" PRIu32 "\n"
				 "vfio_offset=0x%" PRIx64 "\n"
				 "vfio_share_mib=%" PRIu32 "\n%s%s%scoherent=%"
				 PRIu32 "\n",
				 c->vfio, c->vfio_bar, c->vfio_offset,
				 c->vfio_share_mib,
				 c->vfio_root[0] ? "vfio_root=" : "",
				 c->vfio_root, c->vfio_root[0] ? "\n" : "",
				 c->coherent);

		n = m < 0 ? -1 : n + m;
	} else if (n >= 0 && (size_t)n < len && !c->coherent) {
		/* A software ERNIC simulating a non-coherent bus. */
		int m = snprintf(buf + n, len - (size_t)n, "coherent=0\n");

		n = m < 0 ? -1 : n + m;
	}
	return n < 0 || (size_t)n >= len ? -1 : n;
}

int ernic_conf_save(const char *path, const struct ernic_conf *c, char *err,
		    size_t errlen)
{
	char buf[1024], tmp[PATH_MAX];
	int fd, n, rc;

	if ((c->backend == ERNIC_BACKEND_UIO && !name_ok(c->uio)) ||
	    (c->backend == ERNIC_BACKEND_VFIO &&
	     (ernic_bdf_parse(c->vfio, (char[ERNIC_BDF_LEN + 1]){ 0 }) ||
	      c->vfio_bar > 5 || c->vfio_offset % 4096 ||
	      !c->vfio_share_mib ||
	      c->vfio_share_mib > ERNIC_VFIO_SHARE_MIB_MAX ||
	      (c->vfio_root[0] && c->vfio_root[0] != '/'))) ||
	    (c->backend != ERNIC_BACKEND_SW && c->backend != ERNIC_BACKEND_UIO &&
	     c->backend != ERNIC_BACKEND_VFIO) ||
	    (c->family != AF_INET && c->family != AF_INET6) ||
	    !name_ok(c->name) || !netdev_ok(c->netdev)) {
		set_err(err, errlen, "%s: incomplete configuration", path);
		return EINVAL;
	}
	n = format_conf(c, buf, sizeof(buf));
	if (n < 0 || snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >=
			     (int)sizeof(tmp)) {
		set_err(err, errlen, "%s: path or contents too long", path);
		return ENAMETOOLONG;
	}
	/* Same directory as the target, so rename() replaces atomically. */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = errno;
		set_err(err, errlen, "%s: %s", tmp, strerror(rc));
		return rc;
	}
	rc = write_all(fd, buf, (size_t)n);
	if (!rc && fchmod(fd, 0644))
		rc = errno;
	if (!rc && fsync(fd))
		rc = errno;
	if (close(fd) && !rc)
		rc = errno;
	if (!rc && rename(tmp, path))
		rc = errno;
	if (rc) {
		unlink(tmp);
		set_err(err, errlen, "%s: %s", path, strerror(rc));
	}
	return rc;
}

/* n hex digits at *p; advances. */
static long hexn(const char **p, int n)
{
	long v = 0;

	for (int k = 0; k < n; k++) {
		int d = hexval((*p)[k]);

		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	*p += n;
	return v;
}

int ernic_bdf_parse(const char *text, char out[ERNIC_BDF_LEN + 1])
{
	const char *p = text;
	long dom = 0, bus, dev, fn;

	if (!text)
		return EINVAL;
	if (strlen(text) == ERNIC_BDF_LEN) {
		dom = hexn(&p, 4);
		if (dom < 0 || *p++ != ':')
			return EINVAL;
	} else if (strlen(text) != ERNIC_BDF_LEN - 5) {
		return EINVAL;
	}
	bus = hexn(&p, 2);
	if (bus < 0 || *p++ != ':')
		return EINVAL;
	dev = hexn(&p, 2);
	if (dev < 0 || dev > 31 || *p++ != '.')
		return EINVAL;
	fn = hexn(&p, 1);
	if (fn < 0 || fn > 7 || *p)
		return EINVAL;
	snprintf(out, ERNIC_BDF_LEN + 1, "%04x:%02x:%02x.%x",
		 (unsigned int)dom & 0xFFFF, (unsigned int)bus & 0xFF,
		 (unsigned int)dev & 0x1F, (unsigned int)fn & 0x7);
	return 0;
}

const char *ernic_backend_name(enum ernic_backend b)
{
	switch (b) {
	case ERNIC_BACKEND_SW:
		return "sw";
	case ERNIC_BACKEND_UIO:
		return "uio";
	case ERNIC_BACKEND_VFIO:
		return "vfio";
	}
	return "?";
}

void ernic_conf_gid(const struct ernic_conf *c, uint8_t gid[16])
{
	struct ernic_ip ip = {.family = c->family};

	memcpy(ip.addr, c->addr, sizeof(ip.addr));
	ernic_ip_to_gid(&ip, gid);
}
