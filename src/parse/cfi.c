// SPDX-License-Identifier: GPL-2.0
/* Function starts from call frame information (libdw). See cfi.h. */
#include "parse/cfi.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/err.h"
#include "util/file.h"
#include "util/strtab.h"
#include "util/vec.h"

/* x86-64 DWARF register numbers (the psABI's table) */
#define DWREG_RBP 6
#define DWREG_RSP 7

/* snap_cfi's byid values: index + 1 in files (0: nothing to read), and whether the
 * DSO was counted in the stats of function starts (files, no_cfi) */
#define BYID_NAMED (1ull << 40)

struct fde {
	uint64_t start, end; /* virtual addresses */
};

struct snap_cfi_file {
	struct snap_loadseg seg[SNAP_CFI_MAX_SEGS];
	size_t nseg;
	uint8_t bid[20]; /* GNU build id */
	size_t bidlen;
	struct fde *fde; /* sorted by start */
	size_t nfde, cap;
	/* the unwind rows (snap_cfi_file_frameless): libdw's CFI of .eh_frame, on the
	 * Elf kept open with its sections read (the file closed), or on img, the copy
	 * of an image in memory; NULL: not known */
	Elf *elf;
	Dwarf_CFI *dcfi;
	void *img;
	/* or of .debug_frame (no .eh_frame: Go): a copy of that section alone in an
	 * ELF image of its own (frame_img, frame_elf), read by libdw as frame_dw */
	int eh_rows; /* rows of .eh_frame, which describe %rbp (Go's do not) */
	void *frame_img;
	Elf *frame_elf;
	Dwarf *frame_dw;
};

struct snap_cfi_want {
	char *path;
	uint8_t id[20];
	size_t len;
};

void snap_cfi_init(struct snap_cfi *c)
{
	memset(c, 0, sizeof(*c));
	snap_u64map_init(&c->byid);
	snap_u64map_init(&c->wantidx);
	snap_u64map_init(&c->rows);
}

void snap_cfi_fini(struct snap_cfi *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nfiles; i++)
		snap_cfi_file_close(c->files[i]);
	snap_free(c->files);
	for (size_t i = 0; i < c->nwant; i++)
		snap_free(c->want[i].path);
	snap_free(c->want);
	snap_free(c->cache_dir);
	snap_u64map_fini(&c->byid);
	snap_u64map_fini(&c->wantidx);
	snap_u64map_fini(&c->rows);
	memset(c, 0, sizeof(*c));
}

static uint64_t path_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

/* The wanted build id of path, or NULL (paths with equal hashes: the first). */
static const struct snap_cfi_want *want_find(const struct snap_cfi *c, const char *path)
{
	uint64_t v;

	if (!snap_u64map_get(&c->wantidx, path_hash(path), &v) || !v ||
	    strcmp(c->want[v - 1].path, path))
		return NULL;
	return &c->want[v - 1];
}

int snap_cfi_want(struct snap_cfi *c, const char *path, const uint8_t *id, size_t idlen)
{
	uint64_t h = path_hash(path), v;
	struct snap_cfi_want *w;

	if (!idlen || idlen > sizeof(w->id) || snap_u64map_get(&c->wantidx, h, &v))
		return 0;
	if (snap_vec_reserve(&c->want, &c->wantcap, c->nwant + 1, sizeof(*c->want)))
		return -ENOMEM;
	w = &c->want[c->nwant];
	w->path = snap_strndup(path, strlen(path));
	if (!w->path)
		return -ENOMEM;
	memcpy(w->id, id, idlen);
	w->len = idlen;
	c->nwant++;
	return snap_u64map_put(&c->wantidx, h, c->nwant);
}

int snap_cfi_set_cache_dir(struct snap_cfi *c, const char *dir)
{
	char *d = dir ? snap_strndup(dir, strlen(dir)) : NULL;

	if (dir && !d)
		return -ENOMEM;
	snap_free(c->cache_dir);
	c->cache_dir = d;
	return 0;
}

