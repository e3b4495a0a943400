#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs the test suites and prints one summary line: "check: N passed, N failed, N skipped".
# Usage: tests/check.sh [SUITE...]   (suites: unit layering and every tests/*/run.sh)
# Every suite prints lines "PASS name", "FAIL name: why" or "SKIP name: why".
# Progress: one "  TEST    SUITE (i/n)" line as each suite starts, then its FAIL and SKIP
# lines, the output of a failing suite, and its summary "SUITE: N passed, ...".
set -u
shopt -s nullglob
cd "$(dirname "$0")/.."
: "${SNAP_BUILD:=build/default}"
export SNAP_BUILD SNAP_ROOT=$PWD
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
	suites=(unit layering)
	for f in tests/*/run.sh; do
		suites+=("$(basename "$(dirname "$f")")")
	done
fi

run_suite() {
	local s=$1 out=$log/$1.out rc=0
	case $s in
	unit)
		for t in "$SNAP_BUILD"/tests/unit/test_*; do
			[ -x "$t" ] || continue
			local one=$log/unit.one trc=0
			"$t" >"$one" 2>&1 || trc=$?
			cat "$one" >>"$out"
			# a test binary that dies without printing FAIL (crash, sanitizer) still fails
			if [ "$trc" -ne 0 ] && ! grep -q '^FAIL' "$one"; then
				echo "FAIL $(basename "$t"): exit $trc" >>"$out"
			fi
		done
		rm -f "$log/unit.one" ;;
	layering) tests/layering.sh >"$out" 2>&1 || rc=$? ;;
	*) tests/"$s"/run.sh >"$out" 2>&1 || rc=$? ;;
	esac
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL' "$out"; then
		echo "FAIL $s: suite exited $rc" >>"$out"
	fi
	grep -E '^(FAIL|SKIP)' "$out" | sed "s/^/[$s] /"
	grep -q '^FAIL' "$out" && { echo "---- $s output (failures) ----"; grep -v '^PASS' "$out" | tail -60; }
	printf '%-10s %4d passed, %d failed, %d skipped\n' "$s:" "$(grep -c '^PASS' "$out")" \
		"$(grep -c '^FAIL' "$out")" "$(grep -c '^SKIP' "$out")"
}

i=0
for s in "${suites[@]}"; do
	i=$((i + 1))
	printf '  %-7s %s (%d/%d)\n' TEST "$s" "$i" "${#suites[@]}"
	run_suite "$s"
done
p=$(cat "$log"/*.out 2>/dev/null | grep -c '^PASS')
f=$(cat "$log"/*.out 2>/dev/null | grep -c '^FAIL')
k=$(cat "$log"/*.out 2>/dev/null | grep -c '^SKIP')
echo "check: $p passed, $f failed, $k skipped"
[ "$f" -eq 0 ]
