// SPDX-License-Identifier: GPL-2.0
/* The in-process PT decoder (ptdec_int.h): decoding one piece into raw events (what the workers run), and the self-check. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptdec/piece.h"
#include "util/alloc.h"

/* Whether libipt's decoder failed in itself on the piece (ERR_INTERN: an
 * internal error or an instruction it could not decode): no reference there. */
static int libipt_failed(const struct piece *pc)
{
	for (size_t i = 0; i < pc->nev; i++)
		if (pc->ev[i].kind == RAW_ERROR && pc->ev[i].err == ERR_INTERN)
			return 1;
	return 0;
}

/* The reader drops a continuation piece's implicit events but its "tr strt"
 * (ptdec.c): the ratio of its implicit cbr event is what libipt's decoder read
 * ahead to, which the fast walk's token reader need not have; not compared. */
static void unused_cbrs(struct rawev *ev, size_t n, const struct piece *pc)
{
	for (size_t i = 0; i < n && !pc->run_start; i++)
		if (ev[i].implicit && ev[i].kind == RAW_POWER)
			ev[i].cbr = 0;
}

/* The first event where the fast walk's (walk[0..nwalk)) and libipt's differ. */
static void first_difference(const struct rawev *walk, size_t nwalk, const struct piece *pc)
{
	char a[160], b[160];
	size_t i = 0;

	while (i < nwalk && i < pc->nev && !memcmp(&walk[i], &pc->ev[i], sizeof(*walk)))
		i++;
	fprintf(stderr, "ptdec: event %zu: fast walk: %s; libipt: %s\n", i,
		i < nwalk ? ptd_rawev_desc(&walk[i], a, sizeof(a)) : "none",
		i < pc->nev ? ptd_rawev_desc(&pc->ev[i], b, sizeof(b)) : "none");
}

/* Runs the fast walk and libipt's decoder on the same piece and aborts if
 * their events differ ($SNAPTRACE_PTDEC_WALK=check, for the tests). */
static int check_piece(struct wctx *w, struct piece *pc)
{
	struct rawev *ev;
	size_t nev = pc->nev;
	uint64_t insns = pc->insns, strt = pc->strt_time;
	int clean = pc->end_clean, err;

	ev = snap_malloc((nev ? nev : 1) * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	if (nev)
		memcpy(ev, pc->ev, nev * sizeof(*ev));
	pc->nev = 0;
	pc->insns = 0;
	pc->end_clean = 0;
	pc->strt_time = 0;
	err = ptd_libipt_piece(w, pc);
	unused_cbrs(ev, nev, pc);
	unused_cbrs(pc->ev, pc->nev, pc);
	if (!err && !libipt_failed(pc) &&
	    (nev != pc->nev || insns != pc->insns || clean != pc->end_clean ||
	     strt != pc->strt_time || (nev && memcmp(ev, pc->ev, nev * sizeof(*ev))))) {
		fprintf(stderr,
			"ptdec: the fast walk differs from libipt's decoder on the piece at offset "
			"%zu of queue %zu (%zu/%zu events, %llu/%llu instructions, \"tr strt\" at "
			"%llu/%llu)\n",
			(size_t)(pc->b - w->d->pieces[w->d->queues[pc->q].pieces[0]].b), pc->q, nev,
			pc->nev, (unsigned long long)insns, (unsigned long long)pc->insns,
			(unsigned long long)strt, (unsigned long long)pc->strt_time);
		first_difference(ev, nev, pc);
		abort();
	}
	snap_free(ev);
	return err;
}

int ptd_decode_piece(struct wctx *w, struct piece *pc)
{
	int r = w->d->walk ? ptd_walk_piece(w, pc) : 0;

	if (r < 0)
		return r;
	if (r > 0) {
		pc->walked = 1;
		return w->d->walk == 2 ? check_piece(w, pc) : 0;
	}
	/* the events the walk handed on already are not handed on again (pool.c);
	 * the bytes it dropped are read again, and dropped again from the start */
	pc->skip = pc->nfinal;
	pc->nfinal = 0;
	pc->dropped = NULL;
	pc->nev = 0;
	pc->insns = 0;
	pc->end_clean = 0;
	pc->strt_time = 0;
	return ptd_libipt_piece(w, pc);
}
