#!/bin/bash
# The Debian 12 system image of tests/system, built from the package
# archive with mmdebstrap as the directory build/system/base (cached: made
# again only when tests/system/packages or this script changes).
#
#   - the packages of tests/system/packages from bookworm, with systemd as
#     init; bookworm-backports is in its sources (run.sh installs the
#     6.12 kernel from there as the kernel upgrade), and the package lists
#     are kept
#   - root on /dev/vda (ext4), DHCP on the QEMU user network
#     (systemd-networkd), a fixed machine-id (no first-boot questions)
#   - a user "user" (uid 1000), the unprivileged consumer
#
# The mirror is the machine's own (/etc/apt/sources.list.d/debian.sources).
# usage: tests/system/image.sh        prints the base directory last
# env: PSI_SYSTEM_DIR (default <repo>/build/system)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${PSI_SYSTEM_DIR:-$top/build/system}
base=$out/base
mkdir -p "$out"

key=$(cat "$here/packages" "$here/image.sh" | sha256sum | cut -c1-16)
if [ -f "$base/.psi-system-key" ] && [ "$(cat "$base/.psi-system-key")" = "$key" ]; then
	echo "$base"
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "image.sh: must run as root (mmdebstrap --mode=root)" >&2; exit 1; }
command -v mmdebstrap >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q mmdebstrap >&2

src=/etc/apt/sources.list.d/debian.sources
uri=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' "$src")
suri=$(awk '/^URIs:/ && $2 ~ /security/ { print $2; exit }' "$src")
kr=$(awk '/^Signed-By:/ { print $2; exit }' "$src")
[ -n "$uri" ] || { echo "image.sh: no URIs line in $src" >&2; exit 1; }
sources=$out/sources.sources
{
	printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates bookworm-backports\nComponents: main\nSigned-By: %s\n' \
		"$uri" "${kr:-/usr/share/keyrings/debian-archive-keyring.gpg}"
	[ -z "$suri" ] || printf '\nTypes: deb\nURIs: %s\nSuites: bookworm-security\nComponents: main\nSigned-By: %s\n' \
		"$suri" "${kr:-/usr/share/keyrings/debian-archive-keyring.gpg}"
} >"$sources"
pkgs=$(grep -v '^#' "$here/packages" | grep . | paste -sd, -)

rm -rf "$base" "$base.new"
log=$out/image.log
echo "== image: mmdebstrap bookworm ($(grep -vc '^#' "$here/packages") packages) -> $base (log: $log)" >&2
mmdebstrap --mode=root --variant=apt --include="$pkgs" \
	--skip=cleanup/apt/lists \
	--customize-hook='echo sysguest > "$1/etc/hostname"' \
	--customize-hook='printf "/dev/vda / ext4 rw,errors=remount-ro 0 1\n" > "$1/etc/fstab"' \
	--customize-hook='echo 3f6a2c0b9d4e4c1a8b7e5d2f1a0c9b8e > "$1/etc/machine-id"' \
	--customize-hook='mkdir -p "$1/etc/systemd/network" && printf "[Match]\nName=en* eth*\n\n[Network]\nDHCP=yes\n" > "$1/etc/systemd/network/20-wired.network"' \
	--customize-hook='chroot "$1" systemctl enable systemd-networkd' \
	--customize-hook='chroot "$1" systemctl mask oomd.service' \
	--customize-hook='chroot "$1" systemctl disable netdata.service' \
	--customize-hook='chroot "$1" useradd -m -u 1000 -s /bin/bash user' \
	--customize-hook='chroot "$1" passwd -d root' \
	bookworm "$base.new" "$sources" >"$log" 2>&1 || {
	tail -20 "$log" >&2
	echo "image.sh: mmdebstrap failed (log: $log)" >&2
	exit 1
}
echo "$key" >"$base.new/.psi-system-key"
mv "$base.new" "$base"
echo "$base"
