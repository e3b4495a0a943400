// SPDX-License-Identifier: GPL-2.0
/*
 * The FXT tree view (see fxttree.h): duration events are kept, sorted per
 * thread by (time, file order) and matched on a stack, as Perfetto builds
 * slices; each thread's slices are printed in start order.
 */
#include "write/fxttree.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/esc.h"
#include "util/vec.h"

void snap_fxttree_init(struct snap_fxttree *t)
{
	memset(t, 0, sizeof(*t));
	snap_strtab_init(&t->names);
	snap_u64map_init(&t->map);
}

void snap_fxttree_fini(struct snap_fxttree *t)
{
	snap_strtab_fini(&t->names);
	snap_u64map_fini(&t->map);
	snap_free(t->tracks);
	snap_free(t->ev);
	memset(t, 0, sizeof(*t));
}

/* The track of (pid, tid), added if new. Returns its index or -ENOMEM. */
static int64_t tree_track(struct snap_fxttree *t, uint64_t pid, uint64_t tid)
{
	uint64_t key = (pid & 0xffffffffu) << 32 | (tid & 0xffffffffu), v;

	if (snap_u64map_get(&t->map, key, &v))
		return (int64_t)v - 1;
	if (snap_vec_reserve(&t->tracks, &t->tcap, t->ntracks + 1, sizeof(*t->tracks)) < 0 ||
	    snap_u64map_put(&t->map, key, t->ntracks + 1) < 0)
		return -ENOMEM;
	t->tracks[t->ntracks] = (struct snap_fxttree_track){.pid = pid, .tid = tid};
	return (int64_t)t->ntracks++;
}

static int tree_add(struct snap_fxttree *t, uint32_t track, uint64_t ts, uint64_t key,
		    uint32_t name, int begin)
{
	if (snap_vec_reserve(&t->ev, &t->evcap, t->nev + 1, sizeof(*t->ev)) < 0)
		return -ENOMEM;
	t->ev[t->nev++] = (struct snap_fxttree_ev){
		.ts = ts, .key = key, .track = track, .name = name, .begin = begin};
	return 0;
}

static int tree_name(struct snap_fxttree *t, const struct snap_fxt_str *s, uint32_t *id)
{
	int64_t r = snap_strtab_intern(&t->names, s->s ? s->s : "", s->s ? s->len : 0);

	if (r < 0)
		return -ENOMEM;
	*id = (uint32_t)r;
	return 0;
}

static int tree_thread_name(struct snap_fxttree *t, const struct snap_fxtread_rec *rec)
{
	int64_t k = -1;
	uint32_t name;

	for (uint32_t i = 0; i < rec->nargs; i++)
		if (rec->args[i].type == SNAP_FXT_ARG_KOID)
			k = tree_track(t, rec->args[i].v.u, rec->tid);
	if (k < 0)
		return k == -ENOMEM ? -ENOMEM : 0; /* a thread without its process */
	if (tree_name(t, &rec->name, &name) < 0)
		return -ENOMEM;
	t->tracks[k].name = name;
	return 0;
}

int snap_fxttree_feed(struct snap_fxttree *t, const struct snap_fxtread_rec *rec)
{
	int64_t k;
	uint32_t name;

	if (rec->type == SNAP_FXT_KOBJ && rec->sub == SNAP_FXT_OBJ_THREAD)
		return tree_thread_name(t, rec);
	if (rec->type != SNAP_FXT_EVENT ||
	    (rec->sub != SNAP_FXT_EV_BEGIN && rec->sub != SNAP_FXT_EV_END &&
	     rec->sub != SNAP_FXT_EV_COMPLETE))
		return 0;
	k = tree_track(t, rec->pid, rec->tid);
	if (k < 0 || tree_name(t, &rec->name, &name) < 0)
		return -ENOMEM;
	if (tree_add(t, (uint32_t)k, rec->ts, rec->index * 2, name, rec->sub != SNAP_FXT_EV_END))
		return -ENOMEM;
	if (rec->sub == SNAP_FXT_EV_COMPLETE)
		return tree_add(t, (uint32_t)k, rec->end, rec->index * 2 + 1, name, 0);
	return 0;
}

static int tree_cmp(const void *pa, const void *pb)
{
	const struct snap_fxttree_ev *a = pa, *b = pb;

	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

/* One slice of a thread, in start order. */
struct tree_slice {
	uint64_t ts, end;
	uint32_t name, depth;
	int ended;
};

/* Prints the slices of the track whose events are ev[0..n). */
static int tree_print_track(struct snap_fxttree *t, const struct snap_fxttree_ev *ev, size_t n,
			    FILE *out)
{
	struct tree_slice *sl = snap_calloc(n ? n : 1, sizeof(*sl));
	size_t *stack = snap_calloc(n ? n : 1, sizeof(*stack));
	size_t nsl = 0, depth = 0, orphans = 0;
	const struct snap_fxttree_track *tr = &t->tracks[ev[0].track];

	if (!sl || !stack) {
		snap_free(sl);
		snap_free(stack);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (ev[i].begin) {
			sl[nsl] = (struct tree_slice){
				.ts = ev[i].ts, .name = ev[i].name, .depth = (uint32_t)depth};
			stack[depth++] = nsl++;
		} else if (depth) {
			sl[stack[--depth]].end = ev[i].ts;
			sl[stack[depth]].ended = 1;
		} else {
			orphans++;
		}
	}
	fprintf(out, "thread pid=%" PRIu64 " tid=%" PRIu64 " \"", tr->pid, tr->tid);
	snap_esc_fputs(out, snap_strtab_get(&t->names, tr->name), SNAP_ESC_QUOTE);
	fputs("\"\n", out);
	for (size_t i = 0; i < nsl; i++) {
		fprintf(out, "%*s%" PRIu64 " ", 2 * (int)(sl[i].depth + 1), "", sl[i].ts);
		if (sl[i].ended)
			fprintf(out, "+%" PRIu64, sl[i].end - sl[i].ts);
		else
			fputs("+?", out);
		fputc(' ', out);
		snap_esc_fputs(out, snap_strtab_get(&t->names, sl[i].name), 0);
		fputc('\n', out);
	}
	if (orphans)
		fprintf(out, "  (%zu end(s) without an open slice)\n", orphans);
	snap_free(sl);
	snap_free(stack);
	return 0;
}

int snap_fxttree_print(struct snap_fxttree *t, FILE *out)
{
	size_t i = 0;

	if (t->nev)
		qsort(t->ev, t->nev, sizeof(*t->ev), tree_cmp);
	while (i < t->nev) {
		size_t j = i;

		while (j < t->nev && t->ev[j].track == t->ev[i].track)
			j++;
		if (tree_print_track(t, t->ev + i, j - i, out) < 0)
			return -ENOMEM;
		i = j;
	}
	return 0;
}
