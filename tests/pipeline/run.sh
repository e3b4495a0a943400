#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The decode's consumer thread (docs/design.md, "The consumer thread"): with -j > 1 the
# stack builder and the FXT writer run on a thread of their own, fed the same events in
# batches; these cases are the ones the differential dumps (tests/dumpcmp.sh -j) do not
# reach: errors that stop both threads mid-stream, the frames a batch must own, Ctrl-C.
# Each decode runs with -j 1 (one thread) and -j 2 / -j 8 (the consumer): exit status,
# stderr and the dump must agree. Prints PASS/FAIL/SKIP lines.
set -u
cd "$(dirname "$0")/../.." || exit 1
snap=${SNAP_BIN:-$PWD/snaptrace}
tmp=$(mktemp -d /tmp/snaptrace-pipeline.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
pass() { echo "PASS pipeline_$1"; }
failed() {
	echo "FAIL pipeline_$1: $2"
	fail=1
}
if [ ! -x "$snap" ]; then
	echo "FAIL pipeline_setup: $snap missing (run make)"
	exit 1
fi

# same NAME INPUT ARGS...: decodes INPUT with -j 1, 2 and 8 into $tmp/NAME.jJ.fxt; the
# exit status, stderr (the output's name made common) and dump (when written) must be the
# same. Leaves -j 1's in $tmp/NAME.j1.{rc,err,dump}. Returns 1 (and says why) if not.
same() {
	local name=$1 in=$2 j rc
	shift 2
	for j in 1 2 8; do
		rc=0
		timeout -s KILL 120 "$snap" decode -j $j "$in" -o "$tmp/$name.j$j.fxt" "$@" \
			>/dev/null 2>"$tmp/$name.j$j.err" </dev/null || rc=$?
		echo $rc >"$tmp/$name.j$j.rc"
		sed -i "s|$name\.j$j\.fxt|$name.fxt|g" "$tmp/$name.j$j.err"
		if [ -f "$tmp/$name.j$j.fxt" ]; then
			"$snap" dump "$tmp/$name.j$j.fxt" >"$tmp/$name.j$j.dump" 2>&1
		else
			echo "(no file)" >"$tmp/$name.j$j.dump"
		fi
		if [ $j != 1 ]; then
			for x in rc err dump; do
				if ! cmp -s "$tmp/$name.j1.$x" "$tmp/$name.j$j.$x"; then
					failed "$name" "-j $j's $x differs from -j 1's: $(diff "$tmp/$name.j1.$x" "$tmp/$name.j$j.$x" | head -3 | tr '\n' ' ')"
					return 1
				fi
			done
		fi
	done
	return 0
}

# A -strict-scope violation far into the input: the consumer finds it while the reading
# thread has read batches ahead; both stop, the first violating event is named once, and
# nothing is written.
strict_scope_late() {
	awk 'BEGIN {
		l = " 4242/4242     %d.%09d:          1          branches:u:   %-8s %16x main+0x%x (/usr/bin/demo) => %16x f+0x0 (/usr/bin/demo)\n"
		for (i = 0; i < 60000; i++)
			printf l, 11, i * 10, (i % 2) ? "return" : "call", 4198400 + 16, 16, (i % 2) ? 4198400 : 4202496
		printf " 4242/4242     12.000000000:          1          branches:uk:  syscall          7f0000030010 write+0x10 (/usr/lib/libc.so.6) => ffffffff81a00000 entry_SYSCALL_64+0x0 ([kernel.kallsyms])\n"
		for (i = 0; i < 60000; i++)
			printf l, 13, i * 10, (i % 2) ? "return" : "call", 4198400 + 16, 16, (i % 2) ? 4198400 : 4202496
	}' >"$tmp/scope.txt"
	same scope "$tmp/scope.txt" -strict-scope || return
	if [ "$(cat "$tmp/scope.j1.rc")" != 1 ] || ! grep -q "event outside the trace scope (u) with -strict-scope: syscall 0x7f0000030010 write .* at 12.000000000" "$tmp/scope.j1.err" ||
		[ "$(grep -c . "$tmp/scope.j1.err")" != 1 ] || [ "$(cat "$tmp/scope.j1.dump")" != "(no file)" ]; then
		failed strict_scope_late "-j 1: rc $(cat "$tmp/scope.j1.rc"), $(head -2 "$tmp/scope.j1.err")"
		return
	fi
	pass strict_scope_late
}

# Samples of 1 to 6000 frames (more than a batch's first frame arena of 4096, and many
# batches' worth): the batches own copies of the frames the parser reuses.
deep_samples() {
	awk 'BEGIN {
		for (s = 0; s < 3000; s++) {
			n = (s % 97 == 0) ? 6000 : 1 + (s * 7) % 40
			printf "prog 123/%d %d.%09d:     250000 cpu-clock:\n", 123 + s % 3, 1, s * 1000
			for (i = 0; i < n; i++) printf "\t%x f%d+0x0 (/t)\n", 4096 + ((i + s) % 50), (i + s) % 50
			printf "\n"
		}
	}' >"$tmp/deep.txt"
	same deep "$tmp/deep.txt" || return
	if [ "$(cat "$tmp/deep.j1.rc")" != 0 ] || ! grep -q "f3" "$tmp/deep.j1.dump"; then
		failed deep_samples "-j 1: rc $(cat "$tmp/deep.j1.rc"), $(head -2 "$tmp/deep.j1.err")"
		return
	fi
	pass deep_samples
}

