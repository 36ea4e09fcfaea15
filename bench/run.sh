#!/bin/bash
# psi_mod overhead benchmark: hackbench -p (process mode,
# pipes) inside QEMU TCG guests, psi_mod against the kernel's own PSI.
#
# usage: bench/run.sh [--smoke] [--rounds N] [--reps K] [--groups 1:L,2:L,...]
#                     [--sets psimod,stock] [--cgs root,cg] [--idle S|0]
#                     [--profile] [--report RAW.tsv...]
#   (default)  the full benchmark: group counts 1,2,4,8 with 1300, 520, 180
#              and 66 loops, so that every run takes >= 2 s of wall time under
#              TCG (the summary counts the runs under 2 s), 7 rounds; per round
#              one boot per configuration (below), boots in rotated order, each
#              boot running every group count x cgroup placement x module
#              state once; so >= 7 runs per cell, interleaved run by run
#              inside a boot and boot by boot across configurations. Then
#              the idle and memory cost (60 s per state), the tables and the
#              plots under bench/results/.
#   --smoke    what `make check` runs: stock Debian 6.1 only, psi=0 boot
#              (psi=0 / mod-off / mod-on) and psi=1 boot, group count 1,
#              2 runs per column, root cgroup; PASS/FAIL per column: its
#              runs counted a plausible number of instructions (> 0, 1e6 to
#              1e10 per second of wall time) and, but for psi=0, a mean
#              within 1/3 to 3 x psi=0's; the summary line "N passed, N
#              failed". No significance claims.
#   --readers  goal: readers cost the scheduler nothing. As --profile, on
#              stock 6.1 only, with 2 vCPUs run in turn by one host thread
#              (-accel tcg,thread=single; a 2-vCPU guest does not boot with
#              -icount, so guest time is the host's here), so a probe
#              waiting on a lock a reader holds shows as spinning
#              instructions: psi=0, mod-on, and mod-on with 64 unprivileged
#              readers looping on the pressure files (column mod-on+rd);
#              bench/results/profile-readers.txt. BENCH_SRC=<commit> measures
#              another version of the module the same way.
#   --triggers goal: no trigger, no cost; a trigger, the fast path's cost
#              only. As --profile, on stock 6.1 only: psi=0; mod-on (no
#              trigger anywhere); mod-on-nohook (the same source built with
#              the probes' trigger hook compiled out, PSIM_BENCH_NO_POLL_KICK,
#              in a boot of its own); mod-on+trig (a privileged trigger on
#              memory full, a state hackbench never enters: the hook's test
#              runs, the fast path stays asleep); mod-on+poll (a privileged
#              cpu some trigger that hackbench's run queue keeps stalled: the
#              fast path polls ten times a second throughout);
#              bench/results/profile-triggers.txt.
#   --cgroups  goal: per-cgroup pressure at a fraction of the kernel's
#              cost at every depth. As --profile, on stock 6.1 only, group
#              count 2 with 500 loops, root and /a/b/c/d: psi=0, mod-on,
#              mod-on+cg (cgroups=1), psi=1 (the kernel's default, cgroup
#              pressure on) and psi=1-nocg; bench/results/profile-cgroups.txt.
#   --profile  where the instructions go: one round, group counts 1, 2, 4
#              and 8 with 1000, 500, 250 and 125 loops (400000 messages a run),
#              root and /a/b/c/d, 3 runs per cell, boots psi=0 (none, on),
#              psi=1 and psi=1 cgroup_disable=pressure of the -psimod-psi
#              kernel and of stock 6.1; the plugin counts every executed
#              block, bench/profile.py folds them into functions and prints
#              instructions per context switch per function, what psi_mod
#              adds (mod-on - psi=0) beside what the kernel's PSI adds
#              (psi=1 - psi=0), and a table of the 16 cells:
#              bench/results/profile.txt. --triggers runs group count 2 with
#              500 loops, --readers with 50; BENCH_PROFILE_GROUPS and
#              BENCH_PROFILE_REPS set others.
#   --report   only rebuild the tables and plots from raw files of earlier runs
#              (with the meta-* and idle-* files of the same time stamp
#              beside them, for one raw file)
# Configurations (one boot each; -smp 1, nokaslr, 512 MiB):
#   psimod psi=0  6.1.*-psimod-psi booted psi=0: columns psi=0, mod-off, mod-on
#   psimod psi=1  the same kernel, psi=1: column psi=1
#   psimod psi=1 cgroup_disable=pressure: column psi=1-nocg, the kernel's PSI
#                 without per-cgroup groups (psi_mod's one system-wide group:
#                 the fair baseline)
#   psimod nopsi  6.1.*-psimod-nopsi (CONFIG_PSI=n): columns nopsi, nopsi+mod
#   stock psi=0   the installed Debian 6.1 kernel, psi=0: psi=0, mod-off, mod-on
#   stock psi=1   the same, psi=1: psi=1; and psi=1-nocg as above
# Each run is measured twice at once: guest instructions between two marker
# no-ops around hackbench (bench/insncount.c, a TCG plugin; one vCPU, so the
# count is exact up to a translation block) and wall time (the host's
# CLOCK_MONOTONIC at the same two markers). Guests run with
# -icount shift=0,sleep=off: the guest clock advances 1 ns per instruction,
# so timer ticks and the scheduler's time-based decisions no longer depend on
# how fast the (shared, loaded) host emulates; without it the instruction
# count of a run moves with host load (more ticks per instruction, more
# preemptions, more switches). The wall time is the host's: it is what
# the emulation of the run cost, noise included.
# env: PSI_VM_BUILD (artefacts, default <repo>/build/bench), PSI_KERNELS_DIR
#      (the -psimod-* .debs, default <repo>/../shared/kernels), KVER (stock
#      kernel), BENCH_SRC=worktree|head|<commit> (module source: the working
#      tree, the committed HEAD, or that commit), BENCH_RESULTS (default
#      bench/results).
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
export PSI_VM_BUILD=${PSI_VM_BUILD:-$REPO/build/bench}
. "$REPO/tests/vm/lib.sh"
B=$PSI_VM_BUILD
cmdline="${BENCH_SRC:+BENCH_SRC=$BENCH_SRC }bench/run.sh $*"

