# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# No run is lost: -o is checked before the program starts; a trace that
# cannot be written leaves perf.data where the message says.
t_output_checked() {
	snap om run -o "$tmp/missing/dir/x.fxt.gz" -- "$nest" 10
	if [ $rc -eq 1 ] && [ ! -s "$tmp/om.out" ] && [ "$(grep -c . "$tmp/om.err")" -le 2 ] &&
		grep -q "cannot write the trace to $tmp/missing/dir/x.fxt.gz: $tmp/missing/dir does not exist" "$tmp/om.err"; then
		pass output_missing_dir_refused
	else
		failed output_missing_dir_refused "rc $rc: $(cat "$tmp/om.out" "$tmp/om.err" | head -3)"
	fi
	snap od run -o "$tmp" -- "$nest" 10
	if [ $rc -eq 1 ] && [ ! -s "$tmp/od.out" ] && grep -q -- "-o $tmp is a directory" "$tmp/od.err"; then
		pass output_directory_refused
	else
		failed output_directory_refused "rc $rc: $(head -2 "$tmp/od.err")"
	fi
	local who="" ro=$tmp/ro
	mkdir -p "$ro"
	chmod 555 "$ro"
	chmod 711 "$tmp"
	[ $root -eq 1 ] && command -v setpriv >/dev/null && who="setpriv --reuid=65534 --regid=65534 --clear-groups"
	if [ $root -eq 1 ] && [ -z "$who" ]; then
		skip output_readonly_refused "no setpriv to drop root"
	else
		local bin=$snap prog=$nest
		if [ -n "$who" ] && nobody_copy; then
			bin=$nsnap # copies a 0700 checkout does not hide from nobody
			prog=$nnest
		fi
		$who "$bin" run -o "$ro/x.fxt.gz" -- "$prog" 10 >"$tmp/oro.out" 2>"$tmp/oro.err"
		rc=$?
		if [ -n "$who" ] && [ -n "$nobody_why" ]; then
			skip output_readonly_refused "$nobody_why"
		elif [ $rc -eq 1 ] && [ ! -s "$tmp/oro.out" ] && grep -q "no write access to $ro" "$tmp/oro.err"; then
			pass output_readonly_refused
		else
			failed output_readonly_refused "rc $rc: $(head -2 "$tmp/oro.err")"
		fi
	fi
	# the directory vanishes while the program runs: the recording is kept
	local gone=$tmp/gone kept
	mkdir -p "$gone"
	snap og run -o "$gone/x.fxt.gz" -- sh -c "rmdir $gone; $nest 1000"
	kept=$(sed -n 's/.*the recording is kept in \([^;]*\); decode it with: snaptrace decode .* -o FILE$/\1/p' "$tmp/og.err")
	if [ $rc -eq 1 ] && [ -n "$kept" ] && [ -s "$kept" ] &&
		"$snap" decode -q -o "$tmp/og2.fxt.gz" "$kept" && [ -s "$tmp/og2.fxt.gz" ]; then
		pass output_failure_keeps_perf_data
	else
		failed output_failure_keeps_perf_data "rc $rc, kept '$kept': $(tail -2 "$tmp/og.err")"
	fi
	[ -n "$kept" ] && rm -rf "$(dirname "$kept")"
}
