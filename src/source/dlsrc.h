/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Events from a perf.data file through the fast path: `perf script --dlfilter
 * snaptrace-dlfilter.so` (src/plugin/dlfilter.c) writes binary records down a
 * pipe (parse/dlrec reads them). What perf prints on its stdout ("instruction
 * trace error" lines) travels inside that stream as TEXT records, at its exact
 * place among the samples, and goes through parse/perfscript, so the events
 * come out in the same order as from the text path. perf's real stdout is
 * read too (a fallback for text perf printed around the plugin) and parsed at
 * the end. perf decodes on one core while the caller builds the timeline on
 * the other. The source of that name (source/source.h, snap_source_dlfilter)
 * is at the end of dlsrc.c.
 */
#ifndef SNAP_SOURCE_DLSRC_H
#define SNAP_SOURCE_DLSRC_H

#include <poll.h>
#include <stddef.h>
#include <sys/types.h>

#include "model/event.h"
#include "parse/dlrec.h"
#include "parse/perfscript.h"
#include "util/progress.h"

#define SNAP_DLSRC_MAX_OUT (4u << 20) /* perf's real stdout kept at most */

struct snap_dlsrc_opts {
	const char *perf;     /* perf binary (borrowed) */
	const char *data;     /* perf.data path (borrowed) */
	const char *plugin;   /* plugin path (borrowed); NULL only for snap_dlsrc_argv */
	const char *itrace;   /* e.g. "--itrace=bep" for PT data, NULL for samples */
	int keepjumps;	      /* --dlarg keepjumps: send intra-symbol jumps too */
	const char *vmlinux;  /* kernel image for symbols (perf --vmlinux), or NULL */
	const char *kallsyms; /* kernel symbol list (perf --kallsyms), or NULL */
	int stitch_lbr;	      /* --stitch-lbr (samples recorded with stitched LBR) */
	const char *fields;   /* samples: "--ns -F FIELDS --show-switch-events
			       * --show-task-events" with the plugin (switch and task
			       * lines and dwarf chains come as TEXT) */
	int no_inline;	      /* --no-inline (perf >= 4.11, snap_caps_has_no_inline) */
};

/* perf script's stderr, read from a pipe and relayed to ours but for its
 * warnings about data lost while recording, which the pipeline says in its own
 * words (snap_perfdata_lost): both decode paths (plugin and text) use it. */
struct snap_perferr {
	int fd;		/* read end (non-blocking), -1 at EOF */
	int held;	/* a "Warning:" line not relayed yet (dlsrc.c, relay_err) */
	char tail[512]; /* the last bytes perf wrote there (NUL-terminated) */
};

/* Relays what perf has written on e so far to snaptrace's stderr, keeping the
 * tail in e->tail; running 0 (perf reaped): all of it, up to EOF. Never blocks
 * while perf runs. */
void snap_perferr_drain(struct snap_perferr *e, int running);

struct snap_dlsrc {
	pid_t pid;  /* perf script, or -1 once reaped */
	int rec_fd; /* read end of the record pipe, -1 once at EOF */
	int out_fd; /* read end of perf's stdout, -1 once at EOF */
	int rec_eof, out_eof, done;
	int draining; /* returning the events of TEXT records (perf's error lines) */
	int status;   /* perf's wait status once reaped */
	int err;      /* sticky error */
	int said;     /* err was reported (snap_log): the caller does not say it again */
	struct snap_dlrec rd;
	struct snap_perfscript ps; /* perf's stdout: error lines */
	struct snap_cfi cfi;	   /* the DSOs' CFI, for both parsers */
	char *buf;		   /* read buffer (owned) */
	char *out;		   /* perf's real stdout, kept for the end (owned) */
	size_t outlen, outcap;
	uint64_t out_dropped;	  /* bytes beyond SNAP_DLSRC_MAX_OUT */
	uint64_t events;	  /* events returned so far */
	char plugin[256];	  /* for messages */
	int stall_ms;		  /* snap_dlsrc_stall_ms() */
	struct snap_perferr perr; /* perf's stderr (relayed to ours) */
	/* a progress line redrawn while perf prints nothing, or NULL */
	struct snap_progress *progress;
};

/* Tells c the build ids perf recorded in the perf.data file (or directory) data,
 * and where perf's build-id cache is (~/.debug). */
void snap_dlsrc_cfi_setup(struct snap_cfi *c, const char *data);
/* -v: how many unknown call-chain frames were named from the DSOs' CFI. */
void snap_dlsrc_log_cfi(const struct snap_cfi *c);

/* Relays what perf has written on its stderr so far (all of it once perf has
 * exited) to snaptrace's stderr (snap_perferr_drain). */
void snap_dlsrc_drain_err(struct snap_dlsrc *src);

/* 1 if perf's stderr says it could not load the plugin ("dlopen failed",
 * any message naming the dlfilter): only then is the text path worth a try. */
int snap_dlsrc_load_failed(const struct snap_dlsrc *src);

#define SNAP_DLSRC_MAX_ARGS 24

/*
 * Fills argv (at least SNAP_DLSRC_MAX_ARGS entries, NULL-terminated) with
 * "PERF script -i DATA [ITRACE] [--vmlinux V] [--kallsyms K]" and, when
 * o->plugin is set, "--dlfilter PLUGIN --dlarg fd=3 [--dlarg keepjumps]". The
 * one perf script command builder: source/perfsrc adds its text path's
 * arguments to it when there is no plugin (at most 4 more). Pointers borrow
 * from o and static strings. Returns argc.
 */
int snap_dlsrc_argv(const struct snap_dlsrc_opts *o, const char **argv);

/* How long perf script may print nothing before it is stopped (-SNAP_ESTALL):
 * $SNAPTRACE_PERF_STALL_SECONDS (default SNAP_DLSRC_STALL_S; 0 = for ever), in
 * ms for poll, -1 for ever. */
#define SNAP_DLSRC_STALL_S 120
int snap_dlsrc_stall_ms(void);

/* poll() for at most stall_ms (-1: for ever); with a progress line (prog not
 * NULL), in slices of 250 ms, redrawing it between them (snap_progress_wait):
 * perf script may resolve symbols for many seconds before its first event.
 * Returns what poll returns (0 once stall_ms has passed). */
int snap_dlsrc_poll(struct pollfd *p, unsigned n, int stall_ms, struct snap_progress *prog);

/* Starts perf script with the plugin. names is borrowed (interned symbols).
 * Returns 0, or -errno if perf could not be started. */
int snap_dlsrc_open(struct snap_dlsrc *src, const struct snap_dlsrc_opts *o,
		    struct snap_strtab *names);

/*
 * Returns 1 and fills *ev (borrowed until the next call), 0 at the end, or <0:
 * -SNAP_EPLUGIN for a bad record stream, -SNAP_ETRUNC when it ended without
 * its END record (perf or the plugin died), -errno. Errors are reported
 * (snap_log, naming the plugin) before they are returned, once, except when
 * nothing at all came from the plugin (perf could not load it, say): then
 * the caller decides (e.g. falls back to the text path) and reports.
 */
int snap_dlsrc_next(struct snap_dlsrc *src, struct snap_event *ev);

/* Returns 0 if status (perf script's wait status) is a clean exit, else
 * -SNAP_EPERF, and with report set logs how perf ended (killed by a signal, or
 * its exit status). Shared by both paths' close. */
int snap_dlsrc_perf_exit(int status, int report);

/* Stops perf (killing it if it is still running) and releases everything.
 * Returns 0 if perf ran to a successful end, -SNAP_EPERF if it failed or was
 * killed, or the stream's error. */
int snap_dlsrc_close(struct snap_dlsrc *src);

/* The record stream's counters. */
const struct snap_dlrec_stats *snap_dlsrc_stats(const struct snap_dlsrc *src);

#endif
