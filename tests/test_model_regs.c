// SPDX-License-Identifier: MIT
/*
 * ERNIC model register file and bus address space against PG332 v3.1
 * Table 2-7: decoding, reset values, access semantics, SW override,
 * interrupt line, and bus-address translation bounds.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ernic_conf.h"
#include "ernic_hw.h"
#include "ernic_model.h"

#define NQP 8u
#define FULL 0xFFFFFFFFu

static struct ernic_model *model_new(uint32_t c_num_qp)
{
	struct ernic_conf c;
	struct ernic_model *m;

	memset(&c, 0, sizeof(c));
	c.backend = ERNIC_BACKEND_SW;
	c.c_num_qp = c_num_qp;
	c.c_m_axi_addr_width = 64;
	m = ernic_model_create(&c);
	assert_non_null(m);
	return m;
}

static const struct ernic_reg_desc *row(const char *name)
{
	const struct ernic_reg_desc *d;

	for (d = ernic_reg_table; d->name; d++)
		if (!strcmp(d->name, name))
			return d;
	fail_msg("no row %s", name);
	return NULL;
}

static uint32_t inst_off(const struct ernic_reg_desc *d, uint32_t i)
{
	switch (d->scope) {
	case ERNIC_SCOPE_PDT:
		return ERNIC_PDT(i, d->off);
	case ERNIC_SCOPE_QP:
		return ERNIC_QP(i, d->off);
	case ERNIC_SCOPE_GLOBAL:
		break;
	}
	return d->off;
}

/* Instances exercised per row: PD slots 0/255, QPs first/2/last. */
static size_t instances(const struct ernic_reg_desc *d, uint32_t nqp,
			uint32_t out[3])
{
	size_t n;

	switch (d->scope) {
	case ERNIC_SCOPE_PDT:
		out[0] = 0;
		out[1] = ERNIC_PDT_ENTRIES - 1;
		return 2;
	case ERNIC_SCOPE_QP:	/* distinct: first_qp may be 2 */
		n = 0;
		if (d->first_qp < 2)
			out[n++] = d->first_qp;
		out[n++] = 2;
		out[n++] = nqp;
		return n;
	case ERNIC_SCOPE_GLOBAL:
		break;
	}
	out[0] = 0;
	return 1;
}

/* ---- Table contents ---- */

static void test_table_shape(void **state)
{
	const struct ernic_reg_desc *d, *e;
	size_t n = 0, npdt = 0, nglb = 0, nqp = 0;

	for (d = ernic_reg_table; d->name; d++) {
		n++;
		npdt += d->scope == ERNIC_SCOPE_PDT;
		nglb += d->scope == ERNIC_SCOPE_GLOBAL;
		nqp += d->scope == ERNIC_SCOPE_QP;
		assert_int_equal(d->off & 3, 0);
		assert_int_equal(d->reset & ~d->mask, 0);
		if (d->scope == ERNIC_SCOPE_QP)
			assert_true(d->first_qp == 1 || d->first_qp == 2);
		for (e = d + 1; e->name; e++) {
			assert_string_not_equal(d->name, e->name);
			assert_false(d->scope == e->scope && d->off == e->off);
		}
	}
	/* Table 2-7: 8 PDT, 32 config + 19 status + INTEN/INTSTS + 3x8
	 * bitmap globals, 36 per-QP registers. */
	assert_int_equal(npdt, 8);
	assert_int_equal(nglb, 32 + 19 + 2 + 24);
	assert_int_equal(nqp, 36);
	assert_int_equal(n, npdt + nglb + nqp);
}

