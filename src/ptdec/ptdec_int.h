/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to the in-process PT decoder (src/ptdec): the decoder's state and
 * the functions its files share. ptdec.c has the overview (pieces, workers,
 * the merge) and the public API; sideband.c the images, maps, switches and
 * symbols; split.c cuts the AUXTRACE buffers into pieces; decode.c decodes
 * one piece into raw events (the fast walk, else libipt's decoder; the files
 * of that job share piece.h); insn.c
 * holds the code a worker walks (images, instructions, block and run caches);
 * pool.c runs the worker threads.
 */
#ifndef SNAP_PTDEC_PTDEC_INT_H
#define SNAP_PTDEC_PTDEC_INT_H

#include <intel-pt.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ptdec/elfsyms.h"
#include "ptdec/pdata.h"
#include "ptdec/ptdec.h"
#include "ptdec/timing.h"
#include "util/u64map.h"

#define AUTO_PIECE	 (16u << 10)
#define ACACHE_BITS	 10 /* the locations' table starts with 1 << ACACHE_BITS slots */
#define WINDOW_PER_J	 4
#define NO_IDX		 ((size_t)-1)
/* A piece hands its events to the reader in segments of at most AUTO_EVCAP
 * final events ($SNAPTRACE_PTDEC_CAP sets it; pool.c), and the pieces decoded
 * ahead of the reader hold at most WINDOW_BYTES of them (docs/ptdec.md). */
#define AUTO_EVCAP	 16384u
#define WINDOW_BYTES	 (16u << 20)
#define READER_CAPS	 2 /* a piece the reader decodes holds up to 2 segments' worth */
/* A piece the reader is to decode that has READER_CAPS segments' worth of
 * bytes at this many bytes an event goes to a helper thread before the reader
 * starts it: it would likely reach them (pool.c, reader_decode). */
#define READER_EV_BYTES	 2
#define DROPQ		 8 /* the drops the reader leaves to the workers (pool.c) */
/* A page fault maps the pages around it that the kernel has (fault-around):
 * dropping the bytes before the token reader drops this many more (machine.c;
 * a whole drop goes back to the start of the 2 MiB span: ptd_drop_bytes). */
#define PTD_FAULT_AROUND (64u << 10)

enum { RAW_BRANCH = 1, RAW_ERROR, RAW_POWER };

/* perf's decoder errors; their messages are err_msgs in ptdec.c. */
enum {
	ERR_NOINSN = 0,
	ERR_MISMAT,
	ERR_BADPKT,
	ERR_OVR,
	ERR_LOST,
	ERR_NODATA,
	ERR_INTERN,
	ERR_NELOOP,
};

struct lent;

/* An event of a piece as perf reports it (machine.c), before the reader joins
 * the pieces and resolves the addresses (ptdec.c). Written by the piece's
 * decoder, prepared by its producer (a branch's flags and locations, over its
 * raw fields: pool.c, prep_events) and read by the reader, so its every byte is
 * paid three times a branch (docs/ptdec.md, "Memory"). */
struct rawev {
	uint64_t time;
	union {
		uint64_t ip;	 /* RAW_BRANCH, RAW_ERROR: where from (0: nowhere) */
		struct lent *sl; /* a prepared RAW_BRANCH: ip's location */
	};
	union {
		uint64_t addr;	 /* RAW_BRANCH: where to (0: tracing stops) */
		uint64_t cbr;	 /* RAW_POWER: the core:bus ratio */
		struct lent *dl; /* a prepared RAW_BRANCH: addr's location */
	};
	int32_t pid, tid;
	union {
		uint32_t flags;	 /* RAW_BRANCH: perf's branch flags (SNAP_PF_*) */
		uint8_t evfl[4]; /* prepared: the event's has_time, br_kind, br_state, in_tx */
	};
	uint8_t kind, err; /* RAW_*; RAW_ERROR: perf's error (ERR_*) */
	uint8_t implicit;  /* of a piece's first sync (its cbr and "tr strt", whose time
			    * after an error is the piece's strt_time): dropped when the
			    * piece continues a stream, unless perf resynced there after
			    * an error (ptdec.c, queue_peek) */
	uint8_t est; /* its time is perf's estimate (an error, a start of tracing, a branch from
		      * the kernel or 0 to user space): not raised to the queue's time */
};
/* A prepared branch's locations are stored over its addresses. */
_Static_assert(sizeof(struct lent *) <= sizeof(uint64_t), "a location over an address");
/* Every byte of a raw event is paid three times a branch: its size is kept. */
_Static_assert(sizeof(struct rawev) == 40, "a raw event's size (docs/ptdec.md, \"Memory\")");

