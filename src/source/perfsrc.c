// SPDX-License-Identifier: GPL-2.0
#include "source/perfsrc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "source/source.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/log.h"
#include "util/proc.h"

#define PERFSRC_BUF (256 * 1024)

/* magic-trace's field sets plus comm for thread names (docs/behaviour.md §2.7). */
static const char pt_fields[] = "comm,pid,tid,time,flags,ip,addr,sym,symoff,synth,dso,event,period";
static const char pt_fields_timeless[] =
	"comm,pid,tid,flags,ip,addr,sym,symoff,synth,dso,event,period";
static const char sample_fields[] = "comm,pid,tid,time,ip,sym,symoff,dso,event,period";

void snap_perfsrc_dlopts(const struct snap_perfsrc_opts *o, struct snap_dlsrc_opts *dl)
{
	memset(dl, 0, sizeof(*dl));
	dl->perf = o->perf;
	dl->data = o->data;
	dl->plugin = o->plugin;
	dl->itrace = o->kind == SNAP_PERFDATA_AUX ? "--itrace=bep" : NULL;
	/* samples: context-switch lines identical on both paths (docs/sampling.md) */
	dl->fields = o->kind == SNAP_PERFDATA_AUX ? NULL : sample_fields;
	dl->keepjumps = o->keepjumps;
	dl->vmlinux = o->vmlinux;
	dl->kallsyms = o->kallsyms;
	dl->stitch_lbr = o->stitch_lbr && o->kind != SNAP_PERFDATA_AUX;
	dl->no_inline = o->no_inline;
}

int snap_perfsrc_argv(const struct snap_perfsrc_opts *o, const char **argv)
{
	struct snap_dlsrc_opts dl;
	int n;

	snap_perfsrc_dlopts(o, &dl);
	n = snap_dlsrc_argv(&dl, argv);
	if (o->plugin)
		return n;
	argv[n++] = "--ns";
	argv[n++] = "-F";
	if (o->kind != SNAP_PERFDATA_AUX) {
		argv[n++] = sample_fields;
		argv[n++] = "--show-switch-events";
		argv[n++] = "--show-task-events"; /* docs/sampling.md */
	} else {
		argv[n++] = o->timeless ? pt_fields_timeless : pt_fields;
	}
	argv[n] = NULL;
	return n;
}

/* An empty source: no perf process, no pipe. */
static void perfsrc_reset(struct snap_perfsrc *src)
{
	memset(src, 0, sizeof(*src));
	src->pid = -1;
	src->fd = -1;
	src->perr.fd = -1;
}

int snap_perfsrc_open(struct snap_perfsrc *src, const struct snap_perfsrc_opts *o,
		      struct snap_strtab *names)
{
	const char *argv[SNAP_PERFSRC_MAX_ARGS];
	struct snap_perfsrc_opts text = *o;
	int pfd[2], errp[2], err;

	perfsrc_reset(src);
	text.plugin = NULL; /* the text path's command */
	err = snap_perfscript_init(&src->ps, names);
	if (err < 0)
		return err;
	snap_cfi_init(&src->cfi); /* stripped code named by function (docs/sampling.md) */
	if (o->kind != SNAP_PERFDATA_AUX)
		snap_dlsrc_cfi_setup(&src->cfi, o->data);
	snap_perfscript_set_cfi(&src->ps, &src->cfi);
	if (o->kind != SNAP_PERFDATA_UNKNOWN)
		snap_perfscript_set_mode(&src->ps, o->kind == SNAP_PERFDATA_AUX
							   ? SNAP_TRACE_PT
							   : SNAP_TRACE_SAMPLES);
	src->buf = snap_malloc(PERFSRC_BUF);
	if (!src->buf) {
		err = -ENOMEM;
		goto err_fini;
	}
	snap_perfsrc_argv(&text, argv);
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		err = -errno;
		goto err_fini;
	}
	if (pipe2(errp, O_CLOEXEC) < 0) {
		err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		goto err_fini;
	}
	src->pid = fork();
	if (src->pid < 0) {
		err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		close(errp[0]);
		close(errp[1]);
		goto err_fini;
	}
	if (src->pid == 0) {
		dup2(errp[1], STDERR_FILENO); /* relayed: see snap_perferr_drain */
		snap_exec_piped(argv, -1, -1, pfd[1]);
	}
	close(pfd[1]);
	close(errp[1]);
	src->fd = pfd[0];
	src->perr.fd = errp[0];
	fcntl(src->perr.fd, F_SETFL, O_NONBLOCK);
	src->stall_ms = snap_dlsrc_stall_ms();
	return 0;
err_fini:
	snap_free(src->buf);
	snap_perfscript_fini(&src->ps);
	snap_cfi_fini(&src->cfi);
	perfsrc_reset(src);
	return err;
}

/* snap_perfsrc_pull; with stall_ms >= 0, a read that waits longer than that
 * fails with -SNAP_ESTALL (perf script printing nothing: spinning). A signal
 * (snap_interrupted) gives -EINTR, a first MiB without any event -SNAP_ENOTTEXT
 * (/dev/zero: reads that never block and lines that never end). perr (or
 * NULL): perf's stderr, relayed whenever it has something so that perf never
 * blocks on it, and drained of what it holds at fd's EOF. */
