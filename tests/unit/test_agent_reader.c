/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* test_agent_reader.c: jprof's side of the reader protocol (ring.h) on a ring file written here. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "jvm/agent_ring.h"
#include "ring.h"

#define DATA_SIZE JP_RING_DATA_MIN

struct fixture {
	char dir[64], ring[96], dict[96];
};

static void write_hdr(struct fixture *f, const struct jp_ring_hdr *h)
{
	int fd = open(f->ring, O_WRONLY | O_CREAT, 0600);

	(void)!pwrite(fd, h, sizeof(*h), 0);
	close(fd);
}

static void fixture_init(struct fixture *f, __u32 flags, __u32 ev_on)
{
	struct jp_dict_hdr dh = {JP_DICT_MAGIC, JP_RING_VERSION, sizeof(dh), 42, 0};
	struct jp_ring_hdr h;
	int fd;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/jprof-ut-XXXXXX");
	if (!mkdtemp(f->dir))
		abort();
	snprintf(f->ring, sizeof(f->ring), "%s/r.ring", f->dir);
	snprintf(f->dict, sizeof(f->dict), "%s/r.dict", f->dir);
	memset(&h, 0, sizeof(h));
	h.magic = JP_RING_MAGIC;
	h.version = JP_RING_VERSION;
	h.hdr_size = JP_RING_HDR_SIZE;
	h.data_size = DATA_SIZE;
	h.pid = 42;
	h.signo = 37;
	h.max_depth = 64;
	h.flags = flags;
	h.ev_on = ev_on;
	fd = open(f->ring, O_WRONLY | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, JP_RING_HDR_SIZE + DATA_SIZE))
		abort();
	close(fd);
	write_hdr(f, &h);
	fd = open(f->dict, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	(void)!write(fd, &dh, sizeof(dh));
	close(fd);
}

static void read_hdr(struct fixture *f, struct jp_ring_hdr *h)
{
	int fd = open(f->ring, O_RDONLY);

	(void)!pread(fd, h, sizeof(*h), 0);
	close(fd);
}

static void fixture_fini(struct fixture *f)
{
	unlink(f->ring);
	unlink(f->dict);
	rmdir(f->dir);
}

TEST(heartbeat_stamps_only_the_events_wanted)
{
	struct fixture f;
	struct jp_ring_hdr h;
	struct jvm_agent *a;

	fixture_init(&f, JP_RING_F_EV_KNOWN | JP_RING_F_READER, 0);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	EXPECT_TRUE(a != NULL);
	if (!a)
		return;
	/* another reader's stamp of alloc stays as it was */
	read_hdr(&f, &h);
	h.want_ns[JP_RING_WANT_ALLOC] = 7;
	write_hdr(&f, &h);
	EXPECT_EQ(jvm_agent__heartbeat(a, 1000, JP_RING_F_EV_LOCK, 0), 0);
	read_hdr(&f, &h);
	EXPECT_EQ(h.reader_ns, 1000);
	EXPECT_EQ(h.want_ns[JP_RING_WANT_LOCK], 1000);
	EXPECT_EQ(h.want_ns[JP_RING_WANT_ALLOC], 7);
	EXPECT_EQ(h.want_ns[JP_RING_WANT_LIVE], 0);
	EXPECT_EQ(h.want_alloc_interval, 0);
	EXPECT_EQ(h.tail, 0); /* the consumer's other field is not touched */
	EXPECT_EQ(jvm_agent__heartbeat(a, 2000, JP_RING_F_EV_ALLOC | JP_RING_F_EV_LIVE, 4096), 0);
	read_hdr(&f, &h);
	EXPECT_EQ(h.reader_ns, 2000);
	EXPECT_EQ(h.want_ns[JP_RING_WANT_LOCK], 1000);
	EXPECT_EQ(h.want_ns[JP_RING_WANT_ALLOC], 2000);
	EXPECT_EQ(h.want_ns[JP_RING_WANT_LIVE], 2000);
	EXPECT_EQ(h.want_alloc_interval, 4096);
	/* nothing wanted: only the reader's own stamp moves */
	EXPECT_EQ(jvm_agent__heartbeat(a, 3000, 0, 0), 0);
	read_hdr(&f, &h);
	EXPECT_EQ(h.reader_ns, 3000);
	EXPECT_EQ(h.want_ns[JP_RING_WANT_ALLOC], 2000);
	jvm_agent__free(a);
	fixture_fini(&f);
}

static void events_str(__u32 flags, __u32 ev_on, const char *want)
{
	struct fixture f;
	struct jvm_agent *a;
	char buf[32] = "x";

	fixture_init(&f, flags, ev_on);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	EXPECT_TRUE(a != NULL);
	if (a)
		EXPECT_EQ(jvm_agent__events_str(a, buf, sizeof(buf)), 0);
	EXPECT_STREQ(buf, want);
	jvm_agent__free(a);
	fixture_fini(&f);
}

TEST(events_on_as_jprof_list_shows_them)
{
	const __u32 k = JP_RING_F_EV_KNOWN, r = JP_RING_F_READER;

	events_str(k | r | JP_RING_F_EV_LOCK | JP_RING_F_EV_ALLOC, 0, "-");
	events_str(k | r | JP_RING_F_EV_LOCK, JP_RING_F_EV_LOCK, "lock");
	events_str(k | r, JP_RING_F_EV_ALLOC | JP_RING_F_EV_LIVE, "alloc,live");
	events_str(k | r, JP_RING_F_EV_LOCK | JP_RING_F_EV_ALLOC | JP_RING_F_EV_LIVE,
		   "lock,alloc,live");
	/* an agent before the protocol: what it sends, on for good */
	events_str(k | JP_RING_F_EV_ALLOC, 0, "alloc!");
	events_str(k, 0, "-");
}

static int count_event(void *ctx, const struct java_event *e)
{
	(*(int *)ctx)++;
	return e->time_ns >= 500 ? 0 : -EINVAL;
}

/* an event left in the ring by an earlier recording is not this one's */
TEST(events_before_the_recording_are_skipped)
{
	struct fixture f;
	struct jp_ring_hdr h;
	struct jp_event_rec ev;
	struct jvm_agent *a;
	int fd, n = 0;

	fixture_init(&f, JP_RING_F_EV_KNOWN | JP_RING_F_READER, 0);
	fd = open(f.ring, O_WRONLY);
	for (int i = 0; i < 2; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.h.seq = (__u64)i * sizeof(ev);
		ev.h.len = sizeof(ev);
		ev.h.type = JP_REC_EVENT;
		ev.time_ns = i ? 600 : 400;
		ev.kind = JP_AEV_MONITOR_ENTERED;
		ev.num_frames = 0;
		(void)!pwrite(fd, &ev, sizeof(ev), JP_RING_HDR_SIZE + (off_t)i * (off_t)sizeof(ev));
	}
	close(fd);
	read_hdr(&f, &h);
	h.head = 2 * sizeof(ev);
	write_hdr(&f, &h);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	EXPECT_TRUE(a != NULL);
	if (!a)
		return;
	jvm_agent__events_since(a, 500);
	EXPECT_EQ(jvm_agent__poll_events(a, NULL, count_event, &n), 2);
	EXPECT_EQ(n, 1);
	read_hdr(&f, &h);
	EXPECT_EQ(h.tail, 2 * sizeof(ev)); /* both consumed */
	jvm_agent__free(a);
	fixture_fini(&f);
}
