// SPDX-License-Identifier: MIT
/*
 * ernic.conf parsing and writing, and the address helpers it relies on:
 * every malformed line must be an error that names the file and line.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "ernic_conf.h"
#include "ernic_hw.h"
#include "ernic_net.h"

static char dir[] = "/tmp/ernic-conf-test.XXXXXX";
static char path[sizeof(dir) + 32];

static const char good[] =
	"# a comment\n"
	"\n"
	"name=ernic0\n"
	"backend=sw\n"
	"  addr = 127.0.0.2  \n"
	"netdev=lo\n"
	"mac=02:AB:cd:00:00:01\n"
	"node_guid=0x020000007f000002\n"
	"udp_sport=50000\n"
	"C_NUM_QP=8\n"
	"\t# indented comment\n"
	"C_EN_DEBUG_PORTS=1\n";

static void write_conf(const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/ernic.conf", dir);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	return rmdir(dir);
}

static void test_defaults(void **state)
{
	struct ernic_conf c;

	memset(&c, 0xa5, sizeof(c));
	ernic_conf_defaults(&c);
	assert_int_equal(c.backend, ERNIC_BACKEND_SW);
	assert_int_equal(c.family, 0);
	assert_int_equal(c.udp_sport, ERNIC_UDP_SPORT_DEFAULT);
	assert_int_equal(c.c_num_qp, 64);
	assert_int_equal(c.c_m_axi_addr_width, 64);
	assert_int_equal(c.c_max_wr_retry_data_buf_depth, 512);
	assert_int_equal(c.c_en_wr_retry_data_buf, 1);
	assert_int_equal(c.c_en_initiator_lite, 1);
	assert_int_equal(c.c_en_debug_ports, 0);
	assert_string_equal(c.name, "");
}

static void test_set_param(void **state)
{
	static const char *const bad[] = {
		"", "7", "256", "-8", "+8", " 8", "8 ", "8x", "0x10", "1e1",
		"18446744073709551617", "99999999999999999999999",
	};
	struct ernic_conf c;
	char err[256];

	ernic_conf_defaults(&c);
	assert_int_equal(ernic_conf_set_param(&c, "C_NUM_QP", "8", err,
					      sizeof(err)), 0);
	assert_int_equal(c.c_num_qp, ERNIC_C_NUM_QP_MIN);
	assert_int_equal(ernic_conf_set_param(&c, "C_NUM_QP", "255", err,
					      sizeof(err)), 0);
	assert_int_equal(c.c_num_qp, ERNIC_C_NUM_QP_MAX);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(ernic_conf_set_param(&c, "C_NUM_QP", bad[i],
						      err, sizeof(err)), EINVAL);
		assert_non_null(strstr(err, "C_NUM_QP must be 8..255"));
		assert_int_equal(c.c_num_qp, 255);
	}
	assert_int_equal(ernic_conf_set_param(&c, "C_M_AXI_ADDR_WIDTH", "32",
					      err, sizeof(err)), 0);
	assert_int_equal(c.c_m_axi_addr_width, 32);
	assert_int_equal(ernic_conf_set_param(&c, "C_M_AXI_ADDR_WIDTH", "48",
					      err, sizeof(err)), EINVAL);
	assert_non_null(strstr(err, "32 or 64"));
	assert_int_equal(ernic_conf_set_param(&c,
			 "C_MAX_WR_RETRY_DATA_BUF_DEPTH", "65535", err,
			 sizeof(err)), 0);
	assert_int_equal(ernic_conf_set_param(&c,
			 "C_MAX_WR_RETRY_DATA_BUF_DEPTH", "0", err,
			 sizeof(err)), EINVAL);
	assert_int_equal(ernic_conf_set_param(&c, "C_EN_WR_RETRY_DATA_BUF",
					      "0", err, sizeof(err)), 0);
	assert_int_equal(c.c_en_wr_retry_data_buf, 0);
	assert_int_equal(ernic_conf_set_param(&c, "C_EN_INITIATOR_LITE", "2",
					      err, sizeof(err)), EINVAL);
	assert_int_equal(ernic_conf_set_param(&c, "C_EN_DEBUG_PORTS", "1",
					      err, sizeof(err)), 0);
	assert_int_equal(c.c_en_debug_ports, 1);
	/* C_M_AXI_ID_WIDTH describes the bus, not the device: refused. */
	assert_int_equal(ernic_conf_set_param(&c, "C_M_AXI_ID_WIDTH", "1", err,
					      sizeof(err)), EINVAL);
	assert_non_null(strstr(err, "unknown parameter 'C_M_AXI_ID_WIDTH'"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(ernic_conf_set_param(&c, "c_num_qp", "8", err,
					      sizeof(err)), EINVAL);
}

static void test_load_good(void **state)
{
	struct ernic_conf c;
	char err[256] = "";

	write_conf(good);
	assert_int_equal(ernic_conf_load(path, &c, err, sizeof(err)), 0);
	assert_string_equal(c.name, "ernic0");
	assert_int_equal(c.family, AF_INET);
	assert_memory_equal(c.addr, "\x7f\x00\x00\x02", 4);
	assert_string_equal(c.netdev, "lo");
	assert_memory_equal(c.mac, "\x02\xab\xcd\x00\x00\x01", 6);
	assert_true(c.node_guid == UINT64_C(0x020000007f000002));
	assert_int_equal(c.udp_sport, 50000);
	assert_int_equal(c.c_num_qp, 8);
	assert_int_equal(c.c_en_debug_ports, 1);
	assert_int_equal(c.c_m_axi_addr_width, 64); /* default kept */
}

/* Each case: file text, expected error text (with "path" prefix cut). */
static const struct {
	const char *text, *err;
} bad_files[] = {
	{"name=e\nfoo=1\n", ":2: unknown key 'foo'"},
	{"name=e\nname=f\n", ":2: duplicate key 'name'"},
	{"name=e\nC_NUM_QP=8\nC_NUM_QP=8\n", ":3: duplicate key 'C_NUM_QP'"},
	{"\n# c\nname\n", ":3: expected key=value"},
	{"=x\n", ":1: missing key before '='"},
	{"name=\n", ":1: empty value for 'name'"},
	{"name=a b\n", ":1: name must be"},
	{"backend=hw\n", ":1: unknown backend 'hw'"},
	{"uio=a/b\n", ":1: uio must be a UIO device name"},
	{"uio_root=run/x\n", ":1: uio_root must be an absolute path"},
	{"uio_root=/a/../b\n", ":1: uio_root must be an absolute path"},
	{"dma_map=0\n", ":1: dma_map must be a UIO map index 1..4"},
	{"dma_map=5\n", ":1: dma_map must be a UIO map index 1..4"},
	{"coherent=yes\n", ":1: coherent must be 0 or 1"},
	{"name=e\nbackend=uio\naddr=::1\nnetdev=lo\nmac=00:00:00:00:00:00\n",
	 ": backend=uio needs uio=NAME"},
	{"name=e\nbackend=sw\naddr=::1\nnetdev=lo\nmac=00:00:00:00:00:00\n"
	 "uio=uio0\n", ": uio= needs backend=uio"},
	{"backend=pci\n", ":1: unknown backend 'pci' (expected 'sw', 'uio' "
	 "or 'vfio')"},
	{"vfio=0000:01:00\n", ":1: vfio must be a PCI address DDDD:BB:DD.F, "
	 "not '0000:01:00'"},
	{"vfio=0000:01:20.0\n", ":1: vfio must be a PCI address"},
	{"vfio=0000:01:00.8\n", ":1: vfio must be a PCI address"},
	{"vfio=000g:01:00.0\n", ":1: vfio must be a PCI address"},
	{"vfio_bar=6\n", ":1: vfio_bar must be a BAR 0..5, not '6'"},
	{"vfio_bar=-1\n", ":1: vfio_bar must be a BAR 0..5"},
	{"vfio_bar=0x1\n", ":1: vfio_bar must be a BAR 0..5"},
	{"vfio_offset=0x800\n", ":1: vfio_offset must be a 4 KiB aligned "
	 "byte offset, not '0x800'"},
	{"vfio_offset=4097\n", ":1: vfio_offset must be a 4 KiB aligned"},
	/* Not octal: 010000 is ten thousand, not 4 KiB aligned. */
	{"vfio_offset=010000\n", ":1: vfio_offset must be a 4 KiB aligned"},
	{"vfio_offset=0x\n", ":1: vfio_offset must be a 4 KiB aligned"},
	{"vfio_offset=-4096\n", ":1: vfio_offset must be a 4 KiB aligned"},
	{"vfio_root=dev\n", ":1: vfio_root must be an absolute path"},
	{"vfio_share_mib=0\n", ":1: vfio_share_mib must be 1..65536 (MiB of "
	 "DMA memory a broker shares), not '0'"},
	{"vfio_share_mib=65537\n", ":1: vfio_share_mib must be 1..65536"},
	{"name=e\nbackend=uio\nuio=uio0\naddr=::1\nnetdev=lo\n"
	 "mac=00:00:00:00:00:00\nvfio_share_mib=2\n",
	 ": vfio_share_mib= needs backend=vfio"},
	{"name=e\nbackend=vfio\naddr=::1\nnetdev=lo\nmac=00:00:00:00:00:00\n",
	 ": backend=vfio needs vfio=DDDD:BB:DD.F"},
	{"name=e\nbackend=sw\naddr=::1\nnetdev=lo\nmac=00:00:00:00:00:00\n"
	 "vfio=0000:01:00.0\n", ": vfio= needs backend=vfio"},
	{"name=e\nbackend=uio\nuio=uio0\naddr=::1\nnetdev=lo\n"
	 "mac=00:00:00:00:00:00\nvfio_bar=2\n", ": vfio_bar= needs backend=vfio"},
	{"name=e\nbackend=sw\naddr=::1\nnetdev=lo\nmac=00:00:00:00:00:00\n"
	 "vfio_offset=0\n", ": vfio_offset= needs backend=vfio"},
	{"name=e\nbackend=sw\naddr=::1\nnetdev=lo\nmac=00:00:00:00:00:00\n"
	 "vfio_root=/x\n", ": vfio_root= needs backend=vfio"},
	{"name=e\nbackend=vfio\nvfio=01:00.0\nuio=uio0\naddr=::1\n"
	 "netdev=lo\nmac=00:00:00:00:00:00\n", ": uio= needs backend=uio"},
	{"addr=1.2.3\n", ":1: '1.2.3' is not an IPv4 or IPv6 address"},
	{"netdev=a/b\n", ":1: 'a/b' is not a valid netdev name"},
	{"netdev=0123456789abcdef\n", ":1: '0123456789abcdef' is not"},
	{"mac=02:00:00:00:00\n", ":1: '02:00:00:00:00' is not a MAC"},
	{"mac=02:00:00:00:00:0g\n", ":1: '02:00:00:00:00:0g' is not a MAC"},
	{"mac=02-00-00-00-00-01\n", ":1: '02-00-00-00-00-01' is not a MAC"},
	{"node_guid=1234\n", ":1: node_guid must be 0x"},
	{"node_guid=0x10000000000000000\n", ":1: node_guid must be 0x"},
	{"node_guid=0x12zz\n", ":1: node_guid must be 0x"},
	{"udp_sport=65536\n", ":1: udp_sport must be 1..65535"},
	{"udp_sport=0\n", ":1: udp_sport must be 1..65535"},
	{"C_NUM_QP=300\n", ":1: C_NUM_QP must be 8..255, not '300'"},
	{"C_M_AXI_ADDR_WIDTH=16\n", ":1: C_M_AXI_ADDR_WIDTH must be 32 or 64"},
	{"C_EN_WR_RETRY_DATA_BUF=yes\n", ":1: C_EN_WR_RETRY_DATA_BUF must be"},
	{"backend=sw\naddr=::1\nnetdev=lo\nmac=00:00:00:00:00:00\n",
	 ": missing required key 'name'"},
	{"name=e\nbackend=sw\naddr=::1\nnetdev=lo\n",
	 ": missing required key 'mac'"},
	{"name=e\nbackend=sw\nnetdev=lo\nmac=00:00:00:00:00:00\n",
	 ": missing required key 'addr'"},
	{"", ": missing required key 'name'"},
};

static void test_load_errors(void **state)
{
	struct ernic_conf c;
	char err[512], want[512];

	for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		memset(&c, 0x5a, sizeof(c));
		write_conf(bad_files[i].text);
		assert_int_equal(ernic_conf_load(path, &c, err, sizeof(err)),
				 EINVAL);
		snprintf(want, sizeof(want), "%s%s", path, bad_files[i].err);
		if (strncmp(err, want, strlen(want))) {
			print_error("case %zu: got '%s', want '%s'\n", i, err,
				    want);
			fail();
		}
		assert_null(strchr(err, '\n'));
		/* A failed load leaves the caller's struct alone. */
		assert_int_equal(c.c_num_qp, 0x5a5a5a5a);
	}
}

