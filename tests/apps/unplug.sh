#!/bin/bash
# SPDX-License-Identifier: MIT
# A card pulled under running programs: a virtual FPGA (the UIO path)
# unplugged (ernic-vfpga's SIGUSR1: the IP stops, every register reads
# all-ones, one last interrupt) while unmodified ibv_rc_pingpong -e runs
# on it against a software device, and ibv_asyncwatch watches it.
# The provider must see the device gone at that interrupt: pingpong
# wakes from its CQ event, polls a flushed completion and exits with an
# error instead of waiting for ever; asyncwatch hears
# IBV_EVENT_DEVICE_FATAL; the log says what happened; the process that
# opens the device afterwards is refused with a reason.
# Its own overlay (ERNIC_RUNDIR under the work directory): the fixture's
# devices are not touched.
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "the devices' /dev/infiniband nodes are made with mknod"
need_cmds ibv_rc_pingpong ibv_asyncwatch ibv_devinfo ss
: "${ERNICCTL:?}"

export ERNIC_RUNDIR=$WORK/run
mkdir -p "$ERNIC_RUNDIR"
"$ERNICCTL" add ernicg0 --sim-uio 127.0.0.57 >/dev/null ||
	fail "cannot create the virtual FPGA ernicg0"
at_exit env "ERNIC_RUNDIR=$ERNIC_RUNDIR" "$ERNICCTL" del ernicg0
"$ERNICCTL" add ernicg1 --sw 127.0.0.58 >/dev/null ||
	fail "cannot create the software device ernicg1"
at_exit env "ERNIC_RUNDIR=$ERNIC_RUNDIR" "$ERNICCTL" del ernicg1
eval "$("$ERNICCTL" env)"
vfpga_pid=$(cat "$ERNIC_RUNDIR/vfpga/ernicg0/pid") ||
	fail "no pid file for ernicg0's ernic-vfpga"
define_host g0 ernicg0 127.0.0.57
define_host g1 ernicg1 127.0.0.58

# bg OUT CMD...: CMD in the background, line-buffered into OUT; its pid
# (the timeout's) in BG.
bg() {
	local out=$1
	shift
	timeout "$APP_TIMEOUT" stdbuf -oL -eL "$@" >"$out" 2>&1 </dev/null &
	BG=$!
	BG_PIDS+=("$BG")
}

# wait_exit PID SECONDS: 0 once PID has ended (its status in RC), 1 if
# it still runs after SECONDS.
wait_exit() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		if ! kill -0 "$1" 2>/dev/null; then
			RC=0
			wait "$1" || RC=$?
			return 0
		fi
		sleep 0.1
	done
	return 1
}

bg "$WORK/asyncwatch.out" ibv_asyncwatch -d ernicg0
watch_pid=$BG
pick_port g0
bg "$WORK/server.out" ibv_rc_pingpong -d ernicg0 -g 0 -e -n 100000000 \
	-p "$PORT"
srv_pid=$BG
wait_listening g0 "$PORT" "$srv_pid" || fail "the pingpong server never listened"
bg "$WORK/client.out" ibv_rc_pingpong -d ernicg1 -g 0 -e -n 100000000 \
	-p "$PORT" 127.0.0.57
cli_pid=$BG
# Running: both ends have their peer's address, and messages go.
for ((i = 0; i < 100; i++)); do
	grep -q "remote address" "$WORK/server.out" &&
		grep -q "remote address" "$WORK/client.out" && break
	sleep 0.1
done
grep -q "remote address" "$WORK/server.out" ||
	{ show_output server "$WORK/server.out"; fail "pingpong never connected"; }
sleep 1
kill -0 "$srv_pid" 2>/dev/null ||
	{ show_output server "$WORK/server.out"; fail "pingpong ended before the unplug"; }

kill -USR1 "$vfpga_pid"
if ! wait_exit "$srv_pid" 20; then
	show_output server "$WORK/server.out"
	fail "pingpong on the unplugged device still runs 20 s after the unplug"
fi
show_output "server on ernicg0 (unplugged)" "$WORK/server.out"
[ "$RC" != 0 ] || fail "pingpong on the unplugged device exited 0"
grep -q "ernicg0: registers read all-ones: the device is gone" \
	"$WORK/server.out" || fail "the provider did not say the device is gone"
grep -q "Failed status" "$WORK/server.out" ||
	fail "pingpong did not get a failed completion"
echo "ok: pingpong on the unplugged device: exit $RC, a flushed completion"

# asyncwatch: the device-fatal event, then it is stopped (it loops).
for ((i = 0; i < 50; i++)); do
	grep -q "IBV_EVENT_DEVICE_FATAL" "$WORK/asyncwatch.out" && break
	sleep 0.1
done
show_output asyncwatch "$WORK/asyncwatch.out"
grep -q "IBV_EVENT_DEVICE_FATAL" "$WORK/asyncwatch.out" ||
	fail "ibv_asyncwatch heard no IBV_EVENT_DEVICE_FATAL"
kill -0 "$watch_pid" 2>/dev/null ||
	fail "ibv_asyncwatch ended (it waits for more events)"
echo "ok: ibv_asyncwatch: IBV_EVENT_DEVICE_FATAL"
stop_pid "$watch_pid"

# A later open of the gone device (its broker gone, the last user out)
# is refused, and says why.
if ibv_devinfo -d ernicg0 >"$WORK/devinfo.out" 2>&1; then
	show_output devinfo "$WORK/devinfo.out"
	fail "ibv_devinfo opened the unplugged device"
fi
grep -q "all-ones" "$WORK/devinfo.out" ||
	{ show_output devinfo "$WORK/devinfo.out"; fail "opening the unplugged device did not say why it failed"; }
echo "ok: ibv_devinfo on the unplugged device: refused ($(grep -m1 'all-ones' "$WORK/devinfo.out"))"

# The peer loses its partner: its retries run out, or it waits; either
# way it is not this test's subject.
stop_pid "$cli_pid"
finish
