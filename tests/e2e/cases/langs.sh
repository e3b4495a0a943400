# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.
#
# The languages users bring (tests/e2e/progs/lang): a C++ program (namespaces, a
# template, a lambda: mangled names), a Rust one (legacy mangling with a per-build
# hash), a Go one and C built with clang (DWARF 5 and 4; neither Go nor clang
# writes .debug_aranges), each built here with -g. Their slices carry the source
# position of the function (file as perf script -F ip,sym,srcline names it, line
# of the definition); -trigger fires by demangled name, by a Rust path without
# its hash and by FILE:LINE; the picker lists demangled names. A compiler that
# is missing skips its tests, saying so.

lang_src=$PWD/tests/e2e/progs/lang

# lang_build NAME: builds $tmp/lang/NAME (cxx, rs, go, clang5, clang4) once.
# Returns 1 (and sets $lang_why) when its compiler is missing or fails.
lang_build() {
	local n=$1 out=$tmp/lang/$1 rustc dw=""
	mkdir -p "$tmp/lang"
	[ -x "$out" ] && return 0
	lang_why=""
	case $n in
	cxx)
		command -v g++ >/dev/null || { lang_why="g++ is not installed"; return 1; }
		g++ -O0 -g -fno-omit-frame-pointer -o "$out" "$lang_src/cxx.cc" 2>"$out.log" ;;
	rs)
		rustc=$(command -v rustc || echo "$HOME/.cargo/bin/rustc")
		[ -x "$rustc" ] || { lang_why="rustc is not installed (apt-get install rustc)"; return 1; }
		"$rustc" -g -C force-frame-pointers=yes -o "$out" "$lang_src/rs.rs" 2>"$out.log" ;;
	go)
		command -v go >/dev/null || { lang_why="go is not installed (apt-get install golang-go)"; return 1; }
		(cd "$tmp/lang" && GOCACHE=$tmp/lang/gocache GOPATH=$tmp/lang/gopath GOFLAGS='' \
			go build -gcflags=all=-l -o "$out" "$lang_src/go.go") 2>"$out.log" ;;
	clang5 | clang4)
		command -v clang >/dev/null || { lang_why="clang is not installed"; return 1; }
		# clang 14 writes DWARF 5 by default
		[ "$n" = clang4 ] && dw=-gdwarf-4
		clang -O0 -g ${dw:+"$dw"} -fno-omit-frame-pointer -pthread \
			-o "$out" tests/e2e/progs/nest.c 2>"$out.log" ;;
	esac
	[ -x "$out" ] && return 0
	lang_why="building $n failed: $(head -2 "$out.log" | tr '\n' ' ')"
	return 1
}
# def_line FILE REGEX: the line number of the first line matching REGEX.
def_line() { grep -n -E "$2" "$1" | head -1 | cut -d: -f1; }

# slice_pos FXT NAME: "LINE FILE" of the first slice named NAME that has them.
slice_pos() {
	"$snap" dump "$1" 2>/dev/null | grep -F "name=\"$2\" args=" | grep ' line=' | head -1 |
		sed -n 's/.* line=\([0-9]*\),.* file="\([^"]*\)".*/\1 \2/p'
}

# perf_srclines DATA NAME: "FILE MINLINE": the file perf script -F ip,sym,srcline
# gives NAME's frames and the lowest line a sample of NAME was at.
perf_srclines() {
	perf script -i "$1" -F ip,sym,srcline 2>/dev/null | awk -v want="$2" '
		$1 ~ /^[0-9a-f]+$/ && NF == 2 && $2 == want { if ((getline l) > 0) {
			sub(/^[ \t]+/, "", l); n = split(l, p, ":")
			if (p[n] ~ /^[0-9]+$/ && p[n] > 0 && (min == "" || p[n] + 0 < min)) { min = p[n] + 0; f = p[1] } } }
		END { if (f != "") print f, min }'
}

