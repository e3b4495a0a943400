// SPDX-License-Identifier: GPL-2.0
#include "cli/recflags.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/picker.h"
#include "cli/pipeline.h"
#include "cli/reportcli.h"
#include "cli/serve.h"
#include "parse/hitsfile.h"
#include "record/cgpick.h"
#include "record/dwline.h"
#include "record/elfsym.h"
#include "record/perfsrc.h"
#include "record/session.h"
#include "record/trigger.h"
#include "record/workdir.h"
#include "stack/filter.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/vec.h"

/* Indices into snap_recflags_opts, in table order. */
enum {
	F_TRIGGER,
	F_MULTI_SNAPSHOT,
	F_TRACE_INCLUDE_KERNEL,
	F_TRACE_KERNEL_ONLY,
	F_TIMER_RESOLUTION,
	F_MULTI_THREAD,
	F_FULL_EXECUTION,
	F_SNAPSHOT_SIZE,
	F_SAMPLING,
	F_PT,
	F_CALLGRAPH_MODE,
	F_EVENTS,
	F_WORKING_DIRECTORY,
	F_OUTPUT,
	F_STRICT_SCOPE,
	F_NO_DLFILTER,
	F_V,
	F_PRINT_PERF_COMMANDS,
	F_Z_PRINT_PERF_COMMANDS,
	F_FILTER,
	F_VV,
	F_SERVE,
	F_SERVE_PORT,
	F_SHARE,
	F_REPORT,
	F_COUNT,
};

/* The order matters: snap_recflags_apply switches on the index (enum above). */
const struct snap_opt snap_recflags_opts[] = {
	{"trigger", NULL, "SYMBOL",
	 "snapshot when a thread calls SYMBOL (also symbol:NAME, addr:HEX, FILE:LINE[:COL]; "
	 "'.' = the stop indicator; '?', symbol:?, line:? = pick)"},
	{"multi-snapshot", NULL, NULL, "snapshot at every trigger hit, not just the first"},
	{"trace-include-kernel", NULL, NULL, "trace the kernel too (root or paranoid <= 1)"},
	{"trace-kernel-only", NULL, NULL, "trace only the kernel (root or paranoid <= 1)"},
	{"timer-resolution", NULL, "RES",
	 "Low, Normal (default), High, Sample:HZ (sampling), Custom:cyc=1,... (PT)"},
	{"multi-thread", NULL, NULL, "trace every thread of the process, not only the main one"},
	{"full-execution", NULL, NULL, "record everything instead of a ring buffer (big files)"},
	{"snapshot-size", NULL, "SIZE", "ring buffer size, e.g. 4M (PT AUX area or sampling ring)"},
	{"sampling", NULL, NULL, "stack sampling instead of Intel PT (automatic without PT)"},
	{"pt", NULL, NULL, "require Intel PT: fail instead of falling back to sampling"},
	{"callgraph-mode", NULL, "MODE",
	 "sampling call graphs: auto (default: fp, lbr or dwarf, by looking at the program), fp, "
	 "dwarf, lbr"},
	{"events", NULL, "LIST", "extra sampled events: branch-misses, cache-misses"},
	{"working-directory", NULL, "DIR", "keep perf.data and logs in DIR (kept afterwards)"},
	{"output", "o", "FILE", "write the trace to FILE (default trace.fxt.gz)"},
	{"strict-scope", NULL, NULL, "fail when the trace leaves the requested scope"},
	{"no-dlfilter", NULL, NULL, "decode through perf script text, not the perf plugin"},
	{"v", NULL, NULL, "verbose: say what is run (twice: debug)"},
	{"print-perf-commands", NULL, NULL, "print the perf record command line and stop"},
	{"z-print-perf-commands", NULL, NULL, NULL},
	{"filter", NULL, "(START STOP)",
	 "write only from a call to START to the next call to STOP"},
	{"vv", NULL, NULL, NULL},
	{"serve", NULL, NULL, "then serve the trace to the Perfetto UI on 127.0.0.1 until Ctrl-C"},
	{"serve-port", NULL, "PORT", "port for -serve (default 9001)"},
	{"share", NULL, NULL, "not supported (snaptrace never uploads)"},
	{"report", NULL, NULL, "then print the trace's latency figures (snaptrace report)"},
	{NULL, NULL, NULL, NULL},
};
_Static_assert(sizeof(snap_recflags_opts) / sizeof(snap_recflags_opts[0]) == F_COUNT + 1,
	       "snap_recflags_opts and its index enum disagree");
