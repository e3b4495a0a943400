// SPDX-License-Identifier: GPL-2.0
/* decode -perf-map-file (record/perfmaps): files named perf-PID.map rename the
 * locations of that pid perf found no symbol for. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/perfmaps.h"
#include "snap_test.h"
#include "util/log.h"

static char dir[] = "/tmp/snaptrace-perfmaps.XXXXXX";

static void put(const char *name, const char *text)
{
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int load(struct snap_perfmaps *pm, struct snap_strtab *st, const char *names)
{
	char list[512], *w = list;
	const char *p = names;

	/* "a,b" -> "DIR/a,DIR/b" */
	while (*p) {
		size_t n = strcspn(p, ",");

		w += sprintf(w, "%s%s/%.*s", w == list ? "" : ",", dir, (int)n, p);
		p += n + (p[n] == ',');
	}
	return snap_perfmaps_load(pm, list, st);
}

static uint32_t id(struct snap_strtab *st, const char *s)
{
	return (uint32_t)snap_strtab_intern_cstr(st, s);
}

static void names_must_carry_a_pid(void)
{
	static const char *const bad[] = {"perf.map",	  "perf-.map",	  "perf-0.map",
					  "perf-12x.map", "perf-12.mapx", "perf-99999999999.map",
					  "x-12.map"};
	struct snap_strtab st;
	struct snap_perfmaps pm;

	snap_strtab_init(&st);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		CHECK_INT_EQ(-EINVAL, snap_perfmaps_load(&pm, bad[i], &st));
		snap_perfmaps_fini(&pm);
	}
	CHECK_INT_EQ(-ENOENT, load(&pm, &st, "perf-77.map"));
	snap_perfmaps_fini(&pm);
	snap_strtab_fini(&st);
}

static void renames_unknown_locations_of_its_pid(void)
{
	struct snap_strtab st;
	struct snap_perfmaps pm;
	struct snap_loc frames[3];
	struct snap_event ev;
	uint32_t unk, known;

	snap_strtab_init(&st);
	put("perf-42.map", "1000 100 jit_a\n2000 10 jit_b\nnot a line\n");
	put("perf-43.map", "1000 100 other\n");
	CHECK_INT_EQ(0, load(&pm, &st, "perf-42.map,perf-43.map"));
	CHECK_INT_EQ(2, pm.n);
	unk = id(&st, "[unknown @ 0x1010 (//anon)]");
	known = id(&st, "main");
	memset(&ev, 0, sizeof(ev));
	ev.pid = 42;
	ev.src = (struct snap_loc){.ip = 0x1010, .sym = unk};
	ev.dst = (struct snap_loc){.ip = 0x1020, .sym = known};	 /* perf named it: kept */
	frames[0] = (struct snap_loc){.ip = 0x2004, .sym = 0};	 /* no name at all */
	frames[1] = (struct snap_loc){.ip = 0x3000, .sym = unk}; /* in no entry */
	frames[2] = (struct snap_loc){.ip = 0, .sym = unk};	 /* no address */
	ev.frames = frames;
	ev.nframes = 3;
	CHECK_INT_EQ(0, snap_perfmaps_apply(&pm, &ev));
	CHECK_STR_EQ("jit_a", snap_strtab_get(&st, ev.src.sym));
	CHECK_U64_EQ(0x10, ev.src.off);
	CHECK_INT_EQ(known, ev.dst.sym);
	CHECK(ev.frames != frames); /* a renamed copy: the parser's frames stay */
	CHECK_STR_EQ("jit_b", snap_strtab_get(&st, ev.frames[0].sym));
	CHECK_U64_EQ(4, ev.frames[0].off);
	CHECK_INT_EQ(unk, ev.frames[1].sym);
	CHECK_INT_EQ(unk, ev.frames[2].sym);
	CHECK_INT_EQ(0, frames[0].sym);
	CHECK_U64_EQ(2, pm.renamed);
	/* another pid's map, and a pid without one */
	ev.pid = 43;
	ev.frames = NULL;
	ev.nframes = 0;
	ev.src = (struct snap_loc){.ip = 0x1010, .sym = unk};
	CHECK_INT_EQ(0, snap_perfmaps_apply(&pm, &ev));
	CHECK_STR_EQ("other", snap_strtab_get(&st, ev.src.sym));
	ev.pid = 44;
	ev.src = (struct snap_loc){.ip = 0x1010, .sym = unk};
	CHECK_INT_EQ(0, snap_perfmaps_apply(&pm, &ev));
	CHECK_INT_EQ(unk, ev.src.sym);
	snap_perfmaps_fini(&pm);
	snap_strtab_fini(&st);
}

/* Two files of one pid make one map; an empty file and a directory add nothing. */
static void files_of_one_pid_merge(void)
{
	struct snap_strtab st;
	struct snap_perfmaps pm;
	struct snap_event ev;
	char sub[128];

	snap_strtab_init(&st);
	put("perf-50.map", "1000 10 first\n");
	snprintf(sub, sizeof(sub), "%s/a", dir);
	CHECK_INT_EQ(0, mkdir(sub, 0700));
	snprintf(sub, sizeof(sub), "%s/a/perf-50.map", dir);
	CHECK_INT_EQ(0, mkdir(sub, 0700));
	put("a/perf-51.map", "");
	CHECK_INT_EQ(0, load(&pm, &st, "perf-50.map,a/perf-50.map,a/perf-51.map"));
	CHECK_INT_EQ(2, pm.n);
	memset(&ev, 0, sizeof(ev));
	ev.pid = 50;
	ev.src = (struct snap_loc){.ip = 0x1001, .sym = 0};
	CHECK_INT_EQ(0, snap_perfmaps_apply(&pm, &ev));
	CHECK_STR_EQ("first", snap_strtab_get(&st, ev.src.sym));
	snap_perfmaps_fini(&pm);
	snprintf(sub, sizeof(sub), "%s/a/perf-50.map", dir);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/a/perf-51.map", dir);
	unlink(sub);
	snprintf(sub, sizeof(sub), "%s/a", dir);
	rmdir(sub);
	snap_strtab_fini(&st);
}

int main(void)
{
	snap_log_level = SNAP_LOG_QUIET; /* the warnings are expected */
	if (!mkdtemp(dir))
		return 1;
	RUN(names_must_carry_a_pid);
	RUN(renames_unknown_locations_of_its_pid);
	RUN(files_of_one_pid_merge);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			return 1;
	}
	return snap_test_done();
}
