#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# FXT suite: traces written by the real writer (tests/fxt/fxtgen) must pass
# `snaptrace dump -check`, the independent ../shared/tools/fxt_read.py --strict,
# and dump must agree with fxt_read.py's duration events. Also checks dump's
# errors on bad input. Prints PASS/FAIL/SKIP lines.
set -u
cd "$(dirname "$0")/../.."
: "${SNAP_BUILD:=build/default}"
: "${SNAP_ROOT:=$PWD}"
gen=$SNAP_BUILD/tests/fxt/fxtgen
snap=./snaptrace
reader=${SNAP_FXT_READ:-$SNAP_ROOT/../shared/tools/fxt_read.py}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

pass() { echo "PASS $1"; }
failed() { echo "FAIL $1: $2"; fail=1; }

if [ ! -x "$gen" ] || [ ! -x "$snap" ]; then
	echo "FAIL fxt-setup: $gen or $snap missing (run make test-bins)"
	exit 1
fi
have_reader=1
if [ ! -f "$reader" ] || ! command -v python3 >/dev/null; then
	have_reader=0
	echo "SKIP fxt_read-strict: ../shared/tools/fxt_read.py not found"
fi

# case NAME SCENARIO FILE [ARG]
case_one() {
	local name=$1 sc=$2 file=$tmp/$3 arg=${4:-} rc
	if ! "$gen" "$sc" "$file" $arg 2>"$tmp/err"; then
		failed "$name-write" "fxtgen: $(head -1 "$tmp/err")"
		return
	fi
	if out=$("$snap" dump -check "$file" 2>&1); then
		pass "$name-dump-check"
	else
		failed "$name-dump-check" "$out"
	fi
	[ $have_reader -eq 1 ] || return
	python3 "$reader" "$file" --strict --json-summary --jsonl "$tmp/$name.jsonl" >"$tmp/$name.sum" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		pass "$name-fxt_read-strict"
	else
		failed "$name-fxt_read-strict" "exit $rc: $(grep -m3 '"code"' "$tmp/$name.sum" | tr -d ' \n')"
		return
	fi
	# not even a warning (unmatched end, name mismatch, overlap, ...)
	if grep -q '"warnings": 0' "$tmp/$name.sum"; then
		pass "$name-fxt_read-no-warnings"
	else
		failed "$name-fxt_read-no-warnings" "$(grep -m3 '"code"' "$tmp/$name.sum" | tr -d ' \n')"
	fi
	"$snap" dump "$file" >"$tmp/$name.txt" 2>"$tmp/err" || { failed "$name-agree" "dump failed: $(head -1 "$tmp/err")"; return; }
	if out=$(python3 tests/fxt/compare.py "$tmp/$name.txt" "$tmp/$name.jsonl" 2>&1); then
		pass "$name-agree"
	else
		failed "$name-agree" "$(echo "$out" | head -3 | tr '\n' ' ')"
	fi
}

case_one basic basic basic.fxt
case_one basic-gz basic basic.fxt.gz
case_one symbols-100k symbols symbols.fxt.gz 100000
case_one threads-1000 threads threads.fxt 1000
case_one random-1 random random1.fxt 1
case_one random-2 random random2.fxt.gz 2
case_one long-strings long long.fxt
# real decoder output: perf script inputs of the golden tests -> parser -> decoder -> writer
for f in tests/golden/perfscript/*.txt; do
	[ -f "$f" ] || continue
	b=$(basename "$f" .txt)
	case_one "decode-$b" perfscript "decode-$b.fxt.gz" "$f"
done

# The 100,000-symbol file really re-used indexes and kept every name.
if [ -f "$tmp/symbols-100k.txt" ]; then
	n=$(grep -c '^begin .*name="function_number_' "$tmp/symbols-100k.txt")
	last=$(grep -c 'name="function_number_99999" args={symbol="function_number_99999"}' "$tmp/symbols-100k.txt")
	if [ "$n" = 100000 ] && [ "$last" = 1 ]; then
		pass "symbols-100k-names"
	else
		failed "symbols-100k-names" "$n distinct begins, last name found $last times"
	fi
fi
if "$snap" dump -all "$tmp/symbols.fxt.gz" >"$tmp/all.txt" 2>/dev/null; then
	defs=$(grep -c '^string index=' "$tmp/all.txt")
	maxidx=$(sed -n 's/^string index=\([0-9]*\) .*/\1/p' "$tmp/all.txt" | sort -n | tail -1)
	if [ "$defs" -gt 100000 ] && [ "$maxidx" -le 32767 ]; then
		pass "symbols-100k-index-reuse"
	else
		failed "symbols-100k-index-reuse" "$defs string records, highest index $maxidx"
	fi
