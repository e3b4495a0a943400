// SPDX-License-Identifier: GPL-2.0
/* snaptrace doctor's decisions and the capability parsers under them. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/caps.h"
#include "record/doctor.h"
#include "snap_test.h"
#include "util/err.h"

/* strstr behind a call gcc does not see through (its -Wstringop-overread
 * misjudges the item arrays under -fsanitize). */
__attribute__((noinline)) static int contains(const char *s, const char *sub)
{
	return strstr(s, sub) != NULL;
}

/* Returns the item called what; a missing item fails the test and returns a
 * blank one (never NULL, so callers can dereference). */
static const struct snap_doc_item *find(const struct snap_doc_item *it, size_t n, const char *what)
{
	static struct snap_doc_item none = {"(none)", SNAP_DOC_INFO, "", ""};

	for (size_t i = 0; i < n; i++)
		if (!strcmp(it[i].what, what))
			return &it[i];
	fprintf(stderr, "  no doctor item '%s'\n", what);
	snap_test_cur_failed = 1;
	return &none;
}

/* This VM, as a non-root user. */
static struct snap_machine vm_user(void)
{
	struct snap_machine m;

	memset(&m, 0, sizeof(m));
	m.perf_found = 1;
	strcpy(m.perf_version, "6.1.187");
	m.caps.perf_major = 6;
	m.caps.perf_minor = 1;
	m.caps.paranoid = 2;
	m.euid = 65534;
	m.kptr_restrict = 0;
	m.has_bp_pmu = 1;
	m.ptrace_scope = -1;
	return m;
}

static void b1_8_vm_non_root(void)
{
	struct snap_machine m = vm_user();
	struct snap_doc_item it[SNAP_DOC_MAX];
	size_t n = snap_doctor_check(&m, it, SNAP_DOC_MAX);
	const struct snap_doc_item *k;

	CHECK(n >= 10);
	CHECK_INT_EQ(SNAP_DOC_OK, find(it, n, "perf")->status);
	CHECK_INT_EQ(SNAP_DOC_MISSING, find(it, n, "Intel PT")->status);
	CHECK(contains(find(it, n, "Intel PT")->fix, "stack sampling"));
	CHECK_INT_EQ(SNAP_DOC_MISSING, find(it, n, "hardware PMU")->status);
	CHECK_INT_EQ(SNAP_DOC_MISSING, find(it, n, "LBR")->status);
	k = find(it, n, "kernel tracing");
	CHECK_INT_EQ(SNAP_DOC_MISSING, k->status);
	CHECK_STR_EQ("run as root, or: sudo sysctl kernel.perf_event_paranoid=1", k->fix);
	CHECK(contains(k->detail, "paranoid 2"));
	CHECK_INT_EQ(SNAP_DOC_MISSING, find(it, n, "dlfilter")->status);
	CHECK(contains(find(it, n, "dlfilter")->fix, "run make"));
	CHECK_INT_EQ(SNAP_DOC_OK, find(it, n, "breakpoints")->status);
	CHECK_INT_EQ(SNAP_DOC_INFO, find(it, n, "off-CPU stacks")->status);
	CHECK(contains(find(it, n, "off-CPU stacks")->detail, "[off-CPU]"));
	CHECK_INT_EQ(1, snap_doctor_can_record(&m));
	CHECK(contains(snap_doctor_mode(&m), "cpu-clock"));
}

static void b1_8_bare_metal_root(void)
{
	struct snap_machine m = vm_user();
	struct snap_doc_item it[SNAP_DOC_MAX];
	size_t n;

	m.euid = 0;
	m.caps.kernel_ok = 1;
	m.caps.has_pt = m.caps.has_pmu = m.caps.lbr = m.caps.psb_period = 1;
	m.plugin_found = 1;
	strcpy(m.plugin_path, "/x/snaptrace-dlfilter.so");
	m.kptr_restrict = 1;
	n = snap_doctor_check(&m, it, SNAP_DOC_MAX);
	for (size_t i = 0; i < n; i++) {
		CHECK(it[i].status != SNAP_DOC_MISSING);
		if (it[i].status == SNAP_DOC_MISSING)
			fprintf(stderr, "  unexpected: %s %s\n", it[i].what, it[i].detail);
	}
	CHECK(contains(find(it, n, "kernel tracing")->detail, "root"));
	CHECK(contains(snap_doctor_mode(&m), "Intel PT"));
	m.caps.sched_ok = 1;
	n = snap_doctor_check(&m, it, SNAP_DOC_MAX);
	CHECK_INT_EQ(SNAP_DOC_OK, find(it, n, "off-CPU stacks")->status);
}

static void b1_8_broken_machine(void)
{
	struct snap_machine m = vm_user();
	struct snap_doc_item it[SNAP_DOC_MAX];
	size_t n;

	m.perf_found = 0;
	m.caps.paranoid = 3;
	m.kptr_restrict = 2;
	m.ptrace_scope = 3;
	m.has_bp_pmu = 0;
	n = snap_doctor_check(&m, it, SNAP_DOC_MAX);
	CHECK_INT_EQ(SNAP_DOC_MISSING, find(it, n, "perf")->status);
	CHECK(contains(find(it, n, "perf")->fix, "linux-perf"));
	CHECK_INT_EQ(SNAP_DOC_MISSING, find(it, n, "perf_event_paranoid")->status);
	CHECK_INT_EQ(SNAP_DOC_MISSING, find(it, n, "kptr_restrict")->status);
	CHECK_INT_EQ(SNAP_DOC_MISSING, find(it, n, "ptrace")->status);
	CHECK_INT_EQ(SNAP_DOC_MISSING, find(it, n, "breakpoints")->status);
	CHECK_INT_EQ(SNAP_DOC_MISSING, find(it, n, "dlfilter")->status);
	CHECK_INT_EQ(0, snap_doctor_can_record(&m));
	m.perf_found = 1;
	CHECK_INT_EQ(0, snap_doctor_can_record(&m)); /* paranoid 3, not root */
	m.caps.kernel_ok = 1;
	CHECK_INT_EQ(1, snap_doctor_can_record(&m));
	/* perf 5.4: too old for the control fd and the plugin */
	m.caps.perf_major = 5;
	m.caps.perf_minor = 4;
	m.plugin_found = 1;
	n = snap_doctor_check(&m, it, SNAP_DOC_MAX);
	CHECK_INT_EQ(SNAP_DOC_MISSING, find(it, n, "perf")->status);
	CHECK(contains(find(it, n, "dlfilter")->fix, "5.14"));
	/* a short output array is never overrun */
	CHECK_INT_EQ(3, snap_doctor_check(&m, it, 3));
}

