# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

t_leftovers() {
	local now
	sleep 0.2
	now=$(ls "$TMPDIR")
	if [ -z "$now" ]; then pass no_tmpdirs_left; else failed no_tmpdirs_left "$now"; fi
	# the traced programs, and every perf this suite started (they all write or read under $tmp)
	if pgrep -f "$nest|(record -o|script -i) $tmp/" >/dev/null; then
		failed no_processes_left "$(pgrep -af "$nest|(record -o|script -i) $tmp/" | head -3)"
	else
		pass no_processes_left
	fi
}