static void test_table_spec_values(void **state)
{
	static const struct {
		const char *name;
		uint32_t mask;
	} masks[] = {
		{ "PDPDNUM", 0x00FFFFFF }, { "BUFRKEY", 0x000000FF },
		{ "ACCESSDESC", 0xFFFF000F }, { "WRRDBUFLEN", FULL },
		{ "XRNICCONF", 0xFFFFFF39 }, { "XRNICADCONF", 0xFF0F0005 },
		{ "XRNIC_PAUSE_CONF", 0x00001FF3 }, { "MACXADDMSB", 0xFFFF },
		{ "ERRBUFWPTR", 0xFFFF }, { "IPKTERRQWPTR", 0xFFFF },
		{ "CON_IO_CONF", 0x80FF0000 }, { "WQEPROCSTS", 0xFFFFF077 },
		{ "QPMSTS", 0xFFFF0003 }, { "INNCKPKTSTS", 0xFFFF00FF },
		{ "RESPHNDSTS", 0x00033FFF }, { "INTEN", 0x1FB },
		{ "INTSTS", 0x1FB }, { "RQINTSTS8", FULL },
		{ "QPCONF", 0xFFFF07FD }, { "QPADVCONF", 0xFFFFFF3F },
		{ "RQBA", 0xFFFFFF00 }, { "SQBA", 0xFFFFFFE0 },
		{ "CQBA", 0xFFFFFFE0 }, { "QDEPTH", FULL },
		{ "CQHEAD", 0xFFFF }, { "SQPSN", 0x00FFFFFF },
		{ "LSTRQREQ", FULL }, { "TIMEOUTCONF", 0x001F3F3F },
		{ "MACDESADDMSB", 0xFFFF }, { "STATQP", 0x777F0E1F },
		{ "STATRQBUFCA", 0xFFFFFF00 }, { "PD", 0x00FFFFFF },
		{ "RQBAMSB", FULL }, { "SQBAMSB", FULL },
		{ "STATRQBUFCAMSB", FULL },
	};
	static const char *const qp1_missing[] = {
		"QPADVCONF", "SQPSN", "LSTRQREQ", "TIMEOUTCONF", "STATSSN",
		"STATMSN", "STATCURSQPTR", "STATRESPSN", "STATRQBUFCA",
		"STATRQBUFCAMSB", "STATWQE", "STATRQPIDB", "PD",
	};
	static const char *const swovr[] = {
		"CQHEAD", "STATCURSQPTR", "STATRQPIDB", "STATMSN",
		"STATRQBUFCA", "STATRQBUFCAMSB", "STATQP",
	};
	const struct ernic_reg_desc *d;
	size_t i, n2 = 0, nsw = 0, nw1c = 0, nreset = 0;

	for (i = 0; i < sizeof(masks) / sizeof(masks[0]); i++)
		assert_int_equal(row(masks[i].name)->mask, masks[i].mask);
	for (i = 0; i < sizeof(qp1_missing) / sizeof(qp1_missing[0]); i++)
		assert_int_equal(row(qp1_missing[i])->first_qp, 2);
	for (i = 0; i < sizeof(swovr) / sizeof(swovr[0]); i++)
		assert_int_equal(row(swovr[i])->access, ERNIC_REG_RO_SWOVR);
	for (d = ernic_reg_table; d->name; d++) {
		n2 += d->scope == ERNIC_SCOPE_QP && d->first_qp == 2;
		nsw += d->access == ERNIC_REG_RO_SWOVR;
		nreset += d->reset != 0;
		if (d->access == ERNIC_REG_W1C) {
			nw1c++;
			assert_true(!strcmp(d->name, "INTSTS") ||
				    !strncmp(d->name, "RQINTSTS", 8) ||
				    !strncmp(d->name, "CQINTSTS", 8));
		}
	}
	assert_int_equal(n2, sizeof(qp1_missing) / sizeof(qp1_missing[0]));
	assert_int_equal(nsw, sizeof(swovr) / sizeof(swovr[0]));
	assert_int_equal(nw1c, 17);
	/* ERNIC_REG_IS_W1C, which the provider's virtual-FPGA path relies
	 * on, names exactly the table's W1C words. */
	for (uint32_t off = 0; off < ERNIC_REG_SPACE_SIZE; off += 4) {
		d = ernic_reg_lookup(off, ERNIC_C_NUM_QP_MAX, NULL);
		assert_int_equal(ERNIC_REG_IS_W1C(off),
				 d && d->access == ERNIC_REG_W1C);
	}
	/* Non-zero resets: the two thresholds, PAUSE_CONF, and the model
	 * choices CON_IO_CONF, RESPHNDSTS, STATQP. */
	assert_int_equal(nreset, 6);
	assert_int_equal(row("XRNIC_BUF_THRESHOLD_ROCE")->reset, 0x965A);
	assert_int_equal(row("XRNIC_BUF_THRESHOLD_NON_ROCE")->reset, 0x965A);
	assert_int_equal(row("XRNIC_PAUSE_CONF")->reset, 0x800);
	assert_int_equal(row("CNPSCHDSTS5REG")->off, 0x201E0);
	assert_int_equal(row("CQINTSTS1")->off, 0x201B0);
	assert_int_equal(row("STATRQBUFCAMSB")->off, 0xD8);
	assert_int_equal(row("ERRBUFWPTR")->access, ERNIC_REG_RO);
	assert_int_equal(row("SQPI")->access, ERNIC_REG_RW);
}

