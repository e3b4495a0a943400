// SPDX-License-Identifier: GPL-2.0
/* Fuzz target: snaptrace report on arbitrary FXT bytes (report/fxtin, the slice
 * builder, the sketch, every output). The first byte picks options. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/format.h"
#include "report/fxtin.h"
#include "report/report.h"
#include "util/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_strtab st;
	struct snap_report r;
	struct snap_report_opts o;
	struct snap_report_fxtin in;
	struct snap_rbuf b;
	uint8_t flags = size ? data[0] : 0;
	int err;

	memset(&o, 0, sizeof(o));
	memset(&b, 0, sizeof(b));
	o.folded = 1;
	o.exact_limit = flags & 1 ? 2 : 0; /* the sketch early */
	if (flags & 2) {
		o.has_window = 1;
		o.win_start = 100;
		o.win_end = flags & 4 ? UINT64_MAX : 5000;
	}
	if (flags & 8) {
		o.has_thread = 1;
		o.tid = flags >> 4;
	}
	snap_strtab_init(&st);
	o.function = (uint32_t)snap_strtab_intern_cstr(&st, "main");
	if (snap_report_init(&r, &st, &o) < 0)
		abort();
	if (size)
		data++, size--;
	err = snap_report_read_fxt(&r, data, size, &in);
	if (err < 0 && err != -SNAP_EFORMAT && err != -SNAP_ETRUNC && err != -SNAP_EPARSE)
		abort();
	if (!err && snap_report_finish(&r) == 0) {
		snap_report_text(
			&r, &(struct snap_report_fmt){"f", 20, (enum snap_report_sort)(flags % 5)},
			&b);
		snap_report_json(&r, &(struct snap_report_fmt){"f", 0, SNAP_REPORT_SORT_P99}, &b);
		snap_report_function(&r, &b);
		snap_report_folded(&r, &b);
		if (b.err)
			abort();
		/* invariants: counted calls add up; nothing counted twice; self within
		 * total unless it is samples x period (sampled_ns: docs/report.md) or
		 * slices overlap without nesting (counted in r.overlaps) */
		{
			uint64_t calls = 0;

			for (size_t i = 0; i < r.capfn; i++) {
				calls += r.fn[i].calls;
				if (r.fn[i].calls &&
				    ((!r.has_sampled_ns && !r.overlaps &&
				      r.fn[i].self > r.fn[i].total) ||
				     r.fn[i].max > r.fn[i].total || r.fn[i].p50 > r.fn[i].p90 ||
				     r.fn[i].p90 > r.fn[i].p99 || r.fn[i].p99 > r.fn[i].max))
					abort();
			}
			if (calls != r.slices)
				abort();
		}
	}
	snap_rbuf_fini(&b);
	snap_report_fini(&r);
	snap_strtab_fini(&st);
	return 0;
}