void snap_cfi_file_close(struct snap_cfi_file *f)
{
	if (!f)
		return;
	if (f->dcfi && f->eh_rows)
		dwarf_cfi_end(f->dcfi); /* (.debug_frame's is frame_dw's) */
	if (f->frame_dw)
		dwarf_end(f->frame_dw);
	if (f->frame_elf)
		elf_end(f->frame_elf);
	snap_free(f->frame_img);
	if (f->elf)
		elf_end(f->elf);
	snap_free(f->img);
	snap_free(f->fde);
	snap_free(f);
}

/* DW_EH_PE_*: the pointer encodings of .eh_frame (value format in the low
 * nibble, how it applies in bits 4-6, indirect in bit 7). */
#define PE_OMIT	  0xff
#define PE_PCREL  0x10
#define PE_ABSPTR 0x00

/*
 * Reads one encoded pointer at *pp (< end), advancing *pp. at: the virtual
 * address of the field (for pc-relative values); apply: 0 for a length (the
 * value format only). Returns 0, or -1 for an encoding this reader does not
 * take (indirect, text-, data- or function-relative) or bytes past end.
 */
static int read_ptr(uint8_t enc, int addr_size, const uint8_t **pp, const uint8_t *end, uint64_t at,
		    int apply, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	int size = 0, sign = 0, shift = 0;

	if (enc == PE_OMIT)
		return -1;
	switch (enc & 0x0f) {
	case 0x00:
		size = addr_size;
		break;
	case 0x02:
		size = 2;
		break;
	case 0x03:
		size = 4;
		break;
	case 0x04:
		size = 8;
		break;
	case 0x0a:
		size = 2, sign = 1;
		break;
	case 0x0b:
		size = 4, sign = 1;
		break;
	case 0x0c:
		size = 8, sign = 1;
		break;
	case 0x01:
	case 0x09: /* (s)uleb128 */
		do {
			if (p >= end || shift > 63)
				return -1;
			v |= (uint64_t)(*p & 0x7f) << shift;
			shift += 7;
		} while (*p++ & 0x80);
		if ((enc & 0x0f) == 0x09 && shift < 64 && (p[-1] & 0x40))
			v |= ~0ull << shift;
		break;
	default:
		return -1;
	}
	if (size) {
		if (end - p < size)
			return -1;
		for (int i = size - 1; i >= 0; i--)
			v = v << 8 | p[i];
		if (sign && size < 8 && (v >> (size * 8 - 1)) & 1)
			v |= ~0ull << (size * 8);
		p += size;
	}
	if (apply) {
		if (enc & 0x80)
			return -1;
		if ((enc & 0x70) == PE_PCREL)
			v += at;
		else if (enc & 0x70)
			return -1;
	}
	*pp = p;
	*out = v;
	return 0;
}

