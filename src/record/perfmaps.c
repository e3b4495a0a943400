// SPDX-License-Identifier: GPL-2.0
/* decode -perf-map-file. See perfmaps.h. */
#include "record/perfmaps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/names.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/vec.h"

/* The pid of a "perf-PID.map" path, or -1. */
static long map_pid(const char *path, size_t len)
{
	const char *base = path;
	char *end;
	long pid;

	for (size_t i = 0; i < len; i++)
		if (path[i] == '/')
			base = path + i + 1;
	len -= (size_t)(base - path);
	if (len < 9 || strncmp(base, "perf-", 5) || strncmp(base + len - 4, ".map", 4) ||
	    base[5] < '0' || base[5] > '9')
		return -1;
	pid = strtol(base + 5, &end, 10);
	return end == base + len - 4 && pid > 0 && pid <= 0x7fffffff ? pid : -1;
}

static int load_one(struct snap_perfmaps *pm, const char *path, long pid)
{
	struct stat sb;
	const void *buf;
	size_t len, i;
	int err;

	for (i = 0; i < pm->n && pm->pids[i] != (int32_t)pid; i++)
		;
	if (i == pm->n) {
		struct snap_perfmap *m = snap_reallocarray(pm->maps, pm->n + 1, sizeof(*m));
		int32_t *p;

		if (!m)
			return -ENOMEM;
		pm->maps = m;
		p = snap_reallocarray(pm->pids, pm->n + 1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		pm->pids = p;
		snap_perfmap_init(&pm->maps[i]);
		pm->pids[i] = (int32_t)pid;
		pm->n++;
	}
	/* as the kernel would (fs.protected_symlinks, whatever the sysctl says):
	 * another user's link in /tmp could name any file root can read */
	if (snap_foreign_link(path)) {
		snap_warn("-perf-map-file: %s is another user's symbolic link in a sticky "
			  "world-writable directory: ignored (not followed)",
			  path);
		return 0;
	}
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		snap_warn("-perf-map-file: %s is not a regular file (%s): ignored", path,
			  S_ISDIR(sb.st_mode)	 ? "a directory"
			  : S_ISFIFO(sb.st_mode) ? "a FIFO"
						 : "a device or socket");
		return 0;
	}
	err = snap_file_map(path, &buf, &len);
	if (err == -EINVAL) /* an empty file: no symbols */
		return 0;
	if (err < 0)
		return err;
	err = snap_perfmap_add(&pm->maps[i], buf, len, pm->st);
	snap_file_unmap(buf, len);
	return err;
}

int snap_perfmaps_load(struct snap_perfmaps *pm, const char *files, struct snap_strtab *st)
{
	const char *p = files;
	int err = 0;

	memset(pm, 0, sizeof(*pm));
	pm->st = st;
	snap_u64map_init(&pm->unknown);
	while (*p && !err) {
		size_t n = strcspn(p, ",");
		char path[4096];
		long pid = map_pid(p, n);

		if (pid < 0 || n >= sizeof(path)) {
			snap_log(SNAP_LOG_QUIET,
				 "-perf-map-file: '%.*s' is not named perf-PID.map (the pid comes "
				 "from the name)",
				 (int)n, p);
			return -EINVAL;
		}
		memcpy(path, p, n);
		path[n] = '\0';
		err = load_one(pm, path, pid);
		if (err < 0) {
			snap_log(SNAP_LOG_QUIET, "-perf-map-file: cannot read %s: %s", path,
				 snap_strerror(err));
			return err;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	for (size_t i = 0; i < pm->n && !err; i++) {
		err = snap_perfmap_finish(&pm->maps[i]);
		if (pm->maps[i].bad_lines)
			snap_warn("-perf-map-file: skipped %llu malformed line%s for pid %d",
				  (unsigned long long)pm->maps[i].bad_lines,
				  pm->maps[i].bad_lines == 1 ? "" : "s", (int)pm->pids[i]);
	}
	return err;
}

void snap_perfmaps_fini(struct snap_perfmaps *pm)
{
	for (size_t i = 0; i < pm->n; i++)
		snap_perfmap_fini(&pm->maps[i]);
	snap_free(pm->maps);
	snap_free(pm->pids);
	snap_free(pm->frames);
	snap_u64map_fini(&pm->unknown);
	memset(pm, 0, sizeof(*pm));
}

/* 1 if perf found no symbol for l. */
static int is_unknown(struct snap_perfmaps *pm, const struct snap_loc *l)
{
	uint64_t v;

	if (!l->ip)
		return 0;
	if (!l->sym)
		return 1;
	if (!snap_u64map_get(&pm->unknown, l->sym, &v)) {
		const char *s = snap_strtab_get(pm->st, l->sym);

		v = snap_unknown_parse(s, strlen(s), NULL) ? 1 : 2;
		if (snap_u64map_put(&pm->unknown, l->sym, v) < 0)
			return -ENOMEM;
	}
	return v == 1;
}

/* Renames l from m. Returns 1 if renamed, 0 if not, <0. */
static int rename_loc(struct snap_perfmaps *pm, const struct snap_perfmap *m, struct snap_loc *l)
{
	const struct snap_perfmap_entry *e;
	int u = is_unknown(pm, l);

	if (u <= 0)
		return u;
	e = snap_perfmap_find(m, l->ip);
	if (!e)
		return 0;
	l->sym = e->name;
	l->off = l->ip - e->start;
	pm->renamed++;
	return 1;
}

int snap_perfmaps_apply(struct snap_perfmaps *pm, struct snap_event *ev)
{
	const struct snap_perfmap *m = NULL;
	int r;

	for (size_t i = 0; i < pm->n; i++)
		if (pm->pids[i] == ev->pid)
			m = &pm->maps[i];
	if (!m)
		return 0;
	if ((r = rename_loc(pm, m, &ev->src)) < 0 || (r = rename_loc(pm, m, &ev->dst)) < 0)
		return r;
	if (ev->frames && ev->nframes) {
		if (snap_vec_reserve(&pm->frames, &pm->fcap, ev->nframes, sizeof(*pm->frames)) < 0)
			return -ENOMEM;
		memcpy(pm->frames, ev->frames, ev->nframes * sizeof(*pm->frames));
		for (uint32_t i = 0; i < ev->nframes; i++)
			if ((r = rename_loc(pm, m, &pm->frames[i])) < 0)
				return r;
		ev->frames = pm->frames;
	}
	return 0;
}
