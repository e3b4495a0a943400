// SPDX-License-Identifier: GPL-2.0
/*
 * snaptrace report [flags] [FILE]: latency figures of a trace in the
 * terminal (docs/report.md). FILE is an FXT trace (read once, record by
 * record, into report/), or a perf.data / perf script text decoded in
 * memory with report/ as the only timeline consumer (no FXT written).
 * Also the -report tap of run, attach and decode.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "cli/pipeline.h"
#include "cli/reportcli.h"
#include "report/format.h"
#include "report/fxtin.h"
#include "report/report.h"
#include "report/rtl.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/log.h"
#include "util/vec.h"
#include "write/sink.h"

#define REPORT_MAX_DATA (8ull << 30) /* 8 GiB of FXT after decompression */

enum {
	OPT_TOP,
	OPT_SORT,
	OPT_THREAD,
	OPT_WINDOW,
	OPT_FUNCTION,
	OPT_FOLDED,
	OPT_JSON,
	OPT_EXACT_LIMIT,
	OPT_QUIET,
};

static const struct snap_opt report_opts[] = {
	[OPT_TOP] = {"top", NULL, "N", "functions in the table (default 20; 0 = all)"},
	[OPT_SORT] = {"sort", NULL, "KEY", "self (default), total, calls, max or p99"},
	[OPT_THREAD] = {"thread", NULL, "TID", "only this thread"},
	[OPT_WINDOW] = {"window", NULL, "START,END",
			"only calls inside this time range from the trace start (10ms,25.5ms)"},
	[OPT_FUNCTION] = {"function", NULL, "NAME",
			  "NAME's duration histogram and its 10 slowest calls (NAME as in the "
			  "trace or in the table)"},
	[OPT_FOLDED] = {"folded", NULL, "FILE",
			"write folded stacks 'comm;outer;inner;leaf SELF_NS' (flamegraph.pl; - = "
			"stdout)"},
	[OPT_JSON] = {"json", NULL, NULL, "print the figures as JSON (schema: docs/report.md)"},
	[OPT_EXACT_LIMIT] = {"exact-limit", NULL, "N", NULL}, /* tests: sketch past N calls */
	[OPT_QUIET] = {"quiet", "q", NULL, "errors only (decode messages of perf.data input)"},
	{NULL, NULL, NULL, NULL},
};

static const char report_usage[] = "snaptrace report [flags] [FILE]";
static const char report_desc[] =
	"Prints latency figures of a trace in the terminal: the top 20 functions by self time\n"
	"(calls, total, self, mean, p50, p90, p99, max), then per thread the busy time and\n"
	"slices, then the time span covered and the number of slices. The figures are exact for\n"
	"an Intel PT trace (every call is in it); a trace from stack samples (every machine\n"
	"without PT) gives estimates, accurate to about a sample period, and says so (ESTIMATED).\n"
	"FILE is an FXT trace (.fxt or .fxt.gz, snaptrace's or magic-trace's; default\n"
	"trace.fxt.gz; - = stdin), or a perf.data or perf script text file, decoded in memory\n"
	"(no trace written). Every slice is a call and counts in calls and percentiles, but a\n"
	"function's total is the time it was on the stack at least once, so recursion counts\n"
	"once (as perf's children); self time is the time not covered by child slices (that of\n"
	"an inlined frame, a row NAME [inlined], goes to the function it was inlined into, as\n"
	"in perf report); in a sampled trace it is the periods of the samples whose innermost\n"
	"frame the function was (samples x period, as perf report counts it; -folded too),\n"
	"but [off-CPU] slices keep their durations. Calls cut by the snapshot's edges (begun\n"
	"before it, still open at its end, at a decode error) are excluded and counted.\n"
	"-function takes the trace's name or the table's (shortened names are unique). With\n"
	"-folded - the folded stacks alone go to stdout, the tables to stderr.\n"
	"Times: a number and a unit (ns, us, ms, s), e.g. -window 1.5ms,20ms.\n"
	"`snaptrace run -report -- PROG` (and attach, decode) prints the same report after\n"
	"writing the trace.";

