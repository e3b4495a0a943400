// SPDX-License-Identifier: GPL-2.0
#include "report/format.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/esc.h"
#include "util/vec.h"

#define PUTS(b, lit) snap_rbuf_put(b, lit, sizeof(lit) - 1)

void snap_rbuf_fini(struct snap_rbuf *b)
{
	snap_free(b->p);
	memset(b, 0, sizeof(*b));
}

void snap_rbuf_put(struct snap_rbuf *b, const char *s, size_t n)
{
	if (b->err)
		return;
	if (snap_vec_reserve(&b->p, &b->cap, b->len + n + 1, 1) < 0) {
		b->err = -ENOMEM;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void snap_rbuf_printf(struct snap_rbuf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		snap_rbuf_put(b, small, (size_t)n);
		return;
	}
	if (b->err || snap_vec_reserve(&b->p, &b->cap, b->len + (size_t)n + 1, 1) < 0) {
		b->err = -ENOMEM;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

const char *snap_report_human(uint64_t ns, char out[16])
{
	static const char *const unit[] = {"us", "ms", "s"};
	double v = (double)ns;
	int u = -1;

	if (ns < 1000) {
		snprintf(out, 16, "%" PRIu64 " ns", ns);
		return out;
	}
	while (u < 2 && v >= 999.5) {
		v /= 1000;
		u++;
	}
	if (v < 9.995)
		snprintf(out, 16, "%.2f %s", v, unit[u]);
	else if (v < 99.95)
		snprintf(out, 16, "%.1f %s", v, unit[u]);
	else
		snprintf(out, 16, "%.0f %s", v, unit[u]);
	return out;
}

static const char *shorten(const char *s, size_t width, char *out);

const char *snap_report_shorten(const char *s, size_t width, char *out)
{
	size_t len = strlen(s), need;
	char *esc;

	if (snap_esc_run(s, len, 0) == len)
		return shorten(s, width, out);
	/* a traced program's names may hold terminal escapes: shown escaped */
	need = snap_esc_str(NULL, 0, s, len, 0);
	esc = snap_malloc(need + 1);
	if (!esc)
		return shorten("?", width, out);
	snap_esc_str(esc, need + 1, s, len, 0);
	shorten(esc, width, out);
	snap_free(esc);
	return out;
}

static const char *shorten(const char *s, size_t width, char *out)
{
	size_t len = strlen(s), head, tail;

	if (len <= width || width < 5) {
		size_t n = len <= width ? len : width;

		while (n < len && n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
		memcpy(out, s, n);
		out[n] = '\0';
		return out;
	}
	head = (width - 3 + 1) / 2;
	tail = (width - 3) / 2;
	while (head > 0 && ((unsigned char)s[head] & 0xc0) == 0x80)
		head--;
	while (tail > 0 && ((unsigned char)s[len - tail] & 0xc0) == 0x80)
		tail--;
	memcpy(out, s, head);
	memcpy(out + head, "...", 3);
	memcpy(out + head + 3, s + len - tail, tail);
	out[head + 3 + tail] = '\0';
	return out;
}

static size_t nthreads_shown(const struct snap_report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nth; i++)
		n += r->th[i].slices || r->th[i].busy_ns;
	return n;
}

static const char *sort_name(enum snap_report_sort s)
{
	static const char *const names[] = {"self", "total", "calls", "max", "p99"};

	return (unsigned)s < 5 ? names[s] : "self";
}

#define NAME_W SNAP_REPORT_NAME_W /* + calls 1+7 + 7 durations of 1+8: 99 columns */

void snap_report_text(const struct snap_report *r, const struct snap_report_fmt *f,
		      struct snap_rbuf *b)
{
	char h[7][16], name[64];
	uint32_t *order = NULL;
	int64_t n = snap_report_order(r, f->sort, &order);
	size_t shown;

	if (n < 0) {
		b->err = -ENOMEM;
		return;
	}
	shown = f->top && (size_t)n > f->top ? f->top : (size_t)n;
	snap_rbuf_printf(b, "snaptrace report: %s\n", f->source ? f->source : "trace");
	snap_rbuf_printf(b, "span %s, %" PRIu64 " slices on %zu thread%s",
			 snap_report_human(r->span_ns, h[0]), r->slices, nthreads_shown(r),
			 nthreads_shown(r) == 1 ? "" : "s");
	if (r->o.has_window) {
		snap_rbuf_printf(b, ", window %s", snap_report_human(r->o.win_start, h[1]));
		snap_rbuf_printf(b, " .. %s", snap_report_human(r->o.win_end, h[2]));
		/* an empty report must not look like a trace without calls there */
		if (r->have_time && r->o.win_start > r->t1 - r->t0)
			snap_rbuf_printf(b, ", past the end of the trace (it lasts %s)",
					 snap_report_human(r->t1 - r->t0, h[3]));
	}
	if (r->o.has_thread)
		snap_rbuf_printf(b, ", thread %" PRId64, r->o.tid);
	PUTS(b, "\n");
	if (r->sampled && r->sample_period)
		snap_rbuf_printf(b,
				 "ESTIMATED from stack samples, one every %s: durations are "
				 "accurate to about a sample period\n",
				 snap_report_human(r->sample_period, h[0]));
	else if (r->sampled)
		PUTS(b, "ESTIMATED from stack samples: durations are accurate to about "
			"a sample period\n");
	else
		PUTS(b, "exact: every call in the snapshot, percentiles by nearest rank\n");
	if (r->nsketched)
		snap_rbuf_printf(b,
				 "%zu function%s with over %" PRIu64 " calls: percentiles from a "
				 "log-bucket sketch (<= 1%% error), marked ~\n",
				 r->nsketched, r->nsketched == 1 ? "" : "s", r->o.exact_limit);
	if (r->open)
		snap_rbuf_printf(b,
				 "%" PRIu64
				 " slice%s cut by the snapshot's%s edges excluded (calls "
				 "begun before it or still open at its end)\n",
				 r->open, r->open == 1 ? "" : "s",
				 r->o.has_window ? " or the window's" : "");
	if (r->unmatched_ends || r->overlaps)
		snap_rbuf_printf(b,
				 "trace anomalies: %" PRIu64 " end(s) without a begin, %" PRIu64
				 " slice(s) outlasting their parent (cut)\n",
				 r->unmatched_ends, r->overlaps);
	snap_rbuf_printf(b, "\n%-*s %7s %8s %8s %8s %8s %8s %8s %8s\n", NAME_W, "function", "calls",
			 "total", "self", "mean", "p50", "p90", "p99", "max");
	for (size_t i = 0; i < shown; i++) {
		const struct snap_report_fn *fn = &r->fn[order[i]];
		char mark = fn->sketch ? '~' : ' ';

		char p[3][20];

		/* unique and at most NAME_W columns (snap_report_finish) */
		snap_report_shorten(snap_strtab_get(r->st, fn->label ? fn->label : order[i]),
				    sizeof(name) - 1, name);
		snprintf(p[0], sizeof(p[0]), "%c%s", mark, snap_report_human(fn->p50, h[3]));
		snprintf(p[1], sizeof(p[1]), "%c%s", mark, snap_report_human(fn->p90, h[4]));
		snprintf(p[2], sizeof(p[2]), "%c%s", mark, snap_report_human(fn->p99, h[5]));
		snap_rbuf_printf(b, "%-*s %7" PRIu64 " %8s %8s %8s %8s %8s %8s %8s\n", NAME_W, name,
				 fn->calls, snap_report_human(fn->total, h[0]),
				 snap_report_human(fn->self, h[1]),
				 snap_report_human(fn->mean, h[2]), p[0], p[1], p[2],
				 snap_report_human(fn->max, h[6]));
	}
	if (!n)
		PUTS(b, "(no complete calls)\n");
	else
		snap_rbuf_printf(b, "(%zu of %" PRId64 " function%s, by %s%s)\n", shown, n,
				 n == 1 ? "" : "s", sort_name(f->sort),
				 f->sort == SNAP_REPORT_SORT_CALLS ? "" : " time");
	snap_rbuf_printf(b, "\n%-52s %10s %12s %12s\n", "thread", "tid", "busy", "slices");
	for (size_t i = 0; i < r->nth; i++) {
		const struct snap_report_thread *t = &r->th[i];

		if (!t->slices && !t->busy_ns)
			continue;
		snap_report_shorten(t->name ? snap_strtab_get(r->st, t->name) : "?", 52, name);
		snap_rbuf_printf(b, "%-52s %10" PRId32 " %12s %12" PRIu64 "\n", name, t->tid,
				 snap_report_human(t->busy_ns, h[0]), t->slices);
	}
	snap_free(order);
}

static void json_str(struct snap_rbuf *b, const char *s)
{
	PUTS(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};

			snap_rbuf_put(b, e, 2);
		} else if (c < 0x20 || c == 0x7f) {
			snap_rbuf_printf(b, "\\u%04x", c);
		} else {
			snap_rbuf_put(b, s, 1);
		}
	}
	PUTS(b, "\"");
}

void snap_report_json(const struct snap_report *r, const struct snap_report_fmt *f,
		      struct snap_rbuf *b)
{
	uint32_t *order = NULL;
	int64_t n = snap_report_order(r, f->sort, &order);
	size_t shown, k = 0;

	if (n < 0) {
		b->err = -ENOMEM;
		return;
	}
	shown = f->top && (size_t)n > f->top ? f->top : (size_t)n;
	snap_rbuf_printf(b,
			 "{\"span_ns\": %" PRIu64 ", \"slices\": %" PRIu64
			 ", \"estimated\": %s, \"sample_period_ns\": %" PRIu64
			 ", \"open_slices\": %" PRIu64 ", \"exact\": %s,\n \"functions\": [",
			 r->span_ns, r->slices, r->sampled ? "true" : "false", r->sample_period,
			 r->open, r->nsketched ? "false" : "true");
	for (size_t i = 0; i < shown; i++) {
		const struct snap_report_fn *fn = &r->fn[order[i]];

		snap_rbuf_printf(b, "%s\n  {\"name\": ", i ? "," : "");
		json_str(b, snap_strtab_get(r->st, order[i]));
		snap_rbuf_printf(b,
				 ", \"calls\": %" PRIu64 ", \"total_ns\": %" PRIu64
				 ", \"self_ns\": %" PRIu64 ", \"mean_ns\": %" PRIu64
				 ", \"p50_ns\": %" PRIu64 ", \"p90_ns\": %" PRIu64
				 ", \"p99_ns\": %" PRIu64 ", \"max_ns\": %" PRIu64
				 ", \"open\": %" PRIu64 ", \"exact\": %s, \"inlined\": %s}",
				 fn->calls, fn->total, fn->self, fn->mean, fn->p50, fn->p90,
				 fn->p99, fn->max, fn->open, fn->sketch ? "false" : "true",
				 fn->inlined ? "true" : "false");
	}
	PUTS(b, "],\n \"threads\": [");
	for (size_t i = 0; i < r->nth; i++) {
		const struct snap_report_thread *t = &r->th[i];

		if (!t->slices && !t->busy_ns)
			continue;
		snap_rbuf_printf(b, "%s\n  {\"pid\": %" PRId32 ", \"tid\": %" PRId32 ", \"name\": ",
				 k++ ? "," : "", t->pid, t->tid);
		json_str(b, t->name ? snap_strtab_get(r->st, t->name) : "");
		snap_rbuf_printf(b, ", \"busy_ns\": %" PRIu64 ", \"slices\": %" PRIu64 "}",
				 t->busy_ns, t->slices);
	}
	PUTS(b, "]");
	if (r->o.function) {
		/* -function: its histogram (power-of-two buckets with calls) and slowest calls */
		size_t k2 = 0;

		PUTS(b, ",\n \"function\": {\"name\": ");
		json_str(b, snap_strtab_get(r->st, r->o.function));
		PUTS(b, ", \"histogram\": [");
		for (size_t i = 0; i < SNAP_REPORT_HIST; i++) {
			if (!r->hist[i])
				continue;
			snap_rbuf_printf(b,
					 "%s{\"from_ns\": %" PRIu64 ", \"to_ns\": %" PRIu64
					 ", \"calls\": %" PRIu64 "}",
					 k2++ ? ", " : "", i ? (uint64_t)1 << (i - 1) : 0,
					 i ? (i < 64 ? (uint64_t)1 << i : UINT64_MAX) : 1,
					 r->hist[i]);
		}
		PUTS(b, "],\n  \"slowest\": [");
		for (size_t i = 0; i < r->nslow; i++)
			snap_rbuf_printf(b,
					 "%s{\"dur_ns\": %" PRIu64 ", \"start_ns\": %" PRIu64
					 ", \"pid\": %" PRId32 ", \"tid\": %" PRId32 "}",
					 i ? ", " : "", r->slow[i].dur, r->slow[i].start,
					 r->slow[i].pid, r->slow[i].tid);
		PUTS(b, "]}");
	}
	PUTS(b, "}\n");
	snap_free(order);
}

static void fmt_secs(uint64_t ns, char out[32])
{
	snprintf(out, 32, "%" PRIu64 ".%09" PRIu64 " s", ns / 1000000000u, ns % 1000000000u);
}

void snap_report_function(const struct snap_report *r, struct snap_rbuf *b)
{
	const struct snap_report_fn *fn = r->o.function < r->capfn ? &r->fn[r->o.function] : NULL;
	const char *name = snap_strtab_get(r->st, r->o.function);
	char h[8][16], at[32];
	uint64_t most = 0;
	size_t lo = SNAP_REPORT_HIST, hi = 0;

	if (!fn || !fn->calls) {
		snap_rbuf_printf(b, "\nfunction %s: no complete calls", name);
		if (fn && fn->open)
			snap_rbuf_printf(b, " (%" PRIu64 " cut by the snapshot's%s edges)",
					 fn->open, r->o.has_window ? " or the window's" : "");
		PUTS(b, "\n");
		return;
	}
	snap_rbuf_printf(b, "\nfunction %s: %" PRIu64 " call%s, total %s, self %s\n", name,
			 fn->calls, fn->calls == 1 ? "" : "s", snap_report_human(fn->total, h[0]),
			 snap_report_human(fn->self, h[1]));
	snap_rbuf_printf(b, "  mean %s  p50 %s  p90 %s  p99 %s  max %s%s\n",
			 snap_report_human(fn->mean, h[2]), snap_report_human(fn->p50, h[3]),
			 snap_report_human(fn->p90, h[4]), snap_report_human(fn->p99, h[5]),
			 snap_report_human(fn->max, h[6]),
			 fn->sketch ? "  (percentiles from the sketch, <= 1% error)" : "");
	for (size_t i = 0; i < SNAP_REPORT_HIST; i++)
		if (r->hist[i]) {
			if (i < lo)
				lo = i;
			hi = i;
			if (r->hist[i] > most)
				most = r->hist[i];
		}
	PUTS(b, "\nduration histogram (log scale: each row doubles)\n");
	for (size_t i = lo; i <= hi && most; i++) {
		uint64_t from = i ? (uint64_t)1 << (i - 1) : 0;
		uint64_t to = i ? (i < 64 ? (uint64_t)1 << i : UINT64_MAX) : 1;
		size_t bar = (size_t)((r->hist[i] * 50 + most - 1) / most);
		char bars[51];

		memset(bars, '#', bar);
		bars[bar] = '\0';
		snap_rbuf_printf(b, "  %9s .. %-9s %-50s %" PRIu64 "\n",
				 snap_report_human(from, h[0]), snap_report_human(to, h[1]), bars,
				 r->hist[i]);
	}
	snap_rbuf_printf(b,
			 "\nslowest %zu call%s (start from the trace start, as Perfetto shows "
			 "time)\n",
			 r->nslow, r->nslow == 1 ? "" : "s");
	for (size_t i = 0; i < r->nslow; i++) {
		fmt_secs(r->slow[i].start, at);
		snap_rbuf_printf(b, "  %9s  at %s  tid %" PRId32 " (pid %" PRId32 ")\n",
				 snap_report_human(r->slow[i].dur, h[0]), at, r->slow[i].tid,
				 r->slow[i].pid);
	}
}

/* A name as text, with what a terminal would obey escaped (util/esc.h). */
static void put_escaped(struct snap_rbuf *b, const char *s, size_t n)
{
	size_t at = 0;

	while (at < n) {
		size_t run = snap_esc_run(s + at, n - at, 0);
		char e[SNAP_ESC_MAX];

		snap_rbuf_put(b, s + at, run);
		at += run;
		if (at < n) {
			at += snap_esc_one(s + at, n - at, 0, e);
			snap_rbuf_put(b, e, strlen(e));
		}
	}
}

void snap_report_folded(const struct snap_report *r, struct snap_rbuf *b)
{
	uint32_t *path = NULL;
	size_t cap = 0;

	for (size_t i = 1; i < r->nnodes && !b->err; i++) {
		size_t n = 0;

		if (!r->node_self[i])
			continue;
		for (uint32_t k = (uint32_t)i; k; k = r->node_parent[k]) {
			if (snap_vec_reserve(&path, &cap, n + 1, sizeof(*path)) < 0) {
				b->err = -ENOMEM;
				break;
			}
			path[n++] = r->node_name[k];
		}
		while (n--) {
			const char *s = snap_strtab_get(r->st, path[n]);
			size_t len = strlen(s), k = sizeof(SNAP_REPORT_INLINED_SUFFIX) - 1;

			/* inlined frames as stackcollapse-perf.pl --inline marks them */
			if (path[n] < r->capfn && r->fn[path[n]].inlined && len >= k) {
				put_escaped(b, s, len - k);
				PUTS(b, "_[i]");
			} else {
				put_escaped(b, s, len);
			}
			if (n)
				PUTS(b, ";");
		}
		snap_rbuf_printf(b, " %" PRIu64 "\n", r->node_self[i]);
	}
	snap_free(path);
}
