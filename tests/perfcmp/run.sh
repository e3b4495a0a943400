#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The perfcmp suite (issue 19, "Sampled figures that agree with perf"): snaptrace's
# sampled figures judged as a user would, against `perf report` on THE SAME perf.data.
#
# Each case builds a real program (tests/perfcmp/progs/, clang or gcc -O0 with frame
# pointers, into the suite's temp dir), records it with `snaptrace run -sampling`
# keeping its perf.data (-working-directory), or with a plain `perf record -g` decoded
# by `snaptrace decode`, then compares
#     perf report -i perf.data --no-children --sort dso,sym --stdio -F overhead,sample,dso,sym -g none
# with `snaptrace report -json` of the trace (tests/perfcmp/compare.py):
#
#   share of on-CPU self time = a function's self time over the self time of all real
#   functions (snaptrace's synthetic slices, `[off-CPU]`, `[off-CPU: preempted]`, an
#   unknown-on-CPU slice: any bracketed name but `[unknown @ ...]`, are left out), or
#   perf's overhead column (the function's share of the cpu-clock samples' period).
#
# A case passes when every function with >= 5 % in either tool is within 10 points of
# perf's share, plus the case's own check below. Every measured function must have
# >= 300 perf samples (else the case proves nothing and fails). Cases:
#   pipewake   a child writes a byte into a pipe 2000 times (~1 ms apart); the traced
#              thread blocks in read() and computes ~150 us in crunch(), less than
#              the 250 us period at 4 kHz (the wake-up's CPU time must not go to read)
#   burstmix   the same loop (2500 wake-ups), but every 10th wake-up runs grind()
#              for ~600 us and the others crunch() for ~60 us: the same CPU time in
#              both, in bursts longer and shorter than a period (a sampled burst
#              must not weigh its length while perf weighs it a period)
#   requests   150 requests, each a new thread running ~3-5 ms in handle_request(),
#              3 at a time (-multi-thread); also: snaptrace's counted calls of
#              handle_request >= 2/3 of the requests the perf.data holds (a thread
#              born and ended inside the recording is not cut by it)
#   workpark   a plain `perf record -e cpu-clock/freq=4000/u -g` (no switch records) of
#              rounds of crunch_a (40 ms), crunch_b (20 ms), park() sleeping 250 ms
#              (the sleep must not be painted onto crunch_b)
#   cpubound   work_a (2 ms) and work_b (1 ms) in a loop, pinned to CPU 0 beside a
#              spinning copy of itself: every switch is a preemption; also: the
#              blocking `[off-CPU]` slice covers <= 10 % of the span (the program
#              never blocks: being preempted is another slice, issue 19)
#   recurse    fib(29) (recursion depth 29) and a walk of a depth-12 tree calling
#              visit() at every node; also: the totals of fib and walk are no longer
#              than the trace's span (nested calls counted once)
#   cxxmix     C++ not shaped for a sampler (progs/cxxmix.cc, g++ or clang++ -O2
#              -fno-omit-frame-pointer, recorded whole: -full-execution): virtual
#              calls, std::sort, std::map, exceptions thrown through libgcc and
#              libstdc++ (no frame pointers); also: Sq::area, Circ::area (20 calls
#              each) and sorter (40) have between 2/3 of their calls and 10 % more
#              (one call, one slice, on templates and virtual calls; the 10 %: a
#              sample in a frameless leaf, e.g. ld.so's lazy binding of memmove
#              called by std::sort, skips sorter's frame and splits it, see
#              docs/sampling.md "Against perf report on programs we did not write")
#   sleeploop  main calls work() (10 ms of CPU) and usleep(2000) 100 times, recorded
#              whole (-full-execution) with fp call graphs (calibrated in a
#              constructor: the first samples are before main; case born has them
#              in main): the sleeps' sched_switch
#              chains lack main (libc's clock_nanosleep has no frame of its own, so
#              the walk of %rbp skips its caller); also: main is one call, as the
#              program says (the leaf's .eh_frame row tells the model the chain lost
#              a frame, docs/sampling.md "Call counts where a frame-pointer chain
#              loses a frame"; before, main ended at every sleep: 100 calls); the
#              same decoded by the text path (sleeploop_text)
#   born       main calls work() (5 ms of CPU) 100 times, linked static and sampled at
#              200 Hz, so the recording's first sample is already in main (the case
#              says when it was not), recorded whole (-full-execution): main is one
#              counted call (run's program is born at the data's start, though perf
#              has no exec record of it; before, main was cut: 0 calls)
#   http       Debian's python3 -m http.server (no frame pointers: -callgraph-mode
#              dwarf; stripped, with libc's debug info: inlined leaves) serving 400
#              listings of a 200-file directory to one curl (-multi-thread: a thread
#              per request, ~0.75 ms of user CPU each: ~1200 samples, from CPU time,
#              as the whole run fits the rings; 2000 requests of a small file gave
#              470-900, the rings being full of the sched_switch chains' 8 KiB stack
#              copies, fewer when busy), the main thread waiting in poll() between them:
#              a real program, not written by us, that mostly waits. The same
#              tolerance (10 points on functions >= 5 %) holds because the leaf of a
#              sample (its ip) is exact whatever the unwinding, both tools read the
#              same samples, and >= 500 samples bound the statistical error of
#              snaptrace's time-between-samples weighting to ~1 point; rows are
#              folded where the two tools name the same code differently (code
#              without a symbol per DSO, inlined leaves: compare.py), nothing else
#
#   compare    (no perf needed) compare.py itself on tests/perfcmp/fixtures: perf
#              report's sections and names, snaptrace's synthetic rows, each check
#
# On failure the FAIL line gives the differences and both tables follow, side by
# side (perf %, samples | snaptrace %, self ms, counted calls, cut calls). The same
# tables follow PASS lines (the figures, for docs and reviews).
# Skips (with the reason) when perf cannot sample: tests/e2e/lib.sh's probe (not
# root and perf_event_paranoid too high, no perf). Each case runs a few seconds:
# sample counts come from CPU time the programs burn (calibrated per thread CPU
# time, tests/perfcmp/progs/burn.h), not from wall time, so a loaded machine only
# makes them slower. PERFCMP_ONLY="pipewake requests" runs just those. Needs
# `make all test-bins` (tests/e2e/lib.sh checks for its programs), clang or gcc,
# python3, and for the http case Debian's /usr/bin/python3 and curl.
# The whole suite takes ~40 s on a loaded 2-core VM, each case at most ~10 s.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
pass() { echo "PASS perfcmp_$1"; }
failed() {
	echo "FAIL perfcmp_$1: $2"
	fail=1
}
skip() { echo "SKIP perfcmp_$1: $2"; }

