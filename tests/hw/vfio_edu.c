// SPDX-License-Identifier: MIT
/*
 * The VFIO backend on the real vfio-pci driver, behind an emulated
 * IOMMU, with QEMU's edu device standing in for the card (the kernel
 * test bed of ../shared/hwguest; tests/hw/kernel_hw.sh runs this in the
 * guest). edu is no ERNIC, but it has what the backend must get right on
 * a real kernel: a BAR to map, a DMA engine that reads and writes IOVAs
 * through the IOMMU, MSI, and bus mastering in config space.
 *
 *   hw_vfio_edu BDF [--unbind]      (an edu bound to vfio-pci; root)
 *
 * With --unbind it then says "waiting for the driver's request" and
 * waits until the driver asks for the device back (kernel_hw.sh unbinds
 * it from vfio-pci meanwhile): the interrupt fd wakes and the re-arm
 * says ENODEV, and the close lets the unbind finish.
 *
 * Each check prints "ok: ..." or "FAIL: ..."; the exit status is the
 * number of failures (0: all passed).
 *
 * edu's DMA buffer is 4 KiB (edu_regs.h); QEMU 7.2 fails a 4096-byte
 * transfer, so transfers here stay below. Addresses are written as
 * 32-bit words, so the IOVAs are kept below 4 GiB
 * (c_m_axi_addr_width=32).
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/pci_regs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ernic_access.h"
#include "ernic_conf.h"
#include "ernic_hw.h"
#include "edu_regs.h"
#include "hw_check.h"

static const char *bdf;

/* One edu DMA of len bytes between bus and edu's buffer; true when
 * the engine finished within 5 s. */
static int edu_dma(struct ernic_access *acc, uint64_t bus, uint32_t len,
		   int to_ram)
{
	uint64_t end = now_ms() + 5000;

	ernic_wr(acc, to_ram ? EDU_DMA_SRC : EDU_DMA_DST, EDU_BUF);
	ernic_wr(acc, to_ram ? EDU_DMA_DST : EDU_DMA_SRC, (uint32_t)bus);
	ernic_wr(acc, EDU_DMA_CNT, len);
	ernic_wr(acc, EDU_DMA_CMD, EDU_DMA_RUN | (to_ram ? EDU_DMA_TO_RAM : 0));
	while (ernic_rd(acc, EDU_DMA_CMD) & EDU_DMA_RUN) {
		if (now_ms() > end)
			return 0;
		usleep(1000);
	}
	return 1;
}

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	for (size_t k = 0; k < len; k++)
		p[k] = (uint8_t)(seed + k * 7);
}

/* Bytes in, through edu, and out again: src's len bytes reach dst. */
static int round_trip(struct ernic_access *acc, uint64_t src_bus,
		      uint64_t dst_bus, uint32_t len)
{
	return edu_dma(acc, src_bus, len, 0) && edu_dma(acc, dst_bus, len, 1);
}

/* PCI_COMMAND's bus-master bit, -1 if unread. */
static int bus_master(void)
{
	int cmd = pci_command(bdf);

	return cmd < 0 ? -1 : !!(cmd & PCI_COMMAND_MASTER);
}

