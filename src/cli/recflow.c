// SPDX-License-Identifier: GPL-2.0
/* The recording -> decode sequence of run and attach. See recflow.h. */
#include "cli/recflow.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/pipeline.h"
#include "cli/reportcli.h"
#include "cli/serve.h"
#include "parse/hitsfile.h"
#include "record/session.h"
#include "record/trigger.h"
#include "record/workdir.h"
#include "util/alloc.h"
#include "util/log.h"
/* Checks the flag combination before anything starts (same builder). */
static int precheck(struct snap_recflags *f, const char *cmd, const struct snap_machine *m)
{
	struct snap_perfargs pa;
	int rc = snap_recflags_build(f, cmd, m, &pa);

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

/* Saves the hits in the kept working directory, for decode -working-directory:
 * created there afresh, never through a link (record/workdir.h). */
static void keep_hits(struct snap_workdir *wd, const struct snap_hit *hits, size_t n)
{
	int fd = snap_workdir_create(wd, SNAP_HITS_FILE);
	FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (fp) {
		if (snap_hitsfile_write(fp, hits, n) < 0 || fclose(fp) != 0)
			snap_warn(
				"cannot write %s/%s: the trigger hits will be missing from a later "
				"decode -working-directory",
				wd->path, SNAP_HITS_FILE);
	} else {
		if (fd >= 0)
			close(fd);
		snap_warn("cannot write %s/%s: %s", wd->path, SNAP_HITS_FILE,
			  strerror(fd < 0 ? -fd : errno));
	}
}

static int decode(struct snap_recflags *f, struct snap_session *s, struct snap_decode_result *res,
		  int *out_fd)
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
		hits[i] = s->hits[i].hit;
		hits[i].symbol = s->trigger_name;
		stop_indicator_args(&hits[i], &s->hits[i], s);
	}
	if (f->workdir && f->trigger) /* without a trigger there are no hits to keep */
		keep_hits(&s->wd, hits, s->nhits);
	for (size_t i = 0; i < s->npids; i++) {
		/* run's program, stopped at its first instruction until perf
		 * recorded it, and -full-execution kept all the data from there
		 * (docs/sampling.md "Threads born and exiting") */
		int born = s->child && s->pids[i] == s->child && f->rec.sampling &&
			   f->rec.full_execution && s->ndata <= 1;

		if (!s->names[i] && !born)
			continue;
		names[nn].pid = s->pids[i];
		names[nn].born = born;
		names[nn++].name = s->names[i];
	}
	d.input = s->data_path;
	d.output = f->output;
	d.scope = f->rec.scope;
	d.strict_scope = f->strict_scope;
	d.per_call_args = f->per_call_args;
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
	d.output_fd = out_fd;
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

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* Sampling into one ring that kept fewer than half the samples it holds
 * (perfargs' estimate): it never filled, so it overwrote nothing. */
static int ring_half_empty(const struct snap_recflags *f, const struct snap_session *s,
			   const struct snap_decode_result *r)
{
	return f->rec.sampling && s->ndata <= 1 && s->pa.ring_samples &&
	       r->fed.samples * 2 < s->pa.ring_samples;
}

/* The threads whose start the ring overwrote (or perf lost): ", but the
 * ring overwrote the start of thread xz (tid 12): 6.300 s on a CPU, its track
 * starts at 6.304 s". A thread is named when it ran 10 sample periods on a
 * CPU (switch records cover the whole run) before its first sample, unless
 * one ring kept fewer than half the samples it holds: it overwrote nothing,
 * and the time was not on a CPU for the sampler (a busy VM's steal time). */
static void lost_threads(const struct snap_recflags *f, const struct snap_session *s,
			 const struct snap_decode_result *r, char *buf, size_t len)
{
	const struct snap_thcover *c = r->cover;
	size_t idx[3], n, used;
	uint64_t min_ns = s->pa.freq ? 10u * (1000000000u / s->pa.freq) : 0;

	buf[0] = '\0';
	if (!c || !f->rec.sampling || !min_ns)
		return;
	if (!f->rec.full_execution && ring_half_empty(f, s, r))
		return;
	n = snap_thcover_lost(c, min_ns, idx, 3);
	if (!n)
		return;
	used = (size_t)snprintf(buf, len, ", but %s the start of %zu thread%s: ",
				f->rec.full_execution ? "perf lost" : "the ring overwrote", n,
				n == 1 ? "" : "s");
	for (size_t i = 0; i < n && i < 3 && used < len; i++) {
		const struct snap_thcover_thread *t = &c->th[idx[i]];
		double on = (double)snap_thcover_lost_ns(c, t) / 1e9;

		if (t->samples)
			used += (size_t)snprintf(buf + used, len - used,
						 "%s%s (tid %d, %.3f s on a CPU before its track "
						 "starts at %.3f s)",
						 i ? ", " : "", t->name[0] ? t->name : "?",
						 (int)t->tid, on,
						 (double)(t->first_sample - c->t0) / 1e9);
		else
			used += (size_t)snprintf(buf + used, len - used,
						 "%s%s (tid %d, %.3f s on a CPU, no sample left)",
						 i ? ", " : "", t->name[0] ? t->name : "?",
						 (int)t->tid, on);
	}
	if (n > 3 && used < len)
		snprintf(buf + used, len - used, " and %zu more", n - 3);
}

/* "-snapshot-size 2M keeps more": four times the ring, at most 1 GiB. */
static void bigger_ring(const struct snap_session *s, char *buf, size_t len)
{
	uint64_t ring = s->pa.ring_bytes ? s->pa.ring_bytes : (4u << 20);
	uint64_t more = ring * 4 > (1ull << 30) ? (1ull << 30) : ring * 4;

	snprintf(buf, len, "-snapshot-size %llu%s",
		 (unsigned long long)(more >> (more >= (1u << 20) ? 20 : 10)),
		 more >= (1u << 20) ? "M" : "K");
}

/* What loses less when perf lost data: a bigger ring where one may be
 * locked, smaller (fp) samples, fewer samples. */
static void lose_less(const struct snap_session *s, const char *ring, char *buf, size_t len)
{
	int dwarf = s->pa.cg == SNAP_CG_DWARF;

	if (s->cfg.caps && !s->cfg.caps->big_ring)
		snprintf(buf, len,
			 "%sa lower -timer-resolution loses less; as root (or with CAP_IPC_LOCK) "
			 "the ring can be bigger",
			 dwarf ? "-callgraph-mode fp (smaller samples) or " : "");
	else
		snprintf(buf, len, "%s%s loses less", ring,
			 dwarf ? " or -callgraph-mode fp (smaller samples)" : "");
}

/* One line on what the trace covers: the span kept against the run, the
 * samples, the threads whose start was lost, what perf lost, and the flag
 * that keeps more; then a hint on untraced threads. */
static void say_coverage(const struct snap_recflags *f, const struct snap_session *s,
			 const struct snap_decode_result *r)
{
	uint64_t run_ns = (uint64_t)(s->recorded_ms > 0 ? s->recorded_ms : 0) * 1000000u;
	uint64_t last = r->fed.last_time, span;
	char what[64], threads[512], ring[32], lost[320] = "", less[192];
	int wrapped, hint;

	/* the trace ends at the last switch record when that is after the last
	 * sample: a program that ends asleep (its off-CPU slice, docs/sampling.md) */
	if (r->cover && r->cover->t_last > last)
		last = r->cover->t_last;
	span = r->fed.first_time && last > r->fed.first_time ? last - r->fed.first_time : 0;
	/* the run is timed by our clock, the span by perf's: a run lasted at least its data */
	if (run_ns && span > run_ns)
		run_ns = span;
	if (f->rec.sampling)
		snprintf(what, sizeof(what), "%llu sample%s", (unsigned long long)r->fed.samples,
			 r->fed.samples == 1 ? "" : "s");
	else
		snprintf(what, sizeof(what), "%llu events", (unsigned long long)r->events);
	wrapped = !(f->rec.full_execution || s->ndata > 1 || !run_ns || span * 10 >= run_ns * 9 ||
		    ring_half_empty(f, s, r));
	lost_threads(f, s, r, threads, sizeof(threads));
	if (wrapped && r->cover && r->cover->n == 1)
		threads[0] = '\0'; /* one thread: "the last X s" says it all */
	bigger_ring(s, ring, sizeof(ring));
	lose_less(s, ring, less, sizeof(less));
	if (r->lost_samples || r->lost_records)
		snprintf(lost, sizeof(lost),
			 "; perf lost %llu %s while recording (its ring filled faster than perf "
			 "wrote it out): %s",
			 (unsigned long long)(r->lost_samples ? r->lost_samples : r->lost_records),
			 r->lost_samples ? "samples" : "records", less);
	/* a lost thread start is what a bigger ring keeps */
	hint = threads[0] && !f->rec.full_execution;
	if (!wrapped)
		snap_warn("the trace covers %.3f s of the %.3f s recording (%s)%s%s%s%s%s",
			  secs(span), secs(run_ns), what, threads, hint ? "; " : "",
			  hint ? ring : "", hint ? " keeps more, -full-execution keeps all" : "",
			  lost);
	else
		snap_warn(
			"the trace covers the last %.3f s of the %.3f s recording (%s)%s; %s keeps "
			"more, -full-execution keeps all%s",
			secs(span), secs(run_ns), what, threads, ring, lost);
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

int snap_recflow_record(struct snap_recflags *f, const char *cmd, const struct snap_machine *m,
			char *const *argv, const int *pids, size_t npids)
{
	struct snap_session_cfg cfg = {0};
	struct snap_session s;
	struct snap_decode_result res = {0};
	struct snap_thcover cover;
	int err, rc = 1, status = 0, written = 0, out_fd = -1;

	err = precheck(f, cmd, m);
	if (err)
		return err;
	snap_thcover_init(&cover); /* (allocates nothing yet) */
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
	res.cover = &cover;
	err = decode(f, &s, &res, f->serve ? &out_fd : NULL);
	if (err == -ENODATA) {
		/* Nothing was sampled: not an error of snaptrace's; run passes
		 * the program's status on. */
		if (res.lost_samples || res.lost_records) {
			char ring[32], less[192];

			bigger_ring(&s, ring, sizeof(ring));
			lose_less(&s, ring, less, sizeof(less));
			fprintf(stderr,
				"snaptrace %s: no trace written: perf lost every sample (%llu %s) "
				"while recording: its ring filled faster than perf wrote it out; "
				"%s\n",
				cmd,
				(unsigned long long)(res.lost_samples ? res.lost_samples
								      : res.lost_records),
				res.lost_samples ? "samples" : "records", less);
		} else if (s.cfg.rec.sampling && s.pa.freq && argv)
			fprintf(stderr,
				"snaptrace %s: no trace written: %s ended before its first sample "
				"(at %llu Hz, one per %llu us on a CPU); trace a longer run or "
				"raise -timer-resolution\n",
				cmd, argv[0], (unsigned long long)s.pa.freq,
				(unsigned long long)(1000000u / s.pa.freq));
		else if (s.cfg.rec.sampling && s.pa.freq)
			/* (a thread that ran less than a period between its waits, an
			 * acceptor, takes no sample either: not "did not run") */
			fprintf(stderr,
				"snaptrace %s: no trace written: no sample was taken (the traced "
				"thread%s spent less than a sample period, %llu us, on a CPU at a "
				"time while recorded); record longer or raise -timer-resolution\n",
				cmd, npids > 1 ? "s" : "",
				(unsigned long long)(1000000u / s.pa.freq));
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
	} else {
		/* also when interrupted: a signal stops the decode, not the recording
		 * (docs/guarantees.md, Signals) */
		keep_data(cmd, &s);
	}
out:
	status = snap_session_wait_child(&s);
	if (argv && s.child) {
		if (status >= 128)
			snap_warn("%s was killed by signal %d (%s)", argv[0], status - 128,
				  strsignal(status - 128));
		else if (status)
			snap_info("%s exited with status %d", argv[0], status);
		if (rc == 0)
			rc = status;
	}
	snap_session_close(&s);
	snap_thcover_fini(&cover);
	if (written && f->serve) {
		/* the descriptor just written: a link swapped meanwhile cannot redirect it */
		int src = snap_serve_fd(cmd, out_fd, f->output ? f->output : "trace.fxt.gz",
					f->serve_port);

		rc = rc ? rc : src;
	} else if (out_fd >= 0) {
		close(out_fd);
	}
	return rc;
}
