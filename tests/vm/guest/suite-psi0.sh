# Suite "psi0": the module on a kernel booted psi=0 (its intended use).
# The host reads the case list from the CASES= line below.
CASES="load format poll idle worklag spin io iowrite mem hackbench toggle churn forkreloc thread-exec store pidwrap percpu irq badparams rmmod-readers loadunload trig-abi trig-ipi trig-cpu trig-io trig-mem trig-idle trig-unpriv trig-many trig-many-priv trig-unload start-unwind stop-poll stop-read cgroup-tree cgroup-acct cgroup-files cgroup-trig cgroupfs dmesg"
. /tests/lib.sh
. /tests/cases.sh
PSI_DIR=/proc/pressure

# The averaging work keeps time with a stall on one CPU while the CPU it
# last ran on idles: two spinners pinned to cpu1 for 20 s, nothing on cpu0
# (where the test sleeps). A timer that waited for cpu0 to wake would fold
# periods late (then as if they had been idle). On time means as the
# kernel's own work: its timer, 2 s out, sits in the timer wheel's second
# level or above and fires up to one bucket (8^level jiffies) after the
# jiffy it was set for; allowed: that bucket and 3 jiffies for the worker
# to run, on every run, whoever set the timer. The work sets it for the
# jiffy after the next grid point, so a fold it set comes within that
# much of its grid point, give or take what the guest's sched_clock (the
# grid's clock) and jiffies disagree over a period: without a stable TSC
# the two run on different clocksources at a rate apart that depends on
# the host, measured here from the scheduler's debug file. A task change
# while the work runs (a kernel thread of the guest's) sets the timer a
# period out instead, as in the kernel; the folds after that are off the
# grid, counted apart, not bounded.
case_worklag() {
	local hz late runs lag folds lim glim r d g n c0 c1
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	# a restart zeroes the module's counters
	r=$(kit write $ENABLE 0)$(kit write $ENABLE 1)
	expect "enable 0 and 1: $r" [ "$r" = okok ]
	c0=$(sched_clocks)
	bg taskset -c 1 spin 22; bg taskset -c 1 spin 22
	taskset -c 0 sleep 20
	late=$(debug_val avgs_late_max_jiffies) runs=$(debug_val avgs_late_runs)
	lag=$(debug_val avgs_lag_max_us) folds=$(debug_val avgs_lag_folds)
	c1=$(sched_clocks)
	bg_kill
	hz=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^psitest.hz=//p')
	hz=${hz:-250}
	# the wheel's level for 2*HZ+1 jiffies: level n starts at 63 << 3(n-1)
	d=$((2 * hz + 1)) g=1 n=63
	while [ $d -ge $n ]; do g=$((g * 8)) n=$((n * 8)); done
	lim=$((g + 3))
	# us: the bucket and 3 jiffies, and the clocks' drift over a period
	glim=$(echo "$c0 $c1" | awk -v j=$((lim * 1000000 / hz)) '{
		r = ($3 - $1) / ($4 - $2) - 1; if (r < 0) r = -r
		printf "%d", j + r * 2000000 + 0.5 }')
	expect "only ${runs:-no} timed runs in 20 s, want >= 8" ige "${runs:-0}" 8
	expect "a run came ${late:-?} jiffies after its timer's, want <= $lim" ile "${late:-999999999}" $lim
	expect "no fold the work set in 20 s" ige "${folds:-0}" 1
	expect "a fold the work set came ${lag:-?} us after its grid point, want <= $glim" ile "${lag:-999999999}" "${glim:-0}"
	note "$runs runs, the latest $late jiffies after its timer's (limit $lim, HZ $hz); $folds folds the work set, the latest $lag us after its grid point (limit $glim): $(awk '$1 == "avgs_lags_us"' /sys/kernel/debug/psi_mod/state); set by a task change: $(debug_val avgs_restarts); sched_clk and ktime (ms) $c0 -> $c1, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
}

# sched_clock and ktime in ms, read together by psi_mod's debug view (the
# scheduler's debug file has them too, but not without CONFIG_SCHED_DEBUG).
sched_clocks() {
	awk '$1 == "clocks_ns" { printf "%.6f %.6f\n", $2 / 1e6, $3 / 1e6 }' \
		/sys/kernel/debug/psi_mod/state
}

# Pid reuse: kernel.pid_max at its minimum (301: one pid, 300, once the
# cursor has passed it) and 20 s of threads and self-reaping children
# created as fast as that allows (tests/vm/helpers/pidwrap.c). A task that
# reaps itself frees its pid before its last switch, so the pid's next
# owner is often created while the old one still runs. Then nothing may be
# left behind: a count the old owner left would show as pressure on an
# idle CPU for as long as the module runs.
case_pidwrap() {
	local out rc
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	out=$(timeout $((60 * ${LIMITX:-1})) pidwrap 20 4 301 2>&1); rc=$?
	expect "pidwrap exit $rc, pid_max $(cat /proc/sys/kernel/pid_max): $out" [ $rc = 0 ]
	note "$out"
	expect_settled
}

# enable 1 -> 0 -> 1 at runtime under 4 spinners: files vanish, come back,
# and the numbers after the return are sane and restarted.
case_toggle() {
	local i r ton wall t f k v before
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	spinners 4 20
	sleep 2
	before=$(psi_val $PSI_DIR/cpu some total)
	r=$(kit write $ENABLE 0)
	expect "write 0 to enable: $r" [ "$r" = ok ]
	expect "files still present after enable=0" files_absent
	expect "enable reads '$(cat $ENABLE)' after writing 0, want N" [ "$(cat $ENABLE)" = N ]
	note "after 0: $PSI_DIR $([ -e $PSI_DIR ] && echo remains || echo removed)"
	sleep 2
	# taken before the write: with 4 spinners on 2 vCPUs the shell may wait
	# a while for a CPU, and a later timestamp would understate the time the
	# module has been counting since it was re-enabled
	ton=$(kit now)
	r=$(kit write $ENABLE 1)
	expect "write 1 to enable: $r" [ "$r" = ok ]
	expect "files missing after enable=1" files_exist
	expect "enable reads '$(cat $ENABLE)' after writing 1, want Y" [ "$(cat $ENABLE)" = Y ]
	sleep 3
	snap $C/b $PSI_DIR/cpu $PSI_DIR/io $PSI_DIR/memory
	wall=$(($(snap_t $C/b) - ton))
	expect_format $PSI_DIR/cpu cpu
	expect_format $PSI_DIR/io
	expect_format $PSI_DIR/memory
	for f in $RESFILES; do
		for k in some full; do
			v=$(snap_val $C/b $PSI_DIR/$f $k avg10)
			expect "$f $k avg10=$v after re-enable, want <= 100" fle "${v:-999}" 100
			t=$(snap_val $C/b $PSI_DIR/$f $k total)
			# restarted: no more stall than wall time since re-enable (+10%, +0.1 s)
			expect "$f $k total=$t ${wall}us after re-enable: not restarted" \
				ile "$t" $((wall * 11 / 10 + 100000))
		done
	done
	note "cpu some total ${before}us before disable, $(snap_val $C/b $PSI_DIR/cpu some total)us at ${wall}us after re-enable, avg10=$(snap_val $C/b $PSI_DIR/cpu some avg10)"
}

