// SPDX-License-Identifier: GPL-2.0
/*
 * -callgraph-mode auto: frame-pointer prologues, .eh_frame and DT_NEEDED read
 * from small ELF files built here, the decision table, and the whole pick on
 * an executable and a library written to a temporary directory.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/cgpick.h"
#include "snap_test.h"
#include "util/err.h"

/* ---- a tiny ELF64 x86-64 writer ---- */

#define FN_SIZE 32
#define BASE	0x400000u

/* PRO_LEAF: no stack frame at all (a leaf, or a tail-caller); PRO_SHRINK:
 * gcc's shrink-wrapped function, push %rbp after an early-exit test */
enum prologue { PRO_FP, PRO_ENDBR_FP, PRO_FP_ALT, PRO_NOFP, PRO_TINY, PRO_LEAF, PRO_SHRINK };

struct img {
	unsigned char b[8192];
	size_t len;
};

static void put(struct img *m, size_t off, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		m->b[off + (size_t)i] = (unsigned char)(v >> (8 * i));
}

static size_t append(struct img *m, const void *p, size_t n)
{
	size_t at = (m->len + 7) & ~(size_t)7;

	memcpy(m->b + at, p, n);
	m->len = at + n;
	return at;
}

struct shdr {
	uint32_t name, type, link;
	uint64_t off, size, entsize;
};

/* The unwind rows gcc writes for each prologue (DW_CFA_* after the CIE's
 * CFA = %rsp+8): push %rbp (CFA %rsp+16), mov %rsp,%rbp (CFA %rbp+16); sub
 * $8,%rsp (CFA %rsp+16); nothing for a function without a frame. */
static size_t fde_ops(enum prologue p, unsigned char *o)
{
	static const unsigned char fp[] = {0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6};
	static const unsigned char endbr[] = {0x45, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6};
	static const unsigned char shrink[] = {0x46, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6};
	static const unsigned char nofp[] = {0x44, 0x0e, 16};
	const unsigned char *src = p == PRO_ENDBR_FP ? endbr
				   : p == PRO_SHRINK ? shrink
				   : p == PRO_NOFP   ? nofp
				   : p == PRO_LEAF   ? NULL
						     : fp;
	size_t n = !src ? 0 : src == nofp ? sizeof(nofp) : sizeof(fp);

	if (n)
		memcpy(o, src, n);
	return n;
}

/* A real .eh_frame at address BASE + at: one CIE (zR, pcrel sdata4 FDE
 * addresses), one FDE per function of FN_SIZE bytes at text_addr. */
static size_t eh_frame(unsigned char *e, uint64_t at, uint64_t text_addr, const enum prologue *pro,
		       int nf)
{
	static const unsigned char cie[24] = {
		20,   0,   0,	0,    0, 0,    0,  0, /* length, CIE id */
		1,    'z', 'R', 0,    1, 0x78, 16, 1,
		0x1b,				  /* v1, "zR", code 1, data -8, ra 16, R */
		0x0c, 7,   8,	0x90, 1, 0,    0, /* def_cfa rsp+8; ra at cfa-8; nops */
	};
	size_t n = sizeof(cie);

	memcpy(e, cie, sizeof(cie));
	for (int i = 0; i < nf; i++) {
		unsigned char *f = e + n;
		size_t len = 4 + 4 + 4 + 1, ops;
		uint64_t pc = text_addr + (uint64_t)i * FN_SIZE;

		memset(f, 0, 40);
		ops = fde_ops(pro[i], f + 4 + len);
		len = (len + ops + 3) & ~(size_t)3;
		memcpy(f, &(uint32_t){(uint32_t)len}, 4);
		memcpy(f + 4, &(uint32_t){(uint32_t)(n + 4)}, 4); /* back to the CIE */
		memcpy(f + 8, &(int32_t){(int32_t)(pc - (BASE + at + n + 8))}, 4);
		memcpy(f + 12, &(uint32_t){FN_SIZE}, 4);
		n += 4 + len;
	}
	memset(e + n, 0, 4); /* terminator */
	return n + 4;
}

