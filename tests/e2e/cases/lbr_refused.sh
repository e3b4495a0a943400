# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

t_lbr_refused() {
	if grep -qw pdcm /proc/cpuinfo && [ -e /sys/bus/event_source/devices/cpu ]; then
		skip lbr_refused "this CPU has LBR"
		return
	fi
	snap lbr run -sampling -callgraph-mode lbr -- true
	if [ $rc -eq 1 ] && grep -q "needs a CPU with last branch records" "$tmp/lbr.err"; then
		pass lbr_refused
	else
		failed lbr_refused "rc $rc: $(head -2 "$tmp/lbr.err")"
	fi
}
