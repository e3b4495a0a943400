#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Every public prototype in a header under src/ has its contract, a comment, directly
above it: the comment's last line is the line before the prototype (#define lines of
its constants may stand between), or on the prototype's own line, or the prototype follows, with no blank line between, other prototypes under one comment that names it
(snap_x_init / snap_x_fini under a comment that says what init and fini do). So a
contract cannot drift away from its function: a blank line, a declaration or another
function's prototype between them is reported.
And a contract (a comment that says what a function returns) must not stand above another
comment: it was left behind when its function moved (checked in .c files too).
  contracts.py FILE...     prints "FILE:LINE: why" for each problem (prototypes in the
                           .h files, stacked comments in all), and exits 1 if there is any."""
import re
import sys

IDENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\($")


def statements(lines):
    """Top-level declarations: (first line index, last line index, text), comments and
    preprocessor lines left out; a comment line is marked in the returned set."""
    out, commentish = [], set()
    depth, in_comment, start, buf = 0, False, None, ""
    cont = False  # a preprocessor line continued with '\'
    for i, raw in enumerate(lines):
        line = raw
        if cont or (not in_comment and line.lstrip().startswith("#")):
            cont = line.rstrip().endswith("\\")
            continue
        code, j, had_comment = "", 0, in_comment
        while j < len(line):
            if in_comment:
                k = line.find("*/", j)
                if k < 0:
                    j = len(line)
                else:
                    in_comment, j = False, k + 2
                had_comment = True
            elif line.startswith("/*", j):
                in_comment, j, had_comment = True, j + 2, True
            elif line.startswith("//", j):
                had_comment, j = True, len(line)
            else:
                code += line[j]
                j += 1
        if had_comment and not code.strip():
            commentish.add(i)
        for c in code:
            if depth == 0 and start is None and not c.isspace():
                start = i
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            if depth == 0 and start is not None:
                buf += c
                if c == ";" or (c == "}" and buf.strip()[:-1].rstrip().endswith(")")):
                    out.append((start, i, buf))
                    start, buf = None, ""
            elif start is not None:
                buf += c if depth == 0 else ""
        if start is not None:
            buf += " "
    return out, commentish


def prototype_name(text):
    t = " ".join(text.split())
    if t.startswith(("typedef", "struct", "enum", "union")) and "(" not in t.split("{")[0]:
        return None
    if t.startswith("typedef"):
        return None
    head = t.split("(", 1)[0] + "("
    m = IDENT.search(head.rstrip())
    if not m or t.startswith(("struct ", "enum ", "union ")) and "{" in t:
        return None
    return m.group(1)


def names_it(comment, name):
    """The comment names the function: whole, or by a tail of it after an '_'
    (snap_cstack_push_now as "push_now", snap_x_fini as "fini": a tail of 4 characters or more)."""
    parts = name.split("_")
    for tail in ["_".join(parts[i:]) for i in range(len(parts))]:
        if len(tail) >= 4 and re.search(r"(^|[^A-Za-z0-9])%s\b" % re.escape(tail), comment):
            return True
    return False


def comment_above(lines, comments, i):
    """The text of the comment whose last line is line i."""
    j = i
    while j - 1 in comments:
        j -= 1
    return " ".join(lines[j:i + 1])


def check(path):
    lines = open(path).read().split("\n")
    stmts, comments = statements(lines)
    bad, group = [], {}  # last line of a covered prototype -> its group's comment text
    for first, last, text in stmts:
        name = prototype_name(text)
        if name is None:
            continue
        if "/*" in lines[last] or "//" in lines[last]:
            group[last] = lines[last]  # a comment after the prototype, on its line
            continue
        prev = first - 1
        while prev >= 0 and lines[prev].startswith("#define"):
            prev -= 1  # the constants of a contract may stand between it and its function
        if prev in comments:
            group[last] = comment_above(lines, comments, prev)
            continue
        if prev in group:
            # a group under one comment: the comment names each later member
            if names_it(group[prev], name):
                group[last] = group[prev]
                continue
            bad.append("%s:%d: %s follows another prototype whose comment does not name it"
                       % (path, first + 1, name))
            continue
        bad.append("%s:%d: %s has no comment directly above it" % (path, first + 1, name))
    return bad


def stacked(path):
    """A contract (a whole-line comment that says what is returned) with another
    whole-line comment right under it has lost its function (in .c files too)."""
    lines = open(path).read().split("\n")
    bad, start, in_comment = [], None, False
    blocks = []  # (first line, last line) of comments on lines of their own
    for i, line in enumerate(lines):
        t = line.strip()
        if not in_comment and t.startswith("/*"):
            start, in_comment = i, True
        if in_comment and "*/" in t:
            in_comment = False
            if t.endswith("*/"):
                blocks.append((start, i))
    for (a0, a1), (b0, _) in zip(blocks, blocks[1:]):
        text = " ".join(lines[a0:a1 + 1])
        if b0 == a1 + 1 and re.search(r"\bReturns?\b", text) and lines[a0].startswith("/*"):
            bad.append("%s:%d: this contract stands above another comment, not above its "
                       "function" % (path, a0 + 1))
    return bad


def main():
    bad = []
    for p in sys.argv[1:]:
        if p.endswith(".h"):
            bad += check(p)
        bad += stacked(p)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
