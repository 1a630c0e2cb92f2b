// SPDX-License-Identifier: MIT
/*
 * The virtual FPGA's shared-memory register window (ernic_window.h):
 * plain stores by "software" reach the model with the Table 2-7 rules,
 * hardware state is published back, W1C works when software writes back
 * what it read, also when two processes clear bits of one word between
 * two passes, a cause raised after a pass applied the clear stays set
 * and interrupts again, a batch of writes is applied in PG332 order, and
 * a pass that overlaps software's writes applies none of them without
 * the ones software made before it.
 */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ernic_conf.h"
#include "ernic_hw.h"
#include "ernic_model.h"
#include "ernic_time.h"
#include "ernic_window.h"

struct fix {
	struct ernic_model *m;
	struct ernic_window *w;
	uint32_t *win;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct ernic_conf c;

	ernic_conf_defaults(&c);
	c.c_num_qp = 40;	/* CQINTSTS2 has QPs 33..40 and spare bits */
	f->m = ernic_model_create(&c);
	f->win = aligned_alloc(4096, ERNIC_REG_SPACE_SIZE);
	memset(f->win, 0xA5, ERNIC_REG_SPACE_SIZE);
	f->w = ernic_window_create(f->m, f->win);
	assert_non_null(f->w);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	ernic_window_destroy(f->w);
	ernic_model_destroy(f->m);
	free(f->win);
	free(f);
	return 0;
}

/* What software sees and does: volatile word access. */
static uint32_t sw_rd(struct fix *f, uint32_t off)
{
	return ((volatile uint32_t *)f->win)[off / 4];
}

/* A W1C write as the provider's UIO backend makes it on the window. */
static void sw_wr(struct fix *f, uint32_t off, uint32_t v)
{
	if (ERNIC_REG_IS_W1C(off))
		__atomic_fetch_and(&f->win[off / 4], ~v, __ATOMIC_RELEASE);
	else
		((volatile uint32_t *)f->win)[off / 4] = v;
}

static void test_rw_ro(void **state)
{
	struct fix *f = *state;
	const uint32_t qpconf2 = ERNIC_QP(2, ERNIC_QPCONF);

	/* Reset values, and reserved words read 0. */
	assert_int_equal(sw_rd(f, ERNIC_XRNIC_BUF_THRESHOLD_ROCE), 0x965A);
	assert_int_equal(sw_rd(f, 0x20004 + 0x1F0), 0);
	assert_int_equal(sw_rd(f, ERNIC_QP(41, ERNIC_QPCONF)), 0);
	assert_int_equal(ernic_window_sync(f->w), 0);

	/* RW: reaches the model; reserved bits drop on the way back. */
	sw_wr(f, qpconf2, 0xFFFFFFFE);
	assert_int_equal(ernic_window_sync(f->w), 1);
	assert_int_equal(ernic_model_reg_read(f->m, qpconf2),
			 0xFFFFFFFE & ernic_reg_lookup(qpconf2, 40, NULL)->mask);
	assert_int_equal(sw_rd(f, qpconf2), ernic_model_reg_read(f->m, qpconf2));
	assert_int_not_equal(sw_rd(f, qpconf2), 0xFFFFFFFE);

	/* RO: a software store has no effect and is undone. */
	ernic_model_hw_write(f->m, ERNIC_INSRRPKTCNT, 7);
	ernic_window_sync(f->w);
	assert_int_equal(sw_rd(f, ERNIC_INSRRPKTCNT), 7);
	sw_wr(f, ERNIC_INSRRPKTCNT, 3);
	ernic_window_sync(f->w);
	assert_int_equal(ernic_model_reg_read(f->m, ERNIC_INSRRPKTCNT), 7);
	assert_int_equal(sw_rd(f, ERNIC_INSRRPKTCNT), 7);

	/* Overridable pointers of a disabled QP: the pass cannot know
	 * whether XRNICADCONF[0] was set meanwhile, so they are taken. */
	ernic_model_hw_write(f->m, ERNIC_QP(2, ERNIC_CQHEAD), 7);
	ernic_window_sync(f->w);
	sw_wr(f, ERNIC_QP(2, ERNIC_CQHEAD), 3);
	ernic_window_sync(f->w);
	assert_int_equal(ernic_model_reg_read(f->m, ERNIC_QP(2, ERNIC_CQHEAD)), 3);
}

