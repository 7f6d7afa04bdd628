// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_ctl.c: the daemon's control-socket request parser on any bytes a local client can
 * send, whole and cut at every length (the server parses what has arrived so far).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/ctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the server never holds more than CTL_REQ_MAX bytes of a request */
	if (size > CTL_REQ_MAX)
		size = CTL_REQ_MAX;
	for (size_t n = 0; n <= size; n++) {
		struct ctl_request rq;
		int r = ctl_parse((const char *)data, n, &rq);

		if (r != CTL_REQ_DUMP && r != CTL_REQ_MARK && r != -EAGAIN && r != -EINVAL)
			__builtin_trap();
		/* a mark's name is one a directory may have, its window in range */
		if (r == CTL_REQ_MARK &&
		    (!store_mark_name_ok(rq.name) || !rq.back_s || rq.back_s > CTL_MARK_BACK_MAX))
			__builtin_trap();
	}
	return 0;
}
