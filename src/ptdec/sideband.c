// SPDX-License-Identifier: GPL-2.0
/* The in-process PT decoder (ptdec_int.h): the sideband (images, maps, switches, comms) and symbols. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptdec/ptdec_int.h"
#include "util/alloc.h"
#include "util/bytes.h"
#include "util/vec.h"

/* ---- sideband ---- */

static int dso_get(struct snap_ptdec *d, const char *path, size_t len, size_t *out)
{
	int64_t id = snap_strtab_intern(d->names, path, len);
	struct dso *x;
	int err;

	if (id < 0)
		return (int)id;
	for (size_t i = 0; i < d->ndsos; i++)
		if (d->dsos[i].name == (uint32_t)id) {
			*out = i;
			return 0;
		}
	if ((err = snap_vec_reserve(&d->dsos, &d->capdsos, d->ndsos + 1, sizeof(*d->dsos))) < 0)
		return err;
	x = &d->dsos[d->ndsos];
	memset(x, 0, sizeof(*x));
	x->path = snap_strndup(path, len);
	if (!x->path)
		return -ENOMEM;
	x->name = (uint32_t)id;
	x->isid = -1;
	*out = d->ndsos++;
	return 0;
}

static struct proc *proc_get(struct snap_ptdec *d, int32_t pid)
{
	for (size_t i = 0; i < d->nprocs; i++)
		if (d->procs[i].pid == pid)
			return &d->procs[i];
	if (snap_vec_reserve(&d->procs, &d->capprocs, d->nprocs + 1, sizeof(*d->procs)))
		return NULL;
	d->procs[d->nprocs].pid = pid;
	d->procs[d->nprocs].img = pt_image_alloc(NULL);
	if (!d->procs[d->nprocs].img)
		return NULL;
	return &d->procs[d->nprocs++];
}

static int add_mmap(struct snap_ptdec *d, const struct snap_pd_rec *r)
{
	const uint8_t *p = r->p;
	int32_t pid = (int32_t)snap_get32(p + 8);
	uint64_t start = snap_get64(p + 16), len = snap_get64(p + 24), pgoff = snap_get64(p + 32);
	size_t noff = r->type == SNAP_PD_MMAP ? 40 : 72, nlen, di = 0;
	const char *name;
	struct mapping *m;
	struct proc *pr;
	int err;

	if (r->type == SNAP_PD_MMAP && (r->misc & SNAP_PD_MISC_MMAP_DATA))
		return 0;
	if (r->type == SNAP_PD_MMAP2 && !(snap_get32(p + 64) & 4)) /* PROT_EXEC */
		return 0;
	if ((r->misc & SNAP_PD_MISC_CPUMODE_MASK) == SNAP_PD_MISC_KERNEL || start >> 63)
		return 0; /* kernel maps: only user-space traces are decoded here */
	name = (const char *)p + noff;
	nlen = strnlen(name, r->size - noff);
	if (!nlen || name[0] != '/')
		return 0; /* [vdso], anon: no code to read (counted when decoding hits it) */
	if ((err = dso_get(d, name, nlen, &di)) < 0)
		return err;
	if ((err = snap_vec_reserve(&d->maps, &d->capmaps, d->nmaps + 1, sizeof(*d->maps))) < 0)
		return err;
	m = &d->maps[d->nmaps++];
	m->start = start;
	m->len = len;
	m->pgoff = pgoff;
	m->dso = di;
	m->pid = pid;
	pr = proc_get(d, pid);
	if (!pr)
		return -ENOMEM;
	if (d->dsos[di].missing)
		return 0;
	{
		int isid = pt_iscache_add_file(d->iscache, d->dsos[di].path, pgoff, len, start);

		if (isid < 0 || pt_image_add_cached(pr->img, d->iscache, isid, NULL) < 0) {
			d->dsos[di].missing = 1;
			d->st.missing_images++;
			if (!d->st.first_missing[0])
				snprintf(d->st.first_missing, sizeof(d->st.first_missing), "%s",
					 d->dsos[di].path);
		}
	}
	return 0;
}

