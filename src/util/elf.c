// SPDX-License-Identifier: GPL-2.0
/* The bounded ELF64 reader. See elf.h for what it checks. */
#include "util/elf.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/bytes.h"
#include "util/err.h"
#include "util/vec.h"

#define EHDR_SIZE sizeof(Elf64_Ehdr)
#define PHDR_SIZE sizeof(Elf64_Phdr)
#define SHDR_SIZE sizeof(Elf64_Shdr)
#define SYM_SIZE  sizeof(Elf64_Sym)
#define NHDR_SIZE sizeof(Elf64_Nhdr)

int snap_elf_in_bounds(const struct snap_elf *e, uint64_t off, uint64_t n, uint64_t size)
{
	uint64_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return 0;
	return off <= e->len && bytes <= e->len - off;
}

/* 1 for the ELF64 LE magic of the 64 bytes at b. */
static int ident_ok(const uint8_t *b)
{
	return !memcmp(b, ELFMAG, SELFMAG) && b[EI_CLASS] == ELFCLASS64 &&
	       b[EI_DATA] == ELFDATA2LSB;
}

static const uint8_t *shdr(const struct snap_elf *e, unsigned i)
{
	return e->buf + e->shoff + (uint64_t)i * SHDR_SIZE;
}

static const uint8_t *phdr(const struct snap_elf *e, unsigned i)
{
	return e->buf + e->phoff + (uint64_t)i * PHDR_SIZE;
}

/* 0 when a table of n entries of entsize at off fits, else: lax, counts it
 * absent (*n = 0); strict, -SNAP_EFORMAT. */
static int table_ok(const struct snap_elf *e, uint64_t off, uint16_t *n, size_t ent, size_t want,
		    unsigned flags)
{
	if (!*n || (ent == want && snap_elf_in_bounds(e, off, *n, want)))
		return 0;
	if (!(flags & SNAP_ELF_LAX))
		return -SNAP_EFORMAT;
	*n = 0;
	return 0;
}

int snap_elf_open(struct snap_elf *e, const void *buf, size_t len, unsigned flags)
{
	const uint8_t *b = buf;

	memset(e, 0, sizeof(*e));
	e->symtab = e->dynsym = -1;
	if (!b || len < EHDR_SIZE || !ident_ok(b))
		return -SNAP_EFORMAT;
	e->buf = b;
	e->len = len;
	e->type = snap_get16(b + SNAP_EHDR(e_type));
	e->phoff = snap_get64(b + SNAP_EHDR(e_phoff));
	e->shoff = snap_get64(b + SNAP_EHDR(e_shoff));
	e->phnum = snap_get16(b + SNAP_EHDR(e_phnum));
	e->shnum = snap_get16(b + SNAP_EHDR(e_shnum));
	e->shstrndx = snap_get16(b + SNAP_EHDR(e_shstrndx));
	if (table_ok(e, e->phoff, &e->phnum, snap_get16(b + SNAP_EHDR(e_phentsize)), PHDR_SIZE,
		     flags) < 0 ||
	    table_ok(e, e->shoff, &e->shnum, snap_get16(b + SNAP_EHDR(e_shentsize)), SHDR_SIZE,
		     flags) < 0) {
		e->phnum = e->shnum = 0;
		return -SNAP_EFORMAT;
	}
	for (unsigned i = 0; i < e->shnum; i++) {
		uint32_t type = snap_get32(shdr(e, i) + SNAP_SHDR(sh_type));

		if (type == SHT_SYMTAB && e->symtab < 0)
			e->symtab = (int)i;
		else if (type == SHT_DYNSYM && e->dynsym < 0)
			e->dynsym = (int)i;
	}
	for (unsigned i = 0; i < e->phnum && e->nload < SNAP_ELF_OPEN_LOADS; i++) {
		const uint8_t *p = phdr(e, i);
		struct snap_loadseg *g = &e->load[e->nload];

		if (snap_get32(p + SNAP_PHDR(p_type)) != PT_LOAD)
			continue;
		g->flags = snap_get32(p + SNAP_PHDR(p_flags));
		g->off = snap_get64(p + SNAP_PHDR(p_offset));
		g->vaddr = snap_get64(p + SNAP_PHDR(p_vaddr));
		g->filesz = snap_get64(p + SNAP_PHDR(p_filesz));
		g->memsz = snap_get64(p + SNAP_PHDR(p_memsz));
		e->nload++;
	}
	return 0;
}

