# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# cfi_unknown_starts FXT DSO: the START of every "[unknown @ 0xSTART (DSO)]" name
# in the trace (hex, no 0x), sorted and unique.
cfi_unknown_starts() {
	"$snap" dump "$1" 2>/dev/null | grep -oF "($2)]" >/dev/null || return 0
	"$snap" dump "$1" 2>/dev/null | grep -o '\[unknown @ 0x[0-9a-f]* ([^)]*)\]' |
		grep -F "($2)]" | sed 's/^\[unknown @ 0x\([0-9a-f]*\) .*/\1/' | sort -u
}

# Stripped code is named after the function around it (docs/sampling.md): a
# stripped copy of stripfn (no PIE, so file offsets are not addresses), every
# unknown frame's start a real function start (nm of the unstripped program, in
# perf's terms: file offsets), and spin_long's one long call one slice however
# many samples it has, on both decode paths.
t_cfi_names() {
	local bin=$tmp/stripfn w=$tmp/w_cfi p starts bad spin spin_end n ns
	if ! command -v strip >/dev/null || ! command -v nm >/dev/null ||
		! command -v readelf >/dev/null; then
		skip cfi_names "binutils (strip, nm, readelf) not installed"
		return
	fi
	cp "$progs/stripfn" "$bin" && strip "$bin"
	tests/progs/funcoffs.sh -names "$progs/stripfn" >"$tmp/cfi_funcs"
	spin=$(awk '$2 == "spin_long" { print $1 }' "$tmp/cfi_funcs")
	spin_end=$(awk -v s="$spin" 'f { print $1; exit } $1 == s { f = 1 }' "$tmp/cfi_funcs")
	# an empty build-id cache (~/.debug): perf must not find the unstripped program there
	mkdir -p "$tmp/cfihome"
	HOME=$tmp/cfihome snap cfi run -sampling -callgraph-mode fp \
		-timer-resolution Sample:2000 -full-execution -working-directory "$w" \
		-o "$tmp/cfi.fxt.gz" -- "$bin" 150
	if [ $rc -ne 0 ] || [ ! -s "$w/perf.data" ]; then
		failed cfi_names "run failed (rc $rc): $(grep -v '^snaptrace: \(no Intel\|finished\)' "$tmp/cfi.err" | head -3)"
		return
	fi
	# samples whose leaf is in spin_long: [spin, spin_end) in file offsets
	ns=$(perf script -i "$w/perf.data" -F ip 2>/dev/null | awk -v a="$spin" -v b="$spin_end" '
		function hex(s,   i, v) { v = 0; for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
		BEGIN { lo = hex(a); hi = hex(b) }
		/^[ \t]*$/ { leaf = 1; next }
		leaf { leaf = 0; x = hex($1); if (x >= lo && x < hi) n++ }
		END { print n + 0 }' leaf=1)
	HOME=$tmp/cfihome SNAPTRACE_NO_DLFILTER=1 snap cfi-text decode "$w/perf.data" \
		-o "$tmp/cfi-text.fxt.gz"
	for p in cfi cfi-text; do
		starts=$(cfi_unknown_starts "$tmp/$p.fxt.gz" "$bin")
		bad=$(comm -23 <(echo "$starts") <(cut -d' ' -f1 "$tmp/cfi_funcs" | sort -u))
		if [ -z "$starts" ]; then
			failed "cfi_names_$p" "no [unknown @ ...] frame of $bin: $(head -c 300 "$tmp/$p.err")"
		elif [ -n "$bad" ]; then
			failed "cfi_names_$p" "names not at a function start: $(echo $bad) (functions: $(tr '\n' ' ' <"$tmp/cfi_funcs"))"
		else
			pass "cfi_names_$p"
		fi
		# one call sampled $ns times: one slice, named after spin_long's start
		n=$(slices "$tmp/$p.fxt.gz" | awk -v s="[unknown @ 0x$spin ($bin)]" '
			{ ch = $0; sub(/^[^ ]* [^ ]* /, "", ch); k = split(ch, c, ">") }
			c[k] == s { n++ } END { print n + 0 }')
		if [ "$ns" -lt 20 ]; then
			skip "cfi_one_call_one_slice_$p" "only $ns samples in spin_long"
		elif [ "$n" = 1 ]; then
			pass "cfi_one_call_one_slice_$p"
		else
			failed "cfi_one_call_one_slice_$p" "spin_long (0x$spin): $n slices for its one call sampled $ns times; want 1"
		fi
	done
}

# Decoded after the program was replaced by another build: its frames are named
# from the recorded build, which perf keeps in its build-id cache (~/.debug), and
# with no cache they keep per-address names (never another build's functions).
t_cfi_build_id() {
	local bin=$tmp/bidprog home=$tmp/bidhome starts bad
	if ! command -v strip >/dev/null || ! command -v nm >/dev/null ||
		! command -v readelf >/dev/null; then
		skip cfi_build_id "binutils (strip, nm, readelf) not installed"
		return
	fi
	mkdir -p "$home" "$tmp/bidnohome"
	cp "$progs/stripfn" "$bin" && strip "$bin"
	HOME=$home snap bid run -sampling -callgraph-mode fp -timer-resolution Sample:2000 \
		-full-execution -working-directory "$tmp/w_bid" -o "$tmp/bid.fxt.gz" -- "$bin" 100
	if [ $rc -ne 0 ]; then
		failed cfi_build_id "run failed (rc $rc): $(head -3 "$tmp/bid.err")"
		return
	fi
	if [ ! -d "$home/.debug/.build-id" ]; then
		skip cfi_build_id "perf put nothing in its build-id cache $home/.debug"
		return
	fi
	# (a new file, as a linker or a package upgrade makes: perf may have hard-linked the
	# old one into its cache)
	rm -f "$bin" && cp "$progs/stripfn_pad" "$bin" && strip "$bin"
	HOME=$home snap bid2 decode -v "$tmp/w_bid/perf.data" -o "$tmp/bid2.fxt.gz"
	starts=$(cfi_unknown_starts "$tmp/bid2.fxt.gz" "$bin")
	bad=$(comm -23 <(echo "$starts") <(tests/progs/funcoffs.sh "$progs/stripfn"))
	if [ -z "$starts" ] || [ -n "$bad" ] ||
		! grep -q "1 of them found in perf's build-id cache" "$tmp/bid2.err"; then
		failed cfi_build_id_cache "names ${starts:-none} (not function starts of the recorded build: ${bad:-none}): $(grep 'unknown code' "$tmp/bid2.err" | tr '\n' ' ')"
	else
		pass cfi_build_id_cache
	fi
	HOME=$tmp/bidnohome snap bid3 decode -v "$tmp/w_bid/perf.data" -o "$tmp/bid3.fxt.gz"
	if grep -q "0 of them found in perf's build-id cache" "$tmp/bid3.err" &&
		grep -q "from the CFI of 0 of [0-9]* DSO" "$tmp/bid3.err"; then
		pass cfi_build_id_other_build
	else
		failed cfi_build_id_other_build "$(grep 'unknown code' "$tmp/bid3.err" | tr '\n' ' ')"
	fi
}

# The same on Debian's own stripped gzip, without frame pointers (dwarf call
# graphs): every unknown gzip frame starts at an FDE of /usr/bin/gzip.
t_cfi_gzip() {
	local gz starts bad all
	gz=$(command -v gzip 2>/dev/null)
	[ -n "$gz" ] && gz=$(readlink -f "$gz")
	if [ -z "$gz" ] || ! command -v readelf >/dev/null; then
		skip cfi_gzip "gzip or readelf not installed"
		return
	fi
	head -c 2000000 /dev/urandom | base64 >"$tmp/blob"
	snap cfigz run -sampling -callgraph-mode dwarf -timer-resolution Sample:1000 -full-execution \
		-working-directory "$tmp/w_gz" -o "$tmp/gz.fxt.gz" -- "$gz" -k -f "$tmp/blob"
	if [ $rc -ne 0 ]; then
		failed cfi_gzip "run failed (rc $rc): $(grep -v '^snaptrace: \(no Intel\|finished\)' "$tmp/cfigz.err" | head -3)"
		return
	fi
	starts=$(cfi_unknown_starts "$tmp/gz.fxt.gz" "$gz")
	if [ -z "$starts" ]; then
		skip cfi_gzip "no unknown frame of $gz (debug symbols installed?)"
		return
	fi
	all=$(tests/progs/funcoffs.sh -fde "$gz")
	bad=$(comm -23 <(echo "$starts") <(echo "$all"))
	if [ -n "$bad" ]; then
		failed cfi_gzip "names not at an FDE start of $gz: $(echo $bad | head -c 200)"
	else
		pass cfi_gzip
	fi
}
