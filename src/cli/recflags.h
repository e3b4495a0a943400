/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What `run` and `attach` share: the record and output flags
 * (docs/behaviour.md §1.4), choosing PT or sampling, and -print-perf-commands.
 * The -trigger pickers are in cli/trigpick, the record -> decode flow in cli/recflow.
 */
#ifndef SNAP_CLI_RECFLAGS_H
#define SNAP_CLI_RECFLAGS_H

#include <sys/types.h>

#include "cli/opts.h"
#include "record/caps.h"
#include "record/perfargs.h"

struct snap_recflags {
	struct snap_recopts rec;
	struct snap_xev xev[SNAP_XEV_MAX];
	const char *trigger;
	char *trigger_owned; /* -trigger ? choice; released by snap_recflags_fini */
	const char *workdir;
	const char *output;
	int force_pt;
	int strict_scope;
	int per_call_args; /* -per-call-args */
	int no_dlfilter;
	int print_cmds;
	int verbose;
	int kernel_only, include_kernel;
	const char *snapshot_size;
	const char *exe;		  /* the traced executable (set by prepare, borrowed) */
	char *filter_start, *filter_stop; /* -filter (owned) */
	int serve, serve_port;		  /* -serve, -serve-port */
	int report;	/* -report: print snaptrace report's tables after the decode */
	int attach_pid; /* attach: the first pid (its mappings pick the call graph) */
};

/* The flag table entries shared by run and attach (NULL-terminated), and
 * their count without the terminator. */
extern const struct snap_opt snap_recflags_opts[];
#define SNAP_RECFLAGS_NOPTS 26

/* init: every flag at its default; fini frees the strings the flags own. */
void snap_recflags_init(struct snap_recflags *f);
void snap_recflags_fini(struct snap_recflags *f);
/* Applies shared flag k (an index into snap_recflags_opts) with value val.
 * Returns 0, or 2 after printing a one-line usage error. */
int snap_recflags_apply(struct snap_recflags *f, const char *cmd, int k, const char *val);

/* Detects the machine, chooses PT or sampling (a notice when falling back),
 * resolves -trigger ? with exe (the executable to list symbols from).
 * Returns 0, or an exit status after printing why. */
int snap_recflags_prepare(struct snap_recflags *f, const char *cmd, struct snap_machine *m,
			  const char *exe);

/* -print-perf-commands: prints the perf record command line for pids
 * (NULL: "PID"), then the perf script line that decodes its output.
 * Returns the exit status. */
int snap_recflags_print(struct snap_recflags *f, const char *cmd, const struct snap_machine *m,
			const int *pids, size_t npids);

/* Builds the perf record argv into *pa (snap_perfargs_fini it in every
 * case) and prints its warnings. Returns 0, or the exit status (2 usage,
 * 1 otherwise) after printing why. */
int snap_recflags_build(struct snap_recflags *f, const char *cmd, const struct snap_machine *m,
			struct snap_perfargs *pa);

#endif
