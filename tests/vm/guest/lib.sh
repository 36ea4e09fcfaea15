# Guest-side test library, sourced by the suite-*.sh scripts (busybox ash).
#
# No `set -e`: most commands in a test are expected to fail sometimes and
# every failure is turned into an explicit FAIL with a reason instead.
# `set -u` catches typos in variable names, which would otherwise make a
# comparison silently true.
set -u

KO=/psi_mod.ko
PSI_DIR=${PSI_DIR:-/proc/pressure}
RESFILES="cpu io memory"
# Strict per-line format of a pressure file (the kernel's seq_printf format).
PSI_RE='^(some|full) avg10=[0-9]+\.[0-9]{2} avg60=[0-9]+\.[0-9]{2} avg300=[0-9]+\.[0-9]{2} total=[0-9]+$'
CPU_FULL_ZERO='full avg10=0.00 avg60=0.00 avg300=0.00 total=0'
# the system-wide cpu file's full line: from 5.13
case $(uname -r) in
[0-4].* | 5.[0-9].* | 5.1[0-2].*) CPU_FULL_LINE=0 ;;
*) CPU_FULL_LINE=1 ;;
esac
C=/tmp/case			# per-case scratch state (reset by run_case)
EXPECTED=/tmp/expected-dmesg	# dmesg lines the bad-parameter cases provoke on purpose

# Results go to the console (humans read the log) and to ttyS1, a channel
# the kernel never writes to, so the host parses lines no printk interleaves.
report() {
	echo "@@CASE $*"
	if [ -c /dev/ttyS1 ]; then echo "@@CASE $*" > /dev/ttyS1; fi
}

# --- assertion bookkeeping (files, because cases run in a subshell)
note() { echo "$*" >> $C/notes; }
ok() { echo "$*" >> $C/asserts; }
bad() { echo "$*" >> $C/fails; echo "  FAILED: $*"; }
# expect DESC CMD...: one assertion; DESC is the failure reason.
expect() {
	local d=$1; shift
	if "$@"; then ok "$d"; else bad "$d"; fi
}
# integer comparisons that are false (not a shell error) on a non-number,
# e.g. the "?" snap_delta prints for an unreadable file
isint() { case "$1" in ''|-|*[!0-9-]*) return 1 ;; esac; }
igt() { isint "$1" && isint "$2" && [ "$1" -gt "$2" ]; }
ige() { isint "$1" && isint "$2" && [ "$1" -ge "$2" ]; }
ile() { isint "$1" && isint "$2" && [ "$1" -le "$2" ]; }
# pct_ge PART WHOLE PCT: PART >= PCT% of WHOLE
pct_ge() { isint "$1" && isint "$2" && [ $(($1 * 100)) -ge $(($2 * $3)) ]; }
# float comparisons (ash arithmetic is integer only)
fge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }
flt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0) }'; }
fle() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }

