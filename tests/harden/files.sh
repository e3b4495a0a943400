# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/harden/run.sh: issue 20's files in directories other users can write,
# working-directory locking, terminal escapes and misleading messages
# (docs/guarantees.md, "Directories other users can write"). The tests that need another
# user plant files as nobody (setpriv) and skip when not root.

as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
nobody_ok=0
if [ $root -eq 1 ] && command -v setpriv >/dev/null && as_nobody true 2>/dev/null; then
	nobody_ok=1
fi

# A sticky world-writable directory (as /tmp) under a $tmp nobody can enter.
sticky_dir() {
	chmod 711 "$tmp"
	mkdir -p "$1"
	chmod 1777 "$1"
}

# Issue 20 item 1: -o through a link nobody planted in a sticky world-writable directory
# neither overwrites the root-only file it names nor creates a root-owned file where a
# dangling one points; the default trace.fxt.gz there neither; root's own link there is
# still followed.
t_planted_output_link() {
	local d=$tmp/plant s in=tests/golden/pt/call_return.txt
	if [ $nobody_ok -eq 0 ]; then
		skip planted_output_link "needs root and setpriv (plants links as nobody)"
		return
	fi
	mkdir -p "$d"
	chmod 755 "$d"
	sticky_dir "$d/st"
	echo SECRET >"$d/secret"
	chmod 600 "$d/secret"
	as_nobody ln -s "$d/secret" "$d/st/t.fxt"
	as_nobody ln -s "$d/created" "$d/st/u.fxt"
	as_nobody ln -s "$d/secret" "$d/st/trace.fxt.gz"
	as_nobody ln -s "$d" "$d/st/dir"
	snap pl1 decode "$in" -o "$d/st/t.fxt"
	if [ $rc -ne 1 ] || [ "$(cat "$d/secret")" != SECRET ] ||
		! grep -q "another user's symbolic link" "$tmp/pl1.err"; then
		failed planted_output_link "-o a planted link: rc $rc, secret now $(head -c 8 "$d/secret" | od -An -c | head -1): $(head -2 "$tmp/pl1.err")"
		return
	fi
	snap pl2 decode "$in" -o "$d/st/u.fxt"
	if [ $rc -ne 1 ] || [ -e "$d/created" ]; then
		failed planted_output_link "-o a planted dangling link: rc $rc, created: $(ls -l "$d/created" 2>&1)"
		return
	fi
	snap pl3 decode "$in" -o "$d/st/dir/v.fxt"
	if [ $rc -ne 1 ] || [ -e "$d/v.fxt" ]; then
		failed planted_output_link "-o through a planted directory link: rc $rc: $(head -2 "$tmp/pl3.err")"
		return
	fi
	(cd "$d/st" && timeout -s KILL 60 "$snap" decode "$OLDPWD/$in" >/dev/null 2>"$tmp/pl4.err" </dev/null)
	rc=$?
	if [ $rc -ne 1 ] || [ "$(cat "$d/secret")" != SECRET ]; then
		failed planted_output_link "default trace.fxt.gz in a sticky directory: rc $rc: $(head -2 "$tmp/pl4.err")"
		return
	fi
	if [ $perf_ok -eq 1 ]; then
		snap pl5 run -sampling -o "$d/st/t.fxt" -- true
		if [ "$(cat "$d/secret")" != SECRET ]; then
			failed planted_output_link "run -o a planted link overwrote the file: rc $rc: $(head -3 "$tmp/pl5.err")"
			return
		fi
	fi
	ln -s "$d/mine.fxt" "$d/st/own.fxt" # root's own link: followed, as before
	snap pl6 decode "$in" -o "$d/st/own.fxt"
	s=$(stat -c %U "$d/mine.fxt" 2>/dev/null)
	if [ $rc -ne 0 ] || [ "$s" != root ] || [ ! -L "$d/st/own.fxt" ]; then
		failed planted_output_link "root's own link: rc $rc, target owner '$s': $(head -2 "$tmp/pl6.err")"
		return
	fi
	pass planted_output_link
}

