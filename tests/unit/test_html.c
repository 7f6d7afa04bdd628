// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_html.c: HTML flame graph: one self-contained document, valid embedded JSON, escaping. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "capture.h"
#include "harness.h"
#include "out/diff.h"
#include "out/out.h"

#define F(n, k)	   ((struct prof_frame){ (n), (k) })
#define DATA_OPEN  "<script id=\"jp-data\" type=\"application/json\">"
#define DATA_CLOSE "</script>"

static char *html(const struct profile *p, int *ret_err)
{
	return capture(out_html_write, p, ret_err);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *s = hay; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

/* a minimal strict JSON checker: returns the end of the value, or NULL */
static const char *json_value(const char *s, const char *end, int depth);

static const char *json_ws(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r'))
		s++;
	return s;
}

static const char *json_string(const char *s, const char *end)
{
	if (s >= end || *s++ != '"')
		return NULL;
	while (s < end && *s != '"') {
		unsigned char c = (unsigned char)*s++;

		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			if (s >= end)
				return NULL;
			c = (unsigned char)*s++;
			if (c == 'u') {
				for (int i = 0; i < 4; i++)
					if (s >= end || !isxdigit((unsigned char)*s++))
						return NULL;
			} else if (!strchr("\"\\/bfnrt", c)) {
				return NULL;
			}
		}
	}
	return s < end ? s + 1 : NULL;
}

static const char *json_seq(const char *s, const char *end, char close, int is_obj, int depth)
{
	s = json_ws(s + 1, end);
	if (s < end && *s == close)
		return s + 1;
	for (;;) {
		if (is_obj) {
			s = json_string(json_ws(s, end), end);
			if (!s)
				return NULL;
			s = json_ws(s, end);
			if (s >= end || *s++ != ':')
				return NULL;
		}
		s = json_value(s, end, depth + 1);
		if (!s)
			return NULL;
		s = json_ws(s, end);
		if (s < end && *s == ',') {
			s++;
			continue;
		}
		return s < end && *s == close ? s + 1 : NULL;
	}
}

static const char *json_value(const char *s, const char *end, int depth)
{
	s = json_ws(s, end);
	if (s >= end || depth > 64)
		return NULL;
	if (*s == '{')
		return json_seq(s, end, '}', 1, depth);
	if (*s == '[')
		return json_seq(s, end, ']', 0, depth);
	if (*s == '"')
		return json_string(s, end);
	for (const char *const *lit = (const char *const[]){ "true", "false", "null", NULL }; *lit;
	     lit++)
		if ((size_t)(end - s) >= strlen(*lit) && !strncmp(s, *lit, strlen(*lit)))
			return s + strlen(*lit);
	if (*s == '-' || isdigit((unsigned char)*s)) {
		s++;
		while (s < end && isdigit((unsigned char)*s))
			s++;
		return s;
	}
	return NULL;
}

/* the embedded data, checked as one JSON value filling the whole script element */
static int data_is_json(const char *doc, char **ret_data)
{
	const char *a = strstr(doc, DATA_OPEN), *b, *end;

	if (!a)
		return 0;
	a += strlen(DATA_OPEN);
	b = strstr(a, DATA_CLOSE);
	if (!b)
		return 0;
	end = json_value(a, b, 0);
	if (!end || json_ws(end, b) != b)
		return 0;
	*ret_data = strndup(a, (size_t)(b - a));
	return *ret_data != NULL;
}

static struct profile *test_profile(void)
{
	struct profile *p = profile__new("cpu \"test\" <profile>", "samples");
	struct prof_frame s1[] = { F("[process 1 java]", JP_FK_ROOT), F("Main.main", JP_FK_INTERP),
				 F("Main.work", JP_FK_JIT), F("Main.inl", JP_FK_INLINED) };
	struct prof_frame s2[] = { F("[process 1 java]", JP_FK_ROOT), F("Main.main", JP_FK_INTERP),
				 F("</script><script>alert(1)</script>", JP_FK_NATIVE),
				 F("q\"uote\\back", JP_FK_JVM) };
	struct prof_frame s3[] = { F("ctl\x01\x1f\x7f", JP_FK_KERNEL), F("bad\xff\xc3(utf8", JP_FK_NATIVE),
				 F("caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x94\xa5", JP_FK_NATIVE),
				 F("<!-- & -->", JP_FK_NATIVE), F("\xed\xa0\x80surrogate", JP_FK_NATIVE),
				 F("\xc0\xafoverlong", JP_FK_NATIVE) };

