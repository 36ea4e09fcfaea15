#!/bin/bash
# `make deb` end to end, as root: build psi-mod-dkms_<version>_all.deb,
# `apt-get install ./psi-mod-dkms_*.deb` must build and install psi_mod.ko
# (DKMS, for every installed kernel with headers: here the Debian 6.1 one;
# the host's running kernel has no headers and is skipped, as expected),
# the examples must be under /usr/share/doc/psi-mod-dkms/examples and
# nothing under /etc; `apt-get purge psi-mod-dkms` must leave no psi_mod.ko
# under /lib/modules, no /usr/src/psi-mod-*, no DKMS state.
# Output: "PASS kernels/deb/<step>" / "FAIL kernels/deb/<step>: why",
# last "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${PSI_KERNELS_DIR:-$top/build/kernels}
. "$top/tests/lib/host.sh"
RESULT_PREFIX=kernels/deb/

[ "$(id -u)" = 0 ] || { fail setup "must run as root"; finish; }
mkdir -p "$out/logs"
log=$out/logs/deb.log
: >"$log"
# dkms.sh and this test both install psi-mod system-wide
exec 8>"$out/.system-install.lock"
flock -w 900 8 || { fail setup "timed out waiting for $out/.system-install.lock"; finish; }
name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' "$top/dkms.conf")
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
if dkms status "$name" 2>/dev/null | grep -q .; then
	fail setup "$name is already registered with DKMS ($(dkms status "$name" | head -1)): not touching it"
	finish
fi

if deb=$("$top/packaging/build-deb.sh" 2>>"$log" | tail -1) && [ -f "$deb" ]; then
	pass build "$(basename "$deb"), $(dpkg-deb -f "$deb" Depends | sed 's/^/Depends: /')"
else
	fail build "packaging/build-deb.sh failed (log: $log)"
	finish
fi
case "$(basename "$deb")" in
"psi-mod-dkms_${ver}_all.deb") pass name "psi-mod-dkms_${ver}_all.deb" ;;
*) fail name "$(basename "$deb"), want psi-mod-dkms_${ver}_all.deb" ;;
esac
c=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
miss=
for f in ./usr/src/$name-$ver/dkms.conf ./usr/src/$name-$ver/Kbuild ./usr/src/$name-$ver/src/psi_mod.c \
	./usr/share/doc/psi-mod-dkms/examples/modules-load.d/psi_mod.conf \
	./usr/share/doc/psi-mod-dkms/examples/modprobe.d/psi_mod.conf \
	./usr/share/doc/psi-mod-dkms/examples/psi_monitor.c \
	./usr/share/doc/psi-mod-dkms/examples/systemd/systemd-oomd.socket.d/psi_mod.conf; do
	grep -qxF "$f" <<<"$c" || miss="$miss $f"
done
etc=$(grep '^\./etc/.' <<<"$c" | tr '\n' ' ')
if [ -z "$miss" ] && [ -z "$etc" ]; then
	pass contents "source + dkms.conf under /usr/src/$name-$ver, examples under /usr/share/doc, nothing in /etc"
else
	fail contents "${miss:+missing$miss}${etc:+ ships in /etc: $etc}"
fi

export DEBIAN_FRONTEND=noninteractive
if apt-get install -y "$deb" >>"$log" 2>&1; then
	pass install "apt-get install ./$(basename "$deb")"
else
	fail install "apt-get install failed: $(tail -3 "$log" | tr '\n' ' ') (log: $log)"
fi
built=0
for b in /lib/modules/*/build; do
	[ -e "$b/Makefile" ] || continue
	k=$(basename "$(dirname "$b")")
	built=$((built + 1))
	ko=$(ls "/lib/modules/$k/updates/dkms/psi_mod.ko"* 2>/dev/null | head -1)
	if [ -n "$ko" ]; then pass "module-$k" "$ko, $(dkms status "$name/$ver" -k "$k" | head -1)"
	else fail "module-$k" "no psi_mod.ko under /lib/modules/$k/updates/dkms after install (log: $log)"; fi
done
[ $built -gt 0 ] || fail module "no installed kernel with headers: nothing for DKMS to build"

if apt-get purge -y psi-mod-dkms >>"$log" 2>&1; then pass purge "apt-get purge psi-mod-dkms"
else fail purge "apt-get purge failed (log: $log)"; fi
left=$(find /lib/modules -name 'psi_mod.ko*' 2>/dev/null | head -3 | tr '\n' ' ')
left="$left$(ls -d /usr/src/$name-* /var/lib/dkms/$name 2>/dev/null | tr '\n' ' ')"
if [ -z "$left" ] && ! dpkg-query -W psi-mod-dkms >/dev/null 2>&1; then
	pass clean "no psi_mod.ko under /lib/modules, no /usr/src/$name-*, no /var/lib/dkms/$name, package gone"
else
	fail clean "left behind: ${left:-psi-mod-dkms still known to dpkg}"
fi
finish
