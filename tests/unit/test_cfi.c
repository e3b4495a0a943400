// SPDX-License-Identifier: GPL-2.0
/*
 * parse/cfi and util/loadseg: file offset <-> virtual address, FDE tables read
 * from hand-made ELF images (pc-relative and absolute encodings, .debug_frame)
 * and from this test's own executable, the per-DSO cache, and files that are
 * missing, FIFOs, truncated or damaged; unwind rows (frameless or not at a pc)
 * of two functions of this executable and the marking of frame-pointer
 * chains' leaves.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse/cfi.h"
#include "snap_test.h"
#include "util/err.h"
#include "util/loadseg.h"
#include "util/strtab.h"

/* ---- util/loadseg ---- */

static void loadseg_conversions(void)
{
	/* lld's layout: the code's file offset differs from its address by a page */
	const struct snap_loadseg s[] = {
		{0x000, 0x0000, 0x6f4, 4, 0x6f4}, /* R */
		{0x700, 0x1700, 0x290, 5, 0x290}, /* R E */
		{0x990, 0x2990, 0x208, 6, 0x208}, /* RW */
		{0x700, 0x9700, 0x100, 4, 0x100}, /* R, the same file bytes again */
		{0xb98, 0x3b98, 0x040, 6, 0x040}, /* RW */
	};
	uint64_t v, o;

	CHECK_INT_EQ(0, snap_loadseg_off2vaddr(s, 5, 0x905, &v));
	CHECK_U64_EQ(0x1905, v); /* the executable segment wins over the later R one */
	CHECK_INT_EQ(0, snap_loadseg_off2vaddr(s, 5, 0x10, &v));
	CHECK_U64_EQ(0x10, v);
	CHECK_INT_EQ(0, snap_loadseg_off2vaddr(s, 5, 0x98f, &v));
	CHECK_U64_EQ(0x198f, v);
	CHECK_INT_EQ(-ENOENT, snap_loadseg_off2vaddr(s, 5, 0xbd8, &v)); /* past every file part */
	CHECK_INT_EQ(-ENOENT, snap_loadseg_off2vaddr(s, 0, 0x905, &v));
	CHECK_INT_EQ(0, snap_loadseg_vaddr2off(s, 5, 0x18a0, &o));
	CHECK_U64_EQ(0x8a0, o);
	CHECK_INT_EQ(0, snap_loadseg_vaddr2off(s, 5, 0x9710, &o));
	CHECK_U64_EQ(0x710, o);
	CHECK_INT_EQ(-ENOENT, snap_loadseg_vaddr2off(s, 5, 0x1990, &o)); /* a gap */
	/* non-PIE: offsets are far below the addresses */
	const struct snap_loadseg e[] = {{0x640, 0x201640, 0x280, 5, 0x280}};
	CHECK_INT_EQ(0, snap_loadseg_off2vaddr(e, 1, 0x84f, &v));
	CHECK_U64_EQ(0x20184f, v);
	/* no overflow past the top of the address space */
	const struct snap_loadseg top[] = {{0x0, UINT64_MAX - 4, 0x100, 5, 0x100}};
	CHECK_INT_EQ(-ENOENT, snap_loadseg_off2vaddr(top, 1, 0x10, &v));
}

/* ---- hand-made ELF images ---- */

struct img {
	uint8_t b[4096];
	size_t n;
};

