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

# The runs same compares: -j 1, and -j 2 and -j 8 with the consumer thread forced on
# (c1) and off (c0: the reading thread feeds the builder, as it does where the decode's
# threads leave the consumer no core; SNAPTRACE_CONSUMER, docs/design.md). Every -j > 1
# writes through the sink's writer thread.
tags="j1 j2c1 j2c0 j8c1 j8c0"

# same NAME INPUT ARGS...: decodes INPUT as each of $tags into $tmp/NAME.TAG.fxt; the exit
# status, stderr (the output's name made common) and dump (when written) must be the
# same. Leaves -j 1's in $tmp/NAME.j1.{rc,err,dump}. Returns 1 (and says why) if not.
same() {
	local name=$1 in=$2 t j c rc
	shift 2
	for t in $tags; do
		j=${t#j}
		j=${j%c*}
		c=1
		case $t in *c0) c=0 ;; esac
		rc=0
		SNAPTRACE_CONSUMER=$c timeout -s KILL 120 "$snap" decode -j $j "$in" -o "$tmp/$name.$t.fxt" "$@" \
			>/dev/null 2>"$tmp/$name.$t.err" </dev/null || rc=$?
		echo $rc >"$tmp/$name.$t.rc"
		sed -i "s|$name\.$t\.fxt|$name.fxt|g" "$tmp/$name.$t.err"
		if [ -f "$tmp/$name.$t.fxt" ]; then
			"$snap" dump "$tmp/$name.$t.fxt" >"$tmp/$name.$t.dump" 2>&1
		else
			echo "(no file)" >"$tmp/$name.$t.dump"
		fi
		if [ $t != j1 ]; then
			for x in rc err dump; do
				if ! cmp -s "$tmp/$name.j1.$x" "$tmp/$name.$t.$x"; then
					failed "$name" "$t's $x differs from -j 1's: $(diff "$tmp/$name.j1.$x" "$tmp/$name.$t.$x" | head -3 | tr '\n' ' ')"
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
	local t
	if [ "$(id -u)" -ne 0 ] || ! mknod "$tmp/full.j1.fxt" c 1 7 2>/dev/null; then
		echo "SKIP pipeline_full_disk: needs root (mknod)"
		return
	fi
	for t in $tags; do
		[ $t = j1 ] || mknod "$tmp/full.$t.fxt" c 1 7 || return
	done
	awk 'BEGIN { for (i = 0; i < 40000; i++) printf "prog 123/123 1.%09d:     250000 cpu-clock:\n\t401000 f%d+0x0 (/t)\n\n", i, i }' >"$tmp/many.txt"
	# (a character device: no dump)
	same full "$tmp/many.txt" || return
	if [ "$(cat "$tmp/full.j1.rc")" != 1 ] || ! grep -q "cannot write $tmp/full.fxt: No space left" "$tmp/full.j1.err" ||
		[ "$(grep -c . "$tmp/full.j1.err")" != 1 ] || [ ! -c "$tmp/full.j2c1.fxt" ] || [ ! -c "$tmp/full.j2c0.fxt" ]; then
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
# signal reaches the reading thread (the consumer and the sink's writer thread block it),
# the decode stops at once, says so once and writes nothing; -j 2 with the consumer (c1)
# and without (c0). The signal is sent once the decode sleeps in its read.
sigint_fifo() {
	local t j pid wpid rc n
	for t in j1 c1 c0; do
		j=2
		[ $t = j1 ] && j=1
		SNAPTRACE_CONSUMER=${t#c} fifo_decode $j int
		kill -INT $pid
		for ((n = 0; n < 100; n++)); do
			kill -0 $pid 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 $pid 2>/dev/null; then
			kill -KILL $pid
			failed sigint_fifo "$t: still running 10 s after SIGINT"
		fi
		rc=0
		wait $pid || rc=$?
		kill $wpid 2>/dev/null
		wait $wpid 2>/dev/null
		if [ $rc -eq 0 ] || [ "$(grep -c . "$tmp/int.err")" != 1 ] ||
			! grep -q "interrupted: nothing written" "$tmp/int.err" || [ -e "$tmp/int.fxt" ]; then
			failed sigint_fifo "$t: rc $rc, $(head -2 "$tmp/int.err")"
			return
		fi
	done
	pass sigint_fifo
}

# With -j > 1 the decode's threads are SCHED_BATCH while it runs (a thread woken by
# another does not preempt it: docs/design.md, "The consumer thread"), with -j 1 the
# policy stays SCHED_OTHER. Looked at while the decode waits for input (a FIFO that a
# writer keeps open), then the input ends and the decode writes its trace. -j 1 runs one
# thread; -j 2 the reading thread, the sink's writer thread and (c1) the consumer.
sched_batch() {
	local t j pid wpid rc want pols
	for t in j1 c1 c0; do
		j=2
		[ $t = j1 ] && j=1
		SNAPTRACE_CONSUMER=${t#c} fifo_decode $j batch
		# field 41 of a task's stat: its policy (0 SCHED_OTHER, 3 SCHED_BATCH)
		pols=$(for t2 in /proc/$pid/task/*; do sed 's/.*) //' "$t2/stat" | awk '{ print $39 }'; done | sort | uniq -c | tr -s ' ' | tr '\n' ';')
		kill $wpid 2>/dev/null
		wait $wpid 2>/dev/null
		rc=0
		wait $pid || rc=$?
		case $t in j1) want=" 1 0;" ;; c1) want=" 3 3;" ;; *) want=" 2 3;" ;; esac
		if [ $rc -ne 0 ] || [ ! -s "$tmp/batch.fxt" ] || [ "$pols" != "$want" ]; then
			failed sched_batch "$t: rc $rc, policies (count policy): $pols, not $want, $(head -2 "$tmp/batch.err")"
			return
		fi
	done
	pass sched_batch
}

# Without SNAPTRACE_CONSUMER the consumer thread starts only where the decode's busy
# threads (here the reading thread and the consumer: a text input, a plain output) have
# the CPUs the process may use: not on one CPU (taskset), on two (when there are).
consumer_cores() {
	local cpus line
	for cpus in 0 0,1; do
		[ $cpus = 0,1 ] && [ "$(nproc --all)" -lt 2 ] && break
		taskset -c $cpus "$snap" decode -v -v -j 2 "$tmp/deep.txt" -o "$tmp/cores.fxt" >/dev/null 2>"$tmp/cores.err" </dev/null
		line=$(grep "busy threads with a consumer thread" "$tmp/cores.err")
		case $cpus,$line in
		0,*"2 busy threads with a consumer thread on 1 CPUs: none"*) ;;
		0,1,*"2 busy threads with a consumer thread on 2 CPUs: a consumer thread"*) ;;
		*)
			failed consumer_cores "taskset -c $cpus: '$line'"
			return
			;;
		esac
		if ! cmp -s <("$snap" dump "$tmp/cores.fxt") "$tmp/deep.j1.dump"; then
			failed consumer_cores "taskset -c $cpus: another trace than -j 1's"
			return
		fi
	done
	pass consumer_cores
}

# -o FIFO whose reader goes away after 1000 bytes: the write fails with EPIPE (on the
# sink's writer thread with -j > 1) and SIGPIPE ends the decode, for every -j (the shell's
# 141); where SIGPIPE is ignored (trap '' PIPE), the error is reported once, exit 1.
fifo_reader_gone() {
	local t n
	[ -f "$tmp/many.txt" ] || awk 'BEGIN { for (i = 0; i < 40000; i++) printf "prog 123/123 1.%09d:     250000 cpu-clock:\n\t401000 f%d+0x0 (/t)\n\n", i, i }' >"$tmp/many.txt"
	for n in gone ign; do
		for t in $tags; do
			mkfifo "$tmp/$n.$t.fxt" || return
			head -c 1000 <"$tmp/$n.$t.fxt" >/dev/null &
		done
	done
	same gone "$tmp/many.txt" || return
	if ! (
		trap '' PIPE
		same ign "$tmp/many.txt"
	); then
		fail=1
		return
	fi
	wait
	if [ "$(cat "$tmp/gone.j1.rc")" != 141 ] || [ -s "$tmp/gone.j1.err" ] ||
		[ "$(cat "$tmp/ign.j1.rc")" != 1 ] || ! grep -q "cannot write $tmp/ign.fxt: Broken pipe" "$tmp/ign.j1.err" ||
		[ "$(grep -c . "$tmp/ign.j1.err")" != 1 ]; then
		failed fifo_reader_gone "-j 1: rc $(cat "$tmp/gone.j1.rc") / $(cat "$tmp/ign.j1.rc"), $(head -2 "$tmp/gone.j1.err" "$tmp/ign.j1.err")"
		return
	fi
	pass fifo_reader_gone
}

strict_scope_late
deep_samples
full_disk
sigint_fifo
sched_batch
consumer_cores
fifo_reader_gone
exit $fail