/* ---- Decoding ---- */

static void check_reachable(uint32_t nqp)
{
	const struct ernic_reg_desc *d;
	uint32_t inst[3], idx, off;
	size_t k, n;

	for (d = ernic_reg_table; d->name; d++) {
		n = instances(d, nqp, inst);
		for (k = 0; k < n; k++) {
			idx = 0xdead;
			off = inst_off(d, inst[k]);
			assert_ptr_equal(ernic_reg_lookup(off, nqp, &idx), d);
			assert_int_equal(idx, inst[k]);
		}
		if (d->scope != ERNIC_SCOPE_QP)
			continue;
		if (d->first_qp == 2)
			assert_null(ernic_reg_lookup(inst_off(d, 1), nqp,
						     &idx));
		else
			assert_ptr_equal(ernic_reg_lookup(inst_off(d, 1), nqp,
							  &idx), d);
		assert_null(ernic_reg_lookup(inst_off(d, nqp + 1), nqp, &idx));
	}
}

static void test_lookup_reachable(void **state)
{
	check_reachable(NQP);
	check_reachable(ERNIC_C_NUM_QP_MAX);
	check_reachable(100);
}

static void test_lookup_reserved(void **state)
{
	static const uint32_t glb_gaps[] = {
		0x2001C, 0x20030, 0x2005C, 0x20074, 0x20098, 0x2009C,
		0x200C0, 0x200FC, 0x20128, 0x20144, 0x20170, 0x20188,
		0x2018C, 0x201F0, 0x201FC,
	};
	static const uint32_t qp_gaps[] = {
		0x58, 0x5C, 0x70, 0x7C, 0xA0, 0xAC, 0xB4, 0xBC, 0xC4,
		0xCC, 0xD4, 0xDC, 0xFC,
	};
	uint32_t off, n, i, words[3] = { 0, 0, 0 };

	for (i = 0; i < sizeof(glb_gaps) / sizeof(glb_gaps[0]); i++)
		assert_null(ernic_reg_lookup(glb_gaps[i], NQP, NULL));
	for (i = 0; i < sizeof(qp_gaps) / sizeof(qp_gaps[0]); i++)
		assert_null(ernic_reg_lookup(ERNIC_QP(2, qp_gaps[i]), NQP,
					     NULL));
	/* PD slot words 0x20..0xFC, the hole 0x10000..0x1FFFF */
	assert_null(ernic_reg_lookup(ERNIC_PDT(0, 0x20), NQP, NULL));
	assert_null(ernic_reg_lookup(ERNIC_PDT(255, 0xFC), NQP, NULL));
	assert_null(ernic_reg_lookup(0x10000, NQP, NULL));
	assert_null(ernic_reg_lookup(0x1FFFC, NQP, NULL));
	/* Unaligned and out of window */
	assert_null(ernic_reg_lookup(ERNIC_XRNICCONF + 1, NQP, NULL));
	assert_null(ernic_reg_lookup(ERNIC_QP(2, ERNIC_QPCONF) + 2, NQP,
				     NULL));
	assert_null(ernic_reg_lookup(ERNIC_PDT(3, ERNIC_BUFRKEY) + 3, NQP,
				     NULL));
	assert_null(ernic_reg_lookup(ERNIC_REG_SPACE_SIZE, 255, NULL));
	assert_null(ernic_reg_lookup(0xFFFFFFFC, 255, NULL));
	/* QP 256 would start at 0x30200: never a QP, even if asked. */
	assert_null(ernic_reg_lookup(ERNIC_QP(256, ERNIC_QPCONF), 300, NULL));

	/* Exhaustive count: nothing outside the table decodes. */
	for (off = 0; off < ERNIC_REG_SPACE_SIZE; off += 4) {
		const struct ernic_reg_desc *d = ernic_reg_lookup(off, NQP,
								  NULL);

		if (d)
			words[d->scope]++;
	}
	assert_int_equal(words[ERNIC_SCOPE_PDT], 8 * ERNIC_PDT_ENTRIES);
	assert_int_equal(words[ERNIC_SCOPE_GLOBAL], 77);
	n = 36 * NQP - 13;	/* 13 registers absent for QP1 */
	assert_int_equal(words[ERNIC_SCOPE_QP], n);
}

