#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Hardening: bad input and hostile surroundings (docs/guarantees.md). Each test
# is a repro that once crashed, hung, destroyed a file or left something behind.
# Needs only ./snaptrace (perf where a test says so). Prints PASS/FAIL/SKIP lines.
set -u
cd "$(dirname "$0")/../.."
: "${SNAP_BUILD:=build/default}"
snap=${SNAP_BIN:-$PWD/snaptrace} # SNAP_BIN: try another build (e.g. main)
tmp=$(mktemp -d /tmp/snaptrace-harden.XXXXXX)
fail=0
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

pass() { echo "PASS harden_$1"; }
failed() {
	echo "FAIL harden_$1: $2"
	fail=1
}
skip() { echo "SKIP harden_$1: $2"; }

if [ ! -x "$snap" ]; then
	echo "FAIL harden_setup: $snap missing (run make)"
	exit 1
fi
export TMPDIR=$tmp/tmpdir
mkdir -p "$TMPDIR"
root=0
[ "$(id -u)" -eq 0 ] && root=1
perf_ok=0
command -v perf >/dev/null && perf version >/dev/null 2>&1 && perf_ok=1

# snap NAME ARGS...: runs snaptrace (60 s cap), output in $tmp/NAME.{out,err}, rc in $rc.
snap() {
	local name=$1
	shift
	timeout -s KILL 60 "$snap" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null
	rc=$?
}

# snap_ulimit OPT N NAME ARGS...: snap NAME ARGS... in a subshell under `ulimit OPT N`.
snap_ulimit() {
	local opt=$1 n=$2
	shift 2
	(
		ulimit "$opt" "$n"
		snap "$@"
		exit $rc
	)
	rc=$?
}

# need_perf NAME [WHAT]: true where perf works, else says SKIP for t_NAME (WHAT: the
# part of it that ran and passed without perf).
need_perf() {
	[ $perf_ok -eq 1 ] && return 0
	skip "$1" "perf is not installed${2:+ ($2 passed)}"
	return 1
}

# checks FXT: true when `snaptrace dump -check` accepts the trace FXT.
checks() { "$snap" dump -check "$1" >/dev/null 2>&1; }

