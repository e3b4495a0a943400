// SPDX-License-Identifier: GPL-2.0
/*
 * dlrec_dump: reads a dlfilter record stream (file or stdin) with parse/dlrec
 * and prints the events the way `perf script --ns` prints them with
 *   samples:  -F comm,pid,tid,time,ip,sym,symoff,dso,event,period
 *   branches: -F comm,pid,tid,time,ip,sym,symoff,dso,addr
 * after squeezing runs of blanks (tests/dlfilter/run.sh normalises perf's text
 * the same way and diffs). Frames come out leaf first again, as perf prints.
 * Exit status: 0 ok, 1 stream error (message on stderr), 2 usage.
 * With -s it prints only the END statistics; with -f a one-frame sample is
 * printed on its header line (perf's format for samples without call chains).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "parse/dlrec.h"
#include "util/err.h"

static void put_loc(const struct snap_strtab *st, const struct snap_loc *l)
{
	const char *sym = snap_strtab_get(st, l->sym);
	const char *dso = l->dso ? snap_strtab_get(st, l->dso) : "[unknown]";

	if (!l->sym || !strncmp(sym, "[unknown @ ", 11))
		printf("%" PRIx64 " [unknown] (%s)", l->ip, dso);
	else
		printf("%" PRIx64 " %s+0x%" PRIx64 " (%s)", l->ip, sym, l->off, dso);
}

static int flat;

static void put_event(const struct snap_strtab *st, const struct snap_event *ev)
{
	uint32_t i;

	if (ev->comm)
		printf("%s ", snap_strtab_get(st, ev->comm));
	printf("%d/%d %" PRIu64 ".%09" PRIu64 ":", ev->pid, ev->tid, ev->time / 1000000000u,
	       ev->time % 1000000000u);
	switch (ev->kind) {
	case SNAP_EV_BRANCH:
		putchar(' ');
		put_loc(st, &ev->src);
		printf(" => ");
		put_loc(st, &ev->dst);
		putchar('\n');
		break;
	case SNAP_EV_SAMPLE:
	case SNAP_EV_EXTRA:
		printf(" %" PRIu64 " %s:", ev->period, snap_strtab_get(st, ev->event));
		if (ev->kind == SNAP_EV_EXTRA || (flat && ev->nframes == 1)) {
			putchar(' ');
			put_loc(st, ev->kind == SNAP_EV_EXTRA ? &ev->src : &ev->frames[0]);
			putchar('\n');
			break;
		}
		putchar('\n');
		for (i = ev->nframes; i-- > 0;) {
			put_loc(st, &ev->frames[i]);
			putchar('\n');
		}
		break;
	case SNAP_EV_POWER:
		printf(" cbr freq: %u MHz ", ev->freq_mhz);
		put_loc(st, &ev->src);
		putchar('\n');
		break;
	default:
		printf(" ?\n");
	}
}

int main(int argc, char **argv)
{
	struct snap_strtab st;
	struct snap_dlrec r;
	struct snap_event ev;
	static char buf[1 << 16];
	int fd = 0, stats = 0, err = 0, i;
	ssize_t n;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-s")) {
			stats = 1;
		} else if (!strcmp(argv[i], "-f")) {
			flat = 1;
		} else if (fd == 0) {
			fd = open(argv[i], O_RDONLY);
			if (fd < 0) {
				perror(argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr, "usage: dlrec_dump [-s] [-f] [FILE]\n");
			return 2;
		}
	}
	snap_strtab_init(&st);
	snap_dlrec_init(&r, &st);
	while (!err && (n = read(fd, buf, sizeof(buf))) > 0) {
		err = snap_dlrec_feed(&r, buf, (size_t)n);
		while (!err && (err = snap_dlrec_next(&r, &ev)) > 0) {
			if (err == SNAP_DLREC_TEXT_POINT && !stats) {
				size_t len;
				const char *t = snap_dlrec_text(&r, &len);

				fwrite(t, 1, len, stdout); /* what perf printed here */
			} else if (!stats)
				put_event(&st, &ev);
			err = 0;
		}
	}
	if (!err)
		err = snap_dlrec_finish(&r);
	if (stats) {
		const struct snap_dlrec_stats *s = snap_dlrec_stats(&r);

		printf("records %" PRIu64 " branches %" PRIu64 " samples %" PRIu64
		       " powers %" PRIu64 " dropped %" PRIu64 " errors %" PRIu64 " syncs %" PRIu64
		       "\n",
		       s->records, s->branches, s->samples, s->powers, s->dropped, s->errors,
		       s->texts);
	}
	if (err)
		fprintf(stderr, "dlrec_dump: stream offset %" PRIu64 ": %s\n",
			snap_dlrec_offset(&r), snap_strerror(err));
	snap_dlrec_fini(&r);
	snap_strtab_fini(&st);
	return err ? 1 : 0;
}
