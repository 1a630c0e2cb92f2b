// SPDX-License-Identifier: MIT
//
// ernic_rxhdr: the header sniffer of the RX side band (hw/README.md,
// "The header sniffer").
//
// It watches the frames the CMAC hands the IP on roce_cmac_s_axis (a tap:
// it never drives tready) and keeps, per RC QP, its latest NCAND candidate
// packets in arrival order. ernic_sideband asks it, once the IP has stored
// a packet, which one that was:
//   - an RQ doorbell of QP q: the SEND packet with the smallest PSN after
//     the last one it answered for q (q_wimm = 0);
//   - a Table 1-1 beat of type WRITE_IMMEDIATE for q: the RDMA WRITE Last
//     or Only with Immediate packet chosen the same way (q_wimm = 1), and
//     the DMA length of its message: its own RETH's, or that of the WRITE
//     First whose length, in packets of the QP's PMTU, ends the message
//     exactly there.
// Why the smallest PSN: an RC responder takes a QP's requests in PSN
// order. What the IP refused (a duplicate, one out of sequence, one it
// answered with an RNR NAK) is either behind the answered PSN, and purged,
// or is sent again with the same PSN and header, and its newest copy is
// the one kept. What the IP could not take in any case does not become a
// candidate: the sniffer checks what a corrupted or misdirected frame
// would fail (the ICRC over the frame, IPv4 without options or IPv6, UDP
// port 4791, BTH version 0, the device's MAC and IP address, a QP of
// 2..NUM_QP). The PSN of the last answer starts at the PSN software writes
// to LSTRQREQi (RTR) and every write there forgets the QP's candidates.
// Assumed: the IP stores a packet before NCAND newer candidates of its QP
// have arrived (its RX buffer holds fewer), and at most WF_HIST - 1 WRITE
// Firsts of the QP arrive between a message's first packet and its Table
// 1-1 beat.
//
// Frames: Ethernet II, at most one 802.1Q tag, then IPv4 (IHL 5, no
// fragment) or IPv6 (no extension header), UDP, BTH. The ICRC is checked
// on the IP datagram's bytes (Ethernet padding excluded) by running the
// CRC over them, ICRC included, and comparing with the CRC-32 residue. The
// frame has no FCS (the CMAC removed it).
//
// Never on silicon (hw/README.md): simulated under Icarus Verilog.