struct mapping {
	uint64_t start, len, pgoff;
	size_t dso;
	int32_t pid;
};

struct dso {
	char *path;    /* the file its code is read from (a user DSO's mmap path) */
	char *symfile; /* the ELF its symbols come from, NULL = path */
	char *ksyms;   /* or a kallsyms file */
	uint32_t name; /* strtab id: the name perf gives the DSO */
	int loaded, missing, isid;
	int vaddr;	/* kernel: symbols by virtual address, ip - reloc (else by file offset) */
	uint64_t reloc; /* KASLR: run-time address - the vmlinux's address */
	struct snap_elfsyms syms;
};

/* A kernel mmap (pid -1: [kernel.kallsyms]_text or a module) before the
 * kernel's code source is chosen (sideband.c, kernel_setup). */
struct kmmap {
	uint64_t start, len, pgoff;
	const char *name;
	size_t namelen;
};

struct proc {
	int32_t pid;
	struct pt_image *img;
	size_t *mi; /* its mappings: indices into maps, in order (a fork's copy first) */
	size_t nmi, capmi;
};

struct sw {
	uint64_t time;
	int32_t pid, tid, cpu;
	uint32_t seq; /* file order, for a stable sort */
};

struct comm {
	uint64_t time;
	int32_t tid;
	uint32_t name;
};

/* Where a piece is in the pool (pool.c), under the decoder's lock. A piece is
 * zeroed when it is cut (split.c), so it starts waiting. */
enum piece_state {
	PIECE_WAITING = 0, /* not handed out yet */
	PIECE_RUNNING,	   /* a worker (or the reader) decodes it */
	PIECE_DONE,	   /* its events are ready */
	PIECE_RELEASED,	   /* read, its event array given back */
};

struct piece {
	size_t q;
	const uint8_t *b, *e;
	int run_start; /* first piece of its queue */
	int buf_start; /* first piece of its AUXTRACE buffer */
	int has_stop;
	uint64_t stop_ip;
	uint64_t start_time; /* perf time of the PSB+ TSC, for ordering */
	int32_t pid, tid, cpu;
	enum piece_state state;
	int end_clean;
	int walked;	    /* decoded by the fast walk (walk.c) */
	int err_open;	    /* ends in perf's error recovery: its resync is the next piece's FUP */
	uint64_t strt_time; /* its implicit "tr strt": perf's time for it when the previous
			     * piece ended in an error (0 when timeless) */
	uint64_t insns, unwalked;
	struct rawev *ev;
	size_t nev, cap;
	/* timing (timing.c) */
	size_t qpos;	   /* index in its queue */
	const uint8_t *be; /* end of its AUXTRACE buffer (perf looks ahead up to it) */
	uint64_t ref;	   /* the buffer's reference TSC */
	struct ptt tin;	   /* perf's clock at its start (with CYC or MTC timing) */
	int tin_set;	   /* tin is known */
	/* streaming (pool.c): the reader takes the final events in segments */
	struct rawev *pub; /* a segment handed on, not taken by the reader yet (NULL: none) */
	size_t npub, cappub;
	size_t nfinal;		/* events made final by this decode so far (handed on or dropped) */
	size_t skip;		/* the first events, handed on by the fast walk before it gave up */
	int big;		/* on a helper: long in bytes, or the reader gave it up */
	const uint8_t *dropped; /* its bytes before this left memory (ptd_drop_bytes) */
	int has_helper;
	pthread_t helper;  /* the thread decoding a big piece, joined at its release */
	struct wctx *hctx; /* that thread's context (owned), to its queue's at the release */
	struct wctx *w;	   /* the context of the thread decoding it (pool.c: prep_events) */
	int raw; /* the reader decoded it: its events are prepared as they are read (ptdec.c) */
};

