/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A byte sink with a sticky error (Redis style): writers call
 * snap_sink_write() without checking, and check once at the end.
 *
 * Two kinds:
 *  - memory: bytes accumulate in a growable array (tests, fuzzing);
 *  - file: bytes go to an unnamed file (O_TMPFILE) in the target's directory,
 *    given its name by snap_sink_close (linkat, then rename over an existing
 *    target), so a killed snaptrace leaves nothing behind; where the
 *    filesystem has no O_TMPFILE, to a temporary file ".NAME.XXXXXX" next to
 *    the target (O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC). Gzip-compressed (level
 *    6, one gzip member a block, compressed by write/pgz on
 *    snap_sink_set_gz_jobs threads) if the target name ends in ".gz".
 *    The file's writeback is started every few MB as it is written, and
 *    snap_sink_close() fsyncs and renames the temporary file into place;
 *    snap_sink_abort() or any error unlinks it, so an existing output is
 *    never truncated or half-written. The target's directory is opened once
 *    and every later step is relative to it. Symbolic links are followed
 *    (the link stays, its target is replaced) unless one belongs to another
 *    user in a sticky world-writable directory (/tmp), as the kernel's
 *    fs.protected_symlinks does whatever its setting: that is refused
 *    (-SNAP_EFOREIGN), and so is an existing target of another user there.
 *    An existing target keeps its mode (and, as root, its owner). An existing
 *    target that is not a regular file (a character device, a FIFO) is
 *    written in place, never replaced; a directory or block device is
 *    refused (docs/guarantees.md).
 * Writes are buffered (SNAP_SINK_BUF bytes). With snap_sink_set_writer a
 * file sink's write() and sync_file_range run on a writer thread of its own
 * (a decode with -j > 1): full buffers, and pgz's compressed blocks, are
 * handed to it through a ring of SNAP_SINK_WR_BUFS buffers (the producer waits
 * while all are in use, so memory stays flat), written in order, and its
 * first error becomes the sticky error at the next hand-over or at close
 * (docs/design.md, "Output is never half-written"). This file is the only
 * place below cli/ that does file I/O: it is the edge of the pipeline.
 */
#ifndef SNAP_WRITE_SINK_H
#define SNAP_WRITE_SINK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SNAP_SINK_BUF	  (64 * 1024)
#define SNAP_SINK_WR_BUFS 8 /* the writer thread's ring: 512 KiB */

enum snap_sink_kind {
	SNAP_SINK_NONE = 0,
	SNAP_SINK_MEM,
	SNAP_SINK_FILE,
};

struct snap_pgz;
struct snap_sink_writer;

struct snap_sink {
	int err; /* sticky: the first error (negative), 0 if none */
	enum snap_sink_kind kind;
	unsigned char *buf; /* SNAP_SINK_BUF bytes of buffered input */
	size_t used;	    /* bytes in buf */
	uint64_t total;	    /* bytes accepted so far (before compression) */
	/* memory sink */
	unsigned char *mem;
	size_t mem_len, mem_cap;
	/* file sink */
	int fd;		      /* temporary file, -1 if none */
	int dirfd;	      /* the target's directory, -1 if none */
	char *path;	      /* target path, links followed (owned) */
	const char *name;     /* its last name (in path), relative to dirfd */
	char *tmp;	      /* temporary name in dirfd (owned) */
	int in_place;	      /* 1: fd is the target itself (not a regular file) */
	int unnamed;	      /* 1: fd is an O_TMPFILE file, linked in by close */
	int named_tmp;	      /* 1: fd is the file tmp names (no O_TMPFILE), renamed by close */
	int gz;		      /* 1: deflate into a gzip stream */
	struct snap_pgz *pgz; /* the compressor (owned) when gz (write/pgz.h) */
	uint64_t written;     /* bytes written to fd */
	uint64_t wb_from;     /* writeback started up to here (sink.c, sink_write_file) */
	struct snap_sink_writer *wr; /* the writer thread (owned), or NULL: this thread writes */
};

/* Makes s an empty memory sink. Returns 0 or -ENOMEM (then s is a closed
 * sink on which every call is a harmless no-op). Release with snap_sink_fini. */
int snap_sink_init_mem(struct snap_sink *s);

/* Opens a file sink for path (borrowed; copied): creates the temporary file
 * in path's directory. Compression is chosen by the ".gz" suffix. Returns 0,
 * or -errno (e.g. -ENOENT, -EACCES when the directory is missing or not
 * writable) / -ENOMEM; on error nothing is left on disk and s needs no
 * further call (snap_sink_fini is allowed). */
int snap_sink_open(struct snap_sink *s, const char *path);

