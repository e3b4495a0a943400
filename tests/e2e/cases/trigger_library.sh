# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# run: a trigger on a libc function (the program is run to its entry point
# first, so its shared libraries are mapped).
t_trigger_library() {
	# pthread_join (libc) runs once, after ~0.15 s of work
	snap tlib run -v -sampling -timer-resolution Low -trigger pthread_join -working-directory \
		"$tmp/w_tlib" -o "$tmp/tlib.fxt.gz" -- "$nest" 1500 0 1 4
	if [ $rc -eq 4 ] && grep -q "trigger pthread_join hit" "$tmp/tlib.err" &&
		grep -q "libc" "$tmp/tlib.err" && [ -s "$tmp/tlib.fxt.gz" ]; then
		pass trigger_library_function
	else
		failed trigger_library_function "rc $rc: $(grep -v '^snaptrace: \(no Intel\|finished\|decoding\)' "$tmp/tlib.err" | head -3)"
	fi
}

# run: a signal the program takes before its entry point (a library constructor raises
# SIGUSR1) is passed on while snaptrace runs it there; the trigger in that library hits.
t_trigger_signal_before_entry() {
	snap tsig run -v -sampling -timer-resolution Low -trigger sigctor_work -working-directory \
		"$tmp/w_tsig" -o "$tmp/tsig.fxt.gz" -- "$progs/sigctor"
	if [ $rc -eq 4 ] && grep -q "trigger sigctor_work hit" "$tmp/tsig.err" &&
		grep -q "ran .* to its entry point" "$tmp/tsig.err" && [ -s "$tmp/tsig.fxt.gz" ]; then
		pass trigger_signal_before_entry
	else
		failed trigger_signal_before_entry "rc $rc: $(grep -v '^snaptrace: \(no Intel\|finished\|decoding\)' "$tmp/tsig.err" | head -3)"
	fi
}
