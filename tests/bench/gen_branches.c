// SPDX-License-Identifier: GPL-2.0
/*
 * Writes N synthetic Intel PT branch lines to stdout in the format of
 * `perf script --ns --itrace=bep -F pid,tid,time,flags,ip,addr,sym,symoff,dso`
 * (with -e: also `-F ...,event,period`), for parser benchmarks.
 * Usage: gen_branches [-e] N [SEED]
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NFUNCS 512

static uint64_t rng = 88172645463325252ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const char *const dsos[] = {
	"/home/user/src/project/build/bin/server",
	"/usr/lib/x86_64-linux-gnu/libc.so.6",
	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30",
};

struct func {
	char name[96];
	uint64_t start, size;
	int dso;
};

static struct func funcs[NFUNCS];

static void print_loc(uint64_t ip, const struct func *f)
{
	if (!f) {
		printf("%16" PRIx64 " [unknown] ([unknown])", ip);
		return;
	}
	printf("%16" PRIx64 " %s+0x%" PRIx64 " (%s)", ip, f->name, ip - f->start, dsos[f->dso]);
}

int main(int argc, char **argv)
{
	static const char *const kinds[] = {"call", "return", "jcc", "jmp", "jcc", "jcc"};
	uint64_t n, t = 1000000000ull;
	int with_event = 0, argi = 1, stack[64], depth = 0, cur = 0;

	if (argi < argc && strcmp(argv[argi], "-e") == 0) {
		with_event = 1;
		argi++;
	}
	if (argi >= argc) {
		fprintf(stderr, "usage: gen_branches [-e] N [SEED]\n");
		return 2;
	}
	n = strtoull(argv[argi], NULL, 10);
	if (argi + 1 < argc)
		rng = strtoull(argv[argi + 1], NULL, 10) | 1;
	for (int i = 0; i < NFUNCS; i++) {
		struct func *f = &funcs[i];

		f->dso = i % 3;
		if (i % 7 == 0)
			snprintf(f->name, sizeof(f->name),
				 "std::vector<int, std::allocator<int> >::_M_realloc_insert_%d", i);
		else if (i % 5 == 0)
			snprintf(f->name, sizeof(f->name), "ns::detail::Handler<%d>::operator()",
				 i);
		else
			snprintf(f->name, sizeof(f->name), "func_%d", i);
		f->start = (f->dso == 0	  ? 0x401000ull
			    : f->dso == 1 ? 0x7f1234500000ull
					  : 0x7f1234900000ull) +
			   (uint64_t)i * 0x400;
		f->size = 0x100 + next_rand() % 0x300;
	}
	for (uint64_t i = 0; i < n; i++) {
		const char *kind = kinds[next_rand() % 6];
		const struct func *src = &funcs[cur], *dst;
		uint64_t sip = src->start + next_rand() % src->size, dip;
		int to;

		if (i % 1000 == 999)
			kind = "tr end  syscall";
		if (!strcmp(kind, "call") && depth < 64) {
			stack[depth++] = cur;
			to = (int)(next_rand() % 40) + (cur / 40) * 40;
			to %= NFUNCS;
		} else if (!strcmp(kind, "return") && depth > 0) {
			to = stack[--depth];
		} else {
			if (!strcmp(kind, "call") || !strcmp(kind, "return"))
				kind = "jcc";
			to = cur;
		}
		dst = &funcs[to];
		dip = dst->start + (!strcmp(kind, "call") ? 0 : next_rand() % dst->size);
		t += 1 + next_rand() % 200;
		printf(" %6d/%-6d %5" PRIu64 ".%09" PRIu64 ": ", 4242, 4242 + (int)(i / 100000 % 2),
		       t / UINT64_C(1000000000), t % UINT64_C(1000000000));
		if (with_event)
			printf("         1 branches:uH: ");
		printf("  %-21s ", kind);
		print_loc(sip, src);
		printf(" => ");
		if (!strcmp(kind, "tr end  syscall")) {
			print_loc(0, NULL);
			printf("\n");
			t += 500;
			printf(" %6d/%-6d %5" PRIu64 ".%09" PRIu64 ":   %-21s ", 4242, 4242,
			       t / UINT64_C(1000000000), t % UINT64_C(1000000000), "tr strt");
			print_loc(0, NULL);
			printf(" => ");
			dip = sip + 2;
			dst = src;
			i++;
		}
		print_loc(dip, dst);
		printf("\n");
		cur = to;
	}
	return 0;
}
