// SPDX-License-Identifier: GPL-2.0
/* ptsynth shared code: instruction classification, maps and step files. */
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptsynth.h"

static const char *const kind_names[PTSYNTH_NKINDS] = {
	"OTHER", "JCC", "JMP", "JMPI", "CALL", "CALLI", "RET", "SYSCALL", "FAR",
};

const char *ptsynth_kind_name(unsigned kind)
{
	return kind < PTSYNTH_NKINDS ? kind_names[kind] : "?";
}

int ptsynth_kind_parse(const char *name)
{
	for (unsigned k = 0; k < PTSYNTH_NKINDS; k++)
		if (!strcmp(name, kind_names[k]))
			return (int)k;
	return -EINVAL;
}

static int is_prefix(const char *w, size_t n)
{
	static const char *const prefixes[] = {
		"rep",	   "repz", "repnz",  "repe",   "repne",	   "lock",
		"notrack", "bnd",  "data16", "addr32", "cs",	   "ds",
		"es",	   "ss",   "fs",     "gs",     "xacquire", "xrelease",
	};
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (strlen(prefixes[i]) == n && !strncmp(w, prefixes[i], n))
			return 1;
	return 0;
}

static int word_is(const char *w, size_t n, const char *s)
{
	return strlen(s) == n && !strncmp(w, s, n);
}

/* Classifies an instruction text with <...> and #... already removed. */
static unsigned classify(const char *text, const char **operands)
{
	const char *w = text;
	size_t n;

	for (;;) {
		while (*w == ' ')
			w++;
		n = strcspn(w, " ");
		*operands = w + n;
		if (n == 0)
			return PTSYNTH_OTHER;
		if (!is_prefix(w, n) || w[n] == '\0')
			break;
		w += n;
	}
	*operands = w + n + strspn(w + n, " ");
	int indirect = strchr(w + n, '*') != NULL;
	if (word_is(w, n, "jmp") || word_is(w, n, "jmpq"))
		return indirect ? PTSYNTH_JMPI : PTSYNTH_JMP;
	if (word_is(w, n, "call") || word_is(w, n, "callq"))
		return indirect ? PTSYNTH_CALLI : PTSYNTH_CALL;
	if (word_is(w, n, "ret") || word_is(w, n, "retq"))
		return PTSYNTH_RET;
	if (w[0] == 'j' || word_is(w, n, "loop") || word_is(w, n, "loope") ||
	    word_is(w, n, "loopne") || word_is(w, n, "loopz") || word_is(w, n, "loopnz"))
		return PTSYNTH_JCC;
	if (word_is(w, n, "syscall") || word_is(w, n, "sysenter"))
		return PTSYNTH_SYSCALL;
	static const char *const far[] = {
		"int",	    "int3",  "into",   "int1",	  "iret",     "iretq",
		"iretl",    "iretw", "sysret", "sysretq", "sysretl",  "sysexit",
		"sysexitq", "hlt",   "ud2",    "ud1",	  "ud0",      "ljmp",
		"lcall",    "lret",  "lretq",  "vmcall",  "vmlaunch", "vmresume",
	};
	for (size_t i = 0; i < sizeof far / sizeof far[0]; i++)
		if (word_is(w, n, far[i]))
			return PTSYNTH_FAR;
	return PTSYNTH_OTHER;
}

int ptsynth_objdump_line(const char *line, uint64_t *addr, uint32_t *len, unsigned *kind,
			 uint64_t *target)
{
	const char *p = line, *tab1, *tab2;
	char *end;
	char text[256];

	while (*p == ' ')
		p++;
	if (!isxdigit((unsigned char)*p))
		return 0;
	errno = 0;
	uint64_t a = strtoull(p, &end, 16);
	if (errno || end[0] != ':' || end[1] != '\t')
		return 0;
	tab1 = end + 1;
	tab2 = strchr(tab1 + 1, '\t');
	if (!tab2)
		return 0;
	/* The bytes: count two-digit hex groups. */
	uint32_t nb = 0;
	for (const char *b = tab1 + 1; b < tab2;) {
		while (b < tab2 && *b == ' ')
			b++;
		if (b >= tab2)
			break;
		if (b + 1 >= tab2 || !isxdigit((unsigned char)b[0]) ||
		    !isxdigit((unsigned char)b[1]))
			return 0;
		nb++;
		b += 2;
	}
	if (nb == 0)
		return 0;
	/* The text, without "<sym>" and "# comment". */
	size_t tl = strcspn(tab2 + 1, "<#\n");
	if (tl >= sizeof text)
		tl = sizeof text - 1;
	memcpy(text, tab2 + 1, tl);
	text[tl] = '\0';
	for (char *c = text; *c; c++)
		if (*c == '\t')
			*c = ' ';
	if (strstr(text, "(bad)"))
		return 0;
	*addr = a;
	*len = nb;
	const char *op = "";
	*kind = classify(text, &op);
	if (target) {
		/* direct branches print their target in hex after the mnemonic */
		*target = 0;
		if ((*kind == PTSYNTH_JCC || *kind == PTSYNTH_JMP || *kind == PTSYNTH_CALL) &&
		    isxdigit((unsigned char)*op))
			*target = strtoull(op, NULL, 16);
	}
	return 1;
}

