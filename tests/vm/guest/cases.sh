# Test cases shared by the suites (sourced after lib.sh). Each case_* function
# runs inside run_case; it states its assertions with expect/ok/bad and adds
# the numbers it saw with note, so a PASS line carries the evidence too.
# Tolerances are the project's stated targets; they are not tuned to results.

DISK=/dev/vda
NEED_MODULE=1	# 0 in the kernel suite: cases then test the kernel's own PSI
ENABLE=/sys/module/psi_mod/parameters/enable

# insmod works, the files exist and are readable by everyone.
case_load() {
	local r f m modes=
	# on psi=0 the kernel must not have created the directory itself
	expect "$PSI_DIR exists before insmod (booted psi=0?)" [ ! -e "$PSI_DIR" ]
	r=$(mod_load)
	expect "insmod: $r" [ "$r" = ok ]
	expect "/sys/module/psi_mod missing after insmod" mod_loaded
	for f in $RESFILES; do
		if [ ! -f "$PSI_DIR/$f" ]; then
			bad "$PSI_DIR/$f missing"
			continue
		fi
		m=$(stat -c %a "$PSI_DIR/$f")
		modes="$modes $f=0$m"
		# the kernel uses 0666 (write = trigger setup); 0444 is acceptable
		expect "$PSI_DIR/$f mode 0$m, want 0444 or 0666" [ "$m" = 444 -o "$m" = 666 ]
		r=$(kit readas 65534 "$PSI_DIR/$f")
		expect "$PSI_DIR/$f not readable by uid 65534: $r" [ "$r" = ok ]
	done
	note "modes:$modes"
	# a trigger definition, as the kernel takes it (the trig-* cases test
	# the ABI row by row)
	r=$(kit write $PSI_DIR/cpu 'some 150000 1000000')
	expect "trigger write to cpu: $r, want ok" [ "$r" = ok ]
	note "enable=$(cat $ENABLE 2>/dev/null) proc_dir=$(cat /sys/module/psi_mod/parameters/proc_dir 2>/dev/null)"
}

# poll() on a file without a trigger answers at once, as the kernel's
# psi_trigger_poll() does: DEFAULT_POLLMASK | EPOLLERR | EPOLLPRI. Where
# the kernel's own files are there too ($K, side by side), the same bits.
POLL_WANT="IN PRI OUT ERR RDNORM WRNORM"
case_poll() {
	local f r ms
	for f in $RESFILES; do
		r=$(kit poll $PSI_DIR/$f 5000)
		ms=${r##* }
		ms=${ms%ms}
		expect "poll $PSI_DIR/$f: '${r% *}', want '$POLL_WANT'" [ "${r% *}" = "$POLL_WANT" ]
		expect "poll $PSI_DIR/$f took ${ms}ms, want at once (< 1000)" [ "${ms:-9999}" -lt 1000 ]
		if [ -n "${K:-}" ]; then
			r=$(kit poll $K/$f 5000)
			expect "kernel's poll $K/$f: '${r% *}', want '$POLL_WANT'" [ "${r% *}" = "$POLL_WANT" ]
		fi
	done
	note "poll: $(kit poll $PSI_DIR/cpu 5000)"
}

# Strict format of all three files; cpu's full line all zeros.
case_format() {
	local f
	for f in $RESFILES; do
		if [ "$f" = cpu ]; then expect_format "$PSI_DIR/$f" cpu; else expect_format "$PSI_DIR/$f"; fi
	done
	note "cpu: $(head -1 $PSI_DIR/cpu)"
}

# 15 s of idle: every avg10 below 1.00, or 4.00 on PREEMPT_RT. The bound
# is for phantom pressure (a count left behind reads 50-100), not for the
# little an idle guest really stalls: a kworker or interrupt thread woken
# on an idle CPU waits from its enqueue to its switch-in. PREEMPT_RT runs
# interrupts and timers in threads and wakes far more of them: the
# kernel's own PSI on 6.12-rt ("kernel" suite, 2026-11-30) read cpu some
# avg10 1.01, 2.52 and 1.30 here in three boots (total +120, +158 and
# +114 ms in the 15 s; the 2.52 still carries the boot's share), psi_mod
# 1.58, 2.48 and 0.43 on psi=0 boots; psi_mod on 6.1 reads about 0.05.
# psi1's sbs-idle compares the two side by side instead.
# The averaging work keeps the kernel's clock: it runs at most once a
# period (2 s), and only while there was activity in the last one.
case_idle() {
	local f k v a b lim=1.00 r0 r1
	case "$(uname -v)" in *PREEMPT_RT*) lim=4.00 ;; esac
	r0=$(debug_val avgs_work_runs)
	snap $C/a $PSI_DIR/cpu $PSI_DIR/io $PSI_DIR/memory
	sleep 15
	snap $C/b $PSI_DIR/cpu $PSI_DIR/io $PSI_DIR/memory
	r1=$(debug_val avgs_work_runs)
	if [ -n "$r0" ]; then
		expect "the averaging work ran $((r1 - r0)) times in 15 s idle, want <= 8 (one a period)" \
			[ "$((r1 - r0))" -le 8 ]
		note "averaging work runs in 15 s idle: $((r1 - r0))"
	fi
	for f in $RESFILES; do
		for k in some full; do
			v=$(snap_val $C/b $PSI_DIR/$f $k avg10)
			expect "$f $k avg10=$v after 15 s idle, want < $lim" flt "${v:-999}" $lim
		done
		note "$f some avg10=$(snap_val $C/b $PSI_DIR/$f some avg10) total+$(snap_delta $C/a $C/b $PSI_DIR/$f some)us"
	done
	note "wall $(($(snap_t $C/b) - $(snap_t $C/a)))us"
}

# totals never go backwards between two snapshots of the same files
expect_monotonic() {	# A B FILE...
	local a=$1 b=$2 f k d; shift 2
	for f in "$@"; do
		for k in some full; do
			# no cpu full line before 5.13
			[ $k = full ] && [ "${f##*/}" = cpu ] && [ "$CPU_FULL_LINE" = 0 ] && continue
			d=$(snap_delta $a $b $f $k)
			expect "$f $k total went backwards or unreadable (delta $d)" ige "$d" 0
		done
	done
}

# 4 spinners on 2 vCPUs for 15 s: cpu some avg10 >= 50, total grows >= 80% of wall.
case_spin() {
	local i wall d v
	spinners 4 18
	snap $C/a $PSI_DIR/cpu
	sleep 15
	snap $C/b $PSI_DIR/cpu
	wall=$(($(snap_t $C/b) - $(snap_t $C/a)))
	d=$(snap_delta $C/a $C/b $PSI_DIR/cpu some)
	v=$(snap_val $C/b $PSI_DIR/cpu some avg10)
	expect "cpu some avg10=$v, want >= 50" fge "${v:-0}" 50
	expect "cpu some total grew ${d}us in ${wall}us wall, want >= 80%" pct_ge "$d" "$wall" 80
	expect_monotonic $C/a $C/b $PSI_DIR/cpu
	expect_format $PSI_DIR/cpu cpu
	note "avg10=$v total+${d}us wall ${wall}us ($(awk -v d="$d" -v w="$wall" 'BEGIN { printf "%.1f", 100 * d / w }')%)"
	after_load
}

# synchronous O_DIRECT reads for 10 s: io some and io full totals grow.
case_io() {
	local out ds df wall
	snap $C/a $PSI_DIR/io
	out=$(dio read $DISK 10 2>&1)
	snap $C/b $PSI_DIR/io
	wall=$(($(snap_t $C/b) - $(snap_t $C/a)))
	ds=$(snap_delta $C/a $C/b $PSI_DIR/io some)
	df=$(snap_delta $C/a $C/b $PSI_DIR/io full)
	expect "dio failed: $out" [ "${out#dio read: }" != "$out" ]
	expect "io some total delta ${ds}us, want > 0" igt "$ds" 0
	expect "io full total delta ${df}us, want > 0" igt "$df" 0
	expect_monotonic $C/a $C/b $PSI_DIR/io
	note "$out; io some+${ds}us full+${df}us wall ${wall}us; avg10 some=$(snap_val $C/b $PSI_DIR/io some avg10) full=$(snap_val $C/b $PSI_DIR/io full avg10)"
	after_load
}

# O_DIRECT writes + fsync for 5 s: io some grows (the flush path sleeps too).
case_iowrite() {
	local out ds df
	snap $C/a $PSI_DIR/io
	out=$(dio write $DISK 5 2>&1)
	snap $C/b $PSI_DIR/io
	ds=$(snap_delta $C/a $C/b $PSI_DIR/io some)
	df=$(snap_delta $C/a $C/b $PSI_DIR/io full)
	expect "dio failed: $out" [ "${out#dio write: }" != "$out" ]
	expect "io some total delta ${ds}us, want > 0" igt "$ds" 0
	note "$out; io some+${ds}us full+${df}us in $(($(snap_t $C/b) - $(snap_t $C/a)))us"
	after_load
}

# 137 = SIGKILL (the OOM killer); anything else but 0 means the hog broke
hog_ok() { [ "$1" = 0 ] || [ "$1" = 137 ]; }

# two ~420 MiB hogs in a 512 MiB guest: reclaim, probably OOM kills;
# memory some total grows.
case_mem() {
	local p1 p2 r1 r2 ds df m kills
	m=$(dmesg_mark)
	snap $C/a $PSI_DIR/memory
	memhog 420 12 > $C/h1 2>&1 & p1=$!
	memhog 420 12 > $C/h2 2>&1 & p2=$!
	echo "$p1 $p2" >> $C/pids
	wait $p1; r1=$?
	wait $p2; r2=$?
	snap $C/b $PSI_DIR/memory
	ds=$(snap_delta $C/a $C/b $PSI_DIR/memory some)
	df=$(snap_delta $C/a $C/b $PSI_DIR/memory full)
	kills=$(dmesg_since $m | grep -c 'Killed process')
	expect "memory some total delta ${ds}us, want > 0" igt "$ds" 0
	expect_monotonic $C/a $C/b $PSI_DIR/memory
	expect "memhog 1 exit status $r1, want 0 or 137: $(cat $C/h1)" hog_ok "$r1"
	expect "memhog 2 exit status $r2, want 0 or 137: $(cat $C/h2)" hog_ok "$r2"
	note "memory some+${ds}us full+${df}us in $(($(snap_t $C/b) - $(snap_t $C/a)))us; avg10 some=$(snap_val $C/b $PSI_DIR/memory some avg10); hog exits $r1/$r2; $kills OOM kills"
	after_load
}

# hackbench (fork/exit/pipe wakeup storm) with the module attached: it
# completes, the files keep their format, totals stay monotonic.
case_hackbench() {
	local out rc
	snap $C/a $PSI_DIR/cpu $PSI_DIR/io $PSI_DIR/memory
	out=$(timeout $((90 * ${LIMITX:-1})) hackbench -p -g 4 -l 400 2>&1); rc=$?
	snap $C/b $PSI_DIR/cpu $PSI_DIR/io $PSI_DIR/memory
	expect "hackbench exit $rc: $(echo "$out" | tail -1)" [ $rc = 0 ]
	expect_format $PSI_DIR/cpu cpu
	expect_format $PSI_DIR/io
	expect_format $PSI_DIR/memory
	expect_monotonic $C/a $C/b $PSI_DIR/cpu $PSI_DIR/io $PSI_DIR/memory
	note "$(echo "$out" | grep -i time | tail -1); cpu some+$(snap_delta $C/a $C/b $PSI_DIR/cpu some)us in $(($(snap_t $C/b) - $(snap_t $C/a)))us"
	after_load
}

# debug_state: psi_mod's raw per-CPU counts (debugfs), into the log and,
# compacted to the non-zero counts, into the case detail
debug_state() {
	local f=/sys/kernel/debug/psi_mod/state
	[ -r $f ] || return 0
	echo "psi_mod debugfs state:"; cat $f
	note "state: $(awk '/^cpu/ { printf "%s", $1; for (i = 2; i <= NF; i++) { split($i, a, "=");
		if (a[2] != "0" && a[2] != "0x00") printf " %s", $i } printf "; " }' $f)"
}

