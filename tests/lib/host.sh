# shellcheck shell=bash
# Result bookkeeping of the host-side test scripts (bash, sourced, never
# executed): tests/vm, tests/kernels, bench. tests/vm/lib.sh sources it, so
# every script that sources that one has it too.
#
# Every lane prints one line per check, `PASS name[ -- detail]` or
# `FAIL name: why`, and as its last line `N passed, N failed`;
# tests/check.sh counts the PASS/FAIL lines of all lanes.
#
#   RESULT_PREFIX            put before every name (e.g. "kernels/")
#   pass NAME [DETAIL]       print and count a PASS
#   fail NAME WHY            print and count a FAIL
#   step NAME [DETAIL]       print "step NAME -- DETAIL": done, nothing
#                            asserted, not counted
#   finish                   print the count line and exit, 0 only if
#                            nothing failed
#   results_guard NAME WHY   from here on a script that stops before
#                            `finish` (set -e, die, a signal) still ends with
#                            `FAIL NAME: WHY` (or die's message) and the count
#                            line, exit 2; finish_quietly: an exit that
#                            reports nothing (--help)
#   relay                    copy a sub-script's PASS/FAIL lines from stdin
#                            and count them (its own count line is dropped)
#   log MSG / die MSG        progress on stderr; die: setup error, exit 2
#   run_qemu TAG LIMIT LOG   run QEMU_ARGV under a timeout, console to LOG;
#                            sets QEMU_RC (124/137: timed out), and
#                            QEMU_HANG if int3watch.py ended the guest
#   suite_cases FILE [ONLY]  the case names of a guest suite file
#   case_lines RES LOG OUT   the guest's @@ lines, from RES or else LOG
#   collect PREFIX LINES LOG LIMIT [-x] CASE...
#                            one PASS/FAIL per expected case

# sourced once per shell: a second time would reset the counts
[ -z "${PSI_HOST_SH:-}" ] || return 0
PSI_HOST_SH=1
PSI_HOST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
passed=0 failed=0
RESULT_PREFIX=${RESULT_PREFIX:-}
RESULTS_DONE=0

log() { printf '== %s\n' "$*" >&2; }
# die's message is also the reason results_guard gives in its FAIL line
die() { RESULTS_WHY=$*; printf 'ERROR: %s\n' "$*" >&2; exit 2; }

pass() { echo "PASS $RESULT_PREFIX$1${2:+ -- $2}"; passed=$((passed + 1)); }
# a step that checked nothing (e.g. a download an earlier run made): logged
# on stdout, never counted
step() { echo "step $RESULT_PREFIX$1${2:+ -- $2}"; }
fail() { echo "FAIL $RESULT_PREFIX$1: $2"; failed=$((failed + 1)); }

finish() {
	RESULTS_DONE=1
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit
}

results_guard() {	# NAME WHY
	RESULTS_GUARD_NAME=$1 RESULTS_GUARD_WHAT=$2
	trap results_on_exit EXIT
}
# for an exit that reports nothing (--help)
finish_quietly() { RESULTS_DONE=1; }
results_on_exit() {
	local rc=$?
	[ "$RESULTS_DONE" = 1 ] && return
	RESULTS_DONE=1
	fail "$RESULTS_GUARD_NAME" "${RESULTS_WHY:-$RESULTS_GUARD_WHAT} (exit $rc)"
	echo "$passed passed, $failed failed"
	[ "$rc" != 0 ] || exit 2
}

# Call as `relay < <(command)`, not in a pipe: the counts must stay in this
# shell.
relay() {
	local line
	while IFS= read -r line; do
		case "$line" in
		"PASS "*) echo "$line"; passed=$((passed + 1)) ;;
		"FAIL "*) echo "$line"; failed=$((failed + 1)) ;;
		[0-9]*" passed, "[0-9]*" failed") ;;
		*) echo "$line" ;;
		esac
	done
}

