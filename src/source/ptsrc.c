// SPDX-License-Identifier: GPL-2.0
/*
 * The in-process Intel PT decoder as a source (source/source.h): ptdec/ reads
 * the perf.data itself, no perf runs. Also the choice between it and perf
 * (-decoder, $SNAPTRACE_DECODER; docs/ptdec.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ptdec/ptdec.h"
#include "source/source.h"
#include "util/err.h"
#include "util/log.h"
#include "util/proc.h"

int snap_pt_decoder_parse(const char *s, enum snap_pt_decoder *k)
{
	if (!strcmp(s, "perf"))
		*k = SNAP_PT_DECODER_PERF;
	else if (!strcmp(s, "ipt") || !strcmp(s, "libipt"))
		*k = SNAP_PT_DECODER_IPT;
	else if (!strcmp(s, "auto"))
		*k = SNAP_PT_DECODER_AUTO;
	else
		return -1;
	return 0;
}

static int ptsrc_next(struct snap_source *src, struct snap_event *ev)
{
	return snap_ptdec_next(src->impl, ev);
}

static int ptsrc_fill(struct snap_source *src, struct snap_event *ev, size_t n)
{
	return snap_ptdec_fill(src->impl, ev, n);
}

/* No perf script text: no parser's counters. */
static const struct snap_perfscript_stats *ptsrc_stats(const struct snap_source *src)
{
	(void)src;
	return NULL;
}

static int ptsrc_close(struct snap_source *src)
{
	struct snap_ptdec_stats s;

	snap_ptdec_stats(src->impl, &s);
	if (s.missing_images)
		snap_warn("%s: the code of %llu mapping%s could not be read (first: %s): "
			  "branches there are not decoded",
			  src->name, (unsigned long long)s.missing_images,
			  s.missing_images == 1 ? "" : "s", s.first_missing);
	/* The reading thread's CPU (with -j 1 it also builds the stacks and writes the
	 * trace; with -j > 1 a consumer thread does: cli/pipeline.c). With idle cores,
	 * the larger of the two is the wall time of the decode (make bench prints both). */
	snap_info("ptdec: %llu buffers, %llu pieces (%llu by the fast walk), %llu bytes, "
		  "%llu instructions, %llu branches, %llu errors, %d threads; the reading "
		  "thread used %.2f s CPU",
		  (unsigned long long)s.buffers, (unsigned long long)s.pieces,
		  (unsigned long long)s.walked, (unsigned long long)s.bytes,
		  (unsigned long long)s.insns, (unsigned long long)s.branches,
		  (unsigned long long)s.errors, s.jobs, snap_thread_cpu_seconds());
	snap_ptdec_close(src->impl);
	src->impl = NULL;
	return 0;
}

static const struct snap_source_ops ptsrc_ops = {
	.next = ptsrc_next,
	.fill = ptsrc_fill,
	.stats = ptsrc_stats,
	.close = ptsrc_close,
};

int snap_source_ptdec(struct snap_source *src, const struct snap_source_opts *o,
		      struct snap_strtab *st)
{
	enum snap_pt_decoder kind = o->decoder;
	const char *env = getenv("SNAPTRACE_DECODER");
	struct snap_ptdec_opts po;
	struct snap_ptdec *d;
	char why[256];
	int err;

	if (kind == SNAP_PT_DECODER_DEFAULT &&
	    (!env || !*env || snap_pt_decoder_parse(env, &kind) < 0))
		kind = SNAP_PT_DECODER_AUTO;
	if (kind == SNAP_PT_DECODER_PERF)
		return -1;
	memset(&po, 0, sizeof(po));
	po.jobs = o->jobs;
	po.vmlinux = o->vmlinux;
	po.kallsyms = o->kallsyms;
	if (getenv("SNAPTRACE_PTDEC_PIECE"))
		po.piece_bytes = (size_t)strtoull(getenv("SNAPTRACE_PTDEC_PIECE"), NULL, 10);
	why[0] = 0;
	err = snap_ptdec_open(&d, src->name, &po, st, why, sizeof(why));
	if (err < 0) {
		snap_log(kind == SNAP_PT_DECODER_IPT ? SNAP_LOG_WARN : SNAP_LOG_INFO,
			 "%s: decoding with perf: the in-process decoder does not take it: %s",
			 src->name, why[0] ? why : snap_strerror(err));
		return err;
	}
	src->ops = &ptsrc_ops;
	src->impl = d;
	src->who = "the in-process PT decoder (libipt)";
	src->timeless = snap_ptdec_timeless(d); /* numbered by snap_source_next */
	{
		struct snap_ptdec_stats s;

		/* its workers (none with one job), busy for the window's 2 at most
		 * (ptdec/pool.c, ptd_start_pool) */
		snap_ptdec_stats(d, &s);
		src->busy = s.jobs <= 1 ? 0 : s.jobs > 2 ? 2 : s.jobs;
	}
	snap_info("%s: decoding Intel PT in-process (libipt)", src->name);
	return 0;
}