static void test_line_length(void **state)
{
	char text[600], err[256], want[300];
	struct ernic_conf c;
	int n;

	/* 255 characters is the limit, comment or not. */
	n = snprintf(text, sizeof(text), "#%0254d\n", 0);
	assert_int_equal(n, 256);
	snprintf(text + n, sizeof(text) - (size_t)n, "%s", good);
	write_conf(text);
	assert_int_equal(ernic_conf_load(path, &c, err, sizeof(err)), 0);

	snprintf(text, sizeof(text), "name=e\n#%0255d\n", 0);
	write_conf(text);
	assert_int_equal(ernic_conf_load(path, &c, err, sizeof(err)), EINVAL);
	snprintf(want, sizeof(want), "%s:2: line longer than 255", path);
	assert_non_null(strstr(err, want));

	/* Also without a final newline. */
	snprintf(text, sizeof(text), "name=%0252d", 0);
	write_conf(text);
	assert_int_equal(ernic_conf_load(path, &c, err, sizeof(err)), EINVAL);
	snprintf(want, sizeof(want), "%s:1: line longer than 255", path);
	assert_non_null(strstr(err, want));
}

static void test_missing_file(void **state)
{
	struct ernic_conf c;
	char err[256];

	assert_int_equal(ernic_conf_load("/nonexistent/ernic.conf", &c, err,
					 sizeof(err)), ENOENT);
	assert_non_null(strstr(err, "/nonexistent/ernic.conf: "));
}

