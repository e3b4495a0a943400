# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# What the trace covers: one line; a small ring says the flag that keeps more.
t_coverage() {
	snap cov run -o "$tmp/cov.fxt.gz" -- "$nest" 1000
	# (a span never exceeds the recording: perf's clock and ours differ by milliseconds)
	if grep -q "^snaptrace: the trace covers [0-9.]* s of the [0-9.]* s recording ([0-9]* samples)$" "$tmp/cov.err" &&
		sed -n 's/^snaptrace: the trace covers \([0-9.]*\) s of the \([0-9.]*\) s .*/\1 \2/p' "$tmp/cov.err" |
		awk '{ exit !($1 <= $2) }'; then
		pass coverage_line
	else
		failed coverage_line "$(tail -2 "$tmp/cov.err")"
	fi
	snap cov2 run -snapshot-size 64K -o "$tmp/cov2.fxt.gz" -- "$nest" 6000
	if grep -q "^snaptrace: the trace covers the last [0-9.]* s of the [0-9.]* s recording ([0-9]* samples); -snapshot-size 256K keeps more, -full-execution keeps all$" "$tmp/cov2.err"; then
		pass coverage_ring_full
	else
		failed coverage_ring_full "$(tail -2 "$tmp/cov2.err")"
	fi
}

# A program that ends asleep: the trace ends with its off-CPU slice, at the
# last switch record, not at its last sample (sleeper naps 300 ms last, after
# 160 ms of spinning: the span is at least the nap; at 100 Hz no sample falls
# in the few microseconds of its exit).
t_coverage_asleep() {
	snap cov6 run -full-execution -timer-resolution Sample:100 -o "$tmp/cov6.fxt.gz" -- "$progs/sleeper" 0 last
	if [ $rc -eq 0 ] &&
		sed -n 's/^snaptrace: the trace covers \([0-9.]*\) s of the \([0-9.]*\) s .*/\1 \2/p' "$tmp/cov6.err" |
		awk '{ ok = $1 >= 0.3 && $1 <= $2 } END { exit !ok }'; then
		pass coverage_asleep
	else
		failed coverage_asleep "rc $rc: $(grep covers "$tmp/cov6.err")"
	fi
}

# Coverage per thread: with -multi-thread and a small ring, the threads whose
# start the ring overwrote are named (they ran for many sample periods before
# their first sample), with the flag that keeps more.
t_coverage_threads() {
	snap cov3 run -multi-thread -snapshot-size 64K -o "$tmp/cov3.fxt.gz" -- "$nest" 6000 0 1
	if [ $rc -eq 0 ] && grep -q "^snaptrace: the trace covers .* recording ([0-9]* samples), but the ring overwrote the start of [12] threads*: nest (tid [0-9]*, [0-9.]* s on a CPU before its track starts at [0-9.]* s).*; -snapshot-size 256K keeps more, -full-execution keeps all$" "$tmp/cov3.err"; then
		pass coverage_threads
	else
		failed coverage_threads "rc $rc: $(tail -1 "$tmp/cov3.err")"
	fi
}

# What perf lost (dwarf samples of 8 KiB into a 16 KiB ring with
# -full-execution): said in our words with the figure perf script gives, never
# perf's raw warning lines; as root the hint is a flag, not "as root".
t_coverage_lost() {
	local want got
	if [ ! -x "$progs/mtstack" ]; then
		skip coverage_lost "no C++ compiler: mtstack not built"
		return
	fi
	snap cov4 run -full-execution -callgraph-mode dwarf -snapshot-size 16K \
		-working-directory "$tmp/w_cov4" -o "$tmp/cov4.fxt.gz" -- "$progs/mtstack" 300
	if [ $rc -ne 0 ] || grep -q "^Warning:\|^Processed \|^Check IO\|^snaptrace: perf: Warning\|as root" "$tmp/cov4.err"; then
		failed coverage_lost "rc $rc, raw perf lines or a root hint: $(grep -v '^snaptrace: [a-z]' "$tmp/cov4.err" | head -3)"
		return
	fi
	# a ring smaller than one sample: perf loses them all, and says so (not "ended
	# before its first sample")
	snap cov5 run -full-execution -callgraph-mode dwarf -snapshot-size 8K -o "$tmp/cov5.fxt.gz" \
		-- "$progs/mtstack" 100
	if [ $rc -eq 0 ] && grep -q "^snaptrace run: no trace written: perf lost every sample ([0-9]* samples) while recording: its ring filled faster than perf wrote it out; -snapshot-size 32K or -callgraph-mode fp (smaller samples) loses less$" "$tmp/cov5.err"; then
		pass coverage_lost_all
	else
		failed coverage_lost_all "rc $rc: $(tail -1 "$tmp/cov5.err")"
	fi
	want=$(perf script -i "$tmp/w_cov4/perf.data" -F ip 2>&1 >/dev/null |
		sed -n 's/^Processed \([0-9]*\) samples and lost \([0-9.]*\)%.*/\2 of \1/p')
	if [ -z "$want" ]; then
		skip coverage_lost "perf kept up with a 16 KiB ring this time (nothing lost)"
		return
	fi
	got=$(sed -n 's/^snaptrace: perf lost [0-9]* of \([0-9]*\) samples (\([0-9.]*\)%) while recording.*/\2 of \1/p' "$tmp/cov4.err")
	if [ "$got" = "$want" ] &&
		grep -q "^snaptrace: the trace covers .*; perf lost [0-9]* samples while recording (its ring filled faster than perf wrote it out): -snapshot-size 64K or -callgraph-mode fp (smaller samples) loses less$" "$tmp/cov4.err"; then
		pass coverage_lost
	else
		failed coverage_lost "ours '$got', perf's '$want': $(grep 'lost' "$tmp/cov4.err")"
	fi
}
