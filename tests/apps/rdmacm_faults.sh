#!/bin/bash
# SPDX-License-Identifier: MIT
# rdma_cm programs where things go wrong, and where the wire is real:
#   - across two network namespaces (veth, frame-wire devices, each
#     namespace with its own overlay): rping, ucmatose, ib_write_bw -R;
#   - a capture of rping and ucmatose on lo: every packet decodes as
#     InfiniBand with no malformed field or expert error, QP1's packets
#     are CM MADs (REQ, REP, RTU, DREQ, DREP all seen), every ICRC right;
#   - 5 % of UDP 4791 dropped (nftables, MADs included): rping connects
#     and verifies, ucmatose completes;
#   - failure paths, each ending in an event within the CM's timeouts,
#     never a hang: an address nobody answers ARP for (ADDR_ERROR),
#     connecting to an address whose device nobody holds,
#     a listener killed while the client connects, a peer killed
#     mid-transfer (the sender's transfer ends; a client killed while
#     the server writes to it: the server sees DISCONNECTED).
#   usage: rdmacm_faults.sh PATH/TO/icrc_check PATH/TO/rdmacm_survivor
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "network namespaces, nftables, mknod"
need_cmds ip nft dumpcap tshark rping ucmatose ib_write_bw ibv_devices ss
: "${ERNICCTL:?}"
ICRC_CHECK=$(readlink -f "${1:?usage: $0 PATH/TO/icrc_check PATH/TO/rdmacm_survivor}")
SURVIVOR=$(readlink -f "${2:?usage: $0 PATH/TO/icrc_check PATH/TO/rdmacm_survivor}")

# What `ernicctl env` adds for rdma_cm programs; each host's overlay
# (ERNIC_RUNDIR, SYSFS_PATH) comes with the host.
eval "$("$ERNICCTL" env)"
export LD_LIBRARY_PATH LD_PRELOAD RDMAV_DRIVERS

# ready once the device's state file says a process listens on the port
# (`ernicctl show`: rdma_listen claims it there). A client that came
# earlier would be rejected, and perftest's retry after a REJ reuses ids
# it has freed (seen: ib_write_bw -R crashing in rdma_resolve_addr).
# shellcheck disable=SC2317 # called through PAIR_READY
rdmacm_ready() { # HOST PORT
	on_host "$1" "$ERNICCTL" show "${HOST_DEV[$1]}" |
		grep -qE "^process .* listens (.*,)?tcp:$2(,|$)"
}
PAIR_READY=rdmacm_ready
# A host on lo with an overlay of its own and a UDP-wire device.
lo_host() { # NAME DEV ADDR
	local run=$WORK/run-$1
	define_host "$1" "$2" "$3" "" "ERNIC_RUNDIR=$run" "SYSFS_PATH=$run/sysfs"
	add_device "$1" "$3"
}

rping_ok() { # LABEL SRV CLI SIZE COUNT
	local n
	if ! run_pair "rping $1" "$2" "$3" \
		-- rping -s -a "${HOST_IP[$2]}" -p @PORT@ -S "$4" -C "$5" -V -v \
		-- rping -c -a @SERVER@ -I "${HOST_IP[$3]}" -p @PORT@ -S "$4" -C "$5" -V -v; then
		case_failed "rping $1" "rping failed"
		return 0
	fi
	n=$(grep -c '^ping data: rdma-ping-' "$PAIR_CLIENT_OUT" || true)
	if [ "$n" != "$5" ]; then
		case_failed "rping $1" "$n of $5 pings"
		return 0
	fi
	echo "ok: rping $1: $5 pings of $4 bytes, validated"
}
ucma_ok() { # LABEL SRV CLI CONNS COUNT
	if ! run_pair "ucmatose $1" "$2" "$3" \
		-- ucmatose -b "${HOST_IP[$2]}" -p @PORT@ -c "$4" -C "$5" -S 1000 \
		-- ucmatose -s @SERVER@ -b "${HOST_IP[$3]}" -p @PORT@ -c "$4" -C "$5" -S 1000 ||
		! grep -q 'return status 0' "$PAIR_CLIENT_OUT" ||
		! grep -q 'return status 0' "$PAIR_SERVER_OUT"; then
		case_failed "ucmatose $1" "ucmatose failed"
		return 0
	fi
	echo "ok: ucmatose $1: $4 connections x $5 messages"
}

# ---- two namespaces ----
A=ernic-cm-a B=ernic-cm-b
make_netns "$A" "$B"
veth_pair "$A" erncma 198.51.100.33/24 "$B" erncmb 198.51.100.34/24
netns_host na erncma0 198.51.100.33 "$A"
netns_host nb erncmb0 198.51.100.34 "$B"
rping_ok "netns" nb na 4096 100
ucma_ok "netns" nb na 10 50
if run_pair "ib_write_bw -R netns" nb na \
	-- ib_write_bw -R -d erncmb0 --source_ip 198.51.100.34 -p @PORT@ -n 500 -s 65536 \
	-- ib_write_bw -R -d erncma0 --source_ip 198.51.100.33 -p @PORT@ -n 500 -s 65536 @SERVER@ &&
	grep -Eq '^ +65536 +500 ' "$PAIR_CLIENT_OUT"; then
	echo "ok: ib_write_bw -R netns: $(grep -E '^ +65536 +500 ' "$PAIR_CLIENT_OUT" | tr -s ' ')"
