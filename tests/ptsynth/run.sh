#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Intel PT without PT hardware (docs/pt-testing.md). For each program in tests/progs:
# single-step it (sstep), classify its instructions (insnmap), then for each case
# synthesise a perf.data (mkptdata) and check
#   (a) ptsynth-gen <case>: perf's decoded branch list equals the ground truth that
#       mkptdata derived from the executed instructions;
#   (b) ptsynth-e2e <case>: snaptrace decode + snaptrace dump give, for every thread,
#       the call stacks computed independently from that branch list (stacks.py).
# Fixtures are made at test time in a temporary directory (perf.data holds absolute
# paths). PTSYNTH_KEEP=1 keeps the directory and prints its name.
set -u
cd "$(dirname "$0")/../.."
: "${SNAP_BUILD:=build/default}"
T=$SNAP_BUILD/tests/ptsynth
P=$SNAP_BUILD/tests/progs
HERE=tests/ptsynth

skip_all() {
	echo "SKIP ptsynth: $1"
	exit 0
}
command -v perf >/dev/null || skip_all "perf is not installed"
command -v objdump >/dev/null || skip_all "objdump (binutils) is not installed"
command -v python3 >/dev/null || skip_all "python3 is not installed"
command -v taskset >/dev/null || skip_all "taskset is not installed"
[ -x "$T/mkptdata" ] || skip_all "mkptdata not built (libipt-dev missing)"
[ -x "$T/sstep" ] && [ -x "$P/static_calls" ] || skip_all "test tools not built (make test-bins)"

work=$(mktemp -d "${TMPDIR:-/tmp}/ptsynth.XXXXXX")
if [ "${PTSYNTH_KEEP:-0}" = 1 ]; then
	echo "ptsynth: keeping $work" >&2
else
	trap 'rm -rf "$work"' EXIT
fi
fail=0

# Ground truth for a program, once: sstep (pinned to CPU 0) and insnmap.
prepare() {
	local prog=$1
	[ -e "$work/$prog.insn" ] && return 0
	[ -e "$work/$prog.failed" ] && return 1
	if ! taskset -c 0 "$T/sstep" -q -o "$work/$prog" -- "$P/$prog" >"$work/$prog.out" 2>&1 ||
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
KNOWN_BUGS=(
	"kernel-irq-k: snaptrace writes the inferred kernel entry frame's begin before the end of
the [untraced] frame at the same timestamp, so a viewer nests the kernel frames in [untraced]"
)
known_bug() {
	local k
	for k in "${KNOWN_BUGS[@]}"; do
		[ "${k%%:*}" = "$1" ] && { echo "${k#*: }" | tr '\n' ' '; return 0; }
	done
	return 1
}

snaptrace_state=unknown # unknown | ok | missing
e2e_case() {
	local name=$1 data=$2 scope=$3 perfout=$4
	shift 4
	local flags=()
	case $scope in
	k) flags=(-trace-kernel-only) ;;
	uk) flags=(-trace-include-kernel) ;;
	esac
	# -V: the kernel image is only in the recording's sideband, as with --kcore.
	case " $* " in *" -V "*) flags+=(-vmlinux "$P/kimage") ;; esac
	[ -x ./snaptrace ] || snaptrace_state=missing
	if [ "$snaptrace_state" = missing ]; then
		echo "SKIP ptsynth-e2e $name: snaptrace decode not available yet"
		return
	fi
	if ! ./snaptrace decode "$data" "${flags[@]}" -o "$work/$name.fxt" >"$work/$name.dec" 2>&1; then
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
	python3 "$HERE/stacks.py" expect --scope "$scope" <"$perfout" >"$work/$name.want" &&
		python3 "$HERE/stacks.py" dump <"$work/$name.dump" >"$work/$name.got"
	local why
	if cmp -s "$work/$name.want" "$work/$name.got"; then
		echo "PASS ptsynth-e2e $name: $(grep -c 'B ' "$work/$name.want") slices in $(grep -c '^thread' "$work/$name.want") threads identical"
	elif why=$(known_bug "$name"); then
		echo "SKIP ptsynth-e2e $name: known snaptrace bug: $why(first difference: $(diff "$work/$name.want" "$work/$name.got" | head -3 | tr '\n' ' '))"
	else
		echo "FAIL ptsynth-e2e $name: stacks differ from the single-step truth (< want, > got):"
		diff "$work/$name.want" "$work/$name.got" | head -20
		fail=1
	fi
}

# run_case NAME PROG SCOPE MKPTDATA-OPTIONS...
run_case() {
	local name=$1 prog=$2 scope=$3
	shift 3
	local d=$work/$name kopt=()
	if ! prepare "$prog"; then
		echo "FAIL ptsynth-gen $name: sstep/insnmap $prog: $(head -3 "$work/$prog.out" | tr '\n' ' ')"
		fail=1
		return
	fi
	if [ "$scope" != u ]; then
		if ! kimage; then
			echo "FAIL ptsynth-gen $name: kernel image: $(head -3 "$work/kimage.out" | tr '\n' ' ')"
			fail=1
			return
		fi
		kopt=(-K "$work/kimage")
	fi
	if ! "$T/mkptdata" -p "$work/$prog" -o "$d.data" -e "$d.exp" -s "$scope" "${kopt[@]}" "$@" \
		>"$d.mk" 2>&1; then
		echo "FAIL ptsynth-gen $name: mkptdata $*: $(tail -2 "$d.mk" | tr '\n' ' ')"
		fail=1
		return
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
		return
	fi
	echo "PASS ptsynth-gen $name: $(wc -l <"$d.want") branches and errors identical"
	e2e_case "$name" "$d.data" "$scope" "$d.perf" "$@"
}

# Single-step the two big programs in the background (pinned to CPU 0) while the
# small cases run; their cases wait for it.
(prepare dyn; prepare cxx_throw) &
bg=$!

# Static program, no libc: each synthesis option.
run_case static static_calls u
run_case static-retcomp static_calls u -r
run_case static-timeless static_calls u -r -T
run_case static-snapshot static_calls u -r -S -g 333
run_case static-psb static_calls u -r -P 64 -k 3
run_case static-irq static_calls u -r -I 50
run_case static-corrupt static_calls u -c 10
run_case static-overflow static_calls u -r -O 100
# Two threads: per-thread queues, then one CPU with context switches.
run_case threads threads u -r
run_case threads-percpu threads u -r -C
wait "$bg"
# Through ld.so and libc: PLT lazy binding, qsort callback, malloc/free, setjmp/longjmp.
run_case dyn dyn u
run_case dyn-retcomp dyn u -r -k 64
# A C++ exception unwinding three frames.
run_case cxx-throw cxx_throw u -r -k 64
# Kernel scopes with the pretend kernel (tests/progs/kimage.S): the write and exit
# syscalls, then interrupts every 100 instructions; u = user only, k = kernel only.
for scope in u k uk; do
	run_case "kernel-syscall-$scope" static_calls "$scope" -r
	run_case "kernel-irq-$scope" static_calls "$scope" -r -I 100
done
# The kernel mapped as perf records it ([kernel.kallsyms]), decoded with --vmlinux.
run_case kernel-vmlinux-uk static_calls uk -r -I 100 -V

exit $fail
