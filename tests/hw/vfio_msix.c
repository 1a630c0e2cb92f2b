// SPDX-License-Identifier: MIT
/*
 * The VFIO backend's MSI-X on the real vfio-pci driver: QEMU's
 * ivshmem-doorbell (MSI-X, BAR 2 a host file big enough for the ERNIC
 * window) stands in for a card whose only interrupt is MSI-X, as on most
 * PCIe FPGA designs. tests/hw/hil.sh runs this in its guest and raises
 * the vectors from the host (hil_ivshmem) when this program asks:
 *
 *   hw_vfio_msix BDF          (ivshmem-doorbell bound to vfio-pci; root)
 *
 * prints "step: irq1", "step: irq0", "step: gone" and waits for the host
 * to raise vector 1, vector 0, and to fill the window with all-ones then
 * raise vector 0. Each check prints "ok: ..." or "FAIL: ..."; the exit
 * status is the number of failures.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "hw_check.h"
#include "ernic_access.h"
#include "ernic_conf.h"
#include "ernic_hw.h"
#include "vfio_util.h"

#define MSIX_BAR 1		/* ivshmem's MSI-X table and PBA */
#define SHM_BAR 2

/*
 * What vfio-pci says of the BAR that holds the MSI-X table, asked before
 * the backend opens the device: since Linux 4.16 the whole BAR may be
 * mapped (VFIO_REGION_INFO_CAP_MSIX_MAPPABLE) and no sparse-mmap areas
 * are given; older kernels gave the areas around the table.
 */
static void msix_bar_info(const char *bdf)
{
	_Alignas(struct vfio_region_info) uint8_t buf[1024];
	struct vfio_region_info *ri = (struct vfio_region_info *)buf;
	struct vfio_group_status gs = { .argsz = sizeof(gs) };
	int cont, grp = -1, dev = -1;
	unsigned int group;
	char err[256], path[64];

	if (vfio_group_of("", bdf, &group, err, sizeof(err))) {
		check(0, "%s", err);
		return;
	}
	snprintf(path, sizeof(path), "/dev/vfio/%u", group);
	cont = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (cont >= 0)
		grp = open(path, O_RDWR | O_CLOEXEC);
	if (grp >= 0 && !ioctl(grp, VFIO_GROUP_GET_STATUS, &gs) &&
	    !ioctl(grp, VFIO_GROUP_SET_CONTAINER, &cont) &&
	    !ioctl(cont, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU))
		dev = ioctl(grp, VFIO_GROUP_GET_DEVICE_FD, bdf);
	if (dev < 0) {
		check(0, "open %s by hand (group %u): %s", bdf, group,
		      strerror(errno));
	} else {
		memset(buf, 0, sizeof(buf));
		ri->argsz = sizeof(buf);
		ri->index = MSIX_BAR;
		if (ioctl(dev, VFIO_DEVICE_GET_REGION_INFO, ri)) {
			check(0, "region info of BAR %d: %s", MSIX_BAR,
			      strerror(errno));
		} else {
			size_t len = ri->argsz < sizeof(buf) ? ri->argsz :
								sizeof(buf);
			uint32_t first = ri->flags & VFIO_REGION_INFO_FLAG_CAPS ?
					 ri->cap_offset : 0;

			check(vfio_cap_find(ri, len, first,
					    VFIO_REGION_INFO_CAP_MSIX_MAPPABLE,
					    sizeof(struct vfio_info_cap_header)) &&
			      !vfio_cap_find(ri, len, first,
					     VFIO_REGION_INFO_CAP_SPARSE_MMAP,
					     sizeof(struct vfio_info_cap_header)) &&
			      (ri->flags & VFIO_REGION_INFO_FLAG_MMAP),
			      "BAR %d (the MSI-X table, %llu bytes): MSIX_MAPPABLE, "
			      "mmap-able whole, no sparse areas", MSIX_BAR,
			      (unsigned long long)ri->size);
		}
		close(dev);
	}
	if (grp >= 0)
		close(grp);
	if (cont >= 0)
		close(cont);
}

/* "vfio-msix[0](BDF)" in /proc/interrupts: the kernel's name for
 * vector 0 of MSI-X set up through vfio-pci. */
static int msix_in_proc(const char *bdf)
{
	char line[512], want[64];
	int found = 0;
	FILE *f = fopen("/proc/interrupts", "re");

	snprintf(want, sizeof(want), "vfio-msix[0](%s)", bdf);
	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, want) != NULL;
	if (f)
		fclose(f);
	return found;
}

static void step(const char *name)
{
	printf("step: %s\n", name);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct ernic_access *acc;
	struct ernic_conf c;
	char err[512] = "";
	int rc, fd;

	if (argc != 2) {
		fprintf(stderr, "usage: hw_vfio_msix BDF (ivshmem-doorbell on "
			"vfio-pci)\n");
		return 2;
	}
	msix_bar_info(argv[1]);

	ernic_conf_defaults(&c);
	c.backend = ERNIC_BACKEND_VFIO;
	snprintf(c.vfio, sizeof(c.vfio), "%s", argv[1]);
	c.vfio_bar = SHM_BAR;
	c.vfio_offset = 0;
	rc = ernic_access_open(&c, &acc, err, sizeof(err));
	check(!rc, "open %s through vfio-pci, the window in BAR %d%s%s",
	      argv[1], SHM_BAR, rc ? ": " : "", err);
	if (rc)
		return 1;
	check(msix_in_proc(argv[1]), "the backend chose MSI-X: vfio-msix[0](%s) "
	      "in /proc/interrupts", argv[1]);
	fd = acc->ops->irq_fd(acc);
	check(fd >= 0 && !readable(fd, 0), "the interrupt fd is quiet");

	step("irq1");
	check(!readable(fd, 1000), "the host raises vector 1: not the "
	      "backend's, its fd stays quiet (1 s)");
	step("irq0");
	check(readable(fd, 10000), "the host raises vector 0: the backend's "
	      "fd turns readable");
	check(ernic_rd(acc, ERNIC_INTSTS) == 0, "INTSTS reads 0 (the host "
	      "file): no cause pending");
	check(acc->ops->irq_enable(acc) == 0, "irq_enable: re-armed");
	check(!readable(fd, 300), "and no signal again: the next wait waits "
	      "(300 ms)");
	step("gone");
	rc = acc->ops->wait_irq(acc, 10000);
	check(rc == -ENODEV, "the window reads all-ones, vector 0 again: the "
	      "re-arm says ENODEV (%d)", rc);
	acc->ops->close(acc);
	printf("%s: %d failure(s)\n", check_failures() ? "FAIL" : "PASS",
	       check_failures());
	return check_failures();
}
