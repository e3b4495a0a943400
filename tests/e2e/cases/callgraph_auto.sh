# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# -callgraph-mode auto: fp for a program built with frame pointers (also
# -O2 -fno-omit-frame-pointer, whose leaves have no push %rbp, and Go), dwarf
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
	# gcc -O2 -fno-omit-frame-pointer: fp, and fp unwinding reaches main
	both_paths cgo2 -- "$progs/fpo2" 3000 5
	r=$(chain_ratio "$tmp/w_cgo2/perf.data" leaf outer main)
	if grep -q "^snaptrace: -callgraph-mode fp: fpo2 keeps frame pointers ([0-9]*% of [0-9]* functions with a stack frame)$" "$tmp/cgo2.err" &&
		! grep -q "dwarf call graphs copy" "$tmp/cgo2.err" && [ $rc1 -eq 5 ] &&
		[ "${r% *}" -ge 80 ] && [ "${r#* }" -ge 50 ]; then
		pass callgraph_auto_fp_o2
	else
		failed callgraph_auto_fp_o2 "rc $rc1, leaf<outer<main in ${r% *}% of ${r#* } samples: $(grep callgraph "$tmp/cgo2.err")"
	fi
	# a script is judged by its interpreter (Debian's sh, without frame pointers):
	# dwarf, and the program it execs unwinds to main
	printf '#!/bin/sh\nexec "%s" 3000 5\n' "$progs/omitfp" >"$tmp/cgsh.sh"
	chmod +x "$tmp/cgsh.sh"
	snap cgsh run -working-directory "$tmp/w_cgsh" -o "$tmp/cgsh.fxt.gz" -- "$tmp/cgsh.sh"
	r=$(dump_nesting "$tmp/cgsh.fxt.gz" main outer inner leaf)
	if grep -q "^snaptrace: -callgraph-mode dwarf: cgsh.sh is a script run by sh: " "$tmp/cgsh.err" &&
		[ $rc -eq 5 ] && [ "${r% *}" -ge 80 ] && [ "${r#* }" -ge 1 ]; then
		pass callgraph_auto_script
	else
		failed callgraph_auto_script "rc $rc, main>outer>inner>leaf in ${r% *}% of ${r#* } leaf slices: $(grep callgraph "$tmp/cgsh.err")"
	fi
	callgraph_auto_go
	callgraph_dwarf_cxx
}

# dwarf copies perf's 8 KiB of stack: a std::mt19937 (5 KiB) on the stack
# still unwinds to main (a 4 KiB copy lost main in every sample).
callgraph_dwarf_cxx() {
	if [ ! -x "$progs/mtstack" ]; then
		skip callgraph_dwarf_cxx "no C++ compiler: mtstack not built"
		return
	fi
	snap cgcxx run -working-directory "$tmp/w_cgcxx" -o "$tmp/cgcxx.fxt.gz" -- "$progs/mtstack" 400
	r=$(chain_ratio "$tmp/w_cgcxx/perf.data" work run main)
	if [ $rc -eq 0 ] && grep -q "^snaptrace: -callgraph-mode dwarf: mtstack" "$tmp/cgcxx.err" &&
		grep -q "dwarf call graphs copy 8 KiB of stack per sample" "$tmp/cgcxx.err" &&
		{ [ $root -eq 0 ] || grep -q "dwarf call graphs copy 8 KiB of stack per sample into a 64 MiB ring: .*; -snapshot-size 256M keeps more$" "$tmp/cgcxx.err"; } &&
		{ [ $root -eq 0 ] || ! grep -q "as root" "$tmp/cgcxx.err"; } &&
		[ "${r% *}" -ge 90 ] && [ "${r#* }" -ge 50 ]; then
		pass callgraph_dwarf_cxx
	else
		failed callgraph_dwarf_cxx "rc $rc, work<run<main in ${r% *}% of ${r#* } samples"
	fi
}

# Go keeps frame pointers: fp, and no advice to rebuild with a C compiler's flag.
callgraph_auto_go() {
	if ! command -v go >/dev/null; then
		skip callgraph_auto_go "no go toolchain (apt-get install golang-go)"
		return
	fi
	mkdir -p "$tmp/gosrc"
	printf 'package main\n\nfunc spin(n int) int {\n\ts := 0\n\tfor i := 0; i < n; i++ {\n\t\ts += i * i\n\t}\n\treturn s\n}\n\nfunc main() { println(spin(1000)) }\n' >"$tmp/gosrc/main.go"
	if ! (cd "$tmp/gosrc" && GO111MODULE=off timeout 300 nice go build -o "$tmp/gospin" main.go) >"$tmp/gobuild.err" 2>&1; then
		skip callgraph_auto_go "go build failed: $(head -1 "$tmp/gobuild.err")"
		return
	fi
	snap cggo run -sampling -print-perf-commands -- "$tmp/gospin"
	if grep -q "^snaptrace: -callgraph-mode fp: gospin is a Go program (Go keeps frame pointers)$" "$tmp/cggo.err" &&
		grep -q -- "--call-graph fp" "$tmp/cggo.out" && ! grep -q "omit-frame-pointer" "$tmp/cggo.err"; then
		pass callgraph_auto_go
	else
		failed callgraph_auto_go "$(grep callgraph "$tmp/cggo.err")"
	fi
}

# dwarf chains of a stack deeper than perf's 8 KiB copy stop inside rec, short of
# main and _start: the stack-quality line says so and names the fix (before:
# nothing, the chains end at no junk address to count).
t_dwarf_short() {
	snap dshort run -callgraph-mode dwarf -o "$tmp/dshort.fxt.gz" -- "$progs/deeprec" 20
	if [ $rc -eq 0 ] && grep -q "^snaptrace: stack quality: [0-9]*% of the call chains end short of where their thread started (no _start or clone at their outer end: the dwarf unwinder stopped early, at a stack deeper than its 8 KiB copy or at code it cannot unwind; -callgraph-mode fp for code built with frame pointers)$" "$tmp/dshort.err"; then
		pass dwarf_short_chains
	else
		failed dwarf_short_chains "rc $rc: $(grep -i quality "$tmp/dshort.err")"
	fi
	# a shallow program gives no such line
	snap dshallow2 run -callgraph-mode dwarf -o "$tmp/dshallow2.fxt.gz" -- "$progs/vdsotime" 10
	if [ $rc -eq 0 ] && ! grep -q "end short of" "$tmp/dshallow2.err"; then
		pass dwarf_short_chains_none
	else
		failed dwarf_short_chains_none "rc $rc: $(grep -i quality "$tmp/dshallow2.err")"
	fi
}