static void test_w1c(void **state)
{
	struct fix *f = *state;
	uint32_t v;

	ernic_model_hw_write(f->m, ERNIC_INTSTS,
			     ERNIC_INT_WQE_COMPLETION | ERNIC_INT_FATAL);
	ernic_window_sync(f->w);
	v = sw_rd(f, ERNIC_INTSTS);
	assert_int_equal(v & ERNIC_INT_ALL,
			 ERNIC_INT_WQE_COMPLETION | ERNIC_INT_FATAL);
	/* Software writes back exactly the causes it read. */
	sw_wr(f, ERNIC_INTSTS, v & ERNIC_INT_ALL);
	assert_int_equal(ernic_window_sync(f->w), 1);
	assert_int_equal(ernic_model_reg_read(f->m, ERNIC_INTSTS), 0);
	assert_int_equal(sw_rd(f, ERNIC_INTSTS) & ERNIC_INT_ALL, 0);
	/* Clearing one cause keeps the other. */
	ernic_model_hw_write(f->m, ERNIC_INTSTS,
			     ERNIC_INT_WQE_COMPLETION | ERNIC_INT_FATAL);
	ernic_window_sync(f->w);
	sw_wr(f, ERNIC_INTSTS, ERNIC_INT_FATAL);
	ernic_window_sync(f->w);
	assert_int_equal(sw_rd(f, ERNIC_INTSTS) & ERNIC_INT_ALL,
			 ERNIC_INT_WQE_COMPLETION);

	/* Per-QP word: QP 34 with its CQ interrupt on; software clears the
	 * bits of the QPs it services, which is all that is set. */
	sw_wr(f, ERNIC_QP(34, ERNIC_QPCONF), ERNIC_QPCONF_CQ_INT_EN);
	ernic_window_sync(f->w);
	ernic_model_hw_write(f->m, ERNIC_CQINTSTS(2), ERNIC_QPINT_BIT(34));
	ernic_window_sync(f->w);
	v = sw_rd(f, ERNIC_CQINTSTS(2));
	assert_true(v & ERNIC_QPINT_BIT(34));
	sw_wr(f, ERNIC_CQINTSTS(2), ERNIC_QPINT_BIT(34));
	assert_int_equal(ernic_window_sync(f->w), 1);
	assert_int_equal(ernic_model_reg_read(f->m, ERNIC_CQINTSTS(2)), 0);
	assert_false(sw_rd(f, ERNIC_CQINTSTS(2)) & ERNIC_QPINT_BIT(34));
}

/* Two processes service QPs 33 and 34, whose bits share CQINTSTS2, and
 * both clear between two passes: each still reads the other's bit, and
 * the pass applies both clears. */
static void test_w1c_two_writers(void **state)
{
	struct fix *f = *state;
	const uint32_t b33 = ERNIC_QPINT_BIT(33), b34 = ERNIC_QPINT_BIT(34);

	sw_wr(f, ERNIC_QP(33, ERNIC_QPCONF), ERNIC_QPCONF_CQ_INT_EN);
	sw_wr(f, ERNIC_QP(34, ERNIC_QPCONF), ERNIC_QPCONF_CQ_INT_EN);
	ernic_window_sync(f->w);
	ernic_model_hw_set(f->m, ERNIC_CQINTSTS(2), b33 | b34);
	assert_int_equal(sw_rd(f, ERNIC_CQINTSTS(2)), b33 | b34);

	sw_wr(f, ERNIC_CQINTSTS(2), sw_rd(f, ERNIC_CQINTSTS(2)) & b33);
	assert_int_equal(sw_rd(f, ERNIC_CQINTSTS(2)), b34);
	sw_wr(f, ERNIC_CQINTSTS(2), sw_rd(f, ERNIC_CQINTSTS(2)) & b34);
	assert_int_equal(ernic_window_sync(f->w), 1);
	assert_int_equal(ernic_model_reg_read(f->m, ERNIC_CQINTSTS(2)), 0);
	assert_int_equal(sw_rd(f, ERNIC_CQINTSTS(2)), 0);

	/* One clears while the engine raises the other: the raise stays. */
	ernic_model_hw_set(f->m, ERNIC_CQINTSTS(2), b33);
	sw_wr(f, ERNIC_CQINTSTS(2), b33);
	ernic_model_hw_set(f->m, ERNIC_CQINTSTS(2), b34);
	ernic_window_sync(f->w);
	assert_int_equal(ernic_model_reg_read(f->m, ERNIC_CQINTSTS(2)), b34);
	assert_int_equal(sw_rd(f, ERNIC_CQINTSTS(2)), b34);
}

