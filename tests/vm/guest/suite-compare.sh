# Suite "compare": psi_mod side by side with the kernel's own PSI (booted
# psi=1, psi_mod loaded with proc_dir=psi_mod), one workload at a time.
# Run by tests/vm/compare.sh, which selects the cases (--short: a subset)
# and prints the table from the @@ROW lines written here.
#
# Per workload: start it, let it settle 2 s, snapshot all six files back to
# back (kit snap) half a period after the kernel's fold, run DUR seconds,
# snapshot again (mid-period again) while it still runs, then
# for cpu some, io some/full, memory some/full:
#   totals: |psi_mod delta - kernel delta| <= 2% of kernel delta
#           + 10 ms per 10 s of wall time between the snapshots
#   avg10 at the end snapshot: within 1.0 point.
# The avg10 point comparison is only fair because the "align" case loads
# psi_mod so that its 2 s fold grid falls on the kernel's (see case_align
# and docs/accuracy.md: with grids 1 s apart, a 100% -> 0% step alone
# shows as 18 points of avg10 for up to 1 s).
CASES="align cpu-1 cpu-2 cpu-3 cpu-4 cpu-6 cpu-mix hackbench io-read io-read-busy0 io-read-free nap nap-cg io-write io-fsync io-throttled mem-zram mem-pagecache mem-compact mixed cgroup-iomem midload midload-warmup hotplug dmesg"
. /tests/lib.sh
. /tests/cases.sh
K=/proc/pressure
M=/proc/psi_mod
PSI_DIR=$M
ALL="$K/cpu $M/cpu $K/io $M/io $K/memory $M/memory"
ROWS="cpu:some io:some io:full memory:some memory:full"
# seconds per workload between the two snapshots: psitest.dur= (compare.sh)
DUR=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^psitest.dur=//p')
DUR=${DUR:-20}
# PSI's averaging period in us: 2*HZ+1 jiffies (2.004 s at HZ=250), not 2 s
HZ=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^psitest.hz=//p')
HZ=${HZ:-250}
PER=$(( (2 * HZ + 1) * 1000000 / HZ ))
export PSI_PERIOD_US=$PER
PHASE_TOL_US=40000
# psitest.modargs=a=1,b=2 (compare.sh --modargs): more module parameters
MODARGS=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^psitest.modargs=//p' | tr ',' ' ')
# Cases whose cpu some is made of the waits of tasks that sleep and wake
# all the time (alone, or a few io tasks: fsync writers, throttled readers)
# between wakeup and switch-in, so the clock-read order bias shows: the kernel's PSI
# reads its clock at the enqueue, after the sched_info stamp psi_mod uses,
# and at the switch before its own update work, after which the tracepoint
# fires. The allowance per wakeup, CLOCK_ORDER_US (+ CLOCK_ORDER_LEVEL_US
# per cgroup level below the root: nap-cg), and what it rests on: lib.sh
# and docs/accuracy.md, "Clock-read order, per event".
WAKER_CASES="cpu-1 cpu-2 io-read io-read-busy0 io-read-free nap nap-cg io-write io-fsync io-throttled"

row() {	# the table line, to ttyS1 for the host and to the console
	echo "@@ROW $*"
	if [ -c /dev/ttyS1 ]; then echo "@@ROW $*" > /dev/ttyS1; fi
}

# --- fold grid phase
# grid_phase FILE: phase (us, CLOCK_MONOTONIC mod 2 s) of the folds of FILE's
# averages, from 4.5 s of 2 ms polling under 3 spinners (cpu some ~50%, so
# every fold changes avg10). Phases are CLOCK_MONOTONIC mod the period $PER.
# Prints "PHASE WIDTH": the middle and the width of the intersection of the
# folds' intervals (the poll resolution less jitter); "none" if no fold was
# seen, "spread US" if the intervals do not intersect (one work item ran
# later than another by more than the polling step).
grid_phase() {
	local i p
	for i in 1 2 3; do spin 5 & echo $! >> $C/phase-pids; done
	cmpw phase 4.5 "$1" > $C/phase
	for p in $(cat $C/phase-pids); do wait $p 2>/dev/null; done
	rm -f $C/phase-pids
	# each fold lies in (t_prev, t_now]: intersect these intervals on the
	# 2 s circle (relative to the first one); the phase is the middle of
	# the intersection, the spread its width
	awk -v P=$PER '$1 == "F" { n++; lo[n] = $2; hi[n] = $3 }
		END { if (n < 1) { print "none"; exit }
			L = lo[1]; H = hi[1]
			for (i = 2; i <= n; i++) {
				k = int((hi[i] - hi[1] + P / 2) / P) * P
				if (lo[i] - k > L) L = lo[i] - k; if (hi[i] - k < H) H = hi[i] - k }
			if (H < L) { print "spread " L - H; exit }
			p = ((L + H) / 2) % P
			printf "%d %d\n", p, H - L }' $C/phase
}
# signed distance a - b on the circle of one period
phase_diff() { awk -v a="$1" -v b="$2" -v P=$PER 'BEGIN { d = a - b; while (d > P / 2) d -= P;
	while (d < -P / 2) d += P; printf "%d\n", d }'; }
