#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The README's first command on a fresh machine: `make demo` installs the missing
# Debian packages before it compiles anything (a machine without libmicrohttpd-dev,
# libdw-dev... stops at the first missing header otherwise). Runs make demo in a
# copy of the tree with stand-ins first on PATH: dpkg-query (every package
# missing), apt-get and id (root or not) that log what they are asked, and a cc
# that logs and fails (so nothing is really built). Prints PASS/FAIL lines.
set -u
cd "$(dirname "$0")/../.." || exit 1
fail=0
tmp=$(mktemp -d /tmp/snaptrace-setup.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS setup_$1"; }
failed() {
	echo "FAIL setup_$1: $2"
	fail=1
}

mkdir -p "$tmp/tree" "$tmp/bin"
if git rev-parse --git-dir >/dev/null 2>&1; then
	git ls-files -co --exclude-standard -z
else # a tarball: everything but the build outputs
	find . -path ./build -prune -o -path ./.git -prune -o -type f ! -name snaptrace \
		! -name '*.so' ! -name 'trace.fxt*' -print0
fi | tar -c --null -T - 2>/dev/null | tar -x -C "$tmp/tree"
log=$tmp/log
cat >"$tmp/bin/dpkg-query" <<'SH'
#!/bin/sh
exit 1
SH
cat >"$tmp/bin/apt-get" <<SH
#!/bin/sh
echo "apt-get \$*" >>$log
SH
cat >"$tmp/bin/id" <<SH
#!/bin/sh
if [ "\$1" = -u ]; then cat $tmp/uid; else exec /usr/bin/id "\$@"; fi
SH
# (a preprocessor probe while make reads the Makefile is not a compile)
for c in cc gcc clang; do
	cat >"$tmp/bin/$c" <<SH
#!/bin/sh
case " \$* " in *" -E "*) exit 1 ;; esac
echo "compile $c \$*" >>$log
exit 1
SH
done
chmod +x "$tmp/bin"/*

# demo ARGS: runs make demo in the copy as uid $1; output in $tmp/out, rc in $rc.
demo() {
	echo "$1" >"$tmp/uid"
	: >"$log"
	(cd "$tmp/tree" && PATH=$tmp/bin:$PATH CC=cc timeout -s KILL 120 make demo) >"$tmp/out" 2>&1
	rc=$?
}

# As root: apt-get install runs before the first compiler call.
demo 0
first_apt=$(grep -n '^apt-get install' "$log" | head -1 | cut -d: -f1)
first_cc=$(grep -n '^compile' "$log" | head -1 | cut -d: -f1)
if [ -n "$first_apt" ] && { [ -z "$first_cc" ] || [ "$first_apt" -lt "$first_cc" ]; } &&
	grep -q 'apt-get install.*libmicrohttpd-dev' "$log"; then
	pass demo_installs_first
else
	failed demo_installs_first "order: $(cut -c1-60 "$log" | head -3 | tr '\n' '|') (rc $rc)"
fi

# Not root: the apt-get line, a clear message, a failure, and nothing compiled.
demo 1000
if [ "$rc" -ne 0 ] && ! grep -q '^compile' "$log" && ! grep -q '^apt-get' "$log" &&
	grep -q 'sudo apt-get install -y.*libmicrohttpd-dev' "$tmp/out" &&
	grep -q "nothing was built" "$tmp/out"; then
	pass demo_not_root
else
	failed demo_not_root "rc $rc, log: $(head -2 "$log" | tr '\n' '|') out: $(tail -3 "$tmp/out" | tr '\n' '|')"
fi

# make -n -B demo: the order as make itself plans it (no compiler line before
# the demo script, which installs first).
plan=$(cd "$tmp/tree" && make -n -B demo 2>&1)
n_demo=$(echo "$plan" | grep -n 'tests/demo.sh' | head -1 | cut -d: -f1)
n_cc=$(echo "$plan" | grep -n -E '(^| )(cc|gcc|clang|\$\(CC\)) .*-c ' | head -1 | cut -d: -f1)
if [ -n "$n_demo" ] && { [ -z "$n_cc" ] || [ "$n_demo" -lt "$n_cc" ]; } &&
	sed -n '/deps.sh install/=' tests/demo.sh | head -1 | {
		read -r d
		m=$(sed -n '/make -s all/=' tests/demo.sh | head -1)
		[ -n "$d" ] && [ -n "$m" ] && [ "$d" -lt "$m" ]
	}; then
	pass demo_plan_order
else
	failed demo_plan_order "make -n -B demo: demo.sh at line ${n_demo:-none}, first compile at ${n_cc:-none}"
fi

# A user's first minute with ./snaptrace (the tree's build).
snap=${SETUP_SNAP:-$PWD/snaptrace} # SETUP_SNAP: another build (to check old code)
if [ ! -x "$snap" ]; then
	failed first_minute "$snap missing (run make)"
	exit 1
fi
out=$("$snap" help -help 2>&1)
rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q '^usage: snaptrace help \[COMMAND\]' &&
	[ "$("$snap" help --help 2>&1)" = "$out" ] && [ "$("$snap" help help 2>&1)" = "$out" ]; then
	pass help_help
else
	failed help_help "rc $rc: $out"
fi
# -window: one reading of the message: no parenthesis inside the hint's.
out=$("$snap" report -window 5 tests/golden/pt/call_return.txt 2>&1)
rc=$?
hint=${out#*\'5\' (}
hint=${hint%)}
case $hint in
*"("* | *")"*) ok=0 ;;
*) ok=1 ;;
esac
if [ $rc -eq 2 ] && [ $ok -eq 1 ] && echo "$hint" | grep -q 'START,END' &&
	echo "$hint" | grep -q 'empty END'; then
	pass window_message
else
	failed window_message "rc $rc: $out"
fi
# -serve on a port other than 9001 says the public UI will not fetch from it.
if [ -s tests/golden/pt/call_return.txt ]; then
	"$snap" decode -o "$tmp/t.fxt" tests/golden/pt/call_return.txt >/dev/null 2>&1
	"$snap" serve -serve-port 0 "$tmp/t.fxt" >/dev/null 2>"$tmp/serve.err" &
	spid=$!
	for _ in $(seq 100); do
		grep -q "until Ctrl-C" "$tmp/serve.err" && break
		sleep 0.1
	done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	if grep -q "public UI (ui.perfetto.dev) fetches traces only from port 9001" "$tmp/serve.err" &&
		grep -q -- "-serve-port 9001" "$tmp/serve.err"; then
		pass serve_port_note
	else
		failed serve_port_note "$(head -4 "$tmp/serve.err" | tr '\n' '|')"
	fi
fi
exit $fail
