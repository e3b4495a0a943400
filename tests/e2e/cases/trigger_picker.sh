# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

t_trigger_picker() {
	# without a terminal (setsid: no controlling one) the picker cannot ask: one
	# line that names the fix, before anything is recorded
	if command -v setsid >/dev/null; then
		timeout -s KILL 30 setsid -w "$snap" run -sampling -trigger '?' -o "$tmp/nopick.fxt.gz" \
			-- "$nest" 100 </dev/null >"$tmp/nopick.out" 2>"$tmp/nopick.err"
		rc=$?
		if [ $rc -eq 1 ] && [ ! -e "$tmp/nopick.fxt.gz" ] &&
			grep -q "^snaptrace run: no trigger chosen (no terminal to ask on); name it instead: -trigger SYMBOL or -trigger FILE:LINE$" "$tmp/nopick.err"; then
			pass trigger_picker_no_terminal
		else
			failed trigger_picker_no_terminal "rc $rc: $(tail -1 "$tmp/nopick.err")"
		fi
	fi
	if ! command -v script >/dev/null || command -v fzf >/dev/null; then
		skip trigger_picker "needs script(1) for a terminal, and no fzf (the list picker)"
		return
	fi
	# -trigger ? lists the functions on the terminal and reads the choice there.
	(sleep 0.5; printf 'trigger_here\n') | timeout -s KILL 30 script -qec \
		"$snap run -sampling -timer-resolution Low -trigger '?' -working-directory $tmp/w_pick -o $tmp/pick.fxt.gz -- $nest 3000 1500" \
		/dev/null >"$tmp/pick.out" 2>&1
	if grep -q "number or name" "$tmp/pick.out" && grep -q "trigger trigger_here hit" "$tmp/pick.out"; then
		pass trigger_picker
	else
		failed trigger_picker "$(tail -3 "$tmp/pick.out" | tr '\r\n' '  ')"
	fi
}