# expect_quiet SECONDS (returns 1 if it failed): nothing runs, so no "some" total may grow by more
# than 10% of the window. Not an accuracy target but a leak
# detector: a task count left behind (a task counted runnable or in iowait
# that is gone) shows as ~100% stall for as long as the module runs; real
# idle noise is ~0.1% (see the idle case).
expect_quiet() {
	local w f d
	snap $C/qa $PSI_DIR/cpu $PSI_DIR/io $PSI_DIR/memory
	sleep "$1"
	snap $C/qb $PSI_DIR/cpu $PSI_DIR/io $PSI_DIR/memory
	w=$(($(snap_t $C/qb) - $(snap_t $C/qa)))
	for f in $RESFILES; do
		d=$(snap_delta $C/qa $C/qb $PSI_DIR/$f some)
		expect "$f some grew ${d}us in ${w}us with nothing running: a stuck count?" \
			ile "$d" $((w / 10))
	done
	note "quiet ${w}us: cpu+$(snap_delta $C/qa $C/qb $PSI_DIR/cpu some) io+$(snap_delta $C/qa $C/qb $PSI_DIR/io some) memory+$(snap_delta $C/qa $C/qb $PSI_DIR/memory some)us"
	[ ! -s $C/fails ]
}

# After a load has stopped: nothing stuck in the totals (expect_quiet) or
# in psi_mod's debugfs state. fuzz quiet samples the state 5 times, 0.3 s
# apart, each followed by a count of the tasks in state R (runnable or
# running, as the state's "running" counts them). A leaked count is there
# in every sample; a task that happens to run is not, so the check takes
# the best sample: the running count must not exceed the R tasks in at
# least one sample, and iowait/memstall must be 0 in at least one (nothing
# does IO or reclaim). Underflows must be 0 in every sample.
expect_settled() {
	local s
	sleep 2
	expect_quiet 3 || debug_state
	fuzz quiet 5 > $C/quiet 2>&1
	s=$(awk '$1 == "sample" { for (i = 3; i <= NF; i++) { split($i, a, "="); v[a[1]] = a[2] }
		ex = v["running"] - v["R-tasks"]
		if (n == 0 || ex < mex) mex = ex; if (n == 0 || v["iowait"] < mio) mio = v["iowait"]
		if (n == 0 || v["memstall"] < mme) mme = v["memstall"]; if (v["underflows"] > muf) muf = v["underflows"]
		n++ } END { printf "%d %d %d %d %d", n, mex, mio, mme, muf }' $C/quiet)
	set -- $s
	expect "debugfs state unreadable: $(joinl $C/quiet)" [ "${1:-0}" = 5 ]
	expect "underflows=$5 in the debugfs state, want 0" [ "${5:-1}" = 0 ]
	expect "running count above the runnable tasks by $2 in every sample: $(joinl $C/quiet)" ile "${2:-1}" 0
	expect "iowait count $3 with nothing in IO: $(joinl $C/quiet)" [ "${3:-1}" = 0 ]
	expect "memstall count $4 with nothing reclaiming: $(joinl $C/quiet)" [ "${4:-1}" = 0 ]
	note "state: underflows=$5, best sample running-R=$2 iowait=$3 memstall=$4, relocations $(awk '
		{ for (i = 1; i <= NF; i++) if ($i ~ /^relocations=/) { split($i, a, "="); r += a[2] } }
		END { print r + 0 }' /sys/kernel/debug/psi_mod/state 2>/dev/null)"
}

# debug_val KEY: a "KEY VALUE" line of psi_mod's debugfs state; empty if
# the file is not there
debug_val() { awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/psi_mod/state 2>/dev/null; }

# after_load: stop the case's background load, then a quiet window: a
# count the load left behind shows there first (expect_quiet)
after_load() { bg_kill; expect_quiet 3 || debug_state; }

# total of the underflows= fields in psi_mod's debugfs state; empty if the
# file is not there (it is a debugging aid of the module, not interface)
debug_underflows() {
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^underflows=/) { split($i, a, "="); s += a[2]; n++ } }
		END { if (n) print s + 0 }' /sys/kernel/debug/psi_mod/state 2>/dev/null
}

# Exec from a second thread (de_thread + exchange_tids hand the leader's
# pid over) 200 times while the leader sleeps in O_DIRECT reads, next to 2
# spinners, then 200 times while the leader itself spins on the other vCPU;
# afterwards no stuck counts, no underflows. The pid handover with leader
# and exec'ing thread on different CPUs is where a count can be left behind;
# plain fork/exec or both on one CPU do not reach it.
case_thread_exec() {
	local out rc u f
	if [ "$NEED_MODULE" = 1 ]; then
		mod_loaded || ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	fi
	snap $C/a $PSI_DIR/cpu $PSI_DIR/io $PSI_DIR/memory
	bg spin 60; bg spin 60
	out=$(timeout $((60 * ${LIMITX:-1})) threxec 200 $DISK 2>&1); rc=$?
	bg_kill
	if [ $rc = 0 ]; then
		out="$out; leader spinning: $(timeout $((60 * ${LIMITX:-1})) threxec 200 - 2>&1)"; rc=$?
	fi
	snap $C/b $PSI_DIR/cpu $PSI_DIR/io $PSI_DIR/memory
	expect "threxec exit $rc: $out" [ $rc = 0 ]
	for f in $RESFILES; do
		if [ $f = cpu ]; then expect_format $PSI_DIR/$f cpu; else expect_format $PSI_DIR/$f; fi
	done
	expect_monotonic $C/a $C/b $PSI_DIR/cpu $PSI_DIR/io $PSI_DIR/memory
	note "$out; io some+$(snap_delta $C/a $C/b $PSI_DIR/io some)us in $(($(snap_t $C/b) - $(snap_t $C/a)))us"
	expect_quiet 4 || debug_state
	u=$(debug_underflows)
	if [ -n "$u" ]; then
		expect "psi_mod debugfs reports $u underflows" [ "$u" = 0 ]
	else
		note "no psi_mod debugfs state to read underflows from"
	fi
}

# Where psi_mod keeps its per-task words: task_struct->psi_flags on a
# kernel with CONFIG_PSI whose own PSI is off (debugfs task_table 0), else a
# table sized to pid_max at the start. The memory the store takes: the
# vmalloc areas psi_mod allocated (/proc/vmallocinfo names each area's
# caller; VmallocUsed moves with every kernel thread's stack): none with
# the task words, the table (4 bytes per pid, and its guard page) with a
# table. Then a start with pid_max just above the pids in use (50 more,
# at least 400), pid_max back, forks until pids pass it by 20, and three
# spinners (4 on 2 vCPUs with the shell's) get pids beyond the start's
# pid_max: with the task words they count as any task (cpu some grows by at
# least a fifth of the window); in the small table they have no word, are
# not counted (cpu some grows by under a tenth) and dmesg says so once. A
# last enable 0 -> 1 sizes the table to pid_max again (raised by 1000 if
# the pids in use were that close to it).
# bytes of the vmalloc areas psi_mod's code allocated
vmalloc_mod() { awk '/\[psi_mod\]/ { n += $2 } END { print n + 0 }' /proc/vmallocinfo; }
store_restart() { echo "$(kit write $ENABLE 0)$(kit write $ENABLE 1)"; }
case_store() {
	local kpsi=0 pm want t i m swin grow r line vb tb pid lim
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	[ "$PSI_DIR" != /proc/pressure ] && [ -e /proc/pressure ] && kpsi=1
	pm=$(cat /proc/sys/kernel/pid_max)
	want=$pm
	[ $kpsi = 0 ] && grep -q ' psi_memstall_enter$' /proc/kallsyms && want=0
	t=$(debug_val task_table)
	expect "debugfs task_table '$t', want $want (kernel PSI on: $kpsi, pid_max $pm)" [ "$t" = "$want" ]
	vb=$(vmalloc_mod) tb=$((want * 4))
	expect "psi_mod's vmalloc areas: $vb bytes, want $tb to $((tb + 8192)) (task_table $want)" \
		eval '[ $vb -ge $tb ] && [ $vb -le $((tb + 8192)) ]'
	# a start with pid_max just above the pids in use
	m=$(dmesg_mark)
	lim=$(($(sh -c 'echo $$') + 50))
	[ $lim -ge 400 ] || lim=400
	echo $lim > /proc/sys/kernel/pid_max
	r=$(store_restart)
	# back, or higher if the pids in use are near it: pids must pass lim
	echo $((lim + 1000 > pm ? lim + 1000 : pm)) > /proc/sys/kernel/pid_max
	t=$(debug_val task_table)
	expect "enable 0, 1 with pid_max $lim: $r, task_table '$t', want $([ $want = 0 ] && echo 0 || echo $lim)" \
		eval '[ "$r" = okok ] && [ "$t" = $([ $want = 0 ] && echo 0 || echo $lim) ]'
	pid=0 i=0
	while [ $pid -le $((lim + 20)) ] && [ $i -lt 1000 ]; do
		pid=$(sh -c 'echo $$') i=$((i + 1))
	done
	expect "pids did not pass $((lim + 20)) in $i forks (last $pid)" igt "$pid" $((lim + 20))
	for i in 1 2 3; do bg spin 6; done
	sleep 1
	snap $C/a $PSI_DIR/cpu
	sleep 4
	snap $C/b $PSI_DIR/cpu
	swin=$(($(snap_t $C/b) - $(snap_t $C/a)))
	grow=$(snap_delta $C/a $C/b $PSI_DIR/cpu some)
	bg_kill
	line=$(dmesg_since $m | grep 'beyond pid_max' | head -1)
	if [ "$want" = 0 ]; then
		expect "spinners with pids > $pid: cpu some +${grow}us in ${swin}us, want >= 1/5" pct_ge "$grow" "$swin" 20
		expect "dmesg on the task words: '$line', want nothing" [ -z "$line" ]
	else
		expect "spinners with pids > $pid, not in the table: cpu some +${grow}us in ${swin}us, want < 1/10" \
			eval 'isint "$grow" && [ $((grow * 10)) -lt $swin ]'
		expect "no dmesg line about a pid beyond pid_max" [ -n "$line" ]
		dmesg_since $m | grep 'beyond pid_max' >> $EXPECTED
	fi
	r=$(store_restart)
	t=$(debug_val task_table)
	want=$([ $want = 0 ] && echo 0 || cat /proc/sys/kernel/pid_max)
	expect "after enable 0, 1 ($r): task_table '$t', want $want" [ "$t" = $want ]
	note "task_table $want, psi_mod's vmalloc $vb bytes; spinners from pid $((pid + 1)): cpu some +${grow}us in ${swin}us; ${line:-no dmesg line}"
	expect_settled
}

# dmesg after everything: no WARNING/BUG/Oops/lockdep/underflow/inconsistent,
# and no psi_mod error/warning lines except the ones bad-parameter cases
# provoked on purpose (recorded in $EXPECTED) and the kernel's taint notices.
case_dmesg() {
	local all=$C/dmesg hits pm
	dmesg -r > $all
	# scan from the start of the suite: boot-time noise is not ours (under
	# QEMU the boot prints "mtrr: your CPUs had inconsistent ... settings")
	tail -n +$((SUITE_DMESG + 1)) $all > $C/suite
	if [ -s $EXPECTED ]; then
		grep -vxF -f $EXPECTED $C/suite > $C/check
	else
		cp $C/suite $C/check
	fi
	# not in call-trace frames: a lockdep kernel's stacks name lockdep_*
	# functions in every dump, also the OOM killer's reports the memory
	# cases cause; a real report has its WARNING/BUG/Oops header line
	hits=$(grep -vE '^<[0-9]>\[ *[0-9.]+\]  (\? )?[A-Za-z0-9_.]+\+0x[0-9a-f]+/0x[0-9a-f]+' $C/check |
		grep -E 'WARNING|BUG|Oops|lockdep|underflow|inconsistent' | head -3 | tr '\n' '|')
	expect "dmesg has: $hits" [ -z "$hits" ]
	# psi_mod lines at level <= 4 (emerg..warning)
	pm=$(grep -E '^<[0-4]>' $C/check | grep -i 'psi_mod' |
		grep -vE 'taints kernel|module verification failed' | head -3 | tr '\n' '|')
	expect "unexpected psi_mod error lines: $pm" [ -z "$pm" ]
	# a lockdep kernel: lockdep must still be on (its first report, e.g.
	# "possible recursive locking", switches it off for the boot)
	if [ -r /proc/lockdep_stats ]; then
		pm=$(awk '$1 == "debug_locks:" { print $2 }' /proc/lockdep_stats)
		expect "lockdep's debug_locks is '$pm', want 1" [ "$pm" = 1 ]
		note "lockdep on (debug_locks $pm)"
	fi
	note "$(wc -l < $C/suite) dmesg lines since suite start, $(wc -l < $EXPECTED) expected bad-parameter lines, $(grep -ci psi_mod $C/suite) mention psi_mod"
}