else
	case_failed "ib_write_bw -R netns" "failed"
fi

# No Ethernet address for the destination (nobody answers ARP on the
# veth's subnet): ADDR_ERROR from address resolution, as the kernel's.
out=$(on_host na timeout 30 rping -c -d -a 198.51.100.99 -I 198.51.100.33 -C 1 2>&1) &&
	case_failed "no ARP answer" "rping succeeded: $out"
if grep -q 'RDMA_CM_EVENT_ADDR_ERROR, error -113' <<<"$out"; then
	echo "ok: no ARP answer: ADDR_ERROR (-EHOSTUNREACH)"
else
	case_failed "no ARP answer" "no ADDR_ERROR: $out"
fi

# ---- on lo: a capture, then loss ----
lo_host l0 ernicl0 127.0.0.92
lo_host l1 ernicl1 127.0.0.93
pcap=$WORK/rdmacm.pcap
capture_start l0 lo "$pcap" l0 l1
rping_ok "captured" l0 l1 1024 20
ucma_ok "captured" l0 l1 4 10
capture_stop
check_capture "$pcap" 0 0x64 0x04 0x0c 0x10 0x11
attrs=$(tshark -r "$pcap" -d 'udp.port==4791,infiniband' -Y 'infiniband.bth.destqp == 1' \
	-T fields -E separator=/s -e infiniband.mad.mgmtclass -e infiniband.mad.attributeid \
	2>/dev/null | sort | uniq -c)
echo "QP1 (class attribute):"
awk '{ print "    " $0 }' <<<"$attrs"
for a in 0x0010 0x0013 0x0014 0x0015 0x0016; do
	grep -Eq " 0x07 $a\$" <<<"$attrs" || case_failed capture "no CM MAD with attribute $a"
done
! grep -Ev ' 0x07 0x00(1[0-6])$' <<<"$attrs" | grep -q . ||
	case_failed capture "QP1 carried something else than CM REQ..DREP"

LOSS_NS='' LOSS_TABLE='inet ernic_app_rdmacm' LOSS_CHAIN=input
addrs='{ 127.0.0.92, 127.0.0.93 }'
loss_chain_pct() { # the shared rule, 5 % instead of 1 %
	loss_chain "$@" | sed 's/numgen random mod 100 0 /numgen random mod 100 < 5 /'
}
nft delete table inet ernic_app_rdmacm 2>/dev/null || true
at_exit nft delete table inet ernic_app_rdmacm
{
	echo "table $LOSS_TABLE {"
	loss_chain_pct "$LOSS_CHAIN" 'type filter hook input priority -300' \
		"ip saddr $addrs ip daddr $addrs"
	echo "}"
} | nft -f - || fail "cannot install the loss rule"
for i in 1 2 3; do
	lossy "rping 5% loss $i" rping_ok "5% loss $i" l0 l1 4096 200
	lossy "ucmatose 5% loss $i" ucma_ok "5% loss $i" l0 l1 10 20
done
echo "nftables: dropped $(loss_counter dropped) of $(loss_counter seen) RoCEv2 packets"
nft delete table inet ernic_app_rdmacm

# ---- failure paths ----
# elapsed CMD...: run it, set RC and SECS.
elapsed() {
	local t0=$SECONDS
	RC=0
	"$@" >"$WORK/elapsed.out" 2>&1 || RC=$?
	SECS=$((SECONDS - t0))
}
# 1. Nobody holds the destination's device: the REQ is never answered;
#    the client is told UNREACHABLE (-ETIMEDOUT) after the CM's retries.
elapsed on_host l1 timeout 90 rping -c -d -a 127.0.0.92 -I 127.0.0.93 -p 18590 -C 1
if [ "$RC" != 124 ] && grep -q 'RDMA_CM_EVENT_UNREACHABLE, error -110' "$WORK/elapsed.out"; then
	echo "ok: no listener at all: UNREACHABLE after ${SECS}s"
else
	show_output client "$WORK/elapsed.out"
	case_failed "no listener" "rc $RC after ${SECS}s, no UNREACHABLE"
