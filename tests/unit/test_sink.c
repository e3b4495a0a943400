// SPDX-License-Identifier: GPL-2.0
/* Tests of write/sink: memory sink, temp file + rename, gzip, error paths; the
 * file tests run twice, the second time with the writer thread (snap_sink_set_writer). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "snap_test.h"
#include "util/alloc.h"
#include "util/err.h"
#include "write/sink.h"

static char dir[64];
static int with_writer; /* open_sink starts the writer thread (main's second round) */

/* snap_sink_open, then with with_writer the writer thread. */
static int open_sink(struct snap_sink *s, const char *path)
{
	int err = snap_sink_open(s, path);

	if (!err && with_writer) {
		CHECK_INT_EQ(0, snap_sink_set_writer(s, 1));
		CHECK(s->wr != NULL);
	}
	return err;
}

/* Number of entries in dir besides . and .. */
static int dir_entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void path_of(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

/* Reads a whole file (gunzipping transparently) into buf; returns its length or -1. */
static long slurp(const char *path, unsigned char *buf, size_t cap)
{
	gzFile f = gzopen(path, "rb");
	long n;

	if (!f)
		return -1;
	n = gzread(f, buf, (unsigned)cap);
	gzclose(f);
	return n;
}

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0);
	CHECK(write(fd, s, strlen(s)) == (ssize_t)strlen(s));
	close(fd);
}

/* A pattern that does not compress to nothing and shows misplaced bytes. */
static unsigned char *pattern(size_t n)
{
	unsigned char *p = malloc(n);
	uint32_t x = 12345;

	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (unsigned char)(i % 7 ? i : x >> 24);
	}
	return p;
}

static void test_mem(void)
{
	struct snap_sink s;
	size_t n = 300000, len, off = 0;
	unsigned char *p = pattern(n);
	const unsigned char *d;

	CHECK_INT_EQ(0, snap_sink_init_mem(&s));
	d = snap_sink_mem_data(&s, &len);
	CHECK(d == NULL && len == 0);
	/* pieces of every size: tiny, buffer-straddling, larger than the buffer */
	for (size_t step = 1; off < n; step = step * 3 + 1) {
		size_t k = step < n - off ? step : n - off;

		snap_sink_write(&s, p + off, k);
		off += k;
	}
	CHECK_U64_EQ(n, s.total);
	d = snap_sink_mem_data(&s, &len);
	CHECK_INT_EQ(n, len);
	CHECK(d && !memcmp(d, p, n));
	CHECK_INT_EQ(0, snap_sink_close(&s));
	d = snap_sink_mem_data(&s, &len);
	CHECK_INT_EQ(n, len);
	snap_sink_fini(&s);
	snap_sink_fini(&s); /* twice is harmless */
	free(p);
}

static void test_sticky_error(void)
{
	struct snap_sink s;
	size_t len;

	CHECK_INT_EQ(0, snap_sink_init_mem(&s));
	snap_sink_write(&s, "ab", 2);
	CHECK_INT_EQ(-EIO, snap_sink_fail(&s, -EIO));
	CHECK_INT_EQ(-EIO, snap_sink_fail(&s, -ENOSPC)); /* the first error stays */
	snap_sink_write(&s, "cd", 2);
	CHECK_INT_EQ(-EIO, snap_sink_flush(&s));
	CHECK_INT_EQ(-EIO, snap_sink_error(&s));
	snap_sink_mem_data(&s, &len);
	CHECK_INT_EQ(0, len); /* the buffered bytes were dropped with the error */
	snap_sink_fini(&s);
	/* allocation failure at init: a dead sink that accepts calls */
	snap_alloc_fail_after(0);
	CHECK_INT_EQ(-ENOMEM, snap_sink_init_mem(&s));
	snap_alloc_fail_after(-1);
	snap_sink_write(&s, "x", 1);
	CHECK_INT_EQ(-ENOMEM, snap_sink_close(&s));
	snap_sink_fini(&s);
}

static void test_file_plain(void)
{
	struct snap_sink s;
	char path[128];
	size_t n = 200000;
	unsigned char *p = pattern(n), *back = malloc(n + 10);
	struct stat sb;
	mode_t mask = umask(022);

	path_of(path, sizeof(path), "out.fxt");
	CHECK_INT_EQ(0, open_sink(&s, path));
	CHECK(dir_entries() <= 1);	/* the temporary file, if it has a name */
	CHECK(access(path, F_OK) != 0); /* the target appears only at close */
	snap_sink_write(&s, p, 1000);
	snap_sink_write(&s, p + 1000, n - 1000);
	CHECK_INT_EQ(0, snap_sink_close(&s));
	CHECK_INT_EQ(1, dir_entries());
	CHECK_INT_EQ(n, slurp(path, back, n + 10));
	CHECK(!memcmp(p, back, n));
	CHECK_INT_EQ(0, stat(path, &sb));
	CHECK_INT_EQ(0644, sb.st_mode & 0777);
	unlink(path);
	umask(mask);
	snap_sink_fini(&s);
	free(p);
	free(back);
}

