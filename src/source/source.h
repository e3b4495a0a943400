/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a decode's events come from (docs/design.md, "The pipeline"): one
 * interface for the inputs, as model/timeline.h is one for the outputs, with an
 * implementation a file:
 *   source/ptsrc.c    the in-process Intel PT decoder (ptdec/)
 *   source/perfsrc.c  perf script run on a perf.data, its text parsed (parse/perfscript)
 *   source/dlsrc.c    perf script with the dlfilter plugin, its records read
 *                     (parse/dlrec); perfsrc takes over when perf cannot load the plugin
 *   source/textsrc.c  perf script text from a file, a pipe or stdin
 * snap_source_open picks one for an input. A source reports its own failures
 * (one line) before it returns them.
 */
#ifndef SNAP_SOURCE_SOURCE_H
#define SNAP_SOURCE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "model/event.h"
#include "parse/perfdata.h"
#include "parse/perfscript.h"
#include "util/progress.h"
#include "util/strtab.h"

/* Which Intel PT decoder (docs/ptdec.md). */
enum snap_pt_decoder {
	SNAP_PT_DECODER_DEFAULT = 0, /* $SNAPTRACE_DECODER, else auto */
	SNAP_PT_DECODER_PERF,	     /* perf script (plugin or text) */
	SNAP_PT_DECODER_IPT,	     /* in-process libipt decoder; perf when it cannot */
	SNAP_PT_DECODER_AUTO,	     /* the in-process one when it supports the recording */
};

/* "perf", "ipt", "auto" (or $SNAPTRACE_DECODER's value). Returns 0 or -1. */
int snap_pt_decoder_parse(const char *s, enum snap_pt_decoder *k);

/* How to read the inputs (all borrowed). */
struct snap_source_opts {
	const unsigned char *stdin_head; /* "-": its first bytes, already read (<= 8) */
	size_t nstdin_head;
	int no_dlfilter;	 /* force the text path */
	const char *perf;	 /* perf binary; NULL = snap_caps_perf_path() */
	const char *vmlinux;	 /* kernel image for kernel symbols (perf --vmlinux), or NULL */
	const char *kallsyms;	 /* kernel symbol list (perf --kallsyms), or NULL */
	int stitch_lbr;		 /* perf script --stitch-lbr */
	int print_perf_commands; /* say (stderr) each perf script command run */
	enum snap_pt_decoder decoder; /* -decoder; else $SNAPTRACE_DECODER */
	int jobs;		      /* -j: in-process decoder threads, 0 = cores */
};

struct snap_source;

/* One kind of input. */
struct snap_source_ops {
	/* 1 and *ev (borrowed until the next call), 0 at the end, or <0: an error
	 * the source reported itself sets src->said (the caller says the rest). */
	int (*next)(struct snap_source *src, struct snap_event *ev);
	/* Optional: up to n events into ev[0..n) (borrowed until the next call),
	 * none with frames: how many (> 0), 0 at the end, or <0 (as next). NULL:
	 * one next() a call. */
	int (*fill)(struct snap_source *src, struct snap_event *ev, size_t n);
	/* The perf script text parser's counters (lines, unknown lines), or NULL
	 * when the source parses no text. */
	const struct snap_perfscript_stats *(*stats)(const struct snap_source *src);
	/* Releases impl. Returns 0, or -SNAP_EPERF if perf failed (reported). */
	int (*close)(struct snap_source *src);
	/* Hands impl src->progress, the line to redraw while it waits on perf, or
	 * NULL for a source that never waits. */
	void (*set_progress)(struct snap_source *src);
};

struct snap_source {
	const struct snap_source_ops *ops; /* NULL: closed, or never opened */
	void *impl;			   /* the implementation's state (owned) */
	const char *name;		   /* the input, for messages: a path, or "stdin" */
	const char *who;		   /* who reports its decode errors ("perf", ...) */
	int timeless;			   /* no times in the data: number the events instead */
	uint64_t seq;			   /* events numbered so far */
	int dwarf;			   /* perf.data with dwarf call graphs */
	struct snap_perfdata_lost lost;	   /* what perf lost while recording it */
	struct snap_progress *progress;	   /* redrawn while perf prints nothing, or NULL */
	int said; /* the error next or fill returned was reported: not to be said again */
	int busy; /* threads it keeps busy beside the one reading it: the in-process
		   * decoder's workers, perf script; cli/pipeline.c counts them */
};

/* Opens input (NULL: ./perf.data; "-": stdin): a perf.data file (or perf record
 * --kcore directory) goes to the in-process decoder or to perf script, anything
 * else is read as perf script text. st is borrowed (interned names). Returns 0,
 * or a negative error, already reported (src is then closed). */
int snap_source_open(struct snap_source *src, const struct snap_source_opts *o, const char *input,
		     struct snap_strtab *st);

/* 1 and *ev (borrowed until the next call), 0 at the end, or <0. Events of a
 * timeless source are numbered here, 1 ns apart, and nowhere else. */
int snap_source_next(struct snap_source *src, struct snap_event *ev);

/* Up to n (>= 1) events into ev[0..n) (borrowed until the next call), numbered
 * as by snap_source_next: how many (> 0), 0 at the end, or <0. Several only
 * from a source whose events have no frames (the in-process decoder); one from
 * the others. */
int snap_source_fill(struct snap_source *src, struct snap_event *ev, size_t n);

/* The perf script text parser's counters, or NULL when src parses no text. */
const struct snap_perfscript_stats *snap_source_stats(const struct snap_source *src);

/* A progress line to redraw while perf script prints nothing (borrowed; NULL: none). */
void snap_source_set_progress(struct snap_source *src, struct snap_progress *prog);

/* Stops and releases src; a closed source is left (a second close returns 0).
 * Returns 0, or -SNAP_EPERF if perf failed (already reported). */
int snap_source_close(struct snap_source *src);

/* ---- the implementations' constructors (snap_source_open calls them) ---- */

struct snap_perfsrc_opts;

/* The in-process PT decoder for the perf.data src->name, unless perf decodes it
 * (o->decoder perf, or what ptdec does not support: it says why, a warning with
 * -decoder ipt). Returns 0 when it took the file, else <0 and the caller runs perf. */
int snap_source_ptdec(struct snap_source *src, const struct snap_source_opts *o,
		      struct snap_strtab *st);

/* perf script on a perf.data, its text parsed (o->plugin NULL). Returns 0, or -errno
 * if perf could not be started. */
int snap_source_perf(struct snap_source *src, const struct snap_perfsrc_opts *o,
		     struct snap_strtab *st);

/* perf script with the dlfilter plugin o->plugin; when perf cannot load it, the
 * first next() says so and goes on with snap_source_perf. Returns 0, or -errno if
 * perf could not be started. */
int snap_source_dlfilter(struct snap_source *src, const struct snap_perfsrc_opts *o,
			 struct snap_strtab *st);

/* perf script text read from fd (owned: closed by close, but for stdin), after
 * its first nhead bytes head, already read. Returns 0 or a negative error (fd is
 * then closed). */
int snap_source_text(struct snap_source *src, int fd, const char *head, size_t nhead,
		     struct snap_strtab *st);

#endif