static void put(struct img *m, size_t at, uint64_t v, int size)
{
	for (int i = 0; i < size; i++)
		m->b[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static size_t add(struct img *m, uint64_t v, int size)
{
	size_t at = m->n;

	put(m, at, v, size);
	m->n += (size_t)size;
	return at;
}

#define VBASE  0x10000u /* the segment's address: offsets and addresses differ */
#define CFI_AT 0x100u	/* where the CFI section starts in the file */

enum kind { EH_PCREL4, EH_ABS8, EH_NOAUG, DEBUG_FRAME };

/*
 * An ET_DYN image with one PT_LOAD (file offset 0 at VBASE, R E) and one CFI
 * section holding a CIE and the FDEs [0x10100, 0x10140) and [0x10200, 0x10280)
 * (addresses), encoded as kind says.
 */
static void make_elf_bid(struct img *m, enum kind k, uint8_t bid);

static void make_elf(struct img *m, enum kind k)
{
	make_elf_bid(m, k, 0);
}

/* make_elf with a GNU build id note (20 bytes bid, bid + 1, ...; 0 = none) */
static void make_elf_bid(struct img *m, enum kind k, uint8_t bid)
{
	const uint64_t fde[2][2] = {{VBASE + 0x100, 0x40}, {VBASE + 0x200, 0x80}};
	const int eh = k != DEBUG_FRAME;
	size_t cie, len_at, shoff, strtab, secend;
	const char names[] = "\0.eh_frame\0.debug_frame\0.shstrtab";

	memset(m, 0, sizeof(*m));
	/* ELF header */
	memcpy(m->b, "\177ELF", 4);
	m->b[4] = 2; /* ELFCLASS64 */
	m->b[5] = 1; /* little-endian */
	m->b[6] = 1;
	put(m, 16, 3, 2);  /* ET_DYN */
	put(m, 18, 62, 2); /* EM_X86_64 */
	put(m, 20, 1, 4);
	put(m, 32, 64, 8);		/* e_phoff */
	put(m, 52, 64, 2);		/* e_ehsize */
	put(m, 54, 56, 2);		/* e_phentsize */
	put(m, 56, 1, 2);		/* e_phnum */
	put(m, 58, 64, 2);		/* e_shentsize */
	put(m, 60, 4, 2);		/* e_shnum */
	put(m, 62, 3, 2);		/* e_shstrndx */
	put(m, 64, 1, 4);		/* PT_LOAD */
	put(m, 64 + 4, 5, 4);		/* R E */
	put(m, 64 + 16, VBASE, 8);	/* p_vaddr (p_offset 0) */
	put(m, 64 + 24, VBASE, 8);	/* p_paddr */
	put(m, 64 + 56 - 8, 0x1000, 8); /* p_align */
	/* the CFI section */
	m->n = CFI_AT;
	cie = m->n;
	len_at = add(m, 0, 4);
	add(m, eh ? 0 : 0xffffffffu, 4); /* CIE id */
	add(m, 1, 1);			 /* version */
	if (k == EH_PCREL4 || k == EH_ABS8) {
		add(m, 'z', 1);
		add(m, 'R', 1);
	}
	add(m, 0, 1);	 /* end of the augmentation string */
	add(m, 1, 1);	 /* code alignment */
	add(m, 0x78, 1); /* data alignment -8 */
	add(m, 16, 1);	 /* return address register */
	if (k == EH_PCREL4 || k == EH_ABS8) {
		add(m, 1, 1);				 /* augmentation data length */
		add(m, k == EH_PCREL4 ? 0x1b : 0x04, 1); /* pcrel|sdata4, or udata8 */
	}
	add(m, 0x0c, 1); /* DW_CFA_def_cfa %rsp + 8: the rows at a function's entry */
	add(m, 7, 1);
	add(m, 8, 1);
	while ((m->n - cie) % 8)
		add(m, 0, 1); /* DW_CFA_nop */
	put(m, len_at, m->n - cie - 4, 4);
	for (int i = 0; i < 2; i++) {
		size_t f = m->n, ptr;

		len_at = add(m, 0, 4);
		ptr = add(m, 0, 4);
		put(m, ptr, eh ? ptr - cie : cie - CFI_AT, 4); /* CIE pointer */
		if (k == EH_PCREL4) {
			size_t at = m->n;

			add(m, (uint64_t)(fde[i][0] - (VBASE + at)), 4);
			add(m, fde[i][1], 4);
		} else {
			add(m, fde[i][0], 8);
			add(m, fde[i][1], 8);
		}
		if (k == EH_PCREL4 || k == EH_ABS8)
			add(m, 0, 1); /* augmentation data length */
		if (i == 1) { /* from 0x204: push %rbp done (CFA %rsp + 16, %rbp at CFA - 16) */
			add(m, 0x44, 1); /* DW_CFA_advance_loc 4 */
			add(m, 0x0e, 1); /* DW_CFA_def_cfa_offset 16 */
			add(m, 16, 1);
			add(m, 0x86, 1); /* DW_CFA_offset %rbp, 2 * -8 */
			add(m, 2, 1);
		}
		while ((m->n - f) % 8)
			add(m, 0, 1);
		put(m, len_at, m->n - f - 4, 4);
	}
	if (eh)
		add(m, 0, 4); /* the .eh_frame terminator */
	secend = m->n;
	strtab = m->n;
	memcpy(m->b + m->n, names, sizeof(names));
	m->n += sizeof(names);
	m->n = 0x300; /* the segment holds the code at 0x100..0x280 */
	shoff = m->n;
	m->n += 4 * 64;
	put(m, 40, shoff, 8); /* e_shoff */
	/* [1] the CFI section */
	put(m, shoff + 64 + 0, eh ? 1 : 11, 4); /* name */
	put(m, shoff + 64 + 4, 1, 4);		/* SHT_PROGBITS */
	put(m, shoff + 64 + 8, eh ? 2 : 0, 8);	/* SHF_ALLOC for .eh_frame */
	put(m, shoff + 64 + 16, eh ? VBASE + CFI_AT : 0, 8);
	put(m, shoff + 64 + 24, CFI_AT, 8);
	put(m, shoff + 64 + 32, secend - CFI_AT, 8);
	put(m, shoff + 64 + 48, 8, 8);
	/* [2] the build id note (or an empty section); [3] .shstrtab */
	if (bid) {
		size_t at = 0x2a0;

		put(m, at, 4, 4);
		put(m, at + 4, 20, 4);
		put(m, at + 8, 3, 4); /* NT_GNU_BUILD_ID */
		memcpy(m->b + at + 12, "GNU", 4);
		for (int i = 0; i < 20; i++)
			m->b[at + 16 + (size_t)i] = (uint8_t)(bid + i);
		put(m, shoff + 2 * 64 + 4, 7, 4); /* SHT_NOTE */
		put(m, shoff + 2 * 64 + 8, 2, 8);
		put(m, shoff + 2 * 64 + 16, VBASE + at, 8);
		put(m, shoff + 2 * 64 + 24, at, 8);
		put(m, shoff + 2 * 64 + 32, 36, 8);
		put(m, shoff + 2 * 64 + 48, 4, 8);
	}
	put(m, shoff + 3 * 64 + 0, 24, 4);
	put(m, shoff + 3 * 64 + 4, 3, 4); /* SHT_STRTAB */
	put(m, shoff + 3 * 64 + 24, strtab, 8);
	put(m, shoff + 3 * 64 + 32, sizeof(names), 8);
	put(m, shoff + 3 * 64 + 48, 1, 8);
	put(m, 64 + 32, m->n, 8); /* p_filesz */
	put(m, 64 + 40, m->n, 8); /* p_memsz */
}

static void check_image(enum kind k)
{
	struct img m;
	struct snap_cfi_file *f;
	uint64_t s = 0;

	make_elf(&m, k);
	CHECK_INT_EQ(0, snap_cfi_file_open_mem(m.b, m.n, &f));
	if (!f)
		return;
	CHECK_INT_EQ(2, (long long)snap_cfi_file_nfdes(f));
	/* mapped address 0x120 is 0x10120: in [0x10100, 0x10140), which is offset 0x100 */
	CHECK_INT_EQ(1, snap_cfi_file_start(f, 0x120, &s));
	CHECK_U64_EQ(0x100, s);
	CHECK_INT_EQ(1, snap_cfi_file_start(f, 0x100, &s));
	CHECK_U64_EQ(0x100, s);
	CHECK_INT_EQ(1, snap_cfi_file_start(f, 0x27f, &s));
	CHECK_U64_EQ(0x200, s);
	CHECK_INT_EQ(0, snap_cfi_file_start(f, 0x140, &s));   /* between the functions */
	CHECK_INT_EQ(0, snap_cfi_file_start(f, 0x280, &s));   /* the end is not inside */
	CHECK_INT_EQ(0, snap_cfi_file_start(f, 0x10120, &s)); /* an address, not an offset */
	CHECK_INT_EQ(0, snap_cfi_file_start(f, 0x50, &s));
	/* unwind rows (libdw; .debug_frame through its copy): CFA %rsp + 8 is
	 * frameless; after the push, %rbp saved (.eh_frame) or not said (.debug_frame,
	 * whose rows Go writes without %rbp); no row between the functions */
	CHECK_INT_EQ(1, snap_cfi_file_frameless(f, 0x120));
	CHECK_INT_EQ(1, snap_cfi_file_frameless(f, 0x203));
	CHECK_INT_EQ(k == DEBUG_FRAME ? -1 : 0, snap_cfi_file_frameless(f, 0x204));
	CHECK_INT_EQ(-1, snap_cfi_file_frameless(f, 0x140));
	CHECK_INT_EQ(-1, snap_cfi_file_frameless(f, 0x10120));
	snap_cfi_file_close(f);
}

static void fde_pcrel_sdata4(void)
{
	check_image(EH_PCREL4);
}

static void fde_absolute_udata8(void)
{
	check_image(EH_ABS8);
}

static void fde_no_augmentation(void)
{
	check_image(EH_NOAUG);
}

static void fde_debug_frame(void)
{
	check_image(DEBUG_FRAME);
}

/* Every prefix of an image, and every byte of it changed: never a crash, and
 * what is found stays inside the file's segments. */
static void damaged_images(void)
{
	static const enum kind kinds[] = {EH_PCREL4, EH_ABS8, DEBUG_FRAME};

	for (size_t ki = 0; ki < 3; ki++) {
		struct img m, d;

		make_elf(&m, kinds[ki]);
		for (size_t len = 0; len <= m.n; len++) {
			struct snap_cfi_file *f;
			uint64_t s;
			int r = snap_cfi_file_open_mem(m.b, len, &f);

			CHECK(r == 0 || r == -SNAP_EFORMAT);
			if (!r) {
				(void)snap_cfi_file_start(f, 0x120, &s);
				CHECK(snap_cfi_file_frameless(f, 0x204) <= 1);
				snap_cfi_file_close(f);
			}
		}
		for (size_t i = 0; i < m.n; i++) {
			for (int x = 1; x < 256; x <<= 1) {
				struct snap_cfi_file *f;
				uint64_t s;

				d = m;
				d.b[i] ^= (uint8_t)x;
				if (snap_cfi_file_open_mem(d.b, d.n, &f) == 0) {
					for (uint64_t o = 0; o < 0x300; o += 0x10) {
						if (snap_cfi_file_start(f, o, &s) == 1)
							CHECK(s <= o);
						CHECK(snap_cfi_file_frameless(f, o + 4) <= 1);
					}
					snap_cfi_file_close(f);
				}
			}
		}
	}
}

/* ---- this test's own executable ---- */

__attribute__((noinline)) int cfi_probe(int x);
__attribute__((noinline)) int cfi_probe(int x)
{
	volatile int y = x;

	for (int i = 0; i < 3; i++)
		y = y * 3 + i;
	return y;
}

/* perf's mapped address of a code address of this process (/proc/self/maps). */
static int mapped(uint64_t addr, uint64_t *off, char *path, size_t plen)
{
	FILE *fp = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128];
	int ok = 0;

	if (!fp)
		return 0;
	while (!ok && fgets(line, sizeof(line), fp)) {
		unsigned long long lo, hi, pg;
		char perm[8], file[PATH_MAX];

		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &lo, &hi, perm, &pg, file) <
		    4)
			continue;
		if (addr >= lo && addr < hi && file[0] == '/') {
			*off = addr - lo + pg;
			snprintf(path, plen, "%s", file);
			ok = 1;
		}
	}
	fclose(fp);
	return ok;
}