# A full disk (as root: a private /dev/full) found by the consumer's writes: one message
# naming the output, exit 1, the device left alone.
full_disk() {
	if [ "$(id -u)" -ne 0 ] || ! mknod "$tmp/full.j1.fxt" c 1 7 2>/dev/null; then
		echo "SKIP pipeline_full_disk: needs root (mknod)"
		return
	fi
	mknod "$tmp/full.j2.fxt" c 1 7 && mknod "$tmp/full.j8.fxt" c 1 7 || return
	awk 'BEGIN { for (i = 0; i < 40000; i++) printf "prog 123/123 1.%09d:     250000 cpu-clock:\n\t401000 f%d+0x0 (/t)\n\n", i, i }' >"$tmp/many.txt"
	# (a character device: no dump)
	same full "$tmp/many.txt" || return
	if [ "$(cat "$tmp/full.j1.rc")" != 1 ] || ! grep -q "cannot write $tmp/full.fxt: No space left" "$tmp/full.j1.err" ||
		[ "$(grep -c . "$tmp/full.j1.err")" != 1 ] || [ ! -c "$tmp/full.j2.fxt" ]; then
		failed full_disk "-j 1: rc $(cat "$tmp/full.j1.rc"), $(head -2 "$tmp/full.j1.err")"
		return
	fi
	pass full_disk
}

# fifo_decode J NAME: `decode -j J` of a FIFO into $tmp/NAME.fxt (stderr $tmp/NAME.err),
# pid in $pid; the writer (pid in $wpid) writes some samples, then holds the FIFO open (no
# end of input). Returns once (at most 60 s) the decode sleeps in the FIFO's read after
# the writer wrote all (it is sleep, exec'd): every sample read, the decode in its loop.
fifo_decode() {
	local n
	rm -f "$tmp/fifo" "$tmp/$2.fxt"
	mkfifo "$tmp/fifo"
	(
		head -c 200000 "$tmp/deep.txt"
		exec sleep 300
	) >"$tmp/fifo" &
	wpid=$!
	"$snap" decode -j "$1" "$tmp/fifo" -o "$tmp/$2.fxt" >/dev/null 2>"$tmp/$2.err" &
	pid=$!
	for ((n = 0; n < 600; n++)); do
		[ "$(cat /proc/$wpid/comm 2>/dev/null)" = sleep ] &&
			case $(cat /proc/$pid/wchan 2>/dev/null) in *pipe_read*) true ;; *) false ;; esac && break
		sleep 0.1
	done
}

# Ctrl-C while the reading thread waits for input (a FIFO that a writer keeps open): the
# signal reaches the reading thread (the consumer blocks it), the decode stops at once,
# says so once and writes nothing. The signal is sent once the decode sleeps in its read.
sigint_fifo() {
	local j pid wpid rc n
	for j in 1 2; do
		fifo_decode $j int
		kill -INT $pid
		for ((n = 0; n < 100; n++)); do
			kill -0 $pid 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 $pid 2>/dev/null; then
			kill -KILL $pid
			failed sigint_fifo "-j $j: still running 10 s after SIGINT"
		fi
		rc=0
		wait $pid || rc=$?
		kill $wpid 2>/dev/null
		wait $wpid 2>/dev/null
		if [ $rc -eq 0 ] || [ "$(grep -c . "$tmp/int.err")" != 1 ] ||
			! grep -q "interrupted: nothing written" "$tmp/int.err" || [ -e "$tmp/int.fxt" ]; then
			failed sigint_fifo "-j $j: rc $rc, $(head -2 "$tmp/int.err")"
			return
		fi
	done
	pass sigint_fifo
}

# With -j > 1 the decode's threads are SCHED_BATCH while it runs (a thread woken by
# another does not preempt it: docs/design.md, "The consumer thread"), with -j 1 the
# policy stays SCHED_OTHER. Looked at while the decode waits for input (a FIFO that a
# writer keeps open), then the input ends and the decode writes its trace.
sched_batch() {
	local j pid wpid rc n want pols
	for j in 1 2; do
		fifo_decode $j batch
		# field 41 of a task's stat: its policy (0 SCHED_OTHER, 3 SCHED_BATCH)
		pols=$(for t in /proc/$pid/task/*; do sed 's/.*) //' "$t/stat" | awk '{ print $39 }'; done | sort | uniq -c | tr -s ' ' | tr '\n' ';')
		kill $wpid 2>/dev/null
		wait $wpid 2>/dev/null
		rc=0
		wait $pid || rc=$?
		want=0
		[ $j = 2 ] && want=3
		if [ $rc -ne 0 ] || [ ! -s "$tmp/batch.fxt" ] || [ -z "$pols" ] ||
			[ "$(echo "$pols" | tr ';' '\n' | awk 'NF { print $2 }' | sort -u)" != $want ]; then
			failed sched_batch "-j $j: rc $rc, policies (count policy): $pols, $(head -2 "$tmp/batch.err")"
			return
		fi
		[ $j = 2 ] && case $pols in " 2 3;"*) ;; *)
			failed sched_batch "-j 2: not the reading and the consumer thread: $pols"
			return ;;
		esac
	done
	pass sched_batch
}

strict_scope_late
deep_samples
full_disk
sigint_fifo
sched_batch
exit $fail