# Issue 20 item 2: a -working-directory other users can write is refused (nothing in it is
# removed); a FIFO named like a snapshot does not hang decode -working-directory; the hits
# file is created afresh (not written through a link), and not at all without -trigger.
t_workdir_others() {
	local d=$tmp/wdo
	mkdir -p "$d/ww" "$d/ok" "$d/fifo"
	chmod 777 "$d/ww"
	: >"$d/ww/perf.data"
	mkfifo "$d/fifo/perf.data.2026120113000000"
	timeout -s KILL 20 "$snap" decode -working-directory "$d/fifo" -o "$d/f.fxt" >/dev/null 2>"$tmp/wdo1.err" </dev/null
	rc=$?
	if [ $rc -ne 1 ] || ! grep -q "no perf.data file in" "$tmp/wdo1.err"; then
		failed workdir_others "a FIFO snapshot: rc $rc (137: hung): $(head -2 "$tmp/wdo1.err")"
		return
	fi
	need_perf workdir_others "the FIFO case" || return
	snap wdo2 run -sampling -working-directory "$d/ww" -o "$d/x.fxt" -- true
	if [ $rc -eq 0 ] || ! grep -q "can be written by other users" "$tmp/wdo2.err" ||
		[ ! -e "$d/ww/perf.data" ]; then
		failed workdir_others "world-writable: rc $rc: $(head -2 "$tmp/wdo2.err"); left: $(ls "$d/ww")"
		return
	fi
	echo VICTIM >"$d/victim"
	ln -s "$d/victim" "$d/ok/snaptrace-hits.txt" # a stale link under the hits file's name
	snap wdo3 run -sampling -working-directory "$d/ok" -o "$d/y.fxt" -- true
	if [ "$(cat "$d/victim")" != VICTIM ] || [ -e "$d/ok/snaptrace-hits.txt" ]; then
		failed workdir_others "hits file without -trigger: rc $rc, victim $(head -c 20 "$d/victim"), $(ls -l "$d/ok" | tr '\n' ' ')"
		return
	fi
	pass workdir_others
}

# Issue 20 item 6 (and 17): a second run in a working directory another run holds is
# refused with the holder's pid, and deletes nothing of its recording.
t_workdir_lock() {
	local d=$tmp/wdlock pid
	if [ $perf_ok -eq 0 ] || ! command -v flock >/dev/null; then
		skip workdir_lock "perf or flock(1) is not installed"
		return
	fi
	mkdir -p "$d/w"
	chmod 700 "$d/w"
	echo LIVE >"$d/w/perf.data"
	# the first run, as the kernel sees it: an exclusive flock on the directory
	flock -x "$d/w" sleep 60 &
	pid=$!
	for _ in $(seq 100); do grep -q "FLOCK.* $pid " /proc/locks && break; sleep 0.1; done
	snap wl run -sampling -working-directory "$d/w" -o "$d/x.fxt" -- true
	pkill -P "$pid" sleep # flock(1) does not pass a signal on to its command
	wait "$pid" 2>/dev/null
	if [ $rc -eq 0 ] || ! grep -q "used by another snaptrace run (pid $pid" "$tmp/wl.err" ||
		[ "$(cat "$d/w/perf.data" 2>/dev/null)" != LIVE ] || [ -e "$d/x.fxt" ]; then
		failed workdir_lock "rc $rc: $(head -2 "$tmp/wl.err"); perf.data: $(head -c 8 "$d/w/perf.data" 2>&1)"
		return
	fi
	pass workdir_lock
}