pabs() { case "$1" in -*) echo "${1#-}" ;; *) echo "$1" ;; esac; }

# aligned_load: insmod psi_mod so that its grid (set at load) falls on the
# kernel's, whose phase is in /tmp/kphase. The load itself takes some tens of
# ms under TCG, varying by as much: measure the result and correct, up to 8
# tries, until within ALIGN_GOAL_US; the last try is kept if it is within
# PHASE_TOL_US. (39 ms apart, hackbench's avg10 once read 1.2 points apart
# with totals within 0.4%: windows that far apart see different bursts.)
ALIGN_GOAL_US=15000
aligned_load() {
	local kp target off=unlocated try r mp
	kp=$(cat /tmp/kphase)
	target=$kp
	for try in 1 2 3 4 5 6 7 8; do
		mod_loaded && mod_unload > /dev/null
		r=$(cmpw at "$target" kit load $KO proc_dir=psi_mod $MODARGS)
		[ "$r" = ok ] || { echo "load failed: $r"; return 1; }
		set -- $(grid_phase $M/cpu)
		mp=$1
		# folds whose intervals do not intersect (one work item ran late
		# on a loaded host: "spread US") or none seen: measure again
		if ! isint "$mp"; then
			echo "try $try: psi_mod fold phase not located ($*)" >> $C/align
			continue
		fi
		off=$(phase_diff "$mp" "$kp")
		echo "try $try: psi_mod grid $(( off / 1000 )) ms after the kernel's" >> $C/align
		[ "$(pabs "$off")" -le $ALIGN_GOAL_US ] && { echo "$off"; return 0; }
		target=$(( (target - off + 2 * PER) % PER ))
	done
	echo "$off"
	[ "$(pabs "$off")" -le $PHASE_TOL_US ]
}

# have_grid, aligned: the cases compare on the kernel's grid, which
# case_align found and loaded psi_mod on; without it they fail with that as
# the reason
have_grid() { [ -s /tmp/kphase ] || { bad "not run: case align did not locate the kernel's fold grid"; return 1; }; }
aligned() { have_grid && { mod_loaded || { bad "module not loaded"; return 1; }; }; }