smoke=0 rounds=7 reps=1 idle=60 report_only=0 profile=0 readers=0 triggers=0 cgroups=0 smp=1
groups="1:1300,2:520,4:180,8:66"
sets=psimod,stock cgs=root,cg
raws=()
while [ $# -gt 0 ]; do
	case "$1" in
	--smoke) smoke=1; shift ;;
	--profile) profile=1; shift ;;
	--readers) profile=1 readers=1 smp=2 sets=stock cgs=root; shift ;;
	--triggers) profile=1 triggers=1 sets=stock cgs=root; shift ;;
	--cgroups) profile=1 cgroups=1 sets=stock cgs=root,cg; shift ;;
	--rounds) rounds=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--groups) groups=$2; shift 2 ;;
	--sets) sets=$2; shift 2 ;;
	--cgs) cgs=$2; shift 2 ;;
	--idle) idle=$2; shift 2 ;;
	--report) report_only=1; shift; raws=("$@"); break ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument $1" ;;
	esac
done
if [ $profile = 1 ]; then
	# 400000 messages a run for --profile and --triggers: shorter runs
	# spread the per-run costs (forks, exits) and hackbench's changing mix
	# of switches over too few switches to resolve a few instructions
	pgroups=1:1000,2:500,4:250,8:125
	[ $triggers = 0 ] && [ $cgroups = 0 ] || pgroups=2:500
	[ $readers = 0 ] || pgroups=2:50
	rounds=1 reps=${BENCH_PROFILE_REPS:-3} idle=0 groups=${BENCH_PROFILE_GROUPS:-$pgroups}
fi
if [ $smoke = 1 ]; then
	rounds=1 reps=2 sets=stock cgs=root idle=0 groups=${BENCH_SMOKE_GROUPS:-1:80}