/* The FDE pointer encoding of a CIE ("zR": its 'R' byte), or -1 if unknown. */
static int cie_encoding(const Dwarf_CIE *cie, int eh, int addr_size)
{
	const char *a = cie->augmentation;
	const uint8_t *p = cie->augmentation_data, *end;

	if (!eh || !a || !a[0])
		return PE_ABSPTR;
	if (a[0] != 'z' || !p)
		return -1;
	end = p + cie->augmentation_data_size;
	for (a++; *a; a++) {
		uint64_t skip;

		if (*a == 'R')
			return p < end ? *p : -1;
		if (*a == 'L') {
			p++;
		} else if (*a == 'P') { /* personality: its encoding byte, then the pointer */
			uint8_t enc;

			if (p >= end)
				return -1;
			enc = *p++;
			if (read_ptr(enc & 0x0f, addr_size, &p, end, 0, 0, &skip))
				return -1;
		} else if (*a != 'S' && *a != 'B' && *a != 'G') {
			return -1;
		}
	}
	return PE_ABSPTR;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Adds the FDEs of one CFI section (data at virtual address sh_addr; eh: the
 * .eh_frame format) to f: CIEs first (an FDE may come before its CIE), then
 * FDEs. Returns 0 or -ENOMEM; a malformed entry ends the walk (what came
 * before it stays).
 */
static int add_fdes(struct snap_cfi_file *f, Elf *elf, Elf_Data *data, uint64_t sh_addr, int eh)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	int addr_size = ident && ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	struct snap_u64map cies; /* CIE offset -> FDE pointer encoding */
	int err = 0;

	/* (read_ptr reads little-endian values: other files find nothing) */
	if (!ident || ident[EI_DATA] != ELFDATA2LSB || !data || !data->d_buf || !data->d_size)
		return 0;
	snap_u64map_init(&cies);
	for (int pass = 0; pass < 2 && !err; pass++) {
		Dwarf_Off off = 0, next;
		Dwarf_CFI_Entry e;

		while (!err && off < data->d_size &&
		       dwarf_next_cfi(ident, data, eh, off, &next, &e) == 0 && next > off) {
			const uint8_t *p, *end = (const uint8_t *)data->d_buf + data->d_size;
			uint64_t enc, start, len;
			int c;

			if (dwarf_cfi_cie_p(&e)) {
				c = cie_encoding(&e.cie, eh, addr_size);
				if (pass == 0 && c >= 0)
					err = snap_u64map_put(&cies, off, (uint64_t)c);
			} else if (pass == 1 && snap_u64map_get(&cies, e.fde.CIE_pointer, &enc)) {
				p = e.fde.start;
				if (e.fde.end < end)
					end = e.fde.end;
				if (p < (const uint8_t *)data->d_buf || p >= end ||
				    read_ptr((uint8_t)enc, addr_size, &p, end,
					     sh_addr + (uint64_t)(p - (const uint8_t *)data->d_buf),
					     1, &start) ||
				    read_ptr((uint8_t)enc & 0x0f, addr_size, &p, end, 0, 0, &len) ||
				    !len || start > UINT64_MAX - len) {
					off = next;
					continue; /* an FDE this reader cannot place: skipped */
				}
				if (f->nfde >= SNAP_CFI_MAX_FDES)
					break;
				if (snap_vec_reserve(&f->fde, &f->cap, f->nfde + 1,
						     sizeof(*f->fde))) {
					err = -ENOMEM;
					break;
				}
				f->fde[f->nfde].start = start;
				f->fde[f->nfde].end = start + len;
				f->nfde++;
			}
			off = next;
		}
	}
	snap_u64map_fini(&cies);
	return err;
}

/* The GNU build id among the notes of data, if any, into f. */
static void read_build_id(struct snap_cfi_file *f, Elf_Data *data)
{
	size_t off = 0, next, name, desc;
	GElf_Nhdr nh;

	if (!data || !data->d_buf)
		return;
	while ((next = gelf_getnote(data, off, &nh, &name, &desc)) > 0 && next > off) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name, "GNU", 4) && nh.n_descsz &&
		    nh.n_descsz <= sizeof(f->bid)) {
			memcpy(f->bid, (const uint8_t *)data->d_buf + desc, nh.n_descsz);
			f->bidlen = nh.n_descsz;
			return;
		}
		off = next;
	}
}

/* Reads the program headers and the FDEs of elf into f (none: f->nfde 0), and
 * finds its .debug_frame, compressed or not (*rows, or NULL). 0, -SNAP_EFORMAT,
 * -ENOMEM. */
static int file_setup(struct snap_cfi_file *f, Elf *elf, Elf_Scn **rows)
{
	Elf_Scn *scn = NULL, *eh = NULL, *dbg = NULL;
	GElf_Ehdr ehdr;
	GElf_Shdr sh;
	size_t nph = 0, shstr;
	int err = 0;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr) ||
	    (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN) || elf_getphdrnum(elf, &nph) ||
	    elf_getshdrstrndx(elf, &shstr))
		return -SNAP_EFORMAT;
	for (size_t i = 0; i < nph && f->nseg < SNAP_CFI_MAX_SEGS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->seg[f->nseg].off = ph.p_offset;
		f->seg[f->nseg].vaddr = ph.p_vaddr;
		f->seg[f->nseg].filesz = ph.p_filesz;
		f->seg[f->nseg].flags = ph.p_flags;
		f->seg[f->nseg].memsz = ph.p_memsz;
		f->nseg++;
	}
	if (!f->nseg)
		return -SNAP_EFORMAT;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE && !f->bidlen)
			read_build_id(f, elf_getdata(scn, NULL));
		if (!*rows && gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (name = elf_strptr(elf, shstr, sh.sh_name)) && !strcmp(name, ".debug_frame"))
			*rows = scn;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    (sh.sh_flags & SHF_COMPRESSED) || !(name = elf_strptr(elf, shstr, sh.sh_name)))
			continue;
		if (!eh && !strcmp(name, ".eh_frame"))
			eh = scn;
		else if (!dbg && !strcmp(name, ".debug_frame"))
			dbg = scn;
	}
	/* .eh_frame, else .debug_frame (a build without unwind tables) */
	if (eh && gelf_getshdr(eh, &sh))
		err = add_fdes(f, elf, elf_rawdata(eh, NULL), sh.sh_addr, 1);
	if (!err && !f->nfde && dbg && gelf_getshdr(dbg, &sh))
		err = add_fdes(f, elf, elf_rawdata(dbg, NULL), 0, 0);
	if (err)
		return err;
	if (f->nfde)
		qsort(f->fde, f->nfde, sizeof(*f->fde), fde_cmp);
	return 0;
}

