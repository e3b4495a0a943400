// SPDX-License-Identifier: GPL-2.0
/*
 * The decode pipeline: a source of events (perf script run on a perf.data, or
 * perf script text from a file or stdin) -> stack/decoder -> write/fxt -> a
 * file sink that writes a temporary file and renames it into place only when
 * everything succeeded.
 */
#include "cli/pipeline.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/exeinfo.h"
#include "cli/perfmaps.h"
#include "cli/srcinfo.h"
#include "parse/perfdata.h"
#include "parse/perfscript.h"
#include "ptdec/ptdec.h"
#include "record/caps.h"
#include "source/perfsrc.h"
#include "report/rtl.h"
#include "stack/decoder.h"
#include "stack/filter.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/progress.h"
#include "util/strtab.h"
#include "write/fxt.h"
#include "write/sink.h"

#define TEXT_BUF	      (256 * 1024)
/* Perfetto keeps 512 levels of nesting on a track and silently drops deeper
 * slices: drop them here instead, and say so. */
#define SNAP_DECODE_MAX_DEPTH SNAP_MAX_NESTING

static volatile sig_atomic_t decode_interrupted;

static void on_signal(int sig)
{
	if (decode_interrupted)
		signal(sig, SIG_DFL);
	decode_interrupted = sig;
	snap_interrupted = sig;
}

/* Where events come from. */
struct source {
	const char *name;
	int is_perf;			/* perf script on a perf.data, else text read from fd */
	int timeless;			/* no times in the data: number the events instead */
	int dwarf;			/* perf.data with dwarf call graphs */
	struct snap_perfdata_lost lost; /* what perf lost while recording it */
	uint64_t seq;			/* events returned */
	int fd, eof;
	char *buf;
	struct snap_perfscript ps;
	struct snap_perfsrc perf;
	struct snap_ptdec *ipt; /* the in-process PT decoder, when it took the file */
};

/* The same perf as run/attach use: -perf, else $SNAPTRACE_PERF, $MAGIC_TRACE_PERF_PATH. */
static const char *perf_binary(const struct snap_decode_opts *o)
{
	return o->perf ? o->perf : snap_caps_perf_path();
}

/* The dlfilter plugin to decode with, or NULL for the text path; says which
 * and why at info level (-v). pc: perf's version. path (len bytes) receives
 * the plugin's path. */
static const char *pick_plugin(const struct snap_decode_opts *o, const struct snap_perfcaps *pc,
			       char *path, size_t len)
{
	struct snap_plugin_env env;
	char exe[PATH_MAX], why[PATH_MAX + 128];
	int n;

	snap_caps_plugin_env(&env, snap_caps_self_dir(exe, sizeof(exe)));
	env.no_dlfilter = o->no_dlfilter;
	if (!snap_caps_plugin_off(&env)) {
		env.perf_major = pc->perf_major;
		env.perf_minor = pc->perf_minor;
	}
	n = snap_caps_find_plugin(&env, path, len, why, sizeof(why));
	snap_info("%s", why);
	return n ? path : NULL;
}

int snap_decoder_kind_parse(const char *s, enum snap_decoder_kind *k)
{
	if (!strcmp(s, "perf"))
		*k = SNAP_DECODER_PERF;
	else if (!strcmp(s, "ipt") || !strcmp(s, "libipt"))
		*k = SNAP_DECODER_IPT;
	else if (!strcmp(s, "auto"))
		*k = SNAP_DECODER_AUTO;
	else
		return -1;
	return 0;
}

/* The in-process PT decoder for an Intel PT perf.data, unless perf decodes it
 * (-decoder perf, or what ptdec does not support: it says why). Returns 0 when
 * it took the file, else <0 and the caller runs perf. */
static int source_open_ipt(struct source *src, const struct snap_decode_opts *o,
			   struct snap_strtab *st)
{
	enum snap_decoder_kind kind = o->decoder;
	const char *env = getenv("SNAPTRACE_DECODER");
	struct snap_ptdec_opts po;
	char why[256];
	int err;

