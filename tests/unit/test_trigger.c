// SPDX-License-Identifier: GPL-2.0
/* Trigger resolution and hardware breakpoints, on this very process. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/trigger.h"
#include "snap_test.h"
#include "util/err.h"
#include "util/file.h"

volatile int trigger_sink;

void snaptrace_test_target(int i);

__attribute__((noinline)) void snaptrace_test_target(int i)
{
	trigger_sink += i;
}

static void resolve_self(void)
{
	uint64_t addr = 0;
	char where[4096];

	CHECK_INT_EQ(0, snap_trigger_resolve(getpid(), "snaptrace_test_target", &addr, where,
					     sizeof(where)));
	CHECK_U64_EQ((uint64_t)(uintptr_t)&snaptrace_test_target, addr);
	CHECK(strstr(where, "test_trigger") != NULL);
	/* a libc function, found through /proc/self/maps */
	CHECK_INT_EQ(0, snap_trigger_resolve(getpid(), "getpid", &addr, where, sizeof(where)));
	CHECK_U64_EQ((uint64_t)(uintptr_t)&getpid, addr);
	CHECK(strstr(where, "libc") != NULL);
	CHECK_INT_EQ(-ENOENT,
		     snap_trigger_resolve(getpid(), "no_such_function_anywhere", &addr, NULL, 0));
	CHECK_INT_EQ(-ENOENT, snap_trigger_resolve(999999999, "getpid", &addr, NULL, 0));
}

/* C functions under C++ and Rust (legacy) mangled names, as g++ and rustc
 * would name them (the names are the test: docs/recording.md, "Triggers"). */
void cxx_count_words(void) __asm__("_ZN3app6detail11count_wordsEPKc");
void cxx_over_int(void) __asm__("_ZN3app4overEi");
void cxx_over_double(void) __asm__("_ZN3app4overEd");
void rust_split_text(void) __asm__("_ZN2rs5words10split_text17h0123456789abcdefE");

__attribute__((noinline, used)) void cxx_count_words(void)
{
	trigger_sink += 1;
}

__attribute__((noinline, used)) void cxx_over_int(void)
{
	trigger_sink += 2;
}

__attribute__((noinline, used)) void cxx_over_double(void)
{
	trigger_sink += 3;
}

__attribute__((noinline, used)) void rust_split_text(void)
{
	trigger_sink += 4;
}

static void b2_5_resolve_demangled(void)
{
	uint64_t addr = 0, want = (uint64_t)(uintptr_t)&cxx_count_words;
	char disp[256];

	/* the mangled name, perf's demangled one, gdb's with parameters, a trailing part */
	CHECK_INT_EQ(0, snap_trigger_resolve_disp(getpid(), "_ZN3app6detail11count_wordsEPKc",
						  &addr, NULL, 0, disp, sizeof(disp)));
	CHECK_U64_EQ(want, addr);
	CHECK_STR_EQ("app::detail::count_words", disp); /* the hit is named demangled */
	addr = 0;
	CHECK_INT_EQ(0, snap_trigger_resolve_disp(getpid(), "app::detail::count_words", &addr, NULL,
						  0, disp, sizeof(disp)));
	CHECK_U64_EQ(want, addr);
	addr = 0;
	CHECK_INT_EQ(0, snap_trigger_resolve(getpid(), "app::detail::count_words(char const*)",
					     &addr, NULL, 0));
	CHECK_U64_EQ(want, addr);
	addr = 0;
	CHECK_INT_EQ(0, snap_trigger_resolve_disp(getpid(), "symbol:count_words", &addr, NULL, 0,
						  disp, sizeof(disp)));
	CHECK_U64_EQ(want, addr);
	CHECK_STR_EQ("app::detail::count_words", disp);
	addr = 0;
	CHECK_INT_EQ(0, snap_trigger_resolve(getpid(), "detail::count_words", &addr, NULL, 0));
	CHECK_U64_EQ(want, addr);
	/* not a part after "::": no match */
	CHECK_INT_EQ(-ENOENT, snap_trigger_resolve(getpid(), "unt_words", &addr, NULL, 0));
	/* Rust: the path without the per-build hash */
	addr = 0;
	CHECK_INT_EQ(0, snap_trigger_resolve_disp(getpid(), "rs::words::split_text", &addr, NULL, 0,
						  disp, sizeof(disp)));
	CHECK_U64_EQ((uint64_t)(uintptr_t)&rust_split_text, addr);
	CHECK_STR_EQ("rs::words::split_text", disp);
	/* overloads: the name alone is ambiguous, the parameters tell them apart */
	CHECK_INT_EQ(-EEXIST, snap_trigger_resolve(getpid(), "app::over", &addr, NULL, 0));
	CHECK_INT_EQ(0, snap_trigger_resolve(getpid(), "app::over(double)", &addr, NULL, 0));
	CHECK_U64_EQ((uint64_t)(uintptr_t)&cxx_over_double, addr);
	/* a C name is still matched exactly, and shown as it is */
	CHECK_INT_EQ(0, snap_trigger_resolve_disp(getpid(), "snaptrace_test_target", &addr, NULL, 0,
						  disp, sizeof(disp)));
	CHECK_STR_EQ("snaptrace_test_target", disp);
}