# waitfor FILE TEXT: waits (at most 60 s) until FILE holds TEXT.
waitfor() {
	local i
	for i in $(seq 600); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# Item 1: more perf.data files in -working-directory than decode's arguments.
t_decode_workdir_many() {
	local d=$tmp/many
	mkdir -p "$d"
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do : >"$d/perf.data.$i"; done
	snap many decode -working-directory "$d" -o "$tmp/many.fxt"
	if [ $rc -eq 1 ] && grep -q "no events to decode" "$tmp/many.err"; then
		pass decode_workdir_many
	else
		failed decode_workdir_many "rc $rc: $(head -3 "$tmp/many.err")"
	fi
}

# Item 2: -o onto a symlink, a 0600 file, a pipe (/dev/stdout) or a device.
t_output_kinds() {
	local in=tests/golden/perfscript/pt_threads.txt d=$tmp/out st
	mkdir -p "$d"
	: >"$d/real.fxt"
	chmod 600 "$d/real.fxt"
	ln -s real.fxt "$d/link.fxt"
	snap out1 decode "$in" -o "$d/link.fxt"
	st=$(stat -c '%F %a' "$d/real.fxt")
	if [ $rc -ne 0 ] || [ ! -L "$d/link.fxt" ] || [ "$st" != "regular file 600" ] ||
		! checks "$d/link.fxt"; then
		failed output_kinds "link/mode: rc $rc, link $(stat -c %F "$d/link.fxt"), real $st"
		return
	fi
	timeout -s KILL 60 "$snap" decode "$in" -o /dev/stdout 2>/dev/null </dev/null | cat >"$d/piped.fxt"
	if ! checks "$d/piped.fxt"; then
		failed output_kinds "-o /dev/stdout did not give a trace: $(wc -c <"$d/piped.fxt") bytes"
		return
	fi
	if [ $root -eq 1 ] && mknod "$d/null" c 1 3 2>/dev/null; then
		snap out2 decode "$in" -o "$d/null"
		if [ $rc -ne 0 ] || [ ! -c "$d/null" ]; then
			failed output_kinds "device replaced: rc $rc, $(stat -c %F "$d/null")"
			return
		fi
	fi
	if [ -n "$(find "$d" -name '.*' -print -quit)" ]; then
		failed output_kinds "temporary file left: $(ls -a "$d")"
		return
	fi
	pass output_kinds
}

# Item 5: -working-directory removes only perf.data and perf.data.<digits>, and
# refuses a symbolic link, also written with a trailing slash.
t_workdir_symlink() {
	local d=$tmp/wdl
	mkdir -p "$d/real"
	ln -s real "$d/link"
	: >"$d/real/perf.data"
	: >"$d/real/perf.data-notes.txt"
	snap wdl run -sampling -working-directory "$d/link/" -o "$d/x.fxt" -- true
	if [ $rc -eq 0 ] || ! grep -q "symbolic link" "$tmp/wdl.err" ||
		[ ! -e "$d/real/perf.data" ] || [ ! -e "$d/real/perf.data-notes.txt" ]; then
		failed workdir_symlink "rc $rc: $(head -2 "$tmp/wdl.err"); left: $(ls "$d/real")"
		return
	fi
	pass workdir_symlink
}

# Item 3: a perf.data whose header does not fit the file (data.size 1 or
# 2^64-1, or cut short) is refused before perf runs (perf spins forever on some).
t_perfdata_header() {
	local d=$tmp/hdr
	if [ $perf_ok -eq 0 ] || ! perf record -o "$tmp/hdr.data" --no-bpf-event -e cpu-clock \
		-F 1000 -- true >/dev/null 2>&1; then
		skip perfdata_header "perf record -e cpu-clock does not work here"
		return
	fi
	mkdir -p "$d"
	for v in 01 ff; do
		cp "$tmp/hdr.data" "$d/$v.data"
		# data.size is the u64 at byte 48 (little endian)
		if [ $v = 01 ]; then printf '\001\0\0\0\0\0\0\0'; else printf '\377\377\377\377\377\377\377\377'; fi |
			dd of="$d/$v.data" bs=1 seek=48 conv=notrunc status=none
	done
	head -c 300 "$tmp/hdr.data" >"$d/cut.data"
	for f in 01 ff cut; do
		timeout -s KILL 20 "$snap" decode "$d/$f.data" -o "$d/$f.fxt" >/dev/null \
			2>"$tmp/hdr.err" </dev/null
		rc=$?
		if [ $rc -ne 1 ] || ! grep -Eq "damaged|cut short" "$tmp/hdr.err"; then
			failed perfdata_header "$f: rc $rc: $(head -2 "$tmp/hdr.err")"
			return
		fi
	done
	pass perfdata_header
}

# Item 3: perf script that prints nothing (spinning on damaged input) is stopped
# after SNAPTRACE_PERF_STALL_SECONDS, on both paths, with a message naming it.
t_perf_stall() {
	local path
	for path in plugin text; do
		local extra=()
		[ $path = text ] && extra=(-no-dlfilter)
		SNAPTRACE_PERF_STALL_SECONDS=1 SNAPTRACE_PERF=$PWD/tests/harden/fakeperf \
			snap stall decode "${extra[@]}" tests/harden/min.data -o "$tmp/stall.fxt"
		if [ $rc -ne 1 ] || ! grep -q "printed nothing" "$tmp/stall.err" || [ -e "$tmp/stall.fxt" ]; then
			failed perf_stall "$path: rc $rc: $(head -2 "$tmp/stall.err")"
			return
		fi
	done
	pass perf_stall
}

# Item 3: SIGINT to decode's process group while perf script runs the plugin
# stops decode ("interrupted"), and perf is not started again on the text path.
t_sigint_plugin() {
	local log=$tmp/sigint.log pid i
	: >"$log"
	FAKE_PERF_LOG=$log SNAPTRACE_PERF=$PWD/tests/harden/fakeperf setsid "$snap" decode \
		tests/harden/min.data -o "$tmp/sigint.fxt" >/dev/null 2>"$tmp/sigint.err" </dev/null &
	pid=$!
	waitfor "$log" script
	kill -INT -- -"$pid" 2>/dev/null
	for i in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL -- -"$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		failed sigint_plugin "still running 10 s after SIGINT; perf runs: $(grep -c script "$log")"
		return
	fi
	wait "$pid"
	rc=$?
	if [ $rc -eq 0 ] || [ "$(grep -c script "$log")" -ne 1 ] || ! grep -q interrupted "$tmp/sigint.err"; then
		failed sigint_plugin "rc $rc, perf runs $(grep -c script "$log"): $(head -2 "$tmp/sigint.err")"
		return
	fi
	pass sigint_plugin
}

# Items 3 and 11: perf script killed by a signal before the plugin sent anything
# is not "the plugin gave nothing": perf is not run again on the text path, and
# SIGBUS is reported as a damaged or cut file.
t_perf_killed() {
	local sig log=$tmp/killed.log
	for sig in TERM BUS; do
		: >"$log"
		FAKE_PERF_MODE=$sig FAKE_PERF_LOG=$log SNAPTRACE_PERF=$PWD/tests/harden/fakeperf \
			snap killed decode tests/harden/min.data -o "$tmp/killed.fxt"
		if [ $rc -ne 1 ] || [ "$(grep -c script "$log")" -ne 1 ] || grep -q "gave nothing" "$tmp/killed.err"; then
			failed perf_killed "$sig: rc $rc, perf runs $(grep -c script "$log"): $(head -2 "$tmp/killed.err")"
			return
		fi
	done
	if ! grep -q "damaged or was cut short" "$tmp/killed.err"; then
		failed perf_killed "SIGBUS message: $(head -2 "$tmp/killed.err")"
		return
	fi
	pass perf_killed
}

# Item 7: 100,000 returns without calls nest no deeper than 512 levels, and the
# warning gives the count of what was dropped.
t_returns_without_calls() {
	awk 'BEGIN {
		printf " 7/7 0.000001000:   tr strt 0 [unknown] ([unknown]) => 401000 main+0x0 (/t)\n"
		for (i = 0; i < 100000; i++)
			printf " 7/7 %d.%09d:   return 402000 f+0x0 (/t) => 401000 main+0x0 (/t)\n", 1 + i / 1000000, 1000 + i
	}' >"$tmp/rets.txt"
	snap rets decode "$tmp/rets.txt" -o "$tmp/rets.fxt"
	if [ $rc -ne 0 ] || ! grep -Eq "dropped [0-9]+ returns? without a call" "$tmp/rets.err"; then
		failed returns_without_calls "rc $rc: $(head -3 "$tmp/rets.err")"
		return
	fi
	"$snap" dump -check "$tmp/rets.fxt" >"$tmp/rets.chk" 2>&1
	if [ $? -ne 0 ] || grep -q "deeper" "$tmp/rets.chk"; then
		failed returns_without_calls "dump -check: $(head -2 "$tmp/rets.chk")"
		return
	fi
	pass returns_without_calls
}

