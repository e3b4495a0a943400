#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The in-process Intel PT decoder (docs/ptdec.md) against perf, on two synthetic
# recordings of about 4 M branches made with tests/ptsynth's tools: the static test
# program's run repeated 43,520 times, (a) as 8 threads in 8 per-thread streams,
# (b) in one thread with a PSB+ every 4 KB (only PSB splitting can parallelise it).
# For each: best of 3 runs, wall and CPU seconds (every process) of
#   perf's floor      perf script --itrace=bep --dlfilter <drop-all filter>
#   plugin path       snaptrace decode -decoder perf (perf + snaptrace-dlfilter.so)
#   ipt -j 1, -j N    snaptrace decode -decoder ipt (N = online CPUs), and the CPU time
#                     of its reading thread with -j N (the wall time on idle cores)
#   ptdec only        the decoder alone (tests/bench/bench_ptdec), no stacks or FXT
# and branches per CPU second (per thread). Prints figures; never fails on timing.
set -u
cd "$(dirname "$0")/../.."
: "${SNAP_BUILD:=build/default}"
ROOT=$PWD
T=$SNAP_BUILD/tests/ptsynth
OUT=$ROOT/build/bench/ptdec
NCPU=$(nproc)

skip() {
	echo "bench ptdec: skipped: $*"
	exit 0
}
command -v perf >/dev/null || skip "no perf"
for b in "$T/sstep" "$T/insnmap" "$T/mkptdata" "$SNAP_BUILD/tests/bench/ptrepeat" \
	"$SNAP_BUILD/tests/bench/bench_ptdec" "$SNAP_BUILD/tests/progs/static_calls"; do
	[ -x "$b" ] || skip "$b not built (make test-bins; mkptdata needs libipt-dev)"
done
mkdir -p "$OUT"
if [ ! -f "$OUT/big8.data" ] || [ ! -f "$OUT/big1.data" ]; then
	echo "bench ptdec: making the recordings (single-stepping the static test program)..."
	(
		cd "$OUT" &&
			cp "$ROOT/$SNAP_BUILD/tests/progs/static_calls" . &&
			env -i taskset -c 0 "$ROOT/$T/sstep" -q -o prog -- ./static_calls &&
			"$ROOT/$T/insnmap" prog &&
			for k in 8 1; do
				"$ROOT/$SNAP_BUILD/tests/bench/ptrepeat" prog.steps big$k.steps 43520 $k &&
					cp prog.maps big$k.maps && cp prog.insn big$k.insn || exit 1
			done &&
			"$ROOT/$T/mkptdata" -p big8 -o big8.data -r &&
			"$ROOT/$T/mkptdata" -p big1 -o big1.data -r -P 4096 &&
			rm -f big8.steps big1.steps
	) >"$OUT/make.log" 2>&1 || skip "could not make the recordings: $(tail -2 "$OUT/make.log" | tr '\n' ' ')"
fi
cat >"$OUT/drop.c" <<'EOC'
#include <perf/perf_dlfilter.h>
struct perf_dlfilter_fns perf_dlfilter_fns;
int filter_event_early(void *d, const struct perf_dlfilter_sample *s, void *c)
{
	(void)d; (void)s; (void)c;
	return 1;
}
EOC
gcc -O2 -fPIC -shared -o "$OUT/drop.so" "$OUT/drop.c" 2>/dev/null || skip "cannot build the drop-all dlfilter (perf_dlfilter.h)"

# best LABEL KEY CMD: best of 3 runs; sets wall_KEY and cpu_KEY.
best() {
	local label=$1 key=$2 cmd=$3 i bw=999 bc=999 u s w c
	for i in 1 2 3; do
		if ! /usr/bin/time -f '%e %U %S' -o "$OUT/time" sh -c "$cmd" >/dev/null 2>"$OUT/err"; then
			echo "bench ptdec: $label failed: $(tail -1 "$OUT/err")"
			return 1
		fi
		read -r w u s <"$OUT/time"
		c=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
		bw=$(awk -v a="$w" -v b="$bw" 'BEGIN { print (a < b) ? a : b }')
		bc=$(awk -v a="$c" -v b="$bc" 'BEGIN { print (a < b) ? a : b }')
	done
	eval "wall_$key=$bw cpu_$key=$bc"
	awk -v l="$label" -v w="$bw" -v c="$bc" -v n="$branches" 'BEGIN { if (c <= 0) c = 0.01
		printf "bench ptdec:   %-34s %6.2f s wall %6.2f s CPU %7.2f M branches per CPU s\n", l, w, c, n / c / 1e6 }'
}

