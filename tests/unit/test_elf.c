// SPDX-License-Identifier: GPL-2.0
/* util/elf, the bounded ELF reader: header tables strict and lax, sections,
 * symbol and string tables, notes, the pread'd program headers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf_small.inc"
#include "self_exe.h"
#include "snap_test.h"
#include "util/alloc.h"
#include "util/elf.h"
#include "util/err.h"

static void strict_and_lax(void)
{
	unsigned char b[sizeof(elf_small)];
	struct snap_elf e;

	memcpy(b, elf_small, sizeof(b));
	memset(b + 40, 0xff, 8); /* e_shoff far outside */
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_elf_open(&e, b, sizeof(b), 0));
	CHECK_INT_EQ(0, snap_elf_open(&e, b, sizeof(b), SNAP_ELF_LAX));
	CHECK_INT_EQ(0, e.shnum); /* the section headers count as absent */
	CHECK_INT_EQ(-1, e.symtab);
	CHECK_INT_EQ(1, e.phnum); /* the program headers are kept */
	CHECK_INT_EQ(1, (int)e.nload);
	CHECK_U64_EQ(0x3000, e.load[0].filesz);
	CHECK_U64_EQ(0x3000, e.load[0].memsz);
	CHECK_INT_EQ(5, (int)e.load[0].flags);
	CHECK(snap_elf_shdr(&e, 0) == NULL);
	memcpy(b, elf_small, sizeof(b));
	b[54] = 32; /* e_phentsize not the ELF64 one */
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_elf_open(&e, b, sizeof(b), 0));
	CHECK_INT_EQ(0, snap_elf_open(&e, b, sizeof(b), SNAP_ELF_LAX));
	CHECK_INT_EQ(0, e.phnum);
	CHECK_INT_EQ(0, (int)e.nload);
	CHECK_INT_EQ(3, e.shnum);
	/* not ELF64 LE: an error either way */
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_elf_open(&e, elf_small, 63, SNAP_ELF_LAX));
	b[5] = 2;
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_elf_open(&e, b, sizeof(b), SNAP_ELF_LAX));
}

static void sections_and_symbols(void)
{
	unsigned char b[sizeof(elf_small)];
	struct snap_elf_symtab t;
	struct snap_elf_rawsym r;
	struct snap_elf e;
	uint64_t size, shoff;

	CHECK_INT_EQ(0, snap_elf_open(&e, elf_small, sizeof(elf_small), 0));
	CHECK_INT_EQ(1, snap_elf_sec_by_type(&e, SHT_SYMTAB));
	CHECK_INT_EQ(-1, snap_elf_sec_by_type(&e, SHT_DYNSYM));
	CHECK_INT_EQ(-1, snap_elf_sec_by_name(&e, ".text"));
	CHECK(snap_elf_phdr(&e, 0) != NULL);
	CHECK(snap_elf_phdr(&e, 1) == NULL);
	CHECK(snap_elf_shdr(&e, 3) == NULL);
	CHECK(snap_elf_sec_bytes(&e, 1, &size) == elf_small + 0x88);
	CHECK_U64_EQ(0x60, size);
	CHECK(snap_elf_sec_bytes(&e, 3, &size) == NULL);
	CHECK_INT_EQ(0, snap_elf_symtab(&e, 1, &t));
	CHECK_U64_EQ(4, t.count);
	snap_elf_sym_at(&t, 2, &r);
	CHECK_STR_EQ("leaf", snap_elf_str(t.str, t.strsize, r.name));
	CHECK_U64_EQ(0x1080, r.value);
	CHECK_INT_EQ(STT_FUNC, r.type);
	CHECK_INT_EQ(STB_GLOBAL, r.bind);
	CHECK_INT_EQ(1, r.shndx);
	CHECK_INT_EQ(-1, snap_elf_symtab(&e, 3, &t));
	CHECK_INT_EQ(-1, snap_elf_symtab(&e, -1, &t));
	/* a symbol table or its strings outside the file */
	memcpy(b, elf_small, sizeof(b));
	memcpy(&shoff, b + 40, 8);
	b[shoff + 64 + 32] = 0x70; /* .symtab 15 entries, past the end */
	b[shoff + 64 + 33] = 0x01;
	CHECK_INT_EQ(0, snap_elf_open(&e, b, sizeof(b), 0));
	CHECK_INT_EQ(-1, snap_elf_symtab(&e, 1, &t));
	memcpy(b, elf_small, sizeof(b));
	b[shoff + 128 + 25] = 0x10; /* .strtab's offset past the end */
	CHECK_INT_EQ(0, snap_elf_open(&e, b, sizeof(b), 0));
	CHECK_INT_EQ(-1, snap_elf_symtab(&e, 1, &t));
	CHECK_STR_EQ("", snap_elf_sec_name(&e, 1)); /* the name table is the same one */
}

