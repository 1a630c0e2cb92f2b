// SPDX-License-Identifier: MIT
/*
 * ernicdv_qp_hw_offload between two software ERNICs: side A's QP is
 * handed to user logic, which this test plays on the model's HW
 * handshake ports (model/ernic_hndshk.h): WQEs written into the SQ ring
 * by hand, SQ PI rung on the input port, completions seen as the CQ
 * doorbell count, incoming SENDs as RQ PI doorbells, RQ elements given
 * back on the RQ CI port; real packets to and from side B, whose QP the
 * provider drives as usual. Then the refusals.
 */
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "datapath_util.h"
#include "ernic_hndshk.h"
#include "ernicdv.h"

/* The model's calls, from the libernic-sw.so the provider loaded. */
static struct {
	struct ernic_model *(*model)(struct ernic_access *);
	bool (*rq_db)(struct ernic_model *, struct ernic_hndshk_db *, bool);
	bool (*cq_db)(struct ernic_model *, struct ernic_hndshk_db *, bool);
	int (*sq_pidb)(struct ernic_model *, uint32_t, uint16_t);
	int (*rq_cidb)(struct ernic_model *, uint32_t, uint16_t);
} sw;

static int find_sw(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	if (strstr(info->dlpi_name, "/" "libernic-sw.so")) {
		*(const char **)arg = info->dlpi_name;
		return 1;
	}
	return 0;
}

/* Side s's model, or a skip when its device is not in this process. */
static struct ernic_model *model_of(struct side *s)
{
	const char *path = NULL;
	struct ernic_model *m;
	void *h;

	dl_iterate_phdr(find_sw, &path);
	h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
	if (!h) {
		print_message("no libernic-sw.so in this process: the device "
			      "is not a software ERNIC\n");
		skip();
	}
	*(void **)&sw.model = dlsym(h, "ernic_access_model");
	*(void **)&sw.rq_db = dlsym(h, "ernic_model_hndshk_rq_db");
	*(void **)&sw.cq_db = dlsym(h, "ernic_model_hndshk_cq_db");
	*(void **)&sw.sq_pidb = dlsym(h, "ernic_model_hndshk_sq_pidb");
	*(void **)&sw.rq_cidb = dlsym(h, "ernic_model_hndshk_rq_cidb");
	assert_true(sw.model && sw.rq_db && sw.cq_db && sw.sq_pidb &&
		    sw.rq_cidb);
	m = sw.model(ctx_dev(s->ctx)->acc);
	if (!m) {
		print_message("the device is not in-process\n");
		skip();
	}
	dlclose(h);
	return m;
}

static uint32_t reg(struct side *s, uint32_t off)
{
	uint32_t v;

	assert_int_equal(ernicdv_reg_read(s->ctx, off, &v), 0);
	return v;
}

static int offload(struct ibv_qp *qp, struct ernicdv_qp_hw_offload_attr *a)
{
	memset(a, 0, sizeof(*a));
	return ernicdv_qp_hw_offload(qp, a, sizeof(*a));
}

/* The doorbell of qpn that port shows within WAIT_MS, taken (rdy). */
static uint32_t port_take(struct ernic_model *m, bool rq, uint32_t qpn)
{
	uint64_t end = deadline_in(WAIT_MS);
	struct ernic_hndshk_db db;

	while (!(rq ? sw.rq_db : sw.cq_db)(m, &db, true))
		assert_false(deadline_passed(end));
	assert_int_equal(ERNIC_HNDSHK_ADDR_QP(db.addr), qpn);
	return db.data;
}

/* Take the port's doorbells until one says `want`. */
static void port_until(struct ernic_model *m, bool rq, uint32_t qpn,
		       uint32_t want)
{
	uint64_t end = deadline_in(WAIT_MS);

	while (port_take(m, rq, qpn) != want)
		assert_false(deadline_passed(end));
}

/* CON_IO_CONF rang qpn's doorbells: both ports show its ring starts
 * (0), held until taken; then [31] is set again. */
