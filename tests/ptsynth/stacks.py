#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Per-thread call trees, for comparing snaptrace's output with the single-step truth.

  stacks.py expect [--scope u|k|uk] TRUTH[,TRUTH...] PERF_SCRIPT_OUTPUT[,...]
      The expected trees. TRUTH is the branch list mkptdata -e derived from the
      single-step trace ("TID NAME IP ADDR" / "TID error", each thread in order).
      Only the names come from perf: PERF_SCRIPT_OUTPUT (`perf script --itrace=be
      -F tid,time,flags,ip,sym,symoff,dso,addr` of the same file) gives the symbol
      at each branch target and the decode error messages. Several files are
      successive snapshots: every thread's stack ends between two. The trees are built
      here, independently of snaptrace, with the rules of docs/behaviour.md §4:
      push on call, pop on return, a jump or return landing in another symbol
      replaces the top frame (tail calls, §4.5.4), an empty stack gets an inferred
      outer frame, a decode error closes everything, syscalls and interrupts get
      their own stack in the uk scope or an [untraced]/[syscall] frame otherwise.

  stacks.py selftest
      Its own tests: small branch lists and dumps with known trees.

  stacks.py dump < SNAPTRACE_DUMP_OUTPUT
      The trees in `snaptrace dump` output, as a timeline viewer builds them: each
      thread's begin/end records sorted by time (stable), ends matched to begins.

Both print one block per thread, sorted by thread id: a line "thread TID" then
"B name" / "E" lines with two spaces of indent per depth, then the complete spans
(decode errors, [unknown]) as "X name" lines in order.
"""
import re
import sys

SYM_RE = re.compile(r'^(.*)\+(0x[0-9a-f]+)\s+\(.*\)$')
UNK_RE = re.compile(r'^\[unknown\]\s+\((.*)\)$')


class Node:
    __slots__ = ('name', 'children')

    def __init__(self, name):
        self.name = name
        self.children = []


class Stack:
    """A call stack whose frames are open Nodes; closed frames stay in the tree."""

    def __init__(self, base):
        self.base = base          # list the outermost frames go into
        self.start = len(base)    # first node of this stack's segment in base
        self.frames = []

    def container(self):
        return self.frames[-1].children if self.frames else self.base


class Thread:
    def __init__(self):
        self.roots = []
        self.cur = Stack(self.roots)
        self.inactive = []
        self.spans = []

    # docs/behaviour.md §4.5 operations
    def call(self, name):
        n = Node(name)
        self.cur.container().append(n)
        self.cur.frames.append(n)

    def ret(self):
        if self.cur.frames:
            self.cur.frames.pop()
        else:
            self.spans.append('[unknown]')

    def check_symbol(self, name):
        if self.cur.frames:
            if self.cur.frames[-1].name != name:
                self.ret()
                self.call(name)
        else:
            # inferred outer frame: it encloses everything since the stack began
            n = Node(name)
            b = self.cur.base
            n.children = b[self.cur.start:]
            del b[self.cur.start:]
            b.append(n)
            self.cur.frames.insert(0, n)

    def clear(self):
        self.cur.frames = []

    def new_stack(self):
        self.cur = Stack(self.cur.container())

    def end_of_thread(self):
        self.cur.frames = []
        for s in self.inactive:
            s.frames = []
        self.inactive = []
        self.cur = Stack(self.roots)

    def push_stack(self):
        self.inactive.append(self.cur)
        self.cur = Stack(self.cur.container())

    def pop_stack(self):
        self.cur = self.inactive.pop()


def display_name(text, addr):
    text = text.strip()
    m = SYM_RE.match(text)
    if m:
        return m.group(1)
    m = UNK_RE.match(text)
    if m:
        a = int(addr, 16)
        if a >= 1 << 63:
            a -= 1 << 64
        return '[unknown @ %s (%s)]' % (('-0x%x' % -a) if a < 0 else ('0x%x' % a), m.group(1))
    return '[unknown]'


def perf_names(lines):
    """Symbol display names by address, and error messages per thread, from perf's output."""
    names, errors = {}, {}
    for line in lines:
        if line.startswith(' instruction trace error'):
            tid = re.search(r' tid (-?\d+)', line).group(1)
            msg = line.split(': ', 1)[1].strip() if ': ' in line else ''
            errors.setdefault(tid, []).append(msg)
        elif ' => ' in line:
            rt = line.rsplit(' => ', 1)[1].strip().split(None, 1)
            names[int(rt[0], 16)] = display_name(rt[1] if len(rt) > 1 else '', rt[0])
    return names, errors


