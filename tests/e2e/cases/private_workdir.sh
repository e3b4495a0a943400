# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

t_private_workdir() {
	local d mode
	snap priv run -v -sampling -timer-resolution Low -o "$tmp/priv.fxt.gz" -- sh -c 'stat -c "%a %U" "$TMPDIR"/snaptrace.*'
	d=$(sed -n 's/^snaptrace: working directory //p' "$tmp/priv.err")
	mode=$(grep -c "^700 $(id -un)" "$tmp/priv.out")
	if [ -n "$d" ] && [ "$mode" -ge 1 ] && [ ! -e "$d" ]; then
		pass private_workdir_removed
	else
		failed private_workdir_removed "dir '$d' mode lines $mode, exists after: $([ -e "$d" ] && echo yes)"
	fi
}