for f in big8 big1; do
	data=$OUT/$f.data
	line=$("$SNAP_BUILD/tests/bench/bench_ptdec" "$data" 1) || skip "bench_ptdec failed on $data"
	branches=${line#*events, }
	branches=${branches%% branches*}
	pieces=${line#*instructions, }
	pieces=${pieces%%, *}
	case $f in
	big8) echo "bench ptdec: $f.data: $branches branches in 8 per-thread streams ($(du -h "$data" | cut -f1), $pieces)" ;;
	big1) echo "bench ptdec: $f.data: $branches branches in one stream, a PSB+ every 4 KB ($(du -h "$data" | cut -f1), $pieces)" ;;
	esac
	S="$ROOT/snaptrace decode -q"
	best "perf's floor (drop-all dlfilter)" floor "perf script -i $data --itrace=bep --dlfilter $OUT/drop.so"
	best "plugin path (-decoder perf)" plugin "$S -decoder perf $data -o $OUT/p.fxt"
	best "in-process, -j 1" ipt1 "$S -decoder ipt -j 1 $data -o $OUT/i1.fxt"
	best "in-process, -j $NCPU" iptn "$S -decoder ipt -j $NCPU $data -o $OUT/in.fxt"
	# The reading thread (events, stacks, FXT) is the serial part: with idle cores its
	# CPU time is the -j N decode's wall time (best of 3, from decode -v).
	main=999
	for _ in 1 2 3; do
		m=$("$ROOT/snaptrace" decode -v -decoder ipt -j "$NCPU" "$data" -o "$OUT/in.fxt" 2>&1 | sed -n 's/.*reading thread used \([0-9.]*\) s CPU.*/\1/p')
		main=$(awk -v a="${m:-999}" -v b="$main" 'BEGIN { print (a < b) ? a : b }')
	done
	awk -v m="$main" -v n="$NCPU" 'BEGIN { printf "bench ptdec:   %-34s               %6.2f s CPU (its wall time on idle cores)\n", "in-process, -j " n ", reading thread", m }'
	best "ptdec alone, 1 thread" only1 "$SNAP_BUILD/tests/bench/bench_ptdec $data 1"
	best "ptdec alone, $NCPU threads" onlyn "$SNAP_BUILD/tests/bench/bench_ptdec $data $NCPU"
	if cmp -s <(./snaptrace dump "$OUT/p.fxt") <(./snaptrace dump "$OUT/in.fxt"); then
		same="identical dumps"
	else
		same="DIFFERENT dumps"
	fi
	awk -v fw="$wall_floor" -v fc="$cpu_floor" -v iw="$wall_iptn" -v i1="$cpu_ipt1" -v pw="$wall_plugin" \
		-v ow="$wall_onlyn" -v o1="$cpu_only1" -v s="$same" -v n="$NCPU" -v m="$main" 'BEGIN {
		if (fw <= 0) fw = 0.01; if (fc <= 0) fc = 0.01
		printf "bench ptdec:   in-process -j %d wall / perf floor wall: %.2fx (target <= 0.5x; on idle cores %.2fx; plugin path %.2fx; ptdec alone %.2fx)\n", n, iw / fw, m / fw, pw / fw, ow / fw
		printf "bench ptdec:   single-thread CPU per branch / perf floor: %.2fx in snaptrace decode, %.2fx for ptdec alone (target <= 1x); %s\n", i1 / fc, o1 / fc, s }'
done
echo "bench ptdec: (load now $(cut -d' ' -f1-3 /proc/loadavg) on $NCPU CPUs: wall times are noisy when others run)"
exit 0