fi
# 2. The listener stops (SIGSTOP: its CM with it) as the client connects,
#    and is killed: the client is told UNREACHABLE, no hang.
host_argv l0
"${HOST_ARGV[@]}" timeout 120 rping -s -a 127.0.0.92 -p 18591 -C 1 >"$WORK/killed.srv" 2>&1 &
spid=$!
BG_PIDS+=("$spid")
for _ in $(seq 100); do rdmacm_ready l0 18591 && break; sleep 0.1; done
pkill -STOP -f 'rping -s -a 127.0.0.92 -p 18591' || true
( sleep 3; pkill -KILL -f 'rping -s -a 127.0.0.92 -p 18591' ) &
elapsed on_host l1 timeout 90 rping -c -d -a 127.0.0.92 -I 127.0.0.93 -p 18591 -C 1
wait "$spid" 2>/dev/null || true
if [ "$RC" != 124 ] && grep -q 'RDMA_CM_EVENT_UNREACHABLE' "$WORK/elapsed.out"; then
	echo "ok: listener killed while connecting: UNREACHABLE after ${SECS}s"
else
	show_output client "$WORK/elapsed.out"
	case_failed "listener killed" "rc $RC after ${SECS}s, no UNREACHABLE"
fi
# 3. A peer killed (SIGKILL) mid-transfer cannot send its DREQ: its CM
#    dies with it (a kernel's CM would outlive it; a broker owning QP1
#    will, when devices are shared). The side still sending learns it
#    from its QP (retries exhausted): here ib_write_bw -R's client, whose
#    server is killed. It must end, not hang, and its CM must have tried
#    to say goodbye (DREQ retransmitted: ERNIC_CM_STATS).
host_argv l0
"${HOST_ARGV[@]}" timeout 120 ib_write_bw -R -d ernicl0 --source_ip 127.0.0.92 -p 18592 \
	-D 30 -s 65536 >"$WORK/victim.srv" 2>&1 &
spid=$!
BG_PIDS+=("$spid")
for _ in $(seq 100); do rdmacm_ready l0 18592 && break; sleep 0.1; done
host_argv l1
ERNIC_CM_STATS=1 "${HOST_ARGV[@]}" timeout 120 ib_write_bw -R -d ernicl1 \
	--source_ip 127.0.0.93 -p 18592 -D 30 -s 65536 127.0.0.92 >"$WORK/victim.cli" 2>&1 &
cpid=$!
BG_PIDS+=("$cpid")
sleep 4
pkill -KILL -f 'ib_write_bw -R -d ernicl0 --source_ip 127.0.0.92 -p 18592' || true
t0=$SECONDS
RC=0
wait "$cpid" || RC=$?
SECS=$((SECONDS - t0))
wait "$spid" 2>/dev/null || true
if [ "$RC" != 124 ] && [ "$SECS" -lt 60 ] &&
	grep -q 'Failed status 12' "$WORK/victim.cli" &&
	grep -Eq 'CM: .* retransmits [1-9]' "$WORK/victim.cli"; then
	echo "ok: peer killed mid-transfer: the sender ended after ${SECS}s (exit $RC):" \
		"$(grep -E 'Failed status|CM:' "$WORK/victim.cli" | tr -s ' ' | tr '\n' ';')"
else
	show_output client "$WORK/victim.cli"
	case_failed "peer killed" "the sender: exit $RC after ${SECS}s"
fi
# 4. A client killed (SIGKILL) while the server RDMA WRITEs to it: the
#    server's retries run out, its QP goes to error, and its CM reports
#    RDMA_CM_EVENT_DISCONNECTED (after its DREQ goes unanswered), as the
#    kernel's would on the peer's DREQ. The server then ends by itself.
host_argv l0
"${HOST_ARGV[@]}" timeout 150 "$SURVIVOR" server 127.0.0.92 18593 >"$WORK/surv.srv" 2>&1 &
spid=$!
BG_PIDS+=("$spid")
for _ in $(seq 100); do rdmacm_ready l0 18593 && break; sleep 0.1; done
host_argv l1
"${HOST_ARGV[@]}" timeout 150 "$SURVIVOR" client 127.0.0.92 18593 >"$WORK/surv.cli" 2>&1 &
cpid=$!
BG_PIDS+=("$cpid")
for _ in $(seq 200); do grep -q '^writing' "$WORK/surv.srv" && break; sleep 0.1; done
sleep 1
pkill -KILL -f "$SURVIVOR client 127.0.0.92 18593" || true
t0=$SECONDS
RC=0
wait "$spid" || RC=$?
SECS=$((SECONDS - t0))
wait "$cpid" 2>/dev/null || true
if [ "$RC" = 0 ] && grep -q '^connected' "$WORK/surv.cli" &&
	grep -q '^writing' "$WORK/surv.srv" &&
	grep -Eq '^server: DISCONNECTED .*\(transport retry counter exceeded\)' \
		"$WORK/surv.srv"; then
	echo "ok: client killed mid-transfer: $(grep '^server: DISCONNECTED' "$WORK/surv.srv")," \
		"the server ended ${SECS}s after the kill"
else
	show_output client "$WORK/surv.cli"
	show_output server "$WORK/surv.srv"
	case_failed "client killed" "the server: exit $RC after ${SECS}s"
fi
finish