/* ---- Semantics ---- */

static void test_create_validates(void **state)
{
	struct ernic_conf c;
	struct ernic_model *m;
	static const uint32_t bad[] = { 0, 7, 256, 1000 };
	size_t i;

	errno = 0;
	assert_null(ernic_model_create(NULL));
	assert_int_equal(errno, EINVAL);
	memset(&c, 0, sizeof(c));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c.c_num_qp = bad[i];
		errno = 0;
		assert_null(ernic_model_create(&c));
		assert_int_equal(errno, EINVAL);
	}
	m = model_new(ERNIC_C_NUM_QP_MIN);
	ernic_model_destroy(m);
	m = model_new(ERNIC_C_NUM_QP_MAX);
	ernic_model_destroy(m);
}

static void test_reset_values(void **state)
{
	struct ernic_model *m = model_new(NQP);
	const struct ernic_reg_desc *d;
	uint32_t inst[3], i, k, n;

	assert_int_equal(ernic_model_reg_read(m, ERNIC_XRNIC_BUF_THRESHOLD_ROCE),
			 0x965A);
	assert_int_equal(ernic_model_reg_read(m,
			 ERNIC_XRNIC_BUF_THRESHOLD_NON_ROCE), 0x965A);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_XRNIC_PAUSE_CONF), 0x800);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_CON_IO_CONF),
			 ERNIC_CON_IO_CONF_READY);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_RESPHNDSTS),
			 ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN);
	for (i = 1; i <= NQP; i++)
		assert_int_equal(ernic_model_reg_read(m,
				 ERNIC_QP(i, ERNIC_STATQP)),
				 ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY);
	for (d = ernic_reg_table; d->name; d++) {
		n = instances(d, NQP, inst);
		for (k = 0; k < n; k++)
			assert_int_equal(ernic_model_reg_read(m,
					 inst_off(d, inst[k])), d->reset);
	}
	/* Nonexistent registers read 0 even after a hardware write. */
	ernic_model_hw_write(m, ERNIC_QP(1, ERNIC_SQPSN), 0x123);
	ernic_model_hw_write(m, ERNIC_QP(NQP + 1, ERNIC_QPCONF), 0x1);
	ernic_model_hw_write(m, 0x2001C, 0x1);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_QP(1, ERNIC_SQPSN)), 0);
	assert_int_equal(ernic_model_reg_read(m,
			 ERNIC_QP(NQP + 1, ERNIC_QPCONF)), 0);
	assert_int_equal(ernic_model_reg_read(m, 0x2001C), 0);
	ernic_model_destroy(m);
}

