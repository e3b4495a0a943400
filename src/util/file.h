/* SPDX-License-Identifier: GPL-2.0 */
/* Reading whole files: small ones into a buffer, large ones mapped. */
#ifndef SNAP_UTIL_FILE_H
#define SNAP_UTIL_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Opens path for reading (non-blocking, close-on-exec) if it is a regular
 * file; anything else is never opened: the name is looked up with O_PATH,
 * typed, and only a regular file is opened (through /proc/self/fd). Opening
 * a device can act (a watchdog starts, a tape rewinds, a modem hangs up), and
 * names come from other users (the paths another user's process maps, a link
 * it planted). Returns the descriptor, -SNAP_ENOTREG, or -errno. */
int snap_open_regular(const char *path);

/* 1 if another user than root and us can change (shorten) the file st
 * describes: its owner, or a group or others with write permission. */
int snap_others_can_change(const struct stat *st);

/* 1 if path is a symbolic link the kernel's fs.protected_symlinks would not
 * let us follow: in a sticky world-writable directory (/tmp), owned neither
 * by us nor by the directory's owner (another user's plant). 0 otherwise. */
int snap_foreign_link(const char *path);

/* Reads up to len-1 bytes of a small regular file into buf (NUL-terminated),
 * opened non-blocking. Returns the byte count, -SNAP_ENOTREG for anything
 * but a regular file (a FIFO, a device), or -errno. */
long snap_read_small(const char *path, char *buf, size_t len);

/*
 * Maps a whole file read-only (private); the descriptor is closed before
 * returning. It is opened non-blocking (the path may come from a traced
 * program: a FIFO named like its deleted executable must not block), with
 * reg_only through snap_open_regular. A file whose size is below min or above
 * max, or (with reg_only) that is not a regular file, is not mapped (with
 * reg_only: not even opened): the call returns 1. Otherwise returns 0 with
 * *buf and *len set (release with snap_file_unmap), or -errno when open, fstat
 * or mmap fails. min must be at least 1.
 * A regular file of another user (or one a group or others can write) is
 * mapped guarded: its owner could truncate it while it is read, and a read of
 * a mapping past the file's new end raises SIGBUS; a SIGBUS handler (installed
 * at the first such mapping; one installed before is still called for other
 * faults) then maps a page of zeros there, so the bytes cut read as zeros
 * (docs/guarantees.md). At most 1024 are guarded at once (-EMFILE beyond).
 */
int snap_file_map_range(const char *path, uint64_t min, uint64_t max, int reg_only,
			const void **buf, size_t *len);

/* snap_file_map_range that keeps the descriptor open: on success *keep is the
 * file's (read-only, close-on-exec; the caller closes it), which reads the
 * mapped file's bytes with pread without touching the mapping. */
int snap_file_map_keep(const char *path, uint64_t min, uint64_t max, int reg_only, const void **buf,
		       size_t *len, int *keep);

/* The same for any non-empty regular file; -EINVAL for anything else.
 * snap_file_unmap(buf, len) releases a mapping (buf NULL: no-op). */
int snap_file_map(const char *path, const void **buf, size_t *len);
void snap_file_unmap(const void *buf, size_t len);

/* A reader over a descriptor (ctx points to the int fd), of the shape the
 * parsers take (snap_perfdata_read_fn): reads len bytes at off with pread.
 * Returns the byte count (fewer at end of file, 0 past INT64_MAX) or -errno. */
long snap_fd_pread(void *ctx, uint64_t off, void *buf, size_t len);

#endif
