#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compares snaptrace's self-time shares with perf report's on the same perf.data.

compare.py PERF_REPORT_TXT SNAP_REPORT_JSON [options]

PERF_REPORT_TXT is the output of
    perf report -i perf.data --no-children --sort dso,sym --stdio -F overhead,sample,dso,sym -g none
(only the section of the sampling event, --event, is read: perf prints one section per
event, e.g. also one for sched:sched_switch). SNAP_REPORT_JSON is `snaptrace report -json`
of the trace decoded from that perf.data (docs/report.md).

Share of on-CPU self time: perf's is its overhead column (the function's share of the
sampling event's period, i.e. of the time the thread was seen on the CPU). snaptrace's
is a function's self_ns over the sum of self_ns of every real function: synthetic slices
(names in brackets, `[off-CPU]`, `[off-CPU: preempted]`, an unknown-on-CPU slice, ...)
are left out of both the sum and the table. Rows are matched by name, with three
foldings: versioned names lose their version (perf script's `clock_nanosleep@GLIBC_2.2.5`
is perf report's `clock_nanosleep`); code without a symbol is one row per DSO in both
(`[unknown in python3.11]`: perf report has a row per address, snaptrace one per function,
`[unknown @ 0xSTART (DSO)]`); with --inline-map PERF_DATA, a leaf snaptrace names by the
function inlined there (perf script's `__GI___poll (inlined)`, debug info) is the function
perf report names (`__poll`), learnt by running perf script with and without --no-inline.

Passes when every function with >= --min share in either tool is within --tol points of
perf's share, every --samples FUNC:N function has >= N perf samples (else the case proves
too little: an error, exit 2), and every --calls FUNC:N function has >= N counted calls in
snaptrace's report, every --calls-max FUNC:N function has at most N calls, counted and
cut (a call the program makes once is one slice), every --total-le-span FUNC has a total no longer than the trace's
span (a recursive function's nested calls counted once), and with --blocked-max PCT the
blocking `[off-CPU]` slices cover at most PCT % of the span (a program that never blocks
is only preempted: `[off-CPU: preempted]`). On failure prints one reason line, then
both tables side by side.
Exit 0 pass, 1 fail, 2 bad input or too few samples.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys


def synthetic(name):
    """A slice snaptrace made up (not a function of the program)."""
    return name.startswith("[") and not name.startswith("[unknown @") and name != "[unknown]"


def unknown_key(dso):
    """One row for all code without a symbol in DSO, in both tools: perf report names
    such code by address (one row per address), snaptrace by the start of the function
    around it (docs/sampling.md), so only their sum per DSO compares."""
    return f"[unknown in {os.path.basename(dso) if dso else '?'}]"


def read_perf(path, event):
    """{symbol: (percent, samples)} of EVENT's section, and the section's sample total."""
    shares, total, cur, seen = {}, 0, None, False
    # "  4.11%   15  libc.so.6   [.] __poll" (-F overhead,sample,dso,sym)
    line_re = re.compile(r"^\s*([0-9.]+)%\s+([0-9]+)\s+(.*?)\s+\[(.)\]\s+(.*?)\s*$")
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
            pct, n, dso, sym = float(m.group(1)), int(m.group(2)), m.group(3), m.group(5)
            if re.fullmatch(r"0x[0-9a-f]+", sym) or sym == "[unknown]":
                sym = unknown_key(dso)
            old = shares.get(sym, (0.0, 0))
            shares[sym] = (old[0] + pct, old[1] + n)  # same name in two DSOs
            total += n
    if not seen:
        raise ValueError(f"{path}: no section for event '{event}' (perf report output?)")
    return shares, total


def leaf_groups(text):
    """The first line of every sample of `perf script -F ip,sym` (samples are separated
    by blank lines), as the symbol name."""
    leaves, first = [], True
    for line in text.splitlines():
        if not line.strip():
            first = True
            continue
        if first:
            parts = line.strip().split(None, 1)
            name = parts[1] if len(parts) > 1 else "[unknown]"
            leaves.append(re.sub(r" \(inlined\)$", "", name))
            first = False
    return leaves


def inline_map(data):
    """{name perf script gives a leaf: perf report's symbol of it} where they differ.
    With debug info perf script names a leaf by the function inlined there
    (`__GI___poll (inlined)`), which snaptrace shows, while perf report's symbol is the
    function the code belongs to (`__poll`): the same samples, run with and without
    --no-inline, give the pairs."""
    runs = []
    for extra in ([], ["--no-inline"]):
        out = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym"] + extra,
                             capture_output=True, text=True, errors="replace", check=False)
        runs.append(leaf_groups(out.stdout))
    if len(runs[0]) != len(runs[1]) or not runs[0]:
        raise ValueError(f"perf script of {data}: {len(runs[0])} and {len(runs[1])} samples with and without --no-inline")
    votes = {}
    for a, b in zip(runs[0], runs[1]):
        if a != b:
            votes.setdefault(a, collections.Counter())[b] += 1
    return {a: c.most_common(1)[0][0] for a, c in votes.items()}


def bare_name(name):
    """The name both tools' rows are matched on: versioned symbols without their
    version (clock_nanosleep@GLIBC_2.2.5 in perf script, clock_nanosleep in perf
    report), code without a symbol as one row per DSO."""
    m = re.fullmatch(r"\[unknown @ 0x[0-9a-f]+(?: \((.*)\))?\]", name)
    if m:
        return unknown_key(m.group(1))
    if name == "[unknown]":
        return unknown_key(None)
    return name if name.startswith("[") else name.split("@")[0]


def fold(shares):
    """perf's {name: (percent, samples)} by bare name."""
    out = {}
    for n, v in shares.items():
        b = bare_name(n)
        old = out.get(b, (0.0, 0))
        out[b] = (old[0] + v[0], old[1] + v[1])
    return out


def read_snap(path):
    with open(path, encoding="utf-8") as f:
        rep = json.load(f)
    funcs = {}
    for fn in rep.get("functions", []):
        old = funcs.get(fn["name"])
        if old is None:
            funcs[fn["name"]] = dict(fn)
        else:  # two functions of one name (two DSOs): one row, as perf's --sort sym
            for k in ("calls", "total_ns", "self_ns", "open"):
                old[k] = old.get(k, 0) + fn.get(k, 0)
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
    ap.add_argument("--calls-max", action="append", default=[], metavar="FUNC:N",
                    help="FUNC has at most N calls in snaptrace's report (counted and cut)")
    ap.add_argument("--total-samples", type=int, default=0, metavar="N",
                    help="perf must have >= N samples of the event in all (else exit 2)")
    ap.add_argument("--inline-map", metavar="PERF_DATA",
                    help="fold snaptrace's rows of inlined leaves into perf report's symbols (runs perf script)")
    ap.add_argument("--alias", action="append", default=[], metavar="NAME=PERF_NAME",
                    help="snaptrace's NAME is perf report's PERF_NAME (as --inline-map learns them)")
    ap.add_argument("--total-le-span", action="append", default=[], metavar="FUNC",
                    help="FUNC's total must not exceed the trace's span (recursion counted once)")
    ap.add_argument("--blocked-max", type=float, default=None, metavar="PCT",
                    help="the blocking [off-CPU] slices may cover at most PCT %% of the span")
    a = ap.parse_args()

    try:
        perf, ptotal = read_perf(a.perf, a.event)
        rep, funcs = read_snap(a.snap)
        inl = inline_map(a.inline_map) if a.inline_map else {}
        for spec in a.alias:
            name, perf_name = spec.split("=", 1)
            inl[name] = perf_name
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError) as e:
        print(f"bad input: {e}")
        return 2
    real = {n: f for n, f in funcs.items() if not synthetic(n)}
    ssum = sum(f["self_ns"] for f in real.values())
    synth = {n: f["self_ns"] for n, f in funcs.items() if synthetic(n)}

    def key(name):
        # a marked inlined row ('NAME [inlined]', 'NAME (inlined)') is NAME's; an
        # inlined leaf is the function perf report names (--inline-map)
        t = re.sub(r"\s*[\[(]inlined[\])]$", "", name)
        return bare_name(inl.get(t, t))

    rowsof = {}
    for n, f in real.items():
        rowsof.setdefault(key(n), []).append(f)
    bare = {k: (100.0 * sum(f["self_ns"] for f in fs) / ssum if ssum else 0.0) for k, fs in rowsof.items()}
    perf = fold(perf)
    names = set(perf) | set(bare)

    problems = []
    if ptotal < a.total_samples:
        print(f"too few samples: perf has {ptotal} samples of {a.event}, the case needs >= {a.total_samples}")
        return 2
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
    for spec in a.calls_max:
        fn, n = spec.rsplit(":", 1)
        f = funcs.get(fn)
        calls, opn = (f["calls"], f["open"]) if f else (0, 0)
        if calls + opn > int(n):
            problems.append(f"{fn} has {calls} counted calls (+{opn} cut), more than {n}")

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
        fs = rowsof.get(n, [])
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
