#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes a small FXT trace in the style of magic-trace's writer (not snaptrace's):
string-table and inline names, a thread-table ref and inline pid/tid, durations as
complete events and as begin/end pairs, the thread named by a kernel object.
  mkfxt.py OUT
Times (ns, 1e9 ticks/s), thread pid 100 tid 101 named "mt thread":
  main  begin 1000 (the first timestamp: cut) .. end 3000 (the last: cut)
  work  complete [1100, 1400]      helper begin 1500 .. end 1700 (inline name)
  work  complete [1800, 1900]
So: work 2 calls 300/100 ns, helper 1 call 200 ns, 3 slices, 1 cut, span 2000 ns."""
import struct
import sys


def word(v):
    return struct.pack("<Q", v)


def text(s):
    b = s.encode()
    return b + b"\0" * (-len(b) % 8)


def rec(typ, body_words, bits):
    size = 1 + len(body_words) // 8
    return word(typ | size << 4 | bits) + body_words


out = [word(0x0016547846040010)]  # magic
out.append(rec(1, word(1000000000), 0))  # initialization: ticks per second
for idx, s in ((1, "main"), (2, "work"), (3, "process")):
    out.append(rec(2, text(s), idx << 16 | len(s) << 32))  # string record
out.append(rec(3, word(100) + word(101), 1 << 16))  # thread record: index 1
# thread kernel object 101 named inline "mt thread", arg process (koid) = 100
name = "mt thread"
arg = word(8 | 2 << 4 | 3 << 16) + word(100)
out.append(rec(7, word(101) + text(name) + arg, 2 << 16 | (0x8000 | len(name)) << 24 | 1 << 40))


def event(etype, ts, name_ref, thread_ref=1, extra=b"", inline_name=None):
    body = word(ts)
    if thread_ref == 0:
        body += word(100) + word(101)
    if inline_name is not None:
        body += text(inline_name)
        name_ref = 0x8000 | len(inline_name)
    body += extra
    return rec(4, body, etype << 16 | thread_ref << 24 | name_ref << 48)


out.append(event(2, 1000, 1))  # begin main
out.append(event(4, 1100, 2, thread_ref=0, extra=word(1400)))  # complete work
out.append(event(2, 1500, 0, inline_name="helper"))  # begin helper
out.append(event(3, 1700, 0))  # end
out.append(event(4, 1800, 2, extra=word(1900)))  # complete work
out.append(event(3, 3000, 1))  # end main
with open(sys.argv[1], "wb") as f:
    f.write(b"".join(out))
