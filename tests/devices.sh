#!/bin/bash
# Create / remove the software ERNICs the verbs tests use:
#   ernict0 on 127.0.0.2, ernict1 on 127.0.0.3, ernict6 on ::1.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (ernicctl creates /dev/infiniband nodes)"
	exit 77
fi
: "${ERNICCTL:?}" "${ERNIC_RUNDIR:?}"
devs=("ernict0 127.0.0.2" "ernict1 127.0.0.3" "ernict6 ::1")
case "${1:-}" in
setup)
	# Leftovers of an interrupted run would make "add" fail.
	for d in "${devs[@]}"; do "$ERNICCTL" del "${d%% *}" 2>/dev/null || true; done
	for d in "${devs[@]}"; do "$ERNICCTL" add "${d%% *}" --sw "${d#* }"; done
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
