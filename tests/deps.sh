#!/bin/bash
# Install what building and testing psi_mod needs on Debian 12: one list
# for every lane, installed as root and only what is missing (a machine
# that has it all is left alone: no apt-get update). The packages come from
# whatever archive apt on this machine is configured with.
# Used by `make deps` (and so by make check, demo, bench...), and by
# tests/kernels/dkms.sh, tests/system/run.sh and bench/run.sh when a package of theirs is missing.
set -euo pipefail

pkgs=(
	# the module, lint and unit lanes
	gcc make libc6-dev	# the module, the unit tests, the static guest helpers
	linux-headers-amd64	# the build tree of the kernel the VM lanes boot
	perl linux-source-6.1	# checkpatch.pl and its data files (tests/lint.sh)
	sparse			# make C=2 (tests/lint.sh)
	python3			# bench/report.py, bench/profile.py
	# the VM lanes (vm, compare, reliability, demo)
	linux-image-amd64	# the kernel booted in the guest (/boot/vmlinuz-*)
	qemu-system-x86		# boots it (TCG)
	busybox-static		# the initramfs userland (static: no libraries at /init)
	rt-tests		# hackbench
	cpio kmod		# the initramfs archive; modinfo, depmod
	xz-utils zstd		# compressed .ko of newer kernels and of DKMS,
				# decompressed on the host
	# the kernels lane
	dwarves			# pahole: BTF of modules built against 6.12's headers
	dkms			# tests/kernels/dkms.sh
	debhelper dh-dkms	# make deb (tests/kernels/deb.sh)
	# the system lane (tests/system)
	mmdebstrap		# the Debian 12 image
	prometheus curl		# the host's Prometheus server, its queries
	e2fsprogs		# mkfs.ext4 -d: the image as a disk
	# the bench lane
	gnuplot-nox		# the plots of the full run
)

missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing ${missing[*]}; run as root to install them" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# --no-install-recommends: dkms recommends the headers of the running
# kernel, which need not exist as a package
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
