# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/golden/run.sh and tests/perfetto/run.sh: how a golden case is decoded.
# golden_case INPUT sets name (e.g. samples/leaf_one_call_one_slice), base (INPUT without
# .txt), args (the decode flags of base.args: shell words, quotes group, e.g. -filter
# "(START STOP)"; @BUILD@ is the build directory, for test programs from tests/progs) and
# envs (base.env: NAME=VALUE words put in the environment of that decode).
golden_case() {
	name=${1#tests/golden/}
	name=${name%.txt}
	base=${1%.txt}
	args=()
	[ -f "$base.args" ] && eval "args=($(<"$base.args"))"
	[ ${#args[@]} -gt 0 ] && args=("${args[@]//@BUILD@/${SNAP_BUILD:-build/default}}")
	envs=()
	[ -f "$base.env" ] && read -r -a envs <"$base.env"
	return 0
}
