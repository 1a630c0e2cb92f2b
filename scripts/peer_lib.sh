# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# What scripts/peer_check.sh and scripts/peer_cm.sh share about the
# kernel peer of shared/peer: running its scripts, and booting its guest
# (building the image first if there is none). The caller sets PEER_DIR,
# WORK (the peer's work directory) and OUT (for logs) and defines say and
# die; peer_boot checks that rxe0 is ACTIVE and the tap has HOST_ADDR.

peer() { # SCRIPT ARGS...: a shared/peer script, run from its folder
	(cd "$PEER_DIR" && "./$1" "${@:2}")
}
in_guest() { # [run-in-guest options] 'command'
	peer run-in-guest.sh "$@"
}
guest_running() {
	[ -e "$WORK/share/ready" ] && [ -e "$WORK/run/qemu.pid" ] &&
		kill -0 "$(cat "$WORK/run/qemu.pid")" 2>/dev/null
}
peer_boot() { # HOST_ADDR TAP
	local link
	if ! guest_running; then
		if [ ! -e "$WORK/root.img" ]; then
			say "no guest image in $WORK: building it (shared/peer/build-image.sh, a few minutes)"
			peer build-image.sh >"$OUT/build-image.log" 2>&1 ||
				die "build-image.sh failed: see $OUT/build-image.log"
		fi
		say "booting the rxe guest (shared/peer/start-guest.sh)"
		peer start-guest.sh | sed 's/^/  /'
		guest_running || die "the guest did not come up (see $WORK/run/console.log)"
	else
		say "the rxe guest is running (pid $(cat "$WORK/run/qemu.pid"))"
	fi
	link=$(in_guest -t 30 "rdma link show" 2>&1) || true
	[[ "$link" == *"link rxe0/1 state ACTIVE"* ]] || die "rxe0 is not ACTIVE in the guest: $link"
	ip -4 addr show dev "$2" | grep -q "inet $1/" ||
		die "$2 does not carry $1 (was the guest started with other HOST_IP?)"
}
