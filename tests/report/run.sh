#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# snaptrace report: golden figures from hand-written perf script inputs with known call
# durations (tests/report/cases, expected output in NAME.expected). Every -json case is
# also run on the FXT trace that `snaptrace decode` writes from the same input (plain and
# gzip): the figures must be identical, whichever way the report reads the trace.
#
# The inputs (times in ns from the first event):
#  recursion.txt, thread 7: main (from 0, cut by both edges) calls foo [100,300] which
#    calls leaf [150,170]; rec [400,1000] -> rec [450,700] -> rec [500,600] -> leaf
#    [510,540]; foo [1100,1400]; leaf [1500,1510]; the trace ends at 2000. So rec: 3 calls
#    600/250/100, self 350+150+70 = 570, p50 250 (rank 2 of 3); foo: 200/300, self 480;
#    leaf: 20/30/10; main: open (excluded). Folded self times: main 890, main;foo 480, ...
#  two_threads.txt: tid 7 main calls alpha [100,400]; tid 8 (first event at 50, shifted
#    +1 ns as a late thread) main calls beta [200,250] and [300,390]; ends 600 and 500.
#  samples.txt: cpu-clock samples every 250 us: slow in the samples at 250 and 500 us
#    (one call of 500 us), quick at 1000 us (250 us); marked estimated, period 250 us.
#  lambdas.txt, thread 7: main (cut) calls main::{lambda(int)#1}::operator() [100,300],
#    ...#2 [400,1000], app::run<main::{lambda(int)#1}> [1100,1150], ...#2> [1200,1400],
#    app::Table<std::string>::lookup(app::Key const&) [1500,1570], <std::u16string> [1600,1690].
#  inlined.txt: cpu-clock samples every 250 us of main > work > __sin_fma [250,2000] whose
#    samples also hold perf's inlined frames (do_sincos, do_sin, do_cos, ...).
#  bursts.txt: cpu-clock samples (250 us) with switch records: crunch in 4 bursts of
#    60 us (one sample each), grind in one burst of 1 ms (4 samples): self 1 ms each.
# SNAP_UPDATE_GOLDEN=1 rewrites the expectations (review the diff like code).
set -u
cd "$(dirname "$0")/../.."
snap=./snaptrace
dir=tests/report
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run_case() { # NAME INPUT FLAGS...: prints the actual result
	local input=$1 rc
	shift
	local args=()
	for a in "$@"; do
		[ "$a" = FOLDED ] && a=$tmp/folded
		args+=("$a")
	done
	rm -f "$tmp/folded"
	"$snap" report "${args[@]}" "$input" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	echo "exit=$rc"
	sed -e "s|$tmp|TMP|g" -e 's/^/stderr: /' "$tmp/err"
	cat "$tmp/out"
	if [ -f "$tmp/folded" ]; then
		echo "--- folded"
		cat "$tmp/folded"
	fi
}

