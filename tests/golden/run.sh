#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Golden tests: each tests/golden/<area>/<case>.txt is `perf script` text (or our own input);
# <case>.args holds extra `snaptrace decode` flags (optional; @BUILD@ = the build directory),
# <case>.env NAME=VALUE environment settings for it (optional). The actual result is
#   exit=<status>
#   stderr: <each line snaptrace printed>
#   <every line of `snaptrace dump` of the output>
# compared with <case>.expected. A case may also have <case>.tree: the expected
# `snaptrace dump -tree` of the output (slices per thread by start time, indented by
# depth), the readable form of what the case pins. SNAP_UPDATE_GOLDEN=1 rewrites the expectations
# (review the diff like code). Every FXT written is also checked by the independent
# reader ../shared/tools/fxt_read.py --strict when it exists.
#
# Every <case>.txt starts with one line "# purpose: WHAT THE CASE PINS" (like
# libipt's .ptt files: purpose, input and expectation side by side); a case
# without it fails. The runner strips that line before decoding, so the
# expectations (line numbers in "not understood" messages included) are those
# of the input as perf printed it; it also decodes the file as it is and fails
# the case unless the result is the same but for those line numbers: the text
# parser ignores a line starting with '#' (perf script prints such lines only
# as its --header comments).
set -u
cd "$(dirname "$0")/../.."
snap=./snaptrace
fxtread=${SNAP_FXT_READ:-../shared/tools/fxt_read.py}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
strict=1
if [ ! -f "$fxtread" ] || ! command -v python3 >/dev/null; then
	strict=0
	echo "SKIP golden-fxt_read-strict: $fxtread (or python3) not found; structural check by 'snaptrace dump -check' only"
