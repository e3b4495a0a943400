/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The working directory of a recording (docs/behaviour.md §2.2): a private 0700
 * temporary directory removed at the end, or a user-given one that is kept.
 * A temporary directory is guarded by a tiny helper process that removes it
 * if snaptrace dies without cleaning up (Ctrl-C twice, SIGKILL).
 */
#ifndef SNAP_RECORD_WORKDIR_H
#define SNAP_RECORD_WORKDIR_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

struct snap_workdir {
	char path[PATH_MAX];
	int keep;     /* user-given: never removed */
	pid_t guard;  /* guardian process, 0 = none */
	int guard_fd; /* our end of the guardian's pipe, -1 = none */
};

/* Opens the working directory. given == NULL: a new private directory
 * $TMPDIR/snaptrace.XXXXXX (mode 0700) with a guardian. Otherwise given is
 * created (mode 0700, not recursively) when missing, must be a directory we
 * own, and its old perf.data* files are removed. Returns 0 or -errno. */
int snap_workdir_open(struct snap_workdir *w, const char *given);

/* Removes the directory (unless kept) and stops the guardian. Safe to call
 * twice and on a zeroed struct with guard_fd = -1. */
void snap_workdir_close(struct snap_workdir *w);

/* Lists the entries whose names start with "perf.data", sorted by name
 * (= time order for perf's switch-output files). Returns the count and sets
 * *names (owned: release with snap_workdir_free_list), or -errno. */
int snap_workdir_list_data(const struct snap_workdir *w, char ***names);
void snap_workdir_free_list(char **names, int n);

/* Removes name (a file, or a directory tree, never following symlinks)
 * relative to dirfd. Returns 0 or -errno. */
int snap_rmtree_at(int dirfd, const char *name);

#endif