# Item 4: a time span beyond 2^63 ns is clamped with a count, so that
# `dump -check` accepts what decode writes.
t_time_span() {
	printf '%s\n' ' 7/7 0.000001000:   tr strt 0 [unknown] ([unknown]) => 401000 main+0x0 (/t)' \
		' 7/7 0.000002000:   call 401000 main+0x0 (/t) => 402000 f+0x0 (/t)' \
		' 7/7 9300000000.000000000:   return 402000 f+0x0 (/t) => 401000 main+0x0 (/t)' >"$tmp/span.txt"
	snap span decode "$tmp/span.txt" -o "$tmp/span.fxt"
	if [ $rc -ne 0 ] || ! grep -q "beyond 2^63 ns" "$tmp/span.err"; then
		failed time_span "rc $rc: $(head -2 "$tmp/span.err")"
		return
	fi
	if ! "$snap" dump -check "$tmp/span.fxt" >"$tmp/span.chk" 2>&1; then
		failed time_span "dump -check: $(head -2 "$tmp/span.chk")"
		return
	fi
	pass time_span
}

# Item 9: decode killed with SIGKILL (or by the OOM killer) while it writes
# leaves nothing next to the output (an unnamed O_TMPFILE file).
t_sigkill_leftover() {
	local d=$tmp/kill log=$tmp/kill.log pid
	mkdir -p "$d"
	: >"$log"
	FAKE_PERF_LOG=$log SNAPTRACE_PERF=$PWD/tests/harden/fakeperf "$snap" decode \
		tests/harden/min.data -o "$d/out.fxt.gz" >/dev/null 2>&1 </dev/null &
	pid=$!
	waitfor "$log" script
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	if [ -n "$(ls -A "$d")" ]; then
		failed sigkill_leftover "left: $(ls -A "$d")"
		return
	fi
	pass sigkill_leftover
}

