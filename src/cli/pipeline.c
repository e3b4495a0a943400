// SPDX-License-Identifier: GPL-2.0
/*
 * The decode pipeline: a source of events (source/source.h: the in-process PT
 * decoder, perf script run on a perf.data, or perf script text from a file or
 * stdin) -> stack/builder -> write/fxt -> a file sink that writes a temporary
 * file and renames it into place only when everything succeeded. With -j > 1
 * the builder, the writer and the sink run on a consumer thread of their own,
 * fed in batches, where the decode's other threads leave it a core
 * (consumer_wanted, struct feeder below; docs/design.md "The consumer thread"),
 * and the sink's write() runs on a writer thread (write/sink.h).
 */
#include "cli/pipeline.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/decodemsg.h"
#include "model/tlcomb.h"
#include "record/exeinfo.h"
#include "record/perfmaps.h"
#include "record/srcinfo.h"
#include "source/batch.h"
#include "source/source.h"
#include "stack/builder.h"
#include "stack/filter.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/log.h"
#include "util/proc.h"
#include "util/progress.h"
#include "util/strtab.h"
#include "write/fxt.h"
#include "write/sink.h"

static volatile sig_atomic_t decode_interrupted;

static void on_signal(int sig)
{
	if (decode_interrupted)
		signal(sig, SIG_DFL);
	decode_interrupted = sig;
	snap_interrupted = sig;
}

/* SIGINT, SIGTERM and SIGHUP stop the decode (decode_interrupted); old[3]
 * receives their handlers for signals_restore. */
static void signals_catch(struct sigaction old[3])
{
	struct sigaction sa;

	decode_interrupted = 0;
	snap_interrupted = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, &old[0]);
	sigaction(SIGTERM, &sa, &old[1]);
	/* nohup: an ignored SIGHUP stays ignored (docs/guarantees.md, Signals) */
	if (sigaction(SIGHUP, NULL, &old[2]) == 0 &&
	    ((old[2].sa_flags & SA_SIGINFO) || old[2].sa_handler != SIG_IGN))
		sigaction(SIGHUP, &sa, NULL);
}

static void signals_restore(const struct sigaction old[3])
{
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGTERM, &old[1], NULL);
	sigaction(SIGHUP, &old[2], NULL);
}

/*
 * With -j > 1 the decode's threads (this one, and the consumer, ptdec's workers and
 * the gzip threads it creates: they inherit it) are SCHED_BATCH while it runs: a
 * thread woken by another (a free batch, a released piece) does not preempt the one
 * that woke it but waits for its turn, so the threads that take turns on the cores
 * switch a third less (docs/design.md, "The consumer thread"). Returns the policy to
 * restore (sched_batch_end), or -1 when nothing was changed (-j 1, a policy other than
 * SCHED_OTHER chosen by the user, or refused).
 */
static int sched_batch_begin(int jobs)
{
	struct sched_param sp;
	int pol;

	if (jobs == 1 || pthread_getschedparam(pthread_self(), &pol, &sp) != 0 ||
	    pol != SCHED_OTHER)
		return -1;
	memset(&sp, 0, sizeof(sp));
	return pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp) == 0 ? pol : -1;
}

static void sched_batch_end(int pol)
{
	struct sched_param sp;

	memset(&sp, 0, sizeof(sp));
	if (pol >= 0)
		pthread_setschedparam(pthread_self(), pol, &sp);
}

/* How the sources read the inputs: o's input options. */
static void source_opts(const struct snap_decode_opts *o, struct snap_source_opts *so)
{
	memset(so, 0, sizeof(*so));
	so->stdin_head = o->stdin_head;
	so->nstdin_head = o->nstdin_head;
	so->no_dlfilter = o->no_dlfilter;
	so->perf = o->perf;
	so->vmlinux = o->vmlinux;
	so->kallsyms = o->kallsyms;
	so->stitch_lbr = o->stitch_lbr;
	so->print_perf_commands = o->print_perf_commands;
	so->decoder = o->decoder;
	so->jobs = o->jobs;
}

