#!/bin/bash
# SPDX-License-Identifier: MIT
# The Debian packages as a user gets them: built from a copy of the
# source (dpkg-buildpackage -b -us -uc), checked by lintian (no error or
# warning, pedantic tags shown), installed with apt, used from the
# installed files alone (no build tree, no RDMAV_DRIVERS: ernicctl add,
# unmodified ibv_devices, ibv_devinfo, ibv_rc_pingpong, ib_write_bw, an
# ernicdv program built with pkg-config), then purged: nothing of them
# may remain in /etc, /usr or /var. Root (apt, mknod); it installs into
# the running system, so it runs alone (RUN_SERIAL) and purges on exit.
#   usage: deb.sh SOURCE_DIR
set -euo pipefail
# shellcheck source=SCRIPTDIR/copy_source.sh
source "$(dirname "$0")/copy_source.sh"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (apt install)"; exit 77; }
SRC=$(cd "${1:?usage: $0 SOURCE_DIR}" && pwd)
for c in dpkg-buildpackage dh lintian apt-get ibv_devinfo ibv_rc_pingpong ib_write_bw pkg-config cc; do
	command -v "$c" >/dev/null || fail "'$c' is not installed (scripts/deps.sh installs it)"
done
PKGS=(libernic1 libernic-dev ernic-tools ernic-doc)
WORK=$(mktemp -d /tmp/ernic-deb.XXXXXX)
BG=()
cleanup() {
	local p
	for p in "${BG[@]}"; do kill "$p" 2>/dev/null || true; done
	if dpkg-query -W -f='${Status}\n' "${PKGS[@]}" 2>/dev/null | grep -q installed; then
		/usr/sbin/ernicctl del ernicp0 >/dev/null 2>&1 || true
		/usr/sbin/ernicctl del ernicp1 >/dev/null 2>&1 || true
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${PKGS[@]}" >/dev/null 2>&1 || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
dpkg-query -W -f='${Status}\n' "${PKGS[@]}" 2>/dev/null | grep -q 'ok installed' &&
	fail "ernic packages are installed already: remove them first (apt purge ${PKGS[*]})"

# What /etc, /usr and /var hold, less what apt and dpkg keep about
# themselves, before the install and after the purge.
snapshot() {
	find /etc /usr /var -xdev \( -path /var/lib/dpkg -o -path /var/lib/apt \
		-o -path /var/cache -o -path /var/log -o -path /var/tmp \
		-o -path /var/lib/lintian -o -path /var/lib/systemd \) -prune \
		-o -print 2>/dev/null | sort
}

# 1. Build from a copy of the tracked (and new, not ignored) files.
mkdir "$WORK/src"
copy_source "$SRC" "$WORK/src"
t0=$SECONDS
if ! (cd "$WORK/src" && dpkg-buildpackage -b -us -uc -j"$(nproc)") >"$WORK/build.log" 2>&1; then
	tail -40 "$WORK/build.log"
	fail "dpkg-buildpackage failed"
fi
echo "ok: dpkg-buildpackage -b -us -uc: $((SECONDS - t0)) s"
for p in "${PKGS[@]}"; do
	deb=$(ls "$WORK"/"${p}"_*.deb 2>/dev/null) || fail "no package $p built"
	echo "  $(basename "$deb"): $(dpkg-deb -c "$deb" | awk '$6 !~ /\/$/' | wc -l) files," \
		"Depends: $(dpkg-deb -f "$deb" Depends)"
done

# 2. lintian: no error, no warning.
if ! lintian --pedantic --fail-on error,warning "$WORK"/ernic_*.changes >"$WORK/lintian.log" 2>&1; then
	cat "$WORK/lintian.log"
	fail "lintian"
fi
echo "ok: lintian --pedantic: $(grep -vc 'running with root' "$WORK/lintian.log" || true) tags"

# 3. The provider library links no software ERNIC.
deps=$(dpkg-deb -f "$WORK"/libernic1_*.deb Depends)
[[ "$deps" != *zlib* && "$deps" != *libisal* ]] ||
	fail "libernic1 depends on the model's zlib or ISA-L: $deps"
deps=$(dpkg-deb -f "$WORK"/ernic-tools_*.deb Depends)
[[ "$deps" == *libisal2* ]] ||
	fail "ernic-tools does not depend on libisal2 (libernic-sw.so needs it): $deps"

# 4. Install.
snapshot >"$WORK/before"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	"$WORK"/libernic1_*.deb "$WORK"/libernic-dev_*.deb \
	"$WORK"/ernic-tools_*.deb "$WORK"/ernic-doc_*.deb >"$WORK/apt.log" 2>&1 ||
	{ cat "$WORK/apt.log"; fail "apt-get install"; }
echo "ok: apt-get install: ${PKGS[*]}"

# 5. Use it from the installed files: a clean environment, the system's
# tools, the default run directory.
run() {
	env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root "$@"
}
envs=$(run ernicctl env)
[[ "$envs" != *RDMAV_DRIVERS* ]] || fail "ernicctl env still sets RDMAV_DRIVERS: $envs"
[[ "$envs" != *"$SRC"* ]] || fail "ernicctl env points into the source tree: $envs"
run ernicctl add ernicp0 --sw 127.0.0.94 >/dev/null || fail "ernicctl add ernicp0"
run ernicctl add ernicp1 --sw 127.0.0.95 >/dev/null || fail "ernicctl add ernicp1"
user() {
	run bash -c 'eval "$(ernicctl env)" && exec "$@"' user "$@"
}
user ibv_devices | grep -q 'ernicp0' || fail "ibv_devices does not list ernicp0"
user ibv_devinfo -d ernicp0 >"$WORK/devinfo" || fail "ibv_devinfo -d ernicp0"
grep -q 'PORT_ACTIVE' "$WORK/devinfo" || { cat "$WORK/devinfo"; fail "ernicp0's port is not active"; }
echo "ok: ibv_devinfo -d ernicp0: $(grep -E 'transport|link_layer' "$WORK/devinfo" | tr -s ' \t' ' ' | tr '\n' ';')"

pair() { # NAME SERVER-ARGS... -- CLIENT-ARGS...
	local name=$1 i
	shift
	local srv=() cli=()
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	user timeout 60 "${srv[@]}" >"$WORK/$name.srv" 2>&1 &
	BG+=($!)
	for i in $(seq 100); do
		ss -ltn | grep -q ":18611 " && break
		sleep 0.1
	done
	if ! user timeout 60 "${cli[@]}" >"$WORK/$name.cli" 2>&1 || ! wait "${BG[-1]}"; then
		cat "$WORK/$name.srv" "$WORK/$name.cli"
		fail "$name"
	fi
}
pair pingpong ibv_rc_pingpong -d ernicp0 -g 0 -p 18611 -n 100 -s 4096 -- \
	ibv_rc_pingpong -d ernicp1 -g 0 -p 18611 -n 100 -s 4096 127.0.0.94
echo "ok: ibv_rc_pingpong: $(grep -h 'bytes in' "$WORK/pingpong.cli")"
pair writebw ib_write_bw -d ernicp0 -x 0 -F -p 18611 -n 500 -s 65536 -- \
	ib_write_bw -d ernicp1 -x 0 -F -p 18611 -n 500 -s 65536 127.0.0.94
line=$(grep -E '^ *65536 +500 ' "$WORK/writebw.cli") || { cat "$WORK/writebw.cli"; fail "ib_write_bw: no result line"; }
echo "ok: ib_write_bw: $line"

# An ernicdv program, compiled with what pkg-config says.
cat >"$WORK/dv.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <infiniband/ernicdv.h>

int main(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	int n = 0;

	for (int i = 0; l && l[i]; i++)
		if (ernicdv_is_ernic_device(l[i]) &&
		    !strcmp(ibv_get_device_name(l[i]), "ernicp0"))
			n++;
	printf("%d\n", n);
	return n == 1 ? 0 : 1;
}
EOF
# shellcheck disable=SC2046 # pkg-config's words are meant to split
cc -o "$WORK/dv" "$WORK/dv.c" $(pkg-config --cflags --libs libernic) ||
	fail "an ernicdv program does not build with pkg-config --cflags --libs libernic"
user "$WORK/dv" >/dev/null || fail "ernicdv_is_ernic_device() does not recognise ernicp0"
readelf -d "$WORK/dv" | grep -q 'NEEDED.*libernic.so.1' || fail "the program does not link libernic.so.1"
echo "ok: ernicdv program built with pkg-config, finds ernicp0"
run ernicctl del ernicp0 >/dev/null || fail "ernicctl del ernicp0"
run ernicctl del ernicp1 >/dev/null || fail "ernicctl del ernicp1"

# 6. Purge: nothing left.
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${PKGS[@]}" >"$WORK/purge.log" 2>&1 ||
	{ cat "$WORK/purge.log"; fail "apt-get purge"; }
snapshot >"$WORK/after"
if ! diff -u "$WORK/before" "$WORK/after" >"$WORK/left"; then
	cat "$WORK/left"
	fail "apt-get purge left files behind (or removed others)"
fi
echo "ok: apt-get purge: /etc, /usr and /var as before the install"
echo PASS
