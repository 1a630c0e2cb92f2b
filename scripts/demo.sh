#!/bin/bash
# Set up, build, and show unmodified verbs tools using two software
# ERNICs (127.0.0.2 and 127.0.0.3). Needs root for the device nodes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh >/dev/null
ctl=build/bin/ernicctl
for d in "demo0 127.0.0.2" "demo1 127.0.0.3"; do
	$ctl del "${d%% *}" 2>/dev/null || true
	$ctl add "${d%% *}" --sw "${d#* }"
done
trap '$ctl del demo0; $ctl del demo1' EXIT
eval "$($ctl env)"
ibv_devices
ibv_devinfo -d demo0
ibv_devinfo -v -d demo1 | grep -E 'hca_id|state|link_layer|GID'