here=tests/perfcmp
bin=$tmp/bin
# snap's cap: a case records seconds of CPU work and decodes it (an ASan build, on a
# machine others load: sleeploop took over 30 s at a load of 10 on 2 CPUs)
snap_cap=120
cases="pipewake burstmix requests workpark cpubound recurse cxxmix sleeploop born http"

# report_of NAME DATA FXT: perf report of DATA and snaptrace report -json of FXT.
report_of() {
	local name=$1 data=$2 fxt=$3
	if ! perf report -i "$data" --no-children --sort dso,sym --stdio -F overhead,sample,dso,sym -g none \
		>"$tmp/$name.perf" 2>"$tmp/$name.perf.err"; then
		failed "$name" "perf report failed: $(head -c 300 "$tmp/$name.perf.err")"
		return 1
	fi
	if ! "$snap" report -json "$fxt" >"$tmp/$name.json" 2>"$tmp/$name.json.err"; then
		failed "$name" "snaptrace report -json failed: $(head -c 300 "$tmp/$name.json.err")"
		return 1
	fi
}

# judge NAME DATA FXT COMPARE_ARGS...: compares the two reports, prints the verdict
# and the tables.
judge() {
	local name=$1 data=$2 fxt=$3 crc=0
	shift 3
	report_of "$name" "$data" "$fxt" || return 1
	python3 "$here/compare.py" "$tmp/$name.perf" "$tmp/$name.json" "$@" >"$tmp/$name.cmp" 2>&1 ||
		crc=$?
	case $crc in
	0) pass "$name" ;;
	# a server's CPU time is not ours to fix: too little of it is no verdict (a loaded machine)
	2) if [ "$name" = http ] && grep -q '^too few samples' "$tmp/$name.cmp"; then
		skip "$name" "$(head -1 "$tmp/$name.cmp")"
	else
		failed "$name" "$(head -1 "$tmp/$name.cmp")"
	fi ;;
	*) failed "$name" "$(head -1 "$tmp/$name.cmp")" ;;
	esac
	tail -n +2 "$tmp/$name.cmp"
}

