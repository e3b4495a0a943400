#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# magic-trace command-line compatibility: the flags and forms a magic-trace user types
# are accepted (or refused with a message that says why). Prints PASS/FAIL/SKIP lines.
set -u
cd "$(dirname "$0")/../.."
snap=$PWD/snaptrace
tmp=$(mktemp -d /tmp/snaptrace-compat.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
in=tests/golden/pt/call_return.txt

# ok NAME ARGS...: exit 0
ok() {
	local name=$1
	shift
	if timeout -s KILL 30 "$snap" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"; then
		echo "PASS compat_$name"
	else
		echo "FAIL compat_$name: exit $?: $(head -2 "$tmp/$name.err" | tr '\n' ' ')"
	fi
}
# refused NAME STATUS PATTERN ARGS...: that status, one stderr line matching PATTERN
refused() {
	local name=$1 want=$2 pat=$3
	shift 3
	timeout -s KILL 30 "$snap" "$@" </dev/null >"$tmp/$name.out" 2>"$tmp/$name.err"
	local rc=$?
	if [ $rc = "$want" ] && [ "$(wc -l <"$tmp/$name.err")" = 1 ] && grep -q -- "$pat" "$tmp/$name.err"; then
		echo "PASS compat_$name"
	else
		echo "FAIL compat_$name: exit $rc: $(head -3 "$tmp/$name.err" | tr '\n' ' ')"
	fi
}

# decode takes magic-trace's collection-mode flags (the mode comes from the data)
ok decode_sampling_events decode -sampling -events branch-misses,cache-misses -o "$tmp/a.fxt" "$in"
refused decode_bad_events 2 "bad -events" decode -events bogus -o "$tmp/b.fxt" "$in"
ok decode_executable decode -executable "$snap" -o "$tmp/c.fxt" "$in"
refused decode_missing_executable 1 "cannot read the executable" decode -executable "$tmp/nope" -o "$tmp/d.fxt" "$in"
refused decode_bad_map_name 1 "perf-PID.map" decode -perf-map-file "$tmp/x.map" -o "$tmp/e.fxt" "$in"
refused decode_filter_stdin 1 "not stdin" decode -filter "(a b)" -o "$tmp/f.fxt" - <"$in"
refused decode_bad_filter 2 "bad -filter" decode -filter "(a)" -o "$tmp/g.fxt" "$in"
refused run_bad_filter 2 "bad -filter" run -filter "a b" -- true

# attach without -pid: not on a terminal it says what to pass
refused attach_no_pid_no_tty 2 "pass -pid" attach

# attach without -pid on a terminal: the picker (fzf, or a list answered with text
# that one line contains); -print-perf-commands shows which pid was chosen.
if command -v script >/dev/null && ! command -v fzf >/dev/null; then
	sleep 987654 &
	spid=$!
	pids+=("$spid")
	printf '987654\n' | timeout -s KILL 20 script -qec "$snap attach -print-perf-commands" /dev/null \
		>"$tmp/pick.out" 2>&1
	if grep -q -- "-t $spid " "$tmp/pick.out"; then
		echo "PASS compat_attach_picker"
	else
		echo "FAIL compat_attach_picker: $(tail -3 "$tmp/pick.out" | tr '\r\n' '  ')"
	fi
else
	echo "SKIP compat_attach_picker: needs script(1) and no fzf (fzf would wait for a person)"
fi

# -z-print-perf-commands on decode prints the perf script command it runs
if command -v perf >/dev/null &&
	perf record -q -o "$tmp/s.data" --no-bpf-event -e cpu-clock -F 1000 -g -- sleep 0.05 >/dev/null 2>&1; then
	# (a short sleep may have no sample: only the printed command is checked)
	"$snap" decode -z-print-perf-commands -no-dlfilter -o "$tmp/s.fxt" "$tmp/s.data" \
		>/dev/null 2>"$tmp/zp.err"
	if grep -q "^perf script -i $tmp/s.data .*-F comm,pid,tid,time,ip,sym" "$tmp/zp.err"; then
		echo "PASS compat_decode_z_print_perf_commands"
	else
		echo "FAIL compat_decode_z_print_perf_commands: $(head -3 "$tmp/zp.err" | tr '\n' ' ')"
	fi
else
	echo "SKIP compat_decode_z_print_perf_commands: perf record -e cpu-clock does not work here"
fi

# run -filter goes through the same two-pass decode (a sampling run here)
nest=$PWD/${SNAP_BUILD:-build/default}/tests/e2e/nest
if [ -x "$nest" ] && command -v perf >/dev/null &&
	perf record -q -o "$tmp/p2.data" --no-bpf-event -e cpu-clock -F 1000 -- true >/dev/null 2>&1; then
	timeout -s KILL 60 "$snap" run -sampling -filter "(no_such_start no_such_stop)" -o "$tmp/rf.fxt" \
		-- "$nest" 500 >/dev/null 2>"$tmp/rf.err"
	rc=$?
	if [ $rc = 0 ] && grep -q -- "-filter: no call to no_such_start followed by a call to no_such_stop" "$tmp/rf.err" &&
		! "$snap" dump "$tmp/rf.fxt" | grep -q '^begin'; then
		echo "PASS compat_run_filter"
	else
		echo "FAIL compat_run_filter: exit $rc: $(grep -v '^perf' "$tmp/rf.err" | head -3 | tr '\n' ' ')"
	fi
else
	echo "SKIP compat_run_filter: perf record -e cpu-clock does not work here (or no nest)"
fi

# every magic-trace flag is listed by -help (the hidden -z- ones too where they act)
for cmd in run attach decode; do
	"$snap" "$cmd" -help >"$tmp/help.$cmd" 2>&1
done
missing=""
for f in working-directory trigger multi-snapshot filter trace-include-kernel trace-kernel-only \
	timer-resolution multi-thread full-execution snapshot-size callgraph-mode sampling events \
	output serve serve-port share; do
	for cmd in run attach; do
		grep -q -- "-$f\b" "$tmp/help.$cmd" || missing="$missing $cmd:-$f"
	done
done
grep -q -- "-pid, -p" "$tmp/help.attach" || missing="$missing attach:-pid"
for f in working-directory executable trace-include-kernel trace-kernel-only output serve \
	serve-port share sampling events perf-map-file z-print-perf-commands filter; do
	grep -q -- "-$f\b" "$tmp/help.decode" || missing="$missing decode:-$f"
done
if [ -z "$missing" ]; then
	echo "PASS compat_help_lists_magic_trace_flags"
else
	echo "FAIL compat_help_lists_magic_trace_flags: missing$missing"
fi
exit 0
