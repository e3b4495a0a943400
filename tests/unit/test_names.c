// SPDX-License-Identifier: GPL-2.0
/* The names layers exchange (model/names.h) and perf's event names (model/evname.h). */
#include <string.h>

#include "model/evname.h"
#include "model/names.h"
#include "snap_test.h"

static void unknown_name_forms(void)
{
	char buf[SNAP_UNKNOWN_NAME_SIZE(12)];
	size_t n;

	n = snap_unknown_name(buf, 0x4011a0, "/usr/bin/app", 12);
	CHECK_INT_EQ(strlen("[unknown @ 0x4011a0 (/usr/bin/app)]"), n);
	CHECK(!memcmp(buf, "[unknown @ 0x4011a0 (/usr/bin/app)]", n));
	n = snap_unknown_name(buf, 0, NULL, 0);
	CHECK(n == 15 && !memcmp(buf, "[unknown @ 0x0]", n));
	n = snap_unknown_name(buf, UINT64_MAX, "", 0);
	CHECK(n == 33 && !memcmp(buf, "[unknown @ 0xffffffffffffffff ()]", n));
	/* the DSO's bytes are copied, not up to a NUL */
	n = snap_unknown_name(buf, 0x10, "ab\0c", 4);
	CHECK(n == 23 && !memcmp(buf, "[unknown @ 0x10 (ab\0c)]", n));
}

static void unknown_parse_round_trip(void)
{
	static const char *const dsos[] = {"/lib/x.so", "[vdso]", "a (b) c", ""};
	struct snap_unknown_parts u;

	for (size_t i = 0; i < sizeof(dsos) / sizeof(*dsos); i++) {
		char buf[SNAP_UNKNOWN_NAME_SIZE(16)];
		size_t n = snap_unknown_name(buf, 0xbeef, dsos[i], strlen(dsos[i]));

		CHECK_INT_EQ(2, snap_unknown_parse(buf, n, &u));
		CHECK(u.addr_len == 6 && !memcmp(u.addr, "0xbeef", 6));
		CHECK(u.dso && u.dso_len == strlen(dsos[i]) && !memcmp(u.dso, dsos[i], u.dso_len));
	}
}

static void unknown_parse_kinds(void)
{
	struct snap_unknown_parts u;

	CHECK_INT_EQ(0, snap_unknown_parse("main", 4, &u));
	CHECK_INT_EQ(0, snap_unknown_parse("[unknow", 7, &u));
	CHECK_INT_EQ(0, snap_unknown_parse("unknown", 7, NULL));
	CHECK_INT_EQ(1, snap_unknown_parse("[unknown]", 9, &u));
	CHECK_INT_EQ(1, snap_unknown_parse("[unknown", 8, NULL));
	/* no DSO: the address is the rest */
	CHECK_INT_EQ(2, snap_unknown_parse("[unknown @ 0x12]", 16, &u));
	CHECK(!u.dso && u.addr_len == 5 && !memcmp(u.addr, "0x12]", 5));
	CHECK_INT_EQ(2, snap_unknown_parse("[unknown @ 0x12 (x)", 19, &u));
	CHECK(!u.dso);
	/* the first " (" opens the DSO */
	CHECK_INT_EQ(2, snap_unknown_parse("[unknown @ 0x1 (a (b))]", 23, &u));
	CHECK(u.addr_len == 3 && u.dso_len == 5 && !memcmp(u.dso, "a (b)", 5));
}

static void evname_base(void)
{
	static const struct {
		const char *name, *base;
	} t[] = {
		{"cpu-clock:u", "cpu-clock"},
		{"cpu-clock:ppp", "cpu-clock"},
		{"sched:sched_switch", "sched:sched_switch"},
		{"intel_pt//u", "intel_pt"},
		{"branches:", "branches"},
		{":u", ":u"},
		{"cycles", "cycles"},
		{"a:b:k", "a:b"},
		{"", ""},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++)
		CHECK_INT_EQ(strlen(t[i].base), snap_evname_base(t[i].name, strlen(t[i].name)));
	/* a NUL is no modifier letter */
	CHECK_INT_EQ(5, snap_evname_base("ab:u\0", 5));
}

static void evname_synth(void)
{
	CHECK(snap_evname_is_synth("ptwrite", 7));
	CHECK(snap_evname_is_synth("transactions", 12));
	CHECK(snap_evname_is_synth("psbx", 3));
	CHECK(!snap_evname_is_synth("psbx", 4));
	CHECK(!snap_evname_is_synth(SNAP_EVNAME_CBR, 3));
	CHECK(!snap_evname_is_synth(SNAP_EVNAME_BRANCHES, 8));
	CHECK(!snap_evname_is_synth("", 0));
}

int main(void)
{
	RUN(unknown_name_forms);
	RUN(unknown_parse_round_trip);
	RUN(unknown_parse_kinds);
	RUN(evname_base);
	RUN(evname_synth);
	return snap_test_done();
}