# --- pressure triggers (docs/triggers.md). The ABI rows: one line per
# row, "<row> <result>", each from tests/vm/helpers/trig.c on a fresh
# descriptor of a file under DIR ("open:ERRNO" when the open fails).
# TRIG_ROWS_WANT holds Debian 6.1's answers, trig_rows_want the running
# kernel's (checked against the kernel's own files on psi=1: case
# sbs-trig-abi, also on 5.10 and 6.12 by tests/kernels/run.sh).
# idle_poll DIR: one poll() on a fresh memory trigger under DIR that has
# nothing to report: "timeout" after 1 s, else what woke it
idle_poll() { trig wait $1/memory 'some 1000000 1000000\n' 1 poll | tail -1; }
# rows_diff A B: the rows that differ, A's as "<", B's as ">", one line
# (by row name; busybox's diff prints the unified format only)
rows_diff() {
	awk 'NR == FNR { a[$1] = $0; next }
	     { if (a[$1] != $0) printf "< %s > %s ", a[$1], $0; delete a[$1] }
	     END { for (k in a) printf "< %s ", a[k] }' "$1" "$2"
}
trig_rows() {	# DIR
	trig_rows_raw "$1" | sed 's/ open [^ ]*: / open:/'
}
trig_rows_raw() {	# DIR
	local d=$1
	echo "newline $(trig write $d/memory 'some 150000 1000000\n')"
	echo "no-newline $(trig write $d/memory 'some 150000 1000000')"
	echo "nul-counted $(trig write $d/memory 'some 150000 1000000\0')"
	echo "empty $(trig write $d/memory '' 0)"
	echo "garbage $(trig write $d/memory 'bogus 1 500000\n')"
	echo "leading-space $(trig write $d/memory ' some 1 500000\n')"
	echo "upper-case $(trig write $d/memory 'SOME 1 500000\n')"
	echo "one-number $(trig write $d/memory 'some 150000\n')"
	echo "plus-sign $(trig write $d/memory 'some +5 1000000\n')"
	echo "minus-sign $(trig write $d/memory 'some -1 1000000\n')"
	echo "u32-wrap $(trig write $d/memory 'some 4294967297 1000000\n')"
	echo "trailing-junk $(trig write $d/memory 'some 1 500000 junk\n')"
	echo "past-32-bytes $(trig write $d/memory 'some      150000         1000000\n')"
	echo "threshold-0 $(trig write $d/memory 'some 0 1000000\n')"
	echo "threshold=window $(trig write $d/memory 'some 1000000 1000000\n')"
	echo "threshold>window $(trig write $d/memory 'some 1000001 1000000\n')"
	echo "window-499999 $(trig write $d/memory 'some 1 499999\n')"
	echo "window-500000 $(trig write $d/memory 'some 1 500000\n')"
	echo "window-10s $(trig write $d/memory 'some 1 10000000\n')"
	echo "window-10000001 $(trig write $d/memory 'some 1 10000001\n')"
	echo "window-1 $(trig write $d/memory 'some 1 1\n')"
	echo "window-0 $(trig write $d/memory 'some 1 0\n')"
	echo "priv-100ms $(trig write $d/memory 'some 10000 100000\n')"
	echo "cpu-some $(trig write $d/cpu 'some 150000 1000000\n')"
	echo "cpu-full $(trig write $d/cpu 'full 150000 1000000\n')"
	echo "io-full $(trig write $d/io 'full 150000 1000000\n')"
	echo "memory-full $(trig write $d/memory 'full 150000 1000000\n')"
	echo "second-write $(trig twice $d/io 'some 150000 1000000\n' 'some 150000 1000000\n' | tr ' ' /)"
	echo "second-garbage $(trig twice $d/io 'some 150000 1000000\n' 'junk\n' | tr ' ' /)"
	echo "after-einval $(trig twice $d/io 'junk\n' 'some 150000 1000000\n' | tr ' ' /)"
	echo "read-only-fd $(trig ro $d/io 'some 150000 1000000\n')"
	echo "unpriv-1s $(trig -u 65534 write $d/cpu 'some 150000 1000000\n')"
	echo "unpriv-0.5s $(trig -u 65534 write $d/cpu 'some 150000 500000\n')"
	echo "unpriv-2s $(trig -u 65534 write $d/cpu 'some 150000 2000000\n')"
	echo "unpriv-3s $(trig -u 65534 write $d/cpu 'some 150000 3000000\n')"
	echo "unpriv-10s $(trig -u 65534 write $d/cpu 'some 150000 10000000\n')"
	echo "root-opened-unpriv-write-1s $(trig -U 65534 write $d/cpu 'some 150000 1000000\n')"
}
TRIG_ROWS_WANT="newline ok
no-newline EINVAL
nul-counted ok
empty EINVAL
garbage EINVAL
leading-space EINVAL
upper-case EINVAL
one-number EINVAL
plus-sign EINVAL
minus-sign EINVAL
u32-wrap ok
trailing-junk ok
past-32-bytes EINVAL
threshold-0 EINVAL
threshold=window ok
threshold>window EINVAL
window-499999 EINVAL
window-500000 ok
window-10s ok
window-10000001 EINVAL
window-1 EINVAL
window-0 EINVAL
priv-100ms EINVAL
cpu-some ok
cpu-full ok
io-full ok
memory-full ok
second-write ok/EBUSY
second-garbage ok/EBUSY
after-einval EINVAL/ok
read-only-fd EBADF
unpriv-1s EINVAL
unpriv-0.5s EINVAL
unpriv-2s ok
unpriv-3s EINVAL
unpriv-10s ok
root-opened-unpriv-write-1s ok"
# The running kernel's answers (docs/triggers.md, "Per kernel"): before
# 5.13 cpu has no full state; before the 6.5 privilege rules (Debian's
# 5.10) the files are 0444, so an unprivileged open for writing is EACCES
# and a root opener has no window rule of its own; from 6.6 on a window
# needs no 500 ms minimum, only 1 us to 10 s.
trig_rows_want() {
	local v
	v=$(uname -r | cut -d. -f1,2)
	case $v in
	5.*) echo "$TRIG_ROWS_WANT" | sed -E -e 's/^cpu-full ok$/cpu-full EINVAL/' \
		-e 's/^(unpriv-[^ ]*) .*/\1 open:EACCES/' ;;
	6.[0-5]) echo "$TRIG_ROWS_WANT" ;;
	*) echo "$TRIG_ROWS_WANT" |
		sed -E 's/^(window-499999|window-1|priv-100ms) EINVAL$/\1 ok/' ;;
	esac
}

# Whether an unprivileged opener may write a trigger: the 6.5 rules' 0666
# files; before them (5.10) they are 0444 and uid 65534 gets EACCES.
unpriv_triggers() { [ "$(stat -c %a $PSI_DIR/cpu)" = 666 ]; }

# poll on a descriptor with a trigger and nothing to report sleeps (no
# EPOLLERR); the three wait styles see an event under a stall.
# debug_line KEY: the rest of KEY's line in the debugfs state file
debug_line() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print }' /sys/kernel/debug/psi_mod/state; }
# slab_line CACHE: active objects, objects, object size, objects per slab
slab_line() { awk -v k="$1" '$1 == k { print $2, $3, $4, $5 }' /proc/slabinfo; }
# the possible CPUs (a group has a part for each)
cpus_possible() { awk -F, '{ n = 0; for (i = 1; i <= NF; i++) { m = split($i, r, "-"); n += m == 2 ? r[2] - r[1] + 1 : 1 } print n }' /sys/devices/system/cpu/possible; }

# --- irq pressure (irq=1)
# interrupt time psi_mod has seen, all CPUs (us): it stands still unless
# the interrupt probes are attached
irq_us() { awk '$2 ~ /^irq_us=/ { sub("irq_us=", "", $2); s += $2 } END { print s + 0 }' /sys/kernel/debug/psi_mod/state; }
# irq_total FILE [CPU]: the total of the full line (of CPU's, per-CPU file)
irq_total() { awk -v c="${2:-full}" '$1 == c && / total=/ { sub(/.*total=/, ""); print }' "$1"; }
# expect_irq_file FILE: one full line in the kernel's format, and a some
# trigger refused with EINVAL, as the kernel's irq file does
expect_irq_file() {
	local f=$1 l r
	l=$(wc -l < $f)
	r=$(grep -Ev "$PSI_RE" $f; grep -v '^full ' $f)
	expect "$f: $l lines, want 1, the full line in the kernel's format: '$r'" eval '[ "$l" = 1 ] && [ -z "$r" ]'
	r=$(kit write $f "some 50000 1000000")
	expect "some trigger on $f: '$r', want EINVAL" [ "${r%% *}" = EINVAL ]
}

# --- the cgroup tree (cgroups=1, psi_cgroup.c): the groups in debugfs
# against the cgroup2 hierarchy, line for line (a cgroup's id is its
# directory's inode number)
CG=/sys/fs/cgroup
CGDBG=/sys/kernel/debug/psi_mod/cgroups
CGPARAM=/sys/module/psi_mod/parameters/cgroups
cg_mount() { grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG; }
# every cgroup below the root as the groups list it: "id parent_id level
# parent_group" (parent_group 0 for the root's children)
cg_expected() {
	find $CG -mindepth 1 -type d -exec stat -c '%i %n' {} + |
	awk -v root=$CG -v rootid=$(stat -c %i $CG) '
		{ id[$2] = $1; name[NR] = $2 }
		END {
			id[root] = rootid
			for (i = 1; i <= NR; i++) {
				d = name[i]; p = d; sub("/[^/]*$", "", p)
				rel = substr(d, length(root) + 2)
				lvl = gsub("/", "/", rel) + 1
				print id[d], id[p], lvl, (lvl > 1 ? id[p] : 0)
			}
		}' | sort
}
# cg_settle: up to 20 s for every removed cgroup to be released
cg_settle() {
	local i
	for i in $(seq 100); do
		[ "$(awk '$1 == "nr_dying_descendants" { print $2 }' $CG/cgroup.stat)" = 0 ] && return 0
		sleep 0.2
	done
	return 1
}
cg_check() {	# WHAT
	local n
	expect "$1: removed cgroups not released within 20 s: $(grep dying $CG/cgroup.stat | tr '\n' ' ')" cg_settle
	cg_expected > $C/want
	sort $CGDBG > $C/got
	n=$(wc -l < $C/want)
	expect "$1: groups differ from the $n cgroups: $(diff $C/want $C/got | grep '^[-+][0-9]' | head -4 | tr '\n' ' ')" cmp -s $C/want $C/got
	expect "$1: the files' tree differs from the cgroups': $(cg_files_diff | head -4 | tr '\n' ' ')" cg_files_wait
	note "$1: $n cgroups, $(wc -l < $C/got) groups, debug: $(debug_line cgroups)"
}
# the files' tree (<proc_dir>/cgroup) against the cgroups': a directory
# per cgroup, path for path, each with its pressure files
cg_files_diff() {
	(cd $CG && find . -mindepth 1 -type d | sort) > $C/cgdirs
	(cd $PSI_DIR/cgroup 2>/dev/null && find . -mindepth 1 -type d | sort) > $C/fdirs
	diff $C/cgdirs $C/fdirs | grep '^[-+]\.'
	(cd $PSI_DIR/cgroup 2>/dev/null && find . -type f | sort) > $C/ffiles
	(echo .; cat $C/cgdirs) | awk -v r="$CG_FILE_RES" '
		{ n = split(r, a, " "); for (i = 1; i <= n; i++) print $0 "/" a[i] ".pressure" }' |
		sort | diff - $C/ffiles | grep '^[-+]\.'
}
# up to 10 s for the files to follow the tree (the work makes and
# removes them after the cgroups' events)
cg_files_wait() {
	local i
	for i in $(seq 50); do
		[ -z "$(cg_files_diff)" ] && return 0
		sleep 0.2
	done
	return 1
}
CG_FILE_RES="cpu io memory"
# cg_churn DIR N: N rounds (0: until $C/cgstop exists) of a nested
# mkdir and rmdir under DIR, a sleeping task moved into the deepest
# cgroup and out again each round; prints "rounds <n>"
cg_churn() {
	local i=0 t
	mkdir -p $1
	sleep 1000 & t=$!
	while if [ $2 = 0 ]; then [ ! -f $C/cgstop ]; else [ $i -lt $2 ]; fi; do
		mkdir -p $1/x/y/z
		echo $t > $1/x/y/z/cgroup.procs
		echo $t > $CG/cgroup.procs
		rmdir $1/x/y/z $1/x/y $1/x
		i=$((i + 1))
	done
	kill $t
	echo "rounds $i"
}
# cg_storm_start N: four cg_churn streams of N rounds (0: until
# cg_storm_stop); cg_storm_wait waits for them (in this shell, not in a
# $(...): only the parent can wait) and sets CG_MADE to the cgroups made
cg_storm_start() {
	local w
	rm -f $C/cgstop $C/cgchurn.*
	CG_STREAMS=
	for w in 1 2 3 4; do
		cg_churn $CG/storm$w $1 > $C/cgchurn.$w 2>&1 &
		CG_STREAMS="$CG_STREAMS $!"
	done
}
cg_storm_wait() {
	wait $CG_STREAMS
	CG_MADE=$(awk '$1 == "rounds" { n += $2 * 3 } END { print n + 0 }' $C/cgchurn.*)
}
cg_storm_stop() { touch $C/cgstop; cg_storm_wait; }

