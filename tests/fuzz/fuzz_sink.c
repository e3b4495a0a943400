// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the output path handling of the file sink. The input picks
 * what already exists at the output name (nothing, a file with some mode, a
 * symlink to a file, a dangling link, a link chain or loop, a directory),
 * the name (up to 255 bytes), gzip or not, abort or close, and the bytes to
 * write. Whatever happens: links stay links, an existing file keeps its mode
 * and its content unless the close succeeded, the output holds exactly the
 * bytes written after a successful close, and nothing else is left in the
 * directory (no temporary file).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "record/workdir.h"
#include "write/sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char sk_dir[64];

static void sk_cleanup(void)
{
	snap_rmtree_at(AT_FDCWD, sk_dir);
}

static int sk_entries(void)
{
	DIR *d = opendir(sk_dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		abort();
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void sk_empty(void)
{
	int dfd = open(sk_dir, O_RDONLY | O_DIRECTORY);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			snap_rmtree_at(dfd, e->d_name);
	if (d)
		closedir(d);
}

/* Reads path (gunzipping transparently) into buf; returns the length or -1. */
static long sk_slurp(const char *path, unsigned char *buf, size_t cap)
{
	gzFile f = gzopen(path, "rb");
	long n;

	if (!f)
		return -1;
	n = gzread(f, buf, (unsigned)cap);
	gzclose(f);
	return n;
}

static void sk_write_file(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, "OLD", 3) != 3 || fchmod(fd, mode) < 0)
		abort();
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char back[1 << 16];
	char name[260], path[400], real[400], link2[400];
	unsigned kind, flags, nlen;
	mode_t mode;
	struct stat st;
	struct snap_sink s;
	int err, before, existed;

	if (size < 4)
		return 0;
	if (!sk_dir[0]) {
		snprintf(sk_dir, sizeof(sk_dir), "/tmp/snaptrace-fuzz-sink.XXXXXX");
		if (!mkdtemp(sk_dir))
			abort();
		atexit(sk_cleanup);
	}
	kind = data[0] % 7;
	mode = (mode_t)(0600 | (data[1] & 077)); /* always readable by us */
	flags = data[2];
	nlen = data[3] % 256;
	data += 4;
	size -= 4;
	if (nlen > size)
		nlen = (unsigned)size;
	if (flags & 4) /* a .gz name */
		nlen = nlen > 252 ? 252 : nlen;
	for (unsigned i = 0; i < nlen; i++)
		name[i] = data[i] == '/' || data[i] == 0 ? '_' : (char)data[i];
	name[nlen] = '\0';
	if (flags & 4)
		strcat(name, ".gz");
	data += nlen;
	size -= nlen;
	if (!name[0] || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	if (size > sizeof(back) - 1)
		size = sizeof(back) - 1;
	snprintf(path, sizeof(path), "%s/%s", sk_dir, name);
	snprintf(real, sizeof(real), "%s/real", sk_dir);
	snprintf(link2, sizeof(link2), "%s/link2", sk_dir);
	if (!strcmp(name, "real") || !strcmp(name, "link2"))
		return 0;
	switch (kind) {
	case 1: /* a file with a mode */
		sk_write_file(path, mode);
		strcpy(real, path);
		break;
	case 2: /* a link to a file */
		sk_write_file(real, mode);
		if (symlink("real", path) < 0)
			abort();
		break;
	case 3: /* a dangling link */
		if (symlink("real", path) < 0)
			abort();
		break;
	case 4: /* a chain of links to a file */
		sk_write_file(real, mode);
		if (symlink("real", link2) < 0 || symlink("link2", path) < 0)
			abort();
		break;
	case 5: /* a loop */
		if (symlink(name, link2) < 0 || symlink("link2", path) < 0)
			abort();
		break;
	case 6: /* a directory */
		if (mkdir(path, 0700) < 0)
			abort();
		break;
	default: /* nothing */
		strcpy(real, path);
		break;
	}
	existed = stat(real, &st) == 0;
	before = sk_entries();
	err = snap_sink_open(&s, (flags & 8) ? strcat(path, "/") : path);
	if (flags & 8)
		path[strlen(path) - 1] = '\0';
	if (err == 0) {
		snap_sink_write(&s, data, size);
		if (flags & 1)
			snap_sink_abort(&s);
		else
			err = snap_sink_close(&s);
	}
	snap_sink_fini(&s);
	if (kind >= 2 && kind <= 5 && (lstat(path, &st) < 0 || !S_ISLNK(st.st_mode)))
		abort(); /* a link was replaced */
	if (kind == 6 && (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode)))
		abort();
	if (err == 0 && !(flags & 1) && kind != 5 && kind != 6) {
		/* the output holds what was written, with the old mode kept */
		if (sk_slurp(real, back, sizeof(back)) != (long)size || memcmp(back, data, size))
			abort();
		if (existed && (stat(real, &st) < 0 || (st.st_mode & 07777) != mode))
			abort();
		if (sk_entries() != before + !existed)
			abort();
	} else {
		/* nothing changed: an old file keeps its content, nothing new appears */
		if (existed && (kind == 1 || kind == 2 || kind == 4) &&
		    (sk_slurp(real, back, sizeof(back)) != 3 || memcmp(back, "OLD", 3)))
			abort();
		if (sk_entries() != before)
			abort();
	}
	sk_empty();
	return 0;
}
