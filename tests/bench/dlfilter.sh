#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Speed of the dlfilter fast path against perf's decode floor and the text path,
# on a synthetic Intel PT recording of >= 3 M branches (and a sampling recording).
#   tests/bench/dlfilter.sh [PERF.DATA]
# Without an argument it makes build/bench/pt8.data once (about 40 s of ptrace
# single-stepping) with the ptsynth prototype ($SNAP_PTSYNTH_PROTO). Prints one
# line per variant: best of 3 runs, CPU seconds (user+sys of every process in
# the pipeline) and wall seconds.
set -u
cd "$(dirname "$0")/../.."
: "${SNAP_BUILD:=build/default}"
ROOT=$PWD
PLUGIN=$ROOT/snaptrace-dlfilter.so
DUMP=$ROOT/$SNAP_BUILD/tests/dlfilter/dlrec_dump
PROTO=${SNAP_PTSYNTH_PROTO:-/work/shared/reference/ptsynth-prototype}
OUT=$ROOT/build/bench
mkdir -p "$OUT"

die() {
	echo "bench dlfilter: $*" >&2
	exit 1
}
[ -f "$PLUGIN" ] && [ -x "$DUMP" ] || die "run make test-bins first"
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
PS="perf script -i $data --itrace=be"
best "perf decode floor (drop-all dlfilter)" "$PS --dlfilter $OUT/drop.so" floor
best "plugin -> /dev/null" "$PS --dlfilter $PLUGIN --dlarg path=/dev/null" plugnull
best "plugin -> pipe -> parse/dlrec" \
	"$PS --dlfilter $PLUGIN --dlarg fd=3 3>&1 >/dev/null | $DUMP -s" plugin
best "plugin keepjumps -> pipe -> parse/dlrec" \
	"$PS --dlfilter $PLUGIN --dlarg fd=3 --dlarg keepjumps 3>&1 >/dev/null | $DUMP -s" keep
best "text (magic-trace fields) -> /dev/null" \
	"$PS --ns -F pid,tid,time,flags,ip,sym,symoff,dso,addr" text
best "text -> pipe -> wc -l" "$PS --ns -F pid,tid,time,flags,ip,sym,symoff,dso,addr | wc -l" \
	textwc
echo "plugin path vs text to /dev/null: $(echo "scale=1; $wall_text / $wall_plugin" | bc)x" \
	"faster (wall), $(echo "scale=1; $cpu_text / $cpu_plugin" | bc)x less CPU;" \
	"plugin vs floor: $(echo "scale=2; $wall_plugin / $wall_floor" | bc)x (wall)"
