#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# End-to-end recording tests with the real perf: snaptrace run/attach/doctor,
# triggers, threads, scopes, refusals. Each test probes first and prints SKIP
# with the reason when perf or permissions are missing. Recording is kept short
# (<= ~1 s, cpu-clock <= 4 kHz, --no-bpf-event). Prints PASS/FAIL/SKIP lines.
set -u
cd "$(dirname "$0")/../.."
: "${SNAP_BUILD:=build/default}"
snap=$PWD/snaptrace
nest=$PWD/$SNAP_BUILD/tests/e2e/nest
progs=$PWD/$SNAP_BUILD/tests/e2e
tmp=$(mktemp -d /tmp/snaptrace-e2e.XXXXXX)
fail=0
bgpids=()

cleanup() {
	for p in "${bgpids[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

pass() { echo "PASS e2e_$1"; }
failed() {
	echo "FAIL e2e_$1: $2"
	fail=1
}
skip() { echo "SKIP e2e_$1: $2"; }

if [ ! -x "$snap" ] || [ ! -x "$nest" ]; then
	echo "FAIL e2e_setup: $snap or $nest missing (run make test-bins)"
	exit 1
fi
# snaptrace makes its working directories in $TMPDIR: a private one, so other
# suites running at the same time cannot confuse the leftover checks.
export TMPDIR=$tmp/tmpdir
mkdir -p "$TMPDIR"

noperf=""
if ! command -v perf >/dev/null; then
	noperf="perf is not on PATH"
elif ! perf record -o "$tmp/probe.data" --no-bpf-event -e cpu-clock -F 1000 -- true \
	>/dev/null 2>&1; then
	noperf="perf record -e cpu-clock does not work for $(id -un)"
fi
root=0
[ "$(id -u)" -eq 0 ] && root=1
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)

# snap NAME ARGS...: runs snaptrace (30 s cap), output in $tmp/NAME.{out,err}, rc in $rc.
snap() {
	local name=$1
	shift
	timeout -s KILL 30 "$snap" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
}

# chain_ratio DATA LEAF CALLERS...: percentage of samples whose stack has LEAF
# followed by CALLERS (innermost first) as a subsequence; prints "pct total".
chain_ratio() {
	local data=$1
	shift
	perf script -i "$data" -F tid,ip,sym 2>/dev/null | awk -v want="$*" '
		BEGIN { n = split(want, w, " ") }
		function done_rec() {
			if (nf == 0) return
			hasleaf = 0
			for (i = 1; i <= nf; i++) if (f[i] == w[1]) hasleaf = 1
			if (!hasleaf) { nf = 0; return }
			total++
			k = 1
			for (i = 1; i <= nf && k <= n; i++) if (f[i] == w[k]) k++
			if (k > n) good++
			nf = 0
		}
		/^[ \t]*$/ { done_rec(); next }
		/^\t/ || /^ +[0-9a-f]+ / { sub(/^[ \t]*[0-9a-f]+ /, ""); sub(/\+0x.*/, ""); f[++nf] = $1; next }
		{ done_rec() }
		END { done_rec(); printf "%d %d\n", total ? 100 * good / total : 0, total }'
}

# dump_nesting FXT CALLERS... LEAF: like chain_ratio on the decoded trace: each
# slice of LEAF must sit inside CALLERS (outermost first); prints "pct total", pct
# weighted by the slices' durations (one call is one slice however many samples it
# spans, docs/sampling.md, so a count would weigh a one-sample glitch like a long call).
dump_nesting() {
	local fxt=$1
	shift
	# FXT need not be time-ordered (deferred start events come last): sort by
	# timestamp, stably, before replaying the begins and ends.
	"$snap" dump "$fxt" 2>/dev/null | grep -E '^(begin|end) ' |
		awk '{ t = $2; sub(/^ts=/, "", t); print t "\t" $0 }' | sort -s -n -k1,1 | cut -f2- |
		awk -v want="$*" '
		BEGIN { n = split(want, w, " ") }
		{ ts = $2; sub(/^ts=/, "", ts)
		  match($0, /tid=[0-9]+/); t = substr($0, RSTART + 4, RLENGTH - 4) }
		/^begin / {
			match($0, /name="[^"]*"/); nm = substr($0, RSTART + 6, RLENGTH - 7)
			d[t]++; st[t, d[t]] = nm; ok[t, d[t]] = 0; b[t, d[t]] = ts
			if (nm == w[n]) {
				total++; k = 1
				for (i = 1; i < d[t] && k < n; i++) if (st[t, i] == w[k]) k++
				ok[t, d[t]] = k == n ? 1 : -1
			}
			next
		}
		/^end / {
			if (!d[t]) next
			if (ok[t, d[t]]) { dur = ts - b[t, d[t]] + 1; all += dur; if (ok[t, d[t]] > 0) good += dur }
			d[t]--
		}
		END { printf "%d %d\n", all ? 100 * good / all : 0, total }'
}

# slices FXT: one line per slice of the decoded trace, "TID DUR_MS CHAIN" with
# CHAIN the names from the outermost frame to the slice ("main>outer>nap").
slices() {
	"$snap" dump "$1" 2>/dev/null | grep -E '^(begin|end) ' |
		awk '{ t = $2; sub(/^ts=/, "", t); print t "\t" $0 }' | sort -s -n -k1,1 | cut -f2- |
		awk '
		{
			t = $2; sub(/^ts=/, "", t)
			match($0, /tid=[0-9]+/); tid = substr($0, RSTART + 4, RLENGTH - 4)
		}
		/^begin / {
			match($0, /name="[^"]*"/); nm = substr($0, RSTART + 6, RLENGTH - 7)
			d[tid]++; st[tid, d[tid]] = nm; bt[tid, d[tid]] = t
			next
		}
		/^end / {
			if (!d[tid]) next
			c = st[tid, 1]
			for (i = 2; i <= d[tid]; i++) c = c ">" st[tid, i]
			printf "%s %d %s\n", tid, (t - bt[tid, d[tid]]) / 1000000, c
			d[tid]--
		}'
}

last_sample_ns() {
	perf script -i "$1" -F time -G --ns 2>/dev/null | awk 'NF { t = $1 } END { sub(/:$/, "", t); split(t, a, "."); printf "%s%s\n", a[1], a[2] }'
}

