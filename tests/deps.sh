#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages snaptrace needs to build, test and trace.
#   tests/deps.sh list [test]      print the missing ones
#   tests/deps.sh install [test]   install them (as root), else print the apt-get line and fail
# "test" adds what only the checks use (.ci/run installs them; make demo does not).
set -u
PKGS="make gcc clang clang-format libclang-rt-14-dev zlib1g-dev libdeflate-dev libipt-dev libiberty-dev libdw-dev libelf-dev libmicrohttpd-dev curl linux-perf binutils python3"
# Only the checks need these: cppcheck (make lint) and libprotobuf32, which Perfetto's
# trace_processor_shell links (tests/perfetto skips without it).
[ "${2:-}" = test ] && PKGS="$PKGS cppcheck libprotobuf32"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
case ${1:-list} in
list) echo "$missing" ;;
install)
	[ -z "$missing" ] && exit 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "snaptrace: missing Debian packages:$missing" >&2
		echo "snaptrace: run: sudo apt-get install -y$missing" >&2
		echo "snaptrace: (installing needs root; nothing was built)" >&2
		exit 1
	fi
	echo "snaptrace: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq $missing >/dev/null
	;;
esac
