// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fuzz_dconf.c: the daemon's config-file parser on any bytes (a file edited by hand). */
#include <stddef.h>
#include <stdint.h>

#include "daemon/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct daemon_config c;
	char why[128];

	if (size > DCONF_MAX_BYTES)
		return 0;
	(void)dconf_parse((const char *)data, size, &c, why, sizeof(why));
	(void)dconf_parse((const char *)data, size, &c, why, 1);
	return 0;
}