_Static_assert(F_COUNT == SNAP_RECFLAGS_NOPTS, "SNAP_RECFLAGS_NOPTS is stale");

void snap_recflags_init(struct snap_recflags *f)
{
	memset(f, 0, sizeof(*f));
	f->rec.res.kind = SNAP_RES_NORMAL;
	f->serve_port = SNAP_SERVE_PORT;
}

void snap_recflags_fini(struct snap_recflags *f)
{
	snap_free(f->trigger_owned);
	f->trigger_owned = NULL;
	snap_free(f->filter_start);
	snap_free(f->filter_stop);
	f->filter_start = f->filter_stop = NULL;
}

static int usage_err(const char *cmd, const char *flag, const char *val, const char *hint)
{
	fprintf(stderr, "snaptrace %s: bad %s '%s' (%s)\n", cmd, flag, val, hint);
	return 2;
}

int snap_recflags_apply(struct snap_recflags *f, const char *cmd, int k, const char *val)
{
	switch (k) {
	case F_TRIGGER:
		f->trigger = val;
		break;
	case F_MULTI_SNAPSHOT:
		f->rec.multi_snapshot = 1;
		break;
	case F_TRACE_INCLUDE_KERNEL:
		f->include_kernel = 1;
		break;
	case F_TRACE_KERNEL_ONLY:
		f->kernel_only = 1;
		break;
	case F_TIMER_RESOLUTION:
		if (snap_res_parse(val, &f->rec.res) < 0)
			return usage_err(
				cmd, "-timer-resolution", val,
				"Low, Normal, High, Sample:HZ, Custom:cyc=1,mtc_period=0, or "
				"magic-trace's sexps");
		break;
	case F_MULTI_THREAD:
		f->rec.multi_thread = 1;
		break;
	case F_FULL_EXECUTION:
		f->rec.full_execution = 1;
		break;
	case F_SNAPSHOT_SIZE:
		if (snap_size_parse(val, &f->rec.snapshot_bytes) < 0 || !f->rec.snapshot_bytes)
			return usage_err(cmd, "-snapshot-size", val, "a size like 512K, 4M, 1G");
		f->snapshot_size = val;
		break;
	case F_SAMPLING:
		f->rec.sampling = 1;
		break;
	case F_PT:
		f->force_pt = 1;
		break;
	case F_CALLGRAPH_MODE:
		if (snap_cg_parse(val, &f->rec.cg) < 0)
			return usage_err(cmd, "-callgraph-mode", val,
					 "auto, fp, dwarf, lbr, lbr-no-stitch");
		break;
	case F_EVENTS:
		if (snap_xev_parse(val, f->xev, &f->rec.nxev) < 0)
			return usage_err(
				cmd, "-events", val,
				"a comma list of branch-misses, cache-misses, no duplicates");
		f->rec.xev = f->xev;
		break;
	case F_WORKING_DIRECTORY:
		f->workdir = val;
		break;
	case F_OUTPUT:
		f->output = val;
		break;
	case F_STRICT_SCOPE:
		f->strict_scope = 1;
		break;
	case F_NO_DLFILTER:
		f->no_dlfilter = 1;
		break;
	case F_V:
		f->verbose++;
		break;
	case F_PRINT_PERF_COMMANDS:
	case F_Z_PRINT_PERF_COMMANDS:
		f->print_cmds = 1;
		break;
	case F_SERVE:
		f->serve = 1;
		break;
	case F_SERVE_PORT:
		f->serve_port = snap_serve_port_parse(val);
		if (f->serve_port < 0)
			return usage_err(cmd, "-serve-port", val, "0-65535");
		break;
	case F_SHARE:
		fprintf(stderr, "snaptrace %s: %s\n", cmd, SNAP_SHARE_REFUSED);
		return 2;
	case F_FILTER:
		snap_free(f->filter_start);
		snap_free(f->filter_stop);
		if (snap_filter_parse_arg(val, &f->filter_start, &f->filter_stop) < 0)
			return usage_err(cmd, "-filter", val,
					 "want \"(START STOP)\", two function names");
		break;
	case F_REPORT:
		f->report = 1;
		break;
	case F_VV:
		f->verbose += 2;
		break;
	default:
		return 2;
	}
	return 0;
}

