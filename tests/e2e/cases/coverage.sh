# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

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
