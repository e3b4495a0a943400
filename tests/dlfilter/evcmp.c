// SPDX-License-Identifier: GPL-2.0
/*
 * evcmp: the fast path against the text path, event by event.
 *   evcmp [-k] PERF DATA PLUGIN ITRACE TEXT
 * parses TEXT (perf script output for DATA, made by the caller with snaptrace's
 * field set) with parse/perfscript, runs DATA through source/dlsrc (perf script
 * --dlfilter PLUGIN, ITRACE "-" for none) and compares every field of every
 * event, names as strings. With -k the plugin keeps every jump and the two
 * sequences must be equal; without it, each thread's plugin events must be
 * the thread's text events minus some intra-symbol jumps.
 * Prints "same N events (M jumps dropped)" or the first difference; exit 0/1.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse/perfscript.h"
#include "source/dlsrc.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/u64map.h"
#include "util/vec.h"

struct evs {
	struct snap_event *ev;
	size_t n, cap;
	struct snap_loc *frames; /* all frames, ev[i].frames is an index here until fixed */
	size_t nf, fcap;
};

static int evs_add(struct evs *v, const struct snap_event *ev)
{
	if (snap_vec_reserve(&v->ev, &v->cap, v->n + 1, sizeof(*v->ev)) ||
	    snap_vec_reserve(&v->frames, &v->fcap, v->nf + ev->nframes + 1, sizeof(*v->frames)))
		return -1;
	v->ev[v->n] = *ev;
	v->ev[v->n].frames = (const struct snap_loc *)(uintptr_t)v->nf;
	if (ev->nframes)
		memcpy(v->frames + v->nf, ev->frames, ev->nframes * sizeof(*ev->frames));
	v->nf += ev->nframes;
	v->n++;
	return 0;
}

static void evs_free(struct evs *v)
{
	snap_free(v->ev);
	snap_free(v->frames);
}

static const struct snap_loc *evs_frames(const struct evs *v, const struct snap_event *ev)
{
	return v->frames + (uintptr_t)ev->frames;
}

static const char *S(const struct snap_strtab *st, uint32_t id)
{
	return id ? snap_strtab_get(st, id) : "-";
}

static void put_loc(const struct snap_strtab *st, const struct snap_loc *l)
{
	printf("%" PRIx64 " %s+0x%" PRIx64 " (%s)", l->ip, S(st, l->sym), l->off, S(st, l->dso));
}

static void put_ev(const struct snap_strtab *st, const struct evs *v, const struct snap_event *e)
{
	printf("kind %d comm %s %d/%d t %" PRIu64 "%s br %s/%d%s ", e->kind, S(st, e->comm), e->pid,
	       e->tid, e->time, e->has_time ? "" : "(no time)", snap_br_kind_name(e->br_kind),
	       e->br_state, e->in_tx ? " tx" : "");
	put_loc(st, &e->src);
	printf(" => ");
	put_loc(st, &e->dst);
	printf(" msg '%s' freq %u event %s period %" PRIu64 " frames %u", S(st, e->msg),
	       e->freq_mhz, S(st, e->event), e->period, e->nframes);
	for (uint32_t i = 0; i < e->nframes; i++) {
		printf(i ? " | " : ": ");
		put_loc(st, &evs_frames(v, e)[i]);
	}
	putchar('\n');
}

static int loc_eq(const struct snap_loc *a, const struct snap_loc *b)
{
	return a->ip == b->ip && a->off == b->off && a->sym == b->sym && a->dso == b->dso;
}

/* Both sides intern into one strtab, so equal strings have equal ids. */
static int ev_eq(const struct evs *va, const struct snap_event *a, const struct evs *vb,
		 const struct snap_event *b)
{
	if (a->kind != b->kind || a->pid != b->pid || a->tid != b->tid || a->comm != b->comm ||
	    a->time != b->time || a->has_time != b->has_time || a->br_kind != b->br_kind ||
	    a->br_state != b->br_state || a->in_tx != b->in_tx || a->sw_out != b->sw_out ||
	    a->sw_preempt != b->sw_preempt || !loc_eq(&a->src, &b->src) ||
	    !loc_eq(&a->dst, &b->dst) || a->msg != b->msg || a->freq_mhz != b->freq_mhz ||
	    a->event != b->event || a->period != b->period || a->nframes != b->nframes)
		return 0;
	for (uint32_t i = 0; i < a->nframes; i++)
		if (!loc_eq(&evs_frames(va, a)[i], &evs_frames(vb, b)[i]))
			return 0;
	return 1;
}

static int droppable(const struct snap_event *e)
{
	return e->kind == SNAP_EV_BRANCH && e->br_kind == SNAP_BR_JUMP &&
	       e->br_state == SNAP_BR_NOSTATE && !e->in_tx && e->src.sym &&
	       e->src.sym == e->dst.sym;
}

/* The text is parsed as snaptrace's decode parses it: told the trace mode
 * from the perf.data (pt: --itrace given), as the plugin path is, and with the
 * DSOs' CFI (stripped code named after its function, source/perfsrc). */
