# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# The sampling model (docs/sampling.md) on a real recording of progs/wakeups.c:
# bursts shorter than a sample period go to crunch (or [on-CPU: unsampled]),
# never to the read they woke from; the 24 request threads, born and exited
# inside the recording, are whole calls in the report (handle counted >= 2/3);
# from a plain perf record -g the waits are inferred off-CPU gaps.
t_sampling_model() {
	local p j crunch rd calls spin n
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
		spin=$(grep -o '"name": "spin_us", "calls": [0-9]*, "total_ns": [0-9]*' "$j" |
			sed 's/.*"total_ns": //')
		calls=$(grep -o '"name": "handle", "calls": [0-9]*' "$j" | sed 's/.*"calls": //')
		# crunch's time is spin_us's under it (its self time is samples x period, mostly
		# in the clock_gettime it calls: spin_us's total); read's self time stays small
		if [ -n "${spin:-}" ] && [ "${rd:-0}" -lt $((spin / 4 + 1)) ]; then
			pass "sampling_model_wakeups_$p"
		else
			failed "sampling_model_wakeups_$p" "read self ${rd:-?} ns, spin_us total ${spin:-?} ns (crunch self ${crunch:-?})"
		fi
		if [ "${calls:-0}" -ge 16 ]; then
			pass "sampling_model_requests_$p"
		else
			failed "sampling_model_requests_$p" "handle counted ${calls:-0} of 24 calls: $(head -c 300 "$j")"
		fi
	done
	# a plain perf record -g (no switch records): the 2 ms waits are inferred
	# off-CPU gaps, said once
	if ! perf record --no-bpf-event -q -e cpu-clock/freq=4000/ -g -o "$tmp/plain.data" \
		"$progs/wakeups" >/dev/null 2>&1; then
		skip sampling_model_plain_record "perf record -g failed"
		return
	fi
	"$snap" decode -o "$tmp/plain.fxt" "$tmp/plain.data" >/dev/null 2>"$tmp/plain.err"
	n=$("$snap" dump "$tmp/plain.fxt" 2>/dev/null | grep -c '^begin .*name="\[off-CPU: inferred\]"')
	if grep -q "gaps* of more than 4 sample periods .* inferred as off-CPU .*snaptrace run. records switch events" \
		"$tmp/plain.err" && [ "$(grep -c "inferred as off-CPU" "$tmp/plain.err")" = 1 ] &&
		[ "$n" -ge 50 ]; then
		pass sampling_model_plain_record
	else
		failed sampling_model_plain_record "$n [off-CPU: inferred] slices: $(tr '\n' ' ' <"$tmp/plain.err" | head -c 300)"
	fi
}
