#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions of a `snaptrace decode` per stage, from callgrind output files.

  cgstages.py [-t] OUT.callgrind [...]
  cgstages.py selftest

Prints one line per file: "total decode reader loop stacks fxt gzip other" (instruction
counts; -t: a header line first). Each function is given a stage by its source file (or,
for libz and libipt, its object):

  decode   src/ptdec/ piece decoding: pool, decode, walk, tokens, machine, insn, timing,
           libipt, resync, split (and libipt itself)
  reader   the rest of src/ptdec/: merge of the pieces' events, perf.data, sideband,
           symbols, comms
  loop     src/cli/pipeline.c (the loop handing events to the stack builder)
  stacks   src/stack/
  fxt      src/write/ but pgz.c (FXT encoding, the sink)
  gzip     src/write/pgz.c, libz and libdeflate
  other    the rest: start-up, option parsing, exit

The self cost of any other function (libc, util/, parse/, model/) is shared among the
stages of its callers in proportion to the inclusive cost of each caller's calls
(callgrind's calls= lines), through chains of such functions: memcpy called by the FXT
encoder counts as FXT, malloc called by the stack builder as stacks. A function nobody
calls (the program's roots) is "other". So the stages add up to the program's total.
docs/ptdec.md ("Limits and figures") has the table this gives.
"""
import re
import sys

DECODE = ("pool", "decode", "walk", "tokens", "machine", "insn", "timing", "libipt",
          "resync", "split")
STAGES = ("decode", "reader", "loop", "stacks", "fxt", "gzip", "other")


def stage_of(obj, path):
    if "libz.so" in obj or "libdeflate" in obj:
        return "gzip"
    if "libipt" in obj:
        return "decode"
    m = re.search(r"(?:^|/)src/(\w+)/(\w+)\.[ch]$", path)
    if not m:
        return None
    d, f = m.group(1), m.group(2)
    if d == "ptdec":
        return "decode" if f in DECODE else "reader"
    if d == "cli" and f == "pipeline":
        return "loop"
    if d == "stack":
        return "stacks"
    if d == "write":
        return "gzip" if f == "pgz" else "fxt"
    return None


def parse(path):
    """Returns (total, self cost by function, edges (caller, callee) -> inclusive, stage
    by function); a function is (object, file, name)."""
    names = {"fl": {}, "fn": {}, "ob": {}}
    space = {"fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl", "fn": "fn",
             "cfn": "fn", "ob": "ob", "cob": "ob"}
    npos = 1
    cur = {"ob": "", "fl": ""}
    fn = None
    cfile = cob = cfn = None
    in_call = False
    selfc, edges, stage, total = {}, {}, {}, None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line[0] == "#":
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                cost = int(parts[npos]) if len(parts) > npos else 0
                if in_call:
                    key = (fn, (cob, cfile, cfn))
                    edges[key] = edges.get(key, 0) + cost
                    in_call = False
                    cfile = cob = None
                elif fn is not None:
                    selfc[fn] = selfc.get(fn, 0) + cost
                continue
            k, _, v = line.partition("=")
            if k in space:
                m = re.match(r"\((\d+)\)\s*(.*)$", v)
                tab = names[space[k]]
                if m:
                    if m.group(2):
                        tab[m.group(1)] = m.group(2)
                    v = tab.get(m.group(1), m.group(1))
                if k in ("ob", "fl"):
                    cur[k] = v
                elif k == "fn":
                    fn = (cur["ob"], cur["fl"], v)
                    stage.setdefault(fn, stage_of(fn[0], fn[1]))
                    cfile = cob = None
                elif k in ("cfi", "cfl"):
                    cfile = v
                elif k == "cob":
                    cob = v
                elif k == "cfn":
                    cfn = v
            elif k == "calls":
                cob = cob if cob is not None else cur["ob"]
                cfile = cfile if cfile is not None else cur["fl"]
                callee = (cob, cfile, cfn)
                stage.setdefault(callee, stage_of(cob, cfile))
                in_call = True
            elif k == "positions":
                npos = len(v.split())
            elif k in ("summary", "totals"):
                total = int(v.split()[0])
    if total is None:
        total = sum(selfc.values())
    return total, selfc, edges, stage


def stages(path):
    total, selfc, edges, stage = parse(path)
    callers = {}
    for (a, b), c in edges.items():
        if a != b:
            callers.setdefault(b, []).append((a, c))
    share = {}

    def share_of(fn, depth=0):
        s = stage.get(fn)
        if s:
            return {s: 1.0}
        if fn in share:
            return share[fn]
        ins = callers.get(fn, [])
        tot = sum(c for _, c in ins)
        if not ins or tot == 0 or depth > 50:
            return {"other": 1.0}
        share[fn] = {"other": 1.0}  # a cycle through helpers: counted as other
        out = {}
        for a, c in ins:
            for st, w in share_of(a, depth + 1).items():
                out[st] = out.get(st, 0.0) + w * c / tot
        share[fn] = out
        return out

    sys.setrecursionlimit(10000)
    res = dict.fromkeys(STAGES, 0.0)
    for fn, c in selfc.items():
        for st, w in share_of(fn).items():
            res[st] += c * w
    res["other"] += total - sum(selfc.values())
    return total, res


# selftest: a callgrind file written by hand (name compression, relative positions, calls
# into another object, a libc helper called from three stages, a util/ helper called
# right after a call into libc) and its stages.
SELFTEST_IN = """# callgrind format
version: 1
positions: line
events: Ir
ob=(1) /x/snaptrace
fl=(1) /x/src/cli/main.c
fn=(1) main
0 10
+2 5
cfl=(2) /x/src/cli/pipeline.c
cfn=(2) snap_decode_run
calls=1 0
0 1025
fl=(2)
fn=(2)
0 40
cfl=(3) /x/src/ptdec/ptdec.c
cfn=(3) snap_ptdec_next
calls=5 0
0 300
cfl=(4) /x/src/stack/decoder.c
cfn=(4) snap_decoder_feed
calls=5 0
0 685
fl=(3)
fn=(3)
0 100
cfl=(5) /x/src/ptdec/walk.c
cfn=(5) ptd_walk_piece
calls=1 0
0 150
cob=(2) /lib/libc.so.6
cfl=(6) ???
cfn=(6) memcpy
calls=2 0
0 50
fl=(5)
fn=(5)
0 120
cob=(2)
cfl=(6)
cfn=(6)
calls=1 0
0 30
fl=(4)
fn=(4)
0 200
cfl=(7) /x/src/write/fxt.c
cfn=(7) fxt_event
calls=3 0
0 485
fl=(7)
fn=(7)
0 100
cob=(2)
cfl=(6)
cfn=(6)
calls=3 0
0 60
cfl=(10) /x/src/util/strtab.c
cfn=(10) snap_strtab_add
calls=1 0
0 25
cfl=(8) /x/src/write/pgz.c
cfn=(8) snap_pgz_write
calls=1 0
0 300
fl=(10)
fn=(10)
0 25
fl=(8)
fn=(8)
0 20
cob=(3) /usr/lib/libz.so.1
cfl=(6)
cfn=(9) deflate
calls=1 0
0 280
ob=(2)
fl=(6)
fn=(6)
0 140
ob=(3)
fn=(9)
0 280
totals: 1040
"""
SELFTEST_OUT = "1040 150 150 40 200 185 300 15"


def selftest():
    import os
    import tempfile

    fd, path = tempfile.mkstemp(suffix=".callgrind")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(SELFTEST_IN)
        total, res = stages(path)
    finally:
        os.unlink(path)
    got = str(total) + " " + " ".join("%.0f" % res[s] for s in STAGES)
    if got != SELFTEST_OUT:
        print("FAIL bench_cgstages_selftest: got %s, want %s" % (got, SELFTEST_OUT))
        return 1
    print("PASS bench_cgstages_selftest")
    return 0


def main():
    args = sys.argv[1:]
    if args == ["selftest"]:
        sys.exit(selftest())
    if args and args[0] == "-t":
        print("total " + " ".join(STAGES))
        args = args[1:]
    for p in args:
        total, res = stages(p)
        print(str(total) + " " + " ".join("%.0f" % res[s] for s in STAGES))


if __name__ == "__main__":
    main()