# A guest with a monitor socket in QEMU_ARGV (tests/vm/lib.sh qemu_cmd)
# runs under tests/lib/int3watch.py: when the console has been silent for a
# while and a vCPU keeps trapping on an int3 that memory no longer holds
# (QEMU's stale-translation hang, docs/reliability.md), it saves the
# evidence in LOG's .int3.txt and ends the guest; QEMU_HANG is then its
# verdict and collect() names it. PSI_VM_INT3WATCH=0: no watchdog.
run_qemu() {	# TAG LIMIT LOG
	local t0=$SECONDS a mon= qpid wpid= ev=${3%.log}.int3.txt
	QEMU_RC=0 QEMU_HANG= QEMU_HANG_FILE=
	for a in "${QEMU_ARGV[@]}"; do
		case $a in unix:*.monitor,*) mon=${a#unix:} mon=${mon%%,*} ;; esac
	done
	rm -f "$ev"
	timeout --kill-after=10 "$2" "${QEMU_ARGV[@]}" </dev/null >"$3" 2>&1 &
	qpid=$!
	if [ -n "$mon" ] && [ "${PSI_VM_INT3WATCH:-1}" = 1 ]; then
		python3 "$PSI_HOST_DIR/int3watch.py" watch --monitor "$mon" --console "$3" \
			--out "$ev" --pid "$qpid" ${QEMU_SYSMAP:+--sysmap "$QEMU_SYSMAP"} 2>>"${3%.log}.int3watch.log" &
		wpid=$!
	fi
	wait "$qpid" || QEMU_RC=$?
	if [ -n "$wpid" ]; then
		kill "$wpid" 2>/dev/null || true
		wait "$wpid" 2>/dev/null || true
	fi
	if [ -s "$ev" ]; then
		QEMU_HANG=$(head -1 "$ev") QEMU_HANG_FILE=$ev
		log "${1:+$1: }$QEMU_HANG"
	fi
	log "${1:+$1: }qemu exit $QEMU_RC after $((SECONDS - t0))s"
}

# The case names a guest suite reports: its CASES="..." line, or where it
# has none, the CASES of the suite it sources (`. /tests/suite-X.sh`: a
# variant that only changes counts). With ONLY (a,b,c): those of them named
# there, and the suite's OPTIONAL_CASES="..." that are named there.
suite_cases() {	# FILE [ONLY]
	local f=$1 only=${2:-} c all opt=
	all=$(sed -n 's/^CASES="\(.*\)"$/\1/p' "$f")
	if [ -z "$all" ]; then
		c=$(sed -n 's|^\. /tests/\(suite-.*\.sh\)$|\1|p' "$f" | head -1)
		[ -z "$c" ] || f=$(dirname "$f")/$c
		all=$(sed -n 's/^CASES="\(.*\)"$/\1/p' "$f")
	fi
	[ -z "$only" ] || opt=$(sed -n 's/^OPTIONAL_CASES="\(.*\)"$/\1/p' "$f")
	for c in $all $opt; do
		[ -z "$only" ] || [[ ",$only," == *",$c,"* ]] || continue
		echo "$c"
	done
}

# The guest writes its @@ lines to ttyS1 (RES), where no printk lands; the
# console LOG has them too, interleaved, for a guest without that channel.
case_lines() {	# RES LOG OUT
	local src=$1
	grep -aq '^@@CASE ' "$1" 2>/dev/null || src=$2
	tr -d '\r' 2>/dev/null <"$src" | grep -ao '@@.*' >"$3" || true
}

# One PASS or FAIL per expected CASE, named PREFIX<case>, from the last
# `@@CASE <case> PASS|FAIL detail` line in LINES. A case with no line is a
# FAIL (the boot crashed, panicked or ran out of LIMIT seconds, by
# QEMU_RC), and then the end of the console LOG is shown. -x: a case the
# guest reported but not expected is a FAIL too (a harness bug).
collect() {	# PREFIX LINES LOG LIMIT [-x] CASE...
	local pre=$1 lines=$2 logf=$3 limit=$4 extra=0 c line status detail why missing=0
	shift 4
	[ "${1:-}" != -x ] || { extra=1; shift; }
	for c in "$@"; do
		line=$(awk -v c="$c" '$1 == "@@CASE" && $2 == c' "$lines" | tail -1)
		if [ -z "$line" ]; then
			why="no result: the boot ended before this case (qemu exit $QEMU_RC)"
			if [ -n "${QEMU_HANG:-}" ] && [ $missing = 0 ]; then
				# the first case without a result is the one that hung
				why="$QEMU_HANG (evidence: $QEMU_HANG_FILE)"
			elif [ -n "${QEMU_HANG:-}" ]; then
				why="not run: the boot was ended at the hang above"
			elif [ "$QEMU_RC" = 124 ] || [ "$QEMU_RC" = 137 ]; then
				why="no result: boot timed out after ${limit}s"
			fi
			fail "$pre$c" "$why (log: $logf)"
			missing=1
			continue
		fi
		status=$(echo "$line" | awk '{ print $3 }')
		detail=$(echo "$line" | cut -d' ' -f4-)
		if [ "$status" = PASS ]; then pass "$pre$c" "$detail"; else fail "$pre$c" "$detail"; fi
	done
	if [ $extra = 1 ]; then
		for c in $(awk '$1 == "@@CASE" { print $2 }' "$lines" | sort -u); do
			case " $* " in *" $c "*) ;; *) fail "$pre$c" "reported but not in the suite's case list" ;; esac
		done
	fi
	if [ $missing = 1 ]; then
		echo "---- last 30 lines of $logf (qemu exit $QEMU_RC)"
		tr -d '\r' <"$logf" | tail -30
		echo "----"
	fi
}