static void own_executable(void)
{
	struct snap_cfi_file *f = NULL;
	char path[PATH_MAX];
	uint64_t fn, m, s = 0;

	fn = (uint64_t)(uintptr_t)&cfi_probe;
	CHECK_INT_EQ(32, cfi_probe(1)); /* ((1*3+0)*3+1)*3+2 */
	if (!mapped(fn, &m, path, sizeof(path))) {
		CHECK(!"cfi_probe is in no file mapping");
		return;
	}
	CHECK_INT_EQ(0, snap_cfi_file_open(path, &f));
	if (!f)
		return;
	CHECK(snap_cfi_file_nfdes(f) > 10);
	CHECK_INT_EQ(1, snap_cfi_file_start(f, m, &s));
	CHECK_U64_EQ(m, s);
	CHECK_INT_EQ(1, snap_cfi_file_start(f, m + 5, &s));
	CHECK_U64_EQ(m, s);
	snap_cfi_file_close(f);
}

/* ---- unwind rows: frameless at a pc (docs/sampling.md) ---- */

/*
 * Two functions of this executable with their CFI written out (the assembler
 * builds their .eh_frame rows): cfi_frameless never sets up a frame (CFA
 * %rsp + 8, %rbp untouched); cfi_framed pushes %rbp and makes it the CFA's
 * register, like gcc -fno-omit-frame-pointer. The labels are the pcs checked.
 */
