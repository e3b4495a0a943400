// SPDX-License-Identifier: GPL-2.0
#include "stack/sampdiff.h"

/* snap_sampdiff_keeps, counting a frame it skips in st (if any). */
static int kept(enum snap_sampdiff_keep keep, const struct snap_loc *f,
		struct snap_sampdiff_stats *st)
{
	if (snap_sampdiff_keeps(keep, f))
		return 1;
	if (st && f->ip)
		st->dropped_frames++;
	else if (st)
		st->zero_frames++;
	return 0;
}

int snap_sampdiff_apply(struct snap_cstack *cs, const struct snap_loc *frames, uint32_t n,
			enum snap_sampdiff_keep keep, uint64_t t, struct snap_sampdiff_stats *st)
{
	const struct snap_frame *cur;
	size_t depth, m = 0;
	uint32_t i = 0;
	int any = 0;
	int err;

	if (st)
		st->samples++;
	/* Write any pending branch-style ops first so file order stays sane. */
	if ((err = snap_cstack_flush_to(cs, t)) < 0)
		return err;
	cur = snap_cstack_frames(cs, &depth);
	/* Longest common prefix by address and symbol, over kept frames only. */
	for (; i < n; i++) {
		const struct snap_loc *f = &frames[i];
		uint32_t sym = f->sym ? f->sym : cs->ctx->n.unknown;

		if (!kept(keep, f, st))
			continue;
		any = 1;
		if (m == depth || cur[m].ip != f->ip || cur[m].sym != sym)
			break;
		m++;
	}
	while (depth > m) {
		if ((err = snap_cstack_pop_now(cs, t)) < 0)
			return err;
		depth--;
	}
	for (; i < n; i++) {
		const struct snap_loc *f = &frames[i];

		if (!kept(keep, f, st))
			continue;
		any = 1;
		/* > 0: dropped by the depth cap (counted in the ctx stats) */
		if ((err = snap_cstack_push_now(cs, f->ip, f->sym, t)) < 0)
			return err;
	}
	if (st && !any)
		st->empty++;
	return snap_cstack_trim(cs, t);
}