static void test_file_gz(void)
{
	struct snap_sink s;
	char path[128];
	size_t n = 500000;
	unsigned char *p = pattern(n), *back = malloc(n + 10), magic[2] = {0};
	int fd;

	path_of(path, sizeof(path), "out.fxt.gz");
	CHECK_INT_EQ(0, open_sink(&s, path));
	snap_sink_write(&s, p, n);
	CHECK_INT_EQ(0, snap_sink_close(&s));
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && read(fd, magic, 2) == 2);
	close(fd);
	CHECK(magic[0] == 0x1f && magic[1] == 0x8b);
	CHECK_INT_EQ(n, slurp(path, back, n + 10));
	CHECK(!memcmp(p, back, n));
	CHECK_INT_EQ(1, dir_entries());
	unlink(path);
	free(p);
	free(back);
}

/* A file's bytes after writing path through a gzip sink on jobs threads,
 * with the level 1 decode uses; its length in *len (owned). */
static unsigned char *gz_file_with_jobs(const char *path, int jobs, const unsigned char *p,
					size_t n, long *len)
{
	struct snap_sink s;
	unsigned char *f = malloc(2 * n + 1024);
	int fd;

	CHECK_INT_EQ(0, open_sink(&s, path));
	CHECK_INT_EQ(0, snap_sink_set_gz_level(&s, 1));
	CHECK_INT_EQ(0, snap_sink_set_gz_jobs(&s, jobs));
	for (size_t i = 0; i < n; i += 30011)
		snap_sink_write(&s, p + i, n - i < 30011 ? n - i : 30011);
	CHECK_INT_EQ(-EINVAL, snap_sink_set_gz_jobs(&s, 2)); /* too late */
	CHECK_INT_EQ(0, snap_sink_close(&s));
	fd = open(path, O_RDONLY);
	*len = fd >= 0 ? read(fd, f, 2 * n + 1024) : -1;
	close(fd);
	return f;
}

/* Deflated on 1, 2 or 8 threads, the file is the same, and gunzips to the input. */
static void test_gz_same_for_every_jobs(void)
{
	char path[128];
	size_t n = 3000000;
	unsigned char *p = pattern(n), *back = malloc(n + 10), *ref, *f;
	long rlen, len;
	struct snap_sink s;

	path_of(path, sizeof(path), "jobs.fxt.gz");
	ref = gz_file_with_jobs(path, 1, p, n, &rlen);
	CHECK_INT_EQ(n, slurp(path, back, n + 10));
	CHECK(!memcmp(p, back, n));
	for (int jobs = 2; jobs <= 8; jobs *= 4) {
		f = gz_file_with_jobs(path, jobs, p, n, &len);
		CHECK_INT_EQ(rlen, len);
		CHECK(len == rlen && !memcmp(f, ref, (size_t)len));
		free(f);
	}
	/* not a gzip sink */
	CHECK_INT_EQ(0, snap_sink_init_mem(&s));
	CHECK_INT_EQ(-EINVAL, snap_sink_set_gz_jobs(&s, 2));
	snap_sink_fini(&s);
	unlink(path);
	free(ref);
	free(back);
	free(p);
}

/* Writes n bytes and 10 more to name under a file size limit of 100000
 * (EFBIG), with gz_jobs deflating threads when not 0: the close fails with
 * EFBIG, the old output stays and no temporary file is left. */
static void check_write_error(const char *name, size_t n, int gz_jobs)
{
	struct snap_sink s;
	struct rlimit old, lim;
	char path[128];
	unsigned char back[64];
	unsigned char *p = pattern(n);
	void (*oldsig)(int) = signal(SIGXFSZ, SIG_IGN);

	path_of(path, sizeof(path), name);
	write_file(path, "OLD CONTENT");
	CHECK_INT_EQ(0, getrlimit(RLIMIT_FSIZE, &old));
	lim = old;
	lim.rlim_cur = 100000;
	CHECK_INT_EQ(0, setrlimit(RLIMIT_FSIZE, &lim));
	CHECK_INT_EQ(0, open_sink(&s, path));
	if (gz_jobs)
		CHECK_INT_EQ(0, snap_sink_set_gz_jobs(&s, gz_jobs));
	snap_sink_write(&s, p, n);
	if (!gz_jobs && with_writer) /* the writer's error, at the next hand-over */
		snap_sink_sync(&s);
	if (!gz_jobs)
		CHECK_INT_EQ(-EFBIG, snap_sink_error(&s)); /* sticky, seen before close */
	snap_sink_write(&s, p, 10);
	CHECK_INT_EQ(-EFBIG, snap_sink_close(&s));
	CHECK_INT_EQ(0, setrlimit(RLIMIT_FSIZE, &old));
	signal(SIGXFSZ, oldsig);
	CHECK_INT_EQ(11, slurp(path, back, sizeof(back)));
	CHECK(!memcmp(back, "OLD CONTENT", 11));
	CHECK_INT_EQ(1, dir_entries());
	snap_sink_fini(&s);
	unlink(path);
	free(p);
}