# --- background work owned by the current case; run_case kills leftovers
bg() { "$@" & echo $! >> $C/pids; }
bg_kill() {
	[ -f $C/pids ] || return 0
	for p in $(cat $C/pids); do kill -9 "$p" 2>/dev/null; done
	for p in $(cat $C/pids); do wait "$p" 2>/dev/null; done
	rm -f $C/pids
}
# spinners N SECS: N CPU burners in the background, spinner i pinned to CPU
# i mod nproc, so that every CPU carries its share whatever the balancer
# does (unpinned, it may leave 3 on one CPU and 1 on the other of 2 for
# most of a run: then one CPU is not stalled at all)
spinners() {
	local i n
	n=$(nproc)
	for i in $(seq 0 $(($1 - 1))); do bg taskset -c $((i % n)) spin "$2"; done
}
# kill_tree PID: PID and every descendant, stopped first so that none can
# fork a new one meanwhile (a case's subshell killed alone leaves its
# children running: an apt-get holding the dpkg lock, say)
kill_tree() {
	local c
	kill -STOP "$1" 2>/dev/null
	for c in $(cat /proc/$1/task/*/children 2>/dev/null); do kill_tree "$c"; done
	kill -9 "$1" 2>/dev/null
}

# --- the accuracy target for a total, psi_mod side by side with
# the kernel's PSI (psi1's sbs-idle, the compare suite): |psi_mod - kernel|
# within 2% of the kernel's total + 10 ms per 10 s of wall time (1 us per
# ms). Where tasks sleep and wake all the time the clock-read order
# (docs/accuracy.md) lengthens psi_mod's cpu some and shortens its io waits
# by up to CLOCK_ORDER_US per wakeup: the kernel's own PSI work between its
# clock reads and the nearest a probe can read; at each enqueue the kernel
# also changes every cgroup level of the task before the root's, after
# psi_mod's stamp: CLOCK_ORDER_LEVEL_US more per level below the root.
# What these allow for, measured per event by tests/vm/clockcmp.sh:
# docs/accuracy.md, "Clock-read order, per event".
CLOCK_ORDER_US=10
CLOCK_ORDER_LEVEL_US=2
# From 6.12 psi_mod times a wakeup at the tracepoint, after the kernel's
# read (psim_enqueued_at(), include/psi_mod_compat.h): the wakeup's part
# then moves the totals the other way (cpu some shorter, io longer), by up
# to CLOCK_ORDER_BACK_US per wakeup, and what is left the first way is the
# switch's part, whatever the cgroup depth; before 6.12 nothing goes back.
case $(uname -r) in
[0-5].* | 6.[0-9].* | 6.1[01].*) CLOCK_ORDER_BACK_US=0 ;;
*) CLOCK_ORDER_US=4 CLOCK_ORDER_LEVEL_US=0 CLOCK_ORDER_BACK_US=5 ;;
esac
# clock_dir RES:STATE: the direction that order moves psi_mod's total in
# (1 higher, -1 lower, 0 not affected)
clock_dir() { case $1 in cpu:some) echo 1 ;; io:*) echo -1 ;; *) echo 0 ;; esac; }
# total_verdict K_US M_US WALL_US [WAKEUPS DIR]: prints "VERDICT TOL": ok,
# clk (beyond TOL in DIR, or from 6.12 against it, by no more than the
# allowance for WAKEUPS) or MISS
total_verdict() {
	local d=$(($2 - $1)) tol=$(($1 / 50 + $3 / 1000)) wk=${4:-0} dir=${5:-0}
	if [ $d -le $tol ] && [ $((-d)) -le $tol ]; then
		echo "ok $tol"
	elif [ $((d * dir)) -gt 0 ] && [ $((d * dir)) -le $((tol + wk * CLOCK_ORDER_US)) ]; then
		echo "clk $tol"
	elif [ $((d * dir)) -lt 0 ] && [ $((-d * dir)) -le $((tol + wk * CLOCK_ORDER_BACK_US)) ]; then
		echo "clk $tol"
	else
		echo "MISS $tol"
	fi
}

# join lines of a file with "; "
joinl() { awk 'NR > 1 { printf "; " } { printf "%s", $0 }' "$@" 2>/dev/null; }

# run_case NAME LIMIT_SECONDS FUNCTION
# Runs FUNCTION in a subshell with a watchdog. PASS needs at least one
# assertion and no failed one: a case that asserts nothing is a FAIL.
# The watchdog is one sleeping process, not a polling loop: on an "idle"
# system a loop forking `sleep 0.25` four times a second would itself show
# up as cpu pressure (fork/exec under TCG takes milliseconds).
# psitest.cases=a,b on the kernel command line (run.sh --cases) selects cases
CASE_FILTER=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^psitest.cases=//p' | tr ',' ' ')
# psitest.limitx=N (reliability.sh --debug-vm): every case's time limit
# times N, for kernels that run the same work several times slower
LIMITX=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^psitest.limitx=//p')
run_case() {
	local name=$1 limit=$(($2 * ${LIMITX:-1})) fn=$3 pid wd d
	if [ -n "$CASE_FILTER" ]; then
		case " $CASE_FILTER " in *" $name "*) ;; *) return 0 ;; esac
	fi
	rm -rf $C; mkdir -p $C
	echo "--- case $name (limit ${limit}s) at $(cut -d' ' -f1 /proc/uptime)s"
	( $fn ) &
	pid=$!
	( trap 'kill $sp 2>/dev/null; exit 0' TERM
	  sleep $limit & sp=$!
	  wait $sp
	  touch $C/timeout
	  kill_tree $pid ) &
	wd=$!
	wait $pid
	kill $wd 2>/dev/null
	wait $wd 2>/dev/null
	bg_kill
	# a case that timed out may have left something to say or to put
	# right for the next one: its after_timeout_<fn>, where the suite
	# defines one
	if [ -f $C/timeout ] && command -v after_timeout_$fn >/dev/null; then
		after_timeout_$fn >>$C/notes 2>&1
	fi
	d=$(joinl $C/notes)
	if [ -f $C/timeout ]; then
		report "$name FAIL timed out after ${limit}s${d:+ | $d}"
	elif [ -s $C/fails ]; then
		report "$name FAIL $(joinl $C/fails)${d:+ | $d}"
	elif [ ! -s $C/asserts ]; then
		report "$name FAIL case made no assertion${d:+ | $d}"
	else
		report "$name PASS ${d:-ok}"
	fi
}

# --- reading pressure files
# psi_val FILE some|full avg10|avg60|avg300|total
psi_val() {
	awk -v k="$2" -v f="$3" '$1 == k { for (i = 2; i <= NF; i++) {
		split($i, a, "="); if (a[1] == f) print a[2] } }' "$1" 2>/dev/null
}
# snap OUT FILE...: back-to-back sample of FILEs with a timestamp (kit snap)
snap() { local o=$1; shift; kit snap "$@" > "$o"; }
# context switches since boot, all CPUs
ctxt() { awk '$1 == "ctxt" { print $2 }' /proc/stat; }
snap_t() { awk '$1 == "T" { print $2 }' "$1"; }
# snap_val SNAP FILE some|full FIELD
snap_val() {
	awk -v p="$2" -v k="$3" -v f="$4" '$1 == p && $2 == k { for (i = 3; i <= NF; i++) {
		split($i, a, "="); if (a[1] == f) print a[2] } }' "$1"
}
# snap_delta A B FILE some|full: growth of total between two snapshots
snap_delta() {
	local a b
	a=$(snap_val "$1" "$3" "$4" total); b=$(snap_val "$2" "$3" "$4" total)
	[ -n "$a" ] && [ -n "$b" ] || { echo "?"; return; }
	echo $((b - a))
}

# check_format FILE [RES]: prints the reason and returns 1 if the file is not
# exactly "some ...\nfull ...\n" matching PSI_RE; with "cpu" (the
# system-wide file) the full line must also be all zeros, and before 5.13
# there is none; with "cpu-group" (a non-root cgroup's) the full line is
# its own, and before 5.13 there is none either.
check_format() {
	local f=$1 tmp=$C/fmt l1 l2 nl nr want=2
	# before 5.13 the kernel's cpu files have their some line only
	case ${2:-} in
	cpu | cpu-group) [ "$CPU_FULL_LINE" = 0 ] && want=1 ;;
	esac
	cat "$f" > $tmp 2>/dev/null || { echo "$f: unreadable"; return 1; }
	nl=$(wc -l < $tmp)
	nr=$(awk 'END { print NR }' $tmp)
	if [ "$nl" != $want ] || [ "$nr" != $want ]; then
		echo "$f: $nr lines ($nl newlines), want $want: $(tr '\n' '|' < $tmp)"
		return 1
	fi
	l1=$(sed -n 1p $tmp)
	case "$l1" in some\ *) ;; *) echo "$f: line 1 is not 'some': $l1"; return 1 ;; esac
	echo "$l1" | grep -Eq "$PSI_RE" || { echo "$f: bad line: $l1"; return 1; }
	[ $want = 2 ] || return 0
	l2=$(sed -n 2p $tmp)
	case "$l2" in full\ *) ;; *) echo "$f: line 2 is not 'full': $l2"; return 1 ;; esac
	echo "$l2" | grep -Eq "$PSI_RE" || { echo "$f: bad line: $l2"; return 1; }
	if [ "${2:-}" = cpu ] && [ "$l2" != "$CPU_FULL_ZERO" ]; then
		echo "$f: cpu full not all zeros: $l2"
		return 1
	fi
	return 0
}
# expect_format FILE [RES]: check_format as an assertion
expect_format() {
	local r
	if r=$(check_format "$@"); then ok "format $1"; else bad "$r"; fi
}

# --- module control
mod_loaded() { [ -d /sys/module/psi_mod ]; }
# mod_load PARAMS...: prints kit's result ("ok" or "EEXIST (17: File exists)")
mod_load() { kit load $KO "$@"; }
mod_unload() { rmmod psi_mod 2>&1; }
# loaded and enabled: a case that timed out mid-toggle must not leave the
# next one without files
ensure_loaded() {
	mod_loaded || mod_load "$@" > /dev/null
	if mod_loaded && [ "$(cat $ENABLE 2>/dev/null)" = N ]; then
		echo 1 > $ENABLE
	fi
	mod_loaded
}
ensure_unloaded() { mod_loaded && mod_unload > /dev/null; ! mod_loaded; }
files_exist() { local r; for r in $RESFILES; do [ -e "$PSI_DIR/$r" ] || return 1; done; }
files_absent() { local r; for r in $RESFILES; do [ ! -e "$PSI_DIR/$r" ] || return 1; done; }

# --- dmesg bookkeeping (raw: "<level>[time] text")
dmesg_mark() { dmesg -r | wc -l; }
dmesg_since() { dmesg -r | tail -n +$(($1 + 1)); }

# suite_begin / suite_end: common start and end of a suite
suite_begin() {
	# the OOM killer must pick the memory hogs, never the test shell
	echo -1000 > /proc/self/oom_score_adj
	: > $EXPECTED
	SUITE_DMESG=$(dmesg_mark)
	echo "suite start: $(nproc) cpus, $(awk '/MemTotal/ { print $2 / 1024 " MiB" }' /proc/meminfo), psi dir $PSI_DIR"
}
suite_end() {
	echo "@@DMESG-BEGIN (since suite start)"
	dmesg_since "$SUITE_DMESG"
	echo "@@DMESG-END"
}
