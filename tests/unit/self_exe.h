/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The running test's own executable, read whole (up to 16 MiB), for the
 * ELF readers' unit tests: self_exe(&len) returns the bytes (free them) and
 * their count, or NULL when the file could not be read (a failed CHECK).
 */
#ifndef SNAP_TEST_SELF_EXE_H
#define SNAP_TEST_SELF_EXE_H

#include <stdio.h>
#include <stdlib.h>

#include "snap_test.h"

static unsigned char *self_exe(size_t *len)
{
	FILE *f = fopen("/proc/self/exe", "rb");
	unsigned char *buf = malloc(16 << 20);

	CHECK(f != NULL && buf != NULL);
	if (!f || !buf) {
		if (f)
			fclose(f);
		free(buf);
		return NULL;
	}
	*len = fread(buf, 1, 16 << 20, f);
	fclose(f);
	return buf;
}

#endif
