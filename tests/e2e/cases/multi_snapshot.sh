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