fi
RESULTS=${BENCH_RESULTS:-$BENCH_DIR/results}

if [ $report_only = 1 ]; then
	# a run's meta and idle files sit beside its raw file, with its time stamp
	more=()
	for f in "${raws[@]}"; do
		t=$(basename "$f" .tsv)
		t=${t#raw-}
		[ ! -f "$(dirname "$f")/meta-$t.txt" ] || more+=(--meta "$(dirname "$f")/meta-$t.txt")
		[ ! -f "$(dirname "$f")/idle-$t.txt" ] || more+=(--idle "$(dirname "$f")/idle-$t.txt")
	done
	exec python3 "$BENCH_DIR/report.py" --out "$RESULTS" "${more[@]}" "${raws[@]}"
fi

results_guard bench/setup "bench/run.sh stopped early"

for t in qemu-system-x86_64 hackbench busybox gcc cpio python3; do
	command -v $t >/dev/null || die "$t not installed (make deps)"
done
# the plots of the full run
if [ $smoke = 0 ] && ! command -v gnuplot >/dev/null; then
	"$REPO/tests/deps.sh" >&2 || die "gnuplot missing and tests/deps.sh could not install it"
fi

lock_build_dir
mkdir -p "$B/logs"

# --- the plugin and the guest helper
gcc -shared -fPIC -O2 -Wall -o "$B/libinsncount.so" "$BENCH_DIR/insncount.c"
gcc -static -O2 -Wall -Wextra -o "$B/brun" "$BENCH_DIR/brun.c"

# --- the module source, copied so a build here never races another one in
# the shared tree
src=$B/modsrc
rm -rf "$src"
mkdir -p "$src"
if [ "${BENCH_SRC:-worktree}" = head ]; then
	git -C "$REPO" archive HEAD Kbuild dkms.conf Makefile src include | tar -x -C "$src"
	modrev="$(git -C "$REPO" rev-parse --short HEAD) (committed HEAD)"
elif [ "${BENCH_SRC:-worktree}" != worktree ]; then
	git -C "$REPO" archive "$BENCH_SRC" Kbuild dkms.conf Makefile src include | tar -x -C "$src" ||
		die "no module source at $BENCH_SRC"
	modrev="$(git -C "$REPO" rev-parse --short "$BENCH_SRC") (commit $BENCH_SRC)"
else
	cp -r "$REPO/Kbuild" "$REPO/dkms.conf" "$REPO/Makefile" "$REPO/src" "$REPO/include" "$src/"
	modrev="$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')"
	git -C "$REPO" diff --quiet HEAD -- src include Kbuild dkms.conf 2>/dev/null || modrev="$modrev + uncommitted changes in src/include"
fi

# --- kernels: label -> image, module dir, build dir, release
declare -A K_IMG K_MOD K_KDIR K_VER K_KO
add_kernel() {	# label release image moddir kdir
	K_VER[$1]=$2 K_IMG[$1]=$3 K_MOD[$1]=$4 K_KDIR[$1]=$5
}
stock=$(find_kver)
add_kernel stock "$stock" "/boot/vmlinuz-$stock" "/lib/modules/$stock" "/lib/modules/$stock/build"
kdebs=${PSI_KERNELS_DIR:-$REPO/../shared/kernels}
missing_kernels=
if [[ ",$sets," == *,psimod,* ]]; then
	for f in psi nopsi; do
		img=$(ls "$kdebs"/linux-image-*-psimod-${f}_*.deb 2>/dev/null | sort -V | tail -1)
		hdr=$(ls "$kdebs"/linux-headers-*-psimod-${f}_*.deb 2>/dev/null | sort -V | tail -1)
		if [ -z "$img" ] || [ -z "$hdr" ]; then
			missing_kernels="$missing_kernels $f"
			continue
		fi
		root=$B/k/$f
		if [ ! -f "$root/.unpacked" ] || [ "$img" -nt "$root/.unpacked" ]; then
			rm -rf "$root"
			mkdir -p "$root"
			dpkg -x "$img" "$root"
			dpkg -x "$hdr" "$root"
			touch "$root/.unpacked"
		fi
		rel=$(basename "$(ls -d "$root"/lib/modules/*)")
		add_kernel "$f" "$rel" "$root/boot/vmlinuz-$rel" "$root/lib/modules/$rel" "$root/usr/src/linux-headers-$rel"
	done
fi

build_ko() {	# label [make arguments]
	local l=$1 out=$B/ko/$1
	shift
	mkdir -p "$out"
	make -s -C "$src" clean KDIR="${K_KDIR[$l]}" >/dev/null 2>&1 || true
	if make -s -C "$src" module KDIR="${K_KDIR[$l]}" CC=gcc "$@" > "$B/logs/build-$l.log" 2>&1 &&
		[ "$(modinfo -F vermagic "$src/psi_mod.ko" | cut -d' ' -f1)" = "${K_VER[$l]}" ]; then
		cp "$src/psi_mod.ko" "$out/psi_mod.ko"
		K_KO[$l]=$out/psi_mod.ko
	else
		K_KO[$l]=
		fail "bench/build-$l" "psi_mod did not build for ${K_VER[$l]} (see $B/logs/build-$l.log)"
	fi
}

initrd_for() {	# label -> path of the initramfs (base from tests/vm + bench files)
	local l=$1 base=$B/initramfs-$1-base.cpio out=$B/initramfs-$1.cpio extra
	PSI_VM_KERNEL=${K_IMG[$l]} PSI_VM_MODDIR=${K_MOD[$l]} \
		"$REPO/tests/vm/mkinitramfs.sh" "${K_VER[$l]}" "$base" ${K_KO[$l]:-} 2>> "$B/logs/initramfs.log" >&2 ||
		return 1
	extra=$(mktemp -d)
	# the archive's "." becomes the guest's /: mktemp's 0700 would lock
	# every user but root out of the whole file system
	chmod 755 "$extra"
	mkdir -p "$extra/tests" "$extra/bin"
	cp "$BENCH_DIR/guest/suite-bench.sh" "$extra/tests/"
	cp "$B/brun" "$extra/bin/"
	chmod 755 "$extra/tests/suite-bench.sh" "$extra/bin/brun"
	# the kernel unpacks concatenated newc archives in order: these files
	# join the harness's initramfs
	{ cat "$base"; (cd "$extra" && find . | LC_ALL=C sort | cpio -o -H newc --quiet); } > "$out"
	rm -rf "$extra"
	echo "$out"
}

declare -A K_INITRD
labels=()
[[ ",$sets," == *,stock,* ]] && labels+=(stock)
for f in psi nopsi; do [ -n "${K_VER[$f]:-}" ] && labels+=("$f"); done
# --triggers: the stock kernel again, with the module built without the hook
if [ $triggers = 1 ]; then
	add_kernel stocknk "$stock" "/boot/vmlinuz-$stock" "/lib/modules/$stock" "/lib/modules/$stock/build"
	labels+=(stocknk)
fi
for l in "${labels[@]}"; do
	if [ "$l" = stocknk ]; then
		build_ko "$l" KCFLAGS=-DPSIM_BENCH_NO_POLL_KICK
	else
		build_ko "$l"
	fi
	K_INITRD[$l]=$(initrd_for "$l") || die "initramfs for ${K_VER[$l]} failed (see $B/logs/initramfs.log)"
done
# an empty disk so /init does not wait for /dev/vda
disk=$B/empty.img
[ -f "$disk" ] || dd if=/dev/zero of="$disk" bs=1M count=1 status=none

# --- the boots: label psi modes (modes without a module are dropped)
boots=()
if [ $profile = 1 ]; then
	[[ ",$sets," == *,psimod,* ]] && [ -n "${K_VER[psi]:-}" ] && boots+=("psi 0 none,on" "psi 1 none" "psi 1n none")
	if [ $readers = 1 ]; then
		boots+=("stock 0 none,on,onr")
	elif [ $triggers = 1 ]; then
		boots+=("stock 0 none,on,ont,onp" "stocknk 0 none,onn")
	elif [ $cgroups = 1 ]; then
		boots+=("stock 0 none,on,onc" "stock 1 none" "stock 1n none")
	else
		[[ ",$sets," == *,stock,* ]] && boots+=("stock 0 none,on" "stock 1 none" "stock 1n none")
	fi
	plugin_args=,prof=on
	prof=$B/prof-$(date -u +%Y%m%dT%H%M%SZ).tsv
	: > "$prof"
else
	if [[ ",$sets," == *,psimod,* ]]; then
		[ -n "${K_VER[psi]:-}" ] && boots+=("psi 0 none,off,on" "psi 1 none" "psi 1n none")
		[ -n "${K_VER[nopsi]:-}" ] && boots+=("nopsi 0 none,on")
	fi
	# the fair baseline is not part of the smoke run
	if [ $smoke = 1 ]; then
		boots+=("stock 0 none,off,on" "stock 1 none")
	else
		[[ ",$sets," == *,stock,* ]] && boots+=("stock 0 none,off,on" "stock 1 none" "stock 1n none")
	fi
fi
[ ${#boots[@]} -gt 0 ] || die "nothing to boot"

ts=$(date -u +%Y%m%dT%H%M%SZ)
raw=$B/raw-$ts.tsv
printf 'set\tkernel\tpsi\tmode\tcolumn\tcg\tg\tl\tround\twall_ns\tinsns\tctxt\tstatus\tguest_ns\n' > "$raw"
ngroups=$(echo "$groups" | tr , '\n' | wc -l)
ncgs=$(echo "$cgs" | tr , '\n' | wc -l)

# psi "1n": psi=1 cgroup_disable=pressure
psi_cmdline() { [ "$1" = 1n ] && echo "psi=1 cgroup_disable=pressure" || echo "psi=$1"; }

column_of() {	# label psi mode
	case "$1:$3" in
	nopsi:none) echo nopsi ;;
	nopsi:on) echo nopsi+mod ;;
	*:none) [ "$2" = 1n ] && echo psi=1-nocg || echo "psi=$2" ;;
	*:off) echo mod-off ;;
	*:on) echo mod-on ;;
	*:onr) echo mod-on+rd ;;
	*:ont) echo mod-on+trig ;;
	*:onp) echo mod-on+poll ;;
	*:onn) echo mod-on-nohook ;;
	*:onc) echo mod-on+cg ;;
	esac
}

