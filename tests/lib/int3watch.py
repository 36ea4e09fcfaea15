#!/usr/bin/env python3
"""Host-side watchdog for QEMU's multi-threaded TCG stale-translation hang
(docs/reliability.md, "The TCG int3 hang"): a vCPU keeps executing a stale
translation of an int3 that text_poke_bp() has already replaced, and the
kernel's int3 handler, finding no int3 in memory, returns to re-execute it.

  int3watch.py watch --monitor SOCK --console LOG --out FILE [--sysmap MAP]
      While the guest runs (run_qemu in tests/lib/host.sh starts it, and
      kills it when QEMU exits): whenever the console LOG has been silent
      for --quiet seconds, take --samples snapshots of every vCPU's
      registers through the QEMU monitor socket, --interval seconds apart.
      The signature, all of it required:
        - one vCPU is at the int3 entry (the handler of IDT vector 3, read
          from the guest's IDT) in at least 2 of the snapshots,
        - each time returning to the same site (the word at RSP, pushed
          by the trap, is site + 1),
        - and the guest's memory at that site holds no int3 (0xcc): what
          that vCPU executes is not what memory holds.
      Then: the evidence (snapshots, bytes, a full register dump, the end of
      the console) goes to FILE, its first line the verdict
      "QEMU TCG stale-translation hang (int3 at SYM ...)", and QEMU is told
      to quit. Nothing else is ever done to the guest.
  int3watch.py record --monitor SOCK [--samples N] [--interval S]
      Print the int3 entry and N snapshots in the evidence files' format
      (how tests/lib/int3watch-healthy.txt was made).
  int3watch.py selftest
      The detector on recorded snapshots: the hang of
      docs/evidence/tcg-int3-hang-20261130.txt and of
      docs/evidence/tcg-int3-hang-short-20261201.txt must be found, the healthy
      load/unload storm of tests/lib/int3watch-healthy.txt must not; the
      console fallback must name the site of
      docs/evidence/tcg-int3-hang-nopsi-20261130.txt. Prints "ok: ..." or
      "FAIL: ...".
"""
import argparse
import os
import re
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
MIN_HITS = 2


# --- parsing -------------------------------------------------------------

def parse_regs(text):
    """`info registers -a` output -> {cpu: (rip, rfl, rsp)}"""
    out, cpu = {}, 0
    for line in text.splitlines():
        m = re.match(r"\s*CPU#(\d+)", line)
        if m:
            cpu = int(m.group(1))
            continue
        rip = re.search(r"\bRIP=([0-9a-f]{16}) RFL=([0-9a-f]+)", line)
        if rip:
            prev = out.get(cpu, (0, 0, 0))
            out[cpu] = (int(rip.group(1), 16), int(rip.group(2), 16), prev[2])
        rsp = re.search(r"\bRSP=([0-9a-f]{16})", line)
        if rsp:
            prev = out.get(cpu, (0, 0, 0))
            out[cpu] = (prev[0], prev[1], int(rsp.group(1), 16))
    return out


def parse_sample_lines(text):
    """The summary lines of the evidence files,
    `cpu0 RIP=.. RFL=.. RSP=..[ [RSP]=..] | cpu1 RIP=..`,
    -> [{cpu: (rip, rfl, rsp[, ret])}]"""
    samples = []
    for line in text.splitlines():
        cells = re.findall(r"cpu(\d+) RIP=([0-9a-f]+) RFL=([0-9a-f]+) RSP=([0-9a-f]+)(?: \[RSP\]=([0-9a-f]+))?", line)
        if cells:
            samples.append({int(c): (int(a, 16), int(f, 16), int(s, 16)) + ((int(r, 16),) if r else ())
                            for c, a, f, s, r in cells})
    return samples


def idt_handler(q0, q1):
    """an x86-64 IDT gate (two quadwords) -> its handler address"""
    return (q0 & 0xffff) | ((q0 >> 48) << 16) | ((q1 & 0xffffffff) << 32)


