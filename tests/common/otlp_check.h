/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * otlp_check.h: an independent reader of the OTLP requests daemon/otlp.c writes, for
 * test_otlp and fuzz_otlp: it walks the wire format (not our encoder's helpers) and checks
 * what the schema (third_party/opentelemetry-proto) requires: every table of the dictionary
 * starts with its zero value (string_table[0] ""), every index points into its table, each
 * sample has one value; and it adds up each sample type's values.
 */
#ifndef JPROF_TESTS_OTLP_CHECK_H
#define JPROF_TESTS_OTLP_CHECK_H

#include <stdint.h>
#include <string.h>

struct oc_rd {
	const unsigned char *p, *end;
};

static int oc_varint(struct oc_rd *r, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 64; s += 7) {
		if (r->p >= r->end)
			return -1;
		*v |= (uint64_t)(*r->p & 0x7f) << s;
		if (!(*r->p++ & 0x80))
			return 0;
	}
	return -1;
}

/* the next field: 1, 0 at the end, -1 malformed; a length-delimited one's bytes in *sub */
static int oc_field(struct oc_rd *r, int *field, int *wt, uint64_t *v, struct oc_rd *sub)
{
	uint64_t key;

	if (r->p == r->end)
		return 0;
	if (oc_varint(r, &key))
		return -1;
	*field = (int)(key >> 3);
	*wt = (int)(key & 7);
	switch (*wt) {
	case 0:
		return oc_varint(r, v) ? -1 : 1;
	case 1:
		if (r->end - r->p < 8)
			return -1;
		memcpy(v, r->p, 8);
		r->p += 8;
		return 1;
	case 2:
		if (oc_varint(r, v) || *v > (uint64_t)(r->end - r->p))
			return -1;
		sub->p = r->p;
		sub->end = r->p + *v;
		r->p += *v;
		return 1;
	default:
		return -1;
	}
}

#define OC_TYPES 16

struct otlp_summary {
	size_t nstrings, nstacks, nattrs, nlocs, nfuncs, nprofiles, nsamples;
	char types[OC_TYPES][32]; /* each profile's sample type */
	uint64_t totals[OC_TYPES];
	char host[64];
};

/* counts the entries of dictionary table field in d; -1 when its first entry is not empty */
static long oc_table(struct oc_rd d, int want, size_t zero_len)
{
	struct oc_rd sub;
	uint64_t v;
	int f, wt, r;
	long n = 0;

	while ((r = oc_field(&d, &f, &wt, &v, &sub)) == 1)
		if (f == want) {
			if (wt != 2 || (!n && (size_t)(sub.end - sub.p) != zero_len))
				return -1;
			n++;
		}
	return r < 0 || !n ? -1 : n;
}

/* 0 and *s, or a negative number naming the check that failed */
static int otlp_check(const unsigned char *buf, size_t len, struct otlp_summary *s)
{
	struct oc_rd top = {buf, buf + len}, sub, dict = {0}, rp = {0}, x, y, z;
	uint64_t v, strs_seen = 0;
	int f, wt, r;
	long n;

	memset(s, 0, sizeof(*s));
	while ((r = oc_field(&top, &f, &wt, &v, &sub)) == 1) {
		if (wt != 2)
			return -2;
		if (f == 1)
			rp = sub;
		else if (f == 2)
			dict = sub;
	}
	if (r < 0 || !rp.p || !dict.p)
		return -3;
	/* the dictionary: zero values first; strings */
	if (oc_table(dict, 1, 0) < 0 || (n = oc_table(dict, 2, 0)) < 0)
		return -4;
	s->nlocs = (size_t)n;
	if ((n = oc_table(dict, 3, 0)) < 0)
		return -5;
	s->nfuncs = (size_t)n;
	if (oc_table(dict, 4, 2 + 16 + 2 + 8) < 0) /* link 0: zero ids of their full lengths */
		return -6;
	if ((n = oc_table(dict, 6, 0)) < 0)
		return -7;
	s->nattrs = (size_t)n;
	if ((n = oc_table(dict, 7, 0)) < 0)
		return -8;
	s->nstacks = (size_t)n;
	x = dict;
	while ((r = oc_field(&x, &f, &wt, &v, &sub)) == 1)
		if (f == 5 && !strs_seen++ && sub.p != sub.end)
			return -9; /* string_table[0] is "" */
	s->nstrings = (size_t)strs_seen;
	if (!strs_seen)
		return -9;
	/* every stack's locations, every location's functions, in range */
	x = dict;
	while ((r = oc_field(&x, &f, &wt, &v, &sub)) == 1) {
		if (f == 7) {
			while (oc_field(&sub, &f, &wt, &v, &y) == 1)
				while (f == 1 && wt == 2 && y.p < y.end)
					if (oc_varint(&y, &v) || !v || v >= s->nlocs)
						return -10;
		} else if (f == 2) {
			while (oc_field(&sub, &f, &wt, &v, &y) == 1)
				if (f == 3)
					while (oc_field(&y, &f, &wt, &v, &z) == 1)
						if (f == 1 && v >= s->nfuncs)
							return -11;
		}
	}
	/* resource (host.name), then scope profiles and their profiles */
	while ((r = oc_field(&rp, &f, &wt, &v, &sub)) == 1) {
		if (f == 1) { /* Resource: KeyValue host.name */
			while (oc_field(&sub, &f, &wt, &v, &x) == 1)
				while (f == 1 && oc_field(&x, &f, &wt, &v, &y) == 1)
					if (f == 2)
						while (oc_field(&y, &f, &wt, &v, &z) == 1)
							if (f == 1 && z.end - z.p < 64)
								memcpy(s->host, z.p,
								       (size_t)(z.end - z.p));
			continue;
		}
		if (f != 2)
			continue;
		while (oc_field(&sub, &f, &wt, &v, &x) == 1) { /* ScopeProfiles */
			uint64_t type = 0;
			size_t k;

			if (f != 2)
				continue;
			if (s->nprofiles == OC_TYPES)
				return -12;
			k = s->nprofiles++;
			while (oc_field(&x, &f, &wt, &v, &y) == 1) { /* Profile */
				if (f == 1) {			     /* sample_type */
					while (oc_field(&y, &f, &wt, &v, &z) == 1)
						if (f == 1)
							type = v;
				} else if (f == 2) { /* a sample */
					int values = 0;

					s->nsamples++;
					while (oc_field(&y, &f, &wt, &v, &z) == 1) {
						if (f == 1 && v >= s->nstacks)
							return -13;
						if (f == 2 && wt == 2)
							while (z.p < z.end)
								if (oc_varint(&z, &v) || !v ||
								    v >= s->nattrs)
									return -14;
						if (f == 4 && wt == 2)
							while (z.p < z.end) {
								if (oc_varint(&z, &v))
									return -15;
								s->totals[k] += v;
								values++;
							}
					}
					if (values != 1)
						return -16;
				}
			}
			if (type >= s->nstrings)
				return -17;
			/* the type's name: the string_table entry type */
			y = dict;
			strs_seen = 0;
			while (oc_field(&y, &f, &wt, &v, &z) == 1)
				if (f == 5 && strs_seen++ == type && z.end - z.p < 32)
					memcpy(s->types[k], z.p, (size_t)(z.end - z.p));
		}
	}
	return r < 0 ? -18 : 0;
}

#endif /* JPROF_TESTS_OTLP_CHECK_H */
