// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_join_idle.c: idle pool workers' waits told apart from contention by their Java frames. */
#include "harness.h"
#include "join/idle.h"

#define IDLE(...)                                                                          \
	({                                                                                 \
		const char *names[] = { __VA_ARGS__ };                                     \
		join_idle__is_idle(names, sizeof(names) / sizeof(names[0]));               \
	})

TEST(pool_workers_waiting_for_a_task_are_idle)
{
	/* a ThreadPoolExecutor worker in LinkedBlockingQueue.take (JDK 17 names) */
	EXPECT_TRUE(IDLE("jdk/internal/misc/Unsafe.park", "java/util/concurrent/locks/LockSupport.park",
			 "java/util/concurrent/locks/AbstractQueuedSynchronizer$ConditionObject.await",
			 "java/util/concurrent/LinkedBlockingQueue.take",
			 "java/util/concurrent/ThreadPoolExecutor.getTask",
			 "java/util/concurrent/ThreadPoolExecutor.runWorker",
			 "java/util/concurrent/ThreadPoolExecutor$Worker.run", "java/lang/Thread.run"));
	/* a cached pool's SynchronousQueue.poll, dotted */
	EXPECT_TRUE(IDLE("jdk.internal.misc.Unsafe.park", "java.util.concurrent.SynchronousQueue.poll",
			 "java.util.concurrent.ThreadPoolExecutor.getTask"));
	EXPECT_TRUE(IDLE("jdk/internal/misc/Unsafe.park",
			 "java/util/concurrent/ScheduledThreadPoolExecutor$DelayedWorkQueue.take"));
	EXPECT_TRUE(IDLE("jdk/internal/misc/Unsafe.park",
			 "java/util/concurrent/ForkJoinPool.awaitWork",
			 "java/util/concurrent/ForkJoinPool.runWorker"));
	/* Tomcat's queue and pool, a shaded Netty's event loop */
	EXPECT_TRUE(IDLE("jdk/internal/misc/Unsafe.park",
			 "org/apache/tomcat/util/threads/TaskQueue.take",
			 "org/apache/tomcat/util/threads/ThreadPoolExecutor.getTask"));
	EXPECT_TRUE(IDLE("sun/nio/ch/EPoll.wait", "sun/nio/ch/EPollSelectorImpl.doSelect",
			 "sun/nio/ch/SelectorImpl.select",
			 "shaded/io/netty/channel/nio/NioEventLoop.select",
			 "shaded/io/netty/channel/nio/NioEventLoop.run"));
	/* an idle java.util.Timer: mainLoop is next to Object.wait */
	EXPECT_TRUE(IDLE("java/lang/Object.wait0", "java/lang/Object.wait",
			 "java/util/TimerThread.mainLoop", "java/util/TimerThread.run"));
}

TEST(contention_is_not_idle)
{
	/* a pool's task blocked on a contended ReentrantLock: runWorker, no getTask */
	EXPECT_TRUE(!IDLE("jdk/internal/misc/Unsafe.park", "java/util/concurrent/locks/LockSupport.park",
			  "java/util/concurrent/locks/AbstractQueuedSynchronizer.acquire",
			  "java/util/concurrent/locks/ReentrantLock.lock", "com/acme/Cache.get",
			  "java/util/concurrent/ThreadPoolExecutor.runWorker",
			  "java/util/concurrent/ThreadPoolExecutor$Worker.run"));
	/* a timer task blocked on a lock: mainLoop is too far from the leaf */
	EXPECT_TRUE(!IDLE("jdk/internal/misc/Unsafe.park", "java/util/concurrent/locks/LockSupport.park",
			  "java/util/concurrent/locks/ReentrantLock.lock", "com/acme/Task.run",
			  "java/util/TimerThread.mainLoop", "java/util/TimerThread.run"));
	/* a think-time sleep, a user's own take(): not a pool's wait for work */
	EXPECT_TRUE(!IDLE("java/lang/Thread.sleep", "com/acme/Client.think"));
	EXPECT_TRUE(!IDLE("jdk/internal/misc/Unsafe.park",
			  "java/util/concurrent/LinkedBlockingQueue.take", "com/acme/Consumer.run"));
	/* names that only end like a table entry */
	EXPECT_TRUE(!IDLE("com/acme/MyThreadPoolExecutor.getTask"));
	EXPECT_TRUE(!IDLE("com/acme/Outer$ThreadPoolExecutor.getTask"));
	/* unknown frames, none at all */
	EXPECT_TRUE(!IDLE(NULL, NULL));
	EXPECT_TRUE(!join_idle__is_idle(NULL, 0));
}

TEST(only_frames_near_the_leaf_are_looked_at)
{
	const char *names[JOIN_IDLE_DEPTH + 1];

	for (size_t i = 0; i < JOIN_IDLE_DEPTH; i++)
		names[i] = "com/acme/Deep.recurse";
	names[JOIN_IDLE_DEPTH] = "java/util/concurrent/ThreadPoolExecutor.getTask";
	EXPECT_TRUE(!join_idle__is_idle(names, JOIN_IDLE_DEPTH + 1));
	names[JOIN_IDLE_DEPTH - 1] = names[JOIN_IDLE_DEPTH];
	EXPECT_TRUE(join_idle__is_idle(names, JOIN_IDLE_DEPTH + 1));
}
