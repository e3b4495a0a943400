// SPDX-License-Identifier: GPL-2.0
#include "record/workdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parse/hitsfile.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/vec.h"

static int list_dir(const char *dir, int all, char ***names);

int snap_rmtree_at(int dirfd, const char *name)
{
	int fd, err = 0;
	DIR *d;
	struct dirent *de;

	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		int r;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		r = snap_rmtree_at(fd, de->d_name);
		if (r < 0 && !err)
			err = r;
	}
	closedir(d);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && !err)
		err = -errno;
	return err;
}

/* The guardian: waits for EOF on fd; if the parent did not say "done" ('d')
 * first, it removes the directory. It sits in its own process group so a
 * terminal Ctrl-C does not kill it along with snaptrace. */
static void guardian(int fd, const char *path)
{
	char c = 0;
	ssize_t n;

	setpgid(0, 0);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	for (int i = 3; i < 1024; i++)
		if (i != fd)
			close(i);
	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1 && c == 'd')
		_exit(0);
	snap_rmtree_at(AT_FDCWD, path);
	_exit(0);
}

static int start_guardian(struct snap_workdir *w)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(p[1]);
		guardian(p[0], w->path);
	}
	close(p[0]);
	w->guard = pid;
	w->guard_fd = p[1];
	return 0;
}

/* Removes the data files of an earlier recording (only the names snaptrace
 * and perf write, see snap_workdir_is_data_name, whatever their type) and
 * its hits file from the directory dfd. */
static int clear_old_data(struct snap_workdir *w, int dfd)
{
	char **names = NULL;
	int n = list_dir(w->path, 1, &names);
	int err = 0;

	if (unlinkat(dfd, SNAP_HITS_FILE, 0) < 0 && errno != ENOENT)
		err = -errno;
	if (n <= 0)
		return n < 0 ? n : err;
	for (int i = 0; i < n; i++) {
		int r = snap_rmtree_at(dfd, names[i]);

		if (r < 0 && !err)
			err = r;
	}
	snap_workdir_free_list(names, n);
	return err;
}

static char busy_why[160];
static char path_why[PATH_MAX + 200];

const char *snap_workdir_strerror(int err)
{
	switch (err) {
	case -ELOOP:
		return "is a symbolic link (refused: name the directory itself)";
	case -EPERM:
		return "belongs to another user (refused: use a directory of your own)";
	case -ENOTDIR:
		return "is not a directory";
	case -SNAP_WORKDIR_EOTHERS:
		return "can be written by other users (refused: they could plant links or FIFOs "
		       "under the names perf and snaptrace write; chmod go-w it, or use a "
		       "directory only you can write)";
	case -SNAP_WORKDIR_EPATH:
		return path_why[0] ? path_why
				   : "has a directory or link on its path another user can change "
				     "(refused)";
	case -SNAP_WORKDIR_EBUSY:
		return busy_why[0] ? busy_why
				   : "is used by another snaptrace run (refused: wait for it to "
				     "end, or use another -working-directory)";
	default:
		return strerror(-err);
	}
}

/* The pid holding a flock on the file (dev, ino), from /proc/locks; 0 if not found. */
static long lock_holder(dev_t dev, ino_t ino)
{
	FILE *f = fopen("/proc/locks", "re");
	char line[256];
	long pid = 0;

	if (!f)
		return 0;
	while (!pid && fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		unsigned long long i;
		long p;
		char kind[16];

		/* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" */
		if (sscanf(line, "%*s %15s %*s %*s %ld %x:%x:%llu", kind, &p, &maj, &min, &i) ==
			    5 &&
		    !strcmp(kind, "FLOCK") && i == (unsigned long long)ino && maj == major(dev) &&
		    min == minor(dev))
			pid = p;
	}
	fclose(f);
	return pid;
}

/* Takes the directory for this run: an exclusive flock on dfd (dropped when
 * it is closed, also when snaptrace dies). */
