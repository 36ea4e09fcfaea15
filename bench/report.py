#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tables and plots of the overhead benchmark (bench/run.sh), stdlib only.

usage: report.py --out DIR [--meta META.txt] [--idle IDLE.txt] RAW.tsv...

Writes DIR/overhead.txt (the tables, the per-switch profile, idle and memory
cost) and DIR/overhead-insns.png, DIR/overhead-wall.png (gnuplot).
Table layout as mmtests': per group count the
arithmetic mean, and in parentheses the difference against the psi=0 column of
the same kernel set, mmtests' sign: (base - x) / base, so -6% means 6% more
time or instructions than psi=0; *...* where Welch's t-test gives p < 0.05.
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict

from fit import per_switch_fit

COLS = {
    "psimod": ["nopsi", "psi=0", "psi=1", "psi=1-nocg", "mod-off", "mod-on", "nopsi+mod"],
    "stock": ["psi=0", "psi=1", "psi=1-nocg", "mod-off", "mod-on"],
}
CGS = {"root": "hackbench in the root cgroup",
       "cg": "hackbench in /a/b/c/d (cgroup2, 4 levels below the root)"}
MEASURES = {"insns": ("guest instructions per run, millions", 1e-6, "%.2f"),
            "insns_adj": ("guest instructions per run at equal context switches, millions", 1e-6, "%.2f"),
            "wall": ("wall seconds per run (host clock, TCG)", 1e-9, "%.4f")}


def betacf(a, b, x):
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c
        c = c if abs(c) > 1e-300 else 1e-300
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c
        c = c if abs(c) > 1e-300 else 1e-300
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-12:
            break
    return h


def betai(a, b, x):
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(lbt) * betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * betacf(b, a, 1 - x) / b


def mean(v):
    return sum(v) / len(v)


def var(v):
    m = mean(v)
    return sum((x - m) ** 2 for x in v) / (len(v) - 1)


def welch(a, b):
    """two-sided p of Welch's t-test; None when either side has < 2 runs"""
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = var(a) / len(a), var(b) / len(b)
    if va + vb == 0:
        return 1.0 if mean(a) == mean(b) else 0.0
    t = (mean(a) - mean(b)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return betai(df / 2, 0.5, df / (df + t * t))


def linfit(xs, ys):
    """least squares y = a + b x; returns (b, se_b) or None"""
    n = len(xs)
    if n < 3:
        return None
    mx, my = mean(xs), mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    a = my - b * mx
    rss = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))
    return b, math.sqrt(rss / (n - 2) / sxx)


