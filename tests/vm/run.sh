#!/bin/bash
# psi_mod VM test runner: builds the module, the helpers and an initramfs,
# boots the kernel under QEMU (TCG) once per suite and reports every case.
#
# usage: tests/vm/run.sh [--suite psi0,psi1|kernel|all] [--cases a,b] [--skip a,b]
#                        [--tag T] [--kver KVER]
#   suites: psi0   module on a psi=0 boot (its intended use)
#           psi1   side by side with the kernel's PSI on a psi=1 boot
#           kernel no module: the workload cases against the kernel's own PSI
#                  (checks the harness and its tolerances)
#           all    psi0,psi1 (default)
#   --cases (or CASES=): run only these cases of the chosen suites (a case may
#           depend on an earlier one: "load" loads the module in psi0)
#   --skip  run every case of the chosen suites but these
#   --tag   name this run's checks and logs <suite>T/<case>, so that a second
#           run of the same suite (other cases) keeps its own
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

# Whatever stops the run early (a setup error under set -e, a signal), the
# last line is still the count, with the stop counted as a failure.
results_guard setup "run.sh stopped before all boots finished"

suites=${SUITE:-all} only=${CASES:-} skip='' tag=''
while [ $# -gt 0 ]; do
	case "$1" in
	--suite) suites=$2; shift 2 ;;
	--suite=*) suites=${1#*=}; shift ;;
	--cases) only=$2; shift 2 ;;
	--cases=*) only=${1#*=}; shift ;;
	--skip) skip=$2; shift 2 ;;
	--skip=*) skip=${1#*=}; shift ;;
	--tag) tag=$2; shift 2 ;;
	--tag=*) tag=${1#*=}; shift ;;
	--kver) KVER=$2; shift 2 ;;
	--kver=*) KVER=${1#*=}; shift ;;
	-h|--help) finish_quietly; sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
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

# case names of a suite, narrowed to --cases and without --skip's
cases_of() {
	local c
	for c in $(suite_cases "$PSI_VM_DIR/guest/suite-$1.sh" "$only"); do
		[[ ",$skip," == *",$c,"* ]] || echo "$c"
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
			for c in $(cases_of "$s"); do fail "$s$tag/$c" "not run: module build failed"; done
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
	psi0) psi=0 limit=720 ;;
	psi1) psi=1 limit=480 ;;
	irq) psi=1 limit=400 ;;
	kernel) psi=1 limit=300 ;;
	*) psi=0 limit=300 ;;
	esac
	limit=${PSI_VM_TIMEOUT:-$limit} psi=${PSI_VM_PSI:-$psi}
	logf=$PSI_VM_BUILD/logs/$s$tag.log resf=$PSI_VM_BUILD/logs/$s$tag.results
	rm -f "$logf" "$resf"
	# the guest runs the whole suite unless told which cases
	sel=$only
	[ -z "$skip" ] || sel=$(cases_of "$s" | paste -sd,)
	qemu_cmd "$kver" "$initrd" "$disk" "$psi" "psitest.suite=$s${sel:+ psitest.cases=$sel}${PSI_VM_APPEND:+ $PSI_VM_APPEND}" "$resf"
	log "suite $s$tag: booting psi=$psi (timeout ${limit}s), log $logf"
	run_qemu "suite $s$tag" "$limit" "$logf"
	case_lines "$resf" "$logf" "$PSI_VM_BUILD/logs/$s$tag.cases"
	# shellcheck disable=SC2046 # one word per case
	collect "$s$tag/" "$PSI_VM_BUILD/logs/$s$tag.cases" "$logf" "$limit" -x $(cases_of "$s")
done

finish
