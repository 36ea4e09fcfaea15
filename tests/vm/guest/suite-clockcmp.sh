# Suite "clockcmp" (tests/vm/clockcmp.sh): both PSIs' timestamps for the
# same events of one task. Boots psi=1; psi_mod is loaded with
# proc_dir=psi_mod beside the kernel's PSI, then the measuring module
# /clockcmp.ko (tests/vm/clockcmp) for the workload's task. Per event the
# differences psi_mod - kernel (ns) are summarized here; the host prints
# them. Workloads (psitest.cc_wl=, comma-separated): io-read (the O_DIRECT
# reader pinned to cpu 1, as compare's io-read) and nap (a 2 ms sleeper
# pinned to cpu 1, compare's nap).
DUR=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^psitest.dur=//p')
DUR=${DUR:-10}
WLS=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^psitest.cc_wl=//p' | tr ',' ' ')
WLS=${WLS:-io-read}
OFFS=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^psitest.cc_off=//p')
MODARGS=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^psitest.modargs=//p' | tr ',' ' ')
out() { echo "@@CC $*"; }
sym() { awk -v s="$1" '$3 == s { print "0x" $1; exit }' /proc/kallsyms; }
tot() { awk -v k="$2" '$1 == k { split($5, a, "="); print a[2] }' "$1"; }

sleep 5
r=$(kit load /psi_mod.ko proc_dir=psi_mod $MODARGS)
out "load psi_mod: $r"
PS=$(sym psi_system) PP=$(sym psim_pcpu)
out "psi_system $PS psim_pcpu $PP offsets $OFFS"
sleep 3
for wl in $WLS; do
	case $wl in
	io-read) cmd="dio read /dev/vda" ;;
	nap) cmd="cmpw nap 2000" ;;
	*) out "unknown workload $wl"; continue ;;
	esac
	taskset -c 1 $cmd $((DUR + 2)) > /tmp/wl.out 2>&1 &
	wpid=$!
	sleep 1
	for f in cpu io; do cat /proc/pressure/$f > /tmp/k.$f.a; cat /proc/psi_mod/$f > /tmp/m.$f.a; done
	r=$(kit load /clockcmp.ko pid=$wpid psi_system=$PS psim_pcpu=$PP ss_off=${OFFS%,*} mask_off=${OFFS#*,})
	out "$wl load clockcmp pid $wpid: $r"
	c0=$(awk '$1 == "ctxt" { print $2 }' /proc/stat)
	wait $wpid
	for f in cpu io; do cat /proc/pressure/$f > /tmp/k.$f.b; cat /proc/psi_mod/$f > /tmp/m.$f.b; done
	c1=$(awk '$1 == "ctxt" { print $2 }' /proc/stat)
	out "$wl workload: $(cat /tmp/wl.out | tr '\n' ' ') ctxt $((c1 - c0))"
	cp /sys/kernel/debug/clockcmp/events /tmp/ev
	rmmod clockcmp
	n=$(wc -l < /tmp/ev)
	for f in cpu io; do
		for s in some full; do
			k=$(( $(tot /tmp/k.$f.b $s) - $(tot /tmp/k.$f.a $s) ))
			m=$(( $(tot /tmp/m.$f.b $s) - $(tot /tmp/m.$f.a $s) ))
			out "$wl total $f $s kernel $k psi_mod $m diff $((m - k))"
		done
	done
	# per event: type, and (psi_mod's stamp - kernel's) where psi_mod
	# changed its state (else its stamp is an older event's), the enqueue
	# stamp - kernel's, the tracepoint's clock - kernel's
	awk '{ ch = ($10 != $11); k = $4
		if (ch) print $1, "m", $6 - k
		if ($1 == "W") print $1, "q", $7 - k
		print $1, "t", $8 - k
		print $1, "post", $9 - k
		n[$1]++; c[$1] += ch; if ($2 != $3) r[$1]++
	} END { for (t in n) printf "@@CC '"$wl"' count %s events %d changed %d remote %d\n", t, n[t], c[t], r[t] }' /tmp/ev > /tmp/dv
	grep '^@@CC' /tmp/dv
	grep -v '^@@CC' /tmp/dv > /tmp/dv2
	for key in "W m" "W q" "W t" "I m" "I t" "O m" "O t" "S m" "S t" "W post" "I post" "O post"; do
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
