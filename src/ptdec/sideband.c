// SPDX-License-Identifier: GPL-2.0
/* The in-process PT decoder (ptdec_int.h): the sideband (images, maps, switches, comms) and symbols. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "model/names.h"
#include "ptdec/ptdec_int.h"
#include "util/alloc.h"
#include "util/bytes.h"
#include "util/elf.h"
#include "util/err.h"
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

/* A DSO named name (as perf names it) whose code is read from path. */
static int dso_new(struct snap_ptdec *d, const char *name, const char *path, size_t *out)
{
	int err = dso_get(d, name, strlen(name), out);
	struct dso *x;
	char *p;

	if (err < 0)
		return err;
	x = &d->dsos[*out];
	if (strcmp(x->path, path)) {
		if (!(p = snap_strndup(path, strlen(path))))
			return -ENOMEM;
		snap_free(x->path);
		x->path = p;
	}
	return 0;
}

/* Counts a mapping whose code cannot be read (what perf reports as
 * "Failed to get instruction" when the trace goes there). */
static void note_missing(struct snap_ptdec *d, const char *what)
{
	d->st.missing_images++;
	if (!d->st.first_missing[0])
		snprintf(d->st.first_missing, sizeof(d->st.first_missing), "%.255s", what);
}

/* perf's build-id cache file for a recorded build id: the old layout's
 * link itself when it is a file, else LINK/base ("elf", "vdso"). */
static int bid_cache_file(const struct snap_ptdec *d, const struct snap_pd_bid *b, const char *base,
			  char *out, size_t len)
{
	char hex[41];
	struct stat st;
	int n;

	if (!b || !d->buildid_dir[0])
		return -ENOENT;
	snap_pd_bid_hex(b->id, b->len, hex);
	n = snprintf(out, len, "%s/.build-id/%.2s/%s", d->buildid_dir, hex, hex + 2);
	if (n < 0 || (size_t)n >= len || stat(out, &st) < 0)
		return -ENOENT;
	if (S_ISREG(st.st_mode))
		return 0;
	n = snprintf(out, len, "%s/.build-id/%.2s/%s/%s", d->buildid_dir, hex, hex + 2, base);
	if (n < 0 || (size_t)n >= len || access(out, R_OK) < 0)
		return -ENOENT;
	return 0;
}

static struct proc *proc_find(struct snap_ptdec *d, int32_t pid)
{
	for (size_t i = 0; i < d->nprocs; i++)
		if (d->procs[i].pid == pid)
			return &d->procs[i];
	return NULL;
}

static struct proc *proc_get(struct snap_ptdec *d, int32_t pid)
{
	struct proc *pr = proc_find(d, pid);

	if (pr)
		return pr;
	if (snap_vec_reserve(&d->procs, &d->capprocs, d->nprocs + 1, sizeof(*d->procs)))
		return NULL;
	pr = &d->procs[d->nprocs];
	memset(pr, 0, sizeof(*pr));
	pr->pid = pid;
	pr->img = pt_image_alloc(NULL);
	if (!pr->img)
		return NULL;
	d->nprocs++;
	return pr;
}

static int proc_add_map(struct proc *pr, size_t mi)
{
	int err = snap_vec_reserve(&pr->mi, &pr->capmi, pr->nmi + 1, sizeof(*pr->mi));

	if (err < 0)
		return err;
	pr->mi[pr->nmi++] = mi;
	return 0;
}

/* Mapping indices forks may copy in all (8 bytes each): past it, perf decodes. */
#define MAX_FORKED ((size_t)1 << 22)

/* perf's thread__fork: a new process starts with its parent's maps (and so
 * with its parent's code, until it maps its own over it). */
static int fork_maps(struct snap_ptdec *d, int32_t pid, int32_t ppid)
{
	struct proc *pr, *pp;
	int err;

	if (pid == ppid || !proc_find(d, ppid))
		return 0;
	if (!(pr = proc_get(d, pid)))
		return -ENOMEM;
	pp = proc_find(d, ppid); /* after proc_get, which may move procs */
	if (d->nforked + pp->nmi > MAX_FORKED) {
		snprintf(d->notsup, sizeof(d->notsup),
			 "its processes fork more than %zu mappings in all", MAX_FORKED);
		return -SNAP_ENOTSUP;
	}
	d->nforked += pp->nmi;
	if ((err = snap_vec_reserve(&pr->mi, &pr->capmi, pr->nmi + pp->nmi, sizeof(*pr->mi))) < 0)
		return err;
	memcpy(pr->mi + pr->nmi, pp->mi, pp->nmi * sizeof(*pr->mi));
	pr->nmi += pp->nmi;
	return pt_image_copy(pr->img, pp->img) < 0 ? -ENOMEM : 0;
}

