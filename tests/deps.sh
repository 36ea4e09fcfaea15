#!/bin/bash
# Install what building and testing psi_mod needs on Debian 12, only what is
# missing. Run as root. Used by `make deps`, `make check` and `make demo`.
set -euo pipefail

pkgs=(gcc make libc6-dev perl python3 sparse xz-utils
      linux-headers-amd64 linux-image-amd64 linux-source-6.1
      qemu-system-x86 busybox-static rt-tests cpio kmod)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "deps: missing ${missing[*]}; run as root to install them" >&2
		exit 1
	fi
	echo "deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The VM harness may need more; it knows what.
if [ -x tests/vm/deps.sh ]; then
	tests/vm/deps.sh
fi
# The kernels lane (pahole for 6.12's BTF, dkms, debhelper + dh-dkms).
if [ -x tests/kernels/deps.sh ]; then
	tests/kernels/deps.sh
fi