static void take_con_io(struct side *s, struct ernic_model *m, uint32_t qpn)
{
	struct ernic_hndshk_db a, b;

	assert_int_equal(reg(s, ERNIC_CON_IO_CONF) & ERNIC_CON_IO_CONF_READY,
			 0);
	assert_true(sw.rq_db(m, &a, false));
	assert_true(sw.rq_db(m, &b, false));	/* valid held, same values */
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(a.addr, qpn * 4);
	assert_int_equal(a.data, 0);
	assert_int_equal(port_take(m, true, qpn), 0);
	assert_int_equal(reg(s, ERNIC_CON_IO_CONF) & ERNIC_CON_IO_CONF_READY,
			 0);
	assert_int_equal(port_take(m, false, qpn), 0);
	assert_int_equal(reg(s, ERNIC_CON_IO_CONF),
			 ERNIC_CON_IO_CONF_READY |
				 ERNIC_FIELD_PREP(ERNIC_CON_IO_CONF_QPID, qpn));
}

/* The user logic's WQE in SQ slot `slot` (Table 2-1). */
static void user_wqe(struct ibv_qp *qp, uint32_t slot, uint8_t op,
		     uint64_t laddr, uint32_t len, uint64_t roff, uint32_t rtag)
{
	struct ernic_wqe w;

	memset(&w, 0, sizeof(w));
	w.wrid = htole16((uint16_t)slot);
	w.laddr = htole64(laddr);
	w.length = htole32(len);
	w.opcode = op;
	w.roffset = htole64(roff);
	w.rtag = htole32(rtag);
	memcpy((uint8_t *)to_eqp(qp)->sq.va + (size_t)slot * ERNIC_WQE_SIZE,
	       &w, sizeof(w));
}

static void post_b(struct ibv_qp *qp, uint64_t id, void *buf, uint32_t len)
{
	struct ibv_sge s = sge(buf, len, B.mr->lkey);
	struct ibv_send_wr wr, *bad;

	wr_set(&wr, id, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED);
	assert_int_equal(ibv_post_send(qp, &wr, &bad), 0);
}

static void recv_b(struct ibv_qp *qp, uint64_t id, void *buf, uint32_t len)
{
	struct ibv_sge s = sge(buf, len, B.mr->lkey);
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1 },
			   *bad;

	assert_int_equal(ibv_post_recv(qp, &wr, &bad), 0);
}

static const uint32_t tx_len[] = { 100, 1024, 3000 };
static const uint32_t rx_len[] = { 200, 1024, 2500 };

/* The user logic sends three SENDs and a WRITE; B receives them. */
static void user_sends(struct ernic_model *m, struct pair *p)
{
	const uint32_t qpn = p->a->qp_num;
	const uint64_t abus = mr_bus(&A, A.mr);
	const uint32_t wlen = 5000;
	volatile uint8_t *wdst = B.buf + 0x200000;
	volatile uint32_t *cqdb = ernic_cq_db_va(ctx_dev(A.ctx), qpn);
	const uint32_t *cqe = to_eqp(p->a)->cq.va;
	struct ibv_wc wc[4];
	uint32_t k;

	for (k = 0; k < 3; k++) {
		fill(A.buf + k * 0x10000, tx_len[k], 10 + k);
		recv_b(p->b, 100 + k, B.buf + k * 0x10000, 0x10000);
		user_wqe(p->a, k, ERNIC_OP_SEND, abus + k * 0x10000,
			 tx_len[k], 0, 0);
	}
	fill(A.buf + 0x100000, wlen, 77);
	user_wqe(p->a, 3, ERNIC_OP_RDMA_WRITE, abus + 0x100000, wlen,
		 (uintptr_t)wdst, B.mr->rkey);
	/* i_qp_sq_pidb_*: an address that is no SQPIi, then the right one */
	assert_int_equal(sw.sq_pidb(m, ERNIC_QP(qpn, ERNIC_QPCONF), 4), EINVAL);
	assert_int_equal(sw.sq_pidb(m, ERNIC_QP(qpn, ERNIC_SQPI), 4), 0);
	/* resp_hndler_o_send_cq_db_cnt until all four completed */
	port_until(m, false, qpn, 4);
	for (k = 0; k < 4; k++) {
		uint32_t e = le32toh(cqe[k]);

		assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_WRID, e), k);
		assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_ERRFLAG, e), 0);
		assert_int_equal(ERNIC_FIELD_GET(ERNIC_CQE_OPCODE, e),
				 k < 3 ? ERNIC_OP_SEND : ERNIC_OP_RDMA_WRITE);
	}
	assert_int_equal(reg(&A, ERNIC_QP(qpn, ERNIC_CQHEAD)), 4);
	/* the ports, not the doorbell word in memory */
	assert_int_equal(*cqdb, 0);
	assert_int_equal(poll_n(B.cq, wc, 3, WAIT_MS), 3);
	for (k = 0; k < 3; k++) {
		assert_int_equal(wc[k].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[k].wr_id, 100 + k);
		assert_int_equal(wc[k].byte_len, tx_len[k]);
		peer_sync(&B, B.buf + k * 0x10000, tx_len[k], true);
		assert_memory_equal(B.buf + k * 0x10000, A.buf + k * 0x10000,
				    tx_len[k]);
	}
	peer_sync(&B, (void *)wdst, wlen, true);
	assert_memory_equal((const void *)wdst, A.buf + 0x100000, wlen);
}

