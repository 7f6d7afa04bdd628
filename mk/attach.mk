# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# attach.mk: the dynamic-attach test driver, a marker agent and a sleeping JVM for tests/e2e/attach.bats.

ATTACH_TEST_DIR := $(OUT)/tests/attach
$(ATTACH_TEST_DIR)/attach_test: tests/attach/attach_test.c $(OUT)/libjprof.a | $(OUT)/.deps-ok
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) $(WARN) $(CFLAGS) $< $(OUT)/libjprof.a $(LDLIBS) -o $@

$(ATTACH_TEST_DIR)/marker_agent.so: tests/attach/marker_agent.c | $(OUT)/.deps-ok
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -shared -fPIC -O1 -g $(WARN) -I$(JAVA_HOME_BUILD)/include \
		-I$(JAVA_HOME_BUILD)/include/linux $< -o $@

$(ATTACH_TEST_DIR)/%.class: tests/attach/%.java | $(OUT)/.deps-ok
	$(call msg,JAVAC,$@)
	@mkdir -p $(@D)
	$(Q)$(JAVAC) --release 17 -d $(ATTACH_TEST_DIR) $<

# a process that looks like a JVM (maps .../lib/server/libjvm.so) and never answers an attach
$(ATTACH_TEST_DIR)/fake_jvm: tests/attach/fake_jvm.c | $(OUT)/.deps-ok
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) $(WARN) $(CFLAGS) $< -ldl -o $@

$(ATTACH_TEST_DIR)/fakejdk/lib/server/libjvm.so: tests/attach/fake_libjvm.c | $(OUT)/.deps-ok
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -shared -fPIC -O1 $(WARN) $< -o $@

.PHONY: attach-test
attach-test: $(ATTACH_TEST_DIR)/attach_test $(ATTACH_TEST_DIR)/marker_agent.so \
	$(ATTACH_TEST_DIR)/Sleeper.class $(ATTACH_TEST_DIR)/Busy.class $(ATTACH_TEST_DIR)/fake_jvm \
	$(ATTACH_TEST_DIR)/fakejdk/lib/server/libjvm.so

check-e2e: attach-test
check-e2e: export ATTACH_TEST_DIR_ABS := $(abspath $(ATTACH_TEST_DIR))
