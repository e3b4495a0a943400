// SPDX-License-Identifier: GPL-2.0
/*
 * The dlfilter event source: perf script with snaptrace-dlfilter.so, records on
 * fd 3 of perf (a pipe to us), perf's stdout on another pipe, both read with
 * poll() so that neither pipe ever fills up and blocks perf. perf's error
 * lines arrive as TEXT records (model/dlrec.h) and are parsed where they are.
 */
#include "source/dlsrc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parse/perfdata.h"
#include "source/perfsrc.h"
#include "source/source.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/esc.h"
#include "util/file.h"
#include "util/log.h"
#include "util/proc.h"
#include "util/vec.h"

#define DLSRC_BUF (1u << 20)
#define DLSRC_FD  3 /* perf's fd for the records: --dlarg fd=3 */

static void dlsrc_reset(struct snap_dlsrc *src)
{
	memset(src, 0, sizeof(*src));
	src->pid = -1;
	src->rec_fd = -1;
	src->out_fd = -1;
	src->perr.fd = -1;
}

int snap_dlsrc_argv(const struct snap_dlsrc_opts *o, const char **argv)
{
	int n = 0;

	argv[n++] = o->perf;
	argv[n++] = "script";
	argv[n++] = "-i";
	argv[n++] = o->data;
	if (o->itrace)
		argv[n++] = o->itrace;
	if (o->stitch_lbr)
		argv[n++] = "--stitch-lbr";
	if (o->no_inline)
		argv[n++] = "--no-inline"; /* inlined frames: unused, and slow (docs/compat.md) */
	if (o->vmlinux) {
		argv[n++] = "--vmlinux";
		argv[n++] = o->vmlinux;
	}
	if (o->kallsyms) {
		argv[n++] = "--kallsyms";
		argv[n++] = o->kallsyms;
	}
	if (o->plugin) {
		argv[n++] = "--dlfilter";
		argv[n++] = o->plugin;
		argv[n++] = "--dlarg";
		argv[n++] = "fd=3";
		if (o->keepjumps) {
			argv[n++] = "--dlarg";
			argv[n++] = "keepjumps";
		}
		if (o->fields) {
			argv[n++] = "--ns";
			argv[n++] = "-F";
			argv[n++] = o->fields;
			argv[n++] = "--show-switch-events";
			argv[n++] = "--show-task-events"; /* docs/sampling.md */
		}
	}
	argv[n] = NULL;
	return n;
}

int snap_dlsrc_stall_ms(void)
{
	const char *e = getenv("SNAPTRACE_PERF_STALL_SECONDS");
	char *end;
	long v = SNAP_DLSRC_STALL_S;

	if (e && *e) {
		v = strtol(e, &end, 10);
		if (*end || v < 0)
			v = SNAP_DLSRC_STALL_S;
	}
	if (v == 0)
		return -1;
	return v > INT_MAX / 1000 ? INT_MAX : (int)v * 1000;
}

#define POLL_SLICE_MS 250

int snap_dlsrc_poll(struct pollfd *p, unsigned n, int stall_ms, struct snap_progress *prog)
{
	int left = stall_ms;

	for (;;) {
		int slice = prog && prog->enabled ? POLL_SLICE_MS : left, r;

		if (left >= 0 && (slice < 0 || slice > left))
			slice = left;
		r = poll(p, n, slice);
		if (r != 0)
			return r;
		if (left >= 0 && (left -= slice) <= 0)
			return 0;
		snap_progress_wait(prog, snap_progress_now());
	}
}

int snap_dlsrc_open(struct snap_dlsrc *src, const struct snap_dlsrc_opts *o,
		    struct snap_strtab *names)
{
	const char *argv[SNAP_DLSRC_MAX_ARGS];
	int rec[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1}, err;