/* HugePages_Free of /proc/meminfo, -1 if unknown. */
static long huge_free(void)
{
	char line[128];
	long n = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "HugePages_Free: %ld", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

static void test_dma(struct ernic_access *acc)
{
	struct ernic_dma a, b, big;
	const uint32_t len = 4000;
	uint8_t *buf, *u;
	uint64_t bus;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	long hp0, hp1;

	check(!acc->ops->dma_alloc(acc, 8192, 0, &a) &&
	      !acc->ops->dma_alloc(acc, 8192, 0, &b),
	      "dma_alloc: two 8 KiB blocks");
	fill(a.va, len, 1);
	memset(b.va, 0, len);
	check(round_trip(acc, a.bus, b.bus + 100, len) &&
	      !memcmp(a.va, (uint8_t *)b.va + 100, len),
	      "edu copies %u bytes from IOVA %#" PRIx64 " to %#" PRIx64
	      " through the IOMMU, byte for byte", len, a.bus, b.bus + 100);

	/* 4 MiB: the 2 MiB-page path when the system has huge pages. */
	hp0 = huge_free();
	if (!acc->ops->dma_alloc(acc, 4u << 20, 0, &big)) {
		uint8_t *far = (uint8_t *)big.va + (3u << 20) + 12345;

		hp1 = huge_free();
		if (hp0 >= 2)
			check(hp0 - hp1 == 2, "the 4 MiB block is two 2 MiB "
			      "pages (HugePages_Free %ld -> %ld)", hp0, hp1);
		else
			printf("note: no free 2 MiB pages: the 4 MiB block "
			       "is in small pages\n");

		memset(big.va, 0, 4u << 20);
		check(round_trip(acc, a.bus, big.bus + (3u << 20) + 12345,
				 len) && !memcmp(a.va, far, len),
		      "4 MiB dma_alloc block: edu writes 3 MiB into it");
		acc->ops->dma_free(acc, &big);
	} else {
		check(0, "dma_alloc of 4 MiB");
	}

	/* A user buffer, unaligned, across a page boundary. */
	buf = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	u = buf + page - 1000;
	memset(buf, 0, 4 * page);
	if (!acc->ops->map_user(acc, u, len, &bus)) {
		check(round_trip(acc, a.bus, bus, len) && !memcmp(a.va, u, len),
		      "map_user: an unaligned %u-byte buffer across pages "
		      "takes edu's write at IOVA %#" PRIx64, len, bus);
		fill(u, len, 9);
		memset(b.va, 0, len);
		check(round_trip(acc, bus, b.bus, len) && !memcmp(u, b.va, len),
		      "map_user: edu reads the same buffer back");
		acc->ops->unmap_user(acc, bus, len);
	} else {
		check(0, "map_user of an unaligned buffer");
	}
	munmap(buf, 4 * page);

	/* An IOVA nobody mapped: the IOMMU faults it (dmesg), memory
	 * stays untouched. kernel_hw.sh reads the fault. */
	memset(b.va, 0x5a, len);
	fill(a.va, len, 3);
	edu_dma(acc, a.bus, len, 0);
	edu_dma(acc, UINT64_C(0xf0000000), len, 1);
	printf("unmapped-iova: %#x\n", 0xf0000000u);
	check(((uint8_t *)b.va)[0] == 0x5a && ((uint8_t *)b.va)[len - 1] == 0x5a,
	      "a DMA to an unmapped IOVA touches none of our memory");
	acc->ops->dma_free(acc, &a);
	acc->ops->dma_free(acc, &b);
}

static void test_msi(struct ernic_access *acc)
{
	int fd = acc->ops->irq_fd(acc);

	check(fd >= 0 && !readable(fd, 0), "the interrupt fd is quiet");
	ernic_wr(acc, EDU_IRQ_RAISE, 1);
	check(readable(fd, 2000), "edu's MSI makes the backend's fd readable");
	check(ernic_rd(acc, EDU_IRQ_STATUS) & 1, "edu says it raised it");
	ernic_wr(acc, EDU_IRQ_ACK, 1);
	/* edu reads all-ones at INTSTS, as a device that is gone does:
	 * the re-arm says so and does not signal again (issue 17). */
	check(ernic_rd(acc, ERNIC_INTSTS) == ERNIC_REG_GONE,
	      "edu reads all-ones at INTSTS (%#x)", ERNIC_INTSTS);
	check(acc->ops->irq_enable(acc) == ENODEV,
	      "irq_enable: ENODEV on a window that reads all-ones");
	check(!readable(fd, 300),
	      "and no signal again: the next wait waits (300 ms)");
	ernic_wr(acc, EDU_IRQ_RAISE, 2);
	check(acc->ops->wait_irq(acc, 2000) == -ENODEV,
	      "wait_irq: a second MSI arrives, the re-arm says ENODEV");
	ernic_wr(acc, EDU_IRQ_ACK, 2);
}

/* One open that must be refused with rc and a message naming why. */
static void refused(const struct ernic_conf *base, const char *dev,
		    unsigned int bar, uint64_t offset, int want,
		    const char *says, const char *what)
{
	struct ernic_conf c = *base;
	struct ernic_access *acc = NULL;
	char err[512] = "";
	int rc;

	snprintf(c.vfio, sizeof(c.vfio), "%s", dev);
	c.vfio_bar = bar;
	c.vfio_offset = offset;
	rc = ernic_access_open(&c, &acc, err, sizeof(err));
	check(rc == want && strstr(err, says) && strstr(err, dev),
	      "%s: refused (%s), \"%s\"", what, strerror(rc), err);
	if (!rc)
		acc->ops->close(acc);
}

/*
 * The open's refusals on the real driver, each with its reason; the
 * device is left as it was (the open after them succeeds). The
 * pci-testdev function is bound to no driver; 00:1e.0 does not exist.
 */
static void test_refusals(const struct ernic_conf *c)
{
	refused(c, bdf, 1, 0, EINVAL, "BAR 1: the BAR does not exist",
		"a BAR edu does not have");
	refused(c, bdf, 0, 0xE0000, EINVAL, "does not fit the 0x100000-byte BAR",
		"the window past the end of edu's 1 MiB BAR");
	refused(c, bdf, 0, 0x800, EINVAL, "not 4 KiB aligned",
		"a window offset not 4 KiB aligned");
	refused(c, "0000:00:07.0", 0, 0, ENOENT, "bind the function to vfio-pci",
		"a function not bound to vfio-pci");
	refused(c, "0000:00:1e.0", 0, 0, ENOENT, "no such function",
		"a function that does not exist");
}

int main(int argc, char **argv)
{
	struct ernic_access *acc;
	struct ernic_conf c;
	char err[512] = "";
	uint32_t v;
	int rc;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--unbind"))) {
		fprintf(stderr, "usage: hw_vfio_edu BDF [--unbind] (edu on "
			"vfio-pci)\n");
		return 2;
	}
	bdf = argv[1];
	ernic_conf_defaults(&c);
	c.backend = ERNIC_BACKEND_VFIO;
	snprintf(c.vfio, sizeof(c.vfio), "%s", bdf);
	c.vfio_bar = 0;
	c.vfio_offset = 0;
	c.c_m_axi_addr_width = 32;
	if (argc == 2)
		test_refusals(&c);
	rc = ernic_access_open(&c, &acc, err, sizeof(err));
	check(!rc, "open %s through vfio-pci%s%s", bdf, rc ? ": " : "", err);
	if (rc)
		return 1;
	if (argc == 2) {
		struct ernic_access *again;

		rc = ernic_access_open(&c, &again, err, sizeof(err));
		check(rc == EBUSY && strstr(err, "another process has the group"),
		      "a second open while it is open: refused (%s), \"%s\"",
		      strerror(rc), err);
		if (!rc)
			again->ops->close(again);
	}
	v = ernic_rd(acc, EDU_ID);
	check(v == EDU_ID_VALUE, "BAR 0 mapped: edu's id %#x", v);
	ernic_wr(acc, EDU_LIVE, 0x12345678);
	v = ernic_rd(acc, EDU_LIVE);
	check(v == ~0x12345678u, "edu's liveness register answers %#x", v);
	check(bus_master() == 1, "bus mastering on while open");
	test_dma(acc);
	test_msi(acc);
	if (argc == 3) {
		uint64_t t0;

		printf("waiting for the driver's request\n");
		fflush(stdout);
		t0 = now_ms();
		rc = acc->ops->wait_irq(acc, 60000);
		check(rc == -ENODEV, "the unbind's request wakes the interrupt "
		      "fd after %" PRIu64 " ms, and the re-arm says ENODEV (%d)",
		      now_ms() - t0, rc);
	}
	acc->ops->close(acc);
	check(bus_master() == 0, "bus mastering off after close");
	printf("%s: %d failure(s)\n", check_failures() ? "FAIL" : "PASS",
	       check_failures());
	return check_failures();
}