fi
nstrict=0
badstrict=0
. tests/golden/case.sh
for input in tests/golden/*/*.txt; do
	golden_case "$input"
	if ! head -1 "$input" | grep -q '^# purpose: [^ ]'; then
		echo "FAIL golden/$name: $input must start with a line '# purpose: ...' that says what the case pins (see tests/golden/run.sh)"
		continue
	fi
	out=$tmp/out.fxt
	# decode_case INPUT ACTUAL: the result of decoding INPUT, named $input in messages
	decode_case() {
		rm -f "$out"
		env ${envs[@]+"${envs[@]}"} "$snap" decode "${args[@]}" -o "$out" "$1" \
			>"$tmp/stdout" 2>"$tmp/stderr"
		local status=$?
		{
			echo "exit=$status"
			sed -e "s|$1|$input|g" -e "s|$tmp|TMP|g" -e "s/^/stderr: /" "$tmp/stderr"
			if [ -f "$out" ]; then
				"$snap" dump "$out" 2>&1
			fi
		} >"$2"
	}
	# as it is, purpose line included: must match but for "line N" of messages
	decode_case "$input" "$tmp/with_purpose"
	tail -n +2 "$input" >"$tmp/input.txt"
	decode_case "$tmp/input.txt" "$tmp/actual"
	if ! diff <(sed 's/, line [0-9]*: /, line N: /' "$tmp/actual") \
		<(sed 's/, line [0-9]*: /, line N: /' "$tmp/with_purpose") >"$tmp/diff"; then
		echo "FAIL golden/$name: the '# purpose:' line is not ignored by the parser: $(head -3 "$tmp/diff" | tr '\n' ' ')"
		continue
	fi
	if [ -f "$out" ]; then
		if ! "$snap" dump -check "$out" >"$tmp/check" 2>&1; then
			echo "FAIL golden/$name: dump -check: $(head -1 "$tmp/check")"
			continue
		fi
		if [ -f "$base.tree" ]; then
			"$snap" dump -tree "$out" >"$tmp/tree" 2>&1
			if [ "${SNAP_UPDATE_GOLDEN:-0}" = 1 ]; then
				cp "$tmp/tree" "$base.tree"
			elif ! diff -u "$base.tree" "$tmp/tree" >"$tmp/diff"; then
				echo "FAIL golden/$name: dump -tree differs from $base.tree:"
				head -40 "$tmp/diff"
				continue
			fi
		fi
		if [ $strict = 1 ]; then
			nstrict=$((nstrict + 1))
			if ! python3 "$fxtread" "$out" --strict >"$tmp/strict" 2>&1; then
				badstrict=$((badstrict + 1))
				echo "FAIL golden-strict/$name: $(grep -v '^$' "$tmp/strict" | head -2 | tr '\n' ' ')"
			fi
		fi
	fi
	if [ "${SNAP_UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$tmp/actual" "$base.expected"
		echo "PASS golden/$name (updated)"
	elif [ ! -f "$base.expected" ]; then
		echo "FAIL golden/$name: no $base.expected (run make golden-update and review it)"
	elif diff -u "$base.expected" "$tmp/actual" >"$tmp/diff"; then
		echo "PASS golden/$name"
	else
		echo "FAIL golden/$name: output differs:"
		head -40 "$tmp/diff"
	fi
done

# Generated case: 100,000 distinct symbols (more than FXT's 32767 string indexes), each
# called once from main. Every one must come out as its own slice with its own name
# (docs/behaviour.md §6.5).
awk 'BEGIN {
	fmt = " 4242/4242 %16s:          1           branches:u:   %-18s %16x %s (/usr/bin/many) => %16x %s (/usr/bin/many)\n"
	printf fmt, "1.000000000", "tr strt", 0, "[unknown]", 4198400, "main+0x0"
	for (i = 0; i < 100000; i++) {
		ts = sprintf("1.%09d", 10 * i + 1)
		printf fmt, ts, "call", 4198416, "main+0x10", 8388608 + i * 64, "sym_" i "+0x0"
		printf fmt, ts, "return", 8388608 + i * 64 + 9, "sym_" i "+0x9", 4198421, "main+0x15"
	}
}' >"$tmp/many.txt"
if "$snap" decode -q -o "$tmp/many.fxt" "$tmp/many.txt" 2>"$tmp/err" &&
	"$snap" dump "$tmp/many.fxt" >"$tmp/many.dump" 2>&1; then
	begins=$(grep -c '^begin ' "$tmp/many.dump")
	names=$(grep '^begin ' "$tmp/many.dump" | grep -o 'name="sym_[0-9]*"' | sort -u | wc -l)
	last=$(grep -c 'name="sym_99999"' "$tmp/many.dump")
	if [ "$begins" = 100001 ] && [ "$names" = 100000 ] && [ "$last" = 2 ] &&
		"$snap" dump -check "$tmp/many.fxt" >/dev/null 2>&1; then
		echo "PASS golden/generated/100k_distinct_symbols"
	else
		echo "FAIL golden/generated/100k_distinct_symbols: $begins begins, $names distinct names, sym_99999 seen $last times"
	fi
	if [ $strict = 1 ]; then
		nstrict=$((nstrict + 1))
		python3 "$fxtread" "$tmp/many.fxt" --strict >"$tmp/strict" 2>&1 ||
			{ badstrict=$((badstrict + 1)); echo "FAIL golden-strict/generated/100k_distinct_symbols: $(grep -i error "$tmp/strict" | head -2)"; }
	fi
else
	echo "FAIL golden/generated/100k_distinct_symbols: $(tail -1 "$tmp/err")"
fi
# Generated case: a PT trace of 1000 complete calls of f, the first call at the trace's
# first event and the last return its last event. Only main (inferred, closed by
# snaptrace: inferred_end_time) is cut; every call of f counts (docs/report.md).
awk 'BEGIN {
	fmt = " 4242/4242 %16s:          1           branches:u:   %-18s %16x %s (/usr/bin/f) => %16x %s (/usr/bin/f)\n"
	for (i = 0; i < 1000; i++) {
		printf fmt, sprintf("1.%09d", 100 * i), "call", 4198416, "main+0x10", 8388608, "f+0x0"
		printf fmt, sprintf("1.%09d", 100 * i + 50), "return", 8388617, "f+0x9", 4198421, "main+0x15"
	}
}' >"$tmp/f1000.txt"
if "$snap" decode -q -o "$tmp/f1000.fxt" "$tmp/f1000.txt" 2>"$tmp/err" &&
	"$snap" report -json "$tmp/f1000.fxt" >"$tmp/f1000.json" 2>&1 &&
	grep -q '"name": "f", "calls": 1000, "total_ns": 50000,' "$tmp/f1000.json" &&
	grep -q '"slices": 1000,.*"open_slices": 1,' "$tmp/f1000.json"; then
	echo "PASS golden/generated/pt_1000_calls_none_cut"
else
	echo "FAIL golden/generated/pt_1000_calls_none_cut: $(tr '\n' ' ' <"$tmp/f1000.json" | head -c 300) $(tail -1 "$tmp/err")"
fi
# Threads born and exiting inside the recording are not cut: both calls of handle count.
if "$snap" report -json tests/golden/samples/thread_born_and_exits.txt >"$tmp/born.json" 2>&1 &&
	grep -q '"name": "handle", "calls": 2, "total_ns": 1174999,' "$tmp/born.json"; then
	echo "PASS golden/generated/report_threads_born_and_exiting"
else
	echo "FAIL golden/generated/report_threads_born_and_exiting: $(tr '\n' ' ' <"$tmp/born.json" | head -c 300)"
fi
# Bad invocations: one line on stderr, exit 1, nothing written, an old output untouched
# (docs/behaviour.md §1.1, §6.1).
one_line_error() { # name expected-stderr-pattern decode-args...
	local name=$1 pat=$2
	shift 2
	"$snap" decode "$@" >"$tmp/stdout" 2>"$tmp/stderr"
	local rc=$? lines
	lines=$(wc -l <"$tmp/stderr")
	if [ $rc = 1 ] && [ "$lines" = 1 ] && grep -q "$pat" "$tmp/stderr"; then
		echo "PASS golden/errors/$name"
	else
		echo "FAIL golden/errors/$name: exit $rc, $lines stderr lines: $(head -3 "$tmp/stderr" | tr '\n' ' ')"
	fi
}
one_line_error missing_input "cannot read $tmp/nope.txt: No such file or directory" \
	-o "$tmp/x.fxt" "$tmp/nope.txt"
one_line_error unwritable_output "cannot write $tmp/no/such/dir/x.fxt" \
	-o "$tmp/no/such/dir/x.fxt" tests/golden/pt/call_return.txt
printf 'PERFILE2\x68\0\0\0\0\0\0\0' >"$tmp/short.data"
one_line_error truncated_perf_data "damaged perf.data header" -o "$tmp/x.fxt" "$tmp/short.data"
echo "precious" >"$tmp/keep.fxt"
"$snap" decode -q -o "$tmp/keep.fxt" tests/golden/pt/empty_input.txt 2>/dev/null
if [ "$(cat "$tmp/keep.fxt")" = precious ] && [ -z "$(ls -A "$tmp" | grep '^\.keep')" ]; then
	echo "PASS golden/errors/failed_run_keeps_old_output"
else
	echo "FAIL golden/errors/failed_run_keeps_old_output: $(ls -A "$tmp" | tr '\n' ' ')"
fi
printf 'not fxt at all' >"$tmp/bad.fxt"
if "$snap" dump "$tmp/bad.fxt" >/dev/null 2>"$tmp/stderr"; then
	echo "FAIL golden/errors/dump_not_fxt: exit 0"
elif [ "$(wc -l <"$tmp/stderr")" = 1 ]; then
	echo "PASS golden/errors/dump_not_fxt"
else
	echo "FAIL golden/errors/dump_not_fxt: $(head -3 "$tmp/stderr" | tr '\n' ' ')"
fi

[ $strict = 1 ] && [ $badstrict = 0 ] && [ $nstrict -gt 0 ] &&
	echo "PASS golden-fxt_read-strict ($nstrict files pass fxt_read.py --strict)"
exit 0