# Item 10: dump checks the FXT magic on the first inflated bytes (a gzip bomb
# of 500 MB of zeros is refused at once), and streams: under a 200 MB address
# space limit (not with ASan, which needs more) it still answers, and a trace
# of 2 million events is printed and checked within 120 MB.
t_dump_streams() {
	head -c 500000000 /dev/zero | gzip -1 >"$tmp/bomb.gz"
	if grep -q __asan_init "$snap" 2>/dev/null; then
		timeout -s KILL 60 "$snap" dump "$tmp/bomb.gz" >/dev/null 2>"$tmp/bomb.err"
	else
		(ulimit -v 200000 && timeout -s KILL 60 "$snap" dump "$tmp/bomb.gz") >/dev/null 2>"$tmp/bomb.err"
	fi
	rc=$?
	if [ $rc -ne 1 ] || ! grep -q "not an FXT trace" "$tmp/bomb.err"; then
		failed dump_streams "rc $rc: $(head -2 "$tmp/bomb.err")"
		return
	fi
	rm -f "$tmp/bomb.gz"
	# dump and dump -check of 2 million events within 120 MB of address space
	awk 'BEGIN { printf " 7/7 0.000001000:   tr strt 0 [unknown] ([unknown]) => 401000 main+0x0 (/t)\n"; t = 2000
		for (i = 0; i < 1000000; i++) {
			printf " 7/7 0.%09d:   call 401000 main+0x0 (/t) => 402000 f%d+0x0 (/t)\n", t++, i % 5000
			printf " 7/7 0.%09d:   return 402000 f%d+0x0 (/t) => 401000 main+0x0 (/t)\n", t++, i % 5000 } }' >"$tmp/big.txt"
	snap big decode "$tmp/big.txt" -o "$tmp/big.fxt.gz"
	rm -f "$tmp/big.txt"
	if [ $rc -ne 0 ]; then
		failed dump_streams "decode: rc $rc: $(head -2 "$tmp/big.err")"
		return
	fi
	if ! grep -q __asan_init "$snap" 2>/dev/null; then
		(ulimit -v 120000 && "$snap" dump -check "$tmp/big.fxt.gz") >"$tmp/bigc.out" 2>&1
		rc=$?
		if [ $rc -ne 0 ] || ! grep -q "^ok: .* 2000002 events" "$tmp/bigc.out"; then
			failed dump_streams "dump -check in 120 MB: rc $rc: $(head -2 "$tmp/bigc.out")"
			return
		fi
		(ulimit -v 120000 && "$snap" dump "$tmp/big.fxt.gz") 2>"$tmp/bigd.err" | tail -1 >"$tmp/bigd.out"
		if ! grep -q '^end ts=.*name="main"' "$tmp/bigd.out"; then
			failed dump_streams "dump in 120 MB: $(head -2 "$tmp/bigd.err")"
			return
		fi
	fi
	pass dump_streams
}

