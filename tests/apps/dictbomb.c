// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dictbomb.c: what a JVM's user can append to its own agent dictionary (jvmagent/ring.h):
 * "dictbomb DICT RECORDS" appends RECORDS class records of the largest size, each with a
 * 64 KiB class signature, a 64 KiB source name and as many one-letter methods as fit
 * (~490k). A reader copying the two names per method would need 64 GB per record.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include "../../jvmagent/ring.h"

#define NAME_LEN 65535u

int main(int argc, char **argv)
{
	struct jp_dict_rec r = {.type = JP_DICT_CLASS};
	unsigned char *buf;
	size_t len, hdr = sizeof(r) + 8 + 2 * NAME_LEN;
	__u32 n_methods, records;
	__u16 v16;
	__u64 id = 0x7e0000000000ull;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: dictbomb DICT RECORDS\n");
		return 2;
	}
	records = (__u32)atoi(argv[2]);
	buf = malloc(JP_DICT_REC_MAX);
	fd = open(argv[1], O_WRONLY | O_APPEND | O_CLOEXEC);
	if (!buf || fd < 0) {
		perror(argv[1]);
		return 1;
	}
	n_methods = (__u32)((JP_DICT_REC_MAX - hdr) / 17);
	len = hdr + (size_t)n_methods * 17;
	r.len = (__u32)len;
	memcpy(buf, &r, sizeof(r));
	v16 = NAME_LEN;
	memcpy(buf + sizeof(r), &v16, 2);
	memcpy(buf + sizeof(r) + 2, &v16, 2);
	memcpy(buf + sizeof(r) + 4, &n_methods, 4);
	buf[sizeof(r) + 8] = 'L';
	memset(buf + sizeof(r) + 9, 'X', NAME_LEN - 2);
	buf[sizeof(r) + 8 + NAME_LEN - 1] = ';';
	memset(buf + sizeof(r) + 8 + NAME_LEN, 'S', NAME_LEN);
	for (__u32 k = 0; k < records; k++) {
		unsigned char *m = buf + hdr;

		for (__u32 i = 0; i < n_methods; i++, m += 17) {
			id += 8;
			memcpy(m, &id, 8);
			v16 = 1;
			memcpy(m + 8, &v16, 2);
			memset(m + 10, 0, 6); /* msig_len 0, n_lines 0 */
			m[16] = 'm';
		}
		if (write(fd, buf, len) != (ssize_t)len) {
			perror("write");
			return 1;
		}
	}
	close(fd);
	printf("appended %u records of %u methods\n", records, n_methods);
	return 0;
}
