#!/bin/bash
# Install what the VM harness needs on a fresh Debian 12, as root, and only
# what is missing (an up-to-date machine is left alone: no apt-get update).
#   qemu-system-x86      boots the test kernel (TCG)
#   busybox-static       the initramfs userland (static: no libraries at /init)
#   rt-tests             hackbench
#   cpio, kmod           initramfs archive; modinfo for dependencies/vermagic
#   gcc make libc6-dev   the module and the static helpers (gcc -static)
#   linux-image-amd64    the kernel booted in the guest (/boot/vmlinuz-*)
#   linux-headers-amd64  its build tree for the module
#   xz-utils             6.12 ships .ko.xz modules; they are decompressed on
#                        the host before going into the initramfs
# The package archive is whatever apt on this machine is configured with.
set -euo pipefail

pkgs="qemu-system-x86 busybox-static rt-tests cpio kmod gcc make libc6-dev
linux-image-amd64 linux-headers-amd64 xz-utils"

missing=()
for p in $pkgs; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all installed"
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "deps: missing ${missing[*]}; run as root to install" >&2; exit 1; }
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"
