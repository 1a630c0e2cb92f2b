// SPDX-License-Identifier: MIT
/*
 * test_vfio, part 3: a VFIO device shared through its broker
 * (access/vfio_share.c), against the fake of test_vfio_flow.c. The
 * broker maps one region of DMA memory into the IOMMU and allocates
 * from it; a client attached with the broker's files reaches the same
 * registers and the same bytes at the same bus addresses, its pages
 * come from the broker, and its close leaves the broker's mappings
 * alone. Bad files from a broker fail with a reason and leak nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "access_vfio.h"
#include "ernic_access.h"
#include "ernic_conf.h"
#include "ernic_hw.h"
#include "test_vfio.h"

#define MIB (UINT64_C(1) << 20)

/* The client's pager: pages from the broker's access, as the broker's
 * thread serves EB_DMA_GET / EB_DMA_PUT. */
struct pages {
	struct ernic_access *broker;
	struct ernic_dma held[8];
	int n, gets, puts;
};

static int pg_get(void *arg, size_t len, size_t align, uint64_t *bus)
{
	struct pages *p = arg;
	int rc;

	assert_true(p->n < 8);
	rc = p->broker->ops->dma_alloc(p->broker, len, align, &p->held[p->n]);
	if (!rc)
		*bus = p->held[p->n++].bus;
	p->gets++;
	return rc;
}

static int pg_claim(void *arg, uint64_t bus, size_t len)
{
	struct pages *p = arg;

	return p->broker->ops->dma_claim(p->broker, bus, len, &p->held[p->n++]);
}