fi

# dump -check and fxt_read.py (errors or warnings) judge random small traces alike.
if [ $have_reader -eq 1 ]; then
	if out=$(python3 tests/fxt/verdicts.py "$snap" "$reader" 600 "$tmp" 2>&1); then
		pass "check-verdicts-agree"
	else
		failed "check-verdicts-agree" "$(echo "$out" | tail -1)"
	fi
fi

# The comparison itself can fail: a changed name is noticed.
if [ $have_reader -eq 1 ] && [ -f "$tmp/basic.txt" ]; then
	sed 's/name="init"/name="tini"/' "$tmp/basic.txt" >"$tmp/basic-bad.txt"
	if python3 tests/fxt/compare.py "$tmp/basic-bad.txt" "$tmp/basic.jsonl" >/dev/null 2>&1; then
		failed "compare-detects-difference" "a changed name went unnoticed"
	else
		pass "compare-detects-difference"
	fi
fi

# The default dump of the basic trace, exactly.
if "$snap" dump "$tmp/basic.fxt.gz" >"$tmp/basic-gz.txt" 2>&1 &&
	[ "$(sed -n 4p "$tmp/basic-gz.txt")" = 'begin ts=1000 pid=42 tid=42 name="main" args={address=0x401000, symbol="main", depth=1}' ] &&
	[ "$(sed -n 2p "$tmp/basic-gz.txt")" = 'thread koid=42 process=42 name="prog"' ] &&
	[ "$(wc -l <"$tmp/basic-gz.txt")" = 12 ]; then
	pass "dump-format"
else
	failed "dump-format" "unexpected dump of basic.fxt.gz: $(head -4 "$tmp/basic-gz.txt" | tr '\n' '|')"
fi

# Bad input: one line on stderr, non-zero exit, never a crash (exit < 128).
bad_input() {
	local name=$1 file=$2 want=$3 rc
	"$snap" dump "$file" >/dev/null 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 0 ] || [ $rc -ge 128 ]; then
		failed "$name" "exit status $rc"
	elif [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -q "$want" "$tmp/err"; then
		failed "$name" "stderr: $(head -2 "$tmp/err" | tr '\n' '|')"
	else
		pass "$name"
	fi
}
bad_input dump-missing-file "$tmp/nope.fxt" "cannot open"
bad_input dump-directory "$tmp" "directory"
printf 'hello world, not a trace\n' >"$tmp/text.fxt"
bad_input dump-not-fxt "$tmp/text.fxt" "not an FXT trace"
: >"$tmp/empty.fxt"
bad_input dump-empty "$tmp/empty.fxt" "empty file"
if [ -f "$tmp/basic.fxt" ]; then
	head -c 300 "$tmp/basic.fxt" >"$tmp/trunc.fxt"
	bad_input dump-trailing-bytes "$tmp/trunc.fxt" "trailing bytes"
	head -c 304 "$tmp/basic.fxt" >"$tmp/trunc.fxt"
	bad_input dump-truncated "$tmp/trunc.fxt" "runs past the end"
fi
if [ -f "$tmp/symbols.fxt.gz" ]; then
	head -c 5000 "$tmp/symbols.fxt.gz" >"$tmp/trunc.fxt.gz"
	bad_input dump-truncated-gz "$tmp/trunc.fxt.gz" "truncated"
	printf '\037\213garbage-garbage-garbage' >"$tmp/bad.gz"
	bad_input dump-corrupt-gz "$tmp/bad.gz" "bad gzip"
