// SPDX-License-Identifier: MIT
//
// ernic_sideband: the RX side band block of the ERNIC subsystem
// (docs/datapath.md, "Receive: the RX side band"; hw/README.md).
//
// It sits in the IP's rx_pkt_hndler_ddr_m_axi write path (slave s_axi_*
// from the IP, master m_axi_* toward memory) and, for every packet the IP
// stores in an RQ element, writes beside the RQ what verbs needs and
// PG332 does not record:
//   RXLEN[k] = RQBA + depth*bufsz + 4k: payload bytes [15:0], BTH SE [16],
//              BTH opcode [31:24];
//   IMMQ[j]  = RXLEN + depth*4 rounded up to 8, + 16j: the Table 1-1 word
//              from ieth_immdt_m_axis, the full RQ index, the RETH length
//              (WRITE with immediate);
//   RQWPTRDBADD + 4: the IMMQ write pointer.
// The IP's RQ doorbell (its AXI write to RQWPTRDBADD, or the
// rx_pkt_hndler_o_rq_db_* handshake when QPCONFi[4] = 0) is held until
// these writes have their B responses: software that sees the new RQ
// write pointer sees the side band of every element before it.
//
// Where the facts come from:
//   - QP geometry (RQBAi/RQBAMSBi, QDEPTHi[31:16], QPCONFi[31:16],
//     RQWPTRDBADDi/MSBi) and STATRQPIDBi: snooped from the IP's
//     s_axi_lite writes (snp_*: inputs only, the bus is not touched);
//   - which QP stored a packet: the address of the IP's doorbell write
//     (RQ doorbell words DB_STRIDE bytes apart, the provider's layout), or
//     the handshake's address, or the QPID of a WRITE_IMMEDIATE beat;
//   - element index: the doorbell value - 1 (mod depth);
//   - payload length: the write strobes of the last beat the IP wrote
//     before its doorbell, if that beat ends inside the element;
//   - BTH opcode, SE, and a WRITE's RETH DMA length: ernic_rxhdr, the
//     header sniffer on roce_cmac_s_axis (cm_*), asked once the IP has
//     stored the packet (QP1 takes only UD SEND Only MADs: 0x64, SE 0);
//   - IMMQ consumer index: read from RQWPTRDBADD + 64 (m_axi_ar*/r*)
//     when the cached copy says the IMMQ is full.
// Back-pressure: one packet at a time; while the block writes its side
// band, or waits for IMMQ room, it accepts no new AW from the IP (and no
// doorbell handshake, no ieth_immdt beat beyond one): the IP's RX
// handler stalls, its RX buffer fills, and its flow control manager
// pauses the link (PFC), as docs/datapath.md's RX pause does.
//
// Never on silicon: simulated with Icarus Verilog (ctest hw_sideband),
// sized with yosys synth_xilinx (hw/README.md).

