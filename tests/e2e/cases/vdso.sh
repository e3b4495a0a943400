# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# Frame-pointer chains through the vDSO (progs/vdsotime.c): a sample in the
# frameless __vdso_time lacks work; the vDSO's CFI (perf's build-id cache copy)
# marks it, so each of the 30 calls of work is one slice (before: 50-60).
t_vdso_frameless() {
	local id calls
	snap vdso run -callgraph-mode fp -working-directory "$tmp/w_vdso" -o "$tmp/vdso.fxt.gz" -- "$progs/vdsotime" 30
	id=$(perf buildid-list -i "$tmp/w_vdso/perf.data" 2>/dev/null | sed -n 's/^\([0-9a-f]*\) \[vdso\]$/\1/p')
	if [ -z "$id" ] || [ ! -r "${HOME:-/nonexistent}/.debug/.build-id/${id:0:2}/${id:2}/vdso" ]; then
		skip vdso_frameless "perf kept no copy of the vDSO in its build-id cache (~/.debug)"
		return
	fi
	# (slices in the trace: the report leaves out the first when the data begins inside it)
	# 30 calls; up to 10 % more, as perfcmp's cxxmix allows: a chain cut elsewhere (a
	# sample in ld.so or the kernel's return path) can split one now and then (31 in 1 of
	# 2 CI runs); without the vDSO's unwind table 48-61
	calls=$("$snap" dump -tree "$tmp/vdso.fxt.gz" 2>/dev/null | awk '$3 == "work"' | wc -l)
	if [ $rc -eq 0 ] && [ "${calls:-0}" -ge 30 ] && [ "${calls:-0}" -le 33 ]; then
		pass vdso_frameless
	else
		failed vdso_frameless "rc $rc, work counted ${calls:-0} times, truth 30 (30-33 pass)"
	fi
}
