// SPDX-License-Identifier: GPL-2.0
/*
 * Which source reads an input (source/source.h): a perf.data goes to the
 * in-process PT decoder (source/ptsrc.c) or to perf script, with the dlfilter
 * plugin (source/dlsrc.c) or for its text (source/perfsrc.c); anything else is
 * perf script text (source/textsrc.c). And what every source shares: the
 * numbering of timeless events, close.
 */
#include "source/source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/caps.h"
#include "source/perfsrc.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"

/* The same perf as run/attach use: -perf, else $SNAPTRACE_PERF, $MAGIC_TRACE_PERF_PATH. */
static const char *perf_binary(const struct snap_source_opts *o)
{
	return o->perf ? o->perf : snap_caps_perf_path();
}

/* The dlfilter plugin to decode with, or NULL for the text path; says which
 * and why at info level (-v). pc: perf's version. path (len bytes) receives
 * the plugin's path. */
static const char *pick_plugin(const struct snap_source_opts *o, const struct snap_perfcaps *pc,
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

/* A perf.data file, open on fd (closed here): the in-process decoder, else perf
 * script with the plugin or for its text. */
static int source_open_perf(struct snap_source *src, const struct snap_source_opts *o, int fd,
			    struct snap_strtab *st)
{
	char plugin[PATH_MAX];
	struct snap_perfdata_info info;
	struct snap_perfsrc_opts po;
	struct snap_perfcaps pc = {0};
	int err = snap_perfdata_probe(snap_fd_pread, &fd, &info);
	struct stat sb;
	char why[256];

	if (err >= 0 && fstat(fd, &sb) == 0 &&
	    (err = snap_perfdata_check_size(&info, (uint64_t)sb.st_size, why, sizeof(why))) < 0) {
		snap_log(SNAP_LOG_QUIET, "%s: %s; not decoded", src->name, why);
		close(fd);
		return err;
	}
	/* (a damaged data section leaves what was counted before the damage) */
	if (err >= 0)
		(void)snap_perfdata_lost(snap_fd_pread, &fd, &info, &src->lost);
	close(fd);
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
	if (info.kind == SNAP_PERFDATA_AUX && snap_source_ptdec(src, o, st) == 0)
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
	err = po.plugin ? snap_source_dlfilter(src, &po, st) : snap_source_perf(src, &po, st);
	if (err < 0) {
		snap_log(SNAP_LOG_QUIET, "cannot run %s: %s", po.perf, snap_strerror(err));
		return err;
	}
	return 0;
}

/* Opens src->name, a file or a perf record --kcore directory's data file, into
 * *fd. Returns 0, or a negative error (reported). */
static int open_file(struct snap_source *src, const char *input, int *fd)
{
	char data[PATH_MAX];
	struct stat sb;
	int err;

	/* non-blocking: a FIFO planted under the name cannot hang the open */
	*fd = open(src->name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	/* perf record --kcore writes a directory: DIR/data (perf script reads DIR) */
	if (*fd >= 0 && fstat(*fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		close(*fd);
		*fd = -1;
		if (snprintf(data, sizeof(data), "%s/data", src->name) >= (int)sizeof(data) ||
		    lstat(data, &sb) < 0 || !S_ISREG(sb.st_mode)) {
			snap_log(SNAP_LOG_QUIET,
				 "cannot read %s: is a directory (not a perf.data file, nor "
				 "a perf record --kcore directory with a data file)",
				 src->name);
			return -EISDIR;
		}
		*fd = open(data, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	}
	if (*fd < 0) {
		err = -errno;
		snap_log(SNAP_LOG_QUIET, "cannot read %s: %s%s", src->name, strerror(errno),
			 input ? "" : " (record one with 'snaptrace run', or name the input)");
		return err;
	}
	return 0;
}

/* Reads a stream's first bytes into magic (got of its 8 already there):
 * perf.data through a pipe is refused (perf script needs a file it can seek).
 * Returns 0, or -SNAP_EFORMAT (reported; fd closed). */
static int sniff_stream(struct snap_source *src, int fd, char *magic, size_t *got)
{
	while (*got < 8) {
		ssize_t n = read(fd, magic + *got, 8 - *got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*got += (size_t)n;
	}
	if (!snap_perfdata_is_magic(magic, *got))
		return 0;
	if (fd == STDIN_FILENO)
		snap_log(SNAP_LOG_QUIET, "stdin holds a perf.data file: give its name instead "
					 "(perf script needs a file, not a pipe)");
	else
		snap_log(SNAP_LOG_QUIET,
			 "%s is a pipe holding a perf.data file: give the file's name "
			 "instead (perf script needs a file, not a pipe)",
			 src->name);
	if (fd > STDIN_FILENO)
		close(fd);
	return -SNAP_EFORMAT;
}

/* The opened input: a perf.data, or text. */
static int source_open_fd(struct snap_source *src, const struct snap_source_opts *o,
			  const char *input, struct snap_strtab *st)
{
	char magic[8];
	struct stat sb;
	size_t got = 0;
	int fd, piped = 0, err;

	if (!strcmp(src->name, "-")) {
		src->name = "stdin";
		fd = STDIN_FILENO;
		piped = 1;
		if (o->nstdin_head <= sizeof(magic) && o->stdin_head) {
			memcpy(magic, o->stdin_head, o->nstdin_head);
			got = o->nstdin_head;
		}
	} else {
		if ((err = open_file(src, input, &fd)) < 0)
			return err;
		if (fstat(fd, &sb) == 0 && !S_ISREG(sb.st_mode)) {
			/* a FIFO or a pipe (<(cat ...)): read as a stream, blocking */
			piped = 1;
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		} else if (pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
			   snap_perfdata_is_magic(magic, sizeof(magic))) {
			return source_open_perf(src, o, fd, st);
		}
	}
	if (piped && (err = sniff_stream(src, fd, magic, &got)) < 0)
		return err;
	err = snap_source_text(src, fd, magic, got, st);
	if (err < 0) /* (out of memory: open says why an input failed) */
		snap_log(SNAP_LOG_QUIET, "cannot read %s: %s", src->name, snap_strerror(err));
	return err;
}

int snap_source_open(struct snap_source *src, const struct snap_source_opts *o, const char *input,
		     struct snap_strtab *st)
{
	int err;

	memset(src, 0, sizeof(*src));
	src->name = input ? input : "perf.data";
	err = source_open_fd(src, o, input, st);
	if (err < 0)
		snap_source_close(src);
	return err;
}

int snap_source_next(struct snap_source *src, struct snap_event *ev)
{
	int r = src->ops->next(src, ev);

	if (r > 0 && src->timeless) {
		ev->time = ++src->seq;
		ev->has_time = 1;
	}
	return r;
}

int snap_source_fill(struct snap_source *src, struct snap_event *ev, size_t n)
{
	int r = src->ops->fill ? src->ops->fill(src, ev, n) : src->ops->next(src, ev);

	for (int i = 0; src->timeless && i < r; i++) {
		ev[i].time = ++src->seq;
		ev[i].has_time = 1;
	}
	return r;
}

const struct snap_perfscript_stats *snap_source_stats(const struct snap_source *src)
{
	return src->ops ? src->ops->stats(src) : NULL;
}

void snap_source_set_progress(struct snap_source *src, struct snap_progress *prog)
{
	src->progress = prog;
	if (src->ops && src->ops->set_progress)
		src->ops->set_progress(src);
}

int snap_source_close(struct snap_source *src)
{
	int err = src->ops ? src->ops->close(src) : 0;

	memset(src, 0, sizeof(*src));
	return err;
}
