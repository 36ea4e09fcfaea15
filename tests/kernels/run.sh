#!/bin/bash
# psi_mod on every kernel users run: for each kernel, build the module with
# W=1 against its headers (must be warning-free), then boot it in QEMU (TCG)
# with the module in the initramfs and run a guest suite.
#
# usage: tests/kernels/run.sh [--smoke] [--kernels a,b] [--boot a,b] [--no-fetch] [--no-dkms]
#                             [--compare yes|no|only]
#   kernels: 5.10 6.12 6.12-rt nopsi debug (tests/kernels/fetch.sh) and 6.1
#            (the installed Debian 6.1 kernel, /boot + /lib/modules)
#   default (make check-kernels): fetch all, build all, boot each
#            with the full psi0 VM suite (the debug kernel with KASAN and
#            lockdep is slow under TCG), then tests/kernels/dkms.sh (DKMS
#            add/build/install, boot, modprobe, remove) and deb.sh (make deb,
#            apt-get install, purge); --no-dkms skips those two
#   --smoke  (make check): fetch and build all, boot each but 6.1 (whose
#            full suites the vm lane runs) with the short "smoke" suite
#            (tests/kernels/guest/suite-smoke.sh: load, spin, io, irq, the
#            cgroup tree, accounting and files, unload, dmesg)
#   either way 5.10 and 6.12 boot once more with psi=1 for suite psi1's
#            sbs-trig-abi: the trigger ABI against the kernel's own files,
#            and 6.12 for the compare suite's io-read, nap and nap-cg: the
#            clock-read order's bound against the kernel's own PSI
#   --kernels: fetch and build only these; --boot: boot only these
#            (with the smoke suite under --smoke, else psi0)
#   --compare no: without the 6.12 comparison; only: nothing else (the
#            module an earlier run built for 6.12 from the same source,
#            else a build), for
#            tests/check.sh, which runs it when no other guest runs
# env: PSI_KERNELS_DIR (default <repo>/build/kernels), PSI_VM_TIMEOUT
#      (seconds per boot, overrides the per-kernel default)
# Output: "PASS kernels/<kernel>/<step>[ -- detail]" or
# "FAIL kernels/<kernel>/<step>: why" per kernel and step (fetch, build,
# boot/<case>), and last "N passed, N failed"; a kernel an earlier run
# fetched is the uncounted line "step kernels/<kernel>/fetch -- ...".
# Exit 1 if anything failed.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${PSI_KERNELS_DIR:-$top/build/kernels}
export PSI_KERNELS_DIR=$out
# our own artefact dir and lock: runs in parallel with other harness users
export PSI_VM_BUILD=$out/vm
. "$top/tests/vm/lib.sh"
. "$here/lib.sh"

smoke=0 fetch=1 dkms=1 only= boot_only= compare=yes
while [ $# -gt 0 ]; do
	case "$1" in
	--smoke) smoke=1; shift ;;
	--kernels) only=$2; shift 2 ;;
	--kernels=*) only=${1#*=}; shift ;;
	--boot) boot_only=$2; shift 2 ;;
	--boot=*) boot_only=${1#*=}; shift ;;
	--no-fetch) fetch=0; shift ;;
	--no-dkms) dkms=0; shift ;;
	--compare) compare=$2; shift 2 ;;
	--compare=*) compare=${1#*=}; shift ;;
	-h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "unknown argument $1" >&2; exit 2 ;;
	esac
done

all=(6.1 5.10 6.12 6.12-rt nopsi debug)
if [ $smoke = 1 ]; then boots=" 5.10 6.12 6.12-rt nopsi debug "; suite=smoke; else boots=" ${all[*]} "; suite=psi0; fi
if [ -n "$only" ]; then IFS=, read -r -a all <<< "$only"; fi
[ -z "$boot_only" ] || boots=" ${boot_only//,/ } "
[ $smoke = 1 ] && dkms=0
case $compare in
yes | no) ;;
only) all=(6.12) boots=" " dkms=0 ;;
*) echo "--compare: yes, no or only, not '$compare'" >&2; exit 2 ;;
esac

RESULT_PREFIX=kernels/

lock_build_dir
mkdir -p "$out/logs"

# One snapshot of the module source for the whole run: the working tree may
# change meanwhile, and every kernel should build the same code.
src=$out/src
rm -rf "$src"
mkdir -p "$src"
cp -r "$top/Kbuild" "$top/dkms.conf" "$top/src" "$top/include" "$src/"

# --- fetch
declare -A have=()
for k in "${all[@]}"; do
	[ "$k" = 6.1 ] && continue
	if [ $fetch = 1 ]; then
		line=$("$here/fetch.sh" "$k" 2>>"$out/logs/fetch.log" | tail -1)
	elif [ -f "$out/$k/.done" ]; then
		line="step fetch/$k -- already unpacked"
	else
		line="FAIL fetch/$k: not fetched (--no-fetch)"
	fi
	case "$line" in
	# a fetch is a step, not a check: only its failure is reported as one
	"PASS fetch/$k"* | "step fetch/$k"*) step "$k/fetch" "${line#*-- }"; have[$k]=1 ;;
	"FAIL fetch/$k: "*) fail "$k/fetch" "${line#*: }" ;;
	*) fail "$k/fetch" "fetch.sh printed no result (log: $out/logs/fetch.log)" ;;
	esac