/* An environment switch: set, not empty, not "0". */
static int env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

static int builder_setup(struct snap_builder *bld, struct snap_timeline *tl, struct snap_strtab *st,
			 const struct snap_decode_opts *o, const struct snap_exeinfo *exe,
			 struct snap_filter *filter, struct snap_srcinfo *src, const char *who)
{
	struct snap_builder_opts dopts;

	memset(&dopts, 0, sizeof(dopts));
	dopts.scope = o->scope;
	dopts.strict_scope = o->strict_scope;
	dopts.max_depth = SNAP_DECODE_MAX_DEPTH;
	dopts.no_tx =
		env_on("SNAPTRACE_SKIP_TX_HANDLING") || env_on("MAGIC_TRACE_SKIP_TX_HANDLING");
	dopts.debug_names = env_on("SNAPTRACE_DEBUG") || env_on("MAGIC_TRACE_DEBUG");
	dopts.per_call_args = o->per_call_args;
	dopts.ocaml_eh = exe->have_eh ? &exe->eh : NULL;
	dopts.filter = o->filter_start ? filter : NULL;
	/* file/line/col args unless SNAPTRACE_NO_SOURCE_LINES is set */
	dopts.srcloc = env_on("SNAPTRACE_NO_SOURCE_LINES") ? NULL : &src->iface;
	dopts.error_source = who;
	dopts.hits = o->hits;
	dopts.nhits = o->nhits;
	dopts.names = o->names;
	dopts.nnames = o->nnames;
	return snap_builder_init(bld, tl, st, &dopts);
}

/*
 * Where decode_loop hands its events (docs/design.md, "The consumer thread"):
 * the builder, on this thread (-j 1), or, with -j > 1, a consumer thread that
 * feeds the builder (and through it the FXT writer and the sink) the same
 * events in the same order, in batches (source/batch.h), while this thread
 * reads the next ones. The output is the same bytes either way.
 */
#define CONSUMER_BATCHES 16   /* batches in the queue: the reader runs this far ahead */
#define CONSUMER_EVENTS	 1024 /* events a batch */
#define CONSUMER_FRAMES	 4096 /* sample frames a batch holds to start with */

struct feeder {
	struct snap_builder *bld;
	int threads;	      /* -j > 1: feed the builder on a consumer thread */
	int running;	      /* the consumer thread runs (q is in use) */
	struct snap_batchq q; /* to the consumer */
	pthread_t thr;	      /* the consumer */
	int put_err;	      /* put's error (the consumer's, or out of memory) */
	int err;	      /* the builder's first error */
	char desc[256];	      /* the event it failed on (snap_builder_desc) */
	double cpu;	      /* the consumer thread's CPU seconds, at its end */
};

/* The consumer thread: feeds the builder every batch, stops q at its first
 * error (f->err, f->desc: read by the reading thread once it joined). */
static void *consumer_main(void *arg)
{
	struct feeder *f = arg;
	struct snap_batch *b;

	while (!f->err && (b = snap_batchq_get(&f->q))) {
		size_t i;
		int r = snap_builder_feed_n(f->bld, b->ev, b->n, &i, NULL);

		if (r < 0) {
			f->err = r;
			snap_builder_desc(f->bld, &b->ev[i], f->desc, sizeof(f->desc));
			snap_batchq_stop(&f->q, r);
		}
		snap_batchq_done(&f->q, b);
	}
	f->cpu = snap_thread_cpu_seconds(); /* (-v -v: make bench prints it) */
	return NULL;
}

