#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `snaptrace report` against `snaptrace dump -check` on the same FXT trace: the
# 3.84 M-branch synthetic Intel PT recording that tests/bench/dlfilter.sh makes
# (build/bench/pt8.data), decoded once. Issue 12 asks report <= 2x dump -check.
#   tests/bench/report.sh [PERF.DATA]
# Prints best-of-3 wall and CPU seconds, peak RSS, and the ratio. Never fails on timing.
set -u
cd "$(dirname "$0")/../.."
OUT=build/bench
data=${1:-$OUT/pt8.data}
if [ ! -f "$data" ]; then
	echo "bench report: no $data (tests/bench/dlfilter.sh makes it); skipped"
	exit 0
fi
if ! ./snaptrace decode -q -o "$OUT/report.fxt.gz" "$data" 2>"$OUT/report.err"; then
	echo "bench report: decode of $data failed: $(tail -1 "$OUT/report.err")"
	exit 0
fi
best() { # NAME VAR CMD...
	local name=$1 var=$2 i bw=999 bc=999 rss=0 w u s m
	shift 2
	for i in 1 2 3; do
		/usr/bin/time -f "%e %U %S %M" -o "$OUT/report.time" "$@" >/dev/null 2>&1
		read -r w u s m <"$OUT/report.time"
		bw=$(echo "if ($w < $bw) $w else $bw" | bc)
		bc=$(echo "c = $u + $s; if (c < $bc) c else $bc" | bc)
		[ "$m" -gt "$rss" ] && rss=$m
	done
	printf 'bench: %-44s %6.2f s wall %6.2f s CPU  peak RSS %6.1f MB\n' "$name" "$bw" "$bc" \
		"$(echo "scale=1; $rss / 1024" | bc)"
	eval "$var=$bw"
}
slices=$(./snaptrace report -json "$OUT/report.fxt.gz" | sed -n 's/^{"span_ns": [0-9]*, "slices": \([0-9]*\),.*/\1/p')
echo "bench: report on $(basename "$data") decoded to FXT ($slices slices, $(du -h "$OUT/report.fxt.gz" | cut -f1) gzip)"
best "snaptrace dump -check" wdump ./snaptrace dump -check "$OUT/report.fxt.gz"
best "snaptrace report" wrep ./snaptrace report "$OUT/report.fxt.gz"
best "snaptrace report -json -folded" wrep2 ./snaptrace report -json -folded "$OUT/report.folded" "$OUT/report.fxt.gz"
printf 'bench: report / dump -check: %.2fx wall (issue 12 target: <= 2x); with -json -folded: %.2fx\n' \
	"$(echo "scale=3; $wrep / $wdump" | bc)" "$(echo "scale=3; $wrep2 / $wdump" | bc)"
