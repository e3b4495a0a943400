#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The dlfilter suite: snaptrace-dlfilter.so loaded into the real perf, its record
# stream decoded by parse/dlrec (tests/dlfilter/dlrec_dump) and compared event by
# event with perf script's own text for the same perf.data.
set -u
cd "$(dirname "$0")/../.."
# This suite checks the perf paths (plugin and text); Intel PT recordings would
# otherwise go to the in-process decoder (docs/ptdec.md).
export SNAPTRACE_DECODER=perf
: "${SNAP_BUILD:=build/default}"
ROOT=$PWD
PLUGIN=$ROOT/snaptrace-dlfilter.so
DUMP=$ROOT/$SNAP_BUILD/tests/dlfilter/dlrec_dump
EVCMP=$ROOT/$SNAP_BUILD/tests/dlfilter/evcmp
# The ptsynth prototype (research code in the shared folder, beside the checkout in CI).
PROTO=${SNAP_PTSYNTH_PROTO:-$ROOT/../shared/reference/ptsynth-prototype}
[ -d "$PROTO" ] || PROTO=/work/shared/reference/ptsynth-prototype
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
	local it=(--show-switch-events --show-task-events)
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
# exec: one pid, three comms (setarch, sh, prog), the same addresses reused without ASLR.
if perf record --no-bpf-event -e cpu-clock -F 2000 -g -o "$tmp/exec.data" -- \
	setarch "$(uname -m)" -R sh -c "$tmp/prog 30000; exec $tmp/prog 30000" >/dev/null 2>&1; then
	evcmp dlfilter_events_exec "$tmp/exec.data" - "$SAMPLE_TEXT" -k
else
	skip dlfilter_events_exec "perf record of an exec chain failed"
fi
# stripped: call chains through code without symbols, named after the start of
# their function from its CFI (parse/cfi.h) on both paths alike. A build id of
# its own: perf would find prog's symbols in its build-id cache (~/.debug).
bid=$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')
if command -v strip >/dev/null 2>&1 &&
	$CC_PROG -O0 -g -fno-omit-frame-pointer -Wl,--build-id=0x"$bid" -o "$tmp/sprog" \
		tests/dlfilter/prog.c 2>/dev/null && cp "$tmp/sprog" "$tmp/sprog.full" &&
	strip "$tmp/sprog" 2>/dev/null &&
	perf record --no-bpf-event -e cpu-clock -F 2000 -g -o "$tmp/strip.data" "$tmp/sprog" 30000 \
		>/dev/null 2>&1; then
	evcmp dlfilter_events_stripped "$tmp/strip.data" - "$SAMPLE_TEXT" -k
else
	skip dlfilter_events_stripped "strip or perf record of a stripped program failed"
fi

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

# ---- the fast path end to end: snaptrace dump identical with and without the plugin ----
# same_dump NAME DATA [snaptrace decode flags...]
same_dump() {
	local name=$1 data=$2
	shift 2
	if ! SNAPTRACE_DLFILTER=$PLUGIN ./snaptrace decode -v "$data" "$@" -o "$tmp/$name.p.fxt" \
		>"$tmp/$name.p.err" 2>&1; then
		fail "$name" "plugin path decode failed: $(head -c 300 "$tmp/$name.p.err" | tr '\n' '|')"
		return
	fi
	if ! grep -q 'dlfilter plugin' "$tmp/$name.p.err"; then
		fail "$name" "the plugin path was not chosen: $(grep -i 'text path' "$tmp/$name.p.err")"
		return
	fi
	if ! SNAPTRACE_NO_DLFILTER=1 ./snaptrace decode "$data" "$@" -o "$tmp/$name.t.fxt" \
		>"$tmp/$name.t.err" 2>&1; then
		fail "$name" "text path decode failed: $(head -c 300 "$tmp/$name.t.err" | tr '\n' '|')"
		return
	fi
	./snaptrace dump "$tmp/$name.p.fxt" >"$tmp/$name.p.dump" 2>&1
	./snaptrace dump "$tmp/$name.t.fxt" >"$tmp/$name.t.dump" 2>&1
	if ! cmp -s "$tmp/$name.p.dump" "$tmp/$name.t.dump"; then
		fail "$name" "snaptrace dump differs (< plugin, > text): $(diff "$tmp/$name.p.dump" \
			"$tmp/$name.t.dump" | head -4 | tr '\n' '|')"
	elif ! grep -q '^begin ' "$tmp/$name.p.dump"; then
		fail "$name" "no slice at all: $(head -c 200 "$tmp/$name.p.dump")"
	else
		pass "$name"
	fi
}

