# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

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
	for _ in $(seq 1000); do grep -qs "^cmd: stop" "$log" && break; sleep 0.02; done
	kill -USR1 "$spid"
	wait "$spid"
	rc=$?
	if [ $rc -ne 138 ] && grep -q "finished recording" "$tmp/ptc3.err"; then
		pass pt_control_signal_while_stopping
	else
		failed pt_control_signal_while_stopping "rc $rc: $(tail -2 "$tmp/ptc3.err")"
	fi
}
