#!/bin/bash
# Create / remove the ERNICs the verbs tests use: software devices
#   ernict0 on 127.0.0.2, ernict1 on 127.0.0.3, ernict6 on ::1, and
#   virtual-FPGA devices on the UIO path ernicu0 on 127.0.0.52, ernicu1
#   on 127.0.0.53.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (ernicctl creates /dev/infiniband nodes)"
	exit 77
fi
: "${ERNICCTL:?}" "${ERNIC_RUNDIR:?}"
#   ernict8 on 127.0.0.4 with non-default Table 2-6 parameters;
#   ernicn0 on 127.0.0.62, ernicn1 on 127.0.0.63: software devices on a
#   simulated non-coherent bus (--noncoherent).
#   ernicw0 on 127.0.0.46, ernicw1 on 127.0.0.47: 128 QPs, so that a CQ
#   with more than 64 of them keeps its busy bits in more than one word
#   (datapath_words).
devs=("ernict0 --sw 127.0.0.2" "ernict1 --sw 127.0.0.3" "ernict6 --sw ::1"
      "ernict8 --sw 127.0.0.4 --param C_NUM_QP=8 --param C_EN_INITIATOR_LITE=0
       --param C_EN_WR_RETRY_DATA_BUF=0 --param C_M_AXI_ADDR_WIDTH=32"
      "ernicu0 --sim-uio 127.0.0.52" "ernicu1 --sim-uio 127.0.0.53"
      "ernicn0 --sw 127.0.0.62 --noncoherent"
      "ernicn1 --sw 127.0.0.63 --noncoherent"
      "ernicw0 --sw 127.0.0.46 --param C_NUM_QP=128"
      "ernicw1 --sw 127.0.0.47 --param C_NUM_QP=128")
case "${1:-}" in
setup)
	# Leftovers of an interrupted run would make "add" fail.
	for d in "${devs[@]}"; do "$ERNICCTL" del "${d%% *}" 2>/dev/null || true; done
	# shellcheck disable=SC2086 # the address may carry --param words
	for d in "${devs[@]}"; do "$ERNICCTL" add "${d%% *}" ${d#* }; done
	"$ERNICCTL" list
	;;
cleanup)
	for d in "${devs[@]}"; do "$ERNICCTL" del "${d%% *}"; done
	;;
*)
	echo "usage: $0 setup|cleanup" >&2
	exit 2
	;;
esac