# Issue 20 item 5: a traced program's names cannot drive the terminal: no ESC, BEL or C1
# control reaches it through decode -report, report (also -folded), dump -tree or the
# quoted-bad-line warning; plain dump escapes C1 as well.
t_terminal_escapes() {
	local d=$tmp/esc f bad=
	mkdir -p "$d"
	# a program named "\e]0;PWNED\a" with a function "f\e[2J\302\233x" (CSI as U+009B)
	printf '\033]0;PWNED\a 123/123 1.000001000:     250000 cpu-clock:\n\t401000 f\033[2J\302\233x+0x0 (/t)\n\n\033]0;PWNED\a 123/123 1.000002000:     250000 cpu-clock:\n\t401000 main+0x0 (/t)\n\n' >"$d/in.txt"
	printf 'junk\302\233 \233[31m here\n' >>"$d/in.txt"
	f=$d/out.fxt
	snap es1 decode -report "$d/in.txt" -o "$f"
	snap es2 report "$f"
	timeout -s KILL 60 "$snap" dump -tree "$f" >"$tmp/es3.out" 2>&1 </dev/null
	timeout -s KILL 60 "$snap" dump "$f" >"$tmp/es4.out" 2>&1 </dev/null
	snap es5 report -folded - "$f"
	for x in es1.out es1.err es2.out es2.err es3.out es4.out es5.out; do
		# ESC, BEL, the C1 byte 0x9b raw or as UTF-8 U+009B
		if LC_ALL=C grep -q $'[\033\a\233]' "$tmp/$x"; then
			bad="$bad $x"
		fi
	done
	if [ -n "$bad" ] || ! grep -q 'x1b\]0;PWNED' "$tmp/es3.out" || ! grep -q 'u009b' "$tmp/es4.out"; then
		failed terminal_escapes "control bytes in:$bad: $(LC_ALL=C grep -h $'[\033\a\233]' "$tmp"/es[1-4].* | head -2 | od -An -c | head -3)"
		return
	fi
	pass terminal_escapes
}

# Issue 20 item 17: inputs that are not what they seem get a message that says so.
t_input_kinds() {
	local d=$tmp/kinds
	mkdir -p "$d/dir"
	mkfifo "$d/fifo"
	snap ik1 decode "$d/dir" -o "$d/x.fxt"
	if [ $rc -ne 1 ] || ! grep -q "is a directory" "$tmp/ik1.err"; then
		failed input_kinds "a directory: rc $rc: $(head -2 "$tmp/ik1.err")"
		return
	fi
	timeout -s KILL 20 "$snap" decode <(cat tests/harden/min.data) -o "$d/x.fxt" >/dev/null 2>"$tmp/ik2.err" </dev/null
	rc=$?
	if [ $rc -ne 1 ] || ! grep -q "pipe holding a perf.data file" "$tmp/ik2.err"; then
		failed input_kinds "perf.data through a pipe: rc $rc: $(head -2 "$tmp/ik2.err")"
		return
	fi
	timeout -s KILL 20 "$snap" decode <(cat tests/golden/pt/call_return.txt) -o "$d/p.fxt" >/dev/null 2>"$tmp/ik3.err" </dev/null
	rc=$?
	if [ $rc -ne 0 ]; then
		failed input_kinds "text through a pipe: rc $rc: $(head -2 "$tmp/ik3.err")"
		return
	fi
	timeout -s KILL 20 "$snap" decode "$d/fifo" -o "$d/x.fxt" >/dev/null 2>"$tmp/ik4.err" </dev/null
	rc=$?
	if [ $rc -ne 1 ] || ! grep -q "no events" "$tmp/ik4.err"; then
		failed input_kinds "a FIFO nobody writes: rc $rc (137: hung): $(head -2 "$tmp/ik4.err")"
		return
	fi
	ln -s /dev/zero "$d/perf-77.map"
	mkfifo "$d/perf-78.map"
	snap ik5 decode -perf-map-file "$d/perf-77.map,$d/perf-78.map" tests/golden/pt/call_return.txt -o "$d/x.fxt"
	if [ $rc -ne 0 ] || ! grep -q "perf-77.map is not a regular file (a device" "$tmp/ik5.err" ||
		! grep -q "perf-78.map is not a regular file (a FIFO" "$tmp/ik5.err"; then
		failed input_kinds "-perf-map-file /dev/zero: rc $rc: $(head -2 "$tmp/ik5.err")"
		return
	fi
	printf '\037\213\010\000\000\000\000\000\000\003garbagegarbage' >"$d/bad.fxt.gz"
	snap ik6 report "$d/bad.fxt.gz"
	if [ $rc -ne 1 ] || grep -q "<fd:" "$tmp/ik6.err" || ! grep -q "bad.fxt.gz" "$tmp/ik6.err"; then
		failed input_kinds "report of bad gzip: rc $rc: $(head -2 "$tmp/ik6.err")"
		return
	fi
	pass input_kinds
}

t_planted_output_link
t_workdir_others
t_workdir_lock
t_terminal_escapes
t_input_kinds
