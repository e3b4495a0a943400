#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Traces as the Perfetto UI reads them: each trace is imported with Perfetto's own importer,
# trace_processor_shell (v58.2; $SNAP_TRACE_PROCESSOR, else ../shared/tools/perfetto/
# trace_processor_shell beside the repository, where developers and CI have it; it needs
# Debian's libprotobuf32, listed in tests/deps.sh). Its slice table (thread, ts, dur, depth,
# name) must equal what the project's reader predicts (`snaptrace dump -tree`), no slice may
# be left open (dur -1) and its stats table must hold no 'error' or 'data_losses' entry
# (tests/perfetto/compare.py). The traces:
#   perfetto/golden/AREA/CASE   every golden case that writes a trace, decoded here as
#                               tests/golden/run.sh decodes it (its .args and .env);
#   perfetto/ptsynth/..., perfetto/e2e/...   the traces those suites wrote into
#                               $SNAP_TRACES_DIR/SUITE (tests/check.sh sets it and runs
#                               this suite after them; unset, they are skipped);
#   perfetto/mkfxt              tests/report/mkfxt.py's hand-made trace (no code of write/)
#                               against the slices its docstring lists;
#   perfetto/selftest/...       broken traces the check must fail on: a slice left open, an
#                               import error, a slice table other than predicted.
# Where the importer is absent (a user's clone) or does not run, the suite is skipped with
# the reason. Prints PASS/FAIL/SKIP lines.
set -u
cd "$(dirname "$0")/../.." || exit 1
snap=$PWD/snaptrace
tp=${SNAP_TRACE_PROCESSOR:-../shared/tools/perfetto/trace_processor_shell}
jobs=${SNAP_CHECK_JOBS:-$(nproc 2>/dev/null || echo 2)}
here=tests/perfetto
tmp=$(mktemp -d /tmp/snaptrace-perfetto.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

if [ ! -e "$tp" ]; then
	echo "SKIP perfetto: $tp not found (Perfetto's trace_processor_shell is not in a user's clone; SNAP_TRACE_PROCESSOR=PATH names one)"
	exit 0
fi
if ! "$tp" --version >"$tmp/version" 2>&1; then
	why=$(grep -m1 -i 'error\|not found' "$tmp/version" || head -1 "$tmp/version")
	echo "SKIP perfetto: $tp does not run: $why (it needs Debian's libprotobuf32: tests/deps.sh install)"
	exit 0
fi
if ! command -v python3 >/dev/null; then
	echo "SKIP perfetto: python3 not found (tests/deps.sh install)"
	exit 0
fi
if [ ! -x "$snap" ]; then
	echo "FAIL perfetto_setup: $snap missing (run make)"
	exit 1
fi
fail=0
compare() { python3 "$here/compare.py" "$tp" "$snap" "$jobs" "$@" || fail=1; }

# The hand-made trace, against its docstring (pid tid ts dur depth name).
python3 tests/report/mkfxt.py "$tmp/mt.fxt"
cat >"$tmp/mt.expected" <<'EOF'
100 101 1000 2000 0 main
100 101 1100 300 1 work
100 101 1500 200 1 helper
100 101 1800 100 1 work
EOF
compare --expect "$tmp/mt.expected" mkfxt="$tmp/mt.fxt"

# The check fails where it should. Broken copies of mkfxt's trace: the last record (main's
# end) dropped; that end's name a string index never defined; a wrong expectation.
python3 - "$tmp" <<'PY'
import struct, sys
d = open(sys.argv[1] + "/mt.fxt", "rb").read()
open(sys.argv[1] + "/open.fxt", "wb").write(d[:-16])
h = struct.unpack("<Q", d[-16:-8])[0]
h = (h & ~(0xFFFF << 48)) | (77 << 48)
open(sys.argv[1] + "/badname.fxt", "wb").write(d[:-16] + struct.pack("<Q", h) + d[-8:])
PY
sed 's/^100 101 1500 200 1 helper$/100 101 1500 201 1 helper/' "$tmp/mt.expected" >"$tmp/wrong.expected"
compare --must-fail "left open" --expect "$tmp/mt.expected" selftest/open_slice="$tmp/open.fxt"
compare --must-fail "import errors in stats" --expect "$tmp/mt.expected" \
	selftest/import_error="$tmp/badname.fxt"
compare --must-fail "predicted, not imported" --expect "$tmp/wrong.expected" \
	selftest/other_slices="$tmp/mt.fxt"
# ... and against dump -tree: a golden trace with a duration record cut out (the reader
# sees a slice never ended).
"$snap" decode -q -o "$tmp/cr.fxt" tests/golden/pt/call_return.txt 2>/dev/null
python3 - "$tmp/cr.fxt" "$tmp/cr_open.fxt" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
i, cut = 8, None
while i < len(d):  # the last end event (record type 4, event type 3)
    h = struct.unpack("<Q", d[i:i + 8])[0]
    if h & 15 == 4 and (h >> 16) & 15 == 3:
        cut = (i, i + 8 * ((h >> 4) & 0xFFF))
    i += 8 * ((h >> 4) & 0xFFF)
open(sys.argv[2], "wb").write(d[:cut[0]] + d[cut[1]:])
PY
compare --must-fail "never ends" selftest/reader_open="$tmp/cr_open.fxt"

# Every golden case that writes a trace, decoded as tests/golden/run.sh does.
items=()
. tests/golden/case.sh
for input in tests/golden/*/*.txt; do
	golden_case "$input"
	out=$tmp/golden/$name.fxt
	mkdir -p "$(dirname "$out")"
	tail -n +2 "$input" >"$tmp/input.txt"
	env ${envs[@]+"${envs[@]}"} "$snap" decode -q "${args[@]}" -o "$out" "$tmp/input.txt" \
		>/dev/null 2>&1 </dev/null
	[ -s "$out" ] && items+=("golden/$name=$out")
done
if [ ${#items[@]} -eq 0 ]; then
	echo "FAIL perfetto/golden: no golden case wrote a trace"
	fail=1
else
	compare "${items[@]}"
fi

# What the recording suites kept in $SNAP_TRACES_DIR (tests/check.sh sets it).
shopt -s nullglob
for suite in ptsynth e2e; do
	items=()
	for f in "${SNAP_TRACES_DIR:-/nonexistent}/$suite"/*.fxt "${SNAP_TRACES_DIR:-/nonexistent}/$suite"/*.fxt.gz; do
		label=${f##*/}
		items+=("$suite/${label%%.fxt*}=$f")
	done
	if [ ${#items[@]} -gt 0 ]; then
		compare "${items[@]}"
	elif [ -z "${SNAP_TRACES_DIR:-}" ]; then
		echo "SKIP perfetto/$suite: no traces kept (tests/check.sh $suite perfetto keeps them in \$SNAP_TRACES_DIR)"
	else
		echo "SKIP perfetto/$suite: $suite kept no trace in $SNAP_TRACES_DIR/$suite (skipped, or it did not run)"
	fi
done
exit $fail
