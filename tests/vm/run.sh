#!/bin/bash
# psi_mod VM test runner: builds the module, the helpers and an initramfs,
# boots the kernel under QEMU (TCG) once per suite and reports every case.
#
# usage: tests/vm/run.sh [--suite psi0,psi1|kernel|all] [--cases a,b] [--kver KVER]
#   suites: psi0   module on a psi=0 boot (its intended use)
#           psi1   side by side with the kernel's PSI on a psi=1 boot
#           kernel no module: the workload cases against the kernel's own PSI
#                  (checks the harness and its tolerances)
#           all    psi0,psi1 (default)
#   --cases (or CASES=): run only these cases of the chosen suites (a case may
#           depend on an earlier one: "load" loads the module in psi0)
# env: KVER (default: newest installed Debian 6.1 kernel), SUITE,
#      PSI_MOD_ACCEL=kvm (opt-in; TCG otherwise), PSI_VM_TIMEOUT (seconds per
#      boot), PSI_VM_BUILD (artefact dir, default <repo>/build/vm),
#      PSI_VM_KERNEL / PSI_VM_MODDIR (an unpacked kernel elsewhere),
#      PSI_MOD_KO (test this prebuilt psi_mod.ko instead of building one),
#      PSI_VM_PSI=0|1 (override the psi= a suite boots with),
#      PSI_VM_APPEND (more kernel command line, e.g. psitest.counts=short)
# Output: "PASS <suite>/<case> -- <detail>" or "FAIL <suite>/<case>: <detail>"
# per case, and as the last line "N passed, N failed". Exit 1 if anything
# failed, 2 on a setup error.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

passed=0 failed=0 finished=0
# Whatever stops the run early (a setup error under set -e, a signal), the
# last line is still the count, with the stop counted as a failure.
on_exit() {
	local rc=$?
	[ $finished = 1 ] && return
	echo "FAIL setup: run.sh stopped before all boots finished (exit $rc)"
	echo "$passed passed, $((failed + 1)) failed"
	[ $rc != 0 ] || exit 2
}
trap on_exit EXIT

suites=${SUITE:-all} only=${CASES:-}
while [ $# -gt 0 ]; do
	case "$1" in
	--suite) suites=$2; shift 2 ;;
	--suite=*) suites=${1#*=}; shift ;;
	--cases) only=$2; shift 2 ;;
	--cases=*) only=${1#*=}; shift ;;
	--kver) KVER=$2; shift 2 ;;
	--kver=*) KVER=${1#*=}; shift ;;
	-h|--help) finished=1; sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument $1" ;;
	esac
done
[ "$suites" = all ] && suites=psi0,psi1
IFS=, read -r -a suite_list <<< "$suites"

lock_build_dir
kver=$(find_kver)
[ -f "$(kernel_image "$kver")" ] || die "no kernel image $(kernel_image "$kver")"
log "kernel $kver, suites ${suite_list[*]}, accel ${PSI_MOD_ACCEL:-tcg}"
for s in "${suite_list[@]}"; do
	[ -f "$PSI_VM_DIR/guest/suite-$s.sh" ] || die "no suite '$s'"
done

pass() { echo "PASS $1${2:+ -- $2}"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
# case names of a suite: the CASES="..." line of its guest script, narrowed
# to --cases if given; OPTIONAL_CASES="..." only when --cases names them
cases_of() {
	local c opt=
	[ -z "$only" ] || opt=$(sed -n 's/^OPTIONAL_CASES="\(.*\)"$/\1/p' "$PSI_VM_DIR/guest/suite-$1.sh")
	for c in $(sed -n 's/^CASES="\(.*\)"$/\1/p' "$PSI_VM_DIR/guest/suite-$1.sh") $opt; do
		[ -z "$only" ] || [[ ",$only," == *",$c,"* ]] || continue
		echo "$c"
	done
}

need_module=0
for s in "${suite_list[@]}"; do [ "$s" = kernel ] || need_module=1; done
ko=
if [ $need_module = 1 ] && [ -n "${PSI_MOD_KO:-}" ]; then
	ko=$PSI_MOD_KO	# a prebuilt module: test it as it is
	[ -f "$ko" ] || die "PSI_MOD_KO=$ko does not exist"
elif [ $need_module = 1 ]; then
	if ! ko=$(build_module "$kver"); then
		# every case of every module suite counts as failed: nothing ran
		for s in "${suite_list[@]}"; do
			[ "$s" = kernel ] && continue
			for c in $(cases_of "$s"); do fail "$s/$c" "not run: module build failed"; done
		done
		suite_list=(kernel)
		[[ ",$suites," == *,kernel,* ]] || suite_list=()
	fi
fi

mkdir -p "$PSI_VM_BUILD/logs"
initrd=$PSI_VM_BUILD/initramfs-$kver.cpio
"$PSI_VM_DIR/mkinitramfs.sh" "$kver" "$initrd" $ko
disk=$(make_disk)

for s in "${suite_list[@]}"; do
	case "$s" in
	psi0) psi=0 limit=480 ;;
	psi1) psi=1 limit=300 ;;
	kernel) psi=1 limit=300 ;;
	*) psi=0 limit=300 ;;
	esac
	limit=${PSI_VM_TIMEOUT:-$limit} psi=${PSI_VM_PSI:-$psi}
	logf=$PSI_VM_BUILD/logs/$s.log resf=$PSI_VM_BUILD/logs/$s.results
	rm -f "$logf" "$resf"
	qemu_cmd "$kver" "$initrd" "$disk" "$psi" "psitest.suite=$s${only:+ psitest.cases=$only}${PSI_VM_APPEND:+ $PSI_VM_APPEND}" "$resf"
	log "suite $s: booting psi=$psi (timeout ${limit}s), log $logf"
	start=$SECONDS rc=0
	timeout --kill-after=10 "$limit" "${QEMU_ARGV[@]}" < /dev/null > "$logf" 2>&1 || rc=$?
	log "suite $s: qemu exit $rc after $((SECONDS - start))s"
	# results: the clean ttyS1 channel; the console log if that stayed empty
	src=$resf
	grep -aq '^@@CASE ' "$resf" 2>/dev/null || src=$logf
	tr -d '\r' < "$src" | grep -ao '@@CASE .*' > "$PSI_VM_BUILD/logs/$s.cases" || true
	missing=0
	for c in $(cases_of "$s"); do
		line=$(awk -v c="$c" '$2 == c' "$PSI_VM_BUILD/logs/$s.cases" | tail -1)
		if [ -z "$line" ]; then
			why="no result: the boot ended before this case"
			[ $rc = 124 ] || [ $rc = 137 ] && why="no result: boot timed out after ${limit}s"
			fail "$s/$c" "$why"
			missing=1
			continue
		fi
		status=$(echo "$line" | awk '{ print $3 }')
		detail=$(echo "$line" | cut -d' ' -f4-)
		if [ "$status" = PASS ]; then pass "$s/$c" "$detail"; else fail "$s/$c" "$detail"; fi
	done
	# a case the guest reported but the host does not know is a harness bug
	for c in $(awk '{ print $2 }' "$PSI_VM_BUILD/logs/$s.cases" | sort -u); do
		case " $(echo $(cases_of "$s")) " in *" $c "*) ;; *) fail "$s/$c" "reported but not in CASES of suite-$s.sh" ;; esac
	done
	if [ $missing = 1 ]; then
		echo "---- last 30 lines of $logf (qemu exit $rc)"
		tr -d '\r' < "$logf" | tail -30
		echo "----"
	fi
done

finished=1
echo "$passed passed, $failed failed"
[ $failed = 0 ]
