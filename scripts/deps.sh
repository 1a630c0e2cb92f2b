#!/bin/bash
# Install the Debian 12 packages ernic builds and tests with.
set -euo pipefail
pkgs=(build-essential cmake pkg-config clang
      libibverbs-dev ibverbs-utils perftest librdmacm-dev rdmacm-utils
      libnl-3-dev libnl-route-3-dev libcmocka-dev
      zlib1g-dev libisal-dev libbpf-dev libpcap-dev tshark nftables
      libnetfilter-queue-dev libnftnl-dev libmnl-dev
      libclang-rt-14-dev llvm-14
      iproute2 util-linux iverilog yosys
      debhelper lintian rpm python3-pyverbs file)
# The aarch64 cross build and its tests under qemu-user (ctest
# cross_aarch64): Debian's cross gcc and the arm64 libraries through
# multiarch. Not libisal-dev:arm64: Debian 12's is not Multi-Arch: same
# and would replace the host's (the cross build uses zlib's CRC32).
arm64=(libibverbs-dev libnl-3-dev libnl-route-3-dev zlib1g-dev libbpf-dev
       libcmocka-dev libpcap-dev librdmacm-dev libnetfilter-queue-dev
       libnftnl-dev libmnl-dev ibverbs-providers)
pkgs+=(gcc-aarch64-linux-gnu qemu-user "${arm64[@]/%/:arm64}")
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "Installing: ${missing[*]}"
dpkg --print-foreign-architectures | grep -qx arm64 ||
	$SUDO dpkg --add-architecture arm64
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
