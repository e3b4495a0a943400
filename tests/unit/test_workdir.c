// SPDX-License-Identifier: GPL-2.0
/* Working directories: private temp dirs, the guardian, listing, and rmtree never following symlinks. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/workdir.h"
#include "snap_test.h"
#include "util/alloc.h"

static void touch(const char *dir, const char *name)
{
	char p[PATH_MAX + 64];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
}

static void b2_2_temp_dir_lifecycle(void)
{
	struct snap_workdir w;
	struct stat st;
	char path[PATH_MAX], **names;
	int n;

	CHECK_INT_EQ(0, snap_workdir_open(&w, NULL));
	CHECK(stat(w.path, &st) == 0 && S_ISDIR(st.st_mode));
	CHECK_INT_EQ(0700, st.st_mode & 07777);
	CHECK(w.guard > 0);
	touch(w.path, "perf.data.2");
	touch(w.path, "perf.data");
	touch(w.path, "perf-record.log");
	n = snap_workdir_list_data(&w, &names);
	CHECK_INT_EQ(2, n);
	if (n == 2) {
		CHECK_STR_EQ("perf.data", names[0]);
		CHECK_STR_EQ("perf.data.2", names[1]);
	}
	snap_workdir_free_list(names, n);
	strcpy(path, w.path);
	snap_workdir_close(&w);
	CHECK(stat(path, &st) < 0 && errno == ENOENT);
	snap_workdir_close(&w); /* twice is harmless */
}

/* A failed open leaves no path behind, so close cannot remove a truncated
 * template or a name mkdtemp tried. */
static void temp_dir_failure_leaves_no_path(void)
{
	struct snap_workdir w;
	char *old = getenv("TMPDIR"), *keep = old ? strdup(old) : NULL, big[PATH_MAX + 16];

	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/';
	big[sizeof(big) - 1] = '\0';
	setenv("TMPDIR", big, 1);
	CHECK_INT_EQ(-ENAMETOOLONG, snap_workdir_open(&w, NULL));
	CHECK(w.path[0] == '\0');
	snap_workdir_close(&w);
	setenv("TMPDIR", "/nonexistent-snaptrace-test-dir", 1);
	CHECK_INT_EQ(-ENOENT, snap_workdir_open(&w, NULL));
	CHECK_STR_EQ("", w.path);
	snap_workdir_close(&w);
	if (keep)
		setenv("TMPDIR", keep, 1);
	else
		unsetenv("TMPDIR");
	free(keep);
}

/* A snaptrace that dies without cleaning up: the guardian removes the directory. */
static void b2_2_guardian_cleans_up(void)
{
	int p[2];
	char path[PATH_MAX] = "";
	struct stat st;
	pid_t pid;

	CHECK(pipe(p) == 0);
	pid = fork();
	if (pid == 0) {
		struct snap_workdir w;

		if (snap_workdir_open(&w, NULL) == 0 && write(p[1], w.path, strlen(w.path) + 1) > 0)
			touch(w.path, "perf.data");
		_exit(0); /* no snap_workdir_close */
	}
	close(p[1]);
	CHECK(read(p[0], path, sizeof(path)) > 0);
	close(p[0]);
	waitpid(pid, NULL, 0);
	for (int i = 0; i < 200 && stat(path, &st) == 0; i++)
		usleep(10000);
	CHECK(path[0] && stat(path, &st) < 0);
}

