// SPDX-License-Identifier: GPL-2.0
/* Unit tests for the ptsynth tools' shared code: objdump classification, maps, insn files. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "ptsynth.h"
#include "snap_test.h"

struct line_case {
	const char *line;
	int ret;
	uint64_t addr;
	uint32_t len;
	unsigned kind;
	uint64_t target;
};

/* Lines captured from objdump -d -w (binutils 2.40) on the test programs and libc. */
static const struct line_case line_cases[] = {
	{"  40127b:\t48 31 ed             \txor    %rbp,%rbp", 1, 0x40127b, 3, PTSYNTH_OTHER, 0},
	{"  401282:\te8 7b ff ff ff       \tcall   401202 <cmain>", 1, 0x401282, 5, PTSYNTH_CALL,
	 0x401202},
	/* a direct PLT call: the '*' in the symbol must not make it indirect */
	{"   279db:\te8 30 e7 ff ff       \tcall   26110 <*ABS*+0x9f1c0@plt>", 1, 0x279db, 5,
	 PTSYNTH_CALL, 0x26110},
	{"    1010:\tff d0                \tcall   *%rax", 1, 0x1010, 2, PTSYNTH_CALLI, 0},
	{"    1030:\tff 25 ca 2f 00 00    \tjmp    *0x2fca(%rip)        # 4000 <free@GLIBC_2.2.5>",
	 1, 0x1030, 6, PTSYNTH_JMPI, 0},
	{"    103b:\te9 e0 ff ff ff       \tjmp    1020 <_init+0x20>", 1, 0x103b, 5, PTSYNTH_JMP,
	 0x1020},
	{"    100e:\t74 02                \tje     1012 <_init+0x12>", 1, 0x100e, 2, PTSYNTH_JCC,
	 0x1012},
	{"    1016:\tc3                   \tret", 1, 0x1016, 1, PTSYNTH_RET, 0},
	{"    1016:\tf3 c3                \trepz ret", 1, 0x1016, 2, PTSYNTH_RET, 0},
	{"    1016:\tc2 08 00             \tret    $0x8", 1, 0x1016, 3, PTSYNTH_RET, 0},
	{"   26428:\t0f 05                \tsyscall", 1, 0x26428, 2, PTSYNTH_SYSCALL, 0},
	{"   264ca:\tf3 ab                \trep stos %eax,%es:(%rdi)", 1, 0x264ca, 2, PTSYNTH_OTHER,
	 0},
	/* "lock" is a prefix; the '#' comment holds a '@' and a symbol */
	{"   263d9:\tf0 0f b1 15 8f ea 1a 00 \tlock cmpxchg %edx,0x1aea8f(%rip)        # 1d4e70 "
	 "<__abort_msg@@GLIBC_PRIVATE+0x10>",
	 1, 0x263d9, 8, PTSYNTH_OTHER, 0},
	{"   2a0e5:\t3e ff e0             \tnotrack jmp *%rax", 1, 0x2a0e5, 3, PTSYNTH_JMPI, 0},
	{"   2a0e5:\tf2 e9 10 00 00 00    \tbnd jmp 2a0fa <x>", 1, 0x2a0e5, 6, PTSYNTH_JMP,
	 0x2a0fa},
	{"   2a0e5:\tf2 c3                \tbnd ret", 1, 0x2a0e5, 2, PTSYNTH_RET, 0},
	{"  401286:\tf4                   \thlt", 1, 0x401286, 1, PTSYNTH_FAR, 0},
	{"ffffffff81000010:\t48 0f 07             \tsysretq", 1, 0xffffffff81000010ULL, 3,
	 PTSYNTH_FAR, 0},
	{"ffffffff81000020:\t48 cf                \tiretq", 1, 0xffffffff81000020ULL, 2,
	 PTSYNTH_FAR, 0},
	{"  401000:\te2 fe                \tloop   401000 <x>", 1, 0x401000, 2, PTSYNTH_JCC,
	 0x401000},
	{"  401000:\te3 fe                \tjrcxz  401000 <x>", 1, 0x401000, 2, PTSYNTH_JCC,
	 0x401000},
	/* not instructions */
	{"000000000040127b <_start>:", 0, 0, 0, 0, 0},
	{"Disassembly of section .text:", 0, 0, 0, 0, 0},
	{"", 0, 0, 0, 0, 0},
	{"  40127b:\t(bad)", 0, 0, 0, 0, 0},
	{"  4012a0:\tff                   \t(bad)", 0, 0, 0, 0, 0},
	{"/path/x:     file format elf64-x86-64", 0, 0, 0, 0, 0},
};

