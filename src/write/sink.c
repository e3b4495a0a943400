// SPDX-License-Identifier: GPL-2.0
/*
 * The byte sink: buffered bytes go to memory or, through write/pgz, to a
 * temporary file that is renamed over the target only when all went well.
 */
#include "write/sink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/err.h"
#include "util/vec.h"
#include "write/pgz.h"

#define SINK_GZ_LEVEL 6
/* the file's bytes between two starts of writeback (sink_write_file): the
 * close's fsync waits for at most that much (1 MiB: 0.6-0.7 ms for the bench's
 * 38 MB .fxt, 4 MiB: 1.1-1.2 ms) */
#define SINK_WB_CHUNK (1u << 20)

static void sink_set_err(struct snap_sink *s, int err)
{
	if (!s->err)
		s->err = err;
}

int snap_sink_fail(struct snap_sink *s, int err)
{
	if (err < 0)
		sink_set_err(s, err);
	return s->err;
}

int snap_sink_init_mem(struct snap_sink *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->dirfd = -1;
	s->kind = SNAP_SINK_MEM;
	s->buf = snap_malloc(SNAP_SINK_BUF);
	if (!s->buf) {
		s->err = -ENOMEM;
		return -ENOMEM;
	}
	return 0;
}

/* Writes all of (p, len) to fd, retrying on EINTR and short writes. */
static int sink_write_fd(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes (p, len) to the file and, every SINK_WB_CHUNK bytes, starts the
 * writeback of the bytes since the last start (sync_file_range, no wait): the
 * disk writes while the decode goes on, and close's fsync waits for the last
 * chunk only, not the whole file (docs/design.md, "Output is never
 * half-written"). A device or FIFO written in place has nothing to start. */
static int sink_write_file(struct snap_sink *s, const unsigned char *p, size_t len)
{
	int err = sink_write_fd(s->fd, p, len);

	if (err < 0)
		return err;
	s->written += len;
	if (!s->in_place && s->written - s->wb_from >= SINK_WB_CHUNK) {
		/* (best effort: an error here is fsync's to report) */
		sync_file_range(s->fd, (off_t)s->wb_from, (off_t)(s->written - s->wb_from),
				SYNC_FILE_RANGE_WRITE);
		s->wb_from = s->written;
	}
	return 0;
}

/*
 * The writer thread (snap_sink_set_writer; docs/design.md, "Output is never
 * half-written"): a ring of SNAP_SINK_WR_BUFS buffers of SNAP_SINK_BUF bytes.
 * The producer fills slot submitted % N (a plain sink's s->buf is that slot
 * itself, no copy; a gzip sink copies pgz's compressed blocks into it) and
 * hands it over; the writer writes the slots in order with sink_write_file
 * (fd, written, wb_from are the writer's while it runs) and keeps its first
 * error, which the producer takes as the sticky error at its next hand-over
 * or at the sync of close. The writer is woken when half the ring is ready
 * (or the producer waits for it), not at every buffer, as source/batch does;
 * the producer waits only when every slot is in use. After an error the
 * writer drops what it is handed.
 */
#define WR_N	SNAP_SINK_WR_BUFS
#define WR_HALF (WR_N / 2)

struct snap_sink_writer {
	struct snap_sink *s;
	pthread_t thr;
	pthread_mutex_t mu;
	pthread_cond_t cv_work, cv_free;
	unsigned char *buf[WR_N];
	size_t len[WR_N];
	size_t fill;	    /* gzip: bytes in the slot being filled (the producer's) */
	uint64_t submitted; /* slots handed over (changed by the producer, under mu) */
	uint64_t taken;	    /* slots the writer took (under mu) */
	uint64_t done;	    /* slots written or dropped (under mu) */
	int err;	    /* the writer's first error (under mu) */
	int sync, stop;	    /* the producer waits for everything / ends the writer (under mu) */
	int wsleep, psleep; /* the writer sleeps on cv_work, the producer on cv_free */
};

static void *sink_writer_main(void *arg)
{
	struct snap_sink_writer *w = arg;
	struct snap_sink *s = w->s;

	/* cancelled (an in-place output's abort) only inside write(): sink_wr_stop */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_mutex_lock(&w->mu);
	for (;;) {
		uint64_t from, to;
		int err;

		while (!w->stop &&
		       (w->taken == w->submitted ||
			(!w->sync && !w->psleep && w->submitted - w->taken < WR_HALF))) {
			w->wsleep = 1;
			pthread_cond_wait(&w->cv_work, &w->mu);
			w->wsleep = 0;
		}
		if (w->stop)
			break;
		from = w->taken;
		to = w->taken = w->submitted;
		err = w->err;
		pthread_mutex_unlock(&w->mu);
		for (uint64_t k = from; !err && k < to; k++) {
			if (s->in_place) /* a FIFO nobody reads: abort cancels the write */
				pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
			err = sink_write_file(s, w->buf[k % WR_N], w->len[k % WR_N]);
			if (s->in_place)
				pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		}
		pthread_mutex_lock(&w->mu);
		if (err < 0 && !w->err)
			w->err = err;
		w->done = to;
		if (w->psleep)
			pthread_cond_signal(&w->cv_free);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* The slot the producer fills. */
static unsigned char *sink_wr_slot(const struct snap_sink_writer *w)
{
	return w->buf[w->submitted % WR_N];
}

/* Hands the slot being filled (len bytes) to the writer and waits for a free
 * one (a plain sink's s->buf then points to it). Returns the sticky error,
 * the writer's first error once it has one. */
static int sink_wr_submit(struct snap_sink *s, size_t len)
{
	struct snap_sink_writer *w = s->wr;
	int wake, err;

	pthread_mutex_lock(&w->mu);
	w->len[w->submitted % WR_N] = len;
	w->submitted++;
	wake = w->wsleep && w->submitted - w->taken >= WR_HALF;
	while (w->submitted - w->done == WR_N) {
		if (w->wsleep)
			pthread_cond_signal(&w->cv_work);
		wake = 0;
		w->psleep = 1;
		pthread_cond_wait(&w->cv_free, &w->mu);
		w->psleep = 0;
	}
	err = w->err;
	pthread_mutex_unlock(&w->mu);
	if (wake) /* (after the unlock: a thread woken into a held lock sleeps again) */
		pthread_cond_signal(&w->cv_work);
	w->fill = 0;
	if (!s->gz)
		s->buf = sink_wr_slot(w);
	if (err < 0)
		sink_set_err(s, err);
	return s->err;
}

/* Waits until the writer wrote (or dropped) every slot handed over; returns
 * the sticky error. */
static int sink_wr_wait(struct snap_sink *s)
{
	struct snap_sink_writer *w = s->wr;
	int err;

	pthread_mutex_lock(&w->mu);
	w->sync = 1;
	while (w->done != w->submitted) {
		if (w->wsleep)
			pthread_cond_signal(&w->cv_work);
		w->psleep = 1;
		pthread_cond_wait(&w->cv_free, &w->mu);
		w->psleep = 0;
	}
	w->sync = 0;
	err = w->err;
	pthread_mutex_unlock(&w->mu);
	if (err < 0)
		sink_set_err(s, err);
	return s->err;
}

/* Copies (p, len), compressed bytes, into the ring, handing full slots over. */
static int sink_wr_append(struct snap_sink *s, const unsigned char *p, size_t len)
{
	struct snap_sink_writer *w = s->wr;

	while (len && !s->err) {
		size_t n = SNAP_SINK_BUF - w->fill;

		if (n > len)
			n = len;
		memcpy(sink_wr_slot(w) + w->fill, p, n);
		w->fill += n;
		p += n;
		len -= n;
		if (w->fill == SNAP_SINK_BUF)
			sink_wr_submit(s, w->fill);
	}
	return s->err;
}

/* Ends the writer thread (what it holds is dropped: a sync comes first where
 * it is to be written) and frees the ring but the slot a plain sink fills. cancel: an in-place output, whose
 * write may never return (a FIFO nobody reads), is cancelled in it. */
static void sink_wr_stop(struct snap_sink *s, int cancel)
{
	struct snap_sink_writer *w = s->wr;

	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_signal(&w->cv_work);
	pthread_mutex_unlock(&w->mu);
	if (cancel)
		pthread_cancel(w->thr);
	pthread_join(w->thr, NULL);
	pthread_cond_destroy(&w->cv_work);
	pthread_cond_destroy(&w->cv_free);
	pthread_mutex_destroy(&w->mu);
	for (int i = 0; i < WR_N; i++)
		if (w->buf[i] != s->buf) /* (a plain sink keeps its slot as its buffer) */
			snap_free(w->buf[i]);
	snap_free(w);
	s->wr = NULL;
}

int snap_sink_set_writer(struct snap_sink *s, int on)
{
	struct snap_sink_writer *w;
	sigset_t set, old;
	int i, r;

	if (s->kind != SNAP_SINK_FILE || s->fd < 0 || s->total || !s->buf)
		return -EINVAL;
	if (!on || s->wr) {
		if (!on)
			sink_wr_stop(s, 0);
		return 0;
	}
	w = snap_calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (i = s->gz ? 0 : 1; i < WR_N; i++)
		if (!(w->buf[i] = snap_malloc(SNAP_SINK_BUF)))
			break;
	if (i < WR_N) {
		while (i-- > 0)
			snap_free(w->buf[i]);
		snap_free(w);
		return -ENOMEM;
	}
	if (!s->gz)
		w->buf[0] = s->buf; /* the buffer writers fill is the ring's first slot */
	w->s = s;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv_work, NULL);
	pthread_cond_init(&w->cv_free, NULL);
	/* signals stay with the producing threads (cli/pipeline.c, SIGINT) */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	r = pthread_create(&w->thr, NULL, sink_writer_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) { /* the writes stay on this thread: the same bytes */
		pthread_cond_destroy(&w->cv_work);
		pthread_cond_destroy(&w->cv_free);
		pthread_mutex_destroy(&w->mu);
		for (i = s->gz ? 0 : 1; i < WR_N; i++)
			snap_free(w->buf[i]);
		snap_free(w);
		return 0;
	}
	s->wr = w;
	return 0;
}

/* The compressor's output (write/pgz.h, on this thread, in order) to the
 * file, or to the writer thread's ring. */
static int sink_gz_out(void *ctx, const unsigned char *p, size_t len)
{
	struct snap_sink *s = ctx;

	return s->wr ? sink_wr_append(s, p, len) : sink_write_file(s, p, len);
}

/* Sends (p, len) to the final destination (memory array, file or deflate). */
static int sink_emit(struct snap_sink *s, const unsigned char *p, size_t len)
{
	int err;

	if (!len)
		return 0;
	switch (s->kind) {
	case SNAP_SINK_MEM:
		err = snap_vec_reserve(&s->mem, &s->mem_cap, s->mem_len + len, 1);
		if (err < 0)
			return err;
		memcpy(s->mem + s->mem_len, p, len);
		s->mem_len += len;
		return 0;
	case SNAP_SINK_FILE:
		if (s->gz)
			return snap_pgz_write(s->pgz, p, len);
		return sink_write_file(s, p, len);
	default:
		return -EBADF;
	}
}

int snap_sink_flush(struct snap_sink *s)
{
	if (!s->err && s->used && s->wr && !s->gz) {
		sink_wr_submit(s, s->used); /* (s->buf: the next slot) */
	} else if (!s->err && s->used) {
		int err = sink_emit(s, s->buf, s->used);

		if (err < 0)
			sink_set_err(s, err);
	}
	s->used = 0;
	return s->err;
}

int snap_sink_sync(struct snap_sink *s)
{
	if (snap_sink_flush(s) < 0 || !s->wr)
		return s->err;
	if (s->wr->fill)
		sink_wr_submit(s, s->wr->fill);
	return sink_wr_wait(s);
}

void snap_sink_write_slow(struct snap_sink *s, const void *p, size_t len)
{
	if (s->err)
		return;
	if (!s->buf) {
		sink_set_err(s, -EBADF);
		return;
	}
	if (s->wr && !s->gz) { /* through the ring's slots, whatever len */
		const unsigned char *b = p;

		while (len && !s->err) {
			size_t n = SNAP_SINK_BUF - s->used;

			if (n > len)
				n = len;
			memcpy(s->buf + s->used, b, n);
			s->used += n;
			s->total += n;
			b += n;
			len -= n;
			if (s->used == SNAP_SINK_BUF)
				snap_sink_flush(s);
		}
		return;
	}
	if (snap_sink_flush(s) < 0)
		return;
	if (len >= SNAP_SINK_BUF) {
		int err = sink_emit(s, p, len);

		if (err < 0)
			sink_set_err(s, err);
	} else {
		memcpy(s->buf, p, len);
		s->used = len;
	}
	s->total += len;
}

const unsigned char *snap_sink_mem_data(struct snap_sink *s, size_t *len)
{
	*len = 0;
	if (s->kind != SNAP_SINK_MEM)
		return NULL;
	snap_sink_flush(s);
	if (!s->mem_len)
		return NULL;
	*len = s->mem_len;
	return s->mem;
}

static int sink_has_suffix(const char *path, const char *suffix)
{
	size_t n = strlen(path), m = strlen(suffix);

	return n >= m && !strcmp(path + n - m, suffix);
}

/* A fresh temporary name ".BASE.XXXXXX" for base into an owned string; BASE
 * is cut so the name fits NAME_MAX (an output name of up to 255 bytes works). */
static char *sink_tmp_name(const char *base)
{
	size_t blen = strlen(base);
	char *t;

	if (blen > NAME_MAX - 8)
		blen = NAME_MAX - 8;
	t = snap_malloc(1 + blen + 8);
	if (!t)
		return NULL;
	t[0] = '.';
	memcpy(t + 1, base, blen);
	memcpy(t + 1 + blen, ".XXXXXX", 8);
	return t;
}

/* Fills the XXXXXX at the end of tmp with a new guess (try: the attempt). */
static void sink_tmp_guess(char *tmp, unsigned try)
{
	static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	size_t tlen = strlen(tmp);
	struct timespec ts;
	uint64_t x;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	x = (uint64_t)ts.tv_nsec * 2654435761u + (uint64_t)getpid() * 40503u + try * 7919u;
	for (size_t i = tlen - 6; i < tlen; i++, x /= 36)
		tmp[i] = digits[x % 36];
}

/* The mode a plain open(O_CREAT, 0666) would have given: mkostemp uses 0600.
 * An output that exists keeps its mode and (best effort, as root) its owner. */
static int sink_fix_mode(int fd, const struct stat *old)
{
	mode_t mask;

	if (old) {
		if (fchown(fd, old->st_uid, old->st_gid) < 0 && errno != EPERM)
			return -errno;
		if (fchmod(fd, old->st_mode & 07777) < 0)
			return -errno;
		return 0;
	}
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0)
		return -errno;
	return 0;
}

/* The directory part of path ("." when none) as an owned string. */
static char *sink_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return snap_strndup(".", 1);
	return snap_strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/*
 * The kernel's fs.protected_symlinks rule, applied whatever the sysctl says
 * (docs/guarantees.md, "Directories other users can write"): in a sticky
 * world-writable directory (/tmp) an entry st (found at path) that belongs
 * neither to us nor to the directory's owner is another user's plant. A
 * link there is not followed, and an existing file or FIFO there is not
 * written (as protected_regular and protected_fifos). Returns 0, or
 * -SNAP_EFOREIGN.
 */
static int sink_check_owner(const char *path, const struct stat *st)
{
	char *dir = sink_dir_of(path);
	struct stat d;
	int r;

	if (!dir)
		return -ENOMEM;
	r = stat(dir, &d);
	snap_free(dir);
	if (r < 0)
		return 0; /* the open that follows reports it */
	if ((d.st_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH) && st->st_uid != geteuid() &&
	    st->st_uid != d.st_uid)
		return -SNAP_EFOREIGN;
	return 0;
}

/* Applies sink_check_owner to every symbolic link among the directories of
 * path ("a/b/c": "a" and "a/b"). Returns 0 or -SNAP_EFOREIGN / -ENOMEM. */
static int sink_check_dirs(const char *path)
{
	size_t n = strlen(path);
	char *p = snap_strndup(path, n);
	int err = p ? 0 : -ENOMEM;

	for (size_t i = 1; p && !err && i < n; i++) {
		struct stat st;

		if (p[i] != '/' || p[i - 1] == '/')
			continue;
		p[i] = '\0';
		if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode))
			err = sink_check_owner(p, &st);
		p[i] = '/';
	}
	snap_free(p);
	return err;
}

