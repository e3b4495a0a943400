/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DWARF line tables of an executable (elfutils libdw): FILE:LINE[:COL] to a
 * link-time address for -trigger, the list of lines for the line:? picker,
 * and an address to its source position for the file/line/col slice args.
 */
#ifndef SNAP_RECORD_DWLINE_H
#define SNAP_RECORD_DWLINE_H

#include <stddef.h>
#include <stdint.h>

struct snap_dwline; /* an open file with its debug info */

/* Opens path. Returns 0, -errno, or -SNAP_EFORMAT when it has no DWARF line
 * information (not built with -g). snap_dwline_close releases d (NULL: no-op). */
int snap_dwline_open(const char *path, struct snap_dwline **out);
void snap_dwline_close(struct snap_dwline *d);

/*
 * The address of FILE:LINE (col 0: any column; the lowest one wins and
 * *ncols says how many columns the line has; else exactly col). FILE is a
 * file name as the line table has it, or a trailing part of one after a '/'
 * ("src/main.c" or "main.c" for "/home/me/src/main.c"); it must name a single
 * file. Statement rows only; among equals, the lowest address.
 * Returns 0, -ENOENT (no such line or column), -EEXIST (FILE names several
 * files: *ncols then says how many).
 */
int snap_dwline_find(struct snap_dwline *d, const char *file, int line, int col, uint64_t *addr,
		     int *ncols);

/* Every distinct "FILE:LINE:COL" of the statement rows (owned strings, sorted;
 * free each with free() and the array with snap_free). Returns the count or <0. */
long snap_dwline_list(struct snap_dwline *d, char ***out);

/* The source position of a link-time address: file (borrowed from d), line,
 * col. Returns 0, or -ENOENT. */
int snap_dwline_addr(struct snap_dwline *d, uint64_t addr, const char **file, int *line, int *col);

/* Splits "FILE:LINE" or "FILE:LINE:COL". Returns 0 with file copied into
 * buf (NUL-terminated), or -1 if sel does not have that shape. */
int snap_dwline_parse_sel(const char *sel, char *buf, size_t len, int *line, int *col);

#endif
