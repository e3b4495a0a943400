# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

t_leftovers() {
	local now
	sleep 0.2
	now=$(ls "$TMPDIR")
	if [ -z "$now" ]; then pass no_tmpdirs_left; else failed no_tmpdirs_left "$now"; fi
	# the traced programs (and nobody's copies), and every perf this suite started
	# (they all write or read under $tmp)
	local pat="$nest|(record -o|script -i) $tmp/${nbin:+|$nbin/}"
	if pgrep -f "$pat" >/dev/null; then
		failed no_processes_left "$(pgrep -af "$pat" | head -3)"
	else
		pass no_processes_left
	fi
}
