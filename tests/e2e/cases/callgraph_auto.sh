# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# -callgraph-mode auto: fp for a program built with frame pointers, dwarf
# for -O2 -fomit-frame-pointer; dwarf keeps main > outer > inner > leaf.
t_callgraph_auto() {
	local r p
	snap cgfp run -print-perf-commands -- "$nest" 10
	if grep -q "^snaptrace: -callgraph-mode fp: nest keeps frame pointers" "$tmp/cgfp.err" &&
		grep -q -- "--switch-events --per-thread -t PID .*--call-graph fp" "$tmp/cgfp.out"; then
		pass callgraph_auto_fp
	else
		failed callgraph_auto_fp "$(cat "$tmp/cgfp.err" "$tmp/cgfp.out" | head -3)"
	fi
	both_paths cgo -- "$progs/omitfp" 3000 5
	if ! grep -q "^snaptrace: -callgraph-mode dwarf: omitfp has no frame pointers" "$tmp/cgo.err"; then
		failed callgraph_auto_dwarf "$(head -3 "$tmp/cgo.err")"
		return
	fi
	r=$(chain_ratio "$tmp/w_cgo/perf.data" leaf inner outer main)
	if [ $rc1 -eq 5 ] && [ "${r% *}" -ge 80 ] && [ "${r#* }" -ge 50 ] &&
		grep -q "dwarf call graphs copy [0-9]* KiB of stack per sample into a .* ring: room for ~[0-9]* samples" "$tmp/cgo.err"; then
		pass callgraph_auto_dwarf
	else
		failed callgraph_auto_dwarf "rc $rc1, leaf<inner<outer<main in ${r% *}% of ${r#* } samples"
	fi
	for p in cgo cgo-text; do
		r=$(dump_nesting "$tmp/$p.fxt.gz" main outer inner leaf)
		if [ "${r% *}" -ge 80 ] && [ "${r#* }" -ge 1 ]; then
			pass "callgraph_auto_dwarf_nesting_$p"
		else
			failed "callgraph_auto_dwarf_nesting_$p" "main>outer>inner>leaf in ${r% *}% of ${r#* } leaf slices"
		fi
	done
}