#if defined(__x86_64__)
__asm__(".text\n"
	".globl cfi_frameless, cfi_framed, cfi_framed_pushed, cfi_framed_set, cfi_framed_popped\n"
	".type cfi_frameless, @function\n"
	"cfi_frameless:\n"
	".cfi_startproc\n"
	"	leaq 1(%rdi), %rax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size cfi_frameless, .-cfi_frameless\n"
	".type cfi_framed, @function\n"
	"cfi_framed:\n"
	".cfi_startproc\n"
	"	pushq %rbp\n"
	"cfi_framed_pushed:\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"	movq %rsp, %rbp\n"
	"cfi_framed_set:\n"
	".cfi_def_cfa_register %rbp\n"
	"	leaq 2(%rdi), %rax\n"
	"	popq %rbp\n"
	"cfi_framed_popped:\n"
	".cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size cfi_framed, .-cfi_framed\n");
long cfi_frameless(long x);
long cfi_framed(long x);
extern const char cfi_framed_pushed[], cfi_framed_set[], cfi_framed_popped[];

/* The mapped address of p and its file (CHECKs that it has one). */
static uint64_t mapped_of(const void *p, char *path, size_t plen)
{
	uint64_t m = 0;

	CHECK(mapped((uint64_t)(uintptr_t)p, &m, path, plen));
	return m;
}

