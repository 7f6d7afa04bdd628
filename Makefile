# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# jprof: everything is built under $(OUT). `make help` lists the targets.

SHELL	:= /bin/bash
OUT	?= build
CC	?= cc
CLANG	?= clang
BPFTOOL	?= bpftool
ARCH	?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
JAVA_HOME_BUILD ?= $(firstword $(wildcard /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/default-java /usr/lib/jvm/*))
JAVAC	?= $(JAVA_HOME_BUILD)/bin/javac

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps test unit fuzz fuzz-smoke check check-e2e run bench format format-check lint \
	vmlinux clean help apps check-golden golden-update

WARN	 := -Wall -Wextra -Werror
CFLAGS	 ?= -O2 -g
BASEFLAGS := -std=gnu11 -D_GNU_SOURCE -MMD -MP -fno-omit-frame-pointer -Iuser -I$(OUT)/bpf -Ibpf -Ijvmagent
LDLIBS	 := -lbpf -lelf -lz -llzma -lpthread -lmicrohttpd -lcurl
SAN	 := -fsanitize=address,undefined -fno-sanitize-recover=all

# BPF -----------------------------------------------------------------------
BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS	  := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.skel.h,$(BPF_SRCS))
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c | $(OUT)/.deps-ok
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_$(ARCH) -Ibpf -Ibpf/vmlinux/$(ARCH) \
		$(CLANG_BPF_SYS_INCLUDES) -MMD -MP -MF $(@:.o=.d) -MT $@ -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUT)/bpf/%.skel.h: $(OUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# user space ------------------------------------------------------------------
USER_SRCS := $(wildcard user/*.c user/*/*.c)
USER_OBJS := $(patsubst %.c,$(OUT)/%.o,$(USER_SRCS))
LIB_SRCS  := $(filter-out user/main.c,$(USER_SRCS))
LIB_OBJS  := $(patsubst %.c,$(OUT)/%.o,$(LIB_SRCS))
ASAN_OBJS := $(patsubst %.c,$(OUT)/asan/%.o,$(LIB_SRCS))
FUZZ_LIB  := $(patsubst %.c,$(OUT)/fuzzlib/%.o,$(LIB_SRCS))

# loaders include their skeletons, which must exist before the first .d file does
$(patsubst %.c,$(OUT)/%.o,$(wildcard user/kernel/*.c)) \
$(patsubst %.c,$(OUT)/asan/%.o,$(wildcard user/kernel/*.c)) \
$(patsubst %.c,$(OUT)/fuzzlib/%.o,$(wildcard user/kernel/*.c)): $(SKELS)

$(OUT)/user/%.o: user/%.c | $(OUT)/.deps-ok
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

$(OUT)/asan/user/%.o: user/%.c | $(OUT)/.deps-ok
	$(call msg,CC-ASAN,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) $(WARN) -O1 -g $(SAN) -c $< -o $@

$(OUT)/fuzzlib/user/%.o: user/%.c | $(OUT)/.deps-ok
	$(call msg,CC-FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BASEFLAGS) -Wall -Wextra -Werror -Wno-unused-command-line-argument -O1 -g \
		-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
		-DJP_FUZZ_BUDGETS -c $< -o $@

$(OUT)/jprof: $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# every module but main.c, for the test drivers: each links what it uses from it
$(OUT)/libjprof.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# JVM agent -------------------------------------------------------------------
AGENT_SRCS := $(wildcard jvmagent/*.c)
AGENT_OBJS := $(patsubst %.c,$(OUT)/%.o,$(AGENT_SRCS))
AGENT_FLAGS := -std=gnu11 -D_GNU_SOURCE -MMD -MP -fPIC -fvisibility=hidden -Ibpf -Ijvmagent \
	-I$(JAVA_HOME_BUILD)/include -I$(JAVA_HOME_BUILD)/include/linux

$(OUT)/jvmagent/%.o: jvmagent/%.c | $(OUT)/.deps-ok
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(AGENT_FLAGS) $(WARN) $(CFLAGS) -c $< -o $@

# -z now: every symbol bound at load, none lazily (through the dynamic linker) in the handler
$(OUT)/libjprofagent.so: $(AGENT_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) -shared -Wl,-z,defs -Wl,-z,nodelete -Wl,-z,now $^ -lpthread -ldl -lm -o $@

comma := ,
empty :=
space := $(empty) $(empty)

# tests ---------------------------------------------------------------------------
TEST_SRCS := $(wildcard tests/unit/test_*.c)
TEST_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/unit/%,$(TEST_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUT)/tests/fuzz/%,$(FUZZ_SRCS))
APP_C	  := $(wildcard tests/apps/*.c)
APP_BINS  := $(patsubst tests/apps/%.c,$(OUT)/tests/apps/%,$(filter-out tests/apps/lib%.c,$(APP_C)))
APP_LIBS  := $(patsubst tests/apps/%.c,$(OUT)/tests/apps/%.so,$(filter tests/apps/lib%.c,$(APP_C)))
APP_JAVA  := $(wildcard tests/apps/*.java)
# Debian's Tomcat 10 (libtomcat10-java): TomcatLoad embeds it; tests and bench run it with these
TOMCAT_CP := $(subst $(space),:,$(patsubst %,/usr/share/java/tomcat10-%.jar,catalina servlet-api \
	coyote util util-scan juli api jni jaspic-api annotations-api))

# a test, fuzzer or workload is its own .c file plus the helpers of tests/common/ a mk/*.mk
# makes its prerequisites (not any .c a .d file lists: a test may #include one). They come
# first on the command line: each source's -MMD writes the same .d, so the test's own, last,
# is the one kept (the helpers are prerequisites by name in their mk/*.mk)
TEST_EXTRA = $(filter tests/common/%.c,$^)

$(OUT)/tests/unit/%: tests/unit/%.c $(ASAN_OBJS) | $(OUT)/.deps-ok
	$(call msg,TEST-CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) -Itests/unit $(WARN) -O1 -g $(SAN) $(UNIT_CFLAGS) $(TEST_EXTRA) $< $(ASAN_OBJS) $(LDLIBS) \
		$(UNIT_LDFLAGS) -o $@

# test_join counts the allocations, formatting and file syscalls of the steady-state sample
# paths: every call of these from jprof's code goes through its counting wrappers
$(OUT)/tests/unit/test_join: UNIT_LDFLAGS := $(patsubst %,-Wl$(comma)--wrap=%,malloc calloc \
	realloc vsnprintf snprintf fstat read pread64 open openat stat)

$(OUT)/tests/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB) | $(OUT)/.deps-ok
	$(call msg,FUZZ-CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BASEFLAGS) -Wall -Wextra -Werror -O1 -g -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all $(TEST_EXTRA) $< $(FUZZ_LIB) $(LDLIBS) -o $@

# test workloads: frame pointers on, no inlining, so their functions are the stacks we assert
$(OUT)/tests/apps/%: tests/apps/%.c | $(OUT)/.deps-ok
	$(call msg,APP-CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline -fno-optimize-sibling-calls $(WARN) $(TEST_EXTRA) $< -o $@ -lpthread

$(OUT)/tests/apps/lib%.so: tests/apps/lib%.c | $(OUT)/.deps-ok
	$(call msg,APP-CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) -shared -fPIC -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline $(WARN) \
		-I$(JAVA_HOME_BUILD)/include -I$(JAVA_HOME_BUILD)/include/linux $< -o $@

$(OUT)/tests/apps/.java-stamp: $(APP_JAVA) | $(OUT)/.deps-ok
	$(call msg,JAVAC,$(OUT)/tests/apps)
	@mkdir -p $(@D)
	$(Q)$(if $(APP_JAVA),$(JAVAC) --release 17 -cp $(TOMCAT_CP) -d $(OUT)/tests/apps $(APP_JAVA),true) && touch $@

apps: $(APP_BINS) $(APP_LIBS) $(OUT)/tests/apps/.java-stamp

# entry points -----------------------------------------------------------------
all: $(OUT)/jprof $(OUT)/libjprofagent.so

$(OUT)/.deps-ok: scripts/install-deps.sh
	@mkdir -p $(@D)
	$(Q)bash scripts/install-deps.sh && touch $@

deps: $(OUT)/.deps-ok

unit test: $(TEST_BINS)
	$(Q)set -e; pass=0; for t in $(TEST_BINS); do \
		$$t || { echo "FAILED: $$t"; exit 1; }; pass=$$((pass + 1)); done; \
		echo "unit: $$pass test binaries passed"

# golden outputs (tests/golden/): test_golden (in make test) compares every writer's bytes;
# check-golden also compares the JDK's own reading of the JFR golden file (jfr print).
# After a wanted change of output: make golden-update, review and commit the diff.
JFR_TOOL ?= /usr/lib/jvm/java-17-openjdk-amd64/bin/jfr
check-golden: $(OUT)/tests/unit/test_golden
	$(Q)$(OUT)/tests/unit/test_golden
	$(Q)TZ=UTC $(JFR_TOOL) print tests/golden/known.jfr > $(OUT)/known.jfr.txt && \
		diff -u tests/golden/known.jfr.txt $(OUT)/known.jfr.txt || \
		{ echo "GOLDEN DIFF: jfr print tests/golden/known.jfr (make golden-update)"; exit 1; }
	$(Q)echo "golden: every output format byte-identical"

golden-update: $(OUT)/tests/unit/test_golden
	$(Q)JPROF_UPDATE_GOLDEN=1 $(OUT)/tests/unit/test_golden
	$(Q)TZ=UTC $(JFR_TOOL) print tests/golden/known.jfr > tests/golden/known.jfr.txt

# each fuzzer FUZZ_SECONDS (60) on its corpus, FUZZ_JOBS (the CPUs) at a time
fuzz: $(FUZZ_BINS)
	$(Q)bash scripts/fuzz-run.sh $(OUT) $(FUZZ_BINS)

fuzz-smoke:
	$(Q)$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$${FUZZ_SECONDS:-8}

check-e2e: all apps
	$(Q)set -o pipefail; JPROF=$(abspath $(OUT)/jprof) JPROF_AGENT=$(abspath $(OUT)/libjprofagent.so) \
		APPS=$(abspath $(OUT)/tests/apps) bats --timing --print-output-on-failure tests/e2e \
		| tee $(OUT)/e2e.tap; rc=$$?; \
		echo "e2e: $$(grep -c '^ok ' $(OUT)/e2e.tap) passed, $$(grep -c '^not ok ' $(OUT)/e2e.tap) failed"; \
		echo "e2e: the slowest tests:"; \
		sed -nE 's/^(not )?ok [0-9]+ (.*) in ([0-9]+)ms$$/\3 \2/p' $(OUT)/e2e.tap | sort -rn | head -15 \
		| awk '{ t = $$1; $$1 = ""; printf "  %6.1f s%s\n", t / 1000, $$0 }'; \
		exit $$rc

# everything CI runs, in one command (README's test command)
check: all apps
	$(Q)$(MAKE) --no-print-directory test
	$(Q)$(MAKE) --no-print-directory check-golden
	$(Q)$(MAKE) --no-print-directory fuzz-smoke
	$(Q)$(MAKE) --no-print-directory check-e2e

# the main job: the whole host, with the bundled demo JVM, as an HTML flame graph
run: all apps
	$(Q)OUT=$(OUT) bash scripts/run-demo.sh $(OUT)

# bench/suite.py: every benchmark, JSON in $(OUT)/bench/; BENCH_QUICK=1 for a short check run
bench: all apps sc-driver
	$(Q)python3 bench/suite.py --build $(OUT)

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > bpf/vmlinux/$(ARCH)/vmlinux.h

FORMAT_SRCS = $(filter-out bpf/vmlinux/%,$(wildcard bpf/*.[ch] user/*.[ch] user/*/*.[ch] jvmagent/*.[ch]))
format:
	clang-format -i $(FORMAT_SRCS)
format-check:
	clang-format --dry-run --Werror $(FORMAT_SRCS)
lint: $(SKELS)
	clang-tidy $(USER_SRCS) -- $(BASEFLAGS)

clean:
	rm -rf $(OUT)

help:
	@echo "targets: all (default) test check-golden golden-update fuzz fuzz-smoke check-e2e check run bench format lint vmlinux clean"

.DEFAULT_GOAL := all

# per-part fragments (extra prerequisites, generated sources); included last
-include $(wildcard mk/*.mk)

-include $(shell find $(OUT) -name '*.d' 2>/dev/null)
