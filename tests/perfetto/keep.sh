#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tests/perfetto/keep.sh SUITE DIR: copies every trace (*.fxt, *.fxt.gz) under DIR into
# $SNAP_TRACES_DIR/SUITE, named by its path under DIR ('/' as '_'), for tests/perfetto to
# import; does nothing when SNAP_TRACES_DIR is unset. A suite calls it on its temporary
# directory as it exits (tests/check.sh sets SNAP_TRACES_DIR and runs perfetto after it).
[ -n "${SNAP_TRACES_DIR:-}" ] && [ -d "${2:-}" ] || exit 0
dest=$SNAP_TRACES_DIR/$1
mkdir -p "$dest" || exit 0
find "$2" -type f \( -name '*.fxt' -o -name '*.fxt.gz' \) -size +0 -print0 2>/dev/null |
	while IFS= read -r -d '' f; do
		rel=${f#"$2"/}
		cp "$f" "$dest/${rel//\//_}" 2>/dev/null
	done
exit 0