/* Whether the model's interrupt fd has an event (ernic_model.h). */
static bool irq_pending(struct fix *f)
{
	struct pollfd p = { .fd = ernic_model_irq_fd(f->m), .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/* One round of the provider's handler for QP 34's completion: read the
 * causes and write them back, then the per-QP word. */
static void handler_clears(struct fix *f)
{
	uint32_t v = sw_rd(f, ERNIC_INTSTS) & ERNIC_INT_ALL;

	assert_int_equal(v, ERNIC_INT_WQE_COMPLETION);
	sw_wr(f, ERNIC_INTSTS, v);
	v = sw_rd(f, ERNIC_CQINTSTS(2));
	assert_true(v & ERNIC_QPINT_BIT(34));
	sw_wr(f, ERNIC_CQINTSTS(2), ERNIC_QPINT_BIT(34));
}

static void raise_qp34(struct fix *f)
{
	ernic_model_hw_set(f->m, ERNIC_CQINTSTS(2), ERNIC_QPINT_BIT(34));
	ernic_model_hw_set(f->m, ERNIC_INTSTS, ERNIC_INT_WQE_COMPLETION);
}

/*
 * The window's writes are posted: a clear takes effect at the pass, and
 * a cause raised before it (the bit already set) goes with it, as on a
 * bus where the write arrives after the cause. That is why the handler
 * flushes (a pass on demand) before it services: a cause raised after
 * the pass stays set, in the model and in the window, and interrupts
 * again once the handler unmasks.
 */
static void test_w1c_raised_again(void **state)
{
	struct fix *f = *state;

	sw_wr(f, ERNIC_INTEN, ERNIC_INT_WQE_COMPLETION);
	sw_wr(f, ERNIC_QP(34, ERNIC_QPCONF), ERNIC_QPCONF_CQ_INT_EN);
	ernic_window_sync(f->w);
	assert_false(irq_pending(f));
	raise_qp34(f);
	assert_true(irq_pending(f));	/* delivered: masked from now on */

	/* Raised again before the pass: cleared with the first. */
	handler_clears(f);
	raise_qp34(f);
	assert_int_equal(ernic_window_sync(f->w), 2);
	assert_int_equal(ernic_model_reg_read(f->m, ERNIC_INTSTS), 0);
	assert_int_equal(ernic_model_reg_read(f->m, ERNIC_CQINTSTS(2)), 0);
	ernic_model_irq_enable(f->m);
	assert_false(irq_pending(f));

	/* Raised again after the pass: set, seen, and delivered again. */
	raise_qp34(f);
	assert_true(irq_pending(f));
	handler_clears(f);
	assert_int_equal(ernic_window_sync(f->w), 2);	/* the flush */
	assert_int_equal(ernic_model_reg_read(f->m, ERNIC_INTSTS), 0);
	raise_qp34(f);
	assert_int_equal(ernic_model_reg_read(f->m, ERNIC_INTSTS),
			 ERNIC_INT_WQE_COMPLETION);
	assert_int_equal(ernic_model_reg_read(f->m, ERNIC_CQINTSTS(2)),
			 ERNIC_QPINT_BIT(34));
	assert_int_equal(sw_rd(f, ERNIC_INTSTS) & ERNIC_INT_ALL,
			 ERNIC_INT_WQE_COMPLETION);
	assert_true(sw_rd(f, ERNIC_CQINTSTS(2)) & ERNIC_QPINT_BIT(34));
	ernic_model_irq_enable(f->m);	/* consumes the first, fires again */
	assert_true(irq_pending(f));
}

/* PG332 "QP Deletion" written in one go between two passes: override
 * on, QP disabled, pointers zeroed, override off. */
static void test_override_batch(void **state)
{
	struct fix *f = *state;
	const uint32_t qpconf = ERNIC_QP(3, ERNIC_QPCONF);
	const uint32_t ovr = ERNIC_XRNICADCONF_SW_OVERRIDE |
			     ERNIC_FIELD_PREP(ERNIC_XRNICADCONF_SW_OVERRIDE_QP, 3);

	sw_wr(f, qpconf, ERNIC_QPCONF_QP_EN);
	ernic_window_sync(f->w);
	ernic_model_hw_write(f->m, ERNIC_QP(3, ERNIC_CQHEAD), 9);
	ernic_window_sync(f->w);

	/* Pointers of an enabled QP: a reset the pass did not see whole
	 * (override and disable come and gone); the QP stays enabled. */
	sw_wr(f, ERNIC_QP(3, ERNIC_CQHEAD), 0);
	ernic_window_sync(f->w);
	assert_int_equal(sw_rd(f, ERNIC_QP(3, ERNIC_CQHEAD)), 0);
	assert_true(ernic_model_reg_read(f->m, qpconf) & ERNIC_QPCONF_QP_EN);
	ernic_model_hw_write(f->m, ERNIC_QP(3, ERNIC_CQHEAD), 9);

	sw_wr(f, ERNIC_XRNICADCONF, ovr);
	sw_wr(f, qpconf, 0);
	sw_wr(f, ERNIC_QP(3, ERNIC_CQHEAD), 0);
	sw_wr(f, qpconf, ERNIC_QPCONF_QP_UNDER_RECOVERY);
	sw_wr(f, ERNIC_XRNICADCONF, 0);
	ernic_window_sync(f->w);
	assert_int_equal(ernic_model_reg_read(f->m, ERNIC_QP(3, ERNIC_CQHEAD)), 0);
	assert_int_equal(ernic_model_reg_read(f->m, qpconf),
			 ERNIC_QPCONF_QP_UNDER_RECOVERY);

	/* Reset and re-enabled within one pass: still applied. */
	ernic_model_hw_write(f->m, ERNIC_QP(3, ERNIC_CQHEAD), 4);
	sw_wr(f, qpconf, ERNIC_QPCONF_QP_EN);
	ernic_window_sync(f->w);
	sw_wr(f, qpconf, 0);
	sw_wr(f, ERNIC_QP(3, ERNIC_CQHEAD), 0);
	sw_wr(f, qpconf, ERNIC_QPCONF_QP_EN | ERNIC_QPCONF_CQE_WRITE_EN);
	ernic_window_sync(f->w);
	assert_int_equal(ernic_model_reg_read(f->m, ERNIC_QP(3, ERNIC_CQHEAD)), 0);
	assert_int_equal(ernic_model_reg_read(f->m, qpconf),
			 ERNIC_QPCONF_QP_EN | ERNIC_QPCONF_CQE_WRITE_EN);
}

/* A BTH (+ RETH) for QP qpn, R_Key key. */
static size_t pkt(uint8_t *b, uint8_t opcode, uint32_t qpn, uint32_t key)
{
	memset(b, 0, 28);
	b[0] = opcode;
	b[5] = (uint8_t)(qpn >> 16);
	b[6] = (uint8_t)(qpn >> 8);
	b[7] = (uint8_t)qpn;
	b[12 + 8] = (uint8_t)(key >> 24);
	b[12 + 9] = (uint8_t)(key >> 16);
	b[12 + 10] = (uint8_t)(key >> 8);
	b[12 + 11] = (uint8_t)key;
	return 28;
}

/* Before a received packet, writes it depends on are applied at once
 * (the QP's block, the global block, its R_Key's PDT entry); others
 * wait for the poller's pass. */
static void test_before_rx(void **state)
{
	struct fix *f = *state;
	const uint32_t lst2 = ERNIC_QP(2, ERNIC_LSTRQREQ);
	const uint32_t key5 = ERNIC_PDT(5, ERNIC_BUFRKEY);
	uint8_t b[28];

	/* Nothing written: nothing to do. */
	assert_int_equal(ernic_window_before_rx(f->w, b, pkt(b, 0x04, 2, 0)), 0);

	sw_wr(f, lst2, 0x040000FF);
	/* A SEND to QP 3 does not read QP 2; a short packet reads nothing. */
	assert_int_equal(ernic_window_before_rx(f->w, b, pkt(b, 0x04, 3, 0)), 0);
	assert_int_equal(ernic_window_before_rx(f->w, b, 11), 0);
	assert_int_equal(ernic_model_reg_read(f->m, lst2), 0);
	/* One to QP 2 does: the whole batch goes in, in order. */
	sw_wr(f, ERNIC_QP(7, ERNIC_SQPSN), 0x100);
	assert_int_equal(ernic_window_before_rx(f->w, b, pkt(b, 0x04, 2, 0)), 2);
	assert_int_equal(ernic_model_reg_read(f->m, lst2), 0x040000FF);
	assert_int_equal(ernic_model_reg_read(f->m, ERNIC_QP(7, ERNIC_SQPSN)),
			 0x100);

	/* An R_Key's PDT entry: a WRITE (RETH) to QP 3 with key slot 5. */
	sw_wr(f, key5, 0x42);
	assert_int_equal(ernic_window_before_rx(f->w, b,
						pkt(b, 0x04, 3, 0x4205)), 0);
	assert_int_equal(ernic_window_before_rx(f->w, b,
						pkt(b, 0x0A, 3, 0x4206)), 0);
	assert_int_equal(ernic_window_before_rx(f->w, b,
						pkt(b, 0x0A, 3, 0x4205)), 1);
	assert_int_equal(ernic_model_reg_read(f->m, key5), 0x42);

	/* The global block: the IP's own enable. */
	sw_wr(f, ERNIC_XRNICCONF, ERNIC_XRNICCONF_EN);
	assert_int_equal(ernic_window_before_rx(f->w, b, pkt(b, 0x11, 9, 0)), 1);
	assert_true(ernic_model_reg_read(f->m, ERNIC_XRNICCONF) &
		    ERNIC_XRNICCONF_EN);
}

/* Software for test_no_torn_pass: bursts of three writes, each a word
 * at a higher offset than the one before (so that a pass reading words
 * in offset order and meeting the burst halfway sees the later writes
 * only), 50 us apart. */
struct burster {
	struct fix *f;
	uint32_t lo, hi, db, n;
	atomic_bool done;
};

static void *burster_main(void *arg)
{
	struct burster *b = arg;

	for (uint32_t j = 1; j <= b->n; j++) {
		uint64_t until = ernic_mono_ns() + 50000;

		__atomic_store_n(&b->f->win[b->lo / 4], j, __ATOMIC_RELEASE);
		__atomic_store_n(&b->f->win[b->hi / 4], j, __ATOMIC_RELEASE);
		__atomic_store_n(&b->f->win[b->db / 4], j, __ATOMIC_RELEASE);
		while (ernic_mono_ns() < until)
			;
	}
	atomic_store(&b->done, true);
	return NULL;
}

/* Passes run while software writes: after each, the model has a prefix
 * of software's writes (QP 2's RQWPTRDBADD, then QP 40's IPDESADDR1,
 * then QP 40's SQPI doorbell, each burst j writing j), never a later
 * word's value without the earlier words'. A pass that reads every
 * word once in offset order fails this within a few bursts. */
static void test_no_torn_pass(void **state)
{
	struct fix *f = *state;
	struct burster b = {
		.f = f,
		.lo = ERNIC_QP(2, ERNIC_RQWPTRDBADD),
		.hi = ERNIC_QP(40, ERNIC_IPDESADDR1),
		.db = ERNIC_QP(40, ERNIC_SQPI),
		.n = 2000,
	};
	pthread_t t;
	uint32_t passes = 0, met = 0, lo = 0, hi = 0, db = 0;
	bool torn = false;

	atomic_init(&b.done, false);
	assert_int_equal(pthread_create(&t, NULL, burster_main, &b), 0);
	while (!torn && !atomic_load(&b.done)) {
		met += ernic_window_sync(f->w) != 0;
		passes++;
		lo = ernic_model_reg_read(f->m, b.lo);
		hi = ernic_model_reg_read(f->m, b.hi);
		db = ernic_model_reg_read(f->m, b.db);
		torn = lo < hi || hi < db;
	}
	/* (the writer is done with the window before the test ends) */
	assert_int_equal(pthread_join(t, NULL), 0);
	if (torn)
		fail_msg("pass %u: burst %u's first word, %u's second and "
			 "%u's doorbell", passes, lo, hi, db);
	ernic_window_sync(f->w);
	assert_int_equal(ernic_model_reg_read(f->m, b.lo), b.n);
	assert_int_equal(ernic_model_reg_read(f->m, b.hi), b.n);
	assert_int_equal(ernic_model_reg_read(f->m, b.db), b.n);
	/* passes ran among the bursts, not only after them */
	assert_true(met >= 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rw_ro, setup, teardown),
		cmocka_unit_test_setup_teardown(test_w1c, setup, teardown),
		cmocka_unit_test_setup_teardown(test_w1c_two_writers, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_w1c_raised_again, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_override_batch, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_before_rx, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_torn_pass, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("window", tests, NULL, NULL);
}
