#!/bin/bash
# Build a test kernel with CONFIG_IRQ_TIME_ACCOUNTING=y (and CONFIG_PSI=y):
# the kernel's own /proc/pressure/irq, for psi_mod's irq pressure side by
# side (tests/vm/irq-compare.sh). The recipe is ../shared/kernels/build.sh's
# (Debian's kernel source, defconfig + kvm_guest.config + a fragment, make
# bindeb-pkg), with the fragment tests/kernels/irq.config, for either
# Debian series:
#   6.1   linux-source-6.1 (bookworm), installed if missing
#   6.12  linux-source-6.12 from bookworm-backports, fetched into the
#         private apt state of tests/kernels/apt.sh and unpacked, not
#         installed
# usage: tests/kernels/build-irq.sh [--series 6.1|6.12] [OUTDIR]
#        (default 6.1; OUTDIR default build/kernels-irq, for 6.12
#        build/kernels-irq-6.12).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
series=6.1
if [ "${1:-}" = --series ]; then
	series=$2
	shift 2
fi
case $series in
6.1) def=$top/build/kernels-irq ;;
6.12) def=$top/build/kernels-irq-$series ;;
*) echo "build-irq: no such series '$series' (6.1 or 6.12)" >&2; exit 2 ;;
esac
dest=${1:-$def}
for p in bc bison flex libelf-dev libssl-dev dwarves dpkg-dev rsync kmod lz4; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="${missing:-} $p"
done
[ "$series" = 6.1 ] && ! dpkg -s linux-source-6.1 >/dev/null 2>&1 && missing="${missing:-} linux-source-6.1"
if [ -n "${missing:-}" ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null
fi
work=$(mktemp -d /tmp/kbuild-irq.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ "$series" = 6.1 ]; then
	tarball=/usr/src/linux-source-6.1.tar.xz
else
	out=${PSI_KERNELS_DIR:-$top/build/kernels}
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	. "$top/tests/lib/host.sh"
	. "$here/apt.sh"
	apt_state || { echo "build-irq: no apt state for bookworm-backports" >&2; exit 1; }
	(cd "$work" && "${APT[@]}" download "linux-source-$series" >/dev/null)
	dpkg -x "$work"/linux-source-"$series"_*.deb "$work/src"
	tarball=$(ls "$work"/src/usr/src/linux-source-"$series".tar.*)
fi
tar -C "$work" -xf "$tarball"
cd "$work/linux-source-$series"
make defconfig >/dev/null
make kvm_guest.config >/dev/null
scripts/kconfig/merge_config.sh -m .config "$here/irq.config" >/dev/null
make olddefconfig >/dev/null
grep -q '^CONFIG_IRQ_TIME_ACCOUNTING=y' .config || { echo "build-irq: IRQ_TIME_ACCOUNTING did not stay on" >&2; exit 1; }
make -j"$(nproc)" bindeb-pkg KDEB_PKGVERSION=1 >"$work/build.log" 2>&1 || { tail -40 "$work/build.log"; exit 1; }
mkdir -p "$dest"
mv ../linux-image-*.deb ../linux-headers-*.deb "$dest"/
rm -f "$dest"/*-dbg_*.deb
echo "built into $dest"