const uint8_t *snap_elf_phdr(const struct snap_elf *e, unsigned i)
{
	return i < e->phnum ? phdr(e, i) : NULL;
}

const uint8_t *snap_elf_shdr(const struct snap_elf *e, unsigned i)
{
	return i < e->shnum ? shdr(e, i) : NULL;
}

const uint8_t *snap_elf_sec_bytes(const struct snap_elf *e, unsigned i, uint64_t *size)
{
	uint64_t off;

	if (i >= e->shnum)
		return NULL;
	off = snap_get64(shdr(e, i) + SNAP_SHDR(sh_offset));
	*size = snap_get64(shdr(e, i) + SNAP_SHDR(sh_size));
	return snap_elf_in_bounds(e, off, *size, 1) ? e->buf + off : NULL;
}

const char *snap_elf_str(const char *tab, uint64_t size, uint64_t off)
{
	if (off >= size || !memchr(tab + off, '\0', size - off))
		return NULL;
	return tab + off;
}

const char *snap_elf_sec_name(const struct snap_elf *e, unsigned i)
{
	const uint8_t *tab;
	const char *n;
	uint64_t size;

	if (e->shstrndx >= e->shnum || i >= e->shnum ||
	    !(tab = snap_elf_sec_bytes(e, e->shstrndx, &size)))
		return "";
	n = snap_elf_str((const char *)tab, size, snap_get32(shdr(e, i) + SNAP_SHDR(sh_name)));
	return n ? n : "";
}

int snap_elf_sec_by_name(const struct snap_elf *e, const char *name)
{
	for (unsigned i = 1; i < e->shnum; i++)
		if (!strcmp(snap_elf_sec_name(e, i), name))
			return (int)i;
	return -1;
}

int snap_elf_sec_by_type(const struct snap_elf *e, uint32_t type)
{
	for (unsigned i = 1; i < e->shnum; i++)
		if (snap_get32(shdr(e, i) + SNAP_SHDR(sh_type)) == type)
			return (int)i;
	return -1;
}

int snap_elf_symtab(const struct snap_elf *e, int idx, struct snap_elf_symtab *t)
{
	const uint8_t *s;
	uint64_t off;
	uint32_t link;

	if (idx < 0 || idx >= e->shnum)
		return -1;
	s = shdr(e, (unsigned)idx);
	off = snap_get64(s + SNAP_SHDR(sh_offset));
	t->count = snap_get64(s + SNAP_SHDR(sh_size)) / SYM_SIZE;
	link = snap_get32(s + SNAP_SHDR(sh_link));
	if (!snap_elf_in_bounds(e, off, t->count, SYM_SIZE) || link >= e->shnum)
		return -1;
	t->syms = e->buf + off;
	t->str = (const char *)snap_elf_sec_bytes(e, link, &t->strsize);
	return t->str ? 0 : -1;
}

void snap_elf_sym_at(const struct snap_elf_symtab *t, uint64_t i, struct snap_elf_rawsym *s)
{
	const uint8_t *p = t->syms + i * SYM_SIZE;

	s->name = snap_get32(p + SNAP_SYM(st_name));
	s->type = ELF64_ST_TYPE(p[SNAP_SYM(st_info)]);
	s->bind = ELF64_ST_BIND(p[SNAP_SYM(st_info)]);
	s->vis = ELF64_ST_VISIBILITY(p[SNAP_SYM(st_other)]);
	s->shndx = snap_get16(p + SNAP_SYM(st_shndx));
	s->value = snap_get64(p + SNAP_SYM(st_value));
	s->size = snap_get64(p + SNAP_SYM(st_size));
}

int snap_elf_note_next(const uint8_t *p, uint64_t size, uint64_t align, uint64_t *pos,
		       struct snap_elf_note *n)
{
	uint64_t left, nameal, descal;

	if (*pos > size || size - *pos < NHDR_SIZE)
		return 0;
	left = size - *pos - NHDR_SIZE;
	p += *pos;
	n->namesz = snap_get32(p + SNAP_NHDR(n_namesz));
	n->descsz = snap_get32(p + SNAP_NHDR(n_descsz));
	n->type = snap_get32(p + SNAP_NHDR(n_type));
	nameal = ((uint64_t)n->namesz + align - 1) & ~(align - 1);
	descal = ((uint64_t)n->descsz + align - 1) & ~(align - 1);
	if (nameal > left || descal > left - nameal)
		return 0;
	n->name = p + NHDR_SIZE;
	n->desc = n->name + nameal;
	*pos += NHDR_SIZE + nameal + descal;
	return 1;
}

