/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One recording, from start to perf.data (docs/behaviour.md §2.4-§2.6): the
 * working directory, the traced program (run: started stopped through
 * PTRACE_TRACEME, released once perf records), perf, the trigger, signal
 * forwarding, snapshots and stopping. cli/cmd_run.c and cli/cmd_attach.c
 * drive it:
 *
 *   snap_session_start -> snap_session_loop -> snap_session_finish
 *   -> (decode s->data_path) -> snap_session_wait_child -> snap_session_close
 *
 * Every function returns >= 0 or a negative error with a one-line reason
 * in s->why. The session prints progress notices through util/log.h only.
 */
#ifndef SNAP_RECORD_SESSION_H
#define SNAP_RECORD_SESSION_H

#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "record/perfargs.h"
#include "record/perfrun.h"
#include "record/trigger.h"
#include "record/workdir.h"

struct snap_session_cfg {
	struct snap_recopts rec;	  /* pids/npids/data are filled in by the session */
	const struct snap_perfcaps *caps; /* borrowed */
	char *const *cmd;		  /* run: the program's argv (NULL-terminated) */
	const int *pids;		  /* attach: the processes (borrowed) */
	size_t npids;
	const char *trigger; /* function name, "." (the stop indicator), or NULL */
	const char *workdir; /* NULL: private temporary directory */
};

enum snap_session_end {
	SNAP_END_NONE = 0,
	SNAP_END_EXIT,	  /* the program (all targets) exited */
	SNAP_END_SIGNAL,  /* Ctrl-C / SIGTERM / SIGHUP */
	SNAP_END_TRIGGER, /* the (single-shot) trigger fired */
	SNAP_END_PERF,	  /* perf exited on its own */
};

struct snap_session {
	struct snap_session_cfg cfg;
	struct snap_workdir wd;
	struct snap_perfargs pa;
	struct snap_ctlplan plan;
	struct snap_perf perf;
	struct snap_trigger trig;
	int log_fd; /* perf's stdout/stderr file in the workdir */
	int sigfd;
	sigset_t oldmask;
	int masked;
	pid_t child; /* run: the program; 0 for attach */
	int child_status, child_reaped;
	int *pids; /* the traced pids (owned) */
	size_t npids;
	char **names;		  /* command line per pid (owned) */
	const char *trigger_name; /* the resolved name ("." resolved), borrowed */
	uint64_t trigger_addr;	  /* in the first pid */
	uint64_t *trigger_addrs;  /* per pid, 0 = not armed (owned) */
	char trigger_where[PATH_MAX];
	/* the trigger's function as perf shows it (demangled) */
	char trigger_disp[512];
	struct snap_trigger_hit *hits; /* hits marked in the trace (owned): the one of
					  each snapshot, and with -multi-snapshot every hit */
	size_t nhits, hcap;
	size_t hits_unsnapped;	/* -multi-snapshot: hits kept without a snapshot of their own */
	size_t hits_after_snap; /* hits kept after the last snapshot was taken */
	uint64_t hits_lost;	/* hits the breakpoint rings had no room for */
	int snapshots;		/* snapshots taken */
	int kernel_signals;	/* the breakpoints signal perf directly */
	int keep_final;		/* keep the dump perf writes at stop (a late hit) */
	char last_snap[NAME_MAX + 1]; /* data file written by the last snapshot */
	int recording;		      /* perf still recording */
	enum snap_session_end end;
	long start_ms, recorded_ms; /* how long perf recorded (monotonic ms) */
	int other_threads;	    /* most threads seen besides the traced ones (no
				       -multi-thread: they ran untraced) */
	int children;		    /* child processes seen (untraced without -multi-thread) */
	char data_path[PATH_MAX];   /* set by finish: perf.data or the directory */
	int ndata;		    /* data files */
	char why[512]; /* why the last step failed, escaped for a terminal (util/esc.h) */
};

/* Sets up and starts recording. Returns 0 or a negative error (s->why);
 * call snap_session_close in every case. */
int snap_session_start(struct snap_session *s, const struct snap_session_cfg *cfg);
/* Records until the program exits, a signal, the trigger, or perf stops.
 * Returns 0 or a negative error. */
int snap_session_loop(struct snap_session *s);
/* Takes the final snapshot if needed, stops perf and collects the data
 * files into s->data_path. Returns 0 or a negative error. */
int snap_session_finish(struct snap_session *s);
/* run: waits for the program and returns its exit status (128 + signal
 * when killed); attach: returns 0. Signals are no longer forwarded: the
 * mask is restored (by finish already) so a Ctrl-C during decoding stops
 * snaptrace, and the program with it (PDEATHSIG). */
int snap_session_wait_child(struct snap_session *s);
/* Releases everything: perf is killed if it still runs, breakpoints are
 * closed, the working directory removed unless kept. Safe twice. */
void snap_session_close(struct snap_session *s);

#endif
