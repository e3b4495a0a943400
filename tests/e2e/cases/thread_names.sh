# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# Track names follow pthread_setname_np and prctl(PR_SET_NAME).
t_thread_names() {
	local p pid
	both_paths tn -multi-thread -- "$progs/tnames" 300
	for p in tn tn-text; do
		pid=$(sed -n 's/^ready //p' "$tmp/$p.out")
		if "$snap" dump "$tmp/$p.fxt.gz" 2>/dev/null |
			grep -q "^thread .*name=\"myworker \[pid=$pid\] \[tid=[0-9]*\]\""; then
			pass "thread_names_$p"
		else
			failed "thread_names_$p" "no myworker track: $("$snap" dump "$tmp/$p.fxt.gz" 2>&1 | grep '^thread' | head -3 | tr '\n' ' ')"
		fi
	done
	# without -multi-thread the worker ran untraced: say so
	snap tn1 run -o "$tmp/tn1.fxt.gz" -- "$progs/tnames" 300
	if grep -q "other threads ran untraced (only the main thread is recorded); -multi-thread records them" "$tmp/tn1.err"; then
		pass untraced_threads_hint
	else
		failed untraced_threads_hint "$(tail -2 "$tmp/tn1.err")"
	fi
	# a shell that runs the work in a child process
	snap tn2 run -o "$tmp/tn2.fxt.gz" -- sh -c "$nest 3000; true"
	if grep -q "child processes ran untraced (only the main thread is recorded); -multi-thread records them" "$tmp/tn2.err"; then
		pass untraced_children_hint
	else
		failed untraced_children_hint "$(tail -2 "$tmp/tn2.err")"
	fi
}
