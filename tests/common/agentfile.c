// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* agentfile.c: the tests' one writer of agent ring and dictionary files (agentfile.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentfile.h"

void agentfile_ring_hdr(struct jp_ring_hdr *h, __u32 data_size, __u32 pid, __u32 signo,
			__u32 max_depth)
{
	h->magic = JP_RING_MAGIC;
	h->version = JP_RING_VERSION;
	h->hdr_size = JP_RING_HDR_SIZE;
	h->data_size = data_size;
	h->pid = pid;
	h->signo = signo;
	h->max_depth = max_depth;
}

void agentfile_dict_hdr(struct jp_dict_hdr *h, __u32 pid)
{
	memset(h, 0, sizeof(*h));
	h->magic = JP_DICT_MAGIC;
	h->version = JP_RING_VERSION;
	h->hdr_size = sizeof(*h);
	h->pid = pid;
}

/* class: u16 sig_len, u16 src_len, u32 n_methods, sig, src; method: u64 id, u16 name_len,
 * u16 desc_len, u32 n_lines, name, desc, n_lines x {s32 bci, s32 line} */
unsigned char *agentfile_class1(const char *sig, __u64 id, const char *name, __u32 n_lines,
				agentfile_line_fn line_of, void *ctx, size_t *ret_len)
{
	size_t sig_len = strlen(sig), name_len = strlen(name);
	size_t len = sizeof(struct jp_dict_rec) + 8 + sig_len + 16 + name_len + (size_t)n_lines * 8;
	struct jp_dict_rec r = {(__u32)len, JP_DICT_CLASS, 0};
	unsigned char *b = malloc(len);
	size_t w = 0;
	__u16 v16;
	__u32 v32;

	if (!b)
		return NULL;
#define PUT(p, k) (memcpy(b + w, (p), (k)), w += (k))
	PUT(&r, sizeof(r));
	v16 = (__u16)sig_len;
	PUT(&v16, 2);
	v16 = 0;
	PUT(&v16, 2);
	v32 = 1;
	PUT(&v32, 4);
	PUT(sig, sig_len);
	PUT(&id, 8);
	v16 = (__u16)name_len;
	PUT(&v16, 2);
	v16 = 0;
	PUT(&v16, 2);
	PUT(&n_lines, 4);
	PUT(name, name_len);
	for (__u32 i = 0; i < n_lines; i++) {
		__s32 bci, line;

		line_of(ctx, i, &bci, &line);
		PUT(&bci, 4);
		PUT(&line, 4);
	}
#undef PUT
	*ret_len = len;
	return b;
}

int agentfile_put_class1(int fd, const char *sig, __u64 id, const char *name, __u32 n_lines,
			 agentfile_line_fn line_of, void *ctx)
{
	size_t len;
	unsigned char *b = agentfile_class1(sig, id, name, n_lines, line_of, ctx, &len);
	int err = 0;

	if (!b) {
		errno = ENOMEM;
		return -1;
	}
	if (write(fd, b, len) != (ssize_t)len)
		err = -1;
	free(b);
	return err;
}
