// SPDX-License-Identifier: GPL-2.0
/* The -trigger ? and -trigger line:? pickers. See trigpick.h. */
#include "cli/trigpick.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/picker.h"
#include "record/dwline.h"
#include "record/elfsym.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/esc.h"
#include "util/file.h"
#include "util/vec.h"
static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Code every executable has that nobody means as a trigger: the C runtime's
 * start-up and tear-down, static constructors, gcc's cold parts. */
static int internal_func(const char *n)
{
	static const char *const exact[] = {"_init",
					    "_fini",
					    "_start",
					    "_dl_relocate_static_pie",
					    "deregister_tm_clones",
					    "register_tm_clones",
					    "__do_global_dtors_aux",
					    "frame_dummy",
					    "__libc_csu_init",
					    "__libc_csu_fini",
					    "_dl_start",
					    "_dl_start_user"};
	static const char *const prefix[] = {"_GLOBAL__sub_I_", "_GLOBAL__I_", "__x86.get_pc_thunk",
					     "_ZL41__static_initialization_and_destruction",
					     "__static_initialization_and_destruction"};

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(n, exact[i]))
			return 1;
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (!strncmp(n, prefix[i], strlen(prefix[i])))
			return 1;
	return strstr(n, ".cold") != NULL;
}

struct func {
	char *name; /* owned: as listed */
	const char *raw;
	uint64_t value;
};

static int cmp_func(const void *a, const void *b)
{
	return strcmp(((const struct func *)a)->name, ((const struct func *)b)->name);
}

static char *display(const char *raw, int params)
{
	char *dem = snap_elfsym_demangle(raw, params);

	return dem ? dem : strdup(raw);
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	snap_free(v);
}

/*
 * The functions of exe as perf shows them (demangled, record/elfsym.h),
 * without internal_func ones, sorted and unique; overloads, which share that
 * name, are listed with their parameters. Owned strings (free_names).
 */
static int list_funcs(const void *buf, size_t len, char ***out, size_t *n)
{
	struct snap_elf e;
	struct snap_elfsym sym;
	uint64_t cur = 0;
	struct func *f = NULL;
	char **v = NULL;
	size_t cap = 0, nf = 0, k = 0;
	int err = -ENOMEM;

	*out = NULL;
	*n = 0;
	if (snap_elf_open(&e, buf, len, 0) < 0)
		return -SNAP_EFORMAT;
	while (snap_elfsym_next(&e, &cur, &sym) == 1) {
		if (!snap_elfsym_is_func(&sym) || !sym.value || !sym.name[0] ||
		    internal_func(sym.name))
			continue;
		if (snap_vec_reserve(&f, &cap, nf + 1, sizeof(*f)) < 0 ||
		    !(f[nf].name = display(sym.name, 0)))
			goto out;
		f[nf].raw = sym.name;
		f[nf++].value = sym.value;
	}
	if (nf)
		qsort(f, nf, sizeof(*f), cmp_func);
	/* names shown for functions at several addresses: with their parameters */
	for (size_t i = 0, j; i < nf; i = j) {
		int same = 1;

		for (j = i + 1; j < nf && !strcmp(f[i].name, f[j].name); j++)
			same &= f[j].value == f[i].value;
		for (size_t m = i; !same && m < j; m++) {
			char *p = display(f[m].raw, 1);

			if (!p)
				goto out;
			free(f[m].name);
			f[m].name = p;
		}
	}
	v = snap_calloc(nf ? nf : 1, sizeof(*v));
	if (!v)
		goto out;
	for (size_t i = 0; i < nf; i++) {
		v[i] = f[i].name;
		f[i].name = NULL;
	}
	if (nf)
		qsort(v, nf, sizeof(*v), cmp_cstr);
	for (size_t i = 0; i < nf; i++) {
		if (k && !strcmp(v[k - 1], v[i]))
			free(v[i]);
		else
			v[k++] = v[i];
	}
	*n = k;
	*out = v;
	err = 0;
out:
	for (size_t i = 0; i < nf; i++)
		free(f[i].name);
	snap_free(f);
	return err;
}

/* The fix after a picker that could not ask (no terminal): name the trigger. */
static const char *ask_fix(const char *why)
{
	return why && (strstr(why, "terminal") != NULL)
		       ? "; name it instead: -trigger SYMBOL or -trigger FILE:LINE"
		       : "";
}

int snap_trigpick_symbol(const char *cmd, int has_fzf, const char *exe, char **owned,
			 const char **trigger)
{
	const void *buf;
	size_t len, n;
	char **names;
	char *choice;
	const char *why = "";
	char shown[PATH_MAX]; /* (attach: another user's file name, escaped) */
	int err = snap_file_map(exe, &buf, &len);

	snap_esc_str(shown, sizeof(shown), exe, strlen(exe), 0);
	if (err < 0) {
		fprintf(stderr, "snaptrace %s: -trigger ?: cannot read %s: %s\n", cmd, shown,
			strerror(-err));
		return 1;
	}
	err = list_funcs(buf, len, &names, &n);
	if (err < 0 || !n) {
		fprintf(stderr, "snaptrace %s: -trigger ?: %s has no function symbols\n", cmd,
			shown);
		snap_file_unmap(buf, len);
		free_names(names, n);
		return 1;
	}
	snap_file_unmap(buf, len);
	if (has_fzf)
		choice = snap_pick_fzf("trigger> ", (const char *const *)names, n);
	else
		choice = snap_pick_numbered("trigger: number or name (or a part of one; empty to "
					    "cancel): ",
					    (const char *const *)names, n, 1, &why);
	free_names(names, n);
	if (!choice) {
		fprintf(stderr, "snaptrace %s: no trigger chosen%s%s%s%s\n", cmd,
			why[0] ? " (" : "", why, why[0] ? ")" : "", ask_fix(why));
		return 1;
	}
	*owned = choice;
	*trigger = choice;
	return 0;
}

/* -trigger line:?: a FILE:LINE:COL of the executable's line table. */
int snap_trigpick_line(const char *cmd, const char *exe, char **owned, const char **trigger)
{
	struct snap_dwline *d;
	char **lines = NULL, *choice;
	const char *why;
	char shown[PATH_MAX];
	long n;
	int err = snap_dwline_open(exe, &d);

	snap_esc_str(shown, sizeof(shown), exe, strlen(exe), 0);
	if (err < 0) {
		fprintf(stderr, "snaptrace %s: -trigger line:?: %s: %s\n", cmd, shown,
			err == -SNAP_EFORMAT ? "no line information (build it with -g)"
					     : snap_strerror(err));
		return 1;
	}
	n = snap_dwline_list(d, &lines);
	snap_dwline_close(d);
	choice = n > 0 ? snap_pick("line> ", (const char *const *)lines, (size_t)n, &why) : NULL;
	for (long i = 0; i < n; i++)
		free(lines[i]);
	snap_free(lines);
	if (!choice) {
		fprintf(stderr, "snaptrace %s: no trigger line chosen%s%s%s\n", cmd,
			n > 0 && why[0] ? ": " : "", n > 0 ? why : "", n > 0 ? ask_fix(why) : "");
		return 1;
	}
	*owned = snap_malloc(strlen(choice) + 6);
	if (!*owned) {
		snap_free(choice);
		return 1;
	}
	snprintf(*owned, strlen(choice) + 6, "line:%s", choice);
	snap_free(choice);
	*trigger = *owned;
	return 0;
}
