/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-process Intel PT decoder (docs/ptdec.md): reads a perf.data file
 * (ptdec/pdata), builds libipt images from its mmap sideband, splits every
 * AUXTRACE buffer at its PSBs and decodes the pieces on a pool of threads with
 * libipt, and returns the same events (model/event.h) that perf script gives
 * through the plugin or text paths, in perf's order: each queue's events in
 * trace order, queues merged by time.
 */
#ifndef SNAP_PTDEC_PTDEC_H
#define SNAP_PTDEC_PTDEC_H

#include <stddef.h>
#include <stdint.h>

#include "model/event.h"
#include "util/strtab.h"

struct snap_ptdec_opts {
	int jobs;		 /* decode threads; <= 0 = the number of online CPUs */
	const char *vmlinux;	 /* kernel image for [kernel.kallsyms], or NULL */
	const char *kallsyms;	 /* kernel symbol list (with kcore beside it: the code), or NULL */
	const char *buildid_dir; /* perf's build-id cache; NULL = $HOME/.debug */
	const char *kcore_dir;	 /* kcore, kallsyms, modules (perf record --kcore); NULL = the
				    perf.data directory's kcore_dir, if any */
	const char *debug_dir;	 /* debug files by build id; NULL = /usr/lib/debug */
	size_t piece_bytes; /* split buffers at the first PSB after this many bytes; 0 = auto */
	int no_host_kernel; /* never read the running kernel (/proc/kallsyms, vmlinux paths) */
};

struct snap_ptdec_stats {
	uint64_t buffers, pieces, bytes, branches, errors, insns;
	uint64_t walked; /* pieces decoded by the fast walk (the rest by libipt's decoder) */
	uint64_t redone; /* pieces the reader began, gave up and a helper decoded again */
	uint64_t missing_images; /* mmaps whose file could not be read (code unknown) */
	uint64_t lost, aux_truncated, aux_partial;
	int jobs; /* decode threads: -j, but no more than the window has pieces for */
	char first_missing[256];
};

struct snap_ptdec;

/*
 * Opens path (a perf.data file, or the directory perf record --kcore writes:
 * DIR/data, with DIR/kcore_dir). Returns 0 and *out, -SNAP_ENOTSUP with why (whylen bytes) set
 * when the recording needs something this decoder does not do (the caller
 * falls back to perf), -SNAP_EFORMAT/-SNAP_ETRUNC/-SNAP_EPARSE for a damaged
 * file, -errno. names is borrowed: symbol, DSO and comm names are interned in
 * it (only from the thread calling next()).
 */
int snap_ptdec_open(struct snap_ptdec **out, const char *path, const struct snap_ptdec_opts *o,
		    struct snap_strtab *names, char *why, size_t whylen);

/* Same, on a perf.data image in memory (borrowed until close). */
int snap_ptdec_open_mem(struct snap_ptdec **out, const void *buf, size_t len,
			const struct snap_ptdec_opts *o, struct snap_strtab *names, char *why,
			size_t whylen);

/* 1 and *ev (borrowed until the next call), 0 at the end, or <0. In a timeless
 * trace (snap_ptdec_timeless) the times mean nothing: the caller numbers the events. */
int snap_ptdec_next(struct snap_ptdec *d, struct snap_event *ev);

/* Up to n events into ev[0..n) (borrowed until the next call; no event has
 * frames), as n calls of snap_ptdec_next: how many (> 0), 0 at the end, or <0
 * (an error after some events is returned by the next call). */
int snap_ptdec_fill(struct snap_ptdec *d, struct snap_event *ev, size_t n);

/* 1 when the trace has no timing packets (recorded without tsc). */
int snap_ptdec_timeless(const struct snap_ptdec *d);

/* Copies the decoder's counters so far into *s (the figures grow as next() is
 * called; jobs is set from open on). */
void snap_ptdec_stats(const struct snap_ptdec *d, struct snap_ptdec_stats *s);

/* Stops and joins the worker threads and frees d with all it owns (the file's
 * mapping, images, symbol tables, events); names stays the caller's. NULL is a no-op. */
void snap_ptdec_close(struct snap_ptdec *d);

#endif