static void rows_frameless(void)
{
	struct snap_cfi_file *f = NULL;
	char path[PATH_MAX];
	uint64_t fl, fr, pushed, set, popped;

	CHECK_INT_EQ(2, cfi_frameless(1));
	CHECK_INT_EQ(3, cfi_framed(1));
	fl = mapped_of((const void *)&cfi_frameless, path, sizeof(path));
	fr = mapped_of((const void *)&cfi_framed, path, sizeof(path));
	pushed = mapped_of(cfi_framed_pushed, path, sizeof(path));
	set = mapped_of(cfi_framed_set, path, sizeof(path));
	popped = mapped_of(cfi_framed_popped, path, sizeof(path));
	CHECK_INT_EQ(0, snap_cfi_file_open(path, &f));
	if (!f)
		return;
	CHECK_INT_EQ(1, snap_cfi_file_frameless(f, fl));     /* its first instruction */
	CHECK_INT_EQ(1, snap_cfi_file_frameless(f, fl + 4)); /* its ret */
	CHECK_INT_EQ(1, snap_cfi_file_frameless(f, fr));     /* before push %rbp */
	CHECK_INT_EQ(0, snap_cfi_file_frameless(f, pushed)); /* %rbp saved */
	CHECK_INT_EQ(0, snap_cfi_file_frameless(f, set));    /* CFA %rbp-based */
	CHECK_INT_EQ(0, snap_cfi_file_frameless(f, set + 4));
	/* its ret, after pop %rbp: CFA %rsp + 8 (the row still says %rbp saved:
	 * gcc writes no .cfi_restore there either) */
	CHECK_INT_EQ(1, snap_cfi_file_frameless(f, popped));
	/* rows are read again in any order (libdw's cache) */
	CHECK_INT_EQ(0, snap_cfi_file_frameless(f, set));
	CHECK_INT_EQ(1, snap_cfi_file_frameless(f, fl));
	/* no row: outside every FDE, outside every segment */
	CHECK_INT_EQ(-1, snap_cfi_file_frameless(f, 0));
	CHECK_INT_EQ(-1, snap_cfi_file_frameless(f, UINT64_MAX / 2));
	snap_cfi_file_close(f);
}

/* A chain of n frames of dso (outermost first): ips[i], none marked. */
static void chain(struct snap_loc *fs, uint32_t n, uint32_t dso, const uint64_t *ips)
{
	memset(fs, 0, n * sizeof(*fs));
	for (uint32_t i = 0; i < n; i++) {
		fs[i].ip = ips[i];
		fs[i].dso = dso;
	}
}

