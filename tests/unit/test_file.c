// SPDX-License-Identifier: GPL-2.0
/* util/file.h (whole-file read-only mapping) and util/bytes.h (unaligned reads). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snap_test.h"
#include "util/bytes.h"
#include "util/err.h"
#include "util/file.h"

static void bytes_read_at_any_alignment(void)
{
	const uint8_t b[] = {0xff, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};

	CHECK_INT_EQ(0x0201, snap_get16(b + 1));
	CHECK_U64_EQ(0x04030201u, snap_get32(b + 1));
	CHECK_U64_EQ(0x0807060504030201ull, snap_get64(b + 1));
}

static void fmap_maps_a_whole_regular_file(void)
{
	const void *buf = NULL;
	size_t len = 0;

	CHECK_INT_EQ(0, snap_file_map_range("/proc/self/exe", 4, UINT64_MAX, 1, &buf, &len));
	CHECK(buf != NULL && len > 4);
	if (buf) {
		CHECK(memcmp(buf, "\177ELF", 4) == 0);
		snap_file_unmap(buf, len);
	}
}

static void fmap_refuses_what_it_is_told_to(void)
{
	const void *buf = NULL;
	size_t len = 0;

	/* Too small, too large, not a regular file: not mapped, 1. */
	CHECK_INT_EQ(1,
		     snap_file_map_range("/proc/self/exe", UINT64_MAX, UINT64_MAX, 1, &buf, &len));
	CHECK_INT_EQ(1, snap_file_map_range("/proc/self/exe", 1, 4, 1, &buf, &len));
	CHECK_INT_EQ(1, snap_file_map_range("/", 1, UINT64_MAX, 1, &buf, &len));
	CHECK(buf == NULL);
	/* An empty file is below any min. */
	CHECK_INT_EQ(1, snap_file_map_range("/dev/null", 1, UINT64_MAX, 0, &buf, &len));
	CHECK_INT_EQ(-ENOENT, snap_file_map_range("/nonexistent/snaptrace-fmap", 1, UINT64_MAX, 0,
						  &buf, &len));
}

/* A file others can write (or another user's) is mapped guarded: cut short
 * while it is read, its cut bytes read as zeros instead of killing the reader
 * with SIGBUS (docs/guarantees.md). */
static void fmap_guards_a_file_others_can_cut(void)
{
	char dir[] = "/tmp/snap_file_XXXXXX", path[64], page[4096];
	const void *buf = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/shared", dir);
	memset(page, 'A', sizeof(page));
	f = fopen(path, "w");
	CHECK(f != NULL);
	for (int i = 0; f && i < 3; i++)
		fwrite(page, 1, sizeof(page), f);
	if (f)
		fclose(f);
	CHECK_INT_EQ(0, chmod(path, 0666));
	CHECK_INT_EQ(0, snap_file_map_range(path, 1, UINT64_MAX, 1, &buf, &len));
	if (buf && len == 3 * sizeof(page)) {
		const volatile unsigned char *b = buf;

		CHECK_INT_EQ('A', b[0]);
		CHECK_INT_EQ(0, truncate(path, 0));
		CHECK_INT_EQ(0, b[0]);	     /* (unguarded: SIGBUS here) */
		CHECK_INT_EQ(0, b[len - 1]); /* every page cut */
		snap_file_unmap(buf, len);
	}
	unlink(path);
	rmdir(dir);
}

/* snap_read_small opens non-blocking and reads regular files only: a FIFO
 * nobody writes (planted under a name snaptrace reads) cannot hang it. */
static void read_small_refuses_a_fifo(void)
{
	char dir[] = "/tmp/snap_file_XXXXXX", path[64], buf[16];

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK_INT_EQ(0, mkfifo(path, 0600));
	CHECK_INT_EQ(-SNAP_ENOTREG, snap_read_small(path, buf, sizeof(buf)));
	CHECK_INT_EQ(-SNAP_ENOTREG, snap_read_small("/dev/zero", buf, sizeof(buf)));
	CHECK_INT_EQ(3, snap_read_small("/proc/self/comm", buf, 4));
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	RUN(bytes_read_at_any_alignment);
	RUN(fmap_maps_a_whole_regular_file);
	RUN(fmap_refuses_what_it_is_told_to);
	RUN(fmap_guards_a_file_others_can_cut);
	RUN(read_small_refuses_a_fifo);
	return snap_test_done();
}
