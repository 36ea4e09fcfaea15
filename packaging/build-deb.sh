#!/bin/bash
# `make deb`: build psi-mod-dkms_<version>_all.deb with debhelper + dh-dkms.
# The version is dkms.conf's PACKAGE_VERSION; debian/changelog must agree.
# The source package is staged in build/deb/psi-mod-<version>/ (the
# module source, README.md, packaging/debian as debian/ and
# packaging/examples as examples/), so the working tree stays clean.
# Installs debhelper and dh-dkms if missing (as root).
# Output: the path of the .deb on the last line; exit 1 on failure.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
[ -n "$ver" ] || { echo "build-deb: no PACKAGE_VERSION in dkms.conf" >&2; exit 1; }
chver=$(sed -n '1s/^psi-mod (\([^)]*\)).*/\1/p' "$top/packaging/debian/changelog")
[ "$chver" = "$ver" ] || {
	echo "build-deb: debian/changelog says $chver, dkms.conf $ver: add a changelog entry (dch -v $ver)" >&2
	exit 1
}
command -v dh_dkms >/dev/null && command -v dpkg-buildpackage >/dev/null ||
	"$top/tests/deps.sh"

out=$top/build/deb
stage=$out/psi-mod-$ver
rm -rf "$out"
mkdir -p "$stage"
# sources only: a build in the working tree leaves objects next to them
mkdir -p "$stage/src" "$stage/include"
cp "$top/Kbuild" "$top/dkms.conf" "$top/README.md" "$stage/"
cp "$top"/src/*.[ch] "$stage/src/"
cp "$top"/include/*.h "$stage/include/"
cp -r "$top/packaging/debian" "$stage/debian"
cp -r "$top/packaging/examples" "$stage/examples"
cp "$top/examples/psi_monitor.c" "$stage/examples/"
# -b: binary only (the source package is this repository); -us -uc: unsigned
(cd "$stage" && dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1 || {
	tail -20 "$out/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed (log: $out/build.log)" >&2
	exit 1
}
deb=$out/psi-mod-dkms_${ver}_all.deb
[ -f "$deb" ] || { echo "build-deb: no $deb" >&2; exit 1; }
echo "$deb"