	if (kind == SNAP_DECODER_DEFAULT &&
	    (!env || !*env || snap_decoder_kind_parse(env, &kind) < 0))
		kind = SNAP_DECODER_AUTO;
	if (kind == SNAP_DECODER_PERF)
		return -1;
	memset(&po, 0, sizeof(po));
	po.jobs = o->jobs;
	po.vmlinux = o->vmlinux;
	po.kallsyms = o->kallsyms;
	if (getenv("SNAPTRACE_PTDEC_PIECE"))
		po.piece_bytes = (size_t)strtoull(getenv("SNAPTRACE_PTDEC_PIECE"), NULL, 10);
	why[0] = 0;
	err = snap_ptdec_open(&src->ipt, src->name, &po, st, why, sizeof(why));
	if (err < 0) {
		snap_log(kind == SNAP_DECODER_IPT ? SNAP_LOG_WARN : SNAP_LOG_INFO,
			 "%s: decoding with perf: the in-process decoder does not take it: %s",
			 src->name, why[0] ? why : snap_strerror(err));
		return err;
	}
	src->timeless = 0; /* ptdec numbers timeless events itself */
	snap_info("%s: decoding Intel PT in-process (libipt)", src->name);
	return 0;
}

static int source_open_perf(struct source *src, const struct snap_decode_opts *o,
			    struct snap_strtab *st)
{
	char plugin[PATH_MAX];
	struct snap_perfdata_info info;
	struct snap_perfsrc_opts po;
	struct snap_perfcaps pc = {0};
	int err = snap_perfdata_probe(snap_fd_pread, &src->fd, &info);
	struct stat sb;
	char why[256];

	if (err >= 0 && fstat(src->fd, &sb) == 0 &&
	    (err = snap_perfdata_check_size(&info, (uint64_t)sb.st_size, why, sizeof(why))) < 0) {
		snap_log(SNAP_LOG_QUIET, "%s: %s; not decoded", src->name, why);
		close(src->fd);
		src->fd = -1;
		return err;
	}
	/* (a damaged data section leaves what was counted before the damage) */
	if (err >= 0)
		(void)snap_perfdata_lost(snap_fd_pread, &src->fd, &info, &src->lost);
	close(src->fd);
	src->fd = -1;
	src->dwarf = err >= 0 && info.dwarf;
	if (err < 0) {
		snap_log(SNAP_LOG_QUIET, "%s: damaged perf.data header (%s)", src->name,
			 snap_strerror(err));
		return err;
	}
	snap_info("%s: perf.data with %s", src->name,
		  info.kind == SNAP_PERFDATA_AUX ? "an AUX area trace (Intel PT): decoding branches"
						 : "samples: decoding stack samples");
	memset(&po, 0, sizeof(po));
	po.perf = perf_binary(o);
	po.data = src->name;
	po.kind = info.kind;
	po.timeless = info.timeless;
	po.vmlinux = o->vmlinux;
	po.kallsyms = o->kallsyms;
	po.stitch_lbr = o->stitch_lbr;
	if (info.timeless) {
		snap_warn(
			"%s: this Intel PT trace has no timing packets (recorded without tsc): the "
			"timeline counts branches instead, 1 ns per branch",
			src->name);
		src->timeless = 1;
	}
	if (info.kind == SNAP_PERFDATA_AUX && source_open_ipt(src, o, st) == 0)
		return 0;
	/* perf runs: one perf --version for both questions. Its inlined frames
	 * are not used, and resolving them took minutes on a large C++ program
	 * (docs/compat.md, "perf script --no-inline"). */
	snap_caps_perf_version(po.perf, &pc.perf_major, &pc.perf_minor);
	po.no_inline = snap_caps_has_no_inline(&pc);
	po.plugin = info.timeless ? NULL : pick_plugin(o, &pc, plugin, sizeof(plugin));
	po.keepjumps = getenv("SNAPTRACE_DLFILTER_KEEPJUMPS") != NULL;
	if (o->print_perf_commands) {
		const char *argv[SNAP_PERFSRC_MAX_ARGS];
		int n = snap_perfsrc_argv(&po, argv);

		for (int i = 0; i < n; i++)
			fprintf(stderr, "%s%s", i ? " " : "", argv[i]);
		fputc('\n', stderr);
	}
	err = snap_perfsrc_open(&src->perf, &po, st);
	if (err < 0) {
		snap_log(SNAP_LOG_QUIET, "cannot run %s: %s", po.perf, snap_strerror(err));
		return err;
	}
	src->is_perf = 1;
	return 0;
}

/* Opens input (NULL: ./perf.data). */
static int source_open(struct source *src, const struct snap_decode_opts *o, const char *input,
		       struct snap_strtab *st)
{
	char magic[8];
	int err;
	struct stat sb;
	size_t got = 0;
	int piped = 0;

