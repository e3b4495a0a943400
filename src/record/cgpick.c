// SPDX-License-Identifier: GPL-2.0
/*
 * -callgraph-mode auto (see cgpick.h, docs/recording.md "Call graphs").
 *
 * With .eh_frame (what gcc, clang and rustc emit by default), a function's
 * unwind rows say what it does to the stack: one that keeps a frame pointer
 * has a row whose CFA is %rbp-based (after `mov %rsp,%rbp`, wherever the
 * shrink-wrapped prologue puts it); one with a stack frame but no frame
 * pointer has only %rsp-based rows with offsets above 8 (pushes, sub); a
 * leaf or a tail-caller without a frame has CFA = %rsp+8 throughout. Only
 * functions with a frame are judged: every function that makes a call has
 * one (the call needs a 16-byte aligned %rsp), and gcc -O2
 * -fno-omit-frame-pointer leaves the others frameless, so counting them (as
 * a prologue count does) calls such builds "no frame pointers".
 *
 * Without .eh_frame, a function keeps a frame pointer when its first
 * instructions are `push %rbp; mov %rsp,%rbp` (55 48 89 e5, or 55 48 8b ec),
 * possibly after endbr64 (f3 0f 1e fa).
 *
 * A file keeps frame pointers when at least half of its judged functions
 * do. Rust's standard library (std, core, alloc and the crates it is built
 * from) is linked in precompiled, with frame pointers since Rust 1.79 whatever
 * the program's own code was built with: its functions are judged only when
 * there is nothing else (rust_std_sym; a rustc -O program is otherwise 95 %
 * std, "keeps frame pointers", and its own frames are lost from fp chains). Go programs always do (the Go compiler keeps them on amd64; go build
 * has no flag to drop them).
 */
#include "record/cgpick.h"

#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/caps.h"
#include "record/elfsym.h"
#include "record/perfrun.h"
#include "record/trigger.h"
#include "util/alloc.h"
#include "util/bytes.h"
#include "util/err.h"
#include "util/esc.h"
#include "util/file.h"

#define MAX_FUNCS     20000 /* enough to judge a file; bounds the scan */
#define MIN_FUNC_SIZE 16
#define MAX_FILES     64
#define MAX_ROWS      64 /* unwind rows read per function */

/* DWARF register numbers of x86-64 */
#define DWREG_RBP 6
#define DWREG_RSP 7

static int has_fp_prologue(const uint8_t *p, uint64_t avail)
{
	if (avail >= 4 && p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) {
		p += 4;
		avail -= 4;
	}
	return avail >= 4 && p[0] == 0x55 && p[1] == 0x48 &&
	       ((p[2] == 0x89 && p[3] == 0xe5) || (p[2] == 0x8b && p[3] == 0xec));
}

/* Crates of Rust's standard library (rust_std_sym). */
static const char *const rust_std_crates[] = {
	"std",
	"core",
	"alloc",
	"hashbrown",
	"gimli",
	"addr2line",
	"object",
	"miniz_oxide",
	"adler",
	"adler2",
	"memchr",
	"rustc_demangle",
	"std_detect",
	"panic_unwind",
	"panic_abort",
	"unwind",
	"compiler_builtins",
	"cfg_if",
	"libc",
	"__rustc", /* the allocator and panic shims rustc links in */
};

static int rust_std_crate(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(rust_std_crates) / sizeof(rust_std_crates[0]); i++)
		if (strlen(rust_std_crates[i]) == n && !memcmp(rust_std_crates[i], s, n))
			return 1;
	return 0;
}

/* Reads a decimal length at *p (moved past it); 0 when there is none. */
static size_t read_len(const char **p)
{
	size_t n = 0;

	if (**p < '1' || **p > '9')
		return 0;
	while (**p >= '0' && **p <= '9' && n < 4096)
		n = n * 10 + (size_t)(*(*p)++ - '0');
	return n;
}

/* 1 if name is a Rust symbol of a crate of the standard library. Legacy
 * mangling ("_ZN" ... "17h" + 16 hex digits + "E", as C++ names never end):
 * the path's first component, or the type's of an impl ("_$LT$core..").
 * v0 ("_R"): the last crate root it names ("C" [s<base62>_] <len>[_]<ident>),
 * which is the instantiating crate of a generic, else the path's own. */
