// SPDX-License-Identifier: GPL-2.0
/*
 * snaptrace-dlfilter.so: a perf `--dlfilter` plugin that turns each decoded
 * sample into a compact binary record (model/dlrec.h) and hides it from perf's
 * own output (returns 1). snaptrace reads the records from a pipe with
 * parse/dlrec while perf keeps decoding on the other core.
 *
 *   perf script -i perf.data --itrace=be --dlfilter snaptrace-dlfilter.so \
 *           --dlarg fd=3 [--dlarg keepjumps] [--dlarg nocache]
 *
 * Arguments (--dlarg, any order):
 *   fd=N       write records to file descriptor N (inherited from snaptrace)
 *   path=FILE  or a bare FILE: create/truncate FILE and write there
 *   keepjumps  send every branch (see "Dropped jumps" below)
 *   nocache    resolve every address through perf (see "Address cache")
 *   nostdout   leave perf's stdout alone (see "Error lines")
 *   taskevents perf prints task events (see "Comms")
 *
 * This code runs inside perf: it must never crash it. No asserts, no aborts,
 * no recursion; every buffer is bounded (1 MiB output buffer, frames capped at
 * SNAP_DLREC_MAX_FRAMES, names at SNAP_DLREC_MAX_STR); an allocation failure
 * costs one sample (counted as an error in the END record); a write error
 * (EPIPE when snaptrace went away) makes the plugin stop writing, quietly.
 * perf's strings are copied the first time they are seen and never kept.
 *
 * Dropped jumps. The text path turns a `jmp`/`jcc` into "the pc's symbol must
 * be the top of the stack" (docs/behaviour.md §4.5.4): nothing
 * happens when the top already is that symbol. Most branches of a trace are
 * such intra-function jumps, so the plugin drops a jump when it can prove the
 * text path would do nothing with it:
 *   - its flags are exactly BRANCH or BRANCH|CONDITIONAL (not in a
 *     transaction, not a trace start or end);
 *   - source and target resolve to the same known symbol (same DSO and start;
 *     unknown code is never dropped, its names differ by address);
 *   - the previous record sent for the thread left that very symbol on top of
 *     the stack: a plain call to it, a plain return into it, or a sent jump
 *     into it. After anything else (trace start/end, syscall, interrupt,
 *     transaction, sample) the top is not known and the next jump is sent.
 * So, unlike magic-trace's filter, calls and returns are never dropped:
 * recursion (same symbol on both sides) stays visible (docs/behaviour.md §8.8).
 * A decode error empties the stack, but perf always resynchronises with a
 * "tr strt" before the next branch of that thread, and a trace start makes
 * the top unknown, so no jump is dropped across an error.
 * A dropped jump still moved the thread's "last event time" forward, which
 * the text path uses to close the thread's frames at the end of the trace: the
 * plugin keeps the last dropped jump of each thread and sends it at the end if
 * no other record of that thread followed it (or before the next TEXT record,
 * see below, so that it stays before an error line perf printed after it).
 *
 * Error lines. perf prints "instruction trace error" lines on its stdout (a
 * dlfilter never sees them as samples). start() points perf's `stdout` at an
 * unbuffered fopencookie() stream whose writes become TEXT records, so every
 * line lands in the record stream at exactly the place `perf script` text has
 * it; stop() puts the real stdout back. (Anything perf prints through a FILE
 * pointer it saved before start() still goes to the real stdout: snaptrace
 * reads that too, as a fallback, and appends it at the end.) `--dlarg
 * nostdout` leaves perf's stdout alone.
 * Known limits: a stack at snaptrace's depth cap does not push the callee, and
 * -filter regions end stacks at times the plugin cannot see; snaptrace passes
 * keepjumps for -filter. `--dlarg keepjumps` turns dropping off.
 *
 * Address cache. Resolving an address costs perf a map and symbol lookup; a
 * trace hits the same few branch addresses millions of times. The plugin keeps
 * a direct-mapped cache (pid, address) -> (symbol, DSO, offset), emptied when
 * a thread's comm changes (an exec). It assumes that the code at an address of
 * a process does not otherwise change during the trace (no dlclose+dlopen or
 * JIT reuse of the address): `--dlarg nocache` turns it off.
 *
 * Comms. perf gives a thread's command name only through resolve_ip(), which
 * resolves the sample's ip (a map and symbol lookup) even when the address
 * cache already holds it: per sample, 39 % of perf's and the plugin's
 * instructions without call chains (docs/dlfilter.md). The plugin sends a COMM
 * record on a thread's first record and re-reads the comm after records at
 * which it may have changed. When perf prints task events (--show-task-events
 * on its command line, as snaptrace runs it for samples, or `--dlarg
 * taskevents`), every COMM, FORK and EXIT record comes as a line on the stdout
 * the plugin captures ("Error lines"), before any sample after it, and those are
 * the only places where perf changes a thread's comm; so the comm read for a
 * thread stays valid until such a line passes by (a generation count), and
 * samples read it again only then. Else, or with nostdout, every sample reads it.
 * perf's command line is read from /proc/self/cmdline rather than told by a
 * new --dlarg, which an older plugin would take for an output file.
 *
 * Samples without timestamps (timeless Intel PT): the text path runs `perf
 * script -F time,...`, which refuses them; the plugin fails perf the same way
 * before it writes anything, so snaptrace falls back to the text path and
 * shows perf's own error.
 *
 * Dwarf call chains (--call-graph dwarf). perf unwinds the copied user stack
 * only when it prints a sample; a dlfilter sees the raw call chain, which
 * then holds the kernel part alone. So samples of an event that copies user
 * stacks are not turned into records: the plugin lets perf print them
 * (filter_event_early and filter_event return 0), and the text lands in the
 * stream as TEXT records at its place, parsed like the text path (snaptrace
 * runs perf script with the text path's -F fields and --ns for sampled data,
 * so the lines are identical). Same for context-switch and task (fork, exit,
 * exec) records, which perf never hands to a dlfilter: with
 * --show-switch-events --show-task-events it prints them (docs/sampling.md).
 *
 * cbr (power) events: perf 6.1 passes the synthesized cbr payload through
 * raw_data (perf_synth_intel_cbr without its padding word: flags, freq in kHz);
 * the plugin sends freq_mhz as perf script prints it ((kHz + 500) / 1000). A perf
 * that does not pass raw data gets the event counted as an error: decode cbr
 * with the text path there. Other synthesized events (psb, pwre, ...) are
 * ignored, as the text parser ignores them.
 */
