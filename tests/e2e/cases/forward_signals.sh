# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# Signals sent to snaptrace by another process are forwarded to the program:
# SIGUSR1 makes it exit 42 (and snaptrace with it); SIGTERM ends the recording.
t_forward_signals() {
	local spid
	# (snaptrace itself in the background, not under timeout: the signal is for it)
	"$snap" run -sampling -timer-resolution Sample:2000 -o "$tmp/fwd.fxt.gz" -- \
		sh -c 'trap "exit 42" USR1; echo ready $$; while :; do :; done' >"$tmp/fwd.out" 2>"$tmp/fwd.err" &
	spid=$!
	bgpids+=("$spid")
	for _ in $(seq 1000); do grep -qs ready "$tmp/fwd.out" && break; sleep 0.02; done
	cpu_wait "$(awk '{ print $2; exit }' "$tmp/fwd.out")" 50 # samples to write
	kill -USR1 "$spid"
	wait "$spid"
	rc=$?
	if [ $rc -eq 42 ]; then pass forward_sigusr1; else failed forward_sigusr1 "rc $rc: $(tail -2 "$tmp/fwd.err")"; fi
	"$snap" run -sampling -timer-resolution Sample:2000 -o "$tmp/fwd2.fxt.gz" -- \
		sh -c 'echo ready $$; while :; do :; done' >"$tmp/fwd2.out" 2>"$tmp/fwd2.err" &
	spid=$!
	bgpids+=("$spid")
	for _ in $(seq 1000); do grep -qs ready "$tmp/fwd2.out" && break; sleep 0.02; done
	cpu_wait "$(awk '{ print $2; exit }' "$tmp/fwd2.out")" 50 # samples to write
	kill -TERM "$spid"
	wait "$spid"
	rc=$?
	if [ $rc -eq 143 ] && [ -s "$tmp/fwd2.fxt.gz" ]; then
		pass forward_sigterm
	else
		failed forward_sigterm "rc $rc: $(tail -2 "$tmp/fwd2.err")"
	fi
}
