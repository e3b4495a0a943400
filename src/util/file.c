// SPDX-License-Identifier: GPL-2.0
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"

int snap_open_regular(const char *path)
{
	char proc[64];
	struct stat st;
	int pfd = open(path, O_PATH | O_CLOEXEC), fd, err;

	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(pfd);
		return -SNAP_ENOTREG;
	}
	/* the inode just checked, opened for reading (the name may be swapped) */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	err = errno;
	if (fd < 0 && err == ENOENT) { /* no /proc: by name, typed afterwards */
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		err = errno;
		if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
			close(fd);
			fd = -1;
			err = SNAP_ENOTREG;
		}
	}
	close(pfd);
	return fd < 0 ? -err : fd;
}

int snap_foreign_link(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat l, d;

	if (lstat(path, &l) < 0 || !S_ISLNK(l.st_mode) || l.st_uid == geteuid())
		return 0;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	return stat(dir, &d) == 0 && (d.st_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH) &&
	       l.st_uid != d.st_uid;
}

long snap_read_small(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	int fd;

	if (len == 0)
		return -EINVAL;
	/* a FIFO or device planted under the name is never opened */
	fd = snap_open_regular(path);
	buf[0] = '\0';
	if (fd < 0)
		return fd;
	while (got + 1 < len) {
		ssize_t n = read(fd, buf + got, len - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	close(fd);
	return (long)got;
}

int snap_others_can_change(const struct stat *st)
{
	return (st->st_uid != 0 && st->st_uid != geteuid()) || (st->st_mode & (S_IWGRP | S_IWOTH));
}

/*
 * Mappings of files another user can shorten (docs/guarantees.md): a read past
 * the file's new end raises SIGBUS, which on_sigbus answers by putting a page
 * of zeros where the file's page was, so the reader sees damaged bytes, not
 * its death. A slot's start is 0 when free; the handler only reads them.
 */
#define GUARD_SLOTS 1024
static struct {
	_Atomic uintptr_t start, end;
} guards[GUARD_SLOTS];
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static struct sigaction guard_old; /* the handler before ours */
static uintptr_t guard_page;	   /* the page size */

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr, page = guard_page;

	for (size_t i = 0; si->si_code == BUS_ADRERR && i < GUARD_SLOTS; i++) {
		uintptr_t st = atomic_load(&guards[i].start);

		if (st && a >= st && a < atomic_load(&guards[i].end) &&
		    mmap((void *)(a & ~(page - 1)), page, PROT_READ,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED)
			return; /* the read is retried, and reads zeros */
	}
	/* not ours: as before (the default: killed by SIGBUS) */
	if (guard_old.sa_flags & SA_SIGINFO) {
		guard_old.sa_sigaction(sig, si, uc);
		return;
	}
	if (guard_old.sa_handler != SIG_DFL && guard_old.sa_handler != SIG_IGN) {
		guard_old.sa_handler(sig);
		return;
	}
	signal(SIGBUS, SIG_DFL);
}

static void guard_install(void)
{
	struct sigaction sa;

	guard_page = (uintptr_t)sysconf(_SC_PAGESIZE);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &guard_old);
}

/* Guards [p, p + len); 0, or -1 when every slot is taken. */
static int guard_add(void *p, size_t len)
{
	pthread_once(&guard_once, guard_install);
	for (size_t i = 0; i < GUARD_SLOTS; i++) {
		uintptr_t none = 0;

		/* (a free slot's end is 0: the handler matches it once end is set) */
		if (atomic_compare_exchange_strong(&guards[i].start, &none, (uintptr_t)p)) {
			atomic_store(&guards[i].end, (uintptr_t)p + len);
			return 0;
		}
	}
	return -1;
}

int snap_file_map_range(const char *path, uint64_t min, uint64_t max, int reg_only,
			const void **buf, size_t *len)
{
	return snap_file_map_keep(path, min, max, reg_only, buf, len, NULL);
}

int snap_file_map_keep(const char *path, uint64_t min, uint64_t max, int reg_only, const void **buf,
		       size_t *len, int *keep)
{
	struct stat st;
	void *p;
	int err, fd = reg_only ? snap_open_regular(path)
			       : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd == -SNAP_ENOTREG)
		return 1;
	if (fd < 0)
		return reg_only ? fd : -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if ((reg_only && !S_ISREG(st.st_mode)) || st.st_size < 0 || (uint64_t)st.st_size < min ||
	    (uint64_t)st.st_size > max || (uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return 1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	err = -errno;
	if (p != MAP_FAILED && S_ISREG(st.st_mode) && snap_others_can_change(&st) &&
	    guard_add(p, (size_t)st.st_size) < 0) {
		munmap(p, (size_t)st.st_size); /* (1024 guarded at once: not one more) */
		p = MAP_FAILED;
		err = -EMFILE;
	}
	if (p == MAP_FAILED || !keep)
		close(fd);
	if (p == MAP_FAILED)
		return err;
	if (keep)
		*keep = fd;
	*buf = p;
	*len = (size_t)st.st_size;
	return 0;
}

int snap_file_map(const char *path, const void **buf, size_t *len)
{
	int err = snap_file_map_range(path, 1, UINT64_MAX, 1, buf, len);

	return err == 1 ? -EINVAL : err;
}

void snap_file_unmap(const void *buf, size_t len)
{
	if (!buf)
		return;
	for (size_t i = 0; i < GUARD_SLOTS; i++)
		if (atomic_load(&guards[i].start) == (uintptr_t)buf) {
			atomic_store(&guards[i].end, 0); /* (a guarded one: end first) */
			atomic_store(&guards[i].start, 0);
			break;
		}
	munmap((void *)buf, len);
}

long snap_fd_pread(void *ctx, uint64_t off, void *buf, size_t len)
{
	/* an offset no file reaches (outside input) reads as the end of the file */
	ssize_t n = off > (uint64_t)INT64_MAX ? 0 : pread(*(int *)ctx, buf, len, (off_t)off);

	return n < 0 ? -errno : (long)n;
}
