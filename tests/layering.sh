#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Checks docs/design.md's include rules: each layer includes only the layers below it.
cd "$(dirname "$0")/.."
allowed() {
	case $1 in
	util) echo "util" ;;
	model) echo "util model" ;;
	parse) echo "util model parse" ;;
	ptdec) echo "util model ptdec" ;;
	stack) echo "util model stack" ;;
	write) echo "util model write" ;;
	report) echo "util model write report" ;;
	record) echo "util model parse record" ;;
	source) echo "util model parse ptdec record source" ;;
	cli) echo "util model parse ptdec stack write report record source cli" ;;
	plugin) echo "model plugin" ;;
	esac
}
bad=0
for f in src/*/*.[ch]; do
	layer=$(basename "$(dirname "$f")")
	ok=" $(allowed "$layer") "
	while read -r inc; do
		[ -n "$inc" ] || continue
		case $ok in *" $inc "*) ;; *) echo "FAIL layering: $f includes $inc/"; bad=1 ;; esac
	done < <(sed -n 's|^#include "\([a-z]*\)/.*|\1|p' "$f")
done
# A layer's internal header (stack/bthread.h: the decoder's thread) stays inside its folder.
for f in $(grep -l '^#include "stack/bthread.h"' src/*/*.[ch] tests/*/*.[ch] 2>/dev/null); do
	case $f in src/stack/*) ;; *) echo "FAIL layering: $f includes stack/bthread.h (stack/ only)"; bad=1 ;; esac
done
[ $bad -eq 0 ] && echo "PASS layering: every include follows the layer table"
exit $bad
