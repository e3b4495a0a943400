// SPDX-License-Identifier: GPL-2.0
/*
 * snaptrace attach -pid PID[,PID...] [flags]
 * Records running processes until Ctrl-C (or the trigger), then decodes.
 * The processes are never stopped or ptraced: breakpoints are perf events,
 * gone with snaptrace, so nothing is left behind in them.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "cli/recflags.h"

static const char attach_usage[] = "snaptrace attach -pid PID[,PID...] [flags]";
static const char attach_desc[] =
	"Traces running processes until Ctrl-C, or until the -trigger function is called, then\n"
	"writes the timeline of the last moments (trace.fxt.gz). The processes keep running.";

#define MAX_PIDS 64

static int parse_pids(const char *s, int *pids, size_t *n)
{
	*n = 0;
	while (*s) {
		char *end;
		long v;

		errno = 0;
		v = strtol(s, &end, 10);
		if (end == s || errno || v <= 0 || v > INT32_MAX || (*end && *end != ','))
			return -1;
		for (size_t i = 0; i < *n; i++)
			if (pids[i] == (int)v)
				return -2;
		if (*n >= MAX_PIDS)
			return -1;
		pids[(*n)++] = (int)v;
		s = *end ? end + 1 : end;
	}
	return *n ? 0 : -1;
}

int snap_cmd_attach(int argc, char **argv)
{
	struct snap_opt opts[SNAP_RECFLAGS_NOPTS + 2];
	struct snap_optparse p;
	struct snap_recflags f;
	struct snap_machine m;
	int pids[MAX_PIDS];
	size_t npids = 0;
	char exe[PATH_MAX], link[64];
	const char *val;
	int k, rc;
	ssize_t n;

	memcpy(opts, snap_recflags_opts, sizeof(struct snap_opt) * SNAP_RECFLAGS_NOPTS);
	opts[SNAP_RECFLAGS_NOPTS] =
		(struct snap_opt){"pid", "p", "PID[,PID...]", "the processes to trace (required)"};
	opts[SNAP_RECFLAGS_NOPTS + 1] = (struct snap_opt){NULL, NULL, NULL, NULL};
	snap_recflags_init(&f);
	snap_optparse_init(&p, "attach", argc - 1, argv + 1);
	while ((k = snap_opt_next(&p, opts, &val)) != SNAP_OPT_DONE) {
		if (k == SNAP_OPT_HELP) {
			snap_opt_help(stdout, attach_usage, attach_desc, opts);
			return 0;
		}
		if (k == SNAP_OPT_ERROR)
			return 2;
		if (k == SNAP_OPT_POSITIONAL || k == SNAP_OPT_DASHDASH) {
			fprintf(stderr,
				"snaptrace attach: unexpected argument '%s' (use -pid PID)\n",
				val ? val : "--");
			return 2;
		}
		if (k == SNAP_RECFLAGS_NOPTS) {
			int r = parse_pids(val, pids, &npids);

			if (r == -2) {
				fprintf(stderr, "snaptrace attach: duplicate PIDs in '%s'\n", val);
				return 2;
			}
			if (r < 0) {
				fprintf(stderr, "snaptrace attach: bad -pid '%s' (PID[,PID...])\n",
					val);
				return 2;
			}
			continue;
		}
		rc = snap_recflags_apply(&f, "attach", k, val);
		if (rc)
			return rc;
	}
	if (!npids) {
		fprintf(stderr, "snaptrace attach: -pid PID is required (usage: %s)\n",
			attach_usage);
		return 2;
	}
	for (size_t i = 0; i < npids; i++) {
		if (kill(pids[i], 0) < 0 && errno == ESRCH) {
			fprintf(stderr, "snaptrace attach: no process %d\n", pids[i]);
			return 1;
		}
	}
	snprintf(link, sizeof(link), "/proc/%d/exe", pids[0]);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n < 0) {
		fprintf(stderr, "snaptrace attach: cannot read %s: %s\n", link, strerror(errno));
		return 1;
	}
	exe[n] = '\0';
	f.attach_pid = pids[0];
	rc = snap_recflags_prepare(&f, "attach", &m, exe);
	if (!rc)
		rc = f.print_cmds ? snap_recflags_print(&f, "attach", &m, pids, npids)
				  : snap_recflags_record(&f, "attach", &m, NULL, pids, npids);
	snap_recflags_fini(&f);
	return rc;
}