static int lock_dir(int dfd, const struct stat *st)
{
	long pid;

	if (flock(dfd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK)
		return -errno;
	pid = lock_holder(st->st_dev, st->st_ino);
	if (pid > 0) {
		char proc[32];
		struct stat pst;

		/* Anyone who can read the directory can flock it: a lock of another
		 * user's process is no run of ours, and must not deny the directory
		 * (it cannot write there: checked above). The run goes on unlocked. */
		snprintf(proc, sizeof(proc), "/proc/%ld", pid);
		if (stat(proc, &pst) == 0 && pst.st_uid != 0 && pst.st_uid != geteuid()) {
			snap_warn("working directory: locked by pid %ld of another user (uid %u), "
				  "not by a snaptrace run of yours: going on without the lock",
				  pid, (unsigned)pst.st_uid);
			return 0;
		}
	}
	if (pid > 0)
		snprintf(busy_why, sizeof(busy_why),
			 "is used by another snaptrace run (pid %ld; refused: wait for it to end, "
			 "or use another -working-directory)",
			 pid);
	else
		busy_why[0] = '\0';
	return -SNAP_WORKDIR_EBUSY;
}

/* 1 if a directory (or link) of this owner and mode on the way to the working
 * directory cannot be changed by another user: it is root's or ours, and a
 * directory is written by no group or other unless sticky. */
static int safe_step(const struct stat *st)
{
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return 0;
	return S_ISLNK(st->st_mode) || !(st->st_mode & (S_IWGRP | S_IWOTH)) ||
	       (st->st_mode & S_ISVTX);
}

/* Checks p, one step of the way (a directory or a link); 0 or -SNAP_WORKDIR_EPATH
 * with path_why naming it. */
static int check_step(const char *p)
{
	struct stat st;

	if (lstat(p, &st) < 0)
		return 0; /* (what is missing fails the open itself) */
	if (S_ISLNK(st.st_mode) && safe_step(&st) && stat(p, &st) < 0)
		return 0;
	if (safe_step(&st))
		return 0;
	snprintf(path_why, sizeof(path_why),
		 "is under %s, %s (refused: its owner or writers could swap what is below it "
		 "for a link while perf writes there by name; use a directory whose every "
		 "parent is yours or root's and written only by its owner, or is sticky like "
		 "/tmp)",
		 p,
		 S_ISLNK(st.st_mode) ? "a symbolic link of another user"
		 : st.st_uid != 0 && st.st_uid != geteuid()
			 ? "a directory of another user"
			 : "a directory other users can write without the sticky bit");
	return -SNAP_WORKDIR_EPATH;
}

/* Every directory and link on the way to path (a name perf and snaptrace use,
 * not a descriptor) must be one no other user can change, written (each
 * prefix of path) and resolved (each prefix of its parent's real path): a
 * directory of another user anywhere above it could be renamed and replaced
 * by a link between the checks and perf's open (docs/guarantees.md). */
static int check_path(const char *path)
{
	char pre[PATH_MAX], real[PATH_MAX];
	size_t len = strlen(path), i;
	int err;

	for (i = 1; i < len; i++) {
		if (path[i] != '/' || path[i - 1] == '/')
			continue;
		memcpy(pre, path, i);
		pre[i] = '\0';
		if ((err = check_step(pre)) < 0)
			return err;
	}
	/* the real path of its parent (it may not exist yet) */
	if (!strrchr(path, '/'))
		snprintf(pre, sizeof(pre), ".");
	else
		snprintf(pre, sizeof(pre), "%.*s", (int)(strrchr(path, '/') - path) + 1, path);
	if (!realpath(pre, real))
		return 0;
	len = strlen(real);
	for (i = 1; i <= len; i++) {
		if (real[i] != '/' && real[i] != '\0')
			continue;
		memcpy(pre, real, i);
		pre[i] = '\0';
		if ((err = check_step(pre)) < 0)
			return err;
	}
	return check_step("/");
}

/* The user-given directory: created if missing, never through a symbolic link
 * (with or without a trailing slash), ours, only ours to write, not used by
 * another run, and cleared of old data. */
static int open_given(struct snap_workdir *w, const char *given)
{
	size_t len = strlen(given);
	struct stat st, fst;
	int dfd, err;

	while (len > 1 && given[len - 1] == '/')
		len--; /* "link/" would follow the link in lstat */
	if (len >= sizeof(w->path))
		return -ENAMETOOLONG;
	memcpy(w->path, given, len);
	w->path[len] = '\0';
	w->keep = 1;
	err = check_path(w->path); /* (before the mkdir: not through another's link) */
	if (err < 0)
		return err;
	if (mkdir(w->path, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(w->path, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid())
		return -EPERM;
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return -SNAP_WORKDIR_EOTHERS;
	dfd = open(w->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOTDIR ? -ELOOP : -errno;
	/* The name was not swapped for something else since the lstat. */
	if (fstat(dfd, &fst) < 0 || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino ||
	    (fst.st_mode & (S_IWGRP | S_IWOTH))) {
		close(dfd);
		return -ELOOP;
	}
	err = lock_dir(dfd, &fst);
	if (err < 0) {
		close(dfd);
		return err;
	}
	w->dirfd = dfd;
	w->has_dirfd = 1;
	return clear_old_data(w, dfd);
}

int snap_workdir_create(struct snap_workdir *w, const char *name)
{
	int fd;

	if (!w->has_dirfd)
		return -EBADF;
	if (unlinkat(w->dirfd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	fd = openat(w->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

int snap_workdir_open(struct snap_workdir *w, const char *given)
{
	const char *tmp;
	int err;

	memset(w, 0, sizeof(*w));
	w->guard_fd = -1;
	w->dirfd = -1;
	if (given)
		return open_given(w, given);
	tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	/* On failure the path is cleared: snap_workdir_close must not remove a
	 * truncated template or the name mkdtemp last tried (someone else's). */
	if ((size_t)snprintf(w->path, sizeof(w->path), "%s/snaptrace.XXXXXX", tmp) >=
	    sizeof(w->path)) {
		w->path[0] = '\0';
		return -ENAMETOOLONG;
	}
	/* perf writes in it by name too: a $TMPDIR another user can change could
	 * have the directory swapped for a link (sticky /tmp is fine); /tmp then */
	err = check_path(w->path);
	if (err < 0 && strcmp(tmp, "/tmp")) {
		snap_warn("TMPDIR=%s %s: the private working directory goes to /tmp", tmp,
			  snap_workdir_strerror(err));
		snprintf(w->path, sizeof(w->path), "/tmp/snaptrace.XXXXXX");
		err = check_path(w->path);
	}
	if (err < 0) {
		w->path[0] = '\0';
		return err;
	}
	if (!mkdtemp(w->path)) { /* mode 0700 */
		err = -errno;
		w->path[0] = '\0';
		return err;
	}
	if (start_guardian(w) < 0)
		w->guard = 0; /* still usable, just not guarded */
	return 0;
}

void snap_workdir_close(struct snap_workdir *w)
{
	if (!w->keep && w->path[0])
		snap_rmtree_at(AT_FDCWD, w->path);
	w->path[0] = '\0';
	if (w->has_dirfd) { /* the lock goes with it */
		close(w->dirfd);
		w->has_dirfd = 0;
		w->dirfd = -1;
	}
	if (w->guard_fd >= 0) {
		ssize_t n = write(w->guard_fd, "d", 1);

		(void)n;
		close(w->guard_fd);
		w->guard_fd = -1;
	}
	if (w->guard > 0) {
		while (waitpid(w->guard, NULL, 0) < 0 && errno == EINTR)
			;
		w->guard = 0;
	}
}

/* Time order: "perf.data" first, then perf's names perf.data.<T> (T: 16 digits
 * of wall time, 10 ms steps) and claimed ones perf.data.<T><NNNN> by T, a claimed
 * one before an unclaimed one of the same T (perf's final dump comes after the
 * snapshots): the digits compare as if right-padded with 9s. */
static int cmp_str(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;

	for (;;) {
		char cx = *x ? *x : '9', cy = *y ? *y : '9';

		if (!*x && !*y)
			return 0;
		if (!*x && *y == '.')
			return -1; /* "perf.data" first */
		if (!*y && *x == '.')
			return 1;
		if (cx != cy)
			return cx < cy ? -1 : 1;
		x += *x != 0; /* an ended name stays at its end: padded with 9s */
		y += *y != 0;
	}
}

int snap_workdir_is_data_name(const char *name)
{
	if (strncmp(name, "perf.data", 9))
		return 0;
	if (!name[9])
		return 1;
	if (name[9] != '.' || !name[10])
		return 0;
	for (const char *p = name + 10; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

int snap_workdir_is_claimed(const char *name)
{
	return snap_workdir_is_data_name(name) && strlen(name) == 10 + 16 + 4;
}

int snap_workdir_claim(struct snap_workdir *w, const char *name, char *out, size_t len)
{
	char from[PATH_MAX], to[PATH_MAX];

	if (!snap_workdir_is_data_name(name) || strlen(name) != 10 + 16)
		return -EINVAL;
	if ((size_t)snprintf(from, sizeof(from), "%s/%s", w->path, name) >= sizeof(from))
		return -ENAMETOOLONG;
	while (w->nclaimed < 9999) {
		unsigned k = ++w->nclaimed;

		if ((size_t)snprintf(to, sizeof(to), "%s/%s%04u", w->path, name, k) >= sizeof(to) ||
		    (size_t)snprintf(out, len, "%s%04u", name, k) >= len)
			return -ENAMETOOLONG;
		if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int snap_workdir_filter_names(char **names, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++) {
		if (snap_workdir_is_data_name(names[i]))
			names[k++] = names[i];
		else
			snap_free(names[i]);
	}
	if (k)
		qsort(names, (size_t)k, sizeof(*names), cmp_str);
	return k;
}

/* 1 if the entry de of d can be decoded: a regular file or a directory. */
static int decodable(DIR *d, const struct dirent *de)
{
	struct stat st;

	if (de->d_type == DT_REG || de->d_type == DT_DIR)
		return 1;
	if (de->d_type != DT_UNKNOWN)
		return 0;
	return fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode));
}

/* The data names of dir (all: whatever their type, for removal). */
static int list_dir(const char *dir, int all, char ***names)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t n = 0, cap = 0;

	*names = NULL;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!snap_workdir_is_data_name(de->d_name) || (!all && !decodable(d, de)))
			continue;
		if (n >= INT_MAX || snap_vec_reserve(&v, &cap, n + 1, sizeof(*v)) < 0 ||
		    !(v[n] = snap_strndup(de->d_name, strlen(de->d_name)))) {
			closedir(d);
			snap_workdir_free_list(v, (int)n);
			return -ENOMEM;
		}
		n++;
	}
	closedir(d);
	*names = v;
	return snap_workdir_filter_names(v, (int)n);
}

int snap_workdir_list_dir(const char *dir, char ***names)
{
	return list_dir(dir, 0, names);
}

int snap_workdir_list_data(const struct snap_workdir *w, char ***names)
{
	return snap_workdir_list_dir(w->path, names);
}

void snap_workdir_free_list(char **names, int n)
{
	for (int i = 0; i < n; i++)
		snap_free(names[i]);
	snap_free(names);
}
