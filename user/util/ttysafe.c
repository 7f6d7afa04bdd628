// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ttysafe.c: control characters of untrusted names escaped before they reach a terminal. */
#include <stdio.h>

#include "util/ttysafe.h"

char *tty_escape(const char *s, char *buf, size_t len, int keep_nl)
{
	size_t o = 0;

	if (!len)
		return buf;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c < 0x20 || c == 0x7f) && !(keep_nl && (c == '\n' || c == '\t'))) {
			if (o + 4 >= len)
				break;
			(void)snprintf(buf + o, len - o, "\\x%02x", c);
			o += 4;
		} else if (c == '\\' && !keep_nl) {
			if (o + 2 >= len)
				break;
			buf[o++] = '\\';
			buf[o++] = '\\';
		} else {
			if (o + 1 >= len)
				break;
			buf[o++] = (char)c;
		}
	}
	buf[o] = '\0';
	return buf;
}