# More than the toggle case: enable 1->0->1 eight times, then rmmod, while
# spinners, an O_DIRECT reader and a hackbench loop keep tasks running,
# sleeping in iowait, forking and exiting. Catches races between detach and
# probes and counts that go wrong for tasks seen only half (the module
# reports "task count underflows" when it stops; none may appear).
case_churn() {
	local i r m ton wall f t hb
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	m=$(dmesg_mark)
	bg spin 40; bg spin 40
	bg dio read $DISK 40
	# stops at the flag file, not by a kill: a killed loop would leave its
	# current hackbench running into the quiet window below
	bg sh -c "while [ ! -f $C/stop ]; do hackbench -p -g 2 -l 50 > /dev/null 2>&1; done"
	hb=$!
	sleep 1
	for i in 1 2 3 4 5 6 7 8; do
		r=$(kit write $ENABLE 0)
		[ "$r" = ok ] || bad "toggle $i: write 0: $r"
		sleep 0.3
		ton=$(kit now)
		r=$(kit write $ENABLE 1)
		[ "$r" = ok ] || bad "toggle $i: write 1: $r"
		files_exist || bad "toggle $i: files missing after enable=1"
		sleep 0.5
	done
	ok "8 toggles under load"
	sleep 2
	snap $C/b $PSI_DIR/cpu $PSI_DIR/io $PSI_DIR/memory
	wall=$(($(snap_t $C/b) - ton))
	for f in $RESFILES; do
		if [ $f = cpu ]; then expect_format $PSI_DIR/$f cpu; else expect_format $PSI_DIR/$f; fi
		t=$(snap_val $C/b $PSI_DIR/$f some total)
		expect "$f some total=$t ${wall}us after the last re-enable: not restarted" \
			ile "$t" $((wall * 11 / 10 + 100000))
	done
	note "after last re-enable (${wall}us): cpu some+$(snap_val $C/b $PSI_DIR/cpu some total) io some+$(snap_val $C/b $PSI_DIR/io some total) io full+$(snap_val $C/b $PSI_DIR/io full total)"
	# stop the load: whatever the toggles left behind must not keep counting
	touch $C/stop
	wait $hb
	bg_kill
	expect_quiet 3 || debug_state
	r=$(debug_underflows)
	[ -z "$r" ] || expect "psi_mod debugfs reports $r underflows" [ "$r" = 0 ]
	r=$(timeout 30 rmmod psi_mod 2>&1)
	expect "rmmod under load: $r" eval '! mod_loaded'
	r=$(dmesg_since $m | grep -iE 'underflow|psi_mod.*(bug|error)' | head -2 | tr '\n' '|')
	expect "psi_mod complained while stopping: $r" [ -z "$r" ]
}

# A fork storm on both vCPUs: a new task's word is 0 (copy_process()
# zeroes psi_flags; the pid table's entry was zeroed by the pid's last
# owner), which means "not counted", so counting it where it is woken
# takes no other CPU's lock. Only a word that names another CPU takes the
# relocation slow path, which debugfs counts (relocations=): for forks,
# rare. The forks are /proc/stat's "processes" growth.
forks_now() { awk '$1 == "processes" { print $2 }' /proc/stat; }
relocs_now() {
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^relocations=/) { split($i, a, "="); s += a[2] } }
		END { print s + 0 }' /sys/kernel/debug/psi_mod/state
}
case_forkreloc() {
	local r f0 f1 r0 r1 n d pw
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	r=$(kit write $ENABLE 0)$(kit write $ENABLE 1)
	expect "enable 0 and 1: $r" [ "$r" = okok ]
	sleep 1
	f0=$(forks_now) r0=$(relocs_now)
	# each round reaps its children: none outlives the storm
	bg sh -c "while [ ! -f $C/stop-fork ]; do /bin/true & /bin/true; wait; done"
	bg sh -c "while [ ! -f $C/stop-fork ]; do /bin/true & /bin/true; wait; done"
	# the debug kernel forks about 10 times slower
	sleep $((8 * ${LIMITX:-1}))
	touch $C/stop-fork
	for pw in $(cat $C/pids); do wait $pw; done
	rm -f $C/pids $C/stop-fork
	f1=$(forks_now) r1=$(relocs_now)
	n=$((f1 - f0)) d=$((r1 - r0))
	note "$n forks, $d relocation slow paths ($((d * 1000 / (n > 0 ? n : 1))) per 1000 forks)"
	expect "only $n forks, want >= 100" ige "$n" 100
	expect "$d relocation slow paths for $n forks, want < 1 per 20 forks" igt "$n" $((d * 20))
	expect_settled
}

# percpu_figures SNAP (of the per-CPU and system-wide cpu files, the debug
# view and /proc/schedstat): its time, cpu0's and cpu1's some totals, the
# system-wide one, each CPU's non-idle time, the time tasks waited on
# cpu0's run queue and the waits that ended in a run there (sched_info:
# run_delay in ns, pcount)
percpu_figures() {
	awk -v p="$PSI_DIR/percpu/cpu" -v s="$PSI_DIR/cpu" -v d=/sys/kernel/debug/psi_mod/state '
		$1 == "T" { t = $2 }
		$1 == p && $3 == "some" { sub("total=", "", $7); c[$2] = $7 }
		$1 == s && $2 == "some" { sub("total=", "", $6); y = $6 }
		$1 == d && $2 == "cpu_nonidle_us" { n0 = $3; n1 = $4 }
		$1 == "/proc/schedstat" && $2 == "cpu0" { q = $10; w = $11 }
		END { print t, c["cpu0"], c["cpu1"], y, n0, n1, q, w }' "$1"
}