static void mark_frames(void)
{
	struct snap_strtab names;
	struct snap_cfi c;
	struct snap_loc fs[4];
	struct snap_event ev;
	char path[PATH_MAX];
	uint64_t fl, set;
	uint32_t dso;

	fl = mapped_of((const void *)&cfi_frameless, path, sizeof(path));
	set = mapped_of(cfi_framed_set, path, sizeof(path));
	snap_strtab_init(&names);
	CHECK_INT_EQ(0, snap_strtab_intern_id(&names, path, &dso));
	snap_cfi_init(&c);
	/* not known to be frame-pointer chains (dwarf, or not said): nothing marked */
	chain(fs, 3, dso, (const uint64_t[]){fl, set, fl});
	CHECK_INT_EQ(0, snap_cfi_mark_frames(&c, &names, fs, 3));
	CHECK_INT_EQ(0, fs[2].frameless);
	CHECK_U64_EQ(0, c.st.leaf_lookups);
	snap_cfi_set_fp_chains(&c, 1);
	/* a frameless leaf under a framed frame; the outermost frame is not looked at */
	CHECK_INT_EQ(0, snap_cfi_mark_frames(&c, &names, fs, 3));
	CHECK_INT_EQ(1, fs[2].frameless);
	CHECK_INT_EQ(0, fs[1].frameless);
	CHECK_INT_EQ(0, fs[0].frameless);
	CHECK_U64_EQ(2, c.st.leaf_lookups);
	/* a framed leaf; a return address into frameless code (looked up at the
	 * byte before it, its call); the leaf alone */
	chain(fs, 3, dso, (const uint64_t[]){set, fl + 4, set});
	CHECK_INT_EQ(0, snap_cfi_mark_frames(&c, &names, fs, 3));
	CHECK_INT_EQ(0, fs[0].frameless);
	CHECK_INT_EQ(1, fs[1].frameless);
	CHECK_INT_EQ(0, fs[2].frameless);
	/* a return address just past a function (a call that does not return):
	 * the function before, not the frameless one starting there */
	chain(fs, 3, dso, (const uint64_t[]){set, fl, set});
	CHECK_INT_EQ(0, snap_cfi_mark_frames(&c, &names, fs, 3));
	CHECK_INT_EQ(0, fs[1].frameless);
	chain(fs, 1, dso, (const uint64_t[]){fl});
	CHECK_INT_EQ(0, snap_cfi_mark_frames(&c, &names, fs, 1));
	CHECK_INT_EQ(0, fs[0].frameless);
	/* kernel frames inside (never looked up), an inlined frame (not a pc of
	 * its own), a frame of a DSO that is no file or unknown (0) */
	chain(fs, 4, dso, (const uint64_t[]){set, fl + 4, fl, 0xffffffff81000000ull});
	fs[2].inlined = 1;
	CHECK_INT_EQ(0, snap_cfi_mark_frames(&c, &names, fs, 4));
	CHECK_INT_EQ(1, fs[1].frameless);
	CHECK_INT_EQ(0, fs[2].frameless);
	CHECK_INT_EQ(0, fs[3].frameless);
	chain(fs, 3, 0, (const uint64_t[]){set, set, fl});
	CHECK_INT_EQ(0, snap_cfi_mark_frames(&c, &names, fs, 3));
	CHECK_INT_EQ(0, fs[2].frameless);
	/* answers are cached: five addresses looked up in all (set - 1, fl,
	 * fl + 3, set, fl - 1), two frameless */
	CHECK_U64_EQ(5, c.st.leaf_lookups);
	CHECK_U64_EQ(2, c.st.leaf_frameless);
	/* looked at for frames only: not counted as files of unknown code */
	CHECK_U64_EQ(0, c.st.files);
	/* events: samples and switches, whose frames they borrow */
	chain(fs, 2, dso, (const uint64_t[]){set, fl});
	memset(&ev, 0, sizeof(ev));
	ev.kind = SNAP_EV_BRANCH;
	ev.frames = fs;
	ev.nframes = 2;
	CHECK_INT_EQ(0, snap_cfi_mark_event(&c, &names, &ev));
	CHECK_INT_EQ(0, fs[1].frameless);
	ev.kind = SNAP_EV_SWITCH;
	CHECK_INT_EQ(0, snap_cfi_mark_event(&c, &names, &ev));
	CHECK_INT_EQ(1, fs[1].frameless);
	fs[1].frameless = 0;
	CHECK_INT_EQ(0, snap_cfi_mark_event(NULL, &names, &ev));
	CHECK_INT_EQ(0, fs[1].frameless);
	snap_cfi_fini(&c);
	snap_strtab_fini(&names);
}
#endif

/* ---- the per-DSO cache and files that are not what they seem ---- */

