# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

t_doctor() {
	snap doctor doctor
	if [ $rc -le 1 ] && grep -q "Intel PT" "$tmp/doctor.out" && grep -q "kernel tracing" \
		"$tmp/doctor.out"; then
		pass doctor
	else
		failed doctor "rc $rc: $(head -3 "$tmp/doctor.out")"
	fi
}
