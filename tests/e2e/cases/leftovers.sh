# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

t_leftovers() {
	local now
	# (processes killed by the cases may still be ending: up to 10 s)
	for _ in $(seq 500); do
		now=$(ls "$TMPDIR")
		[ -z "$now" ] && break
		sleep 0.02
	done
	if [ -z "$now" ]; then pass no_tmpdirs_left; else failed no_tmpdirs_left "$now"; fi
	# the traced programs (and nobody's copies), and every perf this suite started
	# (they all write or read under $tmp)
	local pat="$nest|(record -o|script -i) $tmp/${nbin:+|$nbin/}"
	for _ in $(seq 500); do
		pgrep -f "$pat" >/dev/null || break
		sleep 0.02
	done
	if pgrep -f "$pat" >/dev/null; then
		failed no_processes_left "$(pgrep -af "$pat" | head -3)"
	else
		pass no_processes_left
	fi
}
