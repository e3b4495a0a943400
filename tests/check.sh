#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs the test suites and prints one summary line: "check: N passed, N failed, N skipped".
# Usage: tests/check.sh [-j N] [SUITE...]   (suites: unit layering and every tests/*/run.sh)
# Every suite prints lines "PASS name", "FAIL name: why" or "SKIP name: why".
#
# Two pools, as uftrace's runtest.py has: the independent suites run in parallel, N at a
# time (-j N, else $SNAP_CHECK_JOBS, else nproc); then the serial suites run one at a time
# with nothing beside them: those that record with perf and compare sample counts or
# shares (e2e, dlfilter, triggers, report, perfcmp), whose figures a busy CPU would skew.
# A suite is serial when its name is in $SNAP_CHECK_SERIAL (default below). Last comes
# perfetto, which imports the traces golden, ptsynth and e2e kept in $SNAP_TRACES_DIR.
# Progress: one "  TEST    SUITE (i/n)" line as each suite starts and "  DONE    SUITE
# (Ns)" as it ends; then, per suite in the order given (a stable order, whatever finished
# first), its FAIL and SKIP lines, the output of a failing suite, and its summary
# "SUITE: N passed, ...".
set -u
shopt -s nullglob
cd "$(dirname "$0")/.." || exit 2
: "${SNAP_BUILD:=build/default}"
: "${SNAP_CHECK_SERIAL:=e2e dlfilter triggers report perfcmp}"
export SNAP_BUILD SNAP_ROOT=$PWD
jobs=${SNAP_CHECK_JOBS:-$(nproc 2>/dev/null || echo 2)}
if [ "${1:-}" = -j ]; then
	jobs=${2:-}
	shift 2 || shift
elif [[ ${1:-} == -j?* ]]; then
	jobs=${1#-j}
	shift
fi
if ! [[ $jobs =~ ^[1-9][0-9]*$ ]]; then
	echo "check.sh: -j wants a number of parallel suites (1 or more), not '$jobs'" >&2
	exit 2
fi
log=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null; done
	rm -rf "$log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
	suites=(unit layering)
	for f in tests/*/run.sh; do
		suites+=("$(basename "$(dirname "$f")")")
	done
fi
for s in "${suites[@]}"; do
	case $s in
	unit | layering) ;;
	*) [ -f "tests/$s/run.sh" ] || {
		echo "check.sh: no suite '$s' (suites: unit layering $(printf '%s ' tests/*/run.sh | sed 's|tests/\([^/]*\)/run.sh|\1|g'))" >&2
		exit 2
	} ;;
	esac
done

# run_suite SUITE: runs it, its output in $log/SUITE.out (PASS/FAIL/SKIP lines and more).
run_suite() {
	local s=$1 out=$log/$1.out rc=0
	: >"$out"
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
	*) tests/"$s"/run.sh >"$out" 2>&1 </dev/null || rc=$? ;;
	esac
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL' "$out"; then
		echo "FAIL $s: suite exited $rc" >>"$out"
	fi
}

# report_suite SUITE: its FAIL/SKIP lines, the failures' details and its summary line.
report_suite() {
	local s=$1 out=$log/$1.out
	grep -E '^(FAIL|SKIP)' "$out" | sed "s/^/[$s] /"
	grep -q '^FAIL' "$out" && { echo "---- $s output (failures) ----"; grep -v '^PASS' "$out" | tail -60; }
	printf '%-10s %4d passed, %d failed, %d skipped\n' "$s:" "$(grep -c '^PASS' "$out")" \
		"$(grep -c '^FAIL' "$out")" "$(grep -c '^SKIP' "$out")"
}

parallel=()
serial=()
last=()
for s in "${suites[@]}"; do
	case " $SNAP_CHECK_SERIAL " in
	*" $s "*) serial+=("$s") ;;
	*) if [ "$s" = perfetto ]; then last+=("$s"); else parallel+=("$s"); fi ;;
	esac
done
# The longest suites start first, so that the pool's workers end together (the order of
# the summaries below stays the order given).
long=()
for s in ptsynth golden harden fxt; do
	case " ${parallel[*]} " in *" $s "*) long+=("$s") ;; esac
done
for s in ${parallel[@]+"${parallel[@]}"}; do
	case " ${long[*]} " in *" $s "*) ;; *) long+=("$s") ;; esac
done
parallel=(${long[@]+"${long[@]}"})
# The traces the suites keep for tests/perfetto (tests/perfetto/keep.sh).
if [ ${#last[@]} -gt 0 ] && [ -z "${SNAP_TRACES_DIR:-}" ]; then
	export SNAP_TRACES_DIR=$log/traces
fi

i=0
started() {
	i=$((i + 1))
	printf '  %-7s %s (%d/%d)\n' TEST "$1" "$i" "${#suites[@]}"
}
finished() { printf '  %-7s %s (%ds)\n' DONE "$1" "$(($(date +%s) - $2))"; }

# The parallel pool: each suite in its own process group (so an interrupt stops all of
# it), at most $jobs at a time; "wait -n -p" names the one that ended.
declare -A pid_suite=() pid_start=()
reap() { # waits for one suite of the pool to end
	local done_pid
	wait -n -p done_pid "${pids[@]}"
	finished "${pid_suite[$done_pid]}" "${pid_start[$done_pid]}"
	mapfile -t pids < <(printf '%s\n' "${pids[@]}" | grep -vx "$done_pid")
}
for s in ${parallel[@]+"${parallel[@]}"}; do
	while [ ${#pids[@]} -ge "$jobs" ]; do reap; done
	started "$s"
	set -m
	run_suite "$s" &
	set +m
	pid_suite[$!]=$s
	pid_start[$!]=$(date +%s)
	pids+=("$!")
done
while [ ${#pids[@]} -gt 0 ]; do reap; done
pids=()

# The serial pool: one suite at a time, alone on the machine (as far as check.sh goes).
for s in ${serial[@]+"${serial[@]}"} ${last[@]+"${last[@]}"}; do
	started "$s"
	t0=$(date +%s)
	set -m
	run_suite "$s" & # in its own process group too, stopped with the rest on a signal
	set +m
	pids=("$!")
	wait "$!"
	pids=()
	finished "$s" "$t0"
done

for s in "${suites[@]}"; do
	report_suite "$s"
done
p=$(cat "$log"/*.out 2>/dev/null | grep -c '^PASS')
f=$(cat "$log"/*.out 2>/dev/null | grep -c '^FAIL')
k=$(cat "$log"/*.out 2>/dev/null | grep -c '^SKIP')
echo "check: $p passed, $f failed, $k skipped"
[ "$f" -eq 0 ]