if [ ! -x ./snaptrace ]; then
	skip dlfilter_same_dump "./snaptrace is not built"
else
	same_dump dlfilter_same_dump_callchains "$tmp/fp.data"
	same_dump dlfilter_same_dump_flat "$tmp/flat.data"
	[ -e "$tmp/exec.data" ] && same_dump dlfilter_same_dump_exec "$tmp/exec.data"
	if [ -e "$tmp/strip.data" ]; then
		same_dump dlfilter_same_dump_stripped "$tmp/strip.data"
		# (the frames really are unknown ones, each named by its function's start)
		grep -o "\[unknown @ 0x[0-9a-f]* ($tmp/sprog)\]" "$tmp/dlfilter_same_dump_stripped.p.dump" |
			sed 's/.*@ 0x\([0-9a-f]*\) .*/\1/' | sort -u >"$tmp/snames"
		tests/progs/funcoffs.sh "$tmp/sprog.full" >"$tmp/sfuncs"
		if [ ! -s "$tmp/snames" ]; then
			fail dlfilter_stripped_named "no [unknown @ ...] frame of $tmp/sprog in the dump"
		elif [ -n "$(comm -23 "$tmp/snames" "$tmp/sfuncs")" ]; then
			fail dlfilter_stripped_named "not function starts: $(comm -23 "$tmp/snames" \
				"$tmp/sfuncs" | head -5 | tr '\n' ' ')(functions: $(tr '\n' ' ' <"$tmp/sfuncs"))"
		else
			pass dlfilter_stripped_named
		fi
	fi
fi

# ---- a broken plugin: clear errors naming it, no hang, no output file ----
# bad: a valid header, then a branch record too short for its kind; crash: a
# valid start, then perf dies; slow: a valid start, then 20 ms per sample (and
# perf gets killed).
cat >"$tmp/evil.c" <<'EOF_C'
#include <perf/perf_dlfilter.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
struct perf_dlfilter_fns perf_dlfilter_fns;
static int n;
static void put(const void *p, size_t len) { if (write(3, p, len) < 0) {} }
int start(void **data, void *ctx) { (void)data; (void)ctx;
	unsigned char h[16] = "SNAPDLR1\1\0\0\0\20\0\0\0";
	put(h, 16);
	if (MODE == 0) { unsigned char r[12] = {2, 0, 0, 0, 4, 0, 0, 0, 1, 2, 3, 4}; put(r, 12); }
	if (MODE >= 1) { unsigned char r[14] = {1, 0, 0, 0, 6, 0, 0, 0, 1, 0, 0, 0, 'x', 'y'}; put(r, 14); }
	return 0; }
int filter_event_early(void *d, const struct perf_dlfilter_sample *s, void *c) { (void)d; (void)s; (void)c;
	if (MODE == 1 && ++n == 3) raise(SIGSEGV);
	if (MODE == 2) { struct timespec ts = {0, 20000000}; nanosleep(&ts, NULL); }
	return 1; }
EOF_C
evil_ok=1
for m in 0 1 2; do
	gcc -O1 -fPIC -shared -DMODE=$m -o "$tmp/evil$m.so" "$tmp/evil.c" 2>>"$tmp/evil.err" || evil_ok=0
done
if [ ! -x ./snaptrace ] || [ "$evil_ok" != 1 ]; then
	skip dlfilter_bad_plugin "./snaptrace or the test plugins could not be built"
