// SPDX-License-Identifier: GPL-2.0
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

long snap_read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (len == 0)
		return -EINVAL;
	buf[0] = '\0';
	if (fd < 0)
		return -errno;
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

int snap_file_map(const char *path, const void **buf, size_t *len)
{
	struct stat st;
	void *p;
	/* Non-blocking: the path comes from a traced program (/proc/PID/exe,
	 * maps), and a FIFO named like its deleted executable must not block
	 * open (with our signals blocked); only a regular file is read. */
	int err = 0, fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		err = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_size <= 0)
		err = -EINVAL; /* not errno: a stale value from an earlier call */
	if (err < 0) {
		close(fd);
		return err;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	*buf = p;
	*len = (size_t)st.st_size;
	return 0;
}

void snap_file_unmap(const void *buf, size_t len)
{
	if (buf)
		munmap((void *)buf, len);
}