static int perfsrc_pull(struct snap_perfscript *ps, int fd, char *buf, size_t size, int *eof,
			struct snap_event *ev, int stall_ms, struct snap_progress *prog,
			struct snap_perferr *perr)
{
	for (;;) {
		int r = snap_perfscript_next(ps, ev);
		const struct snap_perfscript_stats *st = snap_perfscript_stats(ps);
		ssize_t n;

		if (r != 0 || *eof)
			return r;
		if (snap_interrupted)
			return -EINTR;
		/* (a record still taking frames is text: a call chain may be long) */
		if (!st->events && !ps->rec_open && st->bytes >= SNAP_SNIFF_BYTES)
			return -SNAP_ENOTTEXT;
		if (stall_ms >= 0 || prog || (perr && perr->fd >= 0)) {
			struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
					      {.fd = perr ? perr->fd : -1, .events = POLLIN}};

			r = snap_dlsrc_poll(p, 2, stall_ms, prog);
			if (r < 0)
				return -errno;
			if (r == 0)
				return -SNAP_ESTALL;
			if (p[1].revents)
				snap_perferr_drain(perr, 1);
			if (!p[0].revents)
				continue;
		}
		n = read(fd, buf, size);
		if (n < 0)
			return -errno;
		if (n == 0) {
			*eof = 1;
			if (perr)
				snap_perferr_drain(perr, 1); /* what perf wrote before its end */
			snap_perfscript_finish(ps);
			continue;
		}
		r = snap_perfscript_feed(ps, buf, (size_t)n);
		if (r < 0)
			return r;
	}
}

int snap_perfsrc_pull(struct snap_perfscript *ps, int fd, char *buf, size_t size, int *eof,
		      struct snap_event *ev)
{
	return perfsrc_pull(ps, fd, buf, size, eof, ev, -1, NULL, NULL);
}

void snap_perfsrc_set_progress(struct snap_perfsrc *src, struct snap_progress *prog)
{
	src->progress = prog;
}

int snap_perfsrc_next(struct snap_perfsrc *src, struct snap_event *ev)
{
	int err, r;

	r = perfsrc_pull(&src->ps, src->fd, src->buf, PERFSRC_BUF, &src->eof, ev, src->stall_ms,
			 src->progress, &src->perr);
	if (r > 0 && (err = snap_cfi_mark_event(&src->cfi, src->ps.names, ev)) < 0)
		return err;
	return r;
}

int snap_perfsrc_close(struct snap_perfsrc *src)
{
	int err = 0;

	if (src->fd >= 0)
		close(src->fd);
	if (src->pid > 0) {
		if (!src->eof)
			kill(src->pid, SIGKILL);
		while (waitpid(src->pid, &src->status, 0) < 0 && errno == EINTR)
			;
		snap_perferr_drain(&src->perr, 0); /* perf's last words, before ours */
		if (WIFEXITED(src->status) && WEXITSTATUS(src->status) == 127) {
			snap_log(SNAP_LOG_QUIET, "could not run perf: install it (apt-get install "
						 "linux-perf) or set SNAPTRACE_PERF");
			err = -SNAP_EPERF;
		} else {
			err = snap_dlsrc_perf_exit(src->status, src->eof);
		}
	}
	snap_perferr_drain(&src->perr, 0);
	if (src->perr.fd >= 0)
		close(src->perr.fd);
	snap_free(src->buf);
	snap_perfscript_fini(&src->ps);
	snap_dlsrc_log_cfi(&src->cfi);
	snap_cfi_fini(&src->cfi);
	perfsrc_reset(src);
	return err;
}

const struct snap_perfscript_stats *snap_perfsrc_stats(const struct snap_perfsrc *src)
{
	return snap_perfscript_stats(&src->ps);
}

/* ---- the source (source/source.h) ---- */

static int perfsrc_src_next(struct snap_source *src, struct snap_event *ev)
{
	return snap_perfsrc_next(src->impl, ev);
}

static const struct snap_perfscript_stats *perfsrc_src_stats(const struct snap_source *src)
{
	return snap_perfsrc_stats(src->impl);
}

static int perfsrc_src_close(struct snap_source *src)
{
	int err = snap_perfsrc_close(src->impl);

	snap_free(src->impl);
	src->impl = NULL;
	return err;
}

static void perfsrc_src_progress(struct snap_source *src)
{
	snap_perfsrc_set_progress(src->impl, src->progress);
}

static const struct snap_source_ops perfsrc_ops = {
	.next = perfsrc_src_next,
	.stats = perfsrc_src_stats,
	.close = perfsrc_src_close,
	.set_progress = perfsrc_src_progress,
};

int snap_source_perf(struct snap_source *src, const struct snap_perfsrc_opts *o,
		     struct snap_strtab *st)
{
	struct snap_perfsrc *p = snap_calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	err = snap_perfsrc_open(p, o, st);
	if (err < 0) {
		snap_free(p);
		return err;
	}
	src->ops = &perfsrc_ops;
	src->impl = p;
	src->who = "perf";
	src->busy = 1;		   /* perf script */
	perfsrc_src_progress(src); /* (set already when the plugin path hands over) */
	return 0;
}
