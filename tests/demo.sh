#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo: install what is missing (before anything is compiled: a fresh
# machine has no libmicrohttpd, libdw... headers), build snaptrace, build
# tests/progs/demo.c, record it with ./snaptrace run in the best mode this
# machine allows (Intel PT, else stack sampling) and write trace.fxt.gz in the
# repository root. tests/setup/run.sh checks the order.
set -u
cd "$(dirname "$0")/.."
if ! tests/deps.sh install; then
	echo "demo: install the packages above, then run 'make demo' again" >&2
	exit 1
fi
make -s all || exit 1
mkdir -p build/demo
if command -v clang >/dev/null; then
	cc="clang -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
else
	cc="gcc -O0 -g -fno-omit-frame-pointer"
fi
printf '  %-7s %s\n' CCLD build/demo/demo
$cc -o build/demo/demo tests/progs/demo.c -ldl -lm || exit 1
if [ -e /sys/bus/event_source/devices/intel_pt ]; then
	mode="" # Intel PT: every call and return
	what="Intel PT"
else
	mode="-sampling"
	what="stack sampling (no Intel PT here)"
fi
echo "demo: recording build/demo/demo with $what" >&2
./snaptrace run $mode -o trace.fxt.gz -- build/demo/demo >/dev/null
rc=$?
if [ $rc -ne 0 ] || [ ! -s trace.fxt.gz ]; then
	echo "demo: snaptrace run failed (exit $rc); 'snaptrace doctor' says what this machine lacks" >&2
	exit 1
fi
cat <<MSG
demo: wrote $PWD/trace.fxt.gz
demo: open https://ui.perfetto.dev, click "Open trace file" and pick it
      (or drag the file onto the page). The demo thread's track shows main,
      lookup_and_call and libm's cos (__cos_fma); with Intel PT every call
      (dlopen, dlsym, printf...) shows, with sampling those a sample hit.
MSG
