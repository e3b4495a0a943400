// SPDX-License-Identifier: GPL-2.0
#include "record/workdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/vec.h"

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

static int clear_old_data(struct snap_workdir *w)
{
	char **names = NULL;
	int n = snap_workdir_list_data(w, &names);
	int fd, err = 0;

	if (n <= 0)
		return n;
	fd = open(w->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		err = -errno;
	for (int i = 0; i < n && fd >= 0; i++) {
		int r = snap_rmtree_at(fd, names[i]);

		if (r < 0 && !err)
			err = r;
	}
	if (fd >= 0)
		close(fd);
	snap_workdir_free_list(names, n);
	return err;
}

int snap_workdir_open(struct snap_workdir *w, const char *given)
{
	struct stat st;
	const char *tmp;

	memset(w, 0, sizeof(*w));
	w->guard_fd = -1;
	if (given) {
		if (strlen(given) >= sizeof(w->path))
			return -ENAMETOOLONG;
		strcpy(w->path, given);
		w->keep = 1;
		if (mkdir(given, 0700) < 0 && errno != EEXIST)
			return -errno;
		if (lstat(given, &st) < 0)
			return -errno;
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		if (st.st_uid != geteuid())
			return -EPERM;
		return clear_old_data(w);
	}
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
	if (!mkdtemp(w->path)) { /* mode 0700 */
		int err = -errno;

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

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int snap_workdir_list_data(const struct snap_workdir *w, char ***names)
{
	DIR *d = opendir(w->path);
	struct dirent *de;
	char **v = NULL;
	size_t n = 0, cap = 0;

	*names = NULL;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "perf.data", 9))
			continue;
		if (snap_vec_reserve(&v, &cap, n + 1, sizeof(*v)) < 0 ||
		    !(v[n] = snap_strndup(de->d_name, strlen(de->d_name)))) {
			closedir(d);
			snap_workdir_free_list(v, (int)n);
			return -ENOMEM;
		}
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*names = v;
	return (int)n;
}

void snap_workdir_free_list(char **names, int n)
{
	for (int i = 0; i < n; i++)
		snap_free(names[i]);
	snap_free(names);
}