/* B sends three messages; the user logic takes them from the RQ. */
static void user_receives(struct ernic_model *m, struct pair *p)
{
	const uint32_t qpn = p->a->qp_num;
	struct ernic_qp *qa = to_eqp(p->a);
	const uint32_t bufsz = ERNIC_FIELD_GET(ERNIC_QPCONF_RQ_BUF_SIZE,
					       qa->qpconf) * ERNIC_RQ_BUF_UNIT;
	const uint8_t *rq = qa->rq.va;
	const uint32_t *rxlen =
		(const uint32_t *)(rq + ernic_rxlen_off(qa->rq_depth, bufsz));
	static uint8_t got[3][4096];
	uint32_t ci = 0, wp, pkts = 0, msg = 0, off = 0;
	struct ibv_wc wc[3];

	for (uint32_t k = 0; k < 3; k++) {
		fill(B.buf + 0x300000 + k * 0x10000, rx_len[k], 40 + k);
		post_b(p->b, 200 + k, B.buf + 0x300000 + k * 0x10000,
		       rx_len[k]);
	}
	/* 200 B, 1024 B and 2500 B at PMTU 1024: 1 + 1 + 3 packets */
	while (pkts < 5) {
		wp = port_take(m, true, qpn);
		for (; ci != wp; ci = (ci + 1) % qa->rq_depth, pkts++) {
			uint32_t e = le32toh(rxlen[ci]);
			uint32_t n = ERNIC_FIELD_GET(ERNIC_RXLEN_LEN, e);

			assert_true(msg < 3 && off + n <= sizeof(got[0]));
			memcpy(got[msg] + off, rq + (size_t)ci * bufsz, n);
			off += n;
			if (off == rx_len[msg]) {
				msg++;
				off = 0;
			}
		}
		/* i_qp_rq_cldb_*: the elements are the IP's again */
		assert_int_equal(sw.rq_cidb(m, ERNIC_QP(qpn, ERNIC_RQCI),
					    (uint16_t)ci), 0);
	}
	assert_int_equal(msg, 3);
	for (uint32_t k = 0; k < 3; k++)
		assert_memory_equal(got[k], B.buf + 0x300000 + k * 0x10000,
				    rx_len[k]);
	assert_int_equal(poll_n(B.cq, wc, 3, WAIT_MS), 3);
	for (uint32_t k = 0; k < 3; k++)
		assert_int_equal(wc[k].status, IBV_WC_SUCCESS);
	/* the RQ doorbell word in memory stayed where it was */
	assert_int_equal(*ernic_rq_db_va(ctx_dev(A.ctx), qpn), 0);
}

static void test_offload_wire(void **state)
{
	struct ernic_model *m = model_of(&A);
	struct ernicdv_qp_hw_offload_attr at;
	struct ibv_send_wr swr = { 0 }, *sbad;
	struct ibv_recv_wr rwr = { 0 }, *rbad;
	struct ibv_wc wc[4];
	struct pair p;
	uint32_t qpn;

	(void)state;
	pair_up(&p, 64, 64);
	qpn = p.a->qp_num;
	assert_int_equal(offload(p.a, &at), 0);
	assert_int_equal(at.qp_num, qpn);
	assert_int_equal(reg(&A, ERNIC_QP(qpn, ERNIC_QPCONF)) &
				 (ERNIC_QPCONF_HW_HANDSHAKE_DIS |
				  ERNIC_QPCONF_QP_EN),
			 ERNIC_QPCONF_QP_EN);
	assert_int_equal(reg(&A, ERNIC_XRNICADCONF) &
				 ERNIC_XRNICADCONF_SW_OVERRIDE, 0);
	assert_int_equal(reg(&A, ERNIC_QP(qpn, ERNIC_SQPI)), 0);
	take_con_io(&A, m, qpn);
	/* the provider posts nothing more there */
	assert_int_equal(ibv_post_send(p.a, &swr, &sbad), EPERM);
	assert_ptr_equal(sbad, &swr);
	assert_int_equal(ibv_post_recv(p.a, &rwr, &rbad), EPERM);
	assert_int_equal(offload(p.a, &at), EALREADY);

	user_sends(m, &p);
	user_receives(m, &p);
	/* and its poll_cq took none of A's completions */
	assert_int_equal(ibv_poll_cq(A.cq, 4, wc), 0);
	pair_down(&p);
}

