#!/bin/bash
# Static checks of the module source, each reported as one PASS/FAIL line:
#   build-w1   the module builds with W=1 and no warning at all
#   sparse     make C=2 reports nothing
#   checkpatch checkpatch.pl --strict from Debian's linux-source-6.1 is clean
# Usage: tests/lint.sh KDIR
set -uo pipefail
kdir=$1
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/lint
mkdir -p "$out"
. "$top/tests/lib/host.sh"

report() {	# name status logfile
	if [ "$2" = 0 ]; then
		pass "$1"
	else
		fail "$1" "see $3"
		sed -n '1,20p' "$3" | sed 's/^/    /'
	fi
}

# Build a copy, so that lint never touches the psi_mod.ko of the work tree.
tree=$out/tree
rm -rf "$tree"
mkdir -p "$tree"
cp -r "$top/Kbuild" "$top/dkms.conf" "$top/src" "$top/include" "$tree/"

# Everything the compiler says, minus kbuild's own progress lines.
noise='^ *(CC|LD|CHECK|MODPOST|BTF)|^make|Skipping BTF|^$'

make -C "$kdir" M="$tree" W=1 modules >"$out/w1.raw" 2>&1
rc=$?
grep -Ev "$noise" "$out/w1.raw" >"$out/w1.log"
[ $rc = 0 ] && [ ! -s "$out/w1.log" ]; report build-w1 $? "$out/w1.log"

make -s -C "$kdir" M="$tree" clean >/dev/null 2>&1
make -C "$kdir" M="$tree" C=2 modules >"$out/sparse.raw" 2>&1
rc=$?
grep -Ev "$noise" "$out/sparse.raw" >"$out/sparse.log"
[ $rc = 0 ] && [ ! -s "$out/sparse.log" ]; report sparse $? "$out/sparse.log"

# checkpatch.pl and the data files it reads, from the linux-source tarball.
cp_dir=$out/linux
if [ ! -x "$cp_dir/scripts/checkpatch.pl" ]; then
	tarball=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null | head -n 1)
	if [ -n "$tarball" ]; then
		mkdir -p "$cp_dir"
		tar -C "$cp_dir" --strip-components=1 -xJf "$tarball" \
			--wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
			'*/scripts/const_structs.checkpatch' 2>/dev/null
	fi
fi
if [ -x "$cp_dir/scripts/checkpatch.pl" ]; then
	# LINUX_VERSION_CODE is what an out-of-tree compat header is for: it
	# is allowed there and nowhere else.
	{
		perl "$cp_dir/scripts/checkpatch.pl" --strict --no-tree --terse \
			--show-types -f "$top"/src/*.c "$top"/include/psi_mod.h \
			"$top"/include/psi_mod_logic.h
		perl "$cp_dir/scripts/checkpatch.pl" --strict --no-tree --terse \
			--show-types --ignore LINUX_VERSION_CODE \
			-f "$top"/include/psi_mod_compat.h
	} 2>&1 | grep -v '^total: 0 errors, 0 warnings, 0 checks' | grep -v '^$' >"$out/checkpatch.log"
	[ ! -s "$out/checkpatch.log" ]; report checkpatch $? "$out/checkpatch.log"
else
	echo "checkpatch.pl not found (install linux-source-6.1)" >"$out/checkpatch.log"
	report checkpatch 1 "$out/checkpatch.log"
fi

finish
