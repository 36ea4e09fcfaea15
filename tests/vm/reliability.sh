#!/bin/bash
# Reliability lane: load/unload, enable toggle, CPU hotplug, fd-holder and
# fork/exec storms under hackbench, hostile parameters, an unprivileged
# user and a write fuzzer, all in a QEMU guest booted psi=0
# (guest side: tests/vm/guest/suite-reliability.sh, helper
# tests/vm/helpers/fuzz.c).
#
# usage: tests/vm/reliability.sh [--short|--full|--debug|--debug-short|--debug-vm] [--cases a,b]
#   --short  (default; make check) stock Debian 6.1 kernel, reduced counts
#            (50 load/unload, 200 toggles, 20 hotplug, 1x64 holders,
#            10 loads in the fork storm, 5000 fuzz writes)
#   --full   stock kernel, the full counts (500 / 1000 / 100 / 3x64 / 100 /
#            100000)
#   --debug  the -psimod-debug kernel from /work/shared/kernels (KASAN,
#            lockdep, kmemleak) unpacked into the build dir, module built
#            against its headers; booted with panic_on_warn=1 oops=panic like
#            every run; after the last unload a kmemleak scan must report
#            nothing. Counts as --full except 200 load/unload and 50 loads in
#            the fork storm (TCG + KASAN is many times slower).
#   --debug-short  the debug kernel with the --short counts: every case
#            and the kmemleak scan
#   --debug-vm  the VM suite (psi0 and psi1, tests/vm/run.sh) on the debug
#            kernel, each case's time limit x4; make check-debug runs it and
#            then --debug
# Every storm guest (all modes but --debug-vm) runs under single-threaded
# TCG (-accel tcg,thread=single: both vCPUs on one host thread), where the
# stale-translation int3 hang of QEMU 7.2's multi-threaded TCG has not been
# seen (docs/reliability.md, "The TCG int3 hang"); PSI_MOD_ACCEL overrides.
# env: PSI_VM_BUILD (default <repo>/build/reliability), PSI_SHARED_KERNELS
#      (default /work/shared/kernels, also ../shared/kernels from the repo),
#      RELI_DEBUG_KVER (default: the newest *-psimod-debug image there),
#      KVER (stock kernel for --short/--full)
# Output: "PASS reliability/int3watch-selftest" (the hang detector,
# tests/lib/int3watch.py, on recorded transcripts), then run.sh's
# "PASS reliability*/<case> -- <detail>" or "FAIL ...", last line
# "N passed, N failed"; exit 0 only if all passed.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
export PSI_VM_BUILD=${PSI_VM_BUILD:-$repo/build/reliability}
mode=short vm=0
case "${1:---short}" in
--short) mode=short ;;
--full) mode=full ;;
--debug) mode=debug ;;
--debug-short) mode=debug; export PSI_VM_APPEND="${PSI_VM_APPEND:-} psitest.counts=short" ;;
--debug-vm) mode=debug vm=1; export PSI_VM_APPEND="${PSI_VM_APPEND:-} psitest.limitx=4" ;;
-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
*) echo "usage: $0 [--short|--full|--debug|--debug-short|--debug-vm] [run.sh options, e.g. --cases a,b]" >&2; exit 2 ;;
esac
[ $# = 0 ] || shift
. "$here/lib.sh"
# a setup error (die) is the lane's one FAIL line; run.sh reports the rest
results_guard reliability/setup "reliability.sh stopped before the boot"
mkdir -p "$PSI_VM_BUILD"
PSI_VM_BUILD=$(cd "$PSI_VM_BUILD" && pwd)	# kbuild M= needs an absolute path

if [ $mode = debug ]; then
	shared=${PSI_SHARED_KERNELS:-$repo/../shared/kernels}
	[ -d "$shared" ] || shared=/work/shared/kernels
	kver=${RELI_DEBUG_KVER:-$(ls "$shared" 2>/dev/null | sed -n 's/^linux-image-\(.*-psimod-debug\)_.*\.deb$/\1/p' | sort -V | tail -1)}
	[ -n "$kver" ] || die "no linux-image-*-psimod-debug deb in $shared"
	root=$PSI_VM_BUILD/debugroot
	unpack_kernel "$shared" "$kver" "$root"
	ko=$(build_copy "$root/usr/src/linux-headers-$kver" "$kver") || die "module build against $kver headers failed"
	export KVER=$kver PSI_VM_KERNEL=$root/boot/vmlinuz-$kver PSI_VM_MODDIR=$root/lib/modules/$kver
	export PSI_MOD_KO=$ko PSI_VM_MEM=${PSI_VM_MEM:-1G}
	# a slow boot, then every storm several times slower than on the stock kernel
	export PSI_VM_TIMEOUT=${PSI_VM_TIMEOUT:-5400}
	suite=reliability-debug
	[ $vm = 0 ] || suite=psi0,psi1
else
	kver=$(find_kver)
	ko=$(build_copy "/lib/modules/$kver/build" "$kver") || die "module build against $kver failed"
	export KVER=$kver PSI_MOD_KO=$ko
	if [ $mode = full ]; then
		export PSI_VM_TIMEOUT=${PSI_VM_TIMEOUT:-3600}
		suite=reliability
	else
		export PSI_VM_TIMEOUT=${PSI_VM_TIMEOUT:-900}
		suite=reliability-short
	fi
fi
# the storms flip static keys and arm kprobes thousands of times; with
# both vCPUs on one host thread no vCPU runs while another rewrites code,
# so the invalidation of a patched site's translation cannot race its
# execution (multi-threaded TCG hung here: docs/reliability.md)
[ $vm = 1 ] || export PSI_MOD_ACCEL=${PSI_MOD_ACCEL:-tcg,thread=single}
echo "== reliability --$mode: kernel $KVER, module $(cd "$repo" && git describe --always --dirty 2>/dev/null) built in $(dirname "$ko")" >&2
# the hang detector every guest runs under (tests/lib/host.sh run_qemu), on
# recorded hangs and a recorded healthy storm
line=$(python3 "$repo/tests/lib/int3watch.py" selftest 2>&1) || true
case "$line" in
ok:*) pass reliability/int3watch-selftest "${line#ok: }" ;;
*) fail reliability/int3watch-selftest "${line#FAIL: }" ;;
esac
relay < <("$here/run.sh" --suite $suite "$@")
finish