static void test_rw_masking(void **state)
{
	struct ernic_model *m = model_new(NQP);
	const struct ernic_reg_desc *d;
	uint32_t inst[3], k, n, off, keep;

	for (d = ernic_reg_table; d->name; d++) {
		if (d->access != ERNIC_REG_RW)
			continue;
		/* CON_IO_CONF[31] is read-only: stays ready. */
		keep = d->scope == ERNIC_SCOPE_GLOBAL &&
		       d->off == ERNIC_CON_IO_CONF ? ERNIC_CON_IO_CONF_READY : 0;
		n = instances(d, NQP, inst);
		for (k = 0; k < n; k++) {
			off = inst_off(d, inst[k]);
			ernic_model_reg_write(m, off, FULL);
			assert_int_equal(ernic_model_reg_read(m, off), d->mask);
			ernic_model_reg_write(m, off, 0);
			assert_int_equal(ernic_model_reg_read(m, off), keep);
		}
	}
	/* Instances are separate words. */
	ernic_model_reg_write(m, ERNIC_QP(3, ERNIC_SQPI), 0x42);
	ernic_model_reg_write(m, ERNIC_PDT(7, ERNIC_BUFRKEY), 0x17);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_QP(3, ERNIC_SQPI)), 0x42);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_QP(4, ERNIC_SQPI)), 0);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_QP(2, ERNIC_SQPI)), 0);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_PDT(7, ERNIC_BUFRKEY)),
			 0x17);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_PDT(6, ERNIC_BUFRKEY)),
			 0);
	/* Reserved words ignore writes. */
	ernic_model_reg_write(m, ERNIC_PDT(0, 0x20), FULL);
	ernic_model_reg_write(m, ERNIC_QP(2, 0xFC), FULL);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_PDT(0, 0x20)), 0);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_QP(2, 0xFC)), 0);
	ernic_model_destroy(m);
}

static void test_ro(void **state)
{
	struct ernic_model *m = model_new(NQP);
	const struct ernic_reg_desc *d;
	uint32_t inst[3], k, n, off;

	/* SW override must not open plain RO registers. */
	ernic_model_reg_write(m, ERNIC_XRNICADCONF,
			      ERNIC_XRNICADCONF_SW_OVERRIDE);
	for (d = ernic_reg_table; d->name; d++) {
		if (d->access != ERNIC_REG_RO)
			continue;
		n = instances(d, NQP, inst);
		for (k = 0; k < n; k++) {
			off = inst_off(d, inst[k]);
			ernic_model_reg_write(m, off, FULL);
			assert_int_equal(ernic_model_reg_read(m, off), d->reset);
			ernic_model_hw_write(m, off, FULL);
			assert_int_equal(ernic_model_reg_read(m, off), d->mask);
			ernic_model_reg_write(m, off, 0);
			assert_int_equal(ernic_model_reg_read(m, off), d->mask);
		}
	}
	ernic_model_destroy(m);
}

