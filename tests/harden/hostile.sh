# SPDX-License-Identifier: GPL-2.0
# Sourced by run.sh: issue 20 (hostile surroundings) items 7-17, the program's
# signals and limits (docs/guarantees.md). Uses run.sh's snap/pass/failed/skip.

# Issue 20 item 12 (and issue 21): input with no event is refused after its first
# MiB; a signal stops a read loop whose reads never block.
t_no_events() {
	local f
	for f in /dev/zero /dev/urandom; do
		snap noev decode "$f" -o "$tmp/noev.fxt"
		if [ $rc -ne 1 ] || ! grep -q "neither a perf.data file nor perf script text" "$tmp/noev.err"; then
			failed no_events "$f: rc $rc: $(head -c 300 "$tmp/noev.err")"
			return
		fi
	done
	snap noev2 report /dev/zero
	if [ $rc -ne 1 ] || ! grep -q "neither a perf.data" "$tmp/noev2.err"; then
		failed no_events "report: rc $rc: $(head -2 "$tmp/noev2.err")"
		return
	fi
	# events first, then zeros for ever: only SIGTERM ends it
	{ cat tests/golden/perfscript/pt_threads.txt; cat /dev/zero; } |
		timeout -s KILL 60 "$snap" decode - -o "$tmp/noev3.fxt" >/dev/null 2>"$tmp/noev3.err" &
	local pid=$!
	sleep 1
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	if [ $rc -ne 1 ] || ! grep -q "interrupted" "$tmp/noev3.err" || [ -e "$tmp/noev3.fxt" ]; then
		failed no_events "SIGTERM on endless zeros: rc $rc: $(head -2 "$tmp/noev3.err")"
		return
	fi
	pass no_events
}

t_no_events