static void b2_5_breakpoint_hits(void)
{
	struct snap_trigger t;
	struct snap_trigger_hit h[8];
	uint64_t addr = (uint64_t)(uintptr_t)&snaptrace_test_target;
	struct pollfd pfd[8];
	int err;
	size_t n;

	snap_trigger_init(&t);
	err = snap_trigger_arm(&t, getpid(), addr, 0);
	if (err == -EACCES || err == -ENOENT || err == -EOPNOTSUPP) {
		printf("SKIP test_trigger.c:b2_5_breakpoint_hits: no breakpoints here (%d)\n", err);
		snap_trigger_fini(&t);
		return;
	}
	CHECK_INT_EQ(0, err);
	CHECK(t.nbps >= 1);
	CHECK_INT_EQ(0, (int)snap_trigger_read(&t, h, 8)); /* nothing yet */
	snaptrace_test_target(1);
	snaptrace_test_target(2);
	n = snap_trigger_pollfds(&t, pfd, 8);
	CHECK(n >= 1);
	CHECK_INT_EQ(1, poll(pfd, n, 2000) >= 1);
	n = snap_trigger_read(&t, h, 8);
	CHECK_INT_EQ(2, (int)n);
	if (n >= 1) {
		CHECK_U64_EQ(addr, h[0].hit.ip);
		CHECK_INT_EQ(getpid(), h[0].hit.pid);
		CHECK_INT_EQ(gettid(), h[0].hit.tid);
	}
	if (n == 2)
		CHECK(h[0].hit.time <= h[1].hit.time);
	/* a full rescan arms nothing new (every thread is known) */
	CHECK_INT_EQ(0, snap_trigger_rescan(&t, getpid(), addr));
	snap_trigger_fini(&t);
	snaptrace_test_target(3); /* no breakpoint any more */
	CHECK_INT_EQ(0, (int)t.nbps);
	snap_trigger_fini(&t); /* twice is harmless */
}

/* Hits beyond what one read takes stay for the next read; hits the ring had
 * no room for are counted: read + lost = calls, none dropped silently. */
static void b2_5_breakpoint_hits_all_counted(void)
{
	struct snap_trigger t;
	struct snap_trigger_hit h[64];
	uint64_t addr = (uint64_t)(uintptr_t)&snaptrace_test_target, got = 0;
	uint64_t prev = 0, lost;
	int err, sorted = 1;
	size_t n;

	snap_trigger_init(&t);
	err = snap_trigger_arm(&t, getpid(), addr, 0);
	if (err < 0) {
		printf("SKIP test_trigger.c:b2_5_breakpoint_hits_all_counted: no breakpoints here "
		       "(%d)\n",
		       err);
		snap_trigger_fini(&t);
		return;
	}
	for (int i = 0; i < 5; i++)
		snaptrace_test_target(i);
	CHECK_INT_EQ(2, (int)snap_trigger_read(&t, h, 2));
	CHECK_INT_EQ(2, (int)snap_trigger_read(&t, h, 2));
	CHECK_INT_EQ(1, (int)snap_trigger_read(&t, h, 2));
	CHECK_INT_EQ(0, (int)snap_trigger_read(&t, h, 2));
	CHECK_U64_EQ(5, t.nhits);
	CHECK_U64_EQ(0, snap_trigger_unread(&t));
	/* far more calls than a ring holds, read only afterwards */
	for (int i = 0; i < 5000; i++)
		snaptrace_test_target(i);
	while ((n = snap_trigger_read(&t, h, 64)) > 0) {
		for (size_t i = 0; i < n; i++) {
			sorted &= h[i].hit.time >= prev || i == 0;
			prev = h[i].hit.time;
		}
		got += n;
	}
	CHECK(sorted);
	CHECK(got >= 64);
	lost = snap_trigger_unread(&t);
	CHECK(lost > 0);
	CHECK_U64_EQ(5000, got + lost);
	CHECK_U64_EQ(5005, t.nhits + lost);
	snap_trigger_fini(&t);
}

/* A FIFO (or device) where an ELF file is expected: refused at once, never
 * blocking in open (a traced program could name one like its executable). */
static void file_map_never_blocks(void)
{
	char dir[] = "/tmp/snaptrace-fifo.XXXXXX", path[64];
	const void *buf;
	size_t len;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/prog (deleted)", dir);
	CHECK_INT_EQ(0, mkfifo(path, 0600));
	alarm(10); /* a blocked open would hang: die (a failure) instead */
	CHECK_INT_EQ(-EINVAL, snap_file_map(path, &buf, &len));
	CHECK_INT_EQ(-EINVAL, snap_file_map("/dev/null", &buf, &len));
	alarm(0);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	RUN(file_map_never_blocks);
	RUN(resolve_self);
	RUN(b2_5_resolve_demangled);
	RUN(b2_5_breakpoint_hits);
	RUN(b2_5_breakpoint_hits_all_counted);
	return snap_test_done();
}
