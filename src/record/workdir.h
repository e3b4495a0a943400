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
	int keep;	   /* user-given: never removed */
	pid_t guard;	   /* guardian process, 0 = none */
	int guard_fd;	   /* our end of the guardian's pipe, -1 = none */
	unsigned nclaimed; /* snapshots claimed (snap_workdir_claim) */
	int dirfd;	   /* user-given: the directory, locked (flock) while open */
	int has_dirfd;	   /* 1: dirfd is open (a zeroed struct has none) */
};

/* snap_workdir_open's own errors (negated), beside -errno. */
enum {
	SNAP_WORKDIR_EOTHERS = 8192, /* the directory can be written by other users */
	SNAP_WORKDIR_EBUSY,	     /* another run holds it */
	SNAP_WORKDIR_EPATH,	     /* a directory or link above it is another user's or,
				      * not sticky, others can write it */
};

/* Opens the working directory. given == NULL: a new private directory
 * $TMPDIR/snaptrace.XXXXXX (mode 0700) with a guardian; in /tmp, with a
 * warning, when $TMPDIR is under what another user can change (as below,
 * -SNAP_WORKDIR_EPATH when /tmp is too). Otherwise given is
 * created (mode 0700, not recursively) when missing, must be a directory we
 * own and not a symbolic link (-ELOOP, also with a trailing slash), that no
 * other user can write (-SNAP_WORKDIR_EOTHERS: they could plant links and
 * FIFOs under the names perf and snaptrace write, docs/guarantees.md), under
 * directories and links no other user can change (checked before the mkdir:
 * each one above it, as written and as resolved, root's or ours, and written
 * by no group or other unless sticky; -SNAP_WORKDIR_EPATH: they could swap it
 * for a link) and that no
 * other run uses (an exclusive flock on the directory, held until
 * snap_workdir_close: -SNAP_WORKDIR_EBUSY). Then its old data files
 * (snap_workdir_is_data_name) and old hits file are removed; nothing else in
 * it is touched. Returns 0 or -errno (snap_workdir_strerror says why). */
int snap_workdir_open(struct snap_workdir *w, const char *given);

/* A one-line reason for an error of snap_workdir_open (static storage: the
 * busy one names the other run's pid, valid until the next open). */
const char *snap_workdir_strerror(int err);

/* Creates name in the user-given directory for writing: O_CREAT|O_EXCL|
 * O_NOFOLLOW (mode 0600) relative to the directory opened, after removing
 * what had that name (never following it). Returns the descriptor or
 * -errno (-EBADF for a private directory). */
int snap_workdir_create(struct snap_workdir *w, const char *name);

/* Removes the directory (unless kept) and stops the guardian. Safe to call
 * twice and on a zeroed struct with guard_fd = -1. */
void snap_workdir_close(struct snap_workdir *w);

/* 1 if name is one snaptrace or perf writes in a working directory:
 * "perf.data" or "perf.data.<digits>" (perf's switch-output snapshots).
 * Nothing else (perf.data-notes.txt, perf.data.old) is ever listed or removed.
 * Lists sort in time order: perf.data, then by the time in the name. */
int snap_workdir_is_data_name(const char *name);

/*
 * Multi-snapshot: perf names each dump perf.data.<T> with T the wall time in
 * 10 ms steps, so two dumps within 10 ms get the same name and the second
 * replaces the first. Claiming renames the dump name (in w) to the unique
 * perf.data.<T><NNNN> (NNNN: 0001, 0002... per directory, never replacing a
 * file) as soon as it appears, which frees perf's name for the next one; out
 * (len bytes) gets the new name. Claimed names sort by T, before perf's own
 * name of the same T. Returns 0 or -errno (-EINVAL: not a perf dump name).
 */
int snap_workdir_claim(struct snap_workdir *w, const char *name, char *out, size_t len);

/* 1 if name is one snap_workdir_claim gave. */
int snap_workdir_is_claimed(const char *name);

/* Keeps the data names of names[0..n) (frees the others), sorts them by name
 * (= time order) and returns how many are left. Pure: fuzzed. */
int snap_workdir_filter_names(char **names, int n);

/* Lists the data names of dir (see above) that are regular files or
 * directories (perf record --kcore), sorted: a FIFO, device or link so named
 * is never decoded. Returns the count and sets *names (owned: release with
 * snap_workdir_free_list(names, count)), or -errno. list_data lists w's
 * directory. */
int snap_workdir_list_dir(const char *dir, char ***names);
int snap_workdir_list_data(const struct snap_workdir *w, char ***names);
void snap_workdir_free_list(char **names, int n);

/* Removes name (a file, or a directory tree, never following symlinks)
 * relative to dirfd. Returns 0 or -errno. */
int snap_rmtree_at(int dirfd, const char *name);

#endif
