// SPDX-License-Identifier: GPL-2.0
#include "record/trigger.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/dwline.h"
#include "record/elfsym.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/file.h"
#include "util/u64map.h"
#include "util/vec.h"

struct mapping {
	uint64_t start, end, off;
	uint64_t dev, ino; /* the file (major << 32 | minor) */
	int exec;
	char path[PATH_MAX];
};

/* The most distinct files (after the executable) a name is looked for in: a
 * process maps a few hundred at most; another user's process could map 65530
 * (and search them thrice: exact, demangled, suffix). */
#define TRIGGER_MAX_FILES 4096

/* Parses one /proc/PID/maps line; returns 1 for a file-backed mapping. */
static int parse_maps_line(const char *line, struct mapping *m)
{
	char perms[8];
	unsigned long long s, e, off, ino;
	unsigned maj, min;
	int n = 0;
	const char *p;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &s, &e, perms, &off, &maj, &min, &ino,
		   &n) < 7 ||
	    !n)
		return 0;
	p = line + n;
	while (*p == ' ')
		p++;
	if (*p != '/')
		return 0;
	snprintf(m->path, sizeof(m->path), "%.*s", (int)strcspn(p, "\n"), p);
	m->start = s;
	m->end = e;
	m->off = off;
	m->dev = (uint64_t)maj << 32 | min;
	m->ino = ino;
	m->exec = perms[2] == 'x';
	return 1;
}

/* The runtime address of file offset off of path: through its executable
 * mapping in maps (/proc/PID/maps). Returns 0 or -ENOENT. */
static int offset_to_addr(FILE *maps, const char *path, uint64_t off, uint64_t *addr)
{
	char line[PATH_MAX + 128];

	rewind(maps);
	while (fgets(line, sizeof(line), maps)) {
		struct mapping m;

		if (!parse_maps_line(line, &m) || strcmp(m.path, path) || !m.exec)
			continue;
		if (off >= m.off && off - m.off < m.end - m.start) {
			*addr = m.start + (off - m.off);
			return 0;
		}
	}
	return -ENOENT;
}

/* How resolve_in_file matches a name: the symbol's own name, its demangled
 * name, or a trailing "::" part of that (docs/recording.md, "Triggers"). */
enum name_match { MATCH_EXACT, MATCH_DEMANGLED, MATCH_SUFFIX };

/* Looks name up in the ELF file at path and maps it to a runtime address
 * using the executable mappings of that path in maps; the name perf shows
 * for the symbol found goes to disp. -EEXIST: several functions match. */
static int resolve_in_file(const char *path, const char *name, enum name_match how, FILE *maps,
			   uint64_t *addr, int *had_symbols, char *disp, size_t dlen)
{
	const void *buf;
	size_t len;
	struct snap_elf e;
	struct snap_elfsym sym;
	uint64_t off;
	int err, r;

	err = snap_file_map(path, &buf, &len);
	if (err < 0)
		return err;
	err = snap_elf_open(&e, buf, len, 0);
	if (err < 0)
		goto out;
	if (snap_elf_has_symbols(&e))
		*had_symbols = 1;
	r = how == MATCH_EXACT ? snap_elfsym_find_func(&e, name, &sym)
			       : snap_elfsym_find_demangled(&e, name, how == MATCH_SUFFIX, &sym);
	err = r < 0 ? r : -ENOENT;
	if (r <= 0 || snap_loadseg_vaddr2off(e.load, e.nload, sym.value, &off) < 0)
		goto out;
	err = offset_to_addr(maps, path, off, addr);
	if (err == 0 && disp && dlen) {
		char *dem = snap_elfsym_demangle(sym.name, 0);

		snprintf(disp, dlen, "%s", dem ? dem : sym.name);
		free(dem);
	}
out:
	snap_file_unmap(buf, len);
	return err;
}