/* A memo of thread tid's command: val from perf time from on, for span (val 0:
 * span 0, never used; sideband.c, ptd_comm_memo). */
struct cmemo {
	int32_t tid;
	uint32_t val;
	uint64_t from, span;
};

struct queue {
	uint32_t idx;
	int32_t tid, cpu;
	size_t *pieces; /* indices into d->pieces, in stream order */
	size_t npieces, cappieces;
	size_t cur, pos;
	const struct rawev *head; /* the next event, once peeked (NULL: peek again) */
	struct rawev *rev;	  /* the segment of piece cur being read, rn events */
	size_t rn, rcap;
	int rok, rlast; /* rev is set; it is the piece's last segment (the piece is done) */
	int raw;	/* rev's branches are not prepared yet (its piece's raw) */
	int head_ok, prev_clean, prev_err_open;
	int64_t last_cbr;   /* -1 = none reported yet */
	uint64_t ts;	    /* perf's queue timestamp (ptq->timestamp) */
	struct cmemo cmemo; /* its branches' commands (ptdec.c, lead_run) */
	size_t tnext;	    /* timing.c: pieces whose starting clock is known */
	struct ptt tcur;    /* timing.c: the clock at the start of piece tnext */
	/* pool.c: the bytes of the pieces released since the last drop */
	const uint8_t *drop_lo, *drop_hi;
	struct wctx *hctx; /* pool.c: its last helper's context, for its next piece's */
};

/* A branch event's bytes from has_time to src: has_time, br_kind, br_state, in_tx
 * (struct rawev's evfl), then sw_out, sw_preempt, task_exit and the padding (zero). */
#define PTD_EV_FLAGS_AT offsetof(struct snap_event, has_time)
_Static_assert(offsetof(struct snap_event, in_tx) == PTD_EV_FLAGS_AT + 3 &&
		       offsetof(struct snap_event, src) == PTD_EV_FLAGS_AT + 8,
	       "evfl's 4 bytes, then 4 zero ones");
/* The flag values whose evfl bytes d->fltab holds (all that perf's decoder gives
 * but VMENTRY, VMEXIT and the INTR bits, which newer perf only sets). */
#define FLTAB_N 0x800u

/* A location of the trace: an address of a process and its DSO, symbol and
 * offset (sideband.c, ptd_locate). Made by any decode thread, under d->symu;
 * the reader interns its symbol's name when it first reads it (ptd_name_loc),
 * so names get their strtab ids in the order of the events, whatever -j is.
 * Entries never move (blocks of LENT_BLOCK) and live until close. */
struct lent {
	struct snap_loc loc; /* loc.sym: 0 until named */
	const char *name;    /* the symbol's name (borrowed from its DSO's symbols), NULL:
			      * "[unknown @ ...]" */
	int named;	     /* loc is final (the reader's: workers do not read it) */
};

#define LENT_BLOCK 255

struct lblock {
	struct lblock *next;
	size_t n;
	struct lent e[LENT_BLOCK];
};

/* A slot of the locations' table by process and address (sideband.c, ptd_locate;
 * under d->symu; e NULL: free). */
struct aent {
	uint64_t ip;
	int32_t pid;
	struct lent *e; /* NULL: unused slot */
};

/* A decode thread's own cache of locations (pool.c, LCACHE_BITS slots; e NULL: unused). */
#define LCACHE_BITS 12
struct lslot {
	uint64_t ip;
	int32_t pid;
	struct lent *e;
};

