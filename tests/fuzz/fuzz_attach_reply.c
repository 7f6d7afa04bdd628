// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_attach_reply.c: bytes a JVM sends back on its attach socket -> the reply reader and
 * parser jprof's attach helper uses (jvm_attach_read_reply, jvm_attach_parse_reply).
 * Input: u8 flags, then the reply. flags&1: the peer never closes (the read must time out);
 * flags&2: a small reply buffer (the tail of longer replies is read and dropped);
 * flags&4: the reply is parsed directly, whole, without the socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "jvm/attach.h"

#define REPLY_CAP 8192 /* the helper's own */

static void check_err(int ret, const char *err)
{
	size_t n = strnlen(err, 256);

	/* a failure always says why, on one line the terminal does not act on */
	if (ret && !n)
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)err[i] < 0x20 || err[i] == 0x7f)
			abort();
}

static void parse_whole(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), err[256];
	int ret;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	ret = jvm_attach_parse_reply(buf, size, err, sizeof(err));
	check_err(ret, err);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char reply[REPLY_CAP];
	size_t cap, len = 0, off = 0;
	int sv[2], ret, sndbuf = 1 << 20;
	char err[256];
	uint8_t flags;

	if (!size)
		return 0;
	flags = data[0];
	data++;
	size--;
	if (flags & 4) {
		parse_whole(data, size);
		return 0;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	/* the whole reply fits in the socket: no writer thread needed */
	(void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf));
	(void)fcntl(sv[1], F_SETFL, O_NONBLOCK);
	while (off < size) {
		ssize_t n = write(sv[1], data + off, size - off);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	if (!(flags & 1))
		close(sv[1]);
	cap = flags & 2 ? 2 + (flags >> 3) : sizeof(reply);
	ret = jvm_attach_read_reply(sv[0], flags & 1 ? 1 : 1000, reply, cap, &len);
	if (flags & 1) {
		/* a reply that never ends is a timeout, whatever it says */
		if (ret != -ETIMEDOUT)
			abort();
		close(sv[1]);
	} else {
		if (ret || len > cap - 1 || len > off || reply[len] || memcmp(reply, data, len) ||
		    len != (off < cap - 1 ? off : cap - 1))
			abort();
		ret = jvm_attach_parse_reply(reply, len, err, sizeof(err));
		check_err(ret, err);
	}
	close(sv[0]);
	return 0;
}
