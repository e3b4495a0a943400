#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Contracts stay next to their functions (tests/contracts/contracts.py): every public
# prototype in a header under src/ has its comment directly above it, and no contract
# stands above another comment instead of its function. First the checker's own test: a
# made-up header and source with each fault must be reported. SKIP_DIRS (directories
# under src/, space-separated) would leave some out, their findings counted in a SKIP
# line; none is left out. Prints PASS/FAIL/SKIP lines.
set -u
cd "$(dirname "$0")/../.." || exit 1
if ! command -v python3 >/dev/null; then
	echo "SKIP contracts: python3 not found (tests/deps.sh install)"
	exit 0
fi
SKIP_DIRS=""
check=tests/contracts/contracts.py
tmp=$(mktemp -d /tmp/snaptrace-contracts.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0

cat >"$tmp/bad.h" <<'C'
/* Opens x. Returns 0 or -errno. */
int snap_x_open(const char *path);

int snap_x_orphan(void);
/* Reads from x. Returns the count. */
int snap_x_read(void *buf);
int snap_x_close(void);
/* init: an empty y; fini frees it. */
void snap_y_init(void);
void snap_y_fini(void);
int snap_y_get(int k); /* the value of k */
C
cat >"$tmp/bad.c" <<'C'
/* Parses the flags. Returns 0 or 2. */
/* What parse fills. */
struct cli {
	int x;
};
C
python3 "$check" "$tmp/bad.h" "$tmp/bad.c" >"$tmp/self" 2>&1
want="bad.h:4: snap_x_orphan has no comment
bad.h:7: snap_x_close follows another prototype whose comment does not name it
bad.c:1: this contract stands above another comment"
ok=1
while IFS= read -r w; do
	grep -q "$w" "$tmp/self" || ok=0
done <<<"$want"
if [ $ok = 1 ] && [ "$(wc -l <"$tmp/self")" = 3 ]; then
	echo "PASS contracts/selftest (the three faults of a made-up header and source found, no more)"
else
	echo "FAIL contracts/selftest: $(tr '\n' ' ' <"$tmp/self")"
	fail=1
fi

files=()
skipped=()
while IFS= read -r f; do
	case " $SKIP_DIRS " in
	*" ${f%/*} "*) skipped+=("$f") ;;
	*) files+=("$f") ;;
	esac
done < <(find src -name '*.[ch]' | sort)
if python3 "$check" "${files[@]}" >"$tmp/out" 2>&1; then
	echo "PASS contracts/src (${#files[@]} files: every public prototype has its contract above it)"
else
	while IFS= read -r l; do echo "FAIL contracts/$l"; done <"$tmp/out"
	fail=1
fi
if [ ${#skipped[@]} -gt 0 ]; then
	python3 "$check" "${skipped[@]}" >"$tmp/skipped" 2>&1
	echo "SKIP contracts/$SKIP_DIRS: left out while it is restructured; $(wc -l <"$tmp/skipped") finding(s) there"
fi
exit $fail