/* A mapping of the process that shows other bytes at addresses it already had
 * code at (another file, or the same file at another offset: dlclose and
 * dlopen, or an exec over its parent's maps) changes its code during the
 * recording. perf decodes each part with the maps of its time; ptdec has one
 * image per process, so it leaves such recordings to perf. */
static int check_remap(struct snap_ptdec *d, const struct proc *pr, uint64_t start, uint64_t len,
		       uint64_t pgoff, size_t di)
{
	for (size_t i = 0; i < pr->nmi; i++) {
		const struct mapping *o = &d->maps[pr->mi[i]];

		if ((start >= o->start ? start - o->start < o->len : o->start - start < len) &&
		    (o->dso != di || o->start - o->pgoff != start - pgoff)) {
			uint64_t at = start > o->start ? start : o->start;

			snprintf(d->notsup, sizeof(d->notsup),
				 "the code of process %d at 0x%llx changes during the recording "
				 "(%.200s+0x%llx replaces %.200s+0x%llx)",
				 (int)pr->pid, (unsigned long long)at,
				 snap_strtab_get(d->names, d->dsos[di].name),
				 (unsigned long long)(at - start + pgoff),
				 snap_strtab_get(d->names, d->dsos[o->dso].name),
				 (unsigned long long)(at - o->start + o->pgoff));
			return -SNAP_ENOTSUP;
		}
	}
	return 0;
}

static int add_mmap(struct snap_ptdec *d, const struct snap_pd_rec *r)
{
	const uint8_t *p = r->p;
	int32_t pid = (int32_t)snap_get32(p + 8);
	uint64_t start = snap_get64(p + 16), len = snap_get64(p + 24), pgoff = snap_get64(p + 32);
	size_t noff = r->type == SNAP_PD_MMAP ? 40 : 72, nlen, di = 0;
	const char *name, *code;
	const struct snap_pd_bid *bid;
	struct snap_pd_bid mbid;
	char cached[4200];
	struct mapping *m;
	struct proc *pr;
	int err, vdso;

	if (r->type == SNAP_PD_MMAP && (r->misc & SNAP_PD_MISC_MMAP_DATA))
		return 0;
	if (r->type == SNAP_PD_MMAP2 && !(snap_get32(p + 64) & 4)) /* PROT_EXEC */
		return 0;
	name = (const char *)p + noff;
	nlen = strnlen(name, r->size - noff);
	if ((r->misc & SNAP_PD_MISC_CPUMODE_MASK) == SNAP_PD_MISC_KERNEL || start >> 63) {
		struct kmmap *k; /* the kernel's code source is chosen once all are known */

		if (!nlen)
			return 0;
		if ((err = snap_vec_reserve(&d->kmms, &d->capkmms, d->nkmms + 1,
					    sizeof(*d->kmms))) < 0)
			return err;
		k = &d->kmms[d->nkmms++];
		k->start = start;
		k->len = len;
		k->pgoff = pgoff;
		k->name = name;
		k->namelen = nlen;
		return 0;
	}
	vdso = nlen == 6 && !memcmp(name, "[vdso]", 6);
	if (!nlen || (name[0] != '/' && !vdso))
		return 0; /* anon, [vsyscall]...: no code to read */
	/* perf reads a DSO with a recorded build id from its build-id cache first */
	bid = snap_pd_find_bid(&d->pd, name, nlen);
	if (r->type == SNAP_PD_MMAP2 && (r->misc & SNAP_PD_MISC_MMAP_BUILD_ID) && p[40] &&
	    p[40] <= 20) {
		memset(&mbid, 0, sizeof(mbid));
		mbid.len = p[40];
		memcpy(mbid.id, p + 44, mbid.len);
		bid = &mbid;
	}
	code = bid_cache_file(d, bid, vdso ? "vdso" : "elf", cached, sizeof(cached)) == 0 ? cached
											  : NULL;
	if ((err = dso_get(d, name, nlen, &di)) < 0)
		return err;
	if (code && !d->dsos[di].symfile && strcmp(d->dsos[di].path, code)) {
		char *c = snap_strndup(code, strlen(code));

		if (!c)
			return -ENOMEM;
		snap_free(d->dsos[di].path);
		d->dsos[di].path = c; /* code and symbols from the cached copy */
	}
	if (!(pr = proc_get(d, pid)))
		return -ENOMEM;
	if ((err = check_remap(d, pr, start, len, pgoff, di)) < 0 ||
	    (err = snap_vec_reserve(&d->maps, &d->capmaps, d->nmaps + 1, sizeof(*d->maps))) < 0 ||
	    (err = proc_add_map(pr, d->nmaps)) < 0)
		return err;
	m = &d->maps[d->nmaps++];
	m->start = start;
	m->len = len;
	m->pgoff = pgoff;
	m->dso = di;
	m->pid = pid;
	if (d->dsos[di].missing)
		return 0;
	if (vdso && !code) { /* perf record keeps it in the build-id cache only */
		d->dsos[di].missing = 1;
		note_missing(d, "[vdso]");
		return 0;
	}
	{
		int isid = ptd_add_section(d, d->dsos[di].path, pgoff, len, start);

		if (isid < 0 || pt_image_add_cached(pr->img, d->iscache, isid, NULL) < 0) {
			d->dsos[di].missing = 1;
			note_missing(d, d->dsos[di].path);
		}
	}
	return 0;
}

