// SPDX-License-Identifier: GPL-2.0
#include "record/caps.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/perfrun.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/file.h"
#include "util/proc.h"

int snap_caps_parse_perf_version(const char *s, int *major, int *minor, char *ver, size_t len)
{
	const char *p = strstr(s, "perf version ");
	const char *v;
	char *end;
	long a, b;

	p = p ? p + 13 : s;
	while (*p == ' ')
		p++;
	v = p;
	if (!isdigit((unsigned char)*p))
		return -SNAP_EPARSE;
	a = strtol(p, &end, 10);
	if (*end != '.' || !isdigit((unsigned char)end[1]))
		return -SNAP_EPARSE;
	b = strtol(end + 1, &end, 10);
	if (a < 0 || a > 1000 || b < 0 || b > 1000)
		return -SNAP_EPARSE;
	*major = (int)a;
	*minor = (int)b;
	if (ver && len) {
		size_t n = strcspn(v, " \t\r\n");

		if (n >= len)
			n = len - 1;
		memcpy(ver, v, n);
		ver[n] = '\0';
	}
	return 0;
}

static int line_has_word(const char *line, size_t len, const char *word)
{
	size_t wl = strlen(word);

	for (size_t i = 0; i + wl <= len; i++) {
		if (memcmp(line + i, word, wl))
			continue;
		if ((i == 0 || isspace((unsigned char)line[i - 1]) || line[i - 1] == ':') &&
		    (i + wl == len || isspace((unsigned char)line[i + wl])))
			return 1;
	}
	return 0;
}

int snap_caps_cpuinfo_has_pdcm(const char *cpuinfo, size_t len)
{
	size_t i = 0;

	while (i < len) {
		const char *nl = memchr(cpuinfo + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (cpuinfo + i)) : len - i;

		if (l >= 5 && !memcmp(cpuinfo + i, "flags", 5) &&
		    !line_has_word(cpuinfo + i, l, "pdcm"))
			return 0;
		i += l + 1;
	}
	return 1;
}

int snap_caps_status_perfmon(const char *status, size_t len)
{
	return snap_caps_status_cap(status, len, 38) || snap_caps_status_cap(status, len, 21);
}

int snap_caps_status_cap(const char *status, size_t len, int bit)
{
	const char *p = status, *end = status + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (l > 7 && !memcmp(p, "CapEff:", 7)) {
			char buf[32];
			size_t k = l - 7 < sizeof(buf) - 1 ? l - 7 : sizeof(buf) - 1;
			unsigned long long v;

			memcpy(buf, p + 7, k);
			buf[k] = '\0';
			v = strtoull(buf, NULL, 16);
			return bit >= 0 && bit < 64 && ((v >> bit) & 1);
		}
		p += l + 1;
	}
	return 0;
}

static int path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static long read_long(const char *path, long dflt)
{
	char buf[64];

	if (snap_read_small(path, buf, sizeof(buf)) <= 0)
		return dflt;
	return strtol(buf, NULL, 10);
}

const char *snap_caps_perf_path(void)
{
	const char *p = getenv("SNAPTRACE_PERF");

	if (!p || !*p)
		p = getenv("MAGIC_TRACE_PERF_PATH");
	return p && *p ? p : "perf";
}

const char *snap_caps_self_dir(char *buf, size_t len)
{
	ssize_t n = len > 1 ? readlink("/proc/self/exe", buf, len - 1) : -1;
	char *slash;

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (slash)
		*slash = '\0';
	return buf;
}

int snap_caps_find_in_path(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/')) {
		if (access(prog, X_OK) < 0)
			return -ENOENT;
		return (size_t)snprintf(out, len, "%s", prog) < len ? 0 : -ENAMETOOLONG;
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if ((size_t)snprintf(out, len, "%.*s%s%s", (int)n, path, n ? "/" : "", prog) <
			    len &&
		    access(out, X_OK) == 0)
			return 0;
		path += n;
		if (*path == ':')
			path++;
	}
	return -ENOENT;
}

/* perf --version's output, run once a process for a perf path (asked on the
 * main thread): it takes ~7 ms (perf's start-up), and run and attach asked
 * twice, detecting the machine, then picking the decode's flags
 * (docs/design.md, "Start-up"). */
static int perf_version_out(const char *perf, char *out, size_t len)
{
	static struct {
		char perf[PATH_MAX];
		char out[256];
		int r, valid;
	} memo;
	char *argv[] = {(char *)(perf ? perf : "perf"), (char *)"--version", NULL};

	if (!memo.valid || strcmp(memo.perf, argv[0])) {
		memo.r = snap_run_capture(argv, memo.out, sizeof(memo.out));
		memo.valid = strlen(argv[0]) < sizeof(memo.perf);
		if (memo.valid)
			snprintf(memo.perf, sizeof(memo.perf), "%s", argv[0]);
	}
	snprintf(out, len, "%s", memo.out);
	return memo.r;
}