static int rust_std_sym(const char *name)
{
	const char *p, *h, *last = NULL;
	size_t n, lastn = 0;

	if (!strncmp(name, "_ZN", 3)) {
		for (h = strstr(name, "17h"); h; h = strstr(h + 1, "17h")) {
			size_t k = 0;

			while (k < 16 && isxdigit((unsigned char)h[3 + k]))
				k++;
			if (k == 16 && h[19] == 'E')
				break;
		}
		p = name + 3;
		if (!h || !(n = read_len(&p)) || strnlen(p, n) < n)
			return 0;
		if (n > 5 && !strncmp(p, "_$LT$", 5)) { /* <Type as Trait>: the type's crate */
			const char *q = p + 5, *end = p + n, *d = q;

			while (d < end && *d != '.' && *d != '$')
				d++;
			return rust_std_crate(q, (size_t)(d - q));
		}
		return rust_std_crate(p, n);
	}
	if (!strcmp(name, "rust_eh_personality")) /* (panic_unwind's, unmangled) */
		return 1;
	if (strncmp(name, "_R", 2))
		return 0;
	for (p = name + 2; *p; p++) {
		const char *q = p + 1;

		if (*p != 'C')
			continue;
		if (*q == 's') { /* a disambiguator: s<base62>_ */
			while (*++q && isalnum((unsigned char)*q))
				;
			if (*q != '_')
				continue;
			q++;
		}
		/* the length, and a "_" before an identifier that starts with one */
		if ((n = read_len(&q)) && *q == '_')
			q++;
		if (n && strnlen(q, n) == n) {
			last = q;
			lastn = n;
			p = q + n - 1;
		}
	}
	return last && rust_std_crate(last, lastn);
}

/* What the unwind rows of [lo, hi) say: 2 the CFA is %rbp-based in one (a
 * frame pointer), 1 a stack frame without one, 0 no frame, -1 no rows. */
static int cfi_frame(Dwarf_CFI *cfi, uint64_t lo, uint64_t hi)
{
	uint64_t a = lo;
	int framed = 0;

	for (int rows = 0; a < hi && rows < MAX_ROWS; rows++) {
		Dwarf_Frame *fr = NULL;
		Dwarf_Addr start, end;
		Dwarf_Op *ops;
		size_t nops;
		uint64_t reg = UINT64_MAX;
		int64_t off = 0;

		if (dwarf_cfi_addrframe(cfi, a, &fr) != 0)
			return rows ? framed : -1;
		if (dwarf_frame_info(fr, &start, &end, NULL) < 0)
			end = a;
		if (dwarf_frame_cfa(fr, &ops, &nops) == 0 && nops == 1) {
			if (ops[0].atom == DW_OP_bregx) {
				reg = ops[0].number;
				off = (int64_t)ops[0].number2;
			} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
				reg = ops[0].atom - DW_OP_breg0;
				off = (int64_t)ops[0].number;
			}
		}
		free(fr);
		if (reg == DWREG_RBP)
			return 2;
		if (reg == DWREG_RSP && off > 8)
			framed = 1;
		if (end <= a)
			break;
		a = end;
	}
	return framed;
}

/* Rust's standard library's functions, judged apart (rust_std_sym). */
struct std_tally {
	uint32_t funcs, fp;
};

/* Counts a judged function (fp: it keeps a frame pointer) in out, or in std
 * when it is the standard library's. */
static void judge(struct snap_fpscan *out, struct std_tally *std, const char *name, int fp)
{
	if (rust_std_sym(name)) {
		std->funcs++;
		std->fp += fp != 0;
	} else {
		out->funcs++;
		out->fp += fp != 0;
	}
}

/* The standard library's functions are the file's when it has nothing else. */
static void judge_end(struct snap_fpscan *out, const struct std_tally *std)
{
	if (!out->funcs) {
		out->funcs = std->funcs;
		out->fp = std->fp;
	}
}