static void b2_1_perf_versions(void)
{
	int a = -1, b = -1;
	char v[16];

	CHECK_INT_EQ(0,
		     snap_caps_parse_perf_version("perf version 6.1.187\n", &a, &b, v, sizeof(v)));
	CHECK_INT_EQ(6, a);
	CHECK_INT_EQ(1, b);
	CHECK_STR_EQ("6.1.187", v);
	CHECK_INT_EQ(0,
		     snap_caps_parse_perf_version("perf version 5.10.g1234abcd", &a, &b, NULL, 0));
	CHECK_INT_EQ(5, a);
	CHECK_INT_EQ(10, b);
	CHECK_INT_EQ(0, snap_caps_parse_perf_version("perf version 6.1.187-very-long-suffix", &a,
						     &b, v, 8));
	CHECK_STR_EQ("6.1.187", v);
	CHECK_INT_EQ(-SNAP_EPARSE, snap_caps_parse_perf_version("perf version x", &a, &b, NULL, 0));
	CHECK_INT_EQ(-SNAP_EPARSE, snap_caps_parse_perf_version("", &a, &b, NULL, 0));
	CHECK_INT_EQ(-SNAP_EPARSE, snap_caps_parse_perf_version("perf version 6", &a, &b, NULL, 0));
}

static void b1_8_cpuinfo_and_status(void)
{
	const char two[] = "processor : 0\nflags : fpu pdcm sse\n\nprocessor : 1\nflags : fpu "
			   "pdcm\n";
	const char one_missing[] = "flags : fpu pdcm\nflags : fpu pdcmx\n";

	CHECK_INT_EQ(1, snap_caps_cpuinfo_has_pdcm(two, strlen(two)));
	CHECK_INT_EQ(0, snap_caps_cpuinfo_has_pdcm(one_missing, strlen(one_missing)));
	CHECK_INT_EQ(1, snap_caps_cpuinfo_has_pdcm("", 0));
	CHECK_INT_EQ(1, snap_caps_status_perfmon("Name: x\nCapEff:\t000001ffffffffff\n", 35));
	CHECK_INT_EQ(0, snap_caps_status_perfmon("CapEff:\t0000000000000000\n", 25));
	CHECK_INT_EQ(1, snap_caps_status_perfmon("CapEff:\t0000004000000000\n", 25));
	CHECK_INT_EQ(1, snap_caps_status_perfmon("CapEff:\t0000000000200000\n", 25));
	CHECK_INT_EQ(0, snap_caps_status_perfmon("CapPrm:\t0000004000000000\n", 25));
}

/* Writes dir/name, a perf that prints version ver and logs each run to dir/log. */
static void fake_perf(const char *dir, const char *name, const char *ver, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "#!/bin/sh\necho %s >>'%s/log'\necho 'perf version %s'\n", name, dir, ver);
	fclose(f);
	chmod(path, 0755);
}

static long lines_of(const char *path)
{
	FILE *f = fopen(path, "r");
	long n = 0;
	int c;

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* perf --version runs once a process for a perf (~7 ms each: run asked while
 * detecting the machine, and again for the decode's flags). */
static void perf_version_asked_once(void)
{
	char dir[] = "/tmp/snaptrace-unit-perfver.XXXXXX", p1[128], p2[128], log[160];
	struct snap_machine m;
	int a = -1, b = -1;

	CHECK(mkdtemp(dir) != NULL);
	fake_perf(dir, "perf1", "6.2.5", p1, sizeof(p1));
	fake_perf(dir, "perf2", "5.10.0", p2, sizeof(p2));
	snprintf(log, sizeof(log), "%s/log", dir);
	snap_caps_detect(&m, p1, NULL);
	CHECK(m.perf_found);
	CHECK_INT_EQ(6, m.caps.perf_major);
	CHECK(!strcmp(m.perf_version, "6.2.5"));
	CHECK_INT_EQ(0, snap_caps_perf_version(p1, &a, &b));
	CHECK_INT_EQ(6, a);
	CHECK_INT_EQ(2, b);
	CHECK_INT_EQ(0, snap_caps_perf_version(p1, &a, &b));
	CHECK_INT_EQ(1, (int)lines_of(log));
	/* another perf is asked */
	CHECK_INT_EQ(0, snap_caps_perf_version(p2, &a, &b));
	CHECK_INT_EQ(5, a);
	CHECK_INT_EQ(10, b);
	CHECK_INT_EQ(2, (int)lines_of(log));
	unlink(p1);
	unlink(p2);
	unlink(log);
	rmdir(dir);
}

int main(void)
{
	RUN(b1_8_vm_non_root);
	RUN(b1_8_bare_metal_root);
	RUN(b1_8_broken_machine);
	RUN(b2_1_perf_versions);
	RUN(b1_8_cpuinfo_and_status);
	RUN(perf_version_asked_once);
	return snap_test_done();
}