t_usage() {
	snap usage1 run -timer-resolution Bogus -- true
	[ $rc -eq 2 ] && grep -q "bad -timer-resolution 'Bogus'" "$tmp/usage1.err" ||
		{ failed usage "bad resolution: rc $rc $(head -1 "$tmp/usage1.err")"; return; }
	snap usage2 run -multi-snapshot -sampling -- true
	[ $rc -eq 2 ] && grep -q "multi-snapshot needs -trigger" "$tmp/usage2.err" ||
		{ failed usage "multi-snapshot: rc $rc $(head -1 "$tmp/usage2.err")"; return; }
	snap usage3 run -- /nonexistent/prog
	[ $rc -eq 2 ] && grep -q "can't find executable" "$tmp/usage3.err" ||
		{ failed usage "missing prog: rc $rc $(head -1 "$tmp/usage3.err")"; return; }
	snap usage4 attach -pid 12,12
	[ $rc -eq 2 ] && grep -q "duplicate PIDs" "$tmp/usage4.err" ||
		{ failed usage "dup pids: rc $rc"; return; }
	snap usage5 run -help
	[ $rc -eq 0 ] && grep -q -- "-trigger SYMBOL" "$tmp/usage5.out" ||
		{ failed usage "run -help: rc $rc"; return; }
	pass usage
}

t_print_cmds() {
	snap print run --print-perf-commands -sampling -timer-resolution Sample:2000 -- true
	if [ $rc -eq 0 ] && grep -q "^perf record .*--no-bpf-event .*cpu-clock/freq=2000,overwrite" \
		"$tmp/print.out" && grep -q -- "--per-thread -t PID" "$tmp/print.out"; then
		pass print_perf_commands
	else
		failed print_perf_commands "rc $rc: $(cat "$tmp/print.out" "$tmp/print.err" | head -3)"
	fi
}

t_doctor() {
	snap doctor doctor
	if [ $rc -le 1 ] && grep -q "Intel PT" "$tmp/doctor.out" && grep -q "kernel tracing" \
		"$tmp/doctor.out"; then
		pass doctor
	else
		failed doctor "rc $rc: $(head -3 "$tmp/doctor.out")"
	fi
}

t_pt_missing() {
	if [ -e /sys/bus/event_source/devices/intel_pt ]; then
		skip pt_missing "this machine has Intel PT"
		return
	fi
	snap ptmiss run -pt -- true
	if [ $rc -eq 1 ] && grep -q "Intel PT is not available on this machine" "$tmp/ptmiss.err"; then
		pass pt_missing
	else
		failed pt_missing "rc $rc: $(head -2 "$tmp/ptmiss.err")"
	fi
	# (a real run: -print-perf-commands prints the sampling command without the notice)
	snap ptmiss2 run -timer-resolution Low -o "$tmp/ptmiss2.fxt.gz" -- true
	if grep -q "no Intel PT on this machine, using stack sampling" "$tmp/ptmiss2.err"; then
		pass pt_fallback_notice
	else
		failed pt_fallback_notice "$(head -2 "$tmp/ptmiss2.err")"
	fi
}

# The Intel PT control flow, against a fake perf that logs its argv and the
# control commands (SNAPTRACE_ASSUME_PT=1 makes snaptrace believe in PT):
# enable once perf is ready, snapshot at the trigger, stop at the end.
t_pt_control() {
	local fake=$PWD/tests/e2e/fake/perf log=$tmp/fakeperf.log
	: >"$log"
	FAKE_PERF_LOG=$log SNAPTRACE_PERF=$fake SNAPTRACE_ASSUME_PT=1 timeout -s KILL 30 \
		"$snap" run -trigger trigger_here -working-directory "$tmp/w_ptc" -o "$tmp/ptc.fxt.gz" \
		-- "$nest" 3000 1500 >"$tmp/ptc.out" 2>"$tmp/ptc.err"
	if grep -q "^argv: record .*--event=intel_pt/.*/u --per-thread -t [0-9]* --snapshot --control=fd:3,4" "$log" &&
		[ "$(grep '^cmd:' "$log" | tr '\n' ' ')" = "cmd: enable cmd: snapshot cmd: stop " ]; then
		pass pt_control_trigger
	else
		failed pt_control_trigger "$(tr '\n' ' ' <"$log")"
	fi
	# no trigger: --snapshot=e, and stopping perf is the snapshot; as root the
	# kernel scope adds --kcore
	: >"$log"
	local scope="" want="--event=intel_pt/.*/u .*--snapshot=e"
	if [ $root -eq 1 ]; then
		scope=-trace-include-kernel
		want="--event=intel_pt/.*/uk .*--snapshot=e .*--kcore"
	fi
	FAKE_PERF_LOG=$log SNAPTRACE_PERF=$fake SNAPTRACE_ASSUME_PT=1 timeout -s KILL 30 \
		"$snap" run $scope -working-directory "$tmp/w_ptc2" -o "$tmp/ptc2.fxt.gz" \
		-- "$nest" 300 >"$tmp/ptc2.out" 2>"$tmp/ptc2.err"
	if grep -q -- "$want" "$log" &&
		[ "$(grep '^cmd:' "$log" | tr '\n' ' ')" = "cmd: enable cmd: stop " ]; then
		pass pt_control_at_exit
	else
		failed pt_control_at_exit "$(tr '\n' ' ' <"$log")"
	fi
	# A SIGUSR1 while perf writes its data (after the record loop) is only
	# forwarded: it must not kill snaptrace when the signal mask is restored.
	local spid
	: >"$log"
	FAKE_PERF_STOP_SLEEP=1 FAKE_PERF_LOG=$log SNAPTRACE_PERF=$fake SNAPTRACE_ASSUME_PT=1 \
		"$snap" run -working-directory "$tmp/w_ptc3" -o "$tmp/ptc3.fxt.gz" \
		-- "$nest" 300 >"$tmp/ptc3.out" 2>"$tmp/ptc3.err" &
	spid=$!
	bgpids+=("$spid")
	for _ in $(seq 250); do grep -qs "^cmd: stop" "$log" && break; sleep 0.02; done
	kill -USR1 "$spid"
	wait "$spid"
	rc=$?
	if [ $rc -ne 138 ] && grep -q "finished recording" "$tmp/ptc3.err"; then
		pass pt_control_signal_while_stopping
	else
		failed pt_control_signal_while_stopping "rc $rc: $(tail -2 "$tmp/ptc3.err")"
	fi
}

t_lbr_refused() {
	if grep -qw pdcm /proc/cpuinfo && [ -e /sys/bus/event_source/devices/cpu ]; then
		skip lbr_refused "this CPU has LBR"
		return
	fi
	snap lbr run -sampling -callgraph-mode lbr -- true
	if [ $rc -eq 1 ] && grep -q "needs a CPU with last branch records" "$tmp/lbr.err"; then
		pass lbr_refused
	else
		failed lbr_refused "rc $rc: $(head -2 "$tmp/lbr.err")"
	fi
}