# record NAME ARGS... -- PROG ARGS...: snaptrace run -sampling keeping perf.data in
# $tmp/w_NAME, trace in $tmp/NAME.fxt.gz; fails the case unless it worked.
record() {
	local name=$1
	shift
	snap "$name" run -sampling -callgraph-mode fp -working-directory "$tmp/w_$name" \
		-o "$tmp/$name.fxt.gz" "$@"
	if [ "$rc" -ne 0 ] || [ ! -s "$tmp/w_$name/perf.data" ] || [ ! -s "$tmp/$name.fxt.gz" ]; then
		failed "$name" "snaptrace run failed (rc $rc): $(tail -3 "$tmp/$name.err" | tr '\n' ' ')"
		return 1
	fi
}

t_pipewake() {
	record pipewake -- "$bin/pipewake" 2000 || return
	if ! grep -q '^crunch 2000$' "$tmp/pipewake.out"; then
		failed pipewake "the program did not run 2000 bursts: $(head -c 200 "$tmp/pipewake.out")"
		return
	fi
	judge pipewake "$tmp/w_pipewake/perf.data" "$tmp/pipewake.fxt.gz" --samples crunch:300
}

t_burstmix() {
	record burstmix -- "$bin/burstmix" 2500 || return
	if ! grep -q '^crunch 2250 grind 250$' "$tmp/burstmix.out"; then
		failed burstmix "the program did not run 2500 bursts: $(head -c 200 "$tmp/burstmix.out")"
		return
	fi
	judge burstmix "$tmp/w_burstmix/perf.data" "$tmp/burstmix.fxt.gz" \
		--samples crunch:300 --samples grind:300
}

t_requests() {
	record requests -multi-thread -- "$bin/requests" 150 3 || return
	local want seen need
	want=$(sed -n 's/^handle_request \([0-9]*\)$/\1/p' "$tmp/requests.out")
	if [ "${want:-0}" -ne 150 ]; then
		failed requests "the program did not serve 150 requests: $(head -c 200 "$tmp/requests.out")"
		return
	fi
	# The requests the recording holds: threads with a sample in handle_request (the
	# ring may have overwritten the first ones; those are cut by the recording).
	seen=$(perf script -i "$tmp/w_requests/perf.data" -F tid,ip,sym 2>/dev/null |
		awk '/^ *[0-9]+ *$/ { t = $1 } /handle_request/ { h[t] = 1 } END { print length(h) }')
	if [ "${seen:-0}" -lt 100 ]; then
		failed requests "the perf.data holds only ${seen:-0} of the 150 requests (perf script -F tid,ip,sym)"
		return
	fi
	need=$(((2 * seen + 2) / 3))
	echo "  requests: 150 served, $seen in the perf.data, snaptrace must count >= $need calls"
	judge requests "$tmp/w_requests/perf.data" "$tmp/requests.fxt.gz" \
		--samples handle_request:300 --calls "handle_request:$need"
}

