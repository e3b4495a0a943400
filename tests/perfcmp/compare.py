#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compares snaptrace's self-time shares with perf report's on the same perf.data.

compare.py PERF_REPORT_TXT SNAP_REPORT_JSON [options]

PERF_REPORT_TXT is the output of
    perf report -i perf.data --no-children --sort sym --stdio -F overhead,sample,sym -g none
(only the section of the sampling event, --event, is read: perf prints one section per
event, e.g. also one for sched:sched_switch). SNAP_REPORT_JSON is `snaptrace report -json`
of the trace decoded from that perf.data (docs/report.md).

Share of on-CPU self time: perf's is its overhead column (the function's share of the
sampling event's period, i.e. of the time the thread was seen on the CPU). snaptrace's
is a function's self_ns over the sum of self_ns of every real function: synthetic slices
(names in brackets, `[off-CPU]`, `[off-CPU: preempted]`, an unknown-on-CPU slice, ...)
are left out of both the sum and the table, except `[unknown @ 0xSTART (DSO)]`, the name
of code without a symbol (perf names it by address: its share stays in the sum).

Passes when every function with >= --min share in either tool is within --tol points of
perf's share, every --samples FUNC:N function has >= N perf samples (else the case proves
too little: an error, exit 2), and every --calls FUNC:N function has >= N counted calls in
snaptrace's report, every --total-le-span FUNC has a total no longer than the trace's
span (a recursive function's nested calls counted once), and with --blocked-max PCT the
blocking `[off-CPU]` slices cover at most PCT % of the span (a program that never blocks
is only preempted: `[off-CPU: preempted]`). On failure prints one reason line, then both tables side by side.
Exit 0 pass, 1 fail, 2 bad input or too few samples.
"""
import argparse
import json
import re
import sys


def synthetic(name):
    """A slice snaptrace made up (not a function of the program)."""
    return name.startswith("[") and not name.startswith("[unknown @") and name != "[unknown]"


def read_perf(path, event):
    """{symbol: (percent, samples)} of EVENT's section, and the section's sample total."""
    shares, total, cur, seen = {}, 0, None, False
    line_re = re.compile(r"^\s*([0-9.]+)%\s+([0-9]+)\s+\[(.)\]\s+(.*?)\s*$")
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"^# Samples: \S+\s+of event '([^']*)'", line)
            if m:
                # 'cpu-clock', or as given to perf record: 'cpu-clock/freq=4000/u'
                cur = re.split(r"[/:]", m.group(1))[0]
                if cur == event:
                    if seen:
                        raise ValueError(f"{path}: two sections for event '{event}'")
                    seen = True
                continue
            if cur != event:
                continue
            m = line_re.match(line)
            if not m:
                continue
            pct, n, _, sym = float(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
            old = shares.get(sym, (0.0, 0))
            shares[sym] = (old[0] + pct, old[1] + n)  # same name in two DSOs
            total += n
    if not seen:
        raise ValueError(f"{path}: no section for event '{event}' (perf report output?)")
    return shares, total


def bare_name(name):
    return name if name.startswith("[") else name.split("@")[0]


def fold(shares):
    """shares by bare name (values: numbers or (percent, samples) pairs)."""
    out = {}
    for n, v in shares.items():
        b = bare_name(n)
        if isinstance(v, tuple):
            old = out.get(b, (0.0, 0))
            out[b] = (old[0] + v[0], old[1] + v[1])
        else:
            out[b] = out.get(b, 0.0) + v
    return out


def read_snap(path):
    with open(path, encoding="utf-8") as f:
        rep = json.load(f)
    funcs = {}
    for fn in rep.get("functions", []):
        funcs[fn["name"]] = fn
    return rep, funcs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("perf")
    ap.add_argument("snap")
    ap.add_argument("--event", default="cpu-clock")
    ap.add_argument("--min", type=float, default=5.0, help="share (%%) that makes a function checked")
    ap.add_argument("--tol", type=float, default=10.0, help="allowed difference in points")
    ap.add_argument("--samples", action="append", default=[], metavar="FUNC:N")
    ap.add_argument("--calls", action="append", default=[], metavar="FUNC:N")
    ap.add_argument("--total-le-span", action="append", default=[], metavar="FUNC",
                    help="FUNC's total must not exceed the trace's span (recursion counted once)")
    ap.add_argument("--blocked-max", type=float, default=None, metavar="PCT",
                    help="the blocking [off-CPU] slices may cover at most PCT %% of the span")
    a = ap.parse_args()

    try:
        perf, ptotal = read_perf(a.perf, a.event)
        rep, funcs = read_snap(a.snap)
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as e:
        print(f"bad input: {e}")
        return 2
    real = {n: f for n, f in funcs.items() if not synthetic(n)}
    ssum = sum(f["self_ns"] for f in real.values())
    synth = {n: f["self_ns"] for n, f in funcs.items() if synthetic(n)}
    snap = {n: (100.0 * f["self_ns"] / ssum if ssum else 0.0) for n, f in real.items()}
    # snaptrace names versioned symbols as perf script does (clock_gettime@@GLIBC_2.17),
    # perf report may not: compare on the bare names.
    bare, perf = fold(snap), fold(perf)
    names = set(perf) | set(bare)

    problems = []
    for spec in a.samples:
        fn, n = spec.rsplit(":", 1)
        got = perf.get(fn, (0.0, 0))[1]
        if got < int(n):
            print(f"too few samples: perf has {got} samples of {fn}, the case needs >= {n}")
            return 2
    rows = []
    for n in sorted(names, key=lambda n: (-abs(perf.get(n, (0.0, 0))[0] - bare.get(n, 0.0)), n)):
        p = perf.get(n, (0.0, 0))[0]
        s = bare.get(n, 0.0)
        rows.append((n, p, s))
        if max(p, s) >= a.min and abs(p - s) > a.tol:
            problems.append(f"{n} {s:.1f}% vs perf {p:.1f}% ({s - p:+.1f} points)")
    for spec in a.calls:
        fn, n = spec.rsplit(":", 1)
        f = funcs.get(fn)
        calls = f["calls"] if f else 0
        if calls < int(n):
            opn = f["open"] if f else 0
            problems.append(f"{fn} has {calls} counted calls (+{opn} cut), needs >= {n}")

    span = rep.get("span_ns", 0)
    for fn in a.total_le_span:
        f = funcs.get(fn)
        if f and f["total_ns"] > span:
            problems.append(f"{fn} total {f['total_ns'] / 1e6:.1f} ms > span {span / 1e6:.1f} ms")
    if a.blocked_max is not None:
        blk = funcs.get("[off-CPU]", {}).get("self_ns", 0)
        if span and 100.0 * blk / span > a.blocked_max:
            problems.append(f"[off-CPU] (blocked) {blk / 1e6:.1f} ms = {100.0 * blk / span:.0f}% of the "
                            f"{span / 1e6:.1f} ms span, max {a.blocked_max:g}%")

    rows.sort(key=lambda r: (-max(r[1], r[2]), r[0]))
    out = []
    out.append(f"  {'function':<36} {'perf %':>7} {'samples':>7}   {'snap %':>7} {'self ms':>9} {'calls':>6} {'cut':>5}  diff")
    for n, p, s in rows:
        if max(p, s) < 0.5:
            continue
        fs = [real[k] for k in real if bare_name(k) == n]
        self_ms = sum(f["self_ns"] for f in fs) / 1e6
        calls = sum(f["calls"] for f in fs)
        opn = sum(f["open"] for f in fs)
        mark = " <--" if max(p, s) >= a.min and abs(p - s) > a.tol else ""
        out.append(f"  {n[:36]:<36} {p:7.1f} {perf.get(n, (0, 0))[1]:7d}   {s:7.1f} {self_ms:9.2f} {calls:6d} {opn:5d}  {s - p:+.1f}{mark}")
    extra = ", ".join(f"{n} {v / 1e6:.1f} ms" for n, v in sorted(synth.items(), key=lambda kv: -kv[1]))
    out.append(f"  perf: {ptotal} samples of {a.event}; snaptrace: {ssum / 1e6:.1f} ms of real self time, "
               f"{rep.get('open_slices', 0)} slices cut" + (f"; synthetic (left out): {extra}" if extra else ""))
    if problems:
        print("; ".join(problems))
        print("\n".join(out))
        return 1
    print("ok")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
