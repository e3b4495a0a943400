# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

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
	# with -full-execution the trace is the whole run, not a snapshot
	snap tnevf run -sampling -timer-resolution Low -trigger trigger_here -full-execution \
		-o "$tmp/tnevf.fxt.gz" -- "$nest" 300 0
	if [ $rc -eq 0 ] && grep -q "trigger trigger_here never fired; the trace is the whole run, to exit$" \
		"$tmp/tnevf.err"; then
		pass trigger_never_full
	else
		failed trigger_never_full "rc $rc: $(grep never "$tmp/tnevf.err")"
	fi
	snap tbad run -sampling -trigger no_such_function -- "$nest" 10
	# The program must not have run at all (nest prints "ready" first).
	if [ $rc -eq 1 ] && grep -q "no function of that name in" "$tmp/tbad.err" &&
		! grep -q ready "$tmp/tbad.out"; then
		pass trigger_unknown_symbol
	else
		failed trigger_unknown_symbol "rc $rc: $(head -2 "$tmp/tbad.err") $(head -1 "$tmp/tbad.out")"
	fi
	# -trigger . in a program without a stop indicator: says what . means and the fix
	snap tdot run -sampling -trigger . -- "$nest" 10
	if [ $rc -eq 1 ] && grep -q "^snaptrace run: -trigger \.: neither snaptrace_stop_indicator nor magic_trace_stop_indicator is a function of .*: define it" "$tmp/tdot.err"; then
		pass trigger_dot_missing
	else
		failed trigger_dot_missing "rc $rc: $(head -2 "$tmp/tdot.err")"
	fi
}
