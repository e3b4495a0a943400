# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

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
	# (and says which signal by its name too)
	if [ $rc -eq 143 ] && grep -q "^snaptrace: sh was killed by signal 15 (Terminated)$" "$tmp/sig.err"; then
		pass run_signal_status
	else
		failed run_signal_status "rc $rc, want 143: $(tail -1 "$tmp/sig.err")"
	fi
}