struct rcli {
	struct snap_report_opts ro;
	struct snap_report_fmt fmt;
	const char *function; /* -function NAME */
	const char *folded;   /* -folded FILE */
	int json;
	int status;
	int have_report;
	struct snap_report r;
	struct snap_report_tl tl;
};

static int usage(const char *val, const char *flag, const char *hint)
{
	fprintf(stderr, "snaptrace report: bad %s '%s' (%s)\n", flag, val, hint);
	return 2;
}

/* Parses "1.5ms" into ns. Returns 0 or -1. */
static int parse_time(const char *s, uint64_t *out)
{
	static const struct {
		const char *u;
		double mul;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	char *end;
	double v;

	while (*s == ' ')
		s++;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -1;
	while (*end == ' ')
		end++;
	if (!*end) {
		if (v != 0)
			return -1; /* a unit is required, except for 0 */
		*out = 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].u)) {
			v *= units[i].mul;
			if (v >= 1.8e19)
				return -1;
			*out = (uint64_t)(v + 0.5);
			return 0;
		}
	return -1;
}

static int parse_window(const char *val, struct snap_report_opts *o)
{
	const char *comma = strchr(val, ',');
	char start[64];

	if (!comma || (size_t)(comma - val) >= sizeof(start))
		return -1;
	memcpy(start, val, (size_t)(comma - val));
	start[comma - val] = '\0';
	if (parse_time(start, &o->win_start) < 0)
		return -1;
	if (!comma[1])
		o->win_end = UINT64_MAX; /* "10ms," = to the end */
	else if (parse_time(comma + 1, &o->win_end) < 0)
		return -1;
	if (o->win_end < o->win_start)
		return -1;
	o->has_window = 1;
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* A -function or -thread the trace does not have: one line naming the close
 * matches. Returns 1 (the exit status) if so, else 0. */
static int say_missing(struct rcli *c)
{
	struct snap_report *r = &c->r;

	if (r->thread_missing) {
		int32_t tid[5];
		size_t n = snap_report_close_threads(r, r->o.tid, tid, 5);

		fprintf(stderr, "snaptrace report: no thread %" PRId64 " with slices in the trace",
			r->o.tid);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "%s%" PRId32, i ? ", " : "; its threads include ", tid[i]);
		fputs(n ? " (the thread table lists them)\n" : " (the trace has no other thread)\n",
		      stderr);
		return 1;
	}
	if (r->function_missing) {
		uint32_t fn[5];
		int n = snap_report_close_functions(r, c->function, fn, 5);

		if (n < 0) {
			fputs("snaptrace report: out of memory\n", stderr);
			return 1;
		}
		fprintf(stderr, "snaptrace report: no function '%s' in the trace", c->function);
		for (int i = 0; i < n; i++) {
			const struct snap_report_fn *f = &r->fn[fn[i]];
			const char *full = snap_strtab_get(r->st, fn[i]);

			fprintf(stderr, "%s'%s'", i ? ", " : "; close: ",
				strlen(full) > 60 && f->label ? snap_strtab_get(r->st, f->label)
							      : full);
		}
		fputs(n ? "\n"
			: " (-top 0 lists every function; -function takes the trace's "
			  "name or the table's)\n",
		      stderr);
		return 1;
	}
	return 0;
}

/* Prints what was asked (text or JSON, -function, -folded). With -folded -
 * stdout holds the folded stacks alone and the tables go to stderr. Returns
 * the exit status. */