static int cmp_sw(const void *x, const void *y)
{
	const struct sw *a = x, *b = y;

	if (a->cpu != b->cpu)
		return a->cpu < b->cpu ? -1 : 1;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int ptd_read_sideband(struct snap_ptdec *d)
{
	int err;

	for (size_t i = 0; i < d->pd.nrecs; i++) {
		const struct snap_pd_rec *r = &d->pd.recs[i];
		const uint8_t *p = r->p;

		switch (r->type) {
		case SNAP_PD_MMAP:
		case SNAP_PD_MMAP2:
			if ((err = snap_u64map_put(&d->tidpid, snap_get32(p + 12),
						   snap_get32(p + 8))) < 0 ||
			    (err = add_mmap(d, r)) < 0)
				return err;
			break;
		case SNAP_PD_COMM: {
			const char *n = (const char *)p + 16;
			int64_t id = snap_strtab_intern(d->names, n, strnlen(n, r->size - 16u));
			struct comm *c;

			if (id < 0)
				return (int)id;
			if ((err = snap_u64map_put(&d->tidpid, snap_get32(p + 12),
						   snap_get32(p + 8))) < 0)
				return err;
			if ((err = snap_vec_reserve(&d->comms, &d->capcomms, d->ncomms + 1,
						    sizeof(*d->comms))) < 0)
				return err;
			c = &d->comms[d->ncomms++];
			c->time = r->time;
			c->tid = (int32_t)snap_get32(p + 12);
			c->name = (uint32_t)id;
			break;
		}
		case SNAP_PD_FORK:
		case SNAP_PD_EXIT:
			if ((err = snap_u64map_put(&d->tidpid, snap_get32(p + 16),
						   snap_get32(p + 8))) < 0)
				return err;
			break;
		case SNAP_PD_ITRACE_START:
		case SNAP_PD_SWITCH_CPU_WIDE: {
			struct sw *s;
			int32_t pid = (int32_t)snap_get32(p + 8), tid = (int32_t)snap_get32(p + 12);

			if (r->type == SNAP_PD_SWITCH_CPU_WIDE) {
				if (r->misc & SNAP_PD_MISC_SWITCH_OUT)
					break;
				pid = r->pid; /* switch-in: the sample_id is the task coming in */
				tid = r->tid;
			} else if ((err = snap_u64map_put(&d->tidpid, (uint32_t)tid,
							  (uint32_t)pid)) < 0) {
				return err;
			}
			if ((err = snap_vec_reserve(&d->sws, &d->capsws, d->nsws + 1,
						    sizeof(*d->sws))) < 0)
				return err;
			s = &d->sws[d->nsws++];
			s->time = r->time;
			s->pid = pid;
			s->tid = tid;
			s->cpu = r->cpu;
			s->seq = (uint32_t)d->nsws;
			break;
		}
		default:
			break;
		}
	}
	if (d->nsws)
		qsort(d->sws, d->nsws, sizeof(*d->sws), cmp_sw);
	return 0;
}

/* The task on cpu at perf time t: the last switch-in at or before t (else the
 * CPU's first). d->sws is sorted by (cpu, time): two binary searches. */
const struct sw *ptd_task_at(const struct snap_ptdec *d, int32_t cpu, uint64_t t)
{
	size_t lo = 0, hi = d->nsws, first;

	while (lo < hi) { /* first entry of cpu */
		size_t mid = lo + (hi - lo) / 2;

		if (d->sws[mid].cpu < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == d->nsws || d->sws[lo].cpu != cpu)
		return NULL;
	first = lo;
	hi = d->nsws;
	while (lo < hi) { /* first entry of cpu after t */
		size_t mid = lo + (hi - lo) / 2;

		if (d->sws[mid].cpu == cpu && d->sws[mid].time <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > first ? &d->sws[lo - 1] : &d->sws[first];
}

/* ---- symbols ---- */

static int unknown_name(struct snap_ptdec *d, uint64_t addr, uint32_t dso, uint32_t *out)
{
	char buf[4200];
	const char *dname = dso ? snap_strtab_get(d->names, dso) : "[unknown]";
	int n = snprintf(buf, sizeof(buf), "[unknown @ 0x%llx (%.4000s)]", (unsigned long long)addr,
			 dname);
	int64_t id = snap_strtab_intern(d->names, buf, (size_t)n);

	if (id < 0)
		return (int)id;
	*out = (uint32_t)id;
	return 0;
}

static const struct mapping *find_map(const struct snap_ptdec *d, int32_t pid, uint64_t ip)
{
	const struct mapping *best = NULL;

	for (size_t i = 0; i < d->nmaps; i++) { /* the last mapping wins, as in perf */
		const struct mapping *m = &d->maps[i];

		if (m->pid == pid && ip >= m->start && ip - m->start < m->len)
			best = m;
	}
	return best;
}

int ptd_resolve(struct snap_ptdec *d, int32_t pid, uint64_t ip, struct snap_loc *l)
{
	struct aent *e;
	const struct mapping *m;
	struct dso *x;
	uint64_t va;
	const struct snap_elfsym_ent *sym;
	int err;

	memset(l, 0, sizeof(*l));
	l->ip = ip;
	if (!ip)
		return 0;
	e = ptd_aslot(d, pid, ip);
	if (e->used && e->ip == ip && e->pid == pid) {
		*l = e->loc;
		return 0;
	}
	m = find_map(d, pid, ip);
	if (m) {
		x = &d->dsos[m->dso];
		l->dso = x->name;
		if (!x->loaded) {
			x->loaded = 1;
			snap_elfsyms_load(&x->syms, x->path, d->debug_dir);
		}
		if (x->syms.ok &&
		    !snap_elfsyms_off2vaddr(&x->syms, ip - m->start + m->pgoff, &va) &&
		    (sym = snap_elfsyms_find(&x->syms, va)) != NULL) {
			int64_t id =
				snap_strtab_intern_cstr(d->names, snap_elfsyms_name(&x->syms, sym));

			if (id < 0)
				return (int)id;
			l->sym = (uint32_t)id;
			l->off = va - sym->start;
		}
	}
	if (!l->sym && (err = unknown_name(d, ip, l->dso, &l->sym)) < 0)
		return err;
	e->used = 1;
	e->ip = ip;
	e->pid = pid;
	e->loc = *l;
	return 0;
}

/* The thread's command at time t: its last COMM at or before t, else its first. */
uint32_t ptd_comm_at(struct snap_ptdec *d, int32_t tid, uint64_t t)
{
	uint32_t c = 0, first = 0;
	uint64_t from = 0, until = UINT64_MAX;

	if (d->comm_tid == tid && d->comm_val && t >= d->comm_from && t < d->comm_until)
		return d->comm_val;
	for (size_t i = 0; i < d->ncomms; i++) {
		if (d->comms[i].tid != tid)
			continue;
		if (!first)
			first = d->comms[i].name;
		if (d->comms[i].time <= t || d->timeless) {
			c = d->comms[i].name;
			from = d->comms[i].time;
		} else if (d->comms[i].time < until) {
			until = d->comms[i].time;
		}
	}
	d->comm_tid = tid;
	d->comm_val = c ? c : first;
	d->comm_from = c ? from : 0;
	d->comm_until = c ? until : (until == UINT64_MAX ? UINT64_MAX : until);
	if (!c)
		d->comm_from = 0;
	return d->comm_val;
}