/* Where a section of the image-section cache lies (insn.c: ptd_add_section):
 * read without libipt's locks. */
struct secbound {
	uint64_t vaddr, size;
};

struct snap_ptdec {
	struct snap_pd pd;
	const void *map;
	size_t maplen;
	size_t pagesz; /* with map: the page size, for ptd_drop_bytes */
	int fd;	       /* the mapped file's descriptor until the buffers are cut (split.c), or -1 */
	struct snap_strtab *names;
	struct snap_ptdec_opts o;
	char debug_dir[256];
	int timeless, per_cpu, snapshot;
	struct mapping *maps;
	size_t nmaps, capmaps;
	struct dso *dsos;
	size_t ndsos, capdsos;
	struct proc *procs;
	size_t nprocs, capprocs;
	struct sw *sws; /* switch-ins and itrace starts, by cpu then time */
	size_t nsws, capsws;
	struct comm *comms;
	size_t ncomms, capcomms;
	struct snap_u64map tidpid;
	struct kmmap *kmms; /* kernel mmaps, in time order */
	size_t nkmms, capkmms;
	struct pt_image *kimg;	/* the kernel's sections, in every process image; NULL = none */
	char kcore_dir[4096];	/* perf.data directory's kcore_dir (record --kcore), "" = none */
	char buildid_dir[4096]; /* perf's build-id cache: $HOME/.debug */
	size_t nforked;		/* mapping indices copied by forks (bounded: MAX_FORKED) */
	char notsup[512];	/* why the sideband is not supported (ENOTSUP), else "" */
	struct pt_image_section_cache *iscache;
	struct secbound *secs; /* by isid: each section's addresses (ptd_add_section) */
	size_t nsecs;
	struct queue *queues;
	size_t nqueues, capqueues;
	struct piece *pieces;
	size_t npieces, cappieces;
	size_t *order; /* pieces in dispatch order */
	size_t dispatched, live, window;
	int rahead;   /* one worker: the reader decodes the next piece rather than wait (pool.c) */
	size_t evcap; /* final events per segment (0: a piece holds all its events) */
	size_t long_bytes; /* a piece this long goes to a helper before the reader starts it */
	struct {
		struct rawev *ev;
		size_t cap;
	} * spare; /* event arrays of released pieces, for the next ones (at most window) */
	size_t nspare;
	pthread_mutex_t mu;
	pthread_cond_t cv_work, cv_done, cv_pub;
	pthread_t *threads;
	int nthreads, stop, threads_started;
	const struct piece *rwait; /* the piece the reader waits for (pool.c), NULL: none */
	struct {
		const uint8_t *b, *e;
	} drops[DROPQ]; /* bytes the reader is done with, for a worker to drop (pool.c) */
	size_t ndrops;
	size_t nreleased;    /* pieces the reader has released (pool.c) */
	struct aent *acache; /* the locations by process and address: open addressing */
	unsigned abits;	     /* 1 << abits slots, of which nalocs used */
	size_t nalocs;
	size_t lead, rival_q; /* the merge: the queue consumed last, the best other one */
	const struct rawev *rival;
	pthread_mutex_t symu; /* guards the symbols and locations (sideband.c, ptd_locate) */
	int symu_init;
	struct lblock *lblocks; /* the locations (ptd_locate), newest first */
	struct wctx *rctx;	/* the reader's own context (pool.c) */
	struct lent lnone;	/* the location of address 0 (named) */
	struct lent loom;	/* a location its producer could not get, out of memory (never
			   * named: the reader fails on it, ptdec.c, branch_event) */
	int use_blocks; /* libipt's block decoder and our block cache (else per instruction) */
	int walk; /* the fast walk: 0 off, 1 on, 2 checked against libipt (decode.c, walk.c) */
	uint64_t cbr2khz;
	unsigned max_non_turbo; /* perf's maximum non-turbo ratio (AUXTRACE_INFO or the TSC's) */
	struct ptt_params tparams;
	int tscan;	     /* CYC or MTC timing: piece clocks come from a scan (timing.c) */
	pthread_mutex_t tmu; /* guards the scan */
	int tmu_init;
	int debug;	    /* $SNAPTRACE_PTDEC_DEBUG: each event on stderr (2: each token too) */
	struct cmemo cmemo; /* the reader's (ptd_comm_at) for the events but branches */
	uint32_t fltab[FLTAB_N]; /* the evfl bytes of each flag value (pool.c, prep_events) */
	/* the piece decoders prepare each branch as they emit it (piece.h, ptd_emit_branch),
	 * not in a pass over the events after (prep_events): but for the self-check, which
	 * compares raw events, and $SNAPTRACE_PTDEC_DEBUG (the reader describes them) */
	int prep_emit;
	struct snap_ptdec_stats st;
	struct snap_loc evframes[1];
	int fill_err; /* snap_ptdec_fill's error after the events before it, for the next call */
};