int snap_caps_perf_version(const char *perf, int *major, int *minor)
{
	char out[256];
	int r = perf_version_out(perf, out, sizeof(out));

	*major = *minor = 0;
	if (r != 0)
		return r < 0 ? r : -SNAP_EPERF;
	if (snap_caps_parse_perf_version(out, major, minor, NULL, 0) < 0) {
		*major = *minor = 0;
		return -SNAP_EPARSE;
	}
	return 0;
}

static int perf_at_least(const struct snap_perfcaps *c, int major, int minor)
{
	return c->perf_major > major || (c->perf_major == major && c->perf_minor >= minor);
}

int snap_caps_has_no_bpf_event(const struct snap_perfcaps *c)
{
	return perf_at_least(c, 5, 1);
}

int snap_caps_can_snapshot_at_exit(const struct snap_perfcaps *c)
{
	return perf_at_least(c, 5, 4);
}

int snap_caps_has_kcore(const struct snap_perfcaps *c)
{
	return perf_at_least(c, 5, 5);
}

int snap_caps_has_ctl_fd(const struct snap_perfcaps *c)
{
	return perf_at_least(c, 5, 10);
}

int snap_caps_has_dlfilter(const struct snap_perfcaps *c)
{
	return perf_at_least(c, 5, 14);
}

int snap_caps_has_no_inline(const struct snap_perfcaps *c)
{
	return perf_at_least(c, 4, 14);
}

static int file_readable(const char *path)
{
	return access(path, R_OK) == 0;
}

void snap_caps_plugin_env(struct snap_plugin_env *env, const char *exe_dir)
{
	memset(env, 0, sizeof(*env));
	env->exe_dir = exe_dir;
	env->override = getenv("SNAPTRACE_DLFILTER");
	env->env_no = getenv("SNAPTRACE_NO_DLFILTER");
	if (!env->env_no)
		env->env_no = getenv("MAGIC_TRACE_NO_DLFILTER");
}

int snap_caps_plugin_off(const struct snap_plugin_env *env)
{
	return env->no_dlfilter || (env->env_no && *env->env_no && strcmp(env->env_no, "0") != 0);
}

static int plugin_try(const struct snap_plugin_env *env, const char *dir, const char *sub,
		      char *path, size_t len)
{
	int (*exists)(const char *) = env->exists ? env->exists : file_readable;
	int n;

	if (!dir || !*dir)
		return 0;
	n = snprintf(path, len, "%s%s/%s", dir, sub, SNAP_PLUGIN_FILE);
	return n > 0 && (size_t)n < len && exists(path);
}

int snap_caps_find_plugin(const struct snap_plugin_env *env, char *path, size_t len, char *why,
			  size_t whylen)
{
	int (*exists)(const char *) = env->exists ? env->exists : file_readable;
	struct snap_perfcaps c = {.perf_major = env->perf_major, .perf_minor = env->perf_minor};

	if (env->no_dlfilter) {
		snprintf(why, whylen, "text path: -no-dlfilter");
		return 0;
	}
	if (snap_caps_plugin_off(env)) {
		snprintf(why, whylen, "text path: SNAPTRACE_NO_DLFILTER is set");
		return 0;
	}
	if (env->perf_major && !snap_caps_has_dlfilter(&c)) {
		snprintf(why, whylen, "text path: perf %d.%d has no --dlfilter (5.14 or newer has)",
			 env->perf_major, env->perf_minor);
		return 0;
	}
	if (env->override && *env->override) {
		if (strlen(env->override) < len && exists(env->override)) {
			snprintf(path, len, "%s", env->override);
			snprintf(why, whylen, "dlfilter plugin %s (SNAPTRACE_DLFILTER)", path);
			return 1;
		}
		snprintf(why, whylen, "text path: SNAPTRACE_DLFILTER=%s is not readable",
			 env->override);
		return 0;
	}
	if (plugin_try(env, env->exe_dir, "", path, len) ||
	    plugin_try(env, env->exe_dir, "/../lib/snaptrace", path, len) ||
	    plugin_try(env, "/usr/local/lib", "/snaptrace", path, len) ||
	    plugin_try(env, "/usr/lib", "/snaptrace", path, len)) {
		snprintf(why, whylen, "dlfilter plugin %s", path);
		return 1;
	}
	snprintf(why, whylen, "text path: %s not found next to snaptrace or in lib/snaptrace",
		 SNAP_PLUGIN_FILE);
	return 0;
}