/*
 * Builds an ELF with nf functions of the given prologues, optionally an
 * .eh_frame (eh 1: a CIE that says nothing, 2: real unwind rows), a
 * .go.buildinfo section (go), and a .dynamic with the needed names and a
 * runpath.
 */
/* The functions' names for the next build (NULL: f0, f1, ...). */
static const char *const *fn_names;

static void build_go(struct img *m, const enum prologue *pro, int nf, int eh, int go,
		     const char *const *needed, int nneeded, const char *runpath)
{
	static const unsigned char fp[] = {0x55, 0x48, 0x89, 0xe5};
	static const unsigned char fp_alt[] = {0x55, 0x48, 0x8b, 0xec};
	static const unsigned char endbr[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5};
	static const unsigned char nofp[] = {0x48, 0x83, 0xec, 0x08};
	/* test %rdi,%rdi; je; push %rbp; mov %rsp,%rbp */
	static const unsigned char shrink[] = {0x48, 0x85, 0xff, 0x74, 0x10,
					       0x90, 0x55, 0x48, 0x89, 0xe5};
	unsigned char ehb[24 + 16 * 32 + 4];
	unsigned char text[16 * FN_SIZE], syms[17 * 24], dyn[16 * 16];
	char strtab[512], dynstr[512], shstr[128];
	size_t nstr = 1, ndynstr = 1, nshstr = 1, ndyn = 0, text_off, sh_off;
	struct shdr sh[10];
	int nsh = 1;

	memset(m, 0, sizeof(*m));
	memset(text, 0x90, sizeof(text));
	memset(syms, 0, sizeof(syms));
	strtab[0] = dynstr[0] = shstr[0] = '\0';
	memset(sh, 0, sizeof(sh));
	m->len = 64 + 56; /* ELF header, one PT_LOAD */
	for (int i = 0; i < nf; i++) {
		unsigned char *f = text + i * FN_SIZE, *s = syms + (i + 1) * 24;
		int n = fn_names ? snprintf(strtab + nstr, sizeof(strtab) - nstr, "%s", fn_names[i])
				 : snprintf(strtab + nstr, sizeof(strtab) - nstr, "f%d", i);

		if (pro[i] == PRO_FP || pro[i] == PRO_TINY)
			memcpy(f, fp, sizeof(fp));
		else if (pro[i] == PRO_FP_ALT)
			memcpy(f, fp_alt, sizeof(fp_alt));
		else if (pro[i] == PRO_ENDBR_FP)
			memcpy(f, endbr, sizeof(endbr));
		else if (pro[i] == PRO_SHRINK || pro[i] == PRO_LEAF)
			memcpy(f, shrink, sizeof(shrink));
		else
			memcpy(f, nofp, sizeof(nofp));
		memcpy(s, &(uint32_t){(uint32_t)nstr}, 4);
		s[4] = 0x12; /* GLOBAL FUNC */
		s[6] = 1;    /* .text is section 1 */
		nstr += (size_t)n + 1;
	}
	text_off = append(m, text, (size_t)nf * FN_SIZE);
	for (int i = 0; i < nf; i++) {
		unsigned char *s = syms + (i + 1) * 24;
		uint64_t v = BASE + text_off + (uint64_t)i * FN_SIZE,
			 size = pro[i] == PRO_TINY ? 8 : FN_SIZE;

		memcpy(s + 8, &v, 8);
		memcpy(s + 16, &size, 8);
	}
#define SEC(nm, ty, o, sz, lk, es)                                                                 \
	do {                                                                                       \
		sh[nsh] = (struct shdr){(uint32_t)nshstr, (ty), (lk), (o), (sz), (es)};            \
		nshstr += (size_t)snprintf(shstr + nshstr, sizeof(shstr) - nshstr, "%s", nm) + 1;  \
		nsh++;                                                                             \
	} while (0)
	SEC(".text", 1, text_off, (uint64_t)nf * FN_SIZE, 0, 0);
	if (eh == 1) {
		static const unsigned char cie[24] = {20};

		SEC(".eh_frame", 1, append(m, cie, sizeof(cie)), sizeof(cie), 0, 0);
	} else if (eh == 2) {
		size_t at = (m->len + 7) & ~(size_t)7, n;

		n = eh_frame(ehb, at, BASE + text_off, pro, nf);
		SEC(".eh_frame", 1, append(m, ehb, n), n, 0, 0);
	}
	if (go) {
		static const char magic[16] = "\xff Go buildinf:";

		SEC(".go.buildinfo", 1, append(m, magic, sizeof(magic)), sizeof(magic), 0, 0);
	}
	if (nneeded || runpath) {
		int strsec;

		for (int i = 0; i < nneeded; i++) {
			memcpy(dyn + ndyn * 16, &(uint64_t){1}, 8);
			memcpy(dyn + ndyn * 16 + 8, &(uint64_t){ndynstr}, 8);
			ndyn++;
			ndynstr += (size_t)snprintf(dynstr + ndynstr, sizeof(dynstr) - ndynstr,
						    "%s", needed[i]) +
				   1;
		}
		if (runpath) {
			memcpy(dyn + ndyn * 16, &(uint64_t){29}, 8);
			memcpy(dyn + ndyn * 16 + 8, &(uint64_t){ndynstr}, 8);
			ndyn++;
			ndynstr += (size_t)snprintf(dynstr + ndynstr, sizeof(dynstr) - ndynstr,
						    "%s", runpath) +
				   1;
		}
		memset(dyn + ndyn * 16, 0, 16); /* DT_NULL */
		ndyn++;
		strsec = nsh;
		SEC(".dynstr", 3, append(m, dynstr, ndynstr), ndynstr, 0, 0);
		SEC(".dynamic", 6, append(m, dyn, ndyn * 16), ndyn * 16, (uint32_t)strsec, 16);
	}
	SEC(".strtab", 3, append(m, strtab, nstr), nstr, 0, 0);
	SEC(".symtab", 2, append(m, syms, (size_t)(nf + 1) * 24), (uint64_t)(nf + 1) * 24,
	    (uint32_t)(nsh - 1), 24);
	SEC(".shstrtab", 3, 0, 0, 0, 0);
	sh[nsh - 1].off = append(m, shstr, nshstr);
	sh[nsh - 1].size = nshstr;
#undef SEC
	sh_off = append(m, "", 0);
	for (int i = 0; i < nsh; i++) {
		size_t o = sh_off + (size_t)i * 64;

		put(m, o, sh[i].name, 4);
		put(m, o + 4, sh[i].type, 4);
		put(m, o + 16, sh[i].off ? BASE + sh[i].off : 0, 8);
		put(m, o + 24, sh[i].off, 8);
		put(m, o + 32, sh[i].size, 8);
		put(m, o + 40, sh[i].link, 4);
		put(m, o + 56, sh[i].entsize, 8);
	}
	m->len = sh_off + (size_t)nsh * 64;
	memcpy(m->b, "\177ELF\2\1\1", 7);
	put(m, 16, 3, 2);  /* ET_DYN */
	put(m, 18, 62, 2); /* EM_X86_64 */
	put(m, 20, 1, 4);
	put(m, 32, 64, 8); /* phoff */
	put(m, 40, sh_off, 8);
	put(m, 52, 64, 2);
	put(m, 54, 56, 2);
	put(m, 56, 1, 2);
	put(m, 58, 64, 2);
	put(m, 60, (uint64_t)nsh, 2);
	put(m, 62, (uint64_t)(nsh - 1), 2); /* .shstrtab is last */
	put(m, 64, 1, 4);		    /* PT_LOAD */
	put(m, 64 + 4, 5, 4);
	put(m, 64 + 8, 0, 8);
	put(m, 64 + 16, BASE, 8);
	put(m, 64 + 24, BASE, 8);
	put(m, 64 + 32, m->len, 8);
	put(m, 64 + 40, m->len, 8);
}