/* Follows the symbolic links path's last name leads through, each checked
 * with sink_check_owner (and the links among its directories), as an owned
 * string: the file the output is (an existing file, or the target a
 * dangling link creates; the link stays). NULL with *err set on failure
 * (-ELOOP after 40 links, -SNAP_EFOREIGN, -ENOMEM). */
static char *sink_follow(const char *path, int *err)
{
	char *p = snap_strndup(path, strlen(path));

	*err = -ENOMEM;
	for (int hops = 0; p; hops++) {
		struct stat st;
		char link[4096], *next;
		const char *slash;
		ssize_t n;
		size_t dlen;

		*err = sink_check_dirs(p);
		if (*err < 0)
			break;
		if (lstat(p, &st) < 0 || !S_ISLNK(st.st_mode))
			return p;
		*err = hops == 40 ? -ELOOP : sink_check_owner(p, &st);
		if (*err < 0)
			break;
		n = readlink(p, link, sizeof(link) - 1);
		if (n <= 0) {
			*err = n < 0 ? -errno : -ENOENT;
			break;
		}
		link[n] = '\0';
		slash = strrchr(p, '/');
		dlen = link[0] == '/' || !slash ? 0 : (size_t)(slash - p) + 1;
		next = snap_malloc(dlen + (size_t)n + 1);
		if (next) {
			memcpy(next, p, dlen);
			memcpy(next + dlen, link, (size_t)n + 1);
		}
		snap_free(p);
		p = next;
		*err = -ENOMEM;
	}
	snap_free(p);
	return NULL;
}

