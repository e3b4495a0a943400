# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

t_pt_missing() {
	if [ -e /sys/bus/event_source/devices/intel_pt ]; then
		skip pt_missing "this machine has Intel PT"
		return
	fi
	snap ptmiss run -pt -- true
	if [ $rc -eq 1 ] && grep -q "Intel PT is not available on this machine" "$tmp/ptmiss.err"; then
		pass pt_missing
	else
		failed pt_missing "rc $rc: $(head -2 "$tmp/ptmiss.err")"
	fi
	# (a real run: -print-perf-commands prints the sampling command without the notice)
	snap ptmiss2 run -timer-resolution Low -o "$tmp/ptmiss2.fxt.gz" -- true
	if grep -q "no Intel PT on this machine, using stack sampling" "$tmp/ptmiss2.err"; then
		pass pt_fallback_notice
	else
		failed pt_fallback_notice "$(head -2 "$tmp/ptmiss2.err")"
	fi
}