static void build(struct img *m, const enum prologue *pro, int nf, int eh,
		  const char *const *needed, int nneeded, const char *runpath)
{
	build_go(m, pro, nf, eh, 0, needed, nneeded, runpath);
}

static const enum prologue all_fp[] = {PRO_FP, PRO_ENDBR_FP, PRO_FP_ALT, PRO_FP, PRO_TINY};
static const enum prologue no_fp[] = {PRO_NOFP, PRO_NOFP, PRO_NOFP, PRO_FP, PRO_TINY};

static void scan_prologues(void)
{
	struct img m;
	struct snap_fpscan s;

	build(&m, all_fp, 5, 0, NULL, 0, NULL);
	CHECK_INT_EQ(0, snap_fpscan_elf(m.b, m.len, &s));
	CHECK_INT_EQ(4, s.funcs); /* the 8-byte function is too small to judge */
	CHECK_INT_EQ(4, s.fp);
	CHECK_INT_EQ(0, s.eh_frame);
	build(&m, no_fp, 5, 1, NULL, 0, NULL);
	CHECK_INT_EQ(0, snap_fpscan_elf(m.b, m.len, &s));
	CHECK_INT_EQ(4, s.funcs);
	CHECK_INT_EQ(1, s.fp);
	CHECK_INT_EQ(1, s.eh_frame);
	/* not x86-64 */
	m.b[18] = 183;
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_fpscan_elf(m.b, m.len, &s));
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_fpscan_elf("\177ELF", 4, &s));
}