# The per-CPU view (percpu=1). Absent by default. With it, each online
# CPU's two lines per file, "cpu<N> " before the system-wide format. A
# spinner pinned to cpu0 and two to cpu1, this shell on cpu1: cpu1 stalls
# all the time, cpu0 only while a kernel thread woken there waits behind
# its spinner: at most the time the scheduler counts tasks waiting on
# cpu0's run queue (/proc/schedstat's run_delay, from the same enqueue
# stamp to a clock read before the switch, added when a wait ends: read
# once cpu0's spinner is gone, so that a wait in progress at the window's
# end is in it whole), and a few us a wait for that clock read; phantom
# or misplaced pressure reads 50-100%. A debug kernel's own threads make
# that wait large. The system-wide total is the kernel's
# weighting of the per-CPU times, each CPU by its non-idle time (debugfs
# cpu_nonidle_us): within the accuracy target of the side-by-side
# suites, the weights taken over the whole window rather than per period.
# CPU hotplug: the files list the online CPUs.
case_percpu() {
	local d=$PSI_DIR/percpu f r m wall c0 c1 n0 n1 sys want l a0 a1 pa pm q0 q1 p0
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	expect "$d exists without percpu=1" [ ! -e $d ]
	ensure_unloaded || { bad "cannot unload the module first"; return; }
	r=$(mod_load percpu=1)
	expect "insmod percpu=1: $r" [ "$r" = ok ]
	for f in cpu io memory; do
		l=$(wc -l < $d/$f)
		expect "$d/$f: $l lines, want 2 per online CPU ($(nproc))" [ "$l" = $((2 * $(nproc))) ]
		r=$(while read -r c rest; do
			case $c in cpu[0-9]*) ;; *) echo "column '$c'"; continue ;; esac
			echo "$rest" | grep -Eq "$PSI_RE" || echo "line '$rest'"
		done < $d/$f)
		expect "$d/$f: not cpuN + the system-wide format: $r" [ -z "$r" ]
	done
	m=$(dmesg_mark)
	r=$(kit write $d/memory "some 150000 1000000")
	expect "trigger write on $d/memory: '$r', want EINVAL" [ "${r%% *}" = EINVAL ]
	r=$(dmesg_since $m | tee -a $EXPECTED | grep -c 'per-CPU files take no triggers')
	expect "the refused write's reason in dmesg: $r lines, want 1" [ "$r" = 1 ]
	taskset -p -c 1 $$ > /dev/null
	taskset -c 0 spin 20 & p0=$!; echo $p0 >> $C/pids
	bg taskset -c 1 spin 20; bg taskset -c 1 spin 20
	sleep 3
	# every figure from one process, back to back: a debug kernel takes
	# a tenth of a second and more per process between separate reads
	snap $C/pa $d/cpu $PSI_DIR/cpu /sys/kernel/debug/psi_mod/state /proc/schedstat
	sleep 10
	snap $C/pb $d/cpu $PSI_DIR/cpu /sys/kernel/debug/psi_mod/state /proc/schedstat
	# cpu0's spinner gone, the waits there in progress at the window's
	# end end too, whole
	kill -9 $p0; wait $p0 2>/dev/null
	sleep 0.2
	q1=$(awk '$1 == "cpu0" { print $9, $10 }' /proc/schedstat)
	# the averages, weighted alike (both CPUs non-idle throughout): the
	# system-wide avg10 is the per-CPU ones' mean; a fold may fall between
	# two reads, so one of the system-wide reads beside must match
	a0=$(psi_val $PSI_DIR/cpu some avg10)
	pa=$(awk '$2 == "some" { sub("avg10=", "", $3); printf "%s ", $3 }' $d/cpu)
	a1=$(psi_val $PSI_DIR/cpu some avg10)
	pm=$(echo $pa | awk '{ print ($1 + $2) / 2 }')
	expect "cpu some avg10: per CPU $pa (mean $pm), system-wide $a0 / $a1: want one within 1.00" \
		awk -v m=$pm -v a=$a0 -v b=$a1 'BEGIN { d = a - m; e = b - m; exit !(d * d <= 1 || e * e <= 1) }'
	expect "cpu1 some avg10 $pa: want >= 60 after 13 s stalled, <= 100" \
		awk -v p="$pa" 'BEGIN { split(p, v, " "); exit !(v[2] >= 60 && v[2] <= 100) }'
	bg_kill
	taskset -p -c 0-$(($(nproc) - 1)) $$ > /dev/null
	set -- $(percpu_figures $C/pa) $(percpu_figures $C/pb) $q1
	wall=$((${9} - $1)) c0=$((${10} - $2)) c1=$((${11} - $3))
	sys=$((${12} - $4)) n0=$((${13} - $5)) n1=$((${14} - $6))
	q0=$(((${17} - $7) / 1000)) q1=$((${18} - $8))
	want=$(( (c0 * n0 + c1 * n1) / (n0 + n1) ))
	expect "cpu1 some +$c1 us in $wall us, want >= 90%" pct_ge $c1 $wall 90
	expect "cpu0 some +$c0 us in $wall us, want at most the scheduler's wait there, +${q0} us in $q1 waits, + 10 us a wait + 1 us/ms" \
		ile $c0 $((q0 + q1 * 10 + wall / 1000))
	expect "system-wide cpu some +$sys us, want $want +- (2% + 1 us/ms) (weights $n0 $n1)" \
		ile $(( sys > want ? sys - want : want - sys )) $((want / 50 + wall / 1000))
	note "wall $wall us: cpu0 some +$c0 (non-idle $n0, the run queue's wait +$q0 in $q1 waits), cpu1 +$c1 (non-idle $n1); system +$sys, weighted $want; avg10 per CPU $pa, system $a0 $a1"
	# an offline CPU is left out, and back when it comes back
	if echo 0 > /sys/devices/system/cpu/cpu1/online; then
		r=$(awk '{ print $1 }' $d/io | sort -u | tr '\n' ' ')
		expect "cpu1 offline: $d/io has CPUs '$r', want 'cpu0 '" [ "$r" = "cpu0 " ]
		echo 1 > /sys/devices/system/cpu/cpu1/online
		r=$(awk '{ print $1 }' $d/io | sort -u | tr '\n' ' ')
		expect "cpu1 online again: $d/io has CPUs '$r', want 'cpu0 cpu1 '" [ "$r" = "cpu0 cpu1 " ]
	else
		bad "cannot take cpu1 offline"
	fi
	ensure_unloaded && mod_load > /dev/null
	expect "$d remains after a reload without percpu=1" [ ! -e $d ]
}

