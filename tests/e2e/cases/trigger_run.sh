# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

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
