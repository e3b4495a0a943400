// SPDX-License-Identifier: GPL-2.0
#include "stack/sampdiff.h"

#include <errno.h>

#include "util/alloc.h"
#include "util/vec.h"

void snap_sampdiff_thread_fini(struct snap_sampdiff_thread *sdt)
{
	snap_free(sdt->f);
	sdt->f = NULL;
	sdt->n = sdt->cap = 0;
}

/* snap_scope_keeps, counting a frame it skips in st (if any). */
static int kept(enum snap_scope keep, const struct snap_loc *f, struct snap_sampdiff_stats *st)
{
	if (snap_scope_keeps(keep, f))
		return 1;
	if (st && f->ip)
		st->dropped_frames++;
	else if (st)
		st->zero_frames++;
	return 0;
}

static uint64_t start_of(const struct snap_loc *f)
{
	return f->sym && f->off <= f->ip ? f->ip - f->off : f->ip;
}

/* Does the sample's frame f continue open frame m? caller: what was
 * remembered of frame m - 1 before this sample (NULL for m == 0); pip: the
 * sample's address in that caller, i.e. its call site now. */
static int same_call(const struct snap_frame *cur, const struct snap_sampdiff_thread *sdt, size_t m,
		     const struct snap_loc *f, uint32_t sym,
		     const struct snap_sampdiff_frame *caller, uint64_t pip)
{
	if (cur[m].sym != sym)
		return 0;
	if (!sdt || m >= sdt->n || sdt->f[m].sym != sym)
		return cur[m].ip == f->ip; /* nothing remembered: exact */
	if (sdt->f[m].start != start_of(f))
		return 0;
	return !caller || caller->leaf || caller->ip == pip;
}

/*
 * A frame-pointer chain lost the caller of a frame f without a frame of its
 * own at its address (model/event.h frameless, docs/sampling.md): f differs
 * from open frame m while the frame outside f (m - 1, remembered as old before
 * this sample) still calls from the same address (pip) as when it called
 * frame m. Then frame m goes on and f is compared with the frame open inside
 * it. Only a remembered call site proves it (not a leaf's pc).
 */
static int lost_caller(const struct snap_sampdiff_thread *sdt, size_t m, size_t depth,
		       const struct snap_loc *f, const struct snap_sampdiff_frame *old,
		       uint64_t pip)
{
	return f->frameless && sdt && m > 0 && m < depth && m < sdt->n && !old->leaf &&
	       old->ip == pip;
}

static int remember(struct snap_sampdiff_thread *sdt, size_t m, const struct snap_loc *f,
		    uint32_t sym, int leaf)
{
	struct snap_sampdiff_frame *k;

	if (!sdt)
		return 0;
	if (m > sdt->n)
		return 0; /* a frame the cstack dropped: cannot be remembered */
	if (m == sdt->n) {
		if (snap_vec_reserve(&sdt->f, &sdt->cap, m + 1, sizeof(*sdt->f)) < 0)
			return -ENOMEM;
		sdt->n++;
	}
	k = &sdt->f[m];
	k->ip = f->ip;
	k->start = start_of(f);
	k->sym = sym;
	k->leaf = (uint8_t)leaf;
	return 0;
}