done

# --- the static check's own check, once
if [ "$compare" != only ]; then
	line=$("$here/atomic-check.sh" --selftest)
	case "$line" in
	ok:*) pass "atomic-check/selftest" "${line#ok: }" ;;
	*) fail "atomic-check/selftest" "${line#FAIL: }" ;;
	esac
fi

# --- build: W=1, no warning, vermagic of the kernel
build() {	# kernel -> $out/<kernel>/mod/psi_mod.ko
	local k=$1 d=$out/$1/mod log=$out/logs/build-$1.log w vm line
	rm -rf "$d"
	mkdir -p "$d"
	cp -r "$src"/. "$d/"
	if ! make -C "$KDIR" M="$d" CC="$CC" W=1 modules >"$log" 2>&1; then
		fail "$k/build" "make W=1 failed: $(grep -m2 -E 'error|Error' "$log" | tr '\n' ' ') (log: $log)"
		return 1
	fi
	w=$(grep -c -E 'warning:' "$log")
	if [ "$w" != 0 ]; then
		fail "$k/build" "$w warnings with W=1: $(grep -m1 'warning:' "$log") (log: $log)"
		return 1
	fi
	vm=$(modinfo -F vermagic "$d/psi_mod.ko")
	case "$vm" in
	"$KVER "*) ;;
	*) fail "$k/build" "vermagic '$vm' is not $KVER"; return 1 ;;
	esac
	pass "$k/build" "W=1 clean, vermagic $vm"
	# nothing a probe reaches may sleep, allocate or print (PREEMPT_RT:
	# a spinlock_t sleeps); read off the object code
	line=$("$here/atomic-check.sh" "$d/psi_mod.ko")
	case "$line" in
	ok:*) pass "$k/atomic" "${line#ok: }" ;;
	*) fail "$k/atomic" "${line#FAIL: }" ;;
	esac
}

# same_source DIR: every file of this run's source snapshot is in DIR, as
# it is (a module built there earlier is this source's)
same_source() {
	(cd "$src" && find . -type f | while read -r f; do
		cmp -s "$f" "$1/$f" || exit 1
	done)
}

for k in "${all[@]}"; do
	[ "$k" = 6.1 ] || [ -n "${have[$k]:-}" ] || continue
	if ! env_of "$k"; then
		fail "$k/build" "no kernel image or headers for $k"
		continue
	fi
	if [ "$compare" = only ] && [ -f "$out/$k/mod/psi_mod.ko" ] &&
	   same_source "$out/$k/mod"; then
		step "$k/build" "the module built earlier from the same source, $out/$k/mod/psi_mod.ko"
	else
		build "$k" || continue
	fi
	case "$boots" in
	*" $k "*)
		# KASAN + lockdep: a slow boot under TCG, and every case slower
		if [ $smoke = 1 ]; then limit=300; sfile=$here/guest/suite-smoke.sh
		else limit=600; sfile=$top/tests/vm/guest/suite-psi0.sh; fi
		[ "$k" = debug ] && limit=$((limit * 3))
		boot "$k" "$sfile" "${PSI_VM_TIMEOUT:-$limit}" "$out/$k/mod/psi_mod.ko"
		# the trigger ABI side by side with the kernel's own files (psi=1,
		# suite psi1's sbs-trig-abi): the rules differ between 5.10, 6.1
		# and 6.12, and psi_mod must follow the kernel it runs on; and
		# cgroupfs=1 refused beside the kernel's own PSI (cgroupfs-refused:
		# on 5.10 its cftypes are not taken while its PSI is on)
		case $k in
		5.10 | 6.12)
			BOOT_PSI=1 BOOT_CASES=sbs-trig-abi,cgroupfs-refused \
				boot "$k" "$top/tests/vm/guest/suite-psi1.sh" \
				"${PSI_VM_TIMEOUT:-300}" "$out/$k/mod/psi_mod.ko" ;;
		esac
		;;
	esac
	[ "$compare" != no ] || continue
	# with the kernel's boots, or alone (--compare only)
	[ "$compare" = only ] || [[ "$boots" == *" $k "* ]] || continue
	# from 6.12 the wakeup's clock is the tracepoint's: the clock-read
	# order's bound both ways, side by side with the kernel's own PSI
	# (the compare suite's waker cases, docs/accuracy.md); one host thread
	# as for the boots above
	case $k in
	6.12)
		relay < <(PSI_MOD_ACCEL=${PSI_MOD_ACCEL:-tcg,thread=single} \
			KVER=$KVER PSI_VM_KERNEL=$IMAGE PSI_VM_MODDIR=$MODDIR \
			PSI_MOD_KO=$out/$k/mod/psi_mod.ko PSI_VM_BUILD=$out/compare-$k \
			"$top/tests/vm/compare.sh" --cases io-read,nap,nap-cg --dur 10 \
			2>>"$out/logs/compare-$k.log" | sed -E "s#^(PASS|FAIL) compare/#\1 kernels/$k/compare/#") ;;
	esac
done

if [ $dkms = 1 ]; then
	# their own count lines are dropped: this lane's is the sum
	relay < <({ "$here/dkms.sh"; "$here/deb.sh"; } 2>&1)
fi

finish
