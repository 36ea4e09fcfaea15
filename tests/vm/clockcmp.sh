#!/bin/bash
# Clock-read order, measured: for every event of one task, the timestamp
# the kernel's own PSI gave it beside psi_mod's (docs/accuracy.md,
# "Clock-read order, per event").
#
# usage: tests/vm/clockcmp.sh [--dur SECONDS] [--wl io-read,nap,nap-cg] [--kver KVER] [--modargs a=1]
#   Boots Debian's 6.1 kernel with psi=1 under QEMU (TCG), loads psi_mod
#   with proc_dir=psi_mod and the measuring module tests/vm/clockcmp
#   (never shipped) for the workload's task, which records per event the
#   kernel's stamp (its root group's per-CPU state_start), psi_mod's (its
#   per-CPU state_start) and the candidates: the sched_info enqueue stamp
#   (q) and a clock read at the tracepoint before psi_mod's probe (t).
#   Prints per event type (W wakeup: ends io, starts cpu some; I switch-in:
#   ends cpu some; O switch-out into iowait: starts io; S other sleep) the
#   distribution of each stamp minus the kernel's in ns, and both PSIs'
#   totals over the run.
# env: PSI_VM_BUILD (default <repo>/build/clockcmp), KVER,
#      PSI_VM_KERNEL/PSI_VM_MODDIR, PSI_MOD_KO (then also PSI_MOD_OFFS=
#      "state_start,state_mask" offsets in struct psim_pcpu).
set -euo pipefail
export PSI_VM_BUILD=${PSI_VM_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build/clockcmp}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dur=10 wl=io-read modargs=
while [ $# -gt 0 ]; do
	case "$1" in
	--dur) dur=$2; shift 2 ;;
	--wl) wl=$2; shift 2 ;;
	--kver) KVER=$2; shift 2 ;;
	--modargs) modargs=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument $1" ;;
	esac
done

lock_build_dir
kver=$(find_kver)
kdir=$(module_dir "$kver")/build
if [ -z "${PSI_MOD_KO:-}" ]; then
	PSI_MOD_KO=$(build_copy "$kdir" "$kver") || die "module build failed"
	export PSI_MOD_KO
fi
# the offsets of psi_mod's per-CPU state_start and state_mask, from its
# debug info
offs=${PSI_MOD_OFFS:-$(gdb -batch -ex 'p (int)&((struct psim_pcpu *)0)->st.state_start' \
	-ex 'p (int)&((struct psim_pcpu *)0)->st.state_mask' "$PSI_MOD_KO" | awk '{ printf "%s%s", s, $3; s = "," }')}
case $offs in [0-9]*,[0-9]*) ;; *) die "no psim_pcpu offsets from $PSI_MOD_KO's debug info" ;; esac
cc=$(cd "$PSI_VM_BUILD" && pwd)/clockcmp-$kver
rm -rf "$cc" && mkdir -p "$cc"
cp "$PSI_VM_DIR"/clockcmp/* "$cc/"
make -C "$kdir" M="$cc" modules >&2 || die "clockcmp build failed"
export PSI_VM_EXTRA_FILES="${PSI_VM_EXTRA_FILES:-} $cc/clockcmp.ko"
prepare_guest "$kver"
resf=$PSI_VM_BUILD/logs/clockcmp.results logf=$PSI_VM_BUILD/logs/clockcmp.log
rm -f "$resf" "$logf"
qemu_cmd "$kver" "$initrd" "$disk" 1 "psitest.suite=clockcmp psitest.dur=$dur psitest.cc_wl=$wl psitest.cc_off=$offs${modargs:+ psitest.modargs=$modargs}" "$resf"
n=$(echo "$wl" | tr ',' ' ' | wc -w)
run_qemu "" "${PSI_VM_TIMEOUT:-$((150 + n * (dur + 90)))}" "$logf"
out=$PSI_VM_BUILD/logs/clockcmp.lines
grep -a '^@@CC ' "$logf" | sed 's/^@@CC //; s/\r$//' > "$out" || die "no results in $logf"
cat "$out"
# Per workload: what the stamps make of each wakeup (the means, ns), the
# totals' difference per wakeup (us) beside it, and the verdict on
# psi_mod's own part at the switches to and from idle: from the end of the
# probe before it to its stamp, at most 5.5 times the work of that probe
# (a clock read and two loads, its median at the switch-in: the run's
# speed under TCG), medians. Taking the stamp after the lock and the counts
# read 7-8 times; first, 2-4 times.
awk '$2 == "dist" { mean[$1, $3, $4] = $8; p50[$1, $3, $4] = $14 }
	$2 == "count" { cnt[$1, $3] = $5 }
	$2 == "total" { tot[$1, $3, $4] = $10 }
	$2 == "dist" || $2 == "count" { if (!(($1) in seen)) { seen[$1] = 1; wl[++n] = $1 } }
	END {
	for (i = 1; i <= n; i++) {
		w = wl[i]; nw = cnt[w, "W"]; if (!nw) continue
		printf "%s: per wakeup (%d): cpu some %+.2f us from the stamps (W %+.2f, I %+.2f), %+.2f us from the totals", w, nw,
			(mean[w, "I", "m"] - mean[w, "W", "m"]) / 1000, -mean[w, "W", "m"] / 1000, mean[w, "I", "m"] / 1000, tot[w, "cpu", "some"] / nw
		if (cnt[w, "O"]) printf "; io some %+.2f us from the stamps (W %+.2f, O %+.2f), %+.2f us from the totals",
			(mean[w, "W", "m"] - mean[w, "O", "m"]) / 1000, mean[w, "W", "m"] / 1000, -mean[w, "O", "m"] / 1000, tot[w, "io", "some"] / nw
		printf "\n"
		u = p50[w, "I", "pre"]; bad = ""; msg = ""
		split("I O S", ty, " ")
		for (j = 1; j <= 3; j++) {
			t = ty[j]
			if (!((w, t, "own") in p50) || cnt[w, t] < 100) continue
			msg = msg sprintf(" %s own %d ns (%.1fx)", t, p50[w, t, "own"], p50[w, t, "own"] / u)
			if (p50[w, t, "own"] > 5.5 * u) bad = bad " " t
		}
		if (bad == "") printf "PASS clockcmp/%s -- psi_mod stamps idle switches first: medians%s of the unit %d ns\n", w, msg, u
		else printf "FAIL clockcmp/%s: psi_mod own time to its stamp beyond 5.5 units at%s: medians%s of the unit %d ns\n", w, bad, msg, u
	}
}' "$out"