/* An instruction as the piece decoder needs it (from libipt's instruction
 * decoder, or replayed from the block or run cache). */
struct cinsn {
	uint64_t ip;
	uint64_t target; /* a direct branch's target, 0 if none or not direct */
	uint32_t flags;	 /* perf's branch flags for its class, 0 = not a branch */
	uint8_t size;
	uint8_t cond;  /* a conditional jump */
	uint8_t trace; /* libipt needed trace to get past it */
	uint8_t cls;   /* its enum pt_insn_class */
};

struct bentry;

/* A run (insn.c): the instructions the walk executes from ip up to and
 * including the first one that needs trace, following direct jumps and calls. */
struct run {
	uint64_t ip;
	int32_t pid;
	uint32_t n;	  /* instructions (0: the code could not be walked) */
	uint32_t first;	  /* the first in wctx.rinsns */
	uint32_t br, nbr; /* its direct branches (all but the last instruction): their
			    * indices in the run, from wctx.rbr[br] */
	uint8_t used;
	uint8_t callnext;   /* it has a call to the next instruction */
	uint8_t asked, has; /* ptd_run_has's memo: whether it holds asked_ip */
	uint64_t asked_ip;
};

struct wctx {
	struct snap_ptdec *d;
	struct bentry *bcache; /* the block cache (BCACHE_BITS slots) */
	struct cinsn *binsns;  /* the instructions of the cached blocks */
	size_t nbinsns, capbinsns;
	struct run *rcache;   /* the run cache (RCACHE_BITS slots) */
	struct cinsn *rinsns; /* the instructions of the cached runs */
	size_t nrinsns, caprinsns;
	uint32_t *rbr; /* the indices of their direct branches */
	size_t nrbr, caprbr;
	struct proc *imgs; /* this worker's copies of the process images */
	size_t nimgs, capimgs;
	int can_block; /* a thread that may wait for the reader to take a segment (not the reader) */
	unsigned rshift; /* the run cache has 1 << (64 - rshift) slots (insn.c: it grows) */
	size_t rused;	 /* of which rused are used */
	/* pool.c: the branches' locations, set as they are handed on */
	struct lslot *lcache; /* LCACHE_BITS slots, allocated on first use */
};

/* ---- small helpers ---- */

/* perf time of a TSC value, with the recording's TIME_CONV. */
static inline uint64_t tsc2perf(const struct snap_ptdec *d, uint64_t tsc)
{
	return snap_pd_tsc_to_perf(&d->pd.tc, tsc);
}

/* The process of thread tid as the sideband last told (tid itself when it did
 * not; -1 for a negative tid). */
static inline int32_t pid_of(const struct snap_ptdec *d, int32_t tid)
{
	uint64_t v;

	if (tid < 0)
		return -1;
	if (snap_u64map_get(&d->tidpid, (uint32_t)tid, &v))
		return (int32_t)v;
	return tid;
}