fi
if [ -f "$tmp/basic.fxt" ]; then
	# flip the last end into a begin: check must say what is unbalanced
	python3 - "$tmp/basic.fxt" "$tmp/unbal.fxt" <<'PY' 2>/dev/null
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
off, last = 0, None
while off < len(d):
    (h,) = struct.unpack_from("<Q", d, off)
    if h & 0xF == 4 and (h >> 16) & 0xF == 3:
        last = (off, h)
    off += ((h >> 4) & 0xFFF) * 8
off, h = last
struct.pack_into("<Q", d, off, (h & ~(0xF << 16)) | (2 << 16))
open(sys.argv[2], "wb").write(d)
PY
	if [ -f "$tmp/unbal.fxt" ]; then
		"$snap" dump -check "$tmp/unbal.fxt" >/dev/null 2>"$tmp/err"
		rc=$?
		if [ $rc -eq 1 ] && grep -q 'never ended' "$tmp/err"; then
			pass "dump-check-unbalanced"
		else
			failed "dump-check-unbalanced" "exit $rc: $(head -1 "$tmp/err")"
		fi
	fi
fi
# Bytes per slice (docs/behaviour.md §6.3 "Slices"): a call of a function the thread has
# described already is a begin and an end of 16 bytes each (header, time); with
# -per-call-args its begin also carries address (16 bytes) and symbol (8). Measured as the
# difference between 1 and 1001 iterations of main > foo > bar, so fixed records drop out.
gen_calls() { # N: main calls foo, foo calls bar, both return, N times
	awk -v n="$1" 'BEGIN {
		f = " 4242/4242      1.%09d:          1           branches:u:   %-28s %s =>           %s\n"
		t = 100
		printf f, t, "tr strt", "0 [unknown] ([unknown])", "401000 main+0x0 (/usr/bin/demo)"
		for (i = 0; i < n; i++) {
			t += 100; printf f, t, "call", "401010 main+0x10 (/usr/bin/demo)", "401100 foo+0x0 (/usr/bin/demo)"
			t += 100; printf f, t, "call", "401110 foo+0x10 (/usr/bin/demo)", "401200 bar+0x0 (/usr/bin/demo)"
			t += 100; printf f, t, "return", "401220 bar+0x20 (/usr/bin/demo)", "401115 foo+0x15 (/usr/bin/demo)"
			t += 100; printf f, t, "return", "401120 foo+0x20 (/usr/bin/demo)", "401015 main+0x15 (/usr/bin/demo)"
		}
		t += 100; printf f, t, "tr end  syscall", "401030 main+0x30 (/usr/bin/demo)", "0 [unknown] ([unknown])"
	}'
}
gen_calls 1 >"$tmp/calls1.txt"
gen_calls 1001 >"$tmp/calls1001.txt"
# slice_bytes NAME BYTES [FLAG]
slice_bytes() {
	local name=$1 want=$2 flag=${3:-} s1 s2 got
	if "$snap" decode -q $flag -o "$tmp/calls1.fxt" "$tmp/calls1.txt" &&
		"$snap" decode -q $flag -o "$tmp/calls1001.fxt" "$tmp/calls1001.txt" &&
		"$snap" dump -check "$tmp/calls1001.fxt" >/dev/null; then
		s1=$(stat -c %s "$tmp/calls1.fxt")
		s2=$(stat -c %s "$tmp/calls1001.fxt")
		got=$(((s2 - s1) / 2000))
		if [ $(((s2 - s1) % 2000)) = 0 ] && [ "$got" = "$want" ]; then
			pass "$name"
		else
			failed "$name" "$((s2 - s1)) bytes for 2000 more slices, want $want per slice"
		fi
	else
		failed "$name" "decode or dump -check failed"
	fi
}
slice_bytes slice-bytes-default 32
slice_bytes slice-bytes-per-call-args 56 -per-call-args

if "$snap" dump -help | grep -q 'usage: snaptrace dump' && ! "$snap" dump 2>/dev/null &&
	! "$snap" dump -bogus "$tmp/basic.fxt" 2>/dev/null; then
	pass "dump-usage"
else
	failed "dump-usage" "help or usage errors misbehave"
fi
exit $fail
