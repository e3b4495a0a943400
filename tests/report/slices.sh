#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# An independent reckoning of `snaptrace report`'s figures from the slices that
# `snaptrace dump` prints (awk and sort only, nothing shared with src/report/):
#   tests/report/slices.sh SNAPTRACE TRACE
# prints "slices N open N" and then, sorted by name, one line per function with a
# counted call: "NAME calls total self max p50 p90 p99" (ns). The rules are the ones
# docs/report.md gives: per thread, a stable sort by time, stack matching, complete
# events that end by an event's time closed first; zero-length complete events are no
# calls; a begin with inferred_start_time, a begin never ended, an end with
# inferred_end_time or at a [decode error: ...] of the thread are cut by the recording
# and only counted (in a dump without any inferred_end_time: also a begin at the
# thread's first timestamp and an end at its last); nearest-rank percentiles. A
# function's total is the time it was on the stack at least once (a counted call adds
# its duration less the nested calls of the same name already counted); an inlined
# frame (arg inlined) is the row "NAME [inlined]" and its own time is the self time of
# the frame below it (the real function it is inlined into). In a sampled trace (the
# snaptrace.sampling counter) whose ends carry sampled_ns, a slice's self time is its
# end's sampled_ns (an inlined frame's goes to the frame below it), but for [off-CPU...]
# slices, which keep their duration less their children's.
#   tests/report/slices.sh SNAPTRACE TRACE [FOLDED]
# also writes to FOLDED the sum of the self times of every slice, counted or not (what
# `report -folded` adds up).
set -u
snap=$1 trace=$2 foldf=${3:-/dev/null}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$snap" dump "$trace" | awk -v OFS='\t' '
	# the sampling marker counter says the trace flags its cut ends
	$1 == "counter" && index($0, "inferred_end_time=") { print 0, 0, NR, "marks", 0, 0, "", 1 }
	$1 == "counter" && index($0, "name=\"snaptrace.sampling\"") { print 0, 0, NR, "sampling", 0, 0, "", 0 }
	$1 != "begin" && $1 != "end" && $1 != "complete" { next }
	{
		ts = substr($2, 4); tid = ""; end = 0; name = ""
		for (i = 3; i <= NF; i++) {
			if ($i ~ /^tid=/) tid = substr($i, 5)
			if ($i ~ /^end=/) end = substr($i, 5)
		}
		if (match($0, /name="([^"\\]|\\.)*"/)) name = substr($0, RSTART + 6, RLENGTH - 7)
		inf = index($0, "inferred_start_time=") > 0
		if (index($0, " inlined=") > 0) name = name " [inlined]"
		ie = index($0, "inferred_end_time=") > 0
		smp = match($0, /[{ ]sampled_ns=[0-9]+/) ? substr($0, RSTART + 12, RLENGTH - 12) : 0
		print tid, ts, NR, $1, end, inf, name, ie, smp
	}' | sort -s -t "$(printf '\t')" -k1,1n -k2,2n >"$tmp/ev"
awk -F '\t' -v durs="$tmp/durs" -v foldf="$foldf" '
	NR == FNR {
		if (!($1 in first)) first[$1] = $2
		if ($2 + 0 > last[$1] + 0) last[$1] = $2
		if ($4 == "complete" && $5 + 0 > last[$1] + 0) last[$1] = $5
		if ($4 == "complete" && $5 + 0 <= $2 + 0 && $7 ~ /^\[decode error/) derr[$1, $2] = 1
		if ($8 == 1) marks = 1
		if ($4 == "marks" || $4 == "sampling") delete first[$1]
		if ($4 == "sampling") sampling = 1
		if ($9 + 0 > 0) smpns = 1
		next
	}
	function close_top(e, cut, smp,   s, dur, inl, own) {
		s = d--
		if (e < st[s]) e = st[s]
		dur = e - st[s]
		inl = nm[s] ~ / \[inlined\]$/
		own = dur - real[s]
		if (sampling && smpns && nm[s] !~ /^\[off-CPU/) {
			own = inl ? 0 : smp + sinl[s]
			if (d > 0 && inl) sinl[d] += smp + sinl[s]
			fold += smp
		} else {
			fold += dur - child[s]
		}
		if (d > 0) { child[d] += dur; real[d] += inl ? real[s] : dur; if (inl) own = 0 }
		top[nm[s]] = below[s]
		if (below[s]) same[below[s]] += (edge[s] || cut) ? same[s] : dur
		if (edge[s] || cut) { open++; return }
		slices++
		calls[nm[s]]++; total[nm[s]] += dur - same[s]; self[nm[s]] += own
		if (dur > max[nm[s]] + 0) max[nm[s]] = dur
		print nm[s] "\t" dur >durs
	}
	function push(s0, e0, n, ed) {
		d++; st[d] = s0; en[d] = e0; nm[d] = n; child[d] = 0; real[d] = 0; edge[d] = ed; sinl[d] = 0
		same[d] = 0; below[d] = top[n] + 0; top[n] = d
	}
	function flush_thread() {
		while (d > 0) {
			if (en[d] >= 0) close_top(en[d], 0, 0)
			else close_top(last[tid], 1, 0)
		}
	}
	$4 == "marks" || $4 == "sampling" { next }
	$1 != tid { flush_thread(); tid = $1 }
	{
		ts = $2 + 0
		while (d > 0 && en[d] >= 0 && en[d] <= ts) close_top(en[d], 0, 0)
		if ($4 == "begin") push(ts, -1, $7, $6 == 1 || (!marks && $2 == first[tid]))
		else if ($4 == "complete") { if ($5 + 0 > ts) push(ts, $5 + 0, $7, 0) }
		else {
			while (d > 0 && en[d] >= 0) close_top(ts, 0, 0)
			if (d > 0) close_top(ts, $8 == 1 || (!marks && $2 == last[tid]) || ((tid, $2) in derr), $9 + 0)
		}
	}
	END {
		flush_thread()
		printf "slices %d open %d\n", slices, open
		printf "%.0f\n", fold >foldf
		for (n in calls) print n "\t" calls[n] "\t" total[n] "\t" self[n] "\t" max[n] >(durs ".fn")
	}' "$tmp/ev" "$tmp/ev"
touch "$tmp/durs" "$tmp/durs.fn"
export LC_ALL=C
t=$(printf '\t')
sort -t "$t" -k1,1 -k2,2n "$tmp/durs" | awk -F '\t' '
	function ranks(   k, p, out) {
		out = ""
		split("50 90 99", p, " ")
		for (k = 1; k <= 3; k++) out = out " " v[int((n * p[k] + 99) / 100)]
		print name "\t" substr(out, 2)
	}
	$1 != name { if (n) ranks(); name = $1; n = 0 }
	{ v[++n] = $2 }
	END { if (n) ranks() }' | sort -t "$t" -k1,1 >"$tmp/pct"
sort -t "$t" -k1,1 "$tmp/durs.fn" >"$tmp/fn"
join -t "$t" "$tmp/fn" "$tmp/pct" | tr '\t' ' '
