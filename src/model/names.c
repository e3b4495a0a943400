// SPDX-License-Identifier: GPL-2.0
/* The names layers exchange. See names.h. */
#include "model/names.h"

#include <string.h>

size_t snap_unknown_name(char *buf, uint64_t addr, const char *dso, size_t dlen)
{
	static const char at[] = SNAP_NAME_UNKNOWN_AT "0x";
	char hex[16];
	size_t n = sizeof(at) - 1;
	int nh = 0;

	do {
		hex[nh++] = "0123456789abcdef"[addr & 15];
		addr >>= 4;
	} while (addr);
	memcpy(buf, at, n);
	while (nh)
		buf[n++] = hex[--nh];
	if (dso) {
		buf[n++] = ' ';
		buf[n++] = '(';
		memcpy(buf + n, dso, dlen);
		n += dlen;
		buf[n++] = ')';
	}
	buf[n++] = ']';
	return n;
}

int snap_unknown_parse(const char *s, size_t n, struct snap_unknown_parts *parts)
{
	static const char stem[] = SNAP_NAME_UNKNOWN_STEM, at[] = SNAP_NAME_UNKNOWN_AT;
	const size_t na = sizeof(at) - 1;
	struct snap_unknown_parts p;

	if (n < sizeof(stem) - 1 || memcmp(s, stem, sizeof(stem) - 1))
		return 0;
	if (n < na || memcmp(s, at, na))
		return 1;
	p = (struct snap_unknown_parts){s + na, n - na, NULL, 0};
	if (n >= 2 && s[n - 2] == ')' && s[n - 1] == ']')
		for (size_t i = na; i + 1 < n; i++)
			if (s[i] == ' ' && s[i + 1] == '(') {
				p.addr_len = i - na;
				p.dso = s + i + 2;
				p.dso_len = n - 2 - (i + 2);
				break;
			}
	if (parts)
		*parts = p;
	return 2;
}
