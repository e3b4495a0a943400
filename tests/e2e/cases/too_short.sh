# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# A program shorter than a sample: its status, one clear line, no error,
# and no message naming a file that no longer exists.
t_too_short() {
	local p f bad=""
	for p in "" -no-dlfilter; do
		snap short run $p -o "$tmp/short.fxt.gz" -- "$progs/quick"
		for f in $(grep -o "\(^\| \)/[^ :;,)]*" "$tmp/short.err"); do
			[ -e "$f" ] || [ "$f" = "$tmp/short.fxt.gz" ] || bad="$bad $f"
		done
		if [ $rc -eq 3 ] && [ -z "$bad" ] && ! grep -qi "error\|failed" "$tmp/short.err" &&
			{ [ -s "$tmp/short.fxt.gz" ] ||
				grep -q "no trace written: $progs/quick ended before its first sample" "$tmp/short.err"; }; then
			pass "too_short_to_sample$p"
		else
			failed "too_short_to_sample$p" "rc $rc, names gone:$bad: $(tail -2 "$tmp/short.err")"
		fi
		rm -f "$tmp/short.fxt.gz"
	done
}