# irq pressure (irq=1). Without the parameter no irq file and no interrupt
# probe runs (the per-CPU interrupt counters stand still). With it:
# <dir>/irq is one full line in the kernel's format, percpu/irq beside the
# others; it stays near zero while idle and grows under interrupts that
# land on a running task: a 50 us interval timer on a spinner (a local
# timer interrupt each time) and loopback UDP traffic (the receive softirq
# runs in the sender), each pinned to cpu1, where the growth must show
# (the exact amounts are compared with the kernel's own irq pressure on a
# kernel that has it: tests/vm/irq-compare.sh). A some trigger is EINVAL,
# as on the kernel; a full trigger signals under the timer load.
irq_state() {	# the debug view's per-CPU interrupt lines, on one line
	grep '^cpu[0-9]* irq_us' /sys/kernel/debug/psi_mod/state | tr '\n' ';'
}
case_irq() {
	local f=$PSI_DIR/irq d=$PSI_DIR/percpu r a b t0 t1 wall g c1 c0 l n
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	expect "$f exists without irq=1" [ ! -e $f ]
	a=$(irq_us); bg taskset -c 1 irqload timer 3 50; sleep 3; bg_kill; b=$(irq_us)
	expect "interrupt time counted without irq=1: $a -> $b us" [ "$a" = "$b" ]
	ensure_unloaded || { bad "cannot unload the module first"; return; }
	r=$(mod_load irq=1 percpu=1)
	expect "insmod irq=1 percpu=1: $r" [ "$r" = ok ]
	expect_irq_file $f
	l=$(wc -l < $d/irq)
	r=$(awk '$1 !~ /^cpu[0-9]+$/ || $2 != "full"' $d/irq)
	expect "$d/irq: $l lines, want 1 per online CPU ($(nproc)), cpuN full: '$r'" eval '[ "$l" = $(nproc) ] && [ -z "$r" ]'
	# idle: what the ticks with a task find (the test shell's sleeps)
	# (the per-CPU interval counts before and after go into the note:
	# they tell a long interval from many)
	l=$(irq_state)
	t0=$(kit now) a=$(irq_total $f); sleep 5; t1=$(kit now) b=$(irq_total $f)
	g=$((b - a)) wall=$((t1 - t0))
	expect "idle: irq +$g us in $wall us, want <= 1%" ile $g $((wall / 100))
	note "idle: irq full +$g us in $wall us (before: $l after: $(irq_state))"
	# The trigger outlives the storm by a second on each side: its
	# creation may flip psi_mod's static key (the first privileged
	# trigger since the load starts the fast path), whose site sits
	# in the charge at every local timer interrupt, and QEMU's
	# multi-threaded TCG can run a stale translation of a site patched
	# while the other vCPU runs it 20000 times a second
	# (docs/reliability.md, "The TCG int3 hang").
	trig watch $f 'full 20000 1000000\n' 8 poll > $C/trig 2>&1 &
	sleep 1
	t0=$(kit now) a=$(irq_total $f) c1=$(irq_total $d/irq cpu1) c0=$(irq_total $d/irq cpu0)
	r=$(taskset -c 1 irqload timer 6 50)
	t1=$(kit now) b=$(irq_total $f)
	c1=$(($(irq_total $d/irq cpu1) - c1)) c0=$(($(irq_total $d/irq cpu0) - c0))
	g=$((b - a)) wall=$((t1 - t0))
	wait
	n=$(awk '$1 == "events" { print $2 }' $C/trig)
	expect "timer storm on cpu1: irq +$g us in $wall us, want >= 1%" ige $g $((wall / 100))
	expect "timer storm on cpu1: cpu1 irq +$c1 us, cpu0 +$c0 us: want cpu1 the larger" igt $c1 $c0
	expect "full 20 ms / 1 s trigger under the timer storm: ${n:-no} events, want >= 2" ige "${n:-0}" 2
	note "timer storm ($r, trigger $(tail -1 $C/trig)): irq full +$g us in $wall us (cpu0 +$c0, cpu1 +$c1)"
	t0=$(kit now) a=$(irq_total $f) c1=$(irq_total $d/irq cpu1)
	r=$(taskset -c 1 irqload net 5)
	t1=$(kit now) b=$(irq_total $f) c1=$(($(irq_total $d/irq cpu1) - c1))
	g=$((b - a)) wall=$((t1 - t0))
	expect "loopback traffic on cpu1 ($r): irq +$g us in $wall us, want >= 1%" ige $g $((wall / 100))
	note "loopback traffic ($r): irq full +$g us in $wall us (cpu1 +$c1)"
	note "$(irq_state)"
	ensure_unloaded && mod_load > /dev/null
	expect "$f remains after a reload without irq=1" [ ! -e $f ]
}

# bad parameters at insmod and at runtime are refused with EINVAL
case_badparams() {
	local p r m e
	ensure_unloaded || { bad "cannot unload the module first"; return; }
	for p in enable=2 memstall_tracepoints=2 percpu=2 cgroups=2 proc_dir=a/b proc_dir=.. proc_dir=. proc_dir=; do
		m=$(dmesg_mark)
		r=$(mod_load "$p")
		dmesg_since $m >> $EXPECTED
		expect "insmod $p: got '$r', want EINVAL" [ "${r%% *}" = EINVAL ]
		if mod_loaded; then
			bad "module loaded with $p"
			mod_unload > /dev/null
		fi
		note "$p: ${r%% *}"
	done
	ensure_loaded || { bad "plain insmod failed after the bad ones"; return; }
	e=$(stat -c %a $ENABLE)
	note "enable mode 0$e"
	for v in 2 foo; do
		m=$(dmesg_mark)
		r=$(kit write $ENABLE $v)
		dmesg_since $m >> $EXPECTED
		expect "write '$v' to enable: got '$r', want EINVAL" [ "${r%% *}" = EINVAL ]
		note "enable<-$v: ${r%% *}"
	done
	expect "enable reads '$(cat $ENABLE)' after bad writes, want Y" [ "$(cat $ENABLE)" = Y ]
	expect "files gone after bad writes to enable" files_exist
}

# rmmod while readers loop on the files and hold fds open
case_rmmod_readers() {
	local i r rc n hold
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	for i in 1 2 3; do
		bg sh -c "while :; do cat $PSI_DIR/cpu $PSI_DIR/io $PSI_DIR/memory > /dev/null 2>&1; done"
	done
	bg sh -c "exec 3< $PSI_DIR/cpu; sleep 30"
	bg sh -c "exec 3< $PSI_DIR/memory; while :; do cat <&3 > /dev/null 2>&1; sleep 0.1; done"
	# same fd read from offset 0 in a loop, before and after the removal
	kit hold $PSI_DIR/io 8 > $C/hold 2>&1 & hold=$!
	echo $hold >> $C/pids
	sleep 2
	r=$(timeout 30 rmmod psi_mod 2>&1); rc=$?
	expect "rmmod under readers: exit $rc $r" [ $rc = 0 ]
	expect "module still loaded after rmmod" eval '! mod_loaded'
	expect "$PSI_DIR still exists after rmmod" [ ! -e $PSI_DIR ]
	wait $hold; rc=$?
	expect "fd holder (kit hold) exit $rc: $(cat $C/hold)" [ $rc = 0 ]
	# still responsive: fork a batch of processes and use the clock
	n=0
	for i in 1 2 3 4 5 6 7 8 9 10; do ( true ) && n=$((n + 1)); done
	expect "system unresponsive after rmmod ($n/10 forks)" [ $n = 10 ]
	expect "sleep broken after rmmod" sleep 0.2
	note "$(cat $C/hold)"
}

# 20 quick load/unload cycles
case_loadunload() {
	local i r fails=0 t0 t1
	ensure_unloaded || { bad "cannot unload the module first"; return; }
	t0=$(kit now)
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		r=$(mod_load)
		if [ "$r" != ok ]; then bad "cycle $i insmod: $r"; fails=$((fails + 1)); fi
		[ -e $PSI_DIR/cpu ] || { bad "cycle $i: no $PSI_DIR/cpu"; fails=$((fails + 1)); }
		cat $PSI_DIR/memory > /dev/null 2>&1 || { bad "cycle $i: memory unreadable"; fails=$((fails + 1)); }
		r=$(mod_unload)
		if [ $? != 0 ]; then bad "cycle $i rmmod: $r"; fails=$((fails + 1)); fi
		[ ! -e $PSI_DIR ] || { bad "cycle $i: $PSI_DIR left after rmmod"; fails=$((fails + 1)); }
		[ $fails -lt 3 ] || break
		[ $fails != 0 ] || ok "cycle $i"
	done
	t1=$(kit now)
	note "$i cycles in $(((t1 - t0) / 1000)) ms, $fails failures"
}

# --- pressure triggers (docs/triggers.md)

# Every ABI row of the write (trig_rows, cases.sh): the running kernel's
# answers (trig_rows_want).
# A trigger with nothing to report: poll sleeps to its timeout.
case_trig_abi() {
	local r
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	trig_rows $PSI_DIR > $C/rows
	trig_rows_want > $C/want
	r=$(rows_diff $C/want $C/rows)
	expect "rows differ from the kernel's (< want, > got): $r" [ -z "$r" ]
	note "$(tr '\n' ';' < $C/rows)"
	r=$(idle_poll $PSI_DIR)
	expect "poll on an idle trigger: '$r', want timeout" [ "$r" = timeout ]
	r=$(debug_line triggers)
	expect "triggers left after the rows closed: '$r', want '0 0'" [ "$r" = "0 0" ]
}