t_run_sampling() {
	local w=$tmp/w_run r
	snap run run -sampling -timer-resolution Sample:2000 -working-directory "$w" -o "$tmp/run.fxt.gz" \
		-- "$nest" 3000 0 0 7
	if [ ! -s "$w/perf.data" ]; then
		failed run_sampling "no perf.data (rc $rc): $(grep -v '^snaptrace: \(no Intel\|finished\)' "$tmp/run.err" | head -3)"
		return
	fi
	r=$(chain_ratio "$w/perf.data" leaf inner outer main)
	if [ "${r% *}" -ge 80 ] && [ "${r#* }" -ge 50 ]; then
		pass run_sampling_perf_data
	else
		failed run_sampling_perf_data "leaf<inner<outer<main in only ${r% *}% of ${r#* } samples"
	fi
	if [ $rc -eq 7 ]; then pass run_exit_status; else failed run_exit_status "rc $rc, want 7: $(tail -2 "$tmp/run.err")"; fi
	# (one call, one slice: the ~0.1 ms calls of leaf are not told apart by
	# samples 0.5 ms apart, so there may be a single leaf slice)
	r=$(dump_nesting "$tmp/run.fxt.gz" main outer inner leaf)
	if [ "${r% *}" -ge 80 ] && [ "${r#* }" -ge 1 ]; then
		pass run_nesting
	else
		failed run_nesting "main>outer>inner>leaf in ${r% *}% of ${r#* } leaf slices"
	fi
}

t_run_signal_status() {
	# The program works a little, then kills itself with SIGTERM: snaptrace
	# exits 128+15 once the trace is written.
	snap sig run -sampling -timer-resolution Sample:2000 -o "$tmp/sig.fxt.gz" -- \
		sh -c 'i=0; while [ $i -lt 30000 ]; do i=$((i + 1)); done; kill -TERM $$'
	if [ $rc -eq 143 ]; then pass run_signal_status; else failed run_signal_status "rc $rc, want 143"; fi
}

# Signals sent to snaptrace by another process are forwarded to the program:
# SIGUSR1 makes it exit 42 (and snaptrace with it); SIGTERM ends the recording.
t_forward_signals() {
	local spid
	# (snaptrace itself in the background, not under timeout: the signal is for it)
	"$snap" run -sampling -timer-resolution Sample:2000 -o "$tmp/fwd.fxt.gz" -- \
		sh -c 'trap "exit 42" USR1; echo ready; while :; do :; done' >"$tmp/fwd.out" 2>"$tmp/fwd.err" &
	spid=$!
	bgpids+=("$spid")
	for _ in $(seq 200); do grep -qs ready "$tmp/fwd.out" && break; sleep 0.02; done
	sleep 0.3
	kill -USR1 "$spid"
	wait "$spid"
	rc=$?
	if [ $rc -eq 42 ]; then pass forward_sigusr1; else failed forward_sigusr1 "rc $rc: $(tail -2 "$tmp/fwd.err")"; fi
	"$snap" run -sampling -timer-resolution Sample:2000 -o "$tmp/fwd2.fxt.gz" -- \
		sh -c 'echo ready; while :; do :; done' >"$tmp/fwd2.out" 2>"$tmp/fwd2.err" &
	spid=$!
	bgpids+=("$spid")
	for _ in $(seq 200); do grep -qs ready "$tmp/fwd2.out" && break; sleep 0.02; done
	sleep 0.3
	kill -TERM "$spid"
	wait "$spid"
	rc=$?
	if [ $rc -eq 143 ] && [ -s "$tmp/fwd2.fxt.gz" ]; then
		pass forward_sigterm
	else
		failed forward_sigterm "rc $rc: $(tail -2 "$tmp/fwd2.err")"
	fi
}

start_target() { # start_target ARGS...: $tpid is the running nest
	rm -f "$tmp/target.out"
	"$nest" "$@" >"$tmp/target.out" 2>&1 &
	tpid=$!
	bgpids+=("$tpid")
	for _ in $(seq 100); do
		grep -q ready "$tmp/target.out" 2>/dev/null && return 0
		sleep 0.02
	done
	return 1
}

t_attach() {
	local w=$tmp/w_attach r spid
	start_target 0 || { failed attach "target did not start"; return; }
	timeout -s KILL 30 "$snap" attach -pid "$tpid" -sampling -timer-resolution Sample:2000 \
		-working-directory "$w" -o "$tmp/attach.fxt.gz" >"$tmp/attach.out" 2>"$tmp/attach.err" &
	spid=$!
	for _ in $(seq 100); do grep -qs "attached" "$tmp/attach.err" && break; sleep 0.02; done
	sleep 0.5
	kill -INT "$spid"
	wait "$spid"
	rc=$?
	if ! kill -0 "$tpid" 2>/dev/null; then
		failed attach "the target died"
		return
	fi
	if grep -q "^State:.*[tT]" /proc/"$tpid"/status; then
		failed attach "the target was left stopped"
		return
	fi
	kill "$tpid"
	wait "$tpid" 2>/dev/null
	r=$(chain_ratio "$w/perf.data" leaf inner outer main)
	if [ -s "$w/perf.data" ] && [ "${r% *}" -ge 80 ] && [ "${r#* }" -ge 50 ]; then
		pass attach_sigint
	else
		failed attach_sigint "rc $rc, ${r#* } samples, ${r% *}% nested: $(head -3 "$tmp/attach.err")"
	fi
}

# Ctrl-C twice (the second one kills snaptrace while it stops perf or decodes):
# the target survives, is not stopped, and the temporary directory still goes.
t_attach_twice() {
	local spid before
	start_target 0 || { failed attach_ctrl_c_twice "target did not start"; return; }
	timeout -s KILL 30 "$snap" attach -pid "$tpid" -sampling -timer-resolution Sample:2000 \
		-trigger trigger_here -o "$tmp/twice.fxt.gz" >"$tmp/twice.out" 2>"$tmp/twice.err" &
	spid=$!
	for _ in $(seq 100); do grep -qs "attached" "$tmp/twice.err" && break; sleep 0.02; done
	sleep 0.3
	kill -INT "$spid"
	sleep 0.05
	kill -INT "$spid" 2>/dev/null
	wait "$spid"
	sleep 0.3
	before=$(ls "$TMPDIR")
	if ! kill -0 "$tpid" 2>/dev/null; then
		failed attach_ctrl_c_twice "the target died"
	elif grep -q "^State:.*[tT]" /proc/"$tpid"/status; then
		failed attach_ctrl_c_twice "the target was left stopped"
	elif [ -n "$before" ]; then
		failed attach_ctrl_c_twice "left $before"
	else
		pass attach_ctrl_c_twice
	fi
	kill "$tpid"
	wait "$tpid" 2>/dev/null
}