int snap_find_in_path(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/')) {
		if (access(prog, X_OK) < 0)
			return -ENOENT;
		return (size_t)snprintf(out, len, "%s", prog) < len ? 0 : -ENAMETOOLONG;
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if ((size_t)snprintf(out, len, "%.*s%s%s", (int)n, path, n ? "/" : "", prog) <
			    len &&
		    access(out, X_OK) == 0)
			return 0;
		path += n;
		if (*path == ':')
			path++;
	}
	return -ENOENT;
}

/* ---- -trigger ? ---- */

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Collects the unique FUNC symbol names of exe (borrowed from the mapping). */
static int list_funcs(const void *buf, size_t len, const char ***out, size_t *n)
{
	struct snap_elf e;
	struct snap_elfsym sym;
	uint64_t cur = 0;
	const char **v = NULL;
	size_t cap = 0, k = 0;

	*out = NULL;
	*n = 0;
	if (snap_elf_open(&e, buf, len) < 0)
		return -SNAP_EFORMAT;
	while (snap_elf_sym_next(&e, &cur, &sym) == 1) {
		if ((sym.type != 2 && sym.type != 10) || !sym.value || !sym.name[0])
			continue;
		if (snap_vec_reserve(&v, &cap, k + 1, sizeof(*v)) < 0) {
			snap_free(v);
			return -ENOMEM;
		}
		v[k++] = sym.name;
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_cstr);
	*n = 0;
	for (size_t i = 0; i < k; i++)
		if (!*n || strcmp(v[*n - 1], v[i]))
			v[(*n)++] = v[i];
	*out = v;
	return 0;
}

/* fzf over the names; returns an owned choice or NULL. */
static char *pick_fzf(const char **names, size_t n)
{
	int in[2], out[2], st;
	char buf[512];
	size_t got = 0;
	pid_t pid;

	if (pipe(in) < 0)
		return NULL;
	if (pipe(out) < 0) {
		close(in[0]);
		close(in[1]);
		return NULL;
	}
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execlp("fzf", "fzf", "--prompt", "trigger> ", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; pid > 0 && i < n; i++)
		if (dprintf(in[1], "%s\n", names[i]) < 0)
			break;
	close(in[1]);
	for (ssize_t r; pid > 0 && got + 1 < sizeof(buf) &&
			(r = read(out[0], buf + got, sizeof(buf) - 1 - got)) > 0;)
		got += (size_t)r;
	close(out[0]);
	if (pid > 0)
		waitpid(pid, &st, 0);
	buf[got] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return got && buf[0] ? snap_strndup(buf, strlen(buf)) : NULL;
}

