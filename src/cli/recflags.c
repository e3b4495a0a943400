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

#include "cli/serve.h"
#include "cli/trigpick.h"
#include "record/cgpick.h"
#include "source/perfsrc.h"
#include "stack/filter.h"
#include "util/alloc.h"
#include "util/err.h"
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
	F_PER_CALL_ARGS,
	F_COUNT,
};

/* The order matters: snap_recflags_apply switches on the index (enum above). */
const struct snap_opt snap_recflags_opts[] = {
	{"trigger", NULL, "SYMBOL",
	 "snapshot when a thread calls SYMBOL (also symbol:NAME, addr:HEX, FILE:LINE[:COL]; "
	 "'.' = the stop indicator; '?', symbol:?, line:? = pick)"},
	{"multi-snapshot", NULL, NULL,
	 "snapshot at every trigger hit, not just the first (every hit is marked; one during a "
	 "snapshot gets none of its own)"},
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
	{"per-call-args", NULL, NULL,
	 "address, symbol and source position on every slice, as magic-trace writes "
	 "(default: once per function and thread)"},
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
	case F_PER_CALL_ARGS:
		f->per_call_args = 1;
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

/* Refuses, before anything runs, an output the trace could never be written
 * to: a directory, or a place whose directory is missing or not writable. */
static int check_output(const char *cmd, const char *output)
{
	const char *path = output ? output : "trace.fxt.gz";
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;

	if (!strcmp(path, "-")) { /* (decode -o - is stdout; here the program's own output is) */
		fprintf(stderr,
			"snaptrace %s: -o -: %s writes the trace to a file; name one (decode -o - "
			"writes stdout)\n",
			cmd, cmd);
		return 1;
	}
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

int snap_recflags_prepare(struct snap_recflags *f, const char *cmd, struct snap_machine *m,
			  const char *exe)
{
	char self[PATH_MAX];

	f->exe = exe;
	/* First: a refused -o is the only line printed, and nothing runs. */
	if (!f->print_cmds && check_output(cmd, f->output))
		return 1;
	/* -serve without its library fails now, not after the recording */
	if (f->serve && !f->print_cmds && snap_serve_load(cmd) < 0)
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
		return snap_trigpick_line(cmd, exe, &f->trigger_owned, &f->trigger);
	}
	if (f->trigger && (!strcmp(f->trigger, "?") || !strcmp(f->trigger, "symbol:?"))) {
		if (!exe) {
			fprintf(stderr, "snaptrace %s: -trigger ?: no executable to list\n", cmd);
			return 2;
		}
		return snap_trigpick_symbol(cmd, m->has_fzf, exe, &f->trigger_owned, &f->trigger);
	}
	return 0;
}

/* What keeps more dwarf samples: without the right to lock a big ring, that
 * right; as root, -snapshot-size (-full-execution drains the ring). */
static const char *dwarf_hint(const struct snap_perfargs *pa, const struct snap_recflags *f,
			      const struct snap_perfcaps *c)
{
	if (!c->big_ring)
		return "; as root (or with CAP_IPC_LOCK) the ring is bigger";
	if (f->snapshot_size || f->rec.full_execution)
		return "";
	return pa->ring_bytes >= (64u << 20) ? "; -snapshot-size 256M keeps more"
					     : "; -snapshot-size keeps more";
}

static void print_warnings(const struct snap_perfargs *pa, const struct snap_recflags *f,
			   const struct snap_perfcaps *c)
{
	char ring[32]; /* "64 MiB": the sampling ring, for the dwarf lines */

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
	snprintf(ring, sizeof(ring), "%llu %s",
		 (unsigned long long)(pa->ring_bytes >> (pa->ring_bytes >= (1u << 20) ? 20 : 10)),
		 pa->ring_bytes >= (1u << 20) ? "MiB" : "KiB");
	if (pa->dwarf_stack && pa->freq && f->rec.full_execution)
		/* no ring limit: perf writes the ring out as it fills */
		snap_warn("dwarf call graphs copy %u KiB of stack per sample (%.0f MiB a second on "
			  "a CPU at %llu Hz): -full-execution writes them all out, through a %s "
			  "ring%s",
			  pa->dwarf_stack / 1024,
			  (double)pa->dwarf_stack * (double)pa->freq / (double)(1u << 20),
			  (unsigned long long)pa->freq, ring, dwarf_hint(pa, f, c));
	else if (pa->dwarf_stack && pa->freq)
		snap_warn("dwarf call graphs copy %u KiB of stack per sample into a %s ring: "
			  "room for ~%llu samples (~%.1f s on a CPU at %llu Hz)%s",
			  pa->dwarf_stack / 1024, ring, (unsigned long long)pa->ring_samples,
			  (double)pa->ring_samples / (double)pa->freq, (unsigned long long)pa->freq,
			  dwarf_hint(pa, f, c));
	if (pa->warn & SNAP_PA_W_CG_DEFAULT_FP)
		snap_info("no LBR here: call graphs use frame pointers (-callgraph-mode dwarf for "
			  "code built without them)");
}

int snap_recflags_build(struct snap_recflags *f, const char *cmd, const struct snap_machine *m,
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
	print_warnings(pa, f, &m->caps);
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
	rc = snap_recflags_build(f, cmd, m, &pa);
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