boot_one() {	# round label psi modes [extra cmdline]
	local r=$1 l=$2 psi=$3 modes=$4 extra=${5:-} nm tag
	[ -n "${K_KO[$l]:-}" ] || modes=none
	nm=$(echo "$modes" | tr , '\n' | wc -l)
	tag=$l-psi$psi-r$r${extra:+-idle}
	local logf=$B/logs/$tag.log resf=$B/logs/$tag.results plog=$B/logs/$tag.plugin
	local limit=$((120 + reps * ngroups * ncgs * nm * 20))
	[ -z "$extra" ] || limit=$((300 + idle * 4))
	# hackbench shares the vCPUs with 64 readers
	[ $readers = 0 ] || limit=$((limit * 3))
	rm -f "$logf" "$resf" "$plog"
	local bdisk=$disk
	if [ $profile = 1 ]; then
		# the guest writes its /proc/kallsyms here
		bdisk=$B/ksyms-$tag.img
		rm -f "$bdisk"
		truncate -s 32M "$bdisk"
	fi
	# shellcheck disable=SC2054 # the commas are in option values
	local accel=(-accel tcg -icount shift=0,sleep=off)
	[ "$smp" = 1 ] || accel=(-accel tcg,thread=single)
	QEMU_ARGV=(qemu-system-x86_64 "${accel[@]}" -smp $smp -m 512M
		-nographic -no-reboot -kernel "${K_IMG[$l]}" -initrd "${K_INITRD[$l]}"
		-drive "file=$bdisk,format=raw,if=virtio"
		-serial mon:stdio -serial "file:$resf"
		-plugin "$B/libinsncount.so${plugin_args:-}" -d plugin -D "$plog"
		-append "console=ttyS0 $(psi_cmdline "$psi") panic_on_warn=1 oops=panic panic=-1 nokaslr loglevel=4 psitest.suite=bench bench.modes=$modes bench.groups=$groups bench.cgs=$cgs bench.reps=$reps bench.rot=$r bench.prof=$profile $extra")
	run_qemu "boot $tag (${K_VER[$l]}, modes $modes)" "$limit" "$logf"
	[ $QEMU_RC = 0 ] || echo "@@ERR qemu exit $QEMU_RC" >> "$resf"
	[ -z "$extra" ] || return 0
	local set=psimod
	[ "${l%nk}" = stock ] && set=stock
	tr -d '\r' < "$resf" | grep -a '^@@RUN ' | awk -v set=$set -v k="${K_VER[$l]}" -v psi="$psi" -v r="$r" \
		-v lab="$l" -v plog="$plog" '
		BEGIN { n = 0; while ((getline line < plog) > 0) { split(line, f, " "); if (f[1] == "@@MARK") { mk[n] = f[3]; ht[n++] = f[4] } } m = 0
			split("onr mod-on+rd ont mod-on+trig onp mod-on+poll onn mod-on-nohook onc mod-on+cg", cm, " ")
			for (i = 1; i in cm; i += 2) mcol[cm[i]] = cm[i + 1] }
		{
			delete kv
			for (i = 2; i <= NF; i++) { split($i, p, "="); kv[p[1]] = p[2] }
			if (!("wall_ns" in kv)) { print "bad run: " $0 > "/dev/stderr"; next }
			ins = (m + 1 < n) ? mk[m + 1] - mk[m] : "NA"
			hw = (m + 1 < n) ? ht[m + 1] - ht[m] : 0; m += 2
			col = kv["mode"] == "none" ? (lab == "nopsi" ? "nopsi" : (psi == "1n" ? "psi=1-nocg" : "psi=" psi)) : \
			      (kv["mode"] == "off" ? "mod-off" : (lab == "nopsi" ? "nopsi+mod" : (kv["mode"] in mcol ? mcol[kv["mode"]] : "mod-on")))
			printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\n", set, k, psi, kv["mode"], col, kv["cg"], kv["g"], kv["l"], r, hw, (ins == "NA" ? ins : sprintf("%.0f", ins)), kv["ctxt"], kv["status"], kv["wall_ns"]
		}' >> "$raw"
	if [ $profile = 1 ]; then
		tr -d '\0' < "$bdisk" > "$B/logs/$tag.kallsyms"
		rm -f "$bdisk"
		python3 "$BENCH_DIR/profile.py" fold --set $set --kernel "${K_VER[$l]}" --psi "$psi" --boot "$tag" \
			--map "$B/logs/$tag.kallsyms" --results "$resf" --plugin "$plog" >> "$prof" ||
			fail "bench/profile-$tag" "profile.py fold failed"
	fi
	if grep -aq '^@@ERR' "$resf" || ! grep -aq '^@@DONE' "$resf"; then
		fail "bench/boot-$tag" "$(grep -a '^@@ERR' "$resf" | head -3 | tr '\n' ' ')$(grep -aq '^@@DONE' "$resf" || echo 'no @@DONE: the boot did not finish'); console: $logf"
		tr -d '\r' < "$logf" | tail -15
	fi
}

