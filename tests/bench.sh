#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: speed and memory figures for decode (parse + stacks + FXT). Prints figures;
# never fails on timing. Extra benchmarks: every tests/bench/*.sh.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
measure() { # label lines file out
	local label=$1 n=$2 in=$3 out=$4
	if ! /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" ./snaptrace decode -o "$out" "$in" 2>"$tmp/err"; then
		echo "bench: $label: decode failed: $(tail -1 "$tmp/err")"
		return 1
	fi
	read -r wall user sys rss <"$tmp/time"
	awk -v l="$label" -v n="$n" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN {
		if (w <= 0) w = 0.01
		printf "bench: %-34s %9d lines %6.2f s wall %6.2f s cpu %7.2f M lines/s %6.0f ns/event  peak RSS %6.1f MB\n",
			l, n, w, u + s, n / w / 1e6, w * 1e9 / n, r / 1024 }'
}
# gzcmp LABEL FXT: zlib level 1 (decode's level, src/cli/pipeline.c; write/pgz compresses
# with libdeflate) against level 6 (magic-trace's) on an FXT file: CPU time and size of each,
# best of 3.
gzcmp() {
	python3 - "$1" "$2" <<'EOF'
import sys, time, zlib
label, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
res = {}
for level in (1, 6):
    best = None
    for _ in range(3):
        t = time.process_time()
        c = zlib.compressobj(level, zlib.DEFLATED, 31)
        n = len(c.compress(data)) + len(c.flush())
        t = time.process_time() - t
        best = t if best is None or t < best else best
    res[level] = (n, max(best, 1e-6))
(n1, t1), (n6, t6) = res[1], res[6]
print("bench: gzip %-22s %5.1f MB FXT: level 1 %.2f s CPU %4.1f MB, level 6 %.2f s CPU %4.1f MB: "
      "level 1 %.1fx faster, files %+.0f%%" % (label, len(data) / 1e6, t1, n1 / 1e6, t6,
      n6 / 1e6, t6 / t1, 100.0 * (n1 / n6 - 1)))
EOF
}
echo "bench: generating synthetic perf script text (Intel PT branches and stack samples)"
awk -v N=1000000 -f tests/bench/gen_branches.awk >"$tmp/b1.txt"
awk -v N=2000000 -f tests/bench/gen_branches.awk >"$tmp/b2.txt"
awk -v N=4000000 -f tests/bench/gen_branches.awk >"$tmp/b4.txt"
measure "PT text, 1M lines -> .fxt" 1000000 "$tmp/b1.txt" "$tmp/o.fxt"
measure "PT text, 2M lines -> .fxt" 2000000 "$tmp/b2.txt" "$tmp/o.fxt" &&
	gzcmp "(PT text, 2M lines)" "$tmp/o.fxt"
measure "PT text, 4M lines -> .fxt" 4000000 "$tmp/b4.txt" "$tmp/o.fxt"
measure "PT text, 2M lines -> .fxt.gz" 2000000 "$tmp/b2.txt" "$tmp/o.fxt.gz"
rm -f "$tmp"/b*.txt
awk -v N=300000 -f tests/bench/gen_samples.awk >"$tmp/s.txt"
# the samples/s figure only from a successful run (a failed one leaves an old or odd time file)
measure "samples, 300k (3.2M lines) -> .fxt" "$(wc -l <"$tmp/s.txt")" "$tmp/s.txt" "$tmp/o.fxt" &&
	read -r wall user sys _ <"$tmp/time" &&
	awk -v w="$wall" -v c="$user" -v s="$sys" 'BEGIN { if (w <= 0) w = 0.01; if (c + s <= 0) c = 0.01
		printf "bench: stack samples: %.0f k samples/s wall, %.0f k samples/s of CPU (300k samples, 6-9 frames)\n",
			300 / w, 300 / (c + s) }' &&
	gzcmp "(samples, 300k)" "$tmp/o.fxt"
awk -v N=300000 -v SW=1 -f tests/bench/gen_samples.awk >"$tmp/sw.txt"
# the same samples with context switches in between (docs/sampling.md): 56k preempted
# switch-outs, 18.75k sched_switch samples with chains and blocking switch-outs, all back in
measure "samples+switches, 300k -> .fxt" "$(wc -l <"$tmp/sw.txt")" "$tmp/sw.txt" "$tmp/o.fxt" &&
	read -r wall user sys _ <"$tmp/time" &&
	awk -v w="$wall" -v c="$user" -v s="$sys" 'BEGIN { if (w <= 0) w = 0.01; if (c + s <= 0) c = 0.01
		printf "bench: stack samples with switch events: %.0f k samples/s wall, %.0f k samples/s of CPU (300k samples + 150k switch records + 18.75k sched_switch samples)\n",
			300 / w, 300 / (c + s) }'
echo "bench: (RSS should stay flat as PT lines double: it grows with distinct symbols and depth only)"
for b in tests/bench/*.sh; do
	[ "$b" = tests/bench/run.sh ] && continue # the smoke test (make check's "bench" suite)
	[ -x "$b" ] && "$b"
done
# the Intel PT trace the dlfilter bench just decoded through the real perf (2.9 M branches)
[ build/bench/p.fxt -nt build/bench/pt8.data ] && gzcmp "(PT via perf, pt8.data)" build/bench/p.fxt
exit 0
