#!/bin/bash
# Fetch and unpack (dpkg -x, never install) the kernels tests/kernels/run.sh
# builds psi_mod against and boots:
#   5.10     Debian bullseye            linux-image-5.10.*-amd64-unsigned + headers
#   6.12     Debian bookworm-backports  the same set for 6.12
#   6.12-rt  bookworm-backports         its PREEMPT_RT flavour (-rt-amd64)
#   nopsi    /work/shared/kernels       6.1.192-psimod-nopsi (CONFIG_PSI=n)
#   debug    /work/shared/kernels       6.1.192-psimod-debug (KASAN, lockdep)
#
# usage: tests/kernels/fetch.sh [NAME...]     (default: all of the above)
# env: PSI_KERNELS_DIR (default <repo>/build/kernels, gitignored),
#      PSI_SHARED_KERNELS (default <repo>/../shared/kernels, else /work/shared/kernels)
#
# Layout: build/kernels/<name>/root is the unpacked tree;
# build/kernels/<name>/env has KVER=, KDIR=, IMAGE=, MODDIR=, CC= for run.sh.
# Output: "PASS fetch/<name> -- <kver>" or "FAIL fetch/<name>: <why>" per
# kernel fetched and unpacked: a suite or package that cannot be had is a
# FAIL with the reason, never a crash, so that run.sh can go on with the
# kernels that were fetched. A kernel unpacked by an earlier run is no
# check, only the step "step fetch/<name> -- <kver> already unpacked".
#
# The Debian archive: the URIs of the machine's own apt configuration
# (/etc/apt/sources.list.d/debian.sources) with other suites, in a private
# apt state under build/kernels/apt, so the machine's apt state is untouched
# and no host name is ever written here.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${PSI_KERNELS_DIR:-$top/build/kernels}
# shared/ sits beside the repo (as in CI's clone); /work/shared is where
# the developers' machines keep it
shared=${PSI_SHARED_KERNELS:-$top/../shared/kernels}
[ -d "$shared" ] || shared=/work/shared/kernels
mkdir -p "$out"
out=$(cd "$out" && pwd)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(5.10 6.12 6.12-rt nopsi debug)

. "$top/tests/lib/host.sh"
RESULT_PREFIX=fetch/

# --- private apt state: apt_state, newest (tests/kernels/apt.sh)
. "$top/tests/kernels/apt.sh"