if [[ ",$sets," == *,psimod,* ]]; then
	log "stock kernel $stock; psimod kernels: ${K_VER[psi]:-missing} ${K_VER[nopsi]:-missing}; module $modrev"
else
	log "stock kernel $stock (the psimod kernels are not in this run's sets: $sets); module $modrev"
fi
log "groups $groups, cgroups $cgs, $rounds rounds x $reps reps, boots: ${boots[*]}"
for ((r = 0; r < rounds; r++)); do
	nb=${#boots[@]}
	for ((i = 0; i < nb; i++)); do
		b=${boots[$(((i + r) % nb))]}
		# shellcheck disable=SC2086
		boot_one "$r" $b
	done
done

# --- idle and memory cost (full run only): stock kernel, 60 s per state
idlef=$B/idle-$ts.txt
: > "$idlef"
if [ "$idle" -gt 0 ]; then
	for il in ${BENCH_IDLE_KERNELS:-stock}; do
		[ -n "${K_KO[$il]:-}" ] || continue
		boot_one 0 "$il" 0 none,on "bench.idle=$idle"
		cat "$B/logs/$il-psi0-r0-idle.results" >> "$idlef"
		boot_one 0 "$il" 1 none "bench.idle=$idle"
		sed 's/mode=none/mode=psi1/' "$B/logs/$il-psi1-r0-idle.results" >> "$idlef"
		boot_one 0 "$il" 1n none "bench.idle=$idle"
		sed 's/mode=none/mode=psi1-nocg/' "$B/logs/$il-psi1n-r0-idle.results" >> "$idlef"
	done
	tr -d '\r' < "$idlef" > "$idlef.tmp" && mv "$idlef.tmp" "$idlef"
fi

# --- per column: did it run and give numbers; under --smoke also, per run,
# a positive instruction count at a rate TCG can emulate (1e6 to 1e10
# guest instructions per second of wall time: a count of nothing, of the
# whole boot, or a clock in the wrong unit falls outside), and per column a
# mean within a factor 3 of the same kernel's psi=0 mean: every column runs
# the same hackbench, and what psi_mod or the kernel's PSI add is a few
# percent (bench/results/overhead.txt), but single smoke runs spread
# from 98M to 214M instructions on 2026-12-01 (column means 0.76 to 1.61 x
# psi=0's). A factor 3 leaves room for that spread and still catches a
# count of something else (the boot: ~100x; nothing or one block: ~0).
declare -A IMEAN=()
awk -F'\t' 'NR > 1 && $13 == 0 && $10 > 0 { k = $1 "\t" $5; n[k]++; w[k] += $10 / 1e9
		if ($11 == "NA") na[k] = 1; else { ins[k] += $11; r = $11 / ($10 / 1e9)
			if (!(k in mi) || $11 < mi[k]) mi[k] = $11
			if (!(k in rl) || r < rl[k]) rl[k] = r; if (r > rh[k]) rh[k] = r } }
	END { for (k in n) printf "%s\t%d\t%.3f\t%s\t%s\t%.3g\t%.3g\n", k, n[k], w[k] / n[k], (k in na) ? "NA" : sprintf("%.4g", ins[k] / n[k]), mi[k], rl[k], rh[k] }' "$raw" | sort > "$B/columns-$ts.tsv"