static void elf_init(void)
{
	static int done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = 1;
	}
}

/*
 * The rows of .debug_frame (scn): its bytes (decompressed) copied into an ELF
 * image holding that section alone, written by libelf into a memfd and read
 * back, so that libdw's dwarf_begin_elf reads it and no other debug section.
 * Returns 1 if f keeps them.
 */
static int frame_rows(struct snap_cfi_file *f, Elf *elf, Elf_Scn *scn, const GElf_Ehdr *eh)
{
	static const char names[] = "\0.debug_frame\0.shstrtab";
	Elf_Data *d, *nd;
	GElf_Ehdr nh;
	GElf_Shdr sh;
	Elf_Scn *ns[2];
	Elf *out;
	off_t size;
	int fd, ok = 0;

	if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
	    ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0) ||
	    !(d = elf_getdata(scn, NULL)) || !d->d_buf || !d->d_size)
		return 0;
	fd = memfd_create("snaptrace-cfi", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	out = elf_begin(fd, ELF_C_WRITE, NULL);
	if (out && gelf_newehdr(out, gelf_getclass(elf)) && gelf_getehdr(out, &nh) &&
	    (ns[0] = elf_newscn(out)) && (ns[1] = elf_newscn(out))) {
		nh.e_ident[EI_DATA] = eh->e_ident[EI_DATA];
		nh.e_type = eh->e_type;
		nh.e_machine = eh->e_machine;
		nh.e_version = EV_CURRENT;
		nh.e_shstrndx = (uint16_t)elf_ndxscn(ns[1]);
		ok = gelf_update_ehdr(out, &nh) != 0;
		for (int i = 0; i < 2 && ok; i++) {
			ok = (nd = elf_newdata(ns[i])) && gelf_getshdr(ns[i], &sh);
			if (!ok)
				break;
			nd->d_buf = i ? (void *)(uintptr_t)names : d->d_buf;
			nd->d_size = i ? sizeof(names) : d->d_size;
			nd->d_type = ELF_T_BYTE;
			nd->d_align = 1;
			sh.sh_name = i ? 14 : 1;
			sh.sh_type = i ? SHT_STRTAB : SHT_PROGBITS;
			sh.sh_addralign = 1;
			ok = gelf_update_shdr(ns[i], &sh) != 0;
		}
		ok = ok && elf_update(out, ELF_C_WRITE) > 0;
	}
	if (out)
		elf_end(out);
	size = ok ? lseek(fd, 0, SEEK_END) : -1;
	if (size > 0 && (f->frame_img = snap_malloc((size_t)size)) &&
	    pread(fd, f->frame_img, (size_t)size, 0) == size &&
	    (f->frame_elf = elf_memory(f->frame_img, (size_t)size)) &&
	    (f->frame_dw = dwarf_begin_elf(f->frame_elf, DWARF_C_READ, NULL)))
		f->dcfi = dwarf_getcfi(f->frame_dw);
	close(fd);
	return f->dcfi != NULL;
}

/* The unwind rows of an x86-64 elf: .eh_frame's (libdw reads the section and
 * .eh_frame_hdr's search table now; f keeps elf: returns 1), else those of
 * .debug_frame (dbg, or NULL), copied (returns 0: elf stays the caller's). */