/* The runtime address of link-time vaddr of the executable at path. */
static int resolve_vaddr(const char *path, uint64_t vaddr, FILE *maps, uint64_t *addr)
{
	const void *buf;
	size_t len;
	struct snap_elf e;
	uint64_t off;
	int err = snap_file_map(path, &buf, &len);

	if (err < 0)
		return err;
	err = snap_elf_open(&e, buf, len, 0);
	if (err < 0)
		goto out;
	err = -ENOENT;
	if (snap_loadseg_vaddr2off(e.load, e.nload, vaddr, &off) < 0)
		goto out;
	err = offset_to_addr(maps, path, off, addr);
out:
	snap_file_unmap(buf, len);
	return err;
}

int snap_trigger_parse_hex(const char *s, uint64_t *v)
{
	char *end;

	if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2))
		s += 2;
	if (!*s || strspn(s, "0123456789abcdefABCDEF") != strlen(s) || strlen(s) > 16)
		return -1;
	*v = strtoull(s, &end, 16);
	return 0;
}

/* FILE:LINE[:COL] in the executable's line table -> link-time address. */
static int line_vaddr(const char *exe, const char *sel, uint64_t *vaddr)
{
	struct snap_dwline *d;
	char file[PATH_MAX];
	int line, col, ncols, err;

	if (snap_dwline_parse_sel(sel, file, sizeof(file), &line, &col) < 0)
		return -EINVAL;
	err = snap_dwline_open(exe, &d);
	if (err < 0)
		return err;
	err = snap_dwline_find(d, file, line, col, vaddr, &ncols);
	snap_dwline_close(d);
	return err == -EEXIST ? -ENOENT : err;
}

int snap_trigger_resolve(pid_t pid, const char *sel, uint64_t *addr, char *where, size_t wlen)
{
	return snap_trigger_resolve_disp(pid, sel, addr, where, wlen, NULL, 0);
}

