// SPDX-License-Identifier: MIT
//
// Testbench of ernic_sideband: replays a model trace (model/axi_trace.c;
// format in hw/README.md) into the block as the IP's ports would carry
// it, with a memory model behind m_axi_* that logs every byte written
// ("M beat_address wstrb wdata", one line per beat) for tests/hw/
// sb_memcmp, which compares it with the model's own writes.
//
//   vvp tb.vvp +trace=T +out=O [+seed=N] [+stall=PCT] [+hs=1] [+look=N]
//     stall: percent of cycles the memory and the doorbell consumer
//            hold their ready low, and the CMAC stream has no beat
//            (random, from seed)
//     look:  frames (P lines) the CMAC stream may run ahead of the
//            IP's writes (the IP's RX buffer): the sniffer sees later
//            packets before the IP stores earlier ones
//     cidelay: software's IMMQ consumer index (C events) reaches memory
//            only this many cycles later: the block finds the IMMQ full
//            and must poll and hold the IP meanwhile
//     hs:    RQ doorbells by the rx_pkt_hndler_o_rq_db_* handshake
//            (QPCONFi[4] = 0) instead of AXI writes; the consumer then
//            writes the doorbell word, as the provider expects
// Prints "TB PASS ..." or "TB FAIL: reason".

`timescale 1ns/1ps
`default_nettype none

