/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parallel gzip (pigz style, libdeflate): the input is cut into blocks of
 * SNAP_PGZ_BLOCK bytes whatever the thread count, each block is compressed on
 * its own into one gzip member (RFC 1952 allows members in sequence: gunzip,
 * zlib's gzread and Perfetto read them as one file), and the members are
 * written in order: byte-identical output for every jobs count
 * (docs/design.md, "gzip in parallel"). With jobs 1 the caller's thread
 * compresses; with more, min(jobs, the CPUs the process may run on,
 * SNAP_PGZ_MAX_WORKERS) worker threads do, with that
 * many blocks plus 2 in flight (the one filling, one done and waiting for its
 * turn; a block's buffers hold 2 x SNAP_PGZ_BLOCK, the output half mostly
 * untouched). So memory does not grow with jobs past the CPUs.
 *
 * Compressed bytes leave only through the out callback, called on the
 * caller's thread, in order; its error (-ENOSPC, -EFBIG) becomes the sticky
 * error every later call returns.
 */
#ifndef SNAP_WRITE_PGZ_H
#define SNAP_WRITE_PGZ_H

#include <stddef.h>

#define SNAP_PGZ_BLOCK	     (256 * 1024)
#define SNAP_PGZ_MAX_WORKERS 4

/* Receives len compressed bytes of p (borrowed); returns 0 or -errno. */
typedef int (*snap_pgz_out_fn)(void *ctx, const unsigned char *p, size_t len);

struct snap_pgz;

/* A new compressor at level (0-9) writing through out(ctx, ...); jobs 0 (or
 * less) means one per online CPU. Returns it, or NULL when out of memory (or level is bad).
 * Threads start at the first write. Release with snap_pgz_free. */
struct snap_pgz *snap_pgz_new(int level, int jobs, snap_pgz_out_fn out, void *ctx);

/* Changes the level (0-9) before the first write. Returns 0, or -EINVAL for
 * a bad level or after a write. */
int snap_pgz_set_level(struct snap_pgz *z, int level);

/* Changes the thread count (as snap_pgz_new) before the first write. Returns
 * 0, or -EINVAL after a write. The output does not depend on it. */
int snap_pgz_set_jobs(struct snap_pgz *z, int jobs);

/* Compresses len bytes of p (borrowed; copied). Returns 0 or the sticky error
 * (-ENOMEM, -EIO from libdeflate, or the out callback's). */
int snap_pgz_write(struct snap_pgz *z, const void *p, size_t len);

/* Ends the output: the last block, every block still in flight. Returns 0
 * or the sticky error. Nothing may be written after it. */
int snap_pgz_finish(struct snap_pgz *z);

/* The worker threads running since the first write (0: the caller
 * compresses; before the first write, 0). */
int snap_pgz_threads(const struct snap_pgz *z);

/* Stops the threads and releases everything (NULL is fine). Unfinished
 * output is dropped. */
void snap_pgz_free(struct snap_pgz *z);

#endif
