// SPDX-License-Identifier: GPL-2.0
/*
 * insnmap: classifies every instruction a single-step trace executed.
 *
 *   insnmap PREFIX
 *
 * Reads PREFIX.steps and PREFIX.maps (from sstep), disassembles each mapped
 * file once with objdump, and writes PREFIX.insn ("ADDR LEN KIND" for each
 * distinct executed address). Fails, naming the address, if an executed
 * instruction is in no mapping or objdump does not know it (e.g. vdso code).
 */
#include "ptsynth.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct ptsynth_maps maps = { 0 };
	struct ptsynth_imap imap = { 0 };
	struct ptsynth_step *steps = NULL;
	uint64_t *want = NULL;
	size_t nsteps = 0, nwant = 0;
	char path[4096];
	int err, rc = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: insnmap PREFIX\n");
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
			fprintf(stderr, "insnmap: executed address %#" PRIx64 " (%s) has no instruction\n",
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
