// SPDX-License-Identifier: GPL-2.0
/* Fuzz target: the FXT reader (buffer and stream modes), desc printer and
 * validator on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "write/fxtcheck.h"
#include "write/fxtdesc.h"
#include "write/fxtread.h"
#include "write/fxttree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Stream mode (dump's): the same records, in any chunking; returns how many
 * records and errors came, as the buffer reader counts them. */
static uint64_t stream_count(const uint8_t *data, size_t size, size_t chunk)
{
	struct snap_fxtread r;
	struct snap_fxtread_rec rec;
	size_t pos = 0;
	uint64_t n = 0;
	int err;

	snap_fxtread_init_stream(&r);
	while ((err = snap_fxtread_next(&r, &rec)) != 0) {
		if (err == SNAP_FXTREAD_MORE) {
			size_t k = size - pos < chunk ? size - pos : chunk;

			if (!k)
				snap_fxtread_feed_end(&r);
			else if (snap_fxtread_feed(&r, data + pos, k) < 0)
				break;
			pos += k;
			continue;
		}
		n++; /* -SNAP_ELIMIT (a huge record) ends it as -SNAP_ETRUNC does */
	}
	snap_fxtread_fini(&r);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_fxtread r;
	struct snap_fxtread_rec rec;
	struct snap_fxtcheck c;
	struct snap_fxttree t;
	char line[256];
	int err, checking = 1, tree = 1;
	uint64_t n = 0;

	if (snap_fxtread_init(&r, data, size) < 0)
		return 0;
	snap_fxtcheck_init(&c);
	snap_fxttree_init(&t);
	while ((err = snap_fxtread_next(&r, &rec)) != 0) {
		size_t len;

		/* every call makes progress: at most one record per word */
		if (++n > size / 8 + 2)
			abort();
		if (err < 0) {
			if (err != -SNAP_EPARSE && err != -SNAP_ETRUNC && err != -SNAP_EFORMAT)
				abort();
			continue;
		}
		len = snap_fxtread_desc(&rec, line, sizeof(line));
		if (strlen(line) != (len < sizeof(line) ? len : sizeof(line) - 1))
			abort();
		if (checking && snap_fxtcheck_feed(&c, &rec) < 0)
			checking = 0;
		if (tree && snap_fxttree_feed(&t, &rec) < 0)
			tree = 0;
	}
	if (tree) { /* dump -tree's view: printed to a sink that discards it */
		FILE *null = fopen("/dev/null", "w");

		if (null) {
			(void)snap_fxttree_print(&t, null); /* -ENOMEM only */
			fclose(null);
		}
	}
	snap_fxttree_fini(&t);
	if (checking)
		snap_fxtcheck_finish(&c);
	snap_fxtcheck_fini(&c);
	snap_fxtread_fini(&r);
	{
		uint64_t m = stream_count(data, size, size ? (size_t)data[0] % 61 + 1 : 1);

		if (m != n)
			abort();
	}
	return 0;
}