	dlsrc_reset(src);
	snprintf(src->plugin, sizeof(src->plugin), "%s", o->plugin);
	snap_dlrec_init(&src->rd, names);
	snap_cfi_init(&src->cfi); /* stripped code named by function (docs/sampling.md) */
	if (!o->itrace)
		snap_dlsrc_cfi_setup(&src->cfi, o->data);
	snap_dlrec_set_cfi(&src->rd, &src->cfi);
	/* the plugin only runs on perf.data files, whose header told the mode */
	snap_dlrec_set_mode(&src->rd, o->itrace ? SNAP_TRACE_PT : SNAP_TRACE_SAMPLES);
	err = snap_perfscript_init(&src->ps, names);
	if (err < 0)
		goto err_fini;
	if (o->itrace)
		snap_perfscript_set_mode(&src->ps, SNAP_TRACE_PT);
	snap_perfscript_set_cfi(&src->ps, &src->cfi);
	src->buf = snap_malloc(DLSRC_BUF);
	if (!src->buf) {
		err = -ENOMEM;
		goto err_fini;
	}
	snap_dlsrc_argv(o, argv);
	if (pipe2(rec, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		err = -errno;
		goto err_close;
	}
	src->pid = fork();
	if (src->pid < 0) {
		err = -errno;
		goto err_close;
	}
	if (src->pid == 0) {
		dup2(errp[1], STDERR_FILENO); /* relayed: see snap_dlsrc_drain_err */
		snap_exec_piped(argv, rec[1], DLSRC_FD, out[1]);
	}
	close(rec[1]);
	close(out[1]);
	close(errp[1]);
	src->perr.fd = errp[0];
	fcntl(src->perr.fd, F_SETFL, O_NONBLOCK);
	src->rec_fd = rec[0];
	src->out_fd = out[0];
	fcntl(src->rec_fd, F_SETFL, O_NONBLOCK);
	/* The plugin writes 1 MiB at a time: a pipe that holds it all costs perf fewer
	 * waits (best effort: pipe-max-size may be smaller). */
	fcntl(src->rec_fd, F_SETPIPE_SZ, (int)DLSRC_BUF);
	fcntl(src->out_fd, F_SETFL, O_NONBLOCK);
	src->stall_ms = snap_dlsrc_stall_ms();
	return 0;
err_close:
	for (int i = 0; i < 2; i++) {
		if (rec[i] >= 0)
			close(rec[i]);
		if (out[i] >= 0)
			close(out[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
err_fini:
	snap_free(src->buf);
	snap_perfscript_fini(&src->ps);
	snap_dlrec_fini(&src->rd);
	snap_cfi_fini(&src->cfi);
	dlsrc_reset(src);
	return err;
}

/* perf script's warnings about data perf lost while recording ("Processed N
 * events and lost M chunks!", "Check IO/CPU overload!", "Processed N samples
 * and lost P%!"): the pipeline says it in its own words (snap_perfdata_lost). */
static int lost_warning(const char *l, size_t n)
{
	return (n > 10 && !strncmp(l, "Processed ", 10) && memmem(l, n, " and lost ", 10)) ||
	       (n == 22 && !strncmp(l, "Check IO/CPU overload!", 22));
}

/* Relays perf's stderr but those warnings (with their "Warning:" line and
 * the blank lines after them). A "Warning:" line that ends a read waits in
 * e->held for the line after it (buf NULL: relay it, perf is done). */
static void relay_err(struct snap_perferr *e, const char *buf, size_t n)
{
	static const char warning[] = "Warning:\n";
	char out[4096 + sizeof(warning)], shown[4 * sizeof(out)];
	size_t o = 0, i = 0;
	int dropped = 0;

	if (e->held) {
		const char *nl = buf ? memchr(buf, '\n', n) : NULL;

		e->held = 0;
		if (!buf || !lost_warning(buf, nl ? (size_t)(nl - buf) : n)) {
			memcpy(out, warning, sizeof(warning) - 1);
			o = sizeof(warning) - 1;
		}
	}
	while (buf && i < n) {
		const char *l = buf + i, *nl = memchr(l, '\n', n - i);
		size_t len = nl ? (size_t)(nl - l) : n - i, next = i + len + (nl ? 1 : 0);
		int drop = lost_warning(l, len) || (dropped && !len);

		if (!drop && len == 8 && !strncmp(l, "Warning:", 8) && nl) {
			const char *l2 = buf + next, *nl2 = memchr(l2, '\n', n - next);

			if (next == n)
				e->held = drop = 1;
			else
				drop = lost_warning(l2, nl2 ? (size_t)(nl2 - l2) : n - next);
		}
		if (!drop) {
			memcpy(out + o, l, next - i);
			o += next - i;
		}
		dropped = drop;
		i = next;
	}
	/* (escaped: perf quotes names from the file, docs/guarantees.md) */
	o = o ? snap_esc_str(shown, sizeof(shown), out, o, SNAP_ESC_NL) : 0;
	if (o && write(STDERR_FILENO, shown, o < sizeof(shown) ? o : strlen(shown)) < 0) {
		/* nowhere to show it: still kept in e->tail */
	}
}

void snap_perferr_drain(struct snap_perferr *e, int running)
{
	char buf[4096];

	while (e->fd >= 0) {
		ssize_t n = read(e->fd, buf, sizeof(buf));
		size_t keep, have;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			struct pollfd p = {.fd = e->fd, .events = POLLIN};

			if (running) /* perf still runs: what is there now */
				return;
			if (poll(&p, 1, 1000) <= 0) /* reaped: EOF comes at once */
				return;
			continue;
		}
		if (n <= 0) {
			relay_err(e, NULL, 0);
			close(e->fd);
			e->fd = -1;
			return;
		}
		relay_err(e, buf, (size_t)n);
		have = strlen(e->tail);
		keep = (size_t)n < sizeof(e->tail) - 1 ? (size_t)n : sizeof(e->tail) - 1;
		if (have + keep > sizeof(e->tail) - 1) {
			size_t drop = have + keep - (sizeof(e->tail) - 1);

			memmove(e->tail, e->tail + drop, have - drop);
			have -= drop;
		}
		memcpy(e->tail + have, buf + (size_t)n - keep, keep);
		e->tail[have + keep] = '\0';
	}
}

void snap_dlsrc_drain_err(struct snap_dlsrc *src)
{
	snap_perferr_drain(&src->perr, src->pid > 0);
}

int snap_dlsrc_load_failed(const struct snap_dlsrc *src)
{
	return strstr(src->perr.tail, "dlopen") || strstr(src->perr.tail, "dlfilter") ||
	       strstr(src->perr.tail, "filter_event"); /* a plugin perf cannot use */
}

/* Reads what fd has now (non-blocking). Returns bytes read, 0 at EOF, -EAGAIN, -errno. */
static ssize_t dlsrc_read(struct snap_dlsrc *src, int fd)
{
	ssize_t n;

	do
		n = read(fd, src->buf, DLSRC_BUF);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* Keeps what perf's real stdout has now (non-blocking), or (wait) everything up
 * to EOF, for the end. Returns 0 or -errno / -ENOMEM. */
static int dlsrc_drain_out(struct snap_dlsrc *src, int wait)
{
	while (src->out_fd >= 0) {
		ssize_t n = dlsrc_read(src, src->out_fd);
		size_t keep;

		if (n == -EAGAIN) {
			struct pollfd p = {.fd = src->out_fd, .events = POLLIN};

			if (!wait)
				return 0;
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				return -errno;
			continue;
		}
		if (n < 0)
			return (int)n;
		if (n == 0) {
			close(src->out_fd);
			src->out_fd = -1;
			break;
		}
		keep = src->outlen < SNAP_DLSRC_MAX_OUT ? SNAP_DLSRC_MAX_OUT - src->outlen : 0;
		if (keep > (size_t)n)
			keep = (size_t)n;
		src->out_dropped += (size_t)n - keep;
		if (snap_vec_reserve(&src->out, &src->outcap, src->outlen + keep, 1))
			return -ENOMEM;
		memcpy(src->out + src->outlen, src->buf, keep);
		src->outlen += keep;
	}
	return 0;
}

/* Waits until a pipe has data and takes it in. Returns 0, -EINTR or an error. */
static int dlsrc_wait(struct snap_dlsrc *src)
{
	struct pollfd p[3] = {{.fd = src->rec_fd, .events = POLLIN},
			      {.fd = src->out_fd, .events = POLLIN},
			      {.fd = src->perr.fd, .events = POLLIN}};
	ssize_t n;
	int r = snap_dlsrc_poll(p, 3, src->stall_ms ? src->stall_ms : -1, src->progress);

	if (r < 0)
		return -errno;
	if (p[2].revents)
		snap_dlsrc_drain_err(src);
	if (r == 0)
		return -SNAP_ESTALL; /* nothing for stall_ms: perf spins (close kills it) */
	if (p[1].revents) {
		int err = dlsrc_drain_out(src, 0);

		if (err < 0)
			return err;
	}
	if (!p[0].revents)
		return 0;
	n = dlsrc_read(src, src->rec_fd);
	if (n == -EAGAIN)
		return 0;
	if (n < 0)
		return (int)n;
	if (n == 0) {
		close(src->rec_fd);
		src->rec_fd = -1;
		src->rec_eof = 1;
		return 0;
	}
	return snap_dlrec_feed(&src->rd, src->buf, (size_t)n);
}

/* Reaps perf (it closed our pipe, so it is exiting). */
static void dlsrc_reap(struct snap_dlsrc *src)
{
	if (src->pid <= 0)
		return;
	while (waitpid(src->pid, &src->status, 0) < 0 && errno == EINTR)
		;
	src->pid = -1;
}

/* Reports a stream error once, naming the plugin, and makes it sticky. */
static int dlsrc_fail(struct snap_dlsrc *src, int err)
{
	const struct snap_dlrec_stats *st = snap_dlrec_stats(&src->rd);

	if (src->err)
		return src->err;
	src->err = err;
	if (err == -EINTR || err == -SNAP_ESTALL)
		return err; /* the caller says it */
	if (err != -SNAP_EPLUGIN && err != -SNAP_ETRUNC) {
		snap_log(SNAP_LOG_QUIET, "reading from perf script --dlfilter %s: %s", src->plugin,
			 snap_strerror(err));
		src->said = 1;
		return err;
	}
	if (src->rec_eof && src->pid > 0)
		dlsrc_reap(src);
	if (!st->records && !src->events)
		return err; /* nothing came at all: the caller can fall back to the text path */
	if (err == -SNAP_ETRUNC && WIFSIGNALED(src->status))
		snap_log(SNAP_LOG_QUIET,
			 "perf script died (signal %d) while running the dlfilter plugin %s, after "
			 "%llu records: no output written (try -no-dlfilter)",
			 WTERMSIG(src->status), src->plugin, (unsigned long long)st->records);
	else if (err == -SNAP_ETRUNC && WIFEXITED(src->status) && WEXITSTATUS(src->status))
		snap_log(SNAP_LOG_QUIET,
			 "perf script failed (status %d) with the dlfilter plugin %s: no output "
			 "written (try -no-dlfilter)",
			 WEXITSTATUS(src->status), src->plugin);
	else if (err == -SNAP_ETRUNC)
		snap_log(SNAP_LOG_QUIET,
			 "the dlfilter plugin %s stopped before the end of its record stream "
			 "(%llu records): no output written (try -no-dlfilter)",
			 src->plugin, (unsigned long long)st->records);
	else
		snap_log(SNAP_LOG_QUIET,
			 "bad record from the dlfilter plugin %s at stream offset %llu (a plugin "
			 "of another snaptrace version?): no output written (try -no-dlfilter)",
			 src->plugin, (unsigned long long)snap_dlrec_offset(&src->rd));
	src->said = 1;
	return err;
}

int snap_dlsrc_next(struct snap_dlsrc *src, struct snap_event *ev)
{
	int r;

	for (;;) {
		if (src->err)
			return src->err;
		if (src->draining) {
			r = snap_perfscript_next(&src->ps, ev);
			if (r > 0 && (r = snap_cfi_mark_event(&src->cfi, src->ps.names, ev)) == 0) {
				src->events++;
				return 1;
			}
			if (r < 0)
				return dlsrc_fail(src, r);
			src->draining = 0;
		}
		if (src->done)
			return 0;
		r = snap_dlrec_next(&src->rd, ev);
		if (r == 1 && (r = snap_cfi_mark_event(&src->cfi, src->rd.names, ev)) == 0) {
			src->events++;
			return 1;
		}
		if (r == SNAP_DLREC_TEXT_POINT) {
			size_t len;
			const char *text = snap_dlrec_text(&src->rd, &len);

			r = snap_perfscript_feed(&src->ps, text, len);
			if (r < 0)
				return dlsrc_fail(src, r);
			src->draining = 1;
			continue;
		}
		if (r < 0)
			return dlsrc_fail(src, r);
		if (src->rec_eof) {
			r = snap_dlrec_finish(&src->rd);
			if (r < 0)
				return dlsrc_fail(src, r);
			r = dlsrc_drain_out(src, 1);
			if (r == 0 && src->outlen) /* text perf printed around the plugin */
				r = snap_perfscript_feed(&src->ps, src->out, src->outlen);
			if (r < 0)
				return dlsrc_fail(src, r);
			if (src->out_dropped)
				snap_warn(
					"perf script printed %llu bytes more than snaptrace keeps; "
					"ignored",
					(unsigned long long)src->out_dropped);
			snap_perfscript_finish(&src->ps);
			src->done = 1;
			src->draining = 1;
			continue;
		}
		r = dlsrc_wait(src);
		if (r < 0)
			return dlsrc_fail(src, r);
	}
}

int snap_dlsrc_perf_exit(int status, int report)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (report && WIFSIGNALED(status))
		snap_log(SNAP_LOG_QUIET, "perf script was killed by signal %d (%s)%s",
			 WTERMSIG(status), strsignal(WTERMSIG(status)),
			 WTERMSIG(status) == SIGBUS
				 ? ": the perf.data file is damaged or was cut short"
				 : "");
	else if (report)
		snap_log(SNAP_LOG_QUIET, "perf script exited with status %d", WEXITSTATUS(status));
	return -SNAP_EPERF;
}

static int want_build(void *arg, const char *path, const uint8_t *id, size_t idlen)
{
	/* (the vDSO: its copy in perf's build-id cache, parse/cfi.h) */
	return path[0] == '/' || !strcmp(path, SNAP_CFI_VDSO) ? snap_cfi_want(arg, path, id, idlen)
							      : 0;
}

void snap_dlsrc_cfi_setup(struct snap_cfi *c, const char *data)
{
	struct snap_perfdata_info info;
	const char *home = getenv("HOME");
	char path[PATH_MAX];
	struct stat sb;
	int fd = data ? open(data, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;

	/* perf record --kcore writes a directory: DIR/data */
	if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		close(fd);
		fd = -1;
		if (snprintf(path, sizeof(path), "%s/data", data) < (int)sizeof(path))
			fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	}
	/* (the table is a help: a damaged one keeps the entries before the damage) */
	if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
		(void)snap_perfdata_build_ids(snap_fd_pread, &fd, want_build, c);
		/* frame-pointer chains: their frameless leaves are marked (parse/cfi.h) */
		if (snap_perfdata_probe(snap_fd_pread, &fd, &info) == 0)
			snap_cfi_set_fp_chains(c, info.callchain && !info.dwarf && !info.lbr);
	}
	if (fd >= 0)
		close(fd);
	/* perf's build-id cache: ~/.debug (perf's default; its buildid.dir setting is not read) */
	if (home && *home && snprintf(path, sizeof(path), "%s/.debug", home) < (int)sizeof(path))
		(void)snap_cfi_set_cache_dir(c, path);
}

void snap_dlsrc_log_cfi(const struct snap_cfi *c)
{
	const struct snap_cfi_stats *st = &c->st;

	if (!st->files)
		return;
	snap_info("unknown code: %" PRIu64 " call-chain frames named after the start of their "
		  "function, from the CFI of %" PRIu64 " of %" PRIu64 " DSO files (%" PRIu64
		  " frames in no function there%s)",
		  st->found, st->files - st->no_cfi, st->files, st->lookups - st->found,
		  st->over ? "; more DSOs than the cache holds" : "");
	if (st->other_build)
		snap_info("unknown code: %" PRIu64
			  " DSO files are not the build perf recorded, %" PRIu64
			  " of them found in perf's build-id cache",
			  st->other_build, st->from_cache);
}

int snap_dlsrc_close(struct snap_dlsrc *src)
{
	int err = src->err;

	if (src->rec_fd >= 0)
		close(src->rec_fd);
	if (src->out_fd >= 0)
		close(src->out_fd);
	if (src->pid > 0) {
		if (!src->done)
			kill(src->pid, SIGKILL);
		dlsrc_reap(src);
		snap_dlsrc_drain_err(src); /* perf's last words, before ours */
		if (src->done && snap_dlsrc_perf_exit(src->status, 1) < 0)
			err = -SNAP_EPERF;
	}
	snap_dlsrc_drain_err(src);
	if (src->perr.fd >= 0)
		close(src->perr.fd);
	if (!src->done && !err)
		err = -SNAP_EPERF; /* stopped early */
	snap_free(src->buf);
	snap_free(src->out);
	snap_perfscript_fini(&src->ps);
	snap_dlrec_fini(&src->rd);
	snap_dlsrc_log_cfi(&src->cfi);
	snap_cfi_fini(&src->cfi);
	dlsrc_reset(src);
	return err;
}

const struct snap_dlrec_stats *snap_dlsrc_stats(const struct snap_dlsrc *src)
{
	return snap_dlrec_stats(&src->rd);
}

/* ---- the source (source/source.h) ---- */

struct dlsrc_state {
	struct snap_dlsrc dl;
	struct snap_perfsrc_opts opts; /* for falling back to the text path (plugin NULL) */
	struct snap_strtab *names;
};

/* The plugin path ended before the plugin sent anything. Returns 1 to retry
 * on the text path (perf ended with an error status: it could not load the
 * plugin), else the error to return: perf killed by SIGINT/SIGTERM/SIGHUP is
 * an interruption (-EINTR), never "the plugin gave nothing" (that started
 * perf again and lost the request); another signal is reported. */
static int dlsrc_gave_nothing(struct dlsrc_state *src, int r)
{
	int status = src->dl.status;

	if (r != -SNAP_ETRUNC && r != -SNAP_EPLUGIN)
		return r; /* -EINTR, a stall, an I/O error: already said */
	if (src->dl.pid > 0)
		return r; /* not reaped: perf closed the pipe but lives on */
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
			return -EINTR;
		snap_log(SNAP_LOG_QUIET, "perf script was killed by signal %d (%s)%s", sig,
			 strsignal(sig),
			 sig == SIGBUS ? ": the perf.data file is damaged or was cut short" : "");
		src->dl.said = 1;
		return -SNAP_EPERF;
	}
	snap_dlsrc_drain_err(&src->dl); /* perf's message, shown; says what failed */
	if (!snap_dlsrc_load_failed(&src->dl)) {
		/* perf failed on the input, not on the plugin: running it again on the
		 * text path would only fail the same way, twice */
		snap_log(SNAP_LOG_QUIET,
			 "perf script failed (status %d) on %s before decoding "
			 "anything (perf's message is above)",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1, src->opts.data);
		src->dl.said = 1;
		return -SNAP_EPERF;
	}
	snap_warn("perf script could not load the dlfilter plugin %s (status %d); using perf "
		  "script's text output instead (-no-dlfilter skips the plugin)",
		  src->dl.plugin, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 1;
}

static int dlsrc_src_next(struct snap_source *src, struct snap_event *ev)
{
	struct dlsrc_state *d = src->impl;
	struct snap_perfsrc_opts o;
	struct snap_strtab *names;
	int r;

	r = snap_dlsrc_next(&d->dl, ev);
	if (r < 0 && (d->dl.events || snap_dlsrc_stats(&d->dl)->records))
		src->said = d->dl.said;
	if (r >= 0 || d->dl.events || snap_dlsrc_stats(&d->dl)->records)
		return r;
	/* Nothing came from the plugin at all. */
	r = dlsrc_gave_nothing(d, r);
	src->said = d->dl.said;
	if (r != 1)
		return r;
	snap_dlsrc_close(&d->dl);
	o = d->opts;
	names = d->names;
	snap_free(d);
	src->impl = NULL;
	src->ops = NULL; /* closed, unless the text path starts */
	r = snap_source_perf(src, &o, names);
	if (r < 0)
		return r;
	return src->ops->next(src, ev);
}

/* The parser's counters of perf's error lines. */
static const struct snap_perfscript_stats *dlsrc_src_stats(const struct snap_source *src)
{
	const struct dlsrc_state *d = src->impl;

	return snap_perfscript_stats(&d->dl.ps);
}

static int dlsrc_src_close(struct snap_source *src)
{
	struct dlsrc_state *d = src->impl;
	int err = snap_dlsrc_close(&d->dl);

	snap_free(d);
	src->impl = NULL;
	return err < 0 ? -SNAP_EPERF : 0;
}

static void dlsrc_src_progress(struct snap_source *src)
{
	struct dlsrc_state *d = src->impl;

	d->dl.progress = src->progress;
}

static const struct snap_source_ops dlsrc_ops = {
	.next = dlsrc_src_next,
	.stats = dlsrc_src_stats,
	.close = dlsrc_src_close,
	.set_progress = dlsrc_src_progress,
};

int snap_source_dlfilter(struct snap_source *src, const struct snap_perfsrc_opts *o,
			 struct snap_strtab *st)
{
	struct dlsrc_state *d = snap_calloc(1, sizeof(*d));
	struct snap_dlsrc_opts dl;
	int err;

	if (!d)
		return -ENOMEM;
	snap_perfsrc_dlopts(o, &dl);
	err = snap_dlsrc_open(&d->dl, &dl, st);
	if (err < 0) {
		snap_free(d);
		return err;
	}
	d->opts = *o;
	d->opts.plugin = NULL; /* borrowed for open only */
	d->names = st;
	src->ops = &dlsrc_ops;
	src->impl = d;
	src->who = "perf";
	src->busy = 1; /* perf script */
	return 0;
}