/* gcc -O2 -fno-omit-frame-pointer: leaves without a frame and a
 * shrink-wrapped function do not start with push %rbp, yet every function
 * with a frame keeps the frame pointer (the prologue count said 20 %). */
static void scan_unwind_rows(void)
{
	static const enum prologue gcc_fp[] = {PRO_SHRINK, PRO_LEAF, PRO_LEAF, PRO_LEAF, PRO_FP};
	static const enum prologue gcc_nofp[] = {PRO_NOFP, PRO_NOFP, PRO_LEAF, PRO_NOFP,
						 PRO_ENDBR_FP};
	struct snap_cgfile f = {.name = "w", .ok = 1};
	struct img m;
	char why[256];

	build(&m, gcc_fp, 5, 2, NULL, 0, NULL);
	CHECK_INT_EQ(0, snap_fpscan_elf(m.b, m.len, &f.scan));
	CHECK_INT_EQ(1, f.scan.by_cfi);
	CHECK_INT_EQ(2, f.scan.funcs);
	CHECK_INT_EQ(2, f.scan.fp);
	CHECK_INT_EQ(3, f.scan.frameless);
	CHECK_INT_EQ(SNAP_CG_FP, snap_cgpick_decide(&f, 1, 0, why, sizeof(why)));
	CHECK_STR_EQ("w keeps frame pointers (100% of 2 functions with a stack frame)", why);
	/* the same prologues judged without unwind rows: 1 of 5 */
	build(&m, gcc_fp, 5, 0, NULL, 0, NULL);
	CHECK_INT_EQ(0, snap_fpscan_elf(m.b, m.len, &f.scan));
	CHECK_INT_EQ(0, f.scan.by_cfi);
	CHECK_INT_EQ(5, f.scan.funcs);
	CHECK_INT_EQ(1, f.scan.fp);
	/* gcc -O2: frames without frame pointers (one alloca-like rbp frame) */
	build(&m, gcc_nofp, 5, 2, NULL, 0, NULL);
	CHECK_INT_EQ(0, snap_fpscan_elf(m.b, m.len, &f.scan));
	CHECK_INT_EQ(1, f.scan.by_cfi);
	CHECK_INT_EQ(4, f.scan.funcs);
	CHECK_INT_EQ(1, f.scan.fp);
	CHECK_INT_EQ(1, f.scan.frameless);
	CHECK_INT_EQ(SNAP_CG_DWARF, snap_cgpick_decide(&f, 1, 0, why, sizeof(why)));
	CHECK_STR_EQ("w has no frame pointers (25% of 4 functions with a stack frame) but has "
		     ".eh_frame unwind tables",
		     why);
	/* only frameless functions: nothing to unwind through */
	build(&m, gcc_fp + 1, 3, 2, NULL, 0, NULL);
	CHECK_INT_EQ(0, snap_fpscan_elf(m.b, m.len, &f.scan));
	CHECK_INT_EQ(0, f.scan.funcs);
	CHECK_INT_EQ(3, f.scan.frameless);
	CHECK_INT_EQ(SNAP_CG_FP, snap_cgpick_decide(&f, 1, 0, why, sizeof(why)));
}

