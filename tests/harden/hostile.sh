# SPDX-License-Identifier: GPL-2.0
# Sourced by run.sh: issue 20 (hostile surroundings) items 7-17, the program's
# signals and limits (docs/guarantees.md). Uses run.sh's snap/snap_ulimit/
# waitfor/need_perf/checks/pass/failed/skip.

# Issue 20 item 12 (and issue 21): input with no event is refused after its first
# MiB; a signal stops a read loop whose reads never block.
t_no_events() {
	local f
	for f in /dev/zero /dev/urandom; do
		snap noev decode "$f" -o "$tmp/noev.fxt"
		if [ $rc -ne 1 ] || ! grep -q "neither a perf.data file nor perf script text" "$tmp/noev.err"; then
			failed no_events "$f: rc $rc: $(head -c 300 "$tmp/noev.err")"
			return
		fi
	done
	snap noev2 report /dev/zero
	if [ $rc -ne 1 ] || ! grep -q "neither a perf.data" "$tmp/noev2.err"; then
		failed no_events "report: rc $rc: $(head -2 "$tmp/noev2.err")"
		return
	fi
	# events first, then zeros for ever: only SIGTERM ends it. (timeout --foreground: it
	# passes a signal to snaptrace once; without, it signals its process group too, and a
	# second SIGTERM has its default effect, docs/guarantees.md)
	{ cat tests/golden/perfscript/pt_threads.txt; cat /dev/zero; } |
		timeout --foreground -s KILL 60 "$snap" decode - -o "$tmp/noev3.fxt" >/dev/null 2>"$tmp/noev3.err" &
	local pid=$!
	sleep 1
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	if [ $rc -ne 1 ] || ! grep -q "interrupted" "$tmp/noev3.err" || [ -e "$tmp/noev3.fxt" ]; then
		failed no_events "SIGTERM on endless zeros: rc $rc: $(head -2 "$tmp/noev3.err")"
		return
	fi
	pass no_events
}

# stop_timeout PID: ends a `timeout` running snaptrace in the background, and waits.
# (SIGTERM: timeout passes it on; a KILL would leave snaptrace running.)
stop_timeout() {
	kill -TERM "$1"
	wait "$1"
}

# busy: a program that runs on a CPU for a while (sampled)
busy=(sh -c 'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done')

# Issue 20 item 7: a signal during run's decoding step keeps the recording and
# prints the command that decodes it.
t_decode_signal_keeps() {
	need_perf decode_signal_keeps || return
	FAKE_SCRIPT=hang FAKE_PERF_LOG=$tmp/dsk.log SNAPTRACE_PERF=$PWD/tests/harden/perfwrap \
		timeout --foreground -s KILL 120 "$snap" run -sampling -o "$tmp/dsk.fxt" -- "${busy[@]}" \
		>/dev/null 2>"$tmp/dsk.err" </dev/null &
	local pid=$! dir
	if ! waitfor "$tmp/dsk.log" script; then
		stop_timeout $pid
		failed decode_signal_keeps "perf script never started: $(head -3 "$tmp/dsk.err")"
		return
	fi
	stop_timeout $pid
	rc=$?
	dir=$(sed -n 's/.*the recording is kept in \([^;]*\);.*/\1/p' "$tmp/dsk.err")
	if [ $rc -ne 1 ] || [ -z "$dir" ] || [ ! -s "$dir" ] || [ -e "$tmp/dsk.fxt" ]; then
		failed decode_signal_keeps "rc $rc, kept '$dir': $(tr '\n' '|' <"$tmp/dsk.err")"
		return
	fi
	snap dsk2 decode "$dir" -o "$tmp/dsk2.fxt"
	rm -rf "$(dirname "$dir")"
	if [ $rc -ne 0 ] || ! checks "$tmp/dsk2.fxt"; then
		failed decode_signal_keeps "decoding the kept data: rc $rc: $(head -2 "$tmp/dsk2.err")"
		return
	fi
	pass decode_signal_keeps
}

# Issue 20 item 15: run works under `ulimit -n 64` (as perf alone does); perf's
# file descriptors were parked at 100.
t_ulimit_n() {
	need_perf ulimit_n || return
	snap_ulimit -n 64 uln run -sampling -o "$tmp/uln.fxt" -- "${busy[@]}"
	if [ $rc -ne 0 ] || ! checks "$tmp/uln.fxt"; then
		failed ulimit_n "rc $rc: $(tail -2 "$tmp/uln.err" | tr '\n' '|')"
		return
	fi
	pass ulimit_n
}

