#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The dlfilter suite: snaptrace-dlfilter.so loaded into the real perf, its record
# stream decoded by parse/dlrec (tests/dlfilter/dlrec_dump) and compared event by
# event with perf script's own text for the same perf.data.
set -u
cd "$(dirname "$0")/../.."
: "${SNAP_BUILD:=build/default}"
ROOT=$PWD
PLUGIN=$ROOT/snaptrace-dlfilter.so
DUMP=$ROOT/$SNAP_BUILD/tests/dlfilter/dlrec_dump
EVCMP=$ROOT/$SNAP_BUILD/tests/dlfilter/evcmp
PROTO=${SNAP_PTSYNTH_PROTO:-/work/shared/reference/ptsynth-prototype}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
DUMPFLAGS=

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
skip() { echo "SKIP $1: $2"; }

# perf script's text with blanks squeezed, as dlrec_dump prints it.
norm() { sed -e 's/^[ \t]*//' -e 's/[ \t][ \t]*/ /g' -e 's/ $//' -e '/^$/d'; }

# decode DATA OUT [DLARG...]: run the plugin, write the stream to OUT.
decode() {
	local data=$1 out=$2
	shift 2
	local args=()
	for a in "$@"; do args+=(--dlarg "$a"); done
	perf script -i "$data" --itrace=be --dlfilter "$PLUGIN" --dlarg "path=$out" "${args[@]}" \
		>"$out.stdout" 2>"$out.stderr"
}

# same_as_text NAME DATA FIELDS [DLARG...]: plugin stream == perf script -F FIELDS.
same_as_text() {
	local name=$1 data=$2 fields=$3
	shift 3
	perf script -i "$data" --itrace=be --ns -F "$fields" 2>/dev/null | norm >"$tmp/$name.txt"
	if ! decode "$data" "$tmp/$name.rec" "$@"; then
		fail "$name" "perf script with the plugin failed: $(head -c 300 "$tmp/$name.rec.stderr")"
		return 1
	fi
	# perf's error lines travel inside the record stream (TEXT records).
	if [ -s "$tmp/$name.rec.stdout" ]; then
		fail "$name" "perf printed something with the plugin: $(head -c 200 "$tmp/$name.rec.stdout")"
		return 1
	fi
	if ! "$DUMP" $DUMPFLAGS "$tmp/$name.rec" >"$tmp/$name.dump" 2>"$tmp/$name.err"; then
		fail "$name" "stream does not decode: $(cat "$tmp/$name.err")"
		return 1
	fi
	norm <"$tmp/$name.dump" >"$tmp/$name.dumpn" && mv "$tmp/$name.dumpn" "$tmp/$name.dump"
	if ! diff -q "$tmp/$name.txt" "$tmp/$name.dump" >/dev/null; then
		fail "$name" "differs from perf's text: $(diff "$tmp/$name.txt" "$tmp/$name.dump" | head -4 | tr '\n' '|')"
		return 1
	fi
	if [ ! -s "$tmp/$name.txt" ]; then
		fail "$name" "no events at all"
		return 1
	fi
	pass "$name"
}

# evcmp NAME DATA ITRACE FIELDS [-k]: record/dlsrc's events == parse/perfscript's
# events from perf script -F FIELDS (snaptrace's own field sets), field by field.
evcmp() {
	local name=$1 data=$2 itrace=$3 fields=$4 k=${5:-}
	local it=()
	[ "$itrace" != - ] && it=("$itrace")
	perf script -i "$data" --ns "${it[@]}" -F "$fields" >"$tmp/$name.txt" 2>/dev/null
	if "$EVCMP" $k perf "$data" "$PLUGIN" "$itrace" "$tmp/$name.txt" >"$tmp/$name.cmp" \
		2>"$tmp/$name.cmperr"; then
		pass "$name"
	else
		fail "$name" "$(head -c 600 "$tmp/$name.cmp" "$tmp/$name.cmperr" | tr '\n' '|')"
	fi
}
PT_TEXT=comm,pid,tid,time,flags,ip,addr,sym,symoff,synth,dso,event,period
SAMPLE_TEXT=comm,pid,tid,time,ip,sym,symoff,dso,event,period

if [ ! -f "$PLUGIN" ] || [ ! -x "$DUMP" ] || [ ! -x "$EVCMP" ]; then
	fail setup "build snaptrace-dlfilter.so and $DUMP first (make test-bins)"
	exit 1
fi
if ! command -v perf >/dev/null 2>&1; then
	skip dlfilter_sampling "perf not found"
	exit 0
fi

# ---- the stream checks that need no perf.data ----
printf 'SNAPDLR1\001\000\000\000\020\000\000\000' >"$tmp/trunc.rec"
if "$DUMP" "$tmp/trunc.rec" >/dev/null 2>"$tmp/trunc.err" || ! grep -qi trunc "$tmp/trunc.err"; then
	fail dlrec_truncated "a stream without END was not reported as truncated"