/* rustc >= 1.79 links in its standard library precompiled with frame
 * pointers: a rustc -O program was "95 % frame pointers" by std's functions
 * while its own had none. std's (legacy and v0 names, rustc's shims) are
 * judged only when nothing else is; C++'s std:: is the program's code. */
static void rust_std_left_out(void)
{
	static const enum prologue pro[] = {PRO_FP, PRO_FP, PRO_FP, PRO_FP, PRO_NOFP, PRO_NOFP};
	static const char *const rust[] = {
		"_ZN3std2rt10lang_start17h0123456789abcdefE",
		"_RNvNtCs1234_4core3fmt5write",
		"_RNvCsfLfy6EI15iL_7___rustc11___rdl_alloc",
		"_ZN79_$LT$hashbrown..raw..RawTable$LT$T$GT$$u20$as$u20$core..Drop$GT$"
		"4drop17h0123456789abcdefE",
		"_ZN2rs6sorter17h0123456789abcdefE",
		"main",
	};
	static const char *const cxx[] = {
		"_ZN3std6vectorIiSaIiEE9push_backERKi",
		"_ZN3std4sortEv",
		"_ZN3std4swapEv",
		"_ZN3std5mergeEv",
		"_Z6sorterv",
		"main",
	};
	struct snap_cgfile f = {.name = "rs", .ok = 1};
	struct img m;
	char why[256];

	fn_names = rust;
	build(&m, pro, 6, 2, NULL, 0, NULL);
	CHECK_INT_EQ(0, snap_fpscan_elf(m.b, m.len, &f.scan));
	CHECK_INT_EQ(2, f.scan.funcs);
	CHECK_INT_EQ(0, f.scan.fp);
	CHECK_INT_EQ(SNAP_CG_DWARF, snap_cgpick_decide(&f, 1, 0, why, sizeof(why)));
	build(&m, pro, 6, 0, NULL, 0, NULL); /* by prologues: the same */
	CHECK_INT_EQ(0, snap_fpscan_elf(m.b, m.len, &f.scan));
	CHECK_INT_EQ(2, f.scan.funcs);
	CHECK_INT_EQ(0, f.scan.fp);
	build(&m, pro, 4, 2, NULL, 0, NULL); /* nothing but std: std is judged */
	CHECK_INT_EQ(0, snap_fpscan_elf(m.b, m.len, &f.scan));
	CHECK_INT_EQ(4, f.scan.funcs);
	CHECK_INT_EQ(4, f.scan.fp);
	fn_names = cxx;
	build(&m, pro, 6, 2, NULL, 0, NULL);
	CHECK_INT_EQ(0, snap_fpscan_elf(m.b, m.len, &f.scan));
	CHECK_INT_EQ(6, f.scan.funcs);
	CHECK_INT_EQ(4, f.scan.fp);
	fn_names = NULL;
}

/* Go keeps frame pointers; its prologues (sub, then push %rbp at a
 * distance) and its lack of .eh_frame say nothing, and go build has no
 * -fno-omit-frame-pointer to advise. */
static void go_programs(void)
{
	struct snap_cgfile f[2] = {{.name = "server", .ok = 1}, {.name = "libwork.so", .ok = 1}};
	struct img m;
	char why[256];

	build_go(&m, no_fp, 5, 0, 1, NULL, 0, NULL);
	CHECK_INT_EQ(0, snap_fpscan_elf(m.b, m.len, &f[0].scan));
	CHECK_INT_EQ(1, f[0].scan.go);
	f[1].scan.funcs = 10; /* a cgo library without them does not change it */
	CHECK_INT_EQ(SNAP_CG_FP, snap_cgpick_decide(f, 2, 0, why, sizeof(why)));
	CHECK_STR_EQ("server is a Go program (Go keeps frame pointers)", why);
	CHECK(!strstr(why, "omit-frame-pointer"));
	build(&m, no_fp, 5, 0, NULL, 0, NULL);
	CHECK_INT_EQ(0, snap_fpscan_elf(m.b, m.len, &f[0].scan));
	CHECK_INT_EQ(0, f[0].scan.go);
	CHECK_INT_EQ(SNAP_CG_FP, snap_cgpick_decide(f, 1, 0, why, sizeof(why)));
	CHECK(strstr(why, "-fno-omit-frame-pointer") != NULL); /* C: rebuild it */
}