# hit_ns ERRFILE: the trigger hit time printed by snaptrace, in ns.
hit_ns() { sed -n 's/.*hit by tid [0-9]* at \([0-9]*\)\.\([0-9]*\).*/\1\2/p' "$1" | head -1; }

t_trigger_run() {
	local w=$tmp/w_trig h l
	snap trig run -sampling -timer-resolution Sample:2000 -trigger trigger_here -working-directory "$w" \
		-o "$tmp/trig.fxt.gz" -- "$nest" 6000 3000
	h=$(hit_ns "$tmp/trig.err")
	if [ -z "$h" ] || [ ! -s "$w/perf.data" ]; then
		failed trigger_run "no hit or no perf.data (rc $rc): $(head -3 "$tmp/trig.err")"
		return
	fi
	l=$(last_sample_ns "$w/perf.data")
	# The ring is cut at the call: the kernel signals perf at the hit, so the
	# last sample is within a few ms of it (100 ms allowed for a loaded VM; the
	# program runs ~0.3 s longer).
	if [ "$l" -le $((h + 100000000)) ] && [ "$(ls "$w" | grep -c '^perf.data')" -eq 1 ]; then
		pass trigger_run_ends_at_hit
	else
		failed trigger_run_ends_at_hit "last sample $l vs hit $h; files: $(ls "$w" | tr '\n' ' ')"
	fi
	if "$snap" dump "$tmp/trig.fxt.gz" 2>/dev/null | grep -q "trigger_here"; then
		pass trigger_hit_marked
	else
		failed trigger_hit_marked "no trigger_here in the decoded trace"
	fi
}

t_trigger_attach() {
	local w=$tmp/w_tatt h l
	# a hit every ~0.5 s: the first one after perf records ends the recording
	start_target 0 -5000 || { failed trigger_attach "target did not start"; return; }
	snap tatt attach -pid "$tpid" -sampling -timer-resolution Sample:2000 -trigger trigger_here \
		-working-directory "$w" -o "$tmp/tatt.fxt.gz"
	h=$(hit_ns "$tmp/tatt.err")
	if ! kill -0 "$tpid" 2>/dev/null; then
		failed trigger_attach "the target died"
		return
	fi
	sleep 0.05
	if grep -q "^State:.*[tT]" /proc/"$tpid"/status; then
		failed trigger_attach "the target was left stopped"
	fi
	kill "$tpid"
	wait "$tpid" 2>/dev/null
	if [ -z "$h" ] || [ ! -s "$w/perf.data" ]; then
		failed trigger_attach "no hit or no perf.data (rc $rc): $(head -3 "$tmp/tatt.err")"
		return
	fi
	l=$(last_sample_ns "$w/perf.data")
	if [ "$l" -le $((h + 100000000)) ]; then
		pass trigger_attach_keeps_running
	else
		failed trigger_attach_keeps_running "last sample $l > hit $h + 100 ms"
	fi
}

t_trigger_thread() {
	local tid pid
	snap tthr run -sampling -timer-resolution Low -multi-thread -trigger wouter -working-directory \
		"$tmp/w_tthr" -o "$tmp/tthr.fxt.gz" -- "$nest" 2000 0 1
	tid=$(sed -n 's/.*hit by tid \([0-9]*\).*/\1/p' "$tmp/tthr.err" | head -1)
	pid=$(sed -n 's/^ready //p' "$tmp/tthr.out")
	if [ -n "$tid" ] && [ -n "$pid" ] && [ "$tid" != "$pid" ]; then
		pass trigger_other_thread
	else
		failed trigger_other_thread "hit tid '$tid', pid '$pid': $(head -3 "$tmp/tthr.err")"
	fi
}

# run: a trigger on a libc function (the program is run to its entry point
# first, so its shared libraries are mapped).
t_trigger_library() {
	# pthread_join (libc) runs once, after ~0.15 s of work
	snap tlib run -v -sampling -timer-resolution Low -trigger pthread_join -working-directory \
		"$tmp/w_tlib" -o "$tmp/tlib.fxt.gz" -- "$nest" 1500 0 1 4
	if [ $rc -eq 4 ] && grep -q "trigger pthread_join hit" "$tmp/tlib.err" &&
		grep -q "libc" "$tmp/tlib.err" && [ -s "$tmp/tlib.fxt.gz" ]; then
		pass trigger_library_function
	else
		failed trigger_library_function "rc $rc: $(grep -v '^snaptrace: \(no Intel\|finished\|decoding\)' "$tmp/tlib.err" | head -3)"
	fi
}

# attach: a thread created after snaptrace attached calls the trigger.
t_trigger_late_thread() {
	local tid
	start_target 0 0 2 || { failed trigger_late_thread "target did not start"; return; }
	snap tlate attach -pid "$tpid" -sampling -timer-resolution Low -trigger wouter \
		-o "$tmp/tlate.fxt.gz"
	tid=$(sed -n 's/.*hit by tid \([0-9]*\).*/\1/p' "$tmp/tlate.err" | head -1)
	if [ -n "$tid" ] && [ "$tid" != "$tpid" ] && kill -0 "$tpid" 2>/dev/null; then
		pass trigger_late_thread
	else
		failed trigger_late_thread "rc $rc, hit tid '$tid', pid $tpid: $(head -3 "$tmp/tlate.err")"
	fi
	kill "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
}

# attach to two processes (PIE: the function sits at different addresses);
# only the second calls the trigger.
t_trigger_two_pids() {
	local a b tid
	start_target 0 || { failed trigger_two_pids "target did not start"; return; }
	a=$tpid
	start_target 0 -3000 || { failed trigger_two_pids "target did not start"; return; }
	b=$tpid
	snap t2 attach -pid "$a,$b" -sampling -timer-resolution Low -trigger trigger_here \
		-o "$tmp/t2.fxt.gz"
	tid=$(sed -n 's/.*hit by tid \([0-9]*\).*/\1/p' "$tmp/t2.err" | head -1)
	if [ "$tid" = "$b" ] && [ $rc -eq 0 ] && kill -0 "$a" 2>/dev/null && kill -0 "$b" 2>/dev/null; then
		pass trigger_two_pids
	else
		failed trigger_two_pids "rc $rc, hit tid '$tid', pids $a $b: $(head -3 "$tmp/t2.err")"
	fi
	kill "$a" "$b" 2>/dev/null
	wait "$a" "$b" 2>/dev/null
}