/* A full file system or the file size limit while worker threads deflate:
 * the error is the sink's, and the old output stays. */
static void test_gz_write_error_with_jobs(void)
{
	check_write_error("big.fxt.gz", 4 << 20, 2);
}

static void test_b8_16_gz_level(void)
{
	struct snap_sink s;
	char path[128];
	size_t n = 300000;
	unsigned char *p = pattern(n), *back = malloc(n + 10);
	long sizes[2];

	path_of(path, sizeof(path), "lvl.fxt.gz");
	for (int k = 0; k < 2; k++) {
		struct stat sb;

		CHECK_INT_EQ(0, open_sink(&s, path));
		CHECK_INT_EQ(-EINVAL, snap_sink_set_gz_level(&s, 10));
		CHECK_INT_EQ(0, snap_sink_set_gz_level(&s, k ? 9 : 0));
		snap_sink_write(&s, p, n);
		CHECK_INT_EQ(-EINVAL, snap_sink_set_gz_level(&s, 1)); /* too late */
		CHECK_INT_EQ(0, snap_sink_close(&s));
		CHECK_INT_EQ(n, slurp(path, back, n + 10));
		CHECK(!memcmp(p, back, n));
		CHECK_INT_EQ(0, stat(path, &sb));
		sizes[k] = (long)sb.st_size;
	}
	CHECK(sizes[0] > (long)n && sizes[1] < (long)n); /* level 0 stores, 9 compresses */
	unlink(path);
	/* not a gzip sink */
	CHECK_INT_EQ(0, snap_sink_init_mem(&s));
	CHECK_INT_EQ(-EINVAL, snap_sink_set_gz_level(&s, 1));
	snap_sink_fini(&s);
	free(p);
	free(back);
}

/* Abort, or an error before close, leave an existing output untouched. */
static void test_b6_1_existing_output_kept(void)
{
	struct snap_sink s;
	char path[128];
	unsigned char back[64];
	long n;

	path_of(path, sizeof(path), "keep.fxt.gz");
	write_file(path, "OLD CONTENT");
	CHECK_INT_EQ(0, open_sink(&s, path));
	snap_sink_write(&s, "new", 3);
	snap_sink_flush(&s);
	snap_sink_abort(&s);
	n = slurp(path, back, sizeof(back));
	CHECK_INT_EQ(11, n);
	CHECK(!memcmp(back, "OLD CONTENT", 11));
	CHECK_INT_EQ(1, dir_entries());

	CHECK_INT_EQ(0, open_sink(&s, path));
	snap_sink_write(&s, "new", 3);
	snap_sink_fail(&s, -ENOSPC);
	CHECK_INT_EQ(-ENOSPC, snap_sink_close(&s));
	CHECK_INT_EQ(11, slurp(path, back, sizeof(back)));
	CHECK_INT_EQ(1, dir_entries());
	/* fini of an unclosed sink aborts too */
	CHECK_INT_EQ(0, open_sink(&s, path));
	snap_sink_write(&s, "new", 3);
	snap_sink_fini(&s);
	CHECK_INT_EQ(11, slurp(path, back, sizeof(back)));
	CHECK_INT_EQ(1, dir_entries());
	unlink(path);
}

/* A real write error (the file size limit: EFBIG) fails the close, keeps
 * the existing output and leaves no temporary file. */
static void test_write_error(void)
{
	check_write_error("big.fxt", 1 << 20, 0);
}

/* While the output is written nothing is named in its directory (an unnamed
 * O_TMPFILE file on filesystems that have it, as /tmp here): a SIGKILL or OOM
 * kill leaves nothing behind. Also with an existing output, which is replaced. */
static void test_b6_1_unnamed_while_writing(void)
{
	struct snap_sink s;
	char path[128];
	unsigned char back[16];
	int fd = open(dir, O_TMPFILE | O_WRONLY, 0600);

	if (fd < 0) {
		printf("SKIP test_sink.c:test_b6_1_unnamed_while_writing: no O_TMPFILE in %s\n",
		       dir);
		return;
	}
	close(fd);
	path_of(path, sizeof(path), "unnamed.fxt.gz");
	CHECK_INT_EQ(0, open_sink(&s, path));
	snap_sink_write(&s, "abc", 3);
	CHECK_INT_EQ(0, snap_sink_flush(&s));
	CHECK_INT_EQ(0, dir_entries());
	CHECK_INT_EQ(0, snap_sink_close(&s));
	CHECK_INT_EQ(1, dir_entries());
	CHECK_INT_EQ(3, slurp(path, back, sizeof(back)));
	CHECK_INT_EQ(0, open_sink(&s, path)); /* replacing it */
	snap_sink_write(&s, "defg", 4);
	CHECK_INT_EQ(0, snap_sink_flush(&s));
	CHECK_INT_EQ(1, dir_entries());
	CHECK_INT_EQ(0, snap_sink_close(&s));
	CHECK_INT_EQ(1, dir_entries());
	CHECK_INT_EQ(4, slurp(path, back, sizeof(back)));
	CHECK(!memcmp(back, "defg", 4));
	unlink(path);
}