/* A numbered list on stderr, the answer read from the terminal. */
static char *pick_numbered(const char **names, size_t n)
{
	FILE *tty = fopen("/dev/tty", "re");
	char line[512];
	char *end;
	unsigned long k;

	if (!tty) {
		fputs("snaptrace: -trigger ? needs a terminal (or install fzf)\n", stderr);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%6zu  %s\n", i + 1, names[i]);
	fprintf(stderr, "trigger: number or name (empty to cancel): ");
	if (!fgets(line, sizeof(line), tty)) {
		fclose(tty);
		return NULL;
	}
	fclose(tty);
	line[strcspn(line, "\n")] = '\0';
	if (!line[0])
		return NULL;
	k = strtoul(line, &end, 10);
	if (!*end && k >= 1 && k <= n)
		return snap_strndup(names[k - 1], strlen(names[k - 1]));
	return snap_strndup(line, strlen(line));
}

static int pick_trigger(struct snap_recflags *f, const char *cmd, const struct snap_machine *m,
			const char *exe, char **owned)
{
	const void *buf;
	size_t len, n;
	const char **names;
	char *choice;
	int err = snap_file_map(exe, &buf, &len);

	if (err < 0) {
		fprintf(stderr, "snaptrace %s: -trigger ?: cannot read %s: %s\n", cmd, exe,
			strerror(-err));
		return 1;
	}
	err = list_funcs(buf, len, &names, &n);
	if (err < 0 || !n) {
		fprintf(stderr, "snaptrace %s: -trigger ?: %s has no function symbols\n", cmd, exe);
		snap_file_unmap(buf, len);
		snap_free(names);
		return 1;
	}
	choice = m->has_fzf ? pick_fzf(names, n) : pick_numbered(names, n);
	snap_free(names);
	snap_file_unmap(buf, len);
	if (!choice) {
		fprintf(stderr, "snaptrace %s: no trigger chosen\n", cmd);
		return 1;
	}
	*owned = choice;
	f->trigger = choice;
	return 0;
}

/* -trigger line:?: a FILE:LINE:COL of the executable's line table. */
static int pick_line(struct snap_recflags *f, const char *cmd, const char *exe)
{
	struct snap_dwline *d;
	char **lines = NULL, *choice;
	const char *why;
	long n;
	int err = snap_dwline_open(exe, &d);

	if (err < 0) {
		fprintf(stderr, "snaptrace %s: -trigger line:?: %s: %s\n", cmd, exe,
			err == -SNAP_EFORMAT ? "no line information (build it with -g)"
					     : snap_strerror(err));
		return 1;
	}
	n = snap_dwline_list(d, &lines);
	snap_dwline_close(d);
	choice = n > 0 ? snap_pick("line> ", (const char *const *)lines, (size_t)n, &why) : NULL;
	for (long i = 0; i < n; i++)
		free(lines[i]);
	snap_free(lines);
	if (!choice) {
		fprintf(stderr, "snaptrace %s: no trigger line chosen%s%s\n", cmd,
			n > 0 && why[0] ? ": " : "", n > 0 ? why : "");
		return 1;
	}
	f->trigger_owned = snap_malloc(strlen(choice) + 6);
	if (!f->trigger_owned) {
		snap_free(choice);
		return 1;
	}
	snprintf(f->trigger_owned, strlen(choice) + 6, "line:%s", choice);
	snap_free(choice);
	f->trigger = f->trigger_owned;
	return 0;
}
static int check_output(const char *cmd, const char *output);

int snap_recflags_prepare(struct snap_recflags *f, const char *cmd, struct snap_machine *m,
			  const char *exe)
{
	char self[PATH_MAX];

	f->exe = exe;
	/* First: a refused -o is the only line printed, and nothing runs. */
	if (!f->print_cmds && check_output(cmd, f->output))
		return 1;

	if (f->verbose)
		snap_log_level = f->verbose > 1 ? SNAP_LOG_DEBUG : SNAP_LOG_INFO;
	if (f->include_kernel && f->kernel_only) {
		fprintf(stderr,
			"snaptrace %s: -trace-include-kernel and -trace-kernel-only are "
			"mutually exclusive\n",
			cmd);
		return 2;
	}
	f->rec.scope = f->include_kernel ? SNAP_SCOPE_BOTH
		       : f->kernel_only	 ? SNAP_SCOPE_KERNEL
					 : SNAP_SCOPE_USER;
	if (f->force_pt && f->rec.sampling) {
		fprintf(stderr, "snaptrace %s: -pt and -sampling are mutually exclusive\n", cmd);
		return 2;
	}
	f->rec.perf = snap_caps_perf_path();
	snap_caps_detect(m, f->rec.perf, snap_caps_self_dir(self, sizeof(self)));
	if (!m->perf_found && !f->print_cmds) {
		fprintf(stderr,
			"snaptrace %s: snaptrace needs perf (%s) in PATH; install it: "
			"sudo apt-get install linux-perf\n",
			cmd, f->rec.perf);
		return 1;
	}
	if (!m->perf_found) {
		/* Print with a modern perf's flags. */
		m->caps.perf_major = 6;
		m->caps.perf_minor = 1;
	}
	if (!f->rec.sampling && !m->caps.has_pt) {
		if (f->force_pt || f->rec.res.kind == SNAP_RES_CUSTOM) {
			fprintf(stderr,
				"snaptrace %s: Intel PT is not available on this machine "
				"(/sys/bus/event_source/devices/intel_pt is missing: no PT in this "
				"CPU, or a VM that hides it); run without %s to use stack "
				"sampling\n",
				cmd, f->force_pt ? "-pt" : "-timer-resolution Custom");
			return 1;
		}
		if (!f->print_cmds)
			fprintf(stderr,
				"snaptrace: no Intel PT on this machine, using stack sampling "
				"(-sampling)\n");
		f->rec.sampling = 1;
	}
	if (f->rec.sampling && f->rec.cg == SNAP_CG_AUTO) {
		char why[384];

		f->rec.cg = snap_cgpick(exe, f->attach_pid, m->caps.lbr, why, sizeof(why));
		fprintf(stderr, "snaptrace: -callgraph-mode %s: %s\n", snap_cg_name(f->rec.cg),
			why);
	}
	if (f->trigger && !strcmp(f->trigger, "line:?")) {
		if (!exe) {
			fprintf(stderr, "snaptrace %s: -trigger line:?: no executable to list\n",
				cmd);
			return 2;
		}
		return pick_line(f, cmd, exe);
	}
	if (f->trigger && (!strcmp(f->trigger, "?") || !strcmp(f->trigger, "symbol:?"))) {
		if (!exe) {
			fprintf(stderr, "snaptrace %s: -trigger ?: no executable to list\n", cmd);
			return 2;
		}
		return pick_trigger(f, cmd, m, exe, &f->trigger_owned);
	}
	return 0;
}

static void print_warnings(const struct snap_perfargs *pa, const struct snap_recflags *f)
{
	if (pa->warn & SNAP_PA_W_PSB_DOWNGRADE)
		snap_warn("this CPU cannot set the PSB period: using -timer-resolution Low "
			  "(about 1 us granularity)");
	if (pa->warn & SNAP_PA_W_SIZE_ROUNDED)
		snap_warn("-snapshot-size %s rounded to %llu pages (%llu KiB)", f->snapshot_size,
			  (unsigned long long)pa->pages, (unsigned long long)pa->pages * 4);
	if (pa->warn & SNAP_PA_W_SIZE_CAPPED)
		snap_warn("-snapshot-size %s is more than the sampling ring can be: using 1 GiB",
			  f->snapshot_size);
	if (pa->warn & SNAP_PA_W_KCORE_OLD)
		snap_warn("perf < 5.5 has no --kcore: kernel decoding may be less reliable");
	if (pa->warn & SNAP_PA_W_FREQ_HIGH)
		snap_warn("sampling at %llu Hz without a hardware PMU: every sample is a timer "
			  "interrupt; above ~10 kHz a VM can stall",
			  (unsigned long long)pa->freq);
	if (pa->dwarf_stack && pa->freq)
		snap_warn("dwarf call graphs copy %u KiB of stack per sample into a %llu %s ring: "
			  "room for ~%llu samples (~%.1f s on a CPU at %llu Hz)%s",
			  pa->dwarf_stack / 1024,
			  (unsigned long long)(pa->ring_bytes >>
					       (pa->ring_bytes >= (1u << 20) ? 20 : 10)),
			  pa->ring_bytes >= (1u << 20) ? "MiB" : "KiB",
			  (unsigned long long)pa->ring_samples,
			  (double)pa->ring_samples / (double)pa->freq, (unsigned long long)pa->freq,
			  pa->pages || f->snapshot_size
				  ? ""
				  : "; as root the ring and the copy are bigger");
	if (pa->warn & SNAP_PA_W_CG_DEFAULT_FP)
		snap_info("no LBR here: call graphs use frame pointers (-callgraph-mode dwarf for "
			  "code built without them)");
}

/* Builds the perf record argv into *pa (snap_perfargs_fini it in every
 * case) and prints its warnings. Returns 0, or the exit status (2 usage,
 * 1 otherwise) after printing why. */
static int build_args(struct snap_recflags *f, const char *cmd, const struct snap_machine *m,
		      struct snap_perfargs *pa)
{
	int err;

	f->rec.trigger = f->trigger != NULL;
	err = snap_perfargs_build(&f->rec, &m->caps, pa);
	if (err < 0) {
		fprintf(stderr, "snaptrace %s: %s\n", cmd,
			pa->err[0] ? pa->err : snap_strerror(err));
		return err == -SNAP_EUSAGE ? 2 : 1;
	}
	print_warnings(pa, f);
	return 0;
}

int snap_recflags_print(struct snap_recflags *f, const char *cmd, const struct snap_machine *m,
			const int *pids, size_t npids)
{
	struct snap_perfargs pa;
	char data[PATH_MAX + 16];
	char *j;
	int rc, stitch;

	snprintf(data, sizeof(data), "%s/perf.data", f->workdir ? f->workdir : "WORKDIR");
	f->rec.data = data;
	f->rec.pids = pids;
	f->rec.npids = npids;
	rc = build_args(f, cmd, m, &pa);
	f->rec.data = NULL;
	if (rc) {
		snap_perfargs_fini(&pa);
		return rc;
	}
	j = snap_perfargs_join(&pa);
	if (j)
		printf("%s\n", j);
	snap_free(j);
	stitch = pa.cg == SNAP_CG_LBR;
	snap_perfargs_fini(&pa);
	{
		/* and the decoding command the pipeline runs on the result */
		struct snap_perfsrc_opts so = {
			.perf = f->rec.perf,
			.data = data,
			.kind = f->rec.sampling ? SNAP_PERFDATA_SAMPLES : SNAP_PERFDATA_AUX,
			.plugin = snap_caps_plugin(m, f->no_dlfilter),
			.stitch_lbr = stitch,
		};
		const char *sargv[SNAP_PERFSRC_MAX_ARGS];
		int n = snap_perfsrc_argv(&so, sargv);

		for (int i = 0; i < n; i++)
			printf("%s%s", i ? " " : "", sargv[i]);
		if (n > 0)
			putchar('\n');
	}
	return 0;
}

/* Checks the flag combination before anything starts (same builder). */
static int precheck(struct snap_recflags *f, const char *cmd, const struct snap_machine *m)
{
	struct snap_perfargs pa;
	int rc = build_args(f, cmd, m, &pa);

	snap_perfargs_fini(&pa);
	return rc;
}

/* -multi-snapshot: every perf.data* file of the working directory is one snapshot;
 * they are decoded in time (name) order into one timeline. */
static int decode_all(struct snap_decode_opts *d, struct snap_session *s)
{
	char **names;
	char **paths = NULL;
	int n = snap_workdir_list_data(&s->wd, &names), err = -ENOMEM, k = 0;

	if (n < 0)
		return n;
	paths = snap_calloc((size_t)n, sizeof(*paths));
	for (; paths && k < n; k++)
		if (asprintf(&paths[k], "%s/%s", s->wd.path, names[k]) < 0)
			break;
	if (k == n) {
		snap_warn("decoding %d snapshots", n);
		d->inputs = (const char *const *)paths;
		d->ninputs = (size_t)n;
		err = snap_decode_run(d);
	}
	while (paths && k-- > 0)
		free(paths[k]);
	snap_free(paths);
	snap_workdir_free_list(names, n);
	return err;
}

/* A stop indicator's (start TSC, payload) arguments; magic-trace's is called
 * from OCaml with tagged integers (value << 1 | 1). */
static void stop_indicator_args(struct snap_hit *out, const struct snap_trigger_hit *h,
				const struct snap_session *s)
{
	int tagged = !strcmp(out->symbol, SNAP_MT_STOP_INDICATOR);
	uint64_t tsc;

	if (!h->has_regs || (!tagged && strcmp(out->symbol, SNAP_STOP_INDICATOR)))
		return;
	tsc = tagged ? (uint64_t)((int64_t)h->arg0 >> 1) : h->arg0;
	out->has_arg = 1;
	out->arg = tagged ? (int64_t)h->arg1 >> 1 : (int64_t)h->arg1;
	out->passed_time = snap_trigger_tsc_time(&s->trig, tsc);
}

/* Saves the hits in the kept working directory, for decode -working-directory. */
static void keep_hits(const char *dir, const struct snap_hit *hits, size_t n)
{
	struct snap_hitrec *r = snap_calloc(n + 1, sizeof(*r));
	char path[PATH_MAX];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, SNAP_HITS_FILE);
	fp = r ? fopen(path, "we") : NULL;
	if (fp) {
		for (size_t i = 0; i < n; i++) {
			r[i].time = hits[i].time;
			r[i].pid = hits[i].pid;
			r[i].tid = hits[i].tid;
			r[i].ip = hits[i].ip;
			r[i].has_arg = hits[i].has_arg;
			r[i].arg = hits[i].arg;
			r[i].passed_time = hits[i].passed_time;
			r[i].symbol = (char *)hits[i].symbol;
		}
		if (snap_hitsfile_write(fp, r, n) < 0 || fclose(fp) != 0)
			snap_warn("cannot write %s: the trigger hits will be missing from a later "
				  "decode -working-directory",
				  path);
	} else {
		snap_warn("cannot write %s: %s", path, strerror(errno));
	}
	snap_free(r);
}

