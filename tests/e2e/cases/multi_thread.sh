# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

t_multi_thread() {
	local n
	snap mt run -sampling -timer-resolution Sample:2000 -multi-thread -working-directory "$tmp/w_mt" \
		-o "$tmp/mt.fxt.gz" -- "$nest" 2000 0 1
	n=$(perf script -i "$tmp/w_mt/perf.data" -F tid -G 2>/dev/null | sort -u | grep -c .)
	r=$(chain_ratio "$tmp/w_mt/perf.data" wleaf wouter)
	if [ "$n" -ge 2 ] && [ "${r#* }" -ge 20 ] && [ "${r% *}" -ge 80 ]; then
		pass multi_thread
	else
		failed multi_thread "$n threads, ${r#* } wleaf samples (${r% *}% under wouter)"
	fi
	# In the timeline: worker > wouter > wleaf on the second thread, main > ... on the first.
	local wr mr other
	wr=$(dump_nesting "$tmp/mt.fxt.gz" worker wouter wleaf)
	mr=$(dump_nesting "$tmp/mt.fxt.gz" main outer inner leaf)
	other=$("$snap" dump "$tmp/mt.fxt.gz" 2>/dev/null | grep '^begin .*name="wleaf"' |
		grep -vc 'pid=\([0-9]*\) tid=\1 ')
	if [ "${wr#* }" -ge 1 ] && [ "${wr% *}" -ge 80 ] && [ "${mr#* }" -ge 1 ] &&
		[ "${mr% *}" -ge 80 ] && [ "$other" = "${wr#* }" ]; then
		pass multi_thread_nesting
	else
		failed multi_thread_nesting "wleaf: $wr (on the second thread: $other), leaf: $mr"
	fi
	snap st run -sampling -timer-resolution Sample:2000 -working-directory "$tmp/w_st" \
		-o "$tmp/st.fxt.gz" -- "$nest" 1000 0 1
	n=$(perf script -i "$tmp/w_st/perf.data" -F tid -G 2>/dev/null | sort -u | grep -c .)
	if [ "$n" -eq 1 ]; then pass single_thread_default; else failed single_thread_default "$n threads"; fi
}