int snap_elf_note_is(const struct snap_elf_note *n, const char *owner, uint32_t type)
{
	size_t len = strlen(owner) + 1;

	return n->type == type && n->namesz == len && !memcmp(n->name, owner, len);
}

int snap_elf_note_build_id(const struct snap_elf_note *n, uint8_t id[20], size_t *len)
{
	if (!snap_elf_note_is(n, "GNU", NT_GNU_BUILD_ID) || !n->descsz || n->descsz > 20)
		return 0;
	memcpy(id, n->desc, n->descsz);
	*len = n->descsz;
	return 1;
}

/* ---- program headers through pread ---- */

static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -SNAP_EFORMAT;
		got += (size_t)r;
	}
	return 0;
}

/* The first GNU build id of the note segment at off, size (its first 512 bytes). */
static void read_note_build_id(int fd, uint64_t off, uint64_t size, uint8_t id[20], size_t *len)
{
	struct snap_elf_note n;
	uint8_t nb[512];
	uint64_t q = 0;

	if (size > sizeof(nb))
		size = sizeof(nb);
	if (pread_all(fd, nb, (size_t)size, off) < 0)
		return;
	while (snap_elf_note_next(nb, size, 4, &q, &n))
		if (snap_elf_note_build_id(&n, id, len))
			return;
}

/* The PT_LOAD entries of the phnum program headers ph into *segs. */
static int add_loads(int fd, const uint8_t *ph, unsigned phnum, struct snap_loadseg **segs,
		     size_t *nsegs, uint8_t build_id[20], size_t *build_id_len)
{
	size_t cap = 0;
	int err;

	for (unsigned i = 0; i < phnum; i++) {
		const uint8_t *p = ph + (size_t)i * PHDR_SIZE;
		uint32_t type = snap_get32(p + SNAP_PHDR(p_type));
		struct snap_loadseg *g;

		if (type == PT_NOTE && !*build_id_len)
			read_note_build_id(fd, snap_get64(p + SNAP_PHDR(p_offset)),
					   snap_get64(p + SNAP_PHDR(p_filesz)), build_id,
					   build_id_len);
		if (type != PT_LOAD)
			continue;
		if ((err = snap_vec_reserve(segs, &cap, *nsegs + 1, sizeof(**segs))) < 0)
			return err;
		g = &(*segs)[(*nsegs)++];
		g->flags = snap_get32(p + SNAP_PHDR(p_flags));
		g->off = snap_get64(p + SNAP_PHDR(p_offset));
		g->vaddr = snap_get64(p + SNAP_PHDR(p_vaddr));
		g->filesz = snap_get64(p + SNAP_PHDR(p_filesz));
		g->memsz = snap_get64(p + SNAP_PHDR(p_memsz));
	}
	return 0;
}

int snap_elf_read_loads(const char *path, struct snap_loadseg **segs, size_t *nsegs, int *etype,
			uint8_t build_id[20], size_t *build_id_len)
{
	uint8_t eh[EHDR_SIZE], *ph;
	unsigned phnum;
	int fd, err;

	*segs = NULL;
	*nsegs = 0;
	*build_id_len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	err = pread_all(fd, eh, sizeof(eh), 0);
	if (err < 0 || !ident_ok(eh) || snap_get16(eh + SNAP_EHDR(e_phentsize)) != PHDR_SIZE) {
		close(fd);
		return err < 0 ? err : -SNAP_EFORMAT;
	}
	*etype = snap_get16(eh + SNAP_EHDR(e_type));
	phnum = snap_get16(eh + SNAP_EHDR(e_phnum));
	if (phnum > SNAP_ELF_MAX_LOADS)
		phnum = SNAP_ELF_MAX_LOADS;
	ph = snap_malloc((size_t)phnum * PHDR_SIZE + 1);
	if (!ph) {
		close(fd);
		return -ENOMEM;
	}
	err = pread_all(fd, ph, (size_t)phnum * PHDR_SIZE, snap_get64(eh + SNAP_EHDR(e_phoff)));
	if (err >= 0)
		err = add_loads(fd, ph, phnum, segs, nsegs, build_id, build_id_len);
	snap_free(ph);
	close(fd);
	if (err < 0) {
		snap_free(*segs);
		*segs = NULL;
		*nsegs = 0;
	}
	return err < 0 ? err : 0;
}
