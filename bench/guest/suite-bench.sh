#!/bin/sh
# Guest side of the overhead benchmark (busybox ash), run by tests/vm/init as
# psitest.suite=bench. Parameters from the kernel command line:
#   bench.modes=none,off,on   module states measured in this boot, run by run
#                             (none: not loaded; off: loaded enable=0; on: enable=1;
#                             onr: enable=1 and 64 processes as uid 65534
#                             reading the pressure files in tight loops, kit
#                             readers, for the run; ont: enable=1 and a
#                             privileged trigger on memory full held for the
#                             run; onp: the same with one on cpu some, which
#                             hackbench's run queue keeps firing; onn:
#                             enable=1 of a module built without the
#                             trigger hook; onc: enable=1 and cgroups=1,
#                             per-cgroup pressure; every other on* mode
#                             with cgroups=0)
#   bench.groups=1:L,2:L,...  hackbench group counts and their loop counts
#   bench.cgs=root,cg         where hackbench runs: the root cgroup, or
#                             /sys/fs/cgroup/a/b/c/d (cgroup2, 4 levels)
#   bench.reps=K              repetitions of the whole grid in this boot
#   bench.rot=R               rotate the mode order by R (+1 per repetition)
#   bench.idle=S              instead: idle cost over S seconds per mode
#   bench.prof=1              profile (bench/run.sh --profile): after each
#                             run with the module loaded, its function
#                             addresses as @@KSYM <run> <address> <name>
# Output on ttyS1 (no printk there), one line per run:
#   @@RUN n=<i> mode=<m> g=<g> l=<l> cg=<root|cg> wall_ns=.. ctxt=.. status=.. time=<hackbench Time:>
# and @@IDLE / @@MEM lines for the idle/memory phase, @@ERR on a setup error.
KO=/psi_mod.ko
PARAM=/sys/module/psi_mod/parameters/enable
CGPARAM=/sys/module/psi_mod/parameters/cgroups
modes=none groups=1:50 cgs=root reps=1 rot=0 idle=0 prof=0
for w in $(cat /proc/cmdline); do
	case "$w" in
	bench.modes=*) modes=${w#*=} ;;
	bench.groups=*) groups=${w#*=} ;;
	bench.cgs=*) cgs=${w#*=} ;;
	bench.reps=*) reps=${w#*=} ;;
	bench.rot=*) rot=${w#*=} ;;
	bench.idle=*) idle=${w#*=} ;;
	bench.prof=*) prof=${w#*=} ;;
	esac
done
modes=$(echo "$modes" | tr , ' ') groups=$(echo "$groups" | tr , ' ') cgs=$(echo "$cgs" | tr , ' ')

out() {
	echo "$*"
	if [ -c /dev/ttyS1 ]; then echo "$*" > /dev/ttyS1; fi
}

# set_mode none|off|on: bring the module to that state from whatever it is in
set_mode() {
	local loaded=0
	[ -d /sys/module/psi_mod ] && loaded=1
	case "$1" in
	none) [ $loaded = 0 ] || rmmod psi_mod ;;
	off) if [ $loaded = 0 ]; then insmod $KO enable=0; else echo 0 > $PARAM; fi ;;
	on*) if [ $loaded = 0 ]; then insmod $KO enable=1; else echo 1 > $PARAM; fi ;;
	esac
	# per-cgroup pressure for onc only (a module without the parameter:
	# onc is not reached, below)
	case "$1" in
	onc) echo 1 > $CGPARAM 2>/dev/null ;;
	on*) [ ! -e $CGPARAM ] || echo 0 > $CGPARAM ;;
	esac
	# verify: a column that silently measured the wrong state would be a lie
	case "$1" in
	none) [ ! -d /sys/module/psi_mod ] ;;
	off) [ "$(cat $PARAM 2>/dev/null)" = N ] ;;
	onc) [ "$(cat $PARAM 2>/dev/null)" = Y ] && [ "$(cat $CGPARAM 2>/dev/null)" = Y ] ;;
	on*) [ "$(cat $PARAM 2>/dev/null)" = Y ] && [ "$(cat $CGPARAM 2>/dev/null || echo N)" = N ] ;;
	esac || { out "@@ERR mode $1 not reached"; return 1; }
}