static void test_w1c(void **state)
{
	struct ernic_model *m = model_new(NQP);
	uint32_t n;

	ernic_model_hw_write(m, ERNIC_INTSTS, FULL);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_INTSTS), ERNIC_INT_ALL);
	ernic_model_reg_write(m, ERNIC_INTSTS,
			      ERNIC_INT_WQE_COMPLETION | ERNIC_INT_PKT_VALID_ERR);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_INTSTS),
			 ERNIC_INT_ALL & ~(ERNIC_INT_WQE_COMPLETION |
					   ERNIC_INT_PKT_VALID_ERR));
	ernic_model_reg_write(m, ERNIC_INTSTS, 0);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_INTSTS),
			 ERNIC_INT_ALL & ~(ERNIC_INT_WQE_COMPLETION |
					   ERNIC_INT_PKT_VALID_ERR));
	ernic_model_reg_write(m, ERNIC_INTSTS, FULL);
	assert_int_equal(ernic_model_reg_read(m, ERNIC_INTSTS), 0);

	for (n = 1; n <= 8; n++) {
		ernic_model_hw_write(m, ERNIC_RQINTSTS(n), 0xA5A5A5A5);
		ernic_model_hw_write(m, ERNIC_CQINTSTS(n), 0x5A5A5A5A);
		ernic_model_reg_write(m, ERNIC_RQINTSTS(n), 0x0000FFFF);
		ernic_model_reg_write(m, ERNIC_CQINTSTS(n), 0xFFFF0000);
		assert_int_equal(ernic_model_reg_read(m, ERNIC_RQINTSTS(n)),
				 0xA5A50000);
		assert_int_equal(ernic_model_reg_read(m, ERNIC_CQINTSTS(n)),
				 0x00005A5A);
	}
	ernic_model_destroy(m);
}

static void test_sw_override(void **state)
{
	struct ernic_model *m = model_new(NQP);
	const uint32_t h3 = ERNIC_QP(3, ERNIC_CQHEAD);
	const uint32_t h5 = ERNIC_QP(5, ERNIC_CQHEAD);
	const uint32_t q5 = ERNIC_QP(5, ERNIC_STATQP);
	const uint32_t rw = ERNIC_STATQP_NAK_SYNDROME |
			    ERNIC_STATQP_RETRY_COUNT | ERNIC_STATQP_RNR_NAK_COUNT;

	ernic_model_reg_write(m, h3, 0x1234);
	assert_int_equal(ernic_model_reg_read(m, h3), 0);
	ernic_model_hw_write(m, h3, 0x55);
	assert_int_equal(ernic_model_reg_read(m, h3), 0x55);
	ernic_model_reg_write(m, h3, 0);
	assert_int_equal(ernic_model_reg_read(m, h3), 0x55);

	/* Override for all QPs */
	ernic_model_reg_write(m, ERNIC_XRNICADCONF,
			      ERNIC_XRNICADCONF_SW_OVERRIDE);
	ernic_model_reg_write(m, h3, 0xABCD1234);
	assert_int_equal(ernic_model_reg_read(m, h3), 0x1234);
	ernic_model_reg_write(m, ERNIC_QP(NQP, ERNIC_STATRQBUFCAMSB), 0x9);
	assert_int_equal(ernic_model_reg_read(m,
			 ERNIC_QP(NQP, ERNIC_STATRQBUFCAMSB)), 0x9);

	/* Override for QP5 only */
	ernic_model_reg_write(m, ERNIC_XRNICADCONF,
			      ERNIC_XRNICADCONF_SW_OVERRIDE |
			      ERNIC_FIELD_PREP(ERNIC_XRNICADCONF_SW_OVERRIDE_QP, 5));
	ernic_model_reg_write(m, h3, 0x7);
	ernic_model_reg_write(m, h5, 0x7);
	assert_int_equal(ernic_model_reg_read(m, h3), 0x1234);
	assert_int_equal(ernic_model_reg_read(m, h5), 0x7);
	/* STATQP: only the "(Read/Write)" fields take the write. */
	ernic_model_reg_write(m, q5, FULL);
	assert_int_equal(ernic_model_reg_read(m, q5), ERNIC_STATQP_SQ_EMPTY |
			 ERNIC_STATQP_OSQ_EMPTY | rw);
	ernic_model_reg_write(m, q5, 0);
	assert_int_equal(ernic_model_reg_read(m, q5), ERNIC_STATQP_SQ_EMPTY |
			 ERNIC_STATQP_OSQ_EMPTY);

	/* QP number without the enable bit: no override */
	ernic_model_reg_write(m, ERNIC_XRNICADCONF,
			      ERNIC_FIELD_PREP(ERNIC_XRNICADCONF_SW_OVERRIDE_QP, 5));
	ernic_model_reg_write(m, h5, 0x8);
	assert_int_equal(ernic_model_reg_read(m, h5), 0x7);
	ernic_model_reg_write(m, q5, FULL);
	assert_int_equal(ernic_model_reg_read(m, q5), ERNIC_STATQP_SQ_EMPTY |
			 ERNIC_STATQP_OSQ_EMPTY);
	ernic_model_destroy(m);
}

