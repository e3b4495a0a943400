#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every -trigger form on a program built with -g (tests/e2e/progs/nest.c, a PIE):
# symbol:NAME, addr:HEX, bare hex, FILE:LINE, line:FILE:LINE:COL, and the symbol:?
# picker; each must fire (snaptrace says "hit by tid") and mark the hit in the trace.
# Sampling mode with the real perf (cpu-clock, 2 kHz): SKIP where perf cannot record.
set -u
cd "$(dirname "$0")/../.."
: "${SNAP_BUILD:=build/default}"
snap=$PWD/snaptrace
nest=$PWD/$SNAP_BUILD/tests/e2e/nest
tmp=$(mktemp -d /tmp/snaptrace-trig.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp

if [ ! -x "$nest" ]; then
	echo "FAIL triggers_setup: $nest missing (make test-bins)"
	exit 1
fi
if ! command -v perf >/dev/null ||
	! perf record -q -o "$tmp/probe.data" --no-bpf-event -e cpu-clock -F 1000 -- true >/dev/null 2>&1; then
	echo "SKIP triggers: perf record -e cpu-clock does not work for $(id -un)"
	exit 0
fi
if ! command -v nm >/dev/null; then
	echo "SKIP triggers: nm (binutils) not found"
	exit 0
fi
addr=$(nm "$nest" | awk '$3 == "trigger_here" { print $1 }')
line=$(grep -n 'sink += i;' tests/e2e/progs/nest.c | sed -n '2s/:.*//p') # inside trigger_here

# fires NAME FORM: run nest (1500th of 3000 iterations calls trigger_here)
# fires NAME FORM [SHOWN]: the hit is named SHOWN (default FORM): a function by
# the name perf shows for it, a line or an address as given.
fires() {
	local name=$1 form=$2 shown=${3:-$2}
	timeout -s KILL 60 "$snap" run -sampling -timer-resolution Sample:2000 -trigger "$form" \
		-o "$tmp/$name.fxt" -- "$nest" 3000 1500 >/dev/null 2>"$tmp/$name.err"
	local rc=$?
	if [ $rc != 0 ] || ! grep -qF "trigger $shown hit by tid" "$tmp/$name.err"; then
		echo "FAIL triggers_$name: -trigger '$form': exit $rc: $(grep -v '^perf' "$tmp/$name.err" | head -3 | tr '\n' ' ')"
	elif ! "$snap" dump "$tmp/$name.fxt" 2>/dev/null | grep -qF "name=\"hit $shown\""; then
		echo "FAIL triggers_$name: no 'hit $shown' slice in the trace"
	else
		echo "PASS triggers_$name"
	fi
}

fires symbol "symbol:trigger_here" trigger_here

# Source positions (the program is built with -g): slices of its functions carry
# file/line/col args, from the DWARF line table at the function's start (the line
# of its name or of its opening brace, depending on the compiler).
decl=$(grep -n 'void leaf(void)' tests/e2e/progs/nest.c | cut -d: -f1)
if [ -f "$tmp/symbol.fxt" ]; then
	args=$("$snap" dump "$tmp/symbol.fxt" 2>/dev/null | grep -m1 'begin .*name="leaf"')
	fl=$(echo "$args" | sed -n 's/.*line=\([0-9]*\), col=\([0-9]*\), symbol="leaf", file="\([^"]*\)".*/\1 \3/p')
	if [ -n "$fl" ] && { [ "${fl%% *}" = "$decl" ] || [ "${fl%% *}" = $((decl + 1)) ]; } &&
		case ${fl#* } in *tests/e2e/progs/nest.c) true ;; *) false ;; esac; then
		echo "PASS triggers_source_lines"
	else
		echo "FAIL triggers_source_lines: leaf (declared line $decl): $args"
	fi
fi
fires addr "addr:$addr"
fires bare_hex "0x$addr"
fires file_line "nest.c:$line"
fires line_prefix_full_path "line:tests/e2e/progs/nest.c:$line"

# -trigger . on magic-trace's stop indicator (called with OCaml-tagged integers):
# the hit carries its payload (arg=42) and, where the kernel converts the TSC, starts at
# the time the program passed
stopind=$PWD/$SNAP_BUILD/tests/e2e/stopind
timeout -s KILL 60 "$snap" run -sampling -timer-resolution Sample:2000 -trigger . \
	-o "$tmp/stop.fxt" -- "$stopind" 100 >/dev/null 2>"$tmp/stop.err"
rc=$?
hit=$("$snap" dump "$tmp/stop.fxt" 2>/dev/null | grep -m1 'name="hit magic_trace_stop_indicator"')
passed=$(echo "$hit" | sed -n 's/.*timestamp_passed=\([0-9]*\).*/\1/p')
ts=$(echo "$hit" | sed -n 's/.*complete ts=\([0-9]*\) end=\([0-9]*\).*/\1 \2/p')
if [ $rc != 0 ] || ! echo "$hit" | grep -q 'arg=42, timestamp='; then
	echo "FAIL triggers_stop_indicator_payload: exit $rc: ${hit:-no hit slice}: $(head -2 "$tmp/stop.err" | tr '\n' ' ')"
elif [ -n "$passed" ] && [ "$passed" != 0 ] && [ "${ts%% *}" -ge "${ts##* }" ]; then
	echo "FAIL triggers_stop_indicator_payload: passed at $passed but the slice is $ts"
else
	echo "PASS triggers_stop_indicator_payload"
fi

# decode -working-directory marks the hits the recording saw
timeout -s KILL 60 "$snap" run -sampling -timer-resolution Sample:2000 -trigger trigger_here \
	-working-directory "$tmp/wd" -o "$tmp/wd1.fxt" -- "$nest" 3000 1500 >/dev/null 2>"$tmp/wd1.err"
if timeout -s KILL 60 "$snap" decode -working-directory "$tmp/wd" -o "$tmp/wd2.fxt" \
	>/dev/null 2>"$tmp/wd2.err" &&
	[ "$("$snap" dump "$tmp/wd1.fxt" | grep 'name="hit trigger_here"')" = \
		"$("$snap" dump "$tmp/wd2.fxt" | grep 'name="hit trigger_here"')" ] &&
	"$snap" dump "$tmp/wd2.fxt" | grep -q 'name="hit trigger_here"'; then
	echo "PASS triggers_decode_workdir_keeps_hits"
else
	echo "FAIL triggers_decode_workdir_keeps_hits: $(head -2 "$tmp/wd1.err" "$tmp/wd2.err" | tr '\n' ' ')"
fi

# a line that does not exist: one clear line, exit 1
timeout -s KILL 60 "$snap" run -sampling -trigger "nest.c:9999" -o "$tmp/x.fxt" -- "$nest" 10 5 \
	>/dev/null 2>"$tmp/noline.err"
rc=$?
if [ $rc = 1 ] && grep -q "nest.c:9999: .*FILE:LINE" "$tmp/noline.err"; then
	echo "PASS triggers_missing_line"
else
	echo "FAIL triggers_missing_line: exit $rc: $(head -3 "$tmp/noline.err" | tr '\n' ' ')"
fi

# symbol:? on a terminal, answered with the name (no fzf: a numbered list)
if command -v script >/dev/null && ! command -v fzf >/dev/null; then
	printf 'trigger_here\n' | timeout -s KILL 60 script -qec \
		"$snap run -sampling -timer-resolution Sample:2000 -trigger 'symbol:?' -o $tmp/pick.fxt -- $nest 3000 1500" \
		/dev/null >"$tmp/pick.out" 2>&1
	if grep -q "trigger trigger_here hit by tid" "$tmp/pick.out"; then
		echo "PASS triggers_symbol_picker"
	else
		echo "FAIL triggers_symbol_picker: $(tail -3 "$tmp/pick.out" | tr '\r\n' '  ')"
	fi
else
	echo "SKIP triggers_symbol_picker: needs script(1) and no fzf (fzf would wait for a person)"
fi
# line:? without a terminal cannot ask: a clear refusal
timeout -s KILL 30 "$snap" run -sampling -trigger 'line:?' -o "$tmp/l.fxt" -- "$nest" 10 5 \
	</dev/null >/dev/null 2>"$tmp/lpick.err"
rc=$?
if [ $rc = 1 ] && grep -q "no trigger line chosen" "$tmp/lpick.err"; then
	echo "PASS triggers_line_picker_needs_terminal"
else
	echo "FAIL triggers_line_picker_needs_terminal: exit $rc: $(head -2 "$tmp/lpick.err" | tr '\n' ' ')"
fi
exit 0
