# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# Debian's python3 with default flags: dwarf is picked and the interpreter's
# frames nest under Py_RunMain.
t_python3() {
	local p r
	if [ ! -x /usr/bin/python3 ]; then
		skip python3_stacks "no /usr/bin/python3 (Debian package python3)"
		return
	fi
	cat >"$tmp/busy.py" <<'PY'
def f(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def g():
    return sum(f(20000) for _ in range(60))
g()
PY
	both_paths py -- /usr/bin/python3 "$tmp/busy.py"
	if ! grep -q "^snaptrace: -callgraph-mode dwarf: python3" "$tmp/py.err"; then
		failed python3_stacks "not dwarf: $(head -3 "$tmp/py.err")"
		return
	fi
	for p in py py-text; do
		r=$(slices "$tmp/$p.fxt.gz" | grep -c "Py_RunMain>.*_PyEval_EvalFrameDefault")
		if [ "$r" -ge 1 ]; then
			pass "python3_stacks_$p"
		else
			failed "python3_stacks_$p" "no _PyEval_EvalFrameDefault under Py_RunMain: $(tail -2 "$tmp/$p.err")"
		fi
	done
}