/* ---- the kernel (docs/ptdec.md "Kernel and vdso code") ---- */

/* A kernel mapping (pid -1) of dso di. */
static int add_kmap(struct snap_ptdec *d, uint64_t start, uint64_t len, size_t di)
{
	struct mapping *m;
	int err = snap_vec_reserve(&d->maps, &d->capmaps, d->nmaps + 1, sizeof(*d->maps));

	if (err < 0)
		return err;
	m = &d->maps[d->nmaps++];
	m->start = start;
	m->len = len;
	m->pgoff = 0;
	m->dso = di;
	m->pid = -1;
	return 0;
}

/* Adds the loadable segments of an ELF file (a vmlinux, kcore, a module
 * linked where it runs) to the kernel image at vaddr + delta; with kmaps, one
 * kernel mapping of dso di per segment. Returns the number added, or <0. */
static int add_segments(struct snap_ptdec *d, const char *path, uint64_t delta, int kmaps,
			size_t di)
{
	struct snap_loadseg *g;
	size_t n;
	int etype = 0, added = 0, err;
	uint8_t bid[20];
	size_t bidlen;

	if ((err = snap_elf_read_loads(path, &g, &n, &etype, bid, &bidlen)) < 0)
		return err;
	for (size_t i = 0; i < n; i++) {
		uint64_t sz = g[i].filesz < g[i].memsz ? g[i].filesz : g[i].memsz;
		int isid;

		if (!sz || !(g[i].flags & 5))
			continue;
		isid = ptd_add_section(d, path, g[i].off, sz, g[i].vaddr + delta);
		if (isid < 0 || pt_image_add_cached(d->kimg, d->iscache, isid, NULL) < 0)
			continue;
		added++;
		if (kmaps && (err = add_kmap(d, g[i].vaddr + delta, sz, di)) < 0) {
			snap_free(g);
			return err;
		}
	}
	snap_free(g);
	return added;
}

/* The build id of an ELF file equals b (or b is NULL). */
static int bid_matches(const char *path, const struct snap_pd_bid *b)
{
	struct snap_loadseg *g;
	size_t n, len;
	int etype;
	uint8_t id[20];

	if (snap_elf_read_loads(path, &g, &n, &etype, id, &len) < 0)
		return 0;
	snap_free(g);
	return !b || (len == b->len && !memcmp(id, b->id, len));
}