t_workpark() {
	local data=$tmp/workpark.data
	if ! timeout -s KILL "$snap_cap" perf record -q -o "$data" -e cpu-clock/freq=4000/u -g --no-bpf-event \
		-- "$bin/workpark" 8 >"$tmp/workpark.out" 2>"$tmp/workpark.rec.err"; then
		failed workpark "perf record failed: $(head -c 300 "$tmp/workpark.rec.err")"
		return
	fi
	snap workpark decode -o "$tmp/workpark.fxt.gz" "$data"
	if [ "$rc" -ne 0 ]; then
		failed workpark "snaptrace decode failed (rc $rc): $(tail -3 "$tmp/workpark.err" | tr '\n' ' ')"
		return
	fi
	judge workpark "$data" "$tmp/workpark.fxt.gz" --samples crunch_a:300 --samples crunch_b:300
}

t_cpubound() {
	rm -f "$tmp/spinner.out"
	"$bin/cpubound" 0 >"$tmp/spinner.out" 2>&1 &
	local spid=$! npre
	bgpids+=("$spid")
	for _ in $(seq 500); do
		grep -q spinning "$tmp/spinner.out" 2>/dev/null && break
		sleep 0.02
	done
	record cpubound -- "$bin/cpubound" 300
	local ok=$?
	kill -9 "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	[ "$ok" -eq 0 ] || return
	npre=$(perf script -i "$tmp/w_cpubound/perf.data" --show-switch-events -F tid 2>/dev/null |
		grep -c 'SWITCH OUT preempt')
	if [ "$npre" -lt 20 ]; then
		failed cpubound "only $npre preemptions recorded: the spinner did not compete for CPU 0"
		return
	fi
	echo "  cpubound: $npre preemptions in the perf.data"
	judge cpubound "$tmp/w_cpubound/perf.data" "$tmp/cpubound.fxt.gz" \
		--samples work_a:300 --samples work_b:300 --blocked-max 10
}

t_recurse() {
	record recurse -- "$bin/recurse" 150 || return
	judge recurse "$tmp/w_recurse/perf.data" "$tmp/recurse.fxt.gz" \
		--samples fib:300 --samples visit:300 --total-le-span fib --total-le-span walk
}

t_cxxmix() {
	local cxx
	cxx=$(command -v g++ || command -v clang++) || {
		skip cxxmix "needs g++ or clang++"
		return
	}
	if ! "$cxx" -O2 -g -fno-omit-frame-pointer -o "$bin/cxxmix" "$here/progs/cxxmix.cc" \
		2>"$tmp/cxx.err"; then
		failed cxxmix "$cxx $here/progs/cxxmix.cc: $(head -c 300 "$tmp/cxx.err")"
		return
	fi
	record cxxmix -full-execution -- "$bin/cxxmix" 40 || return
	if ! grep -q '^sorter 40 area 40$' "$tmp/cxxmix.out"; then
		failed cxxmix "the program did not run 40 rounds: $(head -c 200 "$tmp/cxxmix.out")"
		return
	fi
	judge cxxmix "$tmp/w_cxxmix/perf.data" "$tmp/cxxmix.fxt.gz" \
		--samples Sq::area:300 --samples Circ::area:300 \
		--calls Sq::area:14 --calls Circ::area:14 --calls sorter:27 \
		--calls-max Sq::area:22 --calls-max Circ::area:22 --calls-max sorter:44
}

t_sleeploop() {
	record sleeploop -full-execution -- "$bin/sleeploop" 100 || return
	if ! grep -q '^main 1 work 100 sleeps 100$' "$tmp/sleeploop.out"; then
		failed sleeploop "the program did not run 100 rounds: $(head -c 200 "$tmp/sleeploop.out")"
		return
	fi
	judge sleeploop "$tmp/w_sleeploop/perf.data" "$tmp/sleeploop.fxt.gz" \
		--samples work:300 --calls main:1 --calls-max main:1
	# the text path marks the same frames (the run above took the plugin path)
	snap sleeploop_text decode -no-dlfilter -o "$tmp/sleeploop_text.fxt.gz" \
		"$tmp/w_sleeploop/perf.data"
	if [ "$rc" -ne 0 ]; then
		failed sleeploop_text "snaptrace decode -no-dlfilter failed (rc $rc): $(tail -3 "$tmp/sleeploop_text.err" | tr '\n' ' ')"
		return
	fi
	judge sleeploop_text "$tmp/w_sleeploop/perf.data" "$tmp/sleeploop_text.fxt.gz" \
		--samples work:300 --calls main:1 --calls-max main:1
}

