#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# funcoffs.sh BIN: the file offsets of BIN's functions, as perf names stripped code
# in call chains (its "mapped" address, docs/sampling.md): every text symbol's
# address from `nm` (or, with -fde, every FDE start from `readelf --debug-dump=frames`),
# converted from virtual address to file offset through the PT_LOAD headers
# (`readelf -l`). One lowercase hex number a line, no 0x, sorted and unique; with
# -names, "OFFSET NAME" lines (nm mode).
set -eu
mode=nm names=0
if [ "${1:-}" = -fde ]; then
	mode=fde
	shift
elif [ "${1:-}" = -names ]; then
	names=1
	shift
fi
bin=$1
{
	readelf -lW "$bin" | awk '$1 == "LOAD" { print "L", $2, $3, $5 }'
	if [ $mode = nm ]; then
		nm --defined-only "$bin" | awk '$2 ~ /^[Tt]$/ { print "A", $1, $3 }'
	else
		readelf --debug-dump=frames "$bin" 2>/dev/null |
			sed -n 's/.* FDE cie=[0-9a-f]* pc=\([0-9a-f]*\)\.\..*/A \1/p'
	fi
} | awk -v names=$names '
	function hex(s,   i, c, v) {
		sub(/^0x/, "", s); v = 0
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
			v = v * 16 + c
		}
		return v
	}
	$1 == "L" { off[n] = hex($2); va[n] = hex($3); sz[n] = hex($4); n++; next }
	$1 == "A" {
		a = hex($2)
		for (i = 0; i < n; i++)
			if (a >= va[i] && a < va[i] + sz[i]) {
				printf "%x%s\n", a - va[i] + off[i], names ? " " $3 : ""
				break
			}
	}' | sort -u
