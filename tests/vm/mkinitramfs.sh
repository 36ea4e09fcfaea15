#!/bin/bash
# Build the test initramfs (an uncompressed newc cpio: TCG unpacks it faster
# than it would gunzip it, and it is only a few MiB).
#
# usage: mkinitramfs.sh KVER OUT.cpio [psi_mod.ko]
#
# Contents:
#   /bin/busybox + a link per applet (/sbin, /usr/bin, /usr/sbin -> /bin)
#   /init                     tests/vm/init
#   /tests/*.sh               tests/vm/guest/*.sh
#   /lib/modules/KVER/*.ko    virtio_pci + virtio_blk and their dependencies,
#                             decompressed on the host (6.12 ships .ko.xz and
#                             busybox insmod cannot read that), plus the list
#                             load.order in dependency order
#                             and the modules named in $PSI_VM_EXTRA_MODULES
#                             (e.g. "zram" for compare.sh's swap), loaded too
#   /lib/modules/KVER/opt/*.ko modules a case loads when it needs them (fuse)
#   /psi_mod.ko               the module under test, if given
#   /<name>                   each file in $PSI_VM_EXTRA_FILES (e.g. the
#                             measuring module of tests/vm/clockcmp.sh)
#   /bin/{spin,dio,memhog,kit} static helpers (tests/vm/helpers/*.c)
#   /usr/bin/hackbench        dynamically linked: binary + ldd libs + loader
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -ge 2 ] || die "usage: mkinitramfs.sh KVER OUT.cpio [psi_mod.ko]"
kver=$1 out=$2 ko=${3:-}
moddir=$(module_dir "$kver")
[ -f "$moddir/modules.dep" ] || die "no $moddir/modules.dep"

root=$(mktemp -d "${TMPDIR:-/tmp}/psi-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
# mktemp -d makes 0700; as the guest's / that would lock every non-root user
# out of everything (the "readable by all" check runs as uid 65534)
chmod 755 "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,tests,lib/modules/"$kver",lib64,usr,etc}
ln -s ../bin "$root/usr/bin"
ln -s ../bin "$root/usr/sbin"
ln -s bin "$root/sbin"

# --- busybox and its applet links
bb=$(command -v busybox) || die "busybox not installed (busybox-static)"
# /init runs before any library could be found: busybox must be static
case "$(ldd "$bb" 2>&1 || true)" in
*"not a dynamic"*) ;;
*) die "$bb is not static: install busybox-static" ;;
esac
cp -L "$bb" "$root/bin/busybox"
for a in $("$bb" --list); do
	[ "$a" = busybox ] || ln -sf busybox "$root/bin/$a"
done

# --- virtio modules, dependencies first (post-order walk of modules.dep)
declare -A seen=()
order=()
resolve() {	# $1: path relative to moddir as written in modules.dep
	local m=$1 deps d
	[ -n "${seen[$m]:-}" ] && return
	seen[$m]=1
	deps=$(awk -v m="$m:" '$1 == m { $1 = ""; print }' "$moddir/modules.dep")
	for d in $deps; do resolve "$d"; done
	order+=("$m")
}
# PSI_VM_EXTRA_MODULES: more modules to load at boot (unset: none)
for want in virtio_pci virtio_blk ${PSI_VM_EXTRA_MODULES:-}; do
	path=$(awk -F: -v w="$want" '{ n = $1; sub(/.*\//, "", n); sub(/\.ko(\.(xz|zst|gz))?$/, "", n);
		gsub(/-/, "_", n); if (n == w) { print $1; exit } }' "$moddir/modules.dep")
	if [ -z "$path" ]; then
		# built into this kernel (virtio_pci is on 6.12): nothing to load
		grep -q "/$want\.ko" "$moddir/modules.builtin" 2>/dev/null ||
			die "$want is neither a module nor built in for $kver"
		continue
	fi
	resolve "$path"
done
: > "$root/lib/modules/$kver/load.order"
for m in "${order[@]}"; do
	src=$moddir/$m
	name=$(basename "$m")
	case "$name" in
	*.ko.xz) xz -dc "$src" > "$root/lib/modules/$kver/${name%.xz}"; name=${name%.xz} ;;
	*.ko.zst) zstd -qdc "$src" > "$root/lib/modules/$kver/${name%.zst}"; name=${name%.zst} ;;
	*.ko.gz) gzip -dc "$src" > "$root/lib/modules/$kver/${name%.gz}"; name=${name%.gz} ;;
	*) cp "$src" "$root/lib/modules/$kver/$name" ;;
	esac
	echo "$name" >> "$root/lib/modules/$kver/load.order"
done
echo "$kver" > "$root/etc/kver"

# --- modules a case loads itself (not at boot), into /lib/modules/KVER/opt:
# fuse (the stop cases of suite psi0); absent if built in or not built
mkdir -p "$root/lib/modules/$kver/opt"
for want in fuse; do
	path=$(awk -F: -v w="$want" '{ n = $1; sub(/.*\//, "", n); sub(/\.ko(\.(xz|zst|gz))?$/, "", n);
		if (n == w) { print $1; exit } }' "$moddir/modules.dep")
	[ -n "$path" ] || continue
	case "$path" in
	*.ko.xz) xz -dc "$moddir/$path" > "$root/lib/modules/$kver/opt/$want.ko" ;;
	*.ko.zst) zstd -qdc "$moddir/$path" > "$root/lib/modules/$kver/opt/$want.ko" ;;
	*.ko.gz) gzip -dc "$moddir/$path" > "$root/lib/modules/$kver/opt/$want.ko" ;;
	*) cp "$moddir/$path" "$root/lib/modules/$kver/opt/$want.ko" ;;
	esac
done

# --- static helpers
bindir=$(build_helpers) || die "helper build failed"
cp "$bindir"/* "$root/bin/"

# --- hackbench: dynamically linked, so the binary, its libraries and the
# loader, each at the path the loader will look for it.
hb=$(command -v hackbench) || die "hackbench not installed (rt-tests)"
cp -L "$hb" "$root/bin/hackbench"
for lib in $(ldd "$hb" | awk '/=> \//{ print $3 } /^[[:space:]]*\//{ print $1 }'); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done

# --- the module under test, the guest scripts and /init
[ -z "$ko" ] || cp "$ko" "$root/psi_mod.ko"
for f in ${PSI_VM_EXTRA_FILES:-}; do cp "$f" "$root/"; done
cp "$PSI_VM_DIR"/guest/*.sh "$root/tests/"
cp "$PSI_VM_DIR/init" "$root/init"
chmod 755 "$root/init" "$root"/tests/*.sh
# no passwd in busybox-only root; setpriv uses numeric ids, but give `ls -l`
# and friends names to print.
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"

mkdir -p "$(dirname "$out")"
(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) > "$out.tmp"
mv "$out.tmp" "$out"
log "initramfs $out ($(du -h "$out" | cut -f1)): modules ${order[*]##*/}"