/* ptdec.c */
/* Describes raw event r (borrowed) in buf (len bytes, NUL-terminated): its kind,
 * addresses or error or ratio, time, pid/tid and marks ("branch 0x401000 ->
 * 0x401020 flags 0x2 t=1000 7/7 estimated"). For $SNAPTRACE_PTDEC_DEBUG and
 * the fast walk's self-check. Returns buf. */
const char *ptd_rawev_desc(const struct rawev *r, char *buf, size_t len);
/* sideband.c */
/* Reads the sideband records of d->pd in time order: mmaps into the process
 * images and DSOs, comms, forks, switches (sorted by CPU and time), the kernel's
 * image. 0, -SNAP_ENOTSUP with d->notsup saying why, or -ENOMEM (-errno). */
int ptd_read_sideband(struct snap_ptdec *d);
/* 1 when the kernel's symbols (loaded here if not yet) have __switch_to, where
 * perf's sync_switch ties per-CPU context switches to the trace; else 0. */
int ptd_kernel_switch_sym(struct snap_ptdec *d);
/* The task on cpu at perf time t: its last switch-in at or before t, else the
 * CPU's first; NULL when the CPU has none. Borrowed from d. */
const struct sw *ptd_task_at(const struct snap_ptdec *d, int32_t cpu, uint64_t t);
/* The location of ip (not 0) in process pid: its DSO, symbol and offset, the
 * symbol's name not interned yet (ptd_name_loc); cached in d, owned by d. Any
 * thread (takes d->symu). NULL: out of memory. */
struct lent *ptd_locate(struct snap_ptdec *d, int32_t pid, uint64_t ip);
/* Interns the name of location e (from ptd_locate) in d->names ("[unknown @
 * ...]" when it has no symbol): e->loc is final. Reader thread only. 0, or
 * -ENOMEM. */
int ptd_name_loc(struct snap_ptdec *d, struct lent *e);
/* Sets *m to thread tid's command at perf time t, the id in d->names of its last
 * COMM at or before t, else of its first (0 if it has none), and for how long it
 * is that. Any thread (d->comms is read only once the sideband is read). */
void ptd_comm_memo(const struct snap_ptdec *d, int32_t tid, uint64_t t, struct cmemo *m);
/* ptd_comm_memo's command, from memo m when it holds (tid, t). */
static inline uint32_t ptd_comm_at(const struct snap_ptdec *d, struct cmemo *m, int32_t tid,
				   uint64_t t)
{
	if (tid != m->tid || t - m->from >= m->span)
		ptd_comm_memo(d, tid, t, m);
	return m->val;
}
/* split.c */
extern const uint8_t ptd_psb[16]; /* a PSB packet */
/* Splits every AUXTRACE buffer of d->pd into pieces (at the first PSB after
 * piece_bytes) on the queue of its AUXTRACE queue, with each piece's start time
 * and the FUP where it stops. 0, or -ENOMEM. Pieces borrow the buffers' bytes. */
int ptd_split_buffers(struct snap_ptdec *d);
/* insn.c */
/* Writes a made-up synchronisation to buf: PSB+ (64-bit code, the TSC when tsc is set)
 * and TIP.PGE to ip. Its length, or -1 when it does not fit in len. */
int ptd_encode_sync(uint8_t *buf, size_t len, uint64_t ip, const uint64_t *tsc);
/* pt_iscache_add_file on d's image-section cache, also noting where the
 * section lies (its size cut at the end of the file, as libipt cuts it), so
 * that the workers check instruction bounds without libipt's locks. The
 * section's isid, or libipt's error (< 0). Before the workers start only. */
int ptd_add_section(struct snap_ptdec *d, const char *path, uint64_t off, uint64_t size,
		    uint64_t vaddr);
/* Whether the size bytes at ip lie inside section isid (pt_iscache_read would
 * read them all), from the bounds ptd_add_section noted; no lock taken. */