# Item 11: messages that mislead. Each case: what decode says (and does).
t_messages() {
	local d=$tmp/msg long
	mkdir -p "$d"
	# an unparseable timestamp: a line not understood, not a sample on a new track
	printf 'prog 123/123 12x.5:     250000 cpu-clock:\n\t401000 main+0x0 (/t)\n\nprog 123/123 1.000002000:     250000 cpu-clock:\n\t401000 main+0x0 (/t)\n\n' >"$d/ts.txt"
	snap m1 decode "$d/ts.txt" -o "$d/ts.fxt"
	if [ $rc -ne 0 ] || ! grep -q "not understood (first, line 1" "$tmp/m1.err" ||
		"$snap" dump "$d/ts.fxt" | grep -q "cpu-clock"; then
		failed messages "bad timestamp: rc $rc: $(head -2 "$tmp/m1.err")"
		return
	fi
	# NUL bytes: lines not understood, never a track named after the damage
	printf 'prog 123/123 1.000001000:     250000 cpu-clock:\n\t401000 main+0x0 (/t)\n\npr\0g 123/123 1.000002000:     250000 cpu-\0clock:\n\t401000 main+0x0 (/t)\n\n' >"$d/nul.txt"
	snap m2 decode "$d/nul.txt" -o "$d/nul.fxt"
	if [ $rc -ne 0 ] || ! grep -q "not understood" "$tmp/m2.err" ||
		"$snap" dump "$d/nul.fxt" | grep -q 'x00'; then
		failed messages "NUL line: rc $rc: $(head -2 "$tmp/m2.err")"
		return
	fi
	# perf.data on stdin: refused with the fix, not parsed as text
	timeout -s KILL 60 "$snap" decode - -o "$d/stdin.fxt" <tests/harden/min.data >/dev/null 2>"$tmp/m3.err"
	rc=$?
	if [ $rc -ne 1 ] || ! grep -q "stdin holds a perf.data file" "$tmp/m3.err"; then
		failed messages "perf.data on stdin: rc $rc: $(head -2 "$tmp/m3.err")"
		return
	fi
	# time going backwards: said without -v
	printf 'prog 123/123 2.000000000:     250000 cpu-clock:\n\t401000 main+0x0 (/t)\n\nprog 123/123 1.000000000:     250000 cpu-clock:\n\t401000 main+0x0 (/t)\n\n' >"$d/back.txt"
	snap m4 decode "$d/back.txt" -o "$d/back.fxt"
	if [ $rc -ne 0 ] || ! grep -q "went backwards" "$tmp/m4.err"; then
		failed messages "time backwards: rc $rc: $(head -2 "$tmp/m4.err")"
		return
	fi
	# invalid UTF-8: replaced (U+FFFD), said, and the trace passes the checker
	printf 'prog 123/123 1.000001000:     250000 cpu-clock:\n\t401000 m\351in+0x0 (/t)\n\n' >"$d/latin.txt"
	snap m5 decode "$d/latin.txt" -o "$d/latin.fxt"
	if [ $rc -ne 0 ] || ! grep -q "not UTF-8" "$tmp/m5.err" ||
		! "$snap" dump "$d/latin.fxt" | grep -q "m$(printf '\357\277\275')in" ||
		! checks "$d/latin.fxt"; then
		failed messages "invalid UTF-8: rc $rc: $(head -2 "$tmp/m5.err")"
		return
	fi
	# frames beyond 65536: said as such, not as lines not understood
	awk 'BEGIN { printf "prog 123/123 1.000001000:     250000 cpu-clock:\n"; for (i = 0; i < 65546; i++) printf "\t%x f%d+0x0 (/t)\n", 4096 + i, i % 3; printf "\n" }' >"$d/deep.txt"
	snap m6 decode "$d/deep.txt" -o "$d/deep.fxt"
	if [ $rc -ne 0 ] || ! grep -q "dropped 10 call-chain frames" "$tmp/m6.err" ||
		grep -q "not understood" "$tmp/m6.err"; then
		failed messages "deep chain: rc $rc: $(head -2 "$tmp/m6.err")"
		return
	fi
	# an output name of 255 bytes
	long=$(printf 'o%.0s' $(seq 255))
	snap m7 decode "$d/back.txt" -o "$d/$long"
	if [ $rc -ne 0 ] || [ ! -s "$d/$long" ]; then
		failed messages "255-byte output name: rc $rc: $(head -2 "$tmp/m7.err")"
		return
	fi
	# a full disk names the output, not the input (as root: a private /dev/full)
	if [ $root -eq 1 ] && mknod "$d/full" c 1 7 2>/dev/null; then
		awk 'BEGIN { for (i = 0; i < 20000; i++) printf "prog 123/123 1.%09d:     250000 cpu-clock:\n\t401000 f%d+0x0 (/t)\n\n", i, i }' >"$d/many.txt"
		snap m8 decode "$d/many.txt" -o "$d/full"
		if [ $rc -ne 1 ] || ! grep -q "cannot write $d/full: No space left" "$tmp/m8.err" || [ ! -c "$d/full" ]; then
			failed messages "ENOSPC: rc $rc: $(head -2 "$tmp/m8.err")"
			return
		fi
	fi
	pass messages
}