static void pg_put(void *arg, uint64_t bus, size_t len)
{
	struct pages *p = arg;

	(void)len;
	for (int k = 0; k < p->n; k++)
		if (p->held[k].bus == bus) {
			p->broker->ops->dma_free(p->broker, &p->held[k]);
			p->held[k] = p->held[--p->n];
			p->puts++;
			return;
		}
	fail_msg("the client gave back %#llx, which it does not hold",
		 (unsigned long long)bus);
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

void test_share_region(void **state)
{
	struct ernic_access *broker = NULL, *client = NULL;
	struct ernic_access_share sh = { 0 }, copy;
	struct pages pages = { 0 };
	struct ernic_pager pager = { pg_get, pg_claim, pg_put, &pages };
	struct ernic_dma b, c, view;
	struct ernic_conf conf;
	char err[256] = "";
	int nmaps;

	(void)state;
	conf_vfio(&conf);
	conf.hw_role = ERNIC_HW_BROKER;
	conf.vfio_share_mib = 4;
	if (ernic_access_vfio_open_sys(&conf, &fake_sys, &broker, err,
				       sizeof(err)))
		fail_msg("broker open: %s", err);
	pages.broker = broker;
	/* The region is in the IOMMU once, 2 MiB aligned; the broker's own
	 * DMA memory comes from it. */
	assert_non_null(broker->ops->share_export);
	assert_int_equal(broker->ops->share_export(broker, &sh), 0);
	assert_int_equal(sh.region_len, 4 * MIB);
	assert_int_equal(sh.region_bus % (2 * MIB), 0);
	assert_true(fd_open(sh.region_fd));
	nmaps = fake_nmaps();
	assert_int_equal(nmaps, 1);
	assert_int_equal(broker->ops->dma_alloc(broker, 100, 4096, &b), 0);
	assert_true(b.bus >= sh.region_bus &&
		    b.bus + 100 <= sh.region_bus + sh.region_len);
	assert_int_equal(fake_nmaps(), nmaps);

	/* A client, on copies of the files as SCM_RIGHTS makes them. */
	fake_open_device2();
	copy = (struct ernic_access_share){
		.device_fd = FAKE_FD_DEVICE2, .region_fd = dup(sh.region_fd),
		.region_bus = sh.region_bus, .region_len = sh.region_len };
	conf.hw_role = ERNIC_HW_CLIENT;
	if (ernic_access_vfio_attach_sys(&conf, &fake_sys, &copy, &client,
					 err, sizeof(err)))
		fail_msg("attach: %s", err);
	assert_string_equal(client->ops->name, "vfio");
	assert_int_equal(client->ops->irq_fd(client), -1);

	/* The same registers. */
	ernic_wr(client, ERNIC_QP(2, ERNIC_SQPI), 7);
	assert_int_equal(ernic_rd(broker, ERNIC_QP(2, ERNIC_SQPI)), 7);
	assert_int_equal(fake_regs()[ERNIC_QP(2, ERNIC_SQPI) / 4], 7);

	/* Pages from the broker, the same bytes at the same bus address;
	 * nothing new in the IOMMU. */
	client->ops->set_pager(client, &pager);
	assert_int_equal(client->ops->dma_alloc(client, 8192, 8192, &c), 0);
	assert_int_equal(pages.gets, 1);
	assert_true(c.bus % 8192 == 0 && c.bus != b.bus &&
		    c.bus >= sh.region_bus &&
		    c.bus + 8192 <= sh.region_bus + sh.region_len);
	memset(c.va, 0x5a, 8192);
	assert_int_equal(broker->ops->dma_view(broker, c.bus, 8192, &view), 0);
	assert_int_equal(((uint8_t *)view.va)[8191], 0x5a);
	assert_int_equal(fake_nmaps(), nmaps);
	/* ... also the broker's, which the client reads by its bus address
	 * (the doorbell pool). */
	memset(b.va, 0x17, 100);
	assert_int_equal(client->ops->dma_view(client, b.bus, 100, &view), 0);
	assert_int_equal(((uint8_t *)view.va)[99], 0x17);
	assert_int_equal(client->ops->dma_view(client, sh.region_bus +
					       sh.region_len, 1, &view),
			 ERANGE);

	/* A client that leaves gives its pages back and closes its files;
	 * the broker's region stays in the IOMMU. */
	client->ops->dma_free(client, &c);
	assert_int_equal(pages.puts, 1);
	client->ops->close(client);
	assert_false(fake_device2_open());
	assert_int_equal(fake_nmaps(), nmaps);
	assert_int_equal(ernic_rd(broker, ERNIC_QP(2, ERNIC_SQPI)), 7);

	broker->ops->dma_free(broker, &b);
	broker->ops->close(broker);
	assert_false(fd_open(sh.region_fd));
	assert_clean();
}

void test_attach_errors(void **state)
{
	struct ernic_access *broker = NULL, *client = NULL;
	struct ernic_access_share sh, bad;
	struct ernic_conf conf;
	char err[256] = "";
	int fd;

	(void)state;
	conf_vfio(&conf);
	conf.hw_role = ERNIC_HW_BROKER;
	conf.vfio_share_mib = 2;
	if (ernic_access_vfio_open_sys(&conf, &fake_sys, &broker, err,
				       sizeof(err)))
		fail_msg("broker open: %s", err);
	broker->ops->share_export(broker, &sh);
	conf.hw_role = ERNIC_HW_CLIENT;

	/* A region that is not whole pages: refused, both files closed. */
	fake_open_device2();
	fd = dup(sh.region_fd);
	bad = (struct ernic_access_share){ .device_fd = FAKE_FD_DEVICE2,
					   .region_fd = fd,
					   .region_bus = sh.region_bus + 100,
					   .region_len = sh.region_len };
	assert_int_equal(ernic_access_vfio_attach_sys(&conf, &fake_sys, &bad,
						      &client, err,
						      sizeof(err)),
			 EINVAL);
	assert_non_null(strstr(err, "vfio 0000:01:00.0: "));
	assert_non_null(strstr(err, "not whole pages"));
	assert_false(fake_device2_open());
	assert_false(fd_open(fd));

	/* A file that is not a memory file of that size: mmap fails. */
	fake_open_device2();
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	bad = (struct ernic_access_share){ .device_fd = FAKE_FD_DEVICE2,
					   .region_fd = fd,
					   .region_bus = sh.region_bus,
					   .region_len = sh.region_len };
	assert_int_not_equal(ernic_access_vfio_attach_sys(&conf, &fake_sys,
							  &bad, &client, err,
							  sizeof(err)),
			     0);
	assert_non_null(strstr(err, "mmap DMA region"));
	assert_false(fake_device2_open());
	assert_false(fd_open(fd));

	/* Another backend has nothing to attach to. */
	conf.backend = ERNIC_BACKEND_UIO;
	fd = dup(sh.region_fd);
	bad = (struct ernic_access_share){ .device_fd = dup(sh.region_fd),
					   .region_fd = fd };
	assert_int_equal(ernic_access_attach(&conf, &bad, &client, err,
					     sizeof(err)),
			 EOPNOTSUPP);
	assert_non_null(strstr(err, "uio device is opened by each process"));
	assert_false(fd_open(fd));
	assert_false(fd_open(bad.device_fd));

	broker->ops->close(broker);
	assert_clean();
}