struct irq_arg {
	struct ernic_model *m;
	uint32_t bits;
};

static void *irq_raiser(void *p)
{
	struct irq_arg *a = p;

	usleep(50 * 1000);
	ernic_model_hw_write(a->m, ERNIC_INTSTS, a->bits);
	return NULL;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_irq_line(void **state)
{
	struct ernic_model *m = model_new(NQP);
	struct irq_arg a = { m, ERNIC_INT_RQ_PKT_RX };
	pthread_t t;
	double t0;

	ernic_model_reg_write(m, ERNIC_INTEN, ERNIC_INT_RQ_PKT_RX);
	assert_int_equal(ernic_model_wait_irq(m, 0), 0);
	ernic_model_hw_write(m, ERNIC_INTSTS, ERNIC_INT_MAD_RX); /* masked */
	assert_int_equal(ernic_model_wait_irq(m, 0), 0);
	t0 = now_ms();
	assert_int_equal(ernic_model_wait_irq(m, 60), 0);
	assert_true(now_ms() - t0 >= 55);
	/* Enabling a pending cause raises the line. */
	ernic_model_reg_write(m, ERNIC_INTEN, ERNIC_INT_ALL);
	assert_int_equal(ernic_model_wait_irq(m, 0), 1);
	ernic_model_reg_write(m, ERNIC_INTSTS, ERNIC_INT_MAD_RX);
	assert_int_equal(ernic_model_wait_irq(m, 0), 0);

	/* A waiter wakes when the hardware side sets a status bit. */
	assert_int_equal(pthread_create(&t, NULL, irq_raiser, &a), 0);
	t0 = now_ms();
	assert_int_equal(ernic_model_wait_irq(m, 10000), 1);
	assert_true(now_ms() - t0 < 5000);
	pthread_join(t, NULL);
	ernic_model_reg_write(m, ERNIC_INTSTS, ERNIC_INT_RQ_PKT_RX);
	assert_int_equal(ernic_model_wait_irq(m, 0), 0);
	ernic_model_destroy(m);
}

/* ---- Bus address space ---- */

static void test_map_bounds(void **state)
{
	struct ernic_model *m = model_new(NQP);
	uint8_t *buf = malloc(10000), *buf2 = malloc(64);
	uint64_t bus, bus2, bus3;

	assert_non_null(buf);
	assert_non_null(buf2);
	assert_int_equal(ernic_model_map(m, buf, 10000, 0, &bus), 0);
	assert_true(bus >= UINT64_C(0x100000000));
	assert_int_equal(bus % 4096, 0);
	assert_ptr_equal(ernic_model_bus_to_va(m, bus, 10000), buf);
	assert_ptr_equal(ernic_model_bus_to_va(m, bus + 9999, 1), buf + 9999);
	assert_ptr_equal(ernic_model_bus_to_va(m, bus + 100, 0), buf + 100);
	assert_null(ernic_model_bus_to_va(m, bus + 9999, 2));	/* straddles */
	assert_null(ernic_model_bus_to_va(m, bus, 10001));
	assert_null(ernic_model_bus_to_va(m, bus + 10000, 1));
	assert_null(ernic_model_bus_to_va(m, bus - 1, 1));
	assert_null(ernic_model_bus_to_va(m, bus - 1, 2));

	assert_int_equal(ernic_model_map(m, buf2, 64, 1u << 20, &bus2), 0);
	assert_int_equal(bus2 % (1u << 20), 0);
	assert_true(bus2 >= bus + 10000);
	assert_ptr_equal(ernic_model_bus_to_va(m, bus2 + 8, 8), buf2 + 8);
	/* Spanning two mappings is never one mapping. */
	assert_null(ernic_model_bus_to_va(m, bus + 9000, bus2 - bus - 8000));

	/* Overflow of bus + len */
	assert_null(ernic_model_bus_to_va(m, UINT64_MAX - 10, 100));
	assert_null(ernic_model_bus_to_va(m, UINT64_MAX, 1));
	assert_null(ernic_model_bus_to_va(m, bus + 1, SIZE_MAX));
	assert_null(ernic_model_bus_to_va(m, bus2, (size_t)(UINT64_MAX - bus2)
					  + 1));

	/* Bad arguments */
	assert_int_equal(ernic_model_map(m, buf, 0, 0, &bus3), EINVAL);
	assert_int_equal(ernic_model_map(m, buf, 8, 3, &bus3), EINVAL);
	assert_int_equal(ernic_model_map(m, NULL, 8, 0, &bus3), EINVAL);

	/* Unmapping a non-start address does nothing. */
	ernic_model_unmap(m, bus + 4096);
	assert_ptr_equal(ernic_model_bus_to_va(m, bus, 1), buf);
	/* After unmap: gone, the neighbour stays, the range is not reused. */
	ernic_model_unmap(m, bus);
	assert_null(ernic_model_bus_to_va(m, bus, 1));
	assert_null(ernic_model_bus_to_va(m, bus + 5000, 1));
	assert_ptr_equal(ernic_model_bus_to_va(m, bus2, 64), buf2);
	assert_int_equal(ernic_model_map(m, buf, 10000, 0, &bus3), 0);
	assert_true(bus3 > bus2);
	assert_null(ernic_model_bus_to_va(m, bus, 1));
	assert_ptr_equal(ernic_model_bus_to_va(m, bus3 + 5, 5), buf + 5);
	ernic_model_unmap(m, bus2);
	ernic_model_unmap(m, bus3);
	assert_null(ernic_model_bus_to_va(m, bus2, 1));
	assert_null(ernic_model_bus_to_va(m, bus3, 1));
	ernic_model_destroy(m);
	free(buf);
	free(buf2);
}

/* Many mappings, holes punched: the search must find each survivor. */
static void test_map_many(void **state)
{
	enum { N = 1000, SZ = 256 };
	struct ernic_model *m = model_new(NQP);
	uint8_t *pool = malloc((size_t)N * SZ);
	uint64_t bus[N];
	int i;

	assert_non_null(pool);
	for (i = 0; i < N; i++)
		assert_int_equal(ernic_model_map(m, pool + i * SZ, SZ, 0,
						 &bus[i]), 0);
	for (i = 0; i < N; i += 3)
		ernic_model_unmap(m, bus[i]);
	for (i = 0; i < N; i++) {
		void *va = ernic_model_bus_to_va(m, bus[i] + 17, SZ - 17);

		if (i % 3 == 0)
			assert_null(va);
		else
			assert_ptr_equal(va, pool + i * SZ + 17);
		assert_null(ernic_model_bus_to_va(m, bus[i] + 17, SZ));
	}
	ernic_model_destroy(m);
	free(pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_shape),
		cmocka_unit_test(test_table_spec_values),
		cmocka_unit_test(test_lookup_reachable),
		cmocka_unit_test(test_lookup_reserved),
		cmocka_unit_test(test_create_validates),
		cmocka_unit_test(test_reset_values),
		cmocka_unit_test(test_rw_masking),
		cmocka_unit_test(test_ro),
		cmocka_unit_test(test_w1c),
		cmocka_unit_test(test_sw_override),
		cmocka_unit_test(test_irq_line),
		cmocka_unit_test(test_map_bounds),
		cmocka_unit_test(test_map_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