/* An output name of 255 bytes (NAME_MAX) works: the temporary name is cut. */
static void test_long_name(void)
{
	struct snap_sink s;
	char name[256], path[400];
	struct stat st;

	memset(name, 'n', 255);
	name[255] = '\0';
	path_of(path, sizeof(path), name);
	CHECK_INT_EQ(0, open_sink(&s, path));
	snap_sink_write(&s, "x", 1);
	CHECK_INT_EQ(0, snap_sink_close(&s));
	CHECK(stat(path, &st) == 0 && st.st_size == 1);
	CHECK_INT_EQ(0, open_sink(&s, path)); /* replacing it */
	snap_sink_write(&s, "yy", 2);
	CHECK_INT_EQ(0, snap_sink_close(&s));
	CHECK(stat(path, &st) == 0 && st.st_size == 2);
	CHECK_INT_EQ(1, dir_entries());
	unlink(path);
}

/* A directory is refused when the output is opened: nothing is created. */
static void test_directory_refused(void)
{
	struct snap_sink s;
	char path[128], inner[160];

	path_of(path, sizeof(path), "adir");
	CHECK_INT_EQ(0, mkdir(path, 0755));
	snprintf(inner, sizeof(inner), "%s/x", path);
	write_file(inner, "x");
	CHECK_INT_EQ(-EISDIR, snap_sink_open(&s, path));
	snap_sink_fini(&s);
	CHECK_INT_EQ(1, dir_entries());
	unlink(inner);
	rmdir(path);
}

/* An existing output keeps its mode: a private 0600 trace stays private. */
static void test_mode_kept(void)
{
	struct snap_sink s;
	char path[128];
	struct stat st;

	path_of(path, sizeof(path), "private.fxt");
	write_file(path, "OLD");
	CHECK_INT_EQ(0, chmod(path, 0600));
	CHECK_INT_EQ(0, open_sink(&s, path));
	snap_sink_write(&s, "new", 3);
	CHECK_INT_EQ(0, snap_sink_close(&s));
	CHECK_INT_EQ(0, stat(path, &st));
	CHECK_INT_EQ(0600, st.st_mode & 07777);
	CHECK_INT_EQ(3, st.st_size);
	unlink(path);
}

/* -o LINK: the link is followed (its target replaced, mode kept), never
 * replaced by a regular file; a dangling link creates its target. */
