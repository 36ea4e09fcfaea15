#!/bin/bash
# Build the 6.1 test kernel with CONFIG_IRQ_TIME_ACCOUNTING=y (and
# CONFIG_PSI=y): the kernel's own /proc/pressure/irq, for psi_mod's irq
# pressure side by side. The recipe is ../shared/kernels/build.sh (Debian's
# linux-source-6.1, defconfig + kvm_guest.config + a fragment, make
# bindeb-pkg), with the fragment tests/kernels/irq.config.
# usage: tests/kernels/build-irq.sh [OUTDIR]   (default: build/kernels-irq)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/build/kernels-irq}
shared=${PSI_SHARED_KERNELS:-$repo/../shared/kernels}
[ -d "$shared" ] || shared=/work/shared/kernels
[ -x "$shared/build.sh" ] || { echo "build-irq: no build.sh in $shared" >&2; exit 1; }
for p in linux-source-6.1 bc bison flex libelf-dev libssl-dev dwarves dpkg-dev rsync kmod; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="${missing:-} $p"
done
if [ -n "${missing:-}" ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null
fi
# build.sh reads the fragment beside itself: both into a scratch folder
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$shared/build.sh" "$here/irq.config" "$tmp/"
mkdir -p "$out"
"$tmp/build.sh" irq "$out"