/* The output as an unnamed file (O_TMPFILE) in the output's directory, so
 * that nothing is left behind when snaptrace is killed (SIGKILL, OOM) before
 * the end; it gets the mode (and owner) it will keep. Read-write, so that
 * -serve can serve it (snap_sink_close_fd). Returns the descriptor,
 * -EOPNOTSUPP when the filesystem cannot (then the caller uses a named
 * temporary file), or -errno. */
static int sink_open_unnamed(int dirfd, const struct stat *old)
{
	int fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600), err = errno;

	if (fd < 0)
		return err == EOPNOTSUPP || err == EISDIR || err == EINVAL ? -EOPNOTSUPP : -err;
	err = sink_fix_mode(fd, old);
	if (err < 0) {
		close(fd);
		return err;
	}
	return fd;
}

/* A named temporary file (tmp: its template, filled in) in dirfd, created
 * O_EXCL|O_NOFOLLOW. Returns the descriptor or -errno. */
static int sink_open_named(int dirfd, char *tmp)
{
	for (unsigned tries = 0; tries < 100; tries++) {
		int fd;

		sink_tmp_guess(tmp, tries);
		fd = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* Gives the unnamed file fd the name name in dirfd: linked in directly when
 * the name is free, else linked as tmp (a fresh name from its XXXXXX
 * template) and renamed over it, so an existing output is replaced in one
 * step. Nothing is followed: a link planted at the name meanwhile is
 * replaced, not written through. Returns 0 or -errno. */
static int sink_link_unnamed(int fd, int dirfd, const char *name, char *tmp)
{
	char proc[64];
	int err;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	for (unsigned tries = 0; tries < 100; tries++) {
		sink_tmp_guess(tmp, tries);
		if (linkat(AT_FDCWD, proc, dirfd, tmp, AT_SYMLINK_FOLLOW) < 0) {
			if (errno == EEXIST)
				continue;
			return -errno;
		}
		if (renameat(dirfd, tmp, dirfd, name) == 0)
			return 0;
		err = -errno;
		unlinkat(dirfd, tmp, 0);
		return err;
	}
	return -EEXIST;
}

/* An existing output that is not a regular file (a device such as /dev/null,
 * a FIFO, /dev/stdout): written in place, never replaced. A directory or a
 * block device is refused. Returns the descriptor or -errno. */
static int sink_open_in_place(const char *path, const struct stat *st)
{
	int fd;

	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (S_ISBLK(st->st_mode) || S_ISSOCK(st->st_mode))
		return -SNAP_ENOTREG;
	fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int sink_gz_init(struct snap_sink *s)
{
	/* one gzip member, deflated in blocks (one thread until set_gz_jobs) */
	s->pgz = snap_pgz_new(SINK_GZ_LEVEL, 1, sink_gz_out, s);
	if (!s->pgz)
		return -ENOMEM;
	s->gz = 1;
	return 0;
}

int snap_sink_set_gz_level(struct snap_sink *s, int level)
{
	if (!s->gz || s->total)
		return -EINVAL;
	return snap_pgz_set_level(s->pgz, level);
}

int snap_sink_set_gz_jobs(struct snap_sink *s, int jobs)
{
	if (!s->gz || s->total)
		return -EINVAL;
	return snap_pgz_set_jobs(s->pgz, jobs);
}

/* Opens the regular (or missing) output s->path names: its directory once
 * (every later step is relative to that descriptor, so a directory renamed
 * meanwhile cannot redirect the output), then the unnamed or temporary file
 * in it. old: the existing output's status, or NULL. */
static int sink_open_replace(struct snap_sink *s, const struct stat *old)
{
	char *dir = sink_dir_of(s->path);
	const char *slash = strrchr(s->path, '/');
	int err;

	if (!dir)
		return -ENOMEM;
	s->name = slash ? slash + 1 : s->path;
	s->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0 && errno == EACCES) /* a directory we may write but not list */
		s->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	err = -errno;
	snap_free(dir);
	if (s->dirfd < 0)
		return err;
	s->tmp = sink_tmp_name(s->name);
	if (!s->tmp)
		return -ENOMEM;
	s->fd = sink_open_unnamed(s->dirfd, old);
	if (s->fd >= 0) {
		s->unnamed = 1;
		return 0;
	}
	if (s->fd != -EOPNOTSUPP)
		return s->fd;
	s->fd = sink_open_named(s->dirfd, s->tmp);
	if (s->fd < 0)
		return s->fd;
	s->named_tmp = 1;
	return sink_fix_mode(s->fd, old);
}

int snap_sink_open(struct snap_sink *s, const char *path)
{
	int err = -ENOMEM;
	size_t n = strlen(path);
	struct stat st, fst;
	int exists;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->dirfd = -1;
	s->kind = SNAP_SINK_FILE;
	if (n == 0 || path[n - 1] == '/') {
		err = -EISDIR;
		goto fail;
	}
	exists = stat(path, &st) == 0;
	s->path = sink_follow(path, &err);
	if (!s->path)
		goto fail;
	/* the file itself: another user's file in /tmp is neither replaced nor written */
	if (lstat(s->path, &fst) == 0 && (err = sink_check_owner(s->path, &fst)) < 0)
		goto fail;
	s->buf = snap_malloc(SNAP_SINK_BUF);
	err = -ENOMEM;
	if (!s->buf)
		goto fail;
	if (exists && !S_ISREG(st.st_mode)) {
		/* opened as named: /dev/stdout (a link to "pipe:[N]") works */
		s->fd = sink_open_in_place(path, &st);
		if (s->fd < 0) {
			err = s->fd;
			goto fail;
		}
		s->in_place = 1;
	} else {
		err = sink_open_replace(s, exists ? &st : NULL);
		if (err < 0)
			goto fail;
	}
	if (sink_has_suffix(path, ".gz")) {
		err = sink_gz_init(s);
		if (err < 0)
			goto fail;
	}
	return 0;
fail:
	snap_sink_abort(s);
	s->err = err;
	return err;
}

/* Releases memory and the descriptors; unlinks the temporary file if unlink. */
static void sink_release(struct snap_sink *s, int unlink_tmp)
{
	sink_wr_stop(s, s->in_place);
	if (s->kind == SNAP_SINK_FILE && s->fd >= 0)
		close(s->fd);
	if (unlink_tmp && s->named_tmp && s->dirfd >= 0)
		unlinkat(s->dirfd, s->tmp, 0);
	if (s->kind == SNAP_SINK_FILE && s->dirfd >= 0)
		close(s->dirfd);
	snap_pgz_free(s->pgz);
	snap_free(s->buf);
	snap_free(s->mem);
	snap_free(s->path);
	snap_free(s->tmp);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->dirfd = -1;
}

int snap_sink_close_fd(struct snap_sink *s, int *keep)
{
	int err;

	if (keep)
		*keep = -1;
	if (s->kind == SNAP_SINK_MEM)
		return snap_sink_flush(s);
	if (s->kind != SNAP_SINK_FILE)
		return s->err ? s->err : -EBADF;
	err = snap_sink_flush(s);
	if (!err && s->gz)
		err = snap_pgz_finish(s->pgz);
	if (s->wr) { /* every byte written, then this thread has the file again */
		if (!err)
			err = snap_sink_sync(s);
		sink_wr_stop(s, err < 0 && s->in_place);
	}
	if (!err && !s->in_place && fsync(s->fd) < 0)
		err = -errno;
	if (!err && s->unnamed)
		err = sink_link_unnamed(s->fd, s->dirfd, s->name, s->tmp);
	if (!err && s->named_tmp) {
		if (renameat(s->dirfd, s->tmp, s->dirfd, s->name) < 0)
			err = -errno;
		else
			s->named_tmp = 0;
	}
	if (!err) {
		int fd = s->fd;

		s->fd = -1;
		if (keep && !s->in_place)
			*keep = fd; /* the file just named, whatever its name leads to now */
		else if (close(fd) < 0)
			err = -errno;
	}
	if (!err) {
		if (!s->in_place)
			fsync(s->dirfd); /* the new name is durable; best effort */
		sink_release(s, 0);
		return 0;
	}
	sink_release(s, 1);
	s->err = err;
	return err;
}

int snap_sink_close(struct snap_sink *s)
{
	return snap_sink_close_fd(s, NULL);
}

void snap_sink_abort(struct snap_sink *s)
{
	sink_release(s, 1);
}

void snap_sink_fini(struct snap_sink *s)
{
	sink_release(s, 1);
}
