#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Per-thread call trees, for comparing snaptrace's output with the single-step truth.

  stacks.py expect [--scope u|k|uk] < PERF_SCRIPT_OUTPUT
      The expected trees. The input is `perf script --itrace=be -F
      tid,time,flags,ip,sym,symoff,dso,addr` of a synthetic perf.data whose branch
      list was first checked equal to the single-step ground truth (run.sh part a),
      so it is that ground truth with perf's symbol names attached. The trees are
      built here, independently of snaptrace, with the rules of behaviour.md §4:
      push on call, pop on return, a jump or return landing in another symbol
      replaces the top frame (tail calls, §4.5), an empty stack gets an inferred
      outer frame, a decode error closes everything, syscalls and interrupts get
      their own stack in the uk scope or an [untraced]/[syscall] frame otherwise.

  stacks.py dump < SNAPTRACE_DUMP_OUTPUT
      The trees in `snaptrace dump` output, as a timeline viewer builds them: each
      thread's begin/end records sorted by time (stable), ends matched to begins.

Both print one block per thread, the blocks sorted (thread ids differ): a line
"thread" then "B name" / "E" lines with two spaces of indent per depth, then the
complete spans (decode errors, [unknown]) as "X name" lines in order.
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

    # behaviour.md §4.5 primitives
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


def expect(lines, scope):
    threads = {}

    def th(tid):
        if tid not in threads:
            threads[tid] = Thread()
        return threads[tid]

    for line in lines:
        if line.startswith(' instruction trace error'):
            tid = re.search(r' tid (-?\d+)', line).group(1)
            msg = line.split(': ', 1)[1].strip() if ': ' in line else ''
            t = th(tid)
            t.spans.append('[decode error: %s]' % msg)
            t.end_of_thread()
            continue
        if ' => ' not in line:
            continue
        left, right = line.rsplit(' => ', 1)
        lt = left.split()
        tid = lt[0]
        # tid time: flags... ip sym (dso)
        i = 2
        words = []
        while i < len(lt) and not re.fullmatch(r'[0-9a-f]+', lt[i]):
            words.append(lt[i])
            i += 1
        kind = ' '.join(words)
        rt = right.strip().split(None, 1)
        addr = rt[0]
        dst = display_name(rt[1] if len(rt) > 1 else '', addr)
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
            elif k in ('', 'async'):
                t.call('[untraced]')
            elif k == 'syscall':
                t.call('[syscall]')
            elif k == 'return':
                t.call('[returned]')
            elif k in ('iret', 'sysret'):
                t.clear()
                t.call('[untraced]')
            else:
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
    return [serialize(t.roots, t.spans) for t in threads.values()]


def serialize(roots, spans):
    out = ['thread']

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
        key = (f.get('pid'), f.get('tid'))
        name = f.get('name', '""')
        if name.startswith('"'):
            name = bytes(name[1:-1], 'utf-8').decode('unicode_escape')
        ts = int(f.get('ts', '0'))
        threads.setdefault(key, []).append((ts, seq, w[0], name))
    blocks = []
    for evs in threads.values():
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
        blocks.append(serialize(roots, spans))
    return blocks


def main():
    args = sys.argv[1:]
    if not args or args[0] not in ('expect', 'dump'):
        sys.stderr.write(__doc__)
        return 2
    scope = 'u'
    if '--scope' in args:
        scope = args[args.index('--scope') + 1]
    lines = sys.stdin.read().splitlines()
    blocks = expect(lines, scope) if args[0] == 'expect' else dump(lines)
    for b in sorted(blocks):
        print(b)
    return 0


if __name__ == '__main__':
    sys.exit(main())