int ptsynth_imap_add(struct ptsynth_imap *m, uint64_t addr, uint32_t len, unsigned kind)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 1024;
		void *v = reallocarray(m->v, cap, sizeof *m->v);
		if (!v)
			return -ENOMEM;
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n++] = (struct ptsynth_insn){addr, len, kind};
	return 0;
}

static int insn_cmp(const void *a, const void *b)
{
	const struct ptsynth_insn *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

void ptsynth_imap_sort(struct ptsynth_imap *m)
{
	size_t w = 0;

	qsort(m->v, m->n, sizeof *m->v, insn_cmp);
	for (size_t r = 0; r < m->n; r++)
		if (!w || m->v[w - 1].addr != m->v[r].addr)
			m->v[w++] = m->v[r];
	m->n = w;
}

const struct ptsynth_insn *ptsynth_imap_find(const struct ptsynth_imap *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n && m->v[lo].addr == addr ? &m->v[lo] : NULL;
}

void ptsynth_imap_fini(struct ptsynth_imap *m)
{
	free(m->v);
	memset(m, 0, sizeof *m);
}

int ptsynth_imap_load(struct ptsynth_imap *m, const char *path)
{
	char line[256], kname[32];
	uint64_t addr;
	uint32_t len;
	int err = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "%" SCNx64 " %" SCNu32 " %31s", &addr, &len, kname) != 3) {
			err = -EINVAL;
			goto out;
		}
		int k = ptsynth_kind_parse(kname);
		if (k < 0 || len == 0 || len > 15) {
			err = -EINVAL;
			goto out;
		}
		err = ptsynth_imap_add(m, addr, len, (unsigned)k);
		if (err < 0)
			goto out;
	}
	ptsynth_imap_sort(m);
out:
	fclose(f);
	return err;
}

int ptsynth_imap_save(const struct ptsynth_imap *m, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	for (size_t i = 0; i < m->n; i++)
		fprintf(f, "%" PRIx64 " %" PRIu32 " %s\n", m->v[i].addr, m->v[i].len,
			ptsynth_kind_name(m->v[i].kind));
	if (fclose(f) != 0)
		return -EIO;
	return 0;
}

static int maps_add(struct ptsynth_maps *maps, uint64_t start, uint64_t end, uint64_t pgoff,
		    const char *path)
{
	for (size_t i = 0; i < maps->n; i++)
		if (maps->v[i].start == start && !strcmp(maps->v[i].path, path))
			return 0;
	if (maps->n == maps->cap) {
		size_t cap = maps->cap ? maps->cap * 2 : 16;
		void *v = reallocarray(maps->v, cap, sizeof *maps->v);
		if (!v)
			return -ENOMEM;
		maps->v = v;
		maps->cap = cap;
	}
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	maps->v[maps->n++] = (struct ptsynth_mapping){start, end, pgoff, p};
	return 1;
}

int ptsynth_maps_add_proc_line(struct ptsynth_maps *maps, const char *line)
{
	uint64_t start, end, pgoff;
	char perms[8];
	int pathpos = 0;

	/* 00400000-00401000 r-xp 00000000 08:01 1234   /path/to/file */
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end, perms,
		   &pgoff, &pathpos) != 4 ||
	    pathpos == 0)
		return 0;
	const char *path = line + pathpos;
	if (strlen(perms) < 3 || perms[2] != 'x' || path[0] != '/')
		return 0;
	char buf[4096];
	size_t l = strcspn(path, "\n");
	if (l >= sizeof buf)
		return 0;
	memcpy(buf, path, l);
	buf[l] = '\0';
	int r = maps_add(maps, start, end, pgoff, buf);
	return r < 0 ? r : 1;
}

const struct ptsynth_mapping *ptsynth_maps_find(const struct ptsynth_maps *maps, uint64_t addr)
{
	for (size_t i = 0; i < maps->n; i++)
		if (addr >= maps->v[i].start && addr < maps->v[i].end)
			return &maps->v[i];
	return NULL;
}

void ptsynth_maps_fini(struct ptsynth_maps *maps)
{
	for (size_t i = 0; i < maps->n; i++)
		free(maps->v[i].path);
	free(maps->v);
	memset(maps, 0, sizeof *maps);
}

int ptsynth_maps_load(struct ptsynth_maps *maps, const char *path)
{
	char line[4200], file[4096];
	uint64_t start, end, pgoff;
	int err = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %" SCNx64 " %4095s", &start, &end, &pgoff,
			   file) != 4 ||
		    end <= start) {
			err = -EINVAL;
			break;
		}
		err = maps_add(maps, start, end, pgoff, file);
		if (err < 0)
			break;
		err = 0;
	}
	fclose(f);
	return err;
}