static int report_emit(struct rcli *c)
{
	struct snap_rbuf b;
	int status = 0;
	FILE *out = c->folded && !strcmp(c->folded, "-") ? stderr : stdout;

	if (say_missing(c))
		return 1;
	memset(&b, 0, sizeof(b));
	if (c->json)
		snap_report_json(&c->r, &c->fmt, &b);
	else
		snap_report_text(&c->r, &c->fmt, &b);
	if (!c->json && c->ro.function)
		snap_report_function(&c->r, &b);
	if (b.err) {
		fputs("snaptrace report: out of memory\n", stderr);
		snap_rbuf_fini(&b);
		return 1;
	}
	fwrite(b.p, 1, b.len, out);
	if (fflush(out) != 0) {
		fprintf(stderr, "snaptrace report: cannot write the output: %s\n", strerror(errno));
		status = 1;
	}
	snap_rbuf_fini(&b);
	if (c->folded) {
		int err = 0;

		memset(&b, 0, sizeof(b));
		snap_report_folded(&c->r, &b);
		if (b.err) {
			err = -ENOMEM;
		} else if (strcmp(c->folded, "-")) {
			/* a file: as -o is (write/sink.h: replaced whole, never through
			 * another user's link in /tmp; docs/guarantees.md) */
			struct snap_sink fs;

			err = snap_sink_open(&fs, c->folded);
			if (err == 0) {
				snap_sink_write(&fs, b.p, b.len);
				err = snap_sink_close(&fs);
			}
		} else if ((b.len && fwrite(b.p, 1, b.len, stdout) != b.len) || fflush(stdout)) {
			err = errno ? -errno : -EIO;
		}
		if (err < 0) {
			fprintf(stderr, "snaptrace report: cannot write %s: %s\n", c->folded,
				b.err && !strcmp(c->folded, "-") ? "out of memory"
								 : snap_strerror(err));
			status = 1;
		}
		snap_rbuf_fini(&b);
	}
	return status;
}

/* Makes the report over st and resolves -function. Returns 0 or -ENOMEM. */
static int rcli_start(struct rcli *c, struct snap_strtab *st)
{
	int err;

	if (c->function) {
		uint32_t id;

		if ((err = snap_strtab_intern_id(st, c->function, &id)) < 0)
			return err;
		c->ro.function = id;
	}
	err = snap_report_init(&c->r, st, &c->ro);
	c->have_report = 1; /* fini also releases a failed init */
	return err < 0 ? err : snap_report_tl_init(&c->tl, &c->r);
}

static void rcli_end(struct rcli *c)
{
	if (c->have_report)
		snap_report_fini(&c->r);
	c->have_report = 0;
}

/* ---- the decode tap (perf.data / perf script input, and -report) ---- */

static struct snap_timeline *tap_open(void *ctx, struct snap_strtab *st)
{
	struct rcli *c = ctx;

	if (rcli_start(c, st) < 0) {
		rcli_end(c); /* tap_close is not called when open fails */
		return NULL;
	}
	return &c->tl.base;
}

static void tap_close(void *ctx, int err)
{
	struct rcli *c = ctx;

	if (err >= 0 && c->have_report) {
		if (snap_report_finish(&c->r) < 0) {
			fputs("snaptrace report: out of memory\n", stderr);
			c->status = 1;
		} else {
			c->status = report_emit(c);
		}
	} else {
		c->status = 1;
	}
	rcli_end(c);
}

/* ---- FXT input ---- */

#define REPORT_CHUNK (1u << 20) /* trace bytes inflated and fed at a time */

/* Where the trace's bytes come from: a file through zlib's gzread (plain or
 * gzip), or stdin, whose first bytes were read to tell what it holds (a pipe
 * cannot give them back): those, then the rest, inflated here if gzip. */
struct fxtsrc {
	gzFile gz;
	int fd; /* stdin */
	unsigned char head[8];
	size_t nhead, hpos;
	int gzip, zlive, zend, eof;
	z_stream z;
	unsigned char *zin;
};

static ssize_t raw_read(struct fxtsrc *s, unsigned char *buf, size_t cap)
{
	ssize_t n;

	if (s->hpos < s->nhead) {
		size_t k = s->nhead - s->hpos < cap ? s->nhead - s->hpos : cap;

		memcpy(buf, s->head + s->hpos, k);
		s->hpos += k;
		return (ssize_t)k;
	}
	do
		n = read(s->fd, buf, cap);
	while (n < 0 && errno == EINTR);
	return n;
}

/* Up to cap trace bytes into buf: the count, 0 at the end, -1 on an error
 * (*why says it). */