static void test_offload_refused(void **state)
{
	struct ernic_model *m = model_of(&A);
	struct ernicdv_qp_hw_offload_attr at;
	struct pair p, p2;
	struct ibv_qp *q;

	(void)state;
	/* a software device, unless a test plays the user logic */
	pair_up(&p, 16, 16);
	unsetenv("ERNIC_MODEL_HNDSHK");
	assert_int_equal(offload(p.a, &at), EOPNOTSUPP);
	setenv("ERNIC_MODEL_HNDSHK", "1", 1);
	/* attr: unknown comp_mask and flags, too short, non-zero tail */
	memset(&at, 0, sizeof(at));
	at.comp_mask = 1;
	assert_int_equal(ernicdv_qp_hw_offload(p.a, &at, sizeof(at)), EINVAL);
	at.comp_mask = 0;
	at.flags = 1u << 7;
	assert_int_equal(ernicdv_qp_hw_offload(p.a, &at, sizeof(at)), EINVAL);
	at.flags = 0;
	assert_int_equal(ernicdv_qp_hw_offload(p.a, &at, 8), EINVAL);
	{
		uint8_t big[sizeof(at) + 8] = { 0 };

		big[sizeof(at) + 3] = 1;
		assert_int_equal(ernicdv_qp_hw_offload(
					 p.a, (void *)big, sizeof(big)),
				 EINVAL);
	}
	/* traffic outstanding: a posted receive */
	post_recv1(p.a, 1, A.buf, 64, A.mr->lkey);
	assert_int_equal(offload(p.a, &at), EBUSY);
	/* not RTR or RTS */
	q = qp_new(&A, 16, 16, 0);
	assert_int_equal(offload(q, &at), EINVAL);
	qp_init(q);
	assert_int_equal(offload(q, &at), EINVAL);
	qp_destroy(q);
	/* CON_IO_CONF still busy with the doorbells of another QP */
	pair_up(&p2, 16, 16);
	assert_int_equal(offload(p2.a, &at), 0);
	pair_up(&p, 16, 16);	/* the earlier pair's receive is gone */
	assert_int_equal(offload(p.a, &at), EBUSY);
	take_con_io(&A, m, p2.a->qp_num);
	/* without CON_IO_CONF: nothing rung, ready stays set */
	at.flags = ERNICDV_QP_HW_OFFLOAD_NO_CON_IO;
	assert_int_equal(ernicdv_qp_hw_offload(p.a, &at, sizeof(at)), 0);
	assert_true(reg(&A, ERNIC_CON_IO_CONF) & ERNIC_CON_IO_CONF_READY);
	{
		struct ernic_hndshk_db db;

		assert_false(sw.rq_db(m, &db, false));
		assert_false(sw.cq_db(m, &db, false));
	}
	/* B's QP is not offloaded: its ports refuse (rdy stays low) */
	assert_int_equal(sw.sq_pidb(model_of(&B),
				    ERNIC_QP(p.b->qp_num, ERNIC_SQPI), 1),
			 EAGAIN);
	pair_down(&p2);
	pair_down(&p);
}

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test_teardown(test_offload_wire, dp_qp_cleanup),
		cmocka_unit_test_teardown(test_offload_refused, dp_qp_cleanup),
	};

	tu_require_env();
	setenv("ERNIC_MODEL_HNDSHK", "1", 1);
	return cmocka_run_group_tests_name("hw_offload", t, dp_group_setup,
					   dp_group_teardown);
}