t_born() {
	# 200 Hz: a period (5 ms) far longer than the start-up (static glibc's
	# cpuid calls trap to the hypervisor in a VM: ~0.3 ms, over a 4 kHz period)
	record born -full-execution -timer-resolution Sample:200 -- "$bin/born" 100 || return
	if ! grep -q '^main 1 work 100$' "$tmp/born.out"; then
		failed born "the program did not run 100 rounds: $(head -c 200 "$tmp/born.out")"
		return
	fi
	# the case is about a first sample already in main: say so if it was not
	# (it then checks less)
	local first
	first=$(perf script -i "$tmp/w_born/perf.data" -F ip,sym 2>/dev/null |
		awk 'NF == 0 { if (n) exit; next } { n++; printf "%s ", $2 }')
	case " $first" in
	*" main "*) ;;
	*) echo "  born: the first sample is not in main ($first)" ;;
	esac
	judge born "$tmp/w_born/perf.data" "$tmp/born.fxt.gz" \
		--samples work:60 --calls main:1 --calls-max main:1
}

# http_serve PORT: snaptrace run of python3 -m http.server PORT in $tmp/www (its pid
# in $spid); returns 1 if it does not answer within ~60 s (it ends at once if python3
# exits: a port taken).
http_serve() {
	local port=$1
	rm -rf "$tmp/w_http"
	# (SIGINT as by default: a background job of a script starts with it ignored, and
	# snaptrace keeps an ignored signal ignored, as the program would)
	(cd "$tmp/www" && exec env --default-signal=INT "$snap" run -sampling -multi-thread -callgraph-mode dwarf \
		-working-directory "$tmp/w_http" -o "$tmp/http.fxt.gz" \
		-- "$py" -m http.server "$port" --bind 127.0.0.1) >"$tmp/http.out" 2>"$tmp/http.err" &
	spid=$!
	bgpids+=("$spid")
	for _ in $(seq 600); do
		curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$port/a.txt" && return 0
		kill -0 "$spid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

t_http() {
	py=/usr/bin/python3
	if [ ! -x "$py" ] || ! command -v curl >/dev/null; then
		skip http "needs Debian's /usr/bin/python3 and curl"
		return
	fi
	mkdir -p "$tmp/www/d"
	head -c 1500 /dev/urandom | base64 >"$tmp/www/a.txt"
	for i in $(seq 200); do : >"$tmp/www/d/f$i.txt"; done
	local port up=0 urls=() i
	for _ in 1 2; do # a port another suite took: once more on another
		port=$((20000 + RANDOM % 20000))
		if http_serve "$port"; then
			up=1
			break
		fi
		kill -INT "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
	done
	if [ "$up" -ne 1 ]; then
		failed http "python3 -m http.server under snaptrace did not answer: $(tail -3 "$tmp/http.err" | tr '\n' ' ')"
		return
	fi
	for i in $(seq 400); do urls+=("http://127.0.0.1:$port/d/"); done
	curl -s --max-time 60 "${urls[@]}" >/dev/null
	sleep 0.2
	kill -INT "$spid"
	for i in $(seq 900); do # its decode: up to 90 s on a loaded machine
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	grep -E '^snaptrace: (the trace covers|wrote)' "$tmp/http.err" | sed 's/^/  http: /'
	if [ ! -s "$tmp/w_http/perf.data" ] || [ ! -s "$tmp/http.fxt.gz" ]; then
		failed http "snaptrace run wrote no trace: $(tail -3 "$tmp/http.err" | tr '\n' ' ')"
		return
	fi
	judge http "$tmp/w_http/perf.data" "$tmp/http.fxt.gz" --total-samples 500 \
		--inline-map "$tmp/w_http/perf.data"
}

# t_compare: compare.py on hand-made reports (fixtures/perf.txt: two event sections,
# a kernel row, unknown code by address, a versioned name; fixtures/snap.json: synthetic
# rows, an inlined leaf's name, unknown code by function, a recursive total).
t_compare() {
	local f=$here/fixtures out want args
	while IFS='|' read -r want args; do
		# shellcheck disable=SC2086 # args are words
		out=$(python3 "$here/compare.py" "$f/perf.txt" "$f/snap.json" $args 2>&1 | head -1)
		if [ "$out" != "$want" ]; then
			failed compare "compare.py $args: '$out', expected '$want'"
			return
		fi
	done <<-'EOF'
		__poll 0.0% vs perf 20.0% (-20.0 points); __GI___poll 16.0% vs perf 0.0% (+16.0 points)|
		ok|--alias __GI___poll=__poll
		clock_nanosleep 12.0% vs perf 5.0% (+7.0 points)|--alias __GI___poll=__poll --tol 5
		ok|--alias __GI___poll=__poll --min 13 --tol 5
		rec total 3000.0 ms > span 2000.0 ms|--alias __GI___poll=__poll --total-le-span rec --total-le-span crunch
		[off-CPU] (blocked) 900.0 ms = 45% of the 2000.0 ms span, max 10%|--alias __GI___poll=__poll --blocked-max 10
		ok|--alias __GI___poll=__poll --blocked-max 50 --calls crunch:100
		crunch has 100 counted calls (+1 cut), needs >= 101|--alias __GI___poll=__poll --calls crunch:101
		ok|--alias __GI___poll=__poll --calls-max crunch:101
		crunch has 100 counted calls (+1 cut), more than 100|--alias __GI___poll=__poll --calls-max crunch:100
		too few samples: perf has 600 samples of crunch, the case needs >= 601|--samples crunch:601
		too few samples: perf has 1000 samples of cpu-clock, the case needs >= 1001|--total-samples 1001
		bad input: tests/perfcmp/fixtures/perf.txt: no section for event 'cycles' (perf report output?)|--event cycles
	EOF
	pass compare
}

if ! command -v python3 >/dev/null; then
	skip compare "python3 is not on PATH (tests/perfcmp/compare.py)"
else
	t_compare
fi
if [ -n "$noperf" ]; then
	for c in $cases; do skip "$c" "$noperf"; done
	exit 0
fi
if ! command -v python3 >/dev/null; then
	for c in $cases; do skip "$c" "python3 is not on PATH (tests/perfcmp/compare.py)"; done
	exit 0
fi
cc=${PERFCMP_CC:-clang} # PERFCMP_CC=gcc: the other compiler (gcc 12 needs -O0 here)
command -v "$cc" >/dev/null || cc=gcc
mkdir -p "$bin"
# -z now: libc's functions are bound at start-up, not at their first call inside
# the loops, where ld.so's resolver (no frame pointers) would run under the
# program's frames; a sample or preemption there has a chain cut at ld.so, which
# ends them: sleeploop's main was 2 calls once, preempted in do_lookup_x binding
# usleep, on a busy machine (session 28; cxxmix, built by its case, keeps it)
# (born is linked static: its first sample is already in main, see its case)
for src in "$here"/progs/*.c; do
	p=$(basename "$src" .c)
	link=-Wl,-z,now
	[ "$p" = born ] && link=-static
	if ! $cc -O0 -g -fno-omit-frame-pointer -pthread $link -o "$bin/$p" "$src" 2>"$tmp/cc.err"; then
		failed build "$cc $src: $(head -c 300 "$tmp/cc.err")"
		exit 1
	fi
done
for c in ${PERFCMP_ONLY:-$cases}; do
	if declare -F "t_$c" >/dev/null; then
		"t_$c"
	else
		failed "$c" "no such case (PERFCMP_ONLY: one of $cases)"
	fi
done
exit $fail