def load(paths):
    runs = []
    for p in paths:
        with open(p) as f:
            head = f.readline().rstrip("\n").split("\t")
            for line in f:
                r = dict(zip(head, line.rstrip("\n").split("\t")))
                if r.get("status") != "0" or r.get("insns") in (None, "NA") or float(r["wall_ns"]) <= 0:
                    continue
                runs.append(r)
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--meta")
    ap.add_argument("--idle")
    ap.add_argument("raw", nargs="+")
    o = ap.parse_args()
    runs = load(o.raw)
    os.makedirs(o.out, exist_ok=True)
    # data[measure][set][cg][g][col] = [values]; ctxt alongside
    data = defaultdict(lambda: defaultdict(lambda: defaultdict(lambda: defaultdict(lambda: defaultdict(list)))))
    ctxt = defaultdict(list)
    kernels = defaultdict(set)
    slopes = {}
    for r in runs:
        s, c, cg, g = r["set"], r["column"], r["cg"], int(r["g"])
        data["insns"][s][cg][g][c].append(float(r["insns"]))
        data["wall"][s][cg][g][c].append(float(r["wall_ns"]))
        ctxt[(s, cg, g, c)].append(int(r["ctxt"]))
        kernels[(s, c)].add(r["kernel"])
    # insns_adj: hackbench on one vCPU sometimes falls into a ping-pong pattern
    # with many more context switches (and instructions) for the same
    # messages. Per cell (set, cgroup, group count) fit one common slope of
    # instructions over switches across all runs of all columns (ANCOVA) and
    # move each run to the cell's mean switch count.
    for s in data["insns"]:
        for cg in data["insns"][s]:
            for g in data["insns"][s][cg]:
                xs, ys = [], []
                for c, v in data["insns"][s][cg][g].items():
                    cx = ctxt[(s, cg, g, c)]
                    mc, mv = mean(cx), mean(v)
                    xs += [x - mc for x in cx]
                    ys += [y - mv for y in v]
                sxx = sum(x * x for x in xs)
                slope = sum(x * y for x, y in zip(xs, ys)) / sxx if sxx else 0.0
                slopes[(s, cg, g)] = slope
                allc = [x for c in data["insns"][s][cg][g] for x in ctxt[(s, cg, g, c)]]
                m0 = mean(allc)
                for c, v in data["insns"][s][cg][g].items():
                    data["insns_adj"][s][cg][g][c] = [y - slope * (x - m0) for x, y in zip(ctxt[(s, cg, g, c)], v)]
    out = []
    if o.meta and os.path.exists(o.meta):
        out += open(o.meta).read().rstrip("\n").split("\n")
    out.append("raw: " + " ".join(os.path.basename(p) for p in o.raw))
    out.append("again: the runs, the command above at the module's commit; these tables and plots "
               "from the files in bench/results: bench/run.sh --report " +
               " ".join("bench/results/" + os.path.basename(p) for p in o.raw))
    out.append("columns: " + "; ".join("%s/%s = %s" % (s, c, ",".join(sorted(k))) for (s, c), k in sorted(kernels.items())))
    out.append("")
    plots = {}
    for mname, (mdesc, scale, fmt) in MEASURES.items():
        for s in ("psimod", "stock"):
            for cg in ("root", "cg"):
                grid = data[mname][s][cg]
                if not grid:
                    continue
                cols = [c for c in COLS[s] if any(c in grid[g] for g in grid)]
                missing = [c for c in COLS[s] if c not in cols]
                out.append("== %s: %s kernels, %s" % (mdesc, s, CGS[cg]))
                if missing:
                    out.append("   (no runs: %s)" % ", ".join(missing))
                hdr = "%-10s%3s" % ("", "") + "".join("%24s" % c for c in cols)
                out.append(hdr)
                for g in sorted(grid):
                    base = grid[g].get("psi=0", [])
                    line = "%-10s%3d" % ("Amean", g)
                    nline = "%-10s%3d" % ("runs", g)
                    for c in cols:
                        v = grid[g].get(c, [])
                        nline += "%24d" % len(v)
                        if not v:
                            line += "%24s" % "-"
                            continue
                        m = mean(v) * scale
                        if base:
                            bm = mean(base) * scale
                            pct = (bm - m) / bm * 100
                            p = welch(v, base) if c != "psi=0" else None
                            sig = p is not None and p < 0.05
                            cell = (fmt % m) + (" *%7.2f%%*" if sig else " (%7.2f%%)") % pct
                            plots.setdefault((mname, s, cg), []).append(
                                (g, c, -pct, (math.sqrt(var(v) / len(v) + var(base) / len(base)) * scale / bm * 100)
                                 if len(v) > 1 and len(base) > 1 else 0))
                        else:
                            cell = fmt % m
                        line += "%24s" % cell
                    out.append(line)
                    out.append(nline)
                out.append("")
    # what each column adds per switch: per cell, the runs of all its
    # columns fitted at once (bench/fit.py: a cost common to the columns,
    # the same messages in each, + a per-switch cost of the column)
    added = {}
    for s in ("psimod", "stock"):
        for cg in ("root", "cg"):
            grid = data["insns"][s][cg]
            for g in sorted(grid):
                runs_by_col = {c: list(zip(ctxt[(s, cg, g, c)], grid[g][c])) for c in COLS[s] if grid[g].get(c)}
                if "psi=0" in runs_by_col and sum(map(len, runs_by_col.values())) > len(runs_by_col) + 1:
                    added[(s, cg, g)] = per_switch_fit(runs_by_col)
    # per-switch profile: instructions per context switch, and the marginal
    # cost per switch (slope of instructions over switches across runs)
    out.append("== instructions per context switch (ctxt from /proc/stat around each run)")
    out.append("   per column: mean insns / mean switches; slope = d(insns)/d(switches) over the column's runs")
    out.append("   (+/- its standard error); added = per-switch cost - psi=0's, from the cell's fit (below);")
    out.append("   common = the common slope used for the adjusted table")
    for s in ("psimod", "stock"):
        for cg in ("root", "cg"):
            grid = data["insns"][s][cg]
            for g in sorted(grid):
                parts = []
                for c in COLS[s]:
                    v = grid[g].get(c, [])
                    cx = ctxt.get((s, cg, g, c), [])
                    if not v:
                        continue
                    per = mean(v) / max(mean(cx), 1)
                    fit = linfit(cx, v)
                    add = "-"
                    if (s, cg, g) in added:
                        add = "%+.0f" % added[(s, cg, g)][1](c, "psi=0")[0] if c != "psi=0" else "0"
                    parts.append("%s: %.0f/sw (%d sw) slope %s added %s" % (
                        c, per, mean(cx), ("%.0f+/-%.0f" % fit) if fit else "-", add))
                out.append("%s %s g=%d (common %.0f/sw): %s" % (s, cg, g, slopes.get((s, cg, g), 0), "; ".join(parts)))
    out.append("")
    # psi_mod against the fair baseline (the kernel's PSI without cgroup
    # groups, as psi_mod keeps one system-wide group) and against psi=1
    out.append("== added instructions per context switch: psi_mod / fair baseline / psi=1")
    out.append("   per cell a least-squares fit over all its runs: a run's instructions = a cost common to the")
    out.append("   columns (the same messages in each) + a per-switch cost of its column x its switches;")
    out.append("   added = the column's per-switch cost - psi=0's (+- standard error);")
    out.append("   ratio = mod-on / psi=1-nocg (psi=1 cgroup_disable=pressure; the goal: at most a third)")
    out.append("   %-8s %-5s %3s %12s %12s %12s %8s" % ("set", "cg", "g", "mod-on", "psi=1-nocg", "psi=1", "ratio"))
    ratios = []
    for (s, cg, g), (b, diff) in added.items():
        add = {c: diff(c, "psi=0") for c in ("mod-on", "psi=1-nocg", "psi=1") if c in b}
        ratio = "-"
        if "mod-on" in add and add.get("psi=1-nocg", (0, 0))[0] > 0:
            ratios.append(add["mod-on"][0] / add["psi=1-nocg"][0])
            ratio = "%.2f" % ratios[-1]
        out.append("   %-8s %-5s %3d %12s %12s %12s %8s" % (
            s, cg, g, *(("%+.0f+-%.0f" % add[c]) if c in add else "-" for c in ("mod-on", "psi=1-nocg", "psi=1")),
            ratio))
    if ratios:
        out.append("   ratio %.2f to %.2f, median %.2f; at most a third in %d of %d cells" % (
            min(ratios), max(ratios), statistics.median(ratios), sum(r <= 1 / 3 for r in ratios), len(ratios)))
    out.append("")
    if o.idle and os.path.exists(o.idle):
        out.append("== idle and memory cost (%s)" % os.path.basename(o.idle))
        works = defaultdict(lambda: defaultdict(int))
        for line in open(o.idle, errors="replace"):
            line = line.strip()
            if line.startswith(("@@IDLE", "@@MEM", "@@ERR")):
                out.append("   " + line[2:])
            elif line.startswith("@@WORKS"):
                # "@@WORKS mode=M FUNC=N" or, from older guests, a raw trace line
                f = line.split()
                mode = f[1][5:]
                if "function " in line:
                    fn = line.split("function ", 1)[1].split()[0].split("=")[0]
                    works[mode][fn] += 1
                else:
                    fn, n = f[2].rsplit("=", 1)
                    works[mode][fn] += int(n)
        for mode, fns in works.items():
            out.append("   works run in the idle window, mode=%s: %s" % (
                mode, ", ".join("%s %d" % kv for kv in sorted(fns.items(), key=lambda kv: -kv[1]))))
        out.append("")
    txt = os.path.join(o.out, "overhead.txt")
    with open(txt, "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))
    # plots: one PNG per measure, a panel per set x cgroup placement
    tmpdir = tempfile.mkdtemp()
    for mname, (mdesc, _, _) in MEASURES.items():
        panels = [(s, cg) for s in ("psimod", "stock") for cg in ("root", "cg") if (mname, s, cg) in plots]
        if not panels:
            continue
        dat = os.path.join(tmpdir, "overhead-%s.dat" % mname)
        gp = []
        with open(dat, "w") as f:
            idx = 0
            for s, cg in panels:
                for c in COLS[s]:
                    if c == "psi=0":
                        continue
                    pts = sorted((g, y, e) for g, cc, y, e in plots[(mname, s, cg)] if cc == c)
                    if not pts:
                        continue
                    f.write("# %s %s %s\n" % (s, cg, c))
                    for g, y, e in pts:
                        f.write("%d %.4f %.4f\n" % (g, y, e))
                    f.write("\n\n")
                    gp.append((s, cg, c, idx))
                    idx += 1
        png = os.path.join(o.out, "overhead-%s.png" % mname)
        script = ['set terminal pngcairo noenhanced size 1200,%d font "sans,10"' % (420 * ((len(panels) + 1) // 2)),
                  'set output "%s"' % png,
                  'set multiplot layout %d,2 title "psi_mod overhead: %s, %% more than psi=0 (bars: 1 standard error)"' % (
                      (len(panels) + 1) // 2, mdesc),
                  "set logscale x 2", "set xtics (1,2,4,8)", "set xrange [0.8:10]",
                  "set xlabel 'hackbench groups (-p, pipes)'", "set ylabel '% overhead vs psi=0'",
                  "set grid", "set key top left", "set yzeroaxis"]
        styles = {"nopsi": 1, "psi=1": 2, "mod-off": 3, "mod-on": 4, "nopsi+mod": 5, "psi=1-nocg": 7}
        for s, cg in panels:
            script.append('set title "%s kernels, %s"' % (s, CGS[cg]))
            pl = ["'%s' index %d using ($1*%.3f):2:3 with yerrorlines lt %d pt 7 title '%s'" % (
                dat, i, 1 + 0.03 * styles.get(c, 0), styles.get(c, 6), c)
                for ss, cc, c, i in gp if ss == s and cc == cg]
            script.append("plot " + ", ".join(pl) + ", 0 with lines lc rgb 'black' notitle")
        script.append("unset multiplot")
        try:
            subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)
        except (OSError, subprocess.CalledProcessError) as e:
            print("gnuplot failed: %s" % e, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
