#!/bin/bash
# Accuracy comparison: psi_mod against the kernel's own PSI on the same
# machine at the same moment.
#
# usage: tests/vm/compare.sh [--short] [--cases a,b] [--dur SECONDS] [--modargs a=1,b=2] [--kver KVER]
#   Boots Debian's 6.1 kernel with psi=1 under QEMU (TCG), loads psi_mod with
#   proc_dir=psi_mod on the kernel's 2 s fold grid, runs one workload at a
#   time (tests/vm/guest/suite-compare.sh) and prints a table per workload:
#   resource, state, kernel total delta, psi_mod total delta, difference (us
#   and %), tolerance, kernel avg10 and psi_mod avg10 at the end; then one
#   PASS/FAIL line per case against the targets
#     |psi_mod total - kernel total| <= 2% of kernel total + 10 ms per 10 s
#     |psi_mod avg10 - kernel avg10 - inherited| <= 1.0, where "inherited"
#       is the difference both already had at the first snapshot, decayed
#       by (1677/2048)^folds: with the grids aligned that part is history,
#       not a measurement (see docs/accuracy.md)
#     midload: psi_mod loaded into a running load; 11 s after the load the
#       same avg10 check, with 2.0 (psi_mod's averages start from zero at
#       its load, as the kernel's at boot: what a consumer reads differs
#       from the kernel's by d_inh, the kernel's memory of before the load)
#     midload-warmup: the same with warmup=1: |psi_mod avg10 - kernel
#       avg10| <= 2.0 as both show them, or more by no more than what the
#       kernel's avg10 remembers of the time before the load ("(history)");
#       and always psi_mod within 1.0 of the warm-up of the kernel's own
#       periods since the load
#   --short  the make check subset (cpu-4, hackbench, io-read,
#            io-throttled, mem-zram, mixed, cgroup-iomem, hotplug; 10 s
#            each); durations
#            of both in tests/README.md. In the cases where
#            tasks sleep and wake all the time (WAKER_CASES in the guest suite),
#            cpu some may exceed the target and io fall short of it by up to
#            10 us per wakeup, the clock-read order bias of docs/accuracy.md,
#            and avg10 by the share that adds: "(clock order)".
#   --cases  only these cases (align is always run: it loads the module)
#   --dur    seconds between the two snapshots (default 20, short 10)
#   --modargs a=1,b=2  more psi_mod parameters, e.g. memstall_tracepoints=1
#            (memory stalls as a CONFIG_PSI=n kernel would give them)
# env: PSI_VM_BUILD (default <repo>/build/compare: own lock, runs beside the
#      other VM suites), PSI_MOD_KO, KVER, PSI_VM_KERNEL/PSI_VM_MODDIR,
#      PSI_VM_TIMEOUT (seconds for the boot).
# Output: the tables, then "PASS compare/<case> -- ..." or
# "FAIL compare/<case>: ..." per case, last line "N passed, N failed".
# Exit 1 if anything failed, 2 on a setup error.
set -euo pipefail
export PSI_VM_BUILD=${PSI_VM_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build/compare}
# zram: the swap device of the anonymous-hog workload
export PSI_VM_EXTRA_MODULES="${PSI_VM_EXTRA_MODULES:-} zram"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

short=0 only= dur= modargs=
while [ $# -gt 0 ]; do
	case "$1" in
	--short) short=1; shift ;;
	--cases) only=$2; shift 2 ;;
	--cases=*) only=${1#*=}; shift ;;
	--dur) dur=$2; shift 2 ;;
	--modargs) modargs=$2; shift 2 ;;
	--kver) KVER=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument $1" ;;
	esac
done
if [ $short = 1 ]; then
	only=${only:-cpu-4,hackbench,io-read,io-throttled,mem-zram,mixed,cgroup-iomem,hotplug}
	dur=${dur:-10}
fi
dur=${dur:-20}
[ -z "$only" ] || only="align,$only,dmesg"

results_guard compare/setup "compare.sh stopped early"

lock_build_dir
kver=$(find_kver)
[ -f "$(kernel_image "$kver")" ] || die "no kernel image $(kernel_image "$kver")"
prepare_guest "$kver"	# /dev/vda: O_DIRECT reads and writes, fsync writes
# /dev/vdb: a small disk QEMU throttles to 200 iops (tasks queue and wait)
thr=$PSI_VM_BUILD/throttled.img
[ -f "$thr" ] || { dd if=/dev/urandom of="$thr.tmp" bs=1M count=32 status=none && mv "$thr.tmp" "$thr"; }
# /dev/vdc: 640 MiB read through the guest's page cache in a loop (larger
# than the 512 MiB guest can cache). Sparse: QEMU reads holes as zeros
# without host IO, the guest still caches and evicts every page.
pc=$PSI_VM_BUILD/pagecache.img
[ -f "$pc" ] || truncate -s 640M "$pc"

resf=$PSI_VM_BUILD/logs/compare.results logf=$PSI_VM_BUILD/logs/compare.log
rm -f "$resf" "$logf"
qemu_cmd "$kver" "$initrd" "$disk" 1 "psitest.suite=compare psitest.dur=$dur${only:+ psitest.cases=$only}${modargs:+ psitest.modargs=$modargs}" "$resf"
QEMU_ARGV+=(-drive "file=$thr,format=raw,if=virtio,cache=none,throttling.iops-total=200"
	-drive "file=$pc,format=raw,if=virtio,cache=none")
cases=$(suite_cases "$PSI_VM_DIR/guest/suite-compare.sh" "$only")
n=$(echo "$cases" | wc -w)
limit=${PSI_VM_TIMEOUT:-$((120 + n * (dur + 25)))}
[[ ",$only," == *,midload,* ]] || [ -z "$only" ] && limit=$((limit + 120))
[[ ",$only," == *,midload-warmup,* ]] || [ -z "$only" ] && limit=$((limit + 120))
log "kernel $kver, $n cases, ${dur}s each, timeout ${limit}s, log $logf"
run_qemu "" "$limit" "$logf"
case_lines "$resf" "$logf" "$PSI_VM_BUILD/logs/compare.lines"

# --- the tables: @@ROW case res state k m diff pct tol kavg mavg davg vtot vavg wall=
awk '$1 == "@@ROW" {
	if ($2 != last) {
		if (last != "") print ""
		w = $16; sub(/wall=/, "", w)
		printf "== %s (%.1f s between snapshots)\n", $2, w / 1e6
		printf "%-7s %-5s %12s %12s %10s %8s %9s %8s %8s %7s %7s  %s\n", "res", "state",
			"kernel_us", "psi_mod_us", "diff_us", "diff%", "tol_us", "k_avg10", "m_avg10", "d_new", "d_inh", "verdict"
		last = $2
	}
	t = $14 == "clk" ? "ok" : $14
	a = ($15 == "clk" || $15 == "hist") ? "ok" : $15
	v = (t == "ok" && a == "ok") ? "ok" : (t != "ok" ? "TOTAL MISS" : "") (a != "ok" ? " AVG10 MISS" : "")
	if ($14 == "clk" || $15 == "clk") v = v " (clock order)"
	if ($15 == "hist") v = v " (history)"
	printf "%-7s %-5s %12d %12d %10s %8s %9d %8s %8s %7s %7s  %s\n", $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, v
} END { if (last != "") print "" }' "$PSI_VM_BUILD/logs/compare.lines"

# shellcheck disable=SC2086 # one word per case
collect compare/ "$PSI_VM_BUILD/logs/compare.lines" "$logf" "$limit" $cases
finish
