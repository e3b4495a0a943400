# SPDX-License-Identifier: GPL-2.0
# Sourced by run.sh after files.sh: session 30's attacks of another local user on
# root's run (docs/guarantees.md): directories of that user above a
# -working-directory, its names and perf's stderr on root's terminal, files it
# can truncate while snaptrace reads them. Uses run.sh's and files.sh's helpers.

# A directory of another user (or its link in a sticky directory) anywhere above a
# -working-directory is refused: perf writes there by name, and that user could swap
# what is below it for a link (root's perf.data then lands where the link points).
# Root's own directories keep working, also named relatively. A $TMPDIR of another user
# is not used for the private directory (/tmp is, with a warning).
t_workdir_path() {
	local d=$tmp/wdp
	if [ $root -eq 0 ]; then
		skip workdir_path "needs root (a directory of another user)"
		return
	fi
	need_perf workdir_path || return
	mkdir -p "$d/m/sub/wd" "$d/own"
	chown nobody "$d/m" # nobody's directory, root's sub/wd below it
	sticky_dir "$d/st"
	ln -s "$d/own" "$d/st/lk"
	chown -h nobody "$d/st/lk" # nobody's link in a sticky directory
	snap wp1 run -sampling -working-directory "$d/m/sub/wd" -o "$d/x.fxt" -- true
	if [ $rc -eq 0 ] || ! grep -q "is under $d/m, a directory of another user" "$tmp/wp1.err" ||
		[ -n "$(ls "$d/m/sub/wd")" ] || [ -e "$d/x.fxt" ]; then
		failed workdir_path "nobody's directory above: rc $rc: $(head -2 "$tmp/wp1.err"); left: $(ls "$d/m/sub/wd")"
		return
	fi
	snap wp2 run -sampling -working-directory "$d/st/lk/wd" -o "$d/x.fxt" -- true
	if [ $rc -eq 0 ] || ! grep -q "is under $d/st/lk, a symbolic link of another user" "$tmp/wp2.err" ||
		[ -e "$d/own/wd" ]; then
		failed workdir_path "nobody's link above: rc $rc: $(head -2 "$tmp/wp2.err")"
		return
	fi
	# the private directory in a $TMPDIR of nobody's: made in /tmp instead, and said
	TMPDIR=$d/m snap wp4 run -sampling -o "$d/x.fxt" -- true
	if ! grep -q "TMPDIR=$d/m is under $d/m, a directory of another user .*goes to /tmp" "$tmp/wp4.err" ||
		[ -n "$(ls "$d/m" | grep -v '^sub$')" ]; then
		failed workdir_path "nobody's TMPDIR: rc $rc: $(grep -v callgraph "$tmp/wp4.err" | head -2); left: $(ls "$d/m")"
		return
	fi
	(cd "$d/own" && snap wp3 run -sampling -working-directory rel/ -o "$d/x.fxt" -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done')
	if [ ! -e "$d/own/rel/perf.data" ] || grep -q "another user" "$tmp/wp3.err"; then
		failed workdir_path "root's own directory: $(head -2 "$tmp/wp3.err")"
		return
	fi
	pass workdir_path
}

# exec_wait PID FILE: waits (at most 60 s) until process PID runs FILE (setpriv has
# exec'd it: its user and its name are then the program's).
exec_wait() {
	local i
	for i in $(seq 600); do
		[ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# raw: true when file $1 holds a raw ESC, BEL or C1 CSI (0x9b alone or as U+009B).
raw() { LC_ALL=C grep -q $'[\033\a\233]' "$1"; }

# Names of another user's programs and files reach root's terminal in snaptrace's
# messages (attach names the program's file), in perf's relayed stderr (perf quotes
# names from the file it decodes) and in attach's process list (a process named
# "\e]0;PWNED\a" by exec -a): every one is escaped.
t_terminal_names() {
	local d=$tmp/tn prog pid
	mkdir -p "$d"
	if [ $perf_ok -eq 1 ] && [ $nobody_ok -eq 1 ]; then
		# attach -pid to nobody's program, a copy of sleep named "e\e]0;PWNED\ax"
		chmod 711 "$tmp"
		chmod 755 "$d"
		prog=$d/$'e\e]0;PWNED\ax'
		cp "$(command -v sleep)" "$prog"
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$prog" 60 &
		pid=$!
		exec_wait $pid "$prog"
		timeout -s KILL 60 "$snap" attach -pid $pid -o "$d/x.fxt" >"$tmp/tn1.out" 2>"$tmp/tn1.err" </dev/null &
		waitfor "$tmp/tn1.err" "attached to"
		kill -INT $!
		wait $!
		: >"$tmp/tn4.out"
		if command -v script >/dev/null && ! command -v fzf >/dev/null; then
			# -trigger ? names the program's file when it has no function to list
			(sleep 0.5; printf '\n') | timeout -s KILL 30 script -qec "$snap attach -pid $pid -trigger '?'" /dev/null >"$tmp/tn4.out" 2>&1
			if raw "$tmp/tn4.out" || ! grep -q 'e\\x1b\]0;PWNED\\x07x has no function symbols' "$tmp/tn4.out"; then
				kill $pid
				failed terminal_names "attach -trigger ?: $(LC_ALL=C grep -a PWNED "$tmp/tn4.out" | head -2 | od -An -c | head -3)"
				return
			fi
		fi
		kill $pid
		wait $pid 2>/dev/null
		if raw "$tmp/tn1.err" || ! grep -q 'e\\x1b\]0;PWNED\\x07x' "$tmp/tn1.err"; then
			failed terminal_names "attach -pid: $(LC_ALL=C grep -a PWNED "$tmp/tn1.err" | head -2 | od -An -c | head -3)"
			return
		fi
	fi
	if [ $perf_ok -eq 1 ]; then
		perf record -o "$d/p.data" --no-bpf-event -e cpu-clock -F 1000 -- true >/dev/null 2>&1
		FAKE_SCRIPT=esc SNAPTRACE_PERF=$PWD/tests/harden/perfwrap snap tn2 decode "$d/p.data" -o "$d/y.fxt"
		if raw "$tmp/tn2.err" || ! grep -q 'cannot open \\x1b\]0;PWNED\\x07\\u009bx$' "$tmp/tn2.err"; then
			failed terminal_names "perf's stderr: rc $rc: $(LC_ALL=C grep -a PWNED "$tmp/tn2.err" | head -2 | od -An -c | head -3)"
			return
		fi
	fi
	if [ $nobody_ok -eq 1 ] && command -v script >/dev/null && ! command -v fzf >/dev/null; then
		# (setpriv itself, not as_nobody: $! is then the process that sleeps)
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
			bash -c 'exec -a "$(printf "\033]0;PWNED\a")" sleep 60' &
		pid=$!
		for _ in $(seq 100); do LC_ALL=C grep -q PWNED "/proc/$pid/cmdline" 2>/dev/null && break; sleep 0.1; done
		(sleep 0.5; printf '\n') | timeout -s KILL 30 script -qec "$snap attach" /dev/null >"$tmp/tn3.out" 2>&1
		kill "$pid"
		wait "$pid" 2>/dev/null
		if raw "$tmp/tn3.out" || ! grep -q "$pid  \\\\x1b\]0;PWNED\\\\x07" "$tmp/tn3.out"; then
			failed terminal_names "attach's list: $(LC_ALL=C grep -a PWNED "$tmp/tn3.out" | head -2 | od -An -c | head -3)"
			return
		fi
	else
		skip terminal_names "the process list (needs root, setpriv, script(1) and no fzf)"
	fi
	pass terminal_names
}

# A trace naming a FIFO as a DSO (another user's program mapped a file, then put a FIFO
# or a link to a device in its place; or a hostile perf.data or text) is decoded, and
# the FIFO is never opened: the source-line reader opened every DSO blocking, and hung
# for ever on the FIFO; opened non-blocking, a device would still be opened (a watchdog
# starts, a tape rewinds). A writer blocked on the FIFO shows whether it was opened.
t_fifo_dso() {
	local d=$tmp/fd wpid
	mkdir -p "$d"
	mkfifo "$d/lib.so"
	printf 'prog 123/123 1.000001000:     250000 cpu-clock:\n\t401000 f+0x0 (%s)\n\nprog 123/123 1.000002000:     250000 cpu-clock:\n\t401000 main+0x0 (%s)\n\n' \
		"$d/lib.so" "$d/lib.so" >"$d/in.txt"
	sh -c 'exec 3>"$1"; echo opened >"$1.opened"' sh "$d/lib.so" &
	wpid=$!
	snap fd1 decode "$d/in.txt" -o "$d/x.fxt"
	# (opened: the writer's open returns and it writes its mark at once)
	for _ in $(seq 50); do [ -e "$d/lib.so.opened" ] && break; sleep 0.1; done
	kill $wpid 2>/dev/null
	wait $wpid 2>/dev/null
	if [ $rc -ne 0 ] || ! checks "$d/x.fxt" || [ -e "$d/lib.so.opened" ]; then
		failed fifo_dso "rc $rc (137: hung), FIFO opened: $([ -e "$d/lib.so.opened" ] && echo yes || echo no): $(head -2 "$tmp/fd1.err")"
		return
	fi
	# snaptrace serve FILE refuses a FIFO (a device) without opening it
	if "$snap" doctor 2>&1 | grep -q "libmicrohttpd"; then
		sh -c 'exec 3>"$1"; echo opened >"$1.opened"' sh "$d/lib.so" &
		wpid=$!
		snap fd2 serve -serve-port 0 "$d/lib.so"
		for _ in $(seq 50); do [ -e "$d/lib.so.opened" ] && break; sleep 0.1; done
		kill $wpid 2>/dev/null
		wait $wpid 2>/dev/null
		if [ $rc -ne 1 ] || [ -e "$d/lib.so.opened" ] || ! grep -q "is a FIFO" "$tmp/fd2.err"; then
			failed fifo_dso "serve: rc $rc, FIFO opened: $([ -e "$d/lib.so.opened" ] && echo yes || echo no): $(head -2 "$tmp/fd2.err")"
			return
		fi
	fi
	pass fifo_dso
}

# A -working-directory others can read (0755) can be flocked by them: nobody's lock
# denied it to root ("used by another snaptrace run"); a lock of another user's process
# is no run of root's, and the run goes on (said in a warning).
t_workdir_lock_other() {
	local d=$tmp/wlo pid
	if [ $nobody_ok -eq 0 ] || [ $perf_ok -eq 0 ] || ! command -v flock >/dev/null; then
		skip workdir_lock_other "needs root, setpriv, perf and flock(1)"
		return
	fi
	chmod 711 "$tmp"
	mkdir -p "$d/w"
	chmod 755 "$d" "$d/w"
	setpriv --reuid=nobody --regid=nogroup --clear-groups flock -x "$d/w" sleep 60 &
	pid=$!
	for _ in $(seq 100); do grep -q "FLOCK.* $pid " /proc/locks && break; sleep 0.1; done
	snap wlo run -sampling -working-directory "$d/w" -o "$d/x.fxt" -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'
	pkill -P "$pid" sleep # flock(1) does not pass a signal on to its command
	wait "$pid" 2>/dev/null
	if [ ! -e "$d/w/perf.data" ] || ! grep -q "locked by pid $pid of another user" "$tmp/wlo.err"; then
		failed workdir_lock_other "rc $rc: $(grep -v callgraph "$tmp/wlo.err" | head -2)"
		return
	fi
	pass workdir_lock_other
}

# -perf-map-file through nobody's link in a sticky directory is not followed (as the
# kernel's fs.protected_symlinks would refuse): the link could name any file root can
# read, whose lines became the trace's function names.
t_perfmap_link() {
	local d=$tmp/pml
	if [ $nobody_ok -eq 0 ]; then
		skip perfmap_link "needs root and setpriv"
		return
	fi
	mkdir -p "$d"
	sticky_dir "$d/st"
	echo "401000 100 ROOT_SECRET" >"$d/secret"
	chmod 600 "$d/secret"
	as_nobody ln -s "$d/secret" "$d/st/perf-123.map"
	printf 'prog 123/123 1.000001000: 250000 cpu-clock:\n\t401010 [unknown] (/tmp/jit)\n\nprog 123/123 1.000002000: 250000 cpu-clock:\n\t401010 [unknown] (/tmp/jit)\n\n' >"$d/in.txt"
	snap pml1 decode -perf-map-file "$d/st/perf-123.map" "$d/in.txt" -o "$d/x.fxt"
	if [ $rc -ne 0 ] || "$snap" dump "$d/x.fxt" | grep -q ROOT_SECRET ||
		! grep -q "another user's symbolic link" "$tmp/pml1.err"; then
		failed perfmap_link "rc $rc: $(head -2 "$tmp/pml1.err")"
		return
	fi
	cp "$d/secret" "$d/perf-123.map" # root's own map file: used
	snap pml2 decode -perf-map-file "$d/perf-123.map" "$d/in.txt" -o "$d/y.fxt"
	if ! "$snap" dump "$d/y.fxt" | grep -q ROOT_SECRET; then
		failed perfmap_link "root's own map: rc $rc: $(head -2 "$tmp/pml2.err")"
		return
	fi
	pass perfmap_link
}

# report -folded FILE is an output as -o is: nobody's link in a sticky directory (/tmp)
# is not followed (report wrote root's victim file through it: fopen "w"), and a file
# written there is replaced whole.
t_folded_link() {
	local d=$tmp/fl
	if [ $nobody_ok -eq 0 ]; then
		skip folded_link "needs root and setpriv"
		return
	fi
	mkdir -p "$d"
	sticky_dir "$d/st"
	echo VICTIM >"$d/victim"
	printf 'prog 1/1 1.000001000: 250000 cpu-clock:\n\t401000 main+0x0 (/t)\n\n' >"$d/in.txt"
	snap fl0 decode "$d/in.txt" -o "$d/t.fxt"
	as_nobody ln -s "$d/victim" "$d/st/out.folded"
	snap fl1 report -folded "$d/st/out.folded" "$d/t.fxt"
	if [ "$(cat "$d/victim")" != VICTIM ] || [ $rc -eq 0 ] ||
		! grep -q "cannot write $d/st/out.folded: another user's" "$tmp/fl1.err"; then
		failed folded_link "rc $rc, victim: $(head -c 20 "$d/victim"): $(head -2 "$tmp/fl1.err")"
		return
	fi
	snap fl2 report -folded "$d/own.folded" "$d/t.fxt"
	if [ $rc -ne 0 ] || ! grep -q "main" "$d/own.folded"; then
		failed folded_link "own file: rc $rc: $(head -2 "$tmp/fl2.err")"
		return
	fi
	pass folded_link
}

# perf is never taken from the current directory (an empty or relative PATH entry:
# "a::b", a trailing ":"), from /tmp or from a directory of another user: root in /tmp
# ran another user's ./perf (doctor runs perf --version), and attach's picker ./fzf.
t_path_perf() {
	local d=$tmp/pp sys
	sys=$(dirname "$(command -v perf 2>/dev/null || echo /usr/bin/perf)")
	mkdir -p "$d/cwd" "$d/m"
	printf '#!/bin/sh
echo "$0" >>%s
exit 1
' "$d/ran" >"$d/cwd/perf"
	chmod 755 "$d/cwd/perf"
	cp "$d/cwd/perf" "$d/m/perf"
	[ $root -eq 1 ] && chown -R nobody "$d/m"
	(cd "$d/cwd" && PATH="/nonexistent::$d/m:$sys:/usr/bin:/bin" timeout -s KILL 60 "$snap" doctor >"$tmp/pp1.out" 2>&1 </dev/null)
	sticky_dir "$d/st"
	cp "$d/cwd/perf" "$d/st/perf"
	(cd "$d/cwd" && PATH="$d/st:.:$sys:/usr/bin:/bin" timeout -s KILL 60 "$snap" doctor >"$tmp/pp2.out" 2>&1 </dev/null)
	if command -v script >/dev/null; then # attach's picker runs fzf when it finds one
		sed 's/exit 1/exit 0/' "$d/cwd/perf" >"$d/cwd/fzf"
		chmod 755 "$d/cwd/fzf"
		(cd "$d/cwd" && printf '\n' | PATH="/nonexistent::$sys:/usr/bin:/bin" timeout -s KILL 30 script -qec "$snap attach" /dev/null >"$tmp/pp3.out" 2>&1)
	fi
	if [ -e "$d/ran" ]; then
		failed path_perf "ran $(tr '\n' ' ' <"$d/ran")"
		return
	fi
	pass path_perf
}

# attach to another user's process: perf record gets --no-buildid-cache, so it neither
# copies nor hard-links that user's files (any size, theirs to change) into root's
# ~/.debug; root's own processes keep the cache.
t_buildid_cache() {
	local d=$tmp/bc pid own
	if [ $nobody_ok -eq 0 ] || [ $perf_ok -eq 0 ]; then
		skip buildid_cache "needs root, setpriv and perf"
		return
	fi
	mkdir -p "$d"
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$(command -v sleep)" 60 &
	pid=$!
	sleep 60 &
	own=$!
	exec_wait $pid "$(readlink -f "$(command -v sleep)")"
	for p in $pid $own; do
		timeout -s KILL 60 "$snap" attach -v -pid $p -o "$d/$p.fxt" >/dev/null 2>"$tmp/bc$p.err" </dev/null &
		waitfor "$tmp/bc$p.err" "attached to"
		kill -INT $!
		wait $!
	done
	kill $pid $own
	wait $pid $own 2>/dev/null
	if ! grep "running: perf record" "$tmp/bc$pid.err" | grep -q -- "--no-buildid-cache" ||
		grep "running: perf record" "$tmp/bc$own.err" | grep -q -- "--no-buildid-cache"; then
		failed buildid_cache "nobody's: $(grep -o 'running: perf record.*' "$tmp/bc$pid.err" | tail -c 80); root's: $(grep -o 'running: perf record.*' "$tmp/bc$own.err" | tail -c 80)"
		return
	fi
	pass buildid_cache
}

# attach -trigger NAME searches each file another user's process maps once: alternating
# the mappings of two files (65530 mappings: minutes of searching, deaf to Ctrl-C), each
# was read again at every line. Counted with strace: opens of one of the files.
t_trigger_maps() {
	local d=$tmp/tm pid py=/usr/bin/python3 opens
	if [ $nobody_ok -eq 0 ] || ! command -v strace >/dev/null || ! as_nobody $py -c '' 2>/dev/null; then
		skip trigger_maps "needs root, setpriv, strace and a python3 nobody can run"
		return
	fi
	mkdir -p "$d"
	chmod 711 "$tmp"
	chmod 755 "$d"
	cp "$snap" "$d/A.so"
	cp "$snap" "$d/B.so"
	cat >"$d/maps.py" <<'PY'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
fa, fb = os.open(sys.argv[1] + "/A.so", os.O_RDONLY), os.open(sys.argv[1] + "/B.so", os.O_RDONLY)
for i in range(200):  # PROT_READ|PROT_EXEC, MAP_PRIVATE: A, B, A, B...
    libc.mmap(None, 4096, 5, 2, fa if i % 2 == 0 else fb, 0)
print("mapped", flush=True)
time.sleep(60)
PY
	setpriv --reuid=nobody --regid=nogroup --clear-groups $py "$d/maps.py" "$d" >"$tmp/tm.py" 2>&1 &
	pid=$!
	if ! waitfor "$tmp/tm.py" mapped; then
		kill $pid
		failed trigger_maps "the mapping process: $(head -2 "$tmp/tm.py")"
		return
	fi
	timeout -s KILL 120 strace -f -e trace=openat -o "$d/strace" "$snap" attach -trigger no_such_function_xyz -pid $pid -o "$d/x.fxt" >/dev/null 2>"$tmp/tm.err" </dev/null
	kill $pid
	wait $pid 2>/dev/null
	opens=$(grep -c "\"$d/A.so\"" "$d/strace")
	if [ "$opens" -gt 4 ] || ! grep -q "no function of that name" "$tmp/tm.err"; then
		failed trigger_maps "A.so opened $opens times (once a pass and once for -callgraph-mode: 4): $(head -2 "$tmp/tm.err")"
		return
	fi
	pass trigger_maps
}

# Another local user holding half-sent requests to the trace server, from 127.0.0.1 (the
# UI's own address, which holds 16 connections) or spread over 127.0.0.0/8 (1100: the
# server's whole limit), denied the server to root's UI fetch; its connections are now
# closed at once, and even with the link it gets nothing.
t_serve_others() {
	local d=$tmp/so url hold code spid py=
	for py in /usr/bin/python3 /usr/local/bin/python3 ""; do
		[ -n "$py" ] && [ $nobody_ok -eq 1 ] && as_nobody "$py" -c '' 2>/dev/null && break
	done
	if [ -z "$py" ] || ! command -v curl >/dev/null || ! "$snap" doctor 2>&1 | grep -q "libmicrohttpd"; then
		skip serve_others "needs root, setpriv, a python3 nobody can run, curl and libmicrohttpd"
		return
	fi
	mkdir -p "$d"
	printf 'prog 1/1 1.000001000: 250000 cpu-clock:\n\t401000 main+0x0 (/t)\n\n' >"$d/in.txt"
	snap so0 decode "$d/in.txt" -o "$d/t.fxt"
	chmod 711 "$tmp"
	chmod 755 "$d"
	cat >"$d/hold.py" <<'PY'
import resource, socket, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
held, spread = [], sys.argv[2] == "spread"
for i in range(1100 if spread else 16):
    s = socket.socket()
    s.settimeout(1)
    try:
        s.bind(("127.0.%d.%d" % (1 + i // 4000, 2 + (i // 16) % 250) if spread else "127.0.0.1", 0))
        s.connect(("127.0.0.1", int(sys.argv[1])))
        s.send(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    except OSError:
        pass
    held.append(s)
print("held", len(held), flush=True)
time.sleep(60)
PY
	(ulimit -n 1024 && exec "$snap" serve -serve-port 0 "$d/t.fxt") >/dev/null 2>"$tmp/so.err" &
	spid=$!
	if ! waitfor "$tmp/so.err" "url=http://127.0.0.1:"; then
		kill $spid
		failed serve_others "no link: $(head -2 "$tmp/so.err")"
		return
	fi
	url=$(grep -o 'url=http://127\.0\.0\.1:[^ ]*' "$tmp/so.err" | head -1)
	url=${url#url=}
	for mode in same spread; do
		: >"$tmp/so.$mode"
		# (setpriv itself, not as_nobody: $! is then the python that holds them)
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$py" "$d/hold.py" "$(echo "$url" | sed 's|^http://127\.0\.0\.1:\([0-9]*\)/.*|\1|')" $mode >"$tmp/so.$mode" 2>&1 &
		hold=$!
		if ! waitfor "$tmp/so.$mode" "held"; then
			kill $hold $spid
			wait $spid
			failed serve_others "$mode: nobody could not connect: $(head -2 "$tmp/so.$mode")"
			return
		fi
		code=$(curl -s --max-time 10 -o "$d/body" -w '%{http_code}' "$url")
		kill $hold 2>/dev/null
		wait $hold 2>/dev/null
		if [ "$code" != 200 ] || ! cmp -s "$d/t.fxt" "$d/body"; then
			kill -TERM $spid
			wait $spid
			failed serve_others "$mode: the fetch got '$code' while nobody held requests ($(cat "$tmp/so.$mode"))"
			return
		fi
	done
	code=$(as_nobody curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$url")
	kill -TERM $spid
	wait $spid
	if [ "$code" = 200 ] || ! grep -q "connections of other users closed" "$tmp/so.err"; then
		failed serve_others "nobody's fetch with the link: '$code': $(tail -1 "$tmp/so.err")"
		return
	fi
	pass serve_others
}

# HARDEN_ONLY=NAME runs only t_NAME of these.
for t in workdir_path workdir_lock_other terminal_names fifo_dso perfmap_link folded_link path_perf buildid_cache trigger_maps serve_others; do
	[ -z "${HARDEN_ONLY:-}" ] || [ "$HARDEN_ONLY" = $t ] || continue
	t_$t
done
