// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_push.c: the push targets' addresses: what is accepted, how a name is escaped. */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "daemon/push.h"

TEST(urls)
{
	EXPECT_EQ(push_url_ok("http://127.0.0.1:4040"), 0);
	EXPECT_EQ(push_url_ok("https://profiles.example.com/"), 0);
	EXPECT_EQ(push_url_ok("ftp://x"), -EINVAL);
	EXPECT_EQ(push_url_ok("http://"), -EINVAL);
	EXPECT_EQ(push_url_ok("http://x/?a=1"), -EINVAL);
	EXPECT_EQ(push_url_ok("http://x/#f"), -EINVAL);
	EXPECT_EQ(push_url_ok("http://x y"), -EINVAL);
	EXPECT_EQ(push_url_ok("file:///etc/passwd"), -EINVAL);
}

TEST(ingest_address)
{
	char buf[512];

	EXPECT_TRUE(push_ingest_url("http://h:4040/", "jprof{host=db1,env=prod}", 100, 160, 99, buf,
				    sizeof(buf)) > 0);
	EXPECT_STREQ(buf, "http://h:4040/ingest?name=jprof%7Bhost%3Ddb1%2Cenv%3Dprod%7D&from=100"
			  "&until=160&format=pprof&spyName=jprof&sampleRate=99");
	EXPECT_EQ(push_ingest_url("http://h", "a&b", 1, 2, 0, buf, sizeof(buf)) > 0, 1);
	EXPECT_TRUE(strstr(buf, "name=a%26b&from=1&until=2") != NULL);
	EXPECT_TRUE(strstr(buf, "sampleRate=99") != NULL);
	EXPECT_EQ(push_ingest_url("http://h", "app", 1, 2, 99, buf, 20), -ENOSPC);
}

TEST(otlp_address)
{
	char buf[64];

	EXPECT_TRUE(push_otlp_url("http://h:4318//", buf, sizeof(buf)) > 0);
	EXPECT_STREQ(buf, "http://h:4318/v1development/profiles");
	EXPECT_TRUE(push_otlp_url("https://h/otel", buf, sizeof(buf)) > 0);
	EXPECT_STREQ(buf, "https://h/otel/v1development/profiles");
	EXPECT_EQ(push_otlp_url("http://h:4318", buf, 20), -ENOSPC);
	EXPECT_STREQ(push_kind_name(PUSH_OTLP), "otlp");
	EXPECT_STREQ(push_kind_name(PUSH_PYROSCOPE), "pyroscope");
}

TEST(parca_request)
{
	struct bytebuf b = {0};
	char buf[64];

	EXPECT_EQ(push_parca_body("web{env=prod,host=db1}", "\x1f\x8b\x08\x00", 4, &b), 0);
	bytebuf_u8(&b, '\0');
	EXPECT_STREQ(
		(const char *)b.p,
		"{\"series\":[{\"labels\":{\"labels\":[{\"name\":\"__name__\",\"value\":\"web\"},"
		"{\"name\":\"env\",\"value\":\"prod\"},{\"name\":\"host\",\"value\":\"db1\"}]},"
		"\"samples\":[{\"rawProfile\":\"H4sIAA==\"}]}],\"normalized\":true}");
	bytebuf_free(&b);
	/* a name alone; a value that needs JSON escapes; base64 of 1, 2 and 3 bytes */
	EXPECT_EQ(push_parca_body("a\"b{h=x\\y\n}", "abc", 3, &b), 0);
	bytebuf_u8(&b, '\0');
	EXPECT_TRUE(strstr((const char *)b.p, "\"value\":\"a\\\"b\"") != NULL);
	EXPECT_TRUE(strstr((const char *)b.p, "{\"name\":\"h\",\"value\":\"x\\\\y\\u000a\"}") !=
		    NULL);
	EXPECT_TRUE(strstr((const char *)b.p, "\"rawProfile\":\"YWJj\"") != NULL);
	bytebuf_free(&b);
	EXPECT_EQ(push_parca_body("jprof", "ab", 2, &b), 0);
	bytebuf_u8(&b, '\0');
	EXPECT_TRUE(strstr((const char *)b.p, "[{\"name\":\"__name__\",\"value\":\"jprof\"}]") !=
		    NULL);
	EXPECT_TRUE(strstr((const char *)b.p, "\"rawProfile\":\"YWI=\"") != NULL);
	bytebuf_free(&b);
	EXPECT_TRUE(push_parca_url("http://p:7070/", buf, sizeof(buf)) > 0);
	EXPECT_STREQ(buf, "http://p:7070/profiles/writeraw");
	EXPECT_STREQ(push_kind_name(PUSH_PARCA), "parca");
}
