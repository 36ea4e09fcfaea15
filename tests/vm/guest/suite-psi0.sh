# Suite "psi0": the module on a kernel booted psi=0 (its intended use).
# The host reads the case list from the CASES= line below.
CASES="load format poll idle worklag spin io iowrite mem hackbench toggle churn thread-exec pidwrap badparams rmmod-readers loadunload dmesg"
. /tests/lib.sh
. /tests/cases.sh
PSI_DIR=/proc/pressure

# The averaging work keeps time with a stall on one CPU while the CPU it
# last ran on idles: two spinners pinned to cpu1 for 20 s, nothing on cpu0
# (where the test sleeps). Its deferrable timer must sit on the busy CPU,
# or it fires only when cpu0 next wakes: periods folded late (then as if
# they had been idle). On time means as the kernel's own work: queued for
# the jiffy after the grid point, a timer 2 s out sits in the timer
# wheel's second level or above and fires up to one bucket (8^level
# jiffies) late; allowed: that bucket and 3 jiffies for the worker to run.
case_worklag() {
	local hz lag folds lim r d g n
	ensure_loaded || { bad "module not loaded and insmod failed"; return; }
	# a restart zeroes the module's counters
	r=$(kit write $ENABLE 0)$(kit write $ENABLE 1)
	expect "enable 0 and 1: $r" [ "$r" = okok ]
	bg taskset -c 1 spin 22; bg taskset -c 1 spin 22
	taskset -c 0 sleep 20
	lag=$(debug_val avgs_lag_max_us) folds=$(debug_val avgs_lag_folds)
	bg_kill
	hz=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^psitest.hz=//p')
	hz=${hz:-250}
	# the wheel's level for 2*HZ+1 jiffies: level n starts at 63 << 3(n-1)
	d=$((2 * hz + 1)) g=1 n=63
	while [ $d -ge $n ]; do g=$((g * 8)) n=$((n * 8)); done
	lim=$(((g + 3) * 1000000 / hz))
	expect "only ${folds:-no} folds timed in 20 s, want >= 8" ige "${folds:-0}" 8
	expect "a fold came ${lag:-?} us after its grid point, want <= $lim" ile "${lag:-999999999}" $lim
	note "$folds folds, the latest ${lag} us after its grid point (limit $lim): $(awk '$1 == "avgs_lags_us"' /sys/kernel/debug/psi_mod/state); runs $(debug_val avgs_work_runs), on the waking timer $(debug_val avgs_work_wake_runs)"
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
	for i in 1 2 3 4; do bg spin 20; done
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

# bad parameters at insmod and at runtime are refused with EINVAL
case_badparams() {
	local p r m e
	ensure_unloaded || { bad "cannot unload the module first"; return; }
	for p in enable=2 memstall_tracepoints=2 proc_dir=a/b proc_dir=.. proc_dir=. proc_dir=; do
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
run_case thread-exec 90 case_thread_exec
run_case pidwrap 100 case_pidwrap
run_case badparams 40 case_badparams
run_case rmmod-readers 60 case_rmmod_readers
run_case loadunload 120 case_loadunload
run_case dmesg 20 case_dmesg
suite_end