# Issue 20 item 9: a signal snaptrace was started ignoring (nohup) stays ignored
# by the program, and does not end the recording.
t_inherited_ignore() {
	need_perf inherited_ignore || return
	# (timeout resets an ignored SIGHUP: sh sets it again, then runs snaptrace)
	timeout -s KILL 60 sh -c 'trap "" HUP; exec "$0" "$@"' "$snap" run -sampling -o "$tmp/nohup.fxt" -- \
		sh -c 'kill -HUP $PPID; kill -HUP $$; i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; echo alive' \
		>"$tmp/nohup.out" 2>"$tmp/nohup.err" </dev/null
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q alive "$tmp/nohup.out" || [ ! -s "$tmp/nohup.fxt" ]; then
		failed inherited_ignore "rc $rc: $(tail -2 "$tmp/nohup.err" | tr '\n' '|')"
		return
	fi
	# decode under nohup: SIGHUP does not interrupt it (SIGTERM still does)
	local pid
	: >"$tmp/nohup.log"
	FAKE_PERF_LOG=$tmp/nohup.log SNAPTRACE_PERF=$PWD/tests/harden/fakeperf timeout --foreground -s KILL 60 \
		sh -c 'trap "" HUP; exec "$0" "$@"' "$snap" decode tests/harden/min.data -o "$tmp/nohup2.fxt" \
		>/dev/null 2>"$tmp/nohup2.err" </dev/null &
	pid=$!
	if ! waitfor "$tmp/nohup.log" script; then
		stop_timeout $pid
		failed inherited_ignore "decode: perf script never started: $(head -2 "$tmp/nohup2.err")"
		return
	fi
	kill -HUP $pid
	sleep 1
	if ! kill -0 $pid 2>/dev/null; then
		wait $pid
		failed inherited_ignore "decode under nohup ended on SIGHUP: $(head -2 "$tmp/nohup2.err")"
		return
	fi
	stop_timeout $pid
	rc=$?
	if [ $rc -ne 1 ] || ! grep -q interrupted "$tmp/nohup2.err"; then
		failed inherited_ignore "decode: SIGTERM: rc $rc: $(head -2 "$tmp/nohup2.err")"
		return
	fi
	pass inherited_ignore
}

# Issue 20 item 14: perf killed during the recording is reported: SIGKILL leaves
# an unfinished perf.data (nothing decodable, no decode command offered); after
# SIGTERM perf writes its data and the trace is written, ending early, and said so.
t_perf_dies() {
	need_perf perf_dies || return
	local sig pid w
	for sig in KILL TERM; do
		w=$tmp/pd_$sig
		rm -f "$tmp/pd.pid"
		FAKE_PERF_PID=$tmp/pd.pid SNAPTRACE_PERF=$PWD/tests/harden/perfwrap \
			timeout -s KILL 120 "$snap" run -sampling -working-directory "$w" -o "$tmp/pd_$sig.fxt" -- \
			sh -c 'end=$(($(date +%s) + 5)); while [ $(date +%s) -lt $end ]; do :; done' \
			>/dev/null 2>"$tmp/pd_$sig.err" </dev/null &
		pid=$!
		if ! waitfor "$tmp/pd.pid" . || ! waitfor "$w/perf.data" ""; then
			stop_timeout $pid
			failed perf_dies "$sig: perf never started: $(head -3 "$tmp/pd_$sig.err")"
			return
		fi
		sleep 1
		kill -$sig "$(cat "$tmp/pd.pid")"
		wait $pid
		rc=$?
		if ! grep -q "killed by signal $(kill -l $sig)" "$tmp/pd_$sig.err" ||
			grep -q "finished recording\|decode it with" "$tmp/pd_$sig.err"; then
			failed perf_dies "$sig: rc $rc: $(tr '\n' '|' <"$tmp/pd_$sig.err")"
			return
		fi
		if [ $sig = KILL ] && { [ $rc -ne 1 ] || [ -e "$tmp/pd_$sig.fxt" ]; }; then
			failed perf_dies "$sig: rc $rc: $(tr '\n' '|' <"$tmp/pd_$sig.err")"
			return
		fi
		if [ $sig = TERM ] && { [ $rc -ne 0 ] || ! grep -q "the trace ends where perf did" "$tmp/pd_$sig.err" ||
			! checks "$tmp/pd_$sig.fxt"; }; then
			failed perf_dies "$sig: rc $rc: $(tr '\n' '|' <"$tmp/pd_$sig.err")"
			return
		fi
	done
	pass perf_dies
}