#include <errno.h>
#include <fcntl.h>
#include <perf/perf_dlfilter.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model/dlrec.h"
#include "model/event.h"
#include "model/evname.h"

struct perf_dlfilter_fns perf_dlfilter_fns;

#define OUT_CAP	     (1u << 20)
#define ACACHE_BITS  16
#define CONTEXT_MAX  ((uint64_t)-4095) /* PERF_CONTEXT_MAX: call-chain markers */
#define NEVENT_KINDS 32

/* A location ready to encode. */
struct loc {
	uint64_t addr, off;
	uint32_t sym, dso;
};

/* String cache entry: (ns, a, b) -> id, with our own copy of the bytes. */
struct sent {
	uint64_t a, b;
	uint32_t ns, id, len, used;
	char *str;
};

/* Address cache entry. */
struct aent {
	uint64_t addr;
	int64_t pid; /* -2 = empty */
	struct loc loc;
};

/* Per-thread state for dropping jumps. */
struct thr {
	uint64_t key; /* pid << 32 | tid */
	uint64_t last_time, pending_time;
	uint32_t top_sym, top_dso;
	uint32_t comm;	   /* string id of the comm last sent, 0 = none yet */
	uint32_t comm_gen; /* state's comm_gen when comm was read */
	uint8_t used, known, has_pending;
	uint8_t pending[SNAP_DLREC_REC_HDR + SNAP_DLREC_BRANCH_SIZE];
};

enum evkind { EV_BRANCH = 1, EV_SAMPLE, EV_POWER, EV_IGNORE };

struct evname {
	const char *ptr; /* perf's pointer: compared, never dereferenced after a mismatch */
	char *copy;
	uint32_t id;
	enum evkind kind;
	int8_t has_time; /* -1 = not looked at yet */
	int8_t dwarf;	 /* user stacks to unwind (--call-graph dwarf): printed by perf */
};

struct state {
	int fd, own_fd, dead;
	int keepjumps, nocache, nostdout, taskevents;
	uint32_t comm_gen;  /* task lines (COMM, FORK, EXIT) perf printed so far */
	char task_tail[16]; /* the end of perf's last write, for a line cut there */
	size_t ntask_tail;
	FILE *saved_stdout, *text; /* perf's stdout while ours (text) replaces it */
	uint8_t *out;
	size_t outlen;
	uint32_t next_id;
	struct sent *strs;
	size_t nstrs, strcap; /* open addressing, power of two */
	struct aent *acache;
	struct thr *thrs;
	size_t nthrs, thrcap, npending;
	struct evname evs[NEVENT_KINDS];
	size_t nevs;
	uint64_t nrec, nbranch, nsample, ndropped, nerrors;
	struct loc *chain; /* SNAP_DLREC_MAX_FRAMES scratch */
};

/* ---- output ---- */