def expect(truth, perf, scope):
    """truth: "TID NAME IP ADDR" / "TID error" lines (mkptdata -e, each thread in order)."""
    names, errors = perf_names(perf)
    threads = {}

    def th(tid):
        if tid not in threads:
            threads[tid] = Thread()
        return threads[tid]

    for line in truth:
        w = line.split()
        if w == ['snapshot']:  # docs/behaviour.md §4.11: every stack ends between snapshots
            for t in threads.values():
                t.end_of_thread()
            continue
        if len(w) == 2 and w[1] == 'error':
            t = th(w[0])
            msgs = errors.get(w[0], [])
            t.spans.append('[decode error: %s]' % (msgs.pop(0) if msgs else '?'))
            t.end_of_thread()
            continue
        if len(w) < 4:
            continue
        tid, kind, addr = w[0], ' '.join(w[1:-2]), int(w[-1], 16)
        dst = names.get(addr, '[no name for 0x%x]' % addr)
        t = th(tid)
        start = kind.startswith('tr strt')
        end = kind.startswith('tr end')
        k = kind[len('tr strt'):].strip() if start else kind[len('tr end'):].strip() if end else kind
        if start:
            if scope == 'k':
                t.clear()
                t.new_stack()
            elif not t.cur.frames:
                t.call(dst)
            else:
                t.ret()
        elif end:
            if k == 'call':
                t.call(dst)
            elif k == 'syscall':
                t.call('[syscall]')
            elif k == 'return':
                t.call('[returned]')
            elif k in ('iret', 'sysret'):
                t.clear()
                t.call('[untraced]')
            else:  # '', 'async'
                t.call('[untraced]')
        elif k == 'call':
            t.call(dst)
        elif k == 'return':
            t.ret()
            t.check_symbol(dst)
        elif k in ('syscall', 'hw int'):
            t.push_stack()
            t.call(dst)
        elif k in ('iret', 'sysret'):
            t.clear()
            if t.inactive:
                t.pop_stack()
            else:
                t.new_stack()
                t.check_symbol(dst)
        elif k in ('jmp', 'jcc', 'int', 'tx abrt'):
            t.check_symbol(dst)
    return [serialize(tid, t.roots, t.spans) for tid, t in threads.items()]


def serialize(tid, roots, spans):
    out = ['thread %s' % tid]

    def walk(n, d):
        out.append('  ' * d + 'B ' + n.name)
        for c in n.children:
            walk(c, d + 1)
        out.append('  ' * d + 'E')

    for r in roots:
        walk(r, 0)
    out += ['X ' + s for s in spans]
    return '\n'.join(out)


FIELD_RE = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def dump(lines):
    """Reads `snaptrace dump` lines: begin/end/complete with ts=, pid=, tid=, name=."""
    threads = {}
    for seq, line in enumerate(lines):
        w = line.split(None, 1)
        if not w or w[0] not in ('begin', 'end', 'complete', 'span'):
            continue
        f = {k: v for k, v in FIELD_RE.findall(line)}
        key = f.get('tid')
        name = f.get('name', '""')
        if name.startswith('"'):
            name = bytes(name[1:-1], 'utf-8').decode('unicode_escape')
        ts = int(f.get('ts', '0'))
        threads.setdefault(key, []).append((ts, seq, w[0], name))
    blocks = []
    for tid, evs in threads.items():
        evs.sort(key=lambda e: (e[0], e[1]))
        roots, stack, spans = [], [], []
        for ts, seq, kind, name in evs:
            if kind == 'begin':
                n = Node(name)
                (stack[-1].children if stack else roots).append(n)
                stack.append(n)
            elif kind == 'end':
                if stack:
                    stack.pop()
                else:
                    spans.append('end without begin')
            else:
                spans.append(name)
        if stack:
            spans.append('%d unclosed' % len(stack))
        blocks.append(serialize(tid, roots, spans))
    return blocks


