// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* idle.c: the frames that tell an idle pool worker's wait from contention, one table. */
#include <string.h>

#include "join/idle.h"
#include "jvm/agent_ring.h"

/*
 * A frame "Class.method" (the class's simple name, nested classes with '$'; any package, so
 * shaded copies count) and how near the leaf it must be: 0 anywhere in the stack, else
 * within that many Java frames (a wait that runs tasks in its own frame, as Timer's main
 * loop does, is idle only while it waits, not while a task it called blocks).
 */
static const struct idle_frame {
	const char *frame;
	unsigned int within;
} idle_frames[] = {
	/* java.util.concurrent: a worker between tasks; its queue's take/poll are under it */
	{"ThreadPoolExecutor.getTask", 0}, /* also Tomcat's and Jetty's copies of the name */
	{"ForkJoinPool.awaitWork", 0},
	{"ForkJoinPool.awaitQuiescence", 0},
	{"ScheduledThreadPoolExecutor$DelayedWorkQueue.take", 0},
	/* Tomcat's worker queue, Jetty's thread pool idling for a job */
	{"TaskQueue.take", 0},
	{"TaskQueue.poll", 0},
	{"QueuedThreadPool$Runner.idleJobPoll", 0},
	{"ReservedThreadExecutor$ReservedThread.reservedWait", 0},
	/* event loops waiting for I/O readiness: not contention either */
	{"NioEventLoop.select", 0},
	{"EpollEventLoop.epollWait", 0},
	{"EpollEventLoop.epollWaitNoTimeout", 0},
	{"KQueueEventLoop.kqueueWait", 0},
	{"SingleThreadEventExecutor.takeTask", 0},
	/* the JDK's own service threads with nothing to do; tasks run from their loops */
	{"TimerThread.mainLoop", 3},
	{"Reference.waitForReferencePendingList", 0},
	{"Finalizer$FinalizerThread.run", 4},
	{"CleanerImpl.run", 6},
};

/* name ends with want, at a package boundary ('/' or '.') or is it */
static bool frame_is(const char *name, const char *want)
{
	size_t n = strlen(name), w = strlen(want);

	if (n < w || strcmp(name + n - w, want))
		return false;
	return n == w || name[n - w - 1] == '/' || name[n - w - 1] == '.';
}

bool join_idle__is_idle(const char *const *names, size_t n)
{
	if (n > JOIN_IDLE_DEPTH)
		n = JOIN_IDLE_DEPTH;
	for (size_t i = 0; i < n; i++) {
		if (!names[i])
			continue;
		for (size_t k = 0; k < sizeof(idle_frames) / sizeof(idle_frames[0]); k++) {
			const struct idle_frame *f = &idle_frames[k];

			if ((!f->within || i < f->within) && frame_is(names[i], f->frame))
				return true;
		}
	}
	return false;
}

bool join_idle__trace(struct jvm_agent *a, const struct java_trace *t)
{
	const char *names[JOIN_IDLE_DEPTH];
	size_t n = 0;

	for (int f = 0; f < t->num_frames && n < JOIN_IDLE_DEPTH; f++)
		names[n++] = jvm_agent__method_name(a, t->frames[f].method_id, 0);
	return join_idle__is_idle(names, n);
}
