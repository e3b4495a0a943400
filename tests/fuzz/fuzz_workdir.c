// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the working-directory listing. The input is a list of names
 * (one a line). They go through the pure filter, and up to 12 of them are
 * created in a private directory (with "perf.data*" trees among them) that
 * snap_workdir_list_dir then lists: only perf.data and perf.data.<digits>
 * ever come back (what snaptrace may remove), in the one time order, and the
 * pure filter agrees with the listing.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/workdir.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define WD_MAX_NAMES 64

static char wd_dir[64];

static void wd_cleanup(void)
{
	snap_rmtree_at(AT_FDCWD, wd_dir);
}

/* The invariants of a listing: data names only, sorted (each pair in order). */
static void wd_check(char **v, int n)
{
	for (int i = 0; i < n; i++) {
		if (!snap_workdir_is_data_name(v[i]))
			abort();
		if (i && snap_workdir_is_claimed(v[i - 1]) == snap_workdir_is_claimed(v[i]) &&
		    strlen(v[i - 1]) == strlen(v[i]) && strcmp(v[i - 1], v[i]) > 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *names[WD_MAX_NAMES], **listed = NULL;
	int n = 0, nf, nl, made = 0;
	size_t i = 0;

	if (!wd_dir[0]) {
		snprintf(wd_dir, sizeof(wd_dir), "/tmp/snaptrace-fuzz-wd.XXXXXX");
		if (!mkdtemp(wd_dir))
			abort();
		atexit(wd_cleanup);
	}
	while (i < size && n < WD_MAX_NAMES) {
		const uint8_t *nl_at = memchr(data + i, '\n', size - i);
		size_t len = nl_at ? (size_t)(nl_at - data) - i : size - i;

		names[n] = snap_strndup((const char *)data + i, len > 255 ? 255 : len);
		if (!names[n])
			abort();
		n++;
		i += len + 1;
	}
	/* create the plausible ones as files or (name ending in "d") directories */
	for (int k = 0; k < n && made < 12; k++) {
		char p[400];
		size_t len = strlen(names[k]);

		if (!len || strchr(names[k], '/') || !strcmp(names[k], ".") ||
		    !strcmp(names[k], ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", wd_dir, names[k]);
		if (names[k][len - 1] == 'd' ? mkdir(p, 0700) == 0
					     : close(open(p, O_WRONLY | O_CREAT, 0600)) == 0)
			made++;
	}
	nl = snap_workdir_list_dir(wd_dir, &listed);
	if (nl < 0)
		abort();
	wd_check(listed, nl);
	/* the pure filter keeps exactly the data names */
	{
		int want = 0;

		for (int k = 0; k < n; k++)
			want += snap_workdir_is_data_name(names[k]);
		nf = snap_workdir_filter_names(names, n); /* frees the others */
		if (nf != want)
			abort();
		wd_check(names, nf);
	}
	for (int k = 0; k < nf; k++)
		snap_free(names[k]);
	snap_workdir_free_list(listed, nl);
	/* empty the directory for the next input (never following links) */
	{
		int dfd = open(wd_dir, O_RDONLY | O_DIRECTORY);

		if (dfd >= 0) {
			DIR *d = fdopendir(dfd);
			struct dirent *e;

			while (d && (e = readdir(d)))
				if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
					snap_rmtree_at(dfd, e->d_name);
			if (d)
				closedir(d);
		}
	}
	return 0;
}