int snap_trigger_resolve_disp(pid_t pid, const char *sel, uint64_t *addr, char *where, size_t wlen,
			      char *disp, size_t dlen)
{
	/* -trigger forms: symbol:NAME, addr:HEX, line:FILE:LINE[:COL], or without a
	 * prefix a function name, then FILE:LINE[:COL], then a hex address */
	enum { ANY, SYM, ADDR, LINE } kind = ANY;
	const char *name = sel;
	char path[64], exe[PATH_MAX];
	uint64_t vaddr;
	ssize_t n;
	FILE *maps;
	int err;

	if (!strncmp(sel, "symbol:", 7)) {
		kind = SYM;
		name = sel + 7;
	} else if (!strncmp(sel, "addr:", 5)) {
		kind = ADDR;
		name = sel + 5;
	} else if (!strncmp(sel, "line:", 5)) {
		kind = LINE;
		name = sel + 5;
	}
	if (kind != ANY && !*name)
		return -EINVAL;
	if (disp && dlen)
		snprintf(disp, dlen, "%s", sel); /* a line or an address is shown as given */
	if (kind == SYM)
		return snap_trigger_resolve_named(pid, name, addr, where, wlen, disp, dlen);
	if (kind == ANY) {
		err = snap_trigger_resolve_named(pid, name, addr, where, wlen, disp, dlen);
		if (err != -ENOENT && err != -SNAP_EFORMAT)
			return err;
		int l, c;

		if (snap_dwline_parse_sel(name, exe, sizeof(exe), &l, &c) < 0 &&
		    snap_trigger_parse_hex(name, &vaddr) < 0)
			return err;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = '\0';
	if (kind == ADDR) {
		if (snap_trigger_parse_hex(name, &vaddr) < 0)
			return -EINVAL;
	} else if (kind == LINE || snap_trigger_parse_hex(name, &vaddr) < 0) {
		err = line_vaddr(exe, name, &vaddr);
		if (err < 0)
			return err == -EINVAL ? -ENOENT : err;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "re");
	if (!maps)
		return -errno;
	err = resolve_vaddr(exe, vaddr, maps, addr);
	fclose(maps);
	if (err == 0 && where && wlen)
		snprintf(where, wlen, "%s", exe);
	return err;
}

/* Looks name up (matched as how says) in the executable, then in the shared
 * libraries, each file once (by device and inode: its mappings need not be
 * consecutive, and hard links share one) and at most TRIGGER_MAX_FILES: a
 * process alternating the mappings of two files 65530 times kept attach
 * searching for minutes, deaf to Ctrl-C (docs/guarantees.md, "Hangs"). */
static int resolve_pass(const char *exe, FILE *maps, const char *name, enum name_match how,
			uint64_t *addr, int *had_symbols, char *found, size_t flen, char *disp,
			size_t dlen)
{
	char line[PATH_MAX + 128], last[PATH_MAX] = "";
	int err = resolve_in_file(exe, name, how, maps, addr, had_symbols, disp, dlen);
	struct snap_u64map seen;
	size_t files = 0;

	if (err == 0 || (err != -ENOENT && err != -SNAP_EFORMAT)) {
		snprintf(found, flen, "%s", exe);
		return err;
	}
	snap_u64map_init(&seen);
	rewind(maps);
	while (files < TRIGGER_MAX_FILES && fgets(line, sizeof(line), maps)) {
		struct mapping m;
		uint64_t dev;
		long pos;
		int r;

		if (!parse_maps_line(line, &m) || !m.exec || !strcmp(m.path, exe) ||
		    !strcmp(m.path, last) || (snap_u64map_get(&seen, m.ino, &dev) && dev == m.dev))
			continue;
		strcpy(last, m.path);
		(void)snap_u64map_put(&seen, m.ino, m.dev); /* (full: only searched again) */
		files++;
		pos = ftell(maps);
		r = resolve_in_file(m.path, name, how, maps, addr, had_symbols, disp, dlen);
		fseek(maps, pos, SEEK_SET);
		if (r == 0 || r == -EEXIST) {
			snprintf(found, flen, "%s", m.path);
			snap_u64map_fini(&seen);
			return r;
		}
	}
	snap_u64map_fini(&seen);
	return -ENOENT;
}

int snap_trigger_resolve_named(pid_t pid, const char *name, uint64_t *addr, char *where,
			       size_t wlen, char *disp, size_t dlen)
{
	static const enum name_match order[] = {MATCH_EXACT, MATCH_DEMANGLED, MATCH_SUFFIX};
	char path[64], exe[PATH_MAX], found[PATH_MAX];
	FILE *maps;
	ssize_t n;
	int err = -ENOENT, had_symbols = 0;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "re");
	if (!maps)
		return -errno;
	/* Exact names everywhere first (what worked before stays the same), then
	 * demangled ones, then trailing parts of those. */
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]) && err == -ENOENT; i++)
		err = resolve_pass(exe, maps, name, order[i], addr, &had_symbols, found,
				   sizeof(found), disp, dlen);
	fclose(maps);
	if (err == -ENOENT && !had_symbols)
		err = -SNAP_EFORMAT;
	if (err == 0 && where && wlen)
		snprintf(where, wlen, "%s", found);
	return err;
}

void snap_trigger_init(struct snap_trigger *t)
{
	memset(t, 0, sizeof(*t));
}

/* 8 pages: room for ~580 hits (56 bytes each) between two reads (a
 * snapshot dump takes ~50 ms); 1 where the locked-memory limit refuses 8. */
#define BP_DATA_PAGES	    8
#define BP_DATA_PAGES_SMALL 1
/* perf's x86 register numbers (arch/x86/include/uapi/asm/perf_regs.h) */
#define BP_REG_SI	    4
#define BP_REG_DI	    5