CG=/sys/fs/cgroup/a/b/c/d
case " $cgs " in
*" cg "*)
	mkdir -p /sys/fs/cgroup
	mount -t cgroup2 none /sys/fs/cgroup || out "@@ERR cgroup2 mount failed"
	mkdir -p $CG || out "@@ERR mkdir $CG failed"
	# the fair baseline's boot: the kernel's PSI without cgroup groups
	case " $(cat /proc/cmdline) " in
	*" cgroup_disable=pressure "*)
		[ ! -e /sys/fs/cgroup/a/cpu.pressure ] ||
			out "@@ERR cgroup_disable=pressure given, but /sys/fs/cgroup/a/cpu.pressure exists" ;;
	esac
	;;
esac

meminfo() {	# one line of the fields the memory cost is read from
	awk '/^(MemFree|MemAvailable|VmallocUsed|Percpu|Slab):/ { printf "%s=%s ", $1, $2 }' /proc/meminfo | tr -d :
}

if [ "$idle" -gt 0 ]; then
	# Idle cost: per mode, S seconds of nothing; count local timer interrupts
	# (each is a wakeup of the one vCPU under NOHZ), psi_mod's work runs
	# (debugfs) and executions of the averaging works (workqueue tracepoint).
	T=/sys/kernel/tracing
	mount -t tracefs nodev $T 2>/dev/null
	for m in $modes; do
		out "@@MEM mode=$m phase=before $(meminfo)"
		set_mode "$m" || continue
		out "@@MEM mode=$m phase=after $(meminfo) modsize=$(awk '$1 == "psi_mod" { print $2 }' /proc/modules)"
		sleep 3
		echo 0 > $T/tracing_on
		echo > $T/trace
		echo 1 > $T/events/workqueue/workqueue_execute_start/enable 2>/dev/null
		echo 1 > $T/events/timer/timer_expire_entry/enable 2>/dev/null
		echo 1 > $T/events/timer/hrtimer_expire_entry/enable 2>/dev/null
		echo 1 > $T/tracing_on
		loc0=$(awk '$1 == "LOC:" { print $2 }' /proc/interrupts)
		r0=$(awk '/avgs_work_runs/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) { print $i; exit } }' /sys/kernel/debug/psi_mod/state 2>/dev/null)
		sleep "$idle"
		loc1=$(awk '$1 == "LOC:" { print $2 }' /proc/interrupts)
		r1=$(awk '/avgs_work_runs/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) { print $i; exit } }' /sys/kernel/debug/psi_mod/state 2>/dev/null)
		echo 0 > $T/tracing_on
		kw=$(grep -c 'function psi_avgs_work' $T/trace)
		mw=$(grep -c 'function psim_' $T/trace)
		all=$(grep -c 'workqueue_execute_start' $T/trace)
		# timer expiries: timer-wheel timers (the works' delay timers among
		# them) and hrtimers (the tick's)
		tw=$(grep -c 'timer_expire_entry' $T/trace)
		th=$(grep -c 'hrtimer_expire_entry' $T/trace)
		out "@@IDLE mode=$m secs=$idle loc=$((loc1 - loc0)) modruns=$(( ${r1:-0} - ${r0:-0} )) kernel_psi_works=$kw module_works=$mw all_works=$all timers=$((tw - th)) hrtimers=$th"
		grep workqueue_execute_start $T/trace | sed 's/.*function //; s/ .*//' | sort | uniq -c | while read -r n f; do
			out "@@WORKS mode=$m $f=$n"
		done
		echo 0 > $T/events/workqueue/workqueue_execute_start/enable
		echo 0 > $T/events/timer/timer_expire_entry/enable
		echo 0 > $T/events/timer/hrtimer_expire_entry/enable
	done
	set_mode none
	exit 0