static int rows_setup(struct snap_cfi_file *f, Elf *elf, Elf_Scn *dbg)
{
	GElf_Ehdr ehdr;

	if (!gelf_getehdr(elf, &ehdr) || ehdr.e_machine != EM_X86_64)
		return 0;
	f->dcfi = dwarf_getcfi_elf(elf);
	if (f->dcfi) {
		f->eh_rows = 1;
		f->elf = elf;
		return 1;
	}
	if (dbg)
		(void)frame_rows(f, elf, dbg, &ehdr);
	return 0;
}

/* Reads elf into a new file; elf is the file's if it keeps it (*kept = 1),
 * else the caller's. */
static int file_read(Elf *elf, struct snap_cfi_file **out, int *kept)
{
	struct snap_cfi_file *f = snap_calloc(1, sizeof(*f));
	Elf_Scn *rows = NULL;
	int err;

	*kept = 0;
	if (!f)
		return -ENOMEM;
	*out = NULL;
	err = elf ? file_setup(f, elf, &rows) : -SNAP_EFORMAT;
	if (!err)
		*kept = rows_setup(f, elf, rows);
	if (!err && !f->nfde && !f->dcfi)
		err = -SNAP_EFORMAT; /* no CFI at all */
	if (err) {
		if (*kept)
			f->elf = NULL; /* the caller ends it */
		*kept = 0;
		snap_cfi_file_close(f);
		return err;
	}
	*out = f;
	return 0;
}

int snap_cfi_file_open(const char *path, struct snap_cfi_file **out)
{
	struct stat sb;
	Elf *elf;
	int fd, err, kept;

	*out = NULL;
	/* a FIFO or device put where the DSO was is never opened (util/file.h) */
	fd = snap_open_regular(path);
	if (fd < 0)
		return fd;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -SNAP_ENOTREG;
	}
	elf_init();
	/* ELF_C_READ reads what is asked for with pread: no mapping that a
	 * shrinking file could turn into SIGBUS */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	err = file_read(elf, out, &kept);
	if (kept)
		elf_cntl(elf, ELF_C_FDDONE); /* what the rows need is read: the file closes */
	else if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int snap_cfi_file_open_mem(const void *buf, size_t len, struct snap_cfi_file **out)
{
	void *img = len ? snap_malloc(len) : NULL; /* the rows read it later */
	Elf *elf;
	int err, kept;

	*out = NULL;
	if (len && !img)
		return -ENOMEM;
	if (len)
		memcpy(img, buf, len);
	elf_init();
	elf = elf_memory(img ? img : (char *)(uintptr_t)buf, len);
	err = file_read(elf, out, &kept);
	if (kept)
		(*out)->img = img;
	else {
		if (elf)
			elf_end(elf);
		snap_free(img);
	}
	return err;
}

const struct snap_loadseg *snap_cfi_file_segs(const struct snap_cfi_file *f, size_t *n)
{
	*n = f->nseg;
	return f->seg;
}

const uint8_t *snap_cfi_file_build_id(const struct snap_cfi_file *f, size_t *len)
{
	*len = f->bidlen;
	return f->bid;
}

size_t snap_cfi_file_nfdes(const struct snap_cfi_file *f)
{
	return f->nfde;
}