t_trigger_never() {
	# twice in the same -working-directory: the second run replaces the first's files
	local rc0
	snap tnev0 run -sampling -timer-resolution Low -working-directory "$tmp/w_tnev" \
		-o "$tmp/tnev0.fxt.gz" -- "$nest" 300 0
	rc0=$rc
	snap tnev run -sampling -timer-resolution Low -trigger trigger_here -working-directory \
		"$tmp/w_tnev" -o "$tmp/tnev.fxt.gz" -- "$nest" 300 0
	if [ $rc0 -eq 0 ] && [ $rc -eq 0 ]; then
		pass workdir_reused
	else
		failed workdir_reused "rc $rc0 then $rc: $(tail -1 "$tmp/tnev.err")"
	fi
	if grep -q "trigger trigger_here never fired; the trace is the snapshot taken at exit" \
		"$tmp/tnev.err" && [ -s "$tmp/w_tnev/perf.data" ]; then
		pass trigger_never_fired
	else
		failed trigger_never_fired "rc $rc: $(head -3 "$tmp/tnev.err")"
	fi
	snap tbad run -sampling -trigger no_such_function -- "$nest" 10
	# The program must not have run at all (nest prints "ready" first).
	if [ $rc -eq 1 ] && grep -q "no function of that name in" "$tmp/tbad.err" &&
		! grep -q ready "$tmp/tbad.out"; then
		pass trigger_unknown_symbol
	else
		failed trigger_unknown_symbol "rc $rc: $(head -2 "$tmp/tbad.err") $(head -1 "$tmp/tbad.out")"
	fi
}

t_trigger_picker() {
	if ! command -v script >/dev/null || command -v fzf >/dev/null; then
		skip trigger_picker "needs script(1) for a terminal, and no fzf (the list picker)"
		return
	fi
	# -trigger ? lists the functions on the terminal and reads the choice there.
	(sleep 0.5; printf 'trigger_here\n') | timeout -s KILL 30 script -qec \
		"$snap run -sampling -timer-resolution Low -trigger '?' -working-directory $tmp/w_pick -o $tmp/pick.fxt.gz -- $nest 3000 1500" \
		/dev/null >"$tmp/pick.out" 2>&1
	if grep -q "number or name" "$tmp/pick.out" && grep -q "trigger trigger_here hit" "$tmp/pick.out"; then
		pass trigger_picker
	else
		failed trigger_picker "$(tail -3 "$tmp/pick.out" | tr '\r\n' '  ')"
	fi
}

t_multi_snapshot() {
	local n
	snap msnap run -sampling -timer-resolution Low -trigger trigger_here -multi-snapshot \
		-working-directory "$tmp/w_msnap" -o "$tmp/msnap.fxt.gz" -- "$nest" 3000 -1000
	n=$(ls "$tmp/w_msnap" | grep -c '^perf.data')
	if [ "$(grep -c 'snapshot taken' "$tmp/msnap.err")" -ge 2 ] && [ "$n" -ge 2 ]; then
		pass multi_snapshot
	else
		failed multi_snapshot "$n data files: $(grep -c 'snapshot taken' "$tmp/msnap.err") snapshots"
	fi
	# every snapshot in one trace, every hit marked; decode of the directory agrees
	local hits=0
	[ -s "$tmp/msnap.fxt.gz" ] &&
		hits=$("$snap" dump "$tmp/msnap.fxt.gz" | grep -c '^complete .*name="hit trigger_here"')
	if [ $rc -eq 0 ] && [ "$hits" -ge 2 ] && [ ! -e "$tmp/msnap.1.fxt.gz" ] &&
		grep -q "decoding $n snapshots" "$tmp/msnap.err" &&
		"$snap" dump -check "$tmp/msnap.fxt.gz" >/dev/null 2>&1 &&
		"$snap" decode -q -working-directory "$tmp/w_msnap" -o "$tmp/msnap2.fxt" &&
		[ "$("$snap" dump "$tmp/msnap2.fxt" | grep -c '^begin \|^end ')" = \
			"$("$snap" dump "$tmp/msnap.fxt.gz" | grep -c '^begin \|^end ')" ]; then
		pass multi_snapshot_one_trace
	else
		failed multi_snapshot_one_trace "rc $rc, $hits hits: $(ls "$tmp" | grep msnap | tr '\n' ' ')"
	fi
}

t_multi_thread() {
	local n
	snap mt run -sampling -timer-resolution Sample:2000 -multi-thread -working-directory "$tmp/w_mt" \
		-o "$tmp/mt.fxt.gz" -- "$nest" 2000 0 1
	n=$(perf script -i "$tmp/w_mt/perf.data" -F tid -G 2>/dev/null | sort -u | grep -c .)
	r=$(chain_ratio "$tmp/w_mt/perf.data" wleaf wouter)
	if [ "$n" -ge 2 ] && [ "${r#* }" -ge 20 ] && [ "${r% *}" -ge 80 ]; then
		pass multi_thread
	else
		failed multi_thread "$n threads, ${r#* } wleaf samples (${r% *}% under wouter)"
	fi
	# In the timeline: worker > wouter > wleaf on the second thread, main > ... on the first.
	local wr mr other
	wr=$(dump_nesting "$tmp/mt.fxt.gz" worker wouter wleaf)
	mr=$(dump_nesting "$tmp/mt.fxt.gz" main outer inner leaf)
	other=$("$snap" dump "$tmp/mt.fxt.gz" 2>/dev/null | grep '^begin .*name="wleaf"' |
		grep -vc 'pid=\([0-9]*\) tid=\1 ')
	if [ "${wr#* }" -ge 1 ] && [ "${wr% *}" -ge 80 ] && [ "${mr#* }" -ge 1 ] &&
		[ "${mr% *}" -ge 80 ] && [ "$other" = "${wr#* }" ]; then
		pass multi_thread_nesting
	else
		failed multi_thread_nesting "wleaf: $wr (on the second thread: $other), leaf: $mr"
	fi
	snap st run -sampling -timer-resolution Sample:2000 -working-directory "$tmp/w_st" \
		-o "$tmp/st.fxt.gz" -- "$nest" 1000 0 1
	n=$(perf script -i "$tmp/w_st/perf.data" -F tid -G 2>/dev/null | sort -u | grep -c .)
	if [ "$n" -eq 1 ]; then pass single_thread_default; else failed single_thread_default "$n threads"; fi
}

