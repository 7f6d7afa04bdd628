/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* sym_fixture.h: locate the symbolizer fixtures built by mk/sym.mk, next to the test binary. */
#ifndef JPROF_TEST_SYM_FIXTURE_H
#define JPROF_TEST_SYM_FIXTURE_H

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* <OUT>/tests/unit/test_x -> <OUT>/tests/fixtures/sym/<name> */
static inline const char *fx_path(const char *name)
{
	static char out[8][PATH_MAX + 64];
	static int slot;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *p = out[slot++ & 7];

	if (n <= 0)
		return name;
	exe[n] = '\0';
	snprintf(p, PATH_MAX + 64, "%s/../fixtures/sym/%s", dirname(exe), name);
	return p;
}

/* the value of symbol sym in a fixture's nm listing, 0 when absent */
static inline unsigned long long fx_nm(const char *elf, const char *sym)
{
	char nm_name[256], line[512], name[256];
	unsigned long long addr, ret = 0;
	char type;
	FILE *f;

	snprintf(nm_name, sizeof(nm_name), "%s.nm", elf);
	f = fopen(fx_path(nm_name), "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 && !strcmp(name, sym)) {
			ret = addr;
			break;
		}
	}
	fclose(f);
	return ret;
}

#endif /* JPROF_TEST_SYM_FIXTURE_H */
