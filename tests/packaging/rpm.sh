#!/bin/bash
# SPDX-License-Identifier: MIT
# The RPM packages of redhat/ernic.spec, built as rpmbuild -bb does on an
# RPM distribution from a release tarball of the source (Debian's rpm;
# --nodeps, as no RPM database here knows the build dependencies).
# rpmbuild itself fails on a file the spec names that the install does
# not make, or one the install makes that no package takes. Then each
# package's contents and the library dependencies rpm found are checked:
# the provider package needs no zlib (the software ERNIC is in -utils).
#   usage: rpm.sh SOURCE_DIR
set -euo pipefail
# shellcheck source=SCRIPTDIR/copy_source.sh
source "$(dirname "$0")/copy_source.sh"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}
SRC=$(cd "${1:?usage: $0 SOURCE_DIR}" && pwd)
command -v rpmbuild >/dev/null || fail "'rpmbuild' is not installed (scripts/deps.sh installs rpm)"
SPEC=$SRC/redhat/ernic.spec
VER=$(awk '$1 == "Version:" { print $2 }' "$SPEC")
WORK=$(mktemp -d /tmp/ernic-rpm.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

mkdir -p "$WORK/SOURCES" "$WORK/src/ernic-$VER"
copy_source "$SRC" "$WORK/src/ernic-$VER"
tar -C "$WORK/src" -czf "$WORK/SOURCES/ernic-$VER.tar.gz" "ernic-$VER"
t0=$SECONDS
if ! rpmbuild -bb --nodeps --define "_topdir $WORK" \
	--define 'debug_package %{nil}' "$SPEC" >"$WORK/build.log" 2>&1; then
	tail -40 "$WORK/build.log"
	fail "rpmbuild -bb"
fi
echo "ok: rpmbuild -bb: $((SECONDS - t0)) s"

# has PACKAGE PATH...: each path is in the package.
has() {
	local rpm=$WORK/RPMS/$(uname -m)/$1-$VER-1.$(uname -m).rpm p
	shift
	[ -f "$rpm" ] || fail "no package $(basename "$rpm")"
	rpm -qlp "$rpm" >"$WORK/list" 2>/dev/null
	for p in "$@"; do
		grep -qx -- "$p" "$WORK/list" || { cat "$WORK/list"; fail "$(basename "$rpm") lacks $p"; }
	done
	echo "  $(basename "$rpm"): $(wc -l <"$WORK/list") files;" \
		"requires $(rpm -qp --requires "$rpm" 2>/dev/null | grep -c .) capabilities"
}
LIB=$(rpm --eval '%{_libdir}')
has ernic /etc/libibverbs.d/ernic.driver "$LIB/libernic.so.1" \
	"$LIB/libibverbs/libernic-rdmav34.so"
has ernic-devel /usr/include/infiniband/ernicdv.h "$LIB/libernic.so" \
	"$LIB/pkgconfig/libernic.pc"
has ernic-utils /usr/sbin/ernicctl /usr/libexec/ernic/ernic-vfpga \
	/usr/libexec/ernic/ernic-broker \
	"$LIB/ernic/libernic-sw.so" "$LIB/ernic/libernic-preload.so" \
	"$LIB/ernic/rdmacm/librdmacm.so.1"
req=$(rpm -qp --requires "$WORK/RPMS/$(uname -m)/ernic-$VER-1.$(uname -m).rpm" 2>/dev/null)
! grep -q 'libz\|libbpf\|libisal' <<<"$req" || fail "the provider package requires the model's libraries: $req"
grep -q 'libibverbs.so.1' <<<"$req" || fail "the provider package does not require libibverbs: $req"
rpm -qp --requires "$WORK/RPMS/$(uname -m)/ernic-utils-$VER-1.$(uname -m).rpm" 2>/dev/null |
	grep -q 'libz.so.1' || fail "ernic-utils does not require zlib (libernic-sw.so needs it)"
rpm -qp --requires "$WORK/RPMS/$(uname -m)/ernic-utils-$VER-1.$(uname -m).rpm" 2>/dev/null |
	grep -q 'libisal.so.2' || fail "ernic-utils does not require ISA-L (libernic-sw.so needs it)"
echo PASS
