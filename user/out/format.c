// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* format.c: output format names and file extensions. */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "out.h"

static const struct {
	const char *name;
	enum out_format fmt;
} format_names[] = {
	{"folded", OUT_FOLDED}, {"collapsed", OUT_FOLDED}, {"txt", OUT_FOLDED},
	{"html", OUT_HTML},	{"htm", OUT_HTML},
};

static int format_lookup(const char *name, int allow_htm)
{
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++) {
		if (!allow_htm && !strcmp(format_names[i].name, "htm"))
			continue;
		if (!strcasecmp(name, format_names[i].name))
			return format_names[i].fmt;
	}
	return -EINVAL;
}

int out_format_parse(const char *name)
{
	return name ? format_lookup(name, 0) : -EINVAL;
}

int out_format_from_path(const char *path)
{
	const char *base, *dot;

	if (!path)
		return -EINVAL;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	if (!dot || dot == base)
		return -ENOENT;
	return format_lookup(dot + 1, 1);
}