# interrupts of one /proc/interrupts row (CAL, TLB, ...), all CPUs
ipis() { awk -v k="$1:" '$1 == k { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i } END { print s + 0 }' /proc/interrupts; }

# A privileged trigger opened, written and closed in a loop, with no
# other privileged trigger: the probes' static key must not flip per
# trigger (each flip patches the probes' code: text_poke_bp(), three
# function-call IPIs to every other CPU). It is set when the fast path's
# thread is made and cleared when the thread goes (enable=0, unload).
# The loop and that thread run on cpu0 and a spinner keeps cpu1 busy: a
# CPU that idles beside a busy one gets function-call IPIs from the
# scheduler itself (the tick's kicks of the NOHZ idle balancer,
# nohz_balancer_kick(); wakeups
# queued to it), which are not the module's.
poll_pid() { grep -ls '^psi_mod_poll$' /proc/[0-9]*/comm 2>/dev/null | head -1 | cut -d/ -f3; }
case_trig_ipi() {
	local n=400 c0 c1 t0 t1 r p
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	r=$(debug_line triggers)
	expect "triggers before the loop: '$r', want '0 0'" [ "$r" = "0 0" ]
	# the thread, if no case made it yet
	r=$(trig cycle $PSI_DIR/memory 'some 150000 1000000\n' 1)
	p=$(poll_pid)
	expect "no psi_mod_poll thread after a privileged trigger ($r)" [ -n "$p" ]
	[ -n "$p" ] || return
	taskset -p -c 0 "$p" > /dev/null
	bg taskset -c 1 spin $((60 * ${LIMITX:-1}))
	sleep 1
	c0=$(ipis CAL) t0=$(ipis TLB)
	r=$(taskset -c 0 trig cycle $PSI_DIR/memory 'some 150000 1000000\n' $n)
	c1=$(ipis CAL) t1=$(ipis TLB)
	bg_kill
	taskset -p -c 0-$(($(nproc) - 1)) "$p" > /dev/null
	expect "trig cycle: '$r', want 'cycle $n ok'" [ "$r" = "cycle $n ok" ]
	expect "function-call IPIs +$((c1 - c0)) over $n privileged open-write-close cycles, want < $((n / 10))" \
		[ $((c1 - c0)) -lt $((n / 10)) ]
	note "$n cycles on cpu0 with the poll thread, a spinner on cpu1: CAL +$((c1 - c0)), TLB +$((t1 - t0))"
}


# 4 spinners on 2 vCPUs: a 10% / 1 s cpu some trigger (privileged: the
# fast path) fires about once per second, never twice within a window.
case_trig_cpu() {
	local i n g
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	spinners 4 12
	trig watch $PSI_DIR/cpu 'some 100000 1000000\n' 8 poll > $C/w 2>&1
	n=$(events_n $C/w) g=$(events_gaps $C/w)
	expect "cpu some 100ms/1s events in 8 s under 4 spinners: ${n:-none}, want >= 4: $(tr '\n' ' ' < $C/w)" ige "${n:-0}" 4
	expect "cpu events only ${g} ms apart, want >= 900 (one per window)" eval '[ "$g" = - ] || ige "$g" 900'
	note "poll: $n events, min gap ${g} ms; poll work runs $(debug_line poll_work_runs), $(debug_line poll_work_us) us"
}

# O_DIRECT reads: an io some trigger, waited for with epoll.
case_trig_io() {
	local n
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	bg dio read $DISK 10
	trig watch $PSI_DIR/io 'some 100000 1000000\n' 8 epoll > $C/w 2>&1
	n=$(events_n $C/w)
	expect "io some events in 8 s of O_DIRECT reads: ${n:-none}, want >= 2: $(tr '\n' ' ' < $C/w)" ige "${n:-0}" 2
	note "epoll: $n events, min gap $(events_gaps $C/w) ms"
}

# Memory hogs in a guest without swap: reclaim, then the OOM killer, a
# few tens of ms of memory stall in all, in bursts around the kills. A
# 1 ms / 1 s memory some trigger, waited for with select(): each burst
# crosses it. Three hogs, one after another, so that there are several.
case_trig_mem() {
	local n a b w
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	a=$(psi_val $PSI_DIR/memory some total)
	trig watch $PSI_DIR/memory 'some 1000 1000000\n' 12 select > $C/w 2>&1 &
	w=$!
	sleep 1
	bg memhog 420 10; bg memhog 420 10
	sleep 3
	bg memhog 420 6
	wait $w
	b=$(psi_val $PSI_DIR/memory some total)
	n=$(events_n $C/w)
	expect "memory some events under two hogs: ${n:-none}, want >= 1 (memory some +$((b - a)) us): $(tr '\n' ' ' < $C/w)" ige "${n:-0}" 1
	note "select: $n events at $(awk '$1 == "event" { printf "%s ", $2 }' $C/w)ms; memory some +$((b - a)) us"
}

# Idle: no event; and a trigger on a state nothing enters costs no
# wakeup: the fast path runs once when the trigger is set, then not again.
case_trig_idle() {
	local r0 r1 nc ni nm
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	trig watch $PSI_DIR/cpu 'some 100000 1000000\n' 6 poll > $C/c 2>&1 &
	trig watch $PSI_DIR/io 'some 100000 1000000\n' 6 epoll > $C/i 2>&1 &
	trig watch $PSI_DIR/memory 'some 100000 1000000\n' 6 select > $C/m 2>&1 &
	wait
	nc=$(events_n $C/c) ni=$(events_n $C/i) nm=$(events_n $C/m)
	expect "idle cpu events: ${nc:-?}, want 0" [ "$nc" = 0 ]
	expect "idle io events: ${ni:-?}, want 0" [ "$ni" = 0 ]
	expect "idle memory events: ${nm:-?}, want 0" [ "$nm" = 0 ]
	r0=$(debug_line poll_work_runs)
	trig watch $PSI_DIR/memory 'full 100000 1000000\n' 6 poll > $C/f 2>&1
	r1=$(debug_line poll_work_runs)
	expect "fast path ran $((r1 - r0)) times in 6 idle s with a memory full trigger, want <= 2" ile $((r1 - r0)) 2
	note "idle 6 s: events cpu $nc io $ni memory $nm; memory-full trigger alone: $((r1 - r0)) poll work runs"
}

# Unprivileged (uid 65534): a 1 s window is EINVAL, a 2 s one works and
# is evaluated by the averaging work (no fast path).
case_trig_unpriv() {
	local i n r
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	if ! unpriv_triggers; then
		r=$(trig -u 65534 write $PSI_DIR/cpu 'some 100000 2000000\n')
		expect "uid 65534 on 0444 files: '$r', want the open's EACCES" \
			eval 'case "$r" in open*EACCES) true ;; *) false ;; esac'
		note "before the 6.5 rules: uid 65534 cannot open for writing ($r)"
		return
	fi
	r=$(trig -u 65534 write $PSI_DIR/cpu 'some 100000 1000000\n')
	expect "uid 65534, 1 s window: '$r', want EINVAL" [ "$r" = EINVAL ]
	spinners 4 14
	trig -u 65534 watch $PSI_DIR/cpu 'some 100000 2000000\n' 11 poll > $C/w 2>&1 &
	sleep 2
	r=$(debug_line triggers)
	wait $!
	n=$(events_n $C/w)
	expect "unprivileged trigger counted as '$r', want '1 0' (averaging work, no fast path)" [ "$r" = "1 0" ]
	expect "uid 65534 2 s trigger events in 11 s under spinners: ${n:-none}, want >= 3: $(tr '\n' ' ' < $C/w)" ige "${n:-0}" 3
	note "1 s: EINVAL; 2 s: $n events at $(awk '$1 == "event" { printf "%s ", $2 }' $C/w)ms; triggers $r"
}