else
	pass dlrec_truncated
fi
head -c 4096 /dev/urandom >"$tmp/junk.rec"
if "$DUMP" "$tmp/junk.rec" >/dev/null 2>&1; then
	fail dlrec_garbage "random bytes decoded without an error"
else
	pass dlrec_garbage
fi

# ---- sampling: a clang-built program, cpu-clock with frame-pointer call chains ----
CC_PROG=clang
command -v clang >/dev/null 2>&1 || CC_PROG=gcc
if ! $CC_PROG -O0 -g -fno-omit-frame-pointer -o "$tmp/prog" tests/dlfilter/prog.c 2>"$tmp/cc.err"; then
	fail dlfilter_build_prog "$(head -c 300 "$tmp/cc.err")"
	exit 1
fi
if ! perf record --no-bpf-event -e cpu-clock -F 2000 -g -o "$tmp/fp.data" "$tmp/prog" 100000 \
	>/dev/null 2>"$tmp/rec.err"; then
	skip dlfilter_sampling "perf record failed: $(head -c 200 "$tmp/rec.err")"
	exit 0
fi
perf record --no-bpf-event -e cpu-clock -F 2000 -o "$tmp/flat.data" "$tmp/prog" 50000 \
	>/dev/null 2>&1

SFIELDS=comm,pid,tid,time,ip,sym,symoff,dso,event,period
same_as_text dlfilter_sampling_callchains "$tmp/fp.data" "$SFIELDS"
DUMPFLAGS=-f same_as_text dlfilter_sampling_flat "$tmp/flat.data" "$SFIELDS"
same_as_text dlfilter_sampling_nocache "$tmp/fp.data" "$SFIELDS" nocache

evcmp dlfilter_events_callchains "$tmp/fp.data" - "$SAMPLE_TEXT" -k
evcmp dlfilter_events_flat "$tmp/flat.data" - "$SAMPLE_TEXT" -k

# The call tree is really there (the comparison above could pass on two empty outputs).
if grep -q '^[0-9a-f]* leaf+' "$tmp/dlfilter_sampling_callchains.dump" &&
	grep -q '^[0-9a-f]* deep+' "$tmp/dlfilter_sampling_callchains.dump"; then
	pass dlfilter_sampling_tree
else
	fail dlfilter_sampling_tree "no leaf/deep frames in the decoded samples"
fi

# A reader that went away: perf must finish normally (no SIGPIPE death) and print nothing.
# (the reader, `true`, is gone long before perf writes its first record)
rc=0
{
	sleep 0.3
	perf script -i "$tmp/fp.data" --dlfilter "$PLUGIN" --dlarg fd=3 3>&1 >"$tmp/epipe.out" \
		2>"$tmp/epipe.err" || rc=$?
	echo $rc >"$tmp/epipe.rc"
} | true
rc=$(cat "$tmp/epipe.rc")
if [ "$rc" -ne 0 ] || [ -s "$tmp/epipe.out" ]; then
	fail dlfilter_epipe "perf exit $rc with a closed record pipe; stdout $(head -c 100 "$tmp/epipe.out")"
else
	pass dlfilter_epipe
fi

# No output argument: start() refuses, perf reports it, nothing crashes.
if perf script -i "$tmp/fp.data" --dlfilter "$PLUGIN" >/dev/null 2>"$tmp/noarg.err"; then
	fail dlfilter_no_output "perf accepted the plugin without --dlarg fd=/path="
else
	pass dlfilter_no_output
fi