static void test_objdump_lines(void)
{
	for (size_t i = 0; i < sizeof line_cases / sizeof line_cases[0]; i++) {
		const struct line_case *c = &line_cases[i];
		uint64_t addr = ~0ULL, target = ~0ULL;
		uint32_t len = ~0U;
		unsigned kind = ~0U;
		int r = ptsynth_objdump_line(c->line, &addr, &len, &kind, &target);
		CHECK_INT_EQ(c->ret, r);
		if (r != 1 || c->ret != 1) {
			if (r != c->ret)
				fprintf(stderr, "  line: %s\n", c->line);
			continue;
		}
		CHECK_U64_EQ(c->addr, addr);
		CHECK_INT_EQ(c->len, len);
		CHECK_STR_EQ(ptsynth_kind_name(c->kind), ptsynth_kind_name(kind));
		CHECK_U64_EQ(c->target, target);
		if (snap_test_cur_failed)
			fprintf(stderr, "  line: %s\n", c->line);
	}
	/* a NULL target is allowed */
	uint64_t a;
	uint32_t l;
	unsigned k;
	CHECK_INT_EQ(1, ptsynth_objdump_line(line_cases[1].line, &a, &l, &k, NULL));
}

static void test_kind_names(void)
{
	for (unsigned k = 0; k < PTSYNTH_NKINDS; k++)
		CHECK_INT_EQ(k, ptsynth_kind_parse(ptsynth_kind_name(k)));
	CHECK_INT_EQ(-EINVAL, ptsynth_kind_parse("BRANCH"));
	CHECK_STR_EQ("?", ptsynth_kind_name(PTSYNTH_NKINDS));
}

static void test_imap(void)
{
	struct ptsynth_imap m = {0};
	char path[] = "/tmp/ptsynth_test_XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	CHECK_INT_EQ(0, ptsynth_imap_add(&m, 0x2000, 1, PTSYNTH_RET));
	CHECK_INT_EQ(0, ptsynth_imap_add(&m, 0x1000, 5, PTSYNTH_CALL));
	CHECK_INT_EQ(0, ptsynth_imap_add(&m, 0x2000, 1, PTSYNTH_RET)); /* duplicate */
	CHECK_INT_EQ(0, ptsynth_imap_add(&m, 0xffffffff81000000ULL, 2, PTSYNTH_FAR));
	ptsynth_imap_sort(&m);
	CHECK_INT_EQ(3, m.n);
	CHECK(ptsynth_imap_find(&m, 0x1000) && ptsynth_imap_find(&m, 0x1000)->len == 5);
	CHECK(ptsynth_imap_find(&m, 0x1001) == NULL);
	CHECK(ptsynth_imap_find(&m, 0x0) == NULL);
	CHECK(ptsynth_imap_find(&m, 0xffffffff81000000ULL) != NULL);
	CHECK_INT_EQ(0, ptsynth_imap_save(&m, path));
	ptsynth_imap_fini(&m);
	CHECK_INT_EQ(0, m.n);
	CHECK_INT_EQ(0, ptsynth_imap_load(&m, path));
	CHECK_INT_EQ(3, m.n);
	CHECK(ptsynth_imap_find(&m, 0x2000) && ptsynth_imap_find(&m, 0x2000)->kind == PTSYNTH_RET);
	ptsynth_imap_fini(&m);

	FILE *f = fopen(path, "w");
	fputs("1000 5 CALL\n1005 1 BOGUS\n", f);
	fclose(f);
	CHECK_INT_EQ(-EINVAL, ptsynth_imap_load(&m, path));
	ptsynth_imap_fini(&m);
	f = fopen(path, "w");
	fputs("1000 0 CALL\n", f); /* zero length */
	fclose(f);
	CHECK_INT_EQ(-EINVAL, ptsynth_imap_load(&m, path));
	ptsynth_imap_fini(&m);
	unlink(path);
	CHECK_INT_EQ(-ENOENT, ptsynth_imap_load(&m, path));
}

