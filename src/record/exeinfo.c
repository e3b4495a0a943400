// SPDX-License-Identifier: GPL-2.0
/* What decoding takes from the traced executable. See exeinfo.h. */
#include "record/exeinfo.h"

#include <stdlib.h>
#include <string.h>

#include "util/file.h"
#include "util/log.h"

static int env_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

int snap_exeinfo_load(struct snap_exeinfo *x, const char *path)
{
	int err;

	memset(x, 0, sizeof(*x));
	err = snap_file_map(path, &x->buf, &x->len);
	if (err < 0) {
		x->buf = NULL;
		return err;
	}
	if (snap_elf_open(&x->elf, x->buf, x->len, 0) < 0)
		return 0;
	if (env_set("MAGIC_TRACE_NO_OCAML_EXCEPTION_DEBUG_INFO") ||
	    env_set("SNAPTRACE_NO_OCAML_EXCEPTION_DEBUG_INFO"))
		return 0;
	err = snap_ocaml_traps_read(&x->elf, &x->eh);
	if (err < 0)
		return err;
	if (err > 0) {
		x->have_eh = 1;
		snap_info("%s: OCaml exception notes: %zu handlers, %zu try blocks", path,
			  x->eh.nenter, x->eh.npush);
	}
	return 0;
}

void snap_exeinfo_fini(struct snap_exeinfo *x)
{
	snap_ocaml_traps_free(&x->eh);
	snap_file_unmap(x->buf, x->len);
	memset(x, 0, sizeof(*x));
}
