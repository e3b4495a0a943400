#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Differential test of `snaptrace dump -check` against fxt_read.py --pedantic.

Usage: verdicts.py SNAPTRACE FXT_READ_PY N TMPDIR
Writes N small random FXT traces (begin/end/complete events on two threads,
in random time order, some of them malformed as Perfetto sees them) and
checks that dump -check accepts exactly the traces fxt_read.py finds no
error or warning in. Prints the first disagreement and exits 1, or 0.
"""
import importlib.util
import os
import random
import struct
import subprocess
import sys

MAGIC = 0x0016547846040010


def event(etype, ts, pid, tid, name, end=None):
    nb = name.encode()
    nw = (len(nb) + 7) // 8
    size = 4 + nw + (1 if end is not None else 0)
    h = 4 | size << 4 | etype << 16 | ((0x8000 | len(nb)) << 48 if nb else 0)
    data = struct.pack("<4Q", h, ts, pid, tid) + nb + b"\0" * (nw * 8 - len(nb))
    if end is not None:
        data += struct.pack("<Q", end)
    return data


def trace(seed):
    r = random.Random(seed)
    out = struct.pack("<Q", MAGIC)
    for _ in range(r.randrange(1, 9)):
        k = r.randrange(3)
        ts = r.randrange(0, 20)
        tid = r.choice([1, 2])
        name = r.choice(["a", "b", "c", ""])
        if k == 0:
            out += event(2, ts, 1, tid, name)
        elif k == 1:
            out += event(3, ts, 1, tid, name)
        else:
            out += event(4, ts, 1, tid, name, ts + r.randrange(0, 6))
    return out


def main():
    snap, reader_path, n, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    spec = importlib.util.spec_from_file_location("fxt_read", reader_path)
    fxt_read = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fxt_read)
    path = os.path.join(tmp, "verdict.fxt")
    valid = 0
    for seed in range(n):
        data = trace(seed)
        with open(path, "wb") as f:
            f.write(data)
        r = fxt_read.read_bytes(data)
        errors, warnings, _ = r.counts_by_severity()
        theirs = errors == 0 and warnings == 0
        p = subprocess.run([snap, "dump", "-check", path], capture_output=True, text=True)
        ours = p.returncode == 0
        valid += ours
        if ours != theirs:
            codes = sorted({v.code for v in r.violations if v.severity != "info"})
            print("seed %d: dump -check %s (%s), fxt_read: %s" % (
                seed, "accepts" if ours else "rejects", p.stderr.strip(), codes or "no problem"))
            return 1
    if not 0 < valid < n:
        # both verdicts must be exercised, or agreement proves nothing
        print("%d traces, %d valid: the generator no longer makes both kinds" % (n, valid))
        return 1
    print("%d traces (%d valid): same verdicts" % (n, valid))
    return 0


if __name__ == "__main__":
    sys.exit(main())