	if (!p)
		return NULL;
	if (profile__add(p, s1, 4, 30) || profile__add(p, s1, 3, 10) || profile__add(p, s2, 4, 5) ||
	    profile__add(p, s3, 6, 2) || profile__add(p, NULL, 0, 1)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

TEST(single_self_contained_document)
{
	struct profile *p = test_profile();
	char *doc, *data = NULL;
	int err;

	ASSERT_TRUE(p);
	doc = html(p, &err);
	EXPECT_EQ(err, 0);
	ASSERT_TRUE(doc);
	EXPECT_TRUE(!strncmp(doc, "<!DOCTYPE html>", 15));
	EXPECT_EQ(count(doc, "<html"), 1);
	EXPECT_EQ(count(doc, "</html>"), 1);
	EXPECT_EQ(count(doc, "<body>"), 1);
	EXPECT_EQ(count(doc, "<head>"), 1);
	EXPECT_TRUE(!strcmp(doc + strlen(doc) - 8, "</html>\n"));
	/* no network: no URLs, no external scripts, styles or images */
	EXPECT_EQ(count(doc, "http:"), 0);
	EXPECT_EQ(count(doc, "https:"), 0);
	EXPECT_EQ(count(doc, "//cdn"), 0);
	EXPECT_EQ(count(doc, " src="), 0);
	EXPECT_EQ(count(doc, "<link"), 0);
	EXPECT_EQ(count(doc, "@import"), 0);
	EXPECT_EQ(count(doc, "url("), 0);
	EXPECT_EQ(count(doc, "@JPROF_DATA@"), 0);
	/* the injected name must not close the script early: only the template's two closers */
	EXPECT_EQ(count(doc, "<script"), 2);
	EXPECT_EQ(count(doc, "</script>"), 2);
	EXPECT_EQ(count(doc, "<!--"), 2); /* the template's two header comments, none from data */
	EXPECT_TRUE(data_is_json(doc, &data));
	free(doc);
	free(data);
	profile__free(p);
}

TEST(data_content_and_escaping)
{
	struct profile *p = test_profile();
	char *doc, *data = NULL;
	int err;

	ASSERT_TRUE(p);
	doc = html(p, &err);
	EXPECT_EQ(err, 0);
	ASSERT_TRUE(doc && data_is_json(doc, &data));
	EXPECT_TRUE(strstr(data, "\"title\":\"cpu \\\"test\\\" \\u003cprofile\\u003e\""));
	EXPECT_TRUE(strstr(data, "\"unit\":\"samples\""));
	EXPECT_TRUE(strstr(data, "\"Main.work\""));
	EXPECT_TRUE(strstr(data, "\"[process 1 java]\""));
	EXPECT_TRUE(strstr(data, "\"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\""));
	EXPECT_TRUE(strstr(data, "\"q\\\"uote\\\\back\""));
	EXPECT_TRUE(strstr(data, "\"ctl\\u0001\\u001f\\u007f\""));
	EXPECT_TRUE(strstr(data, "\"bad\\ufffd\\ufffd(utf8\""));
	EXPECT_TRUE(strstr(data, "\"caf\xc3\xa9 \\u2028 \xf0\x9f\x94\xa5\""));
	EXPECT_TRUE(strstr(data, "\"\\u003c!-- \\u0026 --\\u003e\""));
	EXPECT_TRUE(strstr(data, "\"\\ufffd\\ufffd\\ufffdsurrogate\""));
	EXPECT_TRUE(strstr(data, "\"\\ufffd\\ufffdoverlong\""));
	/* the root first: name 0 ("all"), kind root, total 48, two children */
	EXPECT_TRUE(strstr(data, "\"nodes\":[0,6,48,2,"));
	EXPECT_TRUE(strstr(data, "\"names\":[\"all\","));
	free(doc);
	free(data);
	profile__free(p);
}

TEST(nodes_and_names_are_compact)
{
	struct profile *p = profile__new("t", "ns");
	struct prof_frame s[3] = { F("same", JP_FK_JIT), F("same", JP_FK_JIT), F("same", JP_FK_JIT) };
	char *doc, *data = NULL;
	int err;

	ASSERT_TRUE(p);
	EXPECT_EQ(profile__add(p, s, 3, 1000000), 0);
	doc = html(p, &err);
	EXPECT_EQ(err, 0);
	ASSERT_TRUE(doc && data_is_json(doc, &data));
	EXPECT_STREQ(data, "{\"title\":\"t\",\"unit\":\"ns\",\"nodes\":[0,6,1000000,1,1,3,1000000,1,"
			   "1,3,1000000,1,1,3,1000000,0],\"names\":[\"all\",\"same\"]}");
	free(doc);
	free(data);
	profile__free(p);
}

TEST(empty_profile)
{
	struct profile *p = profile__new("", "samples");
	char *doc, *data = NULL;
	int err;

	ASSERT_TRUE(p);
	doc = html(p, &err);
	EXPECT_EQ(err, 0);
	ASSERT_TRUE(doc && data_is_json(doc, &data));
	EXPECT_STREQ(data, "{\"title\":\"\",\"unit\":\"samples\",\"nodes\":[0,6,0,0],\"names\":[\"all\"]}");
	free(doc);
	free(data);
	profile__free(p);
}

TEST(enospc_surfaces)
{
	struct profile *p = test_profile();
	FILE *f = fopen("/dev/full", "w");

	ASSERT_TRUE(p && f);
	EXPECT_EQ(out_html_write(p, f), -ENOSPC);
	fclose(f);
	profile__free(p);
}

static const struct out_meta *meta_arg;

static int html_meta(const struct profile *p, FILE *f)
{
	return out_html_write_meta(p, meta_arg, f);
}

/* the document and its embedded data for meta (NULL: none) */
static char *html_with_meta(const struct profile *p, const struct out_meta *meta, char **ret_data)
{
	char *doc;
	int err;

	meta_arg = meta;
	doc = capture(html_meta, p, &err);
	if (err || !doc || !data_is_json(doc, ret_data)) {
		free(doc);
		return NULL;
	}
	return doc;
}

TEST(meta_header_fields)
{
	struct profile *p = test_profile();
	struct out_meta meta = {
		.title = "jprof: CPU + off-CPU",
		.unit = "ns",
		.host = "build-01",
		.command = "jprof record -a -d 2 -o x.html",
		.events = "cpu,offcpu",
		.freq_hz = 99,
		.start_unix_ns = 1700000000123456789ull, /* 2023-11-14 22:13:20 UTC */
		.duration_ns = 2000000001ull,
		.samples = 12345678901ull,
		.lost = 7,
		.losses = "7 ring buffer full",
	};
	char *doc, *data = NULL;

	ASSERT_TRUE(p);
	doc = html_with_meta(p, &meta, &data);
	ASSERT_TRUE(doc && data);
	EXPECT_TRUE(strstr(data, ",\"meta\":{\"samples\":12345678901,\"lost\":7,"
				 "\"title\":\"jprof: CPU + off-CPU\",\"unit\":\"ns\","
				 "\"host\":\"build-01\",\"command\":\"jprof record -a -d 2 -o x.html\","
				 "\"events\":\"cpu,offcpu\",\"losses\":\"7 ring buffer full\","
				 "\"freq\":99,\"duration_ns\":2000000001,"
				 "\"start\":\"2023-11-14 22:13:20 UTC\"},\"nodes\":["));
	/* the profile's own title and unit stay in the data; the page prefers meta's */
	EXPECT_TRUE(!strncmp(data, "{\"title\":\"cpu \\\"test\\\" \\u003cprofile\\u003e\","
				   "\"unit\":\"samples\",\"meta\":",
			     strlen("{\"title\":\"cpu \\\"test\\\" \\u003cprofile\\u003e\","
				    "\"unit\":\"samples\",\"meta\":")));
	EXPECT_EQ(count(doc, "<script"), 2);
	free(doc);
	free(data);
	profile__free(p);
}

TEST(meta_unknown_fields_are_left_out)
{
	struct profile *p = profile__new("t", "samples");
	struct out_meta meta = { 0 };
	char *doc, *data = NULL;

	ASSERT_TRUE(p);
	doc = html_with_meta(p, &meta, &data);
	ASSERT_TRUE(doc && data);
	EXPECT_STREQ(data, "{\"title\":\"t\",\"unit\":\"samples\",\"meta\":{\"samples\":0,\"lost\":0},"
			   "\"nodes\":[0,6,0,0],\"names\":[\"all\"]}");
	free(doc);
	free(data);
	/* NULL meta: no header at all, the same as out_html_write */
	doc = html_with_meta(p, NULL, &data);
	ASSERT_TRUE(doc && data);
	EXPECT_TRUE(!strstr(data, "\"meta\""));
	free(doc);
	free(data);
	profile__free(p);
}

/* the command line (and host, title, ...) are user input: nothing in them may end the script */
TEST(meta_strings_are_escaped)
{
	struct profile *p = test_profile();
	struct out_meta meta = {
		.title = "<b>t</b>",
		.host = "h\"o\\st\n",
		.command = "jprof record -o '</script><script>alert(1)</script>' <!-- "
			   "\xe2\x80\xa9 \xff&",
		.events = "cpu</SCRIPT >",
		.losses = "a\x01z",
	};
	char *doc, *data = NULL;

	ASSERT_TRUE(p);
	doc = html_with_meta(p, &meta, &data);
	ASSERT_TRUE(doc && data);
	EXPECT_EQ(count(doc, "<script"), 2);
	EXPECT_EQ(count(doc, "</script>"), 2);
	EXPECT_EQ(count(doc, "<!--"), 2);
	/* the test profile's frame and the command, as text */
	EXPECT_EQ(count(doc, "alert(1)"), 2);
	EXPECT_TRUE(strstr(data, "\"title\":\"\\u003cb\\u003et\\u003c/b\\u003e\""));
	EXPECT_TRUE(strstr(data, "\"host\":\"h\\\"o\\\\st\\u000a\""));
	EXPECT_TRUE(strstr(data, "\"command\":\"jprof record -o '\\u003c/script\\u003e\\u003cscript"
				 "\\u003ealert(1)\\u003c/script\\u003e' \\u003c!-- \\u2029 \\ufffd\\u0026\""));
	EXPECT_TRUE(strstr(data, "\"events\":\"cpu\\u003c/SCRIPT \\u003e\""));
	EXPECT_TRUE(strstr(data, "\"losses\":\"a\\u0001z\""));
	free(doc);
	free(data);
	profile__free(p);
}

TEST(meta_enospc_surfaces)
{
	struct profile *p = test_profile();
	struct out_meta meta = { .host = "h", .samples = 1 };
	FILE *f = fopen("/dev/full", "w");

	ASSERT_TRUE(p && f);
	EXPECT_EQ(out_html_write_meta(p, &meta, f), -ENOSPC);
	fclose(f);
	profile__free(p);
}

/* report --diff: both tries, BASE's header and the changes in one valid, escaped JSON value */
TEST(diff_page_holds_both_tries)
{
	struct profile *base = test_profile(), *new = test_profile();
	struct prof_frame more[] = { F("[process 1 java]", JP_FK_ROOT), F("Main.main", JP_FK_INTERP),
				   F("Main.work", JP_FK_JIT), F("Main.slow", JP_FK_JIT) };
	struct out_meta bm = { .title = "base", .host = "h</script>", .events = "cpu" };
	struct out_meta nm = { .title = "new", .host = "h2", .events = "cpu" };
	struct diff_table *t = NULL;
	char *doc = NULL, *data = NULL;
	size_t len = 0;
	FILE *f;

	ASSERT_TRUE(base && new && !profile__add(new, more, 4, 20));
	ASSERT_TRUE(!diff_table__new(base, new, false, &t));
	f = open_memstream(&doc, &len);
	ASSERT_TRUE(f);
	EXPECT_EQ(out_diff_html_write(base, new, t, &bm, &nm, false, f), 0);
	fclose(f);
	ASSERT_TRUE(doc && data_is_json(doc, &data));
	EXPECT_EQ(count(doc, "</script>"), 2);
	EXPECT_TRUE(strstr(data, "\"diff\":{\"absolute\":false,\"base_meta\":{"));
	EXPECT_TRUE(strstr(data, "\"host\":\"h\\u003c/script\\u003e\""));
	EXPECT_TRUE(strstr(data, "\"grew\":4,\"shrank\":")); /* slow, work, main, [process 1 java] */
	EXPECT_TRUE(strstr(data, "\"Main.slow\""));
	free(doc);
	free(data);
	diff_table__free(t);
	profile__free(base);
	profile__free(new);
}