	memset(src, 0, sizeof(*src));
	src->fd = -1;
	src->name = input ? input : "perf.data";
	if (!strcmp(src->name, "-")) {
		src->name = "stdin";
		src->fd = STDIN_FILENO;
		piped = 1;
		if (o->nstdin_head <= sizeof(magic) && o->stdin_head) {
			memcpy(magic, o->stdin_head, o->nstdin_head);
			got = o->nstdin_head;
		}
	} else {
		char data[PATH_MAX];

		/* non-blocking: a FIFO planted under the name cannot hang the open */
		src->fd = open(src->name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		/* perf record --kcore writes a directory: DIR/data (perf script reads DIR) */
		if (src->fd >= 0 && fstat(src->fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			close(src->fd);
			src->fd = -1;
			if (snprintf(data, sizeof(data), "%s/data", src->name) >=
				    (int)sizeof(data) ||
			    lstat(data, &sb) < 0 || !S_ISREG(sb.st_mode)) {
				snap_log(
					SNAP_LOG_QUIET,
					"cannot read %s: is a directory (not a perf.data file, nor "
					"a perf record --kcore directory with a data file)",
					src->name);
				return -EISDIR;
			}
			src->fd = open(data, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		}
		if (src->fd < 0) {
			err = -errno;
			snap_log(SNAP_LOG_QUIET, "cannot read %s: %s%s", src->name, strerror(errno),
				 input ? ""
				       : " (record one with 'snaptrace run', or name the input)");
			return err;
		}
		if (fstat(src->fd, &sb) == 0 && !S_ISREG(sb.st_mode)) {
			/* a FIFO or a pipe (<(cat ...)): read as a stream, blocking */
			piped = 1;
			fcntl(src->fd, F_SETFL, fcntl(src->fd, F_GETFL) & ~O_NONBLOCK);
		} else if (pread(src->fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
			   snap_perfdata_is_magic(magic, sizeof(magic))) {
			return source_open_perf(src, o, st);
		}
	}
	/* perf.data through a pipe: perf script needs a file it can seek */
	while (piped && got < sizeof(magic)) {
		ssize_t n = read(src->fd, magic + got, sizeof(magic) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (piped && snap_perfdata_is_magic(magic, got)) {
		if (src->fd == STDIN_FILENO)
			snap_log(SNAP_LOG_QUIET,
				 "stdin holds a perf.data file: give its name instead "
				 "(perf script needs a file, not a pipe)");
		else
			snap_log(SNAP_LOG_QUIET,
				 "%s is a pipe holding a perf.data file: give the file's name "
				 "instead (perf script needs a file, not a pipe)",
				 src->name);
		if (src->fd > STDIN_FILENO)
			close(src->fd);
		src->fd = -1;
		return -SNAP_EFORMAT;
	}
	src->buf = snap_malloc(TEXT_BUF);
	err = src->buf ? snap_perfscript_init(&src->ps, st) : -ENOMEM;
	if (err >= 0 && got)
		err = snap_perfscript_feed(&src->ps, magic, got);
	if (err < 0) {
		snap_perfscript_fini(&src->ps);
		snap_free(src->buf);
		if (src->fd > STDIN_FILENO)
			close(src->fd);
		return err;
	}
	return 0;
}

static int source_next(struct source *src, struct snap_event *ev)
{
	int r;

	if (src->ipt)
		return snap_ptdec_next(src->ipt, ev);
	if (!src->is_perf)
		return snap_perfsrc_pull(&src->ps, src->fd, src->buf, TEXT_BUF, &src->eof, ev);
	r = snap_perfsrc_next(&src->perf, ev);
	if (r > 0 && src->timeless) {
		ev->time = ++src->seq;
		ev->has_time = 1;
	}
	return r;
}

static const struct snap_perfscript_stats *source_stats(const struct source *src)
{
	return src->is_perf ? snap_perfsrc_stats(&src->perf) : snap_perfscript_stats(&src->ps);
}

/* The CPU time of the calling thread. The thread that reads the events also
 * builds the stacks and writes the trace: with idle cores, its CPU time is the
 * wall time of an in-process decode (make bench prints it). */
static double thread_cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

/* Returns 0, or -SNAP_EPERF if perf failed (already reported). */
static int source_close(struct source *src)
{
	int err = 0;

	if (src->ipt) {
		struct snap_ptdec_stats s;

		snap_ptdec_stats(src->ipt, &s);
		if (s.missing_images)
			snap_warn("%s: the code of %llu mapping%s could not be read (first: %s): "
				  "branches there are not decoded",
				  src->name, (unsigned long long)s.missing_images,
				  s.missing_images == 1 ? "" : "s", s.first_missing);
		snap_info("ptdec: %llu buffers, %llu pieces (%llu by the fast walk), %llu bytes, "
			  "%llu instructions, %llu branches, %llu errors, %d threads; the reading "
			  "thread used %.2f s CPU",
			  (unsigned long long)s.buffers, (unsigned long long)s.pieces,
			  (unsigned long long)s.walked, (unsigned long long)s.bytes,
			  (unsigned long long)s.insns, (unsigned long long)s.branches,
			  (unsigned long long)s.errors, s.jobs, thread_cpu_seconds());
		snap_ptdec_close(src->ipt);
		src->ipt = NULL;
	} else if (src->is_perf) {
		err = snap_perfsrc_close(&src->perf);
	} else {
		snap_perfscript_fini(&src->ps);
		snap_free(src->buf);
		if (src->fd > STDIN_FILENO)
			close(src->fd);
	}
	memset(src, 0, sizeof(*src));
	return err;
}

static void report_unknown(const struct source *src)
{
	const struct snap_perfscript_stats *ps = source_stats(src);

	if (ps->unknown_lines)
		snap_warn("%s: skipped %llu line%s not understood (first, line %llu: \"%s\")",
			  src->name, (unsigned long long)ps->unknown_lines,
			  ps->unknown_lines == 1 ? "" : "s",
			  (unsigned long long)ps->first_unknown_line, ps->first_unknown);
	if (ps->dropped_frames)
		snap_warn(
			"%s: dropped %llu call-chain frame%s beyond %u per sample (the outermost)",
			src->name, (unsigned long long)ps->dropped_frames,
			ps->dropped_frames == 1 ? "" : "s", SNAP_PERFSCRIPT_MAX_FRAMES);
}

/* What a trace was made from, for the "wrote" line: "287 samples, 1 thread"
 * (sampled: the events fed are samples and switch records) or "N perf
 * events" (PT: branches and the rest; not the FXT events written). */
static const char *made_from(const struct snap_decoder_stats *s, char *buf, size_t n)
{
	uint64_t k = s->samples ? s->samples : s->events;

	snprintf(buf, n, "from %llu %s%s, %llu thread%s", (unsigned long long)k,
		 s->samples ? "sample" : "perf event", k == 1 ? "" : "s",
		 (unsigned long long)s->threads, s->threads == 1 ? "" : "s");
	return buf;
}

/* What perf lost while recording (its PERF_RECORD_LOST and LOST_SAMPLES
 * records), in our words; run/attach add the flag that loses less. */
static void report_lost(const struct snap_decode_result *r)
{
	uint64_t all = r->perf_samples + r->lost_samples;

	if (r->lost_samples)
		snap_warn("perf lost %llu of %llu samples (%llu%%) while recording: its ring "
			  "filled faster than it was written out; the trace has gaps there",
			  (unsigned long long)r->lost_samples, (unsigned long long)all,
			  (unsigned long long)(r->lost_samples * 100 / all));
	else if (r->lost_records)
		snap_warn("perf lost %llu records (samples, switches) in %llu chunk%s while "
			  "recording: its ring filled faster than it was written out; the trace "
			  "has gaps there",
			  (unsigned long long)r->lost_records, (unsigned long long)r->lost_chunks,
			  r->lost_chunks == 1 ? "" : "s");
}

static void report_stats(const struct snap_decoder_stats *s, enum snap_scope scope,
			 const char *output, const char *who)
{
	if (s->violations)
		snap_warn(
			"dropped %llu event%s outside the trace scope (%s), first: %s; decode with "
			"-trace-include-kernel to keep them, or -strict-scope to refuse such input",
			(unsigned long long)s->violations, s->violations == 1 ? "" : "s",
			snap_scope_name(scope), s->first_violation);
	if (s->depth_capped)
		snap_warn("dropped %llu call%s nested deeper than %d frames (the most Perfetto "
			  "shows)",
			  (unsigned long long)s->depth_capped, s->depth_capped == 1 ? "" : "s",
			  SNAP_DECODE_MAX_DEPTH);
	if (s->trap_mismatch)
		snap_warn("OCaml try-block depth mismatch %llu time%s: did PT drop data?",
			  (unsigned long long)s->trap_mismatch, s->trap_mismatch == 1 ? "" : "s");
	if (s->inferred_capped)
		snap_warn("dropped %llu return%s without a call ([unknown] frames) nested deeper "
			  "than %d frames (the most Perfetto shows)",
			  (unsigned long long)s->inferred_capped,
			  s->inferred_capped == 1 ? "" : "s", SNAP_DECODE_MAX_DEPTH);
	if (s->time_backwards)
		snap_warn("%llu event time%s went backwards (damaged or merged input): clamped to "
			  "the thread's latest time",
			  (unsigned long long)s->time_backwards, s->time_backwards == 1 ? "" : "s");
	if (s->decode_errors)
		snap_warn("%s reported %llu decode error%s (gaps in the trace, marked "
			  "[decode error: ...] in the timeline)",
			  who, (unsigned long long)s->decode_errors,
			  s->decode_errors == 1 ? "" : "s");
	snap_info("stats: %llu events, %llu threads, %llu samples, %llu unmatched returns, "
		  "%llu times clamped, %llu odd branch kinds, %llu transaction events dropped",
		  (unsigned long long)s->events, (unsigned long long)s->threads,
		  (unsigned long long)s->samples, (unsigned long long)s->unmatched_returns,
		  (unsigned long long)s->time_backwards, (unsigned long long)s->unexpected,
		  (unsigned long long)s->tx_dropped);
	{
		char line[512];

		if (snap_decoder_chain_line(s, line, sizeof(line)))
			snap_info("%s", line);
		if (snap_decoder_switch_line(s, line, sizeof(line)))
			snap_info("%s", line);
		if (snap_decoder_gap_line(s, line, sizeof(line)))
			snap_warn("%s", line);
		if (snap_decoder_quality(s, line, sizeof(line)))
			snap_warn("%s", line);
	}
	if (output) {
		char what[96];

		if (s->filtered_out)
			snap_warn("wrote %s (%llu of %llu events inside -filter's regions, %s); "
				  "open it at https://ui.perfetto.dev",
				  output, (unsigned long long)(s->events - s->filtered_out),
				  (unsigned long long)s->events, made_from(s, what, sizeof(what)));
		else
			snap_warn("wrote %s (%s); open it at https://ui.perfetto.dev", output,
				  made_from(s, what, sizeof(what)));
	}
}

/* An environment switch: set, not empty, not "0". */
static int env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

static int decoder_setup(struct snap_decoder *dec, struct snap_timeline *tl, struct snap_strtab *st,
			 const struct snap_decode_opts *o, const struct snap_exeinfo *exe,
			 struct snap_filter *filter, struct snap_srcinfo *src, const char *who)
{
	struct snap_decoder_opts dopts;
	struct snap_decoder_hit *hits = NULL;
	struct snap_decoder_name *names = NULL;
	int err = -ENOMEM;

	memset(&dopts, 0, sizeof(dopts));
	dopts.scope = o->scope;
	dopts.strict_scope = o->strict_scope;
	dopts.max_depth = SNAP_DECODE_MAX_DEPTH;
	dopts.no_tx =
		env_on("SNAPTRACE_SKIP_TX_HANDLING") || env_on("MAGIC_TRACE_SKIP_TX_HANDLING");
	dopts.debug_names = env_on("SNAPTRACE_DEBUG") || env_on("MAGIC_TRACE_DEBUG");
	dopts.ocaml_eh = exe->have_eh ? &exe->eh : NULL;
	dopts.filter = o->filter_start ? filter : NULL;
	/* file/line/col args unless SNAPTRACE_NO_SOURCE_LINES is set */
	dopts.srcloc = env_on("SNAPTRACE_NO_SOURCE_LINES") ? NULL : &src->iface;
	dopts.error_source = who;
	if (o->nhits && !(hits = snap_calloc(o->nhits, sizeof(*hits))))
		goto out;
	if (o->nnames && !(names = snap_calloc(o->nnames, sizeof(*names))))
		goto out;
	for (size_t i = 0; i < o->nhits; i++) {
		int64_t id = snap_strtab_intern_cstr(st, o->hits[i].symbol);

		if (id < 0)
			goto out;
		hits[i].time = o->hits[i].time;
		hits[i].pid = o->hits[i].pid;
		hits[i].tid = o->hits[i].tid;
		hits[i].ip = o->hits[i].ip;
		hits[i].sym = (uint32_t)id;
		hits[i].has_arg = o->hits[i].has_arg;
		hits[i].arg = o->hits[i].arg;
		hits[i].passed_time = o->hits[i].passed_time;
	}
	for (size_t i = 0; i < o->nnames; i++) {
		names[i].pid = o->names[i].pid;
		names[i].name = o->names[i].name;
	}
	dopts.hits = hits;
	dopts.nhits = o->nhits;
	dopts.names = names;
	dopts.nnames = o->nnames;
	err = snap_decoder_init(dec, tl, st, &dopts);
out:
	snap_free(hits);
	snap_free(names);
	return err;
}

/* The event loop. Returns 0 or a negative error, already reported. */
static int decode_loop(struct source *src, struct snap_decoder *dec, enum snap_scope scope,
		       struct snap_perfmaps *maps, struct snap_decode_result *res,
		       const struct snap_sink *sink, const char *output)
{
	struct snap_event ev;
	struct snap_progress prog;
	uint64_t nev = 0;
	char desc[256];
	int r;

	/* A progress line on a terminal for decodes longer than a second. */
	snap_progress_init(&prog, STDERR_FILENO,
			   isatty(STDERR_FILENO) && snap_log_level >= SNAP_LOG_WARN,
			   snap_progress_now());
	if (src->is_perf) /* redrawn while perf script prints nothing */
		snap_perfsrc_set_progress(&src->perf, &prog);
	while ((r = source_next(src, &ev)) > 0) {
		if (decode_interrupted)
			break;
		snap_progress_tick(&prog, ++nev);
		if (maps->n && (r = snap_perfmaps_apply(maps, &ev)) < 0)
			break;
		if (ev.kind == SNAP_EV_SAMPLE)
			res->samples++;
		else if (ev.kind == SNAP_EV_BRANCH)
			res->branches++;
		/* the span of the samples (switch records cover the whole run), or
		 * of everything in a PT trace */
		if (ev.has_time && (ev.kind == SNAP_EV_SAMPLE || ev.kind == SNAP_EV_BRANCH)) {
			if (!res->first_time || ev.time < res->first_time)
				res->first_time = ev.time;
			if (ev.time > res->last_time)
				res->last_time = ev.time;
		}
		if (res->cover && snap_thcover_feed(res->cover, &ev, dec->st) < 0)
			res->cover = NULL; /* out of memory: no per-thread coverage */
		r = snap_decoder_feed(dec, &ev);
		if (r < 0)
			snap_progress_done(&prog);
		if (r == -SNAP_ESCOPE) {
			snap_log(SNAP_LOG_QUIET,
				 "%s: event outside the trace scope (%s) with -strict-scope: %s; "
				 "nothing written (decode with -trace-include-kernel to keep it)",
				 src->name, snap_scope_name(scope),
				 snap_decoder_desc(dec, &ev, desc, sizeof(desc)));
			return r;
		}
		if (r < 0 && snap_sink_error(sink)) { /* ENOSPC, EFBIG, EIO: the output's */
			snap_log(SNAP_LOG_QUIET, "cannot write %s: %s", output,
				 snap_strerror(snap_sink_error(sink)));
			return r;
		}
		if (r < 0) {
			snap_log(SNAP_LOG_QUIET, "decoding %s failed: %s", src->name,
				 snap_strerror(r));
			return r;
		}
	}
	snap_progress_done(&prog);
	if (decode_interrupted) {
		snap_log(SNAP_LOG_QUIET, "interrupted: nothing written");
		return -EINTR;
	}
	if (r < 0)
		snap_log(SNAP_LOG_QUIET, "reading %s failed: %s", src->name, snap_strerror(r));
	return r;
}

/* -filter pass 1: reads every input once and keeps the START -> STOP pairs.
 * Returns 0 or a negative error (reported). */
static int filter_scan(const struct snap_decode_opts *o, struct snap_strtab *st,
		       struct snap_filter *f, struct snap_perfmaps *maps)
{
	size_t ninputs = o->ninputs ? o->ninputs : 1;
	uint32_t start, stop;
	int err;

	if ((err = snap_strtab_intern_id(st, o->filter_start, &start)) < 0 ||
	    (err = snap_strtab_intern_id(st, o->filter_stop, &stop)) < 0)
		return err;
	snap_filter_init(f, start, stop);
	for (size_t i = 0; i < ninputs; i++) {
		const char *in = o->ninputs ? o->inputs[i] : o->input;
		struct source src;
		struct snap_event ev;
		int r, serr;

		if (in && !strcmp(in, "-")) {
			snap_log(SNAP_LOG_QUIET, "-filter reads the input twice: give a file, not "
						 "stdin");
			return -EINVAL;
		}
		if ((err = source_open(&src, o, in, st)) < 0)
			return err;
		while ((r = source_next(&src, &ev)) > 0 && !decode_interrupted)
			if ((maps->n && (r = snap_perfmaps_apply(maps, &ev)) < 0) ||
			    (r = snap_filter_scan(f, &ev)) < 0)
				break;
		serr = source_close(&src);
		if (decode_interrupted) {
			snap_log(SNAP_LOG_QUIET, "interrupted: nothing written");
			return -EINTR;
		}
		if (r < 0 || serr < 0) {
			snap_log(SNAP_LOG_QUIET, "reading %s failed: %s",
				 src.name ? src.name : "input", snap_strerror(r < 0 ? r : serr));
			return r < 0 ? r : serr;
		}
	}
	if (!snap_filter_pair(f))
		snap_warn("-filter: no call to %s followed by a call to %s: the trace will be "
			  "empty (check the names with a decode without -filter)",
			  o->filter_start, o->filter_stop);
	return 0;
}

int snap_decode_run(const struct snap_decode_opts *o)
{
	const char *output = o->output ? o->output : "trace.fxt.gz";
	struct snap_strtab st;
	struct source src;
	struct snap_sink sink;
	struct snap_fxt fx;
	struct snap_decoder dec;
	struct snap_decoder_stats stats;
	struct snap_exeinfo exe;
	struct snap_filter filter;
	struct snap_perfmaps maps;
	struct snap_srcinfo srcinfo;
	struct snap_tee_tl tee;
	struct snap_timeline *tl, *tap = NULL;
	struct snap_decode_result res;
	struct sigaction sa, old_int, old_term, old_hup;
	size_t ninputs;
	const char *who = "perf"; /* of the decode errors: perf script, or ptdec in process */
	int err, serr;

	memset(&fx, 0, sizeof(fx));
	memset(&dec, 0, sizeof(dec));
	memset(&res, 0, sizeof(res));
	res.cover = o->result ? o->result->cover : NULL;
	memset(&sink, 0, sizeof(sink));
	memset(&filter, 0, sizeof(filter));
	memset(&maps, 0, sizeof(maps));
	snap_srcinfo_init(&srcinfo, &st);
	sink.fd = -1;
	snap_strtab_init(&st);
	err = o->executable ? snap_exeinfo_load(&exe, o->executable) : 0;
	if (!o->executable)
		memset(&exe, 0, sizeof(exe));
	if (err < 0) {
		snap_log(SNAP_LOG_QUIET, "cannot read the executable %s: %s", o->executable,
			 snap_strerror(err));
		snap_exeinfo_fini(&exe);
		snap_strtab_fini(&st);
		return err;
	}
	if (o->output_fd)
		*o->output_fd = -1;
	decode_interrupted = 0;
	snap_interrupted = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	/* nohup: an ignored SIGHUP stays ignored (docs/guarantees.md, Signals) */
	if (sigaction(SIGHUP, NULL, &old_hup) == 0 &&
	    ((old_hup.sa_flags & SA_SIGINFO) || old_hup.sa_handler != SIG_IGN))
		sigaction(SIGHUP, &sa, NULL);

	ninputs = o->ninputs ? o->ninputs : 1;
	if (o->perf_map_files && (err = snap_perfmaps_load(&maps, o->perf_map_files, &st)) < 0)
		goto out_st;
	if (o->filter_start && o->filter_stop && (err = filter_scan(o, &st, &filter, &maps)) < 0)
		goto out_st;
	err = source_open(&src, o, o->ninputs ? o->inputs[0] : o->input, &st);
	if (err < 0)
		goto out_st;
	if (src.ipt)
		who = "the in-process PT decoder (libipt)";
	if (o->tap && !(tap = o->tap->open(o->tap->ctx, &st))) {
		err = -ENOMEM;
		snap_log(SNAP_LOG_QUIET, "decode: %s", snap_strerror(err));
		goto out_src;
	}
	err = o->tap && o->tap->no_output ? 0 : snap_sink_open(&sink, output);
	if (err < 0) {
		snap_log(SNAP_LOG_QUIET, "cannot write %s: %s", output, snap_strerror(err));
		goto out_src;
	}
	/* Level 1: 3-9x faster than 6 on FXT, files 2-57 % bigger (make bench,
	 * docs/design.md); decode speed is what users wait for. */
	snap_sink_set_gz_level(&sink, 1);
	snap_sink_set_gz_jobs(&sink, o->jobs); /* -j (0: cores); the same file for every -j */
	err = tap && o->tap->no_output ? 0 : snap_fxt_init(&fx, &sink, &st);
	tl = &fx.base;
	if (tap && o->tap->no_output)
		tl = tap;
	else if (tap) {
		snap_tee_tl_init(&tee, &fx.base, tap);
		tl = &tee.base;
	}
	if (err >= 0)
		err = decoder_setup(&dec, tl, &st, o, &exe, &filter, &srcinfo, who);
	if (err < 0) {
		snap_log(SNAP_LOG_QUIET, "decode: %s", snap_strerror(err));
		goto out_abort;
	}
	/* Several inputs are successive snapshots (multi-snapshot recordings): every
	 * thread is ended and restarted at the next one's first event (docs/behaviour.md §4.11). */
	for (size_t i = 0;; i++) {
		err = decode_loop(&src, &dec, o->scope, &maps, &res, &sink, output);
		if (src.is_perf)
			snap_perfsrc_set_progress(&src.perf, NULL); /* decode_loop's, gone */
		res.dwarf |= src.dwarf;
		res.lost_records += src.lost.lost;
		res.lost_samples += src.lost.lost_samples;
		res.lost_chunks += src.lost.chunks;
		res.perf_samples += src.lost.samples;
		report_unknown(&src);
		serr = source_close(&src);
		if (err < 0 || serr < 0) {
			err = err < 0 ? err : serr;
			goto out_abort;
		}
		if (i + 1 == ninputs)
			break;
		err = source_open(&src, o, o->inputs[i + 1], &st);
		if (err < 0)
			goto out_abort;
		snap_decoder_new_snapshot(&dec);
	}
	snap_decoder_stats(&dec, &stats);
	stats.dwarf = res.dwarf;
	res.events = stats.events; /* every event fed, as the decoder counts them */
	if (!res.samples && !res.branches && o->nhits) {
		snap_warn("no sample was taken before the trigger hit: the trace holds the hit "
			  "alone");
	} else if (o->quiet_empty && !res.samples && !res.branches) {
		/* (switch records alone: the program ended before its first sample,
		 * or perf lost every sample: the caller says which) */
		if (o->result)
			*o->result = res;
		err = -ENODATA;
		goto out_abort;
	} else if (stats.events == 0) {
		snap_log(SNAP_LOG_QUIET,
			 "%s: no events to decode (empty, or not perf script output)",
			 o->ninputs ? o->inputs[0]
			 : o->input ? o->input
				    : "perf.data");
		err = -SNAP_EFORMAT;
		goto out_abort;
	}
	err = snap_decoder_finish(&dec);
	if (err >= 0)
		err = tl->ops->finish(tl);
	if (err >= 0 && !(tap && o->tap->no_output))
		err = snap_sink_close_fd(&sink, o->output_fd);
	if (err < 0) {
		snap_log(SNAP_LOG_QUIET, "cannot write %s: %s", output, snap_strerror(err));
		goto out_abort;
	}
	if (fx.stats.clamped_times)
		snap_warn("%llu timestamp%s lay beyond 2^63 ns (292 years) after the first event "
			  "(damaged input?): written as the latest time FXT can hold",
			  (unsigned long long)fx.stats.clamped_times,
			  fx.stats.clamped_times == 1 ? "" : "s");
	if (fx.stats.bad_utf8)
		snap_warn("%llu name%s not UTF-8: each bad byte is shown as U+FFFD",
			  (unsigned long long)fx.stats.bad_utf8,
			  fx.stats.bad_utf8 == 1 ? " was" : "s were");
	report_lost(&res);
	report_stats(&stats, o->scope, tap && o->tap->no_output ? NULL : output, who);
	if (o->result)
		*o->result = res;
	goto out_dec;
out_abort:
	snap_sink_abort(&sink);
out_dec:
	snap_decoder_fini(&dec);
	snap_fxt_fini(&fx);
	snap_sink_fini(&sink);
out_src:
	source_close(&src);
	if (tap)
		o->tap->close(o->tap->ctx, err);
out_st:
	snap_srcinfo_fini(&srcinfo);
	snap_filter_fini(&filter);
	snap_perfmaps_fini(&maps);
	snap_strtab_fini(&st);
	snap_exeinfo_fini(&exe);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	return err;
}