static int bp_open(struct snap_trigger *t, pid_t tid, int cpu, int inherit)
{
	struct perf_event_attr a;
	struct snap_bp bp = {-1, NULL, 0};
	long page = sysconf(_SC_PAGESIZE);
	int err;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_X;
	a.bp_addr = t->addr;
	a.bp_len = sizeof(long);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER;
	/* the called function's first two arguments (x86-64: rdi, rsi) */
	a.sample_regs_user = (1ull << BP_REG_SI) | (1ull << BP_REG_DI);
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.wakeup_events = 1;
	a.inherit = (unsigned)inherit;
	bp.fd = (int)syscall(SYS_perf_event_open, &a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (bp.fd < 0)
		return -errno;
	bp.ring_len = (size_t)page * (1 + BP_DATA_PAGES);
	bp.ring = mmap(NULL, bp.ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, bp.fd, 0);
	if (bp.ring == MAP_FAILED && (errno == EPERM || errno == ENOMEM)) {
		bp.ring_len = (size_t)page * (1 + BP_DATA_PAGES_SMALL);
		bp.ring = mmap(NULL, bp.ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, bp.fd, 0);
	}
	if (bp.ring == MAP_FAILED) {
		err = -errno;
		close(bp.fd);
		return err;
	}
	if (snap_vec_reserve(&t->bps, &t->cap, t->nbps + 1, sizeof(*t->bps)) < 0) {
		munmap(bp.ring, bp.ring_len);
		close(bp.fd);
		return -ENOMEM;
	}
	t->bps[t->nbps++] = bp;
	return 0;
}

/* Parses /sys/devices/system/cpu/online ("0-1,4") into a callback. */
static int for_each_cpu(struct snap_trigger *t, pid_t pid)
{
	char buf[256];
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	ssize_t n;
	char *p;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	for (p = buf; *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			return -EIO;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b && c < 4096; c++) {
			int err = bp_open(t, pid, (int)c, 1);

			if (err < 0)
				return err;
		}
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

static int tid_known(const struct snap_trigger *t, int tid)
{
	for (size_t i = 0; i < t->ntids; i++)
		if (t->tids[i] == tid)
			return 1;
	return 0;
}

int snap_trigger_rescan(struct snap_trigger *t, pid_t pid, uint64_t addr)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	int err = 0, armed = 0;

	t->addr = addr;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		int tid = atoi(de->d_name);

		if (tid <= 0 || tid_known(t, tid))
			continue;
		if (snap_vec_reserve(&t->tids, &t->tcap, t->ntids + 1, sizeof(*t->tids)) < 0) {
			err = -ENOMEM;
			break;
		}
		t->tids[t->ntids++] = tid;
		err = bp_open(t, tid, -1, 0);
		if (err == -ESRCH) { /* the thread just exited */
			err = 0;
			continue;
		}
		if (err < 0)
			break;
		armed++;
	}
	closedir(d);
	return err < 0 ? err : armed;
}

int snap_trigger_arm(struct snap_trigger *t, pid_t pid, uint64_t addr, int follow_children)
{
	int n;

	t->addr = addr;
	if (follow_children)
		return for_each_cpu(t, pid);
	n = snap_trigger_rescan(t, pid, addr);
	return n < 0 ? n : n == 0 ? -ESRCH : 0;
}

int snap_trigger_signal_to(struct snap_trigger *t, pid_t pid, int sig)
{
	for (size_t i = 0; i < t->nbps; i++) {
		int fd = t->bps[i].fd, fl = fcntl(fd, F_GETFL);

		if (fl < 0 || fcntl(fd, F_SETOWN, pid) < 0 || fcntl(fd, F_SETSIG, sig) < 0 ||
		    fcntl(fd, F_SETFL, fl | O_ASYNC) < 0)
			return -errno;
	}
	return 0;
}

size_t snap_trigger_pollfds(const struct snap_trigger *t, struct pollfd *pfd, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nbps && n < max; i++) {
		pfd[n].fd = t->bps[i].fd;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		n++;
	}
	return n;
}

/* Copies len bytes at ring offset off (mod size) out of the data area. */
static void ring_copy(const uint8_t *data, uint64_t size, uint64_t off, void *dst, size_t len)
{
	uint8_t *d = dst;

	for (size_t i = 0; i < len; i++)
		d[i] = data[(off + i) % size];
}