static int src_read(struct fxtsrc *s, unsigned char *buf, unsigned cap, const char **why)
{
	int zerr;

	if (s->gz) {
		int n = gzread(s->gz, buf, cap);

		if (n < 0) {
			const char *msg = gzerror(s->gz, &zerr);

			/* zlib names the file "<fd:N>" (gzdopen): the path is said already */
			if (!strncmp(msg, "<fd:", 4) && strstr(msg, ">: "))
				msg = strstr(msg, ">: ") + 3;
			*why = zerr == Z_ERRNO ? strerror(errno) : msg;
		}
		return n;
	}
	if (!s->gzip) {
		ssize_t n = raw_read(s, buf, cap);

		if (n < 0)
			*why = strerror(errno);
		return (int)n;
	}
	s->z.next_out = buf;
	s->z.avail_out = cap;
	while (s->z.avail_out == cap && !s->eof) {
		if (!s->z.avail_in) {
			ssize_t n = raw_read(s, s->zin, REPORT_CHUNK);

			if (n < 0) {
				*why = strerror(errno);
				return -1;
			}
			if (n == 0) {
				s->eof = 1;
				break;
			}
			s->z.next_in = s->zin;
			s->z.avail_in = (uInt)n;
		}
		if (s->zend) { /* another gzip member follows */
			inflateReset(&s->z);
			s->zend = 0;
		}
		zerr = inflate(&s->z, Z_NO_FLUSH);
		if (zerr == Z_STREAM_END)
			s->zend = 1;
		else if (zerr != Z_OK && zerr != Z_BUF_ERROR) {
			*why = s->z.msg ? s->z.msg : "bad gzip data";
			return -1;
		}
	}
	return (int)(cap - s->z.avail_out);
}

/* After the end: did a gzip stream stop in the middle? */
static int src_truncated(struct fxtsrc *s)
{
	int zerr = Z_OK;

	if (s->gz)
		gzerror(s->gz, &zerr);
	else if (s->gzip && !s->zend)
		zerr = Z_BUF_ERROR;
	return zerr != Z_OK;
}

static void src_close(struct fxtsrc *s)
{
	if (s->gz)
		gzclose(s->gz);
	if (s->zlive)
		inflateEnd(&s->z);
	snap_free(s->zin);
}

/* Opens path ("-": stdin, whose first bytes are in head). Returns 0 or the
 * exit status (the problem printed). */
static int src_open(struct fxtsrc *s, const char *path, const unsigned char *head, size_t nhead)
{
	int fd;

	memset(s, 0, sizeof(*s));
	if (!strcmp(path, "-")) {
		s->fd = STDIN_FILENO;
		memcpy(s->head, head, nhead);
		s->nhead = nhead;
		s->gzip = nhead >= 2 && head[0] == 0x1f && head[1] == 0x8b;
		if (s->gzip) {
			if (!(s->zin = snap_malloc(REPORT_CHUNK)) ||
			    inflateInit2(&s->z, 15 + 32) != Z_OK) {
				snap_free(s->zin);
				fputs("snaptrace report: out of memory\n", stderr);
				return 1;
			}
			s->zlive = 1;
		}
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		fprintf(stderr, "snaptrace report: cannot open %s: %s%s\n", path, strerror(e),
			e == ENOENT ? " (give a trace file, or make one with snaptrace run)" : "");
		return 1;
	}
	if (!(s->gz = gzdopen(fd, "rb"))) {
		close(fd);
		fputs("snaptrace report: out of memory\n", stderr);
		return 1;
	}
	gzbuffer(s->gz, 1 << 17);
	return 0;
}

/* Streams FILE (plain or gzip) piece by piece through snap_report_fxt_feed
 * into c->r: memory is one piece plus the reader's tables, never the whole
 * decompressed trace. The file is read to its end even after an FXT error so
 * that a bad gzip stream is reported first, as when it was read whole.
 * Returns the exit status (the problem printed). */