while IFS=$'\t' read -r set col n wmean imean imin rmin rmax; do
	IMEAN[$set/$col]=$imean
done < "$B/columns-$ts.tsv"
while IFS=$'\t' read -r set col n wmean imean imin rmin rmax; do
	if [ "$n" -lt "$reps" ] || [ "$imean" = NA ]; then
		fail "bench/$set/$col" "$n runs (wanted >= $reps), insns $imean"
		continue
	fi
	why=
	if [ $smoke = 1 ]; then
		ref=${IMEAN[$set/psi=0]:-}
		ratio=$(awk -v a="$imean" -v b="${ref:-0}" 'BEGIN { if (b > 0) printf "%.3f", a / b }')
		awk -v m="$imin" -v l="$rmin" -v h="$rmax" 'BEGIN { exit !(m > 0 && l >= 1e6 && h <= 1e10) }' ||
			why="a run outside the plausible: fewest insns $imin, rate $rmin to $rmax insns/s (want > 0, 1e6 to 1e10)"
		if [ -z "$why" ] && [ "$col" != psi=0 ]; then
			if [ -z "$ratio" ]; then
				why="no psi=0 column of $set to compare with"
			elif ! awk -v r="$ratio" 'BEGIN { exit !(r >= 1 / 3 && r <= 3) }'; then
				why="insns mean $imean is $ratio x psi=0's $ref (want 1/3 to 3)"
			fi
		fi
		detail=", $ratio x psi=0"
		[ "$col" != psi=0 ] || detail=", rate $rmin to $rmax insns/s"
	else
		detail=
	fi
	if [ -n "$why" ]; then
		fail "bench/$set/$col" "$why"
	else
		pass "bench/$set/$col" "$n runs, wall mean ${wmean} s, insns mean ${imean}${detail}"
	fi
