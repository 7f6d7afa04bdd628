# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# agent.mk: the JVM agent's test driver and Java workload (tests/agent/), for tests/e2e/agent.bats.

AGENT_TEST_BINS := $(OUT)/tests/agent/agent_driver $(OUT)/tests/agent/.java-stamp

# linked against the plain (non-sanitized) reader object: it runs next to real JVMs
$(OUT)/tests/agent/agent_driver: tests/agent/agent_driver.c $(OUT)/libjprof.a | $(OUT)/.deps-ok
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) $(WARN) $(CFLAGS) $< $(OUT)/libjprof.a $(LDLIBS) -o $@

$(OUT)/tests/agent/.java-stamp: $(wildcard tests/agent/*.java) | $(OUT)/.deps-ok
	$(call msg,JAVAC,$(OUT)/tests/agent)
	@mkdir -p $(@D)
	$(Q)$(JAVAC) --release 17 -d $(OUT)/tests/agent $(filter %.java,$^) && touch $@

.PHONY: agent-test
agent-test: $(OUT)/libjprofagent.so $(AGENT_TEST_BINS)

check-e2e: $(OUT)/libjprofagent.so $(AGENT_TEST_BINS)