module tb_sideband;
    localparam integer ID_W = 4;
    localparam integer AW = 64;
    localparam integer TIMEOUT = 200000;   // cycles for one handshake

    reg clk = 0, resetn = 0;
    always #2 clk = ~clk;

    // ---- DUT ports ----
    reg  [31:0]   snp_awaddr = 0, snp_wdata = 0;
    reg           snp_awvalid = 0, snp_wvalid = 0;
    reg  [ID_W-1:0] s_awid = 0;
    reg  [AW-1:0] s_awaddr = 0;
    reg  [7:0]    s_awlen = 0;
    reg  [2:0]    s_awsize = 0;
    reg           s_awvalid = 0;
    wire          s_awready;
    reg  [511:0]  s_wdata = 0;
    reg  [63:0]   s_wstrb = 0;
    reg           s_wlast = 0, s_wvalid = 0;
    wire          s_wready;
    wire [ID_W-1:0] s_bid;
    wire [1:0]    s_bresp;
    wire          s_bvalid;
    wire [ID_W-1:0] m_awid, m_arid;
    wire [AW-1:0] m_awaddr, m_araddr;
    wire [7:0]    m_awlen, m_arlen;
    wire [2:0]    m_awsize, m_arsize;
    wire [1:0]    m_awburst, m_arburst;
    wire          m_awvalid, m_wvalid, m_wlast, m_arvalid, m_rready, m_bready;
    reg           m_awready = 0, m_wready = 0, m_arready = 0;
    wire [511:0]  m_wdata;
    wire [63:0]   m_wstrb;
    reg  [ID_W-1:0] m_bid = 0;
    reg           m_bvalid = 0, m_rvalid = 0;
    reg  [511:0]  m_rdata = 0;
    reg  [63:0]   ieth_tdata = 0;
    reg           ieth_tvalid = 0;
    wire          ieth_tready;
    reg  [511:0]  cm_tdata = 0;
    reg  [63:0]   cm_tkeep = 0;
    reg           cm_tlast = 0, cm_tvalid = 0;
    wire [31:0]   n_nohdr, n_frames, n_icrc, n_kept;
    reg  [31:0]   db_i_data = 0;
    reg  [9:0]    db_i_addr = 0;
    reg           db_i_valid = 0;
    wire          db_i_rdy;
    wire [31:0]   db_o_data;
    wire [9:0]    db_o_addr;
    wire          db_o_valid;
    reg           db_o_rdy = 0;
    wire          busy, err;

    ernic_sideband #(.NUM_QP(255), .ADDR_W(AW), .ID_W(ID_W), .CI_POLL(16)) dut (
        .clk(clk), .resetn(resetn),
        .snp_awaddr(snp_awaddr), .snp_awvalid(snp_awvalid), .snp_awready(snp_awvalid),
        .snp_wdata(snp_wdata), .snp_wvalid(snp_wvalid), .snp_wready(snp_wvalid),
        .s_axi_awid(s_awid), .s_axi_awaddr(s_awaddr), .s_axi_awlen(s_awlen),
        .s_axi_awsize(s_awsize), .s_axi_awburst(2'b01), .s_axi_awvalid(s_awvalid),
        .s_axi_awready(s_awready), .s_axi_wdata(s_wdata), .s_axi_wstrb(s_wstrb),
        .s_axi_wlast(s_wlast), .s_axi_wvalid(s_wvalid), .s_axi_wready(s_wready),
        .s_axi_bid(s_bid), .s_axi_bresp(s_bresp), .s_axi_bvalid(s_bvalid),
        .s_axi_bready(1'b1),
        .m_axi_awid(m_awid), .m_axi_awaddr(m_awaddr), .m_axi_awlen(m_awlen),
        .m_axi_awsize(m_awsize), .m_axi_awburst(m_awburst), .m_axi_awvalid(m_awvalid),
        .m_axi_awready(m_awready), .m_axi_wdata(m_wdata), .m_axi_wstrb(m_wstrb),
        .m_axi_wlast(m_wlast), .m_axi_wvalid(m_wvalid), .m_axi_wready(m_wready),
        .m_axi_bid(m_bid), .m_axi_bresp(2'b00), .m_axi_bvalid(m_bvalid),
        .m_axi_bready(m_bready),
        .m_axi_arid(m_arid), .m_axi_araddr(m_araddr), .m_axi_arlen(m_arlen),
        .m_axi_arsize(m_arsize), .m_axi_arburst(m_arburst), .m_axi_arvalid(m_arvalid),
        .m_axi_arready(m_arready), .m_axi_rdata(m_rdata), .m_axi_rlast(1'b1),
        .m_axi_rvalid(m_rvalid), .m_axi_rready(m_rready),
        .ieth_tdata(ieth_tdata), .ieth_tvalid(ieth_tvalid), .ieth_tready(ieth_tready),
        .cm_tdata(cm_tdata), .cm_tkeep(cm_tkeep), .cm_tlast(cm_tlast),
        .cm_tvalid(cm_tvalid), .cm_tready(1'b1),
        .rq_db_i_data(db_i_data), .rq_db_i_addr(db_i_addr), .rq_db_i_valid(db_i_valid),
        .rq_db_i_rdy(db_i_rdy), .rq_db_o_data(db_o_data), .rq_db_o_addr(db_o_addr),
        .rq_db_o_valid(db_o_valid), .rq_db_o_rdy(db_o_rdy),
        .busy(busy), .err(err), .n_nohdr(n_nohdr), .n_frames(n_frames),
        .n_icrc(n_icrc), .n_kept(n_kept));

    // ---- options ----
    reg [8*1024-1:0] trace_path, out_path;
    integer seed = 1, stall = 0, hs = 0, cidelay = 0, look = 0, cycle = 0;
    localparam integer IP_LAT = 8;  // cycles from a frame's end to the IP's writes for it
    // the two readers of the trace: the IP's writes (fd) and the CMAC (fp)
    integer p_need = 0;     // P lines the write side has passed
    integer p_sent = 0;     // frames the CMAC side has sent
    integer p_done = 0;     // ... the cycle its last one ended
    integer r_done = 0;     // R lines the write side has applied
    integer n_frame_beats = 0;
    integer fd, fo, rc;
    integer n_ev = 0, n_pkt = 0, n_beats = 0, n_reg = 0, n_imm = 0, n_db = 0;
    integer n_mbeats = 0, n_ar = 0, n_bip = 0, n_bsent = 0;

    integer rs;
    function stalled(input integer dummy);
        stalled = ({$random(rs)} % 100) < stall;
    endfunction

    task fail(input [8*80-1:0] why);
        begin
            $display("TB FAIL: %0s (after %0d events, %0d packets)", why, n_ev, n_pkt);
            $fclose(fo);
            $finish;
        end
    endtask

    // ---- memory behind m_axi: logs writes, answers the CI reads ----
    reg           mw_act = 0;
    reg [AW-1:0]  mw_addr;
    reg [ID_W-1:0] bq [0:63];
    integer       bq_h = 0, bq_t = 0, n_wdone = 0;
    // software's IMMQ consumer index words (C events)
    reg [AW-1:0]  ci_a [0:1023];
    reg [31:0]    ci_v [0:1023];    // the value now in memory
    reg [31:0]    ci_n [0:1023];    // ... and the one arriving at ci_t
    integer       ci_t [0:1023];
    integer       n_ci = 0, i;
    reg [31:0]    rd;

    always @(posedge clk) begin
        cycle = cycle + 1;
        for (i = 0; i < n_ci; i = i + 1)
            if (cycle >= ci_t[i]) ci_v[i] = ci_n[i];
        m_awready <= !mw_act && !stalled(0);
        m_wready  <= mw_act && !stalled(0);
        if (m_awvalid && m_awready) begin
            mw_act   <= 1'b1;
            mw_addr  <= m_awaddr;
            m_awready <= 1'b0;
            bq[bq_t % 64] <= m_awid;
            bq_t = bq_t + 1;
        end
        if (m_wvalid && m_wready) begin
            $fwrite(fo, "M %h %h %h\n", {mw_addr[AW-1:6], 6'd0}, m_wstrb, m_wdata);
            n_mbeats = n_mbeats + 1;
            mw_addr <= {mw_addr[AW-1:6] + 1'b1, 6'd0};
            if (m_wlast) begin
                n_wdone = n_wdone + 1;
                mw_act <= 1'b0;
                m_wready <= 1'b0;
            end
        end
        // B, in order, after the burst's last beat (bq_h < written bursts)
        if (m_bvalid && m_bready) begin
            m_bvalid <= 1'b0;
            bq_h = bq_h + 1;
        end else if (!m_bvalid && bq_h < n_wdone && !stalled(0)) begin
            m_bvalid <= 1'b1;
            m_bid <= bq[bq_h % 64];
        end
        // AR / R: the word at araddr from the C events, else 0
        m_arready <= !m_rvalid && !stalled(0);
        if (m_arvalid && m_arready) begin
            rd = 0;
            for (i = 0; i < n_ci; i = i + 1)
                if (ci_a[i] == m_araddr) rd = ci_v[i];
            m_rdata <= {16{rd}};
            m_rvalid <= 1'b1;
            m_arready <= 1'b0;
            n_ar = n_ar + 1;
        end else if (m_rvalid && m_rready) begin
            m_rvalid <= 1'b0;
        end
        // the doorbell consumer (hs mode): writes the word where the
        // provider reads it
        db_o_rdy <= !stalled(0);
        if (db_o_valid && db_o_rdy)
            $fwrite(fo, "M %h %h %h\n", {cur_db[AW-1:6], 6'd0},
                    64'hF << cur_db[5:0], {16{db_o_data}});
        if (s_bvalid) n_bip = n_bip + 1;
        if (err) begin
            $display("TB block: state=%0d qp=%0d wimm=%b op=%h se=%b hit=%b bad=%b order=%b ieth=%h nohdr=%0d",
                     dut.state, dut.p_qp, dut.p_wimm, dut.p_op, dut.p_se, dut.q_hit,
                     dut.q_bad, dut.q_order, dut.ie_word, n_nohdr);
            fail("the block raised err");
        end
    end

    // ---- the IP side: the trace, one event at a time ----
    reg [8*16-1:0] tag;
    reg [8*4096-1:0] line;
    reg [63:0] a, b, c, d;
    reg [511:0] data;
    reg [AW-1:0] cur_db;
    reg [7:0] cur_qp;
    integer nb, k, t;

    task wait_hs(input integer which);   // until the handshake on which
        begin
            t = 0;
            @(posedge clk);
            while (!((which == 1 && s_awready) ||
                     (which == 2 && s_wready) || (which == 3 && ieth_tready) ||
                     (which == 4 && db_i_rdy) ||
                     (which == 5 && p_sent >= p_need && cycle - p_done >= IP_LAT) ||
                     (which == 6 && !busy))) begin
                t = t + 1;
                if (t > TIMEOUT) begin
                    $display("TB block: state=%0d qp=%0d wimm=%b op=%h hit=%b ieth=%h ie_full=%b wait=%0d p_sent=%0d p_need=%0d ci=%0d iwp=%0d depth=%0d db=%h",
                             dut.state, dut.p_qp, dut.p_wimm, dut.p_op, dut.q_hit,
                             dut.ie_word, dut.ie_full, which, p_sent, p_need, dut.q_ci, dut.q_iwp, dut.q_depth, dut.q_db);
                    $display("TB rxhdr: op=%0d f_rd=%0d f_wr=%0d q_snap=%0d q_snapped=%b fl_pend=%b q_req=%b", dut.hdr.op, dut.hdr.f_rd, dut.hdr.f_wr, dut.hdr.q_snap, dut.hdr.q_snapped, dut.hdr.fl_pend, dut.q_req);
                    fail("handshake timeout: the block stalls");
                end
                @(posedge clk);
            end
        end
    endtask

    task write_beat(input [511:0] wd, input [63:0] ws, input last);
        begin
            s_wdata <= wd; s_wstrb <= ws; s_wlast <= last; s_wvalid <= 1'b1;
            wait_hs(2);
            s_wvalid <= 1'b0;
            n_beats = n_beats + 1;
        end
    endtask

    initial begin
        if (!$value$plusargs("trace=%s", trace_path)) begin
            $display("TB FAIL: +trace=FILE missing"); $finish;
        end
        if (!$value$plusargs("out=%s", out_path)) begin
            $display("TB FAIL: +out=FILE missing"); $finish;
        end
        rc = $value$plusargs("seed=%d", seed);
        rc = $value$plusargs("stall=%d", stall);
        rc = $value$plusargs("hs=%d", hs);
        rc = $value$plusargs("cidelay=%d", cidelay);
        rc = $value$plusargs("look=%d", look);
        rs = seed;
        fd = $fopen(trace_path, "r");
        fo = $fopen(out_path, "w");
        if (fd == 0 || fo == 0) begin
            $display("TB FAIL: cannot open %0s or %0s", trace_path, out_path); $finish;
        end
        repeat (4) @(posedge clk);
        resetn <= 1'b1;
        @(posedge clk);
        while (!$feof(fd)) begin
            tag = 0;
            rc = $fscanf(fd, "%s", tag);
            if (rc == 1) begin
                n_ev = n_ev + 1;
                // the IP writes for a packet after it has received it
                if (tag != "#" && tag != "P" && tag != "C")
                    wait_hs(5);
                case (tag)
                "#": begin      // a comment; "# H qp ...": the packet stored
                    rc = $fgets(line, fd);
                    rc = $sscanf(line, " H %h", a);
                    if (rc == 1) begin
                        cur_qp = a[7:0];
                        n_pkt = n_pkt + 1;
                    end
                end
                "P": begin      // a frame: the CMAC side sends it
                    rc = $fscanf(fd, "%h", a);
                    for (k = 0; k < a; k = k + 1)
                        rc = $fgets(line, fd);
                    rc = $fgets(line, fd);
                    p_need = p_need + 1;
                end
                "R": begin      // s_axi_lite write
                    rc = $fscanf(fd, "%h %h", a, b);
                    snp_awaddr <= a[31:0]; snp_wdata <= b[31:0];
                    snp_awvalid <= 1'b1; snp_wvalid <= 1'b1;
                    @(posedge clk);
                    snp_awvalid <= 1'b0; snp_wvalid <= 1'b0;
                    repeat (2) @(posedge clk);
                    n_reg = n_reg + 1;
                    r_done = r_done + 1;
                end
                "C": begin      // software's IMMQ CI word in memory
                    // ... as software left it after the packets before:
                    // it cannot consume what the block has not written
                    wait_hs(6);
                    rc = $fscanf(fd, "%h %h", a, b);
                    k = n_ci;
                    for (i = 0; i < n_ci; i = i + 1)
                        if (ci_a[i] == a) k = i;
                    if (k == n_ci) ci_v[k] = 0;
                    else if (cycle >= ci_t[k]) ci_v[k] = ci_n[k];
                    ci_a[k] = a; ci_n[k] = b[31:0]; ci_t[k] = cycle + cidelay;
                    if (k == n_ci) n_ci = n_ci + 1;
                end
                "A": begin      // element burst
                    rc = $fscanf(fd, "%h %h", a, b);
                    nb = b;
                    s_awid <= 4'd1; s_awaddr <= a; s_awlen <= nb - 1;
                    s_awsize <= 3'd6; s_awvalid <= 1'b1;
                    wait_hs(1);
                    s_awvalid <= 1'b0;
                    for (k = 0; k < nb; k = k + 1) begin
                        rc = $fscanf(fd, "%s %h %h", tag, c, data);
                        if (rc != 3 || tag != "B") fail("B line expected");
                        write_beat(data, c, k == nb - 1);
                    end
                end
                "S": begin      // ieth_immdt_m_axis beat
                    rc = $fscanf(fd, "%h", a);
                    ieth_tdata <= a; ieth_tvalid <= 1'b1;
                    wait_hs(3);
                    ieth_tvalid <= 1'b0;
                    n_imm = n_imm + 1;
                end
                "D": begin      // RQ doorbell
                    rc = $fscanf(fd, "%h %h", a, b);
                    cur_db = a;
                    n_db = n_db + 1;
                    if (hs) begin
                        db_i_data <= b[31:0]; db_i_addr <= {cur_qp, 2'b00};
                        db_i_valid <= 1'b1;
                        wait_hs(4);
                        db_i_valid <= 1'b0;
                    end else begin
                        s_awid <= 4'd2; s_awaddr <= a; s_awlen <= 0;
                        s_awsize <= 3'd2; s_awvalid <= 1'b1;
                        wait_hs(1);
                        s_awvalid <= 1'b0;
                        write_beat({16{b[31:0]}}, 64'hF << a[5:0], 1'b1);
                    end
                end
                default: fail("unknown trace line");
                endcase
            end
        end
        // let the last packet finish
        t = 0;
        while (busy || m_bvalid || mw_act || bq_h < bq_t) begin
            @(posedge clk);
            t = t + 1;
            if (t > TIMEOUT) fail("the block never went idle");
        end
        repeat (20) @(posedge clk);
        while (p_sent < p_need) @(posedge clk);
        repeat (20) @(posedge clk);
        if (n_frames != p_sent) fail("the sniffer did not count every frame");
        $display("TB PASS trace=%0s events=%0d registers=%0d packets=%0d ip_write_beats=%0d ieth_beats=%0d doorbells=%0d memory_beats=%0d ci_reads=%0d frames=%0d frame_beats=%0d bad_icrc=%0d kept=%0d hs=%0d stall=%0d cidelay=%0d look=%0d",
                 trace_path, n_ev, n_reg, n_pkt, n_beats, n_imm, n_db, n_mbeats, n_ar,
                 n_frames, n_frame_beats, n_icrc, n_kept, hs, stall, cidelay, look);
        $fclose(fo);
        $finish;
    end
    // ---- the CMAC side: every P line's frame, in order, at most look
    // frames ahead of the write side, never past a register write the
    // write side has not applied ----
    integer fp, rcp, r_seen = 0, nfb, kk, tp;
    reg [8*16-1:0] ptag;
    reg [8*4096-1:0] pline;
    reg [63:0] pa, pkeep;
    reg [511:0] pdata;
    initial begin
        @(posedge resetn);
        fp = $fopen(trace_path, "r");
        if (fp == 0) begin
            $display("TB FAIL: cannot open %0s twice", trace_path); $finish;
        end
        while (!$feof(fp)) begin
            ptag = 0;
            rcp = $fscanf(fp, "%s", ptag);
            if (rcp == 1) begin
                if (ptag == "P") begin
                    rcp = $fscanf(fp, "%h", pa);
                    nfb = pa;
                    tp = 0;
                    while (!(p_sent < p_need + look && r_done >= r_seen)) begin
                        @(posedge clk);
                        tp = tp + 1;
                        if (tp > 10 * TIMEOUT) fail("the CMAC side waited forever");
                    end
                    for (kk = 0; kk < nfb; kk = kk + 1) begin
                        rcp = $fscanf(fp, "%s %h %h", ptag, pkeep, pdata);
                        if (rcp != 3 || ptag != "F") fail("F line expected");
                        @(posedge clk);
                        while (stalled(0)) begin
                            cm_tvalid <= 1'b0;
                            @(posedge clk);
                        end
                        cm_tdata <= pdata; cm_tkeep <= pkeep;
                        cm_tlast <= (kk == nfb - 1); cm_tvalid <= 1'b1;
                        n_frame_beats = n_frame_beats + 1;
                    end
                    @(posedge clk);
                    cm_tvalid <= 1'b0; cm_tlast <= 1'b0;
                    p_sent = p_sent + 1;
                    p_done = cycle;
                end else begin
                    if (ptag == "R") r_seen = r_seen + 1;
                    rcp = $fgets(pline, fp);
                end
            end
        end
    end
endmodule

`default_nettype wire
