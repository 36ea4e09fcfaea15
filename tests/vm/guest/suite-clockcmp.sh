# Suite "clockcmp" (tests/vm/clockcmp.sh): both PSIs' timestamps for the
# same events of one task. Boots psi=1; psi_mod is loaded with
# proc_dir=psi_mod beside the kernel's PSI, then the measuring module
# /clockcmp.ko (tests/vm/clockcmp) for the workload's task. Per event the
# differences psi_mod - kernel (ns) are summarized here; the host prints
# them. Workloads (psitest.cc_wl=, comma-separated): io-read (the O_DIRECT
# reader pinned to cpu 1, as compare's io-read), nap (a 2 ms sleeper
# pinned to cpu 1, compare's nap), nap-cg (the same four cgroup levels
# down, compare's nap-cg) and io-read-busy0 (io-read with a spinner on
# cpu 0: both CPUs non-idle, so the system-wide totals weigh them 1:1)
# and mixed (psi1's sbs-mixed: the reader unpinned among four spinners,
# two pinned to each CPU).
DUR=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^psitest.dur=//p')
DUR=${DUR:-10}
WLS=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^psitest.cc_wl=//p' | tr ',' ' ')
WLS=${WLS:-io-read}
OFFS=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^psitest.cc_off=//p')
MODARGS=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^psitest.modargs=//p' | tr ',' ' ')
out() { echo "@@CC $*"; }
sym() { awk -v s="$1" '$3 == s { print "0x" $1; exit }' /proc/kallsyms; }
# tot SNAP FILE some|full: the total in a kit snap
tot() { awk -v f="$2" -v k="$3" '$1 == f && $2 == k { split($6, a, "="); print a[2] }' "$1"; }
SNAP="/proc/pressure/cpu /proc/pressure/io /proc/psi_mod/cpu /proc/psi_mod/io"

sleep 5
r=$(kit load /psi_mod.ko proc_dir=psi_mod $MODARGS)
out "load psi_mod: $r"
PS=$(sym psi_system) PP=$(sym psim_pcpu)
# With the TSC marked unstable (TCG on a loaded host, at times) cpu_clock()
# is held within the tick's window and many reads return the same value:
# then the sub-microsecond figures below mean nothing ("stuck" counts the
# events whose two reads in one probe were equal).
out "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource) $(dmesg | grep -i 'tsc.*unstable\|sched_clock' | tr '\n' ' ')"
out "psi_system $PS psim_pcpu $PP offsets $OFFS"
sleep 3
for wl in $WLS; do
	case $wl in
	io-read|io-read-busy0|mixed) cmd="dio read /dev/vda" ;;
	nap) cmd="cmpw nap 2000" ;;
	nap-cg) cmd="cmpw nap 2000"
		mkdir -p /sys/fs/cgroup
		mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
		mkdir -p /sys/fs/cgroup/a/b/c/d ;;
	*) out "unknown workload $wl"; continue ;;
	esac
	spid=
	if [ $wl = io-read-busy0 ]; then
		taskset -c 0 spin $((DUR + 2)) &
		spid=$!
	fi
	if [ $wl = mixed ]; then
		for i in 0 1 2 3; do taskset -c $((i % 2)) spin $((DUR + 2)) & spid="$spid $!"; done
		$cmd $((DUR + 2)) > /tmp/wl.out 2>&1 &
	elif [ $wl = nap-cg ]; then
		sh -c "echo \$\$ > /sys/fs/cgroup/a/b/c/d/cgroup.procs && exec taskset -c 1 $cmd $((DUR + 2))" > /tmp/wl.out 2>&1 &
	else
		taskset -c 1 $cmd $((DUR + 2)) > /tmp/wl.out 2>&1 &
	fi
	wpid=$!
	sleep 1
	r=$(kit load /clockcmp.ko pid=$wpid psi_system=$PS psim_pcpu=$PP ss_off=${OFFS%,*} mask_off=${OFFS#*,})
	out "$wl load clockcmp pid $wpid: $r"
	# both PSIs' files back to back from one process (kit snap)
	kit snap $SNAP > /tmp/snap.a
	c0=$(awk '$1 == "ctxt" { print $2 }' /proc/stat)
	wait $wpid
	[ -z "$spid" ] || wait $spid
	kit snap $SNAP > /tmp/snap.b
	c1=$(awk '$1 == "ctxt" { print $2 }' /proc/stat)
	out "$wl workload: $(cat /tmp/wl.out | tr '\n' ' ') ctxt $((c1 - c0))"
	cp /sys/kernel/debug/clockcmp/events /tmp/ev
	rmmod clockcmp
	n=$(wc -l < /tmp/ev)
	for f in cpu io; do
		for s in some full; do
			k=$(( $(tot /tmp/snap.b /proc/pressure/$f $s) - $(tot /tmp/snap.a /proc/pressure/$f $s) ))
			m=$(( $(tot /tmp/snap.b /proc/psi_mod/$f $s) - $(tot /tmp/snap.a /proc/psi_mod/$f $s) ))
			out "$wl total $f $s kernel $k psi_mod $m diff $((m - k))"
		done
	done
	# per event: type, and (psi_mod's stamp - kernel's) where psi_mod
	# changed its state (else its stamp is an older event's), the enqueue
	# stamp - kernel's, the tracepoint's clock - kernel's
	awk '{ ch = ($10 != $11); k = $4
		if (ch) print $1, "m", $6 - k
		# the time psi_mod itself takes from the end of the probe before it
		# (the one of this module, which reads t) to its stamp: switches only
		if (ch && $1 != "W") print $1, "own", $6 - $13
		# the probe before it, from its clock read to its last: a
		# fixed piece of work, the unit of speed of the run
		print $1, "pre", $13 - $8
		if ($1 == "W") print $1, "q", $7 - k
		if (ch) print $1, "t", $8 - k
		print $1, "post", $9 - k
		n[$1]++; c[$1] += ch; if ($2 != $3) r[$1]++; if ($8 == $13) st[$1]++
	} END { for (t in n) printf "@@CC '"$wl"' count %s events %d changed %d remote %d stuck %d\n", t, n[t], c[t], r[t], st[t] }' /tmp/ev > /tmp/dv
	grep '^@@CC' /tmp/dv
	grep -v '^@@CC' /tmp/dv > /tmp/dv2
	for key in "W m" "W q" "W t" "I m" "I t" "I own" "I pre" "O m" "O t" "O own" "O pre" "S m" "S t" "S own" "S pre" "W post" "I post" "O post"; do
		set -- $key
		awk -v t=$1 -v f=$2 '$1 == t && $2 == f { print $3 }' /tmp/dv2 | sort -n > /tmp/col
		[ -s /tmp/col ] || continue
		awk -v wl=$wl -v key="$1 $2" '{ v[NR] = $1; s += $1 } END {
			p = "p1 p10 p50 p90 p99"; split("1 10 50 90 99", q, " ")
			printf "@@CC %s dist %s n %d mean %.0f", wl, key, NR, s / NR
			for (i = 1; i <= 5; i++) { j = int(NR * q[i] / 100); if (j < 1) j = 1; printf " p%d %d", q[i], v[j] }
			printf "\n" }' /tmp/col
	done
	# the first records as they are, for reading
	head -20 /tmp/ev | sed 's/^/@@CCRAW /'
	out "$wl records $n"
done