else
	# evil_case NAME PLUGIN MESSAGE-REGEX
	evil_case() {
		local rc=0
		SNAPTRACE_DLFILTER=$2 timeout 60 ./snaptrace decode "$tmp/fp.data" -o "$tmp/$1.fxt" \
			>"$tmp/$1.err" 2>&1 || rc=$?
		if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
			fail "$1" "exit status $rc (0: accepted a broken stream, 124: hung)"
		elif [ -e "$tmp/$1.fxt" ]; then
			fail "$1" "an output file was left behind"
		elif ! grep -q "$2" "$tmp/$1.err" || ! grep -Eq "$3" "$tmp/$1.err"; then
			fail "$1" "unclear message: $(head -c 300 "$tmp/$1.err" | tr '\n' '|')"
		elif grep -q "failed: " "$tmp/$1.err"; then # said once, by the line above
			fail "$1" "the failure said twice: $(head -c 300 "$tmp/$1.err" | tr '\n' '|')"
		else
			pass "$1"
		fi
	}
	evil_case dlfilter_bad_record "$tmp/evil0.so" 'bad record from the dlfilter plugin'
	evil_case dlfilter_plugin_crash "$tmp/evil1.so" 'perf script died \(signal 11\)'
	# perf killed in the middle of a decode: an error, and no partial output.
	SNAPTRACE_DLFILTER=$tmp/evil2.so ./snaptrace decode "$tmp/fp.data" -o "$tmp/killed.fxt" \
		>"$tmp/killed.err" 2>&1 &
	st_pid=$!
	perf_pid=
	for _ in $(seq 100); do
		for c in $(cat "/proc/$st_pid/task/$st_pid/children" 2>/dev/null); do
			tr '\0' ' ' 2>/dev/null <"/proc/$c/cmdline" | grep -q 'script.*evil2' &&
				perf_pid=$c
		done
		[ -n "$perf_pid" ] && break
		sleep 0.05
	done
	[ -n "$perf_pid" ] && sleep 0.3 && kill -9 "$perf_pid"
	rc=0
	wait "$st_pid" || rc=$?
	if [ -z "$perf_pid" ]; then
		fail dlfilter_perf_killed "perf script never showed up under snaptrace"
	elif [ "$rc" -eq 0 ] || [ -e "$tmp/killed.fxt" ] || ls "$tmp"/killed.fxt.* >/dev/null 2>&1; then
		fail dlfilter_perf_killed "exit $rc, output: $(ls "$tmp" | grep killed.fxt | tr '\n' ' ')"
	elif ! grep -q 'signal 9' "$tmp/killed.err"; then
		fail dlfilter_perf_killed "unclear message: $(head -c 300 "$tmp/killed.err" | tr '\n' '|')"
	else
		pass dlfilter_perf_killed
	fi
fi

# ---- Intel PT: synthetic perf.data made at test time by tests/ptsynth's tools ----
T=$ROOT/$SNAP_BUILD/tests/ptsynth
PR=$ROOT/$SNAP_BUILD/tests/progs
pt_prepare() { # PROG: single-step it and classify its instructions, once
	[ -e "$tmp/$1.insn" ] ||
		{ taskset -c 0 "$T/sstep" -q -o "$tmp/$1" -- "$PR/$1" && "$T/insnmap" "$tmp/$1"; } \
			>>"$tmp/pt.log" 2>&1
}
pt_make() { # NAME PROG SCOPE MKPTDATA-OPTIONS...
	local name=$1 prog=$2 scope=$3 kopt=()
	shift 3
	pt_prepare "$prog" || return 1
	if [ "$scope" != u ]; then
		[ -e "$tmp/kimage.kimg" ] || "$T/insnmap" -k "$PR/kimage" "$tmp/kimage" >>"$tmp/pt.log" 2>&1 ||
			return 1
		kopt=(-K "$tmp/kimage")
	fi
	"$T/mkptdata" -p "$tmp/$prog" -o "$tmp/$name.data" -s "$scope" "${kopt[@]}" "$@" \
		>>"$tmp/pt.log" 2>&1
}
if [ ! -x "$T/mkptdata" ] || [ ! -x "$PR/static_calls" ] || ! command -v taskset >/dev/null; then
	skip dlfilter_pt "tests/ptsynth tools not built (libipt-dev missing?)"
