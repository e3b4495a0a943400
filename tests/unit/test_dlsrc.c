// SPDX-License-Identifier: GPL-2.0
/* The plugin search (record/caps: snap_caps_find_plugin) and record/dlsrc. */
#include "record/caps.h"
#include "record/dlsrc.h"
#include "record/perfsrc.h"
#include "snap_test.h"
#include "util/err.h"

static const char *present[4];

static int fake_exists(const char *path)
{
	for (int i = 0; i < 4 && present[i]; i++)
		if (!strcmp(present[i], path))
			return 1;
	return 0;
}

static int pick(struct snap_plugin_env *env, char *path, char *why)
{
	env->exists = fake_exists;
	return snap_caps_find_plugin(env, path, 256, why, 256);
}

static void pick_table(void)
{
	static const struct {
		const char *exe_dir, *override, *env_no;
		int major, minor, no_dlfilter;
		const char *file; /* the one plugin file that exists, or NULL */
		const char *want; /* chosen path, or NULL for the text path */
		const char *why;  /* substring of the reason */
	} tab[] = {
		{"/opt/st/bin", NULL, NULL, 6, 1, 0, "/opt/st/bin/snaptrace-dlfilter.so",
		 "/opt/st/bin/snaptrace-dlfilter.so", "dlfilter plugin"},
		{"/opt/st/bin", NULL, NULL, 6, 1, 0,
		 "/opt/st/bin/../lib/snaptrace/snaptrace-dlfilter.so",
		 "/opt/st/bin/../lib/snaptrace/snaptrace-dlfilter.so", "dlfilter plugin"},
		{NULL, NULL, NULL, 0, 0, 0, "/usr/local/lib/snaptrace/snaptrace-dlfilter.so",
		 "/usr/local/lib/snaptrace/snaptrace-dlfilter.so", "dlfilter plugin"},
		{"/x", NULL, NULL, 5, 14, 0, "/usr/lib/snaptrace/snaptrace-dlfilter.so",
		 "/usr/lib/snaptrace/snaptrace-dlfilter.so", "dlfilter plugin"},
		{"/x", NULL, NULL, 5, 13, 0, "/x/snaptrace-dlfilter.so", NULL, "perf 5.13"},
		{"/x", NULL, NULL, 4, 19, 0, "/x/snaptrace-dlfilter.so", NULL, "5.14 or newer"},
		{"/x", NULL, NULL, 6, 1, 1, "/x/snaptrace-dlfilter.so", NULL, "-no-dlfilter"},
		{"/x", NULL, "1", 6, 1, 0, "/x/snaptrace-dlfilter.so", NULL,
		 "SNAPTRACE_NO_DLFILTER"},
		{"/x", NULL, "0", 6, 1, 0, "/x/snaptrace-dlfilter.so", "/x/snaptrace-dlfilter.so",
		 "dlfilter plugin"},
		{"/x", NULL, NULL, 6, 1, 0, NULL, NULL, "not found"},
		{"/x", "/p/my.so", NULL, 6, 1, 0, "/p/my.so", "/p/my.so", "SNAPTRACE_DLFILTER"},
		{"/x", "/p/my.so", NULL, 6, 1, 0, "/x/snaptrace-dlfilter.so", NULL, "not readable"},
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		struct snap_plugin_env env;
		char path[256], why[256];
		int r;

		memset(&env, 0, sizeof(env));
		memset(path, 0, sizeof(path));
		env.exe_dir = tab[i].exe_dir;
		env.override = tab[i].override;
		env.env_no = tab[i].env_no;
		env.perf_major = tab[i].major;
		env.perf_minor = tab[i].minor;
		env.no_dlfilter = tab[i].no_dlfilter;
		present[0] = tab[i].file;
		r = pick(&env, path, why);
		if (r != (tab[i].want != NULL) || (tab[i].want && strcmp(path, tab[i].want)) ||
		    !strstr(why, tab[i].why)) {
			fprintf(stderr, "case %zu: got %d '%s' (%s)\n", i, r, path, why);
			CHECK(0);
		}
	}
}

static void perf_versions(void)
{
	struct snap_perfcaps c[] = {{.perf_major = 5, .perf_minor = 14},
				    {.perf_major = 6, .perf_minor = 0},
				    {.perf_major = 5, .perf_minor = 13},
				    {.perf_major = 4, .perf_minor = 20}};

	CHECK_INT_EQ(1, snap_caps_has_dlfilter(&c[0]));
	CHECK_INT_EQ(1, snap_caps_has_dlfilter(&c[1]));
	CHECK_INT_EQ(0, snap_caps_has_dlfilter(&c[2]));
	CHECK_INT_EQ(0, snap_caps_has_dlfilter(&c[3]));
}