`default_nettype none

module ernic_rxhdr #(
    parameter integer NUM_QP  = 64,  // C_NUM_QP
    parameter integer NCAND   = 16,  // candidates kept per QP
    parameter integer WF_HIST = 4,   // WRITE First packets kept per QP
    parameter integer FIFO_LG = 4,   // log2 of the candidate FIFO's depth
    parameter integer LITE_AW = 32
) (
    input  wire               clk,
    input  wire               resetn,
    // ---- roce_cmac_s_axis, observed ----
    input  wire [511:0]       cm_tdata,
    input  wire [63:0]        cm_tkeep,
    input  wire               cm_tlast,
    input  wire               cm_tvalid,
    input  wire               cm_tready,
    // ---- committed s_axi_lite writes (ernic_sideband's snooper) ----
    input  wire               sn_commit,
    input  wire [LITE_AW-1:0] sn_addr,
    input  wire [31:0]        sn_data,
    // ---- query: held until q_ack (one cycle) ----
    input  wire               q_req,
    input  wire [7:0]         q_qp,
    input  wire               q_wimm,
    output reg                q_ack,
    output reg                q_hit,     // a candidate was found
    output reg                q_bad,     // ... but its WRITE message's length
                                         // was not found
    output reg                q_order,   // a candidate of the other kind came first
    output reg  [7:0]         q_op,
    output reg                q_se,
    output reg  [31:0]        q_len,     // RETH DMA length (q_wimm)
    // ---- counters, for the testbench and a debug register ----
    output reg  [31:0]        n_frames,  // frames seen
    output reg  [31:0]        n_icrc,    // ... with a bad ICRC or length
    output reg  [31:0]        n_cand,    // candidates offered to the store
    output reg  [31:0]        n_kept,    // ... and kept
    output reg  [31:0]        n_over     // candidates lost: the FIFO was full
);
    localparam integer NQ = NUM_QP + 1;
    localparam integer EW = 68;              // {v, kind[1:0], se, op, psn, len}
    localparam integer HW = 57;              // {v, psn, len}
    localparam integer WL = (WF_HIST > 1) ? $clog2(WF_HIST) : 1;
    localparam [31:0] RESIDUE = 32'hDEBB20E3; // CRC-32 register after data + its ICRC
    // the CRC register before byte 0 of a frame, such that after the
    // Ethernet header's first 6 (untagged) or 10 (tagged) bytes, fed as
    // zeros, it holds 0xFFFFFFFF: the ICRC's start value. The last 8 bytes
    // of the Ethernet header are fed as ones: the masked LRH of Annex A17.
    localparam [31:0] S0_UNTAGGED = 32'hAF4C9D16;
    localparam [31:0] S0_TAGGED   = 32'hAE0BACAE;
    localparam [31:0] POLY = 32'hEDB88320;
    // kinds: SEND*; a request that is none of the candidates (a mark of
    // the QP's PSN moving on; a WRITE First also keeps its length); RDMA
    // WRITE Last / Only with Immediate
    localparam [1:0] K_SEND = 2'd0, K_MARK = 2'd1, K_WLAST = 2'd2, K_WONLY = 2'd3;
    localparam [23:0] MARK_LAG = 24'h200000; // a mark moves the answered PSN to 2^21 behind it

    // ------------------------------------------------------------------
    // CRC-32 (reflected, Ethernet's), 64 bytes at a time
    // ------------------------------------------------------------------
    function [31:0] crc64b(input [31:0] s, input [511:0] d);
        integer b;
        reg [31:0] c;
        begin
            c = s;
            for (b = 0; b < 512; b = b + 1)
                c = (c >> 1) ^ ({32{c[0] ^ d[b]}} & POLY);   // XOR form: linear
            crc64b = c;
        end
    endfunction

    // the register before m zero bytes, given the one after (m <= 64):
    // a zero step is c' = c >> 1 ^ (c[0] ? POLY : 0), and POLY[31] = 1
    // tells c[0] back. Seven fixed steps, 1 to 64 bytes.
    function [31:0] unzero(input [31:0] s, input [6:0] m);
        integer st, b;
        reg [31:0] c;
        begin
            c = s;
            for (st = 0; st < 7; st = st + 1)
                if (m[st])
                    for (b = 0; b < (8 << st); b = b + 1)
                        c = {c[30:0], 1'b0} ^ ({32{c[31]}} & {POLY[30:0], 1'b1});
            unzero = c;
        end
    endfunction

    // the register after the first n bytes of d (0..64): the beat with
    // the others zeroed, then the zero bytes behind taken back. One
    // 512-bit XOR network for every beat length.
    function [31:0] crc_n(input [31:0] s, input [511:0] d, input [6:0] n);
        integer j;
        reg [511:0] m;
        begin
            for (j = 0; j < 64; j = j + 1)
                m[8*j +: 8] = (j < n) ? d[8*j +: 8] : 8'h00;
            crc_n = unzero(crc64b(s, m), 7'd64 - n);
        end
    endfunction

    // Where Annex A17 masks a frame's first two beats, for an Ethernet
    // header of l3 bytes (14 or 18) and IPv4 or IPv6: {bytes to zero,
    // bytes to ones, bytes whose low nibble is ones}, 64 bits each. The
    // Ethernet header but its last 8 bytes is zero, those are the masked
    // LRH (ones); IPv4 TOS, TTL, checksum or IPv6 class, flow label, hop
    // limit; the UDP checksum; BTH byte 4.
    function [191:0] amask(input integer beat, input integer l3, input integer v6);
        integer j, pos, bth;
        reg [63:0] z, o, nb;
        begin
            z = 0; o = 0; nb = 0;
            bth = l3 + (v6 ? 48 : 28);
            for (j = 0; j < 64; j = j + 1) begin
                pos = 64 * beat + j;
                if (pos < l3 - 8)
                    z[j] = 1'b1;
                else if (pos < l3)
                    o[j] = 1'b1;
                else if (!v6 && (pos == l3 + 1 || pos == l3 + 8 ||
                                 pos == l3 + 10 || pos == l3 + 11))
                    o[j] = 1'b1;
                else if (v6 && pos == l3)
                    nb[j] = 1'b1;
                else if (v6 && (pos == l3 + 1 || pos == l3 + 2 ||
                                pos == l3 + 3 || pos == l3 + 7))
                    o[j] = 1'b1;
                else if (pos == bth - 2 || pos == bth - 1 || pos == bth + 4)
                    o[j] = 1'b1;
            end
            amask = {z, o, nb};
        end
    endfunction

    // a beat as the ICRC sees it, given its masks
    function [511:0] icrc_view(input [511:0] d, input [191:0] mk);
        integer j;
        begin
            for (j = 0; j < 64; j = j + 1)
                icrc_view[8*j +: 8] = mk[128 + j] ? 8'h00 :
                                      mk[64 + j]  ? 8'hFF :
                                      mk[j]       ? (d[8*j +: 8] | 8'h0F) :
                                                    d[8*j +: 8];
        end
    endfunction

    // The header fields of a frame's first 128 bytes w, for an Ethernet
    // header of l3 bytes and IPv4 or IPv6 (constants: one copy of this
    // per case, each a set of fixed wires):
    // {dmac 48, l4 ok 1, dst IP 128 (IPv4 in [31:0]), UDP dport 16,
    //  opcode 8, SE 1, TVer 4, dest QP 24, PSN 24, RETH DMA length 32}
    localparam integer FW = 286;
    function [FW-1:0] fields(input [1023:0] w, input integer l3, input integer v6);
        integer udp, bth, k;
        reg [127:0] ip;
        reg         l4;
        begin
            udp = l3 + (v6 ? 40 : 20);
            bth = udp + 8;
            ip = 0;
            if (v6) begin
                for (k = 0; k < 16; k = k + 1)
                    ip[8*(15-k) +: 8] = w[8*(l3+24+k) +: 8];
                l4 = w[8*(l3+6) +: 8] == 8'd17;
            end else begin
                for (k = 0; k < 4; k = k + 1)
                    ip[8*(3-k) +: 8] = w[8*(l3+16+k) +: 8];
                // UDP, not a fragment (MF and offset 0; DF as it likes)
                l4 = w[8*(l3+9) +: 8] == 8'd17 &&
                     (w[8*(l3+6) +: 8] & 8'h3F) == 0 && w[8*(l3+7) +: 8] == 0;
            end
            fields = {w[0 +: 8], w[8 +: 8], w[16 +: 8], w[24 +: 8], w[32 +: 8], w[40 +: 8],
                      l4, ip,
                      w[8*(udp+2) +: 8], w[8*(udp+3) +: 8],
                      w[8*bth +: 8], w[8*(bth+1) + 7], w[8*(bth+1) +: 4],
                      w[8*(bth+5) +: 8], w[8*(bth+6) +: 8], w[8*(bth+7) +: 8],
                      w[8*(bth+9) +: 8], w[8*(bth+10) +: 8], w[8*(bth+11) +: 8],
                      w[8*(bth+24) +: 8], w[8*(bth+25) +: 8],
                      w[8*(bth+26) +: 8], w[8*(bth+27) +: 8]};
        end
    endfunction

    // ------------------------------------------------------------------
    // What software wrote: the device's addresses
    // ------------------------------------------------------------------
    reg [47:0]  my_mac;
    reg [31:0]  my_ip4;
    reg [127:0] my_ip6;
    wire [9:0]  sn_blk = sn_addr[17:8];
    wire        sn_top = (LITE_AW <= 18) || (sn_addr[LITE_AW-1:18] == 0);
    wire [9:0]  sn_qp  = sn_blk - 10'h201;
    wire        sn_qpw   = sn_commit && sn_top && sn_blk >= 10'h202 &&
                           sn_qp <= NUM_QP;
    wire        sn_lstrq = sn_qpw && sn_addr[7:0] == 8'h44;   // LSTRQREQi
    wire        sn_qpconf = sn_qpw && sn_addr[7:0] == 8'h00;  // QPCONFi
    always @(posedge clk)
        if (sn_commit && sn_top && sn_blk == 10'h200)
            case (sn_addr[7:0])
            8'h10: my_mac[31:0]     <= sn_data;          // MACXADDLSB
            8'h14: my_mac[47:32]    <= sn_data[15:0];    // MACXADDMSB
            8'h20: my_ip6[31:0]     <= sn_data;          // IPV6XADD1 (bytes 12-15)
            8'h24: my_ip6[63:32]    <= sn_data;
            8'h28: my_ip6[95:64]    <= sn_data;
            8'h2C: my_ip6[127:96]   <= sn_data;          // IPV6XADD4 (bytes 0-3)
            8'h70: my_ip4           <= sn_data;          // IPV4XADD
            default: ;
            endcase

    // ------------------------------------------------------------------
    // The frame: beat counter, header window, ICRC
    // ------------------------------------------------------------------
    wire        beat = cm_tvalid & cm_tready;
    reg  [7:0]  bi;              // beat index in the frame (saturates)
    reg  [511:0] b0;             // the frame's first beat
    reg         f_tag, f_v6, f_ip;
    reg  [16:0] f_end;           // bytes of Ethernet header + IP datagram
    reg  [31:0] crc;

    // beat 0, as it arrives (the data is an argument: a function's
    // continuous use is re-evaluated only when its arguments change)
    function [7:0] cb(input [511:0] d, input integer k);
        cb = d[8*k +: 8];
    endfunction
    wire        c_tag = {cb(cm_tdata, 12), cb(cm_tdata, 13)} == 16'h8100;
    wire [15:0] c_et  = c_tag ? {cb(cm_tdata, 16), cb(cm_tdata, 17)} : {cb(cm_tdata, 12), cb(cm_tdata, 13)};
    wire [7:0]  c_ipb = c_tag ? cb(cm_tdata, 18) : cb(cm_tdata, 14);
    wire        c_v4  = c_et == 16'h0800 && c_ipb == 8'h45;
    wire        c_v6  = c_et == 16'h86DD && c_ipb[7:4] == 4'h6;
    wire [15:0] c_len = c_v4 ? (c_tag ? {cb(cm_tdata, 20), cb(cm_tdata, 21)} : {cb(cm_tdata, 16), cb(cm_tdata, 17)})
                             : (c_tag ? {cb(cm_tdata, 22), cb(cm_tdata, 23)} : {cb(cm_tdata, 18), cb(cm_tdata, 19)});
    wire [16:0] c_end = (c_tag ? 17'd18 : 17'd14) + (c_v6 ? 17'd40 : 17'd0) +
                        {1'b0, c_len};

    wire        is0   = (bi == 0);
    wire        u_tag = is0 ? c_tag : f_tag;
    wire        u_v6  = is0 ? c_v6 : f_v6;
    wire [16:0] u_end = is0 ? c_end : f_end;
    wire [16:0] u_off = {1'b0, bi, 6'd0};
    wire [6:0]  u_n   = (u_end <= u_off) ? 7'd0 :
                        (u_end - u_off >= 17'd64) ? 7'd64 : u_end[6:0] - u_off[6:0];
    wire [31:0] u_s   = is0 ? (c_tag ? S0_TAGGED : S0_UNTAGGED) : crc;
    // Annex A17's masks of beat 0 and 1, for the four header layouts
    wire [191:0] mk_0_4  = amask(0, 14, 0), mk_0_4t = amask(0, 18, 0);
    wire [191:0] mk_0_6  = amask(0, 14, 1), mk_0_6t = amask(0, 18, 1);
    wire [191:0] mk_1_4  = amask(1, 14, 0), mk_1_4t = amask(1, 18, 0);
    wire [191:0] mk_1_6  = amask(1, 14, 1), mk_1_6t = amask(1, 18, 1);
    wire [191:0] u_mk = (bi > 1) ? 192'd0 :
        is0 ? (u_v6 ? (u_tag ? mk_0_6t : mk_0_6) : (u_tag ? mk_0_4t : mk_0_4)) :
              (u_v6 ? (u_tag ? mk_1_6t : mk_1_6) : (u_tag ? mk_1_4t : mk_1_4));
    wire [31:0] crc_next = crc_n(u_s, icrc_view(cm_tdata, u_mk), u_n);

    // highest kept byte + 1 of the last beat
    function [6:0] keep_end(input [63:0] k);
        integer b;
        begin
            keep_end = 0;
            for (b = 0; b < 64; b = b + 1)
                if (k[b]) keep_end = b + 1;
        end
    endfunction
    wire [16:0] u_have = u_off + {10'd0, keep_end(cm_tkeep)};

    // the header, from the first 128 bytes ({beat 1, beat 0})
    wire [1023:0] win = is0 ? {512'd0, cm_tdata} : {cm_tdata, b0};
    reg         h_ok;            // a candidate, ICRC and length aside
    reg  [1:0]  h_kind;
    reg  [7:0]  h_op, h_qp;
    reg         h_se;
    reg  [23:0] h_psn;
    reg  [31:0] h_len;
    reg         w_ok;
    reg  [1:0]  w_kind;
    reg         w_req;
    reg  [7:0]  w_op;
    reg         w_se;
    reg  [23:0] w_psn, w_dqp;
    reg  [31:0] w_len;
    // the four layouts' fields, each from fixed bytes; then the frame's
    wire [FW-1:0] fd_4  = fields(win, 14, 0), fd_4t = fields(win, 18, 0);
    wire [FW-1:0] fd_6  = fields(win, 14, 1), fd_6t = fields(win, 18, 1);
    wire [FW-1:0] fd = u_v6 ? (u_tag ? fd_6t : fd_6) : (u_tag ? fd_4t : fd_4);
    wire [47:0]  fd_mac   = fd[285:238];
    wire         fd_l4    = fd[237];
    wire [127:0] fd_ip    = fd[236:109];
    wire [15:0]  fd_dport = fd[108:93];
    wire [3:0]   fd_tver  = fd[83:80];
    always @* begin
        w_op  = fd[92:85];
        w_se  = fd[84];
        w_dqp = fd[79:56];
        w_psn = fd[55:32];
        w_len = fd[31:0];
        case (w_op)
        8'h00, 8'h01, 8'h02, 8'h03, 8'h04, 8'h05, 8'h16, 8'h17: w_kind = K_SEND;
        8'h09:   w_kind = K_WLAST;
        8'h0B:   w_kind = K_WONLY;
        default: w_kind = K_MARK;   // other RC requests (below); else not kept
        endcase
        w_req = (w_op >= 8'h06 && w_op <= 8'h0C) || w_op == 8'h13 || w_op == 8'h14;
        w_ok = (is0 ? (c_v4 | c_v6) : f_ip) && fd_mac == my_mac && fd_l4 &&
               fd_ip == (u_v6 ? my_ip6 : {96'd0, my_ip4}) &&
               fd_dport == 16'd4791 && fd_tver == 4'd0 &&
               w_dqp >= 24'd2 && w_dqp <= NUM_QP &&
               (w_kind != K_MARK || w_req);
    end

    // the candidate FIFO (frame -> store)
    localparam integer FD = 1 << FIFO_LG;
    reg [EW+7:0]    fifo [0:FD-1];   // {qp, entry}
    reg [FIFO_LG:0] f_wr, f_rd;
    reg             pend, pend_ok;
    reg [EW+7:0]    pend_e;
    // a FIFO write this cycle (the frame that ended last cycle)
    // a candidate while the FIFO has room; a mark only while it is less
    // than half full (marks are hints: losing one costs nothing)
    wire [FIFO_LG:0] f_used = f_wr - f_rd;
    wire push = pend && crc == RESIDUE && pend_ok && pend_e[EW-1] &&
                (pend_e[66:65] == K_MARK ? f_used < FD / 2 : f_used != FD);

    always @(posedge clk) begin
        if (!resetn) begin
            bi       <= 8'd0;
            pend     <= 1'b0;
            f_wr     <= 0;
            n_frames <= 0;
            n_icrc   <= 0;
            n_cand   <= 0;
            n_over   <= 0;
        end else begin
            // the frame ended last cycle: its ICRC is in crc now
            pend <= 1'b0;
            if (pend) begin
                if (crc != RESIDUE || !pend_ok)
                    n_icrc <= n_icrc + 1;
                else if (pend_e[EW-1] && pend_e[66:65] != K_MARK) begin
                    n_cand <= n_cand + 1;
                    if (!push)
                        n_over <= n_over + 1;
                end
            end
            if (push) begin
                fifo[f_wr[FIFO_LG-1:0]] <= pend_e;
                f_wr <= f_wr + 1;
            end
            if (beat) begin
                crc <= crc_next;
                if (is0) begin
                    b0    <= cm_tdata;
                    f_tag <= c_tag;
                    f_v6  <= c_v6;
                    f_ip  <= c_v4 | c_v6;
                    f_end <= c_end;
                end
                if (bi == 0 || bi == 1) begin
                    h_ok   <= w_ok;
                    h_kind <= w_kind;
                    h_op   <= w_op;
                    h_se   <= w_se;
                    h_qp   <= w_dqp[7:0];
                    h_psn  <= w_psn;
                    h_len  <= w_len;
                end
                if (cm_tlast) begin
                    n_frames <= n_frames + 1;
                    pend     <= 1'b1;
                    // a kept header needs its RETH (beat 1 at the latest)
                    // and every byte of the IP datagram
                    pend_ok  <= u_have >= u_end && u_end >= 17'd58;
                    if (bi <= 1)
                        pend_e <= {w_dqp[7:0], w_ok, w_kind, w_se, w_op, w_psn, w_len};
                    else
                        pend_e <= {h_qp, h_ok, h_kind, h_se, h_op, h_psn, h_len};
                    bi <= 8'd0;
                end else if (bi != 8'hFF) begin
                    bi <= bi + 1;
                end
            end
        end
    end

    // ------------------------------------------------------------------
    // The store: per QP, NCAND candidates, WF_HIST WRITE Firsts, the PSN
    // of the last answer. One operation at a time: read, then write.
    // ------------------------------------------------------------------
    reg [NCAND*EW-1:0]   t_ent  [0:NQ-1];
    reg [WF_HIST*HW-1:0] t_wf   [0:NQ-1];
    reg [WL-1:0]         t_wfp  [0:NQ-1];
    reg [23:0]           t_last [0:NQ-1];
    reg [2:0]            t_pmtu [0:NQ-1];   // QPCONFi[10:8]: 256 << it
    reg [2:0]            r_pmtu;
    // the slot of the next candidate: the store keeps each QP's latest
    // NCAND candidates in arrival order
    localparam integer CL = (NCAND > 1) ? $clog2(NCAND) : 1;
    reg [CL-1:0]         t_head [0:NQ-1];
    reg [CL-1:0]         r_head;

    // packets of a message of len bytes at PMTU 256 << pm
    function [31:0] npkts(input [31:0] len, input [2:0] pm);
        reg [32:0] up;
        begin
            up = {1'b0, len} + ((33'd256 << pm) - 33'd1);
            npkts = (len == 0) ? 32'd1 : up[32:0] >> (8 + pm);
        end
    endfunction

    localparam [2:0] O_IDLE = 3'd0, O_INS = 3'd1, O_QRY = 3'd2;
    reg [2:0]  op;
    reg [7:0]  o_qp;
    reg [EW-1:0] o_e;
    reg [NCAND*EW-1:0]   r_ent;
    reg [WF_HIST*HW-1:0] r_wf;
    reg [WL-1:0]         r_wfp;
    reg [23:0]           r_last;
    reg [FIFO_LG:0]      q_snap;      // FIFO writes before the query
    reg                  q_snapped;

    reg        fl_pend;               // a LSTRQREQi write to apply
    reg [7:0]  fl_qp;
    reg [23:0] fl_psn;

    // 24-bit serial-number distance: a - b in (0, 2^22) is "after"
    function after(input [23:0] a, input [23:0] b);
        reg [23:0] d;
        begin
            d = a - b;
            after = d != 0 && d < 24'h400000;
        end
    endfunction

    // per operation, blocking temporaries
    integer s, sel, hh;
    reg        dup;
    reg [23:0] dsel, dany, dd, dbest;
    reg [EW-1:0] x;
    reg [HW-1:0] y;
    reg [NCAND*EW-1:0]   ne;
    reg [WF_HIST*HW-1:0] nw;
    reg [31:0]  wlen;
    reg         wlen_ok;
    // the operation's candidate, by field
    wire [1:0]  o_kind = o_e[66:65];
    wire [23:0] o_psn  = o_e[55:32];

    always @(posedge clk) begin
        q_ack <= 1'b0;
        if (!resetn) begin
            op        <= O_IDLE;
            f_rd      <= 0;
            fl_pend   <= 1'b0;
            q_snapped <= 1'b0;
            n_kept    <= 0;
        end else begin
            if (sn_qpconf)
                t_pmtu[sn_qp[7:0]] <= sn_data[10:8];
            if (sn_lstrq) begin
                fl_pend <= 1'b1;
                fl_qp   <= sn_qp[7:0];
                fl_psn  <= sn_data[23:0];
            end
            // a query waits for every frame that ended before it
            if (q_req && !q_snapped && !q_ack) begin
                q_snap    <= f_wr + (push ? 1 : 0);
                q_snapped <= 1'b1;
            end
            case (op)
            O_IDLE: begin
                if (fl_pend && !sn_lstrq) begin
                    // forget the QP: RTR, reset or recovery
                    t_ent[fl_qp]  <= {(NCAND*EW){1'b0}};
                    t_wf[fl_qp]   <= {(WF_HIST*HW){1'b0}};
                    t_wfp[fl_qp]  <= {WL{1'b0}};
                    t_last[fl_qp] <= fl_psn;
                    t_head[fl_qp] <= {CL{1'b0}};
                    fl_pend <= 1'b0;
                end else if (q_req && q_snapped && f_rd == q_snap && !q_ack) begin
                    // every frame before the query is in: it goes first,
                    // later frames wait in the FIFO
                    o_qp   <= q_qp;
                    r_ent  <= t_ent[q_qp];
                    r_wf   <= t_wf[q_qp];
                    r_pmtu <= t_pmtu[q_qp];
                    r_last <= t_last[q_qp];
                    op     <= O_QRY;
                end else if (f_rd != f_wr) begin
                    {o_qp, o_e} <= fifo[f_rd[FIFO_LG-1:0]];
                    r_ent  <= t_ent[fifo[f_rd[FIFO_LG-1:0]][EW+7:EW]];
                    r_wf   <= t_wf[fifo[f_rd[FIFO_LG-1:0]][EW+7:EW]];
                    r_wfp  <= t_wfp[fifo[f_rd[FIFO_LG-1:0]][EW+7:EW]];
                    r_last <= t_last[fifo[f_rd[FIFO_LG-1:0]][EW+7:EW]];
                    r_head <= t_head[fifo[f_rd[FIFO_LG-1:0]][EW+7:EW]];
                    f_rd   <= f_rd + 1;
                    op     <= O_INS;
                end
            end
            // Written as bit operations on fixed slots: a condition around
            // a wide temporary would cost synthesis a mux of the whole
            // NCAND-entry word at each step.
            O_INS: begin
                op <= O_IDLE;
                if (o_kind == K_MARK) begin
                    // far ahead: the answered PSN follows at 2^21 behind,
                    // so that "after" (2^22) keeps working on a QP that
                    // takes millions of WRITE or READ packets between two
                    // SENDs (no requester has that many outstanding)
                    if (after(o_psn, r_last) && o_psn - r_last >= MARK_LAG)
                        t_last[o_qp] <= o_psn - MARK_LAG;
                end
                // a WRITE First: into the QP's ring, once per PSN
                dup = 1'b0;
                for (hh = 0; hh < WF_HIST; hh = hh + 1)
                    dup = dup | (r_wf[hh*HW + 56] && r_wf[hh*HW + 32 +: 24] == o_psn);
                for (hh = 0; hh < WF_HIST; hh = hh + 1)
                    nw[hh*HW +: HW] = (hh == r_wfp) ? {1'b1, o_psn, o_e[31:0]}
                                                    : r_wf[hh*HW +: HW];
                if (after(o_psn, r_last) && o_kind == K_MARK &&
                    o_e[63:56] == 8'h06 && !dup) begin
                    t_wf[o_qp]  <= nw;
                    t_wfp[o_qp] <= (r_wfp == WF_HIST - 1) ? {WL{1'b0}} : r_wfp + 1'b1;
                end
                // a candidate: the newest copy of a PSN replaces the older
                // one; the oldest candidate makes room (a packet the IP
                // refused long ago: its retransmission is newer)
                for (s = 0; s < NCAND; s = s + 1) begin
                    x = r_ent[s*EW +: EW];
                    x[67] = x[67] & (x[55:32] != o_psn);
                    ne[s*EW +: EW] = (s == r_head) ? o_e : x;
                end
                if (after(o_psn, r_last) && o_kind != K_MARK) begin
                    t_ent[o_qp]  <= ne;
                    t_head[o_qp] <= (r_head == NCAND - 1) ? {CL{1'b0}} : r_head + 1'b1;
                    n_kept <= n_kept + 1;
                end
            end
            O_QRY: begin
                op <= O_IDLE;
                sel = -1;
                dsel = 24'hFFFFFF;
                dany = 24'hFFFFFF;
                for (s = 0; s < NCAND; s = s + 1) begin
                    x = r_ent[s*EW +: EW];
                    dd = x[55:32] - r_last;
                    if (x[67] && after(x[55:32], r_last)) begin
                        if (dd < dany) dany = dd;
                        if ((q_wimm ? (x[66:65] == K_WLAST || x[66:65] == K_WONLY)
                                    : (x[66:65] == K_SEND)) && dd < dsel) begin
                            dsel = dd;
                            sel = s;
                        end
                    end
                end
                // the chosen entry, by AND-OR of the slots
                x = {EW{1'b0}};
                for (s = 0; s < NCAND; s = s + 1)
                    x = x | (r_ent[s*EW +: EW] & {EW{s == sel}});
                // WRITE Last with Immediate: its message's length is
                // that of the WRITE First whose length, in packets of
                // the QP's PMTU, ends the message right here
                wlen = x[31:0];
                wlen_ok = x[66:65] != K_WLAST;
                dbest = 24'hFFFFFF;
                for (hh = 0; hh < WF_HIST; hh = hh + 1) begin
                    y = r_wf[hh*HW +: HW];
                    dd = x[55:32] - y[55:32];
                    if (x[66:65] == K_WLAST && y[56] && after(x[55:32], y[55:32]) &&
                        dd < dbest && npkts(y[31:0], r_pmtu) == {8'd0, dd} + 32'd1) begin
                        dbest = dd;
                        wlen = y[31:0];
                        wlen_ok = 1'b1;
                    end
                end
                q_ack     <= 1'b1;
                q_snapped <= 1'b0;
                q_hit     <= sel >= 0;
                q_order   <= sel >= 0 && dany < dsel;
                q_bad     <= sel >= 0 && !wlen_ok;
                q_op      <= sel >= 0 ? x[63:56] : 8'hFF;
                q_se      <= sel >= 0 && x[64];
                q_len     <= sel >= 0 ? wlen : 32'd0;
                // the answer's PSN: every candidate at or before it is
                // stale now
                for (s = 0; s < NCAND; s = s + 1) begin
                    ne[s*EW +: EW] = r_ent[s*EW +: EW];
                    ne[s*EW + 67] = r_ent[s*EW + 67] &
                                    after(r_ent[s*EW + 32 +: 24], x[55:32]);
                end
                if (sel >= 0) begin
                    t_ent[o_qp]  <= ne;
                    t_last[o_qp] <= x[55:32];
                end
            end
            default: op <= O_IDLE;
            endcase
        end
    end

    // simulation and FPGA power-up: no candidate
    integer n;
    initial
        for (n = 0; n < NQ; n = n + 1) begin
            t_ent[n]  = {(NCAND*EW){1'b0}};
            t_wf[n]   = {(WF_HIST*HW){1'b0}};
            t_wfp[n]  = {WL{1'b0}};
            t_last[n] = 24'd0;
            t_pmtu[n] = 3'd0;
            t_head[n] = {CL{1'b0}};
        end

endmodule

`default_nettype wire
