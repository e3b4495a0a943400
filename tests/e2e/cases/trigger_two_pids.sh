# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

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
