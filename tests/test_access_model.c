// SPDX-License-Identifier: MIT
/*
 * Device access layer over the in-process model backend: dispatch,
 * register pass-through, DMA memory and user mappings.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "access_model.h"
#include "ernic_access.h"
#include "ernic_conf.h"
#include "ernic_hw.h"
#include "ernic_model.h"

static void conf_init(struct ernic_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->backend = ERNIC_BACKEND_SW;
	c->c_num_qp = 16;
	c->c_m_axi_addr_width = 64;
	/* The model opens its Ethernet port: a loopback address of its own. */
	c->family = AF_INET;
	memcpy(c->addr, (uint8_t[]){ 127, 0, 0, 9 }, 4);
	strcpy(c->netdev, "lo");
	c->udp_sport = ERNIC_UDP_SPORT_DEFAULT;
	c->wire = ERNIC_WIRE_UDP;
	c->coherent = 1;
}

static void test_open_errors(void **state)
{
	struct ernic_conf c;
	struct ernic_access *acc = (struct ernic_access *)&c;
	char err[128] = "";

	conf_init(&c);
	c.backend = (enum ernic_backend)99;
	assert_int_equal(ernic_access_open(&c, &acc, err, sizeof(err)),
			 EOPNOTSUPP);
	assert_null(acc);
	assert_non_null(strstr(err, "not supported"));

	conf_init(&c);
	c.c_num_qp = 4;
	err[0] = 0;
	assert_int_equal(ernic_access_open(&c, &acc, err, sizeof(err)), EINVAL);
	assert_null(acc);
	assert_true(err[0] != 0);
	/* No error buffer is allowed. */
	assert_int_equal(ernic_access_open(&c, &acc, NULL, 0), EINVAL);
	assert_int_equal(ernic_access_open(NULL, &acc, err, sizeof(err)),
			 EINVAL);
}

static void test_model_backend(void **state)
{
	static const struct ernic_access_ops other_ops = { .name = "other" };
	struct ernic_access other = { .ops = &other_ops };
	struct ernic_conf c;
	struct ernic_access *acc = NULL;
	struct ernic_model *m;
	struct ernic_dma d1, d2;
	char err[128], user[300];
	uint64_t bus;
	size_t i;

	conf_init(&c);
	assert_int_equal(ernic_access_open(&c, &acc, err, sizeof(err)), 0);
	assert_non_null(acc);
	m = ernic_access_model(acc);
	assert_non_null(m);
	assert_null(ernic_access_model(&other));
	assert_null(ernic_access_model(NULL));

	/* Registers go to the model, with its semantics; C_NUM_QP = 16. */
	ernic_wr(acc, ERNIC_QP(16, ERNIC_SQPI), 0x12345);
	assert_int_equal(ernic_rd(acc, ERNIC_QP(16, ERNIC_SQPI)), 0x2345);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_QP(16, ERNIC_SQPI)),
			 0x2345);
	ernic_wr(acc, ERNIC_QP(17, ERNIC_SQPI), 1);
	assert_int_equal(ernic_rd(acc, ERNIC_QP(17, ERNIC_SQPI)), 0);
	ernic_wr64(acc, ERNIC_QP(2, ERNIC_SQBA), ERNIC_QP(2, ERNIC_SQBAMSB),
		   UINT64_C(0x123456789ABCDEF0));
	assert_int_equal(ernic_rd(acc, ERNIC_QP(2, ERNIC_SQBA)), 0x9ABCDEE0);
	assert_int_equal(ernic_rd(acc, ERNIC_QP(2, ERNIC_SQBAMSB)), 0x12345678);

	/* DMA memory: zeroed, aligned on the bus, reachable by the IP. */
	assert_int_equal(acc->ops->dma_alloc(acc, 100, 256, &d1), 0);
	assert_int_equal(acc->ops->dma_alloc(acc, 5000, 1u << 16, &d2), 0);
	assert_int_equal(d1.len, 100);
	assert_int_equal(d1.bus % 256, 0);
	assert_int_equal(d2.bus % (1u << 16), 0);
	assert_true(d1.bus >> 32);
	for (i = 0; i < d2.len; i++)
		assert_int_equal(((uint8_t *)d2.va)[i], 0);
	assert_ptr_equal(ernic_model_bus_to_va(m, d1.bus, 100), d1.va);
	assert_ptr_equal(ernic_model_bus_to_va(m, d2.bus + 4999, 1),
			 (uint8_t *)d2.va + 4999);
	assert_null(ernic_model_bus_to_va(m, d2.bus + 4999, 2));
	assert_int_equal(acc->ops->dma_alloc(acc, 0, 0, &d1), EINVAL);
	assert_int_equal(acc->ops->dma_alloc(acc, 8, 24, &d1), EINVAL);
	bus = d1.bus;
	acc->ops->dma_free(acc, &d1);
	assert_null(d1.va);
	assert_null(ernic_model_bus_to_va(m, bus, 1));
	assert_non_null(ernic_model_bus_to_va(m, d2.bus, d2.len));

	/* A user buffer at an odd address maps byte for byte. */
	assert_int_equal(acc->ops->map_user(acc, user + 3, 200, &bus), 0);
	assert_ptr_equal(ernic_model_bus_to_va(m, bus, 200), user + 3);
	assert_null(ernic_model_bus_to_va(m, bus, 201));
	acc->ops->unmap_user(acc, bus, 200);
	assert_null(ernic_model_bus_to_va(m, bus, 1));

	/* Interrupt line through the backend */
	assert_int_equal(acc->ops->wait_irq(acc, 0), 0);
	ernic_wr(acc, ERNIC_INTEN, ERNIC_INT_WQE_COMPLETION);
	ernic_model_hw_write(m, ERNIC_INTSTS, ERNIC_INT_WQE_COMPLETION);
	assert_int_equal(acc->ops->wait_irq(acc, 1000), 1);

	acc->ops->dma_free(acc, &d2);
	acc->ops->close(acc);
}

