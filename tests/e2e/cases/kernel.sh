# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

kernel_frames() { perf script -i "$1" -F ip,sym,dso 2>/dev/null | grep -c "kernel.kallsyms"; }

t_kernel() {
	local k u
	if [ $root -eq 0 ] && [ "$paranoid" -gt 1 ]; then
		skip kernel_frames "needs root or perf_event_paranoid <= 1"
		return
	fi
	snap kern run -sampling -timer-resolution Sample:2000 -trace-include-kernel -working-directory \
		"$tmp/w_kern" -o "$tmp/kern.fxt.gz" -- "$nest" 1500 0 0 0 1
	snap user run -sampling -timer-resolution Sample:2000 -working-directory "$tmp/w_user" \
		-o "$tmp/user.fxt.gz" -- "$nest" 1500 0 0 0 1
	k=$(kernel_frames "$tmp/w_kern/perf.data")
	u=$(kernel_frames "$tmp/w_user/perf.data")
	if [ "$k" -gt 0 ] && [ "$u" -eq 0 ]; then
		pass kernel_frames
	else
		failed kernel_frames "$k kernel frames with -trace-include-kernel, $u without"
	fi
}

t_kernel_refused() {
	local who=""
	if [ $root -eq 1 ]; then
		command -v setpriv >/dev/null && who="setpriv --reuid=65534 --regid=65534 --clear-groups"
	fi
	if [ "$paranoid" -le 1 ]; then
		skip kernel_refused "perf_event_paranoid is $paranoid: non-root users may trace the kernel"
		return
	fi
	if [ $root -eq 1 ] && [ -z "$who" ]; then
		skip kernel_refused "no setpriv to drop root"
		return
	fi
	# as nobody: copies a 0700 checkout does not hide, run where nobody may write
	# the default -o (checked before the scope)
	local bin=$snap dir=$PWD
	if [ -n "$who" ]; then
		if ! nobody_copy; then
			skip kernel_refused_non_root "$nobody_why"
			return
		fi
		bin=$nsnap
		dir=$nhome
	fi
	(cd "$dir" && $who "$bin" run -trace-include-kernel -- true) >"$tmp/kref.out" 2>"$tmp/kref.err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q "snaptrace run: -trace-include-kernel needs root or kernel.perf_event_paranoid <= 1 (now $paranoid); run as root or: sudo sysctl kernel.perf_event_paranoid=1" "$tmp/kref.err"; then
		pass kernel_refused_non_root
	else
		failed kernel_refused_non_root "rc $rc: $(head -2 "$tmp/kref.err")"
	fi
}
