// SPDX-License-Identifier: GPL-2.0
/*
 * Parser micro-benchmark: reads a `perf script` text file into memory, then
 * feeds it to the parser in 64 KiB chunks and drains every event.
 * With OUT, every event also goes through the stack decoder and the FXT
 * writer into the file OUT (".gz" = gzip): the whole text decode.
 * Prints lines, events, unknown lines, best seconds and lines/s.
 * Usage: bench_perfscript FILE [REPEAT [OUT.fxt]]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "parse/perfscript.h"
#include "stack/builder.h"
#include "util/strtab.h"
#include "write/fxt.h"
#include "write/sink.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	FILE *f;
	char *data = NULL;
	size_t len = 0, cap = 0, n;
	int repeat = argc > 2 ? atoi(argv[2]) : 1;
	const char *out = argc > 3 ? argv[3] : NULL;
	double best = 0;
	uint64_t lines = 0, events = 0, unknown = 0, sum = 0;

	if (argc < 2 || !(f = fopen(argv[1], "rb"))) {
		fprintf(stderr, "usage: bench_perfscript FILE [REPEAT [OUT.fxt]]\n");
		return 2;
	}
	for (;;) {
		if (cap - len < 65536) {
			char *nd = realloc(data, cap = cap * 2 + 65536);

			if (!nd)
				return 1;
			data = nd;
		}
		n = fread(data + len, 1, cap - len, f);
		if (!n)
			break;
		len += n;
	}
	fclose(f);
	for (int rep = 0; rep < (repeat > 0 ? repeat : 1); rep++) {
		struct snap_strtab st;
		struct snap_perfscript ps;
		struct snap_event ev;
		struct snap_sink sink;
		struct snap_fxt fx;
		struct snap_builder bld;
		double t0 = now(), dt;
		int r = 0;

		snap_strtab_init(&st);
		if (snap_perfscript_init(&ps, &st) < 0)
			return 1;
		if (out) {
			if (snap_sink_open(&sink, out) < 0 || snap_fxt_init(&fx, &sink, &st) < 0 ||
			    snap_builder_init(&bld, &fx.base, &st, NULL) < 0) {
				fprintf(stderr, "bench_perfscript: cannot set up %s\n", out);
				return 1;
			}
		}
		for (size_t off = 0; off < len && r >= 0; off += 65536) {
			r = snap_perfscript_feed(&ps, data + off,
						 len - off < 65536 ? len - off : 65536);
			while (r >= 0 && (r = snap_perfscript_next(&ps, &ev)) > 0) {
				sum += ev.src.ip + ev.nframes;
				if (out && (r = snap_builder_feed(&bld, &ev)) < 0)
					break;
			}
		}
		if (r >= 0)
			snap_perfscript_finish(&ps);
		while (r >= 0 && (r = snap_perfscript_next(&ps, &ev)) > 0) {
			sum += ev.src.ip;
			if (out && (r = snap_builder_feed(&bld, &ev)) < 0)
				break;
		}
		if (out) {
			if (r >= 0)
				r = snap_builder_finish(&bld);
			if (r >= 0)
				r = fx.base.ops->finish(&fx.base);
			if (r >= 0)
				r = snap_sink_close(&sink);
			snap_builder_fini(&bld);
			snap_fxt_fini(&fx);
			snap_sink_fini(&sink);
		}
		dt = now() - t0;
		if (r < 0) {
			fprintf(stderr, "bench_perfscript: error %d at line %" PRIu64 "\n", r,
				snap_perfscript_line(&ps));
			return 1;
		}
		lines = snap_perfscript_stats(&ps)->lines;
		events = snap_perfscript_stats(&ps)->events;
		unknown = snap_perfscript_stats(&ps)->unknown_lines;
		if (!best || dt < best)
			best = dt;
		snap_perfscript_fini(&ps);
		snap_strtab_fini(&st);
	}
	printf("lines %" PRIu64 " events %" PRIu64 " unknown %" PRIu64 " bytes %zu best %.3f s "
	       "%.2f M lines/s %.0f MB/s (checksum %" PRIx64 ")\n",
	       lines, events, unknown, len, best, (double)lines / best / 1e6,
	       (double)len / best / 1e6, sum);
	free(data);
	return 0;
}