/*
 * Whether a -j jobs decode of src into sink gets a consumer thread: only where it
 * has a core (docs/design.md, "The consumer thread"). The decode's busy threads with
 * it are the reading thread, the consumer, the source's own (src->busy: ptdec's
 * workers, perf script) and pgz's gzip threads (about one thread's work together,
 * write/pgz.h) when they run; it is started when they are no more than the CPUs the
 * process may use. On 2 CPUs a -j 2 decode of a perf.data in process has 4 busy
 * threads: the reading thread feeds the builder itself. SNAPTRACE_CONSUMER=1 (or 0)
 * forces it on (off) for -j > 1: the tests run both paths.
 */
static int consumer_wanted(int jobs, const struct snap_source *src, const struct snap_sink *sink)
{
	const char *env = getenv("SNAPTRACE_CONSUMER");
	int busy = 2 + src->busy, cpus; /* the reading thread, the consumer, the source's */

	if (jobs <= 1)
		return 0;
	if (env && *env)
		return strcmp(env, "0") != 0;
	cpus = snap_cpus_allowed();
	if (sink->gz && cpus > 1)
		busy++; /* pgz's threads: min(jobs, cpus, 4) */
	snap_debug("%d busy threads with a consumer thread on %d CPUs: %s", busy, cpus,
		   busy <= cpus ? "a consumer thread"
				: "none (the reading thread feeds the builder)");
	return busy <= cpus;
}

/* Starts the consumer thread if f->threads; feeds on this thread if it cannot. */
static void feeder_start(struct feeder *f)
{
	sigset_t set, old;

	f->err = f->put_err = 0;
	f->desc[0] = '\0';
	if (!f->threads ||
	    snap_batchq_init(&f->q, CONSUMER_BATCHES, CONSUMER_EVENTS, CONSUMER_FRAMES) < 0)
		return;
	/* signals stay with this thread: they interrupt its reads (perf script's pipe) */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	snap_strtab_share(f->bld->st, 1);
	f->running = pthread_create(&f->thr, NULL, consumer_main, f) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!f->running) {
		snap_strtab_share(f->bld->st, 0);
		snap_batchq_fini(&f->q);
	}
}

/* Where the source writes the next events: *room (>= 1) slots from *ev on,
 * the rest of the consumer's current batch (no copy: source/batch.h), or
 * local[0..LOCAL_EVENTS) with -j 1. Returns 0 or the error the queue was
 * stopped with (f->put_err: decode_end reports it). */
#define LOCAL_EVENTS 64
static inline int decode_slots(struct feeder *f, struct snap_event *local, struct snap_event **ev,
			       size_t *room)
{
	int r;

	if (!f->running) {
		*ev = local;
		*room = LOCAL_EVENTS;
		return 0;
	}
	if ((r = snap_batchq_slots(&f->q, ev, room)) < 0)
		f->put_err = r;
	return r;
}

/* Hands the n events ev[0..n) (from decode_slots, filled; several only
 * without frames) to the builder, counting them in res->fed (on the consumer
 * thread's path here: res is read only after a decode that fed all).
 * Returns 0 or a negative error (f->err or f->put_err: decode_end reports it). */
static inline int decode_feed(struct feeder *f, struct snap_event *ev, size_t n,
			      struct snap_decode_result *res)
{
	size_t i;
	int r;

	if (f->running) {
		snap_feed_count_add(&res->fed, ev, n);
		if (n != 1) {
			snap_batchq_commit_n(&f->q, n);
			return 0;
		}
		if ((r = snap_batchq_commit(&f->q, ev)) < 0)
			f->put_err = r;
		return r;
	}
	if ((r = snap_builder_feed_n(f->bld, ev, n, &i, &res->fed)) < 0) {
		f->err = r;
		snap_builder_desc(f->bld, &ev[i], f->desc, sizeof(f->desc));
		return r;
	}
	return 0;
}

/* The end of decode_loop; r is its last result (0: the source's end). Ends
 * the consumer thread, after the rest of the events when the loop ended well,
 * and reports the first failure once: the builder's, an interrupt, the
 * source's. Returns 0 or that error. */