static void perf_version_of_missing_binary(void)
{
	int major = 7, minor = 7;

	CHECK(snap_caps_perf_version("/nonexistent/perf", &major, &minor) < 0);
	CHECK_INT_EQ(0, major);
	CHECK_INT_EQ(0, minor);
}

static void join(const char **argv, char *out, size_t len)
{
	size_t n = 0;

	out[0] = 0;
	for (int i = 0; argv[i]; i++)
		n += (size_t)snprintf(out + n, len - n, "%s%s", i ? " " : "", argv[i]);
}

/* One builder: the command printed (snap_perfsrc_argv) is the one each path runs. */
static void script_argv(void)
{
	struct snap_perfsrc_opts o = {.perf = "perf", .data = "d", .kind = SNAP_PERFDATA_AUX};
	const char *argv[SNAP_PERFSRC_MAX_ARGS];
	char s[512];

	CHECK_INT_EQ(8, snap_perfsrc_argv(&o, argv));
	join(argv, s, sizeof(s));
	CHECK_STR_EQ("perf script -i d --itrace=bep --ns -F "
		     "comm,pid,tid,time,flags,ip,addr,sym,symoff,synth,dso,event,period",
		     s);
	o.kind = SNAP_PERFDATA_SAMPLES;
	o.kallsyms = "k";
	snap_perfsrc_argv(&o, argv);
	join(argv, s, sizeof(s));
	CHECK_STR_EQ("perf script -i d --kallsyms k --ns -F "
		     "comm,pid,tid,time,ip,sym,symoff,dso,event,period --show-switch-events "
		     "--show-task-events",
		     s);
	o.stitch_lbr = 1; /* stitched LBR samples: both paths pass --stitch-lbr */
	snap_perfsrc_argv(&o, argv);
	join(argv, s, sizeof(s));
	CHECK_STR_EQ("perf script -i d --stitch-lbr --kallsyms k --ns -F "
		     "comm,pid,tid,time,ip,sym,symoff,dso,event,period --show-switch-events "
		     "--show-task-events",
		     s);
	o.kind = SNAP_PERFDATA_AUX; /* never with PT data */
	o.plugin = "p.so";
	o.keepjumps = 1;
	o.vmlinux = "v";
	snap_perfsrc_argv(&o, argv);
	join(argv, s, sizeof(s));
	CHECK_STR_EQ("perf script -i d --itrace=bep --vmlinux v --kallsyms k --dlfilter p.so "
		     "--dlarg fd=3 --dlarg keepjumps",
		     s);
	/* inlined frames are never used: --no-inline on both paths, where perf has it */
	o.no_inline = 1;
	o.vmlinux = o.kallsyms = NULL;
	o.keepjumps = 0;
	snap_perfsrc_argv(&o, argv);
	join(argv, s, sizeof(s));
	CHECK_STR_EQ("perf script -i d --itrace=bep --no-inline --dlfilter p.so --dlarg fd=3", s);
	o.plugin = NULL;
	o.kind = SNAP_PERFDATA_SAMPLES;
	o.stitch_lbr = 0;
	snap_perfsrc_argv(&o, argv);
	join(argv, s, sizeof(s));
	CHECK_STR_EQ("perf script -i d --no-inline --ns -F "
		     "comm,pid,tid,time,ip,sym,symoff,dso,event,period --show-switch-events "
		     "--show-task-events",
		     s);
	{
		struct snap_perfcaps c = {.perf_major = 4, .perf_minor = 14};

		CHECK_INT_EQ(1, snap_caps_has_no_inline(&c));
		c.perf_minor = 13;
		CHECK_INT_EQ(0, snap_caps_has_no_inline(&c));
		c.perf_major = 0; /* unknown: treated as old */
		CHECK_INT_EQ(0, snap_caps_has_no_inline(&c));
		c.perf_major = 6;
		c.perf_minor = 1;
		CHECK_INT_EQ(1, snap_caps_has_no_inline(&c));
	}
}

static void perf_exit_status(void)
{
	CHECK_INT_EQ(0, snap_dlsrc_perf_exit(0, 1));		    /* exit 0 */
	CHECK_INT_EQ(-SNAP_EPERF, snap_dlsrc_perf_exit(1 << 8, 0)); /* exit 1 */
	CHECK_INT_EQ(-SNAP_EPERF, snap_dlsrc_perf_exit(9, 0));	    /* SIGKILL */
}

int main(void)
{
	RUN(perf_exit_status);
	RUN(script_argv);
	RUN(pick_table);
	RUN(perf_versions);
	RUN(perf_version_of_missing_binary);
	return snap_test_done();
}
