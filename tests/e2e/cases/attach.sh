# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

t_attach() {
	local w=$tmp/w_attach r spid
	start_target 0 || { failed attach "target did not start"; return; }
	timeout -s KILL 30 "$snap" attach -pid "$tpid" -sampling -timer-resolution Sample:2000 \
		-working-directory "$w" -o "$tmp/attach.fxt.gz" >"$tmp/attach.out" 2>"$tmp/attach.err" &
	spid=$!
	for _ in $(seq 1000); do grep -qs "attached" "$tmp/attach.err" && break; sleep 0.02; done
	cpu_wait "$tpid" 250 # ~500 samples at 2 kHz, however busy the machine
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
	for _ in $(seq 1000); do grep -qs "attached" "$tmp/twice.err" && break; sleep 0.02; done
	sleep 0.3
	kill -INT "$spid"
	sleep 0.05
	kill -INT "$spid" 2>/dev/null
	wait "$spid"
	for _ in $(seq 500); do # (perf, its child, may still be ending)
		before=$(ls "$TMPDIR")
		[ -z "$before" ] && break
		sleep 0.02
	done
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

# A process that sleeps the whole time: no trace, and one line that says why
# (less than a sample period on a CPU; not "did not run": an acceptor that runs
# microseconds between its waits takes no sample either) and what to do.
t_attach_idle() {
	local spid ipid
	sleep 60 &
	ipid=$!
	timeout -s KILL 30 "$snap" attach -pid "$ipid" -sampling -o "$tmp/idle.fxt.gz" \
		>"$tmp/idle.out" 2>"$tmp/idle.err" &
	spid=$!
	for _ in $(seq 1000); do grep -qs "attached" "$tmp/idle.err" && break; sleep 0.02; done
	sleep 0.2
	# (to snaptrace itself: timeout would also signal its whole group, a second Ctrl-C)
	kill -INT "$(pgrep -P "$spid" | head -1)"
	wait "$spid"
	rc=$?
	kill "$ipid"
	wait "$ipid" 2>/dev/null
	if [ $rc -eq 0 ] && [ ! -e "$tmp/idle.fxt.gz" ] && grep -q "^snaptrace attach: no trace written: no sample was taken (the traced thread spent less than a sample period, [0-9]* us, on a CPU at a time while recorded); record longer or raise -timer-resolution$" "$tmp/idle.err"; then
		pass attach_idle
	else
		failed attach_idle "rc $rc: $(tail -1 "$tmp/idle.err")"
	fi
}
