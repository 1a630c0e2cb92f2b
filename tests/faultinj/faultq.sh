# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Faults on the test wire: ernic_faultq (an NFQUEUE program) drops,
# duplicates, reorders, delays and corrupts RoCEv2 packets. Sourced by
# app test scripts after tests/apps/lib.sh; ERNIC_FAULTQ is its path.
#
#   faultq_start MATCH [ernic_faultq options...]   e.g.
#       faultq_start "ip saddr $addrs ip daddr $addrs" --drop 5 --dup 5 \
#               --reorder 5 --corrupt 1 --seed 7
#   faultq_stats KEY      one counter, fresh: seen dropped duplicated
#                         reordered reorder_held delayed corrupted ...
#   faultq_stop           remove the rule, end the injector, print its
#                         counters (at exit this happens by itself)
#
# The table `inet ernic_faultq` (deleted at exit) queues the packets to
# UDP port 4791 that match MATCH and do not carry the mark FAULTQ_MARK:
# the duplicates ernic_faultq sends itself, through a raw socket, carry
# it (its --mark, default 0xfa17). One base chain on the output hook: a
# packet between two addresses on lo passes output once and input once,
# so it is queued once. The queue has no bypass: if the injector dies,
# RoCE traffic stops and the test fails loudly instead of going on
# without faults.
#
# Kernels without nft_queue (CONFIG_NFT_QUEUE=n) still have NFQUEUE
# through nft_compat; `ernic_faultq add-rule` (libnftnl) writes whichever
# works, since nft(8) cannot write the compat form (`nft list` then shows
# the chain to_queue as empty and warns "managed by iptables-nft" and
# "XT target NFQUEUE not found").
#
# Tunables: FAULTQ_QUEUE (default 4791), FAULTQ_MARK (0xfa17), FAULTQ_NS
# (a network namespace; default the current one), FAULTQ_HOOK ("output";
# "forward" in a router namespace), FAULTQ_STATS (counters file, default
# $WORK/faultq.stats: put it outside $WORK to keep it), FAULTQ_LOG (a
# per-packet log, off by default: large in a soak).

FAULTQ_PID=
FAULTQ_TABLE='inet ernic_faultq'
FAULTQ_STATS_FILE=	# where the running injector writes (FAULTQ_STATS)
FAULTQ_OUT=		# its stdout and stderr

FAULTQ_NFT=(nft)	# nft in FAULTQ_NS, set by faultq_start

