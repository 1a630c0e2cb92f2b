#!/bin/bash
# Install the Debian 12 packages ernic builds and tests with.
set -euo pipefail
pkgs=(build-essential cmake pkg-config clang
      libibverbs-dev ibverbs-utils perftest librdmacm-dev rdmacm-utils
      libnl-3-dev libnl-route-3-dev libcmocka-dev
      zlib1g-dev libisal-dev libbpf-dev libpcap-dev tshark nftables
      libnetfilter-queue-dev libnftnl-dev libmnl-dev
      libclang-rt-14-dev llvm-14
      iproute2 util-linux
      debhelper lintian rpm python3-pyverbs)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "Installing: ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