static int stream_fxt(struct rcli *c, const char *path, const unsigned char *head, size_t nhead)
{
	struct snap_report_fxtstream fs;
	struct snap_report_fxtin in;
	struct fxtsrc src;
	unsigned char *buf;
	uint64_t len = 0;
	int err;
	const char *name = strcmp(path, "-") ? path : "stdin";

	if ((err = src_open(&src, path, head, nhead)) != 0)
		return err;
	buf = snap_malloc(REPORT_CHUNK);
	err = buf ? snap_report_fxt_begin(&fs, &c->r, &in) : -ENOMEM;
	for (;;) {
		const char *why = "";
		int n;

		if (err == -ENOMEM)
			break;
		n = src_read(&src, buf, REPORT_CHUNK, &why);
		if (n < 0) {
			fprintf(stderr, "snaptrace report: %s: cannot read: %s\n", name, why);
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > REPORT_MAX_DATA) {
			fprintf(stderr, "snaptrace report: %s: over 8 GiB of trace data\n", name);
			goto fail;
		}
		if (!err)
			err = snap_report_fxt_feed(&fs, buf, (size_t)n);
	}
	if (err != -ENOMEM) {
		/* gzread stops quietly at a truncated gzip stream */
		if (src_truncated(&src)) {
			fprintf(stderr, "snaptrace report: %s: bad gzip data (truncated?)\n", name);
			goto fail;
		}
		if (len == 0) {
			fprintf(stderr, "snaptrace report: %s: empty file, not a trace\n", name);
			goto fail;
		}
	}
	src_close(&src);
	snap_free(buf);
	if (buf)
		err = snap_report_fxt_end(&fs);
	if (err == -ENOMEM) {
		fputs("snaptrace report: out of memory\n", stderr);
		return 1;
	}
	if (err < 0) {
		fprintf(stderr, "snaptrace report: %s: %s\n", name, in.fatal);
		return 1;
	}
	if (in.bad)
		fprintf(stderr,
			"snaptrace report: %s: warning: skipped %" PRIu64
			" malformed record(s), first #%" PRIu64 ": %s\n",
			name, in.bad, in.first_bad, in.why);
	return 0;
fail:
	src_close(&src);
	if (buf)
		snap_report_fxt_end(&fs);
	snap_free(buf);
	return 1;
}

static int report_fxt(struct rcli *c, const char *path, const unsigned char *head, size_t nhead)
{
	struct snap_strtab st;
	int status;

	snap_strtab_init(&st);
	if (rcli_start(c, &st) < 0) {
		fputs("snaptrace report: out of memory\n", stderr);
		status = 1;
	} else {
		status = stream_fxt(c, path, head, nhead);
	}
	if (!status && snap_report_finish(&c->r) < 0) {
		fputs("snaptrace report: out of memory\n", stderr);
		status = 1;
	}
	if (!status)
		status = report_emit(c);
	rcli_end(c);
	snap_strtab_fini(&st);
	return status;
}

/* Do the first bytes of a file say FXT (plain, or gzip: a compressed FXT)? */
static int fxt_magic(const unsigned char *head, size_t n)
{
	if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b)
		return 1;
	return n >= 8 && !memcmp(head, "\x10\x00\x04\x46\x78\x54\x16\x00", 8);
}

/* What FILE is: 1 FXT (plain or gzip), 0 something perf (perf.data or text).
 * For stdin ("-") its first bytes are read into head (*nhead of them): they
 * go to whichever reader takes it. */
static int is_fxt(const char *path, unsigned char head[8], size_t *nhead)
{
	ssize_t n;
	int fd;

	size_t len = strlen(path);

	*nhead = 0;
	if (!strcmp(path, "-")) {
		while (*nhead < 8) {
			n = read(STDIN_FILENO, head + *nhead, 8 - *nhead);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			*nhead += (size_t)n;
		}
		return fxt_magic(head, *nhead);
	}
	if ((len >= 4 && !strcmp(path + len - 4, ".fxt")) ||
	    (len >= 7 && !strcmp(path + len - 7, ".fxt.gz")))
		return 1; /* by its name, whatever it holds: FXT errors then */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 1; /* let stream_fxt say why */
	n = read(fd, head, 8);
	close(fd);
	return fxt_magic(head, n > 0 ? (size_t)n : 0);
}

static int report_perf(struct rcli *c, const char *path, const unsigned char *head, size_t nhead)
{
	struct snap_decode_opts o;
	struct snap_decode_tap tap = {tap_open, tap_close, c, 1};

	memset(&o, 0, sizeof(o));
	o.input = path;
	o.stdin_head = head; /* stdin: what is_fxt read of it */
	o.nstdin_head = nhead;
	o.tap = &tap;
	c->status = 1;
	if (snap_decode_run(&o) < 0)
		return 1;
	return c->status;
}

