/* SPDX-License-Identifier: GPL-2.0 */
/* Reading whole files: small ones into a buffer, large ones mapped. */
#ifndef SNAP_UTIL_FILE_H
#define SNAP_UTIL_FILE_H

#include <stddef.h>

/* Reads up to len-1 bytes of a small file into buf (NUL-terminated).
 * Returns the byte count or -errno. */
long snap_read_small(const char *path, char *buf, size_t len);

/* Maps a regular file read-only (opened non-blocking: a FIFO never blocks).
 * Returns 0 and sets *buf and *len (release with snap_file_unmap), or -errno. */
int snap_file_map(const char *path, const void **buf, size_t *len);
void snap_file_unmap(const void *buf, size_t len);

#endif
