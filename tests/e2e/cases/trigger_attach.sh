# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

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