/* The running kernel's build id (/sys/kernel/notes), 0 if unknown. */
static size_t host_bid(uint8_t id[20])
{
	uint8_t nb[1024];
	FILE *f = fopen("/sys/kernel/notes", "re");
	size_t n, q = 0;

	if (!f)
		return 0;
	n = fread(nb, 1, sizeof(nb), f);
	fclose(f);
	while (q + 12 <= n) {
		uint32_t nsz = snap_get32(nb + q), dsz = snap_get32(nb + q + 4);
		size_t an = ((size_t)nsz + 3) & ~(size_t)3, ad = ((size_t)dsz + 3) & ~(size_t)3;

		if (12 + an + ad > n - q)
			break;
		if (snap_get32(nb + q + 8) == 3 && nsz == 4 && !memcmp(nb + q + 12, "GNU", 4) &&
		    dsz && dsz <= 20) {
			memcpy(id, nb + q + 12 + an, dsz);
			return dsz;
		}
		q += 12 + an + ad;
	}
	return 0;
}

/* perf's validate_kcore_addresses: kallsyms has the kernel map's reference
 * symbol at the recorded address, and a "modules" file beside it lists every
 * recorded module at its address. */
static int kcore_valid(const struct snap_ptdec *d, const char *ksyms, const struct kmmap *kern)
{
	char path[4200], line[512];
	const char *slash = strrchr(ksyms, '/');
	FILE *f;
	int ok = 1;

	if (kern && kern->namelen > 17 && kern->pgoff) {
		char ref[256];
		uint64_t a;

		snprintf(ref, sizeof(ref), "%.*s", (int)(kern->namelen - 17), kern->name + 17);
		if (snap_kallsyms_lookup(ksyms, ref, &a) < 0 || a != kern->pgoff)
			return 0;
	}
	snprintf(path, sizeof(path), "%.*smodules", slash ? (int)(slash - ksyms + 1) : 0, ksyms);
	if (!(f = fopen(path, "re")))
		return 0;
	for (size_t i = 0; i < d->nkmms && ok; i++) {
		const struct kmmap *k = &d->kmms[i];
		const char *b = memrchr(k->name, '/', k->namelen);
		size_t bl;
		int found = 0;

		if (k == kern || (k->namelen >= 17 && !memcmp(k->name, "[kernel.kallsyms]", 17)))
			continue;
		b = b ? b + 1 : k->name;
		bl = (size_t)(k->name + k->namelen - b);
		if (bl && b[0] == '[') { /* "[name]" */
			b++;
			bl = bl >= 2 ? bl - 2 : 0;
		} else if (memmem(b, bl, ".ko", 3)) {
			bl = (size_t)((const char *)memmem(b, bl, ".ko", 3) - b);
		}
		rewind(f);
		while (!found && fgets(line, sizeof(line), f)) {
			char *ad = strstr(line, " 0x");

			if (!strncmp(line, b, bl) && line[bl] == ' ' && ad &&
			    strtoull(ad + 1, NULL, 16) == k->start)
				found = 1;
		}
		ok = found;
	}
	fclose(f);
	return ok;
}

/* perf's module DSO name: "[name]" for NAME.ko[.gz|.xz|.zst], else the base name. */
static void kmod_name(const char *path, size_t len, char *out, size_t olen)
{
	const char *b = memrchr(path, '/', len), *ko;
	size_t bl;

	b = b ? b + 1 : path;
	bl = (size_t)(path + len - b);
	ko = bl > 3 ? memmem(b + 1, bl - 1, ".ko", 3) : NULL;
	if (b[0] == '[' || !ko)
		snprintf(out, olen, "%.*s", (int)bl, b);
	else
		snprintf(out, olen, "[%.*s]", (int)(ko - b), b);
	for (char *c = out; *c; c++)
		if (*c == '-' && b[0] != '[')
			*c = '_';
}

/* Where perf finds the kernel ([kernel.kallsyms]) when decoding: --kallsyms,
 * --vmlinux, the kcore_dir of a perf.data directory, a vmlinux in the
 * build-id cache or on perf's vmlinux path (build id checked when recorded),
 * then the running kernel's /proc/kallsyms (with /proc/kcore) or a cached
 * kallsyms. vmlinux or ksyms (+ kcore) is set, or neither. */
