#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# End-to-end tests of serving a trace to the Perfetto UI (snaptrace serve, decode -serve):
# a real HTTP client (curl) fetches the file from 127.0.0.1 and must get the same bytes
# with the CORS header for https://ui.perfetto.dev; Ctrl-C (SIGINT) stops the server
# cleanly. Ports: -serve-port 0 (the kernel picks a free one; snaptrace prints it), so
# parallel runs never collide. Every wait is bounded. Loopback only.
set -u
cd "$(dirname "$0")/../.."
snap=${SNAP_BIN:-$PWD/snaptrace} # SNAP_BIN: try another build (e.g. main)
tmp=$(mktemp -d /tmp/snaptrace-serve.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! command -v curl >/dev/null; then
	echo "SKIP serve: curl not found (tests/deps.sh install)"
	exit 0
fi
if [ ! -x "$snap" ]; then
	echo "FAIL serve_setup: $snap missing (run make)"
	exit 1
fi

# wait_line FILE PATTERN: up to 10 s for a line matching PATTERN; prints it.
wait_line() {
	for _ in $(seq 100); do
		grep -m1 -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# wait_exit PID: up to 10 s for PID to exit; its status in $st (124 = still running).
wait_exit() {
	st=124
	for _ in $(seq 100); do
		if ! kill -0 "$1" 2>/dev/null; then
			wait "$1"
			st=$?
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# check_served NAME FILE ERRLOG PID: fetch, compare, stop.
check_served() {
	local name=$1 file=$2 err=$3 pid=$4 link url port base
	base=$(basename "$file" | sed 's/ /%20/g') # the name is percent-encoded in the URL
	link=$(wait_line "$err" "open https://ui.perfetto.dev/#!/?url=") ||
		{ echo "FAIL serve_$name: no link printed in 10 s: $(head -3 "$err" | tr '\n' ' ')"; return; }
	url=${link#*url=}
	port=$(echo "$url" | sed -n 's|^http://127\.0\.0\.1:\([0-9][0-9]*\)/.*|\1|p')
	token=$(echo "$url" | sed -n 's|^http://127\.0\.0\.1:[0-9]*/\([0-9a-f]\{32\}\)/.*|\1|p')
	if [ -z "$port" ] || [ -z "$token" ] || [ "$url" != "http://127.0.0.1:$port/$token/$base" ]; then
		echo "FAIL serve_$name: link is not https://ui.perfetto.dev/#!/?url=http://127.0.0.1:PORT/TOKEN/$base (TOKEN: 32 hex digits): $link"
		return
	fi
	if ! grep -q "ssh -L $port:127.0.0.1:$port HOST" "$err" || ! grep -q "until Ctrl-C" "$err"; then
		echo "FAIL serve_$name: no ssh -L hint or no 'until Ctrl-C': $(tr '\n' ' ' <"$err")"
		return
	fi
	if ! curl -sS --max-time 10 -H "Origin: https://ui.perfetto.dev" -D "$tmp/$name.hdr" \
		-o "$tmp/$name.body" "$url"; then
		echo "FAIL serve_$name: curl $url failed"
		return
	fi
	if ! head -1 "$tmp/$name.hdr" | grep -q " 200"; then
		echo "FAIL serve_$name: $(head -1 "$tmp/$name.hdr")"
	elif ! grep -qi '^Access-Control-Allow-Origin: https://ui.perfetto.dev' "$tmp/$name.hdr"; then
		echo "FAIL serve_$name: no CORS header for https://ui.perfetto.dev: $(tr '\r\n' '  ' <"$tmp/$name.hdr")"
	elif ! cmp -s "$file" "$tmp/$name.body"; then
		echo "FAIL serve_$name: served bytes differ from $file"
	else
		echo "PASS serve_$name/fetch"
	fi
	code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/etc-passwd")
	[ "$code" = 404 ] && echo "PASS serve_$name/other_path_404" ||
		echo "FAIL serve_$name/other_path_404: got $code"
	# issue 20 item 4: without the token (the link's random part) nothing is served, nor to
	# a page whose name resolves here (DNS rebinding: its Host is not loopback)
	code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/$base")
	code2=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/$token/$base.x")
	[ "$code" = 404 ] && [ "$code2" = 404 ] && echo "PASS serve_$name/no_token_404" ||
		echo "FAIL serve_$name/no_token_404: /NAME got $code, /TOKEN/NAME.x got $code2"
	code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -H "Host: attacker.example:$port" "$url")
	code2=$(curl -s --max-time 10 -o "$tmp/$name.body2" -w '%{http_code}' -H "Host: localhost:$port" "$url")
	if [ "$code" = 403 ] && [ "$code2" = 200 ] && cmp -s "$file" "$tmp/$name.body2"; then
		echo "PASS serve_$name/host_pinned"
	else
		echo "FAIL serve_$name/host_pinned: Host attacker.example got $code, Host localhost got $code2"
	fi
	if command -v ss >/dev/null; then
		if ss -ltnH "sport = :$port" | awk '{print $4}' | grep -qv '^127\.0\.0\.1:'; then
			echo "FAIL serve_$name/loopback_only: $(ss -ltnH "sport = :$port")"
		else
			echo "PASS serve_$name/loopback_only"
		fi
	fi
	kill -INT "$pid"
	if ! wait_exit "$pid"; then
		echo "FAIL serve_$name/sigint: still running 10 s after SIGINT"
	elif [ "$st" != 0 ] || ! grep -q "stopped serving" "$err"; then
		echo "FAIL serve_$name/sigint: exit $st: $(tail -2 "$err" | tr '\n' ' ')"
	elif curl -s --max-time 5 -o /dev/null "$url"; then
		echo "FAIL serve_$name/sigint: still answering after exit"
	else
		echo "PASS serve_$name/sigint"
	fi
}

# 1. snaptrace serve FILE
"$snap" decode -q -o "$tmp/a trace.fxt.gz" tests/golden/pt/call_return.txt 2>"$tmp/dec.err" ||
	echo "FAIL serve_setup: decode: $(cat "$tmp/dec.err")"
"$snap" serve -serve-port 0 "$tmp/a trace.fxt.gz" >"$tmp/serve.out" 2>"$tmp/serve.err" &
pid=$!
pids+=("$pid")
check_served serve_cmd "$tmp/a trace.fxt.gz" "$tmp/serve.err" "$pid"

# 2. decode -serve: writes the trace, then serves it
"$snap" decode -serve -serve-port 0 -o "$tmp/b.fxt" tests/golden/pt/call_return.txt \
	>"$tmp/dserve.out" 2>"$tmp/dserve.err" &
pid=$!
pids+=("$pid")
check_served decode_serve "$tmp/b.fxt" "$tmp/dserve.err" "$pid"

# 2b. Issue 20 item 3: decode -serve serves what it wrote, not what the output's name leads
# to afterwards: the -o link is re-pointed at a secret while the decode runs (its input, a
# FIFO we hold open, has not ended); the server must hand out the trace, not the secret.
echo SECRET >"$tmp/secret"
mkfifo "$tmp/in.fifo"
ln -s a.fxt "$tmp/swap.fxt"
exec 3<>"$tmp/in.fifo"
"$snap" decode -serve -serve-port 0 -o "$tmp/swap.fxt" "$tmp/in.fifo" \
	>"$tmp/swap.out" 2>"$tmp/swap.err" 3>&- &
pid=$!
pids+=("$pid")
cat tests/golden/pt/call_return.txt >&3
# the output is open once an unnamed (O_TMPFILE) file in $tmp is among decode's descriptors
for _ in $(seq 100); do
	ls -l "/proc/$pid/fd" 2>/dev/null | grep -q "$tmp/#" && break
	sleep 0.1
done
ln -sfn secret "$tmp/swap.fxt"
exec 3>&-
if link=$(wait_line "$tmp/swap.err" "url=http://127.0.0.1:"); then
	url=${link#*url=}
	curl -sS --max-time 10 -o "$tmp/swap.body" "$url"
	if grep -q SECRET "$tmp/swap.body" || ! "$snap" dump -check "$tmp/a.fxt" >/dev/null 2>&1 ||
		! cmp -s "$tmp/a.fxt" "$tmp/swap.body"; then
		echo "FAIL serve_fd_served: served $(head -c 16 "$tmp/swap.body" | od -An -c | head -1)"
	else
		echo "PASS serve_fd_served"
	fi
else
	echo "FAIL serve_fd_served: no link: $(head -3 "$tmp/swap.err" | tr '\n' ' ')"
fi
kill -INT "$pid"
wait_exit "$pid" || echo "FAIL serve_fd_served: did not stop"

# 2c. Issue 20 item 4: 1100 connections held with half-sent requests (from 127.0.0.2, under
# the usual 1024 descriptors) do not deny the server to the UI's fetch from 127.0.0.1.
(ulimit -n 1024 && exec "$snap" serve -serve-port 0 "$tmp/b.fxt") >/dev/null 2>"$tmp/dos.err" &
pid=$!
pids+=("$pid")
if link=$(wait_line "$tmp/dos.err" "url=http://127.0.0.1:"); then
	url=${link#*url=}
	port=$(echo "$url" | sed -n 's|^http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p')
	python3 - "$port" >"$tmp/dos.py.out" 2>&1 <<'PY' &
import resource, socket, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
held = []
for _ in range(1100):
    s = socket.socket()
    s.settimeout(1)
    try:
        s.bind(("127.0.0.2", 0))
        s.connect(("127.0.0.1", int(sys.argv[1])))
        s.send(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    except OSError:
        pass
    held.append(s)
print("held", len(held), flush=True)
time.sleep(60)
PY
	hold=$!
	pids+=("$hold")
	wait_line "$tmp/dos.py.out" "held" >/dev/null
	code=$(curl -s --max-time 10 -o "$tmp/dos.body" -w '%{http_code}' "$url")
	if [ "$code" = 200 ] && cmp -s "$tmp/b.fxt" "$tmp/dos.body"; then
		echo "PASS serve_held_connections"
	else
		echo "FAIL serve_held_connections: the fetch got '$code' while 1100 requests were held"
	fi
	kill "$hold" 2>/dev/null
	kill -INT "$pid"
	wait_exit "$pid" || echo "FAIL serve_held_connections: did not stop"
else
	echo "FAIL serve_held_connections: no link: $(head -3 "$tmp/dos.err" | tr '\n' ' ')"
fi

# 2d. SIGHUP stops the server, unless snaptrace was started ignoring it (nohup): then it
# stays ignored (docs/guarantees.md, Signals) and SIGTERM stops it.
for mode in plain nohup; do
	if [ $mode = nohup ]; then
		nohup "$snap" serve -serve-port 0 "$tmp/b.fxt" >/dev/null 2>"$tmp/hup.err" &
	else
		# (SIGHUP as by default even when this suite runs under nohup)
		env --default-signal=HUP "$snap" serve -serve-port 0 "$tmp/b.fxt" >/dev/null 2>"$tmp/hup.err" &
	fi
	pid=$!
	pids+=("$pid")
	if link=$(wait_line "$tmp/hup.err" "url=http://127.0.0.1:"); then
		url=${link#*url=}
		kill -HUP "$pid"
		if [ $mode = plain ]; then
			if wait_exit "$pid" && grep -q "stopped serving (Hangup" "$tmp/hup.err"; then
				echo "PASS serve_sighup_stops"
			else
				echo "FAIL serve_sighup_stops: $(tail -2 "$tmp/hup.err" | tr '\n' ' ')"
			fi
		else
			# the server still answers after the SIGHUP (a fetch after it was sent)
			code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$url")
			if [ "$code" = 200 ] && kill -0 "$pid" 2>/dev/null; then
				echo "PASS serve_nohup_keeps_serving"
			else
				echo "FAIL serve_nohup_keeps_serving: after SIGHUP the fetch got '$code': $(tail -2 "$tmp/hup.err" | tr '\n' ' ')"
			fi
			kill -TERM "$pid"
			wait_exit "$pid" || echo "FAIL serve_nohup_keeps_serving: did not stop on SIGTERM"
		fi
	else
		echo "FAIL serve_sighup_$mode: no link: $(head -3 "$tmp/hup.err" | tr '\n' ' ')"
	fi
done

# 3. A busy port: a clear one-line error, exit 1.
"$snap" serve -serve-port 0 "$tmp/b.fxt" >/dev/null 2>"$tmp/busy1.err" &
pid=$!
pids+=("$pid")
if link=$(wait_line "$tmp/busy1.err" "url=http://127.0.0.1:"); then
	port=$(echo "$link" | sed -n 's|.*url=http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p')
	timeout -s KILL 10 "$snap" serve -serve-port "$port" "$tmp/b.fxt" >/dev/null 2>"$tmp/busy2.err"
	rc=$?
	if [ $rc = 1 ] && [ "$(wc -l <"$tmp/busy2.err")" = 1 ] && grep -q "serve-port" "$tmp/busy2.err"; then
		echo "PASS serve_port_in_use"
	else
		echo "FAIL serve_port_in_use: exit $rc: $(cat "$tmp/busy2.err")"
	fi
	kill -INT "$pid"
	wait_exit "$pid" || echo "FAIL serve_port_in_use: first server did not stop"
else
	echo "FAIL serve_port_in_use: first server printed no link"
fi

# 4. Refusals: -share, bad port, missing file: one line, no server.
one_line() { # name expected-status pattern args...
	local name=$1 want=$2 pat=$3
	shift 3
	timeout -s KILL 10 "$snap" "$@" >/dev/null 2>"$tmp/$name.err"
	local rc=$?
	if [ $rc = "$want" ] && [ "$(wc -l <"$tmp/$name.err")" = 1 ] && grep -q -- "$pat" "$tmp/$name.err"; then
		echo "PASS serve_$name"
	else
		echo "FAIL serve_$name: exit $rc: $(head -3 "$tmp/$name.err" | tr '\n' ' ')"
	fi
}
one_line share_refused 2 "never uploads" serve -share "$tmp/b.fxt"
one_line decode_share_refused 2 "never uploads" decode -share -o "$tmp/c.fxt" tests/golden/pt/call_return.txt
one_line run_share_refused 2 "never uploads" run -share -- true
one_line bad_port 2 "bad -serve-port" serve -serve-port 70000 "$tmp/b.fxt"
one_line missing_file 1 "cannot serve" serve -serve-port 0 "$tmp/nope.fxt"
# issue 20 item 17: what is not a regular file is refused at once, and said so
one_line device_refused 1 "not a regular file" serve -serve-port 0 /dev/zero
one_line fifo_refused 1 "is a FIFO" serve -serve-port 0 "$tmp/in.fifo"
one_line dir_refused 1 "is a directory" serve -serve-port 0 "$tmp"

# 5. libmicrohttpd is opened only to serve (docs/design.md, "Dependencies"): without it
# (SNAPTRACE_TEST_MHD_LIB names another library, for these tests only), or with a library
# that is not it, one line names the package, and nothing is decoded or recorded first.
no_mhd() { # name pattern args...
	local name=$1 pat=$2
	shift 2
	SNAPTRACE_TEST_MHD_LIB=$mhd timeout -s KILL 10 "$snap" "$@" >/dev/null 2>"$tmp/$name.err"
	local rc=$?
	if [ $rc = 1 ] && [ "$(wc -l <"$tmp/$name.err")" = 1 ] && grep -q -- "$pat" "$tmp/$name.err" &&
		grep -q "apt-get install libmicrohttpd[0-9]" "$tmp/$name.err"; then
		echo "PASS serve_$name"
	else
		echo "FAIL serve_$name: exit $rc: $(head -3 "$tmp/$name.err" | tr '\n' ' ')"
	fi
}
mhd=libsnaptrace-no-such-mhd.so.12
no_mhd no_mhd_serve "serving needs libmicrohttpd (libsnaptrace-no-such-mhd" serve -serve-port 0 "$tmp/b.fxt"
no_mhd no_mhd_decode "serving needs libmicrohttpd" decode -serve -serve-port 0 -o "$tmp/nomhd.fxt" \
	tests/golden/pt/call_return.txt
[ -e "$tmp/nomhd.fxt" ] && echo "FAIL serve_no_mhd_decode/before: the trace was written first"
no_mhd no_mhd_run "serving needs libmicrohttpd" run -serve -serve-port 0 -o "$tmp/nomhd-run.fxt" \
	-- sh -c "touch '$tmp/nomhd.ran'"
[ -e "$tmp/nomhd.ran" ] || [ -e "$tmp/nomhd-run.fxt" ] &&
	echo "FAIL serve_no_mhd_run/before: the command was recorded first"
mhd=libz.so.1 # a library, but not libmicrohttpd: a function is missing
no_mhd wrong_mhd "libz.so.1 has no MHD_" serve -serve-port 0 "$tmp/b.fxt"
# snaptrace doctor says whether -serve can work, and the fix
"$snap" doctor >"$tmp/doc.out" 2>&1
SNAPTRACE_TEST_MHD_LIB=libsnaptrace-no-such-mhd.so.12 "$snap" doctor >"$tmp/doc-no.out" 2>&1
if grep -Eq '^ok +-serve +libmicrohttpd' "$tmp/doc.out" &&
	grep -Eq '^-- +-serve +.*libsnaptrace-no-such-mhd' "$tmp/doc-no.out" &&
	grep -Eq 'fix: sudo apt-get install libmicrohttpd[0-9]' "$tmp/doc-no.out"; then
	echo "PASS serve_doctor_says"
else
	echo "FAIL serve_doctor_says: $(grep -e '-serve' -A1 "$tmp/doc.out" "$tmp/doc-no.out" | tr '\n' ' ')"
fi
if command -v ldd >/dev/null && ldd "$snap" | grep -Eq 'libmicrohttpd|libgnutls'; then
	echo "FAIL serve_mhd_not_linked: $(ldd "$snap" | grep -E 'libmicrohttpd|libgnutls' | tr '\n' ' ')"
else
	echo "PASS serve_mhd_not_linked"
fi
exit 0