# Issue 20 item 11: under `ulimit -f` snaptrace is not killed by SIGXFSZ but says
# the output is too large; perf killed by it is reported and its unfinished
# perf.data is not offered for decoding.
t_ulimit_f() {
	snap_ulimit -f 1 ulf decode tests/golden/perfscript/pt_threads.txt -o "$tmp/ulf.fxt"
	if [ $rc -ne 1 ] || ! grep -q "cannot write $tmp/ulf.fxt: file too large (ulimit -f)" "$tmp/ulf.err"; then
		failed ulimit_f "decode: rc $rc: $(head -2 "$tmp/ulf.err")"
		return
	fi
	need_perf ulimit_f decode || return
	snap_ulimit -f 100 ulf2 run -sampling -o "$tmp/ulf2.fxt" -- "${busy[@]}"
	if [ $rc -ne 1 ] || ! grep -q "killed by signal $(kill -l XFSZ).*ulimit -f" "$tmp/ulf2.err" ||
		grep -q "decode it with" "$tmp/ulf2.err"; then
		failed ulimit_f "run: rc $rc: $(tr '\n' '|' <"$tmp/ulf2.err")"
		return
	fi
	pass ulimit_f
}

# Issue 20 item 8: the entry breakpoint of `run -trigger LIBFUNC` does not harm a
# program whose library constructor raises SIGTRAP (passed on to its handler,
# not taken for the breakpoint) or forks (the copy gets no 0xcc).
t_entry_trap() {
	if [ $perf_ok -eq 0 ] || ! command -v cc >/dev/null; then
		skip entry_trap "needs perf and cc"
		return
	fi
	local d=$tmp/ctor m want
	mkdir -p "$d"
	if ! cc -O0 -shared -fPIC -o "$d/libct.so" tests/harden/ctor/lib.c ||
		! cc -O0 -o "$d/ct" tests/harden/ctor/main.c -L"$d" -lct -Wl,-rpath,"$d"; then
		failed entry_trap "cannot build tests/harden/ctor"
		return
	fi
	for m in t f tf; do
		want=$(LIBMODE=$m "$d/ct")
		LIBMODE=$m snap ct_$m run -sampling -trigger puts -o "$d/$m.fxt" -- "$d/ct"
		if [ $rc -ne 0 ] || [ "$(cat "$tmp/ct_$m.out")" != "$want" ] || ! grep -q "trigger puts hit" "$tmp/ct_$m.err"; then
			failed entry_trap "LIBMODE=$m: rc $rc, printed '$(tr '\n' ' ' <"$tmp/ct_$m.out")', alone '$(echo $want)': $(tail -2 "$tmp/ct_$m.err" | tr '\n' '|')"
			return
		fi
	done
	pass entry_trap
}

# Issue 20 item 10: snaptrace killed after it let the program go does not take
# the program with it (the parent-death signal is gone by then).
t_parent_death() {
	need_perf parent_death || return
	local d=$tmp/pdeath pid i
	mkdir -p "$d"
	"$snap" run -sampling -o "$d/x.fxt" -- sh -c "echo >'$d/started'; sleep 2; echo alive >'$d/alive'" \
		>/dev/null 2>"$tmp/pdeath.err" </dev/null &
	pid=$!
	if ! waitfor "$d/started" ""; then
		kill -KILL $pid
		failed parent_death "the program never started: $(head -3 "$tmp/pdeath.err")"
		return
	fi
	kill -KILL $pid
	wait $pid 2>/dev/null
	for i in $(seq 600); do
		[ -e "$d/alive" ] && break
		sleep 0.1
	done
	if [ ! -s "$d/alive" ]; then
		failed parent_death "the program died with snaptrace"
		return
	fi
	pass parent_death
}

