#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Intel PT without PT hardware (docs/pt-testing.md). For each program in tests/progs:
# single-step it (sstep), classify its instructions (insnmap), then for each case
# synthesise a perf.data (mkptdata) and check
#   (a) ptsynth-gen <case>: perf's decoded branch list equals the ground truth that
#       mkptdata derived from the executed instructions;
#   (b) ptsynth-e2e <case>: snaptrace decode + snaptrace dump give, for every thread,
#       the call trees stacks.py computes independently from that ground truth
#       (perf only supplies the symbol names).
# Fixtures are made at test time in a temporary directory (perf.data holds absolute
# paths). PTSYNTH_KEEP=1 keeps the directory and prints its name.
set -u
cd "$(dirname "$0")/../.."
: "${SNAP_BUILD:=build/default}"
T=$SNAP_BUILD/tests/ptsynth
P=$SNAP_BUILD/tests/progs
HERE=tests/ptsynth

fail=0
# The tools' unit tests (classifier, file formats) need nothing else.
if [ -x "$T/test_ptsynth" ]; then
	"$T/test_ptsynth" 2>&1 || fail=1
fi
if command -v python3 >/dev/null; then
	python3 "$HERE/stacks.py" selftest || fail=1
fi

skip_all() {
	echo "SKIP ptsynth: $1"
	exit $fail
}
command -v perf >/dev/null || skip_all "perf is not installed"
command -v objdump >/dev/null || skip_all "objdump (binutils) is not installed"
command -v python3 >/dev/null || skip_all "python3 is not installed"
command -v taskset >/dev/null || skip_all "taskset is not installed"
[ -x "$T/mkptdata" ] || skip_all "mkptdata not built (libipt-dev missing)"
[ -x "$T/sstep" ] && [ -x "$P/static_calls" ] || skip_all "test tools not built (make test-bins)"

# Always /tmp/ptsynth.XXXXXX, and the programs are copied into it: the path's length
# changes what ld.so does, so this keeps the fixtures the same from any checkout.
work=$(mktemp -d /tmp/ptsynth.XXXXXX)
if [ "${PTSYNTH_KEEP:-0}" = 1 ]; then
	echo "ptsynth: keeping $work" >&2
else
	trap 'tests/perfetto/keep.sh ptsynth "$work"; rm -rf "$work"' EXIT # traces for tests/perfetto
