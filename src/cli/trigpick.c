// SPDX-License-Identifier: GPL-2.0
/* The -trigger ? and -trigger line:? pickers. See trigpick.h. */
#include "cli/trigpick.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/picker.h"
#include "record/dwline.h"
#include "record/elfsym.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/file.h"
#include "util/vec.h"
static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Collects the unique FUNC symbol names of exe (borrowed from the mapping). */
static int list_funcs(const void *buf, size_t len, const char ***out, size_t *n)
{
	struct snap_elf e;
	struct snap_elfsym sym;
	uint64_t cur = 0;
	const char **v = NULL;
	size_t cap = 0, k = 0;

	*out = NULL;
	*n = 0;
	if (snap_elf_open(&e, buf, len) < 0)
		return -SNAP_EFORMAT;
	while (snap_elf_sym_next(&e, &cur, &sym) == 1) {
		if (!snap_elfsym_is_func(&sym) || !sym.value || !sym.name[0])
			continue;
		if (snap_vec_reserve(&v, &cap, k + 1, sizeof(*v)) < 0) {
			snap_free(v);
			return -ENOMEM;
		}
		v[k++] = sym.name;
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_cstr);
	*n = 0;
	for (size_t i = 0; i < k; i++)
		if (!*n || strcmp(v[*n - 1], v[i]))
			v[(*n)++] = v[i];
	*out = v;
	return 0;
}

/* A numbered list on stderr, the answer read from the terminal. */
static char *pick_numbered(const char **names, size_t n)
{
	FILE *tty = fopen("/dev/tty", "re");
	char line[512];
	char *end;
	unsigned long k;

	if (!tty) {
		fputs("snaptrace: -trigger ? needs a terminal (or install fzf)\n", stderr);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%6zu  %s\n", i + 1, names[i]);
	fprintf(stderr, "trigger: number or name (empty to cancel): ");
	if (!fgets(line, sizeof(line), tty)) {
		fclose(tty);
		return NULL;
	}
	fclose(tty);
	line[strcspn(line, "\n")] = '\0';
	if (!line[0])
		return NULL;
	k = strtoul(line, &end, 10);
	if (!*end && k >= 1 && k <= n)
		return snap_strndup(names[k - 1], strlen(names[k - 1]));
	return snap_strndup(line, strlen(line));
}

int snap_trigpick_symbol(const char *cmd, int has_fzf, const char *exe, char **owned,
			 const char **trigger)
{
	const void *buf;
	size_t len, n;
	const char **names;
	char *choice;
	int err = snap_file_map(exe, &buf, &len);

	if (err < 0) {
		fprintf(stderr, "snaptrace %s: -trigger ?: cannot read %s: %s\n", cmd, exe,
			strerror(-err));
		return 1;
	}
	err = list_funcs(buf, len, &names, &n);
	if (err < 0 || !n) {
		fprintf(stderr, "snaptrace %s: -trigger ?: %s has no function symbols\n", cmd, exe);
		snap_file_unmap(buf, len);
		snap_free(names);
		return 1;
	}
	choice = has_fzf ? snap_pick_fzf("trigger> ", (const char *const *)names, n)
			 : pick_numbered(names, n);
	snap_free(names);
	snap_file_unmap(buf, len);
	if (!choice) {
		fprintf(stderr, "snaptrace %s: no trigger chosen\n", cmd);
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
	long n;
	int err = snap_dwline_open(exe, &d);

	if (err < 0) {
		fprintf(stderr, "snaptrace %s: -trigger line:?: %s: %s\n", cmd, exe,
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
		fprintf(stderr, "snaptrace %s: no trigger line chosen%s%s\n", cmd,
			n > 0 && why[0] ? ": " : "", n > 0 ? why : "");
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
