#!/bin/bash
# What the kernels lane needs beyond tests/deps.sh, installed only if
# missing (as root): pahole (dwarves) to generate BTF for modules built
# against 6.12's headers (their vmlinux is there, so kbuild runs pahole),
# dkms for the DKMS test, debhelper + dh-dkms for `make deb`.
set -euo pipefail
pkgs=(dwarves dkms debhelper dh-dkms xz-utils zstd)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
if [ "$(id -u)" != 0 ]; then
	echo "kernels deps: missing ${missing[*]}; run as root to install them" >&2
	exit 1
fi
echo "kernels deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# --no-install-recommends: dkms recommends linux-headers of the running
# kernel, which this machine (6.18, no headers packaged) does not have
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
	{ apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
