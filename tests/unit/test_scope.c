// SPDX-License-Identifier: GPL-2.0
/* stack/scope: the trace-scope rules of docs/behaviour.md §4.7 (stack/builder.h). */
#include <string.h>

#include "snap_test.h"
#include "stack/scope.h"

#define U 0x401000ull		/* a user address */
#define K 0xffffffff81000000ull /* a kernel address */

static struct snap_event branch(uint64_t src, uint64_t dst, enum snap_br_kind kind,
				enum snap_br_state state)
{
	struct snap_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = SNAP_EV_BRANCH;
	ev.src.ip = src;
	ev.dst.ip = dst;
	ev.br_kind = kind;
	ev.br_state = state;
	return ev;
}

/* §4.7: each scope's branch rules, one row per (event, scope). */
static void branches(void)
{
	static const struct {
		uint64_t src, dst;
		enum snap_br_kind kind;
		enum snap_br_state state;
		int user, kernel, both; /* violates under each scope */
	} t[] = {
		{U, U, SNAP_BR_CALL, SNAP_BR_NOSTATE, 0, 1, 0},
		{U, K, SNAP_BR_CALL, SNAP_BR_NOSTATE, 1, 1, 0},
		{K, K, SNAP_BR_CALL, SNAP_BR_NOSTATE, 1, 0, 0},
		{U, 0, SNAP_BR_SYSCALL, SNAP_BR_NOSTATE, 1, 1, 0},
		{U, 0, SNAP_BR_SYSCALL, SNAP_BR_END, 0, 0, 0},
		{0, U, SNAP_BR_SYSRET, SNAP_BR_START, 0, 0, 0},
		{0, U, SNAP_BR_SYSRET, SNAP_BR_END, 1, 0, 0},
		{0, U, SNAP_BR_IRET, SNAP_BR_NOSTATE, 1, 1, 0},
		{U, 0, SNAP_BR_HWINT, SNAP_BR_NOSTATE, 1, 1, 0},
		{U, U, SNAP_BR_JUMP, SNAP_BR_START, 0, 0, 0},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct snap_event ev = branch(t[i].src, t[i].dst, t[i].kind, t[i].state);

		CHECK_INT_EQ(t[i].user, snap_scope_violates(SNAP_SCOPE_USER, &ev));
		CHECK_INT_EQ(t[i].kernel, snap_scope_violates(SNAP_SCOPE_KERNEL, &ev));
		CHECK_INT_EQ(t[i].both, snap_scope_violates(SNAP_SCOPE_BOTH, &ev));
	}
}

/* A sample violates by its first out-of-scope frame; keeps() drops address 0
 * always and the other side's addresses; switches and errors never violate. */
static void samples_and_keeps(void)
{
	struct snap_loc fr[3];
	struct snap_event ev;

	memset(fr, 0, sizeof(fr));
	memset(&ev, 0, sizeof(ev));
	fr[0].ip = U;
	fr[1].ip = K;
	fr[2].ip = K + 8;
	ev.kind = SNAP_EV_SAMPLE;
	ev.frames = fr;
	ev.nframes = 3;
	CHECK(snap_scope_sample_violation(SNAP_SCOPE_USER, &ev) == &fr[1]);
	CHECK(snap_scope_sample_violation(SNAP_SCOPE_KERNEL, &ev) == &fr[0]);
	CHECK(snap_scope_sample_violation(SNAP_SCOPE_BOTH, &ev) == NULL);
	CHECK_INT_EQ(1, snap_scope_violates(SNAP_SCOPE_USER, &ev));
	ev.nframes = 1;
	CHECK_INT_EQ(0, snap_scope_violates(SNAP_SCOPE_USER, &ev));
	CHECK_INT_EQ(1, snap_scope_violates(SNAP_SCOPE_KERNEL, &ev));
	ev.kind = SNAP_EV_SWITCH;
	ev.nframes = 3;
	CHECK_INT_EQ(0, snap_scope_violates(SNAP_SCOPE_USER, &ev));
	ev.kind = SNAP_EV_EXTRA;
	ev.src.ip = K;
	CHECK_INT_EQ(1, snap_scope_violates(SNAP_SCOPE_USER, &ev));
	CHECK_INT_EQ(0, snap_scope_violates(SNAP_SCOPE_KERNEL, &ev));
	CHECK_INT_EQ(1, snap_scope_keeps(SNAP_SCOPE_USER, &fr[0]));
	CHECK_INT_EQ(0, snap_scope_keeps(SNAP_SCOPE_USER, &fr[1]));
	CHECK_INT_EQ(0, snap_scope_keeps(SNAP_SCOPE_KERNEL, &fr[0]));
	CHECK_INT_EQ(1, snap_scope_keeps(SNAP_SCOPE_KERNEL, &fr[1]));
	CHECK_INT_EQ(1, snap_scope_keeps(SNAP_SCOPE_BOTH, &fr[0]));
	fr[0].ip = 0;
	CHECK_INT_EQ(0, snap_scope_keeps(SNAP_SCOPE_BOTH, &fr[0]));
}

int main(void)
{
	RUN(branches);
	RUN(samples_and_keeps);
	return snap_test_done();
}
