// SPDX-License-Identifier: GPL-2.0
/* The terminal-safe escaper. See esc.h. */
#include "util/esc.h"

#include <stdio.h>
#include <string.h>

/* The length of the valid UTF-8 character at s (lead byte >= 0x80), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0; /* overlong */
	else if (c == 0xed)
		hi = 0x9f; /* surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* beyond U+10FFFF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

size_t snap_esc_run(const char *s, size_t n, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		unsigned char c = p[i];
		size_t k;

		if ((c >= 0x20 && c < 0x7f) || (c == '\n' && (flags & SNAP_ESC_NL))) {
			if ((flags & SNAP_ESC_QUOTE) && (c == '"' || c == '\\'))
				break;
			i++;
			continue;
		}
		if (c < 0x80)
			break;
		k = utf8_len(p + i, n - i);
		if (!k || (c == 0xc2 && p[i + 1] < 0xa0)) /* bad, or a C1 control */
			break;
		i += k;
	}
	return i;
}

size_t snap_esc_one(const char *s, size_t n, unsigned flags, char out[SNAP_ESC_MAX])
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 1;

	if (n >= 2 && p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0)
		used = 2; /* U+0080-U+009F in UTF-8 */
	if (flags & SNAP_ESC_QMARK)
		snprintf(out, SNAP_ESC_MAX, "?");
	else if (used == 2)
		snprintf(out, SNAP_ESC_MAX, "\\u%04x", p[1]);
	else if (p[0] == '"' || p[0] == '\\')
		snprintf(out, SNAP_ESC_MAX, "\\%c", p[0]);
	else
		snprintf(out, SNAP_ESC_MAX, "\\x%02x", p[0]);
	return used;
}

size_t snap_esc_str(char *out, size_t cap, const char *s, size_t n, unsigned flags)
{
	size_t need = 0, at = 0;
	int full = cap == 0;

	while (at < n) {
		size_t run = snap_esc_run(s + at, n - at, flags), take = run;
		char e[SNAP_ESC_MAX];
		const char *piece = s + at;

		if (!run) {
			at += snap_esc_one(s + at, n - at, flags, e);
			piece = e;
			take = strlen(e);
		} else {
			at += run;
		}
		if (!full && need + take < cap) {
			memcpy(out + need, piece, take);
		} else if (!full && run) { /* a run is cut at a character boundary */
			size_t k = cap - 1 - need;

			while (k > 0 && ((unsigned char)piece[k] & 0xc0) == 0x80)
				k--;
			memcpy(out + need, piece, k);
			out[need + k] = '\0';
			full = 1;
		} else if (!full) {
			out[need] = '\0';
			full = 1;
		}
		need += take;
	}
	if (!full)
		out[need] = '\0';
	return need;
}

void snap_esc_fputs(FILE *f, const char *s, unsigned flags)
{
	size_t n = strlen(s), at = 0;

	while (at < n) {
		size_t run = snap_esc_run(s + at, n - at, flags);
		char e[SNAP_ESC_MAX];

		fwrite(s + at, 1, run, f);
		at += run;
		if (at < n) {
			at += snap_esc_one(s + at, n - at, flags, e);
			fputs(e, f);
		}
	}
}
