#!/bin/bash
# SPDX-License-Identifier: MIT
# Unmodified perftest between two software ERNICs on lo: ib_send_bw,
# ib_write_bw, ib_read_bw, ib_send_lat, ib_write_lat, ib_read_lat with
# -a (2 B .. 8 MiB), over the fixture's UDP-wire devices (ernict0 =
# 127.0.0.2 serves, ernict1 = 127.0.0.3 connects) and two frame-wire
# devices made here (ernicf0 = 127.0.0.42, ernicf1 = 127.0.0.43).
# Iterations per size: PERFTEST_ITERS (default 200).
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "the devices' /dev/infiniband nodes are made with mknod"
need_cmds "${PERFTEST_PROGS[@]}" ss
: "${ERNICCTL:?}" "${ERNIC_RUNDIR:?}" "${SYSFS_PATH:?}"

define_host udp0 ernict0 127.0.0.2
define_host udp1 ernict1 127.0.0.3
perftest_all lo-udp udp0 udp1

define_host frame0 ernicf0 127.0.0.42
define_host frame1 ernicf1 127.0.0.43
add_device frame0 127.0.0.42 --wire frame
add_device frame1 127.0.0.43 --wire frame
perftest_all lo-frame frame0 frame1
finish