/* Judges the functions by their unwind rows. Returns 0 when none has rows. */
static int scan_cfi(struct snap_elf *e, const void *buf, size_t len, struct snap_fpscan *out)
{
	struct snap_elfsym sym;
	uint64_t cur = 0;
	Dwarf_CFI *cfi;
	Elf *elf;
	int any = 0;
	struct std_tally std = {0, 0};

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	/* (libelf only reads a native-order image in place) */
	elf = elf_memory((char *)(uintptr_t)buf, len);
	cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	while (cfi && out->funcs + out->frameless + std.funcs < MAX_FUNCS &&
	       snap_elfsym_next(e, &cur, &sym) == 1) {
		int r;

		if (e->symtab >= 0 && (cur >> 63))
			break;
		if (sym.type != STT_FUNC || sym.size < MIN_FUNC_SIZE || !sym.value ||
		    sym.value > UINT64_MAX - sym.size)
			continue;
		r = cfi_frame(cfi, sym.value, sym.value + sym.size);
		if (r < 0)
			continue;
		any = 1;
		if (r == 0) {
			out->frameless++;
			continue;
		}
		judge(out, &std, sym.name, r == 2);
	}
	judge_end(out, &std);
	if (cfi)
		dwarf_cfi_end(cfi);
	if (elf)
		elf_end(elf);
	return any;
}

int snap_fpscan_elf(const void *buf, size_t len, struct snap_fpscan *out)
{
	struct snap_elf e;
	struct snap_elfsym sym;
	uint64_t cur = 0;
	struct std_tally std = {0, 0};

	memset(out, 0, sizeof(*out));
	if (snap_elf_open(&e, buf, len, 0) < 0 ||
	    snap_get16(e.buf + SNAP_EHDR(e_machine)) != EM_X86_64)
		return -SNAP_EFORMAT;
	for (unsigned i = 0; i < e.shnum; i++) {
		const uint8_t *s = snap_elf_shdr(&e, i);
		const char *name = snap_elf_sec_name(&e, i);

		if (!strcmp(name, ".eh_frame") &&
		    snap_get32(s + SNAP_SHDR(sh_type)) != SHT_NOBITS &&
		    snap_get64(s + SNAP_SHDR(sh_size)) > 4)
			out->eh_frame = 1;
		if (!strcmp(name, ".go.buildinfo") || !strcmp(name, ".note.go.buildid"))
			out->go = 1;
	}
	if (out->eh_frame && scan_cfi(&e, buf, len, out)) {
		out->by_cfi = 1;
		return 0;
	}
	out->funcs = out->fp = out->frameless = 0;
	while (out->funcs + std.funcs < MAX_FUNCS && snap_elfsym_next(&e, &cur, &sym) == 1) {
		uint64_t off;

		/* .symtab when there is one (.dynsym repeats part of it) */
		if (e.symtab >= 0 && (cur >> 63))
			break;
		if ((sym.type != STT_FUNC) || sym.size < MIN_FUNC_SIZE || !sym.value ||
		    snap_loadseg_vaddr2off(e.load, e.nload, sym.value, &off) < 0 || off >= len)
			continue;
		judge(out, &std, sym.name, has_fp_prologue(e.buf + off, len - off));
	}
	judge_end(out, &std);
	return 0;
}

int snap_cgpick_dyn_next(const void *buf, size_t len, uint64_t *cursor, int *tag, const char **str)
{
	struct snap_elf e;
	const uint8_t *dyn = NULL;
	const char *strs = NULL;
	uint64_t size, ssize;
	int di;

	if (snap_elf_open(&e, buf, len, 0) < 0)
		return 0;
	di = snap_elf_sec_by_type(&e, SHT_DYNAMIC);
	if (di >= 0 && (dyn = snap_elf_sec_bytes(&e, (unsigned)di, &size)) != NULL)
		strs = (const char *)snap_elf_sec_bytes(
			&e, snap_get32(snap_elf_shdr(&e, (unsigned)di) + SNAP_SHDR(sh_link)),
			&ssize);
	if (!strs)
		return 0;
	for (; *cursor < size / sizeof(Elf64_Dyn); (*cursor)++) {
		const uint8_t *d = dyn + *cursor * sizeof(Elf64_Dyn);
		uint64_t t = snap_get64(d + SNAP_DYN(d_tag)), v = snap_get64(d + SNAP_DYN(d_un));

		if (t == 0)
			break;
		if ((t != DT_NEEDED && t != DT_RPATH && t != DT_RUNPATH) ||
		    !(*str = snap_elf_str(strs, ssize, v)))
			continue;
		(*cursor)++;
		*tag = (int)t;
		return 1;
	}
	return 0;
}