static void kernel_source(struct snap_ptdec *d, char *vmlinux, char *ksyms, char *kcore, size_t len)
{
	const struct snap_pd_bid *b = snap_pd_find_bid(&d->pd, "[kernel.kallsyms]", 17);
	/* perf's vmlinux path: prefix, then the release and suffix when a suffix is given */
	static const char *const vpaths[][2] = {
		{"vmlinux", NULL},
		{"/boot/vmlinux", NULL},
		{"/boot/vmlinux-", ""},
		{"/usr/lib/debug/boot/vmlinux-", ""},
		{"/lib/modules/", "/build/vmlinux"},
		{"/usr/lib/debug/lib/modules/", "/vmlinux"},
		{"/usr/lib/debug/boot/vmlinux-", ".debug"},
	};
	char rel[128], hex[41];
	uint8_t hid[20];
	size_t hl;

	vmlinux[0] = ksyms[0] = kcore[0] = 0;
	if (d->o.kallsyms) {
		snprintf(ksyms, len, "%s", d->o.kallsyms);
	} else if (d->o.vmlinux) {
		snprintf(vmlinux, len, "%s", d->o.vmlinux);
		return;
	} else if (d->kcore_dir[0]) {
		int n = snprintf(ksyms, len, "%s/kallsyms", d->kcore_dir);

		if (n < 0 || (size_t)n >= len || access(ksyms, R_OK) < 0)
			ksyms[0] = 0;
	}
	if (!ksyms[0]) {
		if (bid_cache_file(d, b, "elf", vmlinux, len) == 0 && bid_matches(vmlinux, b))
			return;
		vmlinux[0] = 0;
		if (d->pd.osrelease[0]) {
			snprintf(rel, sizeof(rel), "%s", d->pd.osrelease);
		} else {
			struct utsname u;

			snprintf(rel, sizeof(rel), "%s", uname(&u) == 0 ? u.release : "");
		}
		for (size_t i = 0; i < sizeof(vpaths) / sizeof(vpaths[0]) && !d->o.no_host_kernel;
		     i++) {
			int n = snprintf(vmlinux, len, "%s%s%s", vpaths[i][0],
					 vpaths[i][1] ? rel : "", vpaths[i][1] ? vpaths[i][1] : "");

			if (n > 0 && (size_t)n < len && access(vmlinux, R_OK) == 0 &&
			    bid_matches(vmlinux, b))
				return;
		}
		vmlinux[0] = 0;
		hl = d->o.no_host_kernel ? 0 : host_bid(hid);
		if (d->o.no_host_kernel) {
			/* fuzzing and unit tests: never the running kernel's files */
		} else if (!b || (hl == b->len && !memcmp(hid, b->id, hl))) {
			snprintf(ksyms, len, "/proc/kallsyms");
		} else {
			int n;

			snap_pd_bid_hex(b->id, b->len, hex);
			n = snprintf(ksyms, len, "%s/[kernel.kallsyms]/%s/kallsyms", d->buildid_dir,
				     hex);
			if (n < 0 || (size_t)n >= len || access(ksyms, R_OK) < 0)
				ksyms[0] = 0;
		}
	}
	if (ksyms[0]) {
		const char *slash = strrchr(ksyms, '/');

		snprintf(kcore, len, "%.*skcore", slash ? (int)(slash - ksyms + 1) : 0, ksyms);
	}
}

/* perf's filename__readable: open() succeeds (/proc/kcore needs CAP_SYS_RAWIO
 * even for root, which access() does not check). */
