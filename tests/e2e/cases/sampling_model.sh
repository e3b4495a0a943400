# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# The sampling model (docs/sampling.md) on a real recording of progs/wakeups.c:
# bursts shorter than a sample period go to crunch (or [on-CPU: unsampled]),
# never to the read they woke from; the 24 request threads, born and exited
# inside the recording, are whole calls in the report (handle counted >= 2/3).
t_sampling_model() {
	local p j crunch rd calls
	both_paths wake -multi-thread -- "$progs/wakeups"
	for p in wake wake-text; do
		if [ ! -s "$tmp/$p.fxt.gz" ]; then
			failed "sampling_model_$p" "no trace: $(tail -1 "$tmp/$p.err")"
			continue
		fi
		"$snap" report -json -top 0 "$tmp/$p.fxt.gz" >"$tmp/$p.json" 2>"$tmp/$p.rerr"
		j=$tmp/$p.json
		crunch=$(grep -o '"name": "crunch", "calls": [0-9]*, "total_ns": [0-9]*, "self_ns": [0-9]*' "$j" |
			sed 's/.*"self_ns": //')
		rd=$(grep -o '"name": "\(read\|__libc_read\|__GI___libc_read\)", "calls": [0-9]*, "total_ns": [0-9]*, "self_ns": [0-9]*' "$j" |
			sed 's/.*"self_ns": //' | awk '{ s += $1 } END { print s + 0 }')
		spin=$(grep -o '"name": "spin_us", "calls": [0-9]*, "total_ns": [0-9]*, "self_ns": [0-9]*' "$j" |
			sed 's/.*"self_ns": //')
		calls=$(grep -o '"name": "handle", "calls": [0-9]*' "$j" | sed 's/.*"calls": //')
		# crunch's time is spin_us's self time under it; read's self time stays small
		if [ -n "${spin:-}" ] && [ "${rd:-0}" -lt $((spin / 4 + 1)) ]; then
			pass "sampling_model_wakeups_$p"
		else
			failed "sampling_model_wakeups_$p" "read self ${rd:-?} ns, spin_us self ${spin:-?} ns (crunch ${crunch:-?})"
		fi
		if [ "${calls:-0}" -ge 16 ]; then
			pass "sampling_model_requests_$p"
		else
			failed "sampling_model_requests_$p" "handle counted ${calls:-0} of 24 calls: $(head -c 300 "$j")"
		fi
	done
}
