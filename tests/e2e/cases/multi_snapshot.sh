# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

t_multi_snapshot() {
	local n
	snap msnap run -sampling -timer-resolution Low -trigger trigger_here -multi-snapshot \
		-working-directory "$tmp/w_msnap" -o "$tmp/msnap.fxt.gz" -- "$nest" 3000 -1000
	n=$(ls "$tmp/w_msnap" | grep -c '^perf.data')
	if [ "$(grep -c 'snapshot taken' "$tmp/msnap.err")" -ge 2 ] && [ "$n" -ge 2 ]; then
		pass multi_snapshot
	else
		failed multi_snapshot "$n data files: $(grep -c 'snapshot taken' "$tmp/msnap.err") snapshots"
	fi
	# every snapshot in one trace, every hit marked; decode of the directory agrees
	local hits=0
	[ -s "$tmp/msnap.fxt.gz" ] &&
		hits=$("$snap" dump "$tmp/msnap.fxt.gz" | grep -c '^complete .*name="hit trigger_here"')
	if [ $rc -eq 0 ] && [ "$hits" -ge 2 ] && [ ! -e "$tmp/msnap.1.fxt.gz" ] &&
		grep -q "decoding $n snapshots" "$tmp/msnap.err" &&
		"$snap" dump -check "$tmp/msnap.fxt.gz" >/dev/null 2>&1 &&
		"$snap" decode -q -working-directory "$tmp/w_msnap" -o "$tmp/msnap2.fxt" &&
		[ "$("$snap" dump "$tmp/msnap2.fxt" | grep -c '^begin \|^end ')" = \
			"$("$snap" dump "$tmp/msnap.fxt.gz" | grep -c '^begin \|^end ')" ]; then
		pass multi_snapshot_one_trace
	else
		failed multi_snapshot_one_trace "rc $rc, $hits hits: $(ls "$tmp" | grep msnap | tr '\n' ' ')"
	fi
}

# -full-execution takes no snapshots: every hit is marked in the one trace of the
# whole run, and no line says a snapshot was taken (each hit said "snapshot taken", and
# the count "N hits marked in the trace, N snapshots").
t_multi_snapshot_full() {
	local hits=0
	snap msnapf run -sampling -timer-resolution Low -trigger trigger_here -multi-snapshot \
		-full-execution -o "$tmp/msnapf.fxt.gz" -- "$nest" 3000 -1000
	[ -s "$tmp/msnapf.fxt.gz" ] &&
		hits=$("$snap" dump "$tmp/msnapf.fxt.gz" | grep -c '^complete .*name="hit trigger_here"')
	if [ $rc -eq 0 ] && [ "$hits" -ge 2 ] && ! grep -q 'snapshot taken\|[0-9] snapshot' "$tmp/msnapf.err" &&
		grep -q "^snaptrace: trigger trigger_here: $hits hits marked in the trace of the whole run (-full-execution takes no snapshots)$" \
			"$tmp/msnapf.err"; then
		pass multi_snapshot_full
	else
		failed multi_snapshot_full "rc $rc, $hits hits: $(grep -i 'snapshot\|hits' "$tmp/msnapf.err" | head -3)"
	fi
}

# A function called 300 times (every 10 iterations, ~1 ms apart): every call is
# marked, also those during a snapshot's dump, and the count is said.
t_multi_snapshot_every_hit() {
	local hits=0 lost
	snap msnap3 run -sampling -timer-resolution Low -trigger trigger_here -multi-snapshot \
		-working-directory "$tmp/w_msnap3" -o "$tmp/msnap3.fxt.gz" -- "$nest" 3000 -10
	[ -s "$tmp/msnap3.fxt.gz" ] &&
		hits=$("$snap" dump "$tmp/msnap3.fxt.gz" | grep -c '^complete .*name="hit trigger_here"')
	lost=$(sed -n 's/^snaptrace: trigger trigger_here: \([0-9]*\) more hits* w[a-z]* not marked: .*/\1/p' "$tmp/msnap3.err")
	if [ $rc -eq 0 ] && [ "$((hits + ${lost:-0}))" -eq 300 ] &&
		grep -q "^snaptrace: trigger trigger_here: $hits hits marked in the trace, [0-9]* snapshots" "$tmp/msnap3.err" &&
		"$snap" dump -check "$tmp/msnap3.fxt.gz" >/dev/null 2>&1 &&
		"$snap" decode -q -working-directory "$tmp/w_msnap3" -o "$tmp/msnap3d.fxt" &&
		[ "$("$snap" dump "$tmp/msnap3d.fxt" | grep -c '^complete .*name="hit trigger_here"')" = "$hits" ]; then
		pass multi_snapshot_every_hit
	else
		failed multi_snapshot_every_hit "rc $rc, $hits hits marked (+${lost:-0} said lost) of 300: $(grep 'trigger_here:' "$tmp/msnap3.err")"
	fi
}
