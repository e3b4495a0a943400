#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Imports FXT traces with Perfetto's trace_processor_shell (the importer the Perfetto UI
runs) and compares what it builds with what the project's reader predicts.

  compare.py TP SNAP JOBS LABEL=TRACE...
      For each trace: the slice table of TP (thread pid/tid, ts, dur, depth, name) must
      equal `SNAP dump -tree TRACE` (docs/fxt.md: one slice per begin/end pair or complete
      event, nested per thread by time), no slice may be left open (dur -1) and the stats
      table must hold no 'error' or 'data_losses' entry. Prints "PASS perfetto/LABEL (N
      slices)" or "FAIL perfetto/LABEL: why", JOBS traces at a time.
  compare.py TP SNAP JOBS --expect EXPECTED LABEL=TRACE
      The same, against EXPECTED (lines "pid tid ts dur depth name") instead of dump -tree.
  compare.py TP SNAP JOBS --must-fail WHY [--expect EXPECTED] LABEL=TRACE
      The check must fail on TRACE with a reason containing WHY (the suite's own test).
"""
import concurrent.futures
import os
import subprocess
import sys
import tempfile

QUERY = """
select 'S' as k, s.ts as ts, s.dur as dur, s.depth as depth, hex(s.name) as name,
       ifnull(t.tid, -1) as tid, ifnull(p.pid, -1) as pid
from slice s
left join thread_track tt on s.track_id = tt.id
left join thread t using (utid)
left join process p using (upid)
union all
select 'E', value, 0, 0, hex(name || '[' || ifnull(idx, '') || '] ' || severity), -1, -1
from stats where value > 0 and severity in ('error', 'data_losses');
"""


def esc(b):
    """util/esc.h's escaping (flags 0), so names compare as dump -tree prints them."""
    out = []
    for c in b.decode("utf-8", errors="surrogateescape"):
        o = ord(c)
        if 0xDC80 <= o <= 0xDCFF:
            out.append("\\x%02x" % (o - 0xDC00))
        elif o < 0x20 or o == 0x7F:
            out.append("\\x%02x" % o)
        elif 0x80 <= o <= 0x9F:
            out.append("\\u%04x" % o)
        else:
            out.append(c)
    return "".join(out)


def predicted(snap, trace):
    """The slices dump -tree prints: a sorted list of (pid, tid, ts, dur, depth, name)."""
    r = subprocess.run([snap, "dump", "-tree", trace], capture_output=True)
    if r.returncode != 0:
        raise ValueError("dump -tree failed: %s" % r.stderr.decode(errors="replace").strip())
    rows, pid, tid = [], None, None
    for line in r.stdout.decode("utf-8", errors="surrogateescape").split("\n"):
        if not line:
            continue
        if line.startswith("thread "):
            f = line.split()
            pid, tid = int(f[1][4:]), int(f[2][4:])
            continue
        body = line.lstrip(" ")
        if body.startswith("("):
            raise ValueError("dump -tree: %s on thread %s" % (body, tid))
        depth = (len(line) - len(body)) // 2 - 1
        ts, dur, name = body.split(" ", 2)
        if dur == "+?":
            raise ValueError("dump -tree: %s at %s on thread %s never ends" % (name, ts, tid))
        rows.append((pid, tid, int(ts), int(dur[1:]), depth, name))
    return sorted(rows)


def expected_file(path):
    rows = []
    for line in open(path):
        if line.strip():
            f = line.rstrip("\n").split(" ", 5)
            rows.append(tuple(int(x) for x in f[:5]) + (f[5],))
    return sorted(rows)


def imported(tp, trace):
    """TP's slices (sorted as predicted()) and its import errors."""
    with tempfile.NamedTemporaryFile("w", suffix=".sql") as q:
        q.write(QUERY)
        q.flush()
        r = subprocess.run([tp, "-q", q.name, trace], capture_output=True, timeout=300)
    if r.returncode != 0:
        err = [l for l in r.stderr.decode(errors="replace").split("\n") if l.strip()]
        raise ValueError("trace_processor_shell exit %d: %s" % (r.returncode, " ".join(err[-2:])))
    rows, errors = [], []
    lines = r.stdout.decode().split("\n")
    for line in lines[1:]:  # a header row, then plain values (name is hex, no quotes in it)
        if not line:
            continue
        f = [x.strip('"') for x in line.split(",")]
        name = esc(bytes.fromhex(f[4]))
        if f[0] == "E":
            errors.append("%s=%s" % (name, f[1]))
            continue
        rows.append((int(f[6]), int(f[5]), int(f[1]), int(f[2]), int(f[3]), name))
    return sorted(rows), errors


def first_difference(want, got):
    ws, gs = set(want), set(got)
    missing = [r for r in want if r not in gs]
    extra = [r for r in got if r not in ws]
    fmt = lambda r: "pid %d tid %d ts %d dur %d depth %d %r" % r
    why = []
    if missing:
        why.append("predicted, not imported: %s" % fmt(missing[0]))
    if extra:
        why.append("imported, not predicted: %s" % fmt(extra[0]))
    if not why:
        why.append("same slices, different counts")
    return "; ".join(why) + " (%d predicted, %d imported)" % (len(want), len(got))


def check(tp, snap, trace, expect=None):
    """None if the trace imports as predicted, else the reason."""
    try:
        want = expected_file(expect) if expect else predicted(snap, trace)
        got, errors = imported(tp, trace)
    except (ValueError, subprocess.TimeoutExpired, OSError) as e:
        return str(e), 0
    if errors:
        return "import errors in stats: %s" % ", ".join(errors[:4]), len(got)
    opened = [r for r in got if r[3] < 0]
    if opened:
        r = opened[0]
        return "%d slice(s) left open (dur -1), first %r at %d on tid %d" % (
            len(opened), r[5], r[2], r[1]), len(got)
    if want != got:
        return first_difference(want, got), len(got)
    return None, len(got)


def main():
    tp, snap, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    args = sys.argv[4:]
    expect = must = None
    while args[:1] in (["--expect"], ["--must-fail"]):
        if args[0] == "--expect":
            expect = args[1]
        else:
            must = args[1]
        args = args[2:]
    items = [a.split("=", 1) for a in args]
    ok = True
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        results = pool.map(lambda it: check(tp, snap, it[1], expect), items)
        for (label, _), (why, n) in zip(items, results):
            if must is not None:
                if why is not None and must in why:
                    print("PASS perfetto/%s (fails as it should: %s)" % (label, why))
                else:
                    print("FAIL perfetto/%s: the check should fail with '%s', got: %s" % (
                        label, must, why or "no failure"))
                    ok = False
            elif why is None:
                print("PASS perfetto/%s (%d slices)" % (label, n))
            else:
                print("FAIL perfetto/%s: %s" % (label, why))
                ok = False
    sys.stdout.flush()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