# (name, scope, truth lines, perf name lines "ADDR NAME", expected output)
SELFTESTS = [
    ('call-return', 'u',
     ['1 tr strt 0 10', '1 call 11 20', '1 call 21 30', '1 return 31 22', '1 return 23 12',
      '1 tr end syscall 13 0'],
     ['10 main', '20 f', '30 g', '22 f', '12 main'],
     'thread 1\nB main\n  B f\n    B g\n    E\n  E\n  B [syscall]\n  E\nE'),
    ('tail-call', 'u',
     ['1 tr strt 0 10', '1 call 11 20', '1 jmp 21 30', '1 jcc 31 32', '1 return 33 12'],
     ['10 main', '20 f', '30 g', '32 g', '12 main'],
     'thread 1\nB main\n  B f\n  E\n  B g\n  E\nE'),
    ('inferred-outer', 'u',
     ['1 tr strt 0 20', '1 call 21 30', '1 return 31 22', '1 return 23 12'],
     ['20 f', '30 g', '22 f', '12 main'],
     'thread 1\nB main\n  B f\n    B g\n    E\n  E\nE'),
    ('decode-error', 'u',
     ['1 tr strt 0 10', '1 call 11 20', '1 error', '1 tr strt 0 25', '1 return 26 12'],
     ['10 main', '20 f', '25 f', '12 main'],
     'thread 1\nB main\n  B f\n  E\nE\nB main\n  B f\n  E\nE\nX [decode error: boom]'),
    ('kernel-uk', 'uk',
     ['1 tr strt 0 10', '1 call 11 20', '1 syscall 21 ffff0', '1 call ffff1 ffff8',
      '1 return ffff9 ffff2', '1 sysret ffff3 22', '1 return 23 12'],
     ['10 main', '20 f', 'ffff0 entry', 'ffff8 kf', 'ffff2 entry', '22 f', '12 main'],
     'thread 1\nB main\n  B f\n    B entry\n      B kf\n      E\n    E\n  E\nE'),
    ('kernel-k', 'k',
     ['1 tr strt 0 ffff0', '1 call ffff1 ffff8', '1 return ffff9 ffff2',
      '1 tr end sysret ffff3 0', '1 tr strt 0 ffff0'],
     ['ffff0 entry', 'ffff8 kf', 'ffff2 entry'],
     'thread 1\nB entry\n  B kf\n  E\nE\nB [untraced]\nE'),
]

DUMP_SELFTEST = (
    # equal times keep file order (an inferred frame written after its child at the
    # same time nests inside it, as a viewer shows it); complete spans are listed apart;
    # counters are ignored
    ['begin ts=5 pid=1 tid=1 name="f" args={}', 'end ts=9 pid=1 tid=1 name="f"',
     'complete ts=9 end=9 pid=1 tid=1 name="[decode error: x]"',
     'begin ts=5 pid=1 tid=1 name="main" args={inferred_start_time="true"}',
     'end ts=9 pid=1 tid=1 name="main"', 'counter ts=0 pid=1 tid=1 name="CPU"'],
    'thread 1\nB f\n  B main\n  E\nE\nX [decode error: x]')


def selftest():
    bad = 0
    for name, scope, truth, names, want in SELFTESTS:
        perf = [' 1 0.1: call 0 x (d) => %s %s+0x0 (d)' % tuple(l.split()) for l in names]
        perf += [' instruction trace error type 1 cpu -1 pid 1 tid 1 ip 0 code 5: boom']
        got = '\n'.join(expect(truth, perf, scope))
        ok = got == want
        bad += not ok
        print('%s stacks.py:%s' % ('PASS' if ok else 'FAIL', name))
        if not ok:
            print('want:\n%s\ngot:\n%s' % (want, got))
    got = '\n'.join(dump(DUMP_SELFTEST[0]))
    ok = got == DUMP_SELFTEST[1]
    bad += not ok
    print('%s stacks.py:dump' % ('PASS' if ok else 'FAIL'))
    if not ok:
        print('want:\n%s\ngot:\n%s' % (DUMP_SELFTEST[1], got))
    return 1 if bad else 0


def main():
    args = sys.argv[1:]
    if args and args[0] == 'selftest':
        return selftest()
    if not args or args[0] not in ('expect', 'dump'):
        sys.stderr.write(__doc__)
        return 2
    scope = 'u'
    if '--scope' in args:
        scope = args[args.index('--scope') + 1]
    if args[0] == 'expect':
        files = [a for a in args[1:] if not a.startswith('--') and a != scope]
        if len(files) != 2:
            sys.stderr.write(__doc__)
            return 2
        truth, perf = [], []
        for i, name in enumerate(files[0].split(',')):
            if i:
                truth.append('snapshot')  # the next file: every thread starts again
            with open(name) as f:
                truth += f.read().splitlines()
        for name in files[1].split(','):
            with open(name) as f:
                perf += f.read().splitlines()
        blocks = expect(truth, perf, scope)
    else:
        blocks = dump(sys.stdin.read().splitlines())
    for b in sorted(blocks, key=lambda b: int(b.split(None, 2)[1])):
        print(b)
    return 0


if __name__ == '__main__':
    sys.exit(main())