static void dynamic_entries(void)
{
	static const char *const needed[] = {"libfoo.so.1", "libc.so.6"};
	struct img m;
	uint64_t cur = 0;
	const char *str;
	int tag, n = 0;

	build(&m, all_fp, 2, 0, needed, 2, "$ORIGIN/lib");
	while (snap_cgpick_dyn_next(m.b, m.len, &cur, &tag, &str) == 1) {
		if (n == 0) {
			CHECK_INT_EQ(1, tag);
			CHECK_STR_EQ("libfoo.so.1", str);
		} else if (n == 1) {
			CHECK_STR_EQ("libc.so.6", str);
		} else {
			CHECK_INT_EQ(29, tag);
			CHECK_STR_EQ("$ORIGIN/lib", str);
		}
		n++;
	}
	CHECK_INT_EQ(3, n);
	cur = 0;
	build(&m, all_fp, 2, 0, NULL, 0, NULL);
	CHECK_INT_EQ(0, snap_cgpick_dyn_next(m.b, m.len, &cur, &tag, &str));
}

/* Every truncation and many corruptions of a valid file: no crash, and
 * names handed out stay inside the buffer. */
static void damaged_files(void)
{
	static const char *const needed[] = {"libfoo.so.1"};
	struct img m, d;
	struct snap_fpscan s;
	const char *str;
	int tag;

	build(&m, no_fp, 5, 2, needed, 1, "/opt/lib");
	for (size_t len = 0; len < m.len; len++) {
		uint64_t cur = 0;

		(void)snap_fpscan_elf(m.b, len, &s);
		while (snap_cgpick_dyn_next(m.b, len, &cur, &tag, &str) == 1)
			CHECK((const unsigned char *)str >= m.b &&
			      (const unsigned char *)str + strlen(str) < m.b + len);
	}
	srand(9);
	for (int k = 0; k < 3000; k++) {
		uint64_t cur = 0;
		int guard = 0;

		d = m;
		for (int j = 0; j < 4; j++)
			d.b[(size_t)rand() % d.len] = (unsigned char)rand();
		(void)snap_fpscan_elf(d.b, d.len, &s);
		CHECK(s.fp <= s.funcs);
		while (snap_cgpick_dyn_next(d.b, d.len, &cur, &tag, &str) == 1 && guard++ < 64)
			CHECK(strlen(str) < d.len);
	}
}

static struct snap_cgfile file(const char *name, uint32_t funcs, uint32_t fp, int eh)
{
	struct snap_cgfile f = {0};

	f.name = name;
	f.ok = 1;
	f.runtime = snap_cgpick_is_runtime(name);
	f.scan.funcs = funcs;
	f.scan.fp = fp;
	f.scan.eh_frame = eh;
	return f;
}

