/* SPDX-License-Identifier: MIT */
/*
 * The ERNIC model's HW handshake ports (PG332 Table 2-5, "HW Handshake
 * Ports for RQ / CQ / SQ PI / RQ CI Doorbells"), as calls a test makes
 * in the place of the user logic an FPGA design wires to them.
 *
 * A QP with QPCONFi[4] (HW Handshake disable) reset to 0 exchanges its
 * doorbells here instead of through memory and registers:
 *
 *  - rx_pkt_hndler_o_rq_db_*: the RQ write pointer after each incoming
 *    SEND packet (what RQWPTRDBADDi would receive), and
 *    resp_hndler_o_send_cq_db_*: CQHEADi after each send completion
 *    (what CQDBADDi would receive). The IP writes neither doorbell word
 *    for that QP. Each port shows one doorbell (valid, addr, data) and
 *    holds it, unchanged, until the user logic takes it (rdy). The
 *    model's reading of what the IP does meanwhile: it goes on
 *    receiving and completing, and keeps, per port, the newest value of
 *    every other QP that has one waiting, in the order they first
 *    came; a QP's newer value replaces its waiting one (both are ring
 *    indices: the newest says all). So nothing is lost and nothing
 *    stalls, and a port never holds more than one value per QP besides
 *    the one it shows.
 *  - i_qp_sq_pidb_*_hndshk and i_qp_rq_cldb_*_hndshk: the user logic's
 *    SQ producer index and RQ consumer index, with the effect of
 *    software's SQPIi / RQCIi writes. The address is the register's
 *    (ERNIC_QP(i, ERNIC_SQPI), ERNIC_QP(i, ERNIC_RQCI)); o_*_wr_rdy is
 *    the call's 0.
 *
 * The output ports' 10-bit address is 4 bytes per QP: the QP number
 * times 4 (ERNIC_HNDSHK_ADDR_QP).
 *
 * CON_IO_CONF (0x200AC), "used to ring the doorbell when hardware
 * handshake is just enabled": software writes a QP ID to [23:16]; for
 * an enabled QP with QPCONFi[4] = 0 the IP clears [31] (ready), puts
 * the QP's current RQ write pointer (STATRQPIDBi) and CQHEADi on the
 * two output ports, and sets [31] again once the user logic has taken
 * both: ready for another QP ID. A write naming any other QP is
 * ignored ([31] stays set).
 *
 * While XRNICADCONF's software override covers a QP (PG332 "Enabling
 * QP HW Offload" steps 1-5), its WQE processor fetches nothing: its
 * pointers are software's to rewrite. QPCONFi[4] going to 0 on an
 * enabled QP with nothing outstanding restarts the WQE processor at
 * STATCURSQPTRi and its completions at CQHEADi, as software left them
 * (step 2 zeroes them). Only RC QPs (2..C_NUM_QP) have the ports.
 *
 * The model's RX side band (ernic_hw.h) stays in memory for such a QP
 * (RXLEN entries, IMMQ), but its receive credits are software's
 * convention and do not apply: the user logic has posted no receives.
 */
#ifndef ERNIC_HNDSHK_H
#define ERNIC_HNDSHK_H

#include <stdbool.h>
#include <stdint.h>

struct ernic_model;

/* One output port's signals while valid. */
struct ernic_hndshk_db {
	uint32_t addr;		/* *_db_addr: QP number * 4 */
	uint32_t data;		/* rq_db_data / send_cq_db_cnt */
};

#define ERNIC_HNDSHK_ADDR_QP(addr) ((addr) >> 2)

/*
 * rx_pkt_hndler_o_rq_db_* (RQ write pointer) and resp_hndler_o_send_cq_db_*
 * (CQ head): true while valid, with the port's address and data in *db.
 * rdy: the user logic samples them and asserts rdy, so the next waiting
 * doorbell (if any) shows from now on; without rdy the same values show
 * again at the next call.
 */
bool ernic_model_hndshk_rq_db(struct ernic_model *m,
			      struct ernic_hndshk_db *db, bool rdy);
bool ernic_model_hndshk_cq_db(struct ernic_model *m,
			      struct ernic_hndshk_db *db, bool rdy);

/*
 * i_qp_sq_pidb_*_hndshk and i_qp_rq_cldb_*_hndshk: the user logic holds
 * valid with addr and the index. 0: o_qp_*_wr_rdy, taken. EINVAL: addr
 * is not SQPIi / RQCIi of an RC QP of the IP; EAGAIN: that QP is not
 * enabled with QPCONFi[4] = 0 (its ports are off: rdy stays low);
 * ENODEV: the model's engine is not started.
 */
int ernic_model_hndshk_sq_pidb(struct ernic_model *m, uint32_t addr,
			       uint16_t pi);
int ernic_model_hndshk_rq_cidb(struct ernic_model *m, uint32_t addr,
			       uint16_t ci);

#endif
