#!/bin/bash
# SPDX-License-Identifier: MIT
# The install rules: `cmake --install` into a DESTDIR (and another
# prefix), then the tree is checked as a package would ship it:
#   1. every file where it belongs, and nothing else;
#   2. ELF facts: SONAMEs, NEEDED (libernic.so.1 needs neither the
#      software backend nor zlib and exports only ernicdv_*), RUNPATHs,
#      every library resolving;
#   3. libernic.pc builds and links a small ernicdv program;
#   4. as root: the installed ernicctl, provider, libernic-sw.so and
#      ernic-vfpga run a software device and a virtual FPGA from the
#      DESTDIR, libibverbs loading them through `ernicctl env`; without
#      libernic-sw.so a software device fails with a clear reason; and
#      an ernicctl built for prefix /usr, seen at /usr/sbin in a private
#      mount namespace, prints no RDMAV_DRIVERS.
# Nothing is written outside a temporary directory.
#
# usage: install.sh BUILD_DIR SOURCE_DIR
# environment (from tests/CMakeLists.txt): the configured GNUInstallDirs
# (ERNIC_I_PREFIX, ERNIC_I_LIBDIR, ... absolute) and CC.
set -u
BUILD=${1:?build dir}
SRC=${2:?source dir}
: "${ERNIC_I_PREFIX:?}" "${ERNIC_I_LIBDIR:?}" "${ERNIC_I_SBINDIR:?}"
: "${ERNIC_I_LIBEXECDIR:?}" "${ERNIC_I_INCLUDEDIR:?}" "${ERNIC_I_MANDIR:?}"
: "${ERNIC_I_SYSCONFDIR:?}"

fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