# cgroups=1 (psi_cgroup.c): one group per cgroup2 cgroup, parented as the
# cgroups are, for those made before the load (adopted) and after it, and
# none for a removed cgroup once it is released; through mkdir/rmdir
# storms with tasks moving, and load/unload cycles in the middle of one.
# The groups in debugfs are compared with the tree, line for line (a
# cgroup's id is its directory's inode number). Then cgroups= at runtime:
# off frees the tree, on adopts what is there, toggled in a storm too; a
# bad value is EINVAL. CG_ROUNDS rounds per
# stream, CG_CYCLES load/unload cycles (the suite may set fewer).
case_cgroup_tree() {
	local i r m
	cg_mount || { bad "cannot mount cgroup2 on $CG"; return; }
	ensure_unloaded || { bad "cannot unload the module first"; return; }
	if uname -v | grep -q PREEMPT_RT; then
		m=$(dmesg_mark)
		r=$(mod_load cgroups=1)
		dmesg_since $m | grep 'cgroups=1' >> $EXPECTED
		expect "PREEMPT_RT: insmod cgroups=1 '$r', want EOPNOTSUPP" [ "${r%% *}" = EOPNOTSUPP ]
		expect "PREEMPT_RT: module loaded with cgroups=1" eval '! mod_loaded'
		note "PREEMPT_RT: cgroups=1 refused (${r%% *})"
		mod_load > /dev/null
		return
	fi
	mkdir -p $CG/t/a/b/c/d
	for i in $(seq 40); do mkdir $CG/t/s$i; done
	r=$(mod_load cgroups=1)
	expect "load with cgroups=1: $r" [ "$r" = ok ]
	mod_loaded || return
	cg_check "adopted at the load"
	mkdir -p $CG/t/a/b/c/d/e $CG/u/v
	for i in $(seq 20); do rmdir $CG/t/s$i; done
	cg_check "after mkdir and rmdir"
	cg_storm_start ${CG_ROUNDS:-250}
	cg_storm_wait
	expect "cgroups made and removed: $CG_MADE, want $((${CG_ROUNDS:-250} * 12))" [ "$CG_MADE" = $((${CG_ROUNDS:-250} * 12)) ]
	cg_check "after $CG_MADE cgroups made and removed in 4 streams"
	# the groups' own slab caches (slab_nomerge on the command line keeps
	# them apart): each destroyed at the unload and at cgroups=0, where
	# one with objects left is the kernel's warning (a panic here)
	set -- $(slab_line psi_mod_group) $(slab_line psi_mod_group_cpu)
	expect "slab caches psi_mod_group, psi_mod_group_cpu listed: '$*'" [ $# = 8 ]
	expect "psi_mod_group active objects ${1:-?} >= the groups $(debug_line cgroups | cut -d' ' -f1)" [ "${1:-0}" -ge "$(debug_line cgroups | cut -d' ' -f1)" ]
	note "bytes per cgroup: psi_mod_group ${3:-?} + psi_mod_group_cpu ${7:-?} x $(cpus_possible) CPUs"
	# load and unload in the middle of a storm
	cg_storm_start 0
	for i in $(seq ${CG_CYCLES:-8}); do
		r=$(mod_unload)
		expect "unload $i under churn: '$r'" [ -z "$r" ]
		r=$(mod_load cgroups=1)
		expect "load $i under churn: $r" [ "$r" = ok ]
	done
	cg_storm_stop
	cg_check "after ${CG_CYCLES:-8} load/unload cycles with $CG_MADE cgroups made and removed meanwhile"
	rmdir $CG/t/a/b/c/d/e $CG/t/a/b/c/d $CG/t/a/b/c $CG/t/a/b $CG/t/a $CG/u/v $CG/u
	for i in $(seq 21 40); do rmdir $CG/t/s$i; done
	rmdir $CG/t $CG/storm1 $CG/storm2 $CG/storm3 $CG/storm4
	cg_check "all removed"
	set -- $(debug_line cgroups)
	expect "groups now ${1:-?}, made ${2:-?} - freed ${3:-?} since the load" [ "${1:-x}" = $((${2:-0} - ${3:-0})) ]
	expect "groups failed: ${4:-?}" [ "${4:-x}" = 0 ]
	# at runtime: off frees the tree, on adopts what is there, also in
	# the middle of a storm
	r=$(kit write $CGPARAM 0)
	expect "cgroups=0 at runtime: $r" [ "$r" = ok ]
	expect "groups listed after cgroups=0: $(wc -l < $CGDBG)" [ ! -s $CGDBG ]
	expect "debug line after cgroups=0: '$(debug_line cgroups)'" [ -z "$(debug_line cgroups)" ]
	expect "slab caches after cgroups=0: '$(slab_line psi_mod_group)$(slab_line psi_mod_group_cpu)', want none" [ -z "$(slab_line psi_mod_group)$(slab_line psi_mod_group_cpu)" ]
	mkdir -p $CG/rt/a/b
	r=$(kit write $CGPARAM 1)
	expect "cgroups=1 at runtime: $r" [ "$r" = ok ]
	cg_check "cgroups=1 at runtime"
	cg_storm_start 0
	for i in $(seq ${CG_CYCLES:-8}); do
		r=$(kit write $CGPARAM 0)$(kit write $CGPARAM 1)
		expect "cgroups 0/1 $i under churn: $r" [ "$r" = okok ]
	done
	cg_storm_stop
	cg_check "after ${CG_CYCLES:-8} runtime toggles with $CG_MADE cgroups made and removed meanwhile"
	rmdir $CG/rt/a/b $CG/rt/a $CG/rt $CG/storm1 $CG/storm2 $CG/storm3 $CG/storm4
	m=$(dmesg_mark)
	r=$(kit write $CGPARAM 2)
	dmesg_since $m >> $EXPECTED
	expect "cgroups=2 at runtime: $r, want EINVAL" [ "${r%% *}" = EINVAL ]
	expect "cgroups reads '$(cat $CGPARAM)' after a bad write, want Y" [ "$(cat $CGPARAM)" = Y ]
	mod_unload > /dev/null
	expect "reload without cgroups=1: $(mod_load)" mod_loaded
	expect "no cgroups line without cgroups=1" eval '[ -z "$(debug_line cgroups)" ]'
}

# --- per-cgroup pressure (cgroups=1): psi_mod's figures per group are in
# debugfs, "<cgroup id> <resource> some|full avg10=... total=..."
CGP=/sys/kernel/debug/psi_mod/cgroup_pressure
# cg_snap OUT FILE...: kit snap of FILE... and of $CGP, whose lines read
# as the files "cg:<id>:<resource>" for snap_val and snap_delta. Each
# FILE of a cgroup (the kernel's) is followed by psi_mod's file for the
# same cgroup and resource in its tree, read right after it: then the two
# are read microseconds apart in both snapshots, not the whole list
# apart, which a host that stalls the guest stretches, and the tree's
# figures stand for the group's (those of $CGP for any other group).
cg_snap() {
	local o=$1 f d m args= map=$C/cgsnap.map
	shift
	: > $map
	for f in "$@"; do
		args="$args $f"
		d=${f%/*}
		case $d in $CG/*) ;; *) continue ;; esac
		m=$PSI_DIR/cgroup/${d#$CG/}/${f##*/}
		[ -f "$m" ] || continue
		args="$args $m"
		echo "$m $(cg_file $d ${f##*/})" >> $map
	done
	kit snap $args $CGP | awk -v p=$CGP -v map=$map '
		BEGIN { while ((getline l < map) > 0) { split(l, a, " "); sub(/\.pressure$/, "", a[2]); tree[a[1]] = a[2] } }
		$1 in tree { f = tree[$1]; seen[f] = 1; $1 = ""; print f $0; next }
		$1 == p { f = "cg:" $2 ":" $3; if (f in seen) next
			  $1 = $2 = $3 = ""; sub(/^ +/, ""); print f, $0; next }
		{ print }' > "$o"
}
# cg_begin: the module loaded, cgroup2 mounted on $CG and cgroups=1
# written at runtime; false (said) if not
cg_begin() {
	local r
	mod_loaded || { bad "module not loaded"; return 1; }
	cg_mount || { bad "cannot mount cgroup2 on $CG"; return 1; }
	r=$(kit write $CGPARAM 1)
	expect "cgroups=1 at runtime: $r" [ "$r" = ok ]
	[ "$r" = ok ]
}
# cg_file DIR RES: psi_mod's name in a cg_snap for DIR's RES pressure
cg_file() { echo "cg:$(stat -c %i "$1"):$2"; }
# cg_run DIR CPU SECS: a spinner pinned to CPU in cgroup DIR, in the
# background (its pid in $C/pids: bg_kill ends it)
cg_run() {
	sh -c 'echo $$ > "$1/cgroup.procs" && exec taskset -c "$2" spin "$3"' \
		cg_run "$1" "$2" "$3" &
	echo $! >> $C/pids
}
# cg_clock_dir RES:STATE: clock_dir for a cgroup below the root. cpu full
# is real there: a group's tasks runnable and none running, ended by a
# switch to one of them, at psi_mod's clock read after the kernel's, as
# cpu some (a task alone in its cgroup: its some and full are the same).
cg_clock_dir() { case $1 in cpu:full) echo 1 ;; *) clock_dir $1 ;; esac; }
# cg_sbs A B WALL WAKEUPS LABEL DIR...: each DIR's cpu, io and memory
# totals, kernel (DIR/RES.pressure) against psi_mod, between the snapshots
# A and B (or from zero if DIR is not in A: made between them), within
# the accuracy target (total_verdict); the cgroup's depth adds
# CLOCK_ORDER_LEVEL_US per wakeup and level to the clock-read allowance;
# noted per DIR: the totals of the resources in CG_SBS_NOTE (default cpu)
cg_sbs() {
	local a=$1 b=$2 wall=$3 wk=$4 label=$5 d r k kf mf dk dm lvl v sum
	shift 5
	for d in "$@"; do
		sum=
		lvl=$(echo "${d#$CG/}" | awk -F/ '{ print NF }')
		for r in cpu io memory; do
			kf=$d/$r.pressure mf=$(cg_file $d $r)
			for k in some full; do
				if grep -q "^$kf " $a; then
					dk=$(snap_delta $a $b $kf $k)
					dm=$(snap_delta $a $b $mf $k)
				else
					dk=$(snap_val $b $kf $k total)
					dm=$(snap_val $b $mf $k total)
				fi
				if ! isint "$dk" || ! isint "$dm"; then
					bad "$label ${d#$CG/} $r $k: unreadable totals (kernel '$dk', psi_mod '$dm')"
					continue
				fi
				case " ${CG_SBS_NOTE:-cpu} " in
				*" $r "*) sum="$sum $r $k kernel+${dk}us psi_mod+${dm}us" ;;
				esac
				v=$(CLOCK_ORDER_US=$((CLOCK_ORDER_US + lvl * CLOCK_ORDER_LEVEL_US)) \
					total_verdict "$dk" "$dm" "$wall" "$wk" "$(cg_clock_dir $r:$k)")
				expect "$label ${d#$CG/} $r $k: psi_mod +${dm}us vs kernel +${dk}us in ${wall}us (target ${v#* }us, $wk wakeups, depth $lvl)" \
					[ "${v%% *}" != MISS ]
			done
		done
		note "$label ${d#$CG/}:$sum"
	done
}