# --- one comparison
# compare_rows LABEL A B [AVG_TOL [WAKEUPS]]: rows for every resource/state
# between snapshots A and B, assertions on totals and avg10.
# avg10: both are exponential averages folded on the same 2 s grid (see
# case_align), so a difference they already had at A (history: psi_mod was
# loaded later than the boot, and each align try restarts it from zero)
# decays by exactly EXP_10s/2048 = 1677/2048 per fold and adds nothing new.
# The check is on what is new: |(m_B - k_B) - (m_A - k_A) * (1677/2048)^N|
# with N the grid points between A and B; the inherited part is printed.
# psi_mod's m here is the kernel's arithmetic from zero at its load: what
# it shows, or with warmup=1 what it shows divided back by its warm-up
# weight (avg_seen in the snapshot's debugfs state, see psi_mod_logic.h;
# 204800 = 100%, as always without the warm-up). LITERAL=1
# (midload-warmup) judges what both show instead: what a consumer reads.
# WAKEUPS (waker cases only, see WAKER_CASES): the cpu some total may
# exceed the tolerance, and io some/full fall short of it, by at most
# CLOCK_ORDER_US per wakeup (from 6.12 also the other way, by at most
# CLOCK_ORDER_BACK_US), and are then reported as explained ("clk"):
# docs/accuracy.md, "clock-read order" (the same reads that lengthen a
# woken task's wait for a CPU shorten its io wait). Its avg10 may then
# miss the 1 point by the share that allowance adds (100 * CLOCK_ORDER_US
# * WAKEUPS / wall points) in the same direction, the same excess averaged.
compare_rows() {
	local label=$1 a=$2 b=$3 atol=${4:-1.0} wk=${5:-0} wall rs res st dk dm ka ma ka0 ma0 line kp nf dir rwk
	wall=$(($(snap_t "$b") - $(snap_t "$a")))
	kp=$(cat /tmp/kphase)
	nf=$(awk -v a="$(snap_t "$a")" -v b="$(snap_t "$b")" -v p="$kp" -v P=$PER 'BEGIN {
		printf "%d\n", int((b - p) / P) - int((a - p) / P) }')
	for rs in $ROWS; do
		res=${rs%%:*} st=${rs#*:}
		dk=$(snap_delta "$a" "$b" $K/$res $st)
		dm=$(snap_delta "$a" "$b" $M/$res $st)
		ka=$(snap_val "$b" $K/$res $st avg10)
		ma=$(snap_val "$b" $M/$res $st avg10)
		ka0=$(snap_val "$a" $K/$res $st avg10)
		ma0=$(snap_val "$a" $M/$res $st avg10)
		if ! isint "$dk" || ! isint "$dm" || [ -z "$ka" ] || [ -z "$ma" ] || [ -z "$ka0" ] || [ -z "$ma0" ]; then
			bad "$res $st: unreadable (kernel $dk, psi_mod $dm)"
			continue
		fi
		# the totals target (lib.sh): verdict and tolerance
		dir=$(clock_dir $rs)
		[ "$dir" = 0 ] && rwk=0 || rwk=$wk
		set -- $(total_verdict "$dk" "$dm" "$wall" "$rwk" "$dir")
		line=$(awk -v k="$dk" -v m="$dm" -v w="$wall" -v ka="$ka" -v ma="$ma" -v ka0="$ka0" \
			-v ma0="$ma0" -v n="$nf" -v at="$atol" -v wk="$rwk" -v dir="$dir" -v v1="$1" -v tol="$2" \
			-v cu=$CLOCK_ORDER_US -v cb=$CLOCK_ORDER_BACK_US -v sa="$(snap_seen "$a")" -v sb="$(snap_seen "$b")" \
			-v lit="${LITERAL:-0}" 'BEGIN {
			d = m - k
			# busybox awk has no exp(): the power by multiplication
			f = 1; for (i = 0; i < n; i++) f *= 1677 / 2048
			inh = (ma0 * sa / 204800 - ka0) * f; ad = ma * sb / 204800 - ka - inh
			pct = k > 0 ? sprintf("%+.1f%%", 100 * d / k) : "n/a"
			v2 = (ad <= at + 0.005 && -ad <= at + 0.005) ? "ok" : "MISS"
			if (lit) {
				# psi_mod averages only the periods after A: e is the
				# warm-up of the periods the kernel folded since, taken
				# from its own avg10, e = (k_B - f k_A) / (1 - f); what
				# psi_mod must show. ad: psi_mod against e (1 point);
				# inh: e - k_B, what the kernel remembers of the time before
				# the load, w^n / (1 - w^n) (k_B - k_A), zero on a
				# steady load. Then |m_B - k_B| within the target, or
				# beyond it by no more than that memory ("hist").
				e = (ka - f * ka0) / (1 - f); ad = ma - e; inh = e - ka; lt = ma - ka
				# the clock-order allowance as in the waker cases
				x = wk > 0 ? 100 * wk * (ad * dir > 0 ? cu : cb) / w : 0
				v2 = (ad <= 1.005 + x && -ad <= 1.005 + x) ? "ok" : "MISS"
				if (v2 == "ok" && (lt > at + 0.005 || -lt > at + 0.005))
					v2 = ((lt > 0 ? lt : -lt) <= at + (inh > 0 ? inh : -inh) + 0.005) ? "hist" : "MISS"
			}
			# the same allowance carried into avg10: the share it adds
			if (v2 == "MISS" && v1 != "MISS" && wk > 0 && ad * dir != 0 &&
			    (ad * dir > 0 ? ad * dir <= at + 100 * wk * cu / w : -ad * dir <= at + 100 * wk * cb / w))
				v2 = "clk"
			printf "%d %d %+d %s %d %.2f %.2f %+.2f %+.2f %s %s\n", k, m, d, pct, tol, ka, ma, ad, inh, v1, v2 }')
		set -- $line
		row "$label $res $st $line wall=$wall"
		local more=
		[ "$rwk" -gt 0 ] && more=" + $CLOCK_ORDER_US us x $wk wakeups"
		expect "$res $st total: psi_mod ${2}us vs kernel ${1}us, diff $3 ($4) > tol $5us$more" \
			[ "${10}" = ok -o "${10}" = clk ]
		if [ "${10}" = clk ]; then
			note "$res $st $3 us = $(( ${3#[+-]} / wk )).$(( ${3#[+-]} * 10 / wk % 10 )) us per wakeup ($wk wakeups): clock-read order"
		fi
		if [ "${11}" = clk ]; then
			note "$res $st avg10 new diff $8 > $atol: within the same clock-order allowance ($CLOCK_ORDER_US us x $wk wakeups in ${wall}us)"
		fi
		if [ "${LITERAL:-0}" = 1 ]; then
			expect "$res $st avg10: psi_mod $7 vs kernel $6 > $atol, or psi_mod off the kernel's own periods' warm-up by $8 > 1.0 (history $9)" \
				[ "${11}" = ok -o "${11}" = hist ]
			[ "${11}" = hist ] && note "$res $st avg10 psi_mod $7 vs kernel $6: within $atol but for the kernel's memory of before the load ($9; the kernel's own avg10 moved since the load); psi_mod is $8 off the warm-up of the kernel's own periods"
		else
			expect "$res $st avg10: psi_mod $7 vs kernel $6 (new diff $8, inherited $9) > $atol; psi_mod's folds came $(awk -v f=$STATE '$1 == f && $2 == "avgs_lags_us" { $1 = $2 = ""; print }' "$b") us after their grid points, A $(( ($(snap_t "$a") - kp) % PER / 1000 )) ms and B $(( ($(snap_t "$b") - kp) % PER / 1000 )) ms after the kernel's" \
				[ "${11}" = ok -o "${11}" = clk ]
		fi
	done
	note "wall ${wall}us, $nf folds"
}

# snap_mid OUT: snapshot all six files half a period after the kernel's
# fold. A snapshot taken near a grid point can see one aggregator folded and
# the other not yet (their works are 15-40 ms apart at best, and a busy CPU
# delays either): one fold's step, 3.8 points of io avg10 under the zram hog
# in a CI run whose totals agreed. Mid-period, both have folded the same
# number of times unless a work item is a second late.
# With the six files it reads psi_mod's debugfs state, back to back, for
# its avg10 warm-up weight (avg_seen; 204800 = 100%: warmed up).
STATE=/sys/kernel/debug/psi_mod/state
snap_mid() {
	cmpw at $(( ($(cat /tmp/kphase) + PER / 2) % PER )) kit snap $ALL $STATE > "$1"
}
snap_seen() { awk -v f=$STATE '$1 == f && $2 == "avg_seen" { s = $3; n = 1 } END { print n ? s : 204800 }' "$1"; }

# workload WL_FN [SETTLE]: start WL_FN in the background (it gets DUR+10 s
# to live), settle, snapshot mid-period, DUR s later the next mid-period
# snapshot (DUR - 2 s of sleep, which a loaded guest overshoots, then the
# wait for mid-period), stop it, compare.
workload() {
	local fn=$1 settle=${2:-2} ca cb wk=0
	aligned || return
	wl_start
	( $fn $((DUR + 10)) ) > $C/wl.out 2>&1 &
	echo $! >> $C/pids
	sleep "$settle"
	snap_mid $C/a
	ca=$(ctxt)
	sleep $((DUR - 2))
	snap_mid $C/b
	cb=$(ctxt)
	wl_stop
	# a waker case: a wakeup is at most two context switches (in and out)
	case " $WAKER_CASES " in *" $CASE "*) wk=$(( (cb - ca) / 2 )) ;; esac
	compare_rows "$CASE" $C/a $C/b 1.0 $wk
	[ -s $C/wl.out ] && note "$(tail -3 $C/wl.out | tr '\n' ' ')"
	# then nothing may be left counting
	expect_quiet 3 || debug_state
}
# kill the whole workload: its subshell and everything it started
# The workloads' shell loops run until wl_stop, or END (kit now) at the
# latest: a loop left in a background subshell outlives the kill of the
# workload's process and would run into the quiet window after it.
WL_STOP=/tmp/wl.stop
wl_running() { [ ! -e $WL_STOP ] && [ "$(kit now)" -lt "$1" ]; }
wl_start() { rm -f $WL_STOP; }
wl_stop() {
	local p
	touch $WL_STOP
	for p in $(cat $C/pids 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	# busybox has no pkill: the workload's processes by name (the guest
	# runs nothing else of these names)
	killall -9 spin dio memhog hackbench dd usleep 2>/dev/null
	killall -9 cmpw 2>/dev/null
	sleep 1
}

# --- workloads (argument: how long they may live)
spinners() { local i; for i in $(seq "$1"); do spin "$2" & done; wait; }
wl_cpu1() { spinners 1 "$1"; }
wl_cpu2() { spinners 2 "$1"; }
wl_cpu3() { spinners 3 "$1"; }
wl_cpu4() { spinners 4 "$1"; }
wl_cpu6() { spinners 6 "$1"; }
# 2 spinners + 4 sleepers that wake every 10-40 ms (fork + exec of usleep)
sleeper() { local end=$(($(kit now) + $2 * 1000000)); while wl_running $end; do usleep "$1"; done; }
wl_cpumix() { spinners 2 "$1" & for s in 10000 20000 30000 40000; do sleeper $s "$1" & done; wait; }
wl_hackbench() {
	local end=$(($(kit now) + $1 * 1000000))
	while wl_running $end; do hackbench -p -g 4 -l 200 > /dev/null 2>&1; done
}
wl_ioread() { taskset -c 1 dio read /dev/vda "$1"; }
# the pinned reader with CPU 0 kept busy by a pinned spinner: both CPUs
# non-idle all the time, so the non-idle weighting of the per-CPU times is
# 1:1 in both aggregators (isolates the cpu some difference of io-read)
wl_ioreadbusy0() { taskset -c 0 spin "$1" & taskset -c 1 dio read /dev/vda "$1" & wait; }
wl_ioreadfree() { dio read /dev/vda "$1"; }
# a lone task pinned to cpu 1 that only sleeps 2 ms and wakes (timer):
# the cpu some of io-read without the io
wl_nap() { taskset -c 1 cmpw nap 2000 "$1"; }
# the same inside a 4-level cgroup2 hierarchy: the kernel's PSI then does
# five group changes per event, between its clock reads and psi_mod's
wl_napcg() {
	[ -d /sys/fs/cgroup/a/b/c/d ] || { mkdir -p /sys/fs/cgroup &&
		{ mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup; } &&
		mkdir -p /sys/fs/cgroup/a/b/c/d; }
	sh -c "echo \$\$ > /sys/fs/cgroup/a/b/c/d/cgroup.procs && exec taskset -c 1 cmpw nap 2000 $1"
}
wl_iowrite() { dio write /dev/vda "$1"; }
wl_iofsync() { cmpw fsync /dev/vda "$1" & cmpw fsync /dev/vda "$1" & wait; }
# /dev/vdb: QEMU throttles it to 200 iops; 4 readers queue behind each other
wl_iothrottled() { local i; for i in 1 2 3 4; do dio read /dev/vdb "$1" & done; wait; }
wl_memzram() { memhog 700 "$1"; }
# /dev/vdc (640 MiB) read through the page cache in a loop: larger than what
# the 512 MiB guest can cache, smaller than twice that, so evicted pages come
# back within the workingset distance and refaults are counted as thrashing
pcloop() {
	local end=$(($(kit now) + $1 * 1000000))
	while wl_running $end; do dd if=/dev/vdc of=/dev/null bs=1M 2>/dev/null; done
}
wl_mempagecache() { pcloop "$1"; }
wl_memcompact() { pcloop "$1" & cmpw thp 96 "$1" & cmpw thp 96 "$1" & wait; }
# mixed: every kind above at once (the spinners, hackbench, O_DIRECT reads
# and writes, an fsync writer, the throttled disk, the zram hog, the
# page-cache loop and the THP bursts)
wl_mixed() {
	spinners 2 "$1" & dio read /dev/vda "$1" & dio read /dev/vdb "$1" &
	dio write /dev/vda "$1" & cmpw fsync /dev/vda "$1" &
	wl_hackbench "$1" & memhog 600 "$1" & pcloop "$1" & cmpw thp 96 "$1" & wait
}

# --- cases
# align: find the kernel's fold grid, load psi_mod on it
# The kernel's work item runs a jiffy or more after its grid point, later
# when a spinner holds the CPU: its folds' intervals have been seen 13 ms
# apart, and in one CI run two did not intersect at all. Such a measurement
# is taken again (up to 5 times), as psi_mod's are in aligned_load.
case_align() {
	local kp off try
	: > $C/kalign
	for try in 1 2 3 4 5; do
		set -- $(grid_phase $K/cpu)
		kp=$1
		isint "$kp" && break
		if [ "$1" = none ]; then
			echo "try $try: no change of the kernel's avgs in 4.5 s of polling" >> $C/kalign
		else
			echo "try $try: the kernel's folds do not line up (intervals ${2}us apart): $(awk '$1 == "F" { printf "(%d,%d] ", $2 % '$PER', $3 % '$PER' }' $C/phase)" >> $C/kalign
		fi
	done
	expect "kernel fold phase not found: $(joinl $C/kalign)" isint "$kp"
	isint "$kp" || return
	echo "$kp" > /tmp/kphase
	off=$(aligned_load)
	expect "psi_mod could not be aligned to the kernel's grid: offset ${off}us ($(joinl $C/align))" \
		eval "isint '$off' && [ \$(pabs '$off') -le $PHASE_TOL_US ]"
	echo "$off" > /tmp/moff
	note "kernel grid phase ${kp}us (located within a $2us window$([ -s $C/kalign ] && echo "; $(joinl $C/kalign)")); $(joinl $C/align)"
}
CASE=
# defcase NAME FN [SETTLE]: the case function for a workload
# (function names: "-" becomes "_", ash allows no "-" in them)
defcase() { eval "workload_$(echo "$1" | tr - _)() { workload $2 ${3:-2}; }"; }
runw() { CASE=$1; run_case "$1" $((DUR + 60)) "workload_$(echo "$1" | tr - _)"; }

defcase cpu-1 wl_cpu1
defcase cpu-2 wl_cpu2
defcase cpu-3 wl_cpu3
defcase cpu-4 wl_cpu4
defcase cpu-6 wl_cpu6
defcase cpu-mix wl_cpumix
defcase hackbench wl_hackbench
defcase io-read wl_ioread
defcase io-read-busy0 wl_ioreadbusy0
defcase io-read-free wl_ioreadfree
defcase nap wl_nap
# four cgroup levels below the root: four more group changes in the
# kernel's enqueue before its root's clock read (run_case's subshell keeps
# the larger allowance to this case)
workload_nap_cg() {
	CLOCK_ORDER_US=$((CLOCK_ORDER_US + 4 * CLOCK_ORDER_LEVEL_US))
	workload wl_napcg 2
}
defcase io-write wl_iowrite
defcase io-fsync wl_iofsync
defcase io-throttled wl_iothrottled
defcase mem-zram wl_memzram 4
defcase mem-pagecache wl_mempagecache 4
defcase mem-compact wl_memcompact 4
defcase mixed wl_mixed 4

# midload_shares N: N consecutive periods' share of the kernel's cpu,
# io and memory some (mid-period snapshots), then per resource the mean
# and standard deviation, as a note.
midload_shares() {
	local i r
	snap_mid $C/sh.0
	for i in $(seq 1 "$1"); do snap_mid $C/sh.$i; done
	for r in cpu io memory; do
		for i in $(seq 1 "$1"); do
			echo "$(snap_delta $C/sh.$((i - 1)) $C/sh.$i $K/$r some) $(( $(snap_t $C/sh.$i) - $(snap_t $C/sh.$((i - 1))) ))"
		done | awk -v r=$r '{ x = 100 * $1 / $2; s += x; q += x * x; n++; l = l sprintf(" %.0f", x) }
			END { m = s / n; v = q / n - m * m; sd = v > 0 ? v : 0
				# busybox awk has no math: the root by Newton
				if (sd > 0) { x = sd; for (i = 0; i < 40; i++) x = (x + sd / x) / 2; sd = x }
				printf "%s some per period: mean %.1f sd %.1f (%s)\n", r, m, sd, substr(l, 2) }'
	done > $C/shares
	note "before the load, the kernel's $(tr '\n' ';' < $C/shares)"
}

# midload: psi_mod loaded (on the kernel's grid) while cpu, io and memory
# workloads already run. From the first fold on its totals must grow as the
# kernel's (same target). avg10, 11 s after the load:
# - by default psi_mod's averages start from zero at the load, as a
#   kernel's at boot: the check is on what the two add from A to B (d_new,
#   within 2 points), and what a consumer reads differs from the kernel's
#   figure by what the kernel remembers of the time before the load, the
#   part of the A difference that B still carries (d_inh, printed);
# - midload-warmup loads with warmup=1 and judges what both show: within
#   2 points, or off by no more than the kernel's memory of before the load
#   (psi_mod_logic.h, "Warm-up").
midload_run() {	# WARMUP
	local warm=$1 off t0 g ca
	have_grid || return
	mod_loaded && mod_unload > /dev/null
	wl_start
	( spinners 3 $((DUR + 100)) & dio read /dev/vda $((DUR + 100)) & memhog 700 $((DUR + 100)) & wait ) \
		> $C/wl.out 2>&1 &
	echo $! >> $C/pids
	# "already running": 60 s, long enough for the kernel's avg10 to have
	# forgotten the load's start. Meanwhile the kernel's share in each
	# period, to show how much the load varies (docs/accuracy.md).
	sleep 2
	midload_shares 29
	off=$(cmpw at "$(cat /tmp/kphase)" kit load $KO proc_dir=psi_mod $MODARGS warmup=$warm)
	expect "mid-load insmod: $off" [ "$off" = ok ]
	t0=$(kit now)
	# g: the grid point the load started at (insmod takes up to a second
	# here, under this load)
	g=$(( t0 - (t0 - $(cat /tmp/kphase) + 4 * PER) % PER ))
	# A: half a period after psi_mod's first fold (with the warm-up the
	# averages leave that period out: it misses what began before the
	# load); B: 11 s after the load, 4 folds later. Timed by cmpw
	# (SCHED_FIFO, one exec each): a shell loop under the hog's thrashing
	# can oversleep a whole period
	cmpw until $((g + PER + PER / 2)) kit snap $ALL $STATE > $C/a
	ca=$(ctxt)
	cmpw until $((g + 5 * PER + PER / 2)) kit snap $ALL $STATE > $C/b
	if [ "$warm" = 1 ]; then
		# A must lie before psi_mod's first kept period ends: no weight yet
		expect "midload: snapshot A $(( ($(snap_t $C/a) - g) / 1000 )) ms after the load came after psi_mod's second fold (warm-up weight $(snap_seen $C/a))" \
			[ "$(snap_seen $C/a)" = 0 ]
		LITERAL=1
	else
		expect "midload: warm-up weight $(snap_seen $C/a) without warmup=1, want 204800 (none)" \
			[ "$(snap_seen $C/a)" = 204800 ]
	fi
	# the reader wakes all the time: the clock-order allowance applies to
	# io (and cpu some), as in WAKER_CASES
	compare_rows "$CASE" $C/a $C/b 2.0 $(( ($(ctxt) - ca) / 2 ))
	LITERAL=0
	note "warmup=$warm; insmod returned $(( (t0 - g) / 1000 )) ms after the grid point it started at; A $(( ($(snap_t $C/a) - g) / 1000 )) ms and B $(( ($(snap_t $C/b) - g) / 1000 )) ms after it; warm-up weight at B $(snap_seen $C/b)/204800"
	wl_stop
	expect_quiet 3 || debug_state
	# later cases need the module on the grid again
	off=$(aligned_load)
	note "realigned: ${off}us"
}
case_midload() { midload_run 0; }
case_midload_warmup() { midload_run 1; }

# reads_of NAME: read syscalls so far of the process NAME (/proc/PID/io)
reads_of() { awk '$1 == "syscr:" { print $2 }' /proc/$(pidof "$1" | cut -d' ' -f1)/io 2>/dev/null; }

# hotplug: cpu1 offline/online 20 times under 3 spinners + an io reader.
# The reader wakes from iowait once per read, so io some gets the
# clock-read order's allowance per read, as in WAKER_CASES: it waits for a
# CPU behind the spinners most of the time, and its io some is a small
# total (about a tenth of the wall time) on which that bias weighs
# several times more than in io-read.

case_hotplug() {
	local i u bad_n=0 t r0 r1
	aligned || return
	[ -e /sys/devices/system/cpu/cpu1/online ] || { bad "cpu1 cannot be offlined"; return; }
	wl_start
	( spinners 3 600 & dio read /dev/vda 600 & wait ) > $C/wl.out 2>&1 &
	echo $! >> $C/pids
	sleep 2
	snap_mid $C/a
	# the reader's reads, each a sleep in iowait and a wakeup: the
	# clock-read order's allowance on io some counts these (the spinners'
	# context switches would inflate a count from /proc/stat)
	r0=$(reads_of dio)
	t=$(kit now)
	for i in $(seq 20); do
		echo 0 > /sys/devices/system/cpu/cpu1/online || bad_n=$((bad_n + 1))
		usleep 300000
		# an offline CPU runs nothing: psi_mod must not count it non-idle
		[ $i = 1 ] && grep '^cpu1 ' /sys/kernel/debug/psi_mod/state > $C/offstate
		echo 1 > /sys/devices/system/cpu/cpu1/online || bad_n=$((bad_n + 1))
		usleep 300000
	done
	# a last stretch with both CPUs up so the end snapshot is a steady state
	sleep 3
	snap_mid $C/b
	r1=$(reads_of dio)
	expect "$bad_n offline/online writes failed" [ $bad_n = 0 ]
	expect "the reader's read count unreadable ($r0, $r1)" ige "$((r1 - r0))" 1
	compare_rows hotplug $C/a $C/b 1.0 $((r1 - r0))
	note "io some psi_mod - kernel: $(awk -v k="$(snap_delta $C/a $C/b $K/io some)" \
		-v m="$(snap_delta $C/a $C/b $M/io some)" -v n=$((r1 - r0)) \
		'BEGIN { printf "%+d us over %d reads, %+.1f us per read", m - k, n, (m - k) / (n > 0 ? n : 1) }')"
	u=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^underflows=/) { split($i, a, "="); s += a[2] } } END { print s + 0 }' \
		/sys/kernel/debug/psi_mod/state)
	expect "psi_mod underflows after hotplug: $u" [ "$u" = 0 ]
	# each offline's unseen switch to idle done once: by the kprobe on
	# cpuhp_report_idle_dead() where it attached, else by the dead callback
	set -- $(awk '$1 == "cpu1" { for (i = 2; i <= NF; i++) { split($i, a, "="); v[a[1]] = a[2] } }
		END { print v["dead_kprobe"] + 0, v["dead_callback"] + 0 }' /sys/kernel/debug/psi_mod/state)
	expect "cpu1's switch to idle at offline done $1 times by the kprobe and $2 by the dead callback, want 20 in all" \
		[ $(($1 + $2)) = 20 ]
	note "20 cycles in $(( ($(kit now) - t) / 1000000 )) s; underflows $u; offline switches to idle: $1 by kprobe, $2 by callback; offline: $(cat $C/offstate)"
	wl_stop
	expect_quiet 3 || debug_state
}

suite_begin
# zram swap for the anonymous hog: 384 MiB of compressed swap
if [ -e /sys/block/zram0/disksize ]; then
	echo 384M > /sys/block/zram0/disksize && mkswap /dev/zram0 > /dev/null && swapon /dev/zram0
fi
echo "swap: $(grep -i swaptotal /proc/meminfo)"
# the boot's own cpu pressure decays first (it is not part of any workload)
sleep 5
run_case align 120 case_align
for c in cpu-1 cpu-2 cpu-3 cpu-4 cpu-6 cpu-mix hackbench io-read io-read-busy0 io-read-free nap nap-cg io-write io-fsync \
	io-throttled mem-zram mem-pagecache mem-compact mixed; do
	runw $c
done
run_case cgroup-iomem 60 case_cgroup_iomem
CASE=midload; run_case midload $((DUR + 180)) case_midload
CASE=midload-warmup; run_case midload-warmup $((DUR + 180)) case_midload_warmup
CASE=hotplug; run_case hotplug 200 case_hotplug
run_case dmesg 20 case_dmesg
suite_end
