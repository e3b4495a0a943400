# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The shared part of the end-to-end suite, sourced by tests/e2e/run.sh before the
# test files in tests/e2e/cases/: paths ($snap, $nest, $progs), the private $tmp
# (removed at exit with every background process in bgpids), pass/failed/skip,
# the probes every test reads ($noperf, $root, $paranoid) and the helpers that
# run snaptrace and look at what it recorded.

: "${SNAP_BUILD:=build/default}"
snap=$PWD/snaptrace
nest=$PWD/$SNAP_BUILD/tests/e2e/nest
progs=$PWD/$SNAP_BUILD/tests/e2e
tmp=$(mktemp -d /tmp/snaptrace-e2e.XXXXXX)
fail=0
bgpids=()
nbin=""

cleanup() {
	for p in "${bgpids[@]}"; do kill -9 "$p" 2>/dev/null; done
	"${snap%/*}/tests/perfetto/keep.sh" e2e "$tmp" # traces for tests/perfetto
	rm -rf "$tmp" ${nbin:+"$nbin"}
}
trap cleanup EXIT

pass() { echo "PASS e2e_$1"; }
failed() {
	echo "FAIL e2e_$1: $2"
	fail=1
}
skip() { echo "SKIP e2e_$1: $2"; }

if [ ! -x "$snap" ] || [ ! -x "$nest" ]; then
	echo "FAIL e2e_setup: $snap or $nest missing (run make test-bins)"
	exit 1
fi
# snaptrace makes its working directories in $TMPDIR: a private one, so other
# suites running at the same time cannot confuse the leftover checks.
export TMPDIR=$tmp/tmpdir
mkdir -p "$TMPDIR"

noperf=""
if ! command -v perf >/dev/null; then
	noperf="perf is not on PATH"
elif ! perf record -o "$tmp/probe.data" --no-bpf-event -e cpu-clock -F 1000 -- true \
	>/dev/null 2>&1; then
	noperf="perf record -e cpu-clock does not work for $(id -un)"
fi
root=0
[ "$(id -u)" -eq 0 ] && root=1
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)

# snap NAME ARGS...: runs snaptrace (a cap of $snap_cap s, default 30), output in
# $tmp/NAME.{out,err}, rc in $rc.
snap() {
	local name=$1
	shift
	timeout -s KILL "${snap_cap:-30}" "$snap" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
}

# chain_ratio DATA LEAF CALLERS...: percentage of samples whose stack has LEAF
# followed by CALLERS (innermost first) as a subsequence; prints "pct total".
chain_ratio() {
	local data=$1
	shift
	perf script -i "$data" -F tid,ip,sym 2>/dev/null | awk -v want="$*" '
		BEGIN { n = split(want, w, " ") }
		function done_rec() {
			if (nf == 0) return
			hasleaf = 0
			for (i = 1; i <= nf; i++) if (f[i] == w[1]) hasleaf = 1
			if (!hasleaf) { nf = 0; return }
			total++
			k = 1
			for (i = 1; i <= nf && k <= n; i++) if (f[i] == w[k]) k++
			if (k > n) good++
			nf = 0
		}
		/^[ \t]*$/ { done_rec(); next }
		/^\t/ || /^ +[0-9a-f]+ / { sub(/^[ \t]*[0-9a-f]+ /, ""); sub(/\+0x.*/, ""); f[++nf] = $1; next }
		{ done_rec() }
		END { done_rec(); printf "%d %d\n", total ? 100 * good / total : 0, total }'
}

# dump_nesting FXT CALLERS... LEAF: like chain_ratio on the decoded trace: each
# slice of LEAF must sit inside CALLERS (outermost first); prints "pct total", pct
# weighted by the slices' durations (one call is one slice however many samples it
# spans, docs/sampling.md, so a count would weigh a one-sample glitch like a long call).
dump_nesting() {
	local fxt=$1
	shift
	# FXT need not be time-ordered (deferred start events come last): sort by
	# timestamp, stably, before replaying the begins and ends.
	"$snap" dump "$fxt" 2>/dev/null | grep -E '^(begin|end) ' |
		awk '{ t = $2; sub(/^ts=/, "", t); print t "\t" $0 }' | sort -s -n -k1,1 | cut -f2- |
		awk -v want="$*" '
		BEGIN { n = split(want, w, " ") }
		{ ts = $2; sub(/^ts=/, "", ts)
		  match($0, /tid=[0-9]+/); t = substr($0, RSTART + 4, RLENGTH - 4) }
		/^begin / {
			match($0, /name="[^"]*"/); nm = substr($0, RSTART + 6, RLENGTH - 7)
			d[t]++; st[t, d[t]] = nm; ok[t, d[t]] = 0; b[t, d[t]] = ts
			if (nm == w[n]) {
				total++; k = 1
				for (i = 1; i < d[t] && k < n; i++) if (st[t, i] == w[k]) k++
				ok[t, d[t]] = k == n ? 1 : -1
			}
			next
		}
		/^end / {
			if (!d[t]) next
			if (ok[t, d[t]]) { dur = ts - b[t, d[t]] + 1; all += dur; if (ok[t, d[t]] > 0) good += dur }
			d[t]--
		}
		END { printf "%d %d\n", all ? 100 * good / all : 0, total }'
}