static void test_symlink_followed(void)
{
	struct snap_sink s;
	char path[128], link[128], link2[128];
	unsigned char back[16];
	struct stat st;

	path_of(path, sizeof(path), "real.fxt");
	path_of(link, sizeof(link), "link.fxt");
	path_of(link2, sizeof(link2), "link2.fxt");
	write_file(path, "OLD");
	CHECK_INT_EQ(0, chmod(path, 0640));
	CHECK_INT_EQ(0, symlink("real.fxt", link));  /* relative to the link's directory */
	CHECK_INT_EQ(0, symlink("link.fxt", link2)); /* a chain */
	CHECK_INT_EQ(0, snap_sink_open(&s, link2));
	snap_sink_write(&s, "new!", 4);
	CHECK_INT_EQ(0, snap_sink_close(&s));
	CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(lstat(link2, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
	CHECK_INT_EQ(0640, st.st_mode & 07777);
	CHECK_INT_EQ(4, slurp(link, back, sizeof(back)));
	CHECK(!memcmp(back, "new!", 4));
	CHECK_INT_EQ(3, dir_entries());
	unlink(path);
	/* dangling: the target is created, the link stays */
	CHECK_INT_EQ(0, snap_sink_open(&s, link));
	snap_sink_write(&s, "d", 1);
	CHECK_INT_EQ(0, snap_sink_close(&s));
	CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
	unlink(path);
	unlink(link);
	unlink(link2);
	/* a loop is an error, not a hang */
	CHECK_INT_EQ(0, symlink("link2.fxt", link));
	CHECK_INT_EQ(0, symlink("link.fxt", link2));
	CHECK_INT_EQ(-ELOOP, snap_sink_open(&s, link));
	snap_sink_fini(&s);
	unlink(link);
	unlink(link2);
	CHECK_INT_EQ(0, dir_entries());
}

/* -o FIFO (or a device, /dev/stdout): written in place, still a FIFO after. */
static void test_fifo_in_place(void)
{
	struct snap_sink s;
	char path[128], back[16];
	struct stat st;
	int rfd;

	path_of(path, sizeof(path), "fifo.fxt");
	CHECK_INT_EQ(0, mkfifo(path, 0600));
	rfd = open(path, O_RDONLY | O_NONBLOCK); /* a reader, so the writer's open does not wait */
	CHECK(rfd >= 0);
	CHECK_INT_EQ(0, open_sink(&s, path));
	snap_sink_write(&s, "piped", 5);
	CHECK_INT_EQ(0, snap_sink_close(&s));
	CHECK_INT_EQ(5, read(rfd, back, sizeof(back)));
	CHECK(!memcmp(back, "piped", 5));
	close(rfd);
	CHECK(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode));
	CHECK_INT_EQ(1, dir_entries());
	unlink(path);
}

/* A long output's writeback starts while it is written, a chunk at a time (the
 * fsync of close waits for the last one only): 9 MB written, the first 8 MB
 * are under way before close. The bytes are all there after close. */
static void test_writeback_started(void)
{
	struct snap_sink s;
	char path[128];
	size_t n = (9u << 20) + (512u << 10), chunk = 64 * 1024;
	unsigned char *p = pattern(n), *back = malloc(n + 10);

	path_of(path, sizeof(path), "long.fxt");
	CHECK_INT_EQ(0, open_sink(&s, path));
	for (size_t off = 0; off < n; off += chunk)
		snap_sink_write(&s, p + off, chunk);
	CHECK_INT_EQ(0, snap_sink_sync(&s)); /* (a flush, and the writer thread's end) */
	CHECK(s.written == n);
	CHECK(s.wb_from >= n - (1u << 20) && s.wb_from <= n); /* every 1 MiB (SINK_WB_CHUNK) */
	CHECK_INT_EQ(0, snap_sink_close(&s));
	CHECK_INT_EQ((long)n, slurp(path, back, n + 10));
	CHECK(!memcmp(p, back, n));
	unlink(path);
	snap_sink_fini(&s);
	free(p);
	free(back);
}

/* As root: a character device (a private copy of /dev/null) is written in
 * place, never replaced by a regular file. */
static void test_device_in_place(void)
{
	struct snap_sink s;
	char path[128];
	struct stat st;

	if (geteuid() != 0) {
		printf("SKIP test_sink.c:test_device_in_place: needs root (mknod)\n");
		return;
	}
	path_of(path, sizeof(path), "null");
	if (stat("/dev/null", &st) < 0 || mknod(path, S_IFCHR | 0666, st.st_rdev) < 0) {
		printf("SKIP test_sink.c:test_device_in_place: mknod not allowed here\n");
		return;
	}
	CHECK_INT_EQ(0, open_sink(&s, path));
	snap_sink_write(&s, "gone", 4);
	CHECK_INT_EQ(0, snap_sink_close(&s));
	CHECK(lstat(path, &st) == 0 && S_ISCHR(st.st_mode));
	CHECK_INT_EQ(1, dir_entries());
	unlink(path);
}

static void test_bad_directory(void)
{
	struct snap_sink s;
	char path[160];

	path_of(path, sizeof(path), "missing/out.fxt");
	CHECK_INT_EQ(-ENOENT, snap_sink_open(&s, path));
	snap_sink_write(&s, "x", 1); /* harmless on a failed sink */
	CHECK(snap_sink_close(&s) < 0);
	snap_sink_fini(&s);
	CHECK(snap_sink_open(&s, "/proc/self/no/out.fxt") < 0);
	snap_sink_fini(&s);
	CHECK_INT_EQ(-EISDIR, snap_sink_open(&s, ""));
	CHECK_INT_EQ(-EISDIR, snap_sink_open(&s, "somedir/"));
	CHECK_INT_EQ(0, dir_entries());
	/* a relative name in the current directory works too */
	{
		char cwd[256];

		CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
		CHECK_INT_EQ(0, chdir(dir));
		CHECK_INT_EQ(0, snap_sink_open(&s, "rel.fxt"));
		snap_sink_write(&s, "r", 1);
		CHECK_INT_EQ(0, snap_sink_close(&s));
		CHECK_INT_EQ(0, access("rel.fxt", F_OK));
		unlink("rel.fxt");
		CHECK_INT_EQ(0, chdir(cwd));
	}
}

/* Allocation failures while opening leave nothing on disk. */
static void test_open_alloc_failures(void)
{
	char path[128];

	path_of(path, sizeof(path), "af.fxt.gz");
	for (long k = 0; k < 8; k++) {
		struct snap_sink s;
		int err;

		snap_alloc_fail_after(k);
		err = snap_sink_open(&s, path);
		snap_alloc_fail_after(-1);
		CHECK(err == 0 || err == -ENOMEM);
		if (!err) {
			snap_sink_write(&s, "z", 1);
			CHECK_INT_EQ(0, snap_sink_close(&s));
			unlink(path);
		}
		snap_sink_fini(&s);
		CHECK_INT_EQ(0, dir_entries());
	}
}

/* As root: in a sticky world-writable directory another user's link is not
 * followed, nor another user's file replaced (fs.protected_symlinks and
 * protected_regular, whatever the sysctls say); our own link still is. */
static void test_foreign_link_refused(void)
{
	struct snap_sink s;
	char st[128], link[160], own[160], file[160], secret[128];
	unsigned char back[16];

	if (geteuid() != 0) {
		printf("SKIP test_sink.c:test_foreign_link_refused: needs root (lchown)\n");
		return;
	}
	path_of(st, sizeof(st), "sticky");
	path_of(secret, sizeof(secret), "secret");
	write_file(secret, "SECRET");
	CHECK_INT_EQ(0, mkdir(st, 0777));
	CHECK_INT_EQ(0, chmod(st, 01777));
	snprintf(link, sizeof(link), "%s/t.fxt", st);
	snprintf(own, sizeof(own), "%s/own.fxt", st);
	snprintf(file, sizeof(file), "%s/f.fxt", st);
	CHECK_INT_EQ(0, symlink(secret, link));
	CHECK_INT_EQ(0, lchown(link, 65534, 65534));
	CHECK_INT_EQ(-SNAP_EFOREIGN, snap_sink_open(&s, link));
	snap_sink_fini(&s);
	CHECK_INT_EQ(6, slurp(secret, back, sizeof(back)));
	write_file(file, "THEIRS");
	CHECK_INT_EQ(0, chown(file, 65534, 65534));
	CHECK_INT_EQ(-SNAP_EFOREIGN, snap_sink_open(&s, file));
	snap_sink_fini(&s);
	CHECK_INT_EQ(0, symlink(secret, own)); /* ours: followed */
	CHECK_INT_EQ(0, snap_sink_open(&s, own));
	snap_sink_write(&s, "new", 3);
	CHECK_INT_EQ(0, snap_sink_close(&s));
	CHECK_INT_EQ(3, slurp(secret, back, sizeof(back)));
	unlink(link);
	unlink(own);
	unlink(file);
	rmdir(st);
	unlink(secret);
	CHECK_INT_EQ(0, dir_entries());
}

/* close_fd hands back the file just named, which still reads back after its
 * name was replaced by something else (-serve serves it). */
static void test_close_keeps_fd(void)
{
	struct snap_sink s;
	char path[128];
	char back[8] = {0};
	int fd;

	path_of(path, sizeof(path), "kept.fxt");
	CHECK_INT_EQ(0, open_sink(&s, path));
	snap_sink_write(&s, "trace", 5);
	CHECK_INT_EQ(0, snap_sink_close_fd(&s, &fd));
	CHECK(fd >= 0);
	unlink(path);
	write_file(path, "OTHER");
	CHECK_INT_EQ(5, pread(fd, back, sizeof(back), 0));
	CHECK_STR_EQ("trace", back);
	close(fd);
	unlink(path);
	CHECK_INT_EQ(0, snap_sink_open(&s, "/dev/null")); /* in place: nothing to keep */
	snap_sink_write(&s, "x", 1);
	CHECK_INT_EQ(0, snap_sink_close_fd(&s, &fd));
	CHECK_INT_EQ(-1, fd);
	CHECK_INT_EQ(0, dir_entries());
}

/* ---- the writer thread (snap_sink_set_writer) ---- */

/* Writes n bytes of p to path through a sink (writer thread when wr, gzip
 * threads when gz_jobs), in pieces of every size: one byte, a few, more than
 * a buffer. Returns the file's bytes (owned), their count in *len. */
static unsigned char *write_through(const char *path, int wr, int gz_jobs, const unsigned char *p,
				    size_t n, long *len)
{
	static const size_t sizes[] = {1, 7, 100, 4096, 65535, 65536, 70000, 300000};
	struct snap_sink s;
	unsigned char *f = malloc(2 * n + 1024);
	size_t off = 0;
	int fd;

	CHECK_INT_EQ(0, snap_sink_open(&s, path));
	if (gz_jobs) {
		CHECK_INT_EQ(0, snap_sink_set_gz_level(&s, 1));
		CHECK_INT_EQ(0, snap_sink_set_gz_jobs(&s, gz_jobs));
	}
	CHECK_INT_EQ(0, snap_sink_set_writer(&s, wr));
	CHECK(!wr == !s.wr);
	for (size_t i = 0; off < n; i++) {
		size_t k = sizes[(i * 5) % 8];

		if (k > n - off)
			k = n - off;
		snap_sink_write(&s, p + off, k);
		off += k;
	}
	CHECK_INT_EQ(-EINVAL, snap_sink_set_writer(&s, 1)); /* too late */
	CHECK_INT_EQ(0, snap_sink_close(&s));
	CHECK(s.wr == NULL);
	fd = open(path, O_RDONLY);
	*len = fd >= 0 ? read(fd, f, 2 * n + 1024) : -1;
	close(fd);
	return f;
}

/* A large output through the writer thread: the same bytes, in order, as
 * without it, plain and gzip-compressed on 2 threads; its writeback started
 * on the way (the writer's sync_file_range). */
static void test_writer_large(void)
{
	char path[128];
	size_t n = 12u << 20;
	unsigned char *p = pattern(n), *a, *b;
	long alen, blen;
	struct snap_sink s;

	path_of(path, sizeof(path), "wlarge.fxt");
	a = write_through(path, 1, 0, p, n, &alen);
	CHECK_INT_EQ((long)n, alen);
	CHECK(alen == (long)n && !memcmp(a, p, n));
	free(a);
	path_of(path, sizeof(path), "wlarge.fxt.gz");
	a = write_through(path, 0, 2, p, n, &alen);
	b = write_through(path, 1, 2, p, n, &blen);
	CHECK_INT_EQ(alen, blen);
	CHECK(alen == blen && !memcmp(a, b, (size_t)alen));
	free(a);
	free(b);
	a = malloc(n + 10);
	CHECK_INT_EQ((long)n, slurp(path, a, n + 10));
	CHECK(!memcmp(a, p, n));
	free(a);
	unlink(path);
	path_of(path, sizeof(path), "wlarge.fxt");
	unlink(path);
	/* the writeback of all but the last chunk is under way once the writer wrote it */
	CHECK_INT_EQ(0, snap_sink_open(&s, path));
	CHECK_INT_EQ(0, snap_sink_set_writer(&s, 1));
	snap_sink_write(&s, p, n);
	CHECK_INT_EQ(0, snap_sink_sync(&s));
	CHECK(s.written == n && s.wb_from >= n - (1u << 20)); /* (SINK_WB_CHUNK) */
	CHECK(access(path, F_OK) != 0);			      /* named at close only */
	CHECK_INT_EQ(0, snap_sink_close(&s));
	unlink(path);
	free(p);
	CHECK_INT_EQ(0, dir_entries());
}

/* Not a file sink, after the first write: -EINVAL; off again before a write:
 * the writes stay on this thread. */
static void test_writer_settings(void)
{
	struct snap_sink s;
	char path[128];
	unsigned char back[16];

	CHECK_INT_EQ(0, snap_sink_init_mem(&s));
	CHECK_INT_EQ(-EINVAL, snap_sink_set_writer(&s, 1));
	snap_sink_fini(&s);
	path_of(path, sizeof(path), "wset.fxt");
	CHECK_INT_EQ(0, snap_sink_open(&s, path));
	snap_sink_write(&s, "ab", 2);
	CHECK_INT_EQ(-EINVAL, snap_sink_set_writer(&s, 1));
	snap_sink_abort(&s);
	CHECK_INT_EQ(0, snap_sink_open(&s, path));
	CHECK_INT_EQ(0, snap_sink_set_writer(&s, 1));
	CHECK_INT_EQ(0, snap_sink_set_writer(&s, 0));
	CHECK(s.wr == NULL && s.buf != NULL);
	snap_sink_write(&s, "cd", 2);
	CHECK_INT_EQ(0, snap_sink_close(&s));
	CHECK_INT_EQ(2, slurp(path, back, sizeof(back)));
	unlink(path);
	CHECK_INT_EQ(0, dir_entries());
}

/* As root: a private /dev/full written in place by the writer thread: its
 * ENOSPC is the sticky error at the next hand-over (here the sync), later
 * writes are dropped, close returns it; the device stays. Gzip too. */
static void test_writer_full(void)
{
	struct snap_sink s;
	char path[128];
	struct stat st;
	size_t n = 1u << 20;
	unsigned char *p = pattern(n);

	if (geteuid() != 0) {
		printf("SKIP test_sink.c:test_writer_full: needs root (mknod)\n");
		free(p);
		return;
	}
	for (int gz = 0; gz < 2; gz++) {
		path_of(path, sizeof(path), gz ? "full.gz" : "full");
		if (stat("/dev/full", &st) < 0 || mknod(path, S_IFCHR | 0666, st.st_rdev) < 0) {
			printf("SKIP test_sink.c:test_writer_full: mknod not allowed here\n");
			break;
		}
		CHECK_INT_EQ(0, snap_sink_open(&s, path));
		CHECK_INT_EQ(0, snap_sink_set_writer(&s, 1));
		snap_sink_write(&s, p, n);
		CHECK_INT_EQ(-ENOSPC, snap_sink_sync(&s));
		CHECK_INT_EQ(-ENOSPC, snap_sink_error(&s));
		snap_sink_write(&s, p, 100);
		CHECK_INT_EQ(-ENOSPC, snap_sink_close(&s));
		CHECK(lstat(path, &st) == 0 && S_ISCHR(st.st_mode));
		unlink(path);
	}
	free(p);
	CHECK_INT_EQ(0, dir_entries());
}

/* A FIFO whose reader went away (SIGPIPE ignored, as under trap '' PIPE):
 * the writer thread's EPIPE is close's error. */
static void test_writer_fifo_gone(void)
{
	struct snap_sink s;
	char path[128];
	size_t n = 300000;
	unsigned char *p = pattern(n);
	void (*oldsig)(int) = signal(SIGPIPE, SIG_IGN);
	int rfd;

	path_of(path, sizeof(path), "gone.fxt");
	CHECK_INT_EQ(0, mkfifo(path, 0600));
	rfd = open(path, O_RDONLY | O_NONBLOCK);
	CHECK(rfd >= 0);
	CHECK_INT_EQ(0, snap_sink_open(&s, path));
	CHECK_INT_EQ(0, snap_sink_set_writer(&s, 1));
	close(rfd);
	snap_sink_write(&s, p, n);
	CHECK_INT_EQ(-EPIPE, snap_sink_close(&s));
	signal(SIGPIPE, oldsig);
	unlink(path);
	free(p);
	CHECK_INT_EQ(0, dir_entries());
}

static void on_alarm(int sig)
{
	(void)sig;
	fprintf(stderr, "test_writer_abort_stuck: the abort did not return\n");
	_exit(1);
}

/* A FIFO whose reader never reads: the writer thread sleeps in write(); an
 * abort (a failed decode, Ctrl-C) still returns (the write is cancelled). */
static void test_writer_abort_stuck(void)
{
	struct snap_sink s;
	char path[128];
	size_t n = 300000;
	unsigned char *p = pattern(n);
	struct stat st;
	int rfd;

	path_of(path, sizeof(path), "stuck.fxt");
	CHECK_INT_EQ(0, mkfifo(path, 0600));
	rfd = open(path, O_RDONLY | O_NONBLOCK);
	CHECK(rfd >= 0);
	for (int close_err = 0; close_err < 2; close_err++) {
		CHECK_INT_EQ(0, snap_sink_open(&s, path));
		CHECK_INT_EQ(0, snap_sink_set_writer(&s, 1));
		snap_sink_write(&s, p, n); /* more than the pipe holds, less than the ring */
		snap_sink_flush(&s);
		signal(SIGALRM, on_alarm);
		alarm(60);
		if (close_err) { /* a close after an error aborts too */
			snap_sink_fail(&s, -EIO);
			CHECK_INT_EQ(-EIO, snap_sink_close(&s));
		} else {
			snap_sink_abort(&s);
		}
		alarm(0);
		signal(SIGALRM, SIG_DFL);
		CHECK(s.wr == NULL && s.fd == -1);
		/* empty the pipe for the next round */
		while (read(rfd, p, n) > 0)
			;
	}
	close(rfd);
	CHECK(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode));
	unlink(path);
	free(p);
	CHECK_INT_EQ(0, dir_entries());
}

