/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trigger hits a recording saw, kept in its working directory (file
 * SNAP_HITS_FILE) so that decode -working-directory marks them as run and
 * attach did. Text, one hit a line after a "snaptrace-hits 1" line:
 *   TIME PID TID IP HAS_ARG ARG PASSED_TIME SYMBOL
 * (decimal except IP in hex; SYMBOL is the rest of the line). Pure: bytes in;
 * a malformed line is counted and skipped.
 */
#ifndef SNAP_PARSE_HITSFILE_H
#define SNAP_PARSE_HITSFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/hit.h"

#define SNAP_HITS_FILE "snaptrace-hits.txt"

struct snap_hitsfile {
	struct snap_hit *h; /* their symbols owned */
	size_t n, cap;
	uint64_t bad_lines;
};

/* Parses a whole file. Returns 0, -SNAP_EFORMAT (no header line), -ENOMEM.
 * snap_hitsfile_fini frees the hits (also after a failed parse). */
int snap_hitsfile_parse(struct snap_hitsfile *hf, const char *buf, size_t len);
void snap_hitsfile_fini(struct snap_hitsfile *hf);
/* Writes the header and the hits. Returns 0 or -EIO. */
int snap_hitsfile_write(FILE *f, const struct snap_hit *h, size_t n);

#endif