static int decode(struct snap_recflags *f, struct snap_session *s, struct snap_decode_result *res)
{
	struct snap_decode_opts d = {0};
	struct snap_hit *hits = NULL;
	struct snap_procname *names = NULL;
	size_t nn = 0;
	int err;

	hits = snap_calloc(s->nhits + 1, sizeof(*hits));
	names = snap_calloc(s->npids + 1, sizeof(*names));
	if (!hits || !names) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->nhits; i++) {
		hits[i].time = s->hits[i].time;
		hits[i].pid = s->hits[i].pid;
		hits[i].tid = s->hits[i].tid;
		hits[i].ip = s->hits[i].ip;
		hits[i].symbol = s->trigger_name;
		stop_indicator_args(&hits[i], &s->hits[i], s);
	}
	if (f->workdir)
		keep_hits(f->workdir, hits, s->nhits);
	for (size_t i = 0; i < s->npids; i++) {
		if (!s->names[i])
			continue;
		names[nn].pid = s->pids[i];
		names[nn++].name = s->names[i];
	}
	d.input = s->data_path;
	d.output = f->output;
	d.scope = f->rec.scope;
	d.strict_scope = f->strict_scope;
	d.no_dlfilter = f->no_dlfilter;
	d.perf = f->rec.perf;
	d.hits = hits;
	d.nhits = s->nhits;
	d.names = names;
	d.nnames = nn;
	d.executable = f->exe;
	d.stitch_lbr = s->pa.cg == SNAP_CG_LBR;
	d.filter_start = f->filter_start;
	d.filter_stop = f->filter_stop;
	if (f->report)
		d.tap = snap_report_tap(f->output ? f->output : "trace.fxt.gz");
	d.quiet_empty = 1;
	d.result = res;
	if (s->ndata > 1) {
		err = decode_all(&d, s);
		goto out;
	}
	snap_warn("decoding perf.data");
	err = snap_decode_run(&d);