static void b8_14_decisions(void)
{
	struct snap_cgfile f[3];
	char why[256];

	/* frame pointers in the program; libc without them is not judged */
	f[0] = file("prog", 10, 9, 1);
	f[1] = file("libc.so.6", 3000, 10, 1);
	CHECK_INT_EQ(SNAP_CG_FP, snap_cgpick_decide(f, 2, 0, why, sizeof(why)));
	CHECK_STR_EQ("prog keeps frame pointers (90% of 10 functions)", why);
	/* a library of its own without them decides */
	f[2] = file("libwork.so", 40, 0, 1);
	CHECK_INT_EQ(SNAP_CG_DWARF, snap_cgpick_decide(f, 3, 0, why, sizeof(why)));
	CHECK_STR_EQ("libwork.so has no frame pointers (0% of 40 functions) but has .eh_frame "
		     "unwind tables",
		     why);
	/* Debian's python3 */
	f[0] = file("python3", 1160, 3, 1);
	CHECK_INT_EQ(SNAP_CG_DWARF, snap_cgpick_decide(f, 2, 0, why, sizeof(why)));
	CHECK(strstr(why, "python3 has no frame pointers (0% of 1160 functions)") == why);
	/* LBR where the CPU has it */
	CHECK_INT_EQ(SNAP_CG_LBR, snap_cgpick_decide(f, 2, 1, why, sizeof(why)));
	CHECK(strstr(why, "this CPU has last branch records") != NULL);
	/* neither: fp, and says stacks will be cut */
	f[0] = file("old", 50, 0, 0);
	CHECK_INT_EQ(SNAP_CG_FP, snap_cgpick_decide(f, 1, 0, why, sizeof(why)));
	CHECK(strstr(why, "nor .eh_frame") != NULL);
	/* no symbols to judge */
	f[0] = file("stripped", 0, 0, 1);
	CHECK_INT_EQ(SNAP_CG_DWARF, snap_cgpick_decide(f, 2, 0, why, sizeof(why)));
	CHECK(strstr(why, "no function symbols") != NULL);
	f[0].scan.eh_frame = 0;
	CHECK_INT_EQ(SNAP_CG_FP, snap_cgpick_decide(f, 1, 0, why, sizeof(why)));
	f[0].ok = 0;
	CHECK_INT_EQ(SNAP_CG_FP, snap_cgpick_decide(f, 1, 0, why, sizeof(why)));
	CHECK(strstr(why, "could not be examined") != NULL);
	CHECK_INT_EQ(SNAP_CG_FP, snap_cgpick_decide(f, 0, 0, why, sizeof(why)));
	/* the executable is judged even when named like a runtime library */
	f[0] = file("libc.so.6", 100, 0, 1);
	CHECK_INT_EQ(SNAP_CG_DWARF, snap_cgpick_decide(f, 1, 0, why, sizeof(why)));
	CHECK_INT_EQ(1, snap_cgpick_is_runtime("ld-linux-x86-64.so.2"));
	CHECK_INT_EQ(1, snap_cgpick_is_runtime("libstdc++.so.6"));
	CHECK_INT_EQ(0, snap_cgpick_is_runtime("libwork.so"));
}

static int write_file(const char *path, const struct img *m)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(m->b, 1, m->len, f) == m->len;

	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

/* The whole pick: an executable with frame pointers that needs a library
 * (found through $ORIGIN in its RUNPATH) without them. */
/* The interpreter a script's first line names. */
static void shebang_lines(void)
{
	static const struct {
		const char *text, *want;
		int on_path;
	} cases[] = {
		{"#!/bin/sh\necho\n", "/bin/sh", 0},
		{"#! /usr/bin/python3 -u\n", "/usr/bin/python3", 0},
		{"#!/usr/bin/env bash\n", "bash", 1},
		{"#!/usr/bin/env\tpython3 -u\r\n", "python3", 1},
		{"#!/usr/bin/env /opt/py/bin/python3\n", "/opt/py/bin/python3", 0},
		{"#!/bin/bash", "/bin/bash", 0}, /* no newline: the file's end */
		{"#!/usr/bin/env -S python3 -u\n", NULL, 0},
		{"#!/usr/bin/env A=1 python3\n", NULL, 0},
		{"#!/usr/bin/env\n", NULL, 0},
		{"#!\n/bin/sh\n", NULL, 0},
		{"#", NULL, 0},
		{"\x7f"
		 "ELF\x02\x01",
		 NULL, 0},
	};
	char out[64];
	int on_path;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = snap_cgpick_shebang(cases[i].text, strlen(cases[i].text), out, sizeof(out),
					    &on_path);

		CHECK_INT_EQ(cases[i].want != NULL, r);
		if (r && cases[i].want) {
			CHECK_STR_EQ(cases[i].want, out);
			CHECK_INT_EQ(cases[i].on_path, on_path);
		}
	}
	/* a name that does not fit out, and a NUL inside it */
	CHECK_INT_EQ(0, snap_cgpick_shebang("#!/usr/bin/python3\n", 19, out, 8, &on_path));
	CHECK_INT_EQ(0, snap_cgpick_shebang("#!/bin/s\0h\n", 12, out, sizeof(out), &on_path));
}

