#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# dumpcmp: proves that a change kept behaviour (docs/design.md, "Tests").
#   tests/dumpcmp.sh OLD_SNAPTRACE NEW_SNAPTRACE [WORKDIR]
#   tests/dumpcmp.sh -j SNAPTRACE [WORKDIR]
# Collects every decode the golden, ptsynth and dlfilter suites run (their own case lists,
# flags, .args/.env and recordings), plus the bench's recordings whose calls return at a
# small size, by running those suites once in a shadow tree (WORKDIR/tree: symlinks to this
# checkout) whose ./snaptrace is a stand-in that records each `decode` (argv, environment,
# directory, and a copy of the suite's temporary files) before running the real binary.
# Then it decodes each recorded case again with OLD and with NEW, at the same paths, and
# compares exit status + stdout + stderr (temp paths and CPU seconds normalised; perf's own
# lines after snaptrace's) + `dump` of the output (OLD's dump reads both outputs). One line per differing case, then
#   dumpcmp: N identical, N differ, N skipped        (exit 1 if any differ)
# -j: one binary; every Intel PT recording decoded with -j 1, -j 2, -j 8, the default
# decoder and -decoder perf must give the same dump (issue 22).
# WORKDIR (default: a temporary directory, removed at the end) keeps the recordings: given
# again, nothing is recorded again (delete WORKDIR/cases to record anew). ptsynth makes its
# recordings under /tmp/ptsynth.XXXXXX (perf.data holds absolute paths); WORKDIR/ptsynth.dir
# names it, and it is removed with a temporary WORKDIR only.
# The plugin of a binary is the snaptrace-dlfilter.so beside it, else two directories up
# (build/VARIANT/snaptrace in a checkout); none: its plugin-path cases take the text path.
# SNAP_DUMPCMP_SUITES (default "golden ptsynth dlfilter bench") picks what is collected;
# SNAP_DUMPCMP_REPEAT (2000) is the bench recordings' ptrepeat count (the bench: 200000).
set -u
shopt -s nullglob
root=$(cd "$(dirname "$0")/.." && pwd)
: "${SNAP_BUILD:=build/default}"
: "${SNAP_DUMPCMP_SUITES:=golden ptsynth dlfilter bench}"
: "${SNAP_DUMPCMP_REPEAT:=2000}"
usage() {
	echo "usage: tests/dumpcmp.sh OLD_SNAPTRACE NEW_SNAPTRACE [WORKDIR] | -j SNAPTRACE [WORKDIR]" >&2
	exit 2
}
jmode=0
if [ "${1:-}" = -j ]; then
	jmode=1
	shift
	[ $# -ge 1 ] && [ $# -le 2 ] || usage
	old=$1 new=$1 work=${2:-}
else
	[ $# -ge 2 ] && [ $# -le 3 ] || usage
	old=$1 new=$2 work=${3:-}
fi
for b in "$old" "$new"; do
	[ -x "$b" ] || { echo "dumpcmp: $b is not an executable" >&2; exit 2; }
done
old=$(realpath "$old") new=$(realpath "$new")
keep=1
if [ -z "$work" ]; then
	keep=0
	work=$(mktemp -d /tmp/dumpcmp.XXXXXX)
fi
mkdir -p "$work" && work=$(realpath "$work") || exit 2
cleanup() {
	[ $keep = 1 ] && return
	[ -f "$work/ptsynth.dir" ] && rm -rf "$(cat "$work/ptsynth.dir")"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cases=$work/cases  # one directory per recorded decode: argv, env (NUL-separated), cwd, snap/
tmpd=$work/tmp     # the suites' TMPDIR: their mktemp -d directories, restored per case
bin=$work/bin      # the binary under test (and its plugin), the same path for OLD and NEW
tree=$work/tree
mkdir -p "$tmpd" "$bin"

# install BINARY: puts it and its plugin at $bin (so both run with the same paths).
install() {
	local d plugin=
	d=$(dirname "$1")
	for p in "$d/snaptrace-dlfilter.so" "$d/../../snaptrace-dlfilter.so"; do
		[ -f "$p" ] && plugin=$p && break
	done
	cp "$1" "$bin/snaptrace.new" && mv "$bin/snaptrace.new" "$bin/snaptrace" || exit 2
	rm -f "$bin/snaptrace-dlfilter.so"
	if [ -n "$plugin" ]; then
		cp "$plugin" "$bin/snaptrace-dlfilter.so" || exit 2
	else
		echo "dumpcmp: no snaptrace-dlfilter.so beside $1: its plugin-path cases take the text path" >&2
	fi
}

# ---- collecting: the suites in a shadow tree whose ./snaptrace records each decode ----
make_tree() {
	rm -rf "$tree"
	mkdir -p "$tree"
	for e in "$root"/* "$root"/.[!.]*; do
		case ${e##*/} in snaptrace | snaptrace-dlfilter.so) continue ;; esac
		ln -s "$e" "$tree/${e##*/}"
	done
	ln -s "$bin/snaptrace-dlfilter.so" "$tree/snaptrace-dlfilter.so"
	# the stand-in: records a decode in $cases/SUITE.N, then runs the real binary
	cat >"$tree/snaptrace" <<'EOF'
#!/usr/bin/env bash
if [ "${1:-}" = decode ] && [ -n "${DUMPCMP_CASES:-}" ]; then
	exec 9>>"$DUMPCMP_CASES/.lock" && flock 9
	n=$(cat "$DUMPCMP_CASES/.n" 2>/dev/null || echo 0)
	echo $((n + 1)) >"$DUMPCMP_CASES/.n"
	c=$DUMPCMP_CASES/$(printf '%s.%04d' "$DUMPCMP_SUITE" "$n")
	mkdir -p "$c/snap"
	printf '%s\0' "$@" >"$c/argv"
	env -0 >"$c/env"
	pwd >"$c/cwd"
	# the suite's temporary directories this decode names: linked, its file arguments
	# copied (a suite may rewrite an input in place for its next case)
	for w in "$@" $(env | sed 's/^[^=]*=//'); do
		case $w in "$DUMPCMP_TMP"/?*) ;; *) continue ;; esac
		r=${w#"$DUMPCMP_TMP"/}
		r=${r%%/*}
		[ -e "$DUMPCMP_TMP/$r" ] && [ ! -e "$c/snap/$r" ] && cp -al "$DUMPCMP_TMP/$r" "$c/snap/"
		[ -f "$w" ] && [ -e "$c/snap/$r" ] && cp --remove-destination "$w" "$c/snap/${w#"$DUMPCMP_TMP"/}"
	done
	exec 9>&-
fi
exec "$DUMPCMP_BIN" "$@"
EOF
	chmod +x "$tree/snaptrace"
}

# run_suite NAME: tests/NAME/run.sh in the shadow tree, its output in $work/NAME.log.
run_suite() {
	local extra=()
	[ "$1" = ptsynth ] && extra=(PTSYNTH_KEEP=1)
	(cd "$tree" && env DUMPCMP_CASES="$cases" DUMPCMP_SUITE="$1" DUMPCMP_TMP="$tmpd" \
		DUMPCMP_BIN="$bin/snaptrace" TMPDIR="$tmpd" SNAP_BUILD="$SNAP_BUILD" "${extra[@]}" \
		SNAP_FXT_READ=/nonexistent nice tests/"$1"/run.sh) </dev/null >"$work/$1.log" 2>&1
	if [ "$1" = ptsynth ]; then
		sed -n 's/^ptsynth: keeping //p' "$work/ptsynth.log" | head -1 >"$work/ptsynth.dir"
	fi
}

# bench_cases: tests/bench/ptdec.sh's three recordings (8 per-thread streams of
# static_calls's outer iteration repeated, TSC and cycle-accurate, and TSC with the
# threads at the same time) at a small size, and
# tests/bench.sh's generated perf script text, decoded as the bench decodes them.
bench_cases() {
	local d=$work/bench T=$root/$SNAP_BUILD/tests/ptsynth
	mkdir -p "$d"
	if [ ! -f "$d/cyc.data" ]; then
		(
			cd "$d" && cp "$root/$SNAP_BUILD/tests/progs/static_calls" . &&
				env -i taskset -c 0 "$T/sstep" -q -o prog -- ./static_calls &&
				"$T/insnmap" prog &&
				"$root/$SNAP_BUILD/tests/bench/ptrepeat" -b prog.insn prog.steps bal.steps \
					"$SNAP_DUMPCMP_REPEAT" 8 &&
				cp prog.maps bal.maps && cp prog.insn bal.insn &&
				"$T/mkptdata" -p bal -o tsc.data -r && "$T/mkptdata" -p bal -o cyc.data -r -Y &&
				"$root/$SNAP_BUILD/tests/bench/ptrepeat" -b prog.insn -i 2000 prog.steps \
					bal.steps "$SNAP_DUMPCMP_REPEAT" 8 &&
				"$T/mkptdata" -p bal -o ovl.data -r &&
				rm -f bal.steps
		) >"$d/make.log" 2>&1 || { echo "bench: could not make the recordings: $(tail -2 "$d/make.log")"; }
		awk -v N=20000 -f "$root/tests/bench/gen_branches.awk" >"$d/branches.txt"
		awk -v N=3000 -f "$root/tests/bench/gen_samples.awk" >"$d/samples.txt"
		awk -v N=3000 -v SW=1 -f "$root/tests/bench/gen_samples.awk" >"$d/switches.txt"
	fi
	local s=(env DUMPCMP_CASES="$cases" DUMPCMP_SUITE=bench DUMPCMP_TMP="$tmpd"
		DUMPCMP_BIN="$bin/snaptrace" "$tree/snaptrace" decode -q)
	for f in tsc cyc ovl; do
		[ -f "$d/$f.data" ] || continue
		"${s[@]}" -decoder perf "$d/$f.data" -o "$d/p.fxt"
		"${s[@]}" -decoder ipt -j 1 "$d/$f.data" -o "$d/i1.fxt"
		"${s[@]}" -decoder ipt -j 2 "$d/$f.data" -o "$d/i2.fxt.gz"
	done
	for f in branches samples switches; do
		"${s[@]}" -o "$d/t.fxt" "$d/$f.txt"
	done
}

install "$new"
make_tree
t0=$SECONDS
if [ ! -d "$cases" ]; then
	rm -rf "$cases.part" # an interrupted collection's (in a WORKDIR kept)
	mkdir -p "$cases.part"
	cases=$cases.part
	for s in $SNAP_DUMPCMP_SUITES; do
		echo "dumpcmp: collecting $s's decodes ($(date -u +%T))" >&2
		case $s in
		bench) bench_cases >"$work/bench.log" 2>&1 ;;
		*) run_suite "$s" ;;
		esac
	done
	mv "$cases" "$work/cases" && cases=$work/cases
	echo "dumpcmp: collected $(ls "$cases" | wc -l) decodes in $((SECONDS - t0)) s" >&2
fi

# ---- replaying ----
# load CASE: sets argv (without "decode"), envs, cwd, out (the -o file) of a case.
load() {
	mapfile -d '' argv <"$1/argv"
	argv=("${argv[@]:1}")
	mapfile -d '' envs <"$1/env"
	cwd=$(cat "$1/cwd")
	out=$cwd/trace.fxt.gz
	local i
	for ((i = 0; i < ${#argv[@]}; i++)); do
		case ${argv[i]} in
		-o | -output) out=${argv[i + 1]:-} ;;
		-o=* | -output=*) out=${argv[i]#*=} ;;
		esac
	done
	case $out in /*) ;; *) out=$cwd/$out ;; esac
}

# restore CASE: the suite's temporary directories as they were at that decode.
restore() {
	local s
	for s in "$1"/snap/*; do
		rm -rf "${tmpd:?}/${s##*/}"
		cp -al "$s" "$tmpd/"
	done
	# a fresh copy of an old output: a decode that writes in place must not write the copy
	[ -f "$out" ] && cp "$out" "$out.dumpcmp" && mv "$out.dumpcmp" "$out"
	return 0
}