int snap_cgpick_is_runtime(const char *base)
{
	static const char *const rt[] = {
		"libc.so",    "libm.so",     "ld-linux",     "libpthread.so", "libdl.so",
		"librt.so",   "libgcc_s.so", "libstdc++.so", "libresolv.so",  "libutil.so",
		"libmvec.so", "libcrypt.so", "libz.so",	     "libexpat.so",   "libffi.so",
		"libasan.so", "libubsan.so",
	};

	for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]); i++)
		if (!strncmp(base, rt[i], strlen(rt[i])))
			return 1;
	return 0;
}

static int keeps_fp(const struct snap_fpscan *s)
{
	return s->funcs && s->fp * 2 >= s->funcs;
}

static unsigned pct(uint32_t a, uint32_t b)
{
	return b ? (unsigned)((uint64_t)a * 100 / b) : 0;
}

/* "(83% of 40 functions with a stack frame)" */
static const char *share(const struct snap_fpscan *s, char *buf, size_t len)
{
	snprintf(buf, len, "(%u%% of %u function%s%s)", pct(s->fp, s->funcs), s->funcs,
		 s->funcs == 1 ? "" : "s", s->by_cfi ? " with a stack frame" : "");
	return buf;
}

enum snap_cg snap_cgpick_decide(const struct snap_cgfile *files, size_t n, int lbr, char *why,
				size_t len)
{
	const struct snap_cgfile *bad = NULL, *first = NULL;
	size_t judged = 0, libs = 0;
	char sh[96];

	/* Go keeps frame pointers (and has no flag to drop them): its own
	 * unwind data is not .eh_frame, so nothing else is asked of it. */
	if (n && files[0].ok && files[0].scan.go) {
		snprintf(why, len, "%s is a Go program (Go keeps frame pointers)", files[0].name);
		return SNAP_CG_FP;
	}
	for (size_t i = 0; i < n; i++) {
		const struct snap_cgfile *f = &files[i];

		if (!f->ok || (i && f->runtime) || !f->scan.funcs)
			continue;
		judged++;
		if (i)
			libs++;
		if (!first)
			first = f;
		if (!keeps_fp(&f->scan) && !bad)
			bad = f;
	}
	if (!judged) {
		const struct snap_cgfile *x = n && files[0].ok ? &files[0] : NULL;

		if (x && x->scan.by_cfi && x->scan.frameless) {
			snprintf(why, len,
				 "%s keeps frame pointers (none of its %u functions has a stack "
				 "frame)",
				 x->name, x->scan.frameless);
			return SNAP_CG_FP;
		}
		if (lbr) {
			snprintf(why, len,
				 "no function symbols to check for frame pointers, and this "
				 "CPU has last branch records");
			return SNAP_CG_LBR;
		}
		if (x && x->scan.eh_frame) {
			snprintf(why, len,
				 "%s has no function symbols to check for frame pointers, "
				 "and has .eh_frame unwind tables",
				 x->name);
			return SNAP_CG_DWARF;
		}
		snprintf(why, len, "%s could not be examined; stacks may be cut",
			 n ? files[0].name : "the program");
		return SNAP_CG_FP;
	}
	if (!bad) {
		snprintf(why, len, "%s keeps frame pointers %s%s", first->name,
			 share(&first->scan, sh, sizeof(sh)),
			 libs > (first != &files[0] ? 1u : 0u) ? ", and so do its libraries" : "");
		return SNAP_CG_FP;
	}
	if (lbr) {
		snprintf(why, len,
			 "%s has no frame pointers %s, and this CPU has last branch records",
			 bad->name, share(&bad->scan, sh, sizeof(sh)));
		return SNAP_CG_LBR;
	}
	if (bad->scan.eh_frame) {
		snprintf(why, len, "%s has no frame pointers %s but has .eh_frame unwind tables",
			 bad->name, share(&bad->scan, sh, sizeof(sh)));
		return SNAP_CG_DWARF;
	}
	snprintf(why, len,
		 "%s has neither frame pointers %s nor .eh_frame; stacks through it will be cut "
		 "(rebuild it with -fno-omit-frame-pointer)",
		 bad->name, share(&bad->scan, sh, sizeof(sh)));
	return SNAP_CG_FP;
}