static void cache_and_bad_files(void)
{
	char dir[] = "/tmp/snaptrace-cfi.XXXXXX", fifo[PATH_MAX], trunc[PATH_MAX], path[PATH_MAX];
	struct snap_cfi c;
	struct snap_cfi_file *f;
	uint64_t fn = (uint64_t)(uintptr_t)&cfi_probe, m = 0, s = 0;
	char buf[65536];
	ssize_t n;
	int in, out;

	CHECK(mapped(fn, &m, path, sizeof(path)));
	CHECK(mkdtemp(dir) != NULL);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(trunc, sizeof(trunc), "%s/trunc", dir);
	CHECK_INT_EQ(0, mkfifo(fifo, 0600));
	/* a FIFO where a DSO was: refused at once (a blocking open would hang here) */
	CHECK_INT_EQ(-SNAP_ENOTREG, snap_cfi_file_open(fifo, &f));
	CHECK_INT_EQ(-SNAP_ENOTREG, snap_cfi_file_open(dir, &f));
	CHECK_INT_EQ(-ENOENT, snap_cfi_file_open("/nonexistent/libx.so", &f));
	/* the first 64 KiB of this executable: headers, no sections */
	in = open(path, O_RDONLY);
	out = open(trunc, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	n = in >= 0 ? read(in, buf, sizeof(buf)) : -1;
	CHECK(n > 0 && out >= 0 && write(out, buf, (size_t)n) == n);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	f = NULL;
	if (snap_cfi_file_open(trunc, &f) == 0)
		snap_cfi_file_close(f);

	snap_cfi_init(&c);
	CHECK_INT_EQ(1, snap_cfi_func_start(&c, 7, path, m + 3, &s));
	CHECK_U64_EQ(m, s);
	CHECK_INT_EQ(1, snap_cfi_func_start(&c, 7, path, m + 1, &s));
	CHECK_INT_EQ(1, (long long)c.st.files); /* read once */
	CHECK_INT_EQ(0, snap_cfi_func_start(&c, 8, fifo, 0x10, &s));
	CHECK_INT_EQ(0, snap_cfi_func_start(&c, 8, fifo, 0x20, &s));
	CHECK_INT_EQ(0, snap_cfi_func_start(&c, 9, trunc, m, &s) < 0);
	CHECK_INT_EQ(0, snap_cfi_func_start(&c, 10, "[vdso]", 0x10, &s));
	CHECK_INT_EQ(0, snap_cfi_func_start(&c, 11, "relative/libx.so", 0x10, &s));
	CHECK_INT_EQ(0, snap_cfi_func_start(&c, 0, path, m, &s));
	CHECK_INT_EQ(3, (long long)c.st.files); /* path, fifo, trunc */
	CHECK((long long)c.st.no_cfi >= 1);
	snap_cfi_fini(&c);
	snap_cfi_fini(&c); /* harmless twice */
	unlink(fifo);
	unlink(trunc);
	rmdir(dir);
}

/* test_cfi DIR writes the hand-made images to DIR (the fuzz corpus). */
static int write_images(const char *dir)
{
	static const char *names[] = {"eh_pcrel4", "eh_abs8", "eh_noaug", "debug_frame"};

	for (int k = 0; k < 4; k++) {
		struct img m;
		char path[PATH_MAX];
		FILE *fp;

		make_elf(&m, (enum kind)k);
		snprintf(path, sizeof(path), "%s/%s.elf", dir, names[k]);
		fp = fopen(path, "wb");
		if (!fp || fwrite(m.b, 1, m.n, fp) != m.n || fclose(fp))
			return 1;
	}
	return 0;
}

/* writes image m to path (making its directory) */
static void write_img(const struct img *m, const char *path)
{
	char dir[PATH_MAX], *slash;
	FILE *fp;

	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(dir, 0700);
		*slash = '/';
	}
	fp = fopen(path, "wb");
	CHECK(fp && fwrite(m->b, 1, m->n, fp) == m->n);
	if (fp)
		fclose(fp);
}

/* perf.data's build ids: the file at the path must be that build, else perf's
 * build-id cache copy is read, else nothing. */
