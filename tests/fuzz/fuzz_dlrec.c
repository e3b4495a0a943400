// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the dlfilter record stream reader. Input byte 0 picks the feed
 * chunk size (1..64, or all at once) and, with bit 7 set, prepends a valid
 * stream header so that mutations reach the records.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/dlrec.h"
#include "parse/dlrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile unsigned text_sum; /* keeps the text reads */

static void check_event(const struct snap_strtab *st, const struct snap_event *ev)
{
	char desc[256];

	if (ev->kind < SNAP_EV_BRANCH || ev->kind > SNAP_EV_TASK)
		abort();
	if (ev->nframes && !ev->frames)
		abort();
	for (uint32_t i = 0; i < ev->nframes; i++)
		if (ev->frames[i].sym > st->count || ev->frames[i].dso > st->count)
			abort();
	if (ev->src.sym > st->count || ev->dst.sym > st->count || ev->event > st->count)
		abort();
	if (!snap_event_desc(st, ev, NULL, desc, sizeof(desc))[0] ||
	    !strcmp(snap_br_kind_name(ev->br_kind), "?"))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t hdr[SNAP_DLREC_HDR_SIZE] = {'S', 'N', 'A', 'P', 'D', 'L', 'R', '1',
							 1,   0,   0,	0,   16,  0,   0,   0};
	struct snap_strtab st;
	struct snap_dlrec r;
	struct snap_event ev;
	size_t chunk, pos = 0;
	int err = 0;

	if (!size)
		return 0;
	chunk = (data[0] & 0x3f) + 1;
	if ((data[0] & 0x40) == 0)
		chunk = size;
	snap_strtab_init(&st);
	snap_dlrec_init(&r, &st);
	if (data[0] & 0x80)
		err = snap_dlrec_feed(&r, hdr, sizeof(hdr));
	data++;
	size--;
	while (!err && pos < size) {
		size_t n = size - pos < chunk ? size - pos : chunk;

		err = snap_dlrec_feed(&r, data + pos, n);
		pos += n;
		while (!err && (err = snap_dlrec_next(&r, &ev)) > 0) {
			if (err == 1) {
				check_event(&st, &ev);
			} else {
				size_t tl;
				const char *t = snap_dlrec_text(&r, &tl);

				if (!t)
					abort();
				/* read every byte, so ASan sees text that is not all readable */
				for (size_t i = 0; i < tl; i++)
					text_sum += (unsigned char)t[i];
			}
			err = 0;
		}
	}
	if (!err)
		snap_dlrec_finish(&r);
	snap_dlrec_offset(&r);
	snap_dlrec_fini(&r);
	snap_strtab_fini(&st);
	return 0;
}
