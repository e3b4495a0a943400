// SPDX-License-Identifier: GPL-2.0
/*
 * The byte sink: buffered bytes go to memory or, through zlib, to a
 * temporary file that is renamed over the target only when all went well.
 */
#include "write/sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/alloc.h"
#include "util/vec.h"

#define SINK_GZ_LEVEL 6

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

/* Runs deflate over (p, len) with flush mode, writing its output to the file. */
static int sink_deflate(struct snap_sink *s, const unsigned char *p, size_t len, int flush)
{
	z_stream *zs = s->zs;
	int zr;

	zs->next_in = (unsigned char *)p;
	zs->avail_in = (uInt)len;
	do {
		zs->next_out = s->zout;
		zs->avail_out = SNAP_SINK_BUF;
		zr = deflate(zs, flush);
		if (zr == Z_STREAM_ERROR)
			return -EIO;
		if (zs->avail_out < SNAP_SINK_BUF) {
			int err = sink_write_fd(s->fd, s->zout, SNAP_SINK_BUF - zs->avail_out);

			if (err < 0)
				return err;
		}
	} while (zs->avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
	return 0;
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
			return sink_deflate(s, p, len, Z_NO_FLUSH);
		return sink_write_fd(s->fd, p, len);
	default:
		return -EBADF;
	}
}

int snap_sink_flush(struct snap_sink *s)
{
	if (!s->err && s->used) {
		int err = sink_emit(s, s->buf, s->used);

		if (err < 0)
			sink_set_err(s, err);
	}
	s->used = 0;
	return s->err;
}

void snap_sink_write_slow(struct snap_sink *s, const void *p, size_t len)
{
	if (s->err)
		return;
	if (!s->buf) {
		sink_set_err(s, -EBADF);
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

/* Builds "DIR/.BASE.XXXXXX" for path into an owned string. */
static char *sink_tmp_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
	const char *base = path + dlen;
	size_t blen = strlen(base);
	char *t = snap_malloc(dlen + 1 + blen + 8);

	if (!t)
		return NULL;
	memcpy(t, path, dlen);
	t[dlen] = '.';
	memcpy(t + dlen + 1, base, blen);
	memcpy(t + dlen + 1 + blen, ".XXXXXX", 8);
	return t;
}

/* The mode a plain open(O_CREAT, 0666) would have given: mkostemp uses 0600. */
static int sink_fix_mode(int fd)
{
	mode_t mask = umask(0);

	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0)
		return -errno;
	return 0;
}

static int sink_gz_init(struct snap_sink *s)
{
	z_stream *zs = snap_calloc(1, sizeof(*zs));

	if (!zs)
		return -ENOMEM;
	s->zs = zs;
	s->zout = snap_malloc(SNAP_SINK_BUF);
	if (!s->zout)
		return -ENOMEM;
	/* windowBits 15 + 16: a gzip header and trailer around the deflate stream */
	if (deflateInit2(zs, SINK_GZ_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		snap_free(zs);
		s->zs = NULL;
		return -ENOMEM;
	}
	s->gz = 1;
	return 0;
}

int snap_sink_set_gz_level(struct snap_sink *s, int level)
{
	if (!s->gz || level < 0 || level > 9 || s->total)
		return -EINVAL;
	if (deflateParams(s->zs, level, Z_DEFAULT_STRATEGY) != Z_OK)
		return -EINVAL;
	return 0;
}

int snap_sink_open(struct snap_sink *s, const char *path)
{
	int err = -ENOMEM;
	size_t n = strlen(path);

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->kind = SNAP_SINK_FILE;
	if (n == 0 || path[n - 1] == '/') {
		err = -EISDIR;
		goto fail;
	}
	s->path = snap_strndup(path, n);
	s->tmp = sink_tmp_name(path);
	s->buf = snap_malloc(SNAP_SINK_BUF);
	if (!s->path || !s->tmp || !s->buf)
		goto fail;
	s->fd = mkostemp(s->tmp, O_CLOEXEC | O_NOFOLLOW);
	if (s->fd < 0) {
		err = -errno;
		snap_free(s->tmp); /* nothing was created */
		s->tmp = NULL;
		goto fail;
	}
	err = sink_fix_mode(s->fd);
	if (err < 0)
		goto fail;
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

/* Releases memory and the descriptor; unlinks the temporary file if unlink. */
static void sink_release(struct snap_sink *s, int unlink_tmp)
{
	if (s->kind == SNAP_SINK_FILE && s->fd >= 0)
		close(s->fd);
	if (unlink_tmp && s->tmp)
		unlink(s->tmp);
	if (s->zs) {
		deflateEnd(s->zs);
		snap_free(s->zs);
	}
	snap_free(s->zout);
	snap_free(s->buf);
	snap_free(s->mem);
	snap_free(s->path);
	snap_free(s->tmp);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

/* fsyncs the directory holding path so the rename is durable; best effort. */
static void sink_sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? snap_strndup(path, slash == path ? 1 : (size_t)(slash - path)) : NULL;
	int fd = open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	snap_free(dir);
}

int snap_sink_close(struct snap_sink *s)
{
	int err;

	if (s->kind == SNAP_SINK_MEM)
		return snap_sink_flush(s);
	if (s->kind != SNAP_SINK_FILE)
		return s->err ? s->err : -EBADF;
	err = snap_sink_flush(s);
	if (!err && s->gz)
		err = sink_deflate(s, NULL, 0, Z_FINISH);
	if (!err && fsync(s->fd) < 0)
		err = -errno;
	if (!err) {
		int fd = s->fd;

		s->fd = -1;
		if (close(fd) < 0)
			err = -errno;
	}
	if (!err && rename(s->tmp, s->path) < 0)
		err = -errno;
	if (!err) {
		sink_sync_dir(s->path);
		sink_release(s, 0);
		return 0;
	}
	sink_release(s, 1);
	s->err = err;
	return err;
}

void snap_sink_abort(struct snap_sink *s)
{
	sink_release(s, 1);
}

void snap_sink_fini(struct snap_sink *s)
{
	sink_release(s, 1);
}