static void out_write(struct state *st, const uint8_t *p, size_t n)
{
	sigset_t pipeset, old, pending;
	int had_pipe;

	sigemptyset(&pipeset);
	sigaddset(&pipeset, SIGPIPE);
	/* Turn a broken pipe into EPIPE instead of killing perf. */
	if (pthread_sigmask(SIG_BLOCK, &pipeset, &old))
		return;
	sigemptyset(&pending);
	sigpending(&pending);
	had_pipe = sigismember(&pending, SIGPIPE);
	while (n && !st->dead) {
		ssize_t w = write(st->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			st->dead = 1;
			if (errno == EPIPE && !had_pipe) {
				struct timespec zero = {0, 0};

				sigtimedwait(&pipeset, NULL, &zero);
			}
			break;
		}
		p += w;
		n -= (size_t)w;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void out_flush(struct state *st)
{
	if (st->outlen && !st->dead)
		out_write(st, st->out, st->outlen);
	st->outlen = 0;
}

/* Returns room for a record of payload size len (header written), or NULL. */
static uint8_t *out_rec(struct state *st, uint32_t kind, uint32_t len)
{
	uint8_t *p;

	if ((size_t)len + SNAP_DLREC_REC_HDR > OUT_CAP)
		return NULL;
	if (st->outlen + SNAP_DLREC_REC_HDR + len > OUT_CAP)
		out_flush(st);
	p = st->out + st->outlen;
	st->outlen += SNAP_DLREC_REC_HDR + len;
	if (kind != SNAP_DLREC_END)
		st->nrec++;
	memcpy(p, &kind, 4); /* x86-64 and every perf dlfilter host: little-endian */
	memcpy(p + 4, &len, 4);
	return p + SNAP_DLREC_REC_HDR;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return p + 4;
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
	return p + 8;
}

static uint8_t *put_loc(uint8_t *p, const struct loc *l)
{
	p = put64(p, l->addr);
	p = put64(p, l->off);
	p = put32(p, l->sym);
	return put32(p, l->dso);
}

/* ---- strings ---- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static int str_grow(struct state *st)
{
	size_t ncap = st->strcap ? st->strcap * 2 : 1024, i;
	struct sent *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -1;
	for (i = 0; i < st->strcap; i++) {
		struct sent *e = &st->strs[i];
		size_t j;

		if (!e->used)
			continue;
		j = mix(e->a ^ mix(e->b + e->ns)) & (ncap - 1);
		while (n[j].used)
			j = (j + 1) & (ncap - 1);
		n[j] = *e;
	}
	free(st->strs);
	st->strs = n;
	st->strcap = ncap;
	return 0;
}

/*
 * Returns the id of string s under key (ns, a, b), sending a STR record the
 * first time (or when perf's string for the key changed); 0 on failure.
 */
static uint32_t str_id(struct state *st, uint32_t ns, uint64_t a, uint64_t b, const char *s)
{
	size_t len = strnlen(s, SNAP_DLREC_MAX_STR), j;
	struct sent *e;
	uint8_t *p;
	char *copy;

	if (st->nstrs * 2 >= st->strcap && str_grow(st))
		return 0;
	j = mix(a ^ mix(b + ns)) & (st->strcap - 1);
	for (;; j = (j + 1) & (st->strcap - 1)) {
		e = &st->strs[j];
		if (!e->used)
			break;
		if (e->ns == ns && e->a == a && e->b == b) {
			if (e->len == len && !memcmp(e->str, s, len))
				return e->id;
			break; /* same key, other string: replace */
		}
	}
	copy = malloc(len + 1);
	if (!copy)
		return 0;
	memcpy(copy, s, len);
	copy[len] = 0;
	p = out_rec(st, SNAP_DLREC_STR, 4 + (uint32_t)len);
	if (!p) {
		free(copy);
		return 0;
	}
	put32(p, st->next_id);
	memcpy(p + 4, s, len);
	if (e->used)
		free(e->str);
	else
		st->nstrs++;
	e->used = 1;
	e->ns = ns;
	e->a = a;
	e->b = b;
	e->len = (uint32_t)len;
	e->str = copy;
	e->id = st->next_id++;
	return e->id;
}

enum { NS_DSO = 1, NS_SYM, NS_EVENT, NS_COMM };

/* Fills *l from a perf location. Returns 0, or -1 if a string could not be sent. */
static int loc_from_al(struct state *st, const struct perf_dlfilter_al *al, uint64_t addr,
		       int mapped, struct loc *l)
{
	memset(l, 0, sizeof(*l));
	l->addr = addr;
	if (!al)
		return 0;
	if (mapped)
		l->addr = al->addr;
	if (al->dso) {
		l->dso = str_id(st, NS_DSO, (uintptr_t)al->dso, 0, al->dso);
		if (!l->dso)
			return -1;
	}
	if (al->sym) {
		l->sym = str_id(st, NS_SYM, l->dso, al->sym_start, al->sym);
		if (!l->sym)
			return -1;
		l->off = al->addr - al->sym_start;
	}
	return 0;
}

/* ---- address cache ---- */

static struct aent *acache_slot(struct state *st, int32_t pid, uint64_t addr)
{
	if (!st->acache)
		return NULL;
	return &st->acache[mix(addr ^ ((uint64_t)(uint32_t)pid << 40)) & ((1u << ACACHE_BITS) - 1)];
}

static int acache_get(struct state *st, int32_t pid, uint64_t addr, struct loc *l)
{
	struct aent *e = acache_slot(st, pid, addr);

	if (!e || e->pid != pid || e->addr != addr)
		return 0;
	*l = e->loc;
	return 1;
}

static void acache_put(struct state *st, int32_t pid, uint64_t addr, const struct loc *l)
{
	struct aent *e = acache_slot(st, pid, addr);

	if (!e)
		return;
	e->pid = pid;
	e->addr = addr;
	e->loc = *l;
}

/* Resolves a branch address (ip: which = 0, addr: which = 1), absolute. */
static int resolve_branch(struct state *st, const struct perf_dlfilter_sample *s, void *ctx,
			  int which, struct loc *l)
{
	uint64_t addr = which ? s->addr : s->ip;
	const struct perf_dlfilter_al *al;

	memset(l, 0, sizeof(*l));
	if (!addr)
		return 0; /* perf prints "0 [unknown] ([unknown])" */
	if (acache_get(st, s->pid, addr, l))
		return 0;
	if (which)
		al = s->addr_correlates_sym ? perf_dlfilter_fns.resolve_addr(ctx) : NULL;
	else
		al = perf_dlfilter_fns.resolve_ip(ctx);
	if (loc_from_al(st, al, addr, 0, l))
		return -1;
	acache_put(st, s->pid, addr, l);
	return 0;
}

/* Resolves a call-chain entry; addr becomes DSO-relative like perf script prints it. */
static int resolve_frame(struct state *st, const struct perf_dlfilter_sample *s, void *ctx,
			 uint64_t addr, struct loc *l)
{
	struct perf_dlfilter_al al;

	if (acache_get(st, s->pid, addr ^ 1ull << 62, l))
		return 0; /* frames live in their own key space: addr is mapped */
	memset(&al, 0, sizeof(al));
	al.size = sizeof(al);
	if (perf_dlfilter_fns.resolve_address(ctx, addr, &al)) {
		memset(l, 0, sizeof(*l));
		l->addr = addr;
	} else if (loc_from_al(st, &al, addr, 1, l)) {
		return -1;
	}
	acache_put(st, s->pid, addr ^ 1ull << 62, l);
	return 0;
}

/* ---- threads ---- */

static struct thr *thr_get(struct state *st, int32_t pid, int32_t tid)
{
	uint64_t key = (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
	size_t j;

	if (st->nthrs * 2 >= st->thrcap) {
		size_t ncap = st->thrcap ? st->thrcap * 2 : 64, i;
		struct thr *n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (i = 0; i < st->thrcap; i++) {
			if (!st->thrs[i].used)
				continue;
			j = mix(st->thrs[i].key) & (ncap - 1);
			while (n[j].used)
				j = (j + 1) & (ncap - 1);
			n[j] = st->thrs[i];
		}
		free(st->thrs);
		st->thrs = n;
		st->thrcap = ncap;
	}
	for (j = mix(key) & (st->thrcap - 1);; j = (j + 1) & (st->thrcap - 1)) {
		struct thr *t = &st->thrs[j];

		if (t->used && t->key == key)
			return t;
		if (!t->used) {
			memset(t, 0, sizeof(*t));
			t->used = 1;
			t->key = key;
			st->nthrs++;
			return t;
		}
	}
}

/* A record of this thread was sent at time: the pending dropped jump is superseded. */
static void thr_sent(struct state *st, struct thr *t, uint64_t time)
{
	if (!t)
		return;
	if (t->has_pending)
		st->npending--;
	t->has_pending = 0;
	if (time > t->last_time)
		t->last_time = time;
}

/*
 * Sends a COMM record when the thread's command name is new or changed. perf
 * only knows it through resolve_ip(), so this runs on a thread's first record
 * and when force is set (records after which a comm may have changed), unless
 * perf printed no task line since the comm was read ("Comms" above).
 */
static void thr_comm(struct state *st, struct thr *t, const struct perf_dlfilter_sample *s,
		     void *ctx, int force)
{
	const struct perf_dlfilter_al *al;
	const char *b, *e;
	uint64_t h = 1469598103934665603ull;
	uint32_t id = 0;
	char buf[64];
	uint8_t *p;
	size_t n;

	if (!t || (t->comm && !force))
		return;
	if (t->comm && st->taskevents && st->text && t->comm_gen == st->comm_gen)
		return; /* perf has not changed a comm since */
	al = perf_dlfilter_fns.resolve_ip(ctx);
	if (!al || !al->comm)
		return;
	t->comm_gen = st->comm_gen;
	/* Blanks trimmed at both ends, as parse/perfscript reads perf's comm column. */
	for (b = al->comm; *b == ' ' || *b == '\t'; b++)
		;
	for (e = b + strnlen(b, sizeof(buf) - 1); e > b && (e[-1] == ' ' || e[-1] == '\t'); e--)
		;
	n = (size_t)(e - b);
	memcpy(buf, b, n);
	buf[n] = 0;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)buf[i]) * 1099511628211ull;
	if (n) {
		id = str_id(st, NS_COMM, h, n, buf);
		if (!id)
			return;
	}
	if ((id ? id : UINT32_MAX) == t->comm)
		return;
	if (t->comm && st->acache) /* exec (usually): the process's code changed */
		for (size_t i = 0; i < (1u << ACACHE_BITS); i++)
			st->acache[i].pid = -2;
	p = out_rec(st, SNAP_DLREC_COMM, SNAP_DLREC_COMM_SIZE);
	if (!p)
		return;
	p = put32(p, (uint32_t)s->pid);
	p = put32(p, (uint32_t)s->tid);
	put32(p, id);
	t->comm = id ? id : UINT32_MAX; /* UINT32_MAX: known to have no comm */
}

/* ---- events ---- */

static int base_is(const char *name, size_t n, const char *want)
{
	return strlen(want) == n && !memcmp(name, want, n);
}

static struct evname *event_of(struct state *st, const char *name)
{
	struct evname *e;
	size_t i, n;

	if (!name)
		name = "";
	for (i = 0; i < st->nevs; i++) {
		e = &st->evs[i];
		if (e->ptr == name && !strcmp(e->copy, name))
			return e;
	}
	for (i = 0; i < st->nevs; i++) { /* perf's pointer changed: look up by content */
		if (!strcmp(st->evs[i].copy, name)) {
			st->evs[i].ptr = name;
			return &st->evs[i];
		}
	}
	if (st->nevs == NEVENT_KINDS)
		return NULL;
	e = &st->evs[st->nevs];
	e->copy = strdup(name);
	if (!e->copy)
		return NULL;
	e->ptr = name;
	e->has_time = -1;
	n = snap_evname_base(name, strlen(name)); /* as parse/perfscript cuts it */
	e->kind = EV_SAMPLE; /* the reader tells primary and extra events apart */
	if (base_is(name, n, SNAP_EVNAME_BRANCHES))
		e->kind = EV_BRANCH;
	else if (base_is(name, n, SNAP_EVNAME_CBR))
		e->kind = EV_POWER;
	if (snap_evname_is_synth(name, n))
		e->kind = EV_IGNORE; /* the text parser skips these too */
	e->copy[n] = 0;
	e->id = str_id(st, NS_EVENT, st->nevs, 0, e->copy);
	e->copy[n] = name[n];
	if (!e->id) {
		free(e->copy);
		e->copy = NULL;
		return NULL;
	}
	st->nevs++;
	return e;
}

static int is_plain_jump(uint32_t flags)
{
	return flags == SNAP_PF_BRANCH || flags == (SNAP_PF_BRANCH | SNAP_PF_CONDITIONAL);
}

static void encode_branch(uint8_t *p, const struct perf_dlfilter_sample *s, const struct loc *src,
			  const struct loc *dst)
{
	p = put32(p, s->flags);
	p = put32(p, (uint32_t)s->pid);
	p = put32(p, (uint32_t)s->tid);
	p = put32(p, 0);
	p = put64(p, s->time);
	p = put_loc(p, src);
	put_loc(p, dst);
}

static void do_branch(struct state *st, const struct perf_dlfilter_sample *s, void *ctx)
{
	struct loc src, dst;
	struct thr *t = thr_get(st, s->pid, s->tid);
	uint8_t *p;

	int plain = is_plain_jump(s->flags) || s->flags == (SNAP_PF_BRANCH | SNAP_PF_CALL) ||
		    s->flags == (SNAP_PF_BRANCH | SNAP_PF_RETURN);

	/* A comm changes only in the kernel: look again after anything but a plain
	 * call, return or jump (trace starts after syscalls, interrupts, ...), and
	 * before resolving: an exec empties the address cache. */
	if (!plain)
		thr_comm(st, t, s, ctx, 1);
	if (resolve_branch(st, s, ctx, 0, &src) || resolve_branch(st, s, ctx, 1, &dst)) {
		st->nerrors++;
		return;
	}
	if (t && !st->keepjumps && is_plain_jump(s->flags) && src.sym && src.sym == dst.sym &&
	    t->known && t->top_sym == src.sym) {
		/* Keep it in case it is the thread's last event (see the top comment). */
		if (s->time > t->last_time) {
			uint32_t kind = SNAP_DLREC_BRANCH, len = SNAP_DLREC_BRANCH_SIZE;

			memcpy(t->pending, &kind, 4);
			memcpy(t->pending + 4, &len, 4);
			encode_branch(t->pending + SNAP_DLREC_REC_HDR, s, &src, &dst);
			st->npending += !t->has_pending;
			t->has_pending = 1;
			t->pending_time = s->time;
		}
		st->ndropped++;
		return;
	}
	thr_comm(st, t, s, ctx, 0); /* a thread's first record */
	p = out_rec(st, SNAP_DLREC_BRANCH, SNAP_DLREC_BRANCH_SIZE);
	if (!p) {
		st->nerrors++;
		return;
	}
	encode_branch(p, s, &src, &dst);
	st->nbranch++;
	thr_sent(st, t, s->time);
	if (!t)
		return;
	/* What the text path leaves on top of the stack after this branch. */
	t->known = dst.sym &&
		   (s->flags == (SNAP_PF_BRANCH | SNAP_PF_CALL) ||
		    s->flags == (SNAP_PF_BRANCH | SNAP_PF_RETURN) || is_plain_jump(s->flags));
	t->top_sym = dst.sym;
	t->top_dso = dst.dso;
}

static void do_sample(struct state *st, const struct perf_dlfilter_sample *s, void *ctx,
		      const struct evname *e)
{
	struct thr *t = thr_get(st, s->pid, s->tid);
	struct loc ip;
	uint32_t n = 0, i;
	uint64_t k;
	uint8_t *p;

	thr_comm(st, t, s, ctx, 1); /* first: an exec empties the address cache */
	if (resolve_branch(st, s, ctx, 0, &ip))
		goto fail;
	for (k = 0; s->raw_callchain && k < s->raw_callchain_nr && n < SNAP_DLREC_MAX_FRAMES; k++) {
		uint64_t a = s->raw_callchain[k];

		if (a >= CONTEXT_MAX)
			continue; /* PERF_CONTEXT_KERNEL/USER/...: frames after it carry their mode */
		if (resolve_frame(st, s, ctx, a, &st->chain[n]))
			goto fail;
		n++;
	}
	p = out_rec(st, SNAP_DLREC_SAMPLE, SNAP_DLREC_SAMPLE_SIZE + n * SNAP_DLREC_LOC_SIZE);
	if (!p)
		goto fail;
	p = put32(p, e->id);
	p = put32(p, (uint32_t)s->pid);
	p = put32(p, (uint32_t)s->tid);
	p = put32(p, n);
	p = put64(p, s->time);
	p = put64(p, s->period);
	p = put_loc(p, &ip);
	for (i = 0; i < n; i++)
		p = put_loc(p, &st->chain[i]);
	st->nsample++;
	thr_sent(st, t, s->time);
	if (t)
		t->known = 0;
	return;
fail:
	st->nerrors++;
}

static void do_power(struct state *st, const struct perf_dlfilter_sample *s, void *ctx)
{
	struct thr *t = thr_get(st, s->pid, s->tid);
	uint32_t khz;
	struct loc ip;
	uint8_t *p;

	if (s->raw_size < 8 || !s->raw_data || resolve_branch(st, s, ctx, 0, &ip)) {
		st->nerrors++; /* this perf passes no cbr payload: use the text path */
		return;
	}
	memcpy(&khz, (const uint8_t *)s->raw_data + 4, 4);
	thr_comm(st, t, s, ctx, 0);
	p = out_rec(st, SNAP_DLREC_POWER, SNAP_DLREC_POWER_SIZE);
	if (!p) {
		st->nerrors++;
		return;
	}
	p = put32(p, (khz + 500) / 1000);
	p = put32(p, (uint32_t)s->pid);
	p = put32(p, (uint32_t)s->tid);
	p = put32(p, 0);
	p = put64(p, s->time);
	put_loc(p, &ip);
	thr_sent(st, t, s->time);
}

/* Sends the last dropped jump of each thread that had no later record, in time order. */
static void flush_pending(struct state *st)
{
	uint8_t *p;
	size_t i;

	while (st->npending) {
		struct thr *first = NULL;

		for (i = 0; i < st->thrcap; i++) {
			struct thr *t = &st->thrs[i];

			if (t->used && t->has_pending &&
			    (!first || t->pending_time < first->pending_time ||
			     (t->pending_time == first->pending_time && t->key < first->key)))
				first = t;
		}
		if (!first)
			break;
		first->has_pending = 0;
		st->npending--;
		p = out_rec(st, SNAP_DLREC_BRANCH, SNAP_DLREC_BRANCH_SIZE);
		if (!p)
			continue;
		memcpy(p, first->pending + SNAP_DLREC_REC_HDR, SNAP_DLREC_BRANCH_SIZE);
		st->nbranch++;
		st->ndropped--;
	}
}

/* Whether s (n bytes) holds a task line's name: perf changes comms there ("Comms"). */
static int has_task_name(const char *s, size_t n)
{
	static const char *const names[] = {"PERF_RECORD_COMM", "PERF_RECORD_FORK",
					    "PERF_RECORD_EXIT"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (memmem(s, n, names[i], strlen(names[i])))
			return 1;
	return 0;
}

/* A write of perf's: a task line in it (or cut by the previous one) moves comm_gen. */
static void task_text(struct state *st, const char *buf, size_t size)
{
	char w[2 * sizeof(st->task_tail)];
	size_t k = sizeof(st->task_tail), n = st->ntask_tail;

	memcpy(w, st->task_tail, n);
	memcpy(w + n, buf, size < k ? size : k);
	if (has_task_name(w, n + (size < k ? size : k)) || has_task_name(buf, size))
		st->comm_gen++;
	if (size >= k) {
		memcpy(st->task_tail, buf + size - k, k);
		st->ntask_tail = k;
	} else { /* keep the last k bytes of the old tail and buf */
		size_t keep = n + size > k ? k - size : n;

		memmove(st->task_tail, st->task_tail + n - keep, keep);
		memcpy(st->task_tail + keep, buf, size);
		st->ntask_tail = keep + size;
	}
}

/* perf writes to its stdout: the bytes become TEXT records, in sample order. */
static ssize_t text_write(void *cookie, const char *buf, size_t size)
{
	struct state *st = cookie;
	size_t done = 0;

	task_text(st, buf, size);
	if (!st->dead)
		flush_pending(st); /* dropped jumps that came before this text */
	while (done < size && !st->dead) {
		size_t n = size - done < SNAP_DLREC_MAX_STR ? size - done : SNAP_DLREC_MAX_STR;
		uint8_t *p = out_rec(st, SNAP_DLREC_TEXT, (uint32_t)n);

		if (!p)
			break;
		memcpy(p, buf + done, n);
		done += n;
	}
	return (ssize_t)size; /* never fail perf's printf */
}

static void text_open(struct state *st)
{
	cookie_io_functions_t fns = {.write = text_write};
	FILE *f = fopencookie(st, "w", fns);

	if (!f)
		return; /* perf's stdout stays: snaptrace reads it as a fallback */
	setvbuf(f, NULL, _IONBF, 0);
	fflush(stdout);
	st->saved_stdout = stdout;
	st->text = f;
	stdout = f;
}

static void text_close(struct state *st)
{
	if (!st->text)
		return;
	if (stdout == st->text)
		stdout = st->saved_stdout;
	fclose(st->text);
	st->text = NULL;
}

int filter_event_early(void *data, const struct perf_dlfilter_sample *sample, void *ctx)
{
	struct state *st = data;
	struct evname *e;

	if (!st || st->dead || !sample)
		return 1;
	e = event_of(st, sample->event);
	if (!e) {
		st->nerrors++;
		return 1;
	}
	if (e->has_time < 0) {
		struct perf_event_attr *attr =
			perf_dlfilter_fns.attr ? perf_dlfilter_fns.attr(ctx) : NULL;

		e->has_time = !attr || (attr->sample_type & PERF_SAMPLE_TIME);
		e->dwarf = attr && (attr->sample_type & PERF_SAMPLE_STACK_USER) &&
			   e->kind == EV_SAMPLE;
	}
	if (!e->has_time) {
		/* No timestamps (timeless PT): the text path's `perf script -F time`
		 * refuses such data, so fail the same way, before writing anything;
		 * snaptrace then falls back to the text path and reports perf's error. */
		st->dead = 1;
		return -1;
	}
	if (e->dwarf)
		return 0; /* perf unwinds and prints it: it comes back as TEXT (see the top) */
	switch (e->kind) {
	case EV_BRANCH:
		do_branch(st, sample, ctx);
		break;
	case EV_SAMPLE:
		do_sample(st, sample, ctx, e);
		break;
	case EV_POWER:
		do_power(st, sample, ctx);
		break;
	case EV_IGNORE:
		break;
	}
	return 1;
}

/* Only the samples filter_event_early let through get here: perf prints them. */
int filter_event(void *data, const struct perf_dlfilter_sample *sample, void *ctx)
{
	(void)data;
	(void)sample;
	(void)ctx;
	return 0;
}

/* ---- start / stop ---- */

static int parse_args(struct state *st, void *ctx)
{
	char **argv;
	int argc = 0, i;

	argv = perf_dlfilter_fns.args ? perf_dlfilter_fns.args(ctx, &argc) : NULL;
	for (i = 0; argv && i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "keepjumps")) {
			st->keepjumps = 1;
		} else if (!strcmp(a, "nocache")) {
			st->nocache = 1;
		} else if (!strcmp(a, "nostdout")) {
			st->nostdout = 1;
		} else if (!strcmp(a, "taskevents")) {
			st->taskevents = 1;
		} else if (!strncmp(a, "fd=", 3)) {
			char *end;
			long fd = strtol(a + 3, &end, 10);

			if (*end || fd < 0 || fd > 1 << 20)
				return -1;
			st->fd = (int)fd;
		} else {
			const char *path = strncmp(a, "path=", 5) ? a : a + 5;

			st->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (st->fd < 0)
				return -1;
			st->own_fd = 1;
		}
	}
	return st->fd >= 0 ? 0 : -1;
}

