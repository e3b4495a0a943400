// SPDX-License-Identifier: GPL-2.0
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"

long snap_read_small(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	struct stat st;
	int fd;

	if (len == 0)
		return -EINVAL;
	/* non-blocking: a FIFO planted under the name cannot hang the open */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	buf[0] = '\0';
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -SNAP_ENOTREG;
	}
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

/* 1 if another user than root and us can shorten the file (its owner, a
 * group or others with write permission). */
static int others_can_change(const struct stat *st)
{
	return (st->st_uid != 0 && st->st_uid != geteuid()) || (st->st_mode & (S_IWGRP | S_IWOTH));
}

/* The file's len bytes copied into private memory, released by munmap as a
 * mapping is; bytes a truncation took meanwhile read as zeros. MAP_FAILED
 * with errno on failure. */
static void *copy_file(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t got = 0;

	if (p == MAP_FAILED)
		return p;
	while (got < len) {
		ssize_t n = pread(fd, (char *)p + got, len - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			munmap(p, len);
			errno = err;
			return MAP_FAILED;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	mprotect(p, len, PROT_READ);
	return p;
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
	int err, fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -errno;
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
	if (S_ISREG(st.st_mode) && others_can_change(&st) && st.st_size <= SNAP_FILE_COPY_MAX)
		p = copy_file(fd, (size_t)st.st_size);
	else
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	err = -errno;
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
	if (buf)
		munmap((void *)buf, len);
}

long snap_fd_pread(void *ctx, uint64_t off, void *buf, size_t len)
{
	/* an offset no file reaches (outside input) reads as the end of the file */
	ssize_t n = off > (uint64_t)INT64_MAX ? 0 : pread(*(int *)ctx, buf, len, (off_t)off);

	return n < 0 ? -errno : (long)n;
}
