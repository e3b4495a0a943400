# SPDX-License-Identifier: GPL-2.0
# Sourced by run.sh after files.sh: session 30's attacks of another local user on
# root's run (docs/guarantees.md): directories of that user above a
# -working-directory, its names and perf's stderr on root's terminal, files it
# can truncate while snaptrace reads them. Uses run.sh's and files.sh's helpers.

# A directory of another user (or its link in a sticky directory) anywhere above a
# -working-directory is refused: perf writes there by name, and that user could swap
# what is below it for a link (root's perf.data then lands where the link points).
# Root's own directories keep working, also named relatively.
t_workdir_path() {
	local d=$tmp/wdp
	if [ $root -eq 0 ]; then
		skip workdir_path "needs root (a directory of another user)"
		return
	fi
	need_perf workdir_path || return
	mkdir -p "$d/m/sub/wd" "$d/own"
	chown nobody "$d/m" # nobody's directory, root's sub/wd below it
	sticky_dir "$d/st"
	ln -s "$d/own" "$d/st/lk"
	chown -h nobody "$d/st/lk" # nobody's link in a sticky directory
	snap wp1 run -sampling -working-directory "$d/m/sub/wd" -o "$d/x.fxt" -- true
	if [ $rc -eq 0 ] || ! grep -q "is under $d/m, a directory of another user" "$tmp/wp1.err" ||
		[ -n "$(ls "$d/m/sub/wd")" ] || [ -e "$d/x.fxt" ]; then
		failed workdir_path "nobody's directory above: rc $rc: $(head -2 "$tmp/wp1.err"); left: $(ls "$d/m/sub/wd")"
		return
	fi
	snap wp2 run -sampling -working-directory "$d/st/lk/wd" -o "$d/x.fxt" -- true
	if [ $rc -eq 0 ] || ! grep -q "is under $d/st/lk, a symbolic link of another user" "$tmp/wp2.err" ||
		[ -e "$d/own/wd" ]; then
		failed workdir_path "nobody's link above: rc $rc: $(head -2 "$tmp/wp2.err")"
		return
	fi
	(cd "$d/own" && snap wp3 run -sampling -working-directory rel/ -o "$d/x.fxt" -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done')
	if [ ! -e "$d/own/rel/perf.data" ] || grep -q "another user" "$tmp/wp3.err"; then
		failed workdir_path "root's own directory: $(head -2 "$tmp/wp3.err")"
		return
	fi
	pass workdir_path
}

# HARDEN_ONLY=NAME runs only t_NAME of these.
for t in workdir_path; do
	[ -z "${HARDEN_ONLY:-}" ] || [ "$HARDEN_ONLY" = $t ] || continue
	t_$t
done