static void strings(void)
{
	static const char tab[5] = {'a', 'b', 0, 'c', 'd'};

	CHECK_STR_EQ("ab", snap_elf_str(tab, 5, 0));
	CHECK_STR_EQ("", snap_elf_str(tab, 5, 2));
	CHECK(snap_elf_str(tab, 5, 3) == NULL); /* no NUL before the end */
	CHECK(snap_elf_str(tab, 5, 5) == NULL);
	CHECK(snap_elf_str(tab, 5, UINT64_MAX) == NULL);
}

/* A note header: namesz, descsz, type. */
static size_t put_note(uint8_t *p, uint32_t namesz, uint32_t descsz, uint32_t type)
{
	memcpy(p, &namesz, 4);
	memcpy(p + 4, &descsz, 4);
	memcpy(p + 8, &type, 4);
	return 12;
}

static void notes(void)
{
	uint8_t a[64] = {0}, id[20];
	struct snap_elf_note n;
	uint64_t pos = 0;
	size_t len = 0, k;

	k = put_note(a, 4, 3, NT_GNU_BUILD_ID);
	memcpy(a + k, "GNU", 4);
	memcpy(a + k + 4, "\x01\x02\x03", 3);
	k += 4 + 4;
	put_note(a + k, 4, 100, NT_GNU_BUILD_ID); /* its description does not fit */
	CHECK_INT_EQ(1, snap_elf_note_next(a, sizeof(a), 4, &pos, &n));
	CHECK_U64_EQ(20, pos);
	CHECK_INT_EQ(1, snap_elf_note_is(&n, "GNU", NT_GNU_BUILD_ID));
	CHECK_INT_EQ(0, snap_elf_note_is(&n, "GN", NT_GNU_BUILD_ID));
	CHECK_INT_EQ(1, snap_elf_note_build_id(&n, id, &len));
	CHECK_INT_EQ(3, (int)len);
	CHECK_INT_EQ(2, id[1]);
	CHECK_INT_EQ(0, snap_elf_note_next(a, sizeof(a), 4, &pos, &n));
	CHECK_INT_EQ(0, snap_elf_note_next(a, 11, 4, &(uint64_t){0}, &n)); /* no whole header */
	/* 8-byte padding: "OCaml\0" takes 8 bytes, then the description */
	memset(a, 0, sizeof(a));
	k = put_note(a, 6, 8, 1);
	memcpy(a + k, "OCaml", 6);
	a[k + 8] = 0x42;
	pos = 0;
	CHECK_INT_EQ(1, snap_elf_note_next(a, 28, 8, &pos, &n));
	CHECK_INT_EQ(1, snap_elf_note_is(&n, "OCaml", 1));
	CHECK_INT_EQ(0x42, n.desc[0]);
	CHECK_INT_EQ(0, snap_elf_note_build_id(&n, id, &len)); /* not GNU's */
	pos = 0;
	CHECK_INT_EQ(0, snap_elf_note_next(a, 27, 8, &pos, &n)); /* one byte short */
	/* a build id longer than 20 bytes is none */
	memset(a, 0, sizeof(a));
	k = put_note(a, 4, 21, NT_GNU_BUILD_ID);
	memcpy(a + k, "GNU", 4);
	pos = 0;
	CHECK_INT_EQ(1, snap_elf_note_next(a, sizeof(a), 4, &pos, &n));
	CHECK_INT_EQ(0, snap_elf_note_build_id(&n, id, &len));
}

/* The pread'd program headers equal those of the mapped file. */
static void read_loads(void)
{
	unsigned char *buf;
	struct snap_loadseg *g;
	uint8_t id[20];
	size_t len, n, idlen;
	struct snap_elf e;
	int et = -1;

	buf = self_exe(&len);
	if (!buf)
		return;
	CHECK_INT_EQ(0, snap_elf_open(&e, buf, len, 0));
	CHECK_INT_EQ(0, snap_elf_read_loads("/proc/self/exe", &g, &n, &et, id, &idlen));
	CHECK_INT_EQ(e.type, et);
	CHECK_INT_EQ((int)e.nload, (int)n);
	CHECK(n >= 2);
	for (size_t i = 0; i < n && i < e.nload; i++)
		CHECK(g[i].off == e.load[i].off && g[i].vaddr == e.load[i].vaddr &&
		      g[i].filesz == e.load[i].filesz && g[i].memsz == e.load[i].memsz &&
		      g[i].flags == e.load[i].flags);
	snap_free(g);
	free(buf);
	CHECK_INT_EQ(-SNAP_EFORMAT,
		     snap_elf_read_loads("/proc/self/cmdline", &g, &n, &et, id, &idlen));
	CHECK(g == NULL && n == 0);
	CHECK_INT_EQ(-ENOENT, snap_elf_read_loads("/nonexistent/x", &g, &n, &et, id, &idlen));
}

int main(void)
{
	RUN(strict_and_lax);
	RUN(sections_and_symbols);
	RUN(strings);
	RUN(notes);
	RUN(read_loads);
	return snap_test_done();
}