kernel_frames() { perf script -i "$1" -F ip,sym,dso 2>/dev/null | grep -c "kernel.kallsyms"; }

t_kernel() {
	local k u
	if [ $root -eq 0 ] && [ "$paranoid" -gt 1 ]; then
		skip kernel_frames "needs root or perf_event_paranoid <= 1"
		return
	fi
	snap kern run -sampling -timer-resolution Sample:2000 -trace-include-kernel -working-directory \
		"$tmp/w_kern" -o "$tmp/kern.fxt.gz" -- "$nest" 1500 0 0 0 1
	snap user run -sampling -timer-resolution Sample:2000 -working-directory "$tmp/w_user" \
		-o "$tmp/user.fxt.gz" -- "$nest" 1500 0 0 0 1
	k=$(kernel_frames "$tmp/w_kern/perf.data")
	u=$(kernel_frames "$tmp/w_user/perf.data")
	if [ "$k" -gt 0 ] && [ "$u" -eq 0 ]; then
		pass kernel_frames
	else
		failed kernel_frames "$k kernel frames with -trace-include-kernel, $u without"
	fi
}

t_kernel_refused() {
	local who=""
	if [ $root -eq 1 ]; then
		command -v setpriv >/dev/null && who="setpriv --reuid=65534 --regid=65534 --clear-groups"
	fi
	if [ "$paranoid" -le 1 ]; then
		skip kernel_refused "perf_event_paranoid is $paranoid: non-root users may trace the kernel"
		return
	fi
	if [ $root -eq 1 ] && [ -z "$who" ]; then
		skip kernel_refused "no setpriv to drop root"
		return
	fi
	$who "$snap" run -trace-include-kernel -- true >"$tmp/kref.out" 2>"$tmp/kref.err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q "snaptrace run: -trace-include-kernel needs root or kernel.perf_event_paranoid <= 1 (now $paranoid); run as root or: sudo sysctl kernel.perf_event_paranoid=1" "$tmp/kref.err"; then
		pass kernel_refused_non_root
	elif grep -q "Permission denied" "$tmp/kref.err"; then
		skip kernel_refused_non_root "nobody cannot execute $snap (directory permissions)"
	else
		failed kernel_refused_non_root "rc $rc: $(head -2 "$tmp/kref.err")"
	fi
}

