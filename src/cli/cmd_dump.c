// SPDX-License-Identifier: GPL-2.0
/*
 * snaptrace dump [-check] [-all] FILE: prints an FXT trace (plain or gzip)
 * one record a line, or validates it. The whole file is read into memory
 * (capped), then handed to the pure reader in write/fxtread.
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
#include "write/fxtread.h"

#define DUMP_MAX_FILE (1ull << 32) /* 4 GiB, compressed or not */
#define DUMP_MAX_DATA (8ull << 30) /* 8 GiB after decompression */

static const struct snap_opt dump_opts[] = {
	{"check", NULL, NULL, "validate instead of printing (records, refs, begin/end nesting)"},
	{"all", "a", NULL, "print every record (strings, threads, metadata), not only events"},
	{NULL, NULL, NULL, NULL},
};

static const char dump_usage[] = "snaptrace dump [-check] [-all] FILE";
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
	"parent, every begin ended. Slices deeper than 512, which Perfetto drops, give a\n"
	"warning. It prints 'ok: ...' or the first problem with its record number (exit\n"
	"status 1). Unreadable, truncated or non-FXT input also gives exit status 1.";

/* Reads all of fd into an owned buffer. Returns 0 or -errno / -SNAP_ELIMIT. */
static int dump_read_fd(int fd, unsigned char **out, size_t *outlen)
{
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	int err = 0;

	for (;;) {
		ssize_t n;

		if (len == cap && snap_vec_reserve(&buf, &cap, len + (1 << 20), 1) < 0) {
			err = -ENOMEM;
			break;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > DUMP_MAX_FILE) {
			err = -SNAP_ELIMIT;
			break;
		}
	}
	if (err < 0) {
		snap_free(buf);
		return err;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* Inflates a gzip file (one or more members). Returns 0, -SNAP_ETRUNC
 * (stream ends early), -SNAP_EPARSE (corrupt), -SNAP_ELIMIT or -ENOMEM. */
static int dump_gunzip(const unsigned char *in, size_t inlen, unsigned char **out, size_t *outlen)
{
	z_stream zs;
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	/* first guess of the output size: 4 times the input, within the limit */
	size_t first_cap = inlen < DUMP_MAX_DATA / 4 ? inlen * 4 + 65536 : DUMP_MAX_DATA;
	int zr = Z_OK, err = 0;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		return -ENOMEM;
	zs.next_in = (unsigned char *)in;
	zs.avail_in = 0;
	while (!err) {
		if (zs.avail_in == 0) {
			size_t chunk = inlen > (1u << 30) ? (1u << 30) : inlen;

			if (chunk == 0)
				break;
			zs.avail_in = (uInt)chunk;
			inlen -= chunk;
		}
		if (len == cap && snap_vec_reserve(&buf, &cap, cap ? cap * 2 : first_cap, 1)) {
			err = -ENOMEM;
			break;
		}
		zs.next_out = buf + len;
		zs.avail_out = (uInt)(cap - len > (1u << 30) ? (1u << 30) : cap - len);
		zr = inflate(&zs, Z_NO_FLUSH);
		len = (size_t)(zs.next_out - buf);
		if (len > DUMP_MAX_DATA)
			err = -SNAP_ELIMIT;
		else if (zr == Z_STREAM_END && (zs.avail_in || inlen))
			zr = inflateReset(&zs); /* another gzip member follows */
		else if (zr == Z_STREAM_END)
			break;
		else if (zr != Z_OK && zr != Z_BUF_ERROR)
			err = -SNAP_EPARSE;
	}
	if (!err && zr != Z_STREAM_END)
		err = -SNAP_ETRUNC;
	inflateEnd(&zs);
	if (err < 0) {
		snap_free(buf);
		return err;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* Loads FILE, gunzipping it if it starts with 1f 8b. Prints the error. */
static int dump_load(const char *path, unsigned char **out, size_t *outlen)
{
	unsigned char *raw = NULL;
	size_t rawlen = 0;
	struct stat sb;
	int err, fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		err = -errno; /* before fprintf, which may change errno */
		fprintf(stderr, "snaptrace dump: cannot open %s: %s\n", path, strerror(-err));
		return err;
	}
	if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		close(fd);
		fprintf(stderr, "snaptrace dump: %s is a directory\n", path);
		return -EISDIR;
	}
	err = dump_read_fd(fd, &raw, &rawlen);
	close(fd);
	if (err < 0) {
		fprintf(stderr, "snaptrace dump: cannot read %s: %s\n", path, snap_strerror(err));
		return err;
	}
	if (rawlen >= 2 && raw[0] == 0x1f && raw[1] == 0x8b) {
		err = dump_gunzip(raw, rawlen, out, outlen);
		snap_free(raw);
		if (err < 0)
			fprintf(stderr, "snaptrace dump: %s: bad gzip data: %s\n", path,
				err == -SNAP_ETRUNC ? "the compressed stream is truncated"
						    : snap_strerror(err));
		return err;
	}
	*out = raw;
	*outlen = rawlen;
	return 0;
}

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

/* Walks the trace: prints it, or checks it. Returns the exit status. */
static int dump_walk(const char *path, const unsigned char *data, size_t len, int check, int all)
{
	struct snap_fxtread r;
	struct snap_fxtread_rec rec;
	struct snap_fxtcheck c;
	char *line = NULL;
	size_t cap = 0;
	int err, status = 0;

	snap_fxtcheck_init(&c);
	if (snap_fxtread_init(&r, data, len) < 0) {
		fprintf(stderr, "snaptrace dump: out of memory\n");
		return 1;
	}
	if (len == 0) {
		fprintf(stderr, "snaptrace dump: %s: empty file, not an FXT trace\n", path);
		status = 1;
	}
	while (!status && (err = snap_fxtread_next(&r, &rec)) != 0) {
		if (err < 0 && err != -ENOMEM) {
			dump_problem(path, &rec, snap_fxtread_why(&r));
			status = 1;
		} else if (err < 0) {
			fprintf(stderr, "snaptrace dump: out of memory\n");
			status = 1;
		} else if (check) {
			err = snap_fxtcheck_feed(&c, &rec);
			if (err < 0) {
				dump_problem(path, &rec, err == -ENOMEM ? "out of memory" : c.why);
				status = 1;
			}
		} else if ((all || snap_fxtread_is_default(&rec)) &&
			   dump_print(&rec, &line, &cap) < 0) {
			fprintf(stderr, "snaptrace dump: out of memory\n");
			status = 1;
		}
	}
	if (check && !status && snap_fxtcheck_finish(&c) < 0) {
		fprintf(stderr, "snaptrace dump: %s: record #%" PRIu64 ": %s\n", path, c.bad_index,
			c.why);
		status = 1;
	}
	if (check && !status && c.deep)
		fprintf(stderr,
			"snaptrace dump: %s: warning: %" PRIu64
			" slice(s) too deep, first at record #%" PRIu64 ": %s\n",
			path, c.deep, c.deep_index, c.warning);
	if (check && !status)
		printf("ok: %s: %" PRIu64 " records, %" PRIu64 " events (%" PRIu64
		       " begin, %" PRIu64 " end, %" PRIu64 " complete, %" PRIu64
		       " counter), %zu threads\n",
		       path, c.records, c.events, c.begins, c.ends, c.completes, c.counters,
		       c.ntracks);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "snaptrace dump: cannot write the output: %s\n", strerror(errno));
		status = 1;
	}
	snap_free(line);
	snap_fxtread_fini(&r);
	snap_fxtcheck_fini(&c);
	return status;
}

int snap_cmd_dump(int argc, char **argv)
{
	struct snap_optparse p;
	const char *val, *path = NULL;
	unsigned char *data = NULL;
	size_t len = 0;
	int k, check = 0, all = 0, status;

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
		}
	}
	if (!path) {
		fprintf(stderr, "snaptrace dump: no FILE given (usage: %s)\n", dump_usage);
		return 2;
	}
	if (dump_load(path, &data, &len) < 0)
		return 1;
	status = dump_walk(path, data, len, check, all);
	snap_free(data);
	return status;
extra:
	fprintf(stderr, "snaptrace dump: one FILE only (usage: %s)\n", dump_usage);
	return 2;
}
