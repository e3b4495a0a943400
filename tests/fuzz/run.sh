#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Replays every committed fuzz corpus through its replay_<target> binary
# (built without libFuzzer by the Makefile; sanitized in the SAN build).
# Prints "PASS fuzz-replay <target> (N inputs)", FAIL or SKIP per target.
set -u
cd "$(dirname "$0")/../.."
: "${SNAP_BUILD:=build/default}"
shopt -s nullglob
bins=("$SNAP_BUILD"/tests/fuzz/replay_fuzz_*)
if [ ${#bins[@]} -eq 0 ]; then
	echo "SKIP fuzz-replay: no replay binaries in $SNAP_BUILD/tests/fuzz (make test-bins)"
	exit 0
fi
rc=0
for bin in "${bins[@]}"; do
	[ -x "$bin" ] || continue
	target=${bin##*/replay_}
	corpus=tests/fuzz/corpus/$target
	if [ ! -d "$corpus" ]; then
		echo "SKIP fuzz-replay $target: no corpus directory $corpus"
		continue
	fi
	log=$(mktemp)
	if "$bin" "$corpus" >"$log" 2>&1; then
		n=$(sed -n 's/^replayed \([0-9]*\) inputs$/\1/p' "$log" | tail -1)
		echo "PASS fuzz-replay $target (${n:-?} inputs)"
	else
		code=$?
		echo "FAIL fuzz-replay $target: exit $code: $(grep -m1 -E 'ERROR|runtime error|replay:' "$log" || tail -1 "$log")"
		tail -20 "$log"
		rc=1
	fi
	rm -f "$log"
done
exit $rc