# io and memory per cgroup beside the kernel's (psi=1, cgroups=1 at
# runtime): an O_DIRECT reader pinned to CPU 1 two levels down (io/r), a
# hog over its memory.high two levels down in a sibling subtree (mem/hog:
# its reclaim, and the penalty it sleeps over the limit, are memory stalls
# charged to that cgroup), a spinner on CPU 0 in a third (cpu); every
# group's cpu, io and memory totals against the kernel's cgroup files over
# the reader's 10 s (cg_sbs): the io groups' cpu some is the reader's wait
# from each wakeup to its switch, read by psi_mod after the kernel's PSI
# has done its work at the switch (the clock-read allowance per wakeup and
# level, docs/accuracy.md, "Per cgroup side by side"). The compare suite
# runs it, alone on the host: with another guest beside it the io rows
# missed too (docs/accuracy.md).
case_cgroup_iomem() {
	local s=$CG/sbm d r wall ca cb p files dk
	cg_begin || return
	if ! grep -qw memory $CG/cgroup.controllers; then
		bad "this kernel has no memory controller: no memory stall in a cgroup"
		kit write $CGPARAM 0 > /dev/null
		return
	fi
	mkdir -p $s/io/r $s/mem $s/cpu
	r=$({ echo +memory > $CG/cgroup.subtree_control &&
		echo +memory > $s/cgroup.subtree_control &&
		echo +memory > $s/mem/cgroup.subtree_control &&
		mkdir $s/mem/hog && echo 8M > $s/mem/hog/memory.high; } 2>&1)
	expect "memory.high 8M two levels down: $r" [ "$(cat $s/mem/hog/memory.high 2>&1)" = 8388608 ]
	files=
	for d in $s $s/io $s/io/r $s/mem $s/mem/hog $s/cpu; do
		files="$files $d/cpu.pressure $d/io.pressure $d/memory.pressure"
	done
	cg_snap $C/a $files
	ca=$(ctxt)
	sh -c 'echo $$ > "$1/cgroup.procs" && exec memhog 64 600' hog $s/mem/hog > /dev/null 2>&1 &
	echo $! >> $C/pids
	cg_run $s/cpu 0 12
	sh -c 'echo $$ > "$1/cgroup.procs" && exec taskset -c 1 dio read "$2" 10' dio $s/io/r $DISK > $C/dio 2>&1 &
	p=$!
	wait $p
	cg_snap $C/b $files
	cb=$(ctxt)
	bg_kill
	wall=$(($(snap_t $C/b) - $(snap_t $C/a)))
	dk=$(snap_delta $C/a $C/b $s/io/r/io.pressure some)
	expect "kernel's io/r io some grew ${dk}us: no io stall ($(cat $C/dio))" igt "${dk:-0}" 0
	dk=$(snap_delta $C/a $C/b $s/mem/hog/memory.pressure some)
	expect "kernel's mem/hog memory some grew ${dk}us: no memory stall" igt "${dk:-0}" 0
	CG_SBS_NOTE="cpu io memory" cg_sbs $C/a $C/b $wall $(((cb - ca) / 2)) iomem \
		$s $s/io $s/io/r $s/mem $s/mem/hog $s/cpu
	note "$(cat $C/dio)"
	rmdir $s/mem/hog $s/mem $s/io/r $s/io $s/cpu $s
	r=$(kit write $CGPARAM 0)
	expect "cgroups=0 at runtime: $r" [ "$r" = ok ]
}

# cg_rt_refused: on PREEMPT_RT, where cgroups=1 cannot be, check that it
# is refused at runtime (EOPNOTSUPP, said in dmesg) and succeed; else fail.
cg_rt_refused() {
	local m r
	uname -v | grep -q PREEMPT_RT || return 1
	m=$(dmesg_mark)
	r=$(kit write $CGPARAM 1)
	dmesg_since $m | grep 'cgroups=1' >> $EXPECTED
	expect "PREEMPT_RT: cgroups=1 at runtime '$r', want EOPNOTSUPP" [ "${r%% *}" = EOPNOTSUPP ]
	note "PREEMPT_RT: cgroups=1 refused (${r%% *})"
	return 0
}

# Per-cgroup pressure under a known load (cgroups=1 at runtime; on this
# kernel the groups hang on the cgroups' own PSI pointers): CPU 0 runs two
# spinners in a/a1/a3 and one in b, CPU 1 one in a, every task CPU-bound,
# all in the root's runqueue (no cpu controller), so each of CPU 0's gets
# a third of it. Then, from the kernel's rules: a3 some all the time (one
# of its two always waits), full while b runs (a third); b some and full
# alike (its one task waits two thirds); a weighs CPU 0 and CPU 1 alike
# (both non-idle all along): half of a3's some and full, plus half of
# what its spinner waited on CPU 1 (for the test's own shell, a kworker),
# which counts in its some and its full alike: that excess is the same in
# both (but for the weights' rounding to jiffies), no less than that
# rounding takes (0.5%), and no more than CPU 1's own stall in the
# system-wide cpu some (whose CPUs are both non-idle all along: twice its
# growth less the window, within 1% of the window). The bounds allow the scheduler's slices and
# TCG, not another result.
case_cgroup_acct() {
	local s=$CG/acct m r w rs a3s a3f bs bf as af ds df tol
	mod_loaded || { bad "module not loaded"; return; }
	cg_mount || { bad "cannot mount cgroup2 on $CG"; return; }
	cg_rt_refused && return
	r=$(kit write $CGPARAM 1)
	expect "cgroups=1 at runtime: $r" [ "$r" = ok ]
	[ "$r" = ok ] || return
	mkdir -p $s/a/a1/a3 $s/b
	cg_run $s/a/a1/a3 0 16
	cg_run $s/a/a1/a3 0 16
	cg_run $s/b 0 16
	cg_run $s/a 1 16
	sleep 2
	cg_snap $C/a $PSI_DIR/cpu
	sleep 10
	cg_snap $C/b $PSI_DIR/cpu
	w=$(($(snap_t $C/b) - $(snap_t $C/a)))
	rs=$(snap_delta $C/a $C/b $PSI_DIR/cpu some)
	a3s=$(snap_delta $C/a $C/b $(cg_file $s/a/a1/a3 cpu) some)
	a3f=$(snap_delta $C/a $C/b $(cg_file $s/a/a1/a3 cpu) full)
	bs=$(snap_delta $C/a $C/b $(cg_file $s/b cpu) some)
	bf=$(snap_delta $C/a $C/b $(cg_file $s/b cpu) full)
	as=$(snap_delta $C/a $C/b $(cg_file $s/a cpu) some)
	af=$(snap_delta $C/a $C/b $(cg_file $s/a cpu) full)
	note "in ${w}us: a3 some ${a3s} full ${a3f}; b some ${bs} full ${bf}; a some ${as} full ${af}; system some ${rs}"
	expect "a3 cpu some ${a3s}us in ${w}us, want >= 95%" pct_ge "$a3s" "$w" 95
	expect "a3 cpu full ${a3f}us in ${w}us, want 28-39%" eval 'pct_ge "$a3f" "$w" 28 && ! pct_ge "$a3f" "$w" 39'
	expect "b cpu some ${bs}us in ${w}us, want 61-72%" eval 'pct_ge "$bs" "$w" 61 && ! pct_ge "$bs" "$w" 72'
	expect "b cpu full ${bf}us, want b's some ${bs}us: its one task" [ "$bf" = "$bs" ]
	ds=$((as * 2 - a3s)) df=$((af * 2 - a3f))
	expect "a cpu some ${as}us: twice that less a3's ${a3s}us is ${ds}us, want -0.5% of a3's to CPU 1's stall $((2 * rs - w))us (system some ${rs}us) + 1% of ${w}us" \
		eval '[ $((ds * 200)) -ge $((-a3s)) ] && [ $((ds * 100)) -le $(((2 * rs - w) * 100 + w)) ]'
	# the same excess but for the weights' rounding: a CPU's non-idle
	# time read a jiffy short in a 2 s period moves some and full apart
	# by a 500th of their difference there
	tol=$(((a3s - a3f) / 250 + 10))
	expect "a cpu full ${af}us: twice that less a3's ${a3f}us is ${df}us, want some's ${ds}us within ${tol}us" \
		eval '[ $((df - ds)) -le $tol ] && [ $((ds - df)) -le $tol ]'
	bg_kill
	rmdir $s/a/a1/a3 $s/a/a1 $s/a $s/b $s
	r=$(kit write $CGPARAM 0)
	expect "cgroups=0 at runtime: $r" [ "$r" = ok ]
}

