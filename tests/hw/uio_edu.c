// SPDX-License-Identifier: MIT
/*
 * The UIO backend on uio_pci_generic, the kernel's UIO driver for any
 * PCI function (a PCIe card run from user space), with QEMU's edu
 * standing in for the card in the ../shared/hwguest guest
 * (tests/hw/kernel_hw.sh runs this there).
 *
 *   hw_uio_edu UIO BDF     (UIO: the uioN edu is bound as; root)
 *
 * uio_pci_generic maps the BARs and has INTx, but no DMA memory and no
 * irqcontrol: its handler masks INTx in PCI_COMMAND and user space
 * unmasks it there. Checked: the open without a DMA buffer names what is
 * missing; with a stand-in for u-dma-buf (a file in a tree under
 * uio_root that links the real UIO device, for the open only: nothing
 * DMAs into it) the window is BAR 0, edu's INTx arrives on the device
 * file, the kernel masks it, and the next open unmasks it. Exit status:
 * the number of failures.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/pci_regs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "edu_regs.h"
#include "hw_check.h"
#include "ernic_access.h"
#include "ernic_conf.h"
#include "ernic_hw.h"

#define TREE "/tmp/hw_uio_edu"
#define DMA_SIZE (4u << 20)

static const char *uio, *bdf;

static int intx_masked(void)
{
	int cmd = pci_command(bdf);

	return cmd < 0 ? -1 : !!(cmd & PCI_COMMAND_INTX_DISABLE);
}

static int put(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* TREE: sys/class/uio/UIO -> the real one, dev/UIO the same character
 * device, and a u-dma-buf "udmabuf0" that is a plain file. */
static int make_tree(void)
{
	char p[256], q[256], text[64];
	struct stat st;
	int fd;

	snprintf(p, sizeof(p), "/dev/%s", uio);
	if (stat(p, &st) || !S_ISCHR(st.st_mode))
		return -1;
	if (system("rm -rf " TREE " && mkdir -p " TREE "/dev " TREE
		   "/sys/class/uio " TREE "/sys/class/u-dma-buf/udmabuf0"))
		return -1;
	snprintf(q, sizeof(q), TREE "/dev/%s", uio);
	if (mknod(q, S_IFCHR | 0600, st.st_rdev))
		return -1;
	snprintf(p, sizeof(p), "/sys/class/uio/%s", uio);
	snprintf(q, sizeof(q), TREE "/sys/class/uio/%s", uio);
	if (symlink(p, q))
		return -1;
	snprintf(text, sizeof(text), "0x%x\n", 0x40000000u);
	if (put(TREE "/sys/class/u-dma-buf/udmabuf0/phys_addr", text))
		return -1;
	snprintf(text, sizeof(text), "%u\n", DMA_SIZE);
	if (put(TREE "/sys/class/u-dma-buf/udmabuf0/size", text))
		return -1;
	fd = open(TREE "/dev/udmabuf0", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, DMA_SIZE)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static struct ernic_access *open_tree(void)
{
	struct ernic_access *acc = NULL;
	struct ernic_conf c;
	char err[512] = "";
	int rc;

	ernic_conf_defaults(&c);
	c.backend = ERNIC_BACKEND_UIO;
	snprintf(c.uio, sizeof(c.uio), "%s", uio);
	snprintf(c.uio_root, sizeof(c.uio_root), "%s", TREE);
	snprintf(c.udmabuf, sizeof(c.udmabuf), "udmabuf0");
	rc = ernic_access_open(&c, &acc, err, sizeof(err));
	check(!rc, "open %s (uio_pci_generic) with a u-dma-buf%s%s", uio,
	      rc ? ": " : "", err);
	return rc ? NULL : acc;
}

/* edu raises INTx: the device file turns readable, the kernel masks
 * INTx; then edu lowers it again. */
static void intx_once(struct ernic_access *acc, const char *when)
{
	int fd = acc->ops->irq_fd(acc);

	check(intx_masked() == 0, "%s: INTx unmasked in PCI_COMMAND", when);
	ernic_wr(acc, EDU_IRQ_RAISE, 1);
	check(readable(fd, 2000), "%s: edu's INTx reaches the device file",
	      when);
	check(intx_masked() == 1, "%s: uio_pci_generic masked INTx", when);
	ernic_wr(acc, EDU_IRQ_ACK, 1);
}

int main(int argc, char **argv)
{
	struct ernic_access *acc;
	struct ernic_conf c;
	char err[512] = "";
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: hw_uio_edu UIO BDF (edu on "
			"uio_pci_generic)\n");
		return 2;
	}
	uio = argv[1];
	bdf = argv[2];

	ernic_conf_defaults(&c);
	c.backend = ERNIC_BACKEND_UIO;
	snprintf(c.uio, sizeof(c.uio), "%s", uio);
	rc = ernic_access_open(&c, &acc, err, sizeof(err));
	check(rc == ENODEV && strstr(err, "uio_pci_generic") &&
	      strstr(err, "u-dma-buf"),
	      "no DMA buffer: refused, naming what is missing (%s)", err);

	check(!make_tree(), "a tree under %s with the real %s", TREE, uio);
	acc = open_tree();
	if (!acc)
		return 1;
	check(ernic_rd(acc, EDU_ID) == EDU_ID_VALUE,
	      "the window is BAR 0: edu's id");
	intx_once(acc, "first open");
	/* edu reads all-ones at INTSTS: the re-arm leaves INTx masked. */
	check(acc->ops->irq_enable(acc) == ENODEV && intx_masked() == 1,
	      "irq_enable on an all-ones window: ENODEV, INTx left masked");
	acc->ops->close(acc);
	/* The next open unmasks what the last interrupt masked. */
	acc = open_tree();
	if (!acc)
		return 1;
	intx_once(acc, "second open");
	acc->ops->close(acc);
	printf("%s: %d failure(s)\n", check_failures() ? "FAIL" : "PASS",
	       check_failures());
	return check_failures();
}
