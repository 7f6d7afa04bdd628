/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fuzz_bytecode.c: the trace's class-file rewriter (jpa_bc_rewrite) on any bytes. The first
 * byte picks which methods match (all, every other, none) and how many arguments --args
 * passes (0..4); a rewritten class must parse again (a second pass matching nothing returns
 * 0) and survive being rewritten again.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "bytecode.c"
#include "bc_class.c"
#include "bc_code.c"
#include "bc_frames.c"

struct fctx {
	unsigned int mode, n;
};

static int f_match(void *p, const char *cls, const char *name, const char *desc, uint16_t access)
{
	struct fctx *c = p;

	(void)cls;
	(void)name;
	(void)desc;
	(void)access;
	c->n++;
	if (c->mode == 2 || (c->mode == 1 && (c->n & 1)))
		return -1;
	return (int)(c->n % (JPA_BC_ID_MAX + 2)); /* sometimes over the maximum */
}

static void f_refuse(void *p, int id, const char *cls, const char *name, const char *desc,
		     const char *why)
{
	(void)p;
	(void)id;
	(void)cls;
	(void)name;
	(void)desc;
	if (!why || !*why)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fctx c = {0}, none = {.mode = 2};
	struct jpa_bc_ops ops = {.match = f_match, .refuse = f_refuse, .ctx = &c};
	uint8_t *out = NULL, *again = NULL;
	size_t olen = 0, alen = 0;
	int n;

	if (size < 1)
		return 0;
	c.mode = data[0] % 3;
	ops.args = (data[0] / 3) % (JPA_BC_ARGS_MAX + 1); /* --args: 0..4 leading arguments */
	n = jpa_bc_rewrite(data + 1, size - 1, &ops, &out, &olen);
	if (n <= 0)
		return 0;
	if (!out || olen < size - 1)
		abort();
	ops.ctx = &none;
	if (jpa_bc_rewrite(out, olen, &ops, &again, &alen) != 0)
		abort(); /* the output no longer parses */
	c = (struct fctx){0};
	ops.ctx = &c;
	if (jpa_bc_rewrite(out, olen, &ops, &again, &alen) > 0)
		free(again);
	free(out);
	return 0;
}
