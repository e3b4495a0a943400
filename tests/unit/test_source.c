// SPDX-License-Identifier: GPL-2.0
/* source/source.h: which source takes an input, and what every source shares
 * (stats, close once). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snap_test.h"
#include "source/source.h"
#include "util/err.h"
#include "util/log.h"

static const char text[] =
	" 4242/4242      1.000000100:          1           branches:u:   tr strt           "
	"                0 [unknown] ([unknown]) =>           401000 main+0x0 (/usr/bin/demo)\n"
	"this is not perf script\n"
	" 4242/4242      1.000000200:          1           branches:u:   call              "
	"           401010 main+0x10 (/usr/bin/demo) =>           401100 foo+0x0 (/usr/bin/demo)\n";

/* A temporary file holding len bytes of p; its name in path (64 bytes). */
static void tmpfile_with(char *path, const void *p, size_t len)
{
	int fd;

	snprintf(path, 64, "/tmp/snaptrace-test-source.XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK_INT_EQ((int)len, (int)write(fd, p, len));
	close(fd);
}

/* A file of perf script text: the text source, its parser's counters, one close. */
static void text_file(void)
{
	struct snap_source_opts o = {0};
	struct snap_source src;
	struct snap_strtab st;
	struct snap_event ev;
	const struct snap_perfscript_stats *ps;
	char path[64];
	int n = 0, r;

	tmpfile_with(path, text, sizeof(text) - 1);
	snap_strtab_init(&st);
	CHECK_INT_EQ(0, snap_source_open(&src, &o, path, &st));
	CHECK_STR_EQ(path, src.name);
	CHECK_STR_EQ("perf", src.who);
	CHECK_INT_EQ(0, src.timeless);
	while ((r = snap_source_next(&src, &ev)) > 0) {
		n++;
		CHECK_INT_EQ(SNAP_EV_BRANCH, ev.kind);
		CHECK_INT_EQ(1, ev.has_time);
	}
	CHECK_INT_EQ(0, r);
	CHECK_INT_EQ(2, n);
	ps = snap_source_stats(&src);
	CHECK(ps != NULL);
	CHECK_U64_EQ(1, ps->unknown_lines);
	CHECK_U64_EQ(2, ps->first_unknown_line);
	CHECK_INT_EQ(0, snap_source_close(&src));
	/* closed: no counters, and a second close does nothing */
	CHECK(snap_source_stats(&src) == NULL);
	CHECK(src.ops == NULL && src.impl == NULL && src.name == NULL);
	CHECK_INT_EQ(0, snap_source_close(&src));
	snap_strtab_fini(&st);
	unlink(path);
}

/* The events of a timeless source are numbered by snap_source_next, 1 ns apart. */
static void timeless_numbering(void)
{
	struct snap_source_opts o = {0};
	struct snap_source src;
	struct snap_strtab st;
	struct snap_event ev;
	char path[64];

	tmpfile_with(path, text, sizeof(text) - 1);
	snap_strtab_init(&st);
	CHECK_INT_EQ(0, snap_source_open(&src, &o, path, &st));
	src.timeless = 1;
	CHECK_INT_EQ(1, snap_source_next(&src, &ev));
	CHECK_U64_EQ(1, ev.time);
	CHECK_INT_EQ(1, snap_source_next(&src, &ev));
	CHECK_U64_EQ(2, ev.time);
	CHECK_INT_EQ(0, snap_source_next(&src, &ev));
	CHECK_U64_EQ(2, src.seq);
	CHECK_INT_EQ(0, snap_source_close(&src));
	snap_strtab_fini(&st);
	unlink(path);
}

/* What no source takes: refused with the error, src left closed. */
static void refused_inputs(void)
{
	struct snap_source_opts o = {0};
	struct snap_source src;
	struct snap_strtab st;
	char dir[] = "/tmp/snaptrace-test-source-dir.XXXXXX", name[64];
	int p[2];

	snap_strtab_init(&st);
	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT_EQ(-EISDIR, snap_source_open(&src, &o, dir, &st));
	CHECK(src.ops == NULL);
	CHECK_INT_EQ(-ENOENT, snap_source_open(&src, &o, "/nonexistent/perf.data", &st));
	CHECK(src.ops == NULL);
	/* a pipe holding a perf.data: perf script needs a file it can seek */
	CHECK_INT_EQ(0, pipe(p));
	CHECK_INT_EQ(8, (int)write(p[1], "PERFILE2", 8));
	close(p[1]);
	snprintf(name, sizeof(name), "/dev/fd/%d", p[0]);
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_source_open(&src, &o, name, &st));
	CHECK(src.ops == NULL);
	close(p[0]);
	rmdir(dir);
	snap_strtab_fini(&st);
}

/* stdin ("-"): the bytes the caller already read come first. */
static void stdin_head_first(void)
{
	struct snap_source_opts o = {0};
	struct snap_source src;
	struct snap_strtab st;
	struct snap_event ev;
	int p[2], saved = dup(STDIN_FILENO), n = 0;

	CHECK_INT_EQ(0, pipe(p));
	CHECK_INT_EQ((int)sizeof(text) - 1 - 8, (int)write(p[1], text + 8, sizeof(text) - 1 - 8));
	close(p[1]);
	dup2(p[0], STDIN_FILENO);
	close(p[0]);
	o.stdin_head = (const unsigned char *)text;
	o.nstdin_head = 8;
	snap_strtab_init(&st);
	CHECK_INT_EQ(0, snap_source_open(&src, &o, "-", &st));
	CHECK_STR_EQ("stdin", src.name);
	while (snap_source_next(&src, &ev) > 0)
		n++;
	CHECK_INT_EQ(2, n);
	CHECK_U64_EQ(1, snap_source_stats(&src)->unknown_lines);
	CHECK_INT_EQ(0, snap_source_close(&src));
	dup2(saved, STDIN_FILENO);
	close(saved);
	snap_strtab_fini(&st);
}

static void pt_decoder_names(void)
{
	enum snap_pt_decoder k = SNAP_PT_DECODER_DEFAULT;

	CHECK_INT_EQ(0, snap_pt_decoder_parse("perf", &k));
	CHECK_INT_EQ(SNAP_PT_DECODER_PERF, k);
	CHECK_INT_EQ(0, snap_pt_decoder_parse("libipt", &k));
	CHECK_INT_EQ(SNAP_PT_DECODER_IPT, k);
	CHECK_INT_EQ(0, snap_pt_decoder_parse("auto", &k));
	CHECK_INT_EQ(SNAP_PT_DECODER_AUTO, k);
	CHECK_INT_EQ(-1, snap_pt_decoder_parse("intel", &k));
	CHECK_INT_EQ(SNAP_PT_DECODER_AUTO, k);
}

int main(void)
{
	snap_log_level = SNAP_LOG_QUIET; /* the refusals still say why, on stderr */
	RUN(text_file);
	RUN(timeless_numbering);
	RUN(refused_inputs);
	RUN(stdin_head_first);
	RUN(pt_decoder_names);
	return snap_test_done();
}
