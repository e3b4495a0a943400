// SPDX-License-Identifier: GPL-2.0
/* The primary-stream rule shared by the two parsers. See primary.h. */
#include "parse/primary.h"

#include <string.h>

int snap_primary_is_extra_name(const char *name)
{
	return !strcmp(name, "branch-misses") || !strcmp(name, "cache-misses");
}

enum snap_ev_kind snap_primary_classify(struct snap_primary *p, const struct snap_strtab *st,
					uint32_t event, int has_chain)
{
	if (p->mode == SNAP_TRACE_PT)
		return SNAP_EV_EXTRA;
	if (!p->event && (has_chain || p->mode == SNAP_TRACE_SAMPLES) &&
	    !snap_primary_is_extra_name(snap_strtab_get(st, event)))
		p->event = event;
	return p->event && event == p->event ? SNAP_EV_SAMPLE : SNAP_EV_EXTRA;
}
