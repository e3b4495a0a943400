// SPDX-License-Identifier: GPL-2.0
/*
 * snaptrace dump [-check | -tree] [-all] FILE: prints an FXT trace (plain or
 * gzip) one record a line, as a tree of slices (write/fxttree), or validates it. The file is streamed (inflated piece
 * by piece) through the reader in write/fxtread: the FXT magic is checked on
 * the first bytes, and memory is bounded by the tables and one record (with
 * -check, also by the nesting depth and a constant: fxtcheck spills sorted runs
 * to a temporary file), not by the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/vec.h"
#include "write/fxtcheck.h"
#include "write/fxtdesc.h"
#include "write/fxtread.h"
#include "write/fxttree.h"

static const struct snap_opt dump_opts[] = {
	{"check", NULL, NULL, "validate instead of printing (records, refs, begin/end nesting)"},
	{"all", "a", NULL, "print every record (strings, threads, metadata), not only events"},
	{"tree", NULL, NULL, "print each thread's slices by start time, indented by depth"},
	{NULL, NULL, NULL, NULL},
};

#define DUMP_STR_(x) #x
#define DUMP_STR(x)  DUMP_STR_(x)

static const char dump_usage[] = "snaptrace dump [-check | -tree] [-all] FILE (- = stdin)";
static const char dump_desc[] =
	"Prints an FXT trace (plain or gzip-compressed) as text, one record a line:\n"
	"events (begin, end, complete, counter, ...) and process/thread names by default,\n"
	"every record with -all. Times are in ticks (ns for snaptrace traces), e.g.\n"
	"  begin ts=1000 pid=42 tid=43 name=\"main\" args={address=0x401000, symbol=\"main\"}\n"
	"  end ts=2000 pid=42 tid=43 name=\"main\"\n"
	"  thread koid=43 process=42 name=\"prog [pid=42] [tid=43]\"\n"
	"With -check, validates the trace instead, as Perfetto will read it: every record\n"
	"well-formed, string and thread refs defined, valid times, and per thread (sorted\n"
	"by time) every end closing an open begin in stack order, no slice outlasting its\n"
	"parent, every begin ended. Slices deeper than " DUMP_STR(
		SNAP_FXTCHECK_MAX_DEPTH) ", which Perfetto drops, give a\n"
					 "warning. It prints 'ok: ...' or the first problem with "
					 "its record number (exit\n"
					 "status 1). With -tree, prints per thread (in order of "
					 "appearance) its slices\n"
					 "sorted by start time, indented two spaces per depth: "
					 "start tick, +duration\n"
					 "(+? if never ended), name; it keeps every slice in "
					 "memory. E.g.\n"
					 "  thread pid=42 tid=43 \"prog [pid=42] [tid=43]\"\n"
					 "    1000 +1000 main\n"
					 "      1200 +300 foo\n"
					 "Unreadable, truncated or non-FXT input also gives exit "
					 "status 1.";

#define DUMP_IN_CHUNK  (256u << 10) /* bytes read from the file at a time */
#define DUMP_OUT_CHUNK (1u << 20)   /* bytes inflated at a time */

/* Prints one record line, growing the line buffer as needed. */
static int dump_print(const struct snap_fxtread_rec *rec, char **line, size_t *cap)
{
	size_t need = snap_fxtread_desc(rec, *line, *cap);

	if (need >= *cap) {
		if (snap_vec_reserve(line, cap, need + 1, 1) < 0)
			return -ENOMEM;
		snap_fxtread_desc(rec, *line, *cap);
	}
	fputs(*line, stdout);
	putchar('\n');
	return 0;
}

static void dump_problem(const char *path, const struct snap_fxtread_rec *rec, const char *why)
{
	fprintf(stderr, "snaptrace dump: %s: record #%" PRIu64 " (offset %" PRIu64 "): %s\n", path,
		rec->index, rec->off, why);
}

/* The walk over a trace that arrives in pieces: prints it, or checks it. */
struct dump_walk {
	const char *path;
	int check, all, tree;
	struct snap_fxtread r;
	struct snap_fxtcheck c;
	struct snap_fxttree t;
	char *line;
	size_t cap;
	uint64_t bytes; /* trace bytes fed */
	int status;	/* 0, or 1 once a problem was reported */
};