fi
mkdir "$work/bin" && cp "$P"/* "$work/bin/" 2>/dev/null
P=$work/bin

# Ground truth for a program, once: sstep (pinned to CPU 0) and insnmap.
prepare() {
	local prog=$1
	[ -e "$work/$prog.insn" ] && return 0
	[ -e "$work/$prog.failed" ] && return 1
	# A fixed, empty environment: ld.so's work depends on it, and so would the fixtures.
	local sopt=()
	[ "$prog" = vdso ] && sopt=(-d) # it runs vdso code: copy the vdso for insnmap
	if ! env -i taskset -c 0 "$T/sstep" -q "${sopt[@]}" -o "$work/$prog" -- "$P/$prog" >"$work/$prog.out" 2>&1 ||
		! "$T/insnmap" "$work/$prog" >>"$work/$prog.out" 2>&1; then
		touch "$work/$prog.failed"
		return 1
	fi
}

# The ptrace probe: the static program must single-step.
if ! prepare static_calls; then
	if grep -qi 'not permitted\|denied' "$work/static_calls.out"; then
		skip_all "ptrace is not permitted here: $(head -1 "$work/static_calls.out")"
	fi
	echo "FAIL ptsynth-sstep static_calls: $(head -3 "$work/static_calls.out" | tr '\n' ' ')"
	exit 1
fi

# perf script's branch list as "TID NAME IP ADDR" / "TID error", each thread in order.
norm_branches() {
	awk '
	/^ instruction trace error/ { for (i = 1; i <= NF; i++) if ($i == "tid") t = $(i + 1); print t, "error"; next }
	/=>/ {
		for (i = 1; i <= NF; i++) if ($i == "=>") a = i
		n = $2; for (i = 3; i < a - 1; i++) n = n " " $i
		print $1, n, $(a - 1), $(a + 1)
	}' | sort -s -k1,1n
}

# Kernel image for the k/uk scopes (built lazily).
kimage() {
	[ -e "$work/kimage.kimg" ] && return 0
	"$T/insnmap" -k "$P/kimage" "$work/kimage" >"$work/kimage.out" 2>&1
}

# Cases whose end-to-end check fails because of a known snaptrace bug, "name: why".
# They print SKIP (with the first difference) while they fail and PASS once fixed.
# (kernel-irq-k was here until main's 64b3655 fixed the order at equal timestamps, and
# dyn-flip59, a frame outlasting an [unknown] span it began in, until cd6e5a1.)
KNOWN_BUGS=()
known_bug() {
	local k
	for k in ${KNOWN_BUGS[@]+"${KNOWN_BUGS[@]}"}; do
		[ "${k%%:*}" = "$1" ] && { echo "${k#*: }" | tr '\n' ' '; return 0; }
	done
	return 1
}

snaptrace_state=unknown # unknown | ok | missing
# e2e_case NAME DATA SCOPE TRUTH PERF-OUTPUT [DECODE-FLAGS...]
# (DATA, TRUTH and PERF-OUTPUT may be comma-separated lists: successive snapshots)
e2e_case() {
	local name=$1 data=$2 scope=$3 truth=$4 perfout=$5
	shift 5
	local flags=("$@")
	case $scope in
	k) flags+=(-trace-kernel-only) ;;
	uk) flags+=(-trace-include-kernel) ;;
	esac
	[ -x ./snaptrace ] || snaptrace_state=missing
	if [ "$snaptrace_state" = missing ]; then
		echo "SKIP ptsynth-e2e $name: snaptrace decode not available yet"
		return
	fi
	local datas=()
	IFS=, read -ra datas <<<"$data"
	if ! ./snaptrace decode "${datas[@]}" "${flags[@]}" -o "$work/$name.fxt" >"$work/$name.dec" 2>&1; then
		if grep -q 'not implemented' "$work/$name.dec"; then
			snaptrace_state=missing
			echo "SKIP ptsynth-e2e $name: snaptrace decode not available yet"
			return
		fi
		echo "FAIL ptsynth-e2e $name: snaptrace decode: $(head -3 "$work/$name.dec" | tr '\n' ' ')"
		fail=1
		return
	fi
	if ! ./snaptrace dump "$work/$name.fxt" >"$work/$name.dump" 2>"$work/$name.dumperr"; then
		if grep -q 'not implemented' "$work/$name.dumperr"; then
			echo "SKIP ptsynth-e2e $name: snaptrace dump not available yet"
			return
		fi
		echo "FAIL ptsynth-e2e $name: snaptrace dump: $(head -3 "$work/$name.dumperr" | tr '\n' ' ')"
		fail=1
		return
	fi
	python3 "$HERE/stacks.py" expect --scope "$scope" "$truth" "$perfout" >"$work/$name.want" &&
		python3 "$HERE/stacks.py" dump <"$work/$name.dump" >"$work/$name.got"
	local why
	if ! ./snaptrace dump -check "$work/$name.fxt" >"$work/$name.chk" 2>&1; then
		if why=$(known_bug "$name"); then
			echo "SKIP ptsynth-e2e $name: known snaptrace bug: $why($(head -1 "$work/$name.chk" | cut -c1-160))"
		else
			echo "FAIL ptsynth-e2e $name: the trace is not well formed: $(head -1 "$work/$name.chk")"
			fail=1
		fi
	elif cmp -s "$work/$name.want" "$work/$name.got"; then
		echo "PASS ptsynth-e2e $name: $(grep -c 'B ' "$work/$name.want") slices in $(grep -c '^thread' "$work/$name.want") threads identical"
	elif why=$(known_bug "$name"); then
		echo "SKIP ptsynth-e2e $name: known snaptrace bug: $why(first difference: $(diff "$work/$name.want" "$work/$name.got" | head -3 | tr '\n' ' '))"
	else
		echo "FAIL ptsynth-e2e $name: stacks differ from the single-step truth (< want, > got):"
		diff "$work/$name.want" "$work/$name.got" | head -20
		fail=1
	fi
	# The in-process decoder against perf on the same recording (not for the text path's
	# repeat of a case).
	case " ${flags[*]} " in
	*" -no-dlfilter "*) ;;
	*) ptdec_case "$name" "$data" "${flags[@]}" ;;
	esac
}

# ptdec_case NAME DATA[,DATA...] [DECODE-FLAGS...]: the in-process decoder against perf
# (docs/ptdec.md): `snaptrace dump` of -decoder ipt must equal that of -decoder perf,
# with the default pieces, with a piece at every PSB on 2 threads (so every piece
# boundary is a join), and in segments of 7 events on 1 and 8 threads. A recording ptdec does not support falls back to perf: that
# fails unless PTDEC_FALLBACK names the reason expected.
ptdec_case() {
	local name=$1 data=$2
	shift 2
	local datas=() mode
	IFS=, read -ra datas <<<"$data"
	if ! ./snaptrace decode -q -decoder perf "${datas[@]}" "$@" -o "$work/$name.pd.perf.fxt" \
		>"$work/$name.pd.err" 2>&1 ||
		! ./snaptrace dump "$work/$name.pd.perf.fxt" >"$work/$name.pd.perf"; then
		echo "FAIL ptdec-diff $name: -decoder perf: $(head -2 "$work/$name.pd.err" | tr '\n' ' ')"
		fail=1
		return
	fi
	for mode in stream1 stream8 default piece1; do
		# check: every piece the fast walk decodes is decoded by libipt's decoder too,
		# and the events must be the same (docs/ptdec.md)
		local env=(SNAPTRACE_PTDEC_WALK=check) jobs=()
		# (piece1: the reader and one worker, the layout on 2 CPUs; stream8: a
		# worker a job, that on more: docs/ptdec.md, "The reader and one worker")
		[ $mode = piece1 ] && env+=(SNAPTRACE_PTDEC_PIECE=1 SNAPTRACE_PTDEC_AHEAD=1) && jobs=(-j 2)
		# stream: each piece hands its events on 7 at a time (the check compares
		# whole pieces, so not with it), on one thread and on 8 with a piece a PSB
		[ $mode = stream1 ] && env=(SNAPTRACE_PTDEC_CAP=7) && jobs=(-j 1)
		[ $mode = stream8 ] && env=(SNAPTRACE_PTDEC_CAP=7 SNAPTRACE_PTDEC_PIECE=1 SNAPTRACE_PTDEC_AHEAD=0) && jobs=(-j 8)
		if ! env "${env[@]}" ./snaptrace decode -v -decoder ipt "${jobs[@]}" "${datas[@]}" "$@" \
			-o "$work/$name.pd.ipt.fxt" >"$work/$name.pd.err" 2>&1 ||
			! ./snaptrace dump "$work/$name.pd.ipt.fxt" >"$work/$name.pd.ipt"; then
			echo "FAIL ptdec-diff $name ($mode): -decoder ipt: $(grep -m2 -v '^snaptrace: .*info' "$work/$name.pd.err" | tr '\n' ' ')"
			fail=1
			return
		fi
		if ! cmp -s "$work/$name.pd.perf" "$work/$name.pd.ipt"; then
			echo "FAIL ptdec-diff $name ($mode): dumps differ (< perf, > ipt):"
			diff "$work/$name.pd.perf" "$work/$name.pd.ipt" | head -10
			fail=1
			return
		fi
	done
	if [ -n "${PTDEC_LEFT:-}" ]; then
		# With a piece at every PSB, at most PTDEC_LEFT pieces are left to libipt's
		# decoder: the fast walk takes the others (cycle-accurate and MTC ones too).
		local pw np nw
		pw=$(grep -o '[0-9]* pieces ([0-9]* by the fast walk)' "$work/$name.pd.err" | tr -d '(')
		read -r np _ nw _ <<<"$pw"
		if [ -z "$pw" ] || [ $((np - nw)) -gt "$PTDEC_LEFT" ]; then
			echo "FAIL ptdec-walk $name: ${pw:-no count}: over $PTDEC_LEFT left to libipt's decoder"
			fail=1
		else
			echo "PASS ptdec-walk $name: $nw of $np pieces by the fast walk"
		fi
	fi
	if [ -n "${PTDEC_FALLBACK:-}" ]; then
		# A recording ptdec must leave to perf, saying why.
		if grep -q "does not take it: .*$PTDEC_FALLBACK" "$work/$name.pd.err"; then
			echo "PASS ptdec-diff $name: left to perf ($PTDEC_FALLBACK), $(grep -c . "$work/$name.pd.perf") dump lines identical"
		else
			echo "FAIL ptdec-diff $name: not left to perf with '$PTDEC_FALLBACK': $(grep -m1 -v '^snaptrace: .*info' "$work/$name.pd.err")"
			fail=1
		fi
	elif grep -q 'decoding with perf' "$work/$name.pd.err"; then
		# Nothing the synthetic recordings need falls back to perf (docs/ptdec.md).
		echo "FAIL ptdec-diff $name: fell back to perf: $(grep -m1 -o 'does not take it: .*' "$work/$name.pd.err")"
		fail=1
	else
		echo "PASS ptdec-diff $name: $(grep -c . "$work/$name.pd.perf") dump lines identical through both decoders"
	fi
}

# gen_case NAME PROG SCOPE MKPTDATA-OPTIONS...: makes $work/NAME.data and checks
# perf's decode of it (part a). Returns 0 if that passed.
gen_case() {
	local name=$1 prog=$2 scope=$3
	shift 3
	local d=$work/$name kopt=()
	if [ ! -x "$P/$prog" ]; then
		echo "SKIP ptsynth-gen $name: $P/$prog was not built (no C++ compiler?)"
		return 1
	fi
	if ! prepare "$prog"; then
		echo "FAIL ptsynth-gen $name: sstep/insnmap $prog: $(head -3 "$work/$prog.out" | tr '\n' ' ')"
		fail=1
		return 1
	fi
	if [ "$scope" != u ]; then
		if ! kimage; then
			echo "FAIL ptsynth-gen $name: kernel image: $(head -3 "$work/kimage.out" | tr '\n' ' ')"
			fail=1
			return 1
		fi
		kopt=(-K "$work/kimage")
	fi
	if ! "$T/mkptdata" -p "$work/$prog" -o "$d.data" -e "$d.exp" -s "$scope" "${kopt[@]}" "$@" \
		>"$d.mk" 2>&1; then
		echo "FAIL ptsynth-gen $name: mkptdata $*: $(tail -2 "$d.mk" | tr '\n' ' ')"
		fail=1
		return 1
	fi
	local popt=(--itrace=be)
	case " $* " in *" -V "*) popt+=(--vmlinux "$P/kimage") ;; esac
	# One perf run: the branch fields for (a), plus symbols for (b).
	# Timeless data has no time to print: number the lines in a time column instead.
	perf script -i "$d.data" "${popt[@]}" --ns -F tid,time,flags,ip,sym,symoff,dso,addr \
		>"$d.perf" 2>"$d.perferr" ||
		perf script -i "$d.data" "${popt[@]}" -F tid,flags,ip,sym,symoff,dso,addr 2>"$d.perferr" |
		awk '/^ instruction trace error/ { print; next } { $1 = $1 " 0." NR ":"; print }' >"$d.perf"
	perf script -i "$d.data" "${popt[@]}" -F tid,flags,ip,addr 2>/dev/null | norm_branches >"$d.got"
	sort -s -k1,1n "$d.exp" >"$d.want"
	if ! cmp -s "$d.want" "$d.got"; then
		echo "FAIL ptsynth-gen $name: perf decoded $(wc -l <"$d.got") branches, expected $(wc -l <"$d.want") (< want, > got):"
		diff "$d.want" "$d.got" | head -10
		fail=1
		return 1
	fi
	if [ "$scope" != u ] && ! grep -qE '=> *ffffffff8[0-9a-f]+ (entry_SYSCALL_64|asm_common_interrupt)\+0x0 \((kimage|\[kernel\.kallsyms\])\)' "$d.perf"; then
		echo "FAIL ptsynth-gen $name: perf did not name the kernel entry points"
		fail=1
		return 1
	fi
	echo "PASS ptsynth-gen $name: $(wc -l <"$d.want") branches and errors identical"
}

# run_case NAME PROG SCOPE MKPTDATA-OPTIONS...: part (a), then (b).
run_case() {
	local name=$1 prog=$2 scope=$3 d=$work/$1
	gen_case "$@" || return
	shift 3
	# -V: the kernel image is only in the recording's sideband, as with --kcore.
	local dflags=()
	case " $* " in *" -V "*) dflags=(-vmlinux "$P/kimage") ;; esac
	e2e_case "$name" "$d.data" "$scope" "$d.exp" "$d.perf" "${dflags[@]}"
	# Cycle-accurate recordings carry CBR packets: perf's cbr events must become the
	# timeline's CPU frequency counter.
	case " $* " in
	*" -Y "*)
		if [ -e "$work/$name.dump" ]; then
			local want got
			want=$(perf script -i "$d.data" --itrace=p 2>/dev/null | grep -o 'freq: *[0-9]* MHz' |
				awk '{print $2}' | sort -u | tr '\n' ' ')
			got=$(grep '^counter .*name="CPU"' "$work/$name.dump" | grep -o 'freq (MHz)=[0-9]*' |
				cut -d= -f2 | sort -u | tr '\n' ' ')
			if [ -n "$want" ] && [ "$want" = "$got" ]; then
				echo "PASS ptsynth-cbr $name: CPU counter ${got}MHz as perf's cbr events"
			else
				echo "FAIL ptsynth-cbr $name: perf's cbr frequencies '$want', CPU counter '$got'"
				fail=1
			fi
		fi
		;;
	esac
	# Some cases also through the perf script text path when the plugin is the default.
	case " $TEXT_CASES " in
	*" $name "*)
		if [ -e ./snaptrace-dlfilter.so ]; then
			e2e_case "$name-text" "$d.data" "$scope" "$d.exp" "$d.perf" -no-dlfilter "${dflags[@]}"
		else
			echo "SKIP ptsynth-e2e $name-text: no snaptrace-dlfilter.so, the default path is already the text one"
		fi
		;;
	esac
}

# ptdec_only NAME PROG MKPTDATA-OPTIONS...: a user-space recording for ptdec-diff alone,
# where mkptdata's expected branch list does not model what perf does (so no part (a)
# or (b)): perf's own decode is the reference.
ptdec_only() {
	local name=$1 prog=$2
	shift 2
	if ! prepare "$prog" ||
		! "$T/mkptdata" -p "$work/$prog" -o "$work/$name.data" -s u "$@" >"$work/$name.mk" 2>&1; then
		echo "FAIL ptdec-diff $name: mkptdata $*: $(tail -2 "$work/$name.mk" | tr '\n' ' ')"
		fail=1
		return
	fi
	ptdec_case "$name" "$work/$name.data"
}

# snapshots_case NAME PROG OPTIONS... -- WINDOW...: one recording per window of the run
# (mkptdata -w), decoded together as successive snapshots of one trace.
snapshots_case() {
	local name=$1 prog=$2 opts=() i=0 datas="" truths="" perfs=""
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	for w in "$@"; do
		gen_case "$name.$i" "$prog" u "${opts[@]}" -w "$w" || return
		datas+="${datas:+,}$work/$name.$i.data"
		truths+="${truths:+,}$work/$name.$i.exp"
		perfs+="${perfs:+,}$work/$name.$i.perf"
		i=$((i + 1))
	done
	e2e_case "$name" "$datas" u "$truths" "$perfs"
}

# Cases also decoded with -no-dlfilter (perf script text) besides the default path.
TEXT_CASES="static-corrupt threads-2cpu dyn kernel-irq-uk"

# Single-step the two big programs in the background (pinned to CPU 0) while the
# small cases run; their cases wait for it.
(prepare dyn; [ -x "$P/cxx_throw" ] && prepare cxx_throw) &
bg=$!

# Static program, no libc: each synthesis option.
run_case static static_calls u
run_case static-retcomp static_calls u -r
run_case static-timeless static_calls u -r -T
run_case static-snapshot static_calls u -r -S -g 333
run_case static-psb static_calls u -r -P 64 -k 3
run_case static-buffers static_calls u -P 64 -B 8
run_case static-irq static_calls u -r -I 50
run_case static-cyc static_calls u -r -Y -P 128
run_case static-corrupt static_calls u -c 10
run_case static-overflow static_calls u -r -O 100
# Two threads: per-thread queues, then per-CPU queues with context switches (threads
# run until a syscall; with two CPUs they migrate at every syscall).
run_case threads threads u -r
run_case threads-percpu threads u -r -C
run_case threads-percpu-irq threads u -C -I 7
run_case threads-2cpu threads u -r -C -n 2
wait "$bg"
# Through ld.so and libc: PLT lazy binding, qsort callback, malloc/free, setjmp/longjmp.
run_case dyn dyn u
run_case dyn-retcomp dyn u -r -k 64
run_case dyn-irq dyn u -r -k 64 -I 997
run_case dyn-corrupt dyn u -k 64 -c 300
run_case dyn-overflow dyn u -r -k 64 -O 50000
run_case dyn-snapshot-buffers dyn u -r -k 64 -S -g 64 -B 2000
run_case dyn-2cpu dyn u -r -k 64 -C -n 2
# magic-trace's default recording: cycle-accurate (-Y), return compression, per CPU.
PTDEC_LEFT=0 run_case dyn-magic-trace-default dyn u -r -k 64 -Y -C -n 2
# A C++ exception unwinding three frames.
run_case cxx-throw cxx_throw u -r -k 64
# Snapshots: windows of one run, decoded as successive snapshots into one timeline.
snapshots_case static-snapshots static_calls -r -- 0:150 200:400 450:544
snapshots_case dyn-snapshots dyn -r -k 64 -- 20000:30000 60000:75000
# Kernel scopes with the pretend kernel (tests/progs/kimage.S): the write and exit
# syscalls, then interrupts every 100 instructions; u = user only, k = kernel only.
for scope in u k uk; do
	run_case "kernel-syscall-$scope" static_calls "$scope" -r
	run_case "kernel-irq-$scope" static_calls "$scope" -r -I 100
done
# An interrupt every 7 instructions, also right after calls and returns.
run_case kernel-irq-dense-uk static_calls uk -I 7
# The kernel mapped as perf records it ([kernel.kallsyms]), decoded with --vmlinux.
run_case kernel-vmlinux-uk static_calls uk -r -I 100 -V
# Kernel scopes for the in-process decoder: PSBs in user and kernel code (pieces
# joined inside the kernel), the kernel as a module and as [kernel.kallsyms], the
# dynamic program's many syscalls with interrupts.
run_case kernel-psb-uk static_calls uk -r -I 50 -P 64 -k 5
run_case kernel-psb-k static_calls k -r -I 30 -P 64
run_case kernel-vmlinux-psb-uk static_calls uk -I 40 -P 64 -V
run_case kernel-vmlinux-psb-k static_calls k -r -I 40 -P 64 -V
run_case kernel-dyn-uk dyn uk -r -k 64 -I 997 -P 512
run_case kernel-dyn-k dyn k -r -k 64 -I 499 -P 256
# Recorded with --kcore: a perf.data directory whose kcore_dir holds the kernel's
# code (kcore), kallsyms and modules; perf and snaptrace decode it without options.
run_case kernel-kcore-uk static_calls uk -r -I 60 -P 128 -D
run_case kernel-kcore-k static_calls k -I 45 -P 64 -D
# The kernel and the vdso from perf's build-id cache ($HOME/.debug/.build-id, which
# perf record fills): mkptdata -b records their build ids and fills a cache in a
# temporary home that perf and snaptrace read.
mkdir -p "$work/home"
HOME=$work/home run_case kernel-buildid-uk static_calls uk -r -I 60 -P 128 -b "$work/home"
HOME=$work/home run_case kernel-buildid-k static_calls k -I 25 -b "$work/home"
HOME=$work/home run_case vdso vdso u -r -b "$work/home"
HOME=$work/home run_case vdso-psb vdso u -P 128 -k 7 -b "$work/home"

# For the in-process decoder (docs/ptdec.md): many PSBs per buffer in the dynamic
# program (pieces joined at every PSB), per-CPU buffers with switches and PSBs on two
# CPUs, a wrapped snapshot with PSBs, corrupt packets between PSBs (perf's resync vs a
# piece boundary), an overflow with PSBs, several buffers per queue with PSBs.
run_case dyn-psb dyn u -r -k 64 -P 256
run_case dyn-2cpu-psb dyn u -r -k 64 -C -n 2 -P 512
run_case dyn-snapshot-psb dyn u -r -k 64 -S -g 100 -P 300
run_case dyn-corrupt-psb dyn u -k 64 -c 300 -P 512
run_case static-corrupt-psb static_calls u -c 10 -P 64
run_case threads-percpu-psb threads u -r -C -n 2 -P 64 -k 5
run_case dyn-buffers-psb dyn u -r -k 64 -P 400 -B 1500
# Processes: the traced one forked from the one whose mmaps the recording has (its code
# is its parent's, as perf's thread__fork), per thread and per CPU; and its code mapped
# again at other file offsets after the trace, which ptdec leaves to perf (perf decodes
# each part with the maps of its time).
run_case dyn-fork dyn u -r -k 64 -P 512 -f
run_case threads-fork-percpu threads u -r -C -n 2 -P 64 -k 5 -f
PTDEC_FALLBACK='code of process [0-9]* at 0x[0-9a-f]* changes during the recording' \
	run_case dyn-remap dyn u -r -k 64 -x
# Cycle-accurate and MTC timing for ptdec's copy of perf's clock (src/ptdec/timing.c):
# clock-like cycle counts with CYC before MTCs and CBR changes (-F: perf's time runs
# ahead of the TSC; -G: it never does, so per-CPU threads keep their switch times), an
# exact and a non-integer TSC:CTC ratio, MTC periods 2, 3 and 10 (over 8: the TMA lacks
# MTC bits), MTC without CYC, no TSC but in PSB+, a corrupt TIP, interrupts with an
# overflow, several buffers, a wrapped snapshot, and per-CPU buffers on two CPUs; -t: a
# TSC of about 3 GHz (perf time = TSC * 349525 / 2^20 + 5000), as on real machines, where
# perf's estimates are in TSC ticks.
# PTDEC_LEFT: how many pieces (a piece at every PSB) the fast walk may leave to libipt's
# decoder (one with a corrupt packet, one cut by the snapshot's wrap, those with an
# overflow); it takes the others, whose clock it reads itself (docs/ptdec.md).
PTDEC_LEFT=0 run_case dyn-cyc-psb dyn u -r -k 64 -Y -F -P 256 -R 400:1 -M 3
PTDEC_LEFT=0 run_case dyn-cyc-2cpu-psb dyn u -r -k 64 -Y -G -C -n 2 -P 512 -R 400:1 -M 3 -t 349525:20:5000
PTDEC_LEFT=0 run_case dyn-mtc-psb dyn u -r -k 64 -m -F -P 256 -R 1000:3 -M 2
PTDEC_LEFT=0 run_case dyn-cyc-m10-psb dyn u -r -k 0 -Y -F -P 512 -R 400:1 -M 10
PTDEC_LEFT=1 run_case dyn-cyc-corrupt-psb dyn u -k 64 -Y -F -c 300 -P 512 -R 400:1 -M 3 -t 349525:20:5000
run_case dyn-corrupt-tsc3g dyn u -k 64 -c 300 -P 512 -t 349525:20:5000
PTDEC_LEFT=5 run_case dyn-cyc-irq-ovf-psb dyn u -r -k 64 -Y -F -I 997 -O 50000 -P 512 -R 400:1 -M 3
PTDEC_LEFT=0 run_case dyn-cyc-buffers-psb dyn u -r -k 64 -Y -F -P 400 -B 1500 -R 400:1 -M 3
PTDEC_LEFT=1 run_case dyn-cyc-snapshot-psb dyn u -r -k 64 -Y -F -S -g 100 -P 300 -B 2000 -R 400:1 -M 3
# A corrupt TIP right before a PSB+ with a FUP: perf's failing walk is the one to that
# FUP, and it resyncs at it ("tr strt") instead of silently at the PSB (mkptdata's list
# does not model this).
PTDEC_LEFT=1 ptdec_only dyn-cyc-corrupt-at-psb dyn -Y -F -c 5 -P 256 -R 400:1 -M 2

# A piece without PSBs (one PSB+ per stream) is streamed to the reader in segments, not held
# whole (docs/ptdec.md, "Memory"): its dump is the same as perf's for -j 1, 2 and 8 (the
# stream modes above; here also TSC-only and cycle-accurate), and the reader takes it in
# segments of about the cap, from a helper thread when the reader was to decode it itself.
stream_case() {
	local name=$1
	shift
	ptdec_only "$name" dyn -P 100000000 "$@" || return
	[ -f "$work/$name.data" ] || return
	local j n big over
	for j in 1 2 8; do
		if ! SNAPTRACE_PTDEC_CAP=50 SNAPTRACE_PTDEC_DEBUG=1 ./snaptrace decode -decoder ipt -j $j \
			"$work/$name.data" -o "$work/$name.st.fxt" >"$work/$name.st.err" 2>&1 ||
			! ./snaptrace dump "$work/$name.st.fxt" >"$work/$name.st.dump" ||
			! cmp -s "$work/$name.pd.perf" "$work/$name.st.dump"; then
			echo "FAIL ptdec-stream $name -j $j: $(grep -v '^ptdec: ' "$work/$name.st.err" | head -2 | tr '\n' ' ')dumps differ or decode failed"
			fail=1
			return
		fi
		n=$(grep -c '^ptdec: piece [0-9]*: a segment of' "$work/$name.st.err")
		big=$(grep -c '^ptdec: piece [0-9]*: a segment of .*helper thread' "$work/$name.st.err")
		# a segment goes once 50 events are final: the step that got there may add a few
		over=$(grep -o '^ptdec: piece [0-9]*: a segment of [0-9]*' "$work/$name.st.err" | awk '$NF > 100' | wc -l)
		if [ "$n" -lt 20 ] || [ "$over" -ne 0 ] || { [ $j = 1 ] && [ "$big" -lt 20 ]; }; then
			echo "FAIL ptdec-stream $name -j $j: $n segments ($big from helper threads, $over over 100 events)"
			fail=1
			return
		fi
		echo "PASS ptdec-stream $name -j $j: $n segments of about 50 events ($big from helper threads), dump identical to perf's"
	done
}
stream_case dyn-nopsb -r -k 64
stream_case dyn-cyc-nopsb -r -k 64 -Y -F -R 400:1 -M 3

# Damaged recordings (deterministic: fixed seeds, and sstep runs in an empty
# environment): snaptrace must neither crash nor hang. Random bytes in the PT
# data: decode succeeds, the trace is well formed, and every error perf reports is a
# [decode error: ...] span. A truncated file: a clean error, no signal.
robust() {
	local name=$1 data=$2 kind=$3 rc n
	if [ "$snaptrace_state" = missing ] || [ ! -e "$data" ]; then
		echo "SKIP ptsynth-robust $name: snaptrace decode or the recording is not available"
		return
	fi
	# the perf path: its error count is the reference (ptdec-robust covers -decoder ipt)
	timeout 120 ./snaptrace decode -decoder perf "$data" -o "$work/$name.fxt" >"$work/$name.dec" 2>&1
	rc=$?
	if [ $rc -ge 124 ]; then
		echo "FAIL ptsynth-robust $name: snaptrace decode died or hung (exit $rc): $(tail -2 "$work/$name.dec" | tr '\n' ' ')"
		fail=1
	elif [ "$kind" = truncated ]; then
		if [ $rc -ne 0 ] && grep -q '^snaptrace: ' "$work/$name.dec"; then
			echo "PASS ptsynth-robust $name: exit $rc, $(grep '^snaptrace: ' "$work/$name.dec" | tail -1 | cut -c1-120)"
		elif [ $rc -eq 0 ] && ./snaptrace dump -check "$work/$name.fxt" >/dev/null 2>&1; then
			echo "PASS ptsynth-robust $name: decoded what was there"
		else
			echo "FAIL ptsynth-robust $name: exit $rc without a snaptrace error line"
			fail=1
		fi
	elif [ $rc -ne 0 ]; then
		echo "FAIL ptsynth-robust $name: snaptrace decode exit $rc: $(grep -m2 . "$work/$name.dec" | tr '\n' ' ')"
		fail=1
	elif ! ./snaptrace dump -check "$work/$name.fxt" >"$work/$name.chk" 2>&1; then
		local why
		if why=$(known_bug "$name"); then
			echo "SKIP ptsynth-robust $name: known snaptrace bug: $why($(head -1 "$work/$name.chk" | cut -c1-160))"
		else
			echo "FAIL ptsynth-robust $name: $(head -1 "$work/$name.chk")"
			fail=1
		fi
	else
		n=$(perf script -i "$data" --itrace=e -F tid 2>/dev/null | grep -c '^ instruction trace error')
		local spans
		spans=$(./snaptrace dump "$work/$name.fxt" | grep -c '^complete .*name="\[decode error: ')
		if [ "$n" -gt 0 ] && [ "$n" = "$spans" ]; then
			echo "PASS ptsynth-robust $name: $n perf errors, $n [decode error] spans, trace well formed"
		else
			echo "FAIL ptsynth-robust $name: perf reported $n errors, the trace has $spans [decode error] spans"
			fail=1
		fi
	fi
}
if [ -e "$work/dyn.data" ]; then
	python3 - "$work/dyn.data" "$work" <<'PY'
import random, sys
data = open(sys.argv[1], 'rb').read()
n = len(data)
for seed in (0, 1, 2, 59):
    r, b = random.Random(seed), bytearray(data)
    for _ in range(20):  # the PT data is the bulk of the file, after the sideband
        i = r.randrange(n // 5, n - 200)
        b[i] = r.randrange(256)
    open('%s/flip%d.data' % (sys.argv[2], seed), 'wb').write(b)
open(sys.argv[2] + '/trunc-half.data', 'wb').write(data[:n // 2])
open(sys.argv[2] + '/trunc-header.data', 'wb').write(data[:200])
PY
fi
for seed in 0 1 2 59; do
	robust "dyn-flip$seed" "$work/flip$seed.data" flipped
	# The in-process decoder on the same damage: no crash, no hang, a well-formed
	# trace (its resynchronisation is perf's, but random damage is not compared).
	if [ -e "$work/flip$seed.data" ] && [ "$snaptrace_state" != missing ]; then
		# (its decode errors are its own: never "perf reported", issue 20)
		if timeout 120 ./snaptrace decode -decoder ipt "$work/flip$seed.data" \
			-o "$work/flip$seed.ipt.fxt" >"$work/flip$seed.ipt.dec" 2>&1 &&
			./snaptrace dump -check "$work/flip$seed.ipt.fxt" >/dev/null 2>&1 &&
			! grep -q "perf reported" "$work/flip$seed.ipt.dec"; then
			echo "PASS ptdec-robust dyn-flip$seed: decoded, trace well formed"
		else
			echo "FAIL ptdec-robust dyn-flip$seed: $(tail -2 "$work/flip$seed.ipt.dec" | tr '\n' ' ')"
			fail=1
		fi
	fi
done
# The default decoder: the in-process one where it supports the recording, unless
# $SNAPTRACE_DECODER says otherwise (docs/ptdec.md).
if [ -e "$work/dyn.data" ] && [ "$snaptrace_state" != missing ]; then
	env -u SNAPTRACE_DECODER ./snaptrace decode -v "$work/dyn.data" -o "$work/dflt.fxt" \
		>"$work/dflt.dec" 2>&1
	SNAPTRACE_DECODER=perf ./snaptrace decode -v "$work/dyn.data" -o "$work/dflt-perf.fxt" \
		>"$work/dflt-perf.dec" 2>&1
	if grep -q 'decoding Intel PT in-process' "$work/dflt.dec" &&
		! grep -q 'in-process' "$work/dflt-perf.dec" && [ -s "$work/dflt-perf.fxt" ]; then
		echo "PASS ptdec-default: in-process by default, perf with SNAPTRACE_DECODER=perf"
	else
		echo "FAIL ptdec-default: $(grep -m1 -i 'decod' "$work/dflt.dec")"
		fail=1
	fi
fi
robust dyn-trunc-half "$work/trunc-half.data" truncated
robust dyn-trunc-header "$work/trunc-header.data" truncated

exit $fail