out:
	snap_free(hits);
	snap_free(names);
	return err;
}

/* Refuses, before anything runs, an output the trace could never be written
 * to: a directory, or a place whose directory is missing or not writable. */
static int check_output(const char *cmd, const char *output)
{
	const char *path = output ? output : "trace.fxt.gz";
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		fprintf(stderr,
			"snaptrace %s: -o %s is a directory; name a file in it, e.g. -o %s%s\n",
			cmd, path, path,
			path[strlen(path) - 1] == '/' ? "trace.fxt.gz" : "/trace.fxt.gz");
		return 1;
	}
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else {
		fprintf(stderr, "snaptrace %s: -o %s: path too long\n", cmd, path);
		return 1;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr,
			"snaptrace %s: cannot write the trace to %s: %s %s; create it or choose "
			"another -o\n",
			cmd, path, dir, errno == ENOENT ? "does not exist" : "is not a directory");
		return 1;
	}
	if (access(dir, W_OK | X_OK) < 0) {
		fprintf(stderr,
			"snaptrace %s: cannot write the trace to %s: no write access to %s (%s); "
			"choose another -o\n",
			cmd, path, !slash ? "the current directory" : dir, strerror(errno));
		return 1;
	}
	return 0;
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* One line on what the trace covers: the span kept against the run, the
 * samples, and the flag that keeps more; then a hint on untraced threads. */