int ptd_in_section(const struct snap_ptdec *d, int isid, uint64_t ip, uint64_t size);
/* Worker w's own copy of process pid's image (the kernel's for a pid without
 * mappings), made on first use; owned by w until wctx_fini. NULL: out of memory. */
struct pt_image *ptd_wimage(struct wctx *w, int32_t pid);
/* Frees w's images and caches (owned by w) and zeroes them; w->d is kept. */
void ptd_wctx_fini(struct wctx *w);
/* Fills *c from libipt's instruction in: ip, size, perf's branch flags for its
 * class, a direct target, whether it is conditional and whether it needs trace. */
void ptd_cinsn_of(struct cinsn *c, const struct pt_insn *in);
/* The blk->ninsn instructions of libipt block blk of process pid, expanded once
 * and cached in w; borrowed until the next bcache_get on w. NULL when the block
 * cannot be expanded (32-bit code, unreadable code) or out of memory. */
const struct cinsn *ptd_bcache_get(struct wctx *w, int32_t pid, const struct pt_block *blk);
/* The run of process pid from ip (struct run), filled once and cached in w;
 * borrowed until the next run_get on w. NULL when the code there cannot be
 * walked to an instruction that needs trace, or out of memory. */
struct run *ptd_run_get(struct wctx *w, int32_t pid, uint64_t ip);
/* Whether the run holds ip after its first instruction (remembered for the last ip). */
int ptd_run_has(const struct wctx *w, struct run *r, uint64_t ip);
/* The run cache's hash of a run's process and first ip (insn.c). */
static inline uint64_t ptd_run_hash(int32_t pid, uint64_t ip)
{
	return (ip ^ ((uint64_t)(uint32_t)pid << 40)) * 0x9e3779b97f4a7c15ull;
}
/* ptd_run_get, inline when the run is in its own slot (what the fast walk
 * finds nearly every time: walk.c). */
static inline struct run *ptd_run_find(struct wctx *w, int32_t pid, uint64_t ip)
{
	if (w->rcache) {
		struct run *r = &w->rcache[ptd_run_hash(pid, ip) >> w->rshift];

		if (r->used && r->ip == ip && r->pid == pid)
			return r->n ? r : NULL;
	}
	return ptd_run_get(w, pid, ip);
}
/* decode.c: decodes piece pc (borrowed; its events into pc->ev, owned by the piece)
 * with worker context w. 0, or -ENOMEM. */
int ptd_decode_piece(struct wctx *w, struct piece *pc);
/* timing.c: perf's clock at the start of piece pc (scans the pieces before it
 * that no walk has given the clock after) */
void ptd_piece_clock(struct snap_ptdec *d, struct piece *pc, struct ptt *out);
/* timing.c: perf's clock *end after every packet of piece pc, as the fast walk
 * read them: the next piece's start when no scan got there first (with
 * $SNAPTRACE_PTDEC_WALK=check it must equal the scan's, else abort). */
void ptd_piece_clock_end(struct snap_ptdec *d, const struct piece *pc, const struct ptt *end);
/* pool.c */
/* The next segment of piece i for the reader: *ev (owned by the reader until
 * ptd_release_segment, or by the piece when *last), *n events, *cap its size;
 * *last when it is the piece's last. Waits for it, decoding the piece on the
 * calling (reader) thread if no worker has taken it yet (or on a helper thread
 * when it holds too many events for that); with d->rahead, decoding the pieces
 * no one has started next rather than wait for a worker's. */
void ptd_next_segment(struct snap_ptdec *d, size_t i, struct rawev **ev, size_t *n, size_t *cap,
		      int *last);
/* The reader is done with a segment that was not a piece's last (ev, cap: from
 * ptd_next_segment): kept for a later one or freed. */
void ptd_release_segment(struct snap_ptdec *d, struct rawev *ev, size_t cap);
/* The producer of piece pc hands its events pc->ev[0..n) (final) to the reader,
 * waiting while the last segment is not taken; pc->ev then holds the rest
 * (pc->nev - n events, moved to the front). 0, -ENOMEM, or -ECANCELED when
 * the decoder closes. */