int snap_cfi_file_start(const struct snap_cfi_file *f, uint64_t off, uint64_t *start)
{
	size_t lo = 0, hi = f->nfde;
	uint64_t va;

	if (snap_loadseg_off2vaddr(f->seg, f->nseg, off, &va))
		return 0;
	while (lo < hi) { /* the last FDE starting at or before va */
		size_t mid = lo + (hi - lo) / 2;

		if (f->fde[mid].start <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* (FDEs do not overlap; if a damaged file's do, the one found is kept) */
	if (!lo || va >= f->fde[lo - 1].end || va - f->fde[lo - 1].start > off)
		return 0;
	*start = off - (va - f->fde[lo - 1].start); /* the same segment: the same distance */
	return 1;
}

/* 1 if f's build id is w's. */
static int same_build(const struct snap_cfi_file *f, const struct snap_cfi_want *w)
{
	return f->bidlen == w->len && !memcmp(f->bid, w->id, w->len);
}

/* Opens path, or the build-id cache's copy of the build perf recorded for it. */
static int open_checked(struct snap_cfi *c, const char *path, struct snap_cfi_file **out)
{
	const struct snap_cfi_want *w = want_find(c, path);
	int vdso = !strcmp(path, SNAP_CFI_VDSO);
	char alt[PATH_MAX];
	size_t n;
	int err = vdso ? -ENOENT : snap_cfi_file_open(path, out);

	if (err == -ENOMEM || !w || (!err && same_build(*out, w)))
		return err;
	if (!err) {
		c->st.other_build++;
		snap_cfi_file_close(*out);
		*out = NULL;
	}
	if (!c->cache_dir)
		return -SNAP_EFORMAT;
	n = (size_t)snprintf(alt, sizeof(alt), "%s/.build-id/%02x/", c->cache_dir, w->id[0]);
	for (size_t i = 1; i < w->len && n + 3 < sizeof(alt); i++)
		n += (size_t)snprintf(alt + n, sizeof(alt) - n, "%02x", w->id[i]);
	if (n + 5 >= sizeof(alt))
		return -SNAP_EFORMAT;
	/* (perf keeps the vDSO's copy as .../vdso, a file's as .../elf) */
	memcpy(alt + n, vdso ? "/vdso" : "/elf", vdso ? 6 : 5);
	err = snap_cfi_file_open(alt, out);
	if (err)
		return err == -ENOMEM ? err : -SNAP_EFORMAT;
	if (!same_build(*out, w)) {
		snap_cfi_file_close(*out);
		*out = NULL;
		return -SNAP_EFORMAT;
	}
	c->st.from_cache++;
	return 0;
}

/* The file of the DSO (read at its first use): 1 and *f, 0 if nothing to read there,
 * -ENOMEM. named: a function-start lookup (counted in files, no_cfi). */
static int file_of(struct snap_cfi *c, uint32_t dso, const char *path, int named,
		   struct snap_cfi_file **f)
{
	struct snap_cfi_file *nf = NULL;
	uint64_t v;
	int err;

	/* (the vDSO only by the build id perf recorded: its build-id cache copy) */
	if (!dso || !path ||
	    (path[0] != '/' && (strcmp(path, SNAP_CFI_VDSO) || !want_find(c, path))))
		return 0;
	if (!snap_u64map_get(&c->byid, dso, &v)) {
		if (c->byid.count >= SNAP_CFI_MAX_FILES) {
			c->st.over += (uint64_t)named;
			return 0;
		}
		err = open_checked(c, path, &nf);
		if (err == -ENOMEM)
			return err;
		v = 0;
		if (nf && snap_vec_reserve(&c->files, &c->cap, c->nfiles + 1, sizeof(*c->files))) {
			snap_cfi_file_close(nf);
			return -ENOMEM;
		}
		if (nf) {
			c->files[c->nfiles++] = nf;
			v = c->nfiles;
		}
		if (snap_u64map_put(&c->byid, dso, v) < 0)
			return -ENOMEM;
	}
	if (named && !(v & BYID_NAMED)) {
		c->st.files++;
		c->st.no_cfi += (uint64_t) !(v & ~BYID_NAMED);
		if (snap_u64map_put(&c->byid, dso, v | BYID_NAMED) < 0)
			return -ENOMEM;
	}
	v &= ~BYID_NAMED;
	if (!v)
		return 0;
	*f = c->files[v - 1];
	return 1;
}

int snap_cfi_func_start(struct snap_cfi *c, uint32_t dso, const char *path, uint64_t off,
			uint64_t *start)
{
	struct snap_cfi_file *f;
	int r = file_of(c, dso, path, 1, &f);

	if (r <= 0)
		return r;
	c->st.lookups++;
	r = snap_cfi_file_start(f, off, start);
	c->st.found += (uint64_t)r;
	return r;
}

/* 1 if op is a DWARF register plus an offset (DW_OP_bregN, DW_OP_bregx) of register reg. */
static int is_breg(const Dwarf_Op *op, unsigned reg)
{
	return op->atom == DW_OP_breg0 + reg || (op->atom == DW_OP_bregx && op->number == reg);
}

int snap_cfi_file_frameless(struct snap_cfi_file *f, uint64_t off)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Op mem[3], *ops = NULL;
	size_t nops = 0;
	uint64_t va;
	int r = -1;

	if (!f->dcfi || snap_loadseg_off2vaddr(f->seg, f->nseg, off, &va) ||
	    dwarf_cfi_addrframe(f->dcfi, va, &fr) != 0)
		return -1;
	/* the CFA: %rbp-based once the frame is set up, %rsp-based before and in
	 * code that never sets one up (a DWARF expression: the first op decides,
	 * e.g. a PLT entry's %rsp + 8 + ...). %rsp + 8: nothing pushed yet, or
	 * all popped: %rbp is the caller's whatever the row says of it. */
	if (dwarf_frame_cfa(fr, &ops, &nops) == 0 && nops >= 1) {
		if (is_breg(&ops[0], DWREG_RBP))
			r = 0;
		else if (is_breg(&ops[0], DWREG_RSP) && nops == 1 &&
			 (ops[0].atom == DW_OP_bregx ? ops[0].number2 : ops[0].number) == 8)
			r = 1;
		else if (is_breg(&ops[0], DWREG_RSP) && !f->eh_rows)
			r = -1; /* .debug_frame of Go: %rbp's saving is not described */
		else if (is_breg(&ops[0], DWREG_RSP) &&
			 dwarf_frame_register(fr, DWREG_RBP, mem, &ops, &nops) == 0)
			r = nops == 0; /* %rbp "same value" or undefined: not saved */
	}
	free(fr);
	return r;
}

int snap_cfi_frameless(struct snap_cfi *c, uint32_t dso, const char *path, uint64_t off)
{
	/* answers are cached by DSO and address (a chain's frames repeat) */
	uint64_t key = (uint64_t)dso << 44 | off, v;
	int cache = off < (1ull << 44) && dso < (1u << 20), r;
	struct snap_cfi_file *f;

	if (cache && snap_u64map_get(&c->rows, key, &v))
		return (int)v;
	r = file_of(c, dso, path, 0, &f);
	if (r < 0)
		return r;
	if (r) {
		c->st.leaf_lookups++;
		r = snap_cfi_file_frameless(f, off) == 1;
		c->st.leaf_frameless += (uint64_t)r;
	}
	if (cache && c->rows.count < SNAP_CFI_MAX_ROWS && snap_u64map_put(&c->rows, key, r) < 0)
		return -ENOMEM;
	return r;
}

void snap_cfi_set_fp_chains(struct snap_cfi *c, int on)
{
	c->fp_chains = on != 0;
}

int snap_cfi_mark_frames(struct snap_cfi *c, const struct snap_strtab *names,
			 struct snap_loc *frames, uint32_t n)
{
	uint32_t inner = n;

	if (!c || !c->fp_chains)
		return 0;
	while (inner > 0 && snap_loc_is_kernel(&frames[inner - 1]))
		inner--; /* frames[inner - 1]: the user pc where perf's walk began */
	/* (the outermost frame has no frame outside it to be wrong about) */
	for (uint32_t i = 1; i < inner; i++) {
		struct snap_loc *l = &frames[i];
		/* a return address is looked up at its call: the address after a call
		 * of a function that does not return may be the next function's */
		uint64_t at = i == inner - 1 ? l->ip : l->ip - 1;
		int r;

		if (!l->ip || snap_loc_is_kernel(l) || l->inlined || !l->dso)
			continue;
		r = snap_cfi_frameless(c, l->dso, snap_strtab_get(names, l->dso), at);
		if (r < 0)
			return r;
		if (r)
			l->frameless = 1;
	}
	return 0;
}

int snap_cfi_mark_event(struct snap_cfi *c, const struct snap_strtab *names,
			const struct snap_event *ev)
{
	if ((ev->kind != SNAP_EV_SAMPLE && ev->kind != SNAP_EV_SWITCH) || !ev->frames)
		return 0;
	/* the parser's own frames (event.h: borrowed until its next next()) */
	return snap_cfi_mark_frames(c, names, (struct snap_loc *)(uintptr_t)ev->frames,
				    ev->nframes);
}
