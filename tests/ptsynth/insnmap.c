// SPDX-License-Identifier: GPL-2.0
/*
 * insnmap: classifies every instruction a single-step trace executed.
 *
 *   insnmap PREFIX
 *   insnmap -k KIMAGE PREFIX
 *
 * Reads PREFIX.steps and PREFIX.maps (from sstep), disassembles each mapped
 * file once with objdump, and writes PREFIX.insn ("ADDR LEN KIND" for each
 * distinct executed address). Fails, naming the address, if an executed
 * instruction is in no mapping or objdump does not know it (e.g. vdso code).
 *
 * With -k, KIMAGE is the pretend kernel (tests/progs/kimage.S). insnmap follows
 * its code, without running it, from entry_SYSCALL_64 to its sysretq and from
 * asm_common_interrupt to its iretq, and writes PREFIX.insn (the kernel's
 * instructions), PREFIX.kimg (the image's path, mapping and the two executed
 * paths, read by mkptdata -K) and PREFIX.kallsyms (its symbols, for perf
 * script --kallsyms).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptsynth.h"

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct ksym {
	uint64_t addr;
	char name[64];
};

struct kimage {
	struct ptsynth_imap imap;
	uint64_t *target; /* parallel to imap.v after sorting: direct branch targets */
	struct ksym syms[64];
	int nsyms;
};

/* Follows the code from symbol `from` to the first FAR instruction (sysretq/iretq). */
static int kimage_follow(const struct kimage *k, const char *from, FILE *out, const char *tag)
{
	uint64_t ip = 0, stack[64];
	int sp = 0, n = 0;

	for (int i = 0; i < k->nsyms; i++)
		if (!strcmp(k->syms[i].name, from))
			ip = k->syms[i].addr;
	if (!ip)
		return -ENOENT;
	fprintf(out, "%s", tag);
	for (;;) {
		const struct ptsynth_insn *in = ptsynth_imap_find(&k->imap, ip);
		if (!in || ++n > 1000)
			return -EINVAL;
		fprintf(out, " %" PRIx64, ip);
		uint64_t target = k->target[in - k->imap.v];
		switch (in->kind) {
		case PTSYNTH_CALL:
			if (sp == 64)
				return -EINVAL;
			stack[sp++] = ip + in->len;
			ip = target;
			break;
		case PTSYNTH_JMP:
			ip = target;
			break;
		case PTSYNTH_RET:
			if (!sp)
				return -EINVAL;
			ip = stack[--sp];
			break;
		case PTSYNTH_FAR:
			fprintf(out, "\n");
			return 0;
		case PTSYNTH_OTHER:
			ip += in->len;
			break;
		default: /* no conditional or indirect branches in the pretend kernel */
			return -EINVAL;
		}
	}
}