fi

# profile: the kernel's text symbols for the host (Debian's System.map is a
# stub; nokaslr keeps these addresses for the whole boot), onto the disk
if [ "$prof" = 1 ]; then
	awk 'NF == 3 && $2 ~ /^[tTwW]$/' /proc/kallsyms > /tmp/ksyms
	dd if=/tmp/ksyms of=/dev/vda bs=64k conv=fsync 2>/dev/null || out "@@ERR kallsyms not written to /dev/vda"
	rm -f /tmp/ksyms
fi
# one unmeasured warm-up run
hackbench -p -g 1 -l 10 > /dev/null 2>&1
n=0 rep=0
while [ $rep -lt "$reps" ]; do
	for gl in $groups; do
		g=${gl%%:*} l=${gl#*:}
		for cg in $cgs; do
			# the modes, rotated by rot + rep so none is always first
			set -- $modes
			k=$(( (rot + rep) % $# ))
			while [ $k -gt 0 ]; do set -- "$@" "$1"; shift; k=$((k - 1)); done
			for m in "$@"; do
				set_mode "$m" || continue
				copt= rd= tg=
				[ "$cg" = cg ] && copt="-c $CG"
				if [ "$m" = onr ]; then
					kit readers 64 3600 /proc/pressure/cpu /proc/pressure/io /proc/pressure/memory > /tmp/readers 2>&1 &
					rd=$!
					sleep 1
				fi
				case $m in
				ont) trig watch /proc/pressure/memory 'full 500000 1000000\n' 3600 poll > /tmp/trig 2>&1 & tg=$! ;;
				onp) trig watch /proc/pressure/cpu 'some 100000 1000000\n' 3600 poll > /tmp/trig 2>&1 & tg=$! ;;
				esac
				[ -z "$tg" ] || sleep 1
				pr0=$(awk '$1 == "poll_work_runs" { print $2 }' /sys/kernel/debug/psi_mod/state 2>/dev/null)
				r=$(brun $copt -o /tmp/hb.out -- hackbench -p -g "$g" -l "$l")
				t=$(awk '/^Time:/ { print $2 }' /tmp/hb.out)
				if [ -n "$rd" ]; then
					kill $rd
					wait $rd
					grep -q ' backwards 0$' /tmp/readers || out "@@ERR readers: $(cat /tmp/readers)"
					r="$r readers=$(awk '{ print $2 }' /tmp/readers)"
				fi
				if [ -n "$tg" ]; then
					kill $tg
					wait $tg
					grep -q '^write' /tmp/trig && out "@@ERR trigger: $(cat /tmp/trig)"
					r="$r events=$(grep -c '^event ' /tmp/trig) poll_runs=$(($(awk '$1 == "poll_work_runs" { print $2 }' /sys/kernel/debug/psi_mod/state) - ${pr0:-0}))"
				fi
				out "@@RUN n=$n mode=$m g=$g l=$l cg=$cg $r time=${t:-?}"
				if [ "$prof" = 1 ] && [ -d /sys/module/psi_mod ]; then
					awk -v n=$n '$4 == "[psi_mod]" && $2 ~ /^[tT]$/ { print "@@KSYM " n " " $1 " " $3 }' /proc/kallsyms |
						while read -r l; do out "$l"; done
				fi
				n=$((n + 1))
			done
		done
	done
	rep=$((rep + 1))
done
set_mode none
[ -z "$(dmesg | grep -E 'WARNING|BUG|underflow')" ] || out "@@ERR dmesg: $(dmesg | grep -E 'WARNING|BUG|underflow' | head -3 | tr '\n' ' ')"
out "@@DONE runs=$n"
