#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Speed of the dlfilter fast path against perf's decode floor and the text path,
# on a synthetic Intel PT recording of >= 3 M branches (and a sampling recording).
#   tests/bench/dlfilter.sh [PERF.DATA]
# Without an argument it makes build/bench/pt8.data once (about 40 s of ptrace
# single-stepping; 3.84 M branches) with the ptsynth prototype
# ($SNAP_PTSYNTH_PROTO; tests/ptsynth's tools have no big target yet). Prints one
# line per variant: best of 3 runs, CPU seconds (user+sys of every process in
# the pipeline) and wall seconds; then the ratios.
set -u
cd "$(dirname "$0")/../.."
: "${SNAP_BUILD:=build/default}"
# perf's paths (plugin and text): Intel PT would otherwise go to the in-process decoder
# (docs/ptdec.md), timed by tests/bench/ptdec.sh.
export SNAPTRACE_DECODER=perf
ROOT=$PWD
PLUGIN=$ROOT/snaptrace-dlfilter.so
DUMP=$ROOT/$SNAP_BUILD/tests/dlfilter/dlrec_dump
# The ptsynth prototype (research code in the shared folder, beside the checkout in CI).
PROTO=${SNAP_PTSYNTH_PROTO:-$ROOT/../shared/reference/ptsynth-prototype}
[ -d "$PROTO" ] || PROTO=/work/shared/reference/ptsynth-prototype
OUT=$ROOT/build/bench
mkdir -p "$OUT"

die() {
	echo "bench dlfilter: $*" >&2
	exit 1
}
[ -f "$PLUGIN" ] && [ -x "$DUMP" ] && [ -x "$ROOT/snaptrace" ] || die "run make test-bins first"
command -v perf >/dev/null || die "no perf"

data=${1:-$OUT/pt8.data}
if [ ! -f "$data" ]; then
	[ -f "$PROTO/mkptdata.c" ] || die "no $data and no ptsynth prototype at $PROTO"
	echo "making $data (single-stepping 1.76 M instructions, ~40 s)..." >&2
	(
		cd "$OUT" &&
			gcc -O1 -o mkptdata "$PROTO/mkptdata.c" -lipt &&
			gcc -O1 -o sstep "$PROTO/sstep.c" &&
			gcc -O1 -static -nostdlib -fno-pie -no-pie -DITERS=20000 -o target_big \
				"$PROTO/target.c" &&
			taskset -c 0 ./sstep big.ips ./target_big >/dev/null &&
			sh "$PROTO/mkmap.sh" target_big >big.map &&
			./mkptdata -b target_big -m big.map -t big.ips -o "$data" -r -n 8
	) >"$OUT/make.log" 2>&1 || die "could not make $data: $(tail -3 "$OUT/make.log")"
fi

cat >"$OUT/drop.c" <<'EOF'
#include <perf/perf_dlfilter.h>
struct perf_dlfilter_fns perf_dlfilter_fns;
int filter_event_early(void *d, const struct perf_dlfilter_sample *s, void *c)
{
	(void)d; (void)s; (void)c;
	return 1;
}
EOF
gcc -O2 -fPIC -shared -o "$OUT/drop.so" "$OUT/drop.c" || die "cannot build the drop-all filter"

# best NAME CMD: best of 3 runs of `sh -c CMD`.
best() {
	local name=$1 cmd=$2 i bc=999 bw=999 c w
	for i in 1 2 3; do
		/usr/bin/time -f "%U %S %e" -o "$OUT/time" sh -c "$cmd" >/dev/null 2>&1
		read -r u s w <"$OUT/time"
		c=$(echo "$u + $s" | bc)
		[ "$(echo "$c < $bc" | bc)" = 1 ] && bc=$c
		[ "$(echo "$w < $bw" | bc)" = 1 ] && bw=$w
	done
	printf '%-40s %6.2f s CPU %6.2f s wall\n' "$name" "$bc" "$bw"
	eval "cpu_$3=$bc wall_$3=$bw"
}

n=$(perf script -i "$data" --itrace=be --dlfilter "$PLUGIN" --dlarg fd=3 3>&1 >/dev/null 2>&1 |
	"$DUMP" -s)
echo "$(basename "$data"): $n"
PS="perf script -i $data --itrace=bep"
FIELDS=comm,pid,tid,time,flags,ip,addr,sym,symoff,synth,dso,event,period
best "perf decode floor (drop-all dlfilter)" "$PS --dlfilter $OUT/drop.so" floor
best "perf + plugin -> /dev/null" "$PS --dlfilter $PLUGIN --dlarg path=/dev/null" plugnull
best "perf + plugin keepjumps -> /dev/null" \
	"$PS --dlfilter $PLUGIN --dlarg path=/dev/null --dlarg keepjumps" keepnull
best "perf text (snaptrace's fields) -> /dev/null" "$PS --ns -F $FIELDS" text
best "snaptrace decode, plugin path" \
	"SNAPTRACE_DLFILTER=$PLUGIN $ROOT/snaptrace decode $data -o $OUT/p.fxt" plugin
best "snaptrace decode, text path" \
	"SNAPTRACE_NO_DLFILTER=1 $ROOT/snaptrace decode $data -o $OUT/t.fxt" textdec
if cmp -s <("$ROOT/snaptrace" dump "$OUT/p.fxt") <("$ROOT/snaptrace" dump "$OUT/t.fxt"); then
	echo "snaptrace dump of both outputs: identical"
else
	echo "snaptrace dump of both outputs: DIFFERENT"
fi
echo "snaptrace decode, text path / plugin path: $(echo "scale=1; $cpu_textdec / $cpu_plugin" | bc)x CPU," \
	"$(echo "scale=1; $wall_textdec / $wall_plugin" | bc)x wall;" \
	"plugin path / perf's floor: $(echo "scale=2; $cpu_plugin / $cpu_floor" | bc)x CPU," \
	"$(echo "scale=2; $wall_plugin / $wall_floor" | bc)x wall"
echo "(machine load now: $(cut -d' ' -f1-3 /proc/loadavg); on a busy 2-core VM wall times are noisy)"