/* Reads the hits of one ring into hits (up to max; the rest stay in the ring
 * for the next read), or with hits NULL discards them all. Counts every hit
 * read in t->nhits (PERF_RECORD_LOST is skipped: snap_trigger_unread counts
 * the hits the kernel had no room for, also those it has not reported yet). */
static size_t bp_drain(struct snap_trigger *t, struct snap_bp *bp, struct snap_trigger_hit *hits,
		       size_t max)
{
	struct perf_event_mmap_page *meta = bp->ring;
	const uint8_t *data = (const uint8_t *)bp->ring + meta->data_offset;
	uint64_t size = meta->data_size, head, tail = meta->data_tail;
	size_t n = 0;

	if (!size) { /* old kernels: data follows the first page */
		size = bp->ring_len - (size_t)sysconf(_SC_PAGESIZE);
		data = (const uint8_t *)bp->ring + sysconf(_SC_PAGESIZE);
	}
	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	if (meta->cap_user_time_zero && !t->have_tsc) {
		t->have_tsc = 1;
		t->time_zero = meta->time_zero;
		t->time_mult = meta->time_mult;
		t->time_shift = meta->time_shift;
	}
	while (tail < head) {
		struct perf_event_header h;
		uint64_t rec[7]; /* ip, pid|tid, time, abi, si, di */

		ring_copy(data, size, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > size) {
			tail = head;
			break; /* corrupt: drop what is left */
		}
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 24) {
			if (hits && n >= max)
				break; /* left for the next read */
			ring_copy(data, size, tail + sizeof(h), rec, 24);
			t->nhits++;
			if (hits) {
				memset(&hits[n], 0, sizeof(hits[n]));
				hits[n].hit.ip = rec[0];
				hits[n].hit.pid = (int32_t)(uint32_t)rec[1];
				hits[n].hit.tid = (int32_t)(uint32_t)(rec[1] >> 32);
				hits[n].hit.time = rec[2];
				/* REGS_USER: abi, then the registers in number order */
				if (h.size >= sizeof(h) + 48) {
					ring_copy(data, size, tail + sizeof(h) + 24, rec + 3, 24);
					if (rec[3]) {
						hits[n].has_regs = 1;
						hits[n].arg1 = rec[4]; /* rsi */
						hits[n].arg0 = rec[5]; /* rdi */
					}
				}
				n++;
			}
		}
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

static int cmp_hit(const void *a, const void *b)
{
	const struct snap_trigger_hit *x = a, *y = b;

	return x->hit.time < y->hit.time ? -1 : x->hit.time > y->hit.time;
}

size_t snap_trigger_read(struct snap_trigger *t, struct snap_trigger_hit *hits, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nbps; i++)
		n += bp_drain(t, &t->bps[i], hits ? hits + n : NULL, hits ? max - n : 0);
	if (n > 1)
		qsort(hits, n, sizeof(*hits), cmp_hit);
	return n;
}

uint64_t snap_trigger_unread(struct snap_trigger *t)
{
	uint64_t fired = 0;

	for (size_t i = 0; i < t->nbps; i++) {
		uint64_t v;

		/* the counter: every time the breakpoint fired (with inherit, the
		 * threads it was inherited into too) */
		if (read(t->bps[i].fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			fired += v;
	}
	return fired > t->nhits ? fired - t->nhits : 0;
}

uint64_t snap_trigger_tsc_time(const struct snap_trigger *t, uint64_t tsc)
{
	uint64_t quot, rem;

	if (!t->have_tsc || !tsc || t->time_shift > 63)
		return 0;
	quot = tsc >> t->time_shift;
	rem = tsc & ((1ull << t->time_shift) - 1);
	return t->time_zero + quot * t->time_mult + ((rem * t->time_mult) >> t->time_shift);
}

void snap_trigger_fini(struct snap_trigger *t)
{
	for (size_t i = 0; i < t->nbps; i++) {
		munmap(t->bps[i].ring, t->bps[i].ring_len);
		close(t->bps[i].fd);
	}
	snap_free(t->bps);
	snap_free(t->tids);
	memset(t, 0, sizeof(*t));
}