# Issue 20 item 13: `dump -check` of a trace large enough to spill its events,
# with a full $TMPDIR (a tiny tmpfs in a private mount namespace), fails once
# with a clear message (it retried the write at every event, for ever).
t_spill_full() {
	if [ $root -eq 0 ] || ! command -v unshare >/dev/null || ! unshare -m true 2>/dev/null; then
		skip spill_full "needs root and unshare -m"
		return
	fi
	awk 'BEGIN { printf " 7/7 0.000001000:   tr strt 0 [unknown] ([unknown]) => 401000 main+0x0 (/t)\n"; t = 2000
		for (i = 0; i < 300000; i++) {
			printf " 7/7 0.%09d:   call 401000 main+0x0 (/t) => 402000 f%d+0x0 (/t)\n", t++, i % 50
			printf " 7/7 0.%09d:   return 402000 f%d+0x0 (/t) => 401000 main+0x0 (/t)\n", t++, i % 50 } }' >"$tmp/spill.txt"
	snap spill decode "$tmp/spill.txt" -o "$tmp/spill.fxt.gz"
	rm -f "$tmp/spill.txt"
	if [ $rc -ne 0 ]; then
		failed spill_full "decode: rc $rc: $(head -2 "$tmp/spill.err")"
		return
	fi
	mkdir -p "$tmp/full"
	timeout -s KILL 60 unshare -m sh -c 'mount -t tmpfs -o size=64k snaptrace-full "$1" &&
		TMPDIR=$1 exec "$2" dump -check "$3"' sh "$tmp/full" "$snap" "$tmp/spill.fxt.gz" \
		>"$tmp/spill2.out" 2>"$tmp/spill2.err" </dev/null
	rc=$?
	if [ $rc -ne 1 ] || [ "$(grep -c "cannot write the temporary file in $tmp/full.*No space left" "$tmp/spill2.err")" -ne 1 ]; then
		failed spill_full "rc $rc: $(head -3 "$tmp/spill2.err")"
		return
	fi
	pass spill_full
}

# Issue 20 item 16: `dump -check` rejects damaged traces (tests/harden/fxt: a
# kernel-object argument of size 0, one running past its record, an event of
# undefined type 15), as fxt_read.py --strict and Perfetto's importer would.
t_check_damaged() {
	local f want
	for f in tests/harden/fxt/*.fxt; do
		case $f in
		*size0*) want="size 0 words" ;;
		*past_record*) want="past the record end" ;;
		*type15*) want="undefined event type 15" ;;
		esac
		snap chk dump -check "$f"
		if [ $rc -ne 1 ] || ! grep -q "$want" "$tmp/chk.err"; then
			failed check_damaged "$f: rc $rc: $(head -2 "$tmp/chk.err")"
			return
		fi
	done
	pass check_damaged
}

# Issue 20 item 17: attach's switch records come from perf's normal ring, ahead
# of the older samples of the overwrite ring: no "times went backwards", and
# the samples keep their times (they were all clamped to the switch's).
t_switch_first() {
	local in=tests/golden/samples/offcpu_switch_records.txt
	sed 1d "$in" >"$tmp/sw0.txt"
	{
		printf '            prog 700/700    10.500000000: PERF_RECORD_SWITCH OUT        \n'
		printf '            prog 700/700    10.600000000: PERF_RECORD_SWITCH IN         \n'
		cat "$tmp/sw0.txt"
	} >"$tmp/sw1.txt"
	snap sw0 decode "$tmp/sw0.txt" -o "$tmp/sw0.fxt"
	snap sw1 decode "$tmp/sw1.txt" -o "$tmp/sw1.fxt"
	if [ $rc -ne 0 ] || grep -q "went backwards" "$tmp/sw1.err" ||
		! cmp -s <("$snap" dump "$tmp/sw0.fxt") <("$snap" dump "$tmp/sw1.fxt"); then
		failed switch_first "rc $rc: $(head -2 "$tmp/sw1.err")"
		return
	fi
	pass switch_first
}

# HARDEN_ONLY=NAME runs only t_NAME of these.
for t in no_events decode_signal_keeps ulimit_n inherited_ignore perf_dies ulimit_f entry_trap parent_death spill_full check_damaged switch_first; do
	[ -z "${HARDEN_ONLY:-}" ] || [ "$HARDEN_ONLY" = $t ] || continue
	t_$t
done