static void b8_14_pick_files(void)
{
	static const char *const needed[] = {"libwork.so", "libc.so.6"};
	const char *tmp = getenv("TMPDIR");
	char dir[256], exe[320], lib[320], libdir[300], why[384];
	struct img m;

	snprintf(dir, sizeof(dir), "%s/snaptrace-cgpick.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(exe, sizeof(exe), "%s/prog", dir);
	snprintf(libdir, sizeof(libdir), "%s/lib", dir);
	snprintf(lib, sizeof(lib), "%s/libwork.so", libdir);
	CHECK_INT_EQ(0, mkdir(libdir, 0700));
	build(&m, all_fp, 5, 1, needed, 2, "$ORIGIN/lib");
	CHECK_INT_EQ(0, write_file(exe, &m));
	/* the library is missing: only the program is judged */
	CHECK_INT_EQ(SNAP_CG_FP, snap_cgpick(exe, 0, 0, why, sizeof(why)));
	CHECK_STR_EQ("prog keeps frame pointers (100% of 4 functions)", why);
	build(&m, no_fp, 5, 1, NULL, 0, NULL);
	CHECK_INT_EQ(0, write_file(lib, &m));
	CHECK_INT_EQ(SNAP_CG_DWARF, snap_cgpick(exe, 0, 0, why, sizeof(why)));
	CHECK(strstr(why, "libwork.so has no frame pointers (25% of 4 functions)") == why);
	/* a library that keeps them too */
	build(&m, all_fp, 5, 1, NULL, 0, NULL);
	CHECK_INT_EQ(0, write_file(lib, &m));
	CHECK_INT_EQ(SNAP_CG_FP, snap_cgpick(exe, 0, 0, why, sizeof(why)));
	CHECK(strstr(why, "and so do its libraries") != NULL);
	/* a script is judged by its interpreter (here the program, found by its path) */
	{
		char script[340], line[400];
		FILE *f;

		snprintf(script, sizeof(script), "%s/run.sh", dir);
		snprintf(line, sizeof(line), "#!%s -x\necho\n", exe);
		CHECK((f = fopen(script, "w")) != NULL);
		if (f) {
			fputs(line, f);
			fclose(f);
		}
		CHECK_INT_EQ(SNAP_CG_FP, snap_cgpick(script, 0, 0, why, sizeof(why)));
		CHECK(strstr(why, "run.sh is a script run by prog: prog keeps frame pointers") ==
		      why);
		build(&m, no_fp, 5, 1, NULL, 0, NULL);
		CHECK_INT_EQ(0, write_file(exe, &m));
		CHECK_INT_EQ(SNAP_CG_DWARF, snap_cgpick(script, 0, 0, why, sizeof(why)));
		CHECK(strstr(why, "run.sh is a script run by prog: prog has no frame pointers") ==
		      why);
		/* a script whose interpreter is a script (a shim) */
		snprintf(line, sizeof(line), "%s/outer", dir);
		CHECK((f = fopen(line, "w")) != NULL);
		if (f) {
			fprintf(f, "#!%s\n", script);
			fclose(f);
		}
		CHECK_INT_EQ(SNAP_CG_DWARF, snap_cgpick(line, 0, 0, why, sizeof(why)));
		CHECK(strstr(why, "outer is a script run by run.sh, which is a script run by "
				  "prog: prog has no frame pointers") == why);
		unlink(line);
		unlink(script);
	}
	/* not an ELF at all */
	CHECK_INT_EQ(SNAP_CG_FP, snap_cgpick("/proc/self/status", 0, 0, why, sizeof(why)));
	/* attach: the mappings of a running process (this test, with frame
	 * pointers or not: the pick must name a file and not fail) */
	(void)snap_cgpick(NULL, (int)getpid(), 0, why, sizeof(why));
	CHECK(why[0] != '\0');
	unlink(lib);
	rmdir(libdir);
	unlink(exe);
	rmdir(dir);
}

int main(void)
{
	RUN(scan_prologues);
	RUN(scan_unwind_rows);
	RUN(rust_std_left_out);
	RUN(go_programs);
	RUN(dynamic_entries);
	RUN(damaged_files);
	RUN(b8_14_decisions);
	RUN(shebang_lines);
	RUN(b8_14_pick_files);
	return snap_test_done();
}