const char *snap_caps_plugin(const struct snap_machine *m, int no_dlfilter)
{
	return m->plugin_found && !no_dlfilter && snap_caps_has_dlfilter(&m->caps) ? m->plugin_path
										   : NULL;
}

static void detect_plugin(struct snap_machine *m, const char *exe_dir)
{
	struct snap_plugin_env env;
	char why[PATH_MAX + 128];

	snap_caps_plugin_env(&env, exe_dir);
	env.perf_major = m->caps.perf_major;
	env.perf_minor = m->caps.perf_minor;
	m->plugin_off = snap_caps_plugin_off(&env);
	m->plugin_found = snap_caps_find_plugin(&env, m->plugin_path, sizeof(m->plugin_path), why,
						sizeof(why));
	if (!m->plugin_found)
		m->plugin_path[0] = '\0';
}

void snap_caps_detect(struct snap_machine *m, const char *perf, const char *exe_dir)
{
	size_t cpuinfo_len = 1 << 20;
	char *cpuinfo = snap_malloc(cpuinfo_len), status[4096], out[256];
	struct snap_perfcaps *c = &m->caps;
	long n;

	memset(m, 0, sizeof(*m));
	if (perf_version_out(perf, out, sizeof(out)) == 0 &&
	    snap_caps_parse_perf_version(out, &c->perf_major, &c->perf_minor, m->perf_version,
					 sizeof(m->perf_version)) == 0)
		m->perf_found = 1;
	/* SNAPTRACE_ASSUME_PT: tests drive the PT control flow with a fake perf. */
	c->has_pt = path_exists("/sys/bus/event_source/devices/intel_pt") ||
		    (getenv("SNAPTRACE_ASSUME_PT") && *getenv("SNAPTRACE_ASSUME_PT") == '1');
	c->has_pmu = path_exists("/sys/bus/event_source/devices/cpu") ||
		     path_exists("/sys/bus/event_source/devices/cpu_core");
	c->psb_period = c->has_pt &&
			read_long("/sys/bus/event_source/devices/intel_pt/caps/psb_cyc", 0) == 1;
	n = cpuinfo ? snap_read_small("/proc/cpuinfo", cpuinfo, cpuinfo_len) : -1;
	c->lbr = c->has_pmu && n > 0 && snap_caps_cpuinfo_has_pdcm(cpuinfo, (size_t)n);
	snap_free(cpuinfo);
	c->paranoid = (int)read_long("/proc/sys/kernel/perf_event_paranoid", 2);
	c->max_sample_rate = (uint64_t)read_long("/proc/sys/kernel/perf_event_max_sample_rate", 0);
	c->no_kcore = getenv("SNAPTRACE_PERF_NO_KCORE") || getenv("MAGIC_TRACE_PERF_NO_KCORE");
	m->euid = (int)geteuid();
	n = snap_read_small("/proc/self/status", status, sizeof(status));
	m->cap_perfmon = n > 0 && snap_caps_status_perfmon(status, (size_t)n);
	c->kernel_ok = m->euid == 0 || m->cap_perfmon || c->paranoid <= 1 ||
		       getenv("SNAPTRACE_PERF_IS_PRIVILEGED") ||
		       getenv("MAGIC_TRACE_PERF_IS_PRIVILEGED");
	/* Sampled tracepoints carry raw data: root, CAP_PERFMON or paranoid -1,
	 * and perf must read the event's id under tracefs. */
	c->sched_ok = (m->euid == 0 || m->cap_perfmon || c->paranoid <= -1) &&
		      (access("/sys/kernel/tracing/events/sched/sched_switch/id", R_OK) == 0 ||
		       access("/sys/kernel/debug/tracing/events/sched/sched_switch/id", R_OK) == 0);
	c->big_ring = m->euid == 0 || (n > 0 && snap_caps_status_cap(status, (size_t)n, 14));
	m->kptr_restrict = (int)read_long("/proc/sys/kernel/kptr_restrict", -1);
	m->has_uprobe_pmu = path_exists("/sys/bus/event_source/devices/uprobe");
	m->has_bp_pmu = path_exists("/sys/bus/event_source/devices/breakpoint");
	m->ptrace_scope = (int)read_long("/proc/sys/kernel/yama/ptrace_scope", -1);
	{
		char fzf[PATH_MAX];

		m->has_fzf = snap_caps_find_in_path("fzf", fzf, sizeof(fzf)) == 0;
	}
	detect_plugin(m, exe_dir);
}