while IFS='|' read -r name flags input; do
	# (comments first: xargs stops at a lone quote, as in "perf's")
	[[ $name =~ ^[[:space:]]*(#|$) ]] && continue
	name=$(echo "$name" | xargs)
	input=$dir/$(echo "$input" | xargs)
	read -r -a fl <<<"$flags"
	run_case "$input" "${fl[@]}" >"$tmp/actual"
	exp=$dir/$name.expected
	if [ "${SNAP_UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$tmp/actual" "$exp"
		echo "PASS report/$name (updated)"
	elif [ ! -f "$exp" ]; then
		echo "FAIL report/$name: no $exp (run SNAP_UPDATE_GOLDEN=1 $0 and review it)"
	elif diff -u "$exp" "$tmp/actual" >"$tmp/diff"; then
		echo "PASS report/$name"
	else
		echo "FAIL report/$name: output differs:"
		head -30 "$tmp/diff"
	fi
	case " ${fl[*]} " in *" -json "*) ;; *) continue ;; esac
	if command -v python3 >/dev/null && ! sed -n '/^{/,$p' "$tmp/actual" | sed '/^--- folded/,$d' |
		python3 -m json.tool >/dev/null 2>"$tmp/jerr"; then
		echo "FAIL report/$name-json-valid: $(tail -1 "$tmp/jerr")"
	fi
	for ext in fxt fxt.gz; do
		if ! "$snap" decode -q -o "$tmp/t.$ext" "$input" 2>"$tmp/derr"; then
			echo "FAIL report/$name-via-$ext: decode failed: $(head -1 "$tmp/derr")"
			continue
		fi
		run_case "$tmp/t.$ext" "${fl[@]}" >"$tmp/actual2"
		if cmp -s "$tmp/actual" "$tmp/actual2"; then
			echo "PASS report/$name-via-$ext"
		else
			echo "FAIL report/$name-via-$ext: the FXT trace gives other figures:"
			diff -u "$tmp/actual" "$tmp/actual2" | head -20
		fi
	done
done <"$dir/cases"

# An FXT trace written the way magic-trace writes (string and thread refs, inline
# names and pid/tid, complete events): tests/report/mkfxt.py says what it holds.
if command -v python3 >/dev/null; then
	python3 "$dir/mkfxt.py" "$tmp/mt.fxt"
	run_case "$tmp/mt.fxt" -json >"$tmp/actual"
	if [ "${SNAP_UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$tmp/actual" "$dir/magic_style_json.expected"
		echo "PASS report/magic_style_json (updated)"
	elif diff -u "$dir/magic_style_json.expected" "$tmp/actual" >"$tmp/diff"; then
		echo "PASS report/magic_style_json"
	else
		echo "FAIL report/magic_style_json: output differs:"
		head -20 "$tmp/diff"
	fi
else
	echo "SKIP report/magic_style_json: no python3 to write the trace"
fi

# Bad input: one clear line and a non-zero status, never a crash.
expect_err() { # NAME STATUS PATTERN ARGS...: the last stderr line matches, at most 2 lines
	local name=$1 want=$2 pat=$3 rc
	shift 3
	"$snap" report "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$want" ] && [ "$(wc -l <"$tmp/err")" -le 2 ] && tail -1 "$tmp/err" | grep -q -- "$pat"; then
		echo "PASS report/error_$name"
	else
		echo "FAIL report/error_$name: exit $rc (want $want), stderr: $(head -3 "$tmp/err")"
	fi
}
expect_err missing_file 1 "cannot open" "$tmp/nope.fxt"
expect_err bad_window 2 "bad -window" -window 10,20ms "$dir/recursion.txt"
expect_err window_backwards 2 "bad -window" -window 2ms,1ms "$dir/recursion.txt"
expect_err bad_sort 2 "bad -sort" -sort median "$dir/recursion.txt"
expect_err bad_top 2 "bad -top" -top -3 "$dir/recursion.txt"
expect_err two_files 2 "one FILE only" a.fxt b.fxt
expect_err directory 1 "is a directory" "$dir"
"$snap" decode -q -o "$tmp/t.fxt.gz" "$dir/recursion.txt"
head -c 200 "$tmp/t.fxt.gz" >"$tmp/trunc.fxt.gz"
expect_err truncated_gzip 1 "truncated" "$tmp/trunc.fxt.gz"
"$snap" decode -q -o "$tmp/t.fxt" "$dir/recursion.txt"
head -c 300 "$tmp/t.fxt" >"$tmp/trunc.fxt"
expect_err truncated_fxt 1 "record #" "$tmp/trunc.fxt"
: >"$tmp/empty.fxt"
expect_err empty_fxt 1 "empty file" "$tmp/empty.fxt"
printf 'not a trace at all\n' >"$tmp/junk.txt"
expect_err junk_text 1 "no events" "$tmp/junk.txt"

# -function by a label with spaces, from the table of lambdas.txt
if "$snap" report -function 'app::Table<std::u... const&)' "$dir/lambdas.txt" 2>"$tmp/err" |
	grep -qx 'function app::Table<std::u16string>::lookup(app::Key const&): 1 call, total 90 ns, self 90 ns'; then
	echo "PASS report/function_by_moved_cut_label"
else
	echo "FAIL report/function_by_moved_cut_label: $(head -2 "$tmp/err")"
fi
expect_err unknown_function 1 "no function 'mian' in the trace; close: 'main'" -function mian "$dir/recursion.txt"
expect_err unknown_function_none_close 1 "no function 'zzzz' in the trace (-top 0 lists" -function zzzz "$dir/recursion.txt"
expect_err unknown_thread 1 "no thread 70 with slices in the trace; its threads include 7 " -thread 70 "$dir/recursion.txt"
expect_err folded_stdout_and_json 2 "-json and -folded - both write stdout" -json -folded - "$dir/recursion.txt"

# -folded - : stdout holds the folded stacks alone (for flamegraph.pl), each line
# "COMM;frame;...;frame N" as stackcollapse-perf.pl writes them; the tables go to stderr.
"$snap" report -folded "$tmp/f" "$dir/recursion.txt" >/dev/null 2>&1
if "$snap" report -folded - "$dir/recursion.txt" >"$tmp/out" 2>"$tmp/err" &&
	cmp -s "$tmp/out" "$tmp/f" && [ -s "$tmp/out" ] &&
	! grep -Ev '^:7;[^ ;]+(;[^ ;]+)* [0-9]+$' "$tmp/out" >/dev/null &&
	diff <(sed 1d "$tmp/err") <(sed 1,2d "$dir/recursion_text.expected") >/dev/null; then
	echo "PASS report/folded_stdout_alone"
else
	echo "FAIL report/folded_stdout_alone: stdout: $(head -3 "$tmp/out" | tr '\n' '|') stderr: $(head -2 "$tmp/err" | tr '\n' '|')"
fi

# Inlined frames, whatever the sampling model makes of the durations: every
# "[inlined]" row has self 0 and "inlined": true, and __sin_fma's self is its total.
if command -v python3 >/dev/null; then
	"$snap" report -json "$dir/inlined.txt" >"$tmp/inl.json" 2>"$tmp/err"
	if python3 - "$tmp/inl.json" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
fn = {f["name"]: f for f in d["functions"]}
inl = [f for f in d["functions"] if f["name"].endswith(" [inlined]")]
assert len(inl) >= 3 and all(f["self_ns"] == 0 and f["inlined"] for f in inl), inl
assert "do_sin" not in fn and "do_cos" not in fn
s = fn["__sin_fma"]
assert s["self_ns"] == s["total_ns"] > 0 and not s["inlined"], s
PY
		echo "PASS report/inlined_self_with_the_real_function"
	else
		echo "FAIL report/inlined_self_with_the_real_function: $(head -c 600 "$tmp/inl.json")"
	fi
fi

# stdin: an FXT trace (plain or gzip) or perf script text piped in is read by its
# first bytes, as a file is (it printed the binary before).
"$snap" decode -q -o "$tmp/s.fxt" "$dir/recursion.txt"
"$snap" report "$tmp/s.fxt" | sed 1d >"$tmp/want"
ok=1
for how in plain gzip text; do
	case $how in
	plain) "$snap" report - <"$tmp/s.fxt" >"$tmp/out" 2>"$tmp/err" ;;
	gzip) gzip -c "$tmp/s.fxt" | "$snap" report - >"$tmp/out" 2>"$tmp/err" ;;
	text) cat "$dir/recursion.txt" | "$snap" report - >"$tmp/out" 2>"$tmp/err" ;;
	esac
	if [ "$(head -1 "$tmp/out")" != "snaptrace report: stdin" ] ||
		! diff <(sed 1d "$tmp/out") "$tmp/want" >/dev/null; then
		echo "FAIL report/stdin_$how: $(head -c 300 "$tmp/out" | tr -c '[:print:]\n' '?' | head -3) $(head -2 "$tmp/err")"
		ok=0
	fi
