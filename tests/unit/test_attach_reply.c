// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_attach_reply.c: the HotSpot attach reply as JDK 17, 21 and 25 write it, and as a
 * hostile or broken JVM might: the reader keeps what fits and drops the rest, a reply that
 * never ends times out, and every failure reason is one line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "jvm/attach.h"

static int parse(const char *text, char *err, size_t errlen)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", text);
	return jvm_attach_parse_reply(buf, strlen(buf), err, errlen);
}

TEST(reply_loaded_old_and_new_jdks)
{
	char err[256];

	EXPECT_EQ(parse("0\n0\n", err, sizeof(err)), 0);
	EXPECT_EQ(parse("0\nreturn code: 0\n", err, sizeof(err)), 0);
	EXPECT_STREQ(err, "");
}

TEST(reply_failures_say_why_on_one_line)
{
	char err[256];

	EXPECT_EQ(parse("0\nreturn code: -1\nbad\toptions\n", err, sizeof(err)), -EINVAL);
	EXPECT_STREQ(err, "agent load failed: Agent_OnAttach returned -1: bad options");
	/* jprof's agent says why it did not start (ring.h JP_AGENT_RC_FILES, -errno) */
	EXPECT_EQ(parse("0\nreturn code: -1013\n", err, sizeof(err)), -EINVAL);
	EXPECT_STREQ(err, "agent load failed: Agent_OnAttach returned -1013 (the agent could not "
			  "create its files jprof-PID-TOKEN.ring/.dict in the JVM's /tmp: "
			  "Permission denied)");
	EXPECT_EQ(parse("0\nreturn code: -95\n", err, sizeof(err)), -EINVAL);
	EXPECT_STREQ(err, "agent load failed: Agent_OnAttach returned -95 (the agent did not "
			  "start: Operation not supported)");
	/* jprof's agent, loaded before the JVM's live phase: no JVMTI yet, another try later */
	EXPECT_EQ(parse("0\nreturn code: -11\n", err, sizeof(err)), -EAGAIN);
	EXPECT_STREQ(err, "agent load too early: the JVM is still starting");
	EXPECT_EQ(parse("101\nAttach listener is not enabled\n", err, sizeof(err)), -EPERM);
	EXPECT_STREQ(err, "agent load failed: Attach listener is not enabled");
	EXPECT_EQ(parse("0\n/tmp/a.so was not loaded.\n/tmp/a.so: cannot open\n", err, sizeof(err)),
		  -EINVAL);
	EXPECT_STREQ(err, "agent load failed: /tmp/a.so was not loaded. /tmp/a.so: cannot open");
	EXPECT_EQ(parse("what\n", err, sizeof(err)), -EPROTO);
	EXPECT_STREQ(err, "unexpected reply from the JVM: \"what\"");
	/* found by fuzz_attach_reply: leading newlines and spaces used to stay in the reason */
	EXPECT_EQ(parse("0\n\n \x01x", err, sizeof(err)), -EINVAL);
	EXPECT_STREQ(err, "agent load failed:  x");
	EXPECT_EQ(parse("7\n\n\n", err, sizeof(err)), -EINVAL);
	EXPECT_STREQ(err, "agent load failed: attach status 7");
}

TEST(reply_longer_than_the_buffer_is_read_to_its_end)
{
	char big[20000], reply[64];
	size_t len = 0;
	int sv[2];

	memset(big, 'x', sizeof(big));
	memcpy(big, "0\n0\n", 4);
	ASSERT_TRUE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	ASSERT_TRUE(write(sv[1], big, sizeof(big)) == (ssize_t)sizeof(big));
	close(sv[1]);
	EXPECT_EQ(jvm_attach_read_reply(sv[0], 2000, reply, sizeof(reply), &len), 0);
	EXPECT_EQ(len, sizeof(reply) - 1);
	EXPECT_TRUE(!memcmp(reply, big, len) && !reply[len]);
	/* everything was read: nothing left for the JVM to block on */
	EXPECT_EQ(recv(sv[0], big, sizeof(big), MSG_DONTWAIT), 0);
	close(sv[0]);
}

TEST(reply_that_never_ends_times_out)
{
	char reply[64];
	size_t len = 0;
	int sv[2];

	ASSERT_TRUE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	ASSERT_TRUE(write(sv[1], "0\n", 2) == 2);
	EXPECT_EQ(jvm_attach_read_reply(sv[0], 50, reply, sizeof(reply), &len), -ETIMEDOUT);
	EXPECT_EQ(jvm_attach_read_reply(sv[0], 50, reply, 1, &len), -EINVAL);
	close(sv[0]);
	close(sv[1]);
}
