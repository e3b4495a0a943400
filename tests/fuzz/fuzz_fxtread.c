// SPDX-License-Identifier: GPL-2.0
/* Fuzz target: the FXT reader, desc printer and validator on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "write/fxtread.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_fxtread r;
	struct snap_fxtread_rec rec;
	struct snap_fxtcheck c;
	char line[256];
	int err, checking = 1;
	uint64_t n = 0;

	if (snap_fxtread_init(&r, data, size) < 0)
		return 0;
	snap_fxtcheck_init(&c);
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
	}
	if (checking)
		snap_fxtcheck_finish(&c);
	snap_fxtcheck_fini(&c);
	snap_fxtread_fini(&r);
	return 0;
}