size_t snap_sampdiff_common(const struct snap_cstack *cs, const struct snap_sampdiff_thread *sdt,
			    const struct snap_loc *frames, uint32_t n, enum snap_scope keep)
{
	struct snap_sampdiff_frame old = {0};
	struct snap_sampdiff_thread mem = {0}; /* sdt as apply would see it */
	const struct snap_frame *cur;
	size_t depth, m = 0;
	uint64_t pip = 0;

	cur = snap_cstack_frames(cs, &depth);
	if (sdt) {
		mem = *sdt;
		if (mem.n > depth)
			mem.n = depth;
	}
	for (uint32_t i = 0; i < n && m < depth; i++) {
		const struct snap_loc *f = &frames[i];
		uint32_t sym = f->sym ? f->sym : cs->ctx->n.unknown;

		if (!snap_scope_keeps(keep, f))
			continue;
		if (!same_call(cur, sdt ? &mem : NULL, m, f, sym, m ? &old : NULL, pip)) {
			if (!lost_caller(sdt ? &mem : NULL, m, depth, f, &old, pip))
				break;
			old = mem.f[m++]; /* goes on; its call site now is not known */
			old.leaf = 1;
			if (m == depth || !same_call(cur, &mem, m, f, sym, &old, pip))
				break;
		}
		if (sdt && m < mem.n)
			old = mem.f[m];
		else
			old.leaf = 1;
		pip = f->ip;
		m++;
	}
	return m;
}

int snap_sampdiff_apply(struct snap_cstack *cs, struct snap_sampdiff_thread *sdt,
			const struct snap_loc *frames, uint32_t n, enum snap_scope keep, uint64_t t,
			struct snap_sampdiff_stats *st)
{
	struct snap_sampdiff_frame old = {0}; /* frame m - 1 as it was before this sample */
	const struct snap_frame *cur;
	size_t depth, m = 0;
	uint32_t i = 0, last = n;
	uint64_t pip = 0;
	int any = 0, dropped;
	int err;

	if (st)
		st->samples++;
	/* Write any pending branch-style ops first so file order stays sane. */
	if ((err = snap_cstack_flush_to(cs, t)) < 0)
		return err;
	cur = snap_cstack_frames(cs, &depth);
	if (sdt && sdt->n > depth)
		sdt->n = depth;	  /* the cstack ended frames on its own (restart) */
	for (i = n; i > 0; i--) { /* the leaf: the innermost kept frame */
		if (snap_scope_keeps(keep, &frames[i - 1])) {
			last = i - 1;
			break;
		}
	}
	/* Longest common prefix of calls (see sampdiff.h), over kept frames only. */
	for (i = 0; i < n; i++) {
		const struct snap_loc *f = &frames[i];
		uint32_t sym = f->sym ? f->sym : cs->ctx->n.unknown;

		if (!kept(keep, f, st))
			continue;
		any = 1;
		if (m == depth)
			break;
		if (!same_call(cur, sdt, m, f, sym, m ? &old : NULL, pip)) {
			if (!lost_caller(sdt, m, depth, f, &old, pip))
				break;
			/* goes on; its call site now is not known, also to the next
			 * samples (the frame opened inside it proves nothing about it) */
			sdt->f[m].leaf = 1;
			old = sdt->f[m++];
			if (m == depth || !same_call(cur, sdt, m, f, sym, &old, pip))
				break;
		}
		if (sdt && m < sdt->n)
			old = sdt->f[m];
		else
			old.leaf = 1; /* not remembered: proves nothing */
		if ((err = remember(sdt, m, f, sym, i == last)) < 0)
			return err;
		pip = f->ip;
		m++;
	}
	while (depth > m) {
		if ((err = snap_cstack_pop_now(cs, t)) < 0)
			return err;
		depth--;
	}
	if (sdt && sdt->n > m)
		sdt->n = m;
	for (; i < n; i++) {
		const struct snap_loc *f = &frames[i];

		if (!kept(keep, f, st))
			continue;
		any = 1;
		/* dropped by the depth cap: counted in the ctx stats */
		err = f->inlined ? snap_cstack_push_inlined(cs, f->ip, f->sym, t, &dropped)
				 : snap_cstack_push_now(cs, f->ip, f->sym, t, &dropped);
		if (err < 0)
			return err;
		if (!dropped && (err = remember(sdt, m++, f, f->sym ? f->sym : cs->ctx->n.unknown,
						i == last)) < 0)
			return err;
	}
	if (st && !any)
		st->empty++;
	return snap_cstack_trim(cs, t);
}