/* Takes every complete record fed so far. Returns 0, or 1 after a problem. */
static int dump_drain(struct dump_walk *w)
{
	struct snap_fxtread_rec rec;
	int err;

	while (!w->status && (err = snap_fxtread_next(&w->r, &rec)) != 0) {
		if (err == SNAP_FXTREAD_MORE)
			break;
		if (err < 0 && err != -ENOMEM) {
			dump_problem(w->path, &rec, snap_fxtread_why(&w->r));
			w->status = 1;
		} else if (err < 0) {
			fprintf(stderr, "snaptrace dump: out of memory\n");
			w->status = 1;
		} else if (w->check) {
			err = snap_fxtcheck_feed(&w->c, &rec);
			if (err == -SNAP_EPARSE || err == -ENOMEM) {
				dump_problem(w->path, &rec,
					     err == -ENOMEM ? "out of memory" : w->c.why);
				w->status = 1;
			} else if (err < 0) { /* the checker's temporary file */
				fprintf(stderr, "snaptrace dump: %s\n", w->c.why);
				w->status = 1;
			}
		} else if (w->tree) {
			if (snap_fxttree_feed(&w->t, &rec) < 0) {
				fprintf(stderr, "snaptrace dump: out of memory\n");
				w->status = 1;
			}
		} else if ((w->all || snap_fxtread_is_default(&rec)) &&
			   dump_print(&rec, &w->line, &w->cap) < 0) {
			fprintf(stderr, "snaptrace dump: out of memory\n");
			w->status = 1;
		}
	}
	return w->status;
}

/* Feeds len trace bytes and takes the records they complete. */
static int dump_feed(struct dump_walk *w, const unsigned char *p, size_t len)
{
	if (w->status || !len)
		return w->status;
	w->bytes += len;
	if (snap_fxtread_feed(&w->r, p, len) < 0) {
		fprintf(stderr, "snaptrace dump: out of memory\n");
		return w->status = 1;
	}
	return dump_drain(w);
}

/* Reads up to len bytes (fewer only at the end). Returns the count or -errno. */
static ssize_t dump_read(int fd, unsigned char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Inflates the gzip file fd (one or more members; inb holds its first inlen
 * bytes) piece by piece into the walk, which stops at the first problem (a
 * file without the FXT magic stops after its first inflated bytes). Returns 0,
 * or 1 after printing the problem. */
static int dump_gunzip(struct dump_walk *w, int fd, unsigned char *inb, size_t inlen)
{
	z_stream zs;
	unsigned char *out = snap_malloc(DUMP_OUT_CHUNK);
	int zr = Z_OK, err = 0, in_eof = inlen < DUMP_IN_CHUNK;
	int clean = 0; /* the last member ended and nothing came after it */

	memset(&zs, 0, sizeof(zs));
	if (!out || inflateInit2(&zs, 15 + 16) != Z_OK) {
		snap_free(out);
		fprintf(stderr, "snaptrace dump: out of memory\n");
		return 1;
	}
	zs.next_in = inb;
	zs.avail_in = (uInt)inlen;
	while (!err && !w->status) {
		if (zs.avail_in == 0 && !in_eof) {
			ssize_t n = dump_read(fd, inb, DUMP_IN_CHUNK);

			if (n < 0) {
				err = (int)n;
				break;
			}
			in_eof = (size_t)n < DUMP_IN_CHUNK;
			zs.next_in = inb;
			zs.avail_in = (uInt)n;
		}
		if (zs.avail_in == 0 && in_eof)
			break;
		zs.next_out = out;
		zs.avail_out = DUMP_OUT_CHUNK;
		zr = inflate(&zs, Z_NO_FLUSH);
		clean = zr == Z_STREAM_END;
		if (dump_feed(w, out, DUMP_OUT_CHUNK - zs.avail_out))
			break;
		if (zr == Z_STREAM_END && (zs.avail_in || !in_eof))
			inflateReset(&zs); /* another gzip member may follow */
		else if (zr == Z_STREAM_END)
			break;
		else if (zr != Z_OK && zr != Z_BUF_ERROR)
			err = -SNAP_EPARSE;
	}
	inflateEnd(&zs);
	snap_free(out);
	if (w->status)
		return 1;
	if (!err && !clean)
		err = -SNAP_ETRUNC;
	if (err < 0) {
		fprintf(stderr, "snaptrace dump: %s: bad gzip data: %s\n", w->path,
			err == -SNAP_ETRUNC ? "the compressed stream is truncated"
					    : snap_strerror(err));
		return 1;
	}
	return 0;
}

/* Streams FILE (gunzipping it if it starts with 1f 8b) through the walk:
 * memory is the reader's tables and one record, plus -check's per-event
 * entries, never the whole file. Returns 0 or 1 (problem printed). */
static int dump_file(struct dump_walk *w)
{
	unsigned char *in;
	struct stat sb;
	ssize_t n;
	int is_stdin = !strcmp(w->path, "-");
	int err, fd = is_stdin ? STDIN_FILENO : open(w->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		err = -errno; /* before fprintf, which may change errno */
		fprintf(stderr, "snaptrace dump: cannot open %s: %s\n", w->path, strerror(-err));
		return 1;
	}
	if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		if (!is_stdin)
			close(fd);
		fprintf(stderr, "snaptrace dump: %s is a directory\n", w->path);
		return 1;
	}
	in = snap_malloc(DUMP_IN_CHUNK);
	if (!in) {
		if (!is_stdin)
			close(fd);
		fprintf(stderr, "snaptrace dump: out of memory\n");
		return 1;
	}
	n = dump_read(fd, in, DUMP_IN_CHUNK);
	if (n >= 2 && in[0] == 0x1f && in[1] == 0x8b) {
		err = dump_gunzip(w, fd, in, (size_t)n);
	} else {
		err = 0;
		while (n > 0 && !dump_feed(w, in, (size_t)n) && (size_t)n == DUMP_IN_CHUNK)
			n = dump_read(fd, in, DUMP_IN_CHUNK);
	}
	if (n < 0) {
		fprintf(stderr, "snaptrace dump: cannot read %s: %s\n", w->path, strerror((int)-n));
		err = 1;
	}
	snap_free(in);
	if (!is_stdin)
		close(fd);
	return err || w->status;
}