# A non-root user records its own program, with a trigger (paranoid 2 allows
# user-space sampling and hardware breakpoints on one's own processes).
t_non_root() {
	local d=$tmp/nobody
	if [ $root -eq 0 ] || ! command -v setpriv >/dev/null; then
		skip non_root_run "needs root and setpriv to become nobody"
		return
	fi
	chmod 711 "$tmp"
	mkdir -p "$d"
	chmod 777 "$d"
	(cd "$d" && TMPDIR=$d timeout -s KILL 30 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$snap" run -trigger trigger_here -timer-resolution Low -o "$d/nr.fxt.gz" -- "$nest" 3000 1500 0 6) \
		>"$tmp/nr.out" 2>"$tmp/nr.err"
	rc=$?
	if grep -q "Permission denied" "$tmp/nr.err"; then
		skip non_root_run "nobody cannot execute $snap (directory permissions)"
	elif [ $rc -eq 6 ] && [ -s "$d/nr.fxt.gz" ] && grep -q "hit by tid" "$tmp/nr.err" &&
		[ -z "$(ls -d "$d"/snaptrace.* 2>/dev/null)" ]; then
		pass non_root_run_trigger
	else
		failed non_root_run_trigger "rc $rc: $(grep -v '^snaptrace: \(no Intel\|finished\|decoding\)' "$tmp/nr.err" | head -3)"
	fi
}

t_private_workdir() {
	local d mode
	snap priv run -v -sampling -timer-resolution Low -o "$tmp/priv.fxt.gz" -- sh -c 'stat -c "%a %U" "$TMPDIR"/snaptrace.*'
	d=$(sed -n 's/^snaptrace: working directory //p' "$tmp/priv.err")
	mode=$(grep -c "^700 $(id -un)" "$tmp/priv.out")
	if [ -n "$d" ] && [ "$mode" -ge 1 ] && [ ! -e "$d" ]; then
		pass private_workdir_removed
	else
		failed private_workdir_removed "dir '$d' mode lines $mode, exists after: $([ -e "$d" ] && echo yes)"
	fi
}

# ---- issue 9: sampling timelines that never lie ----

# both_paths NAME ARGS...: runs snaptrace twice, through the perf plugin and
# with -no-dlfilter (output $tmp/NAME.fxt.gz and $tmp/NAME-text.fxt.gz,
# working directories $tmp/w_NAME and $tmp/w_NAME-text); rc of each in rc1, rc2.
both_paths() {
	local name=$1
	shift
	snap "$name" run -working-directory "$tmp/w_$name" -o "$tmp/$name.fxt.gz" "$@"
	rc1=$rc
	snap "$name-text" run -no-dlfilter -working-directory "$tmp/w_$name-text" \
		-o "$tmp/$name-text.fxt.gz" "$@"
	rc2=$rc
}

# -callgraph-mode auto: fp for a program built with frame pointers, dwarf
# for -O2 -fomit-frame-pointer; dwarf keeps main > outer > inner > leaf.
t_callgraph_auto() {
	local r p
	snap cgfp run -print-perf-commands -- "$nest" 10
	if grep -q "^snaptrace: -callgraph-mode fp: nest keeps frame pointers" "$tmp/cgfp.err" &&
		grep -q -- "--switch-events --per-thread -t PID .*--call-graph fp" "$tmp/cgfp.out"; then
		pass callgraph_auto_fp
	else
		failed callgraph_auto_fp "$(cat "$tmp/cgfp.err" "$tmp/cgfp.out" | head -3)"
	fi
	both_paths cgo -- "$progs/omitfp" 3000 5
	if ! grep -q "^snaptrace: -callgraph-mode dwarf: omitfp has no frame pointers" "$tmp/cgo.err"; then
		failed callgraph_auto_dwarf "$(head -3 "$tmp/cgo.err")"
		return
	fi
	r=$(chain_ratio "$tmp/w_cgo/perf.data" leaf inner outer main)
	if [ $rc1 -eq 5 ] && [ "${r% *}" -ge 80 ] && [ "${r#* }" -ge 50 ] &&
		grep -q "dwarf call graphs copy [0-9]* KiB of stack per sample into a .* ring: room for ~[0-9]* samples" "$tmp/cgo.err"; then
		pass callgraph_auto_dwarf
	else
		failed callgraph_auto_dwarf "rc $rc1, leaf<inner<outer<main in ${r% *}% of ${r#* } samples"
	fi
	for p in cgo cgo-text; do
		r=$(dump_nesting "$tmp/$p.fxt.gz" main outer inner leaf)
		if [ "${r% *}" -ge 80 ] && [ "${r#* }" -ge 1 ]; then
			pass "callgraph_auto_dwarf_nesting_$p"
		else
			failed "callgraph_auto_dwarf_nesting_$p" "main>outer>inner>leaf in ${r% *}% of ${r#* } leaf slices"
		fi
	done
}

# Off-CPU time: spin_a (80 ms) is not painted over the 300 ms sleep, and
# the sleep shows as its own slice (the blocking chain, or [off-CPU]).
t_offcpu() {
	local p n long spin
	both_paths off -- "$progs/sleeper" 6
	n=$(perf script -i "$tmp/w_off/perf.data" --show-switch-events -F tid 2>/dev/null |
		grep -c "PERF_RECORD_SWITCH")
	if [ $rc1 -eq 6 ] && [ "$n" -ge 2 ]; then
		pass offcpu_switch_events_recorded
	else
		failed offcpu_switch_events_recorded "rc $rc1, $n switch records"
	fi
	if [ $root -eq 1 ]; then
		# the blocking chain, from the sched_switch samples
		if perf script -i "$tmp/w_off/perf.data" -F event,ip,sym 2>/dev/null |
			awk 'BEGIN { RS = "" } /sched_switch/ && /nanosleep/ && /outer/ && /main/ { f = 1 } END { exit !f }'; then
			pass offcpu_blocking_chain_recorded
		else
			failed offcpu_blocking_chain_recorded "no sched_switch sample in nanosleep under outer > main"
		fi
	else
		skip offcpu_blocking_chain_recorded "sched:sched_switch needs root"
	fi
	for p in off off-text; do
		spin=$(slices "$tmp/$p.fxt.gz" | awk '$3 ~ /(^|>)spin_a$/ && $2 > m { m = $2 } END { print m + 0 }')
		long=$(slices "$tmp/$p.fxt.gz" | grep -E ">outer>.*(nap|nanosleep|off-CPU)[^>]*$|\[off-CPU\]$" |
			awk '$2 >= 200' | head -1)
		if [ "$spin" -gt 0 ] && [ "$spin" -lt 250 ] && [ -n "$long" ]; then
			pass "offcpu_sleep_shown_$p"
		else
			failed "offcpu_sleep_shown_$p" "longest spin_a ${spin} ms (want < 250), sleep slice: '${long}'"
		fi
	done
}

# Track names follow pthread_setname_np and prctl(PR_SET_NAME).
t_thread_names() {
	local p pid
	both_paths tn -multi-thread -- "$progs/tnames" 300
	for p in tn tn-text; do
		pid=$(sed -n 's/^ready //p' "$tmp/$p.out")
		if "$snap" dump "$tmp/$p.fxt.gz" 2>/dev/null |
			grep -q "^thread .*name=\"myworker \[pid=$pid\] \[tid=[0-9]*\]\""; then
			pass "thread_names_$p"
		else
			failed "thread_names_$p" "no myworker track: $("$snap" dump "$tmp/$p.fxt.gz" 2>&1 | grep '^thread' | head -3 | tr '\n' ' ')"
		fi
	done
	# without -multi-thread the worker ran untraced: say so
	snap tn1 run -o "$tmp/tn1.fxt.gz" -- "$progs/tnames" 300
	if grep -q "other threads ran untraced (only the main thread is recorded); -multi-thread records them" "$tmp/tn1.err"; then
		pass untraced_threads_hint
	else
		failed untraced_threads_hint "$(tail -2 "$tmp/tn1.err")"
	fi
	# a shell that runs the work in a child process
	snap tn2 run -o "$tmp/tn2.fxt.gz" -- sh -c "$nest 3000; true"
	if grep -q "child processes ran untraced (only the main thread is recorded); -multi-thread records them" "$tmp/tn2.err"; then
		pass untraced_children_hint
	else
		failed untraced_children_hint "$(tail -2 "$tmp/tn2.err")"
	fi
}

# What the trace covers: one line; a small ring says the flag that keeps more.
t_coverage() {
	snap cov run -o "$tmp/cov.fxt.gz" -- "$nest" 1000
	if grep -q "^snaptrace: the trace covers [0-9.]* s of the [0-9.]* s recording ([0-9]* samples)$" "$tmp/cov.err"; then
		pass coverage_line
	else
		failed coverage_line "$(tail -2 "$tmp/cov.err")"
	fi
	snap cov2 run -snapshot-size 64K -o "$tmp/cov2.fxt.gz" -- "$nest" 6000
	if grep -q "^snaptrace: the trace covers the last [0-9.]* s of the [0-9.]* s recording ([0-9]* samples); -snapshot-size 256K keeps more, -full-execution keeps all$" "$tmp/cov2.err"; then
		pass coverage_ring_full
	else
		failed coverage_ring_full "$(tail -2 "$tmp/cov2.err")"
	fi
}

# No run is lost: -o is checked before the program starts; a trace that
# cannot be written leaves perf.data where the message says.
t_output_checked() {
	snap om run -o "$tmp/missing/dir/x.fxt.gz" -- "$nest" 10
	if [ $rc -eq 1 ] && [ ! -s "$tmp/om.out" ] && [ "$(grep -c . "$tmp/om.err")" -le 2 ] &&
		grep -q "cannot write the trace to $tmp/missing/dir/x.fxt.gz: $tmp/missing/dir does not exist" "$tmp/om.err"; then
		pass output_missing_dir_refused
	else
		failed output_missing_dir_refused "rc $rc: $(cat "$tmp/om.out" "$tmp/om.err" | head -3)"
	fi
	snap od run -o "$tmp" -- "$nest" 10
	if [ $rc -eq 1 ] && [ ! -s "$tmp/od.out" ] && grep -q -- "-o $tmp is a directory" "$tmp/od.err"; then
		pass output_directory_refused
	else
		failed output_directory_refused "rc $rc: $(head -2 "$tmp/od.err")"
	fi
	local who="" ro=$tmp/ro
	mkdir -p "$ro"
	chmod 555 "$ro"
	chmod 711 "$tmp"
	[ $root -eq 1 ] && command -v setpriv >/dev/null && who="setpriv --reuid=65534 --regid=65534 --clear-groups"
	if [ $root -eq 1 ] && [ -z "$who" ]; then
		skip output_readonly_refused "no setpriv to drop root"
	else
		$who "$snap" run -o "$ro/x.fxt.gz" -- "$nest" 10 >"$tmp/oro.out" 2>"$tmp/oro.err"
		rc=$?
		if grep -q "Permission denied" "$tmp/oro.err" && ! grep -q "no write access" "$tmp/oro.err"; then
			skip output_readonly_refused "nobody cannot execute $snap (directory permissions)"
		elif [ $rc -eq 1 ] && [ ! -s "$tmp/oro.out" ] && grep -q "no write access to $ro" "$tmp/oro.err"; then
			pass output_readonly_refused
		else
			failed output_readonly_refused "rc $rc: $(head -2 "$tmp/oro.err")"
		fi
	fi
	# the directory vanishes while the program runs: the recording is kept
	local gone=$tmp/gone kept
	mkdir -p "$gone"
	snap og run -o "$gone/x.fxt.gz" -- sh -c "rmdir $gone; $nest 1000"
	kept=$(sed -n 's/.*the recording is kept in \([^;]*\); decode it with: snaptrace decode .* -o FILE$/\1/p' "$tmp/og.err")
	if [ $rc -eq 1 ] && [ -n "$kept" ] && [ -s "$kept" ] &&
		"$snap" decode -q -o "$tmp/og2.fxt.gz" "$kept" && [ -s "$tmp/og2.fxt.gz" ]; then
		pass output_failure_keeps_perf_data
	else
		failed output_failure_keeps_perf_data "rc $rc, kept '$kept': $(tail -2 "$tmp/og.err")"
	fi
	[ -n "$kept" ] && rm -rf "$(dirname "$kept")"
}

# A program shorter than a sample: its status, one clear line, no error,
# and no message naming a file that no longer exists.
t_too_short() {
	local p f bad=""
	for p in "" -no-dlfilter; do
		snap short run $p -o "$tmp/short.fxt.gz" -- "$progs/quick"
		for f in $(grep -o "\(^\| \)/[^ :;,)]*" "$tmp/short.err"); do
			[ -e "$f" ] || [ "$f" = "$tmp/short.fxt.gz" ] || bad="$bad $f"
		done
		if [ $rc -eq 3 ] && [ -z "$bad" ] && ! grep -qi "error\|failed" "$tmp/short.err" &&
			{ [ -s "$tmp/short.fxt.gz" ] ||
				grep -q "no trace written: $progs/quick ended before its first sample" "$tmp/short.err"; }; then
			pass "too_short_to_sample$p"
		else
			failed "too_short_to_sample$p" "rc $rc, names gone:$bad: $(tail -2 "$tmp/short.err")"
		fi
		rm -f "$tmp/short.fxt.gz"
	done
}

# A trigger hit before the first sample still gives a trace with the hit.
t_trigger_at_once() {
	local p
	both_paths early -trigger hit_me -- "$progs/early"
	for p in early early-text; do
		if [ -s "$tmp/$p.fxt.gz" ] &&
			"$snap" dump "$tmp/$p.fxt.gz" 2>/dev/null | grep -q '^complete .*name="hit hit_me"'; then
			pass "trigger_at_once_marked_$p"
		else
			failed "trigger_at_once_marked_$p" "$(tail -2 "$tmp/$p.err")"
		fi
	done
	if [ $rc1 -eq 4 ] && [ $rc2 -eq 4 ]; then pass trigger_at_once_status; else failed trigger_at_once_status "rc $rc1 $rc2, want 4"; fi
}

# Debian's python3 with default flags: dwarf is picked and the interpreter's
# frames nest under Py_RunMain.
t_python3() {
	local p r
	if [ ! -x /usr/bin/python3 ]; then
		skip python3_stacks "no /usr/bin/python3 (Debian package python3)"
		return
	fi
	cat >"$tmp/busy.py" <<'PY'
def f(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def g():
    return sum(f(20000) for _ in range(60))
g()
PY
	both_paths py -- /usr/bin/python3 "$tmp/busy.py"
	if ! grep -q "^snaptrace: -callgraph-mode dwarf: python3" "$tmp/py.err"; then
		failed python3_stacks "not dwarf: $(head -3 "$tmp/py.err")"
		return
	fi
	for p in py py-text; do
		r=$(slices "$tmp/$p.fxt.gz" | grep -c "Py_RunMain>.*_PyEval_EvalFrameDefault")
		if [ "$r" -ge 1 ]; then
			pass "python3_stacks_$p"
		else
			failed "python3_stacks_$p" "no _PyEval_EvalFrameDefault under Py_RunMain: $(tail -2 "$tmp/$p.err")"
		fi
	done
}

t_leftovers() {
	local now
	sleep 0.2
	now=$(ls "$TMPDIR")
	if [ -z "$now" ]; then pass no_tmpdirs_left; else failed no_tmpdirs_left "$now"; fi
	# the traced programs, and every perf this suite started (they all write or read under $tmp)
	if pgrep -f "$nest|(record -o|script -i) $tmp/" >/dev/null; then
		failed no_processes_left "$(pgrep -af "$nest|(record -o|script -i) $tmp/" | head -3)"
	else
		pass no_processes_left
	fi
}

# E2E_ONLY="t_offcpu t_python3" runs just those (while developing).
if [ -n "${E2E_ONLY:-}" ]; then
	for t in $E2E_ONLY; do "$t"; done
	t_leftovers
	exit $fail
fi
t_usage
t_print_cmds
t_doctor
t_pt_missing
t_pt_control
t_lbr_refused
if [ -n "$noperf" ]; then
	for t in run_sampling attach_sigint trigger_run trigger_attach multi_thread kernel_frames; do
		skip $t "$noperf"
	done
else
	t_run_sampling
	t_run_signal_status
	t_forward_signals
	t_attach
	t_attach_twice
	t_trigger_run
	t_trigger_attach
	t_trigger_thread
	t_trigger_late_thread
	t_trigger_library
	t_trigger_two_pids
	t_trigger_never
	t_trigger_picker
	t_multi_snapshot
	t_multi_thread
	t_kernel
	t_private_workdir
	t_non_root
	t_callgraph_auto
	t_offcpu
	t_thread_names
	t_coverage
	t_output_checked
	t_too_short
	t_trigger_at_once
	t_python3
fi
t_kernel_refused
t_leftovers
exit $fail