# Wait until every `trig many` writing to FILE... has reported (its triggers
# all written, or its first failure): seconds on a stock kernel, minutes
# on the KASAN one under the spinners. The holders stay until bg_kill.
many_ready() {
	local f i=0 all
	while [ $i -lt 300 ]; do
		# every file, in one pass: a file that becomes ready while
		# another is looked at must not end the wait for the rest
		all=1
		for f in "$@"; do
			grep -q '^many ' "$f" 2>/dev/null || { all=0; break; }
		done
		[ $all = 1 ] && return 0
		sleep 1; i=$((i + 1))
	done
	return 1
}

# Thousands of unprivileged triggers (4 x 2500, one uid) under 4 spinners:
# the averaging work's time (triggers included) stays a small share of a
# CPU. Measured against the same 8 s without them.
case_trig_many() {
	local i t0 t1 w0 w1 u0 u1 n base cost r
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	if ! unpriv_triggers; then
		r=$(trig -u 65534 many $PSI_DIR/cpu 'some 100000 2000000\n' 1 0)
		expect "uid 65534 on 0444 files: '$r', want 'many 0 ok EACCES at 0'" \
			[ "$r" = "many 0 ok EACCES at 0" ]
		note "before the 6.5 rules there are no unprivileged triggers ($r)"
		return
	fi
	spinners 4 300
	t0=$(kit now) w0=$(debug_line avgs_work_us)
	sleep 8
	t1=$(kit now) w1=$(debug_line avgs_work_us)
	base=$(((w1 - w0) * 100000 / (t1 - t0)))
	for i in 1 2 3 4; do
		bg trig -u 65534 many $PSI_DIR/cpu 'some 100000 2000000\n' 2500 600 > $C/m$i 2>&1
	done
	many_ready $C/m1 $C/m2 $C/m3 $C/m4
	n=$(debug_line triggers); n=${n%% *}
	expect "unprivileged triggers set up: ${n:-0}, want 10000: $(cat $C/m1 $C/m2 $C/m3 $C/m4 | tr '\n' ' ')" [ "${n:-0}" = 10000 ]
	t0=$(kit now) w0=$(debug_line avgs_work_us) u0=$(debug_line trigger_updates)
	sleep 8
	t1=$(kit now) w1=$(debug_line avgs_work_us) u1=$(debug_line trigger_updates)
	cost=$(((w1 - w0) * 100000 / (t1 - t0)))
	expect "averaging work with 10000 triggers: $((w1 - w0)) us in $(((t1 - t0) / 1000)) ms = $cost/1000 %, want < 3%" [ "$cost" -lt 3000 ]
	expect "the triggers were evaluated: updates ${u0%% *} -> ${u1%% *}" igt "${u1%% *}" "${u0%% *}"
	note "averaging work: without triggers $base/1000 % of a CPU, with 10000 unprivileged $cost/1000 % ($((w1 - w0)) us in $(((t1 - t0) / 1000)) ms, $((${u1%% *} - ${u0%% *})) trigger updates, events $(debug_line trigger_events))"
	bg_kill
	wait
}

# Thousands of privileged triggers (4 x 500 as root, 1 s windows: the
# fast path, updated every 100 ms while the state is stalled) under 4
# spinners: the fast-path work's time stays a small share of a CPU.
# Measured against the same 8 s with one such trigger.
case_trig_many_priv() {
	local i t0 t1 w0 w1 u0 u1 e0 e1 n base cost
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	spinners 4 300
	bg trig many $PSI_DIR/cpu 'some 100000 1000000\n' 1 600 > $C/one 2>&1
	many_ready $C/one
	t0=$(kit now) w0=$(debug_line poll_work_us)
	sleep 8
	t1=$(kit now) w1=$(debug_line poll_work_us)
	base=$(((w1 - w0) * 100000 / (t1 - t0)))
	for i in 1 2 3 4; do
		bg trig many $PSI_DIR/cpu 'some 100000 1000000\n' 500 600 > $C/m$i 2>&1
	done
	many_ready $C/m1 $C/m2 $C/m3 $C/m4
	n=$(debug_line triggers); n=${n##* }
	expect "privileged triggers set up: ${n:-0}, want 2001: $(cat $C/m1 $C/m2 $C/m3 $C/m4 | tr '\n' ' '); created $(debug_line triggers_created), destroyed $(debug_line triggers_destroyed), now $(debug_line triggers); fds $(for p in $(cat $C/pids); do ls /proc/$p/fd 2>/dev/null | wc -l; done | tr '\n' ' ')" [ "${n:-0}" = 2001 ]
	t0=$(kit now) w0=$(debug_line poll_work_us) u0=$(debug_line trigger_updates) e0=$(debug_line trigger_events)
	sleep 8
	t1=$(kit now) w1=$(debug_line poll_work_us) u1=$(debug_line trigger_updates) e1=$(debug_line trigger_events)
	cost=$(((w1 - w0) * 100000 / (t1 - t0)))
	expect "fast path with 2001 triggers: $((w1 - w0)) us in $(((t1 - t0) / 1000)) ms = $cost/1000 %, want < 5%" [ "$cost" -lt 5000 ]
	expect "the triggers were updated: fast-path updates ${u0##* } -> ${u1##* }" igt "${u1##* }" "${u0##* }"
	expect "events signalled: fast path ${e0##* } -> ${e1##* }" igt "${e1##* }" "${e0##* }"
	note "fast-path work: with 1 privileged trigger $base/1000 % of a CPU, with 2001 $cost/1000 % ($((w1 - w0)) us in $(((t1 - t0) / 1000)) ms, $((${u1##* } - ${u0##* })) updates, $((${e1##* } - ${e0##* })) events)"
	bg_kill
	wait
}

# A poller asleep on a trigger when the module goes: woken with
# EPOLLERR | EPOLLPRI (select: exceptional), at once, for poll, epoll and
# select, by rmmod and by enable=0; a holder of trigger fds that does not
# poll outlives the module and closes them afterwards. No crash: the dmesg
# case after this one checks the log.
trig_wait_gone() {	# HOW MODE
	local r out ms
	rm -f $C/w	# the previous call's "waiting" (see fuse_up)
	trig wait $PSI_DIR/memory 'some 1000000 1000000\n' 60 $2 > $C/w 2>&1 &
	for r in 1 2 3 4 5 6 7 8 9 10; do grep -q waiting $C/w 2>/dev/null && break; sleep 0.2; done
	sleep 0.5
	if [ $1 = rmmod ]; then r=$(timeout 30 rmmod psi_mod 2>&1; echo rc=$?)
	else r=$(kit write $ENABLE 0); fi
	wait $!
	out=$(tail -1 $C/w) ms=${out##* }
	case $2 in
	select) expect "$1, select: '$out', want woke PRI" [ "${out% *}" = "woke PRI" ] ;;
	*) expect "$1, $2: '$out', want woke with ERR and PRI" eval 'case "$out" in "woke "*PRI*ERR*) true ;; *) false ;; esac' ;;
	esac
	expect "$1, $2: woke after ${ms} ms, want < 3000" ile "${ms:-99999}" 3000
	note "$1/$2: $out ($r)"
	if [ $1 = rmmod ]; then mod_load > /dev/null; else kit write $ENABLE 1 > /dev/null; fi
}
case_trig_unload() {
	local m r u want
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	for m in poll epoll select; do trig_wait_gone rmmod $m; done
	for m in poll epoll select; do trig_wait_gone enable0 $m; done
	# fds with triggers (privileged and not), held across the unload
	# (before the 6.5 rules every trigger is privileged, and root's)
	trig many $PSI_DIR/memory 'some 100000 1000000\n' 100 6 > $C/h1 2>&1 &
	if unpriv_triggers; then u="-u 65534" want="100 100"; else u= want="0 200"; fi
	trig $u many $PSI_DIR/io 'some 100000 2000000\n' 100 6 > $C/h2 2>&1 &
	sleep 2
	r=$(debug_line triggers)
	expect "held triggers: '$r', want '$want'" [ "$r" = "$want" ]
	r=$(timeout 30 rmmod psi_mod 2>&1; echo rc=$?)
	expect "rmmod with 200 trigger fds open: $r" [ "$r" = rc=0 ]
	wait
	expect "module still loaded" eval '! mod_loaded'
	mod_load > /dev/null
	expect "reload after: files missing" [ -f $PSI_DIR/cpu ]
	note "holders: $(cat $C/h1 $C/h2 | tr '\n' ' ')"
}