class Syms:
    """System.map lookups; a Debian image's placeholder map gives nothing"""
    def __init__(self, path=None):
        self.addrs = []
        if path and os.path.isfile(path):
            with open(path, errors="replace") as f:
                for line in f:
                    p = line.split()
                    if len(p) == 3 and p[1] in "TtWw" and p[0] != "f" * 16:
                        self.addrs.append((int(p[0], 16), p[2]))
            self.addrs.sort()

    def name(self, addr):
        import bisect
        i = bisect.bisect_right(self.addrs, (addr, "\xff")) - 1
        if i < 0 or addr - self.addrs[i][0] > 0x100000:
            return None
        return "%s+0x%x" % (self.addrs[i][1], addr - self.addrs[i][0])


def console_site(text):
    """The kernel's own backtrace, when it printed one (an RCU stall's NMI
    backtrace): `RIP: 0010:asm_exc_int3+0x0/..` and, in the same dump, the
    trapped context's `RIP: 0010:SYM+OFF/LEN`; the int3 was at OFF - 1."""
    lines = text.splitlines()
    for i in range(len(lines) - 1, -1, -1):
        if re.search(r"RIP: 0010:asm_exc_int3\+0x0/", lines[i]):
            for later in lines[i + 1:i + 40]:
                m = re.search(r"RIP: 0010:([\w.]+)\+0x([0-9a-f]+)/", later)
                if m:
                    return "%s+0x%x" % (m.group(1), int(m.group(2), 16) - 1)
    return None


def analyse(samples, entry):
    """samples: [{cpu: (rip, rfl, rsp[, ret])}], ret the word at RSP read
    when the sample was taken at the entry (live only; recorded samples
    have none); entry: the int3 handler's address. -> (cpu, hits, site) of
    a vCPU at the entry in >= MIN_HITS samples, all returning to one site
    (None if unknown), else None"""
    cpus = sorted({c for s in samples for c in s})
    for c in cpus:
        hits = [s[c] for s in samples if c in s and s[c][0] == entry]
        if len(hits) < MIN_HITS:
            continue
        rets = {h[3] if len(h) > 3 else None for h in hits}
        if rets == {None}:
            return (c, len(hits), None)
        if len(rets) == 1:
            return (c, len(hits), rets.pop() - 1)
    return None


# --- the monitor ---------------------------------------------------------

class Monitor:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.settimeout(10)
        self.s.connect(path)
        self.read_prompt()

    def read_prompt(self):
        buf = b""
        while not buf.endswith(b"(qemu) "):
            d = self.s.recv(65536)
            if not d:
                raise OSError("monitor closed")
            buf += d
        return ANSI.sub("", buf.decode(errors="replace"))

    def cmd(self, c):
        self.s.sendall(c.encode() + b"\n")
        out = self.read_prompt()
        # drop the echo of the command (and the redrawn line) and the prompt
        return out.split("\n", 1)[-1].rsplit("(qemu) ", 1)[0]

    def quads(self, cpu, addr, n):
        self.cmd("cpu %d" % cpu)
        out = self.cmd("x/%dgx 0x%x" % (n, addr))
        return [int(v, 16) for v in re.findall(r"0x([0-9a-f]{16})", out)][:n]

    def bytes_at(self, cpu, addr, n):
        self.cmd("cpu %d" % cpu)
        out = self.cmd("x/%dxb 0x%x" % (n, addr))
        return [int(v, 16) for v in re.findall(r"\b0x([0-9a-f]{2})\b", out)][:n]

    def close(self):
        self.s.close()


def int3_entry(mon):
    """the handler of IDT vector 3, read from the guest's IDT"""
    idt = re.search(r"IDT=\s+([0-9a-f]{16})", mon.cmd("info registers -a"))
    if not idt:
        return None
    q = mon.quads(0, int(idt.group(1), 16) + 3 * 16, 2)
    return idt_handler(q[0], q[1]) if len(q) == 2 else None