static void b2_2_given_dir_kept(void)
{
	char base[] = "/tmp/snaptrace-test.XXXXXX", sub[PATH_MAX], link[PATH_MAX + 64];
	struct snap_workdir w;
	struct stat st;

	CHECK(mkdtemp(base) != NULL);
	snprintf(sub, sizeof(sub), "%s/wd", base);
	CHECK_INT_EQ(0, snap_workdir_open(&w, sub)); /* created */
	touch(sub, "perf.data.2026113022230312");
	touch(sub, "perf.data");
	touch(sub, "perf.data.old");
	touch(sub, "perf.data-notes.txt");
	touch(sub, "perf.data.");
	touch(sub, "notes");
	snprintf(link, sizeof(link), "%s/perf.data.results", sub);
	CHECK(mkdir(link, 0700) == 0);
	touch(link, "table");
	snap_workdir_close(&w);
	CHECK(stat(sub, &st) == 0);		     /* kept */
	CHECK_INT_EQ(0, snap_workdir_open(&w, sub)); /* old data removed, the rest kept */
	snprintf(link, sizeof(link), "%s/perf.data.2026113022230312", sub);
	CHECK(stat(link, &st) < 0);
	snprintf(link, sizeof(link), "%s/perf.data", sub);
	CHECK(stat(link, &st) < 0);
	snprintf(link, sizeof(link), "%s/notes", sub);
	CHECK(stat(link, &st) == 0);
	snprintf(link, sizeof(link), "%s/perf.data.old", sub);
	CHECK(stat(link, &st) == 0);
	snprintf(link, sizeof(link), "%s/perf.data-notes.txt", sub);
	CHECK(stat(link, &st) == 0);
	snprintf(link, sizeof(link), "%s/perf.data.", sub);
	CHECK(stat(link, &st) == 0);
	snprintf(link, sizeof(link), "%s/perf.data.results/table", sub);
	CHECK(stat(link, &st) == 0);
	snap_workdir_close(&w);
	snprintf(link, sizeof(link), "%s/file", base);
	touch(base, "file");
	CHECK_INT_EQ(-ENOTDIR, snap_workdir_open(&w, link));
	CHECK_INT_EQ(0, snap_rmtree_at(AT_FDCWD, base));
}

/* A symbolic link to a directory is refused, also as "link/" (where lstat
 * would follow it), and nothing behind it is touched. */
static void b2_2_given_symlink_refused(void)
{
	char base[] = "/tmp/snaptrace-test.XXXXXX", p[PATH_MAX], link[PATH_MAX + 64];
	struct snap_workdir w;
	struct stat st;

	CHECK(mkdtemp(base) != NULL);
	snprintf(p, sizeof(p), "%s/victim", base);
	CHECK(mkdir(p, 0700) == 0);
	touch(p, "perf.data");
	snprintf(link, sizeof(link), "%s/link", base);
	CHECK(symlink(p, link) == 0);
	CHECK_INT_EQ(-ELOOP, snap_workdir_open(&w, link));
	snap_workdir_close(&w);
	strcat(link, "/");
	CHECK_INT_EQ(-ELOOP, snap_workdir_open(&w, link));
	snap_workdir_close(&w);
	strcat(link, "//");
	CHECK_INT_EQ(-ELOOP, snap_workdir_open(&w, link));
	snap_workdir_close(&w);
	snprintf(link, sizeof(link), "%s/perf.data", p);
	CHECK(stat(link, &st) == 0); /* untouched */
	CHECK(strstr(snap_workdir_strerror(-ELOOP), "symbolic link") != NULL);
	/* the directory itself with a trailing slash is fine */
	snprintf(link, sizeof(link), "%s/", p);
	CHECK_INT_EQ(0, snap_workdir_open(&w, link));
	CHECK_STR_EQ(p, w.path);
	snap_workdir_close(&w);
	CHECK_INT_EQ(0, snap_rmtree_at(AT_FDCWD, base));
}