# ---- Intel PT branches: a synthetic perf.data from the ptsynth prototype ----
# (built at test time from /work/shared; the project's own tests/ptsynth replaces it)
pt_make() {
	[ -f "$PROTO/mkptdata.c" ] || return 1
	[ -f /usr/include/intel-pt.h ] || return 2
	(
		cd "$tmp" &&
			gcc -O1 -o mkptdata "$PROTO/mkptdata.c" -lipt &&
			gcc -O1 -o sstep "$PROTO/sstep.c" &&
			gcc -O1 -static -nostdlib -fno-pie -no-pie -DITERS=30 -o target "$PROTO/target.c" &&
			taskset -c 0 ./sstep target.ips ./target >/dev/null &&
			sh "$PROTO/mkmap.sh" target >target.map &&
			./mkptdata -b target -m target.map -t target.ips -o pt.data -r -n 2 -I 97 \
				>/dev/null 2>&1 &&
			./mkptdata -b target -m target.map -t target.ips -o ptbad.data -c 10 -n 2 \
				>/dev/null 2>&1
	) >"$tmp/pt.log" 2>&1 || return 3
}
pt_make
case $? in
1) skip dlfilter_pt "no ptsynth prototype at $PROTO" ;;
2) skip dlfilter_pt "libipt-dev is not installed" ;;
3) skip dlfilter_pt "could not build the synthetic PT recording: $(tail -c 200 "$tmp/pt.log")" ;;
0)
	BFIELDS=comm,pid,tid,time,ip,sym,symoff,dso,addr
	same_as_text dlfilter_pt_all_branches "$tmp/pt.data" "$BFIELDS" keepjumps
	same_as_text dlfilter_pt_nocache "$tmp/pt.data" "$BFIELDS" keepjumps nocache
	same_as_text dlfilter_pt_decode_error "$tmp/ptbad.data" "$BFIELDS" keepjumps &&
		if grep -q 'instruction trace error' "$tmp/dlfilter_pt_decode_error.dump"; then
			pass dlfilter_pt_error_position
		else
			fail dlfilter_pt_error_position "no error line in the stream"
		fi
	evcmp dlfilter_events_pt "$tmp/pt.data" --itrace=bep "$PT_TEXT" -k
	evcmp dlfilter_events_pt_dropjumps "$tmp/pt.data" --itrace=bep "$PT_TEXT"
	evcmp dlfilter_events_pt_error "$tmp/ptbad.data" --itrace=bep "$PT_TEXT" -k
	evcmp dlfilter_events_pt_error_dropjumps "$tmp/ptbad.data" --itrace=bep "$PT_TEXT"
	# Default mode drops intra-symbol jumps only: every kept record is in the text, in
	# order, the counts add up, and every call, return, trace start/end is kept.
	decode "$tmp/pt.data" "$tmp/drop.rec" && "$DUMP" "$tmp/drop.rec" >"$tmp/drop.dump" &&
		"$DUMP" -s "$tmp/drop.rec" >"$tmp/drop.stats"
	total=$(wc -l <"$tmp/dlfilter_pt_all_branches.txt")
	read -r _ _ _ kept _ _ _ _ _ dropped _ <"$tmp/drop.stats"
	perf script -i "$tmp/pt.data" --itrace=be --ns -F flags,ip,addr 2>/dev/null | norm |
		grep -vc '^j' >"$tmp/nonjump.count"
	if [ "$((kept + dropped))" -ne "$total" ] || [ "$dropped" -eq 0 ]; then
		fail dlfilter_pt_drop_jumps "kept $kept + dropped $dropped != $total branches"
	elif [ "$kept" -lt "$(cat "$tmp/nonjump.count")" ]; then
		fail dlfilter_pt_drop_jumps "kept $kept < $(cat "$tmp/nonjump.count") non-jump branches"
	elif ! awk 'BEGIN { i = 0; n = 0 } NR == FNR { k[n++] = $0; next } i < n && $0 == k[i] { i++ }
		END { exit i == n ? 0 : 1 }' "$tmp/drop.dump" "$tmp/dlfilter_pt_all_branches.txt"; then
		fail dlfilter_pt_drop_jumps "kept records that are not in perf's text"
	else
		pass dlfilter_pt_drop_jumps
	fi
	# cbr: the prototype with a CBR packet (ratio 23) added to its PSB+.
	sed 's/tsc_pkt(tsc); pkt0(ppt_psbend);/tsc_pkt(tsc); { struct pt_packet q; memset(\&q, 0, sizeof q); q.type = ppt_cbr; q.payload.cbr.ratio = 23; put(\&q); } pkt0(ppt_psbend);/' \
		"$PROTO/mkptdata.c" >"$tmp/mkcbr.c"
	if ! grep -q ppt_cbr "$tmp/mkcbr.c"; then
		skip dlfilter_pt_cbr "the prototype changed; cannot add a CBR packet"
	elif ! (cd "$tmp" && gcc -O1 -o mkcbr mkcbr.c -lipt &&
		./mkcbr -b target -m target.map -t target.ips -o cbr.data) >/dev/null 2>&1; then
		skip dlfilter_pt_cbr "could not build the cbr recording"
	else
		want=$(perf script -i "$tmp/cbr.data" --itrace=bep -F event,synth 2>/dev/null |
			sed -n 's/.*cbr: *[0-9]* freq: *\([0-9]*\) MHz.*/\1/p' | head -1)
		perf script -i "$tmp/cbr.data" --itrace=bep --dlfilter "$PLUGIN" \
			--dlarg "path=$tmp/cbr.rec" >/dev/null 2>&1
		got=$("$DUMP" "$tmp/cbr.rec" 2>/dev/null | sed -n 's/.* cbr freq: \([0-9]*\) MHz.*/\1/p' |
			head -1)
		if [ -n "$want" ] && [ "$want" = "$got" ]; then
			pass dlfilter_pt_cbr
		else
			fail dlfilter_pt_cbr "perf printed freq '$want' MHz, the plugin sent '$got'"
		fi
		evcmp dlfilter_events_pt_cbr "$tmp/cbr.data" --itrace=bep "$PT_TEXT" -k
	fi
	;;
esac

[ "$fails" -eq 0 ]
