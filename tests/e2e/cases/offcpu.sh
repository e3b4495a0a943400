# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

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
