# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# A non-root user records its own program, with a trigger (paranoid 2 allows
# user-space sampling and hardware breakpoints on one's own processes). nobody
# runs copies of snaptrace and the program (nobody_copy), so this works from a
# checkout in a 0700 directory.
t_non_root() {
	local d=$tmp/nobody
	if [ $root -eq 0 ] || ! command -v setpriv >/dev/null; then
		skip non_root_run "needs root and setpriv to become nobody"
		return
	fi
	if ! nobody_copy; then
		skip non_root_run "$nobody_why"
		return
	fi
	chmod 711 "$tmp"
	mkdir -p "$d"
	chmod 1777 "$d" # sticky, as /tmp: a TMPDIR others can write without it is refused
	(cd "$d" && TMPDIR=$d timeout -s KILL 30 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$nsnap" run -trigger trigger_here -timer-resolution Low -o "$d/nr.fxt.gz" -- "$nnest" 3000 1500 0 6) \
		>"$tmp/nr.out" 2>"$tmp/nr.err"
	rc=$?
	if [ $rc -eq 6 ] && [ -s "$d/nr.fxt.gz" ] && grep -q "hit by tid" "$tmp/nr.err" &&
		[ -z "$(ls -d "$d"/snaptrace.* 2>/dev/null)" ]; then
		pass non_root_run_trigger
	else
		failed non_root_run_trigger "rc $rc: $(grep -v '^snaptrace: \(no Intel\|finished\|decoding\)' "$tmp/nr.err" | head -3)"
	fi
}