int ptd_publish(struct snap_ptdec *d, struct piece *pc, size_t n);
/* The bytes b..e of the perf.data mapping (borrowed) are read: the pages
 * entirely before e leave the process's memory (read again from the file if
 * needed), from b's page, or when whole from the start of b's 2 MiB span (all
 * a read of b may have mapped: SNAP_PD_DROP_SPAN); e's page too at the end of
 * the file. A no-op on memory that is not the file's mapping
 * (snap_ptdec_open_mem). */
void ptd_drop_bytes(const struct snap_ptdec *d, const uint8_t *b, const uint8_t *e, int whole);
/* Cuts the perf.data mapping into areas of MAP_SLICE bytes (madvise) that no
 * large folio of the page cache fits in, so that a read fault maps only the
 * pages around it (fault-around), not a whole folio of up to 2 MiB (Linux
 * 6.18 maps a folio whole when it lies inside one area: docs/ptdec.md,
 * "Memory"). At open, once. */
void ptd_slice_map(struct snap_ptdec *d);
/* The reader is done with piece pc: its events (owned by the piece) are freed or
 * kept for a later piece, and a worker may start the next one. */
void ptd_release_piece(struct snap_ptdec *d, struct piece *pc);
/* Orders the pieces by start time and starts the decode threads (none for one
 * job: the reader decodes every piece). 0, or -ENOMEM. */
int ptd_start_pool(struct snap_ptdec *d);
/* Stops and joins the workers and frees the pool's state (spare event arrays, the
 * reader's own context). */
void ptd_stop_pool(struct snap_ptdec *d);
/* ptd_wlocate's miss: ptd_locate's location, remembered in slot l of w's cache
 * (d->lnone for ip 0, d->loom when out of memory). */
struct lent *ptd_wlocate_miss(struct wctx *w, struct lslot *l, int32_t pid, uint64_t ip);
/* The evfl bytes of branch flags flags: has_time, br_kind, br_state, in_tx. */
uint32_t ptd_flags_bytes(uint32_t flags);

/* Allocates w's location cache (w->lcache) if it has none: 0, or -ENOMEM. */
int ptd_wctx_lcache(struct wctx *w);

/* The location of ip in process pid for a branch of w's thread, from its own
 * cache (w->lcache: set) first (d->loom: out of memory). */
static inline struct lent *ptd_wlocate(struct wctx *w, int32_t pid, uint64_t ip)
{
	struct lslot *l = &w->lcache[((ip ^ (uint64_t)(uint32_t)pid) * 0x9e3779b97f4a7c15ull) >>
				     (64 - LCACHE_BITS)];

	if (l->ip == ip && l->pid == pid && l->e) /* (ip 0 is never cached) */
		return l->e;
	return ptd_wlocate_miss(w, l, pid, ip);
}

/* The evfl bytes of branch flags flags (as a word: struct rawev's flags). */
static inline uint32_t ptd_evfl(const struct snap_ptdec *d, uint32_t flags)
{
	return flags < FLTAB_N ? d->fltab[flags] : ptd_flags_bytes(flags);
}

/* Prepares branch r for the reader, over its raw fields: its flags' event bytes
 * and its locations (d->loom when out of memory: the reader fails there), with
 * w's cache (w->lcache: set). Everything is looked up before r's stores. */
__attribute__((always_inline)) static inline void ptd_prep_branch(struct wctx *w, struct rawev *r)
{
	uint32_t fl = ptd_evfl(w->d, r->flags);
	struct lent *sl = ptd_wlocate(w, r->pid, r->ip), *dl = ptd_wlocate(w, r->pid, r->addr);

	memcpy(r->evfl, &fl, sizeof(r->evfl));
	r->sl = sl;
	r->dl = dl;
}

#endif