# The start's unwinding, with the fail_start= test aid (psi_mod.c): the
# start fails right after each of its steps in turn (1 aggregation, 2
# triggers, 3 cgroups, 4 probes, 5 irq, 6 files; irq=1 percpu=1
# cgroups=1, so every step has work to undo). Each load fails with the
# injected ECANCELED and leaves nothing behind: no directory, no debugfs
# state, no poll thread, no kernel report. At step 6 the first files are
# live: a privileged trigger is written to one and polled before the
# start fails, and the unwinding must wake that poller with EPOLLERR |
# EPOLLPRI, as an unload does, before the trigger goes with its file.
# Then a normal load works.
case_start_unwind() {
	local n m r out hits
	mod_loaded && mod_unload > /dev/null
	for n in 1 2 3 4 5 6; do
		m=$(dmesg_mark)
		: > $C/w
		[ $n = 6 ] && sh -c "while [ ! -e $PSI_DIR/memory ]; do :; done
			exec trig wait $PSI_DIR/memory 'some 1000000 1000000\n' 20 poll" > $C/w 2>&1 &
		r=$(mod_load fail_start=$n irq=1 percpu=1 cgroups=1)
		[ $n = 6 ] && wait $!
		expect "fail_start=$n: insmod '$r', want ECANCELED" [ "${r%% *}" = ECANCELED ]
		expect "fail_start=$n: module loaded" eval '! mod_loaded'
		expect "fail_start=$n: $PSI_DIR left behind" [ ! -e $PSI_DIR ]
		expect "fail_start=$n: debugfs state left behind" [ ! -e /sys/kernel/debug/psi_mod ]
		expect "fail_start=$n: a psi_mod_poll thread left behind" \
			eval '! grep -qs psi_mod_poll /proc/[0-9]*/comm'
		if [ $n = 6 ]; then
			out=$(tail -1 $C/w)
			expect "fail_start=6, a poller on $PSI_DIR/memory: '$out', want woke with ERR and PRI" \
				eval 'case "$out" in "woke "*PRI*ERR*) true ;; *) false ;; esac'
			note "fail_start=6: poller $out"
		fi
		dmesg_since $m > $C/new
		hits=$(grep -E 'WARNING|BUG|Oops|KASAN|list_(add|del) corruption|lockdep' $C/new | head -3 | tr '\n' '|')
		expect "fail_start=$n: kernel reports: $hits" [ -z "$hits" ]
		grep 'fail_start=' $C/new >> $EXPECTED
	done
	r=$(mod_load)
	expect "a normal load afterwards: $r" [ "$r" = ok ]
	expect_format $PSI_DIR/cpu cpu
}