# decode_one CASE RESULT [EXTRA-ARGS...]: decodes it with $bin/snaptrace; RESULT gets exit
# status, stdout, stderr and OLD's dump of the output.
decode_one() {
	local c=$1 res=$2 rc
	shift 2
	restore "$c"
	rm -f "$out.was"
	(cd "$cwd" && env -i "${envs[@]}" timeout 300 "$bin/snaptrace" decode "${argv[@]}" "$@") \
		>"$res.stdout" 2>"$res.stderr" </dev/null
	rc=$?
	{
		echo "exit=$rc"
		sed 's/^/stdout: /' "$res.stdout"
		# snaptrace's lines in their order, then those of perf (as a child it writes to the
		# same stderr: where its lines fall among snaptrace's varies from run to run)
		grep '^snaptrace: ' "$res.stderr" | sed 's/^/stderr: /'
		grep -v '^snaptrace: ' "$res.stderr" | sed 's/^/stderr (perf): /'
		[ -e "$out" ] && "$work/old/snaptrace" dump "$out" 2>&1
	} | sed -e "s|$work|WORKDIR|g" -e 's/used [0-9.]* s CPU/used N s CPU/' >"$res"
	rm -f "$res.stdout" "$res.stderr"
}

# describe CASE: "SUITE.N: decode ARGS" with paths shortened.
describe() {
	echo "${1##*/}: decode ${argv[*]}" | sed -e "s|$tmpd/[^/ ]*/|TMP/|g" -e "s|$work/|WORKDIR/|g" |
		cut -c1-200
}