int ptsynth_maps_save(const struct ptsynth_maps *maps, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	for (size_t i = 0; i < maps->n; i++)
		fprintf(f, "%" PRIx64 " %" PRIx64 " %" PRIx64 " %s\n", maps->v[i].start,
			maps->v[i].end, maps->v[i].pgoff, maps->v[i].path);
	if (fclose(f) != 0)
		return -EIO;
	return 0;
}

/* Reads the executable PT_LOAD segments of an ELF64 file. Returns the count or -errno. */
static int elf_exec_loads(const char *path, Elf64_Phdr *out, int max)
{
	Elf64_Ehdr eh;
	int n = 0;
	FILE *f = fopen(path, "rb");

	if (!f)
		return -errno;
	if (fread(&eh, sizeof eh, 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr)) {
		n = -EINVAL;
		goto out;
	}
	for (int i = 0; i < eh.e_phnum && n < max; i++) {
		Elf64_Phdr ph;
		if (fseek(f, (long)(eh.e_phoff + (uint64_t)i * sizeof ph), SEEK_SET) ||
		    fread(&ph, sizeof ph, 1, f) != 1) {
			n = -EINVAL;
			goto out;
		}
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			out[n++] = ph;
	}
out:
	fclose(f);
	return n;
}

static int want_has(const uint64_t *want, size_t nwant, uint64_t a)
{
	size_t lo = 0, hi = nwant;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (want[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nwant && want[lo] == a;
}

/* Disassembles one file and adds the wanted instructions of every mapping of it. */
static int imap_from_file(struct ptsynth_imap *m, const struct ptsynth_maps *maps, const char *path,
			  const uint64_t *want, size_t nwant)
{
	Elf64_Phdr ph[16];
	int nph = elf_exec_loads(path, ph, 16);
	int pfd[2], err = 0, status;
	char line[1024];

	if (nph < 0)
		return nph;
	if (pipe(pfd) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return err;
	}
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execlp("objdump", "objdump", "-d", "-w", "-z", path, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	FILE *f = fdopen(pfd[0], "r");
	if (!f) {
		err = -errno;
		close(pfd[0]);
		waitpid(pid, &status, 0);
		return err;
	}
	while (fgets(line, sizeof line, f)) {
		uint64_t va;
		uint32_t len;
		unsigned kind;
		if (ptsynth_objdump_line(line, &va, &len, &kind, NULL) != 1)
			continue;
		for (int i = 0; i < nph; i++) {
			if (va < ph[i].p_vaddr || va >= ph[i].p_vaddr + ph[i].p_filesz)
				continue;
			uint64_t fo = va - ph[i].p_vaddr + ph[i].p_offset;
			for (size_t k = 0; k < maps->n; k++) {
				const struct ptsynth_mapping *mp = &maps->v[k];
				if (strcmp(mp->path, path) || fo < mp->pgoff ||
				    fo >= mp->pgoff + (mp->end - mp->start))
					continue;
				uint64_t rt = mp->start + (fo - mp->pgoff);
				if (!want_has(want, nwant, rt))
					continue;
				err = ptsynth_imap_add(m, rt, len, kind);
				if (err < 0)
					goto out;
			}
		}
	}
out:
	fclose(f);
	if (waitpid(pid, &status, 0) < 0 && !err)
		err = -errno;
	else if (!err && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
		err = WIFEXITED(status) && WEXITSTATUS(status) == 127 ? -ENOENT : -EIO;
	return err;
}

int ptsynth_imap_from_maps(struct ptsynth_imap *m, const struct ptsynth_maps *maps,
			   const uint64_t *want, size_t nwant)
{
	for (size_t i = 0; i < maps->n; i++) {
		int seen = 0;
		for (size_t j = 0; j < i; j++)
			seen |= !strcmp(maps->v[j].path, maps->v[i].path);
		if (seen)
			continue;
		int err = imap_from_file(m, maps, maps->v[i].path, want, nwant);
		if (err < 0)
			return err;
	}
	ptsynth_imap_sort(m);
	return 0;
}

int ptsynth_steps_load(const char *path, struct ptsynth_step **steps, size_t *n)
{
	int err = 0;
	FILE *f = fopen(path, "rb");
	long sz;

	*steps = NULL;
	*n = 0;
	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		err = -EIO;
		goto out;
	}
	if (sz % (long)sizeof(struct ptsynth_step)) {
		err = -EINVAL;
		goto out;
	}
	size_t cnt = (size_t)sz / sizeof(struct ptsynth_step);
	struct ptsynth_step *v = malloc(cnt ? cnt * sizeof *v : 1);
	if (!v) {
		err = -ENOMEM;
		goto out;
	}
	if (fread(v, sizeof *v, cnt, f) != cnt) {
		free(v);
		err = -EIO;
		goto out;
	}
	*steps = v;
	*n = cnt;
out:
	fclose(f);
	return err;
}
