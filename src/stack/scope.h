/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace scope (opts.scope of stack/builder.h, docs/behaviour.md §4.7): which
 * events violate a scope and which frames of a chain it keeps. The rules
 * are written out in stack/builder.h ("Trace scope"). Pure: no state.
 */
#ifndef SNAP_STACK_SCOPE_H
#define SNAP_STACK_SCOPE_H

#include "model/event.h"

/* Returns 1 if frame f of a chain is kept under scope: never for address 0;
 * SNAP_SCOPE_USER keeps non-kernel addresses, SNAP_SCOPE_KERNEL kernel ones,
 * SNAP_SCOPE_BOTH every other frame. */
static inline int snap_scope_keeps(enum snap_scope scope, const struct snap_loc *f)
{
	if (!f->ip)
		return 0;
	if (scope == SNAP_SCOPE_USER)
		return !snap_loc_is_kernel(f);
	if (scope == SNAP_SCOPE_KERNEL)
		return snap_loc_is_kernel(f);
	return 1;
}

/* Returns the first frame of ev's chain (outermost first) outside scope, or
 * NULL (always NULL for SNAP_SCOPE_BOTH or no frames). */
const struct snap_loc *snap_scope_sample_violation(enum snap_scope scope,
						   const struct snap_event *ev);

/* snap_scope_violates for the events the inline test does not settle. */
int snap_scope_violates_other(enum snap_scope scope, const struct snap_event *ev);

/* Returns 1 if ev violates scope (the rules of stack/builder.h): a branch by
 * its addresses and kind, a sample by its frames, a power or extra event by
 * its location; never a decode error, switch or task event. Inline for most
 * events of a PT trace (a call, return or jump between user addresses under
 * the default scope), which it is asked about one by one. */
static inline int snap_scope_violates(enum snap_scope scope, const struct snap_event *ev)
{
	if (scope == SNAP_SCOPE_BOTH)
		return 0;
	if (scope == SNAP_SCOPE_USER && ev->kind == SNAP_EV_BRANCH &&
	    (ev->br_kind == SNAP_BR_CALL || ev->br_kind == SNAP_BR_RETURN ||
	     ev->br_kind == SNAP_BR_JUMP))
		return snap_loc_is_kernel(&ev->src) || snap_loc_is_kernel(&ev->dst);
	return snap_scope_violates_other(scope, ev);
}

#endif
