#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The in-process Intel PT decoder (docs/ptdec.md) against perf, on two synthetic
# recordings whose calls return (issue 22): tests/progs/static_calls's run with its outer
# loop iteration (cmain's call of work()) repeated 200,000 times (ptrepeat -b), as 8
# threads in 8 per-thread streams: 3.80 M branches, 23.4 M instructions, 2.4 M slices,
# 96 MB of FXT, (a) TSC timing (mkptdata -r), (b) cycle-accurate as `snaptrace run`
# records by default (mkptdata -r -Y: CYC, MTC, CBR). Made once, under build/bench/ (never
# under /tmp/perf-*: perf takes any DSO there for a JIT map and reads no symbols from it).
# For each, best of 3 runs, wall and CPU seconds (every process) and peak RSS of
#   perf's floor      perf script --itrace=bep --dlfilter <drop-all filter>
#   plugin path       snaptrace decode -decoder perf (perf + snaptrace-dlfilter.so), 1 run
#   -j 1, -j N        snaptrace decode -decoder ipt (N = online CPUs), to .fxt and .fxt.gz,
#                     and the CPU time of the reading thread with -j N (its wall time on
#                     idle cores)
#   ptdec only        the decoder alone (tests/bench/bench_ptdec), no stacks or FXT
# and checks that the dumps are the same for -j 1, -j N and -decoder perf, and the
# .fxt.gz the same bytes for -j 1 and -j 8. Prints figures; never fails on timing.
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
case $(realpath -m "$OUT") in
/tmp/perf-*) OUT=$(mktemp -d /var/tmp/snaptrace-bench.XXXXXX) ;; # see above
esac
mkdir -p "$OUT"
if [ ! -f "$OUT/tsc.data" ] || [ ! -f "$OUT/cyc.data" ]; then
	echo "bench ptdec: making the recordings (single-stepping the static test program)..."
	(
		cd "$OUT" &&
			cp "$ROOT/$SNAP_BUILD/tests/progs/static_calls" . &&
			env -i taskset -c 0 "$ROOT/$T/sstep" -q -o prog -- ./static_calls &&
			"$ROOT/$T/insnmap" prog &&
			"$ROOT/$SNAP_BUILD/tests/bench/ptrepeat" -b prog.insn prog.steps bal.steps 200000 8 &&
			cp prog.maps bal.maps && cp prog.insn bal.insn &&
			"$ROOT/$T/mkptdata" -p bal -o tsc.data -r &&
			"$ROOT/$T/mkptdata" -p bal -o cyc.data -r -Y &&
			rm -f bal.steps
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

# best LABEL KEY CMD [RUNS]: best of RUNS (3) runs; sets wall_KEY, cpu_KEY and rss_KEY (MB, the
# largest).
best() {
	local label=$1 key=$2 cmd=$3 runs=${4:-3} i bw=999 bc=999 br=0 u s w c r
	for ((i = 0; i < runs; i++)); do
		if ! /usr/bin/time -f '%e %U %S %M' -o "$OUT/time" sh -c "$cmd" >/dev/null 2>"$OUT/err"; then
			echo "bench ptdec: $label failed: $(tail -1 "$OUT/err")"
			return 1
		fi
		read -r w u s r <"$OUT/time"
		c=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
		bw=$(awk -v a="$w" -v b="$bw" 'BEGIN { print (a < b) ? a : b }')
		bc=$(awk -v a="$c" -v b="$bc" 'BEGIN { print (a < b) ? a : b }')
		br=$(awk -v a="$r" -v b="$br" 'BEGIN { print (a > b) ? a : b }')
	done
	br=$(awk -v r="$br" 'BEGIN { printf "%.1f", r / 1024 }')
	eval "wall_$key=$bw cpu_$key=$bc rss_$key=$br"
	awk -v l="$label" -v w="$bw" -v c="$bc" -v n="$branches" -v r="$br" 'BEGIN { if (c <= 0) c = 0.01
		printf "bench ptdec:   %-36s %6.2f s wall %6.2f s CPU %6.2f M branches/CPU s  peak RSS %6.1f MB\n", l, w, c, n / c / 1e6, r }'
}

# reader OUTPUT: the CPU time of the reading thread of a -j N decode (best of 3, decode -v).
reader() {
	local m best=999
	for _ in 1 2 3; do
		m=$("$ROOT/snaptrace" decode -v -decoder ipt -j "$NCPU" "$data" -o "$1" 2>&1 | sed -n 's/.*reading thread used \([0-9.]*\) s CPU.*/\1/p')
		best=$(awk -v a="${m:-999}" -v b="$best" 'BEGIN { print (a < b) ? a : b }')
	done
	echo "$best"
}