done < "$B/columns-$ts.tsv"
for b in "${boots[@]}"; do
	set -- $b
	for m in $(echo "$3" | tr , ' '); do
		c=$(column_of "$1" "$2" "$m")
		s=psimod
		[ "${1%nk}" = stock ] && s=stock
		awk -F'\t' -v s=$s -v c="$c" 'NR > 1 && $1 == s && $5 == c && $13 == 0 { f = 1 } END { exit !f }' "$raw" ||
			fail "bench/$s/$c" "no successful run"
	done
done
[ -z "$missing_kernels" ] || fail "bench/psimod-kernels" "no .debs for:$missing_kernels in $kdebs"

# the 2 s floor of wall time per run (full run): how many fell short
if [ $smoke = 0 ] && [ $profile = 0 ]; then
	short=$(awk -F'\t' 'NR > 1 && $13 == 0 && $10 > 0 { n++; if ($10 < 2e9) { s++; if (!m || $10 < m) m = $10 } }
		END { printf "%d of %d runs under 2 s of wall time%s\n", s, n, s ? sprintf(" (shortest %.2f s)", m / 1e9) : "" }' "$raw")
	log "$short"
fi
if [ $profile = 1 ]; then
	mkdir -p "$RESULTS"
	cp "$prof" "$RESULTS/$(basename "$prof")"
	pfile=profile.txt
	[ $readers = 0 ] || pfile=profile-readers.txt
	[ $triggers = 0 ] || pfile=profile-triggers.txt
	[ $cgroups = 0 ] || pfile=profile-cgroups.txt
	if python3 "$BENCH_DIR/profile.py" report --command "$cmdline" --module "$modrev" \
		"$RESULTS/$(basename "$prof")" > "$RESULTS/$pfile"; then
		pass "bench/profile" "$RESULTS/$pfile"
	else
		fail "bench/profile" "profile.py report failed"
	fi
elif [ $smoke = 0 ]; then
	mkdir -p "$RESULTS"
	cp "$raw" "$RESULTS/raw-$ts.tsv"
	[ ! -s "$idlef" ] || cp "$idlef" "$RESULTS/idle-$ts.txt"
	{
		echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
		echo "command: $cmdline"
		echo "module: psi_mod $modrev"
		echo "loops: $groups; $short"
		for l in "${labels[@]}"; do echo "kernel $l: ${K_VER[$l]}"; done
		echo "host: $(nproc) cores, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg), qemu $(qemu-system-x86_64 --version | head -1 | awk '{ print $4 }') TCG, guest -smp 1 -m 512M nokaslr"
		echo "module size (size(1) of psi_mod.ko, text/data/bss):"
		for l in "${labels[@]}"; do
			[ -z "${K_KO[$l]:-}" ] || echo "  ${K_VER[$l]}: $(size "${K_KO[$l]}" | awk 'NR == 2 { print $1 "/" $2 "/" $3 }'), per-CPU section $(size -A "${K_KO[$l]}" | awk '$1 == ".data..percpu" { print $2 }') bytes"
		done
	} > "$RESULTS/meta-$ts.txt"
	if python3 "$BENCH_DIR/report.py" --out "$RESULTS" --meta "$RESULTS/meta-$ts.txt" \
		${idlef:+--idle "$RESULTS/idle-$ts.txt"} "$RESULTS/raw-$ts.tsv"; then
		pass "bench/report" "$RESULTS/overhead.txt and overhead-{insns,insns_adj,wall}.png"
	else
		fail "bench/report" "report.py failed"
	fi
fi

finish
