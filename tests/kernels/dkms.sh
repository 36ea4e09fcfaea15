#!/bin/bash
# The DKMS path, end to end, against the installed Debian 6.1 kernel (the
# one with headers here): dkms add/build/install puts psi_mod.ko under
# /lib/modules/<kver>/updates/dkms; that very file, with a modules.dep from
# depmod -b on a staging tree, goes into the test initramfs (no
# /psi_mod.ko there), the kernel boots psi=0 and `modprobe psi_mod` must
# load it (tests/kernels/guest/suite-dkms.sh); then dkms remove must leave
# no psi_mod.ko and no DKMS state behind. Runs as root (it installs into
# /lib/modules and /usr/src, and removes what it installed).
#
# usage: tests/kernels/dkms.sh        (make check-kernels runs it)
# Output: "PASS kernels/dkms/<step>" / "FAIL kernels/dkms/<step>: why",
# last "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${PSI_KERNELS_DIR:-$top/build/kernels}
export PSI_VM_BUILD=$out/vm-dkms
. "$top/tests/vm/lib.sh"
. "$here/lib.sh"

RESULT_PREFIX=kernels/

command -v dkms >/dev/null || "$top/tests/deps.sh" >&2
command -v dkms >/dev/null || { fail dkms/setup "dkms not installed and tests/deps.sh could not install it"; finish; }
[ "$(id -u)" = 0 ] || { fail dkms/setup "must run as root"; finish; }
mkdir -p "$out/logs"
# dkms.sh and deb.sh both install psi-mod system-wide
exec 8>"$out/.system-install.lock"
flock -w 900 8 || { fail dkms/setup "timed out waiting for $out/.system-install.lock"; finish; }

name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' "$top/dkms.conf")
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
[ -n "$name" ] && [ -n "$ver" ] || { fail dkms/setup "no PACKAGE_NAME/PACKAGE_VERSION in dkms.conf"; finish; }
env_of 6.1 || { fail dkms/setup "no installed Debian 6.1 kernel with headers"; finish; }
log=$out/logs/dkms.log
: >"$log"

# A psi-mod the package (make deb) installed would own /usr/src: refuse
# rather than break it.
if dpkg-query -W -f='${Status}' psi-mod-dkms 2>/dev/null | grep -q "ok installed"; then
	fail dkms/setup "psi-mod-dkms package is installed: apt-get purge psi-mod-dkms first"
	finish
fi
# leftovers of an interrupted run of this test
dkms remove "$name/$ver" --all >>"$log" 2>&1
rm -rf "/usr/src/$name-$ver"

# the tree as DKMS wants it: /usr/src/<name>-<version> with dkms.conf
mkdir -p "/usr/src/$name-$ver"
cp -r "$top/dkms.conf" "$top/Kbuild" "$top/Makefile" "$top/src" "$top/include" "/usr/src/$name-$ver/"
if dkms add "$name/$ver" >>"$log" 2>&1; then pass dkms/add "$name/$ver"
else fail dkms/add "dkms add $name/$ver failed (log: $log)"; finish; fi
if dkms build "$name/$ver" -k "$KVER" >>"$log" 2>&1; then pass dkms/build "for $KVER"
else fail dkms/build "dkms build -k $KVER failed: $(grep -m2 -iE 'error' "$log" | tr '\n' ' ') (log: $log)"; fi
if dkms install "$name/$ver" -k "$KVER" >>"$log" 2>&1; then pass dkms/install "for $KVER"
else fail dkms/install "dkms install -k $KVER failed (log: $log)"; fi

ko=$(ls "/lib/modules/$KVER/updates/dkms/psi_mod.ko"* 2>/dev/null | head -1)
if [ -n "$ko" ]; then
	pass dkms/location "$ko, srcversion $(modinfo -F srcversion "$ko"), $(dkms status "$name/$ver" -k "$KVER" | head -1)"
	# what modprobe on the host would pick: the updates/dkms build
	r=$(modinfo -k "$KVER" -F filename psi_mod 2>&1)
	if [ "$r" = "$ko" ]; then pass dkms/modinfo "modinfo -k $KVER psi_mod resolves to $r"
	else fail dkms/modinfo "modinfo -k $KVER psi_mod resolves to '$r', want $ko"; fi
	# the staging tree for the guest: the installed file, uncompressed if
	# DKMS compressed it (busybox modprobe reads plain .ko), and depmod's
	# modules.dep for it
	stage=$(mktemp -d "${TMPDIR:-/tmp}/psi-dkms.XXXXXX")
	chmod 755 "$stage"
	d=$stage/lib/modules/$KVER/updates/dkms
	mkdir -p "$d" "$stage/etc"
	case "$ko" in
	*.xz) xz -dc "$ko" >"$d/psi_mod.ko" ;;
	*.zst) zstd -qdc "$ko" >"$d/psi_mod.ko" ;;
	*) cp "$ko" "$d/psi_mod.ko" ;;
	esac
	modinfo -F srcversion "$d/psi_mod.ko" >"$stage/etc/psi-dkms-srcversion"
	# what depmod reads besides the modules (it warns without them)
	cp "$MODDIR"/modules.order "$MODDIR"/modules.builtin "$MODDIR"/modules.builtin.modinfo \
		"$stage/lib/modules/$KVER/" 2>/dev/null
	if depmod -b "$stage" "$KVER" && grep -q '^updates/dkms/psi_mod.ko:' "$stage/lib/modules/$KVER/modules.dep"; then
		lock_build_dir
		boot dkms-6.1 "$here/guest/suite-dkms.sh" "${PSI_VM_TIMEOUT:-300}" "" "$stage"
	else
		fail dkms/depmod "depmod -b $stage $KVER made no modules.dep entry for updates/dkms/psi_mod.ko"
	fi
	rm -rf "$stage"
else
	fail dkms/location "no psi_mod.ko under /lib/modules/$KVER/updates/dkms after dkms install"
fi

# remove: nothing of psi_mod may stay
dkms remove "$name/$ver" --all >>"$log" 2>&1 || fail dkms/remove "dkms remove $name/$ver --all failed (log: $log)"
rm -rf "/usr/src/$name-$ver"
left=$(find /lib/modules -name 'psi_mod.ko*' 2>/dev/null | head -3 | tr '\n' ' ')
st=$(dkms status "$name" 2>/dev/null)
if [ -z "$left" ] && [ -z "$st" ] && [ ! -e "/var/lib/dkms/$name" ]; then
	pass dkms/remove "no psi_mod.ko under /lib/modules, dkms status empty, no /var/lib/dkms/$name"
else
	fail dkms/remove "left behind: ${left:+files $left}${st:+ status '$st'}$([ -e "/var/lib/dkms/$name" ] && echo " /var/lib/dkms/$name")"
fi
r=$(modinfo -k "$KVER" -F filename psi_mod 2>&1)
case "$r" in
*"not found"*) pass dkms/depmod-after "modinfo -k $KVER psi_mod: not found (modules.dep updated)" ;;
*) fail dkms/depmod-after "modinfo -k $KVER psi_mod still resolves to '$r'" ;;
esac
finish
