#!/bin/bash
# SPDX-License-Identifier: MIT
# Unmodified ibv_rc_pingpong -c between two software ERNICs on lo: the
# fixture's UDP-wire devices (ernict0 = 127.0.0.2, ernict1 = 127.0.0.3)
# at path MTU 1024 and 4096, and two frame-wire devices made here
# (ernicf0 = 127.0.0.42, ernicf1 = 127.0.0.43) at 1024. Sizes 1, 16
# (the inline limit), 17, PMTU-1, PMTU, PMTU+1 and 1 MiB.
#   usage: pingpong.sh   (environment: ERNICCTL, ERNIC_RUNDIR, SYSFS_PATH,
#                         RDMAV_DRIVERS, as ctest's ERNIC_TEST_ENV sets)
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "the devices' /dev/infiniband nodes are made with mknod"
need_cmds ibv_rc_pingpong ss
: "${ERNICCTL:?}" "${ERNIC_RUNDIR:?}" "${SYSFS_PATH:?}"

define_host udp0 ernict0 127.0.0.2
define_host udp1 ernict1 127.0.0.3
pingpong_matrix lo-udp udp0 udp1 1024
pingpong_matrix lo-udp udp0 udp1 4096

define_host frame0 ernicf0 127.0.0.42
define_host frame1 ernicf1 127.0.0.43
add_device frame0 127.0.0.42 --wire frame
add_device frame1 127.0.0.43 --wire frame
pingpong_matrix lo-frame frame0 frame1 1024
finish
