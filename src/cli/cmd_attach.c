// SPDX-License-Identifier: GPL-2.0
/*
 * snaptrace attach -pid PID[,PID...] [flags]
 * Records running processes until Ctrl-C (or the trigger), then decodes.
 * The processes are never stopped or ptraced: breakpoints are perf events,
 * gone with snaptrace, so nothing is left behind in them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "cli/picker.h"
#include "cli/recflags.h"
#include "cli/recflow.h"
#include "util/alloc.h"
#include "util/vec.h"

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

/* The processes one may attach to, "PID  ARGS" (as magic-trace's picker over
 * ps x: the user's own processes, every one but kernel threads for root,
 * never snaptrace itself), in pid order. Returns how many (lines owned). */
static size_t list_processes(char ***out)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char **v = NULL;
	size_t n = 0, cap = 0;
	uid_t uid = geteuid();

	*out = NULL;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[64], args[256], *line;
		struct stat st;
		long pid = strtol(e->d_name, NULL, 10);
		ssize_t len;
		int fd;

		if (pid <= 0 || pid == (long)getpid() || pid == (long)getppid())
			continue;
		snprintf(path, sizeof(path), "/proc/%ld", pid);
		if (stat(path, &st) < 0 || (uid != 0 && st.st_uid != uid))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, args, sizeof(args) - 1);
		close(fd);
		if (len <= 0)
			continue; /* a kernel thread, or gone */
		for (ssize_t i = 0; i < len; i++)
			if (args[i] == '\0' || args[i] == '\n')
				args[i] = ' ';
		args[len] = '\0';
		if (snap_vec_reserve(&v, &cap, n + 1, sizeof(*v)) < 0 ||
		    asprintf(&line, "%7ld  %s", pid, args) < 0)
			break;
		v[n++] = line;
	}
	closedir(d);
	/* readdir order of /proc is pid order; keep it */
	*out = v;
	return n;
}

/* attach without -pid: the picker when interactive. Returns 0 with pids[0]. */
static int pick_pid(int *pids, size_t *npids)
{
	char **lines, *choice;
	const char *why;
	size_t n;
	long pid;

	if (!snap_picker_interactive()) {
		fprintf(stderr, "snaptrace attach: which process? pass -pid PID[,PID...] (find it "
				"with pgrep NAME); without -pid, attach asks on a terminal\n");
		return 2;
	}
	n = list_processes(&lines);
	choice = snap_pick("attach to> ", (const char *const *)lines, n, &why);
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	snap_free(lines);
	if (!choice) {
		fprintf(stderr, "snaptrace attach: no process chosen%s%s (or pass -pid PID)\n",
			why[0] ? ": " : "", why);
		return 2;
	}
	pid = strtol(choice, NULL, 10);
	snap_free(choice);
	if (pid <= 0 || pid > INT32_MAX) {
		fprintf(stderr, "snaptrace attach: no pid in the chosen line\n");
		return 2;
	}
	pids[0] = (int)pid;
	*npids = 1;
	return 0;
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
		(struct snap_opt){"pid", "p", "PID[,PID...]",
				  "the processes to trace (without it: pick one, on a terminal)"};
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
	if (!npids && (rc = pick_pid(pids, &npids)) != 0)
		return rc;
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
				  : snap_recflow_record(&f, "attach", &m, NULL, pids, npids);
	snap_recflags_fini(&f);
	return rc;
}
