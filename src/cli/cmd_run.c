// SPDX-License-Identifier: GPL-2.0
/*
 * snaptrace run [flags] -- PROG ARGS...   (or: run [flags] PROG [-- ARGS...])
 * Starts PROG stopped, starts perf on it, lets it go, records until it
 * exits (or Ctrl-C, or the trigger), then decodes. The exit status is
 * PROG's (128 + signal when it was killed) once the trace is written;
 * 1 when recording or decoding failed, 2 for a usage error.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "cli/recflags.h"
#include "cli/recflow.h"
#include "util/alloc.h"

static const char run_usage[] = "snaptrace run [flags] -- PROG [ARGS...]";
static const char run_desc[] =
	"Runs PROG under tracing and writes a timeline of what it did (trace.fxt.gz, open it in\n"
	"https://ui.perfetto.dev). Uses Intel PT where the CPU has it, else stack sampling.\n"
	"Recording ends when PROG exits, on Ctrl-C, or when the -trigger function is called;\n"
	"the trace covers the last moments before that (a ring buffer). The exit status is\n"
	"PROG's once the trace is written.";

/* Why PROG cannot be run, with the fix, after "can't find executable for
 * PROG": a path that is missing, a directory or not executable; a bare name
 * not on $PATH (but in the current directory: give ./PROG). Returns 0 when
 * exe (the path found) is runnable. */
static int prog_problem(const char *prog, int found, const char *exe)
{
	struct stat st;
	const char *path = found ? exe : prog;

	if (!found && !strchr(prog, '/')) {
		if (access(prog, F_OK) == 0)
			fprintf(stderr,
				"snaptrace run: can't find executable for %s: not on $PATH (for "
				"the "
				"one in this directory, run ./%s)\n",
				prog, prog);
		else
			fprintf(stderr,
				"snaptrace run: can't find executable for %s: no such program on "
				"$PATH (give its path)\n",
				prog);
		return 1;
	}
	if (stat(path, &st) < 0) {
		fprintf(stderr,
			"snaptrace run: can't find executable for %s: %s (check the path)\n", prog,
			strerror(errno));
		return 1;
	}
	if (S_ISDIR(st.st_mode)) {
		fprintf(stderr,
			"snaptrace run: can't find executable for %s: it is a directory (name the "
			"program in it)\n",
			prog);
		return 1;
	}
	if (!found || access(path, X_OK) < 0) {
		fprintf(stderr,
			"snaptrace run: can't find executable for %s: not executable (chmod +x "
			"%s)\n",
			prog, prog);
		return 1;
	}
	return 0;
}

int snap_cmd_run(int argc, char **argv)
{
	struct snap_optparse p;
	struct snap_recflags f;
	struct snap_machine m;
	char exe[PATH_MAX];
	char **prog = NULL;
	const char *val;
	int k, rc;

	snap_recflags_init(&f);
	snap_optparse_init(&p, "run", argc - 1, argv + 1);
	while ((k = snap_opt_next(&p, snap_recflags_opts, &val)) != SNAP_OPT_DONE) {
		if (k == SNAP_OPT_HELP) {
			snap_opt_help(stdout, run_usage, run_desc, snap_recflags_opts);
			return 0;
		}
		if (k == SNAP_OPT_ERROR)
			return 2;
		if (k == SNAP_OPT_DASHDASH || k == SNAP_OPT_POSITIONAL) {
			/* PROG [-- ARGS] or -- PROG ARGS: everything from here is the argv. */
			int first = k == SNAP_OPT_DASHDASH ? p.i : p.i - 1;
			int n = 0;

			prog = snap_calloc((size_t)(p.argc - first) + 1, sizeof(*prog));
			if (!prog)
				return 1;
			for (int i = first; i < p.argc; i++) {
				if (k == SNAP_OPT_POSITIONAL && i == first + 1 &&
				    !strcmp(p.argv[i], "--"))
					continue;
				prog[n++] = p.argv[i];
			}
			prog[n] = NULL;
			break;
		}
		rc = snap_recflags_apply(&f, "run", k, val);
		if (rc)
			return rc;
	}
	if (!prog || !prog[0]) {
		fprintf(stderr, "snaptrace run: no program name (usage: %s)\n", run_usage);
		snap_free(prog);
		return 2;
	}
	if (prog_problem(prog[0], snap_caps_find_in_path(prog[0], exe, sizeof(exe)) == 0, exe)) {
		snap_free(prog);
		return 2;
	}
	rc = snap_recflags_prepare(&f, "run", &m, exe);
	if (!rc)
		rc = f.print_cmds ? snap_recflags_print(&f, "run", &m, NULL, 0)
				  : snap_recflow_record(&f, "run", &m, prog, NULL, 0);
	snap_recflags_fini(&f);
	snap_free(prog);
	return rc;
}