def snapshots(mon, args, entry):
    """args.samples register snapshots; a vCPU at the entry gets the word
    at its RSP (the return address the trap pushed) read at once"""
    samples, lines = [], []
    for i in range(args.samples):
        if i:
            time.sleep(args.interval)
        s = parse_regs(mon.cmd("info registers -a"))
        for c, (rip, rfl, rsp) in list(s.items()):
            if rip == entry:
                w = mon.quads(c, rsp, 1)
                s[c] = (rip, rfl, rsp, w[0] if w else -1)
        samples.append(s)
        lines.append(" | ".join("cpu%d RIP=%016x RFL=%08x RSP=%016x" % ((c,) + s[c][:3])
                                + (" [RSP]=%016x" % s[c][3] if len(s[c]) > 3 else "")
                                for c in sorted(s)))
    return samples, lines


def record(args):
    mon = Monitor(args.monitor)
    entry = int3_entry(mon)
    print("# int3 entry (IDT vector 3): 0x%016x" % entry)
    for line in snapshots(mon, args, entry)[1]:
        print(line)
    mon.close()
    return 0


def round_of(mon, args):
    """one series of snapshots; -> (verdict, evidence text) or None"""
    entry = int3_entry(mon)
    if entry is None:
        return None
    samples, lines = snapshots(mon, args, entry)
    found = analyse(samples, entry)
    if not found or found[2] is None or found[2] < 0:
        return None
    cpu, hits, site = found
    mem = mon.bytes_at(cpu, site, 5)
    if not mem or mem[0] == 0xcc:
        return None	# memory holds the int3: some other loop, not this signature
    syms = Syms(args.sysmap)
    try:
        with open(args.console, errors="replace") as f:
            console = f.read()
    except OSError:
        console = ""
    name = syms.name(site) or console_site(console) or "0x%x" % site
    memhex = " ".join("%02x" % b for b in mem)
    verdict = ("QEMU TCG stale-translation hang (int3 at %s, vCPU %d at the int3 entry "
               "0x%x in %d of %d samples %gs apart, memory there %s: no int3)"
               % (name, cpu, entry, hits, args.samples, args.interval, memhex))
    ev = [verdict, "",
          "# int3 entry (IDT vector 3): 0x%x%s" % (entry, " " + (syms.name(entry) or "")),
          "# site 0x%x (%s), guest memory via vCPU %d: %s" % (site, name, cpu, memhex),
          "# console silent for %ds before the samples; samples:" % args.quiet] + lines
    regs = [l for l in mon.cmd("info registers -a").splitlines() if not l.startswith(("XMM", "FPR"))]
    ev += ["", "# info registers -a (no XMM, FPR)"] + regs
    ev += ["# x/8i at the site", mon.cmd("x/8i 0x%x" % site)]
    ev += ["# last 30 console lines"] + console.replace("\r", "").splitlines()[-30:]
    return verdict, "\n".join(ev) + "\n"


def end_guest(mon, pid):
    """`quit` on the monitor; QEMU closes the socket as it exits (closing it
    first could drop the command). Else SIGTERM to PID (run_qemu's timeout,
    which passes it on to QEMU)."""
    mon.s.sendall(b"quit\n")
    try:
        while mon.s.recv(65536):
            pass
        return
    except OSError:
        pass
    if pid:
        try:
            os.kill(pid, 15)
        except OSError:
            pass


def watch(args):
    import signal
    rounds = [0]

    def bye(*_):
        # run_qemu ends the watch when QEMU is gone: the tally, for the log
        print("int3watch: %d rounds of samples, no hang found" % rounds[0], file=sys.stderr)
        sys.exit(0)
    signal.signal(signal.SIGTERM, bye)
    parent = os.getppid()
    last_size, last_change = -1, time.time()
    next_round = 0.0
    while os.getppid() == parent:
        time.sleep(args.poll)
        try:
            size = os.path.getsize(args.console)
        except OSError:
            size = -1
        now = time.time()
        if size != last_size:
            last_size, last_change = size, now
            continue
        if now - last_change < args.quiet or now < next_round:
            continue
        try:
            mon = Monitor(args.monitor)
        except OSError:
            continue	# not up yet, gone, or someone else is connected
        try:
            rounds[0] += 1
            res = round_of(mon, args)
            if res:
                with open(args.out + ".tmp", "w") as f:
                    f.write(res[1])
                os.rename(args.out + ".tmp", args.out)
                print("int3watch: " + res[0], file=sys.stderr)
                end_guest(mon, args.pid)
                return 0
        except (OSError, ValueError) as e:
            print("int3watch: round failed: %s" % e, file=sys.stderr)
        finally:
            mon.close()
        next_round = time.time() + args.quiet / 2
    return 0


