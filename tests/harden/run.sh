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

t_decode_workdir_many

exit $fail
