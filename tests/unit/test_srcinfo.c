// SPDX-License-Identifier: GPL-2.0
/* Source positions for slices (record/srcinfo): this test's own DWARF lines. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/srcinfo.h"
#include "snap_test.h"

int srcinfo_probe(int x);
static const int probe_line = __LINE__ + 1;
__attribute__((noinline, used)) int srcinfo_probe(int x)
{
	return x * 3 + 1;
}

static int lookup(struct snap_srcinfo *si, uint32_t dso, uint32_t sym, uint32_t *file,
		  int32_t *line)
{
	struct snap_loc loc = {.ip = 1, .dso = dso, .sym = sym};
	int32_t col = -1;

	return si->iface.lookup(si->iface.ctx, &loc, file, line, &col);
}

static void own_function_has_its_line(void)
{
	struct snap_strtab st;
	struct snap_srcinfo si;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	uint32_t dso, file = 0;
	int32_t line = 0;
	const char *f;

	CHECK(n > 0);
	if (n <= 0)
		return;
	exe[n] = '\0';
	CHECK_INT_EQ(4, srcinfo_probe(1));
	snap_strtab_init(&st);
	snap_srcinfo_init(&si, &st);
	dso = (uint32_t)snap_strtab_intern_cstr(&st, exe);
	CHECK_INT_EQ(1, lookup(&si, dso, (uint32_t)snap_strtab_intern_cstr(&st, "srcinfo_probe"),
			       &file, &line));
	f = snap_strtab_get(&st, file);
	CHECK(strlen(f) >= 14 && !strcmp(f + strlen(f) - 14, "test_srcinfo.c"));
	/* the function's first line, or (optimised, no prologue) its body's */
	CHECK(line >= probe_line && line <= probe_line + 2);
	CHECK_INT_EQ(1, (long long)si.found);
	/* a name the file has no function of */
	CHECK_INT_EQ(0, lookup(&si, dso, (uint32_t)snap_strtab_intern_cstr(&st, "no_such_fn"),
			       &file, &line));
	CHECK_INT_EQ(1, (long long)si.missing);
	/* the file is opened once for all its functions */
	CHECK_INT_EQ(1, (long long)si.nfiles);
	/* no DSO, no symbol, a DSO that is not a path, or no file: no position */
	CHECK_INT_EQ(0, lookup(&si, 0, 1, &file, &line));
	CHECK_INT_EQ(0, lookup(&si, dso, 0, &file, &line));
	CHECK_INT_EQ(
		0, lookup(&si, (uint32_t)snap_strtab_intern_cstr(&st, "[vdso]"), 1, &file, &line));
	CHECK_INT_EQ(0, lookup(&si, (uint32_t)snap_strtab_intern_cstr(&st, "/no/such/file"), 1,
			       &file, &line));
	CHECK_INT_EQ(1, (long long)si.nfiles);
	CHECK_INT_EQ(1, (long long)si.missing);
	snap_srcinfo_fini(&si);
	CHECK(si.nfiles == 0 && si.files == NULL);
	snap_strtab_fini(&st);
}

int main(void)
{
	RUN(own_function_has_its_line);
	return snap_test_done();
}