# --- self-test -----------------------------------------------------------

def fake_monitor(path, samples, site_bytes):
    """A monitor socket that answers like QEMU's HMP from recorded samples
    (cycled; the IDT at fffffe0000000000 points vector 3 at
    0xffffffff81c00ba0, every stack word reads site + 1 of the site
    0xffffffff810dfd58), for the watchdog's live path. -> the thread; it
    ends at `quit`, as QEMU does."""
    import threading
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)

    def regs(s):
        out = []
        for c in sorted(s):
            rip, rfl, rsp = s[c][:3]
            out += ["CPU#%d" % c, "RSP=%016x" % rsp,
                    "RIP=%016x RFL=%08x [-------] CPL=0 II=0 A20=1 SMM=0 HLT=0" % (rip, rfl),
                    "IDT=     fffffe0000000000 00000fff"]
        return "\r\n".join(out) + "\r\n"

    def serve():
        conn, _ = srv.accept()
        conn.sendall(b"QEMU 7.2.22 monitor - type 'help' for more information\r\n(qemu) ")
        n, buf = 0, b""
        while True:
            d = conn.recv(4096)
            if not d:
                break
            buf += d
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                c = line.decode().strip()
                if c == "quit":
                    conn.close()
                    srv.close()
                    return
                if c == "info registers -a":
                    out = regs(samples[n % len(samples)])
                    n += 1
                elif c == "x/2gx 0xfffffe0000000030":
                    out = "fffffe0000000030: 0x81c08e0000100ba0 0x00000000ffffffff\r\n"
                elif re.match(r"x/1gx 0x", c):
                    out = "%s: 0x%016x\r\n" % (c[8:], 0xffffffff810dfd58 + 1)
                elif re.match(r"x/5xb 0x", c):
                    out = "%s: %s\r\n" % (c[8:], " ".join("0x%02x" % b for b in site_bytes))
                else:
                    out = ""
                # the echo as QEMU's readline redraws it, then the answer
                conn.sendall(("\x1b[K\x1b[D%s\r\n%s(qemu) " % (c, out)).encode())
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return t


def replay(samples, site_bytes):
    """the watchdog's round and its quit against fake_monitor"""
    import tempfile
    d = tempfile.mkdtemp()
    path = os.path.join(d, "x.monitor")
    t = fake_monitor(path, samples, site_bytes)
    args = argparse.Namespace(samples=12, interval=0, sysmap=None, quiet=20,
                              console=os.path.join(d, "none.log"))
    mon = Monitor(path)
    res = round_of(mon, args)
    end_guest(mon, None)
    t.join(5)
    os.unlink(path)
    os.rmdir(d)
    return res, not t.is_alive()