static bool irq_pending(struct ernic_access *acc)
{
	struct pollfd p = { .fd = acc->ops->irq_fd(acc), .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/* coherent=0: the IP's bytes and the CPU's meet only through dma_sync,
 * for DMA blocks and mapped user buffers alike. */
static void test_noncoherent(void **state)
{
	struct ernic_conf c;
	struct ernic_access *acc;
	struct ernic_model *m;
	struct ernic_dma d;
	uint8_t *ip, user[256];
	char err[128];
	uint64_t bus;

	conf_init(&c);
	c.coherent = 0;
	assert_int_equal(ernic_access_open(&c, &acc, err, sizeof(err)), 0);
	m = ernic_access_model(acc);
	assert_non_null(m);
	assert_non_null(acc->ops->dma_sync);

	assert_int_equal(acc->ops->dma_alloc(acc, 128, 64, &d), 0);
	ip = ernic_model_bus_to_va(m, d.bus, 128);
	assert_non_null(ip);
	assert_ptr_not_equal(ip, d.va);
	memset(d.va, 0x11, 128);		/* the CPU writes: not seen */
	assert_int_equal(ip[0], 0);
	ernic_dma_sync(acc, (uint8_t *)d.va + 8, 8, ERNIC_DMA_TO_DEVICE);
	assert_int_equal(ip[7], 0);
	assert_int_equal(ip[8], 0x11);
	assert_int_equal(ip[15], 0x11);
	assert_int_equal(ip[16], 0);
	ip[100] = 0x22;				/* the IP writes: not seen */
	assert_int_equal(((uint8_t *)d.va)[100], 0x11);
	ernic_dma_sync(acc, (uint8_t *)d.va + 96, 32, ERNIC_DMA_FROM_DEVICE);
	assert_int_equal(((uint8_t *)d.va)[100], 0x22);
	acc->ops->dma_free(acc, &d);

	/* A user buffer: DDR starts as the CPU saw it at registration. */
	memset(user, 0x33, sizeof(user));
	assert_int_equal(acc->ops->map_user(acc, user, sizeof(user), &bus), 0);
	ip = ernic_model_bus_to_va(m, bus, sizeof(user));
	assert_non_null(ip);
	assert_int_equal(ip[255], 0x33);
	ip[0] = 0x44;
	assert_int_equal(user[0], 0x33);
	ernic_dma_sync(acc, user, 1, ERNIC_DMA_FROM_DEVICE);
	assert_int_equal(user[0], 0x44);
	acc->ops->unmap_user(acc, bus, sizeof(user));
	assert_null(ernic_model_bus_to_va(m, bus, 1));
	acc->ops->close(acc);
}

/* The interrupt fd behaves as UIO's: delivery masks until irq_enable,
 * which fires again while the line (INTSTS & INTEN) is still high. */
static void test_irq_fd(void **state)
{
	struct ernic_conf c;
	struct ernic_access *acc;
	struct ernic_model *m;
	char err[128];

	conf_init(&c);
	assert_int_equal(ernic_access_open(&c, &acc, err, sizeof(err)), 0);
	m = ernic_access_model(acc);
	assert_true(acc->ops->irq_fd(acc) >= 0);
	assert_false(irq_pending(acc));
	/* A cause that is not enabled does not raise the line. */
	ernic_model_hw_write(m, ERNIC_INTSTS, ERNIC_INT_FATAL);
	assert_false(irq_pending(acc));
	ernic_wr(acc, ERNIC_INTEN, ERNIC_INT_FATAL);
	assert_true(irq_pending(acc));
	/* Still high at unmask: delivered again. */
	assert_int_equal(acc->ops->irq_enable(acc), 0);
	assert_true(irq_pending(acc));
	/* Acknowledged (W1C), then unmasked: quiet. */
	ernic_wr(acc, ERNIC_INTSTS, ERNIC_INT_FATAL);
	assert_int_equal(ernic_rd(acc, ERNIC_INTSTS), 0);
	assert_int_equal(acc->ops->irq_enable(acc), 0);
	assert_false(irq_pending(acc));
	/* Masked after one delivery: a second cause waits for the unmask. */
	ernic_wr(acc, ERNIC_INTEN, ERNIC_INT_FATAL | ERNIC_INT_RQ_PKT_RX);
	ernic_model_hw_write(m, ERNIC_INTSTS, ERNIC_INT_RQ_PKT_RX);
	assert_true(irq_pending(acc));
	ernic_model_hw_write(m, ERNIC_INTSTS,
			     ERNIC_INT_RQ_PKT_RX | ERNIC_INT_FATAL);
	ernic_wr(acc, ERNIC_INTSTS, ERNIC_INT_RQ_PKT_RX);
	assert_int_equal(acc->ops->irq_enable(acc), 0);
	assert_true(irq_pending(acc));
	assert_int_equal(ernic_rd(acc, ERNIC_INTSTS), ERNIC_INT_FATAL);
	acc->ops->close(acc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_model_backend),
		cmocka_unit_test(test_irq_fd),
		cmocka_unit_test(test_noncoherent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