/* Whether perf runs with --show-task-events ("Comms"): its command line, as the kernel
 * keeps it (NUL-separated). Anything unreadable or cut short counts as no. */
static int perf_shows_task_events(void)
{
	static const char want[] = "--show-task-events";
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	int fd, found = 0;

	if (!buf)
		return 0;
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	if (fd >= 0)
		close(fd);
	for (size_t i = 0; i < n && n < cap;) {
		size_t len = strnlen(buf + i, n - i);

		if (len == sizeof(want) - 1 && !memcmp(buf + i, want, len))
			found = 1;
		i += len + 1;
	}
	free(buf);
	return found;
}

static void state_free(struct state *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->strcap; i++)
		free(st->strs[i].str);
	for (i = 0; i < st->nevs; i++)
		free(st->evs[i].copy);
	free(st->strs);
	free(st->thrs);
	free(st->acache);
	free(st->chain);
	free(st->out);
	free(st);
}

int start(void **data, void *ctx)
{
	struct state *st = calloc(1, sizeof(*st));
	uint32_t v;
	size_t i;

	*data = NULL;
	if (!st)
		return -1;
	if (!perf_dlfilter_fns.resolve_ip || !perf_dlfilter_fns.resolve_addr ||
	    !perf_dlfilter_fns.resolve_address) {
		free(st); /* a perf without them cannot give what the text path shows */
		return -1;
	}
	st->fd = -1;
	st->next_id = 1;
	st->out = malloc(OUT_CAP);
	st->chain = calloc(SNAP_DLREC_MAX_FRAMES, sizeof(*st->chain));
	if (!st->out || !st->chain || parse_args(st, ctx)) {
		state_free(st);
		return -1; /* perf reports the failure and stops */
	}
	if (!st->taskevents)
		st->taskevents = perf_shows_task_events();
	if (!st->nocache) {
		st->acache = malloc(sizeof(*st->acache) << ACACHE_BITS);
		for (i = 0; st->acache && i < (1u << ACACHE_BITS); i++)
			st->acache[i].pid = -2;
	}
	memcpy(st->out, SNAP_DLREC_MAGIC, SNAP_DLREC_MAGIC_LEN);
	v = SNAP_DLREC_VERSION;
	memcpy(st->out + 8, &v, 4);
	v = SNAP_DLREC_HDR_SIZE;
	memcpy(st->out + 12, &v, 4);
	st->outlen = SNAP_DLREC_HDR_SIZE;
	if (!st->nostdout)
		text_open(st);
	*data = st;
	return 0;
}

int stop(void *data, void *ctx)
{
	struct state *st = data;
	uint8_t *p;

	(void)ctx;
	if (!st)
		return 0;
	text_close(st);
	flush_pending(st);
	p = out_rec(st, SNAP_DLREC_END, SNAP_DLREC_END_SIZE);
	if (p) {
		p = put64(p, st->nrec);
		p = put64(p, st->nbranch);
		p = put64(p, st->nsample);
		p = put64(p, st->ndropped);
		put64(p, st->nerrors);
	}
	out_flush(st);
	if (st->own_fd || st->fd > 2)
		close(st->fd); /* EOF for snaptrace now, not when perf exits */
	state_free(st);
	return 0;
}

const char *filter_description(const char **long_description)
{
	if (long_description)
		*long_description =
			"Writes decoded samples as snaptrace records (model/dlrec.h) to "
			"--dlarg fd=N or --dlarg path=FILE and hides them from perf's "
			"output.";
	return "snaptrace record writer";
}