# A stop ends in bounded time whatever user space does (docs/design.md,
# "The module"; docs/triggers.md, "Lifetimes"): clients as uid 65534
# stuck on a FUSE file whose server (tests/vm/helpers/fusehang.c) never
# answers READ or POLL. stop-poll: a poll() of a trigger fd and of the
# FUSE file sleeps in FUSE's ->poll with its entry on the trigger's wait
# queue; stop-read: a read() of a pressure file into a shared mapping of
# the FUSE file, a trigger write() from one. enable=0 and rmmod must
# return within STOP_BOUND seconds, the files come back, and once the
# server dies the stuck clients return (a poller's poll_freewait() on a
# queue the stop kept, also after the unload: the debug kernel's KASAN
# watches that).
STOP_BOUND=10
FUSE_MNT=/tmp/fuse
fuse_up() {
	local i
	[ -e /dev/fuse ] || insmod /lib/modules/$(uname -r)/opt/fuse.ko 2>/dev/null
	[ -e /dev/fuse ] || { echo "no FUSE in this kernel (CONFIG_FUSE_FS)" > $C/daemon; return 1; }
	mkdir -p $FUSE_MNT
	# a second server's "ready" is its own: the shell truncates the
	# file in the child, after this shell may already have read it
	rm -f $C/daemon
	fusehang serve $FUSE_MNT > $C/daemon 2>&1 &
	echo $! > $C/daemon.pid
	for i in $(seq 50); do grep -q ready $C/daemon 2>/dev/null && break; sleep 0.1; done
	grep -q ready $C/daemon
}
fuse_down() {
	kill -9 $(cat $C/daemon.pid) 2>/dev/null
	wait $(cat $C/daemon.pid) 2>/dev/null
	umount -l $FUSE_MNT 2>/dev/null
}
# stop_timed NAME CMD...: run CMD in the background, wait up to STOP_BOUND
# seconds; prints "<ms> <output>" or "stuck" (CMD still running: it may
# finish later, once the server is gone)
stop_timed() {
	local name=$1 i t0
	shift
	rm -f $C/$name.done
	t0=$(kit now)
	# not on this function's stdout: a caller's $(...) would wait for it
	( out=$("$@" 2>&1); echo "$((($(kit now) - t0) / 1000)) $out" > $C/$name.done ) > /dev/null 2>&1 &
	for i in $(seq $((STOP_BOUND * 10))); do
		[ -f $C/$name.done ] && break
		sleep 0.1
	done
	if [ -f $C/$name.done ]; then cat $C/$name.done; else echo stuck; fi
}
# wait_line FILE WORD: up to 5 s for WORD in FILE, then 1 s more (the
# client is past it and asleep)
wait_line() {
	local i
	for i in $(seq 50); do grep -q "$2" $1 2>/dev/null && break; sleep 0.1; done
	sleep 1
}
# a client's last line, up to 5 s after its server died
client_done() {	# FILE WORD
	local i
	for i in $(seq 50); do grep -q "^$2" $1 2>/dev/null && break; sleep 0.1; done
	grep "^$2" $1 || echo "still stuck: $(tail -1 $1)"
}
stop_expect() {	# WHAT RESULT
	expect "$1: '$2', want done within ${STOP_BOUND} s" [ "$2" != stuck ]
}
# restart_after e0|rm [FILE]: once the stop (enable=0, or rmmod) has
# returned, enable=1 or load again; then FILE reads as uid 65534
restart_after() {
	local r
	if [ $1 = e0 ]; then
		for r in $(seq 50); do [ -f $C/e0.done ] && break; sleep 0.2; done
		r=$(kit write $ENABLE 1)
		expect "enable=1 after: $r" [ "$r" = ok ]
	else
		for r in $(seq 50); do mod_loaded || break; sleep 0.2; done
		r=$(mod_load)
		expect "reload: $r" [ "$r" = ok ]
	fi
	[ -n "${2:-}" ] || return 0
	r=$(kit readas 65534 $2)
	expect "read after the restart: $r" [ "$r" = ok ]
}
case_stop_poll() {
	local r m
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	fuse_up || { bad "FUSE server: $(cat $C/daemon)"; return; }
	m=$(dmesg_mark)
	# enable=0 with a stuck poller; the server dies; enable=1
	fusehang poll 65534 $PSI_DIR/memory $FUSE_MNT/f > $C/p1 2>&1 &
	wait_line $C/p1 polling
	expect "poller 1 in poll: $(cat $C/p1)" eval '! grep -q returned $C/p1'
	r=$(stop_timed e0 kit write $ENABLE 0)
	stop_expect "enable=0 with a poller stuck in FUSE's poll" "$r"
	note "enable=0: $r"
	fuse_down
	r=$(client_done $C/p1 returned)
	expect "poller 1 returned once the server died: $r" eval 'case "$r" in returned*) true ;; *) false ;; esac'
	restart_after e0 $PSI_DIR/memory
	# rmmod with a stuck poller; reload; the server dies after the unload
	fuse_up || { bad "FUSE server again: $(cat $C/daemon)"; return; }
	fusehang poll 65534 $PSI_DIR/cpu $FUSE_MNT/f > $C/p2 2>&1 &
	wait_line $C/p2 polling
	expect "poller 2 in poll: $(cat $C/p2)" eval '! grep -q returned $C/p2'
	r=$(stop_timed rm rmmod psi_mod)
	stop_expect "rmmod with a poller stuck in FUSE's poll" "$r"
	note "rmmod: $r"
	# a stuck rmmod finishes once the server is gone
	fuse_down
	r=$(client_done $C/p2 returned)
	expect "poller 2 returned once the server died: $r" eval 'case "$r" in returned*) true ;; *) false ;; esac'
	restart_after rm $PSI_DIR/cpu
	# the queue left allocated at that unload, as intended, and said so once
	dmesg_since $m | grep 'left allocated at unload' >> $EXPECTED
	note "dmesg: $(dmesg_since $m | grep -i psi_mod | tr '\n' '|')"
}
case_stop_read() {
	local r m w
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	# a fresh buffer is filled: anonymous, tmpfs shared and private
	for w in anon shared:/tmp/sr-buf private:/tmp/sr-buf; do
		r=$(cd /tmp && fusehang readinto 65534 $PSI_DIR/memory $w)
		expect "read into a fresh $w mapping: '$r', want the some line" eval 'case "$r" in "read "*": some avg10="*) true ;; *) false ;; esac'
	done
	fuse_up || { bad "FUSE server: $(cat $C/daemon)"; return; }
	m=$(dmesg_mark)
	fusehang read 65534 $PSI_DIR/cpu $FUSE_MNT/f > $C/r1 2>&1 &
	wait_line $C/r1 reading
	r=$(stop_timed e0 kit write $ENABLE 0)
	stop_expect "enable=0 with a read into a FUSE mapping" "$r"
	note "enable=0: $r; reader: $(tail -1 $C/r1)"
	fuse_down
	r=$(client_done $C/r1 read)
	expect "reader returned: $r" eval 'case "$r" in read*) true ;; *) false ;; esac'
	restart_after e0
	fuse_up || { bad "FUSE server again: $(cat $C/daemon)"; return; }
	fusehang write 65534 $PSI_DIR/io $FUSE_MNT/f > $C/w1 2>&1 &
	wait_line $C/w1 writing
	fusehang read 65534 $PSI_DIR/memory $FUSE_MNT/f > $C/r2 2>&1 &
	wait_line $C/r2 reading
	r=$(stop_timed rm rmmod psi_mod)
	stop_expect "rmmod with a read into and a write from a FUSE mapping" "$r"
	note "rmmod: $r; writer: $(tail -1 $C/w1); reader: $(tail -1 $C/r2)"
	fuse_down
	r=$(client_done $C/w1 write)
	expect "writer returned: $r" eval 'case "$r" in write*) true ;; *) false ;; esac'
	r=$(client_done $C/r2 read)
	expect "reader 2 returned: $r" eval 'case "$r" in read*) true ;; *) false ;; esac'
	restart_after rm $PSI_DIR/cpu
	# the one reason given for a buffer that cannot be brought in
	dmesg_since $m | grep 'user-mountable filesystem' >> $EXPECTED
	note "dmesg: $(dmesg_since $m | grep -i psi_mod | tr '\n' '|')"
}

suite_begin

run_case load 20 case_load
run_case format 10 case_format
run_case poll 30 case_poll
run_case idle 30 case_idle
run_case worklag 40 case_worklag
run_case spin 40 case_spin
run_case io 30 case_io
run_case iowrite 30 case_iowrite
run_case mem 60 case_mem
run_case hackbench 120 case_hackbench
run_case toggle 40 case_toggle
run_case churn 120 case_churn
run_case forkreloc 60 case_forkreloc
run_case thread-exec 90 case_thread_exec
run_case store 60 case_store
run_case pidwrap 100 case_pidwrap
run_case percpu 60 case_percpu
run_case irq 60 case_irq
run_case badparams 40 case_badparams
run_case rmmod-readers 60 case_rmmod_readers
run_case loadunload 120 case_loadunload
run_case trig-abi 60 case_trig_abi
run_case trig-ipi 120 case_trig_ipi
run_case trig-cpu 30 case_trig_cpu
run_case trig-io 30 case_trig_io
run_case trig-mem 40 case_trig_mem
run_case trig-idle 30 case_trig_idle
run_case trig-unpriv 30 case_trig_unpriv
run_case trig-many 90 case_trig_many
run_case trig-many-priv 60 case_trig_many_priv
run_case trig-unload 120 case_trig_unload
run_case start-unwind 120 case_start_unwind
run_case stop-poll 120 case_stop_poll
run_case stop-read 120 case_stop_read
run_case cgroup-tree 240 case_cgroup_tree
run_case cgroup-acct 60 case_cgroup_acct
run_case cgroup-files 60 case_cgroup_files
run_case cgroup-trig 90 case_cgroup_trig
run_case cgroupfs 90 case_cgroupfs
run_case dmesg 20 case_dmesg
suite_end