static int decode_end(struct feeder *f, struct snap_source *src, enum snap_scope scope,
		      struct snap_progress *prog, int r, const struct snap_sink *sink,
		      const char *output)
{
	if (f->running) {
		if (!r && !decode_interrupted)
			snap_batchq_close(&f->q); /* the consumer takes the rest */
		else /* (after the consumer's own stop: keeps its error) */
			snap_batchq_stop(&f->q, decode_interrupted ? -EINTR : r);
		pthread_join(f->thr, NULL);
		f->running = 0;
		snap_debug("the consumer thread (stacks, FXT) used %.2f s CPU", f->cpu);
		snap_strtab_share(f->bld->st, 0);
		snap_batchq_fini(&f->q);
		if (!f->err && f->put_err)
			f->err = f->put_err; /* out of memory (a stop is the consumer's f->err) */
	}
	snap_progress_done(prog);
	if (f->err == -SNAP_ESCOPE) {
		snap_log(SNAP_LOG_QUIET,
			 "%s: event outside the trace scope (%s) with -strict-scope: %s; "
			 "nothing written (decode with -trace-include-kernel to keep it)",
			 src->name, snap_scope_name(scope), f->desc);
		return f->err;
	}
	if (f->err < 0 && snap_sink_error(sink)) { /* ENOSPC, EFBIG, EIO: the output's */
		snap_log(SNAP_LOG_QUIET, "cannot write %s: %s", output,
			 snap_strerror(snap_sink_error(sink)));
		return f->err;
	}
	if (f->err < 0) {
		snap_log(SNAP_LOG_QUIET, "decoding %s failed: %s", src->name,
			 snap_strerror(f->err));
		return f->err;
	}
	if (decode_interrupted) {
		snap_log(SNAP_LOG_QUIET, "interrupted: nothing written");
		return -EINTR;
	}
	if (r < 0 && !src->said)
		snap_log(SNAP_LOG_QUIET, "reading %s failed: %s", src->name, snap_strerror(r));
	return r;
}

/* The event loop. Returns 0 or a negative error, already reported. */
static int decode_loop(struct snap_source *src, struct feeder *f, enum snap_scope scope,
		       struct snap_perfmaps *maps, struct snap_decode_result *res,
		       const struct snap_sink *sink, const char *output)
{
	struct snap_event local[LOCAL_EVENTS], *ev;
	struct snap_progress prog;
	uint64_t nev = 0;
	size_t room, n, k;
	int r;

	feeder_start(f);
	/* A progress line on a terminal for decodes longer than a second. */
	snap_progress_init(&prog, STDERR_FILENO,
			   isatty(STDERR_FILENO) && snap_log_level >= SNAP_LOG_WARN,
			   snap_progress_now());
	snap_source_set_progress(src, &prog); /* redrawn while perf script prints nothing */
	while ((r = decode_slots(f, local, &ev, &room)) == 0 &&
	       (r = snap_source_fill(src, ev, room)) > 0) {
		if (decode_interrupted)
			break;
		n = (size_t)r;
		snap_progress_tick(&prog, nev += n);
		for (k = 0; maps->n && k < n; k++)
			if ((r = snap_perfmaps_apply(maps, &ev[k])) < 0)
				break;
		if (!maps->n)
			k = n;
		for (size_t i = 0; res->cover && i < k; i++)
			if (snap_thcover_feed(res->cover, &ev[i], f->bld->st) < 0)
				res->cover = NULL; /* out of memory: no per-thread coverage */
		if (k < n) {			   /* perfmaps' error: the events before it go on */
			if (k)
				decode_feed(f, ev, k, res);
			break;
		}
		if ((r = decode_feed(f, ev, n, res)) < 0)
			break;
	}
	return decode_end(f, src, scope, &prog, r, sink, output);
}

/* -filter pass 1: reads every input once and keeps the START -> STOP pairs.
 * Returns 0 or a negative error (reported). */