TMP=$(mktemp -d /tmp/ernic-install.XXXXXX)
chmod 755 "$TMP"
cleanup() {
	if [ -n "${ERNIC_RUNDIR:-}" ] && [ -x "${CTL:-}" ]; then
		"$CTL" del einst0 >/dev/null 2>&1
		"$CTL" del einst1 >/dev/null 2>&1
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

D=$TMP/dest
if ! DESTDIR=$D cmake --install "$BUILD" >"$TMP/install.log" 2>&1; then
	cat "$TMP/install.log"
	echo "FAIL: cmake --install"
	exit 1
fi
ok "DESTDIR=$D cmake --install $BUILD"

L=$ERNIC_I_LIBDIR
# ---- 1. the file list ----
real=$(ls "$D$L"/libernic.so.1.* 2>/dev/null)
[ "$(wc -w <<<"$real")" = 1 ] || fail "want one libernic.so.1.*: '$real'"
real=${real#"$D"}
want=(
	"$L/${real##*/}"
	"$L/libernic.so.1 -> ${real##*/}"
	"$L/libernic.so -> libernic.so.1"
	"$L/libibverbs/libernic-rdmav34.so -> ../libernic.so.1"
	"$L/pkgconfig/libernic.pc"
	"$L/ernic/libernic-sw.so"
	"$L/ernic/libernic-preload.so"
	"$L/ernic/rdmacm/librdmacm.so.1 -> librdmacm.so.1.3.0"
	"$L/ernic/rdmacm/librdmacm.so.1.3.0"
	"$ERNIC_I_SYSCONFDIR/libibverbs.d/ernic.driver"
	"$ERNIC_I_INCLUDEDIR/infiniband/ernicdv.h"
	"$ERNIC_I_SBINDIR/ernicctl"
	"$ERNIC_I_LIBEXECDIR/ernic/ernic-vfpga"
	"$ERNIC_I_LIBEXECDIR/ernic/ernic-broker"
)
for page in "$SRC"/man/*.[1-8]; do
	want+=("$ERNIC_I_MANDIR/man${page##*.}/${page##*/}")
done
printf '%s\n' "${want[@]}" | sort >"$TMP/want"
(cd "$D" && find . -type f -printf '/%P\n' &&
	find . -type l -printf '/%P -> %l\n') | sort >"$TMP/have"
if diff -u "$TMP/want" "$TMP/have" >"$TMP/diff"; then
	ok "installed files: $(wc -l <"$TMP/have"), as expected"
else
	fail "installed files differ (- wanted, + installed):"
	sed -n '3,$p' "$TMP/diff"
fi
[ "$(cat "$D$ERNIC_I_SYSCONFDIR/libibverbs.d/ernic.driver" 2>/dev/null)" = "driver ernic" ] ||
	fail "ernic.driver does not say 'driver ernic'"
[ "$(readlink -f "$D$L/libibverbs/libernic-rdmav34.so")" = "$D$real" ] ||
	fail "the provider module does not resolve to $real"

# ---- 2. ELF facts ----
dyn() { readelf -d "$1" 2>/dev/null | sed -n "s/.*($2).*\[\(.*\)\]/\1/p"; }
lib=$D$L/libernic.so.1
sw=$D$L/ernic/libernic-sw.so
[ "$(dyn "$lib" SONAME)" = libernic.so.1 ] || fail "libernic.so.1: SONAME '$(dyn "$lib" SONAME)'"
needed=$(dyn "$lib" NEEDED | tr '\n' ' ')
grep -qw libibverbs.so.1 <<<"$needed" || fail "libernic.so.1 does not need libibverbs: $needed"
grep -q 'libernic-sw\|libz\.\|libisal\|libbpf' <<<"$needed" && fail "libernic.so.1 needs the model's libraries: $needed"
ok "libernic.so.1 NEEDED: $needed"
exports=$(nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | sort -u)
[ -n "$exports" ] || fail "libernic.so.1 exports nothing"
bad=$(grep -v '^ernicdv_' <<<"$exports")
[ -z "$bad" ] || fail "libernic.so.1 exports more than ernicdv_*: $bad"
model=$(nm "$lib" 2>/dev/null | grep -E ' (ernic_model_|roce_|engine_|model_wire|crc32)' | head -3)
[ -z "$model" ] || fail "libernic.so.1 holds model code: $model"
nm -D --defined-only "$sw" | grep -q ' ernic_sw_backend_v1@' ||
	fail "libernic-sw.so does not export ernic_sw_backend_v1"
[ "$(dyn "$sw" SONAME)" = libernic-sw.so ] || fail "libernic-sw.so: SONAME '$(dyn "$sw" SONAME)'"
vf=$D$ERNIC_I_LIBEXECDIR/ernic/ernic-vfpga
dyn "$vf" NEEDED | grep -qx libernic-sw.so || fail "ernic-vfpga does not link libernic-sw.so"
[ "$(realpath -q "$(ldd "$vf" | sed -n 's/.*libernic-sw.so => \([^ ]*\).*/\1/p')")" = "$sw" ] ||
	fail "installed ernic-vfpga does not find $sw: $(ldd "$vf" | grep ernic-sw)"
for f in "$lib" "$sw" "$vf" "$D$ERNIC_I_LIBEXECDIR/ernic/ernic-broker" \
	"$D$ERNIC_I_SBINDIR/ernicctl" "$D$L/ernic/libernic-preload.so" \
	"$D$L/ernic/rdmacm/librdmacm.so.1" "$D$L/libibverbs/libernic-rdmav34.so"; do
	! ldd "$f" 2>&1 | grep -q 'not found' || fail "$f: $(ldd "$f" | grep 'not found')"
	dyn "$f" RPATH | grep -q . && fail "$f has an RPATH: $(dyn "$f" RPATH)"
	dyn "$f" RUNPATH | grep -q "$BUILD" && fail "$f has the build tree in RUNPATH"
done
ok "ELF: SONAMEs, NEEDED, exports, RUNPATH"

# ---- 3. pkg-config: an ernicdv program ----
cat >"$TMP/dv.c" <<'EOF'
#include <infiniband/ernicdv.h>
#include <stdio.h>

int main(void)
{
	int n = 0, k = 0;
	struct ibv_device **l = ibv_get_device_list(&n);

	for (int i = 0; i < n; i++)
		k += ernicdv_is_ernic_device(l[i]);
	printf("%d ERNIC of %d devices\n", k, n);
	if (l)
		ibv_free_device_list(l);
	return 0;
}
EOF
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D$L/pkgconfig
if flags=$(pkg-config --cflags --libs libernic); then
	ok "pkg-config libernic: $flags"
	# shellcheck disable=SC2086
	if "${CC:-cc}" -std=c11 -Wall -Werror -o "$TMP/dv" "$TMP/dv.c" $flags; then
		dyn "$TMP/dv" NEEDED | grep -qx libernic.so.1 ||
			fail "the ernicdv program does not need libernic.so.1"
		out=$(LD_LIBRARY_PATH=$D$L "$TMP/dv") || fail "the ernicdv program failed: $out"
		ok "ernicdv program: $out"
	else
		fail "cannot build an ernicdv program with pkg-config libernic"
	fi
else
	fail "pkg-config libernic"
fi
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH

# ---- another prefix: everything under it ----
P=$TMP/prefix
if DESTDIR=$P cmake --install "$BUILD" --prefix /opt/ernic >"$TMP/install2.log" 2>&1; then
	outside=$(cd "$P" && find . ! -type d | grep -v '^\./opt/ernic/' |
		grep -v '^\./etc/libibverbs.d/ernic.driver$')
	[ -z "$outside" ] || fail "--prefix /opt/ernic installed outside it: $outside"
	env2=$("$P/opt/ernic/${ERNIC_I_SBINDIR#"$ERNIC_I_PREFIX"/}/ernicctl" env)
	drv=$(sed -n 's/.* RDMAV_DRIVERS=\([^ ]*\) .*/\1/p' <<<"$env2")
	[ -e "$drv-rdmav34.so" ] && [[ $drv == "$P/opt/ernic/"* ]] ||
		fail "ernicctl env under --prefix: $env2"
	ok "--prefix /opt/ernic: all files under it; ernicctl env uses them"
else
	cat "$TMP/install2.log"
	fail "cmake --install --prefix /opt/ernic"
fi

if [ "$(id -u)" != 0 ]; then
	echo "note: not root: the installed tree is not run"
	[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
	exit 0
fi

# ---- 4. run the installed tree ----
CTL=$D$ERNIC_I_SBINDIR/ernicctl
export ERNIC_RUNDIR=$TMP/run
env1=$("$CTL" env) || fail "installed ernicctl env"
eval "$env1"
[[ $RDMAV_DRIVERS == "$D$L/libibverbs/libernic" ]] ||
	fail "installed ernicctl env: RDMAV_DRIVERS=$RDMAV_DRIVERS"
[[ $LD_PRELOAD == "$D$L/ernic/libernic-preload.so"* ]] ||
	fail "installed ernicctl env: LD_PRELOAD=$LD_PRELOAD"
[[ $LD_LIBRARY_PATH == "$D$L/ernic/rdmacm"* ]] ||
	fail "installed ernicctl env: LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
"$CTL" add einst0 --sw 127.0.0.61 || fail "installed ernicctl add --sw"
"$CTL" add einst1 --sim-uio 127.0.0.62 || fail "installed ernicctl add --sim-uio"
out=$(LD_DEBUG=files ibv_devinfo -d einst0 2>&1)
grep -q 'PORT_ACTIVE' <<<"$out" || fail "ibv_devinfo -d einst0: $out"
grep -q "file=$D$L/libibverbs/libernic-rdmav34.so " <<<"$out" ||
	fail "libibverbs did not load the installed provider"
grep -q "file=$sw " <<<"$out" || fail "the provider did not load $sw"
ok "ibv_devinfo on a software device: installed provider and libernic-sw.so"
vpid=$(cat "$ERNIC_RUNDIR/vfpga/einst1/pid" 2>/dev/null)
grep -q " $sw$" "/proc/${vpid:-0}/maps" 2>/dev/null ||
	fail "the virtual FPGA (pid ${vpid:-?}) does not run the installed libernic-sw.so"
out=$(LD_DEBUG=files ibv_devinfo -d einst1 2>&1)
grep -q 'PORT_ACTIVE' <<<"$out" || fail "ibv_devinfo -d einst1 (virtual FPGA): $out"
grep -q "file=$sw " <<<"$out" && fail "the UIO path loaded libernic-sw.so"
ok "ibv_devinfo on a virtual FPGA: no model in the verbs process"
# Without the backend: a clear reason, and the UIO device unaffected.
mv "$sw" "$TMP/sw.away"
out=$(ibv_devinfo -d einst0 2>&1) && fail "ibv_devinfo without libernic-sw.so succeeded"
grep -q "software ERNIC backend not found (install the ernic-tools package)" <<<"$out" ||
	fail "no clear reason without libernic-sw.so: $out"
ibv_devinfo -d einst1 2>&1 | grep -q PORT_ACTIVE ||
	fail "the virtual FPGA device needs libernic-sw.so in the verbs process"
mv "$TMP/sw.away" "$sw"
ok "without libernic-sw.so: $(grep -m1 'backend' <<<"$out")"
"$CTL" del einst0 || fail "installed ernicctl del einst0"
"$CTL" del einst1 || fail "installed ernicctl del einst1"
unset ERNIC_RUNDIR SYSFS_PATH RDMAV_DRIVERS LD_PRELOAD LD_LIBRARY_PATH

# ---- an ernicctl configured for /usr, where the system looks ----
U=$TMP/usr-build
if cmake -S "$SRC" -B "$U" -DCMAKE_INSTALL_PREFIX=/usr -DBUILD_TESTING=OFF \
	>"$TMP/usr.log" 2>&1 && make -C "$U" ernicctl >>"$TMP/usr.log" 2>&1; then
	grep -q '"/etc/libibverbs.d"' "$U/providers/ernic/cmake_install.cmake" ||
		fail "prefix /usr: ernic.driver is not installed into /etc/libibverbs.d"
	sbin=$(sed -n 's/^CMAKE_INSTALL_SBINDIR:PATH=//p' "$U/CMakeCache.txt")
	mkdir -p "$TMP/sbin"
	cp "$U/bin/ernicctl" "$TMP/sbin/"
	# Only this process's mount namespace sees the bind mount.
	out=$(unshare --mount --propagation private sh -c \
		'mount --bind "$1" "/usr/$2" && exec "/usr/$2/ernicctl" env' \
		sh "$TMP/sbin" "$sbin" 2>&1)
	grep -q "LD_PRELOAD=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$U/CMakeCache.txt" |
		sed 's|^|/usr/|')/ernic/libernic-preload.so" <<<"$out" &&
		! grep -q RDMAV_DRIVERS <<<"$out" ||
		fail "ernicctl env at /usr/$sbin: $out"
	grep -q RDMAV_DRIVERS <<<"$("$U/bin/ernicctl" env)" ||
		fail "the /usr build's ernicctl env in its build tree lacks RDMAV_DRIVERS"
	ok "prefix /usr: ernicctl env at /usr/$sbin: no RDMAV_DRIVERS"
else
	tail -20 "$TMP/usr.log"
	fail "configuring and building ernicctl for prefix /usr"
fi

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "install: all checks passed"
