# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

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