static void build_ids(void)
{
	char dir[] = "/tmp/snaptrace-cfi.XXXXXX", lib[PATH_MAX], gone[PATH_MAX], cache[PATH_MAX],
	     copy[PATH_MAX + 128], vcopy[PATH_MAX + 128];
	uint8_t a[20], b[20], c3[20];
	struct img m;
	struct snap_cfi c;
	struct snap_cfi_file *f;
	const uint8_t *id;
	size_t len;
	uint64_t s = 0;

	for (int i = 0; i < 20; i++) {
		a[i] = (uint8_t)(0x11 + i);
		b[i] = (uint8_t)(0x22 + i);
		c3[i] = (uint8_t)(0x33 + i);
	}
	CHECK(mkdtemp(dir) != NULL);
	snprintf(lib, sizeof(lib), "%s/lib.so", dir);
	snprintf(gone, sizeof(gone), "%s/gone.so", dir);
	snprintf(cache, sizeof(cache), "%s/debug", dir);
	snprintf(copy, sizeof(copy), "%s/.build-id/22/232425262728292a2b2c2d2e2f303132333435/elf",
		 cache);
	make_elf_bid(&m, EH_PCREL4, 0x11);
	write_img(&m, lib);
	make_elf_bid(&m, EH_PCREL4, 0x22);
	write_img(&m, copy);
	CHECK_INT_EQ(0, snap_cfi_file_open(lib, &f));
	if (f) {
		id = snap_cfi_file_build_id(f, &len);
		CHECK_INT_EQ(20, (long long)len);
		CHECK(!memcmp(id, a, 20));
		snap_cfi_file_close(f);
	}

	/* the recorded build is at the path */
	snap_cfi_init(&c);
	CHECK_INT_EQ(0, snap_cfi_want(&c, lib, a, 20));
	CHECK_INT_EQ(1, snap_cfi_func_start(&c, 1, lib, 0x120, &s));
	CHECK_U64_EQ(0x100, s);
	CHECK_INT_EQ(0, (long long)c.st.other_build);
	snap_cfi_fini(&c);
	/* another build at the path, the recorded one in the cache */
	snap_cfi_init(&c);
	CHECK_INT_EQ(0, snap_cfi_want(&c, lib, b, 20));
	CHECK_INT_EQ(0, snap_cfi_want(&c, lib, c3, 20)); /* the first one counts */
	CHECK_INT_EQ(0, snap_cfi_set_cache_dir(&c, cache));
	CHECK_INT_EQ(1, snap_cfi_func_start(&c, 1, lib, 0x120, &s));
	CHECK_INT_EQ(1, (long long)c.st.other_build);
	CHECK_INT_EQ(1, (long long)c.st.from_cache);
	/* the file is gone, the cache has it */
	CHECK_INT_EQ(0, snap_cfi_want(&c, gone, b, 20));
	CHECK_INT_EQ(1, snap_cfi_func_start(&c, 2, gone, 0x120, &s));
	CHECK_INT_EQ(2, (long long)c.st.from_cache);
	snap_cfi_fini(&c);
	/* another build at the path and none in the cache: nothing */
	snap_cfi_init(&c);
	CHECK_INT_EQ(0, snap_cfi_want(&c, lib, c3, 20));
	CHECK_INT_EQ(0, snap_cfi_set_cache_dir(&c, cache));
	CHECK_INT_EQ(0, snap_cfi_func_start(&c, 1, lib, 0x120, &s));
	CHECK_INT_EQ(1, (long long)c.st.other_build);
	CHECK_INT_EQ(0, (long long)c.st.from_cache);
	/* no build id recorded for the path: the file as it is */
	CHECK_INT_EQ(1, snap_cfi_func_start(&c, 3, copy, 0x120, &s));
	snap_cfi_fini(&c);
	/* the vDSO: no file, its cache copy is .../vdso, read only with a build id */
	snprintf(vcopy, sizeof(vcopy),
		 "%s/.build-id/33/3435363738393a3b3c3d3e3f40414243444546/vdso", cache);
	make_elf_bid(&m, EH_PCREL4, 0x33);
	write_img(&m, vcopy);
	snap_cfi_init(&c);
	CHECK_INT_EQ(0, snap_cfi_set_cache_dir(&c, cache));
	CHECK_INT_EQ(0, snap_cfi_func_start(&c, 4, SNAP_CFI_VDSO, 0x120, &s));
	snap_cfi_fini(&c);
	snap_cfi_init(&c);
	CHECK_INT_EQ(0, snap_cfi_want(&c, SNAP_CFI_VDSO, c3, 20));
	CHECK_INT_EQ(0, snap_cfi_set_cache_dir(&c, cache));
	s = 0;
	CHECK_INT_EQ(1, snap_cfi_func_start(&c, 4, SNAP_CFI_VDSO, 0x120, &s));
	CHECK_U64_EQ(0x100, s);
	CHECK_INT_EQ(1, (long long)c.st.from_cache);
	snap_cfi_fini(&c);
	unlink(vcopy);
	for (char *slash; (slash = strrchr(vcopy, '/')) && strlen(vcopy) > strlen(cache);) {
		*slash = '\0';
		rmdir(vcopy);
	}
	unlink(lib);
	unlink(copy);
	for (char *slash; (slash = strrchr(copy, '/')) && strlen(copy) > strlen(dir);) {
		*slash = '\0';
		rmdir(copy); /* the cache's directories, then dir itself */
	}
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return write_images(argv[1]);
	RUN(loadseg_conversions);
	RUN(fde_pcrel_sdata4);
	RUN(fde_absolute_udata8);
	RUN(fde_no_augmentation);
	RUN(fde_debug_frame);
	RUN(damaged_images);
	RUN(own_executable);
#if defined(__x86_64__)
	RUN(rows_frameless);
	RUN(mark_frames);
#endif
	RUN(cache_and_bad_files);
	RUN(build_ids);
	return snap_test_done();
}