`default_nettype none

module ernic_sideband #(
    parameter integer NUM_QP   = 64,   // C_NUM_QP (QPs 1..NUM_QP)
    parameter integer ADDR_W   = 64,   // C_M_AXI_ADDR_WIDTH (32 or 64)
    parameter integer ID_W     = 4,    // AXI ID width of the IP's master
    parameter integer LITE_AW  = 32,   // s_axi_lite address width
    parameter integer CI_POLL  = 256,  // cycles between IMMQ CI reads while full
    parameter [ID_W-1:0] OWN_ID = 0,   // AXI ID of the block's own writes
    parameter integer DB_LG    = 7,    // log2 of the RQ doorbell words' stride
    parameter integer NCAND    = 16,   // ernic_rxhdr: candidates per QP
    parameter integer WF_HIST  = 4     // ernic_rxhdr: WRITE Firsts per QP
) (
    input  wire                clk,        // m_axi_aclk
    input  wire                resetn,     // m_axi_aresetn
    // ---- s_axi_lite of the IP, observed (same clock assumed) ----
    input  wire [LITE_AW-1:0]  snp_awaddr,
    input  wire                snp_awvalid,
    input  wire                snp_awready,
    input  wire [31:0]         snp_wdata,
    input  wire                snp_wvalid,
    input  wire                snp_wready,
    // ---- from the IP: rx_pkt_hndler_ddr_m_axi, write channels ----
    input  wire [ID_W-1:0]     s_axi_awid,
    input  wire [ADDR_W-1:0]   s_axi_awaddr,
    input  wire [7:0]          s_axi_awlen,
    input  wire [2:0]          s_axi_awsize,
    input  wire [1:0]          s_axi_awburst,
    input  wire                s_axi_awvalid,
    output wire                s_axi_awready,
    input  wire [511:0]        s_axi_wdata,
    input  wire [63:0]         s_axi_wstrb,
    input  wire                s_axi_wlast,
    input  wire                s_axi_wvalid,
    output wire                s_axi_wready,
    output wire [ID_W-1:0]     s_axi_bid,
    output wire [1:0]          s_axi_bresp,
    output wire                s_axi_bvalid,
    input  wire                s_axi_bready,
    // ---- toward memory ----
    output wire [ID_W-1:0]     m_axi_awid,
    output wire [ADDR_W-1:0]   m_axi_awaddr,
    output wire [7:0]          m_axi_awlen,
    output wire [2:0]          m_axi_awsize,
    output wire [1:0]          m_axi_awburst,
    output wire                m_axi_awvalid,
    input  wire                m_axi_awready,
    output wire [511:0]        m_axi_wdata,
    output wire [63:0]         m_axi_wstrb,
    output wire                m_axi_wlast,
    output wire                m_axi_wvalid,
    input  wire                m_axi_wready,
    input  wire [ID_W-1:0]     m_axi_bid,
    input  wire [1:0]          m_axi_bresp,
    input  wire                m_axi_bvalid,
    output wire                m_axi_bready,
    output wire [ID_W-1:0]     m_axi_arid,
    output wire [ADDR_W-1:0]   m_axi_araddr,
    output wire [7:0]          m_axi_arlen,
    output wire [2:0]          m_axi_arsize,
    output wire [1:0]          m_axi_arburst,
    output wire                m_axi_arvalid,
    input  wire                m_axi_arready,
    input  wire [511:0]        m_axi_rdata,
    input  wire                m_axi_rlast,
    input  wire                m_axi_rvalid,
    output wire                m_axi_rready,
    // ---- ieth_immdt_m_axis of the IP (Table 1-1) ----
    input  wire [63:0]         ieth_tdata,
    input  wire                ieth_tvalid,
    output wire                ieth_tready,
    // ---- roce_cmac_s_axis (the IP's RX frames), observed ----
    input  wire [511:0]        cm_tdata,
    input  wire [63:0]         cm_tkeep,
    input  wire                cm_tlast,
    input  wire                cm_tvalid,
    input  wire                cm_tready,
    // ---- RQ doorbell handshake (QPCONFi[4] = 0): IP side ----
    input  wire [31:0]         rq_db_i_data,   // rx_pkt_hndler_o_rq_db_data
    input  wire [9:0]          rq_db_i_addr,   // rx_pkt_hndler_o_rq_db_addr
    input  wire                rq_db_i_valid,  // rx_pkt_hndler_o_rq_db_data_valid
    output wire                rq_db_i_rdy,    // rx_pkt_hndler_i_rq_db_rdy
    // ---- ... and the consumer's side, passed on once the side band is written ----
    output wire [31:0]         rq_db_o_data,
    output wire [9:0]          rq_db_o_addr,
    output wire                rq_db_o_valid,
    input  wire                rq_db_o_rdy,
    // ---- status ----
    output wire                busy,
    output reg                 err,            // sticky: see hw/README.md, "err"
    output reg  [31:0]         n_nohdr,        // packets whose header the sniffer did not have
    output wire [31:0]         n_frames,       // sniffer: frames seen
    output wire [31:0]         n_icrc,         // ... with a bad ICRC or length
    output wire [31:0]         n_kept          // ... kept as candidates
);

    // ------------------------------------------------------------------
    // QP table: what software wrote to the IP (config, one writer: the
    // snooper) and the block's own pointers (state).
    // ------------------------------------------------------------------
    localparam integer NQ = NUM_QP + 1;
    localparam integer HI_W = (ADDR_W > 32) ? ADDR_W - 32 : 1;

    reg [23:0]     t_rqba_lo [0:NQ-1];   // RQBAi[31:8]
    reg [HI_W-1:0] t_rqba_hi [0:NQ-1];   // RQBAMSBi
    reg [29:0]     t_db_lo   [0:NQ-1];   // RQWPTRDBADDi[31:2]
    reg [HI_W-1:0] t_db_hi   [0:NQ-1];   // RQWPTRDBADDMSBi
    reg [15:0]     t_depth   [0:NQ-1];   // QDEPTHi[31:16]
    reg [3:0]      t_lg      [0:NQ-1];   // log2(QPCONFi[31:16]): bufsz = 256 << lg
    reg [15:0]     t_wp      [0:NQ-1];   // RQ write pointer (last doorbell)
    reg [15:0]     t_iwp     [0:NQ-1];   // IMMQ write pointer
    reg [15:0]     t_ci      [0:NQ-1];   // IMMQ consumer index, cached
    // the doorbell word of one QP, for finding the QP of the others
    reg            ref_v;
    reg [7:0]      ref_qp;
    reg [31:0]     ref_db;

    // ---- AXI4-Lite snooper ----
    reg               sn_aw_seen, sn_w_seen;
    reg [LITE_AW-1:0] sn_addr_q;
    reg [31:0]        sn_data_q;
    wire              sn_aw_now = snp_awvalid & snp_awready;
    wire              sn_w_now  = snp_wvalid & snp_wready;
    wire              sn_commit = (sn_aw_seen | sn_aw_now) & (sn_w_seen | sn_w_now);
    wire [LITE_AW-1:0] sn_addr  = sn_aw_now ? snp_awaddr : sn_addr_q;
    wire [31:0]       sn_data   = sn_w_now ? snp_wdata : sn_data_q;
    // per-QP registers: 0x20200 + (i-1)*0x100 (Table 2-7)
    wire [9:0]        sn_blk    = sn_addr[17:8];
    wire [9:0]        sn_qp     = sn_blk - 10'h201;
    wire              sn_qpreg  = sn_commit && sn_blk >= 10'h202 &&
                                  sn_qp <= NUM_QP && (LITE_AW <= 18 ||
                                  sn_addr[LITE_AW-1:18] == 0);
    wire [7:0]        sn_reg    = sn_addr[7:0];

    function [3:0] log2_16(input [15:0] v);   // highest set bit
        integer b;
        begin
            log2_16 = 0;
            for (b = 0; b < 16; b = b + 1)
                if (v[b]) log2_16 = b[3:0];
        end
    endfunction

    // a pointer reset for the state table, applied when the FSM is not
    // writing it (one pending slot: register writes are far apart)
    reg        st_rst_pend;
    reg [7:0]  st_rst_qp;
    reg        st_rst_wp;       // STATRQPIDB: wp <= value; else iwp, ci <= 0
    reg [15:0] st_rst_val;

    always @(posedge clk) begin
        if (!resetn) begin
            sn_aw_seen <= 1'b0;
            sn_w_seen  <= 1'b0;
            ref_v      <= 1'b0;
        end else begin
            sn_aw_seen <= (sn_aw_seen | sn_aw_now) & ~sn_commit;
            sn_w_seen  <= (sn_w_seen | sn_w_now) & ~sn_commit;
        end
        if (sn_aw_now) sn_addr_q <= snp_awaddr;
        if (sn_w_now)  sn_data_q <= snp_wdata;
        if (sn_qpreg) begin
            case (sn_reg)
            8'h00: t_lg[sn_qp]      <= log2_16(sn_data[31:16]);   // QPCONFi
            8'h08: t_rqba_lo[sn_qp] <= sn_data[31:8];             // RQBAi
            8'hC0: t_rqba_hi[sn_qp] <= sn_data[HI_W-1:0];         // RQBAMSBi
            8'h20: begin                                          // RQWPTRDBADDi
                t_db_lo[sn_qp] <= sn_data[31:2];
                if (sn_data != 0) begin
                    ref_v  <= 1'b1;
                    ref_qp <= sn_qp[7:0];
                    ref_db <= sn_data;
                end
            end
            8'h24: t_db_hi[sn_qp]   <= sn_data[HI_W-1:0];         // RQWPTRDBADDMSBi
            8'h3C: t_depth[sn_qp]   <= sn_data[31:16];            // QDEPTHi
            default: ;
            endcase
        end
    end

    // ------------------------------------------------------------------
    // The header sniffer
    // ------------------------------------------------------------------
    wire        q_req, q_ack, q_hit, q_bad, q_order, q_se;
    wire [7:0]  q_op;
    wire [31:0] q_len;
    reg         p_wimm;             // WRITE with immediate: no element, no doorbell
    reg  [7:0]  p_qp;

    ernic_rxhdr #(.NUM_QP(NUM_QP), .NCAND(NCAND), .WF_HIST(WF_HIST),
                  .LITE_AW(LITE_AW)) hdr (
        .clk(clk), .resetn(resetn),
        .cm_tdata(cm_tdata), .cm_tkeep(cm_tkeep), .cm_tlast(cm_tlast),
        .cm_tvalid(cm_tvalid), .cm_tready(cm_tready),
        .sn_commit(sn_commit), .sn_addr(sn_addr), .sn_data(sn_data),
        .q_req(q_req), .q_qp(p_qp), .q_wimm(p_wimm), .q_ack(q_ack),
        .q_hit(q_hit), .q_bad(q_bad), .q_order(q_order), .q_op(q_op),
        .q_se(q_se), .q_len(q_len),
        .n_frames(n_frames), .n_icrc(n_icrc), .n_cand(), .n_kept(n_kept),
        .n_over(n_over));
    wire [31:0] n_over;     // candidates lost: the sniffer's FIFO was full

    // ------------------------------------------------------------------
    // The packet FSM
    // ------------------------------------------------------------------
    localparam [4:0]
        S_IDLE   = 5'd0,  S_LOAD  = 5'd1,  S_GEOM  = 5'd2,  S_AWCHK = 5'd3,
        S_DBW    = 5'd4,  S_DRAIN = 5'd5,  S_RXLEN = 5'd6,  S_IMM   = 5'd7,
        S_CIAR   = 5'd8,  S_CIR   = 5'd9,  S_CIWT  = 5'd10, S_IMMQ  = 5'd11,
        S_IWP    = 5'd12, S_REL   = 5'd13, S_WB    = 5'd14, S_OWN   = 5'd15,
        S_OWNB   = 5'd16, S_AWFWD = 5'd17, S_QLOAD = 5'd18, S_HDRQ  = 5'd19,
        S_ELEN   = 5'd20, S_ELEN2 = 5'd21;

    reg [4:0]  state, ret;          // ret: where S_OWN* return to
    // the packet
    reg [7:0]  p_op;
    reg        p_se;
    reg [31:0] p_reth;
    // its QP, loaded from the table
    reg [ADDR_W-1:0] q_rqba, q_db, q_rxlen, q_immq;
    reg [15:0] q_depth, q_wp, q_iwp, q_ci;
    reg [3:0]  q_lg;
    // the doorbell
    reg [31:0] db_val;
    reg        db_hs;               // the doorbell came by handshake
    reg [ID_W-1:0] db_id;
    reg [15:0] k;                   // element index
    reg [ADDR_W-1:0] el_base;
    reg [23:0] el_len;
    // the last beat the IP wrote with any strobe: where its bytes end
    reg        run_v;
    reg [ADDR_W-1:0] run_end;
    // an AW being checked: is it a QP's RQ doorbell?
    reg [9:0]  c_qp;
    reg        c_ok;
    reg [29:0] c_db_lo;
    reg [HI_W-1:0] c_db_hi;
    // ieth_immdt skid (one beat)
    reg        ie_full;
    reg [63:0] ie_word;
    // forwarded write bursts
    reg        wb_act;
    reg [ADDR_W-1:0] wb_addr;       // address of the current beat
    reg [15:0] fwd_out;             // forwarded writes without their B yet
    // the block's own single-beat writes
    reg [ADDR_W-1:0] ow_addr;
    reg [127:0] ow_data;
    reg        ow_16, ow_aw_done, ow_w_done;
    reg [ID_W-1:0] ow_id;
    reg        ow_fwd;              // the released doorbell: B goes to the IP
    reg [15:0] poll;

    wire op_side = (p_op == 8'h03) || (p_op == 8'h05) ||  // SEND LAST/ONLY with Immediate
                   (p_op == 8'h16) || (p_op == 8'h17);    // SEND LAST/ONLY with Invalidate
    wire [7:0] side_type = (p_op == 8'h16 || p_op == 8'h17) ? 8'h01 : 8'h02;
    wire [15:0] iwp_nxt = (q_iwp + 16'd1 == q_depth) ? 16'd0 : q_iwp + 16'd1;
    wire immq_room = (q_ci < q_depth) && (iwp_nxt != q_ci);

    // ---- AW from the IP: checked (S_AWCHK), then forwarded (S_AWFWD) or
    // taken as the doorbell
    wire [31:0] c_off  = s_axi_awaddr[31:0] - ref_db;
    wire [31:0] c_step = $signed(c_off) >>> DB_LG;
    wire [9:0]  c_cand = ref_qp + c_step[9:0];
    wire aw_match = c_ok && s_axi_awlen == 8'd0 &&
                    s_axi_awaddr[31:2] == c_db_lo &&
                    (ADDR_W <= 32 || s_axi_awaddr[ADDR_W-1:32] == c_db_hi);
    wire aw_fwd   = (state == S_AWFWD);
    wire aw_cap   = (state == S_AWCHK) && aw_match;

    // own write, presented on m_axi when in S_OWN/S_OWNW
    wire own_aw = (state == S_OWN) && !ow_aw_done;
    wire own_w  = (state == S_OWN) && !ow_w_done;

    assign s_axi_awready = aw_fwd ? m_axi_awready : aw_cap;
    assign m_axi_awvalid = own_aw ? 1'b1 : (aw_fwd & s_axi_awvalid);
    assign m_axi_awid    = own_aw ? ow_id : s_axi_awid;
    assign m_axi_awaddr  = own_aw ? ow_addr : s_axi_awaddr;
    assign m_axi_awlen   = own_aw ? 8'd0 : s_axi_awlen;
    assign m_axi_awsize  = own_aw ? (ow_16 ? 3'd4 : 3'd2) : s_axi_awsize;
    assign m_axi_awburst = own_aw ? 2'b01 : s_axi_awburst;

    wire [63:0] ow_strb = (ow_16 ? 64'hFFFF : 64'hF) << ow_addr[5:0];
    assign s_axi_wready  = wb_act ? m_axi_wready : (state == S_DBW);
    assign m_axi_wvalid  = own_w ? 1'b1 : (wb_act & s_axi_wvalid);
    assign m_axi_wdata   = own_w ? (ow_16 ? {4{ow_data}} : {16{ow_data[31:0]}}) :
                                   s_axi_wdata;
    assign m_axi_wstrb   = own_w ? ow_strb : s_axi_wstrb;
    assign m_axi_wlast   = own_w ? 1'b1 : s_axi_wlast;

    // B: the block's own (S_OWNB, not the released doorbell) or the IP's
    wire b_own = (state == S_OWNB) && !ow_fwd;
    assign m_axi_bready  = b_own ? 1'b1 : s_axi_bready;
    assign s_axi_bvalid  = b_own ? 1'b0 : m_axi_bvalid;
    assign s_axi_bid     = m_axi_bid;
    assign s_axi_bresp   = m_axi_bresp;

    // IMMQ consumer index read
    assign m_axi_arid    = OWN_ID;
    assign m_axi_araddr  = q_db + 64;          // RQWPTRDBADD + 64
    assign m_axi_arlen   = 8'd0;
    assign m_axi_arsize  = 3'd2;
    assign m_axi_arburst = 2'b01;
    assign m_axi_arvalid = (state == S_CIAR);
    assign m_axi_rready  = (state == S_CIR);
    wire [ADDR_W-1:0] ci_addr = q_db + 64;
    wire [31:0] r_word = m_axi_rdata[{ci_addr[5:2], 5'd0} +: 32];

    assign ieth_tready = !ie_full;
    assign q_req       = (state == S_HDRQ) && (p_qp != 8'd1);

    // the handshake doorbell: held (rdy low) until S_REL
    wire rel_hs = (state == S_REL) && db_hs;
    assign rq_db_o_valid = rel_hs & rq_db_i_valid;
    assign rq_db_o_data  = rq_db_i_data;
    assign rq_db_o_addr  = rq_db_i_addr;
    assign rq_db_i_rdy   = rel_hs & rq_db_o_rdy;

    assign busy = (state != S_IDLE) || wb_act || (fwd_out != 0) || ie_full;

    // the doorbell value in the captured W beat
    reg  [ADDR_W-1:0] s_axi_awaddr_q;
    wire [31:0] dbw_word = s_axi_wdata[{s_axi_awaddr_q[5:2], 5'd0} +: 32];
    // highest strobe of a beat, +1
    function [6:0] strb_end(input [63:0] s);
        integer b;
        begin
            strb_end = 0;
            for (b = 0; b < 64; b = b + 1)
                if (s[b]) strb_end = b + 1;
        end
    endfunction

    // the geometry of the loaded QP
    wire [ADDR_W-1:0] g_rqba = (ADDR_W > 32) ?
        {t_rqba_hi_q, t_rqba_lo_q, 8'd0} : {t_rqba_lo_q, 8'd0};
    reg [23:0]     t_rqba_lo_q;
    reg [HI_W-1:0] t_rqba_hi_q;
    wire [ADDR_W-1:0] bufsz = {{(ADDR_W-9){1'b0}}, 9'd256} << q_lg;

    always @(posedge clk) begin
        if (!resetn) begin
            state   <= S_IDLE;
            wb_act  <= 1'b0;
            fwd_out <= 16'd0;
            ie_full <= 1'b0;
            err     <= 1'b0;
            run_v   <= 1'b0;
            n_nohdr <= 32'd0;
            st_rst_pend <= 1'b0;
        end else begin
            // ---- snooped pointer resets, into the pending slot
            if (sn_qpreg && (sn_reg == 8'h9C || sn_reg == 8'h20)) begin
                st_rst_pend <= 1'b1;
                st_rst_qp   <= sn_qp[7:0];
                st_rst_wp   <= (sn_reg == 8'h9C);
                st_rst_val  <= sn_data[15:0];
            end else if (st_rst_pend && state != S_WB) begin
                st_rst_pend <= 1'b0;
                if (st_rst_wp) begin
                    t_wp[st_rst_qp] <= st_rst_val;
                end else begin
                    t_iwp[st_rst_qp] <= 16'd0;
                    t_ci[st_rst_qp]  <= 16'd0;
                end
            end

            if (n_over != 0)
                err <= 1'b1;

            // ---- ieth_immdt skid
            if (ieth_tvalid && !ie_full) begin
                ie_full <= 1'b1;
                ie_word <= ieth_tdata;
            end

            // ---- forwarded bursts; the end of the last strobed beat
            if (aw_fwd && s_axi_awvalid && m_axi_awready) begin
                wb_act  <= 1'b1;
                wb_addr <= s_axi_awaddr;
            end
            if (wb_act && s_axi_wvalid && m_axi_wready) begin
                wb_addr <= {wb_addr[ADDR_W-1:6] + 1'b1, 6'd0};
                if (s_axi_wstrb != 0) begin
                    run_v   <= 1'b1;
                    run_end <= {wb_addr[ADDR_W-1:6], 6'd0} +
                               {{(ADDR_W-7){1'b0}}, strb_end(s_axi_wstrb)};
                end
                if (s_axi_wlast)
                    wb_act <= 1'b0;
            end
            fwd_out <= fwd_out
                + ((aw_fwd && s_axi_awvalid && m_axi_awready) ||
                   (state == S_OWN && ow_fwd && !ow_aw_done && m_axi_awready) ? 16'd1 : 16'd0)
                - ((!b_own && m_axi_bvalid && s_axi_bready) ? 16'd1 : 16'd0);

            case (state)
            S_IDLE: if (!wb_act) begin
                db_hs  <= 1'b0;
                p_wimm <= 1'b0;
                if (s_axi_awvalid) begin
                    // which QP's doorbell it would be (RQ doorbell words
                    // are 2^DB_LG bytes apart), then that QP's word
                    c_qp    <= c_cand;
                    c_ok    <= ref_v && c_off[DB_LG-1:0] == 0 &&
                               c_cand >= 10'd1 && c_cand <= NUM_QP &&
                               c_step[31:10] == {22{c_step[31]}};
                    c_db_lo <= t_db_lo[c_cand[7:0]];
                    c_db_hi <= t_db_hi[c_cand[7:0]];
                    state   <= S_AWCHK;
                end else if (rq_db_i_valid) begin
                    db_hs  <= 1'b1;
                    db_val <= rq_db_i_data;
                    p_qp   <= rq_db_i_addr[9:2];
                    state  <= S_QLOAD;
                end else if (ie_full && ie_word[39:32] == 8'h03) begin
                    // WRITE with immediate: its payload is written
                    p_wimm <= 1'b1;
                    p_qp   <= ie_word[47:40];
                    state  <= S_QLOAD;
                end
            end
            S_AWCHK: begin
                s_axi_awaddr_q <= s_axi_awaddr;
                if (aw_match) begin
                    db_id <= s_axi_awid;
                    p_qp  <= c_qp[7:0];
                    state <= S_DBW;
                end else begin
                    state <= S_AWFWD;
                end
            end
            S_AWFWD: if (s_axi_awvalid && m_axi_awready)
                state <= S_IDLE;
            S_DBW: if (s_axi_wvalid) begin
                db_val <= dbw_word;
                if (s_axi_wlast)
                    state <= S_QLOAD;
            end
            S_QLOAD: begin
                // table read (registered)
                t_rqba_lo_q <= t_rqba_lo[p_qp];
                t_rqba_hi_q <= t_rqba_hi[p_qp];
                q_db    <= (ADDR_W > 32) ?
                    {t_db_hi[p_qp], t_db_lo[p_qp], 2'b00} : {t_db_lo[p_qp], 2'b00};
                q_depth <= t_depth[p_qp];
                q_lg    <= t_lg[p_qp];
                q_wp    <= t_wp[p_qp];
                q_iwp   <= t_iwp[p_qp];
                q_ci    <= t_ci[p_qp];
                state   <= S_LOAD;
            end
            S_LOAD: begin
                q_rqba  <= g_rqba;
                q_rxlen <= g_rqba + ({{(ADDR_W-16){1'b0}}, q_depth} << (q_lg + 8));
                state   <= S_GEOM;
            end
            S_GEOM: begin
                q_immq <= q_rxlen + {{(ADDR_W-19){1'b0}},
                                     {1'b0, q_depth} + {16'd0, q_depth[0]}, 2'b00};
                state  <= S_HDRQ;
            end
            S_HDRQ: begin
                // which packet it was: QP1 stores only MADs (UD SEND
                // Only, SE clear); an RC QP asks the sniffer
                if (p_qp == 8'd1) begin
                    p_op  <= 8'h64;
                    p_se  <= 1'b0;
                    if (p_wimm) err <= 1'b1;
                    state <= S_DRAIN;
                end else if (q_ack) begin
                    p_op   <= q_op;
                    p_se   <= q_se;
                    p_reth <= q_len;
                    if (!q_hit || q_bad || q_order) begin
                        err     <= 1'b1;
                        n_nohdr <= n_nohdr + 1;
                    end
                    state  <= S_DRAIN;
                end
            end
            S_DRAIN: if (!wb_act && fwd_out == 0) begin
                if (p_wimm) begin
                    state <= S_IMM;
                end else begin
                    k <= (db_val[15:0] == 16'd0 ? q_depth : db_val[15:0]) - 16'd1;
                    state <= S_ELEN;
                end
            end
            S_ELEN: begin
                el_base <= q_rqba + ({{(ADDR_W-16){1'b0}}, k} << (q_lg + 8));
                state   <= S_ELEN2;
            end
            S_ELEN2: begin
                // the element's bytes end where the IP's last beat did;
                // nothing written inside it: an empty SEND
                if (run_v && run_end >= el_base && run_end - el_base <= bufsz)
                    el_len <= run_end[23:0] - el_base[23:0];
                else
                    el_len <= 24'd0;
                run_v <= 1'b0;
                state <= S_RXLEN;
            end
            S_RXLEN: begin
                ow_addr <= q_rxlen + {{(ADDR_W-18){1'b0}}, k, 2'b00};
                ow_data <= {96'd0, p_op, 7'd0, p_se, el_len[15:0]};
                ow_16   <= 1'b0;
                ow_id   <= OWN_ID;
                ow_fwd  <= 1'b0;
                ret     <= op_side ? S_IMM : S_REL;
                state   <= S_OWN;
            end
            S_IMM: if (ie_full) begin
                // the Table 1-1 beat must be this packet's
                if (ie_word[47:40] != p_qp ||
                    ie_word[39:32] != (p_wimm ? 8'h03 : side_type))
                    err <= 1'b1;
                if (immq_room)
                    state <= S_IMMQ;
                else
                    state <= S_CIAR;
            end
            S_CIAR: if (m_axi_arready)
                state <= S_CIR;
            S_CIR: if (m_axi_rvalid) begin
                q_ci <= r_word[15:0];
                if (r_word >= q_depth)
                    err <= 1'b1;
                poll  <= CI_POLL;
                state <= S_CIWT;
            end
            S_CIWT: begin
                // room now? else wait a while before reading again
                if (immq_room)
                    state <= S_IMMQ;
                else if (poll == 0)
                    state <= S_CIAR;
                else
                    poll <= poll - 16'd1;
            end
            S_IMMQ: begin
                ow_addr <= q_immq + {{(ADDR_W-20){1'b0}}, q_iwp, 4'd0};
                // bytes 0-7 the Table 1-1 word, 8-11 the RQ index,
                // 12-15 the RETH length (WRITE with immediate)
                ow_data <= {p_wimm ? p_reth : 32'd0,
                            16'd0, p_wimm ? q_wp : k, ie_word};
                ow_16   <= 1'b1;
                ow_id   <= OWN_ID;
                ow_fwd  <= 1'b0;
                ie_full <= 1'b0;
                ret     <= S_IWP;
                state   <= S_OWN;
            end
            S_IWP: begin
                ow_addr <= q_db + 4;                // RQWPTRDBADD + 4
                ow_data <= {112'd0, iwp_nxt};
                ow_16   <= 1'b0;
                ow_id   <= OWN_ID;
                ow_fwd  <= 1'b0;
                q_iwp   <= iwp_nxt;
                ret     <= p_wimm ? S_WB : S_REL;
                state   <= S_OWN;
            end
            S_REL: begin
                q_wp <= db_val[15:0];
                if (db_hs) begin
                    if (rq_db_i_valid && rq_db_o_rdy)
                        state <= S_WB;
                end else begin
                    // the IP's doorbell write, as it was: its B goes back to it
                    ow_addr <= q_db;
                    ow_data <= {96'd0, db_val};
                    ow_16   <= 1'b0;
                    ow_id   <= db_id;
                    ow_fwd  <= 1'b1;
                    ret     <= S_WB;
                    state   <= S_OWN;
                end
            end
            S_WB: begin
                t_wp[p_qp]  <= q_wp;
                t_iwp[p_qp] <= q_iwp;
                t_ci[p_qp]  <= q_ci;
                state <= S_IDLE;
            end
            S_OWN: begin
                if (!ow_aw_done && m_axi_awready) ow_aw_done <= 1'b1;
                if (!ow_w_done && m_axi_wready)   ow_w_done  <= 1'b1;
                if ((ow_aw_done || m_axi_awready) && (ow_w_done || m_axi_wready))
                    state <= ow_fwd ? ret : S_OWNB;
            end
            S_OWNB: if (m_axi_bvalid) begin
                if (m_axi_bresp[1])
                    err <= 1'b1;
                state <= ret;
            end
            default: state <= S_IDLE;
            endcase

            if (state != S_OWN) begin
                ow_aw_done <= 1'b0;
                ow_w_done  <= 1'b0;
            end
            if (state == S_OWN &&
                (ow_aw_done || m_axi_awready) && (ow_w_done || m_axi_wready)) begin
                ow_aw_done <= 1'b0;
                ow_w_done  <= 1'b0;
            end
        end
    end

    // simulation and FPGA power-up: pointers at 0
    integer n;
    initial
        for (n = 0; n < NQ; n = n + 1) begin
            t_wp[n] = 16'd0;
            t_iwp[n] = 16'd0;
            t_ci[n] = 16'd0;
        end

endmodule

`default_nettype wire