static void data_names(void)
{
	static const char *const in[] = {"perf.data.2026113022230313",
					 "perf.data-notes.txt",
					 "perf.data.20261130222303120002",
					 "perf.data",
					 "perf.data.",
					 "perf.data.1x",
					 "perf.data.results",
					 "xperf.data",
					 "perf.data.2026113022230312",
					 "perf.data.20261130222303120001"};
	char *v[10];
	int n;

	for (int i = 0; i < 10; i++)
		v[i] = snap_strndup(in[i], strlen(in[i]));
	n = snap_workdir_filter_names(v, 10);
	CHECK_INT_EQ(5, n);
	if (n == 5) { /* time order; claimed snapshots before perf's final dump of the same T */
		CHECK_STR_EQ("perf.data", v[0]);
		CHECK_STR_EQ("perf.data.20261130222303120001", v[1]);
		CHECK_STR_EQ("perf.data.20261130222303120002", v[2]);
		CHECK_STR_EQ("perf.data.2026113022230312", v[3]);
		CHECK_STR_EQ("perf.data.2026113022230313", v[4]);
	}
	for (int i = 0; i < n; i++)
		snap_free(v[i]);
	CHECK(snap_workdir_is_data_name("perf.data.2026113022230312"));
	CHECK(!snap_workdir_is_data_name("perf.data.old"));
}

/* Two dumps within 10 ms get the same name from perf: claiming the first
 * renames it to a unique name, so the second never replaces it. */
static void claim_snapshots(void)
{
	struct snap_workdir w;
	char name[64], **names;
	const char *raw = "perf.data.2026113022230312";
	int n;

	CHECK_INT_EQ(0, snap_workdir_open(&w, NULL));
	touch(w.path, raw);
	CHECK_INT_EQ(0, snap_workdir_claim(&w, raw, name, sizeof(name)));
	CHECK_STR_EQ("perf.data.20261130222303120001", name);
	CHECK(snap_workdir_is_claimed(name));
	CHECK(!snap_workdir_is_claimed(raw));
	touch(w.path, raw); /* the second dump, same 10 ms */
	CHECK_INT_EQ(0, snap_workdir_claim(&w, raw, name, sizeof(name)));
	CHECK_STR_EQ("perf.data.20261130222303120002", name);
	touch(w.path, raw); /* perf's final dump */
	CHECK_INT_EQ(-EINVAL, snap_workdir_claim(&w, "perf.data", name, sizeof(name)));
	n = snap_workdir_list_data(&w, &names);
	CHECK_INT_EQ(3, n);
	if (n == 3) {
		CHECK_STR_EQ("perf.data.20261130222303120001", names[0]);
		CHECK_STR_EQ("perf.data.20261130222303120002", names[1]);
		CHECK_STR_EQ(raw, names[2]);
	}
	snap_workdir_free_list(names, n);
	snap_workdir_close(&w);
}

static void rmtree_does_not_follow(void)
{
	char victim[] = "/tmp/snaptrace-victim.XXXXXX", tree[] = "/tmp/snaptrace-tree.XXXXXX";
	char p[PATH_MAX];
	struct stat st;

	CHECK(mkdtemp(victim) && mkdtemp(tree));
	touch(victim, "precious");
	snprintf(p, sizeof(p), "%s/link", tree);
	CHECK(symlink(victim, p) == 0);
	snprintf(p, sizeof(p), "%s/sub", tree);
	CHECK(mkdir(p, 0700) == 0);
	touch(p, "f");
	CHECK_INT_EQ(0, snap_rmtree_at(AT_FDCWD, tree));
	CHECK(stat(tree, &st) < 0);
	snprintf(p, sizeof(p), "%s/precious", victim);
	CHECK(stat(p, &st) == 0);
	CHECK_INT_EQ(0, snap_rmtree_at(AT_FDCWD, victim));
	CHECK_INT_EQ(0, snap_rmtree_at(AT_FDCWD, "/tmp/snaptrace-does-not-exist"));
}

int main(void)
{
	RUN(b2_2_temp_dir_lifecycle);
	RUN(temp_dir_failure_leaves_no_path);
	RUN(b2_2_guardian_cleans_up);
	RUN(b2_2_given_dir_kept);
	RUN(b2_2_given_symlink_refused);
	RUN(data_names);
	RUN(claim_snapshots);
	RUN(rmtree_does_not_follow);
	return snap_test_done();
}