static void say_coverage(const struct snap_recflags *f, const struct snap_session *s,
			 const struct snap_decode_result *r)
{
	uint64_t run_ns = (uint64_t)(s->recorded_ms > 0 ? s->recorded_ms : 0) * 1000000u;
	uint64_t span = r->last_time > r->first_time ? r->last_time - r->first_time : 0;
	char what[64];

	if (f->rec.sampling)
		snprintf(what, sizeof(what), "%llu sample%s", (unsigned long long)r->samples,
			 r->samples == 1 ? "" : "s");
	else
		snprintf(what, sizeof(what), "%llu events", (unsigned long long)r->events);
	if (f->rec.full_execution || s->ndata > 1 || !run_ns || span * 10 >= run_ns * 9 ||
	    (f->rec.sampling && s->pa.ring_samples && r->samples * 2 < s->pa.ring_samples)) {
		snap_warn("the trace covers %.3f s of the %.3f s recording (%s)", secs(span),
			  secs(run_ns), what);
	} else {
		uint64_t ring = s->pa.ring_bytes ? s->pa.ring_bytes : (4u << 20);
		uint64_t more = ring * 4 > (1ull << 30) ? (1ull << 30) : ring * 4;

		snap_warn("the trace covers the last %.3f s of the %.3f s recording (%s); "
			  "-snapshot-size %llu%s keeps more, -full-execution keeps all",
			  secs(span), secs(run_ns), what,
			  (unsigned long long)(more >> (more >= (1u << 20) ? 20 : 10)),
			  more >= (1u << 20) ? "M" : "K");
	}
}

