#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where the instructions of a benchmark run go (bench/run.sh --profile).

profile.py fold --set S --kernel K --psi P --map KALLSYMS
                --results RESULTS --plugin PLUGIN_LOG [--boot TAG]
    One boot: the plugin's @@PROF lines (block address, instructions, per
    run), the guest's @@RUN lines (in run order: run m is between markers 2m
    and 2m+1) and @@KSYM lines (psi_mod's function addresses in that run),
    folded into functions. Prints TSV rows:
    set kernel psi mode cg g run ctxt function instructions
    (run: the run's index in the boot, as TAG:index with --boot)

profile.py report [--command C] [--module M] PROF.tsv...
    Per kernel set and cgroup placement: instructions per context switch
    per function on the scheduling path (SCHED_PATH), mean over the runs of
    each column (psi=0: no module; mod-on; mod-on+rd: with 64 readers,
    --readers; mod-on-nohook, mod-on+trig, mod-on+poll: the module built
    without the trigger hook, with a privileged trigger the run never
    wakes, with one whose fast path polls throughout, --triggers;
    mod-on+cg: with per-cgroup pressure (cgroups=1), --cgroups; psi=1;
    psi=1-nocg: psi=1 cgroup_disable=pressure, the fair baseline), and
    their sums: what psi_mod adds per switch, beside what the kernel's own
    PSI adds, and psi_mod's ratio to the fair baseline.
"""
import argparse
import bisect
import collections
import re
import statistics
import sys

from fit import per_switch_fit


# Functions that run per context switch or wakeup: psi_mod's, the kernel's
# PSI, the scheduler core around them, clocks and locks.
SCHED_PATH = re.compile(r'\[psi_mod\]$|^psi_|^record_times$|clock|^_raw_spin|^__schedule$|'
                        r'^try_to_wake_up$|^ttwu_|^enqueue_task|^dequeue_task|^activate_task$|'
                        r'^__traceiter_|^check_preempt|^finish_task_switch|^pick_next|^put_prev|'
                        r'^set_next|^update_curr|queued_spin_lock_slowpath')

# the guest's module states (bench/guest/suite-bench.sh) and their columns,
# in the order the tables show them
MODE_COLUMNS = {'on': 'mod-on', 'onr': 'mod-on+rd', 'onn': 'mod-on-nohook',
                'ont': 'mod-on+trig', 'onp': 'mod-on+poll', 'onc': 'mod-on+cg'}
COLUMNS = ('psi=0', 'mod-on-nohook', 'mod-on', 'mod-on+cg', 'mod-on+trig', 'mod-on+poll',
           'mod-on+rd', 'psi=1', 'psi=1-nocg')

# x86_64: modules live above the kernel image's 1 GiB (no KASLR here)
MODULES_VADDR = 0xffffffffc0000000


def read_map(path):
    """Text symbols of a System.map or /proc/kallsyms: sorted addresses, names."""
    syms = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[1] in 'tTwW':
                syms.append((int(p[0], 16), p[2]))
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def lookup(addrs, names, a):
    i = bisect.bisect_right(addrs, a) - 1
    return names[i] if i >= 0 else None


def fold(args):
    kaddrs, knames = read_map(args.map)
    runs, ksyms = [], collections.defaultdict(list)
    with open(args.results, errors='replace') as f:
        for line in f:
            line = line.strip().replace('\r', '')
            if line.startswith('@@RUN '):
                kv = dict(w.split('=', 1) for w in line.split()[1:] if '=' in w)
                runs.append(kv)
            elif line.startswith('@@KSYM '):
                p = line.split()
                if len(p) == 4:
                    ksyms[int(p[1])].append((int(p[2], 16), p[3] + ' [psi_mod]'))
    prof = collections.defaultdict(lambda: collections.Counter())
    with open(args.plugin, errors='replace') as f:
        for line in f:
            if line.startswith('@@PROF '):
                p = line.split()
                prof[int(p[1])][int(p[2], 16)] += int(p[3])
    # the module's symbols are only known as starts: its text ends at the
    # next symbol, the last one gets 4 KiB
    for m, kv in enumerate(runs):
        n = int(kv.get('n', m))
        mod = sorted(ksyms.get(n, []))
        maddrs = [a for a, _ in mod]
        mnames = [s for _, s in mod]
        funcs = collections.Counter()
        for a, ins in prof.get(2 * m + 1, {}).items():
            if a < 0x800000000000:
                name = '[user]'
            elif maddrs and maddrs[0] <= a < maddrs[-1] + 4096:
                name = lookup(maddrs, mnames, a)
            elif a >= MODULES_VADDR:
                name = '[other module]'
            else:
                name = lookup(kaddrs, knames, a) or '[unknown]'
            funcs[name] += ins
        if not funcs:
            print(f'profile.py: no profile for run {m}', file=sys.stderr)
            continue
        for name, ins in funcs.items():
            run = f'{args.boot}:{m}' if args.boot else m
            print('\t'.join(str(x) for x in (args.set, args.kernel, args.psi, kv.get('mode'), kv.get('cg'),
                                             kv.get('g'), run, kv.get('ctxt'), name, ins)))


def report(args):
    # (set, kernel, cg, column) -> run -> (ctxt, Counter)
    data = collections.defaultdict(dict)
    for path in args.files:
        with open(path) as f:
            for line in f:
                p = line.rstrip('\n').split('\t')
                if len(p) != 10:
                    continue
                st, kern, psi, mode, cg, g, run, ctxt, name, ins = p
                col = (('psi=1-nocg' if psi == '1n' else f'psi={psi}') if mode == 'none'
                       else MODE_COLUMNS.get(mode, 'mod-off'))
                key = (st, kern, cg, g, col)
                r = data[key].setdefault((path, run), [int(ctxt), collections.Counter()])
                r[1][name] += int(ins)
    print('# Where the instructions go: bench/run.sh --profile')
    if args.command:
        print(f'command: {args.command}')
    if args.module:
        print(f'module: psi_mod {args.module}')
    print('Instructions per context switch (the run\'s instructions in a function / its')
    print('context switches in /proc/stat), mean of the runs; a block counts for the')
    print('function it starts in; inlined code counts for its caller.')
    cells = sorted({k[:4] for k in data}, key=lambda k: (k[0], k[1], k[2] != 'root', int(k[3])))
    summary = []
    for st, kern, cg, g in cells:
        cols = [c for c in COLUMNS if (st, kern, cg, g, c) in data]
        if 'psi=0' not in cols:
            continue
        per = {}
        for c in cols:
            runs = data[(st, kern, cg, g, c)].values()
            per[c] = {'n': len(runs), 'ctxt': statistics.mean(r[0] for r in runs)}
            fn = collections.defaultdict(list)
            names = set().union(*(r[1].keys() for r in runs))
            for ctxt, cnt in runs:
                for name in names:
                    fn[name].append(cnt.get(name, 0) / max(ctxt, 1))
            per[c]['f'] = {k: statistics.mean(v) for k, v in fn.items()}
            per[c]['tot'] = [sum(cnt.values()) / max(ctxt, 1) for ctxt, cnt in runs]
        where = 'root cgroup' if cg == 'root' else '/a/b/c/d'
        print(f'\n== {st} ({kern}), hackbench -g {g}, {where}')
        for c in cols:
            t = per[c]['tot']
            sd = statistics.stdev(t) if len(t) > 1 else 0
            print(f'  {c:7s} {len(t)} runs, {per[c]["ctxt"]:.0f} context switches per run, '
                  f'{statistics.mean(t):.0f} +- {sd:.0f} instructions per switch')
        # Only the functions that run per switch or wakeup are compared: the
        # rest (pipes, syscalls) run per message, and a run's switches per
        # message vary 2-5x (hackbench's ping-pong on one vCPU), which moves
        # their per-switch share far more than any probe costs.
        names = sorted({k for c in cols for k in per[c]['f'] if SCHED_PATH.search(k)})
        rows = []
        for k in names:
            v = [per[c]['f'].get(k, 0) for c in cols]
            if max(abs(x - v[0]) for x in v) >= 0.5:
                rows.append((k, v))
        rows.sort(key=lambda kv: -max(abs(x - kv[1][0]) for x in kv[1]))
        print('\n    %-40s' % 'function (per switch)' + ''.join('%12s' % c for c in cols))
        for k, v in rows[:args.top]:
            print('    %-40s' % k + ''.join('%12.1f' % x for x in v))
        tot = [sum(per[c]['f'].get(k, 0) for k in names) for c in cols]
        print('    %-40s' % 'sum of the functions above' + ''.join('%12.1f' % x for x in tot))
        for i, c in enumerate(cols[1:], 1):
            mod = sum(v for k, v in per[c]['f'].items() if k.endswith('[psi_mod]'))
            print(f'    {c} - psi=0: {tot[i] - tot[0]:+.0f} instructions per switch on the scheduling path'
                  f' ({mod:.0f} in psi_mod\'s own functions)')
        # psi_mod against the kernel's PSI without cgroup groups (the fair
        # baseline: psi_mod keeps one system-wide group)
        if 'mod-on' in cols and 'psi=1-nocg' in cols:
            m, f = (tot[cols.index(c)] - tot[0] for c in ('mod-on', 'psi=1-nocg'))
            if f > 0:
                print(f'    mod-on / psi=1-nocg: {m / f:.2f} of the fair baseline\'s added instructions')
            own = sum(v for k, v in per['mod-on']['f'].items() if k.endswith('[psi_mod]'))
            # the run's scheduling-path instructions against its switches
            fit = {c: [(r[0], sum(v for k, v in r[1].items() if SCHED_PATH.search(k)))
                       for r in data[(st, kern, cg, g, c)].values()] for c in cols}
            if all(len(v) >= 2 for v in fit.values()):
                b, diff = per_switch_fit(fit)
                summary.append((st, 'root' if cg == 'root' else '/a/b/c/d', g,
                                diff('mod-on', 'psi=0'), diff('psi=1-nocg', 'psi=0'),
                                diff('psi=1', 'psi=0') if 'psi=1' in cols else None, own,
                                diff('mod-on+cg', 'psi=0') if 'mod-on+cg' in cols else None))
    if len(summary) > 1:
        # one line per cell, the layout of overhead.txt's table of the same
        # name (there from whole runs, here from the scheduling path)
        print('\n== added instructions per context switch on the scheduling path:'
              ' psi_mod / fair baseline / psi=1')
        print('   per cell a least-squares fit over all its runs: a run\'s scheduling-path instructions =\n'
              '   a per-run cost common to the columns + a per-switch cost of its column x its switches;\n'
              '   added = the column\'s per-switch cost - psi=0\'s (+- standard error);'
              ' ratio = mod-on / psi=1-nocg\n   (the goal: at most a third); own = psi_mod\'s own'
              ' functions per switch (mean of the runs)')
        print('   %-8s %-9s %3s %12s %12s %12s %6s %5s' % ('set', 'cgroup', 'g', 'mod-on', 'psi=1-nocg',
                                                       'psi=1', 'ratio', 'own'))
        for st, where, g, m, f, p1, own, _ in summary:
            print('   %-8s %-9s %3s %12s %12s %12s %6s %5.0f' % (
                st, where, g, '%+.0f+-%.0f' % m, '%+.0f+-%.0f' % f,
                '-' if p1 is None else '%+.0f+-%.0f' % p1,
                '%.2f' % (m[0] / f[0]) if f[0] > 0 else '-', own))
        r = [m[0] / f[0] for _, _, _, m, f, _, _, _ in summary if f[0] > 0]
        if r:
            print(f'   ratio {min(r):.2f} to {max(r):.2f}, median {statistics.median(r):.2f};'
                  f' at most a third in {sum(x <= 1 / 3 for x in r)} of {len(r)} cells')
        # per-cgroup pressure against the kernel's default, which has it
        cgs = [(st, where, g, c, p1) for st, where, g, _, _, p1, _, c in summary
               if c is not None and p1 is not None]
        if cgs:
            print('\n== per-cgroup pressure: mod-on+cg (cgroups=1) against psi=1 (the kernel\'s'
                  ' default, cgroup pressure on)\n   added instructions per context switch as above;'
                  ' ratio = mod-on+cg / psi=1 (the goal: at most a third)')
            print('   %-8s %-9s %3s %12s %12s %6s' % ('set', 'cgroup', 'g', 'mod-on+cg', 'psi=1', 'ratio'))
            for st, where, g, c, p1 in cgs:
                print('   %-8s %-9s %3s %12s %12s %6s' % (
                    st, where, g, '%+.0f+-%.0f' % c, '%+.0f+-%.0f' % p1,
                    '%.2f' % (c[0] / p1[0]) if p1[0] > 0 else '-'))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    f = sub.add_parser('fold')
    for o in ('--set', '--kernel', '--psi', '--map', '--results', '--plugin'):
        f.add_argument(o, required=True)
    # two boots of one set, kernel and psi (--triggers) keep their runs apart
    f.add_argument('--boot', default='')
    r = sub.add_parser('report')
    r.add_argument('--command')
    r.add_argument('--module')
    r.add_argument('--top', type=int, default=30)
    r.add_argument('files', nargs='+')
    args = ap.parse_args()
    fold(args) if args.cmd == 'fold' else report(args)


if __name__ == '__main__':
    main()