# The files of per-cgroup pressure (cgroups=1 at runtime, psi_cgroup.c):
# <proc_dir>/cgroup mirrors the cgroup2 tree, a directory per cgroup with
# cpu, io and memory.pressure. The root's are the system-wide figures
# (read between two reads of the system-wide file); a group's are its
# own, in the kernel's format (a non-root cpu full line its own), between
# two reads of the debug view; owner and mode as the kernel's cgroup files
# (0644, the cgroup's maker: root's, or a delegated owner's mkdir); poll
# at once with ERR and PRI as the kernel's without a trigger; files gone at rmdir, a reader
# holding one open gets errors from then on (the default hierarchy
# refuses renames: paths are fixed); a cgroup named after a pressure file
# gets no files, said once; cgroups=0 takes the tree away.
case_cgroup_files() {
	local s=$CG/files f m r x y z t n
	mod_loaded || { bad "module not loaded"; return; }
	cg_mount || { bad "cannot mount cgroup2 on $CG"; return; }
	if uname -v | grep -q PREEMPT_RT; then
		m=$(dmesg_mark)
		r=$(kit write $CGPARAM 1)
		dmesg_since $m | grep 'cgroups=1' >> $EXPECTED
		expect "PREEMPT_RT: cgroups=1 at runtime '$r', want EOPNOTSUPP" [ "${r%% *}" = EOPNOTSUPP ]
		expect "PREEMPT_RT: $PSI_DIR/cgroup there without the groups" [ ! -e $PSI_DIR/cgroup ]
		return
	fi
	mkdir -p $s/a/b
	# before the groups: a cgroup delegated (chowned) after root made
	# it, and one its delegate made in it
	chown 65534:65534 $s/a $s/a/cgroup.procs $s/a/cgroup.subtree_control
	r=$(kit mkdiras 65534 $s/a/pre)
	expect "mkdir as uid 65534 in a cgroup delegated to it: $r" [ "$r" = ok ]
	r=$(kit write $CGPARAM 1)
	expect "cgroups=1 at runtime: $r" [ "$r" = ok ]
	[ "$r" = ok ] || return
	expect "the files' tree differs from the cgroups': $(cg_files_diff | head -4 | tr '\n' ' ')" cg_files_wait
	f=$PSI_DIR/cgroup
	for r in cpu io memory; do
		expect_format $f/$r.pressure $r
		expect_format $f/files/a/b/$r.pressure $r-group
	done
	# the root's: the system-wide figures
	cg_run $s/a/b 0 12
	cg_run $s/a/b 0 12
	sleep 3
	# reads 100 ms apart: a collection weighs each CPU's time by its
	# whole jiffies of non-idle time (the kernel's rule), so two reads
	# within a jiffy can show the same total
	kit snap $PSI_DIR/cpu > $C/r1
	sleep 0.1
	kit snap $f/cpu.pressure > $C/r2
	sleep 0.1
	kit snap $PSI_DIR/cpu > $C/r3
	x=$(snap_val $C/r1 $PSI_DIR/cpu some total) y=$(snap_val $C/r2 $f/cpu.pressure some total)
	z=$(snap_val $C/r3 $PSI_DIR/cpu some total)
	expect "root cpu.pressure some total ${y}, want between the system-wide ${x} and ${z}" \
		eval '[ "${x:-x}" -le "${y:-0}" ] && [ "${y:-x}" -le "${z:-0}" ] && [ "$x" -lt "$z" ]'
	# a group's: its own, as the debug view has them
	t=$f/files/a/b/cpu.pressure
	cg_snap $C/g1 $t
	sleep 0.1
	cg_snap $C/g2 $t
	n=$(cg_file $s/a/b cpu)
	x=$(snap_val $C/g1 $n some total) y=$(snap_val $C/g2 $t some total)
	z=$(snap_val $C/g2 $n some total)
	expect "files/a/b cpu some total ${y:-?}, want between the debug view's ${x:-?} and ${z:-?}" \
		eval '[ "${x:-x}" -le "${y:-0}" ] && [ "${y:-x}" -le "${z:-0}" ] && [ "$x" -lt "$z" ]'
	# a cgroup's cpu full line, its own: from 5.13, as the kernel's
	if [ "$CPU_FULL_LINE" = 1 ]; then
		x=$(snap_val $C/g2 $t full total)
		expect "files/a/b cpu full total ${x:-?} with two spinners on one CPU, want > 0" [ "${x:-0}" -gt 0 ]
	fi
	bg_kill
	# owners and modes: the cgroup's maker's, as the kernel's files
	r=$(stat -c '%a %u:%g' $t)
	expect "files/a/b/cpu.pressure mode and owner '$r', want '644 0:0'" [ "$r" = "644 0:0" ]
	r=$(stat -c '%u:%g' $f/files/a/io.pressure 2>&1)
	expect "files/a/io.pressure owner '$r', want 0:0 (made by root, chowned since)" [ "$r" = "0:0" ]
	r=$(stat -c '%a %u:%g' $f/files/a/pre/memory.pressure 2>&1)
	expect "files/a/pre/memory.pressure mode and owner '$r', want '644 65534:65534' (made by uid 65534 before the groups)" \
		[ "$r" = "644 65534:65534" ]
	r=$(kit mkdiras 65534 $s/a/deleg)
	expect "mkdir as uid 65534 in a cgroup delegated to it: $r" [ "$r" = ok ]
	cg_files_wait
	r=$(stat -c '%a %u:%g' $f/files/a/deleg/memory.pressure 2>&1)
	expect "files/a/deleg/memory.pressure mode and owner '$r', want '644 65534:65534'" [ "$r" = "644 65534:65534" ]
	r=$(stat -c '%u:%g' $f/files/a/deleg 2>&1)
	expect "files/a/deleg owner '$r', want 65534:65534" [ "$r" = "65534:65534" ]
	# poll as the kernel's without a trigger (triggers: cgroup-trig)
	r=$(kit poll $t 2000)
	m=${r##* } m=${m%ms}
	expect "poll files/a/b/cpu.pressure: '$r', want ERR and PRI at once" \
		eval 'echo "$r" | grep -q ERR && echo "$r" | grep -q PRI && [ "${m:-x}" -lt 1000 ]'
	# a cgroup named after a pressure file: no files, said once
	m=$(dmesg_mark)
	if mkdir $s/memory.pressure 2>/dev/null; then
		sleep 1
		dmesg_since $m | grep 'gets no files' >> $EXPECTED
		expect "a cgroup named memory.pressure got a directory" [ ! -d $f/files/memory.pressure ]
		expect_format $f/files/memory.pressure
		expect "files failed: $(debug_val cgroup_files_failed), want 1" [ "$(debug_val cgroup_files_failed)" = 1 ]
		expect "the reason in dmesg for the cgroup without files" eval 'dmesg_since $m | grep -q "gets no files"'
		rmdir $s/memory.pressure
	else
		note "mkdir memory.pressure refused by the kernel (its own pressure files)"
	fi
	# the default hierarchy refuses a rename: the paths stay
	r=$(mv $s/a $s/a2 2>&1 && echo renamed)
	expect "rename of a cgroup2 cgroup: '$r', want it refused" [ "${r%renamed}" = "$r" ]
	# a reader, and a writer, holding a file open across its cgroup's rmdir
	rm -f $C/go
	kit hold $f/files/a/b/io.pressure 4 > $C/hold &
	x=$!
	trig late $f/files/a/b/cpu.pressure 'some 100000 1000000\n' $C/go > $C/late &
	y=$!
	sleep 1
	rmdir $s/a/b
	expect "after rmdir: $(cg_files_diff | head -4 | tr '\n' ' ')" cg_files_wait
	touch $C/go
	wait $x $y
	r=$(cat $C/hold)
	expect "a reader across the rmdir: '$r', want good reads, then errors" \
		eval 'echo "$r" | grep -Eq "hold: [1-9][0-9]* good reads, 0 empty, [1-9][0-9]* errors"'
	note "reader across the rmdir: $r"
	r=$(cat $C/late)
	expect "a trigger written after the rmdir on a file opened before: '$r', want procfs's EIO" [ "$r" = EIO ]
	rmdir $s/a/deleg $s/a/pre $s/a $s
	cg_check "the case's cgroups removed"
	m=$(dmesg_mark)
	r=$(kit write $CGPARAM 0)
	dmesg_since $m | grep 'went without files' >> $EXPECTED
	expect "cgroups=0 at runtime: $r" [ "$r" = ok ]
	expect "$f still there after cgroups=0" [ ! -e $f ]
}

# events_gaps FILE: the smallest gap between two events, ms ("-" if < 2)
events_gaps() {
	awk '$1 == "event" { if (n++) { g = $2 - p; if (m == "" || g < m) m = g } p = $2 } END { print (m == "" ? "-" : m) }' "$1"
}
events_n() { awk '$1 == "events" { print $2 }' "$1"; }

# rmdir_poller FILE DIR: a poller of a trigger on FILE across DIR's rmdir
# (1 s after its start): woken with ERR within 4 s of its start
rmdir_poller() {
	local r m c
	trig watch $1 'some 100000 1000000\n' 10 poll > $C/wg 2>&1 &
	c=$!
	sleep 1
	rmdir $2
	wait $c
	r=$(grep '^gone' $C/wg)
	expect "a poller across its cgroup's rmdir: '$(tr '\n' ' ' < $C/wg)', want woken with ERR" \
		eval 'echo "$r" | grep -q ERR'
	m=${r#gone } m=${m%% *}
	expect "woken ${m:-?} ms after the start, want within 4 s (rmdir after 1 s)" ile "${m:-99999}" 4000
}

# Triggers on the per-cgroup files (cgroups=1): the kernel's ABI on each
# cgroup's files, evaluated on that cgroup's own pressure. With 4 spinners
# in one cgroup on 2 vCPUs, a privileged cpu some 10% / 1 s trigger on
# its file fires about once per second and one on an idle sibling's never;
# the delegated owner of a cgroup (uid 65534, unprivileged: a 2 s window,
# the averaging work) gets events on its own cgroup's file and cannot
# open another's for writing; a trigger on the top's file (the root's:
# the system's pressure) fires under the spinners; a poller is woken with
# ERR when its cgroup is removed, and when the tree goes (cgroups=0),
# where one of the system-wide file stays, and nothing of the sets is
# left after. On PREEMPT_RT: cgroups=1 refused at runtime (EOPNOTSUPP).
case_cgroup_trig() {
	local s=$CG/trig f=$PSI_DIR/cgroup/trig m r nb ni nd nr i c d
	mod_loaded || { bad "module not loaded"; return; }
	cg_mount || { bad "cannot mount cgroup2 on $CG"; return; }
	cg_rt_refused && return
	mkdir -p $s/busy $s/idle $s/gone $s/deleg
	chown 65534:65534 $s/deleg $s/deleg/cgroup.procs $s/deleg/cgroup.subtree_control
	r=$(kit write $CGPARAM 1)
	expect "cgroups=1 at runtime: $r" [ "$r" = ok ]
	[ "$r" = ok ] || return
	# made after the groups came: its files are its maker's
	r=$(kit mkdiras 65534 $s/deleg/own)
	expect "mkdir as uid 65534 in a cgroup delegated to it: $r" [ "$r" = ok ]
	expect "the files' tree differs from the cgroups': $(cg_files_diff | head -4 | tr '\n' ' ')" cg_files_wait
	r=$(trig -u 65534 write $f/busy/cpu.pressure 'some 100000 2000000\n')
	expect "uid 65534 writing root's cgroup's file: '$r', want the open's EACCES" \
		eval 'case "$r" in open*EACCES) true ;; *) false ;; esac'
	# privileged: a busy cgroup's file fires, an idle sibling's does not
	for i in 0 1 2 3; do cg_run $s/busy $((i % 2)) 12; done
	# and the top's file (the root cgroup's: the system's pressure)
	trig watch $f/busy/cpu.pressure 'some 100000 1000000\n' 8 poll > $C/wb 2>&1 &
	c=$!
	trig watch $PSI_DIR/cgroup/cpu.pressure 'some 100000 1000000\n' 8 epoll > $C/wr 2>&1 &
	i=$!
	trig watch $f/idle/cpu.pressure 'some 100000 1000000\n' 8 epoll > $C/wi 2>&1
	wait $c $i
	bg_kill
	nb=$(events_n $C/wb) ni=$(events_n $C/wi) nr=$(events_n $C/wr)
	expect "the top's cpu some 100ms/1s events in 8 s under 4 spinners: ${nr:-none}, want >= 4: $(tr '\n' ' ' < $C/wr)" ige "${nr:-0}" 4
	expect "busy cgroup's cpu some 100ms/1s events in 8 s under 4 spinners: ${nb:-none}, want >= 4: $(tr '\n' ' ' < $C/wb)" ige "${nb:-0}" 4
	expect "busy cgroup's events only $(events_gaps $C/wb) ms apart, want >= 900 (one per window)" \
		eval '[ "$(events_gaps $C/wb)" = - ] || ige "$(events_gaps $C/wb)" 900'
	expect "idle cgroup's events: ${ni:-none}, want 0: $(tr '\n' ' ' < $C/wi)" [ "${ni:-x}" = 0 ]
	# the delegated owner, unprivileged, on its own cgroup's file
	for i in 0 1 2 3; do cg_run $s/deleg/own $((i % 2)) 14; done
	trig -u 65534 watch $f/deleg/own/cpu.pressure 'some 100000 2000000\n' 11 poll > $C/wd 2>&1 &
	c=$!
	sleep 2
	r=$(debug_line triggers)
	wait $c
	bg_kill
	nd=$(events_n $C/wd)
	if unpriv_triggers; then
		expect "the owner's trigger counted as '$r', want '1 0' (averaging work)" [ "$r" = "1 0" ]
	else
		expect "the owner's trigger counted as '$r', want '0 1' (before the 6.5 rules: the fast path)" [ "$r" = "0 1" ]
	fi
	expect "uid 65534's 2 s trigger events on its cgroup in 11 s under spinners: ${nd:-none}, want >= 3: $(tr '\n' ' ' < $C/wd)" ige "${nd:-0}" 3
	# a poller across its cgroup's rmdir, and across cgroups=0
	rmdir_poller $f/gone/memory.pressure $s/gone
	r=$(trig write $f/gone/memory.pressure 'some 100000 1000000\n' 2>&1)
	expect "a write to a removed cgroup's file: '$r', want the open's ENOENT (or ENODEV, before the files' work)" \
		eval 'case "$r" in open*ENOENT | ENODEV) true ;; *) false ;; esac'
	# across cgroups=0: pollers of a cgroup's file and of the top's go,
	# one of the system-wide file (the same set as the top's) stays
	trig watch $f/idle/io.pressure 'some 100000 1000000\n' 10 epoll > $C/wt 2>&1 &
	c=$!
	trig watch $PSI_DIR/cgroup/memory.pressure 'some 100000 1000000\n' 10 poll > $C/wtop 2>&1 &
	i=$!
	trig watch $PSI_DIR/memory 'some 100000 1000000\n' 5 epoll > $C/wsys 2>&1 &
	d=$!
	sleep 1
	r=$(debug_line trigger_sets)
	expect "trigger sets with one cgroup trigger open: '$r', want >= 1" ige "${r:-0}" 1
	m=$(dmesg_mark)
	r=$(kit write $CGPARAM 0)
	dmesg_since $m | grep 'went without files' >> $EXPECTED
	expect "cgroups=0 at runtime: $r" [ "$r" = ok ]
	wait $c $i $d
	expect "a poller across cgroups=0: '$(tr '\n' ' ' < $C/wt)', want woken with ERR" grep -q '^gone.*ERR' $C/wt
	expect "a poller of the top's file across cgroups=0: '$(tr '\n' ' ' < $C/wtop)', want woken with ERR" grep -q '^gone.*ERR' $C/wtop
	expect "a poller of the system-wide file across cgroups=0: '$(tr '\n' ' ' < $C/wsys)', want its 5 s to the end" \
		eval '! grep -q "^gone" $C/wsys && grep -q "^events " $C/wsys'
	r="$(debug_line triggers) / $(debug_line trigger_sets)"
	expect "after cgroups=0: triggers and sets '$r', want '0 0 / 0'" [ "$r" = "0 0 / 0" ]
	rmdir $s/deleg/own $s/deleg $s/busy $s/idle $s
	note "busy $nb events (min gap $(events_gaps $C/wb) ms), idle $ni, top $nr; owner $nd; rmdir: $(grep '^gone' $C/wg); cgroups=0: $(grep '^gone' $C/wt)"
}

# cgroupfs=1 (psi_cgroupfs.c): the pressure files in cgroupfs itself, in
# every cgroup2 cgroup, the root's included: in the cgroups made before
# (their makers' as owners) and after; the kernel's format; the figures
# of the /proc tree's file of the same cgroup, the root's the system-wide
# ones; read as opencontainers/cgroups reads them (openat2 beneath the
# mount, on cgroup2); the trigger ABI (events under spinners, EINVAL,
# EBUSY, the owner's unprivileged trigger); pollers and readers across an
# rmdir, cgroupfs=0, cgroups=0 and rmmod, woken with ERR, nothing of the
# module left (triggers, sets), and nothing in cgroupfs after. Where the
# kernel makes its own files (5.10 whatever psi= says) those are the ones
# psi_mod answers, with the same checks, a reader held open from before;
# after, they fail as before the load (EOPNOTSUPP). On PREEMPT_RT
# cgroups=1 is refused.
CGFSPARAM=/sys/module/psi_mod/parameters/cgroupfs
cgfs_any() { ls $CG/*.pressure > /dev/null 2>&1; }
# cgfs_gone [DIR]: nothing of psi_mod's in cgroupfs: no pressure files at
# the root (nor in DIR), or where the kernel makes its own, the root's
# (and DIR's) cpu.pressure failing as the kernel's with psi=0
CGFS_KERNEL=0
cgfs_gone() {
	local d
	if [ $CGFS_KERNEL = 0 ]; then
		! cgfs_any && [ ! -e "${1:-$CG}/cpu.pressure" ]
		return
	fi
	for d in $CG ${1:-}; do
		cat $d/cpu.pressure 2>&1 | grep -q 'Operation not supported' || return 1
	done
}
# cgfs_refused WHEN REASON: cgroupfs=1 refused with EOPNOTSUPP, REASON (a
# grep pattern) on one dmesg line, the parameter back at N
cgfs_refused() {
	local m r
	m=$(dmesg_mark)
	r=$(kit write $CGFSPARAM 1)
	dmesg_since $m | grep 'cgroupfs=1 refused' >> $EXPECTED
	expect "cgroupfs=1 $1: '$r', want EOPNOTSUPP" [ "${r%% *}" = EOPNOTSUPP ]
	r=$(dmesg_since $m | grep -c "cgroupfs=1 refused: $2")
	expect "the refusal's reason ('$2') in dmesg: $r lines, want 1" [ "$r" = 1 ]
	expect "cgroupfs parameter reads '$(cat $CGFSPARAM)' after the refusal, want N" [ "$(cat $CGFSPARAM)" = N ]
}
case_cgroupfs() {
	local s=$CG/cgfs f=$PSI_DIR/cgroup m r x y z c i n nb ni res
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	cg_mount || { bad "cannot mount cgroup2 on $CG"; return; }
	cg_rt_refused && return
	r=$(kit write $CGPARAM 1)
	expect "cgroups=1 at runtime: $r" [ "$r" = ok ]
	CGFS_KERNEL=0
	if cgfs_any; then
		# 5.10: the kernel's own files, failing every read with psi=0
		CGFS_KERNEL=1
		expect "the kernel's own cpu.pressure before cgroupfs=1: '$(cat $CG/cpu.pressure 2>&1)', want EOPNOTSUPP" cgfs_gone
	fi
	mkdir -p $s/a/b $s/gone
	chown 65534:65534 $s/a $s/a/cgroup.procs $s/a/cgroup.subtree_control
	r=$(kit mkdiras 65534 $s/a/pre)
	expect "mkdir as uid 65534 in a cgroup delegated to it: $r" [ "$r" = ok ]
	# before any change of the root's cgroup.subtree_control (no case
	# before this one in its suites makes one) its children have no
	# implicit controllers' csses: refused, with the reason
	if [ $CGFS_KERNEL = 0 ] && [ -z "$(cat $CG/cgroup.subtree_control)" ]; then
		cgfs_refused "before the root's cgroup.subtree_control changed" "the root.s cgroup.subtree_control never changed"
		expect "cgroup pressure files in $CG after a refusal" eval '! cgfs_any'
	fi
	# as an init system does at boot: the root's children get their
	# implicit controllers' csses (perf_event's, which has the files)
	r=$(kit write $CG/cgroup.subtree_control +pids)
	expect "+pids in the root's cgroup.subtree_control: $r" [ "$r" = ok ]
	# a cgroup named like a file: refused (EEXIST, the reason once), the
	# cgroup and its directory intact; a cgroup made and removed so all
	# along while cgroupfs goes 1 and 0: never one left without its
	# directory (a failed add's undoing would remove it); once the files
	# are there such a mkdir fails
	if [ $CGFS_KERNEL = 0 ]; then
		y=$(dmesg_mark)
		mkdir $s/a/memory.pressure
		m=$(dmesg_mark)
		r=$(kit write $CGFSPARAM 1)
		expect "cgroupfs=1 with a cgroup named memory.pressure: '$r', want EEXIST" [ "${r%% *}" = EEXIST ]
		r=$(dmesg_since $m | grep -c 'cgroupfs=1 refused: a cgroup is named memory.pressure, as one of the files')
		expect "the refusal's reason in dmesg: $r lines, want 1" [ "$r" = 1 ]
		expect "pressure files in cgroupfs after the refusal, or the parameter '$(cat $CGFSPARAM)'" \
			eval '! cgfs_any && [ ! -e $s/a/b/cpu.pressure ] && [ "$(cat $CGFSPARAM)" = N ]'
		r=$(rmdir $s/a/memory.pressure 2>&1 && echo ok)
		expect "rmdir of the cgroup named memory.pressure after the refusal: '$r'" [ "$r" = ok ]
		rm -f $C/stop
		(while [ ! -e $C/stop ]; do
			mkdir $s/a/memory.pressure 2>/dev/null || continue
			rmdir $s/a/memory.pressure 2>/dev/null || { echo "lost: $(ls -d $s/a/memory.pressure 2>&1)"; break; }
		done) > $C/clash 2>&1 &
		x=$!
		m=$(dmesg_mark) n=0 z=0
		for i in $(seq ${CG_CYCLES:-8}); do
			r=$(kit write $CGFSPARAM 1)
			case $r in
			ok) n=$((n + 1)); kit write $CGFSPARAM 0 > /dev/null ;;
			EEXIST*) z=$((z + 1)) ;;
			*) expect "cgroupfs=1 with the clashing cgroup coming and going: '$r', want ok or EEXIST" false ;;
			esac
		done
		touch $C/stop
		wait $x
		# the /proc tree's note of such a cgroup, from its work
		sleep 1
		dmesg_since $y | grep -e 'cgroupfs=1 refused' -e 'gets no files' >> $EXPECTED
		expect "the clashing cgroup lost its directory: $(cat $C/clash)" [ ! -s $C/clash ]
		r=$(sed -n 's/^nr_descendants //p' $s/a/cgroup.stat)
		i=$(find $s/a -mindepth 1 -type d | wc -l)
		expect "a/cgroup.stat counts $r descendants, the tree has $i directories" [ "$r" = "$i" ]
		note "with a cgroup named memory.pressure coming and going: cgroupfs=1 $n times ok, $z times EEXIST"
		rmdir $s/a/memory.pressure 2>/dev/null
	fi
	# the kernel's file opened before cgroupfs=1, read across it
	[ $CGFS_KERNEL = 1 ] && { kit hold $s/a/b/cpu.pressure 3 > $C/hold0 & x=$!; sleep 1; }
	m=$(dmesg_mark)
	r=$(kit write $CGFSPARAM 1)
	expect "cgroupfs=1 at runtime: $r" [ "$r" = ok ]
	[ "$r" = ok ] || { dmesg_since $m | tail -3; return; }
	if [ $CGFS_KERNEL = 1 ]; then
		r=$(dmesg_since $m | grep -c "cgroupfs=1: the kernel's own pressure files in every cgroup2 cgroup, answered by psi_mod")
		expect "the taking of the kernel's files said in dmesg: $r lines, want 1" [ "$r" = 1 ]
		wait $x
		r=$(cat $C/hold0)
		expect "a reader of the kernel's file across cgroupfs=1: '$r', want errors, then good reads" \
			eval 'echo "$r" | grep -Eq "hold: [1-9][0-9]* good reads, 0 empty, [1-9][0-9]* errors"'
	fi
	expect "cgroupfs parameter reads '$(cat $CGFSPARAM)', want Y" [ "$(cat $CGFSPARAM)" = Y ]
	for res in cpu io memory; do
		expect_format $CG/$res.pressure $res
		expect_format $s/a/b/$res.pressure $res-group
	done
	expect "irq.pressure in $CG without irq=1" [ ! -e $CG/irq.pressure ]
	mkdir $s/a/new
	expect "no memory.pressure in a cgroup made after" [ -f $s/a/new/memory.pressure ]
	r=$(mkdir $s/a/cpu.pressure 2>&1)
	expect "mkdir of a cgroup named cpu.pressure with the files there: '$r', want File exists" \
		eval 'echo "$r" | grep -q "File exists"'
	# owners and modes, as the kernel's: its maker's
	r=$(stat -c '%a %u:%g' $s/a/b/cpu.pressure)
	expect "a/b/cpu.pressure mode and owner '$r', want '644 0:0'" [ "$r" = "644 0:0" ]
	r=$(stat -c '%a %u:%g' $s/a/pre/memory.pressure 2>&1)
	expect "a/pre/memory.pressure '$r', want '644 65534:65534' (made by uid 65534 before)" [ "$r" = "644 65534:65534" ]
	r=$(kit mkdiras 65534 $s/a/deleg)
	expect "mkdir as uid 65534 in a cgroup delegated to it: $r" [ "$r" = ok ]
	r=$(stat -c '%a %u:%g' $s/a/deleg/io.pressure 2>&1)
	expect "a/deleg/io.pressure '$r', want '644 65534:65534' (made by uid 65534 after)" [ "$r" = "644 65534:65534" ]
	# as opencontainers/cgroups opens them; kubelet's probe
	r=$(cd $CG && kit beneath $CG cpu.pressure io.pressure memory.pressure \
		cgfs/a/b/cpu.pressure cgfs/a/b/io.pressure cgfs/a/b/memory.pressure)
	expect "openat2 beneath $CG, on cgroup2, and read: '$r', want 'ok 6'" [ "$r" = "ok 6" ]
	# the figures: the /proc tree's of the same cgroup, the system's at the root
	cg_run $s/a/b 0 14
	cg_run $s/a/b 0 14
	sleep 3
	kit snap $f/cgfs/a/b/cpu.pressure > $C/f1
	sleep 0.1
	kit snap $s/a/b/cpu.pressure > $C/f2
	sleep 0.1
	kit snap $f/cgfs/a/b/cpu.pressure $PSI_DIR/cpu > $C/f3
	sleep 0.1
	kit snap $CG/cpu.pressure > $C/f4
	sleep 0.1
	kit snap $PSI_DIR/cpu > $C/f5
	x=$(snap_val $C/f1 $f/cgfs/a/b/cpu.pressure some total)
	y=$(snap_val $C/f2 $s/a/b/cpu.pressure some total)
	z=$(snap_val $C/f3 $f/cgfs/a/b/cpu.pressure some total)
	expect "a/b/cpu.pressure some total ${y:-?}, want between the /proc tree's ${x:-?} and ${z:-?}" \
		eval '[ "${x:-x}" -le "${y:-0}" ] && [ "${y:-x}" -le "${z:-0}" ] && [ "$x" -lt "$z" ]'
	if [ "$CPU_FULL_LINE" = 1 ]; then
		y=$(snap_val $C/f2 $s/a/b/cpu.pressure full total)
		expect "a/b cpu full total ${y:-?} with two spinners on one CPU, want > 0" [ "${y:-0}" -gt 0 ]
	fi
	x=$(snap_val $C/f3 $PSI_DIR/cpu some total)
	y=$(snap_val $C/f4 $CG/cpu.pressure some total)
	z=$(snap_val $C/f5 $PSI_DIR/cpu some total)
	expect "root cpu.pressure some total ${y:-?}, want between the system-wide ${x:-?} and ${z:-?}" \
		eval '[ "${x:-x}" -le "${y:-0}" ] && [ "${y:-x}" -le "${z:-0}" ] && [ "$x" -lt "$z" ]'
	# triggers: the kernel's ABI, on the cgroup's own pressure
	trig watch $s/a/b/cpu.pressure 'some 100000 1000000\n' 6 epoll > $C/wb 2>&1 &
	c=$!
	trig watch $s/a/new/cpu.pressure 'some 100000 1000000\n' 6 poll > $C/wi 2>&1
	wait $c
	bg_kill
	nb=$(events_n $C/wb) ni=$(events_n $C/wi)
	expect "a/b cpu some 100ms/1s events in 6 s under 2 spinners: ${nb:-none}, want >= 3: $(tr '\n' ' ' < $C/wb)" ige "${nb:-0}" 3
	expect "an idle sibling's events: ${ni:-none}, want 0: $(tr '\n' ' ' < $C/wi)" [ "${ni:-x}" = 0 ]
	r=$(trig write $s/a/b/memory.pressure 'some 1000 x\n')
	expect "a malformed trigger: '$r', want EINVAL" [ "${r%% *}" = EINVAL ]
	r=$(trig write $s/a/b/memory.pressure 'some 1000000 100000\n')
	expect "a threshold over its window: '$r', want EINVAL" [ "${r%% *}" = EINVAL ]
	r=$(trig twice $s/a/b/io.pressure 'some 100000 1000000\n' 'full 100000 1000000\n')
	expect "two triggers on one descriptor: '$r', want 'ok EBUSY'" [ "${r%% (*}" = "ok EBUSY" ]
	r=$(trig -u 65534 write $s/a/b/cpu.pressure 'some 100000 2000000\n')
	expect "uid 65534 writing root's cgroup's file: '$r', want the open's EACCES" \
		eval 'case "$r" in open*EACCES) true ;; *) false ;; esac'
	r=$(trig -u 65534 write $s/a/pre/cpu.pressure 'some 100000 2000000\n')
	expect "uid 65534 writing a trigger on its own cgroup's file: '$r', want ok" [ "$r" = ok ]
	# a poller across its cgroup's rmdir
	rmdir_poller $s/gone/memory.pressure $s/gone
	# cgroupfs=0 with a reader, an epoll and a poll poller (the root's): gone, woken
	kit hold $s/a/b/io.pressure 3 > $C/hold &
	x=$!
	trig watch $s/a/b/io.pressure 'some 100000 1000000\n' 10 epoll > $C/we 2>&1 &
	c=$!
	trig watch $CG/memory.pressure 'some 100000 1000000\n' 10 poll > $C/wr 2>&1 &
	i=$!
	sleep 1
	r=$(kit write $CGFSPARAM 0)
	expect "cgroupfs=0 at runtime: $r" [ "$r" = ok ]
	wait $x $c $i
	expect "psi_mod's cgroup pressure files after cgroupfs=0" cgfs_gone $s/a/b
	expect "the /proc tree's a/b files gone with cgroupfs=0" [ -f $f/cgfs/a/b/cpu.pressure ]
	r=$(cat $C/hold)
	expect "a reader across cgroupfs=0: '$r', want good reads, then errors" \
		eval 'echo "$r" | grep -Eq "hold: [1-9][0-9]* good reads, 0 empty, [1-9][0-9]* errors"'
	expect "an epoll poller across cgroupfs=0: '$(tr '\n' ' ' < $C/we)', want woken with ERR" grep -q '^gone.*ERR' $C/we
	expect "a poller of the root's across cgroupfs=0: '$(tr '\n' ' ' < $C/wr)', want woken with ERR" grep -q '^gone.*ERR' $C/wr
	r="$(debug_line triggers)"
	expect "triggers after cgroupfs=0: '$r', want '0 0'" [ "$r" = "0 0" ]
	# back, then cgroups=0 takes them, cgroups=1 brings them again
	r=$(kit write $CGFSPARAM 1)
	expect "cgroupfs=1 again: $r" [ "$r" = ok ]
	expect "no cpu.pressure in a/b after cgroupfs=1 again" [ -f $s/a/b/cpu.pressure ]
	trig watch $s/a/b/cpu.pressure 'some 100000 1000000\n' 10 epoll > $C/we 2>&1 &
	c=$!
	sleep 1
	m=$(dmesg_mark)
	r=$(kit write $CGPARAM 0)
	dmesg_since $m | grep 'went without files' >> $EXPECTED
	expect "cgroups=0 at runtime: $r" [ "$r" = ok ]
	wait $c
	expect "psi_mod's cgroup pressure files after cgroups=0" cgfs_gone $s/a/b
	expect "a poller across cgroups=0: '$(tr '\n' ' ' < $C/we)', want woken with ERR" grep -q '^gone.*ERR' $C/we
	r=$(kit write $CGPARAM 1)
	expect "cgroups=1 again: $r" [ "$r" = ok ]
	expect "no files in $CG after cgroups=1 with cgroupfs=1" [ -f $s/a/b/cpu.pressure ]
	# cgroups made and removed in 4 streams while the files go and come
	# (cgroupfs=0/1) and the module unloads and loads with them, a reader
	# on the root's and a group's files all along
	kit readers 2 600 $CG/memory.pressure $s/a/b/cpu.pressure > $C/rd &
	x=$!
	cg_storm_start 0
	for i in $(seq ${CG_CYCLES:-8}); do
		r=$(kit write $CGFSPARAM 0)$(kit write $CGFSPARAM 1)
		expect "cgroupfs 0/1 $i under churn: $r" [ "$r" = okok ]
		r=$(mod_unload)
		expect "unload $i under churn with cgroupfs=1: '$r'" [ -z "$r" ]
		r=$(mod_load cgroups=1 cgroupfs=1)
		expect "load $i under churn with cgroups=1 cgroupfs=1: $r, cgroupfs $(cat $CGFSPARAM)" \
			eval '[ "$r" = ok ] && [ "$(cat $CGFSPARAM)" = Y ]'
	done
	cg_storm_stop
	kill -TERM $x 2>/dev/null
	wait $x
	cg_check "after ${CG_CYCLES:-8} cgroupfs toggles and load/unload cycles with $CG_MADE cgroups made and removed meanwhile"
	r=$(find $CG -mindepth 1 -type d | while read -r d; do [ -f $d/cpu.pressure ] || echo $d; done | head -3)
	expect "cgroups without cpu.pressure after the storm: '$r'" [ -z "$r" ]
	r=$(cat $C/rd)
	expect "readers across the storm: '$r', want reads" eval 'set -- $r; [ "${2:-0}" -gt 0 ]'
	rmdir $CG/storm1 $CG/storm2 $CG/storm3 $CG/storm4
	# rmmod with a file open, read and polled: bounded, everything gone
	kit hold $s/a/b/memory.pressure 4 > $C/hold &
	x=$!
	trig watch $s/a/b/memory.pressure 'some 100000 1000000\n' 20 epoll > $C/we 2>&1 &
	c=$!
	sleep 1
	m=$(kit now)
	r=$(mod_unload)
	m=$((($(kit now) - m) / 1000))
	expect "rmmod with cgroupfs files open: '$r' in $m ms, want done within 5 s" \
		eval '[ -z "$r" ] && ile $m 5000'
	wait $x $c
	expect "psi_mod's cgroup pressure files after rmmod" cgfs_gone $s/a/b
	expect "a poller across rmmod: '$(tr '\n' ' ' < $C/we)', want woken with ERR" grep -q '^gone.*ERR' $C/we
	r=$(cat $C/hold)
	expect "a reader across rmmod: '$r', want good reads, then errors" \
		eval 'echo "$r" | grep -Eq "hold: [1-9][0-9]* good reads, 0 empty, [1-9][0-9]* errors"'
	rmdir $s/a/deleg $s/a/new $s/a/pre $s/a/b $s/a $s
	kit write $CG/cgroup.subtree_control -pids > /dev/null
	r=$(mod_load)
	expect "reload: $r" [ "$r" = ok ]
	expect "psi_mod's cgroup pressure files after a plain reload" cgfs_gone
	note "$([ $CGFS_KERNEL = 1 ] && echo "the kernel's own files answered; ")events: a/b $nb, idle sibling $ni; rmdir: $(grep '^gone' $C/wg); rmmod in $m ms"
}

# psi=1: cgroupfs=1 refused (the kernel's own files are there), with its
# reason in dmesg once; the kernel's files and the /proc tree untouched.
case_cgroupfs_refused() {
	local m r before
	mod_loaded || { bad "module not loaded"; return; }
	cg_mount || { bad "cannot mount cgroup2 on $CG"; return; }
	before=$(cat $CGPARAM)
	r=$(kit write $CGPARAM 1)
	expect "cgroups=1 at runtime: $r" [ "$r" = ok ]
	m=$(dmesg_mark)
	cgfs_refused "with the kernel's PSI on" "the kernel.s own PSI is on"
	expect_format $CG/cpu.pressure cpu
	expect "the /proc tree gone after the refusal" [ -f $PSI_DIR/cgroup/cpu.pressure ]
	note "$(dmesg_since $m | grep -o 'cgroupfs=1 refused.*' | head -1)"
	[ "$before" = N ] && kit write $CGPARAM 0 > /dev/null
}
