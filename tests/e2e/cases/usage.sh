# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

t_usage() {
	snap usage1 run -timer-resolution Bogus -- true
	[ $rc -eq 2 ] && grep -q "bad -timer-resolution 'Bogus'" "$tmp/usage1.err" ||
		{ failed usage "bad resolution: rc $rc $(head -1 "$tmp/usage1.err")"; return; }
	snap usage2 run -multi-snapshot -sampling -- true
	[ $rc -eq 2 ] && grep -q "multi-snapshot needs -trigger" "$tmp/usage2.err" ||
		{ failed usage "multi-snapshot: rc $rc $(head -1 "$tmp/usage2.err")"; return; }
	snap usage3 run -- /nonexistent/prog
	[ $rc -eq 2 ] && grep -q "can't find executable" "$tmp/usage3.err" ||
		{ failed usage "missing prog: rc $rc $(head -1 "$tmp/usage3.err")"; return; }
	# why it cannot be run, and the fix, in the one line (before any recording)
	snap usage3d run -- "$tmp"
	[ $rc -eq 2 ] && grep -q "^snaptrace run: can't find executable for $tmp: it is a directory (name the program in it)$" "$tmp/usage3d.err" &&
		[ "$(wc -l <"$tmp/usage3d.err")" -eq 1 ] ||
		{ failed usage "a directory: rc $rc $(head -2 "$tmp/usage3d.err")"; return; }
	if ! command -v snaptrace >/dev/null; then
		snap usage3p run -- snaptrace
		[ $rc -eq 2 ] && grep -q "^snaptrace run: can't find executable for snaptrace: not on \$PATH (for the one in this directory, run ./snaptrace)$" "$tmp/usage3p.err" ||
			{ failed usage "a program here: rc $rc $(head -1 "$tmp/usage3p.err")"; return; }
	fi
	# a text file with no perf event in its first MiB: one line that says so
	head -c 1200000 /dev/zero | tr '\0' 'x' | fold -w 100 >"$tmp/notperf.txt"
	snap usage3t decode -o "$tmp/notperf.fxt" "$tmp/notperf.txt"
	[ $rc -eq 1 ] && [ "$(wc -l <"$tmp/usage3t.err")" -eq 1 ] &&
		grep -q "neither a perf.data file nor perf script text" "$tmp/usage3t.err" ||
		{ failed usage "not perf text: rc $rc $(head -2 "$tmp/usage3t.err")"; return; }
	snap usage3v version extra
	[ $rc -eq 2 ] && grep -q "^snaptrace version: unexpected argument 'extra'" "$tmp/usage3v.err" ||
		{ failed usage "version with an argument: rc $rc"; return; }
	snap usage3h help frob
	[ $rc -eq 2 ] && grep -q "^snaptrace: no command 'frob' (try 'snaptrace help')$" "$tmp/usage3h.err" ||
		{ failed usage "help of no command: rc $rc $(head -1 "$tmp/usage3h.err")"; return; }
	# dump -check's summary: "1 thread", not "1 threads"
	snap usage3c decode -q -o "$tmp/one.fxt" tests/golden/samples/nesting_main_outer_inner_leaf.txt
	"$snap" dump -check "$tmp/one.fxt" 2>&1 | grep -q "^ok: .* counter), 1 thread$" ||
		{ failed usage "dump -check of one thread: $("$snap" dump -check "$tmp/one.fxt" 2>&1)"; return; }
	# dump reads stdin as report and decode do (-), plain or gzip
	gzip -c "$tmp/one.fxt" >"$tmp/one.fxt.gz"
	"$snap" dump -check - <"$tmp/one.fxt.gz" 2>&1 | grep -q "^ok: -: .* counter), 1 thread$" &&
		cmp -s <("$snap" dump - <"$tmp/one.fxt" 2>&1) <("$snap" dump "$tmp/one.fxt" 2>&1) ||
		{ failed usage "dump - (stdin): $("$snap" dump -check - <"$tmp/one.fxt.gz" 2>&1 | head -1)"; return; }
	# decode -o - writes stdout (not a file named '-'); not with -report; run refuses it
	(cd "$tmp" && "$snap" decode -q -o - "$OLDPWD/tests/golden/samples/nesting_main_outer_inner_leaf.txt" |
		"$snap" dump -check - 2>&1) | grep -q "^ok: -: .* 1 thread$" && [ ! -e "$tmp/-" ] ||
		{ failed usage "decode -o -: $(ls "$tmp")"; return; }
	snap usage3r decode -report -o - tests/golden/samples/nesting_main_outer_inner_leaf.txt
	[ $rc -eq 2 ] && grep -q "^snaptrace decode: -o -: -report prints to stdout too; name a file$" "$tmp/usage3r.err" ||
		{ failed usage "decode -report -o -: rc $rc $(head -1 "$tmp/usage3r.err")"; return; }
	snap usage3s run -o - -- true
	[ $rc -ne 0 ] && grep -q "^snaptrace run: -o -: run writes the trace to a file; name one" "$tmp/usage3s.err" ||
		{ failed usage "run -o -: rc $rc $(head -1 "$tmp/usage3s.err")"; return; }
	# decode -o where no file can be made: the fix in the same line
	snap usage3o decode -o "$tmp/nodir/x.fxt" tests/golden/samples/nesting_main_outer_inner_leaf.txt
	[ $rc -eq 1 ] && grep -q "^snaptrace: cannot write $tmp/nodir/x.fxt: No such file or directory (its directory is missing: create it or choose another -o)$" "$tmp/usage3o.err" ||
		{ failed usage "decode -o in a missing directory: rc $rc $(head -1 "$tmp/usage3o.err")"; return; }
	snap usage3q decode -o "$tmp" tests/golden/samples/nesting_main_outer_inner_leaf.txt
	[ $rc -eq 1 ] && grep -q "^snaptrace: cannot write $tmp: Is a directory (name a file in it, e.g. -o DIR/trace.fxt.gz)$" "$tmp/usage3q.err" ||
		{ failed usage "decode -o DIR: rc $rc $(head -1 "$tmp/usage3q.err")"; return; }
	snap usage4 attach -pid 12,12
	[ $rc -eq 2 ] && grep -q "duplicate PIDs" "$tmp/usage4.err" ||
		{ failed usage "dup pids: rc $rc"; return; }
	snap usage5 run -help
	[ $rc -eq 0 ] && grep -q -- "-trigger SYMBOL" "$tmp/usage5.out" ||
		{ failed usage "run -help: rc $rc"; return; }
	pass usage
}

