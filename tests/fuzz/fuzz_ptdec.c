// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the in-process PT decoder's perf.data and AUX reading
 * (ptdec/pdata) and the decode of what it finds (ptdec/ptdec: PSB splitting,
 * libipt, the packet walk, perf-style resynchronisation, the join), on
 * arbitrary bytes. Odd-sized inputs use two decode threads. The corpus holds
 * synthetic recordings; some have their mmap path set to /proc/self/exe so
 * that libipt walks real (if meaningless) code. With SNAPTRACE_PTDEC_WALK=check
 * in the environment it is a differential fuzzer of the fast walk against
 * libipt's decoder (docs/ptdec.md). Inputs whose size is a multiple of 3 are
 * decoded with pieces handing their events on in segments of 7
 * ($SNAPTRACE_PTDEC_CAP, docs/ptdec.md "Memory"): the hand-over to the reader,
 * the reader's pieces moved to helper threads, and libipt's fallback after a
 * streamed walk.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptdec/ptdec.h"
#include "util/strtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_ptdec_opts o;
	struct snap_strtab st;
	struct snap_ptdec *d = NULL;
	struct snap_event ev;
	char desc[256];
	char why[256];

	memset(&o, 0, sizeof(o));
	o.jobs = 1 + (int)(size & 1);
	o.piece_bytes = 1 + (size % 7) * 64; /* many pieces: every join path */
	o.no_host_kernel = 1;		     /* kernel code only from the input's paths */
	o.buildid_dir = "";		     /* and never from $HOME/.debug */
	/* (read by open, on this thread, before any decode thread starts) */
	if (size % 3 == 0)
		setenv("SNAPTRACE_PTDEC_CAP", "7", 1);
	else
		unsetenv("SNAPTRACE_PTDEC_CAP");
	snap_strtab_init(&st);
	if (snap_ptdec_open_mem(&d, data, size, &o, &st, why, sizeof(why)) == 0) {
		for (long n = 0; n < 2000000 && snap_ptdec_next(d, &ev) > 0; n++)
			if (!snap_event_desc(&st, &ev, NULL, desc, sizeof(desc))[0])
				abort();
		snap_ptdec_close(d);
	}
	snap_strtab_fini(&st);
	return 0;
}