static int count_entries(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *de;
	int n = 0;

	assert_non_null(dp);
	while ((de = readdir(dp)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(dp);
	return n;
}

static void test_save_roundtrip(void **state)
{
	struct ernic_conf c, back;
	struct ernic_ip ip;
	char err[256];

	ernic_conf_defaults(&c);
	strcpy(c.name, "e6");
	assert_int_equal(ernic_ip_parse("fd00::2", &ip), 0);
	c.family = ip.family;
	memcpy(c.addr, ip.addr, 16);
	strcpy(c.netdev, "eth0");
	memcpy(c.mac, "\x02\xfc\x00\x00\x00\x01", 6);
	c.node_guid = UINT64_C(0x0200000195025e5e);
	c.udp_sport = 1;
	c.c_num_qp = 255;
	c.c_m_axi_addr_width = 32;
	c.c_max_wr_retry_data_buf_depth = 65535;
	c.c_en_wr_retry_data_buf = 0;
	c.c_en_initiator_lite = 0;
	c.c_en_debug_ports = 1;

	write_conf("old contents\n");
	assert_int_equal(ernic_conf_save(path, &c, err, sizeof(err)), 0);
	assert_int_equal(count_entries(dir), 1); /* no temp file left */
	assert_int_equal(ernic_conf_load(path, &back, err, sizeof(err)), 0);
	/* Field by field: padding bytes are not part of the contract. */
	assert_string_equal(back.name, c.name);
	assert_int_equal(back.backend, c.backend);
	assert_int_equal(back.family, c.family);
	assert_memory_equal(back.addr, c.addr, sizeof(c.addr));
	assert_string_equal(back.netdev, c.netdev);
	assert_memory_equal(back.mac, c.mac, sizeof(c.mac));
	assert_true(back.node_guid == c.node_guid);
	assert_int_equal(back.udp_sport, c.udp_sport);
	assert_int_equal(back.c_num_qp, c.c_num_qp);
	assert_int_equal(back.c_m_axi_addr_width, c.c_m_axi_addr_width);
	assert_int_equal(back.c_max_wr_retry_data_buf_depth,
			 c.c_max_wr_retry_data_buf_depth);
	assert_int_equal(back.c_en_wr_retry_data_buf, c.c_en_wr_retry_data_buf);
	assert_int_equal(back.c_en_initiator_lite, c.c_en_initiator_lite);
	assert_int_equal(back.c_en_debug_ports, c.c_en_debug_ports);

	assert_int_equal(back.dma_map, 1);
	assert_int_equal(back.coherent, 1);

	/* A UIO device, with its own keys. */
	c.backend = ERNIC_BACKEND_UIO;
	strcpy(c.uio, "ernic-vf0");
	strcpy(c.uio_root, "/run/ernic/vfpga/e6");
	c.dma_map = 2;
	c.coherent = 0;
	assert_int_equal(ernic_conf_save(path, &c, err, sizeof(err)), 0);
	assert_int_equal(ernic_conf_load(path, &back, err, sizeof(err)), 0);
	assert_int_equal(back.backend, ERNIC_BACKEND_UIO);
	assert_string_equal(back.uio, c.uio);
	assert_string_equal(back.uio_root, c.uio_root);
	assert_int_equal(back.dma_map, 2);
	assert_int_equal(back.coherent, 0);

	/* Nothing incomplete gets written. */
	c.uio[0] = '\0';
	assert_int_equal(ernic_conf_save(path, &c, err, sizeof(err)), EINVAL);
	c.backend = ERNIC_BACKEND_SW;
	c.family = 0;
	assert_int_equal(ernic_conf_save(path, &c, err, sizeof(err)), EINVAL);
	assert_int_equal(count_entries(dir), 1);
}

/* PCI addresses for vfio=: canonical lower case, domain 0 by default. */
static void test_bdf(void **state)
{
	static const char *const bad[] = {
		"0000:01:20.0", "0000:01:00.8", "0000:01:00:0", "000g:01:00.0",
		"0000:01:00.0 ", "00000:1:00.0", "1:00.0", "",
	};
	char b[ERNIC_BDF_LEN + 1];

	assert_int_equal(ernic_bdf_parse("0000:01:00.0", b), 0);
	assert_string_equal(b, "0000:01:00.0");
	assert_int_equal(ernic_bdf_parse("00AB:C1:1f.7", b), 0);
	assert_string_equal(b, "00ab:c1:1f.7");
	assert_int_equal(ernic_bdf_parse("3b:00.1", b), 0);
	assert_string_equal(b, "0000:3b:00.1");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (ernic_bdf_parse(bad[i], b) != EINVAL)
			fail_msg("'%s' parsed", bad[i]);
	assert_int_equal(ernic_bdf_parse(NULL, b), EINVAL);
}

/* backend=vfio: its keys, their defaults, a round trip, and a save that
 * refuses what a load would refuse. */
static void test_vfio_keys(void **state)
{
	static const char vfio_file[] =
		"name=card0\nbackend=vfio\naddr=192.0.2.9\nnetdev=lo\n"
		"mac=02:00:00:00:00:09\nvfio=3B:00.1\n";
	static const struct {
		const char *text;
		uint64_t want;
	} offsets[] = {
		{ "0", 0 }, { "4096", 4096 }, { "0x80000", 0x80000 },
		{ "0X1000", 0x1000 }, { "0xfffffffffffff000",
					UINT64_C(0xfffffffffffff000) },
	};
	char text[512], err[256];
	struct ernic_conf c, back;

	write_conf(vfio_file);
	assert_int_equal(ernic_conf_load(path, &c, err, sizeof(err)), 0);
	assert_int_equal(c.backend, ERNIC_BACKEND_VFIO);
	assert_string_equal(c.vfio, "0000:3b:00.1");	/* canonical */
	assert_int_equal(c.vfio_bar, 0);
	assert_true(c.vfio_offset == 0);
	assert_string_equal(c.vfio_root, "");
	assert_int_equal(c.vfio_share_mib, 256);
	assert_int_equal(c.coherent, 1);
	assert_string_equal(ernic_backend_name(c.backend), "vfio");

	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		snprintf(text, sizeof(text), "%svfio_offset=%s\nvfio_bar=5\n",
			 vfio_file, offsets[i].text);
		write_conf(text);
		assert_int_equal(ernic_conf_load(path, &c, err, sizeof(err)), 0);
		assert_true(c.vfio_offset == offsets[i].want);
		assert_int_equal(c.vfio_bar, 5);
	}

	/* Round trip, vfio_root and coherent=0 included. */
	c.vfio_bar = 2;
	c.vfio_offset = 0x80000;
	strcpy(c.vfio_root, "/tmp/fake root");
	c.vfio_share_mib = 65536;
	c.coherent = 0;
	assert_int_equal(ernic_conf_save(path, &c, err, sizeof(err)), 0);
	assert_int_equal(ernic_conf_load(path, &back, err, sizeof(err)), 0);
	assert_int_equal(back.backend, ERNIC_BACKEND_VFIO);
	assert_string_equal(back.vfio, "0000:3b:00.1");
	assert_int_equal(back.vfio_bar, 2);
	assert_true(back.vfio_offset == 0x80000);
	assert_string_equal(back.vfio_root, "/tmp/fake root");
	assert_int_equal(back.vfio_share_mib, 65536);
	assert_int_equal(back.coherent, 0);
	assert_string_equal(back.uio, "");	/* no UIO keys written */

	/* Without vfio_root the line is left out, and the load agrees. */
	c.vfio_root[0] = '\0';
	assert_int_equal(ernic_conf_save(path, &c, err, sizeof(err)), 0);
	assert_int_equal(ernic_conf_load(path, &back, err, sizeof(err)), 0);
	assert_string_equal(back.vfio_root, "");

	/* Save writes nothing a load would refuse. */
	back = c;
	back.vfio_bar = 6;
	assert_int_equal(ernic_conf_save(path, &back, err, sizeof(err)), EINVAL);
	back = c;
	back.vfio_offset = 0x80800;
	assert_int_equal(ernic_conf_save(path, &back, err, sizeof(err)), EINVAL);
	back = c;
	strcpy(back.vfio, "01:00");
	assert_int_equal(ernic_conf_save(path, &back, err, sizeof(err)), EINVAL);
	assert_non_null(strstr(err, "incomplete configuration"));
	assert_int_equal(count_entries(dir), 1);

	/* ernicctl's path: one key at a time, the same checks. */
	ernic_conf_defaults(&c);
	assert_int_equal(ernic_conf_set_key(&c, "vfio", "0000:01:00.0", err,
					    sizeof(err)), 0);
	assert_int_equal(ernic_conf_set_key(&c, "vfio_offset", "0x800", err,
					    sizeof(err)), EINVAL);
	assert_non_null(strstr(err, "4 KiB aligned"));
	assert_int_equal(ernic_conf_set_key(&c, "vfio_bar", "6", err,
					    sizeof(err)), EINVAL);
	assert_int_equal(c.vfio_bar, 0);
}

static void test_ip_and_gid(void **state)
{
	struct ernic_ip ip, back;
	uint8_t gid[16];
	char text[64];
	struct ernic_conf c;

	assert_int_equal(ernic_ip_parse("127.0.0.2", &ip), 0);
	assert_int_equal(ip.family, AF_INET);
	ernic_ip_to_gid(&ip, gid);
	assert_memory_equal(gid, "\0\0\0\0\0\0\0\0\0\0\xff\xff\x7f\0\0\x02", 16);
	ernic_gid_to_ip(gid, &back);
	assert_memory_equal(&ip, &back, sizeof(ip));

	/* The mapped spelling is the same IPv4 address. */
	assert_int_equal(ernic_ip_parse("::ffff:127.0.0.2", &back), 0);
	assert_memory_equal(&ip, &back, sizeof(ip));

	assert_int_equal(ernic_ip_parse("fd00::2", &ip), 0);
	assert_int_equal(ip.family, AF_INET6);
	ernic_ip_to_gid(&ip, gid);
	assert_memory_equal(gid, ip.addr, 16);
	ernic_ip_format(&ip, text, sizeof(text));
	assert_string_equal(text, "fd00::2");

	ernic_conf_defaults(&c);
	c.family = AF_INET;
	memcpy(c.addr, "\xc0\x00\x02\x02", 4);
	ernic_conf_gid(&c, gid);
	assert_memory_equal(gid, "\0\0\0\0\0\0\0\0\0\0\xff\xff\xc0\0\x02\x02", 16);

	assert_int_equal(ernic_ip_parse("", &ip), EINVAL);
	assert_int_equal(ernic_ip_parse("1.2.3", &ip), EINVAL);
	assert_int_equal(ernic_ip_parse("1.2.3.4 ", &ip), EINVAL);
	assert_int_equal(ernic_ip_parse("localhost", &ip), EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_set_param),
		cmocka_unit_test(test_load_good),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_line_length),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_save_roundtrip),
		cmocka_unit_test(test_bdf),
		cmocka_unit_test(test_vfio_keys),
		cmocka_unit_test(test_ip_and_gid),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