/* Gzip file sink: sets the deflate level (0-9; the default is 6, as
 * magic-trace) before anything is written. Level 1 is 3-9x faster on FXT,
 * files 2-57 % bigger (make bench, docs/design.md). Returns 0, or -EINVAL for a bad level, a sink
 * that does not compress, or after the first write. */
int snap_sink_set_gz_level(struct snap_sink *s, int level);

/* Gzip file sink: deflates on jobs threads (write/pgz.h; 1, the default, is
 * the caller's), set before anything is written. The file is the same for
 * every count. Returns 0, or -EINVAL for a sink that does not compress, or
 * after the first write. */
int snap_sink_set_gz_jobs(struct snap_sink *s, int jobs);

/* File sink: when on, write() and sync_file_range run on a writer thread
 * (started now; signals stay blocked in it), set before anything is written;
 * off stops it. The file is the same bytes either way. A thread that cannot
 * be created leaves the writes on the caller's thread (0). Returns 0, -ENOMEM
 * (no ring: the writes stay on the caller's thread), or -EINVAL for a sink
 * that is not a file sink, or after the first write. */
int snap_sink_set_writer(struct snap_sink *s, int on);

/* Slow path of snap_sink_write (buffer full); internal. */
void snap_sink_write_slow(struct snap_sink *s, const void *p, size_t len);

/* Where len more bytes go in the buffer, if they fit (the caller writes
 * them there, then calls snap_sink_commit), else NULL (snap_sink_write then
 * takes them). A writer that has checked every other condition first can so
 * build its bytes in place with no call. */
static inline unsigned char *snap_sink_room(struct snap_sink *s, size_t len)
{
	return s->used + len <= SNAP_SINK_BUF && s->buf ? s->buf + s->used : NULL;
}

/* Accepts the len bytes written where snap_sink_room(s, len) said. */
static inline void snap_sink_commit(struct snap_sink *s, size_t len)
{
	s->used += len;
	s->total += len;
}

/* Appends len bytes of p (borrowed). Never fails visibly: a failure is kept
 * as the sticky error, and after an error writes are dropped. */
static inline void snap_sink_write(struct snap_sink *s, const void *p, size_t len)
{
	if (s->used + len <= SNAP_SINK_BUF && s->buf) {
		memcpy(s->buf + s->used, p, len);
		s->used += len;
		s->total += len;
		return;
	}
	snap_sink_write_slow(s, p, len);
}

/* Pushes buffered bytes down (to the memory array, or through the
 * compressor into the temporary file, or to the writer thread, which has
 * them written once snap_sink_sync returns; a gzip stream is not finished).
 * Returns the sticky error (0 if none). */
int snap_sink_flush(struct snap_sink *s);

/* snap_sink_flush, and waits until the writer thread (if any) has written
 * everything handed to it. Returns the sticky error (0 if none). */
int snap_sink_sync(struct snap_sink *s);

/* Records err (negative) as the sticky error unless one is already set, so
 * a producer can fail the output (close will then discard it). Returns the
 * sticky error. */
int snap_sink_fail(struct snap_sink *s, int err);

/* Returns the sticky error (0 if none). */
static inline int snap_sink_error(const struct snap_sink *s)
{
	return s->err;
}

/* Memory sink: returns the bytes written so far (borrowed, valid until the
 * next write or fini) after flushing, and their count in *len. Returns NULL
 * (and *len = 0) if nothing was written or s is not a memory sink. */
const unsigned char *snap_sink_mem_data(struct snap_sink *s, size_t *len);

/* File sink: flushes, finishes the gzip stream, fsyncs, closes and renames
 * the temporary file onto the target. Returns 0, or the sticky error / the
 * error of one of those steps, in which case the temporary file is unlinked
 * and an existing target is untouched. Releases everything (as fini).
 * On a memory sink it only flushes and returns the sticky error (the bytes
 * stay readable until fini). */
int snap_sink_close(struct snap_sink *s);

/* The same, and when keep is not NULL, *keep gets the descriptor of the
 * file just named (read-write; the caller closes it), or -1 when the output
 * was written in place (a device, a FIFO) or on failure: -serve serves what
 * was written, never what the name leads to later. */
int snap_sink_close_fd(struct snap_sink *s, int *keep);

/* Discards the output: the temporary file is closed and unlinked, the
 * target untouched. Releases everything. Safe on a closed or zeroed sink. */
void snap_sink_abort(struct snap_sink *s);

/* Releases everything; an unclosed file sink is aborted. Leaves s zeroed
 * (fd -1), so a second fini is harmless. */
void snap_sink_fini(struct snap_sink *s);

#endif