static int read_text(const char *path, struct snap_strtab *st, struct evs *v, int pt,
		     struct snap_cfi *cfi)
{
	struct snap_perfscript ps;
	struct snap_event ev;
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY), r = 0, fin = 0;
	ssize_t n;

	if (fd < 0 || snap_perfscript_init(&ps, st) < 0)
		return -1;
	snap_perfscript_set_mode(&ps, pt ? SNAP_TRACE_PT : SNAP_TRACE_SAMPLES);
	snap_perfscript_set_cfi(&ps, cfi);
	for (;;) {
		while ((r = snap_perfscript_next(&ps, &ev)) > 0)
			if (evs_add(v, &ev))
				return -1;
		if (r < 0 || fin)
			break;
		n = read(fd, buf, sizeof(buf));
		if (n <= 0) {
			snap_perfscript_finish(&ps);
			fin = 1;
		} else if (snap_perfscript_feed(&ps, buf, (size_t)n) < 0) {
			return -1;
		}
	}
	close(fd);
	snap_perfscript_fini(&ps);
	return r;
}

/* Compares the two sequences. Returns 0 if they agree, 1 (and prints why) if not. */
static int compare(const struct snap_strtab *st, const struct evs *text, const struct evs *plug,
		   int keep, size_t *dropped)
{
	struct snap_u64map pos; /* thread -> next text index to look at */
	size_t i, j;
	int ret = 0;

	if (keep) {
		for (i = 0; i < text->n && i < plug->n; i++)
			if (!ev_eq(text, &text->ev[i], plug, &plug->ev[i]))
				break;
		if (i == text->n && i == plug->n)
			return 0;
		printf("event %zu of %zu/%zu differs\ntext:   ", i, text->n, plug->n);
		if (i < text->n)
			put_ev(st, text, &text->ev[i]);
		printf("\nplugin: ");
		if (i < plug->n)
			put_ev(st, plug, &plug->ev[i]);
		putchar('\n');
		return 1;
	}
	/* Per thread: plugin events == text events minus droppable jumps. */
	snap_u64map_init(&pos);
	for (j = 0; j < plug->n && !ret; j++) {
		const struct snap_event *p = &plug->ev[j];
		uint64_t key = (uint64_t)(uint32_t)p->pid << 32 | (uint32_t)p->tid, k = 0;

		snap_u64map_get(&pos, key, &k);
		for (; k < text->n; k++) {
			const struct snap_event *t = &text->ev[k];

			if (t->pid != p->pid || t->tid != p->tid)
				continue;
			if (ev_eq(text, t, plug, p))
				break;
			if (!droppable(t)) {
				printf("plugin event %zu: text event %zu of its thread was dropped "
				       "but is not an intra-symbol jump\ntext:   ",
				       j, (size_t)k);
				put_ev(st, text, t);
				printf("plugin: ");
				put_ev(st, plug, p);
				ret = 1;
				break;
			}
		}
		if (!ret && k == text->n) {
			printf("plugin event %zu not in the text:\n", j);
			put_ev(st, plug, p);
			ret = 1;
		}
		snap_u64map_put(&pos, key, k + 1);
	}
	snap_u64map_fini(&pos);
	*dropped = text->n - plug->n;
	return ret;
}

int main(int argc, char **argv)
{
	struct snap_strtab st;
	struct snap_cfi cfi;
	struct evs text = {0}, plug = {0};
	struct snap_dlsrc src;
	struct snap_dlsrc_opts o = {0};
	struct snap_event ev;
	int keep = 0, r, a = 1, ret = 2;
	size_t dropped = 0;

	if (argc > 1 && !strcmp(argv[1], "-k")) {
		keep = 1;
		a++;
	}
	if (argc - a != 5) {
		fprintf(stderr, "usage: evcmp [-k] PERF DATA PLUGIN ITRACE|- TEXT\n");
		return 2;
	}
	snap_strtab_init(&st);
	snap_cfi_init(&cfi);
	if (read_text(argv[a + 4], &st, &text, strcmp(argv[a + 3], "-") != 0, &cfi) < 0) {
		fprintf(stderr, "evcmp: cannot parse %s\n", argv[a + 4]);
		goto out;
	}
	o.perf = argv[a];
	o.data = argv[a + 1];
	o.plugin = argv[a + 2];
	o.itrace = strcmp(argv[a + 3], "-") ? argv[a + 3] : NULL;
	/* samples: as source/perfsrc runs it (switch lines and dwarf chains as TEXT) */
	o.fields = o.itrace ? NULL : "comm,pid,tid,time,ip,sym,symoff,dso,event,period";
	o.keepjumps = keep;
	if (snap_dlsrc_open(&src, &o, &st) < 0) {
		fprintf(stderr, "evcmp: cannot run perf\n");
		goto out;
	}
	while ((r = snap_dlsrc_next(&src, &ev)) > 0)
		if (evs_add(&plug, &ev))
			break;
	if (snap_dlsrc_close(&src) < 0 || r != 0) {
		printf("plugin path failed: %s\n", snap_strerror(r));
		ret = 1;
		goto out;
	}
	ret = compare(&st, &text, &plug, keep, &dropped);
	if (!ret)
		printf("same %zu events (%zu jumps dropped)\n", plug.n, dropped);
out:
	evs_free(&text);
	evs_free(&plug);
	snap_cfi_fini(&cfi);
	snap_strtab_fini(&st);
	return ret;
}