static void test_maps(void)
{
	struct ptsynth_maps maps = {0};
	char path[] = "/tmp/ptsynth_test_XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	CHECK_INT_EQ(1, ptsynth_maps_add_proc_line(
				&maps, "7ffff7fcb000-7ffff7ff1000 r-xp 00001000 08:01 4194 "
				       "  /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n"));
	/* not executable, anonymous, special or already known: ignored */
	CHECK_INT_EQ(0, ptsynth_maps_add_proc_line(
				&maps,
				"7ffff7fc9000-7ffff7fcb000 r--p 00000000 08:01 4194 /lib/x.so\n"));
	CHECK_INT_EQ(0,
		     ptsynth_maps_add_proc_line(
			     &maps, "7ffff7fc5000-7ffff7fc7000 r-xp 00000000 00:00 0    [vdso]\n"));
	CHECK_INT_EQ(0,
		     ptsynth_maps_add_proc_line(&maps, "7ffff7fc5000-7ffff7fc7000 r-xp 0 0 0\n"));
	CHECK_INT_EQ(0, ptsynth_maps_add_proc_line(&maps, "garbage\n"));
	CHECK_INT_EQ(1, ptsynth_maps_add_proc_line(
				&maps, "7ffff7fcb000-7ffff7ff1000 r-xp 00001000 08:01 4194 "
				       "  /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n"));
	CHECK_INT_EQ(1, maps.n);
	CHECK_U64_EQ(0x7ffff7fcb000ULL, maps.v[0].start);
	CHECK_U64_EQ(0x7ffff7ff1000ULL, maps.v[0].end);
	CHECK_U64_EQ(0x1000, maps.v[0].pgoff);
	CHECK_STR_EQ("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", maps.v[0].path);
	CHECK(ptsynth_maps_find(&maps, 0x7ffff7fcb000ULL) == &maps.v[0]);
	CHECK(ptsynth_maps_find(&maps, 0x7ffff7ff1000ULL) == NULL);
	CHECK_INT_EQ(0, ptsynth_maps_save(&maps, path));
	ptsynth_maps_fini(&maps);
	CHECK_INT_EQ(0, ptsynth_maps_load(&maps, path));
	CHECK_INT_EQ(1, maps.n);
	CHECK_STR_EQ("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", maps.v[0].path);
	ptsynth_maps_fini(&maps);
	FILE *f = fopen(path, "w");
	fputs("2000 1000 0 /x\n", f); /* end before start */
	fclose(f);
	CHECK_INT_EQ(-EINVAL, ptsynth_maps_load(&maps, path));
	ptsynth_maps_fini(&maps);
	unlink(path);
}

static void test_steps(void)
{
	char path[] = "/tmp/ptsynth_test_XXXXXX";
	int fd = mkstemp(path);
	struct ptsynth_step st[2] = {{0x401000, 7, 0}, {0x401003, 8, 0}}, *got = NULL;
	size_t n = 99;

	CHECK(fd >= 0);
	CHECK(write(fd, st, sizeof st) == (ssize_t)sizeof st);
	CHECK_INT_EQ(0, ptsynth_steps_load(path, &got, &n));
	CHECK_INT_EQ(2, n);
	CHECK(got && got[1].ip == 0x401003 && got[1].tid == 8);
	free(got);
	CHECK(write(fd, "x", 1) == 1); /* a partial record */
	CHECK_INT_EQ(-EINVAL, ptsynth_steps_load(path, &got, &n));
	CHECK(got == NULL && n == 0);
	close(fd);
	unlink(path);
	CHECK_INT_EQ(-ENOENT, ptsynth_steps_load(path, &got, &n));
}

int main(void)
{
	RUN(test_objdump_lines);
	RUN(test_kind_names);
	RUN(test_imap);
	RUN(test_maps);
	RUN(test_steps);
	return snap_test_done();
}
