#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compares `snaptrace dump` output with fxt_read.py --jsonl (duration events).

Usage: compare.py DUMP.txt EVENTS.jsonl
Both are normalised to (ph, ts, dur, pid, tid, name, args) tuples in file
order; prints the first difference and exits 1, or prints the count and 0.
"""
import json
import re
import sys

LINE = re.compile(
    r'^(begin|end|complete) ts=(\d+)(?: end=(\d+))? pid=(\d+) tid=(\d+)'
    r'(?: cat=("(?:[^"\\]|\\.)*"))?(?: name=("(?:[^"\\]|\\.)*"|<undefined \d+>))?'
    r'(?: args=\{(.*)\})?$')


def unquote(s):
    """Decodes a dump string literal "..." (escapes \\" \\\\ \\xNN) to bytes, then UTF-8."""
    assert s[0] == '"' and s[-1] == '"', s
    out = bytearray()
    body = s[1:-1].encode("utf-8")
    i = 0
    while i < len(body):
        c = body[i]
        if c == 0x5C:
            n = body[i + 1]
            if n == ord("x"):
                out.append(int(body[i + 2:i + 4], 16))
                i += 4
                continue
            out.append(n)
            i += 2
            continue
        out.append(c)
        i += 1
    return out.decode("utf-8", errors="replace")


def parse_args(s):
    """k=v, k=v ... where a key is bare or quoted and a value is quoted or a bare token."""
    args = {}
    i = 0
    while i < len(s):
        if s[i] == '"':
            m = re.match(r'"(?:[^"\\]|\\.)*"', s[i:])
            key = unquote(m.group(0))
            i += len(m.group(0))
        else:
            j = s.index("=", i)
            key = s[i:j]
            i = j
        assert s[i] == "=", s
        i += 1
        if s[i] == '"':
            m = re.match(r'"(?:[^"\\]|\\.)*"', s[i:])
            val = unquote(m.group(0))
            i += len(m.group(0))
        else:
            j = s.find(", ", i)
            j = len(s) if j < 0 else j
            tok = s[i:j]
            i = j
            val = tok if tok.startswith("0x") or not re.match(r"^-?\d+$", tok) else int(tok)
        args[key] = val
        if s.startswith(", ", i):
            i += 2
    return args


def from_dump(path):
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = LINE.match(line)
            if not m:
                continue
            ph = {"begin": "B", "end": "E", "complete": "X"}[m.group(1)]
            ts = int(m.group(2))
            dur = int(m.group(3)) - ts if m.group(3) else None
            name = unquote(m.group(7)) if m.group(7) and m.group(7)[0] == '"' else ("" if not m.group(7) else None)
            args = parse_args(m.group(8)) if m.group(8) else {}
            out.append((ph, ts, dur, int(m.group(4)), int(m.group(5)), name, args))
    return out


def from_jsonl(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            out.append((r["ph"], r["ts_ns"], r.get("dur_ns"), r["pid"], r["tid"], r["name"], r["args"]))
    return out


def main():
    a = from_dump(sys.argv[1])
    b = from_jsonl(sys.argv[2])
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            print("event #%d differs:\n  dump:    %r\n  fxt_read: %r" % (i, x, y))
            return 1
    if len(a) != len(b):
        print("dump has %d duration events, fxt_read %d" % (len(a), len(b)))
        return 1
    if not a:
        print("no duration events")
        return 1
    print("%d duration events agree" % len(a))
    return 0


if __name__ == "__main__":
    sys.exit(main())