elif ! pt_make pt static_calls u -r -I 50 || ! pt_make ptbad static_calls u -c 10; then
	skip dlfilter_pt "could not make a synthetic PT recording: $(tail -c 200 "$tmp/pt.log")"
else
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
	decode "$tmp/pt.data" "$tmp/drop.rec" && "$DUMP" "$tmp/drop.rec" | norm >"$tmp/drop.dump" &&
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
	# Every regime tests/ptsynth covers (the slow dynamic programs with SNAP_SLOW=1).
	if [ -x ./snaptrace ]; then
		same_dump dlfilter_same_dump_pt_irq "$tmp/pt.data"
		same_dump dlfilter_same_dump_pt_corrupt "$tmp/ptbad.data"
		cases=("static static_calls u" "static-retcomp static_calls u -r"
			"static-snapshot static_calls u -r -S -g 333" "static-psb static_calls u -r -P 64 -k 3"
			"static-overflow static_calls u -r -O 100" "threads threads u -r"
			"threads-percpu threads u -r -C" "kernel-syscall-k static_calls k -r"
			"kernel-syscall-uk static_calls uk -r" "kernel-irq-k static_calls k -r -I 100"
			"kernel-irq-uk static_calls uk -r -I 100")
		[ "${SNAP_SLOW:-0}" = 1 ] && cases+=("dyn dyn u" "dyn-retcomp dyn u -r -k 64"
			"cxx-throw cxx_throw u -r -k 64")
		for c in "${cases[@]}"; do
			read -r name prog scope opts <<<"$c"
			flags=()
			[ "$scope" = k ] && flags=(-trace-kernel-only)
			[ "$scope" = uk ] && flags=(-trace-include-kernel)
			# shellcheck disable=SC2086
			if pt_make "$name" "$prog" "$scope" $opts; then
				same_dump "dlfilter_same_dump_$name" "$tmp/$name.data" "${flags[@]}"
			else
				fail "dlfilter_same_dump_$name" "mkptdata: $(tail -c 200 "$tmp/pt.log")"
			fi
		done
	fi
fi

# ---- cbr: the ptsynth prototype with a CBR packet (ratio 23) in its PSB+ ----
# (tests/ptsynth's mkptdata writes no CBR; the prototype in /work/shared is used if present)
if [ ! -f "$PROTO/mkptdata.c" ] || [ ! -f /usr/include/intel-pt.h ]; then
	skip dlfilter_pt_cbr "no ptsynth prototype at $PROTO or no libipt-dev"