/* Out of memory for the writer's ring: -ENOMEM, nothing leaks, and the sink
 * writes on this thread as before. */
static void test_writer_alloc_failures(void)
{
	char path[128];

	path_of(path, sizeof(path), "walloc.fxt");
	for (long k = 0; k < 12; k++) {
		struct snap_sink s;
		size_t n = 200000;
		unsigned char *p = pattern(n), *back = malloc(n + 10);
		int err;

		CHECK_INT_EQ(0, snap_sink_open(&s, path));
		snap_alloc_fail_after(k);
		err = snap_sink_set_writer(&s, 1);
		snap_alloc_fail_after(-1);
		CHECK(err == 0 || err == -ENOMEM);
		CHECK(!err == !!s.wr);
		snap_sink_write(&s, p, n);
		CHECK_INT_EQ(0, snap_sink_close(&s));
		CHECK_INT_EQ((long)n, slurp(path, back, n + 10));
		CHECK(!memcmp(back, p, n));
		unlink(path);
		free(p);
		free(back);
		if (!err)
			break;
	}
	CHECK_INT_EQ(0, dir_entries());
}

#define RUNW(fn) snap_test_run(__FILE__, #fn " (writer thread)", fn)

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/snap_sink_XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_mem);
	RUN(test_sticky_error);
	RUN(test_file_plain);
	RUN(test_file_gz);
	RUN(test_b8_16_gz_level);
	RUN(test_gz_same_for_every_jobs);
	RUN(test_gz_write_error_with_jobs);
	RUN(test_b6_1_existing_output_kept);
	RUN(test_write_error);
	RUN(test_b6_1_unnamed_while_writing);
	RUN(test_long_name);
	RUN(test_directory_refused);
	RUN(test_mode_kept);
	RUN(test_symlink_followed);
	RUN(test_writeback_started);
	RUN(test_fifo_in_place);
	RUN(test_device_in_place);
	RUN(test_bad_directory);
	RUN(test_open_alloc_failures);
	RUN(test_foreign_link_refused);
	RUN(test_close_keeps_fd);
	RUN(test_writer_large);
	RUN(test_writer_settings);
	RUN(test_writer_full);
	RUN(test_writer_fifo_gone);
	RUN(test_writer_abort_stuck);
	RUN(test_writer_alloc_failures);
	/* the file tests again, with the writer thread */
	with_writer = 1;
	RUNW(test_file_plain);
	RUNW(test_file_gz);
	RUNW(test_gz_write_error_with_jobs);
	RUNW(test_b6_1_existing_output_kept);
	RUNW(test_write_error);
	RUNW(test_b6_1_unnamed_while_writing);
	RUNW(test_long_name);
	RUNW(test_mode_kept);
	RUNW(test_symlink_followed);
	RUNW(test_writeback_started);
	RUNW(test_fifo_in_place);
	RUNW(test_device_in_place);
	RUNW(test_close_keeps_fd);
	with_writer = 0;
	rmdir(dir);
	return snap_test_done();
}