static int filter_scan(const struct snap_decode_opts *o, const struct snap_source_opts *so,
		       struct snap_strtab *st, struct snap_filter *f, struct snap_perfmaps *maps)
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
		struct snap_source src;
		struct snap_event ev;
		const char *name;
		int r, serr, said;

		if (in && !strcmp(in, "-")) {
			snap_log(SNAP_LOG_QUIET, "-filter reads the input twice: give a file, not "
						 "stdin");
			return -EINVAL;
		}
		if ((err = snap_source_open(&src, so, in, st)) < 0)
			return err;
		while ((r = snap_source_next(&src, &ev)) > 0 && !decode_interrupted)
			if ((maps->n && (r = snap_perfmaps_apply(maps, &ev)) < 0) ||
			    (r = snap_filter_scan(f, &ev)) < 0)
				break;
		name = src.name; /* (close clears src) */
		said = src.said;
		serr = snap_source_close(&src);
		if (decode_interrupted) {
			snap_log(SNAP_LOG_QUIET, "interrupted: nothing written");
			return -EINTR;
		}
		if (r < 0 && !said) /* (close's error is reported) */
			snap_log(SNAP_LOG_QUIET, "reading %s failed: %s", name, snap_strerror(r));
		if (r < 0 || serr < 0)
			return r < 0 ? r : serr;
	}
	if (!snap_filter_pair(f))
		snap_warn("-filter: no call to %s followed by a call to %s: the trace will be "
			  "empty (check the names with a decode without -filter)",
			  o->filter_start, o->filter_stop);
	return 0;
}

/* Several inputs are successive snapshots (multi-snapshot recordings): every
 * thread is ended and restarted at the next one's first event (docs/behaviour.md
 * §4.11). Decodes src (open: the first input) and then the others, each closed
 * once read. Returns 0 or a negative error (reported). */
static int decode_inputs(struct snap_source *src, struct snap_builder *bld,
			 const struct snap_decode_opts *o, const struct snap_source_opts *so,
			 struct snap_perfmaps *maps, struct snap_decode_result *res,
			 const struct snap_sink *sink, const char *output)
{
	size_t ninputs = o->ninputs ? o->ninputs : 1;
	int jobs = snap_jobs(o->jobs);
	struct feeder f;
	int err, serr;

	memset(&f, 0, sizeof(f));
	f.bld = bld;
	for (size_t i = 0;; i++) {
		f.threads = consumer_wanted(jobs, src, sink);
		err = decode_loop(src, &f, o->scope, maps, res, sink, output);
		snap_source_set_progress(src, NULL); /* decode_loop's, gone */
		res->dwarf |= src->dwarf;
		res->lost_records += src->lost.lost;
		res->lost_samples += src->lost.lost_samples;
		res->lost_chunks += src->lost.chunks;
		res->perf_samples += src->lost.samples;
		/* (not after "neither a perf.data file nor perf script text": one line) */
		if (err != -SNAP_ENOTTEXT)
			snap_decodemsg_unknown(src->name, snap_source_stats(src));
		serr = snap_source_close(src);
		if (err < 0 || serr < 0)
			return err < 0 ? err : serr;
		if (i + 1 == ninputs)
			return 0;
		err = snap_source_open(src, so, o->inputs[i + 1], bld->st);
		if (err < 0)
			return err;
		snap_builder_new_snapshot(bld);
	}
}

/* What a decode writes to: the FXT file (unless the tap is the only consumer)
 * and o->tap's timeline, behind the one timeline the builder feeds. */
struct decode_out {
	const char *path; /* the FXT file */
	int no_file;	  /* the tap is the only consumer: no FXT file */
	struct snap_sink sink;
	struct snap_fxt fx;
	struct snap_tee_tl tee;
	struct snap_timeline *tl;  /* what the builder feeds */
	struct snap_timeline *tap; /* o->tap's, or NULL */
};

