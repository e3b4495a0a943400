// SPDX-License-Identifier: GPL-2.0
/* Trace scope checks (docs/behaviour.md §4.7). See scope.h. */
#include "stack/scope.h"

#include <stddef.h>

static int is_user(const struct snap_loc *l)
{
	return l->ip && !snap_loc_is_kernel(l);
}

static int off_scope(enum snap_scope scope, const struct snap_loc *l)
{
	if (scope == SNAP_SCOPE_USER)
		return snap_loc_is_kernel(l);
	if (scope == SNAP_SCOPE_KERNEL)
		return is_user(l);
	return 0;
}

static int branch_violates(enum snap_scope scope, const struct snap_event *ev)
{
	if (scope == SNAP_SCOPE_USER) {
		if (snap_loc_is_kernel(&ev->src) || snap_loc_is_kernel(&ev->dst))
			return 1;
		switch (ev->br_kind) {
		case SNAP_BR_SYSCALL:
		case SNAP_BR_HWINT:
			return ev->br_state == SNAP_BR_NOSTATE;
		case SNAP_BR_SYSRET:
		case SNAP_BR_IRET:
			return ev->br_state != SNAP_BR_START;
		default:
			return 0;
		}
	}
	if (scope == SNAP_SCOPE_KERNEL)
		return ev->br_state == SNAP_BR_NOSTATE && (is_user(&ev->src) || is_user(&ev->dst));
	return 0;
}

const struct snap_loc *snap_scope_sample_violation(enum snap_scope scope,
						   const struct snap_event *ev)
{
	uint32_t i;

	if (scope == SNAP_SCOPE_BOTH || !ev->frames)
		return NULL;
	for (i = 0; i < ev->nframes; i++)
		if (off_scope(scope, &ev->frames[i]))
			return &ev->frames[i];
	return NULL;
}

int snap_scope_violates_other(enum snap_scope s, const struct snap_event *ev)
{
	if (s == SNAP_SCOPE_BOTH)
		return 0;
	switch (ev->kind) {
	case SNAP_EV_BRANCH:
		return branch_violates(s, ev);
	case SNAP_EV_SAMPLE:
		return snap_scope_sample_violation(s, ev) != NULL;
	case SNAP_EV_POWER:
	case SNAP_EV_EXTRA:
		return off_scope(s, &ev->src);
	default:
		return 0; /* SWITCH: out-of-scope frames of its chain are dropped quietly */
	}
}