# faultq_start MATCH [ernic_faultq options...]
faultq_start() {
	local match=$1 i pre=()
	shift
	if [ -n "${FAULTQ_NS:-}" ]; then
		pre=(ip netns exec "$FAULTQ_NS")
	fi
	FAULTQ_NFT=("${pre[@]}" nft)
	: "${ERNIC_FAULTQ:?faultq_start: ERNIC_FAULTQ (ernic_faultq path) is not set}"
	[ -z "$FAULTQ_PID" ] || fail "faultq_start: ernic_faultq already runs"
	FAULTQ_QUEUE=${FAULTQ_QUEUE:-4791}
	FAULTQ_MARK=${FAULTQ_MARK:-0xfa17}
	FAULTQ_STATS_FILE=${FAULTQ_STATS:-$WORK/faultq.stats}
	FAULTQ_OUT=$WORK/faultq.$FAULTQ_QUEUE.out
	local ready=$WORK/faultq.$FAULTQ_QUEUE.ready
	# shellcheck disable=SC2086 # "FAMILY NAME"
	"${FAULTQ_NFT[@]}" delete table $FAULTQ_TABLE 2>/dev/null || true
	# shellcheck disable=SC2086
	at_exit "${FAULTQ_NFT[@]}" delete table $FAULTQ_TABLE
	"${FAULTQ_NFT[@]}" -f - <<EOT || fail "cannot install the nftables table $FAULTQ_TABLE"
table $FAULTQ_TABLE {
	chain faultq {
		type filter hook ${FAULTQ_HOOK:-output} priority 0; policy accept;
		$match udp dport 4791 meta mark != $FAULTQ_MARK counter goto to_queue comment "queued"
	}
	chain to_queue {
	}
}
EOT
	"${pre[@]}" "$ERNIC_FAULTQ" add-rule inet ernic_faultq to_queue "$FAULTQ_QUEUE" ||
		fail "cannot add the queue rule to $FAULTQ_TABLE"
	rm -f "$ready" "$FAULTQ_STATS_FILE"
	# A simple command, so $! is ernic_faultq itself (ip netns exec
	# execs): SIGUSR1 reaches it. --die-with-parent: no injector
	# outlives a killed test.
	"${pre[@]}" "$ERNIC_FAULTQ" --queue "$FAULTQ_QUEUE" --mark "$FAULTQ_MARK" \
		--ready "$ready" --stats "$FAULTQ_STATS_FILE" --die-with-parent \
		${FAULTQ_LOG:+--log "$FAULTQ_LOG"} "$@" >"$FAULTQ_OUT" 2>&1 &
	FAULTQ_PID=$!
	BG_PIDS+=("$FAULTQ_PID")
	for ((i = 0; i < 100; i++)); do
		[ -e "$ready" ] && break
		if ! kill -0 "$FAULTQ_PID" 2>/dev/null; then
			show_output ernic_faultq "$FAULTQ_OUT"
			FAULTQ_PID=
			fail "ernic_faultq exited before binding queue $FAULTQ_QUEUE"
		fi
		sleep 0.1
	done
	if [ ! -e "$ready" ]; then
		show_output ernic_faultq "$FAULTQ_OUT"
		fail "ernic_faultq did not bind queue $FAULTQ_QUEUE in 10 s"
	fi
	grep '^ernic_faultq: start ' "$FAULTQ_OUT" || true
}

_faultq_field() { # KEY: from the stats file as it is
	sed -n "s/.* $1=\([0-9][0-9]*\).*/\1/p" "$FAULTQ_STATS_FILE" 2>/dev/null
}

# faultq_stats KEY: the counter now (SIGUSR1 makes the injector rewrite
# its stats file; once it has ended, its last one).
faultq_stats() {
	local v report i
	if [ -n "$FAULTQ_PID" ] && kill -0 "$FAULTQ_PID" 2>/dev/null; then
		report=$(_faultq_field report)
		kill -USR1 "$FAULTQ_PID"
		for ((i = 0; i < 100; i++)); do
			[ "$(_faultq_field report)" = "$report" ] || break
			sleep 0.02
		done
	fi
	v=$(_faultq_field "$1")
	[[ "$v" =~ ^[0-9]+$ ]] || fail "ernic_faultq has no counter '$1' in $FAULTQ_STATS_FILE"
	echo "$v"
}

# faultq_stop: first nothing more is queued (the base chain stays: its
# removal would make the kernel drop every packet still queued), then
# the injector ends, giving every packet it holds or the kernel queued
# for it a verdict, then the table goes; its counters are printed.
faultq_stop() {
	local line
	[ -n "$FAULTQ_PID" ] || return 0
	# shellcheck disable=SC2086
	"${FAULTQ_NFT[@]}" flush chain $FAULTQ_TABLE faultq 2>/dev/null || true
	stop_pid "$FAULTQ_PID"
	FAULTQ_PID=
	# shellcheck disable=SC2086
	"${FAULTQ_NFT[@]}" delete table $FAULTQ_TABLE 2>/dev/null || true
	line=$(grep '^ernic_faultq: seen=' "$FAULTQ_OUT" | tail -n 1) || true
	if [ -z "$line" ]; then
		show_output ernic_faultq "$FAULTQ_OUT"
		fail "ernic_faultq printed no counters"
	fi
	echo "$line"
	if [[ "$line" =~ \ kernel_dropped=([0-9]+) ]] && [ "${BASH_REMATCH[1]}" != 0 ]; then
		echo "note: the kernel dropped ${BASH_REMATCH[1]} packets ernic_faultq could not take in time (queue or socket full): loss beyond --drop" >&2
	fi
}