for f in tsc cyc; do
	data=$OUT/$f.data
	line=$("$SNAP_BUILD/tests/bench/bench_ptdec" "$data" 1) || skip "bench_ptdec failed on $data"
	branches=${line#*events, }
	branches=${branches%% branches*}
	pieces=${line#*instructions, }
	pieces=${pieces%%, *}
	case $f in
	tsc) echo "bench ptdec: $f.data: $branches branches whose calls return, 8 per-thread streams, TSC ($(du -h "$data" | cut -f1), $pieces)" ;;
	cyc) echo "bench ptdec: $f.data: the same run cycle-accurate (CYC, MTC, CBR: what run records) ($(du -h "$data" | cut -f1), $pieces)" ;;
	esac
	S="$ROOT/snaptrace decode -q"
	best "perf's floor (drop-all dlfilter)" floor "perf script -i $data --itrace=bep --dlfilter $OUT/drop.so"
	best "plugin path (-decoder perf), 1 run" plugin "$S -decoder perf $data -o $OUT/p.fxt" 1
	best "-j 1 -> .fxt" ipt1 "$S -decoder ipt -j 1 $data -o $OUT/i1.fxt"
	best "-j $NCPU -> .fxt" iptn "$S -decoder ipt -j $NCPU $data -o $OUT/in.fxt"
	best "-j 1 -> .fxt.gz" gz1 "$S -decoder ipt -j 1 $data -o $OUT/i1.fxt.gz"
	best "-j $NCPU -> .fxt.gz" gzn "$S -decoder ipt -j $NCPU $data -o $OUT/in.fxt.gz"
	# The reading thread (events, stacks, FXT) is the serial part: with idle cores the
	# -j N decode's wall time is its CPU time, or the CPU time of all threads over N.
	main=$(reader "$OUT/r.fxt")
	maingz=$(reader "$OUT/r.fxt.gz")
	awk -v m="$main" -v g="$maingz" -v n="$NCPU" 'BEGIN { printf "bench ptdec:   %-36s %6.2f s CPU (.fxt), %.2f s CPU (.fxt.gz)\n", "-j " n ", its reading thread", m, g }'
	best "ptdec alone, 1 thread" only1 "$SNAP_BUILD/tests/bench/bench_ptdec $data 1"
	best "ptdec alone, $NCPU threads" onlyn "$SNAP_BUILD/tests/bench/bench_ptdec $data $NCPU"
	same="dumps of -j 1, -j $NCPU, -decoder perf:"
	./snaptrace dump "$OUT/in.fxt" >"$OUT/in.dump"
	cmp -s "$OUT/in.dump" <(./snaptrace dump "$OUT/i1.fxt") && cmp -s "$OUT/in.dump" <(./snaptrace dump "$OUT/p.fxt") &&
		same="$same identical" || same="$same DIFFERENT"
	rm -f "$OUT/in.dump"
	$S -decoder ipt -j 8 "$data" -o "$OUT/i8.fxt.gz"
	cmp -s "$OUT/i1.fxt.gz" "$OUT/in.fxt.gz" && cmp -s "$OUT/i1.fxt.gz" "$OUT/i8.fxt.gz" &&
		gzip -dc "$OUT/i8.fxt.gz" | cmp -s - "$OUT/i1.fxt" && same="$same; .fxt.gz of -j 1, $NCPU, 8: the same bytes, gunzip = .fxt" ||
		same="$same; .fxt.gz of -j 1, $NCPU, 8: DIFFERENT"
	awk -v fw="$wall_floor" -v fc="$cpu_floor" -v iw="$wall_iptn" -v i1w="$wall_ipt1" -v i1="$cpu_ipt1" \
		-v gw="$wall_gzn" -v g1w="$wall_gz1" -v g1="$cpu_gz1" -v pw="$wall_plugin" -v ow="$wall_onlyn" \
		-v o1="$cpu_only1" -v cn="$cpu_iptn" -v cg="$cpu_gzn" -v s="$same" -v n="$NCPU" -v m="$main" -v mg="$maingz" 'BEGIN {
		if (fw <= 0) fw = 0.01; if (fc <= 0) fc = 0.01; if (iw <= 0) iw = 0.01; if (gw <= 0) gw = 0.01
		# on idle cores: the reading thread, or the CPU of all threads shared by n cores
		if (cn / n > m) m = cn / n; if (cg / n > mg) mg = cg / n
		printf "bench ptdec:   -j %d wall / perf floor wall: .fxt %.2fx (target <= 0.3x; on idle cores %.2fx), .fxt.gz %.2fx (target <= 0.5x; on idle cores %.2fx)\n", n, iw / fw, m / fw, gw / fw, mg / fw
		printf "bench ptdec:   -j 1 wall / -j %d wall: .fxt %.2fx, .fxt.gz %.2fx (target >= 1.6x with %d free cores); plugin path %.2fx perf floor, ptdec alone %.2fx\n", n, i1w / iw, g1w / gw, n, pw / fw, ow / fw
		printf "bench ptdec:   single-thread CPU / perf floor CPU: .fxt %.2fx, .fxt.gz %.2fx, ptdec alone %.2fx (target <= 1x)\n", i1 / fc, g1 / fc, o1 / fc
		printf "bench ptdec:   %s\n", s }'
	rm -f "$OUT"/*.fxt "$OUT"/*.fxt.gz
done
echo "bench ptdec: (load now $(cut -d' ' -f1-3 /proc/loadavg) on $NCPU CPUs: wall times are noisy when others run)"
exit 0