static int kimage_main(const char *image, const char *prefix)
{
	struct kimage k;
	char cmd[8192], line[1024], path[4096], abspath[4096];
	struct {
		uint64_t a, t;
	} *tg = NULL;
	size_t ntg = 0;
	int err = 0;
	FILE *f = NULL, *o = NULL;

	memset(&k, 0, sizeof k);
	if (!realpath(image, abspath))
		return -errno;
	snprintf(cmd, sizeof cmd, "objdump -d -w '%s'", abspath);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof line, f)) {
		uint64_t a, t;
		uint32_t len;
		unsigned kind;
		char name[64];
		if (sscanf(line, "%" SCNx64 " <%63[^>]>:", &a, name) == 2 && k.nsyms < 64) {
			k.syms[k.nsyms].addr = a;
			snprintf(k.syms[k.nsyms++].name, sizeof k.syms[0].name, "%s", name);
			continue;
		}
		if (ptsynth_objdump_line(line, &a, &len, &kind, &t) != 1)
			continue;
		if ((err = ptsynth_imap_add(&k.imap, a, len, kind)) < 0)
			goto out;
		void *v = realloc(tg, (ntg + 1) * sizeof *tg);
		if (!v) {
			err = -ENOMEM;
			goto out;
		}
		tg = v;
		tg[ntg].a = a;
		tg[ntg++].t = t;
	}
	if (pclose(f) != 0) {
		f = NULL;
		err = -EIO;
		goto out;
	}
	f = NULL;
	ptsynth_imap_sort(&k.imap);
	k.target = calloc(k.imap.n ? k.imap.n : 1, sizeof *k.target);
	if (!k.target) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ntg; i++) {
		const struct ptsynth_insn *in = ptsynth_imap_find(&k.imap, tg[i].a);
		k.target[in - k.imap.v] = tg[i].t;
	}
	if (!k.imap.n) {
		err = -EINVAL;
		goto out;
	}
	snprintf(path, sizeof path, "%s.insn", prefix);
	if ((err = ptsynth_imap_save(&k.imap, path)) < 0)
		goto out;
	snprintf(path, sizeof path, "%s.kallsyms", prefix);
	if (!(o = fopen(path, "w"))) {
		err = -errno;
		goto out;
	}
	fprintf(o, "%016" PRIx64 " T _text\n", k.imap.v[0].addr);
	for (int i = 0; i < k.nsyms; i++)
		fprintf(o, "%016" PRIx64 " T %s\n", k.syms[i].addr, k.syms[i].name);
	fprintf(o, "%016" PRIx64 " T _etext\n",
		k.imap.v[k.imap.n - 1].addr + k.imap.v[k.imap.n - 1].len);
	if (fclose(o) != 0) {
		o = NULL;
		err = -EIO;
		goto out;
	}
	snprintf(path, sizeof path, "%s.kimg", prefix);
	if (!(o = fopen(path, "w"))) {
		err = -errno;
		goto out;
	}
	uint64_t start = k.imap.v[0].addr & ~0xfffULL;
	uint64_t end = (k.imap.v[k.imap.n - 1].addr + 0x1000) & ~0xfffULL;
	fprintf(o, "path %s\nmap %" PRIx64 " %" PRIx64 " %" PRIx64 "\n", abspath, start, end,
		start);
	if ((err = kimage_follow(&k, "entry_SYSCALL_64", o, "sys")) < 0 ||
	    (err = kimage_follow(&k, "asm_common_interrupt", o, "irq")) < 0)
		goto out;
out:
	if (o && fclose(o) != 0 && !err)
		err = -EIO;
	if (f)
		pclose(f);
	free(tg);
	free(k.target);
	ptsynth_imap_fini(&k.imap);
	return err;
}

int main(int argc, char **argv)
{
	struct ptsynth_maps maps = {0};
	struct ptsynth_imap imap = {0};
	struct ptsynth_step *steps = NULL;
	uint64_t *want = NULL;
	size_t nsteps = 0, nwant = 0;
	char path[4096];
	int err, rc = 1;

	if (argc == 4 && !strcmp(argv[1], "-k")) {
		err = kimage_main(argv[2], argv[3]);
		if (err < 0)
			fprintf(stderr, "insnmap: %s: %s\n", argv[2], strerror(-err));
		return err < 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: insnmap PREFIX | insnmap -k KIMAGE PREFIX\n");
		return 2;
	}
	snprintf(path, sizeof path, "%s.steps", argv[1]);
	err = ptsynth_steps_load(path, &steps, &nsteps);
	if (err < 0)
		goto fail;
	snprintf(path, sizeof path, "%s.maps", argv[1]);
	err = ptsynth_maps_load(&maps, path);
	if (err < 0)
		goto fail;
	want = malloc((nsteps ? nsteps : 1) * sizeof *want);
	if (!want) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < nsteps; i++)
		want[i] = steps[i].ip;
	qsort(want, nsteps, sizeof *want, u64_cmp);
	for (size_t i = 0; i < nsteps; i++)
		if (!nwant || want[nwant - 1] != want[i])
			want[nwant++] = want[i];
	err = ptsynth_imap_from_maps(&imap, &maps, want, nwant);
	if (err < 0) {
		snprintf(path, sizeof path, "objdump");
		goto fail;
	}
	for (size_t i = 0; i < nwant; i++) {
		if (!ptsynth_imap_find(&imap, want[i])) {
			const struct ptsynth_mapping *mp = ptsynth_maps_find(&maps, want[i]);
			fprintf(stderr,
				"insnmap: executed address %#" PRIx64 " (%s) has no instruction\n",
				want[i], mp ? mp->path : "no mapping");
			goto out;
		}
	}
	snprintf(path, sizeof path, "%s.insn", argv[1]);
	err = ptsynth_imap_save(&imap, path);
	if (err < 0)
		goto fail;
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "insnmap: %s: %s\n", path, strerror(-err));
out:
	free(want);
	free(steps);
	ptsynth_imap_fini(&imap);
	ptsynth_maps_fini(&maps);
	return rc;
}