# slices FXT: one line per slice of the decoded trace, "TID DUR_MS CHAIN" with
# CHAIN the names from the outermost frame to the slice ("main>outer>nap").
slices() {
	"$snap" dump "$1" 2>/dev/null | grep -E '^(begin|end) ' |
		awk '{ t = $2; sub(/^ts=/, "", t); print t "\t" $0 }' | sort -s -n -k1,1 | cut -f2- |
		awk '
		{
			t = $2; sub(/^ts=/, "", t)
			match($0, /tid=[0-9]+/); tid = substr($0, RSTART + 4, RLENGTH - 4)
		}
		/^begin / {
			match($0, /name="[^"]*"/); nm = substr($0, RSTART + 6, RLENGTH - 7)
			d[tid]++; st[tid, d[tid]] = nm; bt[tid, d[tid]] = t
			next
		}
		/^end / {
			if (!d[tid]) next
			c = st[tid, 1]
			for (i = 2; i <= d[tid]; i++) c = c ">" st[tid, i]
			printf "%s %d %s\n", tid, (t - bt[tid, d[tid]]) / 1000000, c
			d[tid]--
		}'
}

last_sample_ns() {
	perf script -i "$1" -F time -G --ns 2>/dev/null | awk 'NF { t = $1 } END { sub(/:$/, "", t); split(t, a, "."); printf "%s%s\n", a[1], a[2] }'
}

start_target() { # start_target ARGS...: $tpid is the running nest
	rm -f "$tmp/target.out"
	"$nest" "$@" >"$tmp/target.out" 2>&1 &
	tpid=$!
	bgpids+=("$tpid")
	for _ in $(seq 500); do
		grep -q ready "$tmp/target.out" 2>/dev/null && return 0
		sleep 0.02
	done
	return 1
}

# cpu_wait PID MS: returns once process PID has run MS more milliseconds on a CPU
# (utime + stime of /proc/PID/stat, all its threads) or ended (a zombie too), or
# after 60 s (returns 1 then). A test that needs N samples waits for the CPU time
# they take, not for wall time: a loaded machine makes it slower, never short of them.
cpu_ticks() { awk '{ sub(/^.*\) /, "") } $1 != "Z" { print $12 + $13 }' "/proc/$1/stat" 2>/dev/null; }
cpu_wait() {
	local pid=$1 ms=$2 hz t0 t
	hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
	t0=$(cpu_ticks "$pid")
	[ -n "$t0" ] || return 1
	for _ in $(seq 3000); do
		t=$(cpu_ticks "$pid")
		[ -n "$t" ] || return 0 # it ended
		[ $(((t - t0) * 1000)) -ge $((ms * hz)) ] && return 0
		sleep 0.02
	done
	return 1
}

# hit_ns ERRFILE: the trigger hit time printed by snaptrace, in ns.
hit_ns() { sed -n 's/.*hit by tid [0-9]* at \([0-9]*\)\.\([0-9]*\).*/\1\2/p' "$1" | head -1; }

# both_paths NAME ARGS...: runs snaptrace twice, through the perf plugin and
# with -no-dlfilter (output $tmp/NAME.fxt.gz and $tmp/NAME-text.fxt.gz,
# working directories $tmp/w_NAME and $tmp/w_NAME-text); rc of each in rc1, rc2.
both_paths() {
	local name=$1
	shift
	snap "$name" run -working-directory "$tmp/w_$name" -o "$tmp/$name.fxt.gz" "$@"
	rc1=$rc
	snap "$name-text" run -no-dlfilter -working-directory "$tmp/w_$name-text" \
		-o "$tmp/$name-text.fxt.gz" "$@"
	rc2=$rc
}

# nobody_copy: the tests that run snaptrace as user nobody must work from a
# checkout other users cannot enter (a clone in a 0700 home directory): this
# copies snaptrace, its perf plugin and the traced program to $nbin, a
# directory every user can read (mode 755, removed at exit), once, and sets
# $nsnap and $nnest to the copies and $nhome to a directory nobody may write.
# Returns 1 with the reason in $nobody_why when that cannot be done.
nobody_copy() {
	local as="setpriv --reuid=65534 --regid=65534 --clear-groups" f
	nobody_why=""
	if [ -z "$nbin" ]; then
		nbin=$(mktemp -d /tmp/snaptrace-e2e-nobody.XXXXXX) || {
			nobody_why="mktemp -d in /tmp failed"
			return 1
		}
		chmod 755 "$nbin"
		mkdir -m 777 "$nbin/home"
		for f in "$snap" "$PWD/snaptrace-dlfilter.so" "$nest"; do
			[ -f "$f" ] || continue
			cp "$f" "$nbin/" || {
				nobody_why="cannot copy $f to $nbin"
				return 1
			}
		done
	fi
	nsnap=$nbin/snaptrace
	nnest=$nbin/nest
	nhome=$nbin/home
	if ! $as test -x "$nsnap" -a -x "$nnest" -a -w "$nhome"; then
		nobody_why="nobody cannot execute $nsnap (permissions of $nbin)"
		return 1
	fi
}