# perf script's own warnings about lost data ("Processed N events and lost M
# chunks!", "Check IO/CPU overload!", "... lost P%!") are not relayed on either
# path (the pipeline says it in its words); perf's other stderr lines are.
t_perf_warnings() {
	local d=$tmp/pw path err
	if [ $perf_ok -eq 0 ] || ! perf record -o "$tmp/pw.data" --no-bpf-event -e cpu-clock \
		-F 1000 -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done' >/dev/null 2>&1; then
		skip perf_warnings "perf record -e cpu-clock does not work here"
		return
	fi
	mkdir -p "$d"
	for path in plugin text; do
		err=$d/$path.err
		SNAPTRACE_NO_DLFILTER=$([ $path = text ] && echo 1 || echo 0) FAKE_SCRIPT=warn \
			SNAPTRACE_PERF=$PWD/tests/harden/perfwrap timeout -s KILL 60 "$snap" decode \
			"$tmp/pw.data" -o "$d/$path.fxt" >/dev/null 2>"$err" </dev/null
		rc=$?
		# (a recording without a sample ends in "no events": rc 1, perf ran)
		if [ $rc -gt 1 ] || ! grep -qx "fake perf: this line is relayed" "$err" ||
			grep -Eq "lost 7 chunks|IO/CPU overload|lost 3\.14%|^Warning:$" "$err"; then
			failed perf_warnings "$path: rc $rc: $(head -8 "$err" | tr '\n' '|')"
			return
		fi
	done
	pass perf_warnings
}

# Item 11: perf failing on damaged input (plugin path) is reported as such, once,
# with perf's own message; perf is not run a second time on the text path. A
# plugin perf cannot load still falls back to the text path.
t_perf_fails_once() {
	need_perf perf_fails_once || return
	snap pf1 decode tests/harden/min.data -o "$tmp/pf1.fxt"
	if [ $rc -ne 1 ] || [ "$(grep -c "incompatible file format" "$tmp/pf1.err")" -ne 1 ] ||
		! grep -q "perf script failed (status" "$tmp/pf1.err" || grep -q "gave nothing" "$tmp/pf1.err"; then
		failed perf_fails_once "rc $rc: $(head -5 "$tmp/pf1.err" | tr '\n' '|')"
		return
	fi
	if [ -s "$tmp/hdr.data" ]; then
		SNAPTRACE_DLFILTER=$PWD/tests/harden/min.data snap pf2 decode "$tmp/hdr.data" -o "$tmp/pf2.fxt"
		# (the recording of `true` may hold no sample: then "no events", rc 1)
		if [ $rc -gt 1 ] || ! grep -q "could not load the dlfilter plugin" "$tmp/pf2.err"; then
			failed perf_fails_once "bad plugin: rc $rc: $(head -3 "$tmp/pf2.err" | tr '\n' '|')"
			return
		fi
	fi
	pass perf_fails_once
}

t_decode_workdir_many
t_perf_warnings
t_messages
t_dump_streams
t_sigkill_leftover
t_time_span
t_returns_without_calls
t_perf_killed
t_perf_stall
t_sigint_plugin
t_perfdata_header
t_perf_fails_once
t_workdir_symlink
t_output_kinds
. tests/harden/files.sh # issue 20: files in directories others can write, locks, escapes

. tests/harden/hostile.sh

. tests/harden/attacker.sh # session 30: another local user attacks root's run

exit $fail
