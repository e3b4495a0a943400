// SPDX-License-Identifier: GPL-2.0
/* What decoding takes from the traced executable (record/exeinfo): its OCaml
 * exception notes, unless the environment says to ignore them. */
#include <errno.h>
#include <stdlib.h>

#include "record/exeinfo.h"
#include "snap_test.h"
#include "util/log.h"

/* an ELF file with .note.ocaml_eh notes (also a fuzz_elfsym seed) */
#define NOTES "tests/fuzz/corpus/fuzz_elfsym/ocaml_eh_notes"

static void notes_are_read(void)
{
	struct snap_exeinfo x;

	unsetenv("MAGIC_TRACE_NO_OCAML_EXCEPTION_DEBUG_INFO");
	setenv("SNAPTRACE_NO_OCAML_EXCEPTION_DEBUG_INFO", "0", 1); /* "0" is not set */
	CHECK_INT_EQ(0, snap_exeinfo_load(&x, NOTES));
	CHECK_INT_EQ(1, x.have_eh);
	CHECK(x.eh.nenter > 0 && x.eh.npush > 0 && x.eh.enter && x.eh.push);
	for (size_t i = 1; i < x.eh.npush; i++)
		CHECK(x.eh.push[i - 1] < x.eh.push[i]); /* sorted */
	snap_exeinfo_fini(&x);
	CHECK(x.buf == NULL && !x.have_eh);
	snap_exeinfo_fini(&x); /* twice is harmless */
	unsetenv("SNAPTRACE_NO_OCAML_EXCEPTION_DEBUG_INFO");
}

static void environment_ignores_them(void)
{
	static const char *const vars[] = {"MAGIC_TRACE_NO_OCAML_EXCEPTION_DEBUG_INFO",
					   "SNAPTRACE_NO_OCAML_EXCEPTION_DEBUG_INFO"};
	struct snap_exeinfo x;

	for (int i = 0; i < 2; i++) {
		setenv(vars[i], "1", 1);
		CHECK_INT_EQ(0, snap_exeinfo_load(&x, NOTES));
		CHECK_INT_EQ(0, x.have_eh);
		CHECK(x.buf != NULL); /* the file is still mapped */
		snap_exeinfo_fini(&x);
		unsetenv(vars[i]);
	}
}

static void other_files(void)
{
	struct snap_exeinfo x;

	/* not an ELF file: nothing found, not an error */
	CHECK_INT_EQ(0, snap_exeinfo_load(&x, "Makefile"));
	CHECK_INT_EQ(0, x.have_eh);
	snap_exeinfo_fini(&x);
	CHECK_INT_EQ(-ENOENT, snap_exeinfo_load(&x, "/no/such/file"));
	CHECK(x.buf == NULL && !x.have_eh);
	snap_exeinfo_fini(&x);
}

int main(void)
{
	snap_log_level = SNAP_LOG_QUIET;
	RUN(notes_are_read);
	RUN(environment_ignores_them);
	RUN(other_files);
	return snap_test_done();
}