int snap_cmd_report(int argc, char **argv)
{
	struct snap_optparse p;
	struct rcli c;
	const char *val, *path = NULL;
	uint64_t v;
	struct stat sb;
	int k, top_set = 0;

	memset(&c, 0, sizeof(c));
	c.fmt.top = 20;
	snap_optparse_init(&p, "report", argc - 1, argv + 1);
	while ((k = snap_opt_next(&p, report_opts, &val)) != SNAP_OPT_DONE) {
		switch (k) {
		case SNAP_OPT_HELP:
			snap_opt_help(stdout, report_usage, report_desc, report_opts);
			return 0;
		case SNAP_OPT_ERROR:
			return 2;
		case SNAP_OPT_DASHDASH:
			if (p.i < p.argc && !path)
				path = p.argv[p.i++];
			if (p.i < p.argc)
				goto extra;
			goto parsed;
		case SNAP_OPT_POSITIONAL:
			if (path)
				goto extra;
			path = val;
			break;
		case OPT_TOP:
			if (parse_u64(val, &v) < 0 || v > SIZE_MAX)
				return usage(val, "-top", "a count, e.g. 20; 0 = all");
			c.fmt.top = (size_t)v;
			top_set = 1;
			break;
		case OPT_SORT:
			if (snap_report_sort_parse(val, &c.fmt.sort) < 0)
				return usage(val, "-sort", "self, total, calls, max or p99");
			break;
		case OPT_THREAD:
			if (parse_u64(val, &v) < 0 || v > INT32_MAX)
				return usage(val, "-thread",
					     "a thread id, as the report lists them");
			c.ro.has_thread = 1;
			c.ro.tid = (int64_t)v;
			break;
		case OPT_WINDOW:
			if (parse_window(val, &c.ro) < 0)
				return usage(
					val, "-window",
					"want START,END: two times from the trace start, each "
					"with a unit ns, us, ms or s, END not before START, e.g. "
					"0,1.5ms; an empty END, as in 2ms, runs to the end");
			break;
		case OPT_FUNCTION:
			c.function = val;
			break;
		case OPT_FOLDED:
			c.folded = val;
			c.ro.folded = 1;
			break;
		case OPT_JSON:
			c.json = 1;
			break;
		case OPT_EXACT_LIMIT:
			if (parse_u64(val, &v) < 0 || v == 0)
				return usage(val, "-exact-limit", "a positive count");
			c.ro.exact_limit = v;
			break;
		case OPT_QUIET:
			snap_log_level = SNAP_LOG_QUIET;
			break;
		default:
			return 2;
		}
	}
parsed:
	if (!path)
		path = "trace.fxt.gz";
	if (strcmp(path, "-") && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "snaptrace report: %s is a directory (give a trace file)\n", path);
		return 1;
	}
	c.fmt.source = strcmp(path, "-") ? path : "stdin";
	if (c.json && !top_set)
		c.fmt.top = 0; /* JSON lists every function unless -top says otherwise */
	if (c.folded && !strcmp(c.folded, "-") && c.json) {
		fputs("snaptrace report: -json and -folded - both write stdout: give -folded a "
		      "FILE\n",
		      stderr);
		return 2;
	}
	{
		unsigned char head[8];
		size_t nhead;

		return is_fxt(path, head, &nhead) ? report_fxt(&c, path, head, nhead)
						  : report_perf(&c, path, head, nhead);
	}
extra:
	fprintf(stderr, "snaptrace report: one FILE only (usage: %s)\n", report_usage);
	return 2;
}

/* ---- -report of run, attach and decode ---- */

static struct rcli tap_cli;
static struct snap_decode_tap tap_default = {tap_open, tap_close, &tap_cli, 0};

const struct snap_decode_tap *snap_report_tap(const char *source)
{
	memset(&tap_cli, 0, sizeof(tap_cli));
	tap_cli.fmt.top = 20;
	tap_cli.fmt.source = source;
	return &tap_default;
}

int snap_report_tap_status(void)
{
	return tap_cli.status;
}