# lang_positions TEST NAME SRC 'FUNC|REGEX'...: records NAME, and checks that
# each FUNC's slices carry the file perf names for its samples and a line from
# the one matching REGEX (its signature) to the lowest a sample of it was at.
lang_positions() {
	local t=$1 n=$2 src=$3 w=$tmp/w_$1 bad="" fr fn re def got pf
	shift 3
	if ! lang_build "$n"; then
		skip "$t" "$lang_why"
		return
	fi
	snap "$t" run -sampling -timer-resolution Sample:2000 -working-directory "$w" \
		-o "$tmp/$t.fxt.gz" -- "$tmp/lang/$n" 6000
	if [ $rc -ne 0 ] || [ ! -s "$tmp/$t.fxt.gz" ]; then
		failed "$t" "run failed (rc $rc): $(tail -2 "$tmp/$t.err" | tr '\n' ' ')"
		return
	fi
	for fr in "$@"; do
		fn=${fr%%|*}
		re=${fr#*|}
		def=$(def_line "$src" "$re")
		got=$(slice_pos "$tmp/$t.fxt.gz" "$fn")
		pf=$(perf_srclines "$w/perf.data" "$fn")
		if [ -z "$pf" ]; then
			bad="$bad; $fn: perf script gives no srcline"
		elif [ -z "$got" ]; then
			bad="$bad; $fn: no slice with file/line (perf: $pf)"
		elif [ "${got%% *}" -lt "$def" ] || [ "${got%% *}" -gt "${pf#* }" ] ||
			[ "$(basename "${got#* }")" != "${pf%% *}" ]; then
			bad="$bad; $fn: line/file '$got', want $(basename "$src") from line $def to ${pf#* } (perf: $pf)"
		fi
	done
	if [ -z "$bad" ]; then
		pass "$t"
	else
		failed "$t" "${bad#; }"
	fi
}

# lang_trigger TEST NAME SEL SHOWN: -trigger SEL on NAME fires, and the hit is
# named SHOWN (demangled) in the log and on the timeline.
lang_trigger() {
	local t=$1 n=$2 sel=$3 shown=$4
	if ! lang_build "$n"; then
		skip "$t" "$lang_why"
		return
	fi
	snap "$t" run -sampling -timer-resolution Sample:2000 -trigger "$sel" \
		-working-directory "$tmp/w_$t" -o "$tmp/$t.fxt.gz" -- "$tmp/lang/$n" 6000 3000
	if [ $rc -eq 0 ] && grep -qF "trigger $shown hit" "$tmp/$t.err" &&
		"$snap" dump "$tmp/$t.fxt.gz" 2>/dev/null | grep -qF "name=\"hit $shown\""; then
		pass "$t"
	else
		failed "$t" "-trigger $sel (rc $rc): $(grep -v '^ready' "$tmp/$t.err" | tail -2 | tr '\n' ' ')"
	fi
}

t_lang_positions() {
	lang_positions lang_cxx_positions cxx "$lang_src/cxx.cc" \
		'app::detail::spin<long>|T spin\(T n\)' 'app::worker::step|void step\(int i\)' \
		'app::worker::step(int)::{lambda(int)#1}::operator()|auto body' 'main|^int main'
	lang_positions lang_rust_positions rs "$lang_src/rs.rs" 'rs::words::spin|pub fn spin' \
		'rs::main|^fn main'
	lang_positions lang_go_positions go "$lang_src/go.go" 'main.spin|^func spin'
	lang_positions lang_clang5_positions clang5 tests/e2e/progs/nest.c \
		'leaf|void leaf\(void\)' 'outer|void outer\(void\)'
	lang_positions lang_clang4_positions clang4 tests/e2e/progs/nest.c \
		'leaf|void leaf\(void\)' 'outer|void outer\(void\)'
}

t_lang_triggers() {
	local l mangled
	lang_trigger lang_cxx_trigger_demangled cxx app::detail::count_words app::detail::count_words
	lang_trigger lang_cxx_trigger_short cxx symbol:count_words app::detail::count_words
	if lang_build cxx; then
		mangled=$(nm "$tmp/lang/cxx" | awk '$3 ~ /count_words/ { print $3; exit }')
		lang_trigger lang_cxx_trigger_mangled cxx "$mangled" app::detail::count_words
	fi
	# FILE:LINE: a line of each function's body
	l=$(def_line "$lang_src/cxx.cc" "n \\+= \\*s == ' '")
	lang_trigger lang_cxx_trigger_line cxx "cxx.cc:$l" "cxx.cc:$l"
	lang_trigger lang_rust_trigger_path rs rs::words::count_words rs::words::count_words
	l=$(def_line "$lang_src/rs.rs" "s.split\\(' '\\)")
	lang_trigger lang_rust_trigger_line rs "rs.rs:$l" "rs.rs:$l"
	lang_trigger lang_go_trigger go main.countWords main.countWords
	l=$(def_line "$lang_src/go.go" 'return len\(strings.Fields')
	lang_trigger lang_go_trigger_line go "go.go:$l" "go.go:$l"
	l=$(($(def_line tests/e2e/progs/nest.c 'void trigger_here') + 2)) # sink += i;
	lang_trigger lang_clang_trigger_line clang5 "nest.c:$l" "nest.c:$l"
}

# -trigger ? on C++: demangled names, no start-up code or .cold parts; a unique
# part of a name is taken.
t_lang_picker() {
	if ! command -v script >/dev/null || command -v fzf >/dev/null; then
		skip lang_picker "needs script(1) for a terminal, and no fzf (the list picker)"
		return
	fi
	if ! lang_build cxx; then
		skip lang_picker "$lang_why"
		return
	fi
	(sleep 0.5; printf 'count_w\n') | timeout -s KILL 30 script -qec \
		"$snap run -sampling -trigger '?' -working-directory $tmp/w_lpick -o $tmp/lpick.fxt.gz -- $tmp/lang/cxx 6000 3000" \
		/dev/null 2>&1 | tr -d '\r' >"$tmp/lpick.out"
	if grep -qE '^ +[0-9]+  app::detail::count_words$' "$tmp/lpick.out" &&
		grep -qE '^ +[0-9]+  app::detail::spin<long>$' "$tmp/lpick.out" &&
		! grep -qE '^ +[0-9]+  (_Z|_init$|_start$|frame_dummy$|register_tm_clones$)' "$tmp/lpick.out" &&
		grep -q "trigger app::detail::count_words hit" "$tmp/lpick.out"; then
		pass lang_picker
	else
		failed lang_picker "$(grep -v '^ready' "$tmp/lpick.out" | head -12 | tr '\n' '|')"
	fi
}

# attach's process picker: text that several lines contain shows those lines and
# asks again.
t_lang_attach_several() {
	local p1 p2
	if ! command -v script >/dev/null || command -v fzf >/dev/null; then
		skip attach_picker_several "needs script(1) for a terminal, and no fzf (the list picker)"
		return
	fi
	sleep 30.5123401 &
	p1=$!
	sleep 30.5123402 &
	p2=$!
	bgpids+=("$p1" "$p2")
	(sleep 0.5; printf '30.51234\n'; sleep 0.5; printf '\n') | timeout -s KILL 30 script -qec \
		"$snap attach -sampling -o $tmp/lsev.fxt.gz" /dev/null 2>&1 | tr -d '\r' >"$tmp/lsev.out"
	kill "$p1" "$p2" 2>/dev/null
	if sed -n '/2 lines match/,$p' "$tmp/lsev.out" | grep -q "^ *[0-9]*  *$p1 *sleep 30.5123401" &&
		sed -n '/2 lines match/,$p' "$tmp/lsev.out" | grep -q "$p2 *sleep 30.5123402" &&
		grep -q "no process chosen: cancelled" "$tmp/lsev.out"; then
		pass attach_picker_several
	else
		failed attach_picker_several "$(grep -v '^ *[0-9]* ' "$tmp/lsev.out" | tail -4 | tr '\n' '|')"
	fi
}

# decode: perf script runs with --no-inline, and while it prints nothing the
# progress line says what it does from the first second on (a perf that waits
# 2.5 s before it starts stands in for one resolving a large C++ program).
t_lang_decode_progress() {
	local w=$tmp/w_lprog
	if ! command -v script >/dev/null; then
		skip decode_progress "needs script(1) for a terminal"
		return
	fi
	snap lprog run -sampling -working-directory "$w" -o "$tmp/lprog.fxt.gz" -- "$nest" 1000
	if [ ! -s "$w/perf.data" ]; then
		failed decode_progress "no recording (rc $rc): $(tail -2 "$tmp/lprog.err" | tr '\n' ' ')"
		return
	fi
	cat >"$tmp/slowperf" <<SH
#!/bin/sh
if [ "\$1" = script ]; then echo "\$*" >>$tmp/slowperf.log; sleep 2.5; fi
exec perf "\$@"
SH
	chmod +x "$tmp/slowperf"
	timeout -s KILL 60 script -qec \
		"SNAPTRACE_PERF=$tmp/slowperf $snap decode -o $tmp/lprog2.fxt $w/perf.data" /dev/null \
		</dev/null 2>&1 | tr '\r' '\n' >"$tmp/lprog2.out"
	if grep -q -- '--no-inline' "$tmp/slowperf.log" &&
		grep -q 'snaptrace: perf script: resolving symbols.*no event yet, [12] s' "$tmp/lprog2.out" &&
		[ -s "$tmp/lprog2.fxt" ]; then
		pass decode_progress
	else
		failed decode_progress "perf: $(head -1 "$tmp/slowperf.log" 2>/dev/null); out: $(grep -v '^$' "$tmp/lprog2.out" | head -3 | tr '\n' '|')"
	fi
}