def selftest(_args):
    ev = os.path.join(REPO, "docs/evidence/tcg-int3-hang-20261130.txt")
    healthy = os.path.join(HERE, "int3watch-healthy.txt")
    nopsi = os.path.join(REPO, "docs/evidence/tcg-int3-hang-nopsi-20261130.txt")
    asm_exc_int3 = 0xffffffff81c00ba0	# from the evidence file's symbol list
    errs = []
    hang = parse_sample_lines(open(ev).read())
    got = analyse(hang, asm_exc_int3)
    if len(hang) != 12 or not got or got[0] != 1:
        errs.append("hang of %s not found: %d samples, %s" % (ev, len(hang), got))
    # live samples carry the word at RSP: the loop's one site...
    site = 0xffffffff810dfd58
    live = [{c: v + ((site + 1,) if v[0] == asm_exc_int3 else ()) for c, v in s.items()} for s in hang]
    got = analyse(live, asm_exc_int3)
    if not got or got[2] != site:
        errs.append("site of the hang: %s" % (got,))
    # ...and a vCPU at the entry 4 times but trapping from two sites is no loop
    seq = iter([site + 1, site + 0x101] * 2)
    live = [{c: v + ((next(seq),) if v[0] == asm_exc_int3 else ()) for c, v in s.items()} for s in hang]
    got = analyse(live, asm_exc_int3)
    if got:
        errs.append("two different sites taken for a loop: %s" % (got,))
    # one hit in the window is not enough
    if analyse(hang[:3], asm_exc_int3):
        errs.append("a single hit taken for a loop")
    # the full register dumps of the evidence parse
    regs = parse_regs(open(ev).read().split("=== cpu 1")[1])
    if regs.get(0, (0,))[0] != 0xffffffff81a45e16:
        errs.append("full register dump of %s: %s" % (ev, regs))
    ok = parse_sample_lines(open(healthy).read())
    entry = int(re.search(r"int3 entry.*0x([0-9a-f]{16})", open(healthy).read()).group(1), 16)
    if len(ok) < 24 or analyse(ok, entry) or analyse(ok, asm_exc_int3):
        errs.append("healthy storm %s: %d samples, taken for a hang" % (healthy, len(ok)))
    # the live hang of 2026-12-01, as the watchdog recorded it (vCPU 0)
    short = os.path.join(REPO, "docs/evidence/tcg-int3-hang-short-20261201.txt")
    got = analyse(parse_sample_lines(open(short).read()), asm_exc_int3)
    if not got or got[0] != 0:
        errs.append("hang of %s not found: %s" % (short, got))
    # the live path, through a monitor socket that replays the recordings
    hang2 = parse_sample_lines(open(short).read())
    res, quit_ok = replay(hang2, [0x0f, 0x1f, 0x44, 0x00, 0x00])
    if not res or not res[0].startswith("QEMU TCG stale-translation hang (int3 at 0xffffffff810dfd58, vCPU 0") \
            or "0f 1f 44 00 00" not in res[1] or not quit_ok:
        errs.append("replayed hang: %s, quit %s" % (res and res[0], quit_ok))
    res, _ = replay(hang2, [0xcc, 0x1f, 0x44, 0x00, 0x00])
    if res:
        errs.append("replayed loop on an int3 that memory holds taken for the stale translation")
    res, _ = replay(ok, [0x0f, 0x1f, 0x44, 0x00, 0x00])
    if res:
        errs.append("replayed healthy storm taken for a hang: %s" % res[0])
    cs = console_site(open(nopsi).read())
    if cs != "__schedule+0x155":
        errs.append("console fallback of %s: %s" % (nopsi, cs))
    if (idt_handler(0x81c08e0000100ba0, 0x00000000ffffffff) != asm_exc_int3):
        errs.append("IDT gate decoding")
    if errs:
        print("FAIL: " + "; ".join(errs))
        return 1
    print("ok: the two recorded hangs found, also through a replaying monitor socket, "
          "%d healthy samples of a load/unload storm not taken for one, "
          "the console fallback names __schedule+0x155" % len(ok))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    w = sub.add_parser("watch")
    w.add_argument("--monitor", required=True)
    w.add_argument("--console", required=True)
    w.add_argument("--out", required=True)
    w.add_argument("--sysmap")
    w.add_argument("--pid", type=int, help="SIGTERM this if QEMU does not quit")
    w.add_argument("--quiet", type=int, default=20, help="seconds of console silence before a round")
    w.add_argument("--samples", type=int, default=12)
    w.add_argument("--interval", type=float, default=1.0)
    w.add_argument("--poll", type=float, default=2.0)
    r = sub.add_parser("record")
    r.add_argument("--monitor", required=True)
    r.add_argument("--samples", type=int, default=12)
    r.add_argument("--interval", type=float, default=1.0)
    sub.add_parser("selftest")
    args = ap.parse_args()
    return {"watch": watch, "record": record, "selftest": selftest}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