/* Without -multi-thread: other threads or child processes ran untraced. */
static void say_untraced(const struct snap_recflags *f, const struct snap_session *s)
{
	if (!f->rec.multi_thread && (s->other_threads || s->children))
		snap_warn("%s%s%s ran untraced (only the main thread is recorded); -multi-thread "
			  "records them",
			  s->other_threads ? "other threads" : "",
			  s->other_threads && s->children ? " and " : "",
			  s->children ? "child processes" : "");
}

/* After a failed decode: keep the recording, say where and how to retry. */
static void keep_data(const char *cmd, struct snap_session *s)
{
	if (!s->data_path[0])
		return;
	s->wd.keep = 1;
	fprintf(stderr,
		"snaptrace %s: the recording is kept in %s; decode it with: snaptrace decode %s%s "
		"-o FILE\n",
		cmd, s->data_path, s->ndata > 1 ? "-working-directory " : "", s->data_path);
}

int snap_recflags_record(struct snap_recflags *f, const char *cmd, const struct snap_machine *m,
			 char *const *argv, const int *pids, size_t npids)
{
	struct snap_session_cfg cfg = {0};
	struct snap_session s;
	struct snap_decode_result res = {0};
	int err, rc = 1, status = 0, written = 0;

	err = precheck(f, cmd, m);
	if (err)
		return err;
	cfg.rec = f->rec;
	cfg.caps = &m->caps;
	cfg.cmd = argv;
	cfg.pids = pids;
	cfg.npids = npids;
	cfg.trigger = f->trigger;
	cfg.workdir = f->workdir;
	err = snap_session_start(&s, &cfg);
	if (err < 0) {
		/* The program never ran: close kills it, there is no status. */
		fprintf(stderr, "snaptrace %s: %s\n", cmd, s.why);
		snap_session_close(&s);
		return 1;
	}
	if (!argv)
		fprintf(stderr,
			"snaptrace: attached to %zu process%s%s; press Ctrl-C to stop "
			"recording\n",
			npids, npids > 1 ? "es" : "",
			f->trigger ? " (or wait for the trigger)" : "");
	err = snap_session_loop(&s);
	if (err < 0) {
		fprintf(stderr, "snaptrace %s: %s\n", cmd, s.why);
		snap_session_finish(&s);
		goto out;
	}
	err = snap_session_finish(&s);
	if (err < 0) {
		fprintf(stderr, "snaptrace %s: %s\n", cmd, s.why);
		goto out;
	}
	err = decode(f, &s, &res);
	if (err == -ENODATA) {
		/* Nothing was sampled: not an error of snaptrace's; run passes
		 * the program's status on. */
		if (s.cfg.rec.sampling && s.pa.freq && argv)
			fprintf(stderr,
				"snaptrace %s: no trace written: %s ended before its first sample "
				"(at %llu Hz, one per %llu us on a CPU); trace a longer run or "
				"raise -timer-resolution\n",
				cmd, argv[0], (unsigned long long)s.pa.freq,
				(unsigned long long)(1000000u / s.pa.freq));
		else if (s.cfg.rec.sampling && s.pa.freq)
			fprintf(stderr,
				"snaptrace %s: no trace written: no sample was taken (the traced "
				"thread%s did not run on a CPU while recorded)\n",
				cmd, npids > 1 ? "s" : "");
		else
			fprintf(stderr, "snaptrace %s: no trace written: perf recorded nothing\n",
				cmd);
		say_untraced(f, &s);
		rc = 0;
	} else if (err == 0) {
		rc = 0;
		written = 1;
		say_coverage(f, &s, &res);
		say_untraced(f, &s);
		if (f->workdir)
			snap_info("perf data kept in %s", s.data_path);
	} else if (err != -EINTR) {
		keep_data(cmd, &s);
	}
out:
	status = snap_session_wait_child(&s);
	if (argv && s.child) {
		if (status >= 128)
			snap_warn("%s was killed by signal %d", argv[0], status - 128);
		else if (status)
			snap_info("%s exited with status %d", argv[0], status);
		if (rc == 0)
			rc = status;
	}
	snap_session_close(&s);
	if (written && f->serve) {
		int src = snap_serve(cmd, f->output ? f->output : "trace.fxt.gz", f->serve_port);

		rc = rc ? rc : src;
	}
	return rc;
}