/* ---- the I/O side ---- */

struct pick {
	struct snap_cgfile f[MAX_FILES];
	char paths[MAX_FILES][PATH_MAX];
	size_t n;
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Adds and scans path (once). */
static void add_file(struct pick *pk, const char *path)
{
	const void *buf;
	size_t len;
	struct snap_cgfile *f;

	for (size_t i = 0; i < pk->n; i++)
		if (!strcmp(pk->paths[i], path))
			return;
	if (pk->n >= MAX_FILES || strlen(path) >= PATH_MAX)
		return;
	snprintf(pk->paths[pk->n], PATH_MAX, "%s", path);
	f = &pk->f[pk->n];
	memset(f, 0, sizeof(*f));
	f->name = base_name(pk->paths[pk->n]);
	f->runtime = snap_cgpick_is_runtime(f->name);
	pk->n++;
	/* the executable is always judged, whatever its name */
	if ((f->runtime && pk->n > 1) || snap_file_map(path, &buf, &len) < 0)
		return;
	f->ok = snap_fpscan_elf(buf, len, &f->scan) == 0;
	snap_file_unmap(buf, len);
}

/* Tries dir/name; returns 1 when it exists. */
static int try_dir(struct pick *pk, const char *dir, size_t dlen, const char *name,
		   const char *origin)
{
	char p[PATH_MAX];
	int n;

	if (dlen >= 7 && !strncmp(dir, "$ORIGIN", 7))
		n = snprintf(p, sizeof(p), "%s%.*s/%s", origin, (int)(dlen - 7), dir + 7, name);
	else
		n = snprintf(p, sizeof(p), "%.*s/%s", (int)dlen, dir, name);
	if (n < 0 || (size_t)n >= sizeof(p) || access(p, R_OK) < 0)
		return 0;
	add_file(pk, p);
	return 1;
}

static int try_list(struct pick *pk, const char *list, const char *name, const char *origin)
{
	while (list && *list) {
		size_t l = strcspn(list, ":");

		if (l && try_dir(pk, list, l, name, origin))
			return 1;
		list += l;
		if (*list == ':')
			list++;
	}
	return 0;
}

static void add_needed(struct pick *pk, const char *exe)
{
	static const char sys[] = "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:"
				  "/usr/lib64:/lib:/usr/lib:/usr/local/lib";
	const char *names[MAX_FILES], *runpath = NULL, *str;
	char origin[PATH_MAX];
	const void *buf;
	size_t len, nn = 0;
	uint64_t cur = 0;
	int tag;

	if (snap_file_map(exe, &buf, &len) < 0)
		return;
	snprintf(origin, sizeof(origin), "%s", exe);
	if (strrchr(origin, '/'))
		*strrchr(origin, '/') = '\0';
	else
		snprintf(origin, sizeof(origin), ".");
	while (nn < MAX_FILES && snap_cgpick_dyn_next(buf, len, &cur, &tag, &str) == 1) {
		if (tag == 1)
			names[nn++] = str;
		else
			runpath = str;
	}
	for (size_t i = 0; i < nn; i++) {
		if (strchr(names[i], '/')) {
			add_file(pk, names[i]);
			continue;
		}
		if (snap_cgpick_is_runtime(names[i]))
			continue; /* not judged: no need to find it */
		if (!try_list(pk, runpath, names[i], origin) &&
		    !try_list(pk, getenv("LD_LIBRARY_PATH"), names[i], origin))
			try_list(pk, sys, names[i], origin);
	}
	snap_file_unmap(buf, len);
}

static void add_mapped(struct pick *pk, int pid)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char perms[8];
		char *file = strchr(line, '/');