else
	sed 's/tsc_pkt(tsc); pkt0(ppt_psbend);/tsc_pkt(tsc); { struct pt_packet q; memset(\&q, 0, sizeof q); q.type = ppt_cbr; q.payload.cbr.ratio = 23; put(\&q); } pkt0(ppt_psbend);/' \
		"$PROTO/mkptdata.c" >"$tmp/mkcbr.c"
	if ! grep -q ppt_cbr "$tmp/mkcbr.c"; then
		skip dlfilter_pt_cbr "the prototype changed; cannot add a CBR packet"
	elif ! (cd "$tmp" && gcc -O1 -o mkcbr mkcbr.c -lipt && gcc -O1 -o psstep "$PROTO/sstep.c" &&
		gcc -O1 -static -nostdlib -fno-pie -no-pie -DITERS=5 -o target "$PROTO/target.c" &&
		taskset -c 0 ./psstep target.ips ./target && sh "$PROTO/mkmap.sh" target >target.map &&
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
		[ -x ./snaptrace ] && same_dump dlfilter_same_dump_pt_cbr "$tmp/cbr.data"
	fi
fi

# ---- off-CPU time, comm changes, one call one slice, dwarf (docs/sampling.md) ----
# The same recording decoded on both paths must give the same dump; and the dump
# must show the sleep as [off-CPU] (never painted onto spin_a), the worker's own
# name, and work (5 calls from one call site) as at most 5 slices.

# offcpu_walk DUMP: for each track, replays begins/ends sorted (stably) by time and
# prints "DURATION_NS NAME<TAB>STACK" for every slice (STACK: its callers, " > ").
offcpu_walk() {
	awk '/^(begin|end) /{ts=$2; sub(/^ts=/,"",ts); print ts "\t" NR "\t" $0}' "$1" |
		sort -s -n -k1,1 -k2,2 | cut -f3- | awk '
		function nm(l,  m) { m = l; sub(/.* name="/, "", m); sub(/".*/, "", m); return m }
		{ ts = $2; sub(/^ts=/, "", ts); tr = $4; key = tr
		  if ($1 == "begin") { n[key]++; s[key, n[key]] = nm($0); b[key, n[key]] = ts }
		  else if (n[key] > 0) { st = ""
			for (i = 1; i < n[key]; i++) st = st (i > 1 ? " > " : "") s[key, i]
			print ts - b[key, n[key]] " " s[key, n[key]] "\t" st; n[key]-- } }'
}

offcpu_checks() { # NAME DUMP WANT_CHAIN(0/1) DATA
	local name=$1 dump=$2 chain=$3 walk
	walk=$(offcpu_walk "$dump")
	if ! grep -q 'name="myworker \[pid=' "$dump"; then
		fail "$name-comm" "no track named myworker: $(grep '^thread' "$dump" | tr '\n' '|')"
	else
		pass "$name-comm"
	fi
	# the 150 ms sleep: an [off-CPU] slice of at least 100 ms (under the chain it
	# blocked in when the recording has sched_switch samples with one)
	local long
	long=$(echo "$walk" | awk '$2 == "[off-CPU]" && $1 >= 100000000')
	if [ -z "$long" ]; then
		fail "$name-sleep" "no [off-CPU] slice of 100 ms or more"
	elif [ "$chain" != 1 ] || echo "$long" | grep -q 'outer > .*nanosleep'; then
		pass "$name-sleep"
	elif ! perf script -i "$4" -F event,ip,sym 2>/dev/null | awk 'BEGIN { RS = "" }
		/sched:sched_switch/ && /nanosleep/ && /outer/ { f = 1 } END { exit !f }'; then
		skip "$name-sleep" "perf recorded no sched_switch sample with the sleep's chain ($(perf script -i "$4" -F event 2>/dev/null | grep -c sched_switch) sched_switch samples)"
	else
		fail "$name-sleep" "the sleep is not shown in its call chain: $(echo "$long" | head -2 | tr '\n\t' '|:')"
	fi
	# spin_a spins 40 ms: never painted across the sleep
	local spin
	spin=$(echo "$walk" | awk '$2 == "spin_a" && $1 >= 140000000' | head -1)
	if [ -n "$spin" ]; then
		fail "$name-not-painted" "spin_a lasts over the sleep: $spin"
	else
		pass "$name-not-painted"
	fi
	# 5 calls of spin from work (~50 samples): one slice each, a few more at most
	# (a sample that catches a prologue shows a caller's caller), never one per sample
	local spins samples
	spins=$(echo "$walk" | awk -F'\t' '$1 ~ / spin$/ && $2 ~ / > work$/' | grep -c .)
	samples=$(perf script -i "$4" -F ip,sym 2>/dev/null | awk 'BEGIN { RS = "" }
		{ split($0, l, "\n"); if (l[1] ~ / spin$/ && l[2] ~ / work$/) n++ } END { print n + 0 }')
	if [ "$samples" -lt 15 ]; then
		skip "$name-one-call-one-slice" "only $samples samples in spin under work (busy machine)"
	elif [ "$spins" -ge 1 ] && [ "$spins" -le 10 ] && [ "$spins" -lt "$samples" ]; then
		pass "$name-one-call-one-slice"
	else
		fail "$name-one-call-one-slice" "$spins slices of spin under work for 5 calls ($samples samples)"
	fi
}

if ! gcc -O0 -fno-omit-frame-pointer -pthread -o "$tmp/offcpu" tests/dlfilter/offcpu.c \
	2>"$tmp/cc.err"; then
	fail dlfilter_offcpu_build "$(head -c 300 "$tmp/cc.err")"
elif [ ! -x ./snaptrace ]; then
	skip dlfilter_offcpu "./snaptrace is not built"
elif ! perf record --no-bpf-event -F 999 -g --switch-events -o "$tmp/sw.data" "$tmp/offcpu" \
	>/dev/null 2>"$tmp/rec.err"; then
	skip dlfilter_offcpu "perf record --switch-events failed: $(head -c 200 "$tmp/rec.err")"
else
	same_dump dlfilter_offcpu_switch_events "$tmp/sw.data"
	evcmp dlfilter_events_switch_events "$tmp/sw.data" - "$SAMPLE_TEXT" -k
	offcpu_checks dlfilter_offcpu_switch_events "$tmp/dlfilter_offcpu_switch_events.p.dump" 0 \
		"$tmp/sw.data"
	# per-event rates: a global -F would put the tracepoint in frequency mode too,
	# and perf would then sample only some of the switches
	if perf record --no-bpf-event -g -e cpu-clock/freq=999/ -e sched:sched_switch \
		--switch-events -o "$tmp/ss.data" "$tmp/offcpu" >/dev/null 2>"$tmp/rec.err"; then
		same_dump dlfilter_offcpu_sched_switch "$tmp/ss.data"
		evcmp dlfilter_events_sched_switch "$tmp/ss.data" - "$SAMPLE_TEXT" -k
		offcpu_checks dlfilter_offcpu_sched_switch "$tmp/dlfilter_offcpu_sched_switch.p.dump" 1 \
			"$tmp/ss.data"
	else
		skip dlfilter_offcpu_sched_switch "perf record -e sched:sched_switch not permitted here: $(head -c 200 "$tmp/rec.err")"
	fi
	if perf record --no-bpf-event -F 999 --call-graph dwarf --switch-events \
		-o "$tmp/dw.data" "$tmp/offcpu" >/dev/null 2>"$tmp/rec.err"; then
		same_dump dlfilter_offcpu_dwarf "$tmp/dw.data"
		evcmp dlfilter_events_dwarf "$tmp/dw.data" - "$SAMPLE_TEXT" -k
		# whole chains through the plugin (it used to keep the leaf only)
		if grep -q '^begin .* name="outer"' "$tmp/dlfilter_offcpu_dwarf.p.dump"; then
			pass dlfilter_offcpu_dwarf_chains
		else
			fail dlfilter_offcpu_dwarf_chains "no outer frame in the plugin path's dump"
		fi
	else
		skip dlfilter_offcpu_dwarf "perf record --call-graph dwarf failed: $(head -c 200 "$tmp/rec.err")"
	fi
fi


# A Debian binary without frame pointers (xz): unknown frames get the same names on
# both paths, junk chains are cut, and the stack-quality warning names the fixes.
XZ=$(command -v xz 2>/dev/null)
if [ -z "$XZ" ] || [ ! -x ./snaptrace ]; then
	skip dlfilter_distro_binary "no xz or no ./snaptrace"
else
	head -c 3000000 /dev/urandom >"$tmp/rnd.bin"
	if ! perf record --no-bpf-event -F 999 -g --switch-events -o "$tmp/xz.data" -- \
		"$XZ" -6 -T1 -c "$tmp/rnd.bin" >/dev/null 2>"$tmp/rec.err"; then
		skip dlfilter_distro_binary "perf record of xz failed: $(head -c 200 "$tmp/rec.err")"
	else
		same_dump dlfilter_distro_binary "$tmp/xz.data"
		if [ "$(grep -c 'cpu-clock' <(perf script -i "$tmp/xz.data" -F event 2>/dev/null))" -lt 20 ]; then
			skip dlfilter_distro_binary_quality "fewer than 20 samples of xz"
		elif grep -q 'stack quality: .*debug symbol packages' "$tmp/dlfilter_distro_binary.p.err"; then
			pass dlfilter_distro_binary_quality
		else
			fail dlfilter_distro_binary_quality "no stack-quality warning for xz: $(grep -i 'call chains' "$tmp/dlfilter_distro_binary.p.err")"
		fi
	fi
fi

[ "$fails" -eq 0 ]
