#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The bench scripts' smoke test, without timing (`make bench` never runs in make check):
# tests/bench/cgstages.py's stage attribution on a callgrind file written by hand, and
# every bench script parses.
set -u
cd "$(dirname "$0")/../.." || exit 1
fails=0
if command -v python3 >/dev/null; then
	python3 tests/bench/cgstages.py selftest || fails=$((fails + 1))
else
	echo "SKIP bench_cgstages_selftest: no python3"
fi
for b in tests/bench.sh tests/bench/*.sh; do
	if bash -n "$b" 2>"${TMPDIR:-/tmp}/bench-smoke.$$"; then
		echo "PASS bench_parses_$(basename "$b" .sh)"
	else
		echo "FAIL bench_parses_$(basename "$b" .sh): $(head -1 "${TMPDIR:-/tmp}/bench-smoke.$$")"
		fails=$((fails + 1))
	fi
done
rm -f "${TMPDIR:-/tmp}/bench-smoke.$$"
exit $((fails > 0))
