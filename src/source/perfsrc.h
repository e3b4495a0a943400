/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Events from a perf.data file: runs `perf script` on it and parses what it
 * prints (docs/behaviour.md §2.7); the source of that name (source/source.h,
 * snap_source_perf) is at the end of perfsrc.c. With a plugin, the same events
 * come several times faster from source/dlsrc.h, which shares this file's
 * perf script command. perf decodes on one core while the caller builds the
 * timeline on the other.
 */
#ifndef SNAP_SOURCE_PERFSRC_H
#define SNAP_SOURCE_PERFSRC_H

#include <stddef.h>
#include <sys/types.h>

#include "model/event.h"
#include "parse/perfdata.h"
#include "parse/perfscript.h"
#include "source/dlsrc.h"

struct snap_perfsrc_opts {
	const char *perf;	      /* perf binary (borrowed) */
	const char *data;	      /* perf.data path (borrowed) */
	enum snap_perfdata_kind kind; /* AUX: decode branches; else samples */
	const char *plugin;	      /* dlfilter plugin (borrowed for open), NULL = text path */
	int keepjumps;		      /* plugin: send intra-symbol jumps too */
	int timeless;		      /* no timestamps in the data: do not ask for time */
	const char *vmlinux;	      /* kernel image for symbols (perf --vmlinux), or NULL */
	const char *kallsyms;	      /* kernel symbol list (perf --kallsyms), or NULL */
	int stitch_lbr;		      /* stitched LBR call graphs: perf script --stitch-lbr */
	int no_inline;		      /* perf script --no-inline (snap_caps_has_no_inline) */
};

struct snap_perfsrc {
	pid_t pid;  /* perf script, or -1 once reaped */
	int fd;	    /* read end of perf's stdout, or -1 */
	int eof;    /* perf's stdout is drained */
	int status; /* perf's wait status once reaped */
	struct snap_perfscript ps;
	struct snap_cfi cfi;	  /* the DSOs' CFI (parse/cfi.h) */
	char *buf;		  /* read buffer (owned) */
	int stall_ms;		  /* snap_dlsrc_stall_ms() */
	struct snap_perferr perr; /* perf's stderr (relayed to ours) */
	/* snap_perfsrc_set_progress, or NULL */
	struct snap_progress *progress;
};

/* A progress line to redraw while perf script prints nothing (borrowed; NULL:
 * none). */
void snap_perfsrc_set_progress(struct snap_perfsrc *src, struct snap_progress *prog);

#define SNAP_PERFSRC_MAX_ARGS SNAP_DLSRC_MAX_ARGS

/* Fills argv (at least SNAP_PERFSRC_MAX_ARGS entries, NULL-terminated) with the perf
 * script command snap_perfsrc_open() runs for o: the plugin's when o->plugin is set,
 * else the text path's (built on snap_dlsrc_argv). Pointers borrow from o and static
 * strings. Returns argc. */
int snap_perfsrc_argv(const struct snap_perfsrc_opts *o, const char **argv);

/* The plugin path's options (source/dlsrc.h) for o. */
void snap_perfsrc_dlopts(const struct snap_perfsrc_opts *o, struct snap_dlsrc_opts *dl);

/* Starts perf script for its text (o->plugin is not used). names is borrowed
 * (interned symbols). Returns 0, or -errno if perf could not be started. */
int snap_perfsrc_open(struct snap_perfsrc *src, const struct snap_perfsrc_opts *o,
		      struct snap_strtab *names);

/* The next event of ps, feeding it from fd through buf (size bytes) as needed; *eof is
 * set once fd is drained (then ps has been finished). Returns 1 and fills *ev (borrowed
 * until the next call), 0 at the end, or <0 (-EINTR when a signal interrupted the read). */
int snap_perfsrc_pull(struct snap_perfscript *ps, int fd, char *buf, size_t size, int *eof,
		      struct snap_event *ev);

/* Returns 1 and fills *ev (borrowed until the next call), 0 at the end, or <0. */
int snap_perfsrc_next(struct snap_perfsrc *src, struct snap_event *ev);

/* Stops perf (killing it if it is still running) and releases everything.
 * Returns 0 if perf ran to a successful end, -SNAP_EPERF if it failed or was killed. */
int snap_perfsrc_close(struct snap_perfsrc *src);

/* The text parser's counters (lines, unknown lines). */
const struct snap_perfscript_stats *snap_perfsrc_stats(const struct snap_perfsrc *src);

#endif
