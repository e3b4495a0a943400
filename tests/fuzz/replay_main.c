// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer-compatible driver without libFuzzer: calls LLVMFuzzerTestOneInput
 * once for every file named on the command line and every regular file in
 * every directory named (not recursive, in name order), so `make check` under
 * gcc replays the committed corpora as regression tests. A crash or sanitizer
 * report fails the run. Prints "replayed N inputs" and exits 0, or 1 if an
 * argument cannot be read.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t len = 0, cap = 0;
	int err = 0;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			uint8_t *nd = realloc(data, cap = cap ? cap * 2 : 4096);

			if (!nd) {
				err = -1;
				break;
			}
			data = nd;
		}
		n = fread(data + len, 1, cap - len, f);
		if (!n)
			break;
		len += n;
	}
	if (ferror(f))
		err = -1;
	fclose(f);
	if (!err) {
		/* an exact-size copy, so ASan sees reads past the end */
		uint8_t *exact = malloc(len ? len : 1);

		if (exact) {
			memcpy(exact, data, len);
			LLVMFuzzerTestOneInput(exact, len);
			free(exact);
		} else {
			err = -1;
		}
	}
	if (err)
		fprintf(stderr, "replay: %s: read failed\n", path);
	free(data);
	return err;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, long *count)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*names));

			if (!nn) {
				err = -1;
				break;
			}
			names = nn;
		}
		names[n] = malloc(strlen(dir) + strlen(de->d_name) + 2);
		if (!names[n]) {
			err = -1;
			break;
		}
		sprintf(names[n], "%s/%s", dir, de->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		struct stat sb;

		if (!err && stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
			if (replay_file(names[i]) < 0)
				err = -1;
			else
				(*count)++;
		}
		free(names[i]);
	}
	free(names);
	return err;
}

int main(int argc, char **argv)
{
	long count = 0;
	int err = 0;

	for (int i = 1; i < argc; i++) {
		struct stat sb;

		if (argv[i][0] == '-')
			continue; /* libFuzzer flags: ignored */
		if (stat(argv[i], &sb) < 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			err = 1;
		} else if (S_ISDIR(sb.st_mode)) {
			if (replay_dir(argv[i], &count) < 0)
				err = 1;
		} else if (replay_file(argv[i]) < 0) {
			err = 1;
		} else {
			count++;
		}
	}
	printf("replayed %ld inputs\n", count);
	return err;
}
