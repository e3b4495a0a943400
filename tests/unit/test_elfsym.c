// SPDX-License-Identifier: GPL-2.0
/* The ELF64 symbol reader: lookups, offsets and every bounds check. */
#include <errno.h>
#include <stdlib.h>

#include "elf_small.inc"
#include "record/elfsym.h"
#include "self_exe.h"
#include "snap_test.h"
#include "util/err.h"

static void small_lookups(void)
{
	struct snap_elf e;
	struct snap_elfsym s;
	uint64_t off, cur = 0;
	int n = 0;

	CHECK_INT_EQ(0, snap_elf_open(&e, elf_small, sizeof(elf_small), 0));
	CHECK_INT_EQ(3, e.type);
	CHECK_INT_EQ(1, snap_elf_has_symbols(&e));
	CHECK_INT_EQ(1, snap_elfsym_find_func(&e, "leaf", &s));
	CHECK_U64_EQ(0x1080, s.value);
	CHECK_INT_EQ(2, s.type);
	CHECK_INT_EQ(0, snap_elfsym_find_func(&e, "data", &s)); /* an OBJECT, not a function */
	CHECK_INT_EQ(0, snap_elfsym_find_func(&e, "nope", &s));
	CHECK_INT_EQ(0, snap_elfsym_find_func(&e, "", &s));
	while (snap_elfsym_next(&e, &cur, &s) == 1)
		n++;
	CHECK_INT_EQ(3, n);
	CHECK_INT_EQ(0, snap_loadseg_vaddr2off(e.load, e.nload, 0x1040, &off));
	CHECK_U64_EQ(0x1040, off);
	CHECK_INT_EQ(-ENOENT, snap_loadseg_vaddr2off(e.load, e.nload, 0x100000, &off));
}

static void rejects(void)
{
	struct snap_elf e;
	unsigned char b[sizeof(elf_small)];

	CHECK_INT_EQ(-SNAP_EFORMAT, snap_elf_open(&e, NULL, 0, 0));
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_elf_open(&e, elf_small, 63, 0));
	memcpy(b, elf_small, sizeof(b));
	b[4] = 1; /* 32-bit */
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_elf_open(&e, b, sizeof(b), 0));
	memcpy(b, elf_small, sizeof(b));
	b[5] = 2; /* big endian */
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_elf_open(&e, b, sizeof(b), 0));
	memcpy(b, elf_small, sizeof(b));
	memset(b + 40, 0xff, 8); /* e_shoff far outside */
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_elf_open(&e, b, sizeof(b), 0));
	memcpy(b, elf_small, sizeof(b));
	memset(b + 32, 0xff, 7); /* e_phoff far outside */
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_elf_open(&e, b, sizeof(b), 0));
	/* truncated just before the section headers */
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_elf_open(&e, elf_small, sizeof(elf_small) - 1, 0));
}

/* Corrupt symbol tables never crash: bad sizes, links and name offsets are skipped. */
static void corrupt_tables(void)
{
	struct snap_elf e;
	struct snap_elfsym s;
	unsigned char b[sizeof(elf_small)];
	uint64_t shoff, cur = 0;
	int n = 0;

	memcpy(b, elf_small, sizeof(b));
	memcpy(&shoff, b + 40, 8);
	memset(b + shoff + 64 + 32, 0x7f, 8); /* .symtab sh_size huge */
	CHECK_INT_EQ(0, snap_elf_open(&e, b, sizeof(b), 0));
	CHECK_INT_EQ(0, snap_elfsym_next(&e, &cur, &s));
	memcpy(b, elf_small, sizeof(b));
	b[shoff + 64 + 40] = 9; /* sh_link to a missing section */
	CHECK_INT_EQ(0, snap_elf_open(&e, b, sizeof(b), 0));
	cur = 0;
	CHECK_INT_EQ(0, snap_elfsym_next(&e, &cur, &s));
	memcpy(b, elf_small, sizeof(b));
	memset(b + shoff + 128 + 32, 0, 8); /* .strtab empty: every name is out of range */
	CHECK_INT_EQ(0, snap_elf_open(&e, b, sizeof(b), 0));
	cur = 0;
	while (snap_elfsym_next(&e, &cur, &s) == 1)
		n++;
	CHECK_INT_EQ(0, n);
}

static void own_executable(void)
{
	unsigned char *buf;
	size_t len;
	struct snap_elf e;
	struct snap_elfsym s;

	buf = self_exe(&len);
	if (!buf)
		return;
	CHECK_INT_EQ(0, snap_elf_open(&e, buf, len, 0));
	CHECK_INT_EQ(1, snap_elfsym_find_func(&e, "main", &s));
	/* a function of the library it links (a static one of this file may be inlined away) */
	CHECK_INT_EQ(1, snap_elfsym_find_func(&e, "snap_elf_open", &s));
	free(buf);
}

/* perf's names: libiberty without parameters (with them on request), a
 * "@VERSION" kept, Rust legacy names without their hash, C names untouched. */
static void demangle(void)
{
	char *d;

	d = snap_elfsym_demangle("_ZN3app6detail4spinIlEET_S2_", 0);
	CHECK_STR_EQ("app::detail::spin<long>", d);
	free(d);
	d = snap_elfsym_demangle("_ZN3app6detail11count_wordsEPKc", 1);
	CHECK_STR_EQ("app::detail::count_words(char const*)", d);
	free(d);
	d = snap_elfsym_demangle("_ZN2rs5words11count_words17h0123456789abcdefE", 0);
	CHECK_STR_EQ("rs::words::count_words", d);
	free(d);
	d = snap_elfsym_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi@GLIBCXX_3.4", 0);
	CHECK_STR_EQ("std::vector<int, std::allocator<int> >::push_back@GLIBCXX_3.4", d);
	free(d);
	CHECK(snap_elfsym_demangle("main", 0) == NULL);
	CHECK(snap_elfsym_demangle("_Z", 0) == NULL);
	CHECK(snap_elfsym_demangle("_Znot_mangled!", 0) == NULL);
}

int main(void)
{
	RUN(small_lookups);
	RUN(demangle);
	RUN(rejects);
	RUN(corrupt_tables);
	RUN(own_executable);
	return snap_test_done();
}