/* The fix after "cannot write FILE: ERROR" when the output cannot be opened. */
static const char *output_fix(int err)
{
	switch (-err) {
	case ENOENT:
		return " (its directory is missing: create it or choose another -o)";
	case EISDIR:
		return " (name a file in it, e.g. -o DIR/trace.fxt.gz)";
	case EACCES:
	case EPERM:
	case EROFS:
		return " (choose another -o)";
	default:
		return "";
	}
}

/* Opens the output for o; st is the decode's string table. Returns 0 or a
 * negative error (reported); output_close releases out either way. */
static int output_open(struct decode_out *out, const struct snap_decode_opts *o,
		       struct snap_strtab *st)
{
	int err;

	memset(out, 0, sizeof(*out));
	out->sink.fd = -1;
	out->path = o->output ? o->output : "trace.fxt.gz";
	out->no_file = o->tap && o->tap->no_output;
	if (o->tap && !(out->tap = o->tap->open(o->tap->ctx, st))) {
		err = -ENOMEM;
		snap_log(SNAP_LOG_QUIET, "decode: %s", snap_strerror(err));
		return err;
	}
	err = out->no_file ? 0 : snap_sink_open(&out->sink, out->path);
	if (err < 0) {
		snap_log(SNAP_LOG_QUIET, "cannot write %s: %s%s", out->path, snap_strerror(err),
			 output_fix(err));
		return err;
	}
	/* Level 1: 3-9x faster than 6 on FXT, files 2-57 % bigger (make bench,
	 * docs/design.md); decode speed is what users wait for. */
	snap_sink_set_gz_level(&out->sink, 1);
	snap_sink_set_gz_jobs(&out->sink, o->jobs); /* -j (0: cores); the same file for every -j */
	/* -j > 1: write() and sync_file_range on a thread of their own, the same bytes
	 * (docs/design.md, "Output is never half-written"; SNAPTRACE_WRITER=0: not) */
	if (!out->no_file && snap_jobs(o->jobs) > 1 &&
	    (!getenv("SNAPTRACE_WRITER") || env_on("SNAPTRACE_WRITER")))
		snap_sink_set_writer(&out->sink, 1);
	err = out->no_file ? 0 : snap_fxt_init(&out->fx, &out->sink, st);
	out->tl = &out->fx.base;
	if (out->no_file)
		out->tl = out->tap;
	else if (out->tap) {
		snap_tee_tl_init(&out->tee, &out->fx.base, out->tap);
		out->tl = &out->tee.base;
	}
	if (err < 0)
		snap_log(SNAP_LOG_QUIET, "decode: %s", snap_strerror(err));
	return err;
}

/* Ends the timeline and puts the file in place (o->output_fd: its descriptor).
 * Returns 0 or a negative error (not reported). */
static int output_finish(struct decode_out *out, const struct snap_decode_opts *o)
{
	int err = out->tl->ops->finish(out->tl);

	if (err >= 0 && !out->no_file)
		err = snap_sink_close_fd(&out->sink, o->output_fd);
	return err;
}

/* Releases out: a decode that failed (err < 0) leaves no file; the tap is told err. */
static void output_close(struct decode_out *out, const struct snap_decode_opts *o, int err)
{
	if (err < 0)
		snap_sink_abort(&out->sink);
	snap_fxt_fini(&out->fx);
	snap_sink_fini(&out->sink);
	if (out->tap)
		o->tap->close(o->tap->ctx, err);
}

/* A decode that fed no sample nor branch: the trace of the hits alone (a
 * warning, returns 0), or -ENODATA with o->quiet_empty (*o->result filled), or
 * no events at all: an error. Returns 0 or a negative error (reported). */
