# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# A trigger hit before the first sample still gives a trace with the hit.
t_trigger_at_once() {
	local p
	both_paths early -trigger hit_me -- "$progs/early"
	for p in early early-text; do
		if [ -s "$tmp/$p.fxt.gz" ] &&
			"$snap" dump "$tmp/$p.fxt.gz" 2>/dev/null | grep -q '^complete .*name="hit hit_me"'; then
			pass "trigger_at_once_marked_$p"
		else
			failed "trigger_at_once_marked_$p" "$(tail -2 "$tmp/$p.err")"
		fi
	done
	if [ $rc1 -eq 4 ] && [ $rc2 -eq 4 ]; then pass trigger_at_once_status; else failed trigger_at_once_status "rc $rc1 $rc2, want 4"; fi
}