# Fix up unpacked Debian headers (kernels.md): the -amd64 Makefile includes
# the -common tree by its /usr/src path, and scripts/tools link to
# linux-kbuild-X by a relative path; point both into the unpack root.
fixup_headers() {	# root kver
	local root=$1 kver=$2 h mk
	h=$root/usr/src/linux-headers-$kver
	mk=$h/Makefile
	[ -f "$mk" ] || return 1
	sed -i "s|/usr/src/linux-headers-|$root/usr/src/linux-headers-|g" "$mk"
	# a second run must not prefix twice
	sed -i "s|$root$root|$root|g" "$mk"
	local l t
	for l in "$h/scripts" "$h/tools/objtool" "$h/tools/bpf/resolve_btfids"; do
		[ -L "$l" ] || continue
		t=$(readlink "$l")
		case "$t" in
		/*) ln -sfn "$root$t" "$l" ;;
		esac
	done
	# the image package's build link is absolute: point it at the unpack
	ln -sfn "$h" "$root/lib/modules/$kver/build"
	[ -e "$h/scripts/basic/fixdep" ] || [ -e "$h/scripts/mod/modpost" ]
}

write_env() {	# name root kver cc
	local d=$out/$1 root=$2 kver=$3
	cat > "$d/env" <<-EOF
	KVER=$kver
	KDIR=$root/usr/src/linux-headers-$kver
	IMAGE=$root/boot/vmlinuz-$kver
	MODDIR=$root/lib/modules/$kver
	CC=${4:-gcc}
	EOF
}

fetch_debian() {	# name kver-regex flavour kbuild-regex
	local name=$1 vre=$2 flav=$3 kbre=$4 d=$out/$1 img kver base pkgs p
	if [ -f "$d/env" ] && [ -f "$d/.done" ]; then
		. "$d/env"
		step "$name" "$KVER already unpacked"
		return 0
	fi
	if ! apt_state 2>"$out/apt.err"; then
		fail "$name" "private apt state: $(cat "$out/apt.err")"
		return 1
	fi
	# the archive keeps images of older ABIs but headers only of the newest:
	# pick the kernel by its headers, then its unsigned image
	kver=$(newest "linux-headers-${vre}-${flav}")
	[ -n "$kver" ] || { fail "$name" "no linux-headers-${vre}-${flav} in the archive lists"; return 1; }
	kver=${kver#linux-headers-}
	img=linux-image-$kver-unsigned
	[ -n "$(newest "${img//+/\\+}")" ] || { fail "$name" "no $img in the archive lists"; return 1; }
	base=${kver%-"$flav"}
	pkgs=("$img" "linux-headers-$kver" "linux-headers-$base-common")
	# rt's common headers are linux-headers-<base>-common-rt
	[ "$flav" = amd64 ] || pkgs[2]=linux-headers-$base-common-${flav%-amd64}
	p=$(newest "$kbre")
	[ -n "$p" ] || { fail "$name" "no $kbre in the archive lists"; return 1; }
	pkgs+=("$p")
	rm -rf "$d"
	mkdir -p "$d/debs" "$d/root"
	log "fetch $name: ${pkgs[*]}"
	if ! (cd "$d/debs" && "${APT[@]}" download "${pkgs[@]}") >"$d/download.log" 2>&1; then
		fail "$name" "apt-get download ${pkgs[*]}: $(tail -2 "$d/download.log" | tr '\n' ' ')"
		return 1
	fi
	for p in "$d"/debs/*.deb; do
		dpkg -x "$p" "$d/root" || { fail "$name" "dpkg -x $p failed"; return 1; }
	done
	fixup_headers "$d/root" "$kver" || { fail "$name" "header fix-up failed in $d/root"; return 1; }
	# the package's postinst would run depmod; the initramfs builder needs
	# modules.dep to find virtio_blk and its dependencies
	depmod -b "$d/root" "$kver" || { fail "$name" "depmod -b $d/root $kver failed"; return 1; }
	write_env "$name" "$d/root" "$kver" gcc
	touch "$d/.done"
	pass "$name" "$kver (${pkgs[*]})"
}

fetch_shared() {	# name flavour
	local name=$1 flav=$2 d=$out/$1 img hdr kver
	if [ -f "$d/env" ] && [ -f "$d/.done" ]; then
		. "$d/env"
		step "$name" "$KVER already unpacked"
		return 0
	fi
	img=$(ls "$shared"/linux-image-*-psimod-"$flav"_*.deb 2>/dev/null | sort -V | tail -1)
	hdr=$(ls "$shared"/linux-headers-*-psimod-"$flav"_*.deb 2>/dev/null | sort -V | tail -1)
	if [ -z "$img" ] || [ -z "$hdr" ]; then
		fail "$name" "no linux-image/headers-*-psimod-$flav .deb in $shared"
		return 1
	fi
	kver=$(dpkg-deb -f "$img" Package)
	kver=${kver#linux-image-}
	rm -rf "$d"
	mkdir -p "$d/root"
	dpkg -x "$img" "$d/root" && dpkg -x "$hdr" "$d/root" || { fail "$name" "dpkg -x failed"; return 1; }
	# bindeb-pkg headers are self-contained; only the build link is absolute
	ln -sfn "$d/root/usr/src/linux-headers-$kver" "$d/root/lib/modules/$kver/build"
	# the bindeb-pkg image has no modules.dep unless depmod ran
	[ -f "$d/root/lib/modules/$kver/modules.dep" ] ||
		depmod -b "$d/root" "$kver" 2>/dev/null
	write_env "$name" "$d/root" "$kver" gcc
	touch "$d/.done"
	pass "$name" "$kver (from $shared)"
}

rc=0
for n in "${names[@]}"; do
	case "$n" in
	5.10) fetch_debian 5.10 '5\.10\.[0-9]+-[0-9]+' amd64 'linux-kbuild-5\.10' || rc=1 ;;
	6.12) fetch_debian 6.12 '6\.12\.[0-9]+\+[a-z0-9]+' amd64 'linux-kbuild-6\.12\.[0-9]+\+[a-z0-9]+' || rc=1 ;;
	6.12-rt) fetch_debian 6.12-rt '6\.12\.[0-9]+\+[a-z0-9]+' rt-amd64 'linux-kbuild-6\.12\.[0-9]+\+[a-z0-9]+' || rc=1 ;;
	nopsi) fetch_shared nopsi nopsi || rc=1 ;;
	debug) fetch_shared debug debug || rc=1 ;;
	*) fail "$n" "unknown kernel name (5.10 6.12 6.12-rt nopsi debug)"; rc=1 ;;
	esac
done
exit $rc