done
gzip -c "$tmp/s.fxt" | head -c 100 | "$snap" report - >/dev/null 2>"$tmp/err"
if [ $? -ne 1 ] || ! grep -q "stdin: bad gzip data" "$tmp/err"; then
	echo "FAIL report/stdin_truncated_gzip: $(head -2 "$tmp/err")"
	ok=0
fi
[ $ok = 1 ] && echo "PASS report/stdin_fxt_gzip_text"

# -report on decode prints the same tables after writing the trace.
if "$snap" decode -q -report -o "$tmp/r.fxt" "$dir/recursion.txt" >"$tmp/out" 2>"$tmp/err" &&
	[ -s "$tmp/r.fxt" ] &&
	diff <(sed 1d "$tmp/out") <(sed 1,2d "$dir/recursion_text.expected") >"$tmp/diff"; then
	echo "PASS report/decode_dash_report"
else
	echo "FAIL report/decode_dash_report: $(head -5 "$tmp/diff" "$tmp/err")"
fi

# The figures against an independent reckoning from `snaptrace dump`'s slices
# (tests/report/slices.sh), and the folded self times adding up to the threads' busy
# time: on the FXT of every golden input (deferred begins, decode errors, threads,
# samples, ...), then on a real sampled recording.
report_figures() { # TRACE: the same lines as slices.sh prints, from report -json
	"$snap" report -json "$1" | sed -n -E \
		-e 's/^\{"span_ns": [0-9]+, "slices": ([0-9]+), .*"open_slices": ([0-9]+),.*/slices \1 open \2/p' \
		-e 's/^ *\{"name": "(.*)", "calls": ([0-9]+), "total_ns": ([0-9]+), "self_ns": ([0-9]+), "mean_ns": [0-9]+, "p50_ns": ([0-9]+), "p90_ns": ([0-9]+), "p99_ns": ([0-9]+), "max_ns": ([0-9]+).*/\1 \2 \3 \4 \8 \5 \6 \7/p' |
		{ IFS= read -r head; echo "$head"; LC_ALL=C sort; }
}
check_against_dump() { # NAME TRACE
	local name=$1 trace=$2 busy folded fold
	tests/report/slices.sh "$snap" "$trace" "$tmp/fold" >"$tmp/want" 2>&1
	report_figures "$trace" >"$tmp/got"
	if ! diff -u "$tmp/want" "$tmp/got" >"$tmp/diff"; then
		echo "FAIL report/vs_dump_$name: report and the dump's slices disagree:"
		head -20 "$tmp/diff"
		return
	fi
	busy=$("$snap" report -json -folded "$tmp/f" "$trace" | sed -n 's/.*"busy_ns": \([0-9]*\).*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }')
	folded=$(awk '{ s += $NF } END { print s + 0 }' "$tmp/f")
	fold=$(cat "$tmp/fold")
	# durations: the threads' busy time; samples' periods (docs/report.md): slices.sh's sum
	if [ "$fold" != "$folded" ] ||
		{ ! "$snap" dump "$trace" | grep -q 'sampled_ns=' && [ "$busy" != "$folded" ]; }; then
		echo "FAIL report/vs_dump_$name: folded self times add up to $folded ns, busy time $busy ns, the dump's slices $fold ns"
		return
	fi
	"$snap" report -top 0 "$trace" >"$tmp/text"
	if awk 'length($0) > 100 { bad = 1 } END { exit !bad }' "$tmp/text"; then
		echo "FAIL report/vs_dump_$name: a line is wider than 100 columns: $(awk 'length($0) > 100' "$tmp/text" | head -1)"
		return
	fi
	echo "PASS report/vs_dump_$name ($(head -1 "$tmp/want"), $(($(wc -l <"$tmp/want") - 1)) functions)"
}
for input in tests/golden/pt/*.txt tests/golden/samples/*.txt; do
	base=${input%.txt}
	args=()
	[ -f "$base.args" ] && read -r -a args <"$base.args"
	rm -f "$tmp/g.fxt"
	"$snap" decode -q "${args[@]}" -o "$tmp/g.fxt" "$input" >/dev/null 2>&1 || continue
	[ -f "$tmp/g.fxt" ] && check_against_dump "golden_$(basename "$base")" "$tmp/g.fxt"
done

# e2e: a real sampled recording of tests/e2e/progs/nest (main > outer > inner > leaf).
nest=$PWD/${SNAP_BUILD:-build/default}/tests/e2e/nest
noperf=""
if ! command -v perf >/dev/null; then
	noperf="perf is not on PATH"
elif [ ! -x "$nest" ]; then
	noperf="$nest missing (run make test-bins)"
elif ! perf record -o "$tmp/probe.data" --no-bpf-event -e cpu-clock -F 1000 -- true \
	>/dev/null 2>&1; then
	noperf="perf record -e cpu-clock does not work for $(id -un)"
fi
if [ -n "$noperf" ]; then
	echo "SKIP report/e2e_run_report: $noperf"
else
	(cd "$tmp" && TMPDIR=$tmp timeout -s KILL 60 "$OLDPWD/$snap" run -sampling \
		-timer-resolution Sample:2000 -report -o "$tmp/run.fxt.gz" -- "$nest" 3000 0 0 0 \
		>"$tmp/run.out" 2>"$tmp/run.err")
	rc=$?
	if [ $rc -ne 0 ] || [ ! -s "$tmp/run.fxt.gz" ]; then
		echo "FAIL report/e2e_run_report: rc $rc: $(tail -3 "$tmp/run.err")"
	elif ! grep -q '^ESTIMATED from stack samples, one every 500 us' "$tmp/run.out" ||
		! grep -q "tid *busy *slices" "$tmp/run.out"; then
		echo "FAIL report/e2e_run_report: -report printed: $(head -12 "$tmp/run.out")"
	# leaf is one sampled call spanning the snapshot (cut by its edges, so out of the
	# table's figures); the folded stacks still give it its self time.
	elif ! "$snap" report -folded "$tmp/run.folded" "$tmp/run.fxt.gz" >/dev/null ||
		! grep -Eq '(^|;)main;outer;inner;leaf [1-9][0-9]*$' "$tmp/run.folded"; then
		echo "FAIL report/e2e_run_report: no main;outer;inner;leaf in the folded stacks: $(head -3 "$tmp/run.folded")"
	else
		echo "PASS report/e2e_run_report"
		"$snap" report "$tmp/run.fxt.gz" >"$tmp/again"
		if diff <(grep -v '^ready' "$tmp/run.out" | sed 1d) <(sed 1d "$tmp/again") >/dev/null; then
			echo "PASS report/e2e_same_as_report_of_the_file"
		else
			echo "FAIL report/e2e_same_as_report_of_the_file: $(diff <(grep -v '^ready' "$tmp/run.out") "$tmp/again" | head -5)"
		fi
		check_against_dump e2e_sampled "$tmp/run.fxt.gz"
	fi
fi

# e2e: perf's inlined frames on a real recording of a -O2 -g program calling libm's sin
# (tests/report/sinp.c), dwarf call chains (Debian's libm keeps no frame pointers). perf
# report --no-children puts the self time on __sin_fma; snaptrace's share of __sin_fma in
# the self time of the folded stacks (all of it, cut calls too, each line's time given to
# its innermost frame not marked _[i], perf's rule) must be within 10 points of perf's,
# and the table's inlined rows (when perf script prints them: it needs libm's debug info,
# and not --no-inline) keep no self time.
if [ -n "$noperf" ]; then
	echo "SKIP report/e2e_inlined_vs_perf: $noperf"
elif ! command -v python3 >/dev/null || ! cc -O2 -g -fno-omit-frame-pointer -o "$tmp/sinp" "$dir/sinp.c" -lm 2>"$tmp/ccerr"; then
	echo "SKIP report/e2e_inlined_vs_perf: cannot build tests/report/sinp.c: $(head -1 "$tmp/ccerr")"
elif ! timeout -s KILL 60 perf record -q -o "$tmp/sin.data" --no-bpf-event -e cpu-clock -F 1000 \
	--call-graph dwarf -- "$tmp/sinp" 150 >/dev/null 2>"$tmp/perr"; then
	echo "SKIP report/e2e_inlined_vs_perf: perf record --call-graph dwarf failed: $(head -1 "$tmp/perr")"
else
	perf report -i "$tmp/sin.data" --no-children --stdio --sort sym 2>/dev/null |
		awk '$NF == "__sin_fma" && $1 ~ /%$/ { sub("%", "", $1); print $1; exit }' >"$tmp/perf.share"
	"$snap" report -q -json -folded "$tmp/sin.folded" "$tmp/sin.data" >"$tmp/sin.json" 2>"$tmp/err"
	if ! python3 - "$tmp/sin.json" "$(cat "$tmp/perf.share")" "$tmp/sin.folded" >"$tmp/why" 2>&1 <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
perf = float(sys.argv[2])
by, total = {}, 0
for line in open(sys.argv[3]):
    path, n = line.rsplit(" ", 1)
    frames = [f for f in path.split(";") if not f.endswith("_[i]")]
    if frames[-1].startswith(("[off-CPU", "[on-CPU")):
        continue  # not a function's CPU time (docs/sampling.md: idle gaps, unsampled bursts)
    by[frames[-1]] = by.get(frames[-1], 0) + int(n)
    total += int(n)
ours = 100.0 * by.get("__sin_fma", 0) / total
inl = [f for f in d["functions"] if f["inlined"]]
assert all(f["self_ns"] == 0 for f in inl), inl
assert abs(ours - perf) <= 10, "__sin_fma: snaptrace %.1f %%, perf %.1f %%" % (ours, perf)
print("__sin_fma %.1f %% (perf %.1f %%), %d inlined rows" % (ours, perf, len(inl)))
PY
		echo "FAIL report/e2e_inlined_vs_perf: $(tail -1 "$tmp/why") $(head -1 "$tmp/err")"
	else
		echo "PASS report/e2e_inlined_vs_perf ($(cat "$tmp/why"))"
	fi
fi

# A trace far larger than a read piece (1 MiB) and than gzip's buffer: 300,000 events,
# 8.7 MB of FXT, from tests/fxt's generator (deterministic). The report streams it (the
# whole decompressed trace is never in memory); the figures must be those of the
# whole-buffer reader it replaced (big_stream_json.expected, written by that reader; since
# then one recursive function's total counts its nested calls once, and the "inlined" key
# was added), for the plain and the gzip file alike (records straddle other piece edges).
gen=${SNAP_BUILD:-build/default}/tests/fxt/fxtgen
if [ ! -x "$gen" ]; then
	echo "SKIP report/big_stream_json: no $gen (make test-bins)"
elif ! "$gen" bench "$tmp/big.fxt" 300000 >/dev/null 2>"$tmp/generr" ||
	! "$gen" bench "$tmp/big.fxt.gz" 300000 >/dev/null 2>>"$tmp/generr"; then
	echo "FAIL report/big_stream_json: fxtgen: $(head -1 "$tmp/generr")"
else
	ok=1
	for f in big.fxt big.fxt.gz; do
		if ! "$snap" report -json -top 20 "$tmp/$f" >"$tmp/big.json" 2>"$tmp/big.err" ||
			! diff -u "$dir/big_stream_json.expected" "$tmp/big.json" >"$tmp/big.diff"; then
			echo "FAIL report/big_stream_json: $f: $(head -1 "$tmp/big.err") $(sed -n 3,8p "$tmp/big.diff")"
			ok=0
		fi
	done
	if [ "$ok" = 1 ] && [ "$(stat -c %s "$tmp/big.fxt")" -lt 4000000 ]; then
		echo "FAIL report/big_stream_json: the trace is only $(stat -c %s "$tmp/big.fxt") bytes"
	elif [ "$ok" = 1 ]; then
		echo "PASS report/big_stream_json"
	fi
fi

# help: the flags, and honest about estimates (exact only with Intel PT)
if "$snap" help report | grep -q -- "-window START,END" && "$snap" report -help | grep -q -- "-folded FILE" &&
	"$snap" report -help | grep -q "exact for" && "$snap" report -help | grep -q "gives estimates" &&
	! "$snap" report -help | grep -q "^Prints exact"; then
	echo "PASS report/help"
else
	echo "FAIL report/help: snaptrace help report / report -help lack the flags or call estimates exact"
fi
exit 0