static int check_empty(const struct snap_decode_opts *o, const struct snap_decode_result *res,
		       const struct snap_builder_stats *stats)
{
	if (!res->fed.samples && !res->fed.branches && o->nhits) {
		snap_warn("no sample was taken before the trigger hit: the trace holds the hit "
			  "alone");
	} else if (o->quiet_empty && !res->fed.samples && !res->fed.branches) {
		/* (switch records alone: the program ended before its first sample,
		 * or perf lost every sample: the caller says which) */
		if (o->result)
			*o->result = *res;
		return -ENODATA;
	} else if (stats->events == 0) {
		snap_log(SNAP_LOG_QUIET,
			 "%s: no events to decode (empty, or not perf script output)",
			 o->ninputs ? o->inputs[0]
			 : o->input ? o->input
				    : "perf.data");
		return -SNAP_EFORMAT;
	}
	return 0;
}

int snap_decode_run(const struct snap_decode_opts *o)
{
	struct snap_strtab st;
	struct snap_source_opts so;
	struct snap_source src;
	struct decode_out out;
	struct snap_builder bld;
	struct snap_builder_stats stats;
	struct snap_exeinfo exe;
	struct snap_filter filter;
	struct snap_perfmaps maps;
	struct snap_srcinfo srcinfo;
	struct snap_decode_result res;
	struct sigaction old_sig[3];
	const char *who; /* of the decode errors: perf script, or ptdec in process */
	int err, pol;

	memset(&bld, 0, sizeof(bld));
	memset(&res, 0, sizeof(res));
	res.cover = o->result ? o->result->cover : NULL;
	memset(&filter, 0, sizeof(filter));
	memset(&maps, 0, sizeof(maps));
	snap_srcinfo_init(&srcinfo, &st);
	snap_strtab_init(&st);
	source_opts(o, &so);
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
	signals_catch(old_sig);
	pol = sched_batch_begin(o->jobs);

	if (o->perf_map_files && (err = snap_perfmaps_load(&maps, o->perf_map_files, &st)) < 0)
		goto out;
	if (o->filter_start && o->filter_stop &&
	    (err = filter_scan(o, &so, &st, &filter, &maps)) < 0)
		goto out;
	err = snap_source_open(&src, &so, o->ninputs ? o->inputs[0] : o->input, &st);
	if (err < 0)
		goto out;
	who = src.who; /* the first input's */
	/* open the output, decode the inputs (src closed either way), close the output */
	err = output_open(&out, o, &st);
	if (err >= 0 &&
	    (err = builder_setup(&bld, out.tl, &st, o, &exe, &filter, &srcinfo, who)) < 0)
		snap_log(SNAP_LOG_QUIET, "decode: %s", snap_strerror(err));
	if (err >= 0)
		err = decode_inputs(&src, &bld, o, &so, &maps, &res, &out.sink, out.path);
	else
		snap_source_close(&src);
	if (err >= 0) {
		snap_builder_stats(&bld, &stats);
		stats.dwarf = res.dwarf;
		res.events = stats.events; /* every event fed, as the builder counts them */
		err = check_empty(o, &res, &stats);
	}
	if (err >= 0 &&
	    ((err = snap_builder_finish(&bld)) < 0 || (err = output_finish(&out, o)) < 0))
		snap_log(SNAP_LOG_QUIET, "cannot write %s: %s", out.path, snap_strerror(err));
	if (err >= 0) {
		snap_decodemsg_fxt(&out.fx.stats);
		snap_decodemsg_lost(&res);
		snap_decodemsg_stats(&stats, o->scope, out.no_file ? NULL : out.path, who);
		if (o->result)
			*o->result = res;
	}
	snap_builder_fini(&bld);
	output_close(&out, o, err);
out:
	snap_srcinfo_fini(&srcinfo);
	snap_filter_fini(&filter);
	snap_perfmaps_fini(&maps);
	snap_strtab_fini(&st);
	snap_exeinfo_fini(&exe);
	sched_batch_end(pol);
	signals_restore(old_sig);
	return err;
}
