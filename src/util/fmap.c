// SPDX-License-Identifier: GPL-2.0
#include "util/fmap.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int snap_fmap(const char *path, uint64_t min, uint64_t max, int reg_only, const void **buf,
	      size_t *len)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	void *m;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if ((reg_only && !S_ISREG(sb.st_mode)) || sb.st_size < 0 || (uint64_t)sb.st_size < min ||
	    (uint64_t)sb.st_size > max || (uint64_t)sb.st_size > SIZE_MAX) {
		close(fd);
		return 1;
	}
	m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	err = -errno;
	close(fd);
	if (m == MAP_FAILED)
		return err;
	*buf = m;
	*len = (size_t)sb.st_size;
	return 0;
}

void snap_funmap(const void *buf, size_t len)
{
	munmap((void *)buf, len);
}