static int readable(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int kernel_setup(struct snap_ptdec *d)
{
	const struct kmmap *kern = NULL;
	char vml[4096], ksyms[4096], kcore[4096];
	size_t di;
	int err, nmods = 0, use_kcore = 0;

	for (size_t i = 0; i < d->nkmms; i++) {
		if (d->kmms[i].namelen >= 17 && !memcmp(d->kmms[i].name, "[kernel.kallsyms]", 17))
			kern = &d->kmms[i]; /* the last one, as perf */
		else if (d->kmms[i].name[0] == '/' || d->kmms[i].name[0] == '[')
			nmods++;
	}
	if (!kern && !nmods)
		return 0;
	if (!(d->kimg = pt_image_alloc("kernel")))
		return -ENOMEM;
	kernel_source(d, vml, ksyms, kcore, sizeof(vml));
	if (ksyms[0] && readable(kcore) && kcore_valid(d, ksyms, kern))
		use_kcore = 1;
	if (kern) {
		if ((err = dso_new(d, "[kernel.kallsyms]",
				   use_kcore ? kcore
				   : vml[0]  ? vml
					     : ksyms,
				   &di)) < 0)
			return err;
		d->dsos[di].vaddr = 1;
		if (use_kcore) {
			/* kcore's segments replace every kernel and module map */
			if (!(d->dsos[di].ksyms = snap_strndup(ksyms, strlen(ksyms))))
				return -ENOMEM;
			if ((err = add_segments(d, kcore, 0, 1, di)) < 0 || err == 0) {
				if (err == -ENOMEM)
					return err;
				note_missing(d, kcore);
				if ((err = add_kmap(d, kern->start, kern->len, di)) < 0)
					return err;
			}
			return 0;
		}
		if ((err = add_kmap(d, kern->start, kern->len, di)) < 0)
			return err;
		if (vml[0]) {
			uint64_t ref = 0;
			char rn[256];

			/* KASLR: the map's pgoff is its reference symbol's run-time address */
			snprintf(rn, sizeof(rn), "%.*s", (int)(kern->namelen - 17),
				 kern->name + 17);
			if (kern->pgoff && rn[0] && snap_elfsyms_symbol_value(vml, rn, &ref) == 0)
				d->dsos[di].reloc = kern->pgoff - ref;
			if (!(d->dsos[di].symfile = snap_strndup(vml, strlen(vml))))
				return -ENOMEM;
			err = add_segments(d, vml, d->dsos[di].reloc, 0, di);
			if (err == -ENOMEM)
				return err;
			if (err <= 0) {
				d->dsos[di].missing = 1;
				note_missing(d, vml);
			}
		} else {
			if (ksyms[0] && !(d->dsos[di].ksyms = snap_strndup(ksyms, strlen(ksyms))))
				return -ENOMEM;
			d->dsos[di].missing = 1; /* symbols at most, no code */
			note_missing(d, "[kernel.kallsyms]");
		}
	}
	/* Modules: an ELF linked where it runs has its code; a .ko (relocatable)
	 * is only read through kcore. */
	for (size_t i = 0; i < d->nkmms; i++) {
		const struct kmmap *k = &d->kmms[i];
		char nm[256], path[4200], cached[4200];
		const struct snap_pd_bid *b;

		if (k == kern || (k->namelen >= 17 && !memcmp(k->name, "[kernel.kallsyms]", 17)) ||
		    (k->name[0] != '/' && k->name[0] != '['))
			continue;
		kmod_name(k->name, k->namelen, nm, sizeof(nm));
		snprintf(path, sizeof(path), "%.*s", (int)k->namelen, k->name);
		b = snap_pd_find_bid(&d->pd, k->name, k->namelen);
		if (bid_cache_file(d, b, "elf", cached, sizeof(cached)) == 0)
			snprintf(path, sizeof(path), "%s", cached);
		if ((err = dso_new(d, nm, path, &di)) < 0 ||
		    (err = add_kmap(d, k->start, k->len, di)) < 0)
			return err;
		d->dsos[di].vaddr = 1;
		{
			struct snap_loadseg *g;
			size_t n, bl;
			int et = 0, isid = -1;
			uint8_t id[20];

			err = path[0] == '/' ? snap_elf_read_loads(path, &g, &n, &et, id, &bl)
					     : -ENOENT;
			if (err == 0)
				snap_free(g);
			if (err == 0 && et == 2) { /* ET_EXEC: linked where it runs */
				isid = add_segments(d, path, 0, 0, di) > 0 ? 0 : -1;
			} else if (err == 0 && et == 3) { /* ET_DYN: by file offset, as user code */
				d->dsos[di].vaddr = 0;
				d->maps[d->nmaps - 1].pgoff = k->pgoff;
				isid = ptd_add_section(d, path, k->pgoff, k->len, k->start);
				if (isid >= 0 &&
				    pt_image_add_cached(d->kimg, d->iscache, isid, NULL) < 0)
					isid = -1;
			}
			if (isid < 0) { /* unreadable, or a relocatable .ko: only kcore has it */
				d->dsos[di].missing = 1;
				note_missing(d, path);
			}
		}
	}
	return 0;
}

/* Per-CPU kernel traces: perf ties context switches to the trace at the
 * kernel's __switch_to when it has that symbol (its sync_switch mode), which
 * ptdec does not reproduce. Returns 1 when the kernel has it. */
int ptd_kernel_switch_sym(struct snap_ptdec *d)
{
	uint64_t a;

	for (size_t i = 0; i < d->ndsos; i++) {
		struct dso *x = &d->dsos[i];

		if (!x->vaddr || strcmp(snap_strtab_get(d->names, x->name), "[kernel.kallsyms]"))
			continue;
		if (!x->loaded) {
			x->loaded = 1;
			if (x->ksyms)
				snap_elfsyms_load_kallsyms(&x->syms, x->ksyms);
			else if (!x->missing || x->symfile)
				snap_elfsyms_load(&x->syms, x->symfile ? x->symfile : x->path,
						  NULL);
		}
		return snap_elfsyms_lookup(&x->syms, "__switch_to", &a) == 0;
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

/* Records in time order, file order among equal times (perf's ordered events). */
static int cmp_rec(const void *x, const void *y)
{
	const struct snap_pd_rec *a = *(const struct snap_pd_rec *const *)x,
				 *b = *(const struct snap_pd_rec *const *)y;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int read_records(struct snap_ptdec *d, const struct snap_pd_rec *const *ord)
{
	int err;

	for (size_t i = 0; i < d->pd.nrecs; i++) {
		const struct snap_pd_rec *r = ord[i];
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
			if (r->type == SNAP_PD_FORK &&
			    (err = fork_maps(d, (int32_t)snap_get32(p + 8),
					     (int32_t)snap_get32(p + 12))) < 0)
				return err;
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
	return 0;
}

int ptd_read_sideband(struct snap_ptdec *d)
{
	const struct snap_pd_rec **ord = snap_calloc(d->pd.nrecs + 1, sizeof(*ord));
	int err;

	if (!ord)
		return -ENOMEM;
	for (size_t i = 0; i < d->pd.nrecs; i++)
		ord[i] = &d->pd.recs[i];
	qsort(ord, d->pd.nrecs, sizeof(*ord), cmp_rec);
	err = read_records(d, ord);
	snap_free(ord);
	if (err < 0)
		return err;
	if (d->nsws)
		qsort(d->sws, d->nsws, sizeof(*d->sws), cmp_sw);
	if ((err = kernel_setup(d)) < 0)
		return err;
	for (size_t i = 0; d->kimg && i < d->nprocs; i++)
		if (pt_image_copy(d->procs[i].img, d->kimg) < 0)
			return -ENOMEM;
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
	char buf[SNAP_UNKNOWN_NAME_SIZE(4000)];
	const char *dname = dso ? snap_strtab_get(d->names, dso) : SNAP_NAME_UNKNOWN;
	size_t n = snap_unknown_name(buf, addr, dname, strnlen(dname, 4000));
	int64_t id = snap_strtab_intern(d->names, buf, n);

	if (id < 0)
		return (int)id;
	*out = (uint32_t)id;
	return 0;
}

static const struct mapping *find_map(struct snap_ptdec *d, int32_t pid, uint64_t ip)
{
	const struct mapping *best = NULL;
	const struct proc *pr;

	if (ip >> 63) { /* the kernel's maps: a module before the kernel map around it */
		for (size_t i = 0; i < d->nmaps; i++) {
			const struct mapping *m = &d->maps[i];

			if (m->pid == -1 && ip >= m->start && ip - m->start < m->len &&
			    (!best || m->len <= best->len))
				best = m;
		}
		return best;
	}
	if (!(pr = proc_find(d, pid)))
		return NULL;
	for (size_t i = pr->nmi; i-- > 0;) { /* the last mapping wins, as in perf */
		const struct mapping *m = &d->maps[pr->mi[i]];

		if (ip >= m->start && ip - m->start < m->len)
			return m;
	}
	return NULL;
}

/* Under d->symu: a new location, in d->lblocks. NULL: out of memory. */
static struct lent *lent_new(struct snap_ptdec *d)
{
	struct lblock *b = d->lblocks;

	if (!b || b->n == LENT_BLOCK) {
		if (!(b = snap_calloc(1, sizeof(*b))))
			return NULL;
		b->next = d->lblocks;
		d->lblocks = b;
	}
	return &b->e[b->n++];
}

/* The slot of (pid, ip) in the locations' table (tab, 1 << bits slots): its
 * own, or the free one where it goes. */
static struct aent *aslot(struct aent *tab, unsigned bits, int32_t pid, uint64_t ip)
{
	size_t mask = ((size_t)1 << bits) - 1,
	       i = (size_t)((ip * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)pid) >> (64 - bits));

	while (tab[i].e && (tab[i].ip != ip || tab[i].pid != pid))
		i = (i + 1) & mask;
	return &tab[i];
}

/* Under d->symu: the table has room for one more (at most half full). 0, or
 * -ENOMEM. */
static int alocs_room(struct snap_ptdec *d)
{
	unsigned bits = d->abits + 1;
	struct aent *t;

	if (2 * (d->nalocs + 1) <= (size_t)1 << d->abits)
		return 0;
	if (bits >= sizeof(size_t) * 8 - 6 || !(t = snap_calloc((size_t)1 << bits, sizeof(*t))))
		return -ENOMEM;
	for (size_t i = 0; i < (size_t)1 << d->abits; i++)
		if (d->acache[i].e)
			*aslot(t, bits, d->acache[i].pid, d->acache[i].ip) = d->acache[i];
	snap_free(d->acache);
	d->acache = t;
	d->abits = bits;
	return 0;
}

/* Under d->symu: ptd_locate's work. */
static struct lent *locate(struct snap_ptdec *d, int32_t pid, uint64_t ip)
{
	struct aent *a = aslot(d->acache, d->abits, pid, ip);
	const struct mapping *m;
	struct dso *x;
	uint64_t va;
	const struct snap_elfsyms_ent *sym;
	struct lent *e;

	if (a->e)
		return a->e;
	if (alocs_room(d) < 0 || !(e = lent_new(d)))
		return NULL;
	a = aslot(d->acache, d->abits, pid, ip); /* (the table may have grown) */
	e->loc.ip = ip;
	m = find_map(d, pid, ip);
	if (m) {
		x = &d->dsos[m->dso];
		e->loc.dso = x->name;
		if (!x->loaded) {
			x->loaded = 1;
			if (x->ksyms)
				snap_elfsyms_load_kallsyms(&x->syms, x->ksyms);
			else if (!x->vaddr || !x->missing || x->symfile)
				snap_elfsyms_load(&x->syms, x->symfile ? x->symfile : x->path,
						  x->vaddr ? NULL : d->debug_dir);
		}
		if (x->vaddr)
			va = ip - x->reloc;
		if (x->syms.ok &&
		    (x->vaddr ||
		     !snap_elfsyms_off2vaddr(&x->syms, ip - m->start + m->pgoff, &va)) &&
		    (sym = snap_elfsyms_find(&x->syms, va)) != NULL) {
			e->name = snap_elfsyms_name(&x->syms, sym);
			e->loc.off = va - sym->start;
		}
	}
	a->ip = ip;
	a->pid = pid;
	a->e = e;
	d->nalocs++;
	return e;
}

struct lent *ptd_locate(struct snap_ptdec *d, int32_t pid, uint64_t ip)
{
	struct lent *e;

	pthread_mutex_lock(&d->symu);
	e = locate(d, pid, ip);
	pthread_mutex_unlock(&d->symu);
	return e;
}

int ptd_name_loc(struct snap_ptdec *d, struct lent *e)
{
	if (e->named)
		return 0;
	if (e->name) {
		int64_t id = snap_strtab_intern_cstr(d->names, e->name);

		if (id < 0)
			return (int)id;
		e->loc.sym = (uint32_t)id;
	} else {
		int err = unknown_name(d, e->loc.ip, e->loc.dso, &e->loc.sym);

		if (err < 0)
			return err;
	}
	e->named = 1;
	return 0;
}

void ptd_comm_memo(const struct snap_ptdec *d, int32_t tid, uint64_t t, struct cmemo *m)
{
	uint32_t c = 0, first = 0;
	uint64_t from = 0, until = UINT64_MAX;

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
	/* its last COMM from its time until the next one; else its first until then
	 * (none: 0 for ever) */
	m->tid = tid;
	m->val = c ? c : first;
	m->from = c ? from : 0;
	m->span = until - m->from;
}