mkdir -p "$work/old"
cp "$old" "$work/old/snaptrace" # the one dump that reads every output
same=0 differ=0 skipped=0 jonly=0
t1=$SECONDS
if [ $jmode = 0 ]; then
	rm -rf "$work/res"
	mkdir -p "$work/res/old" "$work/res/new"
	for side in old new; do
		[ $side = old ] && install "$old" || install "$new"
		for c in "$cases"/*; do
			load "$c"
			decode_one "$c" "$work/res/$side/${c##*/}"
		done
	done
	for c in "$cases"/*; do
		n=${c##*/}
		if cmp -s "$work/res/old/$n" "$work/res/new/$n"; then
			same=$((same + 1))
		else
			load "$c"
			echo "DIFFER $(describe "$c"): $(diff "$work/res/old/$n" "$work/res/new/$n" |
				grep '^[<>]' | head -2 | cut -c1-150 | tr '\n' ' ')"
			differ=$((differ + 1))
		fi
	done
else
	# every Intel PT recording once (with the flags of the first decode of it, but
	# for -j, -decoder, -v and -q), as -j 1, -j 2, -j 8, default and -decoder perf.
	install "$new"
	declare -A seen
	rm -rf "$work/jres"
	mkdir -p "$work/jres"
	for c in "$cases"/*; do
		load "$c"
		restore "$c" # (the suite's files exist from here on)
		a=() inputs=()
		for ((i = 0; i < ${#argv[@]}; i++)); do
			case ${argv[i]} in
			-j | -jobs | -decoder | -o | -output) i=$((i + 1)) ;;
			-j=* | -jobs=* | -decoder=* | -o=* | -output=* | -v | -q) ;;
			*)
				a+=("${argv[i]}")
				[ -e "${argv[i]}" ] || [ -e "$cwd/${argv[i]}" ] && inputs+=("${argv[i]}")
				;;
			esac
		done
		[ ${#inputs[@]} -gt 0 ] || continue
		key="${a[*]} $(tr '\0' '\n' <"$c/env" | grep -E '^(SNAPTRACE_|HOME=)' | sort | tr '\n' ' ')"
		[ -n "${seen[$key]:-}" ] && continue
		seen[$key]=1
		f=${inputs[0]}
		case $f in /*) ;; *) f=$cwd/$f ;; esac
		argv=("${a[@]}" -o "$work/jres/out.fxt")
		out=$work/jres/out.fxt
		mapfile -t envs < <(printf '%s\n' "${envs[@]}" | grep -v '^SNAPTRACE_DECODER=')
		r=$work/jres/${c##*/}
		# (-v: whether snaptrace takes it for an Intel PT recording)
		decode_one "$c" "$r.j1" -v -j 1
		grep -q '^stderr: snaptrace: .*AUX area trace (Intel PT)' "$r.j1" || { rm -f "$r.j1"; argv=("${a[@]}"); continue; }
		bad=
		variants="j2 j8 default perf"
		# damaged recordings: perf's resynchronisation and ptdec's differ there (tests/ptsynth:
		# robust), so only -j is compared
		case ${f##*/} in flip*.data | trunc-*.data) variants="j2 j8 default" ;; esac
		for v in $variants; do
			case $v in
			j*) decode_one "$c" "$r.$v" -j "${v#j}" ;;
			default) decode_one "$c" "$r.$v" ;;
			perf) decode_one "$c" "$r.$v" -decoder perf ;;
			esac
			# the dump (messages differ between decoders by design)
			cmp -s <(grep -v '^std\(out\|err\)' "$r.j1") <(grep -v '^std\(out\|err\)' "$r.$v") ||
				bad="$bad $v"
		done
		argv=("${a[@]}")
		if [ -n "$bad" ]; then
			echo "DIFFER $(describe "$c"): -j 1 vs$bad: $(diff <(grep -v '^std' "$r.j1") \
				<(grep -v '^std' "$r.${bad##* }") | grep '^[<>]' | head -2 | cut -c1-150 | tr '\n' ' ')"
			differ=$((differ + 1))
		else
			same=$((same + 1))
		fi
		[ "$variants" = "j2 j8 default perf" ] || jonly=$((jonly + 1))
	done
fi
for s in $SNAP_DUMPCMP_SUITES; do
	got=("$cases/$s".*)
	[ ${#got[@]} -gt 0 ] && continue
	echo "SKIP $s: no decode collected (see $work/$s.log)"
	skipped=$((skipped + 1))
done
echo "dumpcmp: replayed in $((SECONDS - t1)) s" >&2
[ $jonly = 0 ] || echo "dumpcmp: $jonly damaged recordings compared for -j only, not against -decoder perf"
echo "dumpcmp: $same identical, $differ differ, $skipped skipped"
[ $differ = 0 ]