		if (sscanf(line, "%*s %7s", perms) != 1 || perms[2] != 'x' || !file)
			continue;
		file[strcspn(file, "\n")] = '\0';
		if (strstr(file, " (deleted)"))
			continue;
		add_file(pk, file);
	}
	fclose(f);
}

int snap_cgpick_shebang(const void *buf, size_t len, char *out, size_t size, int *on_path)
{
	const char *p = buf, *end, *w;
	size_t n;

	*on_path = 0;
	if (len < 3 || p[0] != '#' || p[1] != '!')
		return 0;
	end = memchr(p, '\n', len);
	if (!end)
		end = p + len;
	p += 2;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	for (w = p; p < end && *p != ' ' && *p != '\t' && *p != '\r'; p++)
		;
	n = (size_t)(p - w);
	if (!n)
		return 0;
	if (n >= 4 && !memcmp(w + n - 4, "/env", 4)) { /* #!/usr/bin/env NAME */
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		for (w = p; p < end && *p != ' ' && *p != '\t' && *p != '\r'; p++)
			;
		n = (size_t)(p - w);
		if (!n || *w == '-' || memchr(w, '=', n)) /* env's options or settings */
			return 0;
		*on_path = memchr(w, '/', n) == NULL;
	}
	if (n >= size || memchr(w, '\0', n))
		return 0;
	memcpy(out, w, n);
	out[n] = '\0';
	return 1;
}

/* The interpreter's path when exe is a script (snap_cgpick_shebang), into out. */
static int script_interp(const char *exe, char *out, size_t size)
{
	char name[PATH_MAX];
	const void *buf;
	size_t len;
	int on_path, r;

	if (snap_file_map(exe, &buf, &len) < 0)
		return 0;
	r = snap_cgpick_shebang(buf, len < 256 ? len : 256, name, sizeof(name), &on_path);
	snap_file_unmap(buf, len);
	if (!r)
		return 0;
	if (on_path)
		return snap_caps_find_in_path(name, out, size) == 0;
	return (size_t)snprintf(out, size, "%s", name) < size;
}

/* What runs when exe is run: a script runs its interpreter, which may be a
 * script too (the kernel follows 4 levels: BINPRM_MAX_RECURSION). Returns exe
 * or the interpreter's path (in interp); chain says "NAME is a script run
 * by ..." when it is not exe. */
static const char *follow_scripts(const char *exe, char interp[2][PATH_MAX], char *chain,
				  size_t size)
{
	for (int lvl = 0; lvl < 4; lvl++) {
		char *next = interp[lvl & 1];
		size_t used = strlen(chain);

		if (!script_interp(exe, next, PATH_MAX))
			break;
		snprintf(chain + used, size - used, "%s%s is a script run by %s", used ? ", " : "",
			 lvl ? "which" : base_name(exe), base_name(next));
		exe = next;
	}
	return exe;
}

enum snap_cg snap_cgpick(const char *exe, int pid, int lbr, char *why, size_t len)
{
	struct pick *pk = snap_calloc(1, sizeof(*pk));
	char interp[2][PATH_MAX], chain[512] = "", sub[512];
	enum snap_cg cg;

	if (!pk) {
		snprintf(why, len, "out of memory while examining the program");
		return SNAP_CG_FP;
	}
	if (exe && pid <= 0)
		exe = follow_scripts(exe, interp, chain, sizeof(chain));
	if (exe)
		add_file(pk, exe);
	if (pid > 0)
		add_mapped(pk, pid);
	else if (exe)
		add_needed(pk, exe);
	cg = snap_cgpick_decide(pk->f, pk->n, lbr, why, len);
	if (chain[0] && len) {
		snprintf(sub, sizeof(sub), "%s", why);
		snprintf(why, len, "%s: %s", chain, sub);
	}
	/* the files' names are the program's (attach: another user's), and why is
	 * printed: escaped for the terminal (docs/guarantees.md) */
	if (len) {
		snprintf(sub, sizeof(sub), "%s", why);
		snap_esc_str(why, len, sub, strlen(sub), 0);
	}
	snap_free(pk);
	return cg;
}