/* Walks the trace: prints it, or checks it. Returns the exit status. */
static int dump_run(const char *path, int check, int all, int tree)
{
	struct dump_walk w;
	int status, err;

	memset(&w, 0, sizeof(w));
	w.path = path;
	w.check = check;
	w.all = all;
	w.tree = tree;
	snap_fxtcheck_init(&w.c);
	snap_fxttree_init(&w.t);
	snap_fxtread_init_stream(&w.r);
	status = dump_file(&w);
	if (!status && w.bytes == 0) {
		fprintf(stderr, "snaptrace dump: %s: empty file, not an FXT trace\n", path);
		status = 1;
	}
	if (!status) {
		snap_fxtread_feed_end(&w.r);
		status = dump_drain(&w);
	}
	if (check && !status && (err = snap_fxtcheck_finish(&w.c)) < 0) {
		if (err == -SNAP_EPARSE)
			fprintf(stderr, "snaptrace dump: %s: record #%" PRIu64 ": %s\n", path,
				w.c.bad_index, w.c.why);
		else
			fprintf(stderr, "snaptrace dump: %s\n",
				err == -ENOMEM ? "out of memory" : w.c.why);
		status = 1;
	}
	if (tree && !status && snap_fxttree_print(&w.t, stdout) < 0) {
		fprintf(stderr, "snaptrace dump: out of memory\n");
		status = 1;
	}
	if (check && !status && w.c.deep)
		fprintf(stderr,
			"snaptrace dump: %s: warning: %" PRIu64
			" slice(s) too deep, first at record #%" PRIu64 ": %s\n",
			path, w.c.deep, w.c.deep_index, w.c.warning);
	if (check && !status)
		printf("ok: %s: %" PRIu64 " records, %" PRIu64 " events (%" PRIu64
		       " begin, %" PRIu64 " end, %" PRIu64 " complete, %" PRIu64
		       " counter), %zu thread%s\n",
		       path, w.c.records, w.c.events, w.c.begins, w.c.ends, w.c.completes,
		       w.c.counters, w.c.ntracks, w.c.ntracks == 1 ? "" : "s");
	if (fflush(stdout) != 0) {
		fprintf(stderr, "snaptrace dump: cannot write the output: %s\n", strerror(errno));
		status = 1;
	}
	snap_free(w.line);
	snap_fxtread_fini(&w.r);
	snap_fxtcheck_fini(&w.c);
	snap_fxttree_fini(&w.t);
	return status;
}

int snap_cmd_dump(int argc, char **argv)
{
	struct snap_optparse p;
	const char *val, *path = NULL;
	int k, check = 0, all = 0, tree = 0;

	snap_optparse_init(&p, "dump", argc - 1, argv + 1);
	while ((k = snap_opt_next(&p, dump_opts, &val)) != SNAP_OPT_DONE) {
		if (k == SNAP_OPT_HELP) {
			snap_opt_help(stdout, dump_usage, dump_desc, dump_opts);
			return 0;
		}
		if (k == SNAP_OPT_ERROR)
			return 2;
		if (k == SNAP_OPT_DASHDASH) {
			if (p.i < p.argc && !path)
				path = p.argv[p.i++];
			if (p.i < p.argc)
				goto extra;
			break;
		}
		if (k == SNAP_OPT_POSITIONAL) {
			if (path)
				goto extra;
			path = val;
		} else if (k == 0) {
			check = 1;
		} else if (k == 1) {
			all = 1;
		} else if (k == 2) {
			tree = 1;
		}
	}
	if (!path) {
		fprintf(stderr, "snaptrace dump: no FILE given (usage: %s)\n", dump_usage);
		return 2;
	}
	if (check && tree) {
		fprintf(stderr, "snaptrace dump: -check and -tree do not go together: pick one\n");
		return 2;
	}
	return dump_run(path, check, all, tree);
extra:
	fprintf(stderr, "snaptrace dump: one FILE only (usage: %s)\n", dump_usage);
	return 2;
}