t_print_cmds() {
	# -full-execution with dwarf call graphs: no ring limit to warn of ("room for ~N
	# samples (~1.0 s)" was wrong there: every sample is written out)
	snap printfull run --print-perf-commands -sampling -full-execution -callgraph-mode dwarf -- true
	if [ $rc -eq 0 ] && ! grep -q "room for" "$tmp/printfull.err" &&
		grep -q "^snaptrace: dwarf call graphs copy 8 KiB of stack per sample ([0-9]* MiB a second on a CPU at [0-9]* Hz): -full-execution writes them all out, through a [0-9]* [KM]iB ring" "$tmp/printfull.err"; then
		pass print_perf_commands_full_dwarf
	else
		failed print_perf_commands_full_dwarf "rc $rc: $(grep dwarf "$tmp/printfull.err")"
	fi
	snap print run --print-perf-commands -sampling -timer-resolution Sample:2000 -- true
	if [ $rc -eq 0 ] && grep -q "^perf record .*--no-bpf-event .*cpu-clock/freq=2000,overwrite" \
		"$tmp/print.out" && grep -q -- "--per-thread -t PID" "$tmp/print.out"; then
		pass print_perf_commands
	else
		failed print_perf_commands "rc $rc: $(cat "$tmp/print.out" "$tmp/print.err" | head -3)"
	fi
}
