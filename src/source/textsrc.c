// SPDX-License-Identifier: GPL-2.0
/*
 * perf script text from a file, a pipe or stdin as a source (source/source.h):
 * read in TEXT_BUF slices and parsed by parse/perfscript; no perf runs.
 */
#include <errno.h>
#include <unistd.h>

#include "source/perfsrc.h"
#include "source/source.h"
#include "util/alloc.h"

#define TEXT_BUF (256 * 1024)

struct textsrc {
	int fd, eof;
	char *buf; /* TEXT_BUF bytes (owned) */
	struct snap_perfscript ps;
};

static int textsrc_next(struct snap_source *src, struct snap_event *ev)
{
	struct textsrc *t = src->impl;

	return snap_perfsrc_pull(&t->ps, t->fd, t->buf, TEXT_BUF, &t->eof, ev);
}

static const struct snap_perfscript_stats *textsrc_stats(const struct snap_source *src)
{
	const struct textsrc *t = src->impl;

	return snap_perfscript_stats(&t->ps);
}

/* Frees t and closes its fd (but stdin). */
static void textsrc_free(struct textsrc *t)
{
	snap_perfscript_fini(&t->ps);
	snap_free(t->buf);
	if (t->fd > STDIN_FILENO)
		close(t->fd);
	snap_free(t);
}

static int textsrc_close(struct snap_source *src)
{
	textsrc_free(src->impl);
	src->impl = NULL;
	return 0;
}

static const struct snap_source_ops textsrc_ops = {
	.next = textsrc_next,
	.stats = textsrc_stats,
	.close = textsrc_close,
};

int snap_source_text(struct snap_source *src, int fd, const char *head, size_t nhead,
		     struct snap_strtab *st)
{
	struct textsrc *t = snap_calloc(1, sizeof(*t));
	int err;

	if (!t) {
		if (fd > STDIN_FILENO)
			close(fd);
		return -ENOMEM;
	}
	t->fd = fd;
	t->buf = snap_malloc(TEXT_BUF);
	err = t->buf ? snap_perfscript_init(&t->ps, st) : -ENOMEM;
	if (err >= 0 && nhead)
		err = snap_perfscript_feed(&t->ps, head, nhead);
	if (err < 0) {
		textsrc_free(t);
		return err;
	}
	src->ops = &textsrc_ops;
	src->impl = t;
	src->who = "perf";
	return 0;
}
